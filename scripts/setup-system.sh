#!/usr/bin/env bash
# Installs the Debian packages the tests start for real (scripts/debian-packages.txt: nginx for
# the load-balancer tests, Redis for the notification bus), once, before any test runs: tests
# that install a package themselves race each other for dpkg's lock when they run in parallel.
# Idempotent: packages already installed are skipped; `apt-get update` runs only when the first
# install fails (a fresh machine's package lists may be stale). Needs root (CI) or sudo.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mapfile -t wanted < <(grep -v -e '^#' -e '^[[:space:]]*$' "$ROOT/scripts/debian-packages.txt")
missing=()
for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]} == 0)); then
    echo "system: Debian packages present (${wanted[*]})"
    exit 0
fi
SUDO=()
[[ "$(id -u)" == 0 ]] || SUDO=(sudo -n)
echo "system: apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
install() { "${SUDO[@]}" timeout 600 apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
if ! install; then
    "${SUDO[@]}" timeout 600 apt-get update -q >/dev/null
    install
fi

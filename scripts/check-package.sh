#!/usr/bin/env bash
# The generator as a registry would ship it (scripts/test-all.sh runs this after the
# generator's tests):
# 1. `cargo package --workspace --locked`: every package's tarball, each verified by a build
#    from its own tarball (cargo builds mcpgen's against the runtime's tarball, through a local
#    registry, as crates.io would provide it once both are published);
# 2. the generator that build made writes a crate from specs/bookshop.json, and that crate
#    builds; it refuses --auth-issuer until built with `--features mcpgen-runtime/auth`, then
#    verifies;
# 3. `cargo install --path .` installs a generator that checks the same spec.
# The builds share the suite's target directories (the generator's and the examples'), so only
# the packaged crates themselves are compiled again.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# The builds of packaged crates are plain builds, not linted ones (they are not workspace code).
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
export CARGO_TARGET_DIR="$ROOT/target"
VERSION="$(cargo metadata --no-deps --format-version 1 --locked |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mcpgen"))')"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# cargo verifies mcpgen against the runtime's tarball through a local registry, which it
# unpacks under CARGO_HOME once per version: a copy unpacked by an earlier run of this version
# (other sources, same version number) would be built instead of the tarball just made. Drop
# those copies (mcpgen-runtime comes from no other registry in the suite).
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/mcpgen-runtime-"$VERSION" \
  "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/mcpgen-runtime-"$VERSION".crate
echo "package: cargo package --workspace --locked (each package verified from its tarball)"
cargo package --workspace --locked --quiet
for crate in mcpgen mcpgen-runtime; do
  test -s "target/package/$crate-$VERSION.crate" || { echo "package: no target/package/$crate-$VERSION.crate"; exit 1; }
done
# The binary the verification built (cargo unpacks the tarball afresh into
# target/package/mcpgen-VERSION/, so it always builds it after that), before anything builds the
# checkout's again.
[[ target/debug/mcpgen -nt "target/package/mcpgen-$VERSION/Cargo.toml" ]] || {
  echo "package: target/debug/mcpgen was not built from the packaged sources"; exit 1; }
cp target/debug/mcpgen "$WORK/mcpgen-packaged"

echo "package: the packaged generator writes a crate from specs/bookshop.json, and it builds"
"$WORK/mcpgen-packaged" new pkgshop --spec specs/bookshop.json --dir "$WORK/pkgshop"
# The examples' versions, so nothing new is downloaded; cargo drops what it does not use.
cp generated-examples/Cargo.lock "$WORK/pkgshop/Cargo.lock"
(cd "$WORK/pkgshop" && CARGO_TARGET_DIR="$ROOT/generated-examples/target" cargo build --quiet)
test -x "$ROOT/generated-examples/target/debug/pkgshop"

echo "package: the crate takes --auth-issuer only when built with the runtime's feature auth"
# The spec has no `auth`, so a plain build has no OAuth verifier and says which feature adds it;
# built with `--features mcpgen-runtime/auth`, the same flags start a resource server (an
# issuer that does not answer is fine: a request without a token gets the challenge before any token is checked).
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
AUTH_ARGS=(--transport http --bind "127.0.0.1:$PORT" --log-level error
  --auth-issuer "http://127.0.0.1:9" --auth-resource "http://127.0.0.1:$PORT/mcp")
rc=0
"$ROOT/generated-examples/target/debug/pkgshop" "${AUTH_ARGS[@]}" < /dev/null > /dev/null 2> "$WORK/no-auth.txt" || rc=$?
expected="error: --auth-issuer: this server was built without OAuth verification; build it with the runtime's feature \`auth\` (\`cargo build --features mcpgen-runtime/auth\`)"
[[ "$rc" == 2 && "$(cat "$WORK/no-auth.txt")" == "$expected" ]] || {
  echo "package: without the feature auth, --auth-issuer gave exit $rc and:"; cat "$WORK/no-auth.txt"; exit 1; }
# The examples' versions again (the first build trimmed the verifier's packages from the lock).
cp generated-examples/Cargo.lock "$WORK/pkgshop/Cargo.lock"
(cd "$WORK/pkgshop" && CARGO_TARGET_DIR="$ROOT/generated-examples/target" cargo build --quiet --features mcpgen-runtime/auth)
"$ROOT/generated-examples/target/debug/pkgshop" "${AUTH_ARGS[@]}" < /dev/null > /dev/null 2> "$WORK/auth.txt" &
SERVER=$!
challenge="$(python3 - "$PORT" <<'PY'
import http.client, sys, time
port = int(sys.argv[1])
body = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
for _ in range(200):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("POST", "/mcp", body, {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        r = c.getresponse()
        print(r.status, r.getheader("WWW-Authenticate"))
        break
    except OSError:
        time.sleep(0.05)
PY
)"
kill "$SERVER" 2>/dev/null || true
wait "$SERVER" 2>/dev/null || true
expected="401 Bearer resource_metadata=\"http://127.0.0.1:$PORT/.well-known/oauth-protected-resource/mcp\""
[[ "$challenge" == "$expected" ]] || {
  echo "package: built with the feature auth, a request without a token got: $challenge (expected $expected)"
  cat "$WORK/auth.txt"; exit 1; }

echo "package: cargo install --path . --locked"
cargo install --path . --locked --debug --quiet --root "$WORK/installed"
"$WORK/installed/bin/mcpgen" check specs/bookshop.json
echo "package: ok (mcpgen $VERSION and mcpgen-runtime $VERSION)"

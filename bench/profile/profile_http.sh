#!/usr/bin/env bash
# Instructions per call (callgrind) of the generated and hand-written bookshops over Streamable
# HTTP, stateless 2026-07-28, one keep-alive connection, by difference between 30 and 130 calls:
# bench/profile/profile_http.sh [OUTDIR]. Needs valgrind and the release builds of bench/run.sh.
# Keeps the .cg files (named like profile.sh's, -50/-250) for bench/profile/diff.py.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-/tmp/mcpgen-profile-http}"; mkdir -p "$OUT"
export MCP_REQUEST_STATE_KEYS="bWNwZ2VuLWJlbmNoLWtleS1vZi1hdC1sZWFzdC0zMi1ieXRlcw"
declare -A BIN=([gen]="$ROOT/generated-examples/target/release/bookshop" [hw]="$ROOT/bench/target/release/handwritten")
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1}'; }
echo "| workload | generated Ir/call | hand-written Ir/call | ratio |"
echo "|---|---|---|---|"
for tool in search_books reserve_book order_book; do
  declare -A per=()
  for s in gen hw; do
    for n in 30 130; do
      m=$([ "$n" = 30 ] && echo 50 || echo 250)
      timeout 900 python3 "$ROOT/bench/profile/drive_http.py" "$n" "$tool" valgrind --tool=callgrind \
        --callgrind-out-file="$OUT/$s-http-$tool-$m.cg" "${BIN[$s]}"
    done
    per[$s]=$(( ( $(total "$OUT/$s-http-$tool-250.cg") - $(total "$OUT/$s-http-$tool-50.cg") ) / 100 ))
  done
  echo "| http 2026-07-28 $tool | ${per[gen]} | ${per[hw]} | $(python3 -c "print(f'{${per[gen]}/${per[hw]}:.2f}')") |"
done

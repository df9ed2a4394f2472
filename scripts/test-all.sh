#!/usr/bin/env bash
# The whole test suite: formatting, lints, the generator's tests, the generated examples'
# end-to-end tests (rmcp's client, stdio and HTTP, both protocol eras, nginx replicas), and the
# real peers (Python SDK client, TypeScript v2 client, Inspector CLI; three replicas behind nginx
# with Redis, peers/tests/python/test_replicas.py). Installs what the tests need from files in
# this repository (scripts/setup-system.sh: the Debian packages of scripts/debian-packages.txt,
# nginx and Redis; peers/setup.sh: a pinned venv, Node 22 and npm packages).
set -euo pipefail
cd "$(dirname "$0")/.."

# Every build of the suite (these cargo commands and the ones its tests run on generated crates)
# is a clean build on CI: no incremental state to write, and no debug info. The suite builds
# about 130 binaries of generated crates; with line tables each is about 100 MB, half of it
# debug info, and the suite's target directories grew past 15 GB (one CI run ran out of disk).
# A panic still names its file and line (the message carries them); a backtrace names
# functions only.
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=0

echo "== system packages the tests run (nginx, Redis) (at ${SECONDS}s)"
scripts/setup-system.sh

# clippy's lints in the same compilation as the tests: every cargo command below compiles the
# workspaces' own crates through clippy's driver (as `cargo clippy --all-targets -- -D warnings`
# runs it, but with code generation), so the tests are built once, linted; `cargo clippy` would
# compile both workspaces and every dependency a second time, in check mode, for nothing else.
# Cargo keys those builds by the driver, so the commands below (the bench smoke's too) share
# them. The tests that run cargo on crates of their own remove both variables.
RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

echo "== mcpgen and its runtime: fmt, clippy, tests (at ${SECONDS}s)"
cargo fmt --all -- --check
# Every target linted (benches and examples too), then the tests run.
cargo test --workspace --all-targets --locked --no-run
cargo test --workspace --locked --no-fail-fast

echo "== the packaged generator: cargo package, a crate from its build, cargo install (at ${SECONDS}s)"
scripts/check-package.sh

echo "== generated examples: fmt, clippy, end-to-end tests (at ${SECONDS}s)"
(cd generated-examples && cargo fmt --all -- --check \
  && cargo test --workspace --all-targets --locked --no-run \
  && cargo test --workspace --locked --no-fail-fast)

echo "== bench smoke (benchmarks are run by bench/run.sh, not here) (at ${SECONDS}s)"
bench/run.sh --quick

echo "== real peers (Python SDK, TypeScript v2 client, Inspector CLI, conformance suite) (at ${SECONDS}s)"
peers/run.sh
# (last: its closing line 'peers: N passed, N failed, N skipped' sums up the run)
echo "== done (at ${SECONDS}s)"

#!/usr/bin/env bash
# The whole test suite: formatting, lints, the generator's tests, and the generated examples'
# end-to-end tests. Installs what the tests need from files in this repository.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== mcpgen: fmt, clippy, tests"
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --locked

if [ -f generated-examples/Cargo.toml ]; then
  echo "== generated examples: fmt, clippy, end-to-end tests"
  (cd generated-examples && cargo fmt --all -- --check \
    && cargo clippy --workspace --all-targets --locked -- -D warnings \
    && cargo test --workspace --locked)
fi

#!/bin/sh
# Regenerates every example crate with mcpgen itself (the generated module, and in the bookshop
# and embedded the copy of the runtime crate `../runtime/` without its tests in
# src/generated/runtime/; the other examples depend on that crate), exactly as a user runs
# `mcpgen generate`. User code is kept.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for crate in bookshop files bistro mrtr-probe stress conformance differential embedded lending fleet operations; do
    cargo run -q --manifest-path "$here/../Cargo.toml" --bin mcpgen -- generate --crate "$here/$crate"
done

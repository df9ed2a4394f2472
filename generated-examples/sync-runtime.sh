#!/bin/sh
# Regenerates every example crate with mcpgen itself (the generated module; every example
# depends on the runtime crate `../runtime/` by path), exactly as a user runs `mcpgen generate`.
# User code is kept.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for crate in bookshop files bistro mrtr-probe stress conformance differential embedded lending fleet operations; do
    cargo run -q --manifest-path "$here/../Cargo.toml" --bin mcpgen -- generate --crate "$here/$crate"
done

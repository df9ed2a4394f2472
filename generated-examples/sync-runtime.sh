#!/bin/sh
# Regenerates every example crate with mcpgen itself (the generated module and the runtime copy
# in src/generated/), exactly as a user runs `mcpgen generate`. User code is kept.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for crate in bookshop files bistro mrtr-probe stress conformance differential embedded; do
    cargo run -q --manifest-path "$here/../Cargo.toml" -- generate --crate "$here/$crate"
done

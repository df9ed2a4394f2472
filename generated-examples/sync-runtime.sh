#!/bin/sh
# Copies the canonical runtime (/work/main/runtime, i.e. ../runtime) into every example crate,
# exactly as mcpgen copies it into the crates it generates. README.md stays in the repository.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../runtime"
for crate in bookshop files bistro mrtr-probe; do
    dst="$here/$crate/src/generated/runtime"
    rm -rf "$dst"
    mkdir -p "$dst"
    for f in "$src"/*.rs; do
        cp "$f" "$dst/"
    done
done

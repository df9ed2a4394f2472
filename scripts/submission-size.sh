#!/usr/bin/env bash
# What a submission of the commits since BASE weighs, against the limits of one submission
# (512 MiB packed, 256 MiB of diffs added up as text; a merge counts its diff against each
# parent). Usage: scripts/submission-size.sh BASE
set -euo pipefail
base="${1:?usage: scripts/submission-size.sh BASE}"
diffs=0
for c in $(git rev-list "$base"..HEAD); do
    for p in $(git rev-list --parents -n1 "$c" | cut -d' ' -f2-); do
        diffs=$(( diffs + $(git diff --no-color "$p" "$c" | wc -c) ))
    done
done
packed=$(git rev-list --objects "$base"..HEAD | git pack-objects --stdout -q | wc -c)
echo "commits: $(git rev-list --count "$base"..HEAD)"
echo "diffs:   $(( diffs / 1024 )) KiB (limit 262144 KiB)"
echo "packed:  $(( packed / 1024 )) KiB (limit 524288 KiB)"

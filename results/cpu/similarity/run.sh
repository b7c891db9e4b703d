#!/usr/bin/env bash
# Issue 61, item 6: how alike our solutions, the honest corpora of weeks 1 to 3 and the week-3
# fixtures are once the statements are in their normal form (feedback/src/normalise.rs), as
# `feedback scores` prints them; and week 3's two honest kernels as they were before their rewrite
# (commit 62912f5), which the normal form flagged. No GPU. From the repository's root:
#
#   bash results/cpu/similarity/run.sh > results/cpu/similarity/scores.log
set -euo pipefail
cargo build -q --locked -p feedback
feedback=$PWD/target/debug/feedback
scores() { echo "\$ feedback scores $*"; "$feedback" scores "$@"; echo; }
scores --template assignments/01-simpson/simpson.cu kernels/cuda/simpson.cu \
    feedback/tests/fixtures/01-simpson/independent.cu assignments/01-simpson/honest/*.cu
scores --template assignments/02-mmm-ab/mmm.cu kernels/cuda/mmm.cu assignments/02-mmm-ab/honest/*.cu
scores --template assignments/03-mmm-tiled/mmm.cu kernels/cuda/mmm.cu feedback/tests/fixtures/03-mmm-tiled/*.cu \
    assignments/03-mmm-tiled/honest/*.cu
before=$(mktemp -d)
trap 'rm -rf "$before"' EXIT
for name in padded-tiles transposed-b-tile; do
    git show "62912f5:assignments/03-mmm-tiled/honest/$name.cu" > "$before/$name-62912f5.cu"
done
(cd "$before" && scores --template "$OLDPWD/assignments/03-mmm-tiled/mmm.cu" "$OLDPWD/kernels/cuda/mmm.cu" \
    padded-tiles-62912f5.cu transposed-b-tile-62912f5.cu) | sed "s|$PWD/||g; s|$before/||g"

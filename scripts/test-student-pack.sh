#!/usr/bin/env bash
# Checks scripts/student-pack.sh without a GPU (run by scripts/test.sh): a pack of two weeks, built for
# one architecture in the dev profile, holds the labs, the starters and the sources, and nothing of our
# solutions (its audit passes, and the same audit fails once one of our kernels is put in; the kernels'
# tests in that build mode find no PTX in any fatbin); its README names the one architecture built, and
# no page of it links to a file it lacks; its labs
# run from the pack and compile a student's file (--check --dry-run); its sources build without nvcc,
# from kernels/prebuilt/; bad arguments are one line and exit 2.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source scripts/test-lib.sh
# status COMMAND...: its exit code, its output in $work/said
status() { "$@" >"$work/said" 2>&1 && echo 0 || echo $?; }

pack=$work/pack
# Where student-pack.sh --dev builds (its target folder), absolute.
pack_target=$(realpath -m "${CARGO_TARGET_DIR:-target}/student-pack-dev")
# OUT as a user types it: relative to where they are, with a trailing slash; the tarball beside it.
root=$PWD
expect "student-pack.sh" "$(cd "$work" && status bash "$root/scripts/student-pack.sh" --dev --archs 75 --weeks 03-mmm-tiled,07-dynamic-parallelism pack/)" 0
grep -q "^audit: .* holds no solution" "$work/said" || { cat "$work/said"; expect "the audit's verdict" missing there; }
expect "tarball" "$(tar -tzf "$pack.tar.gz" | grep -c '^pack/bin/lab-mmm$')" 1

# What is in it, and what is not.
for lab in lab-*; do
    expect "bin/$lab" "$([[ -x $pack/bin/$lab ]] && echo yes)" yes
done
expect "week 3's files" "$(cd "$pack/assignments/03-mmm-tiled" && ls | tr '\n' ' ')" "README.md mmm.cu "
expect "weeks not asked for" "$(ls "$pack/assignments" | tr '\n' ' ')" "03-mmm-tiled 07-dynamic-parallelism "
# The students' page, but for its line on the GPU, which names the architectures built and no other.
gpu_line='^- \*\*A GPU\*\* '
expect "the students' README" "$(cmp -s <(grep -v "$gpu_line" assignments/STUDENTS.md) \
    <(grep -v "$gpu_line" "$pack/README.md") && echo same)" same
expect "its line on the GPU" "$(grep "$gpu_line" "$pack/README.md")" "- **A GPU** the pack has machine code for: sm_75."
expect "the architectures it names" "$(grep -o 'sm_[0-9]\+' "$pack/README.md" | sort -u | tr '\n' ' ')" "sm_75 "
# Every relative link of every page in the pack leads to a file or folder the pack holds.
expect "links to what the pack lacks" "$(cd "$pack" && find . -name '*.md' | while read -r page; do
    grep -oE '\]\([^)]+\)' "$page" | sed -E 's/^\]\(//; s/\)$//; s/[# ].*//' | grep -vE '^([a-z]+:|$)' |
        while read -r target; do [[ -e $(dirname "$page")/$target ]] || echo "$page: $target"; done
done)" ""
expect "the lab READMEs' links that stay" "$(grep -c '](../lab-pinned/README.md)' "$pack/lab-streams/README.md")" 1
expect "our kernels' sources" "$(find "$pack" -name '*.cu' -not -path '*/assignments/*' | wc -l)" 0
expect "the generator of broken kernels" "$([[ -e $pack/grading/src/bin ]] && echo there || echo absent)" absent
expect "prebuilt kernels" "$(ls "$pack/kernels/prebuilt" | grep -c '^mmm_bs16\.sm_75\.\(fatbin\|ptxas\)$')" 2
expect "the toolchain script" "$([[ -f $pack/scripts/cuda-toolchain.sh ]] && echo yes)" yes

# The kernels crate's own tests in the pack's build mode: every fatbin read entry by entry holds
# machine code for its architecture and no PTX, and no linked image carries relocatable PTX.
expect "kernels' tests, machine code only" "$(KERNELS_MACHINE_CODE_ONLY=1 CUDA_ARCH=75 CARGO_TARGET_DIR="$pack_target" \
    status cargo test --locked -p kernels --lib)" 0
grep -q "^test result: ok" "$work/said" || cat "$work/said"

# The audit is no formality: one of our kernels in the pack, anywhere, fails it.
cp kernels/cuda/mmm.cu "$pack/lab-mmm/notes.txt"
expect "audit of a pack with our mmm.cu" "$(status cargo run --quiet --locked -p grading --bin templates -- --audit "$pack")" 1
expect "the finding names the file" "$(grep -q "^lab-mmm/notes.txt: holds a line of our mmm.cu" "$work/said" && echo named)" named
rm "$pack/lab-mmm/notes.txt"

# The pack's lab compiles a student's file and reads its rules, from the week's folder, without a GPU:
# the starter fails the tiles rule, our kernel (a correct submission) passes.
week=$pack/assignments/03-mmm-tiled
dry_run() { (cd "$week" && status ../../bin/lab-mmm --kernel-source "$1" --kernel tiled --check --dry-run); }
expect "--check --dry-run of the starter" "$(dry_run mmm.cu)" 1
cp kernels/cuda/mmm.cu "$work/correct.cu"
expect "--check --dry-run of a correct kernel" "$(dry_run "$work/correct.cu")" 0

# The sources build as they are, with nvcc nowhere to be found: the kernels come from kernels/prebuilt.
no_nvcc_path=$(dirname "$(command -v cargo)"):/usr/bin:/bin
expect "cargo build in the pack" "$(cd "$pack" && status env PATH="$no_nvcc_path" NVCC= CUDA_PATH= \
    CARGO_TARGET_DIR="$pack_target" cargo build --locked -p lab-simpson)" 0
grep -q "error" "$work/said" && cat "$work/said"

# Usage errors: one line, exit 2, nothing made.
expect "no OUT" "$(status bash scripts/student-pack.sh --dev)" 2
expect "no OUT: one line" "$(wc -l <"$work/said")" 1
expect "a non-empty OUT" "$(status bash scripts/student-pack.sh "$pack")" 2
expect "a non-empty OUT: the message" "$(grep -c 'exists and is not empty' "$work/said")" 1
expect "an unknown week" "$(status bash scripts/student-pack.sh --weeks 03-mmm-tiled,08-nope "$work/other")" 2
expect "an unknown week: named" "$(grep -c 'no week 08-nope' "$work/said")" 1
expect "a pattern is no week" "$(status bash scripts/student-pack.sh --weeks '.*' "$work/other")" 2
expect "nothing made for it" "$([[ -e $work/other ]] && echo made || echo nothing)" nothing
# --archs: numbers, with commas (as --weeks) or semicolons (as CUDA_ARCH); anything else is refused.
expect "--archs with commas" "$(status bash scripts/student-pack.sh --archs 75,sm_80 --weeks 08-nope "$work/other")" 2
expect "--archs with commas: taken, the week refused" "$(grep -c 'no week 08-nope' "$work/said")" 1
expect "--archs with semicolons" "$(status bash scripts/student-pack.sh --archs '75;80' --weeks 08-nope "$work/other")" 2
expect "--archs with semicolons: taken" "$(grep -c 'no week 08-nope' "$work/said")" 1
for archs in '75 80' '75:80' '75,' all native; do
    expect "--archs '$archs'" "$(status bash scripts/student-pack.sh --archs "$archs" "$work/other")" 2
    expect "--archs '$archs': one line" "$(grep -c "^student-pack.sh: --archs: '$archs' is not a list" "$work/said") $(wc -l <"$work/said")" "1 1"
done
expect "--help on --archs" "$(bash scripts/student-pack.sh --help | grep -c 'separated by commas or semicolons')" 1
for option in --weeks --archs --dev --help; do
    expect "--help names $option" "$(bash scripts/student-pack.sh --help | grep -cE -- "^  (-h, )?$option ")" 1
done

echo "test-student-pack.sh: $checks checks, $failures failed"
[[ $failures == 0 ]]

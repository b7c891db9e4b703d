#!/usr/bin/env bash
# Makes the student pack: the labs and the weeks' starters, without our solutions (issue 45).
#
#   bash scripts/student-pack.sh [--weeks WEEK,WEEK] [--archs LIST] [--dev] OUT
#
# OUT (a new folder) gets, and OUT.tar.gz holds:
#   README.md              the students' page (assignments/STUDENTS.md): set-up, then the weeks; its
#                          line on the GPU names the architectures in LIST, none other
#   bin/lab-*              every lab, prebuilt; their kernels are machine code only (no PTX, which
#                          reads almost as the CUDA C) for the architectures in LIST
#   assignments/WEEK/      each week's README.md and starter .cu; no broken/, no adversarial/
#   scripts/cuda-toolchain.sh  installs nvcc, with which a lab compiles a student's file
#   Cargo.toml, common/, kernels/, profiler/, matrix/, sandbox/, grading/ (less its bin/), lab-*/, vendor/
#                          the labs' Rust sources, with kernels/prebuilt/
#                          (the same machine code) in place of kernels/cuda/*.cu: `cargo run -p lab-mmm
#                          -- ...` works from OUT as in the repository, and needs no nvcc to build;
#                          their READMEs' links to what the pack leaves out (results/, reference/)
#                          keep their text and lose their target
# Then it audits OUT (`cargo run -p grading --bin templates -- --audit OUT`): no line of our solutions,
# no PTX (not even compressed inside a fatbin), no broken or red-team kernel in any file, the
# executables included. A finding fails the script before the tarball is made.
#
#   --weeks WEEK,...  the week folders to include (default: every folder of the grader's list of
#                     weeks, `grade.sh --list-weeks`, in the course's order)
#   --archs LIST      the architectures, numbers separated by commas or semicolons (75,80,90 or
#                     sm_75;sm_90; default 75,80,86,89,90,100,120, sm_75 to sm_120: T4 and RTX 20,
#                     A100, RTX 30, RTX 40 and L4, H100, B200, RTX 50). A GPU of none of their major
#                     versions runs nothing: machine code has no fallback. nvcc says which it supports
#   --dev             build the dev profile (quicker to build; what the CI test uses) instead of release
#   -h, --help        this text
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."

fail() { echo "student-pack.sh: $1" >&2; exit "${2:-1}"; }
help() { sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
usage="usage: bash scripts/student-pack.sh [--weeks WEEK,WEEK] [--archs LIST] [--dev] OUT (--help for more)"

weeks='' archs='75,80,86,89,90,100,120' profile=release out=''
while [[ $# -gt 0 ]]; do
    case $1 in
        --weeks) [[ -n ${2:-} ]] || fail "--weeks needs a list of week folders; $usage" 2; weeks=$2; shift 2 ;;
        --archs) [[ -n ${2:-} ]] || fail "--archs needs a list of architectures; $usage" 2; archs=$2; shift 2 ;;
        --dev) profile=dev; shift ;;
        -h | --help) help; exit 0 ;;
        -*) fail "unknown option $1; $usage" 2 ;;
        *) [[ -z $out ]] || fail "one OUT folder, not '$out' and '$1'; $usage" 2; out=$1; shift ;;
    esac
done
[[ -n $out ]] || fail "$usage" 2
[[ $archs =~ ^(sm_)?[0-9]+([,;](sm_)?[0-9]+)*$ ]] ||
    fail "--archs: '$archs' is not a list of architectures like 75,80,90 or sm_75;sm_90 (commas or semicolons between them)" 2
# As CUDA_ARCH takes them (75;80;90), and as kernels/build.rs builds them: sorted, each once.
archs=$(tr ',;' '\n\n' <<<"${archs//sm_/}" | sort -nu | paste -sd ';')
# OUT as the caller gave it, from the caller's folder; without a trailing slash, so that OUT.tar.gz
# lands beside it, not inside.
[[ $out == /* ]] || out=$caller/$out
out=${out%/}
[[ ! -e $out || -z $(ls -A "$out" 2>/dev/null) ]] || fail "$out exists and is not empty: give a new folder" 2
[[ ! -e $out.tar.gz ]] || fail "$out.tar.gz exists: move it away or give another OUT" 2

# The week folders, from the one list of weeks (the grader's; two weeks may share a folder), each once
# in the course's order; or those --weeks names, each checked against it.
all_weeks=$(cargo run --quiet --locked -p grader -- --list-weeks | cut -f2 | awk '!seen[$0]++') ||
    fail "no list of weeks: cargo run -p grader -- --list-weeks failed (above)"
selected=${weeks//,/ }
for week in ${selected:=$all_weeks}; do
    grep -qxF -- "$week" <<<"$all_weeks" || fail "--weeks: no week $week (there are: ${all_weeks//$'\n'/, })" 2
done
# The students' page names the architectures this pack holds, none other: its line on the GPU lists
# the default ones, replaced here.
held=sm_${archs//;/, sm_}
readme=$(sed "s/^\(- \*\*A GPU\*\* the pack has machine code for: \)[^.]*\./\1$held./" assignments/STUDENTS.md)
grep -qF -- "- **A GPU** the pack has machine code for: $held." <<<"$readme" ||
    fail "assignments/STUDENTS.md has no line '- **A GPU** the pack has machine code for: ...' to name them in"

bash scripts/cuda-toolchain.sh
# A target folder of its own: machine-code-only kernels must not replace the usual build's.
pack_target=${CARGO_TARGET_DIR:-target}/student-pack-$profile
labs=(lab-*)
packages=()
for lab in "${labs[@]}"; do packages+=(-p "$lab"); done
echo "student-pack.sh: building ${labs[*]} ($profile) with kernels for $archs, machine code only" >&2
kernels_out=$(KERNELS_MACHINE_CODE_ONLY=1 CUDA_ARCH=$archs CARGO_TARGET_DIR=$pack_target \
    bash scripts/kernels-out.sh --profile "$profile" --bins "${packages[@]}")
[[ $profile == dev ]] && built=$pack_target/debug || built=$pack_target/release

mkdir -p "$out/bin" "$out/kernels/prebuilt" "$out/scripts" "$out/assignments"
for lab in "${labs[@]}"; do
    strip --strip-debug -o "$out/bin/$lab" "$built/$lab"
done
if [[ -e .toolchain/cuda/lib/libcupti.so.13 ]]; then
    cp .toolchain/cuda/lib/libcupti.so.13 "$out/bin/" # for --profile and --trace, as in the GPU bundle
fi
cp "$kernels_out"/*.fatbin "$kernels_out"/*.ptxas "$out/kernels/prebuilt/"
cp "$kernels_out"/*.cubin "$out/kernels/prebuilt/" 2>/dev/null || true

# The sources: what git tracks, less our kernels (kernels/cuda/*.cu), the generator of the templates
# and broken kernels (grading/src/bin/), the tests (they hold our solution's runs), cust's doc-test
# kernels (vendor/cust/resources/), the slide programs, the saved results and the scripts for teachers.
git ls-files -z -- Cargo.toml Cargo.lock .cargo vendor common kernels profiler matrix sandbox grader grading 'lab-*' |
    grep -zv -e '^kernels/cuda/.*\.cu$' -e '^grading/src/bin/' -e '^[^/]*/tests/' -e '^vendor/cust/resources/' |
    xargs -0 cp --parents -t "$out"
# The teachers' crates stay out: feedback (its tests hold copies of our solution) and the course
# server (a student hands in through its web page, curl or a teacher's build). The pack's workspace
# lists the labs alone, and its lock file loses what only those crates use: cargo prunes it offline,
# keeping every other version as locked (the pack's `cargo build --locked` in the tests says so).
sed -i -e '/^    "feedback",$/d' -e '/^    "course-server",$/d' "$out/Cargo.toml"
cp Cargo.lock "$out/Cargo.lock"
(cd "$out" && cargo update --workspace --offline --quiet) ||
    fail "cargo could not prune the pack's Cargo.lock offline (build the workspace first: it fetches the crates)"
cp scripts/cuda-toolchain.sh "$out/scripts/"
printf '%s\n' "$readme" >"$out/README.md"
for week in $selected; do
    mkdir -p "$out/assignments/$week"
    # The README and the starter: the files at the week's top level, never its folders.
    find "assignments/$week" -maxdepth 1 -type f -exec cp -t "$out/assignments/$week" {} +
done
# The labs' READMEs are written for the repository: a link of theirs to what the pack leaves out (our
# saved runs in results/, reference/, the teachers' pages) keeps its text and loses its target. The
# students' pages (README.md, assignments/) link only to what the pack holds; the test checks every page.
find "$out" -name '*.md' -not -path "$out/README.md" -not -path "$out/assignments/*" -exec \
    perl -0777 -i -MFile::Basename -pe 's{\[([^\]]*)\]\(((?![a-z]+:)[^)#\s]+)[^)]*\)}{-e dirname($ARGV) . "/$2" ? $& : $1}ge' {} +

echo "student-pack.sh: auditing $out (the auditor is built first: minutes the first time)" >&2
cargo run --quiet --locked -p grading --bin templates -- --audit "$out" ||
    fail "$out holds what students must not get (findings above); no tarball made"
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "student-pack.sh: $out and $out.tar.gz ($(du -sh "$out.tar.gz" | cut -f1))" >&2

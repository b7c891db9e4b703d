#!/usr/bin/env bash
# Builds what the GPU machine runs (it has CUDA but no Rust): the release lab binaries, the dev-profile
# ones (what `cargo run -p lab-x` runs, for time-labs.sh), and the GPU test executables, into
# gpu-bundle/ (git-ignored, about 140 MB), with run.sh and time-labs.sh to run them there:
#
#   bash scripts/gpu-bundle.sh          # here
#   bash gpu-bundle/run.sh [RESULTS]    # on the GPU machine, from the repository root
#   bash gpu-bundle/time-labs.sh        # there: every lab's default run, both profiles, timed
#   bash gpu-bundle/compare.sh          # there: the slide programs (reference/, built there) beside the labs
#   bash gpu-bundle/time-checks.sh      # there: each week's --check, plain and --sanitize, timed; grade.sh
#   bash gpu-bundle/saved-runs.sh gpu-bundle/runs/readme.txt RESULTS   # there: the runs the READMEs quote
#
# The kernels are built for CUDA_ARCH (kernels/build.rs: here, without a GPU, every major architecture).
# A bundle for one older architecture, to test on a newer GPU what a T4 or an A100 would run:
#
#   CUDA_ARCH=sm_75 bash scripts/gpu-bundle.sh --no-dev gpu-bundle-sm75
#
# FOLDER (default gpu-bundle) is where it goes; --no-dev leaves out the dev-profile binaries and the
# benchmarks (run.sh and the GPU tests need neither). With CUDA_ARCH set, the build goes to
# target/arch-<CUDA_ARCH> so that it does not replace the default build in target/.
#
# The bundle also grades on its own (issue 62): gpu-bundle/grade.sh is assignments/grade.sh with the
# grader, the labs, our solutions and the weeks' starters all from the bundle. FOLDER must be new,
# empty, or an earlier bundle (it holds .gpu-bundle): nothing else is ever deleted.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
dev=1
if [[ ${1:-} == --no-dev ]]; then
    dev=0
    shift
fi
[[ $# -le 1 && ${1:-} != -* ]] || { echo "gpu-bundle.sh: usage: bash scripts/gpu-bundle.sh [--no-dev] [FOLDER] (--help for more)" >&2; exit 2; }
bundle=${1:-gpu-bundle}
if [[ -e $bundle && ! -e $bundle/.gpu-bundle && -n $(ls -A "$bundle" 2>/dev/null) ]]; then
    echo "gpu-bundle.sh: $bundle holds files and is no earlier bundle (no $bundle/.gpu-bundle): nothing is deleted; name a new or empty folder" >&2
    exit 2
fi
if [[ -n ${CUDA_ARCH:-} && -z ${CARGO_TARGET_DIR:-} ]]; then
    export CARGO_TARGET_DIR="target/arch-${CUDA_ARCH//[^A-Za-z0-9_-]/_}"
fi
target=${CARGO_TARGET_DIR:-target}
bash scripts/cuda-toolchain.sh
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/bin-dev" "$bundle/tests" "$bundle/benches" "$bundle/kernels"
touch "$bundle/.gpu-bundle"
cargo build --release --workspace --bins --locked
if [[ $dev == 1 ]]; then
    cargo build --workspace --bins --locked
fi
# The kernel images themselves, for cuobjdump --dump-sass on the GPU machine.
kernels_out=$(bash scripts/kernels-out.sh --release -p kernels)
cp "$kernels_out"/*.fatbin "$kernels_out"/*.cubin "$bundle/kernels/"
for lab in lab-*/; do
    lab=${lab%/}
    cp "$target/release/$lab" "$bundle/bin/"
    # Without its line tables (only backtraces use them) the dev binary is a fifth of the size; the
    # code, and so its speed, is unchanged.
    if [[ $dev == 1 ]]; then
        strip --strip-debug -o "$bundle/bin-dev/$lab" "$target/debug/$lab"
    fi
done
# The grader and the feedback program, which grade.sh looks for beside the labs, and what grading
# reads from the repository: our solutions and the weeks' starters, broken and red-team kernels.
# The course server (issue 63) travels too: a GPU node runs its workers, or the whole course.
cp "$target/release/grader" "$target/release/feedback" "$target/release/course-server" "$bundle/bin/"
mkdir -p "$bundle/kernels/cuda"
cp kernels/cuda/*.cu "$bundle/kernels/cuda/"
cp -r assignments "$bundle/assignments"
cat >"$bundle/grade.sh" <<'GRADE'
#!/usr/bin/env bash
# assignments/grade.sh for a GPU node with this bundle only: the same command line (--help).
here=$(cd "$(dirname "$0")" && pwd)
export GRADE_REPOSITORY=$here LAB_BIN_DIR=$here/bin
exec "$here/bin/grader" "$@"
GRADE
chmod +x "$bundle/grade.sh"
# CUPTI for --profile and --trace, beside the release labs, where the profile code looks first; the
# dev-profile labs find the GPU machine's own (/usr/local/cuda/extras/CUPTI/lib64), so both are tried.
if [[ -e .toolchain/cuda/lib/libcupti.so.13 ]]; then
    cp .toolchain/cuda/lib/libcupti.so.13 "$bundle/bin/"
fi
# Every package's tests/gpu.rs, compiled in release mode; cargo prints where each executable lands.
cargo test --release --workspace --locked --no-run --test gpu --message-format=json 2>/dev/null |
    BUNDLE=$bundle python3 -c '
import json, os, shutil, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "gpu":
        package = msg["package_id"].split("#")[0].rstrip("/").split("/")[-1]
        shutil.copy(msg["executable"], os.environ["BUNDLE"] + "/tests/" + package + "-gpu")
'
# The criterion benchmarks, for RUN_BENCHES=1 bash gpu-bundle/run.sh.
if [[ $dev == 1 ]]; then
    cargo bench --workspace --locked --no-run --message-format=json 2>/dev/null |
        BUNDLE=$bundle python3 -c '
import json, os, shutil, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") and "bench" in msg["target"]["kind"]:
        package = msg["package_id"].split("#")[0].rstrip("/").split("/")[-1]
        shutil.copy(msg["executable"], os.environ["BUNDLE"] + "/benches/" + package + "-" + msg["target"]["name"])
'
fi
cp scripts/gpu-run.sh "$bundle/run.sh"
# The reference programs travel as sources: the GPU machine's nvcc builds them for its GPU.
cp -r reference "$bundle/reference"
cp scripts/compare.sh scripts/compare-lib.sh scripts/compare-rows.txt "$bundle/"
cp -r results/slides "$bundle/slides"   # compare.sh's "slide ms" column
mkdir -p "$bundle/scenes"
cp lab-constant-tracer/scenes/sixty-four.txt "$bundle/scenes/"
cp scripts/time-labs.sh "$bundle/time-labs.sh"
cp scripts/time-checks.sh "$bundle/time-checks.sh"
cp scripts/saved-runs.sh "$bundle/saved-runs.sh"
cp -r scripts/runs "$bundle/runs"
ls "$bundle/tests" >/dev/null
du -sh "$bundle"

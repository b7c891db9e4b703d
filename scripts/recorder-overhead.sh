#!/usr/bin/env bash
# What our CUPTI recorder (grading/programs/recorder.cpp) adds to a graded program's time: builds
# reference/weeks/pipeline.cu and the recorder as the labs' --program-source check does, then runs the
# program RUNS times alone and RUNS times under the recorder, one after the other, and prints the
# median wall time of each and their ratio. Needs a GPU and a CUDA toolkit with CUPTI
# (CUDA_PATH, else /usr/local/cuda).
#
#   bash scripts/recorder-overhead.sh [N [NST [STEPS [RUNS]]]]    defaults 16777216 16 1000 7
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-16777216} nst=${2:-16} steps=${3:-1000} runs=${4:-7}
cuda=${CUDA_PATH:-/usr/local/cuda}
lib=''
for dir in "$cuda/extras/CUPTI/lib64" "$cuda/lib64"; do
    [[ -e $dir/libcupti.so.13 ]] && { lib=$dir; break; }
done
[[ -n $lib ]] || { echo "recorder-overhead.sh: no libcupti.so.13 under $cuda" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cuda/bin/nvcc" -std=c++17 -O2 -Igrading/programs reference/weeks/pipeline.cu -o "$work/pipeline" -ldl
"$cuda/bin/nvcc" -shared -Xcompiler -fPIC -std=c++17 -O2 -cudart none -I"$lib/../include" -I"$cuda/extras/CUPTI/include" \
    -L"$lib" -l:libcupti.so.13 -Xlinker -rpath,"$lib" grading/programs/recorder.cpp -o "$work/librecorder.so"
head -c $((4 * n)) /dev/zero > "$work/input.bin"
# The median of RUNS wall times in ms of the program, with the environment given first.
median_ms() {
    for _ in $(seq "$runs"); do
        local start end
        start=$(date +%s%N)
        env "$@" "$work/pipeline" "$n" "$nst" "$steps" "$work/input.bin" "$work/output.bin" >/dev/null
        end=$(date +%s%N)
        echo $(((end - start) / 1000))
    done | sort -n | awk '{ t[NR] = $1 } END { printf "%.1f", t[int((NR + 1) / 2)] / 1000 }'
}
alone=$(median_ms CUDA_MODULE_LOADING=EAGER)
recorded=$(median_ms CUDA_MODULE_LOADING=EAGER LD_PRELOAD="$work/librecorder.so" CUDA_INJECTION64_PATH="$work/librecorder.so" \
    LAB_RECORDER_FD=3 LAB_RECORDER_NONCE=overhead 3>"$work/trace.txt")
[[ -s $work/trace.txt ]] || { echo "recorder-overhead.sh: the recorder wrote no trace" >&2; exit 1; }
echo "pipeline $n $nst $steps, median of $runs runs: alone $alone ms, under the recorder $recorded ms" \
    "($(awk -v a="$alone" -v r="$recorded" 'BEGIN { printf "%.2f", r / a }')x, $(grep -c . "$work/trace.txt") trace lines)"

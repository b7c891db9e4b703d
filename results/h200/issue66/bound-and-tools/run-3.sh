#!/usr/bin/env bash
# Issues 66 and 60 on the GPU, run 3 of 3 (bundle of a435d71 in .gpu67/): the products of the streams,
# pinned and mapped labs and of weeks 5 and 6's German programs under the error bound; grade.sh with
# real labs and closing marks (week 1: ours, the starter, a broken kernel); the forgeries a mark
# refuses, with the real lab-simpson inside a wrapper that prints a row after the lab's mark or is
# killed by SIGKILL before it; the labs' default runs. Into $OUT/logs.tgz, re-made after every step.
set -u
mkdir -p .gpu67/b && tar -C .gpu67/b -xzf .gpu67/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu67/b/bin B=$PWD/.gpu67/b/bin T=$PWD/.gpu67/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
subs=$(mktemp -d); cp kernels/cuda/simpson.cu "$subs/ours.cu"; cp assignments/01-simpson/simpson.cu "$subs/starter.cu"; cp assignments/01-simpson/broken/off-by-one.cu "$subs/off-by-one.cu"
t week1-grade 90 bash assignments/grade.sh 01-simpson "$subs"
# The forgeries: LAB_BIN_DIR holds a lab-simpson that runs the real one and, where grade.sh asks for
# the mark, prints a row after it, or is killed by SIGKILL after the row and before the mark.
forger() {  # forger DIR ACTION: DIR/lab-simpson, the real lab, then ACTION where --mark is given
    mkdir -p "$1"; cp $B/lab-simpson "$1/real-lab-simpson"
    cat > "$1/lab-simpson" <<WRAPPER
#!/usr/bin/env bash
[[ " \$* " == *" --mark "* ]] || exec "$1/real-lab-simpson" "\$@"
$2
WRAPPER
    chmod +x "$1/lab-simpson"
}
after_mark=$(mktemp -d)/a
forger "$after_mark" '"$(dirname "$0")/real-lab-simpson" "$@"; code=$?; echo "\"forged.cu\",PASS,PASS,PASS,PASS,PASS,PASS,6/6,1.000,forged"; exit $code'
LAB_BIN_DIR=$after_mark t week1-grade-row-after-mark 90 bash assignments/grade.sh 01-simpson "$subs"
killer=$(mktemp -d)/k
forger "$killer" '"$(dirname "$0")/real-lab-simpson" "$@" | head -n 2; kill -KILL $$'
LAB_BIN_DIR=$killer t week1-grade-killed 90 bash assignments/grade.sh 01-simpson "$subs"
t pinned-products 60 $T/pinned --include-ignored --test-threads 1 streamed_products_from_pinned
t mapped-products 60 $T/mapped --include-ignored --test-threads 1 mapped_products_are_right
t streams-products 60 $T/streams --include-ignored --test-threads 1 the_three_matrix_programs
t week5-mmm 120 $T/streams --include-ignored --test-threads 1 week_5_mmm_streamed_is_judged
t week6-mmm 120 $T/mapped --include-ignored --test-threads 1 week_6_mmm_streamed_and_pinned_is_judged
t default-lab-mmm 40 $B/lab-mmm
t default-lab-pinned 40 $B/lab-pinned
t default-lab-mapped 40 $B/lab-mapped
tail -n 3 "$logs"/*.log

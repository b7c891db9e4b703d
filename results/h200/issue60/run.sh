#!/usr/bin/env bash
# Issue 60 on the GPU: the sandbox around week 5 and 6 programs and student compiles.
set -u
export LAB_BIN_DIR=$PWD/.gpu60/bin
B=.gpu60/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
t() { local s=$(date +%s%N); "$@"; local rc=$?; echo "rc=$rc wall_ms=$(( ($(date +%s%N) - s) / 1000000 )): $*"; }
{
t $B/lab-streams --program-source reference/weeks/pipeline.cu --check
t $B/lab-streams --program-source reference/weeks/mmm_streamed.cu --program mmm-streamed --check
t $B/lab-mapped --program-source reference/weeks/zero_copy.cu --check
t $B/lab-mapped --program-source reference/weeks/mmm_streamed_and_pinned.cu --program mmm-streamed-and-pinned --check
for f in assignments/05-streams/adversarial/*.cu; do echo "=== $f"; t $B/lab-streams --program-source $f --check --show-output; done
echo "secret hidden case line 4096 4" > /tmp/hidden.txt
printf '#include "/tmp/hidden.txt"\n__global__ void k() {}\n' > /tmp/includes-hidden.cu
echo "=== week 1 includes the hidden file"; t $B/lab-simpson --kernel-source /tmp/includes-hidden.cu --check
t $B/lab-simpson --kernel-source kernels/cuda/simpson.cu --check
t $B/lab-mmm --kernel-source kernels/cuda/mmm.cu --kernel tiled --check
t $B/lab-mmm --kernel-source kernels/cuda/mmm.cu --kernel tiled --check
} > $OUT/checks.log 2>&1
echo "secret lines shown: $(grep -c 'secret hidden' $OUT/checks.log)"
grep -E "^rc=|^sandbox:|^===|LEAKED|FORGED|rules passed|refused|error:" $OUT/checks.log | cut -c1-220
# grade.sh on week 5: ours, the starter and the two red-team programs that run
subs=$(mktemp -d); cp reference/weeks/pipeline.cu $subs/ours.cu; cp assignments/05-streams/pipeline.cu $subs/starter.cu
cp assignments/05-streams/adversarial/forges-a-row.cu assignments/05-streams/adversarial/reads-the-cases.cu $subs/
t bash assignments/grade.sh 05-streams $subs > $OUT/grades.csv 2> $OUT/grade-stderr.log
echo "grades.csv:"; cut -d, -f1,2 $OUT/grades.csv; grep -c FORGED $OUT/grades.csv | sed 's/^/FORGED in grades.csv: /'
awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="score") c=i} {print $1, $c}' $OUT/grades.csv
.gpu60/tests/streams week_5 --ignored --test-threads 1 > $OUT/tests-streams.log 2>&1; grep -E "^test |test result" $OUT/tests-streams.log
.gpu60/tests/mapped week_6 --ignored --test-threads 1 > $OUT/tests-mapped.log 2>&1; grep -E "^test |test result" $OUT/tests-mapped.log

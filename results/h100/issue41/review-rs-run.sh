# Issue 41: after the review of step 12's narrow tiles (B no longer rounded again in registers; the GPU test's
# coverage check on sm_90 only, a shape with more narrow tiles than multiprocessors). From the repository root,
# with the GPU bundle in .gpu64.
R=$OUT/r; mkdir -p $R
B=.gpu64/bin/lab-mmm
LAB_BIN_DIR=$PWD/.gpu64/bin timeout 300 .gpu64/gpu-lab-mmm --include-ignored --test-threads 1 --nocapture hopper_steps split_k_splits every_step_of_the_ladder the_labs_run cublas_in_tf32 > $R/review-rs-test.log 2>&1; echo "exit $?" >> $R/review-rs-test.log
for i in 1 2 3; do $B --ladder --precision tf32 --random 1024 > $R/review-rs-tf32-1024-$i.log 2>&1; done
$B --ladder --precision tf32 --random 4096 > $R/review-rs-tf32-4096.log 2>&1
$B --ladder --precision tf32 --size 256 8192 256 > $R/review-rs-tf32-256x8192x256.log 2>&1
timeout 200 compute-sanitizer --tool memcheck $B --ladder --precision tf32 --size 1408 300 1536 --repetitions 1 > $R/review-rs-memcheck.log 2>&1; echo "exit $?" >> $R/review-rs-memcheck.log
cd $OUT && tar cf results.tar r && rm -rf r

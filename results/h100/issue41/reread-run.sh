# Issue 41, after the re-read (WgmmaLaunch::prepare makes its split itself and asks the ladder only for the slabs):
# the ladder's GPU tests and step 12 at 1024. From the repository root, bundle in .gpu65.
R=$OUT/r; mkdir -p $R
LAB_BIN_DIR=$PWD/.gpu65/bin timeout 300 .gpu65/gpu-lab-mmm --include-ignored --test-threads 1 hopper_steps split_k_splits every_step_of_the_ladder the_labs_run cublas_in_tf32 > $R/reread-test.log 2>&1; echo "exit $?" >> $R/reread-test.log
.gpu65/bin/lab-mmm --ladder --precision tf32 --random 1024 > $R/reread-tf32-1024.log 2>&1
( time .gpu65/bin/lab-mmm ) > $R/reread-default.log 2>&1
cd $OUT && tar cf results.tar r && rm -rf r

# Issue 41: split-K inside steps 12 and 13 (wgmma), and the checker after its review. From the repository root.
R=$OUT/r; mkdir -p $R
B=.gpu60/bin/lab-mmm
LAB_BIN_DIR=$PWD/.gpu60/bin timeout 300 .gpu60/gpu-lab-mmm --include-ignored --test-threads 1 hopper_steps the_labs_run_puts split_k_splits cublas_in_tf32 every_step_of_the_ladder > $R/test-wgmma-split.log 2>&1; echo "exit $?" >> $R/test-wgmma-split.log
for i in 1 2 3; do $B --ladder --precision tf32 --random 1024 > $R/wgmma-split-tf32-1024-$i.log 2>&1; done
$B --ladder --precision bf16 --random 1024 > $R/wgmma-split-bf16-1024.log 2>&1
$B --ladder --precision tf32 --random 4096 > $R/wgmma-split-tf32-4096.log 2>&1
$B --ladder --precision tf32 --size 256 8192 256 > $R/wgmma-split-tf32-256x8192x256.log 2>&1
timeout 120 $B --ladder --sweep --precision tf32 --plot $R/wgmma-split-sweep-tf32.svg > $R/wgmma-split-sweep-tf32.log 2>&1
timeout 120 $B --ladder --sweep --precision bf16 --plot $R/wgmma-split-sweep-bf16.svg > $R/wgmma-split-sweep-bf16.log 2>&1
for i in 1 2 3; do LAB_PHASES=1 $B --random 8192 --kernel tiled --repetitions 1 > $R/review-beside-8192-$i.log 2>&1; done
cd $OUT && tar cf results.tar r && rm -rf r

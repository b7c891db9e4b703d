# Issue 41: steps 12 and 13 add their slices' slabs inside the GEMM (no sum kernel). From the repository root.
R=$OUT/r; mkdir -p $R
B=.gpu60/bin/lab-mmm
LAB_BIN_DIR=$PWD/.gpu60/bin timeout 300 .gpu60/gpu-lab-mmm --include-ignored --test-threads 1 hopper_steps split_k_splits cublas_in_tf32 every_step_of_the_ladder > $R/test-wgmma-fixup.log 2>&1; echo "exit $?" >> $R/test-wgmma-fixup.log
for i in 1 2 3; do $B --ladder --precision tf32 --random 1024 > $R/wgmma-fixup-tf32-1024-$i.log 2>&1; done
$B --ladder --precision bf16 --random 1024 > $R/wgmma-fixup-bf16-1024.log 2>&1
$B --ladder --precision tf32 --random 4096 > $R/wgmma-fixup-tf32-4096.log 2>&1
timeout 120 $B --ladder --sweep --precision tf32 --plot $R/wgmma-fixup-sweep-tf32.svg > $R/wgmma-fixup-sweep-tf32.log 2>&1
timeout 120 $B --ladder --sweep --precision bf16 --plot $R/wgmma-fixup-sweep-bf16.svg > $R/wgmma-fixup-sweep-bf16.log 2>&1
timeout 120 compute-sanitizer --tool memcheck $B --ladder --precision tf32 --size 129 2085 257 --repetitions 2 > $R/memcheck-wgmma-fixup.log 2>&1; echo "exit $?" >> $R/memcheck-wgmma-fixup.log
ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv -k regex:'wgmma|pad|sum_slices|sm90' \
  $B --ladder --precision tf32 --random 1024 --repetitions 1 > $R/ncu-wgmma-fixup-1024.csv 2> $R/ncu-wgmma-fixup-1024.err
cd $OUT && tar cf results.tar r && rm -rf r

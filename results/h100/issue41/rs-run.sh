# Issue 41: step 12 on a small C reads B through registers in 128 x 64 tiles (no transpose); 128 x 256 tiles from
# shared memory, B transposed, elsewhere. From the repository root, with the GPU bundle in .gpu62 (its logs are the
# rs-*.log here; rs-first-*.log come from an earlier form of it on .gpu61, the first design: 128 x 128 tiles through registers on
# every C).
R=$OUT/r; mkdir -p $R
B=.gpu62/bin/lab-mmm
LAB_BIN_DIR=$PWD/.gpu62/bin timeout 300 .gpu62/gpu-lab-mmm --include-ignored --test-threads 1 hopper_steps split_k_splits every_step_of_the_ladder > $R/test-rs.log 2>&1; echo "exit $?" >> $R/test-rs.log
for i in 1 2 3; do $B --ladder --precision tf32 --random 1024 > $R/rs-tf32-1024-$i.log 2>&1; done
$B --ladder --precision tf32 --random 4096 > $R/rs-tf32-4096.log 2>&1
$B --ladder --precision tf32 --size 256 8192 256 > $R/rs-tf32-256x8192x256.log 2>&1
timeout 120 $B --ladder --sweep --precision tf32 --plot $R/rs-sweep-tf32.svg > $R/rs-sweep-tf32.log 2>&1
$B --ladder --precision bf16 --random 1024 > $R/rs-bf16-1024.log 2>&1
for i in 2 3; do $B --ladder --precision tf32 --random 4096 > $R/rs-tf32-4096-$i.log 2>&1; done
ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum,dram__bytes.sum,lts__t_bytes.sum --csv \
  $B --ladder --precision tf32 --random 1024 --repetitions 1 > $R/ncu-rs-1024.csv 2> $R/ncu-rs-1024.err
timeout 200 compute-sanitizer --tool memcheck $B --ladder --precision tf32 --size 200 70 1999 --repetitions 1 > $R/memcheck-rs.log 2>&1; echo "exit $?" >> $R/memcheck-rs.log
timeout 200 compute-sanitizer --tool memcheck $B --ladder --precision tf32 --size 1100 1001 1999 --repetitions 1 > $R/memcheck-rs-wide.log 2>&1; echo "exit $?" >> $R/memcheck-rs-wide.log
cd $OUT && tar cf results.tar r && rm -rf r

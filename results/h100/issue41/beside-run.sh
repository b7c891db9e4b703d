# Issue 41 item 1: checks beside the GPU. Runs on the GPU machine from the repository root.
R=$OUT/r; mkdir -p $R
for i in 1 2 3 4 5; do LAB_PHASES=1 .gpu60/bin/lab-mmm --random 8192 --kernel tiled --repetitions 1 > $R/beside-8192-$i.log 2>&1; done
TIMEFORMAT="wall %R s"; for i in 1 2 3; do { time LAB_PHASES=1 .gpu60/bin/lab-mmm > $R/beside-default-$i.log 2>&1; } 2>> $R/beside-default-$i.log; done
LAB_BIN_DIR=$PWD/.gpu60/bin timeout 200 .gpu60/gpu-lab-mmm --include-ignored --test-threads 1 the_labs_run_puts every_kernel_precision a_large_product copies_go_both > $R/test-beside.log 2>&1
LABS=$PWD/.gpu60/bin timeout 150 bash scripts/compare.sh --only mmm > $R/compare-mmm.log 2>&1
LAB_PHASES=1 timeout 120 .gpu60/bin/lab-mmm --random 20000 --kernel tiled --repetitions 1 > $R/beside-20000.log 2>&1
cd $OUT && tar cf results.tar r && rm -rf r

# Issue 41 item 1, third round: the commit's GPU tests. From the repository root on the GPU machine.
R=$OUT/r; mkdir -p $R
TIMEFORMAT="wall %R s"
LAB_BIN_DIR=$PWD/.gpu60/bin timeout 540 .gpu60/gpu-lab-mmm --include-ignored --test-threads 1 > $R/test-11fd494-lab-mmm.log 2>&1
echo "exit $?" >> $R/test-11fd494-lab-mmm.log
cd $OUT && tar cf results.tar r && rm -rf r

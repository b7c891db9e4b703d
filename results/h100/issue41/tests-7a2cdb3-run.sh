# Issue 41 item 1, third round: the commit's GPU tests. From the repository root on the GPU machine.
R=$OUT/r; mkdir -p $R
TIMEFORMAT="wall %R s"
for i in 1 2; do { time .gpu60/dev/lab-mmm > $R/beside-dev-default-$i.log 2>&1; } 2>> $R/beside-dev-default-$i.log; done
LAB_BIN_DIR=$PWD/.gpu60/bin timeout 540 .gpu60/gpu-lab-mmm --include-ignored --test-threads 1 > $R/test-7a2cdb3-lab-mmm.log 2>&1
echo "exit $?" >> $R/test-7a2cdb3-lab-mmm.log
cd $OUT && tar cf results.tar r && rm -rf r

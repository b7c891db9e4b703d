# Issue 41: every GPU test of lab-mmm on d3886ed (step 12's narrow tiles), then the whole sweep with its plot.
# From the repository root, with the GPU bundle in .gpu62 (built from d3886ed).
R=$OUT/r; mkdir -p $R
LAB_BIN_DIR=$PWD/.gpu62/bin timeout 560 .gpu62/gpu-lab-mmm --include-ignored --test-threads 1 > $R/test-d3886ed-lab-mmm.log 2>&1; echo "exit $?" >> $R/test-d3886ed-lab-mmm.log
cd $OUT && tar cf results.tar r && rm -rf r

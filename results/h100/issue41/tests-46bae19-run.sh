# Issue 41: every GPU test of lab-mmm on 46bae19 (step 12 after its review). From the repository root, bundle in .gpu64.
R=$OUT/r; mkdir -p $R
LAB_BIN_DIR=$PWD/.gpu64/bin timeout 560 .gpu64/gpu-lab-mmm --include-ignored --test-threads 1 > $R/test-46bae19-lab-mmm.log 2>&1; echo "exit $?" >> $R/test-46bae19-lab-mmm.log
cd $OUT && tar cf results.tar r && rm -rf r

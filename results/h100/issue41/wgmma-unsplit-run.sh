# Issue 41, item 4's TF32 row at 1024: step 12 beside cuBLAS TF32, three runs and the tf32 sweep.
R=$OUT/r; mkdir -p $R
for i in 1 2 3; do .gpu60/bin/lab-mmm --ladder --precision tf32 --random 1024 > $R/wgmma-unsplit-tf32-1024-$i.log 2>&1; done
timeout 200 .gpu60/bin/lab-mmm --ladder --sweep --precision tf32 > $R/wgmma-unsplit-sweep-tf32.log 2>&1
cd $OUT && tar cf results.tar r && rm -rf r

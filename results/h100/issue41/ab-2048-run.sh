# Issue 41: step 12 at 2048, before (b3f7645) and after (d3886ed) the narrow tiles, and d3886ed with setmaxnreg 24/240
# (v240), taking turns; then the whole sweep with its plot on d3886ed. From the repository root, bundle in .gpu63.
R=$OUT/r; mkdir -p $R
for i in 1 2 3; do
  for v in old new v240; do .gpu63/$v/lab-mmm --ladder --precision tf32 --random 2048 > $R/ab-2048-$v-$i.log 2>&1; done
done
timeout 300 .gpu63/new/lab-mmm --ladder --sweep --plot $R/sweep-d3886ed.svg > $R/sweep-d3886ed.log 2>&1; echo "exit $?" >> $R/sweep-d3886ed.log
cd $OUT && tar cf results.tar r && rm -rf r

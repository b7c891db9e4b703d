# Issue 41: where step 12's time goes at 1024 with split-K (ncu, clocks not fixed, caches not flushed).
R=$OUT/r; mkdir -p $R
ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum,dram__bytes.sum,lts__t_bytes.sum --csv \
  .gpu60/bin/lab-mmm --ladder --precision tf32 --random 1024 --repetitions 1 > $R/ncu-wgmma-split-1024.csv 2> $R/ncu-wgmma-split-1024.err
cd $OUT && tar cf results.tar r && rm -rf r

set -x
mkdir -p $OUT/r
python3 .gpu60/driver_probe.py > $OUT/r/driver-probe-1.log 2>&1
python3 .gpu60/driver_probe.py > $OUT/r/driver-probe-2.log 2>&1
for i in 1 2 3 4 5; do LAB_PHASES=1 .gpu60/bin/lab-mmm --random 8192 --kernel tiled --repetitions 1 > $OUT/r/beside-before-8192-$i.log 2>&1; done
nproc > $OUT/r/nproc.txt; cat /proc/self/status | grep -i cpus >> $OUT/r/nproc.txt

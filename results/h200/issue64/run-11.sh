#!/usr/bin/env bash
# Issue 64, run 11 (one H200): why compare.sh's pageable rows (mmm, mmm-streamed) move from process to
# process while each process's runs agree: the machine's NUMA layout, and lab-streams --mode mmm run as
# six processes unpinned, then pinned to each NUMA node (CPUs and memory). Into $OUT/issue64-11.tgz.
set -u
c=.gpu111
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue64-11.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
{ lscpu | grep -i -E 'numa|socket|model name'; echo; numactl -H 2>&1; echo; nvidia-smi topo -m 2>&1; } >"$logs/numa.txt" 2>&1
run() { timeout 60 "$@" $c/bin/lab-streams --mode mmm --size 2048 --count 10 --repetitions 3 2>&1 | grep -E '^mmm(-streamed)? +GPU time' | tr -s ' ' | tr '\n' ';'; echo; }
for i in 1 2 3 4 5 6; do echo "unpinned: $(run)"; done >"$logs/pageable-processes.log"
nodes=$(numactl -H 2>/dev/null | awk '/^available:/ {print $2}')
for ((n = 0; n < ${nodes:-0}; n++)); do
  for i in 1 2 3; do echo "node $n: $(run numactl --cpunodebind=$n --membind=$n)"; done >>"$logs/pageable-processes.log"
done

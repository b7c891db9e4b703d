#!/usr/bin/env bash
# Issue 65, run 28 (one H200): lab-mmm's GPU tests of week 3's measured rules after ours came to be
# measured apart where checks share a GPU and the measured child to hold the GPU per launch: the
# solution and templates, the red team, the naive body in the tiled kernel, ncu failing on its own,
# a kernel printing from every thread, a kernel that makes the machine look broken (each check alone:
# one child measures both). Release labs in .gpu244/bin, tests in .gpu244/tests. Into
# $OUT/issue65-run-28.tgz.
set -u
c=$PWD/.gpu244
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-28.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
s=$(date +%s)
timeout 420 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 weeks_2_and_3_the_solution_passes_and_the_templates \
  the_week_3_red_team week_3_the_naive_body week_3_ncu_failing week_3_a_correct_kernel_that_prints_from_every_thread \
  a_kernel_that_makes_the_machine >"$logs/run-28-test-lab-mmm.log" 2>&1
echo "lab-mmm week 3 measured tests rc=$? $(( $(date +%s) - s )) s" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -hE "^test |test result|panicked" "$logs"/run-28-*.log | cut -c1-300

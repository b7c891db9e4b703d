#!/usr/bin/env bash
# Issue 65, run 84 (one H200): after a review of step 18, lab-mmm's GPU test of steps 12 to 18 at
# awkward sizes with step 18's shapes chosen for the GPU's multiprocessors (stream_k_shapes: on an
# H200 the same 2300 x 4000 x 2170 and 2300 x 4001 x 2171 as run 79) and the test of every step.
# lab-mmm's release GPU tests in .gpu284z/c.tgz (tests). Into $OUT/run-84-test-lab-mmm.log.
# Its output was lost with the session that ran it (the tests passed, rc 0); run 85 ran the same tests again.
set -u
c=$(mktemp -d)
tar -C "$c" -xzf .gpu284z/c.tgz
nvidia-smi -L >"$OUT/gpu.txt"
timeout 150 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder \
  >"$OUT/run-84-test-lab-mmm.log" 2>&1
echo "tests rc=$?"
grep -E "test result|^test |18\. .* at" "$OUT/run-84-test-lab-mmm.log" | head -20

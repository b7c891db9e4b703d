#!/usr/bin/env bash
# Checks scripts/saved-runs.sh without a GPU: on a stand-in bundle (a lab that prints, one that fails)
# and a stand-in nvidia-smi, a list with a run that passes, one that must fail and does, one that fails,
# and one that hangs past RUN_LIMIT. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
source scripts/test-lib.sh

bundle=$scratch/bundle
mkdir -p "$bundle/bin" "$scratch/fake"
cp scripts/saved-runs.sh "$bundle/"
printf '#!/usr/bin/env bash\necho "GPU time in ms: 1.25"\necho "Result = PASS"\n' >"$bundle/bin/lab-good"
printf '#!/usr/bin/env bash\necho "lab-bad: error: no such file" >&2\nexit 1\n' >"$bundle/bin/lab-bad"
printf '#!/usr/bin/env bash\ncase "$*" in *query-gpu*) echo "index, name"; echo "0, Stand-in GPU" ;; *) printf "a\\nb\\nCUDA Version: 13.0\\n" ;; esac\n' >"$scratch/fake/nvidia-smi"
chmod +x "$bundle/bin/"* "$scratch/fake/nvidia-smi"
cat >"$scratch/list.txt" <<'LIST'
# a comment, then a blank line

good/run          lab-good --size 3
bad/must-fail     ! lab-bad
bad/fails         lab-bad
slow/hangs        sleep 30
LIST
status=0
PATH="$scratch/fake:$PATH" RUN_LIMIT=2 bash "$bundle/saved-runs.sh" "$scratch/list.txt" "$scratch/results" \
    >"$scratch/out" 2>"$scratch/err" || status=$?
expect "exit code" "$status" 1
expect "summary" "$(cat "$scratch/out")" "saved runs: 4, failed: 2 (logs in $scratch/results)"
expect "a run's log" "$(cat "$scratch/results/good/run.log")" "$(printf 'GPU time in ms: 1.25\nResult = PASS')"
expect "a run that must fail keeps its message" "$(cat "$scratch/results/bad/must-fail.log")" "lab-bad: error: no such file"
expect "a failing run is named" "$(grep -c '^bad/fails failed: lab-bad: error: no such file$' "$scratch/err")" 1
expect "a hung run is stopped at the limit" "$(tail -n 1 "$scratch/results/slow/hangs.log")" "saved-runs.sh: stopped after 2 s (RUN_LIMIT)"
expect "gpu.txt names the GPU" "$(grep -c 'Stand-in GPU' "$scratch/results/gpu.txt")" 1
# A missing list: usage, exit 2.
status=0
bash "$bundle/saved-runs.sh" "$scratch/no-such-list" "$scratch/results" 2>"$scratch/err" || status=$?
expect "no list: exit 2" "$status" 2
expect "no list: usage" "$(cut -c 1-18 "$scratch/err")" "usage: saved-runs."

echo "test-saved-runs.sh: $checks checks, $failures failed"
[ "$failures" = 0 ]

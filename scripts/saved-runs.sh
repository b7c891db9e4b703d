#!/usr/bin/env bash
# Runs on a GPU machine, from the repository root, with what scripts/gpu-bundle.sh built: the runs a
# list names, each one's output saved as RESULTS/<folder>/<name>.log. These saved runs are what the
# READMEs quote (results/<gpu>/, issue 30): scripts/test-readme-figures.sh finds every quoted figure
# in them.
#
#   bash gpu-bundle/saved-runs.sh LIST RESULTS
#   bash gpu-bundle/saved-runs.sh gpu-bundle/runs/readme.txt /tmp/results/h200
#
# A LIST line is `folder/name  command`: the command runs under bash with the lab binaries on PATH,
# $BUNDLE naming the bundle (for its scripts) and $RESULTS the results folder (for pictures and
# traces); `#` starts a comment. A command that fails is reported and counted; the others still run.
# A run that must fail (an error message the README quotes) is written `! command`. A run still going
# after RUN_LIMIT seconds (default 900) is stopped and counted as failed, so that one hung run cannot
# take the rest of a session's GPU time.
# RESULTS also gets gpu.txt, nvidia-smi's view of the GPUs and the driver.
set -uo pipefail
if [[ $# != 2 || ! -f $1 ]]; then
    echo "usage: saved-runs.sh LIST RESULTS (LIST: a file of 'folder/name  command' lines)" >&2
    exit 2
fi
export BUNDLE RESULTS
BUNDLE=$(cd "$(dirname "$0")" && pwd)
list=$1
mkdir -p "$2"
RESULTS=$(cd "$2" && pwd)
# The lab binaries first; the CUDA install's tools (compute-sanitizer) last, where there is one.
export PATH="$BUNDLE/bin:$PATH:${CUDA_HOME:-/usr/local/cuda}/bin"
{
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
    nvidia-smi | sed -n 3p
} >"$RESULTS/gpu.txt"

runs=0 failed=0 limit=${RUN_LIMIT:-900}
while read -r name command; do
    [[ -z $name || $name == \#* ]] && continue
    runs=$((runs + 1))
    log=$RESULTS/$name.log
    mkdir -p "$(dirname "$log")"
    echo "== $name: $command" >&2
    start=$SECONDS
    status=0
    timeout -k 10 "$limit" bash -c "$command" </dev/null >"$log" 2>&1 || status=$?
    if ((status == 124 || status == 137)); then
        echo "saved-runs.sh: stopped after $limit s (RUN_LIMIT)" >>"$log"
    fi
    if ((status != 0)); then
        failed=$((failed + 1))
        echo "$name failed: $(tail -n 1 "$log")" >&2
    fi
    echo "   $((SECONDS - start)) s" >&2
done <"$list"
echo "saved runs: $runs, failed: $failed (logs in $RESULTS)"
((failed == 0))

#!/usr/bin/env bash
# A stand-in for ncu on a machine that may not read the GPU's counters (most students' laptops):
# it writes ncu's permission error where ncu would write its CSV, and fails (issue 62, run 2).
while [[ $# -gt 0 ]]; do
    if [[ $1 == --log-file ]]; then
        echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0." >"$2"
    fi
    shift
done
exit 1

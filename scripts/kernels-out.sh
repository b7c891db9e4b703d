#!/usr/bin/env bash
# Runs `cargo build --locked ARGS...` and prints the kernels crate's OUT_DIR, where kernels/build.rs
# leaves the images and ptxas reports it embedded (gpu-bundle.sh ships them for cuobjdump,
# student-pack.sh as the pack's kernels/prebuilt/). Cargo's messages say where it is; the build's own
# errors still reach stderr.
set -euo pipefail
cargo build --locked "$@" --message-format=json-render-diagnostics |
    python3 -c '
import json, sys
found = [m["out_dir"] for m in map(json.loads, sys.stdin)
         if m.get("reason") == "build-script-executed" and m["package_id"].split("#")[0].endswith("/kernels")]
if not found:
    sys.exit("kernels-out.sh: cargo built no kernels crate")
print(found[-1])
'

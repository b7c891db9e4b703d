#!/usr/bin/env bash
# Builds what the GPU machine runs (it has CUDA but no Rust): the release lab binaries, the dev-profile
# ones (what `cargo run -p lab-x` runs, for time-labs.sh), and the GPU test executables, into
# gpu-bundle/ (git-ignored, a few tens of MiB), with run.sh and time-labs.sh to run them there:
#
#   bash scripts/gpu-bundle.sh          # here
#   bash gpu-bundle/run.sh [RESULTS]    # on the GPU machine, from the repository root
#   bash gpu-bundle/time-labs.sh        # there: every lab's default run, both profiles, timed
#   bash gpu-bundle/compare.sh          # there: the slide programs (reference/, built there) beside the labs
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/cuda-toolchain.sh
rm -rf gpu-bundle
mkdir -p gpu-bundle/bin gpu-bundle/bin-dev gpu-bundle/tests gpu-bundle/benches gpu-bundle/kernels
cargo build --release --workspace --bins --locked
cargo build --workspace --bins --locked
# The kernel images themselves, for cuobjdump --dump-sass on the GPU machine.
kernels_out=$(cargo build --release -p kernels --locked --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("reason") == "build-script-executed" and msg["package_id"].split("#")[0].endswith("/kernels"):
        print(msg["out_dir"])
')
cp "$kernels_out"/*.fatbin "$kernels_out"/*.cubin gpu-bundle/kernels/
for lab in lab-*/; do
    lab=${lab%/}
    cp "target/release/$lab" gpu-bundle/bin/
    # Without its line tables (only backtraces use them) the dev binary is a fifth of the size; the
    # code, and so its speed, is unchanged.
    strip --strip-debug -o "gpu-bundle/bin-dev/$lab" "target/debug/$lab"
done
# Every package's tests/gpu.rs, compiled in release mode; cargo prints where each executable lands.
cargo test --release --workspace --locked --no-run --test gpu --message-format=json 2>/dev/null |
    python3 -c '
import json, shutil, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "gpu":
        package = msg["package_id"].split("#")[0].rstrip("/").split("/")[-1]
        shutil.copy(msg["executable"], "gpu-bundle/tests/" + package + "-gpu")
'
# The criterion benchmarks, for RUN_BENCHES=1 bash gpu-bundle/run.sh.
cargo bench --workspace --locked --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, shutil, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") and "bench" in msg["target"]["kind"]:
        package = msg["package_id"].split("#")[0].rstrip("/").split("/")[-1]
        shutil.copy(msg["executable"], "gpu-bundle/benches/" + package + "-" + msg["target"]["name"])
'
cp scripts/gpu-run.sh gpu-bundle/run.sh
# The reference programs travel as sources: the GPU machine's nvcc builds them for its GPU.
cp -r reference gpu-bundle/reference
cp scripts/compare.sh scripts/compare-lib.sh scripts/compare-rows.txt gpu-bundle/
mkdir -p gpu-bundle/scenes
cp lab-constant-tracer/scenes/sixty-four.txt gpu-bundle/scenes/
cp scripts/time-labs.sh gpu-bundle/time-labs.sh
ls gpu-bundle/tests >/dev/null
du -sh gpu-bundle

#!/usr/bin/env bash
# Makes sure this machine can build the labs: nvcc/ptxas to compile the kernels and libcuda.so to link
# `cust`. A real CUDA toolkit (CUDA_PATH, /usr/local/cuda, nvcc on PATH) is used as it is; otherwise the
# pinned PyPI wheels are installed into .toolchain/ (git-ignored) and reused on later runs, and Debian's
# libcuda1 is installed with apt. No prompts. Versions and the reasons for the pins: ../shared/TOOLCHAIN.md.
#
# After one run, plain `cargo build` finds the same toolchain: kernels/build.rs looks for nvcc in
# .toolchain/cuda and links the driver's library wherever `ldconfig -p` lists it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
toolchain="$root/.toolchain"
# nvvm is pinned too: an unpinned one emits PTX 9.5, which ptxas 13.0 and the 13.0 driver reject.
wheels=(nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88)
# CUPTI, the library under NVIDIA's profilers (`--profile`, `--trace`): its headers for the CI test of
# the record layouts, its libcupti.so.13 for the GPU bundle. The 13.0 release, like nvcc.
cupti_wheel=nvidia-cuda-cupti==13.0.85

say() { echo "cuda-toolchain: $*" >&2; }

have_real_nvcc() {
    [[ -n "${CUDA_PATH:-}" && -x "$CUDA_PATH/bin/nvcc" ]] || [[ -x /usr/local/cuda/bin/nvcc ]] ||
        command -v nvcc >/dev/null
}

install_nvcc_wheels() {
    if [[ -x "$toolchain/cuda/bin/nvcc" ]]; then
        return
    fi
    say "no CUDA toolkit found; installing ${wheels[*]} into $toolchain/venv"
    python3 -m venv "$toolchain/venv"
    "$toolchain/venv/bin/pip" install --quiet --disable-pip-version-check "${wheels[@]}" "$cupti_wheel"
    local cu13
    cu13=$(cd "$toolchain" && echo venv/lib/python3*/site-packages/nvidia/cu13)
    ln -sfn "$cu13" "$toolchain/cuda" # relative, so the checkout can move
    "$toolchain/cuda/bin/nvcc" --version | tail -n 2 >&2
}

# A toolchain folder from before CUPTI was part of it gets the wheel added.
install_cupti_wheel() {
    if [[ -e "$toolchain/cuda/lib/libcupti.so.13" ]]; then
        return
    fi
    say "adding $cupti_wheel to $toolchain/venv"
    "$toolchain/venv/bin/pip" install --quiet --disable-pip-version-check "$cupti_wheel"
}

have_libcuda() {
    ldconfig -p | grep -q 'libcuda\.so\.1 '
}

install_libcuda() {
    if have_libcuda; then
        return
    fi
    if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
        say "libcuda.so.1 is missing and this is not a root Debian machine: install your GPU driver" \
            "(or Debian's libcuda1 from non-free) and run this again"
        exit 1
    fi
    say "installing Debian's libcuda1 (non-free) so that the labs link"
    enable_non_free
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libcuda1 >/dev/null
}

# libcuda1 is in Debian's non-free component. Rather than naming a server, this adds "contrib non-free"
# to the Debian entries this machine's apt already uses (deb822 .sources files and a one-line
# sources.list), wherever they list "main" without "non-free".
enable_non_free() {
    rm -f /etc/apt/sources.list.d/cuda-labs-non-free.sources # written by earlier versions of this script
    python3 - /etc/apt/sources.list.d/*.sources /etc/apt/sources.list <<'PYTHON'
import re, sys
for path in sys.argv[1:]:
    try:
        text = open(path).read()
    except OSError:
        continue
    if path.endswith(".sources"):
        def add(stanza):
            debian = "debian-archive-keyring" in stanza or re.search(r"^URIs:.*/debian", stanza, re.M)
            if not debian or "non-free" in stanza:
                return stanza
            return re.sub(r"^(Components:.*\bmain\b.*)$", r"\1 contrib non-free", stanza, flags=re.M)
        new = "\n\n".join(add(stanza) for stanza in text.split("\n\n"))
    else:
        new = re.sub(r"^(deb\s.*/debian\S*\s+\S+\s+main)\s*$", r"\1 contrib non-free", text, flags=re.M)
    if new != text:
        open(path, "w").write(new)
        print(f"cuda-toolchain: added contrib non-free to {path}", file=sys.stderr)
PYTHON
}

mkdir -p "$toolchain"
if have_real_nvcc; then
    say "using the CUDA toolkit already on this machine"
else
    install_nvcc_wheels
    install_cupti_wheel
fi
install_libcuda

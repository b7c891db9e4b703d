//! Finding nvcc and the command lines it runs, shared by `build.rs` (which compiles `cuda/` into the
//! labs) and [`crate::runtime`] (which compiles a student's file when a lab runs), so both find the
//! same nvcc and pass the same flags. `build.rs` includes this file with `#[path]`: it must stay
//! free of anything but `std`.

use std::env;
use std::path::{Path, PathBuf};

/// What to do when no nvcc is found, said the same way at build time and at run time.
pub const HOW_TO_GET_NVCC: &str = "looked at NVCC, $CUDA_PATH/bin, /usr/local/cuda/bin, PATH and .toolchain/cuda/bin. \
    Run `bash scripts/cuda-toolchain.sh` once from the repository root: it installs nvcc 13.0 from PyPI into .toolchain/";

/// nvcc, in this order: `NVCC`, `$CUDA_PATH/bin/nvcc`, `/usr/local/cuda/bin/nvcc`, `nvcc` on `PATH`,
/// and `<repository>/.toolchain/cuda/bin/nvcc` (what `scripts/cuda-toolchain.sh` installs), where
/// `kernels_dir` is this crate's folder.
pub fn find(kernels_dir: &Path) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(nvcc) = env::var_os("NVCC") {
        candidates.push(nvcc.into());
    }
    if let Some(root) = env::var_os("CUDA_PATH") {
        candidates.push(Path::new(&root).join("bin/nvcc"));
    }
    candidates.push("/usr/local/cuda/bin/nvcc".into());
    if let Some(path) = env::var_os("PATH") {
        candidates.extend(env::split_paths(&path).map(|dir| dir.join("nvcc")));
    }
    candidates.push(kernels_dir.join("../.toolchain/cuda/bin/nvcc"));
    candidates.into_iter().find(|path| path.is_file())
}

/// The flags every kernel is compiled with: C++17, -O3, the headers in `include_dir`, the ptxas report
/// (`-v`), then the source's own `extra` flags (`-DBLOCK_SIZE=16`, ...).
pub fn base_flags(include_dir: &Path, extra: &[String]) -> Vec<String> {
    let mut flags = vec!["-std=c++17".to_string(), "-O3".to_string(), format!("-I{}", include_dir.display()), "--ptxas-options=-v".to_string()];
    flags.extend(extra.iter().cloned());
    flags
}

/// `nvcc -fatbin`: machine code for `arch` (`sm_90`) plus its PTX, so newer GPUs can JIT it.
pub fn fatbin_args(base: &[String], arch: &str, source: &Path, image: &Path) -> Vec<String> {
    let compute = arch.replace("sm_", "compute_");
    let mut args = base.to_vec();
    args.extend(["-fatbin".to_string(), format!("-gencode=arch={compute},code=[{arch},{compute}]"), source.display().to_string(), "-o".to_string(), image.display().to_string()]);
    args
}

/// `nvcc -rdc=true -dc`: relocatable device code, for kernels that launch kernels.
pub fn relocatable_args(base: &[String], arch: &str, source: &Path, object: &Path) -> Vec<String> {
    let mut args = base.to_vec();
    args.extend([format!("-arch={arch}"), "-rdc=true".to_string(), "-dc".to_string(), source.display().to_string(), "-o".to_string(), object.display().to_string()]);
    args
}

/// `nvcc -dlink ... -lcudadevrt -cubin`: links relocatable code with the device runtime.
pub fn device_link_args(nvcc: &Path, arch: &str, object: &Path, image: &Path) -> Vec<String> {
    let mut args = vec![format!("-arch={arch}"), "-dlink".to_string(), object.display().to_string()];
    args.extend(library_dirs(nvcc));
    args.extend(["-lcudadevrt".to_string(), "-cubin".to_string(), "-o".to_string(), image.display().to_string()]);
    args
}

/// `-L` flags for libcudadevrt.a: `lib64` in a toolkit, `lib` in the PyPI wheels.
fn library_dirs(nvcc: &Path) -> Vec<String> {
    let root = nvcc.parent().and_then(Path::parent).unwrap_or(Path::new("/usr/local/cuda"));
    ["lib64", "lib"]
        .iter()
        .map(|dir| root.join(dir))
        .filter(|dir| dir.join("libcudadevrt.a").is_file())
        .map(|dir| format!("-L{}", dir.display()))
        .collect()
}

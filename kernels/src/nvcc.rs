//! Finding nvcc and the command lines it runs, shared by `build.rs` (which compiles `cuda/` into the
//! labs) and [`crate::runtime`] (which compiles a student's file when a lab runs), so both find the
//! same nvcc and pass the same flags. `build.rs` includes this file with `#[path]`: it must stay
//! free of anything but `std`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to do when no nvcc is found, said the same way at build time and at run time.
pub const HOW_TO_GET_NVCC: &str = "looked at NVCC, $CUDA_PATH/bin, /usr/local/cuda/bin, PATH and .toolchain/cuda/bin. \
    Run `bash scripts/cuda-toolchain.sh` once from the repository root: it installs nvcc 13.0 from PyPI into .toolchain/";

/// nvcc, in this order: `NVCC`, `$CUDA_PATH/bin/nvcc`, `/usr/local/cuda/bin/nvcc`, `nvcc` on `PATH`,
/// and `<repository>/.toolchain/cuda/bin/nvcc` (what `scripts/cuda-toolchain.sh` installs), where
/// `kernels_dir` is this crate's folder.
pub fn find(kernels_dir: &Path) -> Option<PathBuf> {
    find_tool("nvcc", "NVCC", kernels_dir)
}

/// A CUDA program found as nvcc is ([`find`]): the variable `variable` names it, else `name` in
/// `$CUDA_PATH/bin`, `/usr/local/cuda/bin`, on `PATH`, in `<repository>/.toolchain/cuda/bin`, and in
/// `.toolchain/cuda/bin` of the folder above the running executable's (a student pack's `bin/`).
pub fn find_tool(name: &str, variable: &str, kernels_dir: &Path) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(tool) = env::var_os(variable) {
        candidates.push(tool.into());
    }
    if let Some(root) = env::var_os("CUDA_PATH") {
        candidates.push(Path::new(&root).join("bin").join(name));
    }
    candidates.push(Path::new("/usr/local/cuda/bin").join(name));
    if let Some(path) = env::var_os("PATH") {
        candidates.extend(env::split_paths(&path).map(|dir| dir.join(name)));
    }
    candidates.push(kernels_dir.join("../.toolchain/cuda/bin").join(name));
    // A student pack's prebuilt lab in <pack>/bin finds the toolchain its scripts/cuda-toolchain.sh
    // installed into <pack>/.toolchain, wherever the pack was built.
    if let Some(pack) = env::current_exe()
        .ok()
        .as_deref()
        .and_then(Path::parent)
        .and_then(Path::parent)
    {
        candidates.push(pack.join(".toolchain/cuda/bin").join(name));
    }
    candidates.into_iter().find(|path| path.is_file())
}

/// The flags every kernel is compiled with: C++17, -O3, the headers in `include_dir`, the ptxas report
/// (`-v`), then the source's own `extra` flags (`-DBLOCK_SIZE=16`, ...).
pub fn base_flags(include_dir: &Path, extra: &[String]) -> Vec<String> {
    let mut flags = vec![
        "-std=c++17".to_string(),
        "-O3".to_string(),
        format!("-I{}", include_dir.display()),
        "--ptxas-options=-v".to_string(),
    ];
    flags.extend(extra.iter().cloned());
    flags
}

/// `sm_86` for 86: compute capability 8.6.
pub fn arch_name(arch: u32) -> String {
    format!("sm_{arch}")
}

/// The architectures this nvcc makes machine code for (`nvcc --list-gpu-code`), ascending: 75, 80, ...
pub fn supported_archs(nvcc: &Path) -> Result<Vec<u32>, String> {
    let output = Command::new(nvcc)
        .arg("--list-gpu-code")
        .output()
        .map_err(|err| format!("could not start {}: {err}", nvcc.display()))?;
    let mut archs: Vec<u32> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.trim().strip_prefix("sm_")?.parse().ok())
        .collect();
    archs.sort_unstable();
    archs.dedup();
    if !output.status.success() || archs.is_empty() {
        return Err(format!("`{} --list-gpu-code` listed no architecture", nvcc.display()));
    }
    Ok(archs)
}

/// The first architecture of each major version in `supported` (sm_75, sm_80, sm_90, sm_100, ...):
/// machine code for sm_80 also runs on sm_86 and sm_89 GPUs, so these cover every GPU nvcc knows.
pub fn major_archs(supported: &[u32]) -> Vec<u32> {
    let mut majors: Vec<u32> = Vec::new();
    for &arch in supported {
        if majors.last().is_none_or(|last| last / 10 != arch / 10) {
            majors.push(arch);
        }
    }
    majors
}

/// `CUDA_ARCH` into the architectures to build for, ascending, in the sense CMake gives
/// `CMAKE_CUDA_ARCHITECTURES`: a list (`75;80;90`, `sm_75,sm_86`, or one, `90`), `native` (the local
/// GPUs, from `native()`), `all` (every architecture in `supported`, nvcc's list) or `all-major` (the
/// first of each major version). Each build carries machine code and PTX for its architecture.
pub fn parse_arch_list(
    value: &str,
    supported: &[u32],
    native: impl FnOnce() -> Result<Vec<u32>, String>,
) -> Result<Vec<u32>, String> {
    let mut archs = match value.trim() {
        "native" => native()?,
        "all" => supported.to_vec(),
        "all-major" => major_archs(supported),
        list => list
            .split([';', ',', ' '])
            .filter(|item| !item.is_empty())
            .map(|item| {
                let digits = item.trim_start_matches("sm_").trim_start_matches("compute_");
                digits
                    .parse::<u32>()
                    .map_err(|_| format!("{item:?} is not an architecture like sm_90, 90, native, all or all-major"))
            })
            .collect::<Result<Vec<u32>, String>>()?,
    };
    archs.sort_unstable();
    archs.dedup();
    let names = |list: &[u32]| list.iter().map(|&arch| arch_name(arch)).collect::<Vec<_>>().join(", ");
    if archs.is_empty() {
        return Err("names no architecture".to_string());
    }
    if let Some(unknown) = archs.iter().find(|arch| !supported.contains(arch)) {
        return Err(format!(
            "this nvcc cannot build for {} (it supports {})",
            arch_name(*unknown),
            names(supported)
        ));
    }
    Ok(archs)
}

/// `nvcc -fatbin`: machine code for `arch` plus, `with_ptx`, its PTX, which the driver compiles for
/// newer GPUs (a student pack leaves it out: PTX reads almost as the CUDA C it came from).
pub fn fatbin_args(base: &[String], arch: u32, source: &Path, image: &Path, with_ptx: bool) -> Vec<String> {
    let code = if with_ptx {
        format!("[sm_{arch},compute_{arch}]")
    } else {
        format!("sm_{arch}")
    };
    let mut args = base.to_vec();
    args.extend([
        "-fatbin".to_string(),
        format!("-gencode=arch=compute_{arch},code={code}"),
        source.display().to_string(),
        "-o".to_string(),
        image.display().to_string(),
    ]);
    args
}

/// `nvcc -fatbin` for Hopper's own instructions: sm_90a machine code, the only code with wgmma, TMA
/// and setmaxnreg, which runs on compute capability 9.0 alone, plus, `with_ptx`, plain compute_90 PTX
/// (without those kernels) that the driver compiles for later GPUs, as for any sm_90 build.
pub fn sm_90a_fatbin_args(base: &[String], source: &Path, image: &Path, with_ptx: bool) -> Vec<String> {
    let mut args = base.to_vec();
    args.extend([
        "-fatbin".to_string(),
        "-gencode=arch=compute_90a,code=sm_90a".to_string(),
    ]);
    if with_ptx {
        args.push("-gencode=arch=compute_90,code=compute_90".to_string());
    }
    args.extend([
        source.display().to_string(),
        "-o".to_string(),
        image.display().to_string(),
    ]);
    args
}

/// `nvcc -rdc=true -dc`: relocatable device code, for kernels that launch kernels.
pub fn relocatable_args(base: &[String], arch: u32, source: &Path, object: &Path) -> Vec<String> {
    let mut args = base.to_vec();
    args.extend([
        format!("-arch=sm_{arch}"),
        "-rdc=true".to_string(),
        "-dc".to_string(),
        source.display().to_string(),
        "-o".to_string(),
        object.display().to_string(),
    ]);
    args
}

/// `nvcc -rdc=true -ptx`: the relocatable PTX of kernels that launch kernels. Linked code carries no
/// PTX, so on a GPU newer than every build the lab links this with the device runtime itself.
pub fn relocatable_ptx_args(base: &[String], arch: u32, source: &Path, ptx: &Path) -> Vec<String> {
    let mut args = base.to_vec();
    args.extend([
        format!("-arch=compute_{arch}"),
        "-rdc=true".to_string(),
        "-ptx".to_string(),
        source.display().to_string(),
        "-o".to_string(),
        ptx.display().to_string(),
    ]);
    args
}

/// `nvcc -dlink ... -lcudadevrt -cubin`: links relocatable code with the device runtime.
pub fn device_link_args(nvcc: &Path, arch: u32, object: &Path, image: &Path) -> Vec<String> {
    let mut args = vec![
        format!("-arch=sm_{arch}"),
        "-dlink".to_string(),
        object.display().to_string(),
    ];
    args.extend(library_dirs(nvcc));
    args.extend([
        "-lcudadevrt".to_string(),
        "-cubin".to_string(),
        "-o".to_string(),
        image.display().to_string(),
    ]);
    args
}

/// `-L` flags for libcudadevrt.a: `lib64` in a toolkit, `lib` in the PyPI wheels.
fn library_dirs(nvcc: &Path) -> Vec<String> {
    library_dir(nvcc)
        .iter()
        .map(|dir| format!("-L{}", dir.display()))
        .collect()
}

/// The folder of libcudadevrt.a beside `nvcc`: `lib64` in a toolkit, `lib` in the PyPI wheels.
pub fn library_dir(nvcc: &Path) -> Option<PathBuf> {
    let root = nvcc
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("/usr/local/cuda"));
    ["lib64", "lib"]
        .iter()
        .map(|dir| root.join(dir))
        .find(|dir| dir.join("libcudadevrt.a").is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `nvcc --list-gpu-code` of CUDA 13.0 lists.
    const CUDA_13: [u32; 12] = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];

    fn no_gpu() -> Result<Vec<u32>, String> {
        Err("`native` found no GPU".to_string())
    }

    #[test]
    fn cuda_arch_takes_lists_in_any_spelling() {
        assert_eq!(parse_arch_list("75;80;90", &CUDA_13, no_gpu), Ok(vec![75, 80, 90]));
        assert_eq!(
            parse_arch_list("sm_90, sm_75 compute_86", &CUDA_13, no_gpu),
            Ok(vec![75, 86, 90])
        );
        assert_eq!(parse_arch_list(" 90 ", &CUDA_13, no_gpu), Ok(vec![90]));
        assert_eq!(parse_arch_list("90;90", &CUDA_13, no_gpu), Ok(vec![90]));
    }

    #[test]
    fn all_native_and_all_major_mean_what_cmake_means() {
        assert_eq!(parse_arch_list("all", &CUDA_13, no_gpu), Ok(CUDA_13.to_vec()));
        assert_eq!(
            parse_arch_list("all-major", &CUDA_13, no_gpu),
            Ok(vec![75, 80, 90, 100, 110, 120])
        );
        assert_eq!(
            parse_arch_list("native", &CUDA_13, || Ok(vec![90, 86, 90])),
            Ok(vec![86, 90])
        );
        assert_eq!(
            parse_arch_list("native", &CUDA_13, no_gpu),
            Err("`native` found no GPU".to_string())
        );
    }

    #[test]
    fn a_bad_or_unsupported_architecture_is_named() {
        assert_eq!(
            parse_arch_list("sm_70;90", &CUDA_13, no_gpu),
            Err("this nvcc cannot build for sm_70 (it supports sm_75, sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_100, sm_103, sm_110, sm_120, sm_121)".to_string())
        );
        assert_eq!(
            parse_arch_list("hopper", &CUDA_13, no_gpu),
            Err("\"hopper\" is not an architecture like sm_90, 90, native, all or all-major".to_string())
        );
        assert_eq!(
            parse_arch_list(" ; ", &CUDA_13, no_gpu),
            Err("names no architecture".to_string())
        );
    }
}

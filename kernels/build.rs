//! Compiles every CUDA source in `cuda/` with nvcc and keeps the `ptxas -v` report of that same build.
//!
//! For each entry of `specs()` this writes `<OUT_DIR>/<file>.fatbin` (or `.cubin`) and
//! `<OUT_DIR>/<file>.ptxas`, then generates `<OUT_DIR>/kernels.rs` with one `KernelImage` constant per
//! entry, so the binaries embed their kernels and run from any directory.
//!
//! Where nvcc comes from, in this order: `NVCC`, `$CUDA_PATH/bin/nvcc`, `/usr/local/cuda/bin/nvcc`,
//! `nvcc` on `PATH`, and `.toolchain/cuda/bin/nvcc` (what `scripts/cuda-toolchain.sh` installs).
//! The target is `CUDA_ARCH` (`sm_90` or `90`), else the compute capability of the local GPU
//! (`nvidia-smi`), else `sm_90`: the H100/H200 of the course.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{self, Command};

#[path = "src/nvcc.rs"]
mod nvcc;

/// Block sizes of the tiled matrix product. Each is compiled as `-DBLOCK_SIZE=<n>` and emitted as the
/// Rust constant `MMM_BLOCK_SIZES`, so kernel and host read the number from one place.
const MMM_BLOCK_SIZES: [u32; 2] = [16, 32];

/// The layout of the tracer's `struct Sphere` (seven floats) and how many fit in the 64 KiB of constant
/// memory. Passed to nvcc as -D definitions, where static_asserts check the struct against them, and
/// emitted as Rust constants, where a test checks the Rust struct: both sides agree by construction.
const SPHERE_FIELDS: [&str; 7] = ["x", "y", "z", "radius", "r", "g", "b"];
const SPHERE_SIZE: u32 = 4 * SPHERE_FIELDS.len() as u32;
const CONSTANT_MEMORY_BYTES: u32 = 64 * 1024;
const MAX_SPHERES: u32 = CONSTANT_MEMORY_BYTES / SPHERE_SIZE;
/// Sphere counts with their own fully unrolled constant-memory kernel (`trace_constant_fixed_N`).
const TRACER_FIXED_COUNTS: [u32; 4] = [8, 16, 32, 64];

/// `-fmad=false` keeps nvcc from contracting a * b + c into one FMA, so the GPU computes exactly what
/// the CPU reference computes (Rust never contracts); with FMAs, rays that graze a sphere's edge can
/// come out the other way.
fn tracer_flags() -> Vec<String> {
    let mut flags = vec!["-fmad=false".to_string(), format!("-DMAX_SPHERES={MAX_SPHERES}"), format!("-DSPHERE_SIZE={SPHERE_SIZE}")];
    for (index, field) in SPHERE_FIELDS.iter().enumerate() {
        flags.push(format!("-DSPHERE_OFFSET_{field}={}", 4 * index));
    }
    flags
}

/// Register caps the register-pressure kernel is compiled with (`-maxrregcount=<n>`), besides once
/// without a cap; emitted as `REGISTER_CAPS`, one image per cap.
const REGISTER_CAPS: [u32; 4] = [16, 24, 32, 64];

/// How a source is turned into a loadable image.
#[derive(Clone, Copy, PartialEq)]
enum Build {
    /// `nvcc -fatbin`: machine code for the target plus its PTX, so newer GPUs can JIT it.
    Fatbin,
    /// Relocatable device code linked with the device runtime (`-rdc=true`, then `-dlink -lcudadevrt`),
    /// needed by kernels that launch kernels. Machine code only: linked code has no PTX to JIT.
    LinkedCubin,
}

struct Spec {
    /// Name of the generated constant, e.g. `SIMPSON`.
    constant: String,
    /// Source file in `cuda/`.
    source: &'static str,
    /// Extra nvcc flags, e.g. `-DBLOCK_SIZE=16`.
    flags: Vec<String>,
    build: Build,
}

fn specs() -> Vec<Spec> {
    let plain = |constant: &str, source| Spec {
        constant: constant.to_string(),
        source,
        flags: vec![],
        build: Build::Fatbin,
    };
    let flagged = |constant: String, source, flags| Spec { constant, source, flags, build: Build::Fatbin };
    let mut specs = vec![
        plain("SIMPSON", "simpson.cu"),
        Spec {
            constant: "ADAPTIVE_SIMPSON".to_string(),
            source: "adaptive_simpson.cu",
            flags: vec![],
            build: Build::LinkedCubin,
        },
    ];
    specs.push(plain("STREAMS", "streams.cu"));
    specs.push(plain("MAPPED", "mapped.cu"));
    specs.push(plain("TIMELINE", "timeline.cu"));
    specs.push(plain("MMM_LADDER", "mmm_ladder.cu"));
    specs.push(plain("MEMORY", "memory.cu"));
    specs.push(plain("REGISTERS", "registers.cu"));
    for cap in REGISTER_CAPS {
        specs.push(flagged(format!("REGISTERS_CAP{cap}"), "registers.cu", vec![format!("-maxrregcount={cap}")]));
    }
    specs.push(flagged("TRACER".to_string(), "tracer.cu", tracer_flags()));
    for block_size in MMM_BLOCK_SIZES {
        specs.push(flagged(format!("MMM_BS{block_size}"), "mmm.cu", vec![format!("-DBLOCK_SIZE={block_size}")]));
    }
    specs
}

fn main() {
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let cuda_dir = manifest_dir.join("cuda");
    for var in ["NVCC", "CUDA_PATH", "CUDA_ARCH", "PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed={}", cuda_dir.display());
    for entry in fs::read_dir(&cuda_dir).expect("kernels/cuda exists") {
        println!("cargo:rerun-if-changed={}", entry.expect("readable dir entry").path().display());
    }

    let nvcc = nvcc::find(&manifest_dir).unwrap_or_else(|| fail(&format!("nvcc not found ({})", nvcc::HOW_TO_GET_NVCC)));
    if !have_libcuda() {
        fail(
            "libcuda.so.1 (the NVIDIA driver's library, which every lab links) not found. Run \
             `bash scripts/cuda-toolchain.sh` once from the repository root (it installs Debian's libcuda1, \
             enough to build and to run the tests that need no GPU), or install the NVIDIA driver.",
        );
    }
    let arch = target_arch();
    let specs = specs();
    let built: Vec<Built> = std::thread::scope(|scope| {
        let jobs: Vec<_> = specs
            .iter()
            .map(|spec| scope.spawn(|| compile(&nvcc, &arch, &cuda_dir, &out_dir, spec)))
            .collect();
        jobs.into_iter().map(|job| job.join().expect("compile thread")).collect()
    });
    write_rust(&out_dir, &cuda_dir, &arch, &specs, &built);
}

/// Paths of one compiled source.
struct Built {
    image: PathBuf,
    report: PathBuf,
}

/// Whether the dynamic linker knows libcuda.so.1, which the labs link through cust (see
/// .cargo/config.toml): checked here so that a machine without it gets a message, not a linker error.
fn have_libcuda() -> bool {
    let listed = Command::new("ldconfig")
        .arg("-p")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("libcuda.so.1 "));
    listed || Path::new("/usr/lib/x86_64-linux-gnu/libcuda.so.1").exists()
}

/// `sm_XX` to build for: `CUDA_ARCH`, else the local GPU's compute capability, else sm_90.
fn target_arch() -> String {
    if let Ok(arch) = env::var("CUDA_ARCH") {
        let digits = arch.trim().trim_start_matches("sm_").trim_start_matches("compute_");
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            fail(&format!("CUDA_ARCH={arch:?} is not an architecture like sm_90 or 90"));
        }
        return format!("sm_{digits}");
    }
    local_gpu_arch().unwrap_or_else(|| "sm_90".to_string())
}

fn local_gpu_arch() -> Option<String> {
    let output = Command::new("nvidia-smi")
        .args(["--query-gpu=compute_cap", "--format=csv,noheader"])
        .output()
        .ok()?;
    let first = String::from_utf8(output.stdout).ok()?.lines().next()?.trim().replace('.', "");
    (output.status.success() && !first.is_empty() && first.chars().all(|c| c.is_ascii_digit()))
        .then(|| format!("sm_{first}"))
}

fn compile(nvcc: &Path, arch: &str, cuda_dir: &Path, out_dir: &Path, spec: &Spec) -> Built {
    let stem = spec.constant.to_lowercase();
    let base = nvcc::base_flags(cuda_dir, &spec.flags);
    let source = cuda_dir.join(spec.source);
    let report = out_dir.join(format!("{stem}.ptxas"));
    let image = match spec.build {
        Build::Fatbin => {
            let image = out_dir.join(format!("{stem}.fatbin"));
            let stderr = run_nvcc(nvcc, &nvcc::fatbin_args(&base, arch, &source, &image));
            fs::write(&report, stderr).expect("write ptxas report");
            image
        }
        Build::LinkedCubin => {
            let object = out_dir.join(format!("{stem}.o"));
            let image = out_dir.join(format!("{stem}.cubin"));
            let stderr = run_nvcc(nvcc, &nvcc::relocatable_args(&base, arch, &source, &object));
            fs::write(&report, stderr).expect("write ptxas report");
            run_nvcc(nvcc, &nvcc::device_link_args(nvcc, arch, &object, &image));
            image
        }
    };
    Built { image, report }
}

/// Runs nvcc and returns its stderr, where ptxas writes its report; stops the build on failure with the
/// command line and nvcc's own message.
fn run_nvcc(nvcc: &Path, args: &[String]) -> String {
    let output = Command::new(nvcc).args(args).output().unwrap_or_else(|err| {
        fail(&format!("could not start {}: {err}", nvcc.display()))
    });
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        fail(&format!(
            "nvcc failed ({}):\n  {} {}\n{}{}",
            output.status,
            nvcc.display(),
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            stderr
        ));
    }
    stderr
}

fn write_rust(out_dir: &Path, cuda_dir: &Path, arch: &str, specs: &[Spec], built: &[Built]) {
    let mut rust = String::new();
    writeln!(rust, "/// The architecture every kernel here was compiled for (`CUDA_ARCH` or the local GPU).").unwrap();
    writeln!(rust, "pub const TARGET_ARCH: &str = {arch:?};").unwrap();
    writeln!(rust, "/// Block sizes the tiled `mmm` kernel is compiled for, one `MMM_BS<n>` image each.").unwrap();
    writeln!(rust, "pub const MMM_BLOCK_SIZES: [u32; {}] = {MMM_BLOCK_SIZES:?};", MMM_BLOCK_SIZES.len()).unwrap();
    writeln!(rust, "/// Spheres that fit in the tracer's 64 KiB of constant memory.").unwrap();
    writeln!(rust, "pub const MAX_SPHERES: usize = {MAX_SPHERES};").unwrap();
    writeln!(rust, "/// Size of the tracer's `struct Sphere` in bytes.").unwrap();
    writeln!(rust, "pub const SPHERE_SIZE: usize = {SPHERE_SIZE};").unwrap();
    let offsets: Vec<String> =
        SPHERE_FIELDS.iter().enumerate().map(|(i, field)| format!("({field:?}, {})", 4 * i)).collect();
    writeln!(rust, "/// Offset of each field of `struct Sphere`, as tracer.cu's static_asserts check them.").unwrap();
    writeln!(rust, "pub const SPHERE_OFFSETS: [(&str, usize); {}] = [{}];", offsets.len(), offsets.join(", ")).unwrap();
    writeln!(rust, "/// Sphere counts that have an unrolled `trace_constant_fixed_<N>` kernel.").unwrap();
    writeln!(rust, "pub const TRACER_FIXED_COUNTS: [u32; {}] = {TRACER_FIXED_COUNTS:?};", TRACER_FIXED_COUNTS.len()).unwrap();
    let by_block_size: Vec<String> = MMM_BLOCK_SIZES.iter().map(|bs| format!("({bs}, MMM_BS{bs})")).collect();
    writeln!(rust, "/// The tiled `mmm` images by BLOCK_SIZE.").unwrap();
    writeln!(
        rust,
        "pub const MMM_BY_BLOCK_SIZE: [(u32, KernelImage); {}] = [{}];",
        MMM_BLOCK_SIZES.len(),
        by_block_size.join(", ")
    )
    .unwrap();
    let by_cap: Vec<String> = REGISTER_CAPS
        .iter()
        .map(|cap| format!("(Some({cap}), REGISTERS_CAP{cap})"))
        .chain(["(None, REGISTERS)".to_string()])
        .collect();
    writeln!(rust, "/// The register-pressure kernel by `-maxrregcount` cap, tightest first; `None` is no cap.").unwrap();
    writeln!(rust, "pub const REGISTER_CAPS: [(Option<u32>, KernelImage); {}] = [{}];", by_cap.len(), by_cap.join(", ")).unwrap();
    let mut headers: Vec<PathBuf> = fs::read_dir(cuda_dir)
        .expect("kernels/cuda exists")
        .map(|entry| entry.expect("readable dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cuh"))
        .collect();
    headers.sort();
    let embedded: Vec<String> = headers
        .iter()
        .map(|path| format!("({:?}, include_str!({:?}))", path.file_name().unwrap().to_string_lossy(), path.display().to_string()))
        .collect();
    writeln!(rust, "/// The headers in `cuda/`, by file name: a student's file compiled at run time includes them too.").unwrap();
    writeln!(rust, "pub const HEADERS: [(&str, &str); {}] = [{}];", embedded.len(), embedded.join(", ")).unwrap();
    for (spec, built) in specs.iter().zip(built) {
        writeln!(
            rust,
            "/// `cuda/{source}` {with}compiled for {arch}.\n\
             pub const {constant}: KernelImage = KernelImage {{\n    \
                 source: {source:?},\n    \
                 flags: &{flags:?},\n    \
                 image: include_bytes!({image:?}),\n    \
                 ptxas: include_str!({report:?}),\n    \
                 linked_with_device_runtime: {linked},\n\
             }};",
            source = spec.source,
            with = if spec.flags.is_empty() { String::new() } else { format!("with `{}` ", spec.flags.join(" ")) },
            constant = spec.constant,
            flags = spec.flags,
            image = built.image.display().to_string(),
            report = built.report.display().to_string(),
            linked = spec.build == Build::LinkedCubin,
        )
        .unwrap();
    }
    fs::write(out_dir.join("kernels.rs"), rust).expect("write kernels.rs");
}

/// Ends the build with one message; cargo shows it under the failed build script.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    process::exit(1);
}

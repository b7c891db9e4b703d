//! Compiles every CUDA source in `cuda/` with nvcc, once for each target architecture, and keeps the
//! `ptxas -v` report of each of those builds.
//!
//! For each entry of `specs()` and each architecture this writes `<OUT_DIR>/<name>.sm_XX.fatbin` (or a
//! linked `.cubin`, with its relocatable `.ptx`) and `<OUT_DIR>/<name>.sm_XX.ptxas`, `<name>` being the
//! entry's constant in lower case (`mmm_bs16.sm_90.fatbin`), then generates
//! `<OUT_DIR>/kernels.rs` with one `KernelImage` constant per entry, holding every architecture's build,
//! so the binaries embed their kernels and run from any directory on any GPU they were built for.
//!
//! Where nvcc comes from, in this order: `NVCC`, `$CUDA_PATH/bin/nvcc`, `/usr/local/cuda/bin/nvcc`,
//! `nvcc` on `PATH`, and `.toolchain/cuda/bin/nvcc` (what `scripts/cuda-toolchain.sh` installs).
//! The architectures are `CUDA_ARCH` (a list such as `75;80;90`, or `native`, `all`, `all-major`: see
//! [`nvcc::parse_arch_list`]), else the local GPUs' (`native`), else `all-major`: machine code for the
//! first architecture of every major version nvcc supports, each with its PTX, which the driver compiles
//! for GPUs that come later. A source marked `sm_90a` (Hopper's wgmma) is built for sm_90a in sm_90's
//! place: architecture-specific machine code, which only a compute capability 9.0 GPU runs.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{self, Command};
use std::sync::atomic::{AtomicUsize, Ordering};

#[path = "src/libcuda.rs"]
mod libcuda;
#[path = "src/nvcc.rs"]
mod nvcc;
#[path = "src/pragma.rs"]
mod pragma;

use pragma::{replace_pragma, UNROLL_PRAGMA};

/// Block sizes of the tiled matrix product. Each is compiled as `-DBLOCK_SIZE=<n>` and emitted as the
/// Rust constant `MMM_BLOCK_SIZES`, so kernel and host read the number from one place.
const MMM_BLOCK_SIZES: [u32; 2] = [16, 32];

/// TILE_WIDTH of the Greek slides' worked example ("processing block (0, 0) for TILE_WIDTH = 2"):
/// `tile_example.cu` runs mmm.cu's tiled kernel compiled with `-DBLOCK_SIZE=<this>`, emitted as the Rust
/// constant `TILE_EXAMPLE_WIDTH` for lab-mmm's `--tile-example`.
const TILE_EXAMPLE_WIDTH: u32 = 2;

/// Variants of mmm.cu's tiled kernel for lab-mmm's `--unroll` (the German slides' `#pragma unroll`
/// lesson): mmm.cu with its one `#pragma unroll` line replaced, compiled at every BLOCK_SIZE of
/// [`MMM_BLOCK_SIZES`]. Derived here rather than copied into a .cu file of its own, so the variants
/// stay mmm.cu's kernel whatever becomes of it, and mmm.cu itself (the weeks' starters come from it)
/// stays as it is. Each entry: the constant's suffix, the generated file's name, and the line put in
/// the pragma's place.
const UNROLL_VARIANTS: [(&str, &str, &str); 2] = [
    // The loop is kept: one multiply-add per iteration, a compare and a branch back.
    ("UNROLL1", "mmm_unroll_1.cu", "#pragma unroll 1"),
    // No pragma at all: what nvcc does on its own with a trip count it knows (BLOCK_SIZE).
    (
        "NO_PRAGMA",
        "mmm_no_pragma.cu",
        "// (#pragma unroll removed: the compiler's own choice)",
    ),
];

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
    let mut flags = vec![
        "-fmad=false".to_string(),
        format!("-DMAX_SPHERES={MAX_SPHERES}"),
        format!("-DSPHERE_SIZE={SPHERE_SIZE}"),
    ];
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
    /// Built for sm_90a where sm_90 is a target: Hopper's wgmma, TMA and setmaxnreg exist only in
    /// architecture-specific machine code, which runs on compute capability 9.0 alone
    /// ([`nvcc::sm_90a_fatbin_args`]). Its other builds leave those kernels out.
    sm_90a: bool,
    /// Compiled from a file this script writes to OUT_DIR (named here), made from `source` with its
    /// `#pragma unroll` line replaced ([`UNROLL_VARIANTS`]), instead of from `source` itself.
    derived: Option<(&'static str, &'static str)>,
}

fn specs() -> Vec<Spec> {
    let plain = |constant: &str, source| Spec {
        constant: constant.to_string(),
        source,
        flags: vec![],
        build: Build::Fatbin,
        sm_90a: false,
        derived: None,
    };
    let flagged = |constant: String, source, flags| Spec {
        constant,
        source,
        flags,
        build: Build::Fatbin,
        sm_90a: false,
        derived: None,
    };
    let mut specs = vec![
        plain("SIMPSON", "simpson.cu"),
        Spec {
            constant: "ADAPTIVE_SIMPSON".to_string(),
            source: "adaptive_simpson.cu",
            // integrands.cuh counts each grid's evaluations, which week 7's check reads (issue 61).
            flags: vec!["-DLAB_COUNT_EVALUATIONS".to_string()],
            build: Build::LinkedCubin,
            sm_90a: false,
            derived: None,
        },
    ];
    specs.push(plain("STREAMS", "streams.cu"));
    specs.push(plain("MAPPED", "mapped.cu"));
    specs.push(plain("TIMELINE", "timeline.cu"));
    specs.push(plain("FIRST_LAUNCH", "first_launch.cu"));
    specs.push(plain("MMM_LADDER", "mmm_ladder.cu"));
    specs.push(Spec {
        sm_90a: true,
        ..plain("MMM_WGMMA", "mmm_wgmma.cu")
    });
    specs.push(plain("MEMORY", "memory.cu"));
    specs.push(plain("REGISTERS", "registers.cu"));
    for cap in REGISTER_CAPS {
        specs.push(flagged(
            format!("REGISTERS_CAP{cap}"),
            "registers.cu",
            vec![format!("-maxrregcount={cap}")],
        ));
    }
    specs.push(flagged("TRACER".to_string(), "tracer.cu", tracer_flags()));
    for block_size in MMM_BLOCK_SIZES {
        specs.push(flagged(
            format!("MMM_BS{block_size}"),
            "mmm.cu",
            vec![format!("-DBLOCK_SIZE={block_size}")],
        ));
    }
    for block_size in MMM_BLOCK_SIZES {
        for (suffix, file, line) in UNROLL_VARIANTS {
            specs.push(Spec {
                derived: Some((file, line)),
                ..flagged(
                    format!("MMM_BS{block_size}_{suffix}"),
                    "mmm.cu",
                    vec![format!("-DBLOCK_SIZE={block_size}")],
                )
            });
        }
    }
    specs.push(flagged(
        "TILE_EXAMPLE".to_string(),
        "tile_example.cu",
        vec![format!("-DBLOCK_SIZE={TILE_EXAMPLE_WIDTH}")],
    ));
    specs
}

fn main() {
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let cuda_dir = manifest_dir.join("cuda");
    for var in ["NVCC", "CUDA_PATH", "CUDA_ARCH", "PATH", MACHINE_CODE_ONLY] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed={}", cuda_dir.display());
    for entry in fs::read_dir(&cuda_dir).expect("kernels/cuda exists") {
        println!(
            "cargo:rerun-if-changed={}",
            entry.expect("readable dir entry").path().display()
        );
    }
    link_libcuda(&out_dir);
    let specs = specs();
    let prebuilt = manifest_dir.join(PREBUILT);
    let (target, jobs, built) = if prebuilt.is_dir() {
        // Only where it exists: cargo reruns a build script every time for a path that does not.
        println!("cargo:rerun-if-changed={}", prebuilt.display());
        let (archs, jobs, built) = from_prebuilt(&prebuilt, &specs);
        (
            Target {
                archs,
                chosen_by: format!("prebuilt machine code in kernels/{PREBUILT}, without PTX"),
                with_ptx: false,
            },
            jobs,
            built,
        )
    } else {
        let nvcc =
            nvcc::find(&manifest_dir).unwrap_or_else(|| fail(&format!("nvcc not found ({})", nvcc::HOW_TO_GET_NVCC)));
        let (archs, chosen_by) = target_archs(&nvcc);
        let with_ptx = env::var(MACHINE_CODE_ONLY).map_or(true, |value| value != "1");
        let chosen_by = if with_ptx {
            chosen_by
        } else {
            format!("{chosen_by}, machine code only ({MACHINE_CODE_ONLY}=1)")
        };
        derive_sources(&cuda_dir, &out_dir, &specs);
        let jobs: Vec<(&Spec, u32)> = specs
            .iter()
            .flat_map(|spec| archs.iter().map(move |&arch| (spec, arch)))
            .collect();
        let built = run_in_parallel(&jobs, |&(spec, arch)| {
            compile(&nvcc, arch, &cuda_dir, &out_dir, spec, with_ptx)
        });
        (
            Target {
                archs,
                chosen_by,
                with_ptx,
            },
            jobs,
            built,
        )
    };
    write_rust(&out_dir, &cuda_dir, &target, &specs, &jobs, &built);
}

/// What the images are built for: the architectures, what chose them (for the labs' messages) and
/// whether the fatbins carry PTX beside the machine code.
struct Target {
    archs: Vec<u32>,
    chosen_by: String,
    with_ptx: bool,
}

/// Set to 1, the images carry machine code only: no PTX in the fatbins, no relocatable PTX beside the
/// linked ones. What a student pack is built with (scripts/student-pack.sh): PTX reads almost as the
/// CUDA C it came from, and that is the assignments' answer. A GPU newer than every build then runs
/// nothing, so the pack is built for every architecture the course names.
const MACHINE_CODE_ONLY: &str = "KERNELS_MACHINE_CODE_ONLY";

/// A folder of images and ptxas reports built elsewhere (`<name>.sm_XX.fatbin` or `.cubin`, and
/// `<name>.sm_XX.ptxas`, as this script names them in OUT_DIR). Where it exists, as in a student pack's
/// sources, which hold no `cuda/*.cu`, the build takes the kernels from it and needs no nvcc.
const PREBUILT: &str = "prebuilt";

/// The architectures, jobs and builds of a [`PREBUILT`] folder: every spec must be there for every
/// architecture its first spec has (a linked one may lack the Jetson ones, as when compiled here).
#[allow(clippy::type_complexity)]
fn from_prebuilt<'a>(dir: &Path, specs: &'a [Spec]) -> (Vec<u32>, Vec<(&'a Spec, u32)>, Vec<Option<Built>>) {
    let first = specs[0].constant.to_lowercase();
    let mut archs: Vec<u32> = fs::read_dir(dir)
        .unwrap_or_else(|err| fail(&format!("cannot read {}: {err}", dir.display())))
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_prefix(&format!("{first}.sm_"))?
                .strip_suffix(".fatbin")?
                .parse()
                .ok()
        })
        .collect();
    archs.sort_unstable();
    if archs.is_empty() {
        fail(&format!(
            "{} holds no {first}.sm_XX.fatbin: not a folder of prebuilt kernels",
            dir.display()
        ));
    }
    let jobs: Vec<(&Spec, u32)> = specs
        .iter()
        .flat_map(|spec| archs.iter().map(move |&arch| (spec, arch)))
        .collect();
    let built = jobs
        .iter()
        .map(|&(spec, arch)| {
            let stem = format!("{}.sm_{arch}", spec.constant.to_lowercase());
            let extension = if spec.build == Build::LinkedCubin {
                "cubin"
            } else {
                "fatbin"
            };
            let (image, report) = (
                dir.join(format!("{stem}.{extension}")),
                dir.join(format!("{stem}.ptxas")),
            );
            match (image.is_file() && report.is_file(), spec.build) {
                (true, _) => Some(Built {
                    image,
                    ptx: None,
                    report,
                }),
                (false, Build::LinkedCubin) if [87, 88].contains(&arch) => None,
                (false, _) => fail(&format!(
                    "{} lacks {} or its .ptxas report",
                    dir.display(),
                    image.display()
                )),
            }
        })
        .collect();
    (archs, jobs, built)
}

/// Makes `-lcuda` find the driver's library wherever the dynamic linker has it: Debian and Ubuntu keep
/// it in /usr/lib/x86_64-linux-gnu, Fedora in /usr/lib64, WSL2 in /usr/lib/wsl/lib, and only as
/// libcuda.so.1 where no development package is installed. A link named libcuda.so in OUT_DIR points at
/// the libcuda.so.1 that `ldconfig -p` lists, and the labs link with that folder first.
fn link_libcuda(out_dir: &Path) {
    let Some(library) = libcuda_path() else {
        fail(
            "libcuda.so.1 (the NVIDIA driver's library, which every lab links) not found. Run \
             `bash scripts/cuda-toolchain.sh` once from the repository root (it installs Debian's libcuda1, \
             enough to build and to run the tests that need no GPU), or install the NVIDIA driver.",
        )
    };
    let dir = out_dir.join("link");
    let link = dir.join("libcuda.so");
    fs::create_dir_all(&dir).expect("create OUT_DIR/link");
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(&library, &link).unwrap_or_else(|err| {
        fail(&format!(
            "cannot link {} to {}: {err}",
            link.display(),
            library.display()
        ))
    });
    println!("cargo:rustc-link-search=native={}", dir.display());
}

/// The libcuda.so.1 the dynamic linker would load: the first 64-bit one `ldconfig -p` lists, else
/// Debian's path.
fn libcuda_path() -> Option<PathBuf> {
    let listed = Command::new("ldconfig")
        .arg("-p")
        .output()
        .ok()
        .and_then(|out| libcuda::in_ldconfig(&String::from_utf8_lossy(&out.stdout)));
    listed.or_else(|| Some(PathBuf::from("/usr/lib/x86_64-linux-gnu/libcuda.so.1")).filter(|path| path.exists()))
}

/// `f` over every job, on as many threads as the machine has cores (nvcc is single-threaded), results
/// in the jobs' order.
fn run_in_parallel<J: Sync, R: Send>(jobs: &[J], f: impl Fn(&J) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(jobs.len().max(1));
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(index) else { return mine };
                        mine.push((index, f(job)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("compile thread"))
            .collect()
    });
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

/// Paths of one source compiled for one architecture.
struct Built {
    image: PathBuf,
    /// The relocatable PTX of a source linked with the device runtime, for the driver to link on a GPU
    /// newer than every build (a fatbin carries its PTX inside).
    ptx: Option<PathBuf>,
    report: PathBuf,
}

/// The architectures to build for and what chose them, for the labs' messages: `CUDA_ARCH`, else the
/// local GPUs, else every major architecture nvcc supports.
fn target_archs(nvcc: &Path) -> (Vec<u32>, String) {
    let supported = nvcc::supported_archs(nvcc).unwrap_or_else(|err| fail(&err));
    let local = local_gpu_archs();
    let (value, chosen_by) = match env::var("CUDA_ARCH") {
        Ok(value) => (value.clone(), format!("CUDA_ARCH={value}")),
        Err(_) if local.is_ok() => (
            "native".to_string(),
            "the GPU of the build machine (CUDA_ARCH unset)".to_string(),
        ),
        Err(_) => (
            "all-major".to_string(),
            "every major architecture (no GPU at build time, CUDA_ARCH unset)".to_string(),
        ),
    };
    let archs = nvcc::parse_arch_list(&value, &supported, || local.clone())
        .unwrap_or_else(|err| fail(&format!("CUDA_ARCH={value:?}: {err}")));
    (archs, chosen_by)
}

/// The compute capabilities of the GPUs `nvidia-smi` sees, as 86 for 8.6.
fn local_gpu_archs() -> Result<Vec<u32>, String> {
    let output = Command::new("nvidia-smi")
        .args(["--query-gpu=compute_cap", "--format=csv,noheader"])
        .output()
        .map_err(|err| format!("`native` needs nvidia-smi to find the GPUs: {err}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let archs: Vec<u32> = text
        .lines()
        .filter_map(|line| line.trim().replace('.', "").parse().ok())
        .collect();
    if !output.status.success() || archs.is_empty() {
        return Err("`native` found no GPU (nvidia-smi lists none)".to_string());
    }
    Ok(archs)
}

/// One source for one architecture; `None` for a linked source where this CUDA's device runtime has
/// no code for `arch` (x86-64 toolkits lack the Jetson architectures sm_87 and sm_88, whose GPUs then
/// run the sm_86 build, and a Jetson's own toolkit builds for them).
fn compile(nvcc: &Path, arch: u32, cuda_dir: &Path, out_dir: &Path, spec: &Spec, with_ptx: bool) -> Option<Built> {
    let stem = format!("{}.sm_{arch}", spec.constant.to_lowercase());
    let base = nvcc::base_flags(cuda_dir, &spec.flags);
    let source = match spec.derived {
        Some((file, _)) => out_dir.join(file),
        None => cuda_dir.join(spec.source),
    };
    let report = out_dir.join(format!("{stem}.ptxas"));
    let (image, ptx) = match spec.build {
        Build::Fatbin => {
            let image = out_dir.join(format!("{stem}.fatbin"));
            let args = if spec.sm_90a && arch == 90 {
                nvcc::sm_90a_fatbin_args(&base, &source, &image, with_ptx)
            } else {
                nvcc::fatbin_args(&base, arch, &source, &image, with_ptx)
            };
            let stderr = run_nvcc(nvcc, &args);
            fs::write(&report, stderr).expect("write ptxas report");
            (image, None)
        }
        Build::LinkedCubin => {
            let object = out_dir.join(format!("{stem}.o"));
            let image = out_dir.join(format!("{stem}.cubin"));
            let ptx = out_dir.join(format!("{stem}.ptx"));
            let stderr = run_nvcc(nvcc, &nvcc::relocatable_args(&base, arch, &source, &object));
            fs::write(&report, stderr).expect("write ptxas report");
            if let Err(message) = try_nvcc(nvcc, &nvcc::device_link_args(nvcc, arch, &object, &image)) {
                if message.contains("Undefined reference to '__cudaCDP2") {
                    println!(
                        "cargo:warning={}: no build for sm_{arch}: this CUDA's libcudadevrt.a has no code for it",
                        spec.source
                    );
                    return None;
                }
                fail(&message);
            }
            if !with_ptx {
                return Some(Built {
                    image,
                    ptx: None,
                    report,
                });
            }
            run_nvcc(nvcc, &nvcc::relocatable_ptx_args(&base, arch, &source, &ptx));
            (image, Some(ptx))
        }
    };
    Some(Built { image, ptx, report })
}

/// Writes the derived sources of `specs` ([`UNROLL_VARIANTS`]) to `out_dir`: each its spec's source
/// with the one [`UNROLL_PRAGMA`] line replaced. nvcc finds the headers through `-I cuda/`.
fn derive_sources(cuda_dir: &Path, out_dir: &Path, specs: &[Spec]) {
    for spec in specs {
        let Some((file, line)) = spec.derived else { continue };
        let path = cuda_dir.join(spec.source);
        let text =
            fs::read_to_string(&path).unwrap_or_else(|err| fail(&format!("cannot read {}: {err}", path.display())));
        let derived = replace_pragma(&text, line).unwrap_or_else(|why| {
            fail(&format!(
                "{}: {why}; the `--unroll` variants ({file}) replace exactly that line (kernels/build.rs, UNROLL_VARIANTS)",
                path.display()
            ))
        });
        fs::write(out_dir.join(file), derived).expect("write a derived source");
    }
}

/// Runs nvcc and returns its stderr, where ptxas writes its report; stops the build on failure with the
/// command line and nvcc's own message.
fn run_nvcc(nvcc: &Path, args: &[String]) -> String {
    try_nvcc(nvcc, args).unwrap_or_else(|message| fail(&message))
}

/// Runs nvcc: its stderr, or the message for a failure (the command line and what nvcc said).
fn try_nvcc(nvcc: &Path, args: &[String]) -> Result<String, String> {
    let output = Command::new(nvcc)
        .args(args)
        .output()
        .unwrap_or_else(|err| fail(&format!("could not start {}: {err}", nvcc.display())));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(format!(
            "nvcc failed ({}):\n  {} {}\n{}{}",
            output.status,
            nvcc.display(),
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            stderr
        ));
    }
    Ok(stderr)
}

fn write_rust(
    out_dir: &Path,
    cuda_dir: &Path,
    target: &Target,
    specs: &[Spec],
    jobs: &[(&Spec, u32)],
    built: &[Option<Built>],
) {
    let Target {
        archs,
        chosen_by,
        with_ptx,
    } = target;
    let mut rust = String::new();
    writeln!(
        rust,
        "/// The architectures every kernel here was compiled for, ascending: 86 is sm_86."
    )
    .unwrap();
    writeln!(rust, "pub const BUILT_ARCHS: [u32; {}] = {archs:?};", archs.len()).unwrap();
    writeln!(
        rust,
        "/// Whether the images carry PTX beside their machine code (not in a student pack)."
    )
    .unwrap();
    writeln!(rust, "pub const WITH_PTX: bool = {with_ptx};").unwrap();
    writeln!(
        rust,
        "/// What chose [`BUILT_ARCHS`], for messages that say how to build for another GPU."
    )
    .unwrap();
    writeln!(rust, "pub const ARCHS_CHOSEN_BY: &str = {chosen_by:?};").unwrap();
    writeln!(
        rust,
        "/// Block sizes the tiled `mmm` kernel is compiled for, one `MMM_BS<n>` image each."
    )
    .unwrap();
    writeln!(
        rust,
        "pub const MMM_BLOCK_SIZES: [u32; {}] = {MMM_BLOCK_SIZES:?};",
        MMM_BLOCK_SIZES.len()
    )
    .unwrap();
    writeln!(
        rust,
        "/// TILE_WIDTH of the slides' worked example: [`TILE_EXAMPLE`] is `mmm` compiled with this BLOCK_SIZE."
    )
    .unwrap();
    writeln!(rust, "pub const TILE_EXAMPLE_WIDTH: u32 = {TILE_EXAMPLE_WIDTH};").unwrap();
    writeln!(rust, "/// Spheres that fit in the tracer's 64 KiB of constant memory.").unwrap();
    writeln!(rust, "pub const MAX_SPHERES: usize = {MAX_SPHERES};").unwrap();
    writeln!(rust, "/// Size of the tracer's `struct Sphere` in bytes.").unwrap();
    writeln!(rust, "pub const SPHERE_SIZE: usize = {SPHERE_SIZE};").unwrap();
    let offsets: Vec<String> = SPHERE_FIELDS
        .iter()
        .enumerate()
        .map(|(i, field)| format!("({field:?}, {})", 4 * i))
        .collect();
    writeln!(
        rust,
        "/// Offset of each field of `struct Sphere`, as tracer.cu's static_asserts check them."
    )
    .unwrap();
    writeln!(
        rust,
        "pub const SPHERE_OFFSETS: [(&str, usize); {}] = [{}];",
        offsets.len(),
        offsets.join(", ")
    )
    .unwrap();
    writeln!(
        rust,
        "/// Sphere counts that have an unrolled `trace_constant_fixed_<N>` kernel."
    )
    .unwrap();
    writeln!(
        rust,
        "pub const TRACER_FIXED_COUNTS: [u32; {}] = {TRACER_FIXED_COUNTS:?};",
        TRACER_FIXED_COUNTS.len()
    )
    .unwrap();
    let by_block_size: Vec<String> = MMM_BLOCK_SIZES.iter().map(|bs| format!("({bs}, MMM_BS{bs})")).collect();
    writeln!(rust, "/// The tiled `mmm` images by BLOCK_SIZE.").unwrap();
    writeln!(
        rust,
        "pub const MMM_BY_BLOCK_SIZE: [(u32, KernelImage); {}] = [{}];",
        MMM_BLOCK_SIZES.len(),
        by_block_size.join(", ")
    )
    .unwrap();
    let variants: Vec<String> = MMM_BLOCK_SIZES
        .iter()
        .flat_map(|bs| {
            UNROLL_VARIANTS
                .iter()
                .map(move |(suffix, _, line)| format!("({bs}, {line:?}, MMM_BS{bs}_{suffix})"))
        })
        .collect();
    writeln!(
        rust,
        "/// The tiled `mmm` with its `#pragma unroll` line replaced: (BLOCK_SIZE, the line in its place, the\n\
         /// image), for each BLOCK_SIZE in the order of [`MMM_BLOCK_SIZES`]. mmm.cu as printed is [`MMM_BY_BLOCK_SIZE`]'s."
    )
    .unwrap();
    writeln!(
        rust,
        "pub const MMM_UNROLL_VARIANTS: [(u32, &str, KernelImage); {}] = [{}];",
        variants.len(),
        variants.join(", ")
    )
    .unwrap();
    let by_cap: Vec<String> = REGISTER_CAPS
        .iter()
        .map(|cap| format!("(Some({cap}), REGISTERS_CAP{cap})"))
        .chain(["(None, REGISTERS)".to_string()])
        .collect();
    writeln!(
        rust,
        "/// The register-pressure kernel by `-maxrregcount` cap, tightest first; `None` is no cap."
    )
    .unwrap();
    writeln!(
        rust,
        "pub const REGISTER_CAPS: [(Option<u32>, KernelImage); {}] = [{}];",
        by_cap.len(),
        by_cap.join(", ")
    )
    .unwrap();
    let mut headers: Vec<PathBuf> = fs::read_dir(cuda_dir)
        .expect("kernels/cuda exists")
        .map(|entry| entry.expect("readable dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cuh"))
        .collect();
    headers.sort();
    let embedded: Vec<String> = headers
        .iter()
        .map(|path| {
            format!(
                "({:?}, include_str!({:?}))",
                path.file_name().unwrap().to_string_lossy(),
                path.display().to_string()
            )
        })
        .collect();
    writeln!(
        rust,
        "/// The headers in `cuda/`, by file name: a student's file compiled at run time includes them too."
    )
    .unwrap();
    writeln!(
        rust,
        "pub const HEADERS: [(&str, &str); {}] = [{}];",
        embedded.len(),
        embedded.join(", ")
    )
    .unwrap();
    for spec in specs {
        let builds: Vec<String> = jobs
            .iter()
            .zip(built)
            .filter(|((of, _), _)| std::ptr::eq(*of, spec))
            .filter_map(|(job, built)| Some((job, built.as_ref()?)))
            .map(|((_, arch), built)| {
                let ptx = built.ptx.as_ref().map_or("None".to_string(), |ptx| format!("Some(include_str!({:?}))", ptx.display().to_string()));
                format!(
                    "ArchImage {{ arch: {arch}, image: include_bytes!({:?}), relocatable_ptx: {ptx}, ptxas: include_str!({:?}), ptx: None }}",
                    built.image.display().to_string(),
                    built.report.display().to_string()
                )
            })
            .collect();
        // A derived source is named by its file in OUT_DIR, and said where it comes from.
        let (source, shown) = match spec.derived {
            Some((file, line)) => (
                file,
                format!(
                    "`{file}` (`cuda/{}` with `{line}` in place of `{UNROLL_PRAGMA}`, written by build.rs)",
                    spec.source
                ),
            ),
            None => (spec.source, format!("`cuda/{}`", spec.source)),
        };
        writeln!(
            rust,
            "/// {shown} {with}compiled for each of [`BUILT_ARCHS`] (a linked source: those its device runtime has).\n\
             pub const {constant}: KernelImage = KernelImage {{\n    \
                 source: {source:?},\n    \
                 flags: &{flags:?},\n    \
                 builds: &[\n        {builds},\n    ],\n    \
                 linked_with_device_runtime: {linked},\n    \
                 ptx_inside: WITH_PTX,\n\
             }};",
            with = if spec.flags.is_empty() {
                String::new()
            } else {
                format!("with `{}` ", spec.flags.join(" "))
            },
            constant = spec.constant,
            flags = spec.flags,
            builds = builds.join(",\n        "),
            linked = spec.build == Build::LinkedCubin,
        )
        .unwrap();
    }
    let all: Vec<String> = specs
        .iter()
        .map(|spec| format!("({:?}, {})", spec.constant, spec.constant))
        .collect();
    writeln!(
        rust,
        "/// Every image above, by constant name: for tests that look at all of them."
    )
    .unwrap();
    writeln!(
        rust,
        "pub const ALL: [(&str, KernelImage); {}] = [{}];",
        all.len(),
        all.join(", ")
    )
    .unwrap();
    fs::write(out_dir.join("kernels.rs"), rust).expect("write kernels.rs");
}

/// Ends the build with one message; cargo shows it under the failed build script.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    process::exit(1);
}

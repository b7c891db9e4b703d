//! `--kernel-source FILE.cu`: a student's CUDA file compiled when the lab runs, with the nvcc the build
//! found and the flags one of our images was built with ([`crate::nvcc`]), for the architecture of the
//! GPU it will run on (the caller asks the driver; without a GPU, the newest the labs were built for,
//! so a compile error still shows on a machine without one). The headers of `cuda/` ([`crate::HEADERS`])
//! are written beside the compile, so `#include "matrix_view.cuh"` works as in our sources.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::private_dir::PrivateDir;
use crate::{arch_name, nvcc, ArchImage, KernelImage, HEADERS};

/// Why a student's file did not become a kernel image.
#[derive(Debug)]
pub enum CompileError {
    /// The file is not there (or not readable).
    Missing { path: PathBuf, reason: String },
    /// No nvcc anywhere the build looks.
    NoNvcc,
    /// nvcc ran and failed; `messages` is what it printed, `FILE(line): error: ...` as nvcc writes it.
    Nvcc { path: PathBuf, messages: String },
    /// The GPU is newer than anything this nvcc can compile for.
    Unsupported { arch: u32, supported: Vec<u32> },
    /// nvcc was still running after the time limit (an `#include "/dev/zero"`, say), and was stopped.
    TooLong { path: PathBuf, seconds: u64 },
    /// The file is larger than any kernel source ([`MAX_SOURCE_BYTES`]): not compiled, not copied.
    TooLarge { path: PathBuf, bytes: u64 },
    /// Starting nvcc or handling its files failed.
    Io(String),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Missing { path, reason } => write!(f, "cannot read the kernel source {}{}: {reason}", path.display(), looked_in(path)),
            CompileError::NoNvcc => write!(f, "--kernel-source needs nvcc to compile the file, and none was found ({})", nvcc::HOW_TO_GET_NVCC),
            CompileError::Nvcc { path, .. } => write!(f, "nvcc could not compile {} (its messages are above)", path.display()),
            CompileError::Unsupported { arch, supported } => write!(
                f,
                "this GPU is {}, and the nvcc found compiles for {} at the newest: install a newer CUDA toolkit (or set NVCC)",
                arch_name(*arch),
                supported.last().map_or("nothing".to_string(), |newest| arch_name(*newest))
            ),
            CompileError::TooLong { path, seconds } => write!(f, "the compiler did not finish {} in {seconds} s; stopped", path.display()),
            CompileError::TooLarge { path, bytes } => {
                write!(f, "the kernel source {} has {} bytes; a kernel file has at most {} (not compiled)", path.display(), bytes, MAX_SOURCE_BYTES)
            }
            CompileError::Io(reason) => write!(f, "{reason}"),
        }
    }
}

impl std::error::Error for CompileError {}

/// For a relative path, the folder it was looked for in (a week's README command run from the
/// repository root instead of the week's folder, say).
fn looked_in(path: &Path) -> String {
    match std::env::current_dir() {
        Ok(folder) if path.is_relative() => format!(" (looked in {})", folder.display()),
        _ => String::new(),
    }
}

/// A fresh private folder for one compile (a name nobody can predict, readable by us alone, so that
/// no other account can put a file or link there to swap the image between nvcc and our read), with
/// our headers in it; removed when dropped.
fn scratch_dir() -> Result<PrivateDir, CompileError> {
    let dir = PrivateDir::new("lab-kernel").map_err(|err| CompileError::Io(err.to_string()))?;
    for (name, text) in HEADERS {
        fs::write(dir.path().join(name), text).map_err(|err| CompileError::Io(format!("cannot write {name} to {}: {err}", dir.path().display())))?;
    }
    Ok(dir)
}

/// How long nvcc may take for a student's file: ours compile in seconds; a file that includes
/// `/dev/zero` would keep the preprocessor reading (and growing) until the machine gives out.
const NVCC_LIMIT: Duration = Duration::from_secs(120);

/// The largest student's file compiled: ours are under 20 KB; a 100 MB file (generated, or a
/// mistake) would be copied and preprocessed for minutes on a shared grading machine.
const MAX_SOURCE_BYTES: u64 = 4 << 20;

/// What is kept of each of nvcc's output streams: a template that recurses without end can print
/// megabytes of instantiation notes; the first errors are what helps.
const MAX_MESSAGE_BYTES: u64 = 256 * 1024;

/// Runs nvcc on `copy`, our copy of `source`, within `limit`; its stderr (the ptxas report, or the
/// errors) either way, with the copy's path turned back into the student's.
fn run(nvcc: &Path, args: &[String], source: &Path, copy: &Path, limit: Duration) -> Result<String, CompileError> {
    let output = run_bounded(Command::new(nvcc).args(args), limit).map_err(|err| match err {
        Bounded::TooLong => CompileError::TooLong { path: source.to_path_buf(), seconds: limit.as_secs() },
        Bounded::Io(err) => CompileError::Io(format!("could not run {}: {err}", nvcc.display())),
    })?;
    let messages = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
        .replace(&copy.display().to_string(), &source.display().to_string());
    if output.status.success() {
        Ok(messages)
    } else {
        Err(CompileError::Nvcc { path: source.to_path_buf(), messages })
    }
}

/// Why [`run_bounded`] returned no output.
enum Bounded {
    TooLong,
    Io(std::io::Error),
}

/// `command.output()` with a time limit and at most [`MAX_MESSAGE_BYTES`] kept per stream (the rest is
/// read and dropped, so the program never blocks on a full pipe). The program runs in a process group
/// of its own, killed whole at the limit: nvcc's preprocessor and compilers are its children.
fn run_bounded(command: &mut Command, limit: Duration) -> Result<Output, Bounded> {
    use std::os::unix::process::CommandExt as _;
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).spawn().map_err(Bounded::Io)?;
    let keep = |stream: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(mut stream) = stream {
                let _ = (&mut stream).take(MAX_MESSAGE_BYTES).read_to_end(&mut kept);
                let _ = std::io::copy(&mut stream, &mut std::io::sink());
            }
            kept
        })
    };
    let stdout = keep(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let stderr = keep(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let started = Instant::now();
    let status = loop {
        match child.try_wait().map_err(Bounded::Io)? {
            Some(status) => break Some(status),
            None if started.elapsed() >= limit => break None,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    if status.is_none() {
        // SAFETY: kill(2) with the negated id of the group this child leads; no memory is involved.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
    }
    let (stdout, stderr) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
    let status = status.ok_or(Bounded::TooLong)?;
    Ok(Output { status, stdout, stderr })
}

/// Compiles `source` as `like` was compiled (its flags, fatbin or linked with the device runtime) for
/// architecture `arch` (90 for sm_90). The image lives as long as the program, like the embedded ones.
pub fn compile(source: &Path, like: &KernelImage, arch: u32) -> Result<KernelImage, CompileError> {
    compile_within(source, like, arch, NVCC_LIMIT)
}

/// [`compile`] with nvcc stopped after `limit`.
fn compile_within(source: &Path, like: &KernelImage, arch: u32, limit: Duration) -> Result<KernelImage, CompileError> {
    let bytes = fs::metadata(source).map_err(|err| CompileError::Missing { path: source.to_path_buf(), reason: err.to_string() })?.len();
    if bytes > MAX_SOURCE_BYTES {
        return Err(CompileError::TooLarge { path: source.to_path_buf(), bytes });
    }
    let nvcc = nvcc::find(Path::new(env!("CARGO_MANIFEST_DIR"))).ok_or(CompileError::NoNvcc)?;
    let supported = nvcc::supported_archs(&nvcc).map_err(CompileError::Io)?;
    if !supported.contains(&arch) {
        return Err(CompileError::Unsupported { arch, supported });
    }
    let scratch = scratch_dir()?;
    let dir = scratch.path();
    // nvcc compiles a copy under a name of ours: it reads commas in its arguments as list separators
    // and hands file names on to its own tools, so "Doe, Jane.cu" failed in fatbinary and a `"` broke
    // the command line. Messages get the student's name back (`run`).
    let copy = dir.join("student.cu");
    fs::copy(source, &copy).map_err(|err| CompileError::Missing { path: source.to_path_buf(), reason: err.to_string() })?;
    let mut flags: Vec<String> = like.flags.iter().map(|flag| flag.to_string()).collect();
    flags.extend(include_dir_of(source));
    // -keep leaves nvcc's intermediate files in the scratch folder: student.ptx, for the rules.
    flags.extend(["-keep".to_string(), "-keep-dir".to_string(), dir.display().to_string()]);
    let base = nvcc::base_flags(dir, &flags);
    let result = if like.linked_with_device_runtime {
        let (object, image) = (dir.join("kernel.o"), dir.join("kernel.cubin"));
        run(&nvcc, &nvcc::relocatable_args(&base, arch, &copy, &object), source, &copy, limit)
            .and_then(|report| run(&nvcc, &nvcc::device_link_args(&nvcc, arch, &object, &image), source, &copy, limit).map(|_| (report, image)))
    } else {
        let image = dir.join("kernel.fatbin");
        run(&nvcc, &nvcc::fatbin_args(&base, arch, &copy, &image), source, &copy, limit).map(|report| (report, image))
    };
    let compiled = result.and_then(|(report, image)| {
        let bytes = fs::read(&image).map_err(|err| CompileError::Io(format!("cannot read {}: {err}", image.display())))?;
        Ok((report, bytes))
    });
    let (report, bytes) = compiled?;
    Ok(one_build(source, like, arch, bytes, report, fs::read_to_string(dir.join("student.ptx")).ok()))
}

/// `-I` with the folder of the student's file, so that `#include "mine.cuh"` beside it still works from
/// the copy; none for a folder whose name has a comma, which nvcc would split in two.
fn include_dir_of(source: &Path) -> Option<String> {
    let folder = source.canonicalize().ok()?.parent()?.display().to_string();
    (!folder.contains(',')).then(|| format!("-I{folder}"))
}

/// An image written by [`compile`]'s caller for its own child processes (`--check` runs every case in
/// one), read back with `like`'s flags, for the same architecture `arch`, and no report.
pub fn load(path: &Path, like: &KernelImage, arch: u32) -> Result<KernelImage, CompileError> {
    let bytes = fs::read(path).map_err(|err| CompileError::Missing { path: path.to_path_buf(), reason: err.to_string() })?;
    Ok(one_build(path, like, arch, bytes, String::new(), None))
}

/// A student's image: one build, leaked so that it lives as long as the embedded ones.
fn one_build(source: &Path, like: &KernelImage, arch: u32, image: Vec<u8>, ptxas: String, ptx: Option<String>) -> KernelImage {
    let ptx = ptx.map(|text| &*Box::leak(text.into_boxed_str()));
    let build = ArchImage { arch, image: Box::leak(image.into_boxed_slice()), relocatable_ptx: None, ptxas: Box::leak(ptxas.into_boxed_str()), ptx };
    KernelImage {
        source: Box::leak(source.display().to_string().into_boxed_str()),
        flags: like.flags,
        builds: Box::leak(Box::new([build])),
        linked_with_device_runtime: like.linked_with_device_runtime,
    }
}

/// libcudadevrt.a of the nvcc the labs find, for linking relocatable PTX with the device runtime at
/// run time; `None` without a CUDA toolkit.
pub fn device_runtime_library() -> Option<std::path::PathBuf> {
    Some(nvcc::library_dir(&nvcc::find(Path::new(env!("CARGO_MANIFEST_DIR")))?)?.join("libcudadevrt.a"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("runtime-test-{}-{name}", std::process::id()));
        fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn compiles_a_file_like_ours_with_our_headers_and_reports_it() {
        let path = write("ok.cu", "#include \"matrix_view.cuh\"\nextern \"C\" __global__ void twice(MatrixView<float> m) { m(0, 0) *= 2; }\n");
        let image = compile(&path, &crate::MMM_BS16, 86).unwrap();
        assert_eq!(image.flags, crate::MMM_BS16.flags);
        let [build] = image.builds else { panic!("one build") };
        assert_eq!((build.arch, &build.image[..4]), (86, &[0x50, 0xED, 0x55, 0xBA][..]), "a fatbin for the GPU's architecture");
        let twice = build.report().unwrap().function("twice").cloned();
        assert_eq!(twice.and_then(|f| f.arch).as_deref(), Some("sm_86"), "{}", build.ptxas);
        // Issue 29: the PTX is kept for the rules, for a fatbin and for code linked with the device runtime.
        assert!(build.ptx.is_some_and(|ptx| ptx.contains(".entry twice(")), "{:?}", build.ptx);
        let linked = compile(&path, &crate::ADAPTIVE_SIMPSON, 86).unwrap();
        assert!(linked.builds[0].ptx.is_some_and(|ptx| ptx.contains(".entry twice(")), "{:?}", linked.builds[0].ptx);
        fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_compile_error_keeps_nvccs_file_and_line() {
        let path = write("bad.cu", "__global__ void k(float* x) {\n  x[0] = y;\n}\n");
        match compile(&path, &crate::SIMPSON, 90) {
            Err(error @ CompileError::Nvcc { .. }) => {
                let CompileError::Nvcc { messages, .. } = &error else { unreachable!() };
                assert!(messages.contains("bad.cu(2): error"), "{messages}");
                assert!(error.to_string().ends_with("bad.cu (its messages are above)"), "{error}");
            }
            other => panic!("{other:?}"),
        }
        fs::remove_file(path).unwrap();
        let missing = compile(Path::new("/no/such/kernel.cu"), &crate::SIMPSON, 90).unwrap_err().to_string();
        assert!(missing.starts_with("cannot read the kernel source /no/such/kernel.cu: "), "{missing}");
        // Issue 26: a relative path names the folder it was looked for in.
        let relative = compile(Path::new("no-such-mmm.cu"), &crate::SIMPSON, 90).unwrap_err().to_string();
        let here = std::env::current_dir().unwrap();
        assert!(relative.starts_with(&format!("cannot read the kernel source no-such-mmm.cu (looked in {}): ", here.display())), "{relative}");
    }

    /// Issue 26: nvcc once failed a correct file for its name ("my mmm, v2.cu": fatbinary took the
    /// comma for a separator; a `"` broke the command line). A header beside the file is still found.
    #[test]
    fn any_file_name_compiles_and_errors_keep_the_students_name() {
        let folder = std::env::temp_dir().join(format!("runtime-test-{}-names", std::process::id()));
        fs::create_dir_all(&folder).unwrap();
        fs::write(folder.join("mine.cuh"), "#define SCALE 2\n").unwrap();
        for name in ["my mmm, v2.cu", "Doe, Jane \"JD\".cu", "semi;colon $HOME.cu"] {
            let path = folder.join(name);
            fs::write(&path, "#include \"mine.cuh\"\n__global__ void k(float* x) { *x = SCALE; }\n").unwrap();
            let image = compile(&path, &crate::SIMPSON, 90).unwrap_or_else(|err| panic!("{name}: {err}"));
            assert_eq!(image.source, path.display().to_string());
            fs::write(&path, "__global__ void k(float* x) {\n  x[0] = y;\n}\n").unwrap();
            match compile(&path, &crate::SIMPSON, 90) {
                Err(CompileError::Nvcc { messages, .. }) => {
                    assert!(messages.contains(&format!("{}(2): error", path.display())), "{name}: {messages}");
                    assert!(!messages.contains("student.cu"), "{name}: {messages}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        fs::remove_dir_all(folder).unwrap();
    }

    /// Issue 29: a file that keeps nvcc busy is stopped at the limit (its preprocessor included), one
    /// that makes it print without end is cut to what is kept, and one of 100 MB is not compiled at all.
    #[test]
    fn a_compile_that_would_not_end_is_stopped_and_its_messages_bounded() {
        let zero = write("zero.cu", "#include \"/dev/zero\"\n");
        let message = compile_within(&zero, &crate::SIMPSON, 90, Duration::from_secs(3)).unwrap_err().to_string();
        assert_eq!(message, format!("the compiler did not finish {} in 3 s; stopped", zero.display()));
        fs::remove_file(zero).unwrap();
        // A template that recurses without end: nvcc's own depth limit ends it with an error.
        let endless = write("endless.cu", "template<int N> struct R { static const int v = R<N + 1>::v; };\n__global__ void k(int* x) { *x = R<0>::v; }\n");
        match compile(&endless, &crate::SIMPSON, 90) {
            Err(CompileError::Nvcc { messages, .. }) => assert!(messages.contains("endless.cu(1): error") && messages.len() as u64 <= 2 * MAX_MESSAGE_BYTES, "{messages}"),
            other => panic!("{other:?}"),
        }
        fs::remove_file(endless).unwrap();
        // A 100 MB source is refused before it is copied or compiled (a sparse file: instant to make).
        let huge = write("huge.cu", "");
        fs::File::options().write(true).open(&huge).unwrap().set_len(100 << 20).unwrap();
        let started = Instant::now();
        let message = compile(&huge, &crate::SIMPSON, 90).unwrap_err().to_string();
        assert_eq!(message, format!("the kernel source {} has 104857600 bytes; a kernel file has at most 4194304 (not compiled)", huge.display()));
        assert!(started.elapsed() < Duration::from_secs(1));
        fs::remove_file(huge).unwrap();
        let output = run_bounded(Command::new("sh").args(["-c", "yes error | head -c 5000000; echo done >&2"]), Duration::from_secs(30)).ok().unwrap();
        assert_eq!((output.stdout.len() as u64, output.stderr), (MAX_MESSAGE_BYTES, b"done\n".to_vec()));
    }

    #[test]
    fn a_gpu_newer_than_nvcc_knows_is_named_with_what_to_do() {
        let path = write("new.cu", "__global__ void k(float* x) { *x = 1; }\n");
        let message = compile(&path, &crate::SIMPSON, 990).unwrap_err().to_string();
        assert!(message.starts_with("this GPU is sm_990, and the nvcc found compiles for sm_1"), "{message}");
        assert!(message.ends_with("at the newest: install a newer CUDA toolkit (or set NVCC)"), "{message}");
        fs::remove_file(path).unwrap();
    }

    #[test]
    fn the_device_runtime_library_is_found_beside_nvcc() {
        let library = device_runtime_library().expect("the toolchain has libcudadevrt.a");
        assert!(library.ends_with("libcudadevrt.a") && library.is_file(), "{}", library.display());
    }

    #[test]
    fn without_nvcc_the_error_says_how_to_get_one() {
        let message = CompileError::NoNvcc.to_string();
        assert!(message.starts_with("--kernel-source needs nvcc to compile the file, and none was found"), "{message}");
        assert!(message.contains("bash scripts/cuda-toolchain.sh"), "{message}");
    }

    #[test]
    fn a_kernel_that_launches_kernels_is_linked_with_the_device_runtime() {
        let path = write("child.cu", "__global__ void child(int* x) { *x = 1; }\n__global__ void parent(int* x) { child<<<1, 1>>>(x); }\n");
        let image = compile(&path, &crate::ADAPTIVE_SIMPSON, 75).unwrap();
        assert!(image.linked_with_device_runtime && image.builds[0].image[..4] == [0x7F, b'E', b'L', b'F']);
        fs::remove_file(path).unwrap();
    }
}

//! `--kernel-source FILE.cu`: a student's CUDA file compiled when the lab runs, with the nvcc the build
//! found and the flags one of our images was built with ([`crate::nvcc`]), for the architecture of the
//! GPU it will run on (the caller asks the driver; without a GPU, the newest the labs were built for,
//! so a compile error still shows on a machine without one). The headers of `cuda/` ([`crate::HEADERS`])
//! are written beside the compile, so `#include "matrix_view.cuh"` works as in our sources.

use std::fmt;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::compiler::{toolkit_root, Compiler};
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
    /// The file includes something other than our headers, the toolkit's or the system's.
    ForeignInclude { path: PathBuf, include: String },
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
            CompileError::ForeignInclude { path, include } => write!(
                f,
                "{} includes {include}: a kernel file may include only the course's headers ({}) and those of the CUDA toolkit and the system (not compiled)",
                path.display(),
                HEADERS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
            ),
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
        fs::write(dir.path().join(name), text)
            .map_err(|err| CompileError::Io(format!("cannot write {name} to {}: {err}", dir.path().display())))?;
    }
    Ok(dir)
}

/// How long nvcc may take for a student's file: ours compile in seconds; a file that includes
/// `/dev/zero` would keep the preprocessor reading (and growing) until the machine gives out.
pub(crate) const NVCC_LIMIT: Duration = Duration::from_secs(120);

/// The largest student's file compiled: ours are under 20 KB; a 100 MB file (generated, or a
/// mistake) would be copied and preprocessed for minutes on a shared grading machine.
const MAX_SOURCE_BYTES: u64 = 4 << 20;

/// What is kept of each of nvcc's output streams: a template that recurses without end can print
/// megabytes of instantiation notes; the first errors are what helps.
const MAX_MESSAGE_BYTES: u64 = 256 * 1024;

/// Why [`run_bounded`] returned no output.
pub(crate) enum Bounded {
    TooLong,
    Io(std::io::Error),
}

/// `command.output()` with a time limit and at most [`MAX_MESSAGE_BYTES`] kept per stream (the rest is
/// read and dropped, so the program never blocks on a full pipe). The program runs in a process group
/// of its own, killed whole at the limit: nvcc's preprocessor and compilers are its children.
pub(crate) fn run_bounded(command: &mut Command, limit: Duration) -> Result<Output, Bounded> {
    use std::os::unix::process::CommandExt as _;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(Bounded::Io)?;
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

/// A student's file compiled: the image, and what nvcc's front end said on the way (warnings,
/// remarks, `#pragma message`), for the student to read; nothing in `messages` is evidence.
#[derive(Debug)]
pub struct Compiled {
    pub image: KernelImage,
    pub messages: String,
}

/// Compiles `source` as `like` was compiled (its flags, fatbin or linked with the device runtime) for
/// architecture `arch` (90 for sm_90). The image lives as long as the program, like the embedded ones.
pub fn compile(source: &Path, like: &KernelImage, arch: u32) -> Result<Compiled, CompileError> {
    compile_within(source, like, arch, NVCC_LIMIT)
}

/// [`compile`], each nvcc in the sandbox ([`Compiler`]) and stopped after `limit`. First the
/// preprocessor alone lists every file the student's file reads, which must be our headers, the CUDA
/// toolkit's or the system's ([`foreign_include`]), before any of nvcc's messages is shown (issue 60). Then two steps (issue
/// 39), so that nothing the student's file prints can pass for the compiler's report: the front end
/// makes PTX; then nvcc turns that PTX into machine code, and only ptxas writes to that step's
/// stderr: the report the rules read. A `#pragma message` shows in the first step's messages.
fn compile_within(source: &Path, like: &KernelImage, arch: u32, limit: Duration) -> Result<Compiled, CompileError> {
    check_size(source)?;
    let nvcc = nvcc::find(Path::new(env!("CARGO_MANIFEST_DIR"))).ok_or(CompileError::NoNvcc)?;
    let supported = nvcc::supported_archs(&nvcc).map_err(CompileError::Io)?;
    if !supported.contains(&arch) {
        return Err(CompileError::Unsupported { arch, supported });
    }
    let scratch = scratch_dir()?;
    let dir = scratch.path();
    // nvcc compiles a copy under a name of ours: it reads commas in its arguments as list separators
    // and hands file names on to its own tools, so "Doe, Jane.cu" failed in fatbinary and a `"` broke
    // the command line. Messages get the student's name back (`Compiler`). The copy's folder holds
    // nothing but our headers: a header beside the student's file is not found.
    let copy = dir.join("student.cu");
    fs::copy(source, &copy).map_err(|err| CompileError::Missing {
        path: source.to_path_buf(),
        reason: err.to_string(),
    })?;
    let compiler = Compiler::new(&nvcc, dir, &copy, source, limit)?;
    let flags: Vec<String> = like.flags.iter().map(|flag| flag.to_string()).collect();
    let base = nvcc::base_flags(dir, &flags);
    let front_end = front_end_args(&base, arch, like.linked_with_device_runtime);
    compiler.check_includes(&front_end, &|_| false)?;
    let ptx = dir.join("student.ptx");
    let mut ptx_args = front_end;
    ptx_args.extend([
        "-ptx".to_string(),
        copy.display().to_string(),
        "-o".to_string(),
        ptx.display().to_string(),
    ]);
    let messages = compiler.run(&ptx_args)?;
    let (report, image) = if like.linked_with_device_runtime {
        let (object, image) = (dir.join("kernel.o"), dir.join("kernel.cubin"));
        let report = compiler.run(&nvcc::relocatable_args(&base, arch, &ptx, &object))?;
        compiler.run(&nvcc::device_link_args(&nvcc, arch, &object, &image))?;
        (report, image)
    } else {
        let image = dir.join("kernel.fatbin");
        (
            compiler.run(&nvcc::fatbin_args(&base, arch, &ptx, &image, true))?,
            image,
        )
    };
    let bytes = fs::read(&image).map_err(|err| CompileError::Io(format!("cannot read {}: {err}", image.display())))?;
    let ptx = fs::read_to_string(&ptx).ok();
    Ok(Compiled {
        image: one_build(source, like, arch, bytes, report, ptx),
        messages,
    })
}

/// A student's whole program (weeks 5 and 6: the host code is graded), built into an executable.
#[derive(Debug)]
pub struct Program {
    pub executable: PathBuf,
    /// The student's code alone, compiled (`-c`): what the weeks' static checks read.
    pub object: PathBuf,
    /// What nvcc said on the way (warnings), for the student to read.
    pub messages: String,
    /// The private folder that holds the executable; removed when the program is dropped.
    pub dir: PrivateDir,
}

/// Builds `source`, a whole CUDA program, into an executable for `arch` (SASS and PTX), with
/// `headers` (name, text) beside it: the only course headers it may include. Bounded as a kernel file
/// is (size, time, a copy under our name, every included file checked), and CUPTI's headers are
/// refused too: the program runs under our CUPTI recorder, which it has no business talking to.
pub fn compile_program(source: &Path, headers: &[(&str, &str)], arch: u32) -> Result<Program, CompileError> {
    check_size(source)?;
    let nvcc = nvcc::find(Path::new(env!("CARGO_MANIFEST_DIR"))).ok_or(CompileError::NoNvcc)?;
    let supported = nvcc::supported_archs(&nvcc).map_err(CompileError::Io)?;
    let arch = supported
        .iter()
        .copied()
        .filter(|&built| built <= arch)
        .max()
        .ok_or(CompileError::Unsupported {
            arch,
            supported: supported.clone(),
        })?;
    let dir = PrivateDir::new("lab-program").map_err(|err| CompileError::Io(err.to_string()))?;
    for (name, text) in headers {
        fs::write(dir.path().join(name), text)
            .map_err(|err| CompileError::Io(format!("cannot write {name} to {}: {err}", dir.path().display())))?;
    }
    let (copy, object, executable) = (
        dir.path().join("student.cu"),
        dir.path().join("student.o"),
        dir.path().join("program"),
    );
    fs::copy(source, &copy).map_err(|err| CompileError::Missing {
        path: source.to_path_buf(),
        reason: err.to_string(),
    })?;
    let compiler = Compiler::new(&nvcc, dir.path(), &copy, source, NVCC_LIMIT)?;
    let common: Vec<String> = vec![
        "-std=c++17".into(),
        "-O2".into(),
        format!("-I{}", dir.path().display()),
        format!("-arch={}", arch_name(arch)),
    ];
    let cupti = |file: &Path| {
        file.file_name()
            .is_some_and(|name| name.to_string_lossy().to_ascii_lowercase().starts_with("cupti"))
    };
    compiler.check_includes(&common, &cupti)?;
    // The student's code alone in an object file first: what it calls is read there (the weeks'
    // static checks), apart from what the CUDA runtime linked in beside it calls.
    let mut compile_args = common.clone();
    compile_args.extend([
        "-c".into(),
        copy.display().to_string(),
        "-o".into(),
        object.display().to_string(),
    ]);
    let messages = compiler.run(&compile_args)?;
    // The CUDA runtime to link: the PyPI wheels keep it where their nvcc does not look.
    let link_args: Vec<String> = nvcc::library_dir(&nvcc)
        .map(|dir| format!("-L{}", dir.display()))
        .into_iter()
        .chain([
            format!("-arch={}", arch_name(arch)),
            object.display().to_string(),
            "-o".into(),
            executable.display().to_string(),
        ])
        .collect();
    compiler.run(&link_args)?;
    Ok(Program {
        executable,
        object,
        messages,
        dir,
    })
}

/// Builds the CUPTI recorder (`source`, C++) into `dir/librecorder.so`, linked with `cupti` (the
/// path of libcupti.so.13, which the library then loads from there whatever the environment says).
pub fn compile_recorder(source: &str, cupti: &Path, dir: &Path) -> Result<PathBuf, CompileError> {
    let nvcc = nvcc::find(Path::new(env!("CARGO_MANIFEST_DIR"))).ok_or(CompileError::NoNvcc)?;
    let lib_dir = cupti.parent().unwrap_or(Path::new("."));
    let root = toolkit_root(&nvcc);
    let include = [
        lib_dir.join("../include"),
        root.join("extras/CUPTI/include"),
        root.join("include"),
    ]
    .into_iter()
    .find(|dir| dir.join("cupti_activity.h").is_file())
    .ok_or_else(|| {
        CompileError::Io(format!(
            "no cupti_activity.h beside {} or in {}",
            cupti.display(),
            root.display()
        ))
    })?;
    let (copy, library) = (dir.join("recorder.cpp"), dir.join("librecorder.so"));
    fs::write(&copy, source).map_err(|err| CompileError::Io(format!("cannot write {}: {err}", copy.display())))?;
    let name = cupti
        .file_name()
        .map_or("libcupti.so.13".into(), |name| name.to_string_lossy());
    let args: Vec<String> = vec![
        "-shared".into(),
        "-Xcompiler".into(),
        "-fPIC".into(),
        "-std=c++17".into(),
        "-O2".into(),
        "-cudart".into(),
        "none".into(),
        format!("-I{}", include.display()),
        format!("-L{}", lib_dir.display()),
        format!("-l:{name}"),
        "-ldl".into(), // dlsym: its own library before glibc 2.34 (RHEL 8)
        "-Xlinker".into(),
        format!("-rpath,{}", lib_dir.display()),
        copy.display().to_string(),
        "-o".into(),
        library.display().to_string(),
    ];
    Compiler::ours(&nvcc, dir, &copy, &copy).run(&args)?;
    Ok(library)
}

/// The student's file is there and no larger than [`MAX_SOURCE_BYTES`].
fn check_size(source: &Path) -> Result<(), CompileError> {
    let bytes = fs::metadata(source)
        .map_err(|err| CompileError::Missing {
            path: source.to_path_buf(),
            reason: err.to_string(),
        })?
        .len();
    if bytes > MAX_SOURCE_BYTES {
        return Err(CompileError::TooLarge {
            path: source.to_path_buf(),
            bytes,
        });
    }
    Ok(())
}

/// The front end's flags for PTX of `arch` (relocatable for kernels that launch kernels), shared by
/// the preprocessing pass and the PTX step of a student's compile.
fn front_end_args(base: &[String], arch: u32, relocatable: bool) -> Vec<String> {
    let mut args = base.to_vec();
    args.push(format!("-arch=compute_{arch}"));
    if relocatable {
        args.push("-rdc=true".to_string());
    }
    args
}

/// Where the host compiler's own headers live, which the CUDA headers include (`stdlib.h`, `cmath`).
const SYSTEM_HEADERS: [&str; 3] = ["/usr/include/", "/usr/lib/gcc/", "/usr/lib/llvm"];

/// The first file in nvcc's dependency list (`-MD`, make's format) other than `source` itself that
/// is neither in one of `allowed` (our headers' folder, the toolkit) nor a system header: a student's
/// file may include only those, so neither our solution, another student's file nor anything beside
/// the file is compiled in. Every path is resolved first, so `..` and links lead nowhere else.
pub fn foreign_include(dependencies: &str, allowed: &[&Path], source: &Path) -> Option<String> {
    let resolve = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let allowed: Vec<PathBuf> = allowed.iter().map(|dir| resolve(dir)).collect();
    let source = resolve(source);
    let inside = |file: &Path| {
        *file == source
            || allowed.iter().any(|dir| file.starts_with(dir))
            || SYSTEM_HEADERS
                .iter()
                .any(|system| file.to_string_lossy().starts_with(system))
    };
    make_dependencies(dependencies)
        .into_iter()
        .find(|file| !inside(&resolve(Path::new(file))))
}

/// The prerequisites of a make rule (`target : a.cu \` and `b.h` on the next line), with `\ ` a
/// space inside a name.
pub(crate) fn make_dependencies(rule: &str) -> Vec<String> {
    let joined = rule.replace("\\\r\n", " ").replace("\\\n", " ");
    let Some((_, prerequisites)) = joined.split_once(" : ").or_else(|| joined.split_once(": ")) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut current = String::new();
    let mut chars = prerequisites.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => current.push(chars.next().unwrap_or(' ')),
            c if c.is_whitespace() => {
                if !current.is_empty() {
                    files.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        files.push(current);
    }
    files
}

/// An image written by [`compile`]'s caller for its own child processes (`--check` runs every case in
/// one), read back with `like`'s flags, for the same architecture `arch`, and no report.
pub fn load(path: &Path, like: &KernelImage, arch: u32) -> Result<KernelImage, CompileError> {
    let bytes = fs::read(path).map_err(|err| CompileError::Missing {
        path: path.to_path_buf(),
        reason: err.to_string(),
    })?;
    Ok(one_build(path, like, arch, bytes, String::new(), None))
}

/// A student's image: one build, leaked so that it lives as long as the embedded ones.
fn one_build(
    source: &Path,
    like: &KernelImage,
    arch: u32,
    image: Vec<u8>,
    ptxas: String,
    ptx: Option<String>,
) -> KernelImage {
    let ptx = ptx.map(|text| &*Box::leak(text.into_boxed_str()));
    let build = ArchImage {
        arch,
        image: Box::leak(image.into_boxed_slice()),
        relocatable_ptx: None,
        ptxas: Box::leak(ptxas.into_boxed_str()),
        ptx,
    };
    KernelImage {
        source: Box::leak(source.display().to_string().into_boxed_str()),
        flags: like.flags,
        builds: Box::leak(Box::new([build])),
        linked_with_device_runtime: like.linked_with_device_runtime,
        ptx_inside: true,
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
        let path = write(
            "ok.cu",
            "#include \"matrix_view.cuh\"\nextern \"C\" __global__ void twice(MatrixView<float> m) { m(0, 0) *= 2; }\n",
        );
        let image = compile(&path, &crate::MMM_BS16, 86).unwrap().image;
        assert_eq!(image.flags, crate::MMM_BS16.flags);
        let [build] = image.builds else { panic!("one build") };
        assert_eq!(
            (build.arch, &build.image[..4]),
            (86, &[0x50, 0xED, 0x55, 0xBA][..]),
            "a fatbin for the GPU's architecture"
        );
        let twice = build.report().unwrap().function("twice").cloned();
        assert_eq!(twice.and_then(|f| f.arch).as_deref(), Some("sm_86"), "{}", build.ptxas);
        // Issue 29: the PTX is kept for the rules, for a fatbin and for code linked with the device runtime.
        assert!(
            build.ptx.is_some_and(|ptx| ptx.contains(".entry twice(")),
            "{:?}",
            build.ptx
        );
        let linked = compile(&path, &crate::ADAPTIVE_SIMPSON, 86).unwrap().image;
        assert!(
            linked.builds[0].ptx.is_some_and(|ptx| ptx.contains(".entry twice(")),
            "{:?}",
            linked.builds[0].ptx
        );
        fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_compile_error_keeps_nvccs_file_and_line() {
        let path = write("bad.cu", "__global__ void k(float* x) {\n  x[0] = y;\n}\n");
        match compile(&path, &crate::SIMPSON, 90) {
            Err(error @ CompileError::Nvcc { .. }) => {
                let CompileError::Nvcc { messages, .. } = &error else {
                    unreachable!()
                };
                assert!(messages.contains("bad.cu(2): error"), "{messages}");
                assert!(
                    error.to_string().ends_with("bad.cu (its messages are above)"),
                    "{error}"
                );
            }
            other => panic!("{other:?}"),
        }
        fs::remove_file(path).unwrap();
        let missing = compile(Path::new("/no/such/kernel.cu"), &crate::SIMPSON, 90)
            .unwrap_err()
            .to_string();
        assert!(
            missing.starts_with("cannot read the kernel source /no/such/kernel.cu: "),
            "{missing}"
        );
        // Issue 26: a relative path names the folder it was looked for in.
        let relative = compile(Path::new("no-such-mmm.cu"), &crate::SIMPSON, 90)
            .unwrap_err()
            .to_string();
        let here = std::env::current_dir().unwrap();
        assert!(
            relative.starts_with(&format!(
                "cannot read the kernel source no-such-mmm.cu (looked in {}): ",
                here.display()
            )),
            "{relative}"
        );
    }

    /// Issue 26: nvcc once failed a correct file for its name ("my mmm, v2.cu": fatbinary took the
    /// comma for a separator; a `"` broke the command line).
    #[test]
    fn any_file_name_compiles_and_errors_keep_the_students_name() {
        let folder = std::env::temp_dir().join(format!("runtime-test-{}-names", std::process::id()));
        fs::create_dir_all(&folder).unwrap();
        for name in ["my mmm, v2.cu", "Doe, Jane \"JD\".cu", "semi;colon $HOME.cu"] {
            let path = folder.join(name);
            fs::write(
                &path,
                "#include \"matrix_view.cuh\"\n__global__ void k(float* x) { *x = 2; }\n",
            )
            .unwrap();
            let image = compile(&path, &crate::SIMPSON, 90)
                .unwrap_or_else(|err| panic!("{name}: {err}"))
                .image;
            assert_eq!(image.source, path.display().to_string());
            fs::write(&path, "__global__ void k(float* x) {\n  x[0] = y;\n}\n").unwrap();
            match compile(&path, &crate::SIMPSON, 90) {
                Err(CompileError::Nvcc { messages, .. }) => {
                    // The file by its name: no folder of the grading machine (issue 60).
                    assert!(messages.contains(&format!("{name}(2): error")), "{name}: {messages}");
                    assert!(!messages.contains(&folder.display().to_string()), "{name}: {messages}");
                    assert!(!messages.contains("student.cu"), "{name}: {messages}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        fs::remove_dir_all(folder).unwrap();
    }

    /// Issue 39: a student's file includes our headers, the toolkit's and the system's, and nothing
    /// else: not our solution by its path, not a file beside it, not one reached through `..`.
    #[test]
    fn only_the_courses_the_toolkits_and_the_systems_headers_may_be_included() {
        let folder = std::env::temp_dir().join(format!("runtime-test-{}-includes", std::process::id()));
        fs::create_dir_all(folder.join("sub")).unwrap();
        fs::write(folder.join("other.cu"), "__global__ void other(float* x) { *x = 1; }\n").unwrap();
        let solution = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("cuda/mmm.cu")
            .canonicalize()
            .unwrap();
        let path = folder.join("sub/mine.cu");
        for (include, named) in [
            (format!("\"{}\"", solution.display()), solution.display().to_string()),
            (
                format!("\"{}/sub/../other.cu\"", folder.display()),
                "other.cu".to_string(),
            ),
        ] {
            fs::write(
                &path,
                format!("#include {include}\n__global__ void k(float* x) {{ *x = 2; }}\n"),
            )
            .unwrap();
            match compile(&path, &crate::MMM_BS16, 90) {
                Err(error @ CompileError::ForeignInclude { .. }) => {
                    let message = error.to_string();
                    assert!(
                        message.contains(&named)
                            && message.contains("may include only the course's headers (")
                            && message.ends_with("(not compiled)"),
                        "{message}"
                    );
                }
                other => panic!("{include}: {other:?}"),
            }
        }
        // A header beside the file is not found: the copy compiles in a folder of ours.
        fs::write(folder.join("sub/mine.cuh"), "#define SCALE 2\n").unwrap();
        fs::write(
            &path,
            "#include \"mine.cuh\"\n__global__ void k(float* x) { *x = SCALE; }\n",
        )
        .unwrap();
        assert!(matches!(
            compile(&path, &crate::MMM_BS16, 90),
            Err(CompileError::Nvcc { .. })
        ));
        // The course's headers, the toolkit's and the system's are fine.
        fs::write(&path, "#include <cstdio>\n#include <cuda_runtime.h>\n#include \"matrix_view.cuh\"\n#include \"stamps.cuh\"\n__global__ void k(float* x) { *x = 2; }\n").unwrap();
        compile(&path, &crate::MMM_BS16, 90).unwrap_or_else(|err| panic!("{err:?}"));
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn make_dependencies_are_split_at_unescaped_spaces_and_continued_lines() {
        let rule = "student.ptx : /tmp/a\\ b/student.cu \\\n    /usr/include/stdio.h \\\n    /x/y.cuh\n";
        assert_eq!(
            make_dependencies(rule),
            ["/tmp/a b/student.cu", "/usr/include/stdio.h", "/x/y.cuh"]
        );
        assert_eq!(
            foreign_include(rule, &[Path::new("/tmp/nowhere")], Path::new("/tmp/a b/student.cu")),
            Some("/x/y.cuh".to_string())
        );
    }

    /// Issue 39: a `#pragma message` that prints a forged ptxas report shows in the front end's
    /// messages, never in the report the rules read.
    #[test]
    fn a_forged_report_in_a_pragma_message_never_reaches_the_report() {
        let path = write("forged.cu", "#pragma message(\"\\nptxas info    : Used 99 registers, 4096 bytes smem\")\nextern \"C\" __global__ void k(float* x) { *x = 2; }\n");
        let compiled = compile(&path, &crate::MMM_BS16, 90).unwrap();
        assert!(compiled.messages.contains("Used 99 registers"), "{}", compiled.messages);
        let build = compiled.image.builds[0];
        assert!(
            !build.ptxas.contains("99 registers") && !build.ptxas.contains("4096"),
            "{}",
            build.ptxas
        );
        assert_eq!(build.report().unwrap().function("k").map(|f| f.shared_bytes), Some(0));
        fs::remove_file(path).unwrap();
    }

    /// Issue 29: a file that keeps nvcc busy is stopped at the limit (its preprocessor included), one
    /// that makes it print without end is cut to what is kept, and one of 100 MB is not compiled at all.
    #[test]
    fn a_compile_that_would_not_end_is_stopped_and_its_messages_bounded() {
        let zero = write("zero.cu", "#include \"/dev/zero\"\n");
        let message = compile_within(&zero, &crate::SIMPSON, 90, Duration::from_secs(3))
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            format!("the compiler did not finish {} in 3 s; stopped", zero.display())
        );
        fs::remove_file(zero).unwrap();
        // A template that recurses without end: nvcc's own depth limit ends it with an error.
        let endless = write("endless.cu", "template<int N> struct R { static const int v = R<N + 1>::v; };\n__global__ void k(int* x) { *x = R<0>::v; }\n");
        match compile(&endless, &crate::SIMPSON, 90) {
            Err(CompileError::Nvcc { messages, .. }) => assert!(
                messages.contains("endless.cu(1): error") && messages.len() as u64 <= 2 * MAX_MESSAGE_BYTES,
                "{messages}"
            ),
            other => panic!("{other:?}"),
        }
        fs::remove_file(endless).unwrap();
        // A 100 MB source is refused before it is copied or compiled (a sparse file: instant to make).
        let huge = write("huge.cu", "");
        fs::File::options()
            .write(true)
            .open(&huge)
            .unwrap()
            .set_len(100 << 20)
            .unwrap();
        let started = Instant::now();
        let message = compile(&huge, &crate::SIMPSON, 90).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "the kernel source {} has 104857600 bytes; a kernel file has at most 4194304 (not compiled)",
                huge.display()
            )
        );
        assert!(started.elapsed() < Duration::from_secs(1));
        fs::remove_file(huge).unwrap();
        let output = run_bounded(
            Command::new("sh").args(["-c", "yes error | head -c 5000000; echo done >&2"]),
            Duration::from_secs(30),
        )
        .ok()
        .unwrap();
        assert_eq!(
            (output.stdout.len() as u64, output.stderr),
            (MAX_MESSAGE_BYTES, b"done\n".to_vec())
        );
    }

    #[test]
    fn a_gpu_newer_than_nvcc_knows_is_named_with_what_to_do() {
        let path = write("new.cu", "__global__ void k(float* x) { *x = 1; }\n");
        let message = compile(&path, &crate::SIMPSON, 990).unwrap_err().to_string();
        assert!(
            message.starts_with("this GPU is sm_990, and the nvcc found compiles for sm_1"),
            "{message}"
        );
        assert!(
            message.ends_with("at the newest: install a newer CUDA toolkit (or set NVCC)"),
            "{message}"
        );
        fs::remove_file(path).unwrap();
    }

    #[test]
    fn the_device_runtime_library_is_found_beside_nvcc() {
        let library = device_runtime_library().expect("the toolchain has libcudadevrt.a");
        assert!(
            library.ends_with("libcudadevrt.a") && library.is_file(),
            "{}",
            library.display()
        );
    }

    #[test]
    fn without_nvcc_the_error_says_how_to_get_one() {
        let message = CompileError::NoNvcc.to_string();
        assert!(
            message.starts_with("--kernel-source needs nvcc to compile the file, and none was found"),
            "{message}"
        );
        assert!(message.contains("bash scripts/cuda-toolchain.sh"), "{message}");
    }

    #[test]
    fn a_kernel_that_launches_kernels_is_linked_with_the_device_runtime() {
        let path = write(
            "child.cu",
            "__global__ void child(int* x) { *x = 1; }\n__global__ void parent(int* x) { child<<<1, 1>>>(x); }\n",
        );
        let image = compile(&path, &crate::ADAPTIVE_SIMPSON, 75).unwrap().image;
        assert!(image.linked_with_device_runtime && image.builds[0].image[..4] == [0x7F, b'E', b'L', b'F']);
        fs::remove_file(path).unwrap();
    }
}

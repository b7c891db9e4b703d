//! Helpers for the labs' tests: running a lab binary as a user would, and knowing whether this
//! machine has a GPU (CI has none; the GPU tests are `#[ignore]`d there and run by
//! `gpu-bundle/run.sh` with `--include-ignored` on a GPU machine).

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use crate::private_dir::PrivateDir;

/// What a lab run printed and how it ended.
#[derive(Debug)]
pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// The run failed with exit code 1 and exactly one line on stderr, `<lab>: error: ...`, that
    /// contains `needle`; no panic, no backtrace, no usage dump.
    pub fn is_one_line_error(&self, lab: &str, needle: &str) -> bool {
        let lines: Vec<&str> = self.stderr.lines().collect();
        self.code == Some(1)
            && lines.len() == 1
            && lines[0].starts_with(&format!("{lab}: error: "))
            && lines[0].contains(needle)
            && !self.stderr.contains("panicked")
    }
}

/// Runs `binary` with `args`, without a terminal.
pub fn run(binary: &str, args: &[&str]) -> Outcome {
    run_in(Path::new("."), binary, args)
}

/// Runs `binary` with `args` in the folder `dir`.
pub fn run_in(dir: &Path, binary: &str, args: &[&str]) -> Outcome {
    let output = Command::new(binary)
        .current_dir(dir)
        .args(args)
        .env("RUST_BACKTRACE", "1") // a panic would show a backtrace; the tests check there is none
        .output()
        .unwrap_or_else(|err| panic!("cannot start {binary}: {err}"));
    Outcome {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The lab binary `name` for a test: in `LAB_BIN_DIR` when set (gpu-bundle/run.sh sets it on the GPU
/// machine, where the test executables run without the cargo tree), else cargo's own (`built`, from
/// `env!("CARGO_BIN_EXE_<name>")`).
pub fn lab_binary(name: &str, built: &str) -> String {
    std::env::var_os("LAB_BIN_DIR").map_or(built.to_string(), |dir| Path::new(&dir).join(name).display().to_string())
}

/// A file of the repository (`assignments/...`, `kernels/cuda/...`), from the current folder when it is
/// the repository root (gpu-bundle/run.sh runs there), else from cargo's tree (`manifest_dir/..`).
pub fn repository_file(relative: &str, manifest_dir: &str) -> String {
    let here = Path::new(relative);
    if here.exists() {
        here.display().to_string()
    } else {
        Path::new(manifest_dir).join("..").join(relative).display().to_string()
    }
}

/// `LAB --kernel-source FILE [extra] --check`, as a student runs it: `lab` and `built` as for
/// [`lab_binary`], `file` as for [`repository_file`].
pub fn check_kernel_source(lab: &str, built: &str, manifest_dir: &str, file: &str, extra: &[&str]) -> Outcome {
    let file = repository_file(file, manifest_dir);
    let mut args = vec!["--kernel-source", file.as_str()];
    args.extend(extra);
    args.push("--check");
    run(&lab_binary(lab, built), &args)
}

/// The row of a `--check` table whose case contains `case` (the first such), for asserting on it.
pub fn check_row<'a>(stdout: &'a str, case: &str) -> &'a str {
    stdout.lines().find(|line| line.starts_with("| ") && line.contains(case)).unwrap_or_else(|| panic!("no row for {case:?} in\n{stdout}"))
}

/// Writes `text` to a fresh file `name` in a private temporary folder of this test process
/// ([`PrivateDir`]: no other account can guess or touch it) and returns its path.
pub fn temp_file(name: &str, text: &str) -> String {
    static DIR: OnceLock<PrivateDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| PrivateDir::new("cuda-labs-test").unwrap_or_else(|err| panic!("{err:#}"))).path();
    let path = dir.join(name);
    fs::write(&path, text).unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
    path.display().to_string()
}

/// True where the NVIDIA kernel driver lists a GPU. (Device nodes are no sign: installing Debian's
/// libcuda1 creates /dev/nvidiactl on machines without any GPU.)
pub fn machine_has_gpu() -> bool {
    fs::read_dir("/proc/driver/nvidia/gpus").is_ok_and(|gpus| gpus.count() > 0)
}

/// Asserts what a lab run without flags does on this machine: without a GPU, the one-line
/// "no usable CUDA GPU" error; with one, a verified run. It runs in a fresh folder, where default
/// output files (tracer.png) find no file to refuse to overwrite.
pub fn assert_default_run_suits_this_machine(binary: &str, lab: &str) {
    let dir = std::env::temp_dir().join(format!("{lab}-default-run-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap_or_else(|err| panic!("cannot create {}: {err}", dir.display()));
    let outcome = run_in(&dir, binary, &[]);
    let _ = fs::remove_dir_all(&dir);
    if machine_has_gpu() {
        assert_eq!(outcome.code, Some(0), "{outcome:?}");
        assert!(outcome.stdout.contains("Result = PASS"), "{outcome:?}");
    } else {
        assert!(outcome.is_one_line_error(lab, "no usable CUDA GPU (this lab needs an NVIDIA GPU and its driver): CUDA_ERROR_"), "{outcome:?}");
        // The machine's state, said in the driver's words, not as a failed call in our source.
        assert!(!outcome.stderr.contains(" failed at "), "{outcome:?}");
    }
}

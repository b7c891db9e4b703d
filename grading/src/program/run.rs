//! One case of a student's program: the program as a child process under our CUPTI recorder, in a
//! private folder of the case's own, with the same guards as a kernel's case: a process group of its
//! own (a stop ends whatever it started too), a time limit, stdout and stderr drained on threads and
//! kept in part, and results through files the check names and reads (never through what the
//! program prints). The recorder is preloaded so that it takes its settings out of the environment
//! before the program's `main` could read them ([`super::trace`] says why that matters).

use std::ffi::OsString;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::trace::{self, Trace};
use crate::case_process::stop_group;
use crate::output::{drain, Activity, Captured};

/// The trace's name in the case's folder.
pub const TRACE: &str = "trace.txt";

/// The largest trace read: a program of the week makes hundreds of records, each under 200 bytes.
const MAX_TRACE_BYTES: u64 = 64 << 20;

/// What a case's program left behind.
#[derive(Debug)]
pub struct Ran {
    pub stdout: Captured,
    pub stderr: Captured,
    /// `Ok` with the exit status, or why the program was stopped.
    pub ended: Result<ExitStatus, String>,
    /// The recorder's trace, or why there is none.
    pub trace: Result<Trace, String>,
    pub wall: Duration,
}

impl Ran {
    /// Why the run cannot be judged (it failed, was stopped or left no trace), if it cannot.
    pub fn fault(&self) -> Option<String> {
        match &self.ended {
            Err(why) => Some(why.clone()),
            Ok(status) if !status.success() => Some(format!(
                "{} ({status})",
                self.stderr
                    .last_line()
                    .unwrap_or("the program failed without a message")
            )),
            Ok(_) => self.trace.as_ref().err().cloned(),
        }
    }
}

/// Runs `program` with `arguments` in `dir` under `recorder`, stopped after `limit`.
pub fn run(program: &Path, recorder: &Path, arguments: &[OsString], dir: &Path, limit: Duration) -> Ran {
    use std::os::unix::process::CommandExt as _;
    let trace_path = dir.join(TRACE);
    let nonce = nonce();
    let started = Instant::now();
    let spawned = Command::new(program)
        .args(arguments)
        .current_dir(dir)
        .env("LD_PRELOAD", recorder)
        .env("CUDA_INJECTION64_PATH", recorder)
        .env("LAB_RECORDER_OUT", &trace_path)
        .env("LAB_RECORDER_NONCE", &nonce)
        // Every module loaded with the context, not at its kernel's first launch, which would sit in
        // the middle of the program's GPU time.
        .env("CUDA_MODULE_LOADING", "EAGER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => {
            return Ran {
                stdout: Captured::default(),
                stderr: Captured::default(),
                ended: Err(format!("cannot start the program: {err}")),
                trace: Err("no trace: the program did not start".to_string()),
                wall: started.elapsed(),
            }
        }
    };
    let activity = Arc::new(Activity::start());
    let stdout = child.stdout.take().map(|s| drain(s, Arc::clone(&activity), ""));
    let stderr = child.stderr.take().map(|s| drain(s, Arc::clone(&activity), ""));
    let ended = wait(&mut child, limit);
    let wall = started.elapsed();
    // Whatever it started and left behind goes too: nothing may write the trace after this.
    stop_group(&child);
    let joined = |handle: Option<std::thread::JoinHandle<Vec<Captured>>>| {
        handle
            .and_then(|h| h.join().ok())
            .and_then(|mut parts| parts.pop())
            .unwrap_or_default()
    };
    Ran {
        stdout: joined(stdout),
        stderr: joined(stderr),
        trace: read_trace(&trace_path, &nonce),
        ended,
        wall,
    }
}

fn wait(child: &mut std::process::Child, limit: Duration) -> Result<ExitStatus, String> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if started.elapsed() > limit => {
                stop_group(child);
                let _ = child.wait(); // reaped; how it ended no longer matters
                return Err(format!("still running after {} s; stopped", limit.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(err) => {
                stop_group(child);
                let _ = child.wait();
                return Err(format!("lost the program: {err}"));
            }
        }
    }
}

fn read_trace(path: &Path, nonce: &str) -> Result<Trace, String> {
    let mut text = String::new();
    let file = std::fs::File::open(path)
        .map_err(|_| "no trace: the program made no CUDA call, or left without exit() (a crash, _exit)".to_string())?;
    file.take(MAX_TRACE_BYTES)
        .read_to_string(&mut text)
        .map_err(|err| format!("cannot read the trace {}: {err}", path.display()))?;
    trace::parse(&text, nonce).map_err(|err| format!("the trace is not usable: {err:#}"))
}

/// 128 random bits as hex: the word the trace must carry.
fn nonce() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let word = || std::collections::hash_map::RandomState::new().build_hasher().finish();
    format!("{:016x}{:016x}", word(), word())
}

/// The file a program wrote, if it is exactly `bytes` long (read no further than that).
pub fn read_output(path: &Path, bytes: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|_| format!("the program wrote no {}", file_name(path)))?;
    let length = file.metadata().map_err(|err| err.to_string())?.len();
    if length != bytes {
        return Err(format!("{} has {length} bytes, not {bytes}", file_name(path)));
    }
    let mut data = Vec::with_capacity(bytes as usize);
    file.take(bytes)
        .read_to_end(&mut data)
        .map_err(|err| format!("cannot read {}: {err}", file_name(path)))?;
    Ok(data)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorder takes its settings out of the environment before `main`, so a program cannot
    /// learn where the trace goes or the word that vouches for it: neither `getenv` nor
    /// `/proc/self/environ` shows them. (No GPU here: without a CUDA call the recorder writes no
    /// trace, and the run says so.)
    #[test]
    fn a_program_under_the_recorder_cannot_read_its_settings() {
        let dir = kernels::private_dir::PrivateDir::new("recorder-test").unwrap();
        let source = dir.path().join("peek.cu");
        std::fs::write(
            &source,
            r#"#include "course_program.h"
#include <string>
int main() {
    std::FILE* file = std::fopen("/proc/self/environ", "rb");
    std::string environment;
    for (int c; file != nullptr && (c = std::fgetc(file)) != EOF;) environment += (char)c;
    const char* out = std::getenv("LAB_RECORDER_OUT");
    const char* nonce = std::getenv("LAB_RECORDER_NONCE");
    std::printf("getenv: %s %s; environ: %s; HOME kept: %s\n", out ? out : "none", nonce ? nonce : "none",
                environment.find("LAB_RECORDER") == std::string::npos ? "clean" : "shows them",
                std::getenv("HOME") ? "yes" : "no");
    return 0;
}
"#,
        )
        .unwrap();
        let program = kernels::runtime::compile_program(&source, &[super::super::HEADER], kernels::BUILT_ARCHS[0])
            .unwrap_or_else(|err| panic!("{err}"));
        let cupti = profiler::cupti::candidates()
            .into_iter()
            .find(|path| path.is_file())
            .expect("CUPTI");
        let recorder = kernels::runtime::compile_recorder(super::super::RECORDER, &cupti, program.dir.path())
            .unwrap_or_else(|err| panic!("{err}"));
        let ran = run(&program.executable, &recorder, &[], dir.path(), Duration::from_secs(60));
        assert!(matches!(&ran.ended, Ok(status) if status.success()), "{ran:?}");
        assert_eq!(
            ran.stdout.shown(),
            "getenv: none none; environ: clean; HOME kept: yes\n"
        );
        assert!(
            ran.trace.as_ref().is_err_and(|why| why.starts_with("no trace")),
            "{:?}",
            ran.trace
        );
        assert!(ran.fault().is_some_and(|why| why.starts_with("no trace")));
    }
}

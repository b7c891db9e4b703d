//! One case of a student's program: the program as a child process under our CUPTI recorder, in a
//! private folder of the case's own, with the same guards as a kernel's case: a process group of its
//! own (a stop ends whatever it started too), a time limit, stdout and stderr drained on threads and
//! kept in part, and results through files the check names and reads (never through what the
//! program prints). The recorder is preloaded so that it takes its settings out of the environment
//! before the program's `main` could read them ([`super::trace`] says why that matters), and writes
//! the trace into a pipe only the check reads: no file on disk for the program to rewrite after it,
//! and anything written after it makes the trace unusable. Both the pipe and the output must end
//! when the program does: a process it started that outlives it (out of its group, `setsid`) and
//! holds them is found that way and makes the case a fault. The run is timed from outside, spawn to
//! exit, and a trace that spans more than that is refused ([`Trace::within`]).

use std::ffi::OsString;
use std::io::Read as _;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use super::trace::{self, Trace};
use crate::case_process::stop_group;
use crate::output::{drain, Activity, Captured};

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
    /// The trace as the recorder wrote it, for `--chronograms` to keep (empty where there is none).
    pub trace_text: String,
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

/// Runs `program` with `arguments` in `dir` under `recorder`, in `boxed`, stopped after `limit`.
pub fn run(
    program: &Path,
    recorder: &Path,
    arguments: &[OsString],
    dir: &Path,
    limit: Duration,
    boxed: &sandbox::Sandbox,
) -> Ran {
    use std::os::unix::process::CommandExt as _;
    let nonce = nonce();
    let (trace_reader, trace_writer) = match trace_pipe() {
        Ok(ends) => ends,
        Err(err) => return not_started(format!("cannot make the trace's pipe: {err}")),
    };
    let mut command = Command::new(program);
    // The box first: it empties the environment, and the recorder's settings come after. Its
    // report is kept until the spawn has returned (the child writes into it), then dropped.
    let pending = match boxed.apply(&mut command) {
        Ok(pending) => pending,
        Err(err) => return not_started(err),
    };
    let spawned_at = Instant::now();
    let spawned = command
        .args(arguments)
        .current_dir(dir)
        .env("LD_PRELOAD", recorder)
        .env("CUDA_INJECTION64_PATH", recorder)
        .env("LAB_RECORDER_FD", trace_writer.as_raw_fd().to_string())
        .env("LAB_RECORDER_NONCE", &nonce)
        // Every module loaded with the context, not at its kernel's first launch, which would sit in
        // the middle of the program's GPU time.
        .env("CUDA_MODULE_LOADING", "EAGER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    drop(trace_writer); // the child's copy is the only one: the pipe ends when the program's do
    drop(pending);
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => return not_started(format!("cannot start the program: {err}")),
    };
    let trace = read_within(std::fs::File::from(trace_reader));
    let activity = Arc::new(Activity::start());
    let stdout = child.stdout.take().map(|s| drain(s, Arc::clone(&activity), ""));
    let stderr = child.stderr.take().map(|s| drain(s, Arc::clone(&activity), ""));
    let ended = wait(&mut child, limit);
    let wall = spawned_at.elapsed();
    // Whatever it started and left behind in its group goes too. Something that left the group
    // (setsid) and still holds a pipe is found below: its pipe does not end.
    stop_group(&child);
    let (stdout, stderr) = (joined(stdout), joined(stderr));
    let text = match trace.recv_timeout(PIPE_GRACE) {
        Ok(Ok(bytes)) if bytes.is_empty() => {
            Err("no trace: the program made no CUDA call, or left without exit() (a crash, _exit)".to_string())
        }
        Ok(Ok(bytes)) if bytes.len() as u64 > MAX_TRACE_BYTES => {
            Err(format!("the trace is over {MAX_TRACE_BYTES} bytes"))
        }
        Ok(Ok(bytes)) => String::from_utf8(bytes).map_err(|_| "the trace is not text".to_string()),
        Ok(Err(err)) => Err(format!("cannot read the trace: {err}")),
        Err(_) => Err(OPEN_AFTER_EXIT.to_string()),
    };
    let trace = text.as_deref().map_err(String::clone).and_then(|text| {
        trace::parse(text, &nonce)
            .and_then(|trace| trace.within(wall))
            .map_err(|err| format!("the trace is not usable: {err:#}"))
    });
    Ran {
        stdout: stdout.unwrap_or_else(|| captured_note(OPEN_AFTER_EXIT)),
        stderr: stderr.unwrap_or_else(|| captured_note(OPEN_AFTER_EXIT)),
        trace,
        trace_text: text.unwrap_or_default(),
        ended,
    }
}

/// How long the pipes may stay open after the program ended: its own ends close with it at once.
const PIPE_GRACE: Duration = Duration::from_secs(5);

/// Why a pipe did not end with the program.
const OPEN_AFTER_EXIT: &str = "a process the program started still held its pipes after it ended (a daemon?)";

/// The pipe the recorder writes the trace into: the read end the check's alone (close-on-exec), the
/// write end inherited by the program (and named to the recorder by its number).
fn trace_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut ends = [0; 2];
    // SAFETY: pipe(2) writes two new descriptors into `ends`, which we own from here on.
    if unsafe { libc::pipe(ends.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are open descriptors nothing else owns.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
    // SAFETY: fcntl(2) on a descriptor we own.
    if unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((reader, writer))
}

/// Reads `file` to its end (at most one byte past [`MAX_TRACE_BYTES`]) on a thread of its own.
fn read_within(file: std::fs::File) -> mpsc::Receiver<std::io::Result<Vec<u8>>> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = file.take(MAX_TRACE_BYTES + 1).read_to_end(&mut bytes).map(|_| bytes);
        let _ = send.send(read); // the check may have given up on it
    });
    receive
}

/// What a drained stream read, or `None` where it did not end within [`PIPE_GRACE`].
fn joined(handle: Option<std::thread::JoinHandle<Vec<Captured>>>) -> Option<Captured> {
    let handle = handle?;
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(handle.join().ok().and_then(|mut parts| parts.pop()).unwrap_or_default());
    });
    receive.recv_timeout(PIPE_GRACE).ok()
}

fn captured_note(note: &str) -> Captured {
    let mut captured = Captured::default();
    captured.push(note.as_bytes());
    captured.finish();
    captured
}

fn not_started(why: String) -> Ran {
    Ran {
        stdout: Captured::default(),
        stderr: Captured::default(),
        ended: Err(why),
        trace: Err("no trace: the program did not start".to_string()),
        trace_text: String::new(),
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

/// 64 bits no program can predict (the keys std draws from the OS for each hash map): for the word
/// the trace must carry, and for the samples a check looks at.
pub fn unpredictable() -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

/// 128 random bits as hex: the word the trace must carry.
fn nonce() -> String {
    format!("{:016x}{:016x}", unpredictable(), unpredictable())
}

/// The file a program wrote, if it is a plain file exactly `bytes` long (read no further than that).
pub fn read_output(path: &Path, bytes: u64) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    // Not through a link, and without waiting: a FIFO the program left there would block the open.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|_| format!("the program wrote no {} (or a link)", file_name(path)))?;
    let metadata = file.metadata().map_err(|err| err.to_string())?;
    if !metadata.is_file() {
        return Err(format!("{} is not a file", file_name(path)));
    }
    let length = metadata.len();
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
        let ran = ran_in_a_box(
            "peek.cu",
            r#"#include "course_program.h"
#include <string>
int main() {
    std::FILE* file = std::fopen("/proc/self/environ", "rb");
    std::string environment;
    for (int c; file != nullptr && (c = std::fgetc(file)) != EOF;) environment += (char)c;
    const char* out = std::getenv("LAB_RECORDER_FD");
    const char* nonce = std::getenv("LAB_RECORDER_NONCE");
    std::printf("getenv: %s %s; environ: %s; HOME kept: %s\n", out ? out : "none", nonce ? nonce : "none",
                environment.find("LAB_RECORDER") == std::string::npos ? "clean" : "shows them",
                std::getenv("HOME") ? "yes" : "no");
    return 0;
}
"#,
        );
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

    /// Issue 60: the recorder's word and pipe are sealed on a page of their own before `main`, so a
    /// program that searches every page it can read for the word (32 hex digits between NULs, as
    /// `assignments/05-streams/adversarial/forges-trace.cu` did) finds none. (No GPU here: the recorder
    /// takes and seals its settings whatever the program does; without the seal this finds the word.)
    #[test]
    fn a_program_cannot_find_the_recorders_word_in_its_memory() {
        let ran = ran_in_a_box(
            "search.cu",
            r#"#include "course_program.h"
#include <cstring>
static bool is_word(const char* at) {
    for (int i = 0; i < 32; ++i) {
        if (!std::strchr("0123456789abcdef", at[i]) || at[i] == 0) return false;
    }
    return at[-1] == 0 && at[32] == 0;
}
int main() {
    std::FILE* maps = std::fopen("/proc/self/maps", "r");
    char line[512];
    int words = 0, pages = 0;
    while (maps != nullptr && std::fgets(line, sizeof line, maps) != nullptr) {
        unsigned long start = 0, end = 0;
        char perms[8] = "";
        if (std::sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3) continue;
        if (perms[0] != 'r' || std::strstr(line, "[v") != nullptr) continue;
        ++pages;
        for (const char* at = (const char*)start + 1; at + 33 < (const char*)end; ++at) words += is_word(at);
    }
    std::printf("mappings read: %s; words: %d\n", pages > 10 ? "many" : "few", words);
    return 0;
}
"#,
        );
        assert_eq!(ran.stdout.shown(), "mappings read: many; words: 0\n");
    }

    /// Issue 60: `/proc/self/mem` and every thread's `mem` read and write any page, the sealed one
    /// included (`forges-trace.cu`'s second route); the box gives a program none of them. A thread
    /// started later, as the CUDA driver's are, can still be named: the recorder sends the name to
    /// /dev/null. (No GPU here; without the box's rules for /proc the first line shows "opened".)
    #[test]
    fn a_program_cannot_open_its_own_memory_and_its_threads_can_be_named() {
        let ran = ran_in_a_box(
            "memory.cu",
            r#"#include "course_program.h"
#include <string>
#include <thread>
#include <unistd.h>
static const char* tries(const std::string& path, const char* mode) {
    std::FILE* file = std::fopen(path.c_str(), mode);
    if (file == nullptr) return "refused";
    std::fclose(file);
    return "opened";
}
int main() {
    const std::string main_thread = "/proc/self/task/" + std::to_string(gettid());
    std::string seen = std::string("mem: ") + tries("/proc/self/mem", "r+b") + " " +
                       tries(main_thread + "/mem", "r+b") + " " + tries("/proc/thread-self/mem", "rb");
    std::thread([&] {
        const std::string own = "/proc/self/task/" + std::to_string(gettid());
        seen += std::string(" ") + tries(own + "/mem", "r+b") + "; a new thread's name: " + tries(own + "/comm", "w");
    }).join();
    std::printf("%s; maps: %s\n", seen.c_str(), tries("/proc/self/maps", "r"));
    return 0;
}
"#,
        );
        assert_eq!(
            ran.stdout.shown(),
            "mem: refused refused refused refused; a new thread's name: opened; maps: opened\n"
        );
    }

    /// `text` built as a program of the weeks ([`built`]) and run under the recorder in a week's box,
    /// which it must leave with exit code 0.
    fn ran_in_a_box(name: &str, text: &str) -> Ran {
        let (dir, program, recorder) = built(name, text);
        let ran = run(
            &program.executable,
            &recorder,
            &[],
            dir.path(),
            Duration::from_secs(60),
            &boxed(&dir, &program),
        );
        assert!(matches!(&ran.ended, Ok(status) if status.success()), "{ran:?}");
        ran
    }

    /// A week's policy for a program built by [`built`]: its folder, CUPTI's to read.
    fn week_policy(dir: &kernels::private_dir::PrivateDir, program: &kernels::runtime::Program) -> sandbox::Policy {
        let mut policy = sandbox::Policy::new(dir.path(), "/usr/bin:/bin");
        policy.execute = vec![program.dir.path().to_path_buf()];
        policy.read = profiler::cupti::candidates()
            .into_iter()
            .filter_map(|path| Some(path.canonicalize().ok()?.parent()?.to_path_buf()))
            .collect();
        policy
    }

    fn boxed(dir: &kernels::private_dir::PrivateDir, program: &kernels::runtime::Program) -> sandbox::Sandbox {
        sandbox::Sandbox::prepare(&week_policy(dir, program)).unwrap()
    }

    /// `text` built as a program of the weeks, and the recorder beside it, in a private folder.
    fn built(
        name: &str,
        text: &str,
    ) -> (
        kernels::private_dir::PrivateDir,
        kernels::runtime::Program,
        std::path::PathBuf,
    ) {
        let dir = kernels::private_dir::PrivateDir::new("recorder-test").unwrap();
        let source = dir.path().join(name);
        std::fs::write(&source, text).unwrap();
        let program = kernels::runtime::compile_program(&source, &[super::super::HEADER], kernels::BUILT_ARCHS[0])
            .unwrap_or_else(|err| panic!("{err}"));
        let cupti = profiler::cupti::candidates()
            .into_iter()
            .find(|path| path.is_file())
            .expect("CUPTI");
        let recorder = kernels::runtime::compile_recorder(super::super::RECORDER, &cupti, program.dir.path())
            .unwrap_or_else(|err| panic!("{err}"));
        (dir, program, recorder)
    }

    /// A program that leaves a process behind, trying to leave its group (setsid) and holding its
    /// pipes (where it could write after the recorder), does not hold up the check: the box's PID
    /// namespace ends it with the program. (Where a machine has no namespaces, the pipes that stay
    /// open make the case a fault instead: `OPEN_AFTER_EXIT`.) The box here lets it start the
    /// process, as a week's would not, to show that.
    #[test]
    fn a_process_left_behind_ends_with_the_program() {
        let text = "#include <unistd.h>\nint main() { int p[2]; if (pipe(p) != 0) return 1;\n\
            if (fork() == 0) { setsid(); if (write(p[1], \"x\", 1) != 1) return 1; sleep(60); return 0; }\n\
            char c; return read(p[0], &c, 1) == 1 ? 0 : 1; }\n";
        let (dir, program, recorder) = built("daemon.cu", text);
        let mut policy = week_policy(&dir, &program);
        policy.processes = true;
        let started = Instant::now();
        let boxed = sandbox::Sandbox::prepare(&policy).unwrap();
        let ran = run(
            &program.executable,
            &recorder,
            &[],
            dir.path(),
            Duration::from_secs(60),
            &boxed,
        );
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert!(matches!(&ran.ended, Ok(status) if status.success()), "{ran:?}");
        assert!(ran.fault().is_some_and(|why| why.starts_with("no trace")), "{ran:?}");
    }

    #[test]
    fn an_output_that_is_no_plain_file_is_refused_without_blocking() {
        let dir = kernels::private_dir::PrivateDir::new("output-test").unwrap();
        let fifo = dir.path().join("output.bin");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a NUL-terminated path in our private folder.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert_eq!(read_output(&fifo, 4), Err("output.bin is not a file".to_string()));
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("link.bin")).unwrap();
        assert!(read_output(&dir.path().join("link.bin"), 4)
            .unwrap_err()
            .contains("or a link"));
        std::fs::write(dir.path().join("short.bin"), [0u8; 3]).unwrap();
        assert_eq!(
            read_output(&dir.path().join("short.bin"), 4),
            Err("short.bin has 3 bytes, not 4".to_string())
        );
    }
}

//! One GPU shared by several checks at once (issue 65: a class graded in minutes): with `--jobs`
//! above the GPUs' count the grader runs several labs per GPU, so that nvcc compiles some submissions
//! while the GPU runs the others' cases, and this lock keeps the GPU's timed work apart. A case's time
//! is compared with ours, and a kernel sharing the GPU with another check's would be timed slow for
//! nothing; compute-sanitizer's findings do not depend on who else runs. ncu's counters would not
//! either, but ncu itself does not share: with 16 checks on one H200 whose ncu runs shared it, the
//! three that ended within 550 s took 202 to 214 s each and their counts were FAULT (issue 65, run 3),
//! so ncu runs alone too.
//!
//! So it is a reader-writer lock per GPU: [`Mode::Exclusive`] for the timed work and ncu, alone on the
//! GPU; [`Mode::Shared`] for compute-sanitizer, beside other such work. The
//! grader names the lock file in [`ENV`] (one file per GPU, in a private folder of its grading run);
//! where it is unset (a student's own `--check`, the course server's one worker per GPU) nothing is
//! locked and every guard holds nothing.
//!
//! The lock is `flock(2)` on two files: the lock file and a turnstile beside it (the same path with
//! [`TURNSTILE`] added). `flock` alone lets readers come and go for ever while a writer waits; here a
//! writer takes the turnstile first and keeps it until it has the lock, and a reader passes through
//! the turnstile (takes it and lets go at once) before it takes its share, so that once a writer
//! waits, no new reader gets in ahead of it. A flock belongs to an open file description: each guard
//! opens the files itself, so guards exclude each other across threads of one process as across
//! processes, and the files are opened close-on-exec, so that no child of the lab (a case, a
//! sanitizer) inherits a lock and keeps it past its guard.
//!
//! A guard must not be taken while the same thread holds another one: a reader waiting at the
//! turnstile behind a writer that waits for the first guard would wait for ever.
//!
//! The time a process waits for the lock is added up ([`waited`]) and does not count against its
//! `--time-limit` ([`Deadline::passed`]): a check among many on one GPU gets the time it would get
//! alone, and the same verdicts.
//!
//! [`Deadline::passed`]: crate::case_process::Deadline::passed

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

/// The variable that names the lock file of this lab's GPU (`LAB_GPU_LOCK`): the grader sets it per
/// job, and names it once for both.
pub const ENV: &str = grader::lab::GPU_LOCK_ENV;

/// The nanoseconds this process has waited for the lock, all guards together.
static WAITED: AtomicU64 = AtomicU64::new(0);

/// How long this process has waited for the lock, all its guards together (zero where no lock file
/// is named): the pause in its `--time-limit`.
pub fn waited() -> Duration {
    Duration::from_nanos(WAITED.load(Ordering::Relaxed))
}

/// What the turnstile's path adds to the lock file's.
pub const TURNSTILE: &str = ".turnstile";

/// How the GPU is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Alone: work whose time is measured (a check's plain cases, a program week's runs) and ncu.
    Exclusive,
    /// Beside other shared holders, never beside an exclusive one: work whose results are findings
    /// (compute-sanitizer's tools).
    Shared,
}

/// The GPU held until the guard is dropped; a guard that holds nothing where no lock file is named.
#[derive(Debug)]
#[must_use = "the GPU is held only while the guard lives"]
pub struct Guard {
    file: Option<File>,
}

impl Guard {
    /// Whether this guard holds a lock (false where [`ENV`] names none).
    pub fn holds(&self) -> bool {
        self.file.is_some()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(file) = &self.file {
            // SAFETY: flock(2) takes the descriptor of a file this guard owns and open until after
            // this call; it reads and writes none of our memory. Closing the file would release the
            // lock too; unlocking first says so, and a failure leaves the close to do it.
            unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
        }
    }
}

/// The GPU held in `mode`, on the lock file [`ENV`] names (none where it is unset or empty: a guard
/// that holds nothing). Blocks until the GPU is held, and adds the wait to [`waited`]; an error (a
/// file that cannot be opened or locked) names the file.
pub fn lock(mode: Mode) -> Result<Guard> {
    let named = std::env::var_os(ENV).filter(|path| !path.is_empty());
    counted(named.as_deref().map(Path::new), mode)
}

/// Whether a lock file is named ([`ENV`]): whether this lab shares its GPU with other checks.
pub fn named() -> bool {
    std::env::var_os(ENV).is_some_and(|path| !path.is_empty())
}

/// The GPU held alone, for timed work ([`Mode::Exclusive`]).
pub fn exclusive() -> Result<Guard> {
    lock(Mode::Exclusive)
}

/// The GPU held beside other shared holders, for findings ([`Mode::Shared`]).
pub fn shared() -> Result<Guard> {
    lock(Mode::Shared)
}

/// [`lock`] on the lock file `path` (none: nothing held), the wait added to [`waited`].
fn counted(path: Option<&Path>, mode: Mode) -> Result<Guard> {
    let Some(path) = path else {
        return Ok(Guard { file: None });
    };
    let started = Instant::now();
    let guard = lock_at(path, mode);
    let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    WAITED.fetch_add(nanos, Ordering::Relaxed);
    guard
}

/// The lock on `path` taken in `mode`: the turnstile, then the lock file. Not counted in [`waited`]
/// (the tests, whose waits are no check's).
fn lock_at(path: &Path, mode: Mode) -> Result<Guard> {
    let turnstile = turnstile_of(path);
    let gate = open(&turnstile)?;
    flock(&gate, libc::LOCK_EX, &turnstile)?;
    // A writer keeps the turnstile until it holds the lock, so that readers who come later wait
    // behind it; a reader only passes through (no writer waits at the turnstile now).
    let (gate, operation) = match mode {
        Mode::Exclusive => (Some(gate), libc::LOCK_EX),
        Mode::Shared => {
            drop(gate);
            (None, libc::LOCK_SH)
        }
    };
    let main = open(path)?;
    flock(&main, operation, path)?;
    // Dropping the turnstile's file unlocks it: the next one may come in.
    drop(gate);
    Ok(Guard { file: Some(main) })
}

/// The turnstile beside the lock file `path`.
pub fn turnstile_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(TURNSTILE);
    PathBuf::from(name)
}

/// `path` opened for locking: made (private, 0600) where missing, never truncated; close-on-exec, as
/// std opens every file.
fn open(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("opening the GPU lock {}", path.display()))
}

/// `flock(2)` with `operation` on `file` (at `path`, for the message), again where a signal broke the
/// wait.
fn flock(file: &File, operation: libc::c_int, path: &Path) -> Result<()> {
    loop {
        // SAFETY: flock(2) takes the descriptor of `file`, which is open for the whole call; it reads
        // and writes none of our memory.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err).with_context(|| format!("locking the GPU lock {}", path.display()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// A folder of its own for each test, removed at the end.
    struct Folder(PathBuf);

    impl Folder {
        fn new(name: &str) -> Folder {
            let dir = std::env::temp_dir().join(format!("gpu-lock-test-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir(&dir).unwrap();
            Folder(dir)
        }

        fn lock(&self) -> PathBuf {
            self.0.join("gpu-0.lock")
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Takes the lock in `mode` on a thread of its own and says so on the channel; the guard is kept
    /// until `release` says.
    fn taker(path: PathBuf, mode: Mode) -> (mpsc::Receiver<()>, mpsc::Sender<()>, std::thread::JoinHandle<()>) {
        let (held_tx, held_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let guard = lock_at(&path, mode).unwrap();
            assert!(guard.holds());
            held_tx.send(()).unwrap();
            let _ = release_rx.recv();
            drop(guard);
        });
        (held_rx, release_tx, thread)
    }

    const WAIT: Duration = Duration::from_millis(300);
    const LONG: Duration = Duration::from_secs(20);

    #[test]
    fn an_exclusive_holder_keeps_a_shared_one_out_until_dropped() {
        let folder = Folder::new("exclusive");
        let exclusive = lock_at(&folder.lock(), Mode::Exclusive).unwrap();
        assert!(exclusive.holds());
        let (held, release, thread) = taker(folder.lock(), Mode::Shared);
        assert!(held.recv_timeout(WAIT).is_err(), "a reader got in beside the writer");
        drop(exclusive);
        held.recv_timeout(LONG)
            .expect("the reader gets in once the writer is gone");
        release.send(()).unwrap();
        thread.join().unwrap();
    }

    #[test]
    fn a_shared_holder_keeps_an_exclusive_one_out_and_others_share() {
        let folder = Folder::new("shared");
        let first = lock_at(&folder.lock(), Mode::Shared).unwrap();
        let second = lock_at(&folder.lock(), Mode::Shared).unwrap();
        assert!(first.holds() && second.holds(), "two readers at once");
        let (held, release, thread) = taker(folder.lock(), Mode::Exclusive);
        assert!(held.recv_timeout(WAIT).is_err(), "a writer got in beside the readers");
        drop(first);
        assert!(held.recv_timeout(WAIT).is_err(), "a writer got in beside a reader");
        drop(second);
        held.recv_timeout(LONG)
            .expect("the writer gets in once the readers are gone");
        release.send(()).unwrap();
        thread.join().unwrap();
    }

    /// Another process (util-linux's flock(1), where it is installed) sees the lock too.
    #[test]
    fn another_process_is_kept_out() {
        let folder = Folder::new("process");
        let try_shared = || {
            std::process::Command::new("flock")
                .args(["--nonblock", "--shared"])
                .arg(folder.lock())
                .arg("true")
                .status()
        };
        let exclusive = lock_at(&folder.lock(), Mode::Exclusive).unwrap();
        let Ok(status) = try_shared() else { return }; // no flock(1) here
        assert!(!status.success(), "another process got a share beside the writer");
        drop(exclusive);
        assert!(try_shared().unwrap().success());
        let shared = lock_at(&folder.lock(), Mode::Shared).unwrap();
        assert!(try_shared().unwrap().success(), "readers share across processes");
        drop(shared);
    }

    /// A waiting writer goes before readers that come after it: the turnstile.
    #[test]
    fn a_waiting_writer_goes_before_later_readers() {
        let folder = Folder::new("turnstile");
        let reader = lock_at(&folder.lock(), Mode::Shared).unwrap();
        let (writer_held, writer_release, writer) = taker(folder.lock(), Mode::Exclusive);
        // The writer waits at the lock with the turnstile taken.
        let gate = open(&turnstile_of(&folder.lock())).unwrap();
        let deadline = std::time::Instant::now() + LONG;
        loop {
            // SAFETY: flock(2) on the descriptor of `gate`, open for the whole call; no memory of ours.
            if unsafe { libc::flock(gate.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                break;
            }
            // SAFETY: as above; the test took the turnstile before the writer did, and gives it back.
            unsafe { libc::flock(gate.as_raw_fd(), libc::LOCK_UN) };
            assert!(
                std::time::Instant::now() < deadline,
                "the writer never took the turnstile"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let (later_held, later_release, later) = taker(folder.lock(), Mode::Shared);
        assert!(
            later_held.recv_timeout(WAIT).is_err(),
            "a later reader got in ahead of the writer"
        );
        drop(reader);
        writer_held
            .recv_timeout(LONG)
            .expect("the writer gets in once the first reader is gone");
        assert!(
            later_held.recv_timeout(WAIT).is_err(),
            "a reader got in beside the writer"
        );
        writer_release.send(()).unwrap();
        writer.join().unwrap();
        later_held
            .recv_timeout(LONG)
            .expect("the later reader gets in after the writer");
        later_release.send(()).unwrap();
        later.join().unwrap();
    }

    #[test]
    fn no_lock_file_holds_nothing() {
        assert!(!counted(None, Mode::Exclusive).unwrap().holds());
        assert!(!counted(None, Mode::Shared).unwrap().holds());
        // The tests run without the grader: LAB_GPU_LOCK is unset, and nothing is locked.
        if std::env::var_os(ENV).is_none() {
            let (first, second) = (exclusive().unwrap(), exclusive().unwrap());
            assert!(!first.holds() && !second.holds());
            assert!(!shared().unwrap().holds());
        }
    }

    #[test]
    fn the_files_are_private_kept_and_named_in_errors() {
        use std::os::unix::fs::PermissionsExt as _;
        let folder = Folder::new("files");
        std::fs::write(folder.lock(), "kept").unwrap();
        drop(lock_at(&folder.lock(), Mode::Exclusive).unwrap());
        assert_eq!(
            std::fs::read_to_string(folder.lock()).unwrap(),
            "kept",
            "never truncated"
        );
        let turnstile = turnstile_of(&folder.lock());
        assert_eq!(turnstile, folder.0.join("gpu-0.lock.turnstile"));
        let mode = std::fs::metadata(&turnstile).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "made private");
        let missing = folder.0.join("no-such-folder/gpu-0.lock");
        let err = lock_at(&missing, Mode::Shared).unwrap_err();
        assert!(format!("{err:#}").contains(&missing.display().to_string()), "{err:#}");
    }
}

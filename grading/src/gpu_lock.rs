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
//! GPU; [`Mode::Shared`] for compute-sanitizer, beside other such work.
//!
//! A check's children take it themselves, only for that work: a case each of its timed loops
//! ([`time_alone`]: from a kernel's warm-up to its timed launch's end) and, shared, its untimed
//! launches of the student's kernel, a case under compute-sanitizer its run (lab-mmm's: each of its
//! launches, [`launches_beside`]), the measured child its
//! run from before the week's first launch to after its last ([`crate::measure::alone`]: not while
//! ncu starts, prepares its first launch or writes its report). Process starts, the
//! CUDA contexts, the CPU's products, fresh inputs drawn, outputs checked and ncu's own work run
//! beside other checks: in
//! run 10 of issue 65 a week-3 check of an honest kernel held an H200 alone for 4.7 s of its 6.9 s,
//! taken in the parent around whole phases, while nvidia-smi saw a kernel running less than a tenth
//! of the time. Each hold is a [`Lease`], given back after a bound however long a kernel runs. The
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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use crate::exit::on_the_machine;

/// The variable that names the lock file of this lab's GPU (`LAB_GPU_LOCK`): the grader sets it per
/// job, and names it once for both.
pub const ENV: &str = grader::lab::GPU_LOCK_ENV;

/// The nanoseconds this process has waited for other checks' work: the GPU's lock, and where it
/// measures, the metric set and its turn with ncu ([`waiting`]).
static WAITED: AtomicU64 = AtomicU64::new(0);

/// The nanoseconds this process has held the GPU alone, all exclusive guards together.
static HELD: AtomicU64 = AtomicU64::new(0);

/// When each exclusive guard of this process still held got the GPU: a program week's check writes
/// its phases while its guard still holds the GPU.
static LIVE: Mutex<Vec<Instant>> = Mutex::new(Vec::new());

/// How long this process (and the children it added: [`add_child`]) has held the GPU alone, guards
/// still held included: what a check costs the others on its GPU ([`crate::phases`]).
pub fn held() -> Duration {
    let live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    Duration::from_nanos(HELD.load(Ordering::Relaxed)) + live.iter().map(Instant::elapsed).sum::<Duration>()
}

/// `took` in nanoseconds, for the counters.
fn nanos(took: Duration) -> u64 {
    u64::try_from(took.as_nanos()).unwrap_or(u64::MAX)
}

/// How long this process has waited for other checks' work ([`WAITED`]; zero where no lock file is
/// named): the pause in its `--time-limit`.
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
    /// When an exclusive guard got the GPU: its hold is added to [`held`] when it ends.
    alone_since: Option<Instant>,
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
        if let Some(since) = self.alone_since {
            let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
            forget(&mut live, since);
            HELD.fetch_add(nanos(since.elapsed()), Ordering::Relaxed);
            drop(live);
            report_waits(false);
        }
    }
}

/// `since` taken off the exclusive guards still held ([`LIVE`]).
fn forget(live: &mut Vec<Instant>, since: Instant) {
    if let Some(at) = live.iter().position(|&other| other == since) {
        live.swap_remove(at);
    }
}

/// The GPU held in `mode`, on the lock file [`ENV`] names (none where it is unset or empty: a guard
/// that holds nothing). Blocks until the GPU is held, and adds the wait to [`waited`]; an error (a
/// file that cannot be opened or locked) names the file.
pub fn lock(mode: Mode) -> Result<Guard> {
    counted(path().as_deref(), mode)
}

/// Whether a lock file is named ([`ENV`]): whether this lab shares its GPU with other checks.
pub fn named() -> bool {
    path().is_some()
}

/// The lock file [`ENV`] names, where it names one: in a private folder of the grading run, one per
/// GPU, so that what the checks on one GPU share can lie beside it ([`crate::measure::Ours`]).
pub fn path() -> Option<PathBuf> {
    std::env::var_os(ENV).filter(|path| !path.is_empty()).map(PathBuf::from)
}

/// `path` (made where missing) held with an exclusive `flock(2)` until the file returned is dropped:
/// one process at a time for work that is not the GPU's (one measurement of ours per grading run).
/// The wait is added to [`waited`]: another check's work, which does not count against this one's
/// `--time-limit`.
pub fn one_at_a_time(path: &Path) -> Result<File> {
    waiting(|| {
        let file = open(path)?;
        flock(&file, libc::LOCK_EX, path)?;
        Ok(file)
    })
}

/// What the file that gives measured runs their turn on a GPU ([`ncu_turn`]) adds to its lock file's.
pub const NCU_TURN: &str = ".ncu";

/// In a measured child where checks share the GPU (none elsewhere): its turn with ncu on this GPU,
/// from before ncu's first launch ([`crate::measure::first_launch`]) to after its context is
/// destroyed, one measured child at a time ([`one_at_a_time`], the wait counted). Why (issue 65,
/// run 55, `/proc/locks`): ncu keeps the GPU's counters for one process at a time with a lock of its
/// own, which a process gives up after its first launch where others wait for it, and must then take
/// again (with 1 to 3 s more of ncu's work) for its next launches: 16 jobs kept that lock busy 80%
/// of the time, each child holding it twice. Taken in turn here, nobody waits for ncu's lock (run
/// 56). The holder is held to its child's limits, which the first launch counts against. Taken
/// after the child's context is made and before the GPU ([`Mode::Exclusive`]), never while the GPU
/// is held.
pub fn ncu_turn() -> Result<Option<File>> {
    if TURN_HELD.load(Ordering::Relaxed) {
        return Ok(None);
    }
    path().map(|path| one_at_a_time(&beside(&path, NCU_TURN))).transpose()
}

/// Whether this process holds its turn with ncu for all its measured runs ([`hold_ncu_turn`]).
static TURN_HELD: AtomicBool = AtomicBool::new(false);

/// In a batch of measured runs (`crate::ncu_batch::serve`): the turn with ncu ([`ncu_turn`]) for
/// the whole batch, until the file returned is dropped at its end; its runs take no turn of their
/// own. Why: ncu keeps its lock after a process's launches unless another process waits for it
/// then, so a batch that gave its turn back between two runs could leave a measured child that took
/// the turn waiting for ncu's lock, and itself waiting for the turn, until the child's silence limit
/// ended it.
pub fn hold_ncu_turn() -> Result<Option<File>> {
    let turn = ncu_turn()?;
    TURN_HELD.store(true, Ordering::Relaxed);
    Ok(turn)
}

/// The file, in the folder of the grading run's lock files, that keeps its measured runs of different
/// metrics apart ([`metric_set`]).
pub const METRIC_SET: &str = "metric-set.lock";

/// A measured run under ncu, from before ncu starts to its end, kept apart from the grading run's
/// others that read other metrics, on any of its GPUs (one file for them all: runs of other metrics
/// were only seen to stall each other on one GPU): one that reads the week's usual metrics in
/// [`Mode::Shared`], beside other such runs; one that reads others (a student's TMA copies:
/// [`crate::measure::OptionalMetric`]) in [`Mode::Exclusive`], with no other measured run alive.
/// Why (issue 65): where runs of different metrics were alive at once (run 44, `--jobs 16`), a
/// student's run of TMA's bytes held the GPU for a launch that did not end while the others waited
/// for the GPU between their launches, until the GPU's lease ended, 60 s; kept apart (run 47), the
/// same student's run held it 5.94 s. ncu's preparations of a process's first launch wait for each
/// other (run 45). Not a hold of the GPU ([`held`]); the wait counts as a wait for it ([`waited`]).
/// Nothing where no lock file is named; never taken by a thread that holds the GPU.
pub fn metric_set(mode: Mode) -> Result<Guard> {
    let path = path().map(|path| path.with_file_name(METRIC_SET));
    metric_set_at(path.as_deref(), mode)
}

/// [`metric_set`] on the file `path` (none: nothing held).
fn metric_set_at(path: Option<&Path>, mode: Mode) -> Result<Guard> {
    let mut guard = counted(path, mode)?;
    if let Some(since) = guard.alone_since.take() {
        forget(&mut LIVE.lock().unwrap_or_else(PoisonError::into_inner), since);
    }
    Ok(guard)
}

/// The GPU held alone, for timed work ([`Mode::Exclusive`]).
pub fn exclusive() -> Result<Guard> {
    lock(Mode::Exclusive)
}

/// [`lock`] on the lock file `path` (none: nothing held), the wait counted ([`waiting`]).
fn counted(path: Option<&Path>, mode: Mode) -> Result<Guard> {
    let Some(path) = path else {
        return Ok(Guard {
            file: None,
            alone_since: None,
        });
    };
    waiting(|| lock_at(path, mode))
}

/// `wait()`, a wait for other checks' work on the GPU: its time added to [`waited`] and, in a check's
/// child, reported to its parent ([`WAITS_ENV`]) as it begins and as it ends, so that it counts
/// neither as the child's silence nor against the check's limits. Only for locks, each of whose
/// holders is held to limits of its own (a lease, or its child's limits): a wait that may never end
/// would stop the class.
pub fn waiting<R>(wait: impl FnOnce() -> R) -> R {
    let started = Instant::now();
    report_waits(true);
    let waited = wait();
    WAITED.fetch_add(nanos(started.elapsed()), Ordering::Relaxed);
    report_waits(false);
    waited
}

/// Takes `own` back out of [`waited`]: time within a wait that was this process's own work (its
/// measured run in a batch that another check led, `crate::ncu_batch`), which counts against its
/// `--time-limit` as it would have measured alone.
pub fn not_a_wait(own: Duration) {
    let _ = WAITED.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |waited| {
        Some(waited.saturating_sub(nanos(own)))
    });
}

/// Adds a check's child that ended ([`Waits::read`]) to [`waited`] and [`held`], so that the check's
/// `--time-limit` and its phases count them as its own.
pub fn add_child(child: &Waits) {
    WAITED.fetch_add(nanos(child.total()), Ordering::Relaxed);
    HELD.fetch_add(nanos(child.held), Ordering::Relaxed);
}

/// The variable naming the file in which a check's child reports its waits for the GPU
/// (`LAB_GPU_WAITS`), set by the parent for each child it starts where a lock file is named: the time
/// a child waits while other checks hold the GPU counts neither as its silence nor against its limits
/// ([`crate::case_process`]), as the parent's own waits do not count against its `--time-limit`.
pub const WAITS_ENV: &str = "LAB_GPU_WAITS";

/// A child's waits for the GPU as its parent reads them ([`WAITS_ENV`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Waits {
    /// The waits that ended, together.
    pub ended: Duration,
    /// How long the wait going on now has lasted (zero where none does).
    pub now: Duration,
    /// How long ago the last wait began or ended (none where no wait was reported).
    pub since_last: Option<Duration>,
    /// How long the child has held the GPU alone.
    pub held: Duration,
}

impl Waits {
    /// What the child at `path` reported; nothing where it reported nothing (or nothing readable: a
    /// file is replaced whole, never written in place).
    pub fn read(path: &Path) -> Waits {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let numbers: Vec<u64> = text.split_whitespace().filter_map(|word| word.parse().ok()).collect();
        let [ended_ns, waiting_since_ms, last_ms, held_ns] = numbers[..] else {
            return Waits::default();
        };
        let now_ms = monotonic_ms();
        let ago = |ms: u64| Duration::from_millis(now_ms.saturating_sub(ms));
        Waits {
            ended: Duration::from_nanos(ended_ns),
            now: if waiting_since_ms == 0 {
                Duration::ZERO
            } else {
                ago(waiting_since_ms)
            },
            since_last: Some(ago(last_ms)),
            held: Duration::from_nanos(held_ns),
        }
    }

    /// The waits so far, the one going on included.
    pub fn total(&self) -> Duration {
        self.ended + self.now
    }
}

/// Milliseconds on the machine's monotonic clock (`CLOCK_MONOTONIC`): the clock both a child and its
/// parent read, which a step of the wall clock does not move.
fn monotonic_ms() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime(2) writes one timespec into `now`, which lives for the whole call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let seconds = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(now.tv_nsec).unwrap_or(0);
    seconds.saturating_mul(1000).saturating_add(nanos / 1_000_000)
}

/// Writes this process's waits to the file [`WAITS_ENV`] names, where it names one: the ended waits'
/// nanoseconds, when the wait now going on began (0: none) and when this report was made, in ms of
/// [`monotonic_ms`], and the nanoseconds it held the GPU alone. Written beside and renamed over the
/// file, so that the parent never reads half of it.
fn report_waits(waiting: bool) {
    /// One report at a time: a lease's keeper thread reports as its guard ends, beside the thread
    /// that waits for the next.
    static REPORTING: Mutex<()> = Mutex::new(());
    let Some(path) = std::env::var_os(WAITS_ENV).filter(|path| !path.is_empty()) else {
        return;
    };
    let _one = REPORTING.lock().unwrap_or_else(PoisonError::into_inner);
    let now = monotonic_ms();
    let (waited, held) = (WAITED.load(Ordering::Relaxed), HELD.load(Ordering::Relaxed));
    let line = format!("{waited} {} {now} {held}\n", if waiting { now } else { 0 });
    let mut partial = path.clone();
    partial.push(".partial");
    // A report that cannot be written leaves the last one: the case is then only held to its limits.
    if std::fs::write(&partial, line).is_ok() {
        let _ = std::fs::rename(&partial, &path);
    }
}

/// How long a check's case holds the GPU at most for one timed loop ([`time_alone`]: a kernel's
/// warm-up and timed launch, their inputs written) before it lets go and goes on beside the others: a
/// kernel that runs that long is no match for ours whatever its neighbours, and held longer it stops
/// the class behind it (issue 65, run 2: 15 checks waited two minutes and more for one that printed
/// from every thread). On an H200 a loop of ours or of a student's honest kernel takes milliseconds.
pub const TIMED_AT_MOST: Duration = Duration::from_secs(5);

/// How long a case under compute-sanitizer, which slows a kernel down 10 to 100 times, holds the GPU
/// at most beside other such runs (lab-mmm's: each of its launches); also a case's untimed launches
/// of the student's kernel ([`Lease::shared`]).
pub const SANITIZED_AT_MOST: Duration = Duration::from_secs(10);

/// The GPU held in one mode for at most a given time: given back when the lease is dropped, in the
/// thread that drops it, or by a thread of its own once the time has passed, whichever comes first.
/// The thread that drops it gives the GPU back itself, without waiting for another to be scheduled:
/// with 16 checks on 16 cores, a case's timed loops hold the GPU hundreds of times a check.
#[must_use = "the GPU is held only while the lease lives"]
pub struct Lease {
    /// The guard, taken by whichever ends the lease first (none where nothing is held).
    guard: Arc<Mutex<Option<Guard>>>,
    /// Dropped to wake the thread that would end the lease when its time is up.
    end: Option<mpsc::Sender<()>>,
}

impl Lease {
    /// The GPU held in `mode` (a wait for it counted: [`lock`]) for at most `at_most`.
    pub fn take(mode: Mode, at_most: Duration) -> Result<Lease> {
        Ok(Lease::keep(lock(mode)?, at_most))
    }

    /// The GPU held shared, beside other checks' untimed work (compute-sanitizer's runs, a case's
    /// untimed launches of the student's kernel), for [`SANITIZED_AT_MOST`] at most; a lock that
    /// cannot be taken is the machine's error.
    pub fn shared() -> Result<Lease> {
        on_the_machine(Lease::take(Mode::Shared, SANITIZED_AT_MOST))
    }

    /// `guard` kept for at most `at_most` (nothing kept where it holds nothing).
    fn keep(guard: Guard, at_most: Duration) -> Lease {
        if !guard.holds() {
            return Lease {
                guard: Arc::new(Mutex::new(None)),
                end: None,
            };
        }
        let guard = Arc::new(Mutex::new(Some(guard)));
        let (end, ended) = mpsc::channel::<()>();
        let kept = Arc::clone(&guard);
        // Not joined: once the lease is dropped it only wakes up and ends.
        std::thread::spawn(move || {
            if ended.recv_timeout(at_most) == Err(mpsc::RecvTimeoutError::Timeout) {
                drop(kept.lock().unwrap_or_else(PoisonError::into_inner).take());
            }
        });
        Lease { guard, end: Some(end) }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        drop(self.guard.lock().unwrap_or_else(PoisonError::into_inner).take());
        drop(self.end.take());
    }
}

/// The keeper of a check's case process ([`common::timing::alone`]): each timed loop holds the GPU
/// alone for [`TIMED_AT_MOST`] at most, and untimed launches of the student's kernel hold it shared,
/// beside other checks' such launches and compute-sanitizer's runs, for [`SANITIZED_AT_MOST`] at
/// most; a lock that cannot be taken is the machine's error.
struct TimedAlone;

impl common::timing::alone::Keeper for TimedAlone {
    fn hold(&self) -> Result<Box<dyn Send>> {
        let lease = on_the_machine(Lease::take(Mode::Exclusive, TIMED_AT_MOST))?;
        Ok(Box::new(lease))
    }

    fn beside(&self) -> Result<Box<dyn Send>> {
        shared_lease()
    }
}

/// [`Lease::shared`], as a keeper hands it out.
fn shared_lease() -> Result<Box<dyn Send>> {
    Ok(Box::new(Lease::shared()?))
}

/// In a check's case process that holds nothing else (not under compute-sanitizer, not the measured
/// child: a second hold in one process would wait for the first): every timed loop from now on holds
/// the GPU alone, its untimed launches of the student's kernel hold it shared, and nothing else of
/// the case does. Nothing where no lock file is named.
pub fn time_alone() {
    if named() {
        common::timing::alone::install(&TimedAlone);
    }
}

/// The keeper of a check's case process under compute-sanitizer whose case holds the GPU around
/// each of its launches ([`launches_beside`]): every hold shared. Nothing is timed under the
/// sanitizer (`crate::times::CaseContext::time`), so only untimed launches come here; a timed loop
/// would be held shared too.
struct SanitizedBeside;

impl common::timing::alone::Keeper for SanitizedBeside {
    fn hold(&self) -> Result<Box<dyn Send>> {
        shared_lease()
    }

    fn beside(&self) -> Result<Box<dyn Send>> {
        shared_lease()
    }
}

/// In a check's case process under compute-sanitizer whose case holds the GPU around each of its
/// launches (`crate::kernel_week::KernelWeek::holds_its_launches`: lab-mmm), and that holds nothing
/// else: each of them holds it shared, beside other sanitized runs and untimed launches, never
/// beside a timed loop, for [`SANITIZED_AT_MOST`] at most (each, as the whole case otherwise); the
/// sanitizer's start, its instrumented load of the student's module, the CPU's product and checks,
/// and the case's copies and memsets (microseconds of the GPU, as in a case not under the
/// sanitizer) hold nothing. Why (issue 65): held for its whole run, each race
/// case under racecheck and under synccheck held the GPU shared, and while it did, a timed loop
/// waiting for the GPU kept the class's other loops out too (the turnstile). With 16 checks on an
/// H200 a check waited a median of 24.28 s for the GPU, which it held alone for 0.42 s, and the
/// class graded 41 in 150 s (run 61); with the holds around the launches, 51 (run 64).
/// Nothing where no lock file is named.
pub fn launches_beside() {
    if named() {
        common::timing::alone::install(&SanitizedBeside);
    }
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
    let alone_since = (mode == Mode::Exclusive).then(Instant::now);
    if let Some(since) = alone_since {
        LIVE.lock().unwrap_or_else(PoisonError::into_inner).push(since);
    }
    Ok(Guard {
        file: Some(main),
        alone_since,
    })
}

/// The turnstile beside the lock file `path`.
pub fn turnstile_of(path: &Path) -> PathBuf {
    beside(path, TURNSTILE)
}

/// Where a lock file is named ([`path`]): the file beside it that holds what depends on `key` for
/// every check of the grading run on that GPU, `.NAME-HASH` and `extension` after the lock file's
/// name. None where no lock file is named.
pub fn beside_keyed(name: &str, key: impl std::hash::Hash, extension: &str) -> Option<PathBuf> {
    use std::hash::Hasher as _;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    Some(beside(
        &path()?,
        &format!(".{name}-{:016x}{extension}", hasher.finish()),
    ))
}

/// The file named as `path` with `suffix` added (`gpu-0.lock.turnstile`): the files that go with a
/// lock file, or with one beside it.
pub fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
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
        .with_context(|| format!("opening the lock {}", path.display()))
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
            return Err(err).with_context(|| format!("locking {}", path.display()));
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

    /// Issue 65: measured children have their turn with ncu one at a time, the wait counted as one
    /// for the GPU.
    #[test]
    fn measured_children_have_their_turn_with_ncu_one_at_a_time() {
        let folder = Folder::new("ncu-turn");
        let turn = beside(&folder.lock(), NCU_TURN);
        let first = one_at_a_time(&turn).unwrap();
        let waited_before = waited();
        let (got, got_it) = mpsc::channel();
        let second = {
            let turn = turn.clone();
            std::thread::spawn(move || {
                let _turn = one_at_a_time(&turn).unwrap();
                got.send(()).unwrap();
            })
        };
        assert!(got_it.recv_timeout(WAIT).is_err(), "two turns at once");
        drop(first);
        got_it
            .recv_timeout(LONG)
            .expect("the next turn once the first is given back");
        second.join().unwrap();
        assert!(
            waited() >= waited_before + WAIT / 2,
            "the wait for the turn was not counted"
        );
    }

    /// Issue 65: a measured run of other metrics waits for the usual ones alive and keeps new ones
    /// out; it holds no GPU.
    #[test]
    fn a_measured_run_of_other_metrics_runs_with_no_other_alive() {
        let folder = Folder::new("metric-set");
        let set = folder.lock().with_file_name(METRIC_SET);
        let usual = metric_set_at(Some(&set), Mode::Shared).unwrap();
        let (shared, release_shared, sharing) = taker(set.clone(), Mode::Shared);
        shared.recv_timeout(LONG).expect("usual runs share");
        release_shared.send(()).unwrap();
        sharing.join().unwrap();
        let (held, release, thread) = taker(set.clone(), Mode::Exclusive);
        assert!(held.recv_timeout(WAIT).is_err(), "other metrics beside a usual run");
        drop(usual);
        held.recv_timeout(LONG)
            .expect("other metrics once the usual runs are gone");
        // A usual run waits now, and its wait counts as one for the GPU.
        let waited_before = waited();
        let waiting = std::thread::spawn(move || drop(metric_set_at(Some(&set), Mode::Shared).unwrap()));
        std::thread::sleep(WAIT);
        release.send(()).unwrap();
        thread.join().unwrap();
        waiting.join().unwrap();
        assert!(
            waited() >= waited_before + WAIT / 2,
            "the wait for the metrics was not counted"
        );
        let other = metric_set_at(Some(&folder.lock().with_file_name(METRIC_SET)), Mode::Exclusive).unwrap();
        assert!(
            other.holds() && other.alone_since.is_none(),
            "no hold of the GPU: {other:?}"
        );
        assert!(!metric_set_at(None, Mode::Exclusive).unwrap().holds());
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

    /// A lease gives the GPU back when dropped, or when its time is up while its holder goes on.
    #[test]
    fn a_lease_ends_when_dropped_or_when_its_time_is_up() {
        let folder = Folder::new("lease");
        let take = |at_most| Lease::keep(lock_at(&folder.lock(), Mode::Exclusive).unwrap(), at_most);
        let lease = take(LONG);
        let (held, release, thread) = taker(folder.lock(), Mode::Shared);
        assert!(held.recv_timeout(WAIT).is_err(), "a reader got in beside the lease");
        drop(lease);
        held.recv_timeout(LONG)
            .expect("the reader gets in once the lease is dropped");
        release.send(()).unwrap();
        thread.join().unwrap();
        let short = take(WAIT);
        let (held, release, thread) = taker(folder.lock(), Mode::Exclusive);
        held.recv_timeout(LONG).expect("the lease ends by itself");
        release.send(()).unwrap();
        thread.join().unwrap();
        drop(short);
    }

    /// What a child reports of its waits, as its parent reads it; nothing readable is no wait.
    #[test]
    fn a_childs_waits_are_read_as_reported() {
        let folder = Folder::new("waits");
        let path = folder.0.join("waits");
        assert_eq!(Waits::read(&path), Waits::default(), "no file");
        std::fs::write(&path, "12 x\n").unwrap();
        assert_eq!(Waits::read(&path), Waits::default(), "malformed");
        let now = monotonic_ms();
        std::fs::write(&path, format!("2000000000 {} {} 7000\n", now - 3000, now - 3000)).unwrap();
        let waiting = Waits::read(&path);
        assert_eq!(waiting.ended, Duration::from_secs(2));
        assert!(waiting.now >= Duration::from_secs(3) && waiting.now < Duration::from_secs(60));
        assert!(waiting.total() >= Duration::from_secs(5));
        std::fs::write(&path, format!("2000000000 0 {} 7000\n", now - 1000)).unwrap();
        let done = Waits::read(&path);
        assert_eq!(
            (done.ended, done.now, done.held),
            (Duration::from_secs(2), Duration::ZERO, Duration::from_micros(7))
        );
        assert!(done.since_last.is_some_and(|ago| ago >= Duration::from_secs(1)));
    }

    /// The GPU held alone counts while the guard still holds it (a program week writes its phases
    /// then), and after; a shared guard's does not.
    #[test]
    fn a_guard_still_held_counts_as_held() {
        let folder = Folder::new("held");
        let before = held();
        let alone = lock_at(&folder.lock(), Mode::Exclusive).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert!(held() >= before + Duration::from_millis(30), "counted while held");
        drop(alone);
        let after = held();
        assert!(after >= before + Duration::from_millis(30), "and after");
        let shared = lock_at(&folder.lock(), Mode::Shared).unwrap();
        assert!(shared.alone_since.is_none(), "a shared guard holds nothing alone");
    }

    #[test]
    fn no_lock_file_holds_nothing() {
        assert!(!counted(None, Mode::Exclusive).unwrap().holds());
        assert!(!counted(None, Mode::Shared).unwrap().holds());
        // The tests run without the grader: LAB_GPU_LOCK is unset, and nothing is locked.
        if std::env::var_os(ENV).is_none() {
            let (first, second) = (exclusive().unwrap(), exclusive().unwrap());
            assert!(!first.holds() && !second.holds());
            assert!(!lock(Mode::Shared).unwrap().holds());
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

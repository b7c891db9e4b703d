//! Where a check spends its time (issue 65, item 3: to grade 300 week-3 submissions in ten minutes
//! on one GPU, one must know which phase to overlap with others and which to batch; a program week
//! holds the GPU for its whole check: nine of them took 533 s of an H200, and 100 s once the judging's
//! CPU work was done once per case, [`crate::program::PerCase`]). With [`ENV`] naming a
//! file, each check appends one line to it when it ends, for instance
//!
//! ```text
//! mmm.cu: compile 2.10 s, cases 0.93 s alone 0.31 s, races 1.20 s, ncu 3.05 s alone 0.59 s, waited for the GPU 0.00 s, held it alone 0.90 s, cpu 21.30 s, all 7.41 s
//! pipeline.cu: compile 9.80 s, inputs 3.10 s alone 3.10 s, runs 20.40 s alone 20.40 s, judge 6.20 s, waited for the GPU 0.00 s, held it alone 23.50 s, cpu 30.05 s, all 41.00 s
//! ```
//!
//! A phase that happens many times (a program week's runs, one per program or ours on each case) is
//! their sum, in the place of its first. A phase's time includes any wait for the GPU's lock within
//! it; "waited for the GPU" is their sum ([`crate::gpu_lock::waited`]), "held it alone" how long
//! the check's processes held the GPU alone where checks share it ([`crate::gpu_lock::held`]: what
//! it cost the others), a phase's "alone" the part of that held from the end of the phase before it
//! to its own end, left out where there is none (in run 49 of issue 65 a check held the GPU a median
//! of 2.18 s, and the lines did not say whether its cases or its ncu run held it), "cpu" the CPU time
//! the check's process and the children it waited for used (user and system: what it cost the
//! machine's cores; issue 65, run 44: with 16 jobs on 16 cores the cores were 67% idle and the GPU's
//! lock 58% held, so neither alone set the rate), and "all" runs from the first phase's start to the
//! line. Nothing is written where the variable is unset, and nothing reaches the check's own output:
//! students' feedback pages quote its stderr.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use common::timing::cpu_used;

/// The variable naming the file the phases are appended to.
pub const ENV: &str = "LAB_PHASES";

/// The phases timed so far in this process, in the order they ended, each with how long it took
/// and how long the GPU had been held alone when it ended ([`crate::gpu_lock::held`]).
static PHASES: Mutex<Vec<Phase>> = Mutex::new(Vec::new());

/// A phase that ended: its name, how long it took, and the GPU's hold so far when it ended.
#[derive(Debug, Clone, Copy)]
struct Phase {
    name: &'static str,
    took: Duration,
    held_by_its_end: Duration,
}

/// When the first phase began.
static FIRST: OnceLock<Instant> = OnceLock::new();

/// Whether this process measures other checks' submissions in one batch ([`crate::ncu_batch`]): each
/// one's run ends without a line, and the batch writes one for all ([`write_batch`]).
static IN_A_BATCH: AtomicBool = AtomicBool::new(false);

/// Runs `work` as the phase `name` and notes how long it took.
pub fn timed<T>(name: &'static str, work: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    FIRST.get_or_init(|| start);
    let result = work();
    note(name, start.elapsed());
    result
}

/// Notes that the phase `name` took `took` (one that ends in another thread than it began).
pub fn note(name: &'static str, took: Duration) {
    FIRST.get_or_init(|| Instant::now().checked_sub(took).unwrap_or_else(Instant::now));
    let phase = Phase {
        name,
        took,
        held_by_its_end: crate::gpu_lock::held(),
    };
    PHASES.lock().unwrap_or_else(PoisonError::into_inner).push(phase);
}

/// The check of `source` has ended: its line appended to [`ENV`]'s file, where it names one (not in
/// a batch: [`write_batch`]). A file that cannot be written costs the check nothing; a line on stderr
/// says so.
pub fn write(source: &Path) {
    if !IN_A_BATCH.load(Ordering::Relaxed) {
        append(source);
    }
}

/// From now on this process is a batch of measured runs: their lines are left out, and
/// [`write_batch`] writes one for all.
pub fn in_a_batch() {
    IN_A_BATCH.store(true, Ordering::Relaxed);
}

/// A batch of measured runs has ended: one line for all of them, named `name`, each phase the sum of
/// theirs.
pub fn write_batch(name: &str) {
    append(Path::new(name));
}

/// [`write()`]'s line, appended.
fn append(source: &Path) {
    let Some(path) = std::env::var_os(ENV) else {
        return;
    };
    let all = FIRST.get().map_or(Duration::ZERO, Instant::elapsed);
    let phases = PHASES.lock().unwrap_or_else(PoisonError::into_inner);
    let line = line(
        source,
        &phases,
        crate::gpu_lock::waited(),
        crate::gpu_lock::held(),
        cpu_time(),
        all,
    );
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(err) = appended {
        eprintln!("{ENV}: cannot append to {}: {err}", Path::new(&path).display());
    }
}

/// The CPU time, user and system, that this process and its children that ended (and were waited
/// for, with theirs) have used.
fn cpu_time() -> Duration {
    cpu_used(libc::RUSAGE_SELF) + cpu_used(libc::RUSAGE_CHILDREN)
}

/// One line: the file's name, each phase in seconds (the sum of its times, in the order phases
/// first ended, with its part of the GPU's hold where it has one), the waits, the GPU held alone,
/// the CPU time, and the whole check.
fn line(source: &Path, phases: &[Phase], waited: Duration, held: Duration, cpu: Duration, all: Duration) -> String {
    let name = source.file_name().unwrap_or(source.as_os_str()).to_string_lossy();
    let mut sums: Vec<(&str, Duration, Duration)> = Vec::new();
    let mut held_before = Duration::ZERO;
    for phase in phases {
        let alone = phase.held_by_its_end.saturating_sub(held_before);
        held_before = held_before.max(phase.held_by_its_end);
        match sums.iter_mut().find(|(name, ..)| *name == phase.name) {
            Some((_, took, held)) => {
                *took += phase.took;
                *held += alone;
            }
            None => sums.push((phase.name, phase.took, alone)),
        }
    }
    let mut parts: Vec<String> = sums
        .iter()
        .map(|(phase, took, alone)| match alone.is_zero() {
            true => format!("{phase} {:.2} s", took.as_secs_f64()),
            false => format!("{phase} {:.2} s alone {:.2} s", took.as_secs_f64(), alone.as_secs_f64()),
        })
        .collect();
    parts.push(format!("waited for the GPU {:.2} s", waited.as_secs_f64()));
    parts.push(format!("held it alone {:.2} s", held.as_secs_f64()));
    parts.push(format!("cpu {:.2} s", cpu.as_secs_f64()));
    parts.push(format!("all {:.2} s", all.as_secs_f64()));
    format!("{name}: {}\n", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line names the file alone, each phase in the order given (a repeated one summed in the
    /// place of its first, with its part of the hold where it has one), the waits and the whole.
    #[test]
    fn a_line_gives_each_phase_in_seconds() {
        let phase = |name, took, held| Phase {
            name,
            took: Duration::from_millis(took),
            held_by_its_end: Duration::from_millis(held),
        };
        let phases = [
            phase("compile", 2104, 0),
            phase("cases", 500, 100),
            phase("compile", 6, 100),
            phase("cases", 430, 250),
        ];
        assert_eq!(
            line(
                Path::new("/tmp/class/a b.cu"),
                &phases,
                Duration::from_millis(5),
                Duration::from_millis(250),
                Duration::from_millis(6318),
                Duration::from_secs(4)
            ),
            "a b.cu: compile 2.11 s, cases 0.93 s alone 0.25 s, waited for the GPU 0.01 s, held it alone 0.25 s, cpu 6.32 s, all 4.00 s\n"
        );
    }

    /// A phase timed is noted, with what its work returned.
    #[test]
    fn a_timed_phase_is_noted() {
        assert_eq!(timed("a test's phase", || 7), 7);
        let noted = PHASES.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(noted.iter().any(|phase| phase.name == "a test's phase"));
    }

    /// The CPU time counts a child's once it has ended: a check's cases, compiles and measured runs
    /// are all children.
    #[test]
    fn the_cpu_time_holds_the_childrens() {
        let before = cpu_used(libc::RUSAGE_CHILDREN);
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let child = cpu_used(libc::RUSAGE_CHILDREN).saturating_sub(before);
        assert!(child >= Duration::from_millis(20), "{child:?}");
        assert!(cpu_time() >= child);
    }
}

//! The times of a case: the student's kernel and ours timed in alternating rounds
//! ([`CaseContext::time`]), every timed launch of the student's checked ([`checked_runs`]), each on
//! inputs of its own ([`fresh_inputs`], [`each_launch`]), and what their medians say ([`Times`]: the
//! ratio, whether it is steady or suspiciously low, a time below the physical floor).

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use common::timing::Timing;
use common::verify::Random;

/// What a case's child knows about its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaseContext {
    /// Under compute-sanitizer: times mean nothing there, so the case runs the student's kernel once
    /// per poison and not ours.
    pub sanitized: bool,
}

/// Rounds of [`TIMED_LAUNCHES`] launches per kernel in [`CaseContext::time`]; the kernel that goes
/// first alternates from round to round.
const TIME_ROUNDS: usize = 4;
/// Timed launches per kernel and round, each after a warm-up launch of its own (on other inputs:
/// [`fresh_inputs`]).
const TIMED_LAUNCHES: usize = 3;
/// A ratio whose kernels' launch times spread more than this ([`Timing::relative_spread`]) is shown
/// as unsteady. It still counts in the CSV's mean (issue 39): the ratio is of medians over twelve
/// launches in alternating rounds, so a kernel that is slow on purpose on some launches only moves its
/// own median, up, and an unsteady case cannot be made to leave the mean.
pub(crate) const MAX_SPREAD: f64 = 0.10;
/// A ratio below this is faster than the week's technique allows against our kernel of the same
/// technique (issue 39: the public leaderboards' exploits, work skipped or moved out of the timed
/// launches, show as ratios far below 1). It does not fail the case, whose values were checked on
/// every launch; the table and the CSV flag it for a teacher to look at.
pub const SUSPICIOUS_RATIO: f64 = 0.5;

/// A case's timing stops once the student's timed runs have taken this long together, at least one
/// run in (issue 65: a correct kernel that prints from each of a million threads takes 2.5 s a
/// launch on an H200, and twelve of them, with their warm-ups, held the GPU from a whole class for a
/// minute). A run's time is the longer of its wall-clock time (its warm-up, its inputs, the lines
/// its kernel printed written out, its output read back and checked; not its waits for the GPU's
/// lock, [`crate::gpu_lock::waited`]) and its timed launch's: in a
/// check of that kernel on an H200 the cases held the GPU 38 s where the budget counted the timed
/// launches alone (issue 65, run 24), while an honest kernel's twelve runs of the week's largest case
/// take a few tenths of a second. Ours takes milliseconds on any case, so such a kernel's ratio is
/// in the hundreds or more after one run, and more runs would only say so again. A kernel pays for
/// it with its time: only one that slow is spared runs, and each run spared is one check fewer (a
/// slow kernel wrong on some launches only has fewer chances to be caught); the case's two checked
/// launches and its first timed run still run.
pub const STUDENT_BUDGET: Duration = Duration::from_secs(1);

/// The student's timed launches, each one checked ([`checked_runs`]).
#[derive(Debug, Clone)]
pub struct Checked {
    pub timing: Timing,
    /// The first launch whose output was wrong: its index among these launches and what was wrong.
    pub wrong: Option<(usize, String)>,
    /// What the runs took from [`STUDENT_BUDGET`].
    pub spent: Duration,
}

/// `launches` timed runs of the student's kernel, each one checked (issue 39: every timed run is a
/// checked run). `run` poisons the output, launches (its warm-up poisoned too), reads the output back
/// and returns the timed launch's time with what is wrong with the output, if anything. A kernel that
/// skips its work when the output is already there, or does it only while it is checked, fails.
/// Fewer runs where the runs used up [`STUDENT_BUDGET`].
pub fn checked_runs(launches: usize, run: impl FnMut() -> Result<(Timing, Option<String>)>) -> Result<Checked> {
    checked_runs_within(STUDENT_BUDGET, &crate::gpu_lock::waited, launches, run)
}

/// [`checked_runs`] within `budget`, `waited` saying how long this process has waited for the GPU's
/// lock so far.
fn checked_runs_within(
    budget: Duration,
    waited: &dyn Fn() -> Duration,
    launches: usize,
    mut run: impl FnMut() -> Result<(Timing, Option<String>)>,
) -> Result<Checked> {
    let mut samples: Vec<f64> = Vec::with_capacity(launches);
    let (mut first_wrong, mut spent) = (None, Duration::ZERO);
    for launch in 0..launches {
        if spent >= budget {
            break;
        }
        // The run's wall-clock time, less its waits for the GPU's lock (another check's work, which
        // must cost this one no runs), against its timed launch's.
        let (started, waited_before) = (Instant::now(), waited());
        let (timing, wrong) = run()?;
        let waits = waited().saturating_sub(waited_before);
        let timed = Duration::try_from_secs_f64(timing.samples_ms.iter().sum::<f64>() / 1e3).unwrap_or_default();
        spent += started.elapsed().saturating_sub(waits).max(timed);
        samples.extend(timing.samples_ms);
        if first_wrong.is_none() {
            first_wrong = wrong.map(|what| (launch, what));
        }
    }
    Ok(Checked {
        timing: Timing::gpu(samples),
        wrong: first_wrong,
        spent,
    })
}

/// Issue 61: the inputs of every timed launch, drawn afresh by `draw` from a generator nobody can
/// know in advance ([`Random::unpredictable`]: seeded by the operating system in the case's own
/// process, on no command line and in no file), a pair for each timed launch of either kernel: one
/// for its warm-up, one for the launch, so that no launch before the timed one saw its input (a
/// kernel could otherwise do the work in the warm-up and replay it). Ours and the student's j-th
/// timed launches take the j-th pair, so the ratio stays fair; and nothing a kernel remembers from
/// an earlier launch is the answer it must write. Each timing closure walks them with its own
/// `iter()` ([`each_launch`]); a launch past the last is an error, never a repeat.
pub fn fresh_inputs<T>(mut draw: impl FnMut(&mut Random) -> Result<T>) -> Result<Vec<[T; 2]>> {
    let mut random = Random::unpredictable();
    (0..TIME_ROUNDS * TIMED_LAUNCHES)
        .map(|_| Ok([draw(&mut random)?, draw(&mut random)?]))
        .collect()
}

/// `launches` runs of `run`, each on the next of `inputs` ([`fresh_inputs`]), their timed launches
/// together: ours, launch by launch, as [`checked_runs`] runs the student's.
pub fn each_launch<'a, T: 'a>(
    launches: usize,
    inputs: &mut impl Iterator<Item = &'a T>,
    mut run: impl FnMut(&'a T) -> Result<Timing>,
) -> Result<Timing> {
    let runs = checked_runs(launches, || {
        let input = inputs.next().context("no fresh inputs left for a timed launch")?;
        Ok((run(input)?, None))
    })?;
    Ok(runs.timing)
}

/// What [`CaseContext::time`] found: the times (none under compute-sanitizer), the student's
/// fastest timed launch, and, as a case's finding, the first timed launch of the student's kernel
/// that left a wrong output.
#[derive(Debug, Clone, Default)]
pub struct Timed {
    pub times: Option<Times>,
    pub student_fastest_ms: Option<f64>,
    pub wrong: Option<String>,
}

impl CaseContext {
    /// The student's kernel (`theirs`, every launch checked: [`checked_runs`]) and ours timed on the
    /// case, each closure running its kernel the given number of times, each launch after a warm-up
    /// of its own (issue 29: a fair ratio). Over [`TIME_ROUNDS`] rounds, ours goes first in the even ones and theirs in the odd
    /// ones, so neither always meets the colder GPU; the medians are over every round's launches.
    /// Where checks share the GPU, each launch's timed loop holds it alone
    /// ([`crate::gpu_lock::time_alone`]); no round starts once the student's runs used up
    /// [`STUDENT_BUDGET`].
    /// `ours` must leave no result of ours in device memory when it returns (issue 39: poison its
    /// output), so that the student's next launch cannot find it. Nothing is timed under
    /// compute-sanitizer, where times mean nothing.
    pub fn time(
        &self,
        mut ours: impl FnMut(usize) -> Result<Timing>,
        mut theirs: impl FnMut(usize) -> Result<Checked>,
    ) -> Result<Timed> {
        if self.sanitized {
            return Ok(Timed::default());
        }
        let (mut ours_ms, mut theirs_ms, mut wrong) = (Vec::new(), Vec::new(), None);
        let mut spent = Duration::ZERO;
        for round in 0..TIME_ROUNDS {
            if spent >= STUDENT_BUDGET {
                break;
            }
            let mut student = || -> Result<()> {
                let checked = theirs(TIMED_LAUNCHES)?;
                spent += checked.spent;
                theirs_ms.extend(checked.timing.samples_ms);
                if wrong.is_none() {
                    wrong = checked.wrong.map(|(launch, what)| {
                        format!(
                            "timed run {} of {}: {what}",
                            round * TIMED_LAUNCHES + launch + 1,
                            TIME_ROUNDS * TIMED_LAUNCHES
                        )
                    });
                }
                Ok(())
            };
            if round % 2 == 0 {
                ours_ms.extend(ours(TIMED_LAUNCHES)?.samples_ms);
                student()?;
            } else {
                student()?;
                ours_ms.extend(ours(TIMED_LAUNCHES)?.samples_ms);
            }
        }
        let theirs = Timing::gpu(theirs_ms);
        Ok(Timed {
            times: Some(Times::of(&theirs, &Timing::gpu(ours_ms))),
            student_fastest_ms: Some(theirs.min_ms()),
            wrong,
        })
    }
}

impl Timed {
    /// Issue 61: a finding where the student's fastest timed launch beat the physical floor of the
    /// case: the time in which `bytes` (what the kernel must read or write at least once) can move
    /// at [`FLOOR_BANDWIDTHS`] times the GPU's peak memory bandwidth (`peak_bandwidth`, bytes/s). No
    /// kernel that does the case's work is that fast: its work was done elsewhere, or the clock was
    /// fooled. The fastest launch, not the median: what else runs on the GPU (another check's
    /// untimed launches, where checks share it) only adds time, so one launch left alone is enough.
    /// Nothing where nothing was timed or the bandwidth is unknown.
    pub fn below_the_floor(&self, bytes: f64, peak_bandwidth: f64) -> Option<String> {
        let fastest_ms = self.student_fastest_ms?;
        if !(peak_bandwidth.is_finite() && peak_bandwidth > 0.0) {
            return None;
        }
        let floor_ms = bytes / (FLOOR_BANDWIDTHS * peak_bandwidth) * 1e3;
        (fastest_ms < floor_ms).then(|| {
            format!(
                "faster than the GPU can be: a launch of {fastest_ms:.6} ms, where moving the case's {} once takes at least {floor_ms:.6} ms at {FLOOR_BANDWIDTHS} times this GPU's peak memory bandwidth ({:.0} GB/s)",
                common::format_bytes(bytes as u64),
                peak_bandwidth / 1e9
            )
        })
    }
}

/// The student's kernel and ours on one case: medians and how far their launches spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Times {
    pub student_ms: f64,
    pub ours_ms: f64,
    /// The larger of the two kernels' [`Timing::relative_spread`].
    pub spread: f64,
}

impl Times {
    pub fn of(student: &Timing, ours: &Timing) -> Times {
        Times {
            student_ms: student.median_ms(),
            ours_ms: ours.median_ms(),
            spread: student.relative_spread().max(ours.relative_spread()),
        }
    }

    /// The student's time over ours.
    pub fn ratio(&self) -> f64 {
        self.student_ms / self.ours_ms
    }

    /// Whether the launches were steady ([`MAX_SPREAD`]).
    pub fn steady(&self) -> bool {
        self.spread <= MAX_SPREAD
    }

    /// Whether the ratio is below [`SUSPICIOUS_RATIO`].
    pub fn suspicious(&self) -> bool {
        self.ratio() < SUSPICIOUS_RATIO
    }
}

/// How many times its memory's peak bandwidth a GPU may move a case's data at, at most, for
/// [`Timed::below_the_floor`]: L2 serves data just written at a few times the memory's rate (about 5
/// times on an RTX 4090), so 8 leaves room for every GPU of the course.
const FLOOR_BANDWIDTHS: f64 = 8.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 61: a launch faster than the case's bytes take at 8 times the peak bandwidth is a
    /// finding, whatever the median (other work on the GPU slows the others); at or above it, with no
    /// bandwidth known, or with nothing timed, nothing.
    #[test]
    fn a_launch_below_the_physical_floor_is_a_finding() {
        let timed = |fastest_ms| Timed {
            times: Some(Times {
                student_ms: 2.0,
                ours_ms: 1.0,
                spread: 0.0,
            }),
            student_fastest_ms: Some(fastest_ms),
            wrong: None,
        };
        // 8 GB at 8 x 1 TB/s: 1 ms.
        let (bytes, peak) = (8e9, 1e12);
        let finding = timed(0.5).below_the_floor(bytes, peak).unwrap();
        assert!(
            finding.starts_with("faster than the GPU can be: a launch of 0.500000 ms, where moving the case's")
                && finding.contains("at least 1.000000 ms at 8 times this GPU's peak memory bandwidth (1000 GB/s)"),
            "{finding}"
        );
        assert_eq!(timed(1.0).below_the_floor(bytes, peak), None);
        assert_eq!(timed(0.5).below_the_floor(bytes, 0.0), None);
        assert_eq!(timed(0.5).below_the_floor(bytes, f64::NAN), None);
        assert_eq!(Timed::default().below_the_floor(bytes, peak), None);
    }

    #[test]
    fn the_kernel_that_runs_first_alternates_and_the_medians_are_over_every_round() {
        let order = std::cell::RefCell::new(String::new());
        let ours = |launches: usize| {
            order.borrow_mut().push('o');
            Ok(Timing::gpu(vec![1.0; launches]))
        };
        // The student's launches take 3 ms, but the very first 2.5 ms: the fastest, kept for the floor.
        let first = std::cell::Cell::new(true);
        let theirs = |launches: usize| {
            order.borrow_mut().push('t');
            let mut samples = vec![3.0; launches];
            samples[0] = if first.replace(false) { 2.5 } else { 3.0 };
            Ok(Checked {
                timing: Timing::gpu(samples),
                wrong: None,
                spent: Duration::ZERO,
            })
        };
        let timed = CaseContext { sanitized: false }.time(ours, theirs).unwrap();
        assert_eq!(order.borrow().as_str(), "otto".repeat(TIME_ROUNDS / 2));
        let times = timed.times.unwrap();
        assert_eq!(
            (
                times.student_ms,
                times.ours_ms,
                times.ratio(),
                timed.student_fastest_ms,
                timed.wrong
            ),
            (3.0, 1.0, 3.0, Some(2.5), None)
        );
        order.borrow_mut().clear();
        assert!(CaseContext { sanitized: true }
            .time(ours, theirs)
            .unwrap()
            .times
            .is_none());
        assert_eq!(order.borrow().as_str(), "", "nothing is timed under compute-sanitizer");
    }

    /// Issue 39: every timed launch is checked; the first wrong one is the case's finding, numbered
    /// among all twelve.
    #[test]
    fn a_kernel_that_skips_work_on_a_timed_launch_is_caught_with_its_number() {
        let mut launch = 0;
        let checked = checked_runs(3, || {
            launch += 1;
            Ok((
                Timing::gpu(vec![1.0]),
                (launch == 2).then(|| "C(0, 0) never written".to_string()),
            ))
        })
        .unwrap();
        assert_eq!(
            (checked.timing.samples_ms.len(), checked.wrong.clone()),
            (3, Some((1, "C(0, 0) never written".to_string())))
        );
        let mut round = 0;
        let theirs = |launches: usize| {
            round += 1;
            let wrong = (round == 3).then(|| (2, "C(4, 1) is 0, expected 2".to_string()));
            Ok(Checked {
                timing: Timing::gpu(vec![1.0; launches]),
                wrong,
                spent: Duration::ZERO,
            })
        };
        let timed = CaseContext { sanitized: false }
            .time(|launches| Ok(Timing::gpu(vec![1.0; launches])), theirs)
            .unwrap();
        assert_eq!(
            timed.wrong.as_deref(),
            Some("timed run 9 of 12: C(4, 1) is 0, expected 2")
        );
    }

    /// [`STUDENT_BUDGET`] in milliseconds.
    fn budget_ms() -> f64 {
        STUDENT_BUDGET.as_secs_f64() * 1e3
    }

    /// Issue 65: a run counts for its wall-clock time where that is longer than its timed launch's (a
    /// kernel whose printed lines take longer to write out than it runs): runs of 30 ms timed at
    /// 1 ms each stop once past a budget of 50 ms, after two.
    ///
    /// A run's waits for the GPU's lock do not count: runs of 230 ms of which 200 ms waited all run.
    #[test]
    fn a_run_counts_for_its_wall_clock_time_less_its_waits() {
        let no_waits = || Duration::ZERO;
        let mut runs = 0;
        let checked = checked_runs_within(Duration::from_millis(50), &no_waits, TIMED_LAUNCHES, || {
            runs += 1;
            std::thread::sleep(Duration::from_millis(30));
            Ok((Timing::gpu(vec![1.0]), None))
        })
        .unwrap();
        assert_eq!((runs, checked.timing.samples_ms.len()), (2, 2));
        assert!(checked.spent >= Duration::from_millis(60), "{:?}", checked.spent);
        let waited = std::cell::Cell::new(Duration::ZERO);
        let waits = || waited.get();
        let checked = checked_runs_within(Duration::from_millis(100), &waits, TIMED_LAUNCHES, || {
            std::thread::sleep(Duration::from_millis(230));
            waited.set(waited.get() + Duration::from_millis(200));
            Ok((Timing::gpu(vec![1.0]), None))
        })
        .unwrap();
        assert_eq!(checked.timing.samples_ms.len(), TIMED_LAUNCHES, "{:?}", checked.spent);
    }

    /// Issue 65: a kernel that takes seconds a launch is timed until its launches used up the
    /// budget, at least once, and no round starts after that; ours ran in every round that did.
    #[test]
    fn a_slow_kernel_is_timed_until_its_budget_is_used_up() {
        let mut runs = 0;
        let checked = checked_runs(TIMED_LAUNCHES, || {
            runs += 1;
            Ok((Timing::gpu(vec![budget_ms() * 0.6]), None))
        })
        .unwrap();
        assert_eq!(
            (runs, checked.timing.samples_ms.len()),
            (2, 2),
            "stops once past the budget"
        );
        let (mut ours_rounds, mut their_launches) = (0, 0);
        let timed = CaseContext { sanitized: false }
            .time(
                |launches| {
                    ours_rounds += 1;
                    Ok(Timing::gpu(vec![1.0; launches]))
                },
                |launches| {
                    checked_runs(launches, || {
                        their_launches += 1;
                        Ok((Timing::gpu(vec![2.0 * budget_ms()]), None))
                    })
                },
            )
            .unwrap();
        assert_eq!((ours_rounds, their_launches), (1, 1), "one round, one launch of theirs");
        let times = timed.times.unwrap();
        assert_eq!((times.student_ms, times.ours_ms), (2.0 * budget_ms(), 1.0));
        // A kernel just under the budget gets every launch.
        let mut fast = 0;
        checked_runs(TIMED_LAUNCHES, || {
            fast += 1;
            Ok((Timing::gpu(vec![budget_ms() / (TIMED_LAUNCHES as f64 + 1.0)]), None))
        })
        .unwrap();
        assert_eq!(fast, TIMED_LAUNCHES);
    }
}

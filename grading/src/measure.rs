//! The week's technique measured while the kernel runs (issue 39). What nvcc made says what the code
//! could do; a tile touched only in a branch that never runs, or filled and never read, passes any
//! rule read from it. Hardware counters say what the kernel did: one case's child runs under Nsight
//! Compute (`ncu`), which launches the student's kernels and then ours once each, and the lab turns the
//! counters into rule rows with the measured value beside the bound and ours ("global loads per
//! element: 512.0; a tiled kernel at BLOCK_SIZE 16 needs at most 48.0; ours 32.0").
//!
//! The counters come from ncu's own file, which the child's output cannot reach. Without ncu, or
//! without permission to read the GPU's counters, every measured rule is MACHINE (issue 45): a rule
//! that was not measured is never passed, and the machine, not the student, kept it from running.
//! Any other measurement that gives no counters is a FAULT.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::case_process::{self, Batch, Deadline, Limits, Slot};
use super::{NoResult, Outcome, Row};
use kernels::KernelImage;
use profiler::counters::{self, Launch};

/// A week's measured rules: the case measured, what ncu reads, and how the launches become rows.
pub struct Measure<'a, C> {
    pub case: C,
    /// The rows' names, for `--list-cases` and for rows that could not be measured.
    pub rules: &'a [&'a str],
    /// The metrics ncu reads (Nsight Compute names).
    pub metrics: &'a [&'a str],
    /// ncu's `--kernel-name` filter (`regex:^mmm_f(32|64)$`): the kernels whose launches count.
    pub kernels: &'a str,
    /// In the child: launches the student's kernels (of the image given), then ours, once each, on `case`.
    pub run: &'a dyn Fn(&KernelImage, &C) -> anyhow::Result<()>,
    /// The four launches ncu measured ([`LAUNCHES`]), in that order, into one row per rule.
    pub judge: &'a dyn Fn(&C, &[Launch; LAUNCHES]) -> Vec<Row>,
}

/// Launches every week's measured child makes: the student's kernel or tree twice (two precisions, or
/// a warm-up and a run) and ours the same.
pub const LAUNCHES: usize = 4;

/// How long the measured run may take once it may start: ncu replays each kernel a few times
/// (seconds in all). Before that it waits for the cases ([`wait_for_the_cases`]), saying so every few
/// seconds, so silence still means a hang; its total limit then adds the longest the cases may take.
pub const LIMITS: Limits = Limits {
    silence: Duration::from_secs(120),
    total: Duration::from_secs(300),
};

/// While the cases run, the measured child waits: a fresh ncu and the lab under it take about 2 s to
/// start (an H100 machine), which then overlap the cases (issue 39: a check within 5 s).
const HEARTBEAT: Duration = Duration::from_secs(10);

impl<C> Measure<'_, C> {
    /// ncu with this week's metrics and kernels around `program` (this lab, with the measuring flags),
    /// its counters written to `csv`.
    pub fn under_ncu(&self, program: &Command, csv: &Path) -> Result<Command, NoResult> {
        let ncu = counters::ncu().map_err(|_| NoResult::Machine("these rules need Nsight Compute (ncu) to read the GPU's counters, and none was found ($NCU, PATH, $CUDA_PATH/bin, /usr/local/cuda/bin)".to_string()))?;
        let mut under_ncu = Command::new(&ncu);
        // Counts of instructions and requests need neither locked clocks nor flushed caches: ncu leaves
        // the GPU's clocks alone and saves the time of the flushes.
        under_ncu
            .args([
                "--csv",
                "--page",
                "raw",
                "--print-units",
                "base",
                "--clock-control",
                "none",
                "--cache-control",
                "none",
                "--kernel-name",
            ])
            .arg(self.kernels);
        under_ncu
            .arg("--metrics")
            .arg(self.metrics.join(","))
            .arg("--log-file")
            .arg(csv)
            .arg(program.get_program())
            .args(program.get_args());
        Ok(under_ncu)
    }

    /// The rule rows from what [`launches`] measured; where nothing was, rows that say why: MACHINE
    /// where the machine kept ncu from measuring, else FAULT.
    pub fn rows(&self, measured: Result<Vec<Launch>, NoResult>) -> Vec<Row> {
        let four = measured.and_then(|launches| {
            <[Launch; LAUNCHES]>::try_from(launches).map_err(|launches| {
                NoResult::Fault(format!(
                    "ncu measured {} launches of {}, not the {LAUNCHES} the check made",
                    launches.len(),
                    self.kernels
                ))
            })
        });
        let not_measured = |why: &NoResult| match why {
            NoResult::Machine(why) => NoResult::Machine(format!("not measured: {why}")),
            other => NoResult::Fault(format!("not measured: {}", other.why())),
        };
        match four {
            Ok(launches) => (self.judge)(&self.case, &launches),
            Err(why) => self
                .rules
                .iter()
                .map(|rule| Row {
                    case: rule.to_string(),
                    result: Err(not_measured(&why)),
                })
                .collect(),
        }
    }
}

/// Runs `under_ncu` (from [`Measure::under_ncu`]) within `limits` and reads the counters ncu wrote to
/// `csv`; the child's row goes to `result`. Needs no borrow of the week's [`Measure`], so it can run
/// on a thread of its own beside the cases. No permission for the counters (ncu's own file says so,
/// which the child's output cannot reach), a MACHINE row from the child (a SIGKILL the check did not
/// send among them) and a report missing or unreadable after a run that ended well are the
/// machine's; a run that failed or ran past its time is a fault (the same kernel runs in the cases,
/// so a kernel that hangs or crashes fails there too, and cannot hide behind MACHINE here).
pub fn launches(
    under_ncu: Command,
    csv: &Path,
    result: &Path,
    limits: Limits,
    deadline: Option<Deadline>,
) -> Result<Vec<Launch>, NoResult> {
    let slot = [Slot {
        case: "measured".to_string(),
        result: result.to_path_buf(),
    }];
    let batch = Batch {
        cases: &slot,
        limits,
        deadline,
        finished: None,
        boundary: "",
    };
    let run = case_process::run(under_ncu, &batch, |_| {}).remove(0);
    let text = std::fs::read_to_string(csv).unwrap_or_default();
    if let Some(line) = text.lines().find(|line| line.contains("ERR_NVGPUCTRPERM")) {
        return Err(NoResult::Machine(format!(
            "ncu may not read this GPU's counters here ({}); an administrator can allow it",
            line.trim()
        )));
    }
    match run.row.result {
        Err(NoResult::Machine(why)) => return Err(NoResult::Machine(format!("the measured run: {why}"))),
        Err(why) => {
            return Err(NoResult::Fault(format!(
                "the measured run under ncu failed: {}",
                why.why()
            )))
        }
        Ok(_) => {}
    }
    // The run ended well and ncu's report is missing or unreadable: ncu's own failure (issue 60).
    counters::parse_csv(&text).map_err(|err| NoResult::Machine(format!("ncu's counters could not be read: {err}")))
}

/// In the measured child, before it touches the GPU: waits until `go` exists (the parent's cases are
/// done), saying so on stderr every [`HEARTBEAT`]; gives up when the parent `lab` is gone.
pub fn wait_for_the_cases(go: &Path, lab: u32) -> anyhow::Result<()> {
    let mut said = std::time::Instant::now();
    while !go.exists() {
        // SAFETY: kill(2) with signal 0 only asks whether the process exists; no memory is involved.
        if unsafe { libc::kill(lab as libc::pid_t, 0) } != 0 {
            anyhow::bail!("the check that started this measurement (process {lab}) is gone");
        }
        if said.elapsed() >= HEARTBEAT {
            eprintln!("measured run: waiting for the cases to finish");
            said = std::time::Instant::now();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// Creates `go` when dropped: the measured child starts on every way out of the cases.
pub struct Go<'a>(pub &'a Path);

impl Drop for Go<'_> {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, b"");
    }
}

/// The child's row after a measured run: that it ran to the end (the counters are in ncu's file).
pub fn ran(case: &str) -> Row {
    Row {
        case: case.to_string(),
        result: Ok(Outcome {
            wrong: 0,
            elements: 0,
            first: None,
            times: None,
            finding: None,
        }),
    }
}

/// A bound on a measured value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    AtMost(f64),
    AtLeast(f64),
}

/// A measured rule's row for one kernel: `value` against `bound`, shown whether it holds or not,
/// with `why` (what the technique needs) and ours beside it. A value that is no number fails.
pub fn rule_row(case: &str, kernel: &str, value: f64, bound: Bound, why: &str, ours: f64) -> Row {
    let (holds, expected) = match bound {
        Bound::AtMost(limit) => (value <= limit, format!("at most {limit:.1}")),
        Bound::AtLeast(limit) => (value >= limit, format!("at least {limit:.1}")),
    };
    let first = super::FirstWrong {
        position: kernel.to_string(),
        value: format!("{value:.1}"),
        expected: format!("{expected} ({why}; ours {ours:.1})"),
        computed_by: "hardware counters (ncu)".to_string(),
    };
    Row {
        case: case.to_string(),
        result: Ok(Outcome {
            wrong: usize::from(!holds),
            elements: 1,
            first: Some(first),
            times: None,
            finding: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measured_rule_shows_its_value_whether_it_holds_or_not_and_a_nan_fails() {
        let row = rule_row("loads", "mmm_f64", 32.0, Bound::AtMost(48.0), "tiled", 32.0);
        assert!(row.passed());
        assert_eq!(
            row.result.as_ref().unwrap().first.as_ref().unwrap().expected,
            "at most 48.0 (tiled; ours 32.0)"
        );
        assert!(!rule_row("loads", "mmm_f64", 512.0, Bound::AtMost(48.0), "tiled", 32.0).passed());
        assert!(!rule_row("loads", "mmm_f64", f64::NAN, Bound::AtLeast(1.0), "x", 2.0).passed());
        assert!(rule_row("shared", "mmm_f64", 512.0, Bound::AtLeast(64.0), "x", 512.0).passed());
    }

    #[test]
    fn without_ncu_every_rule_is_machine_and_other_failures_a_fault() {
        let run = |_: &KernelImage, _: &()| Ok(());
        let judge = |_: &(), _: &[Launch; LAUNCHES]| {
            vec![Row {
                case: "judged".to_string(),
                result: Err("".into()),
            }]
        };
        let measure = Measure {
            case: (),
            rules: &["a", "b"],
            metrics: &["m"],
            kernels: "k",
            run: &run,
            judge: &judge,
        };
        let three = vec![
            Launch {
                kernel: "k".to_string(),
                values: Default::default()
            };
            3
        ];
        let rows = measure.rows(Ok(three));
        assert!(
            rows.iter()
                .all(|row| row.result
                    == Err("not measured: ncu measured 3 launches of k, not the 4 the check made".into())),
            "{rows:?}"
        );
        let four = vec![
            Launch {
                kernel: "k".to_string(),
                values: Default::default()
            };
            4
        ];
        assert_eq!(measure.rows(Ok(four))[0].case, "judged");
        let rows = measure.rows(Err("the --time-limit was used up".into()));
        assert_eq!(rows.len(), 2);
        assert!(
            rows.iter()
                .all(|row| row.result == Err("not measured: the --time-limit was used up".into())),
            "{rows:?}"
        );
        // Issue 45: no ncu, or no permission for the counters, is the machine's: MACHINE, never PASS.
        let rows = measure.rows(Err(NoResult::Machine("no ncu".to_string())));
        assert!(
            rows.iter().all(|row| row.verdict() == "MACHINE"
                && row.result == Err(NoResult::Machine("not measured: no ncu".to_string()))),
            "{rows:?}"
        );
        // A child that writes no row (here `true`) is a fault too, wherever ncu is.
        let dir = common::private_dir::PrivateDir::new("measure-test").unwrap();
        let found = launches(
            Command::new("true"),
            &dir.path().join("csv"),
            &dir.path().join("row"),
            LIMITS,
            None,
        );
        assert!(found.is_err(), "{found:?}");
        if counters::ncu().is_err() {
            let why = measure
                .under_ncu(&Command::new("true"), Path::new("/tmp/x"))
                .unwrap_err();
            assert!(
                matches!(&why, NoResult::Machine(why) if why.starts_with("these rules need Nsight Compute (ncu)")),
                "{why:?}"
            );
        }
    }

    #[test]
    fn the_measured_child_waits_for_the_cases_and_not_for_a_parent_that_is_gone() {
        let dir = common::private_dir::PrivateDir::new("measure-wait").unwrap();
        let go = dir.path().join("go");
        drop(Go(&go));
        wait_for_the_cases(&go, std::process::id()).unwrap();
        let never = dir.path().join("never");
        let error = wait_for_the_cases(&never, u32::MAX >> 1).unwrap_err().to_string();
        assert!(error.contains("is gone"), "{error}");
    }
}

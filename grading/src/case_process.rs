//! The cases of `--check` in a child process, as the parent sees them.
//!
//! The result channel: the child writes each case's row into a file the parent names, in the
//! parent's private folder (`--check-result PREFIX`, the case's index after it), never on stdout or
//! stderr. A student's code is device code only; its `printf` reaches stdout and nothing else, so it
//! cannot write a row. The parent accepts exactly one well-formed row for each case it asked for;
//! none, two, an oversized or a malformed one make the case a FAULT that says which.
//!
//! One child runs the cases one after another (a CUDA context costs about 0.3 s to start on an H100:
//! twelve of them were most of a check's time, issue 39) until one of them ends it: a kernel that
//! faults or traps ruins the context for good, so its case fails, and the parent starts a new child
//! for the cases after it. Nothing of a case's outcome depends on the cases before it in its child:
//! each loads the student's module afresh, and a context a case broke is found before its row.
//!
//! Output that flows: stdout and stderr are read on threads of their own while the child runs
//! ([`super::output`]), so a kernel printing megabytes never blocks, and cut into each case's part at
//! the line the child prints after each case. A case counts as hung when it has printed nothing for
//! [`Limits::silence`] (a kernel's `printf` reaches the pipe at every synchronization, so a busy
//! printing kernel is not silent, and an endless loop is), and is stopped anyway at
//! [`Limits::total`]. The child is the leader of its own process group, so a stop ends it and
//! anything it started (compute-sanitizer's target) together.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::gpu_lock::Waits;
use crate::output::{drain, Activity, Captured};
use crate::row::{NoResult, Row};

/// When a case is stopped: after `silence` without a byte on stdout or stderr, or after `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub silence: Duration,
    pub total: Duration,
}

/// The most bytes a result file may hold: one row is a few hundred.
pub const MAX_ROW_BYTES: u64 = 16 * 1024;

/// What a case's child left behind.
#[derive(Debug, Clone)]
pub struct CaseRun {
    pub row: Row,
    pub stdout: Captured,
    pub stderr: Captured,
    /// The child's exit code, for the last case the child ran, where it exited (not where it was
    /// stopped or killed by a signal).
    pub exit: Option<i32>,
}

impl CaseRun {
    /// A case the machine kept from running (MACHINE), without output.
    pub fn machine(case: &str, why: String) -> CaseRun {
        CaseRun {
            row: Row {
                case: case.to_string(),
                result: Err(NoResult::Machine(why)),
            },
            ..CaseRun::fault(case, String::new())
        }
    }

    /// A case that ends as a fault without having run, or without output of its own.
    pub fn fault(case: &str, why: String) -> CaseRun {
        CaseRun {
            row: Row {
                case: case.to_string(),
                result: Err(why.into()),
            },
            stdout: Captured::default(),
            stderr: Captured::default(),
            exit: None,
        }
    }
}

/// How the child ended.
enum Ending {
    Exited(ExitStatus),
    Silent,
    TooLong,
    OutOfTime(u64),
    Lost(String),
}

/// `--time-limit`: when the whole check must end, and its seconds for the message.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub at: Instant,
    pub seconds: u64,
}

impl Deadline {
    /// Whether the check's time is up. The time this process waited for its GPU ([`gpu_lock::waited`],
    /// while other checks' cases had it) does not count: the check gets the time it would get alone.
    ///
    /// [`gpu_lock::waited`]: crate::gpu_lock::waited
    pub fn passed(&self) -> bool {
        self.passed_beside(Duration::ZERO)
    }

    /// [`Deadline::passed`] while a child has waited `child` for the GPU so far, which does not count
    /// either.
    pub fn passed_beside(&self, child: Duration) -> bool {
        Instant::now() >= self.at + crate::gpu_lock::waited() + child
    }
}

/// The file a child writes case `index`'s row to, given the prefix the parent named
/// (`--check-result`): the parent reads the same file, so the name is made here alone.
pub fn result_file(prefix: &Path, index: usize) -> PathBuf {
    let mut path = prefix.as_os_str().to_owned();
    path.push(index.to_string());
    path.into()
}

/// One case of a child's batch: its name and the file its row goes to.
#[derive(Debug, Clone)]
pub struct Slot {
    pub case: String,
    pub result: PathBuf,
}

/// What a child runs, as the parent sees it: its cases in order, each within `limits` (the case's
/// clock starts when the row of the case before it appears), all of them before `deadline`.
pub struct Batch<'a> {
    pub cases: &'a [Slot],
    pub limits: Limits,
    pub deadline: Option<Deadline>,
    /// An exit code after which the rows are read as after success: compute-sanitizer's for "the
    /// program ran, and I found errors".
    pub finished: Option<i32>,
    /// The line the child prints on stdout and stderr after each case ([`super::output::Segments`]);
    /// empty for a child of one case.
    pub boundary: &'a str,
    /// Whether the child does other checks' work (a batch of their measured runs,
    /// [`crate::ncu_batch`]): its waits for the GPU still spare its own limits, but they and its holds
    /// are not this check's ([`crate::gpu_lock::add_child`]).
    pub others: bool,
}

/// Runs `command` (stdout and stderr drained, stdin closed) for `batch`, calling `starting` with the
/// index of each case (in `batch.cases`) as it starts, then takes the cases' rows from their files.
/// Returns the runs of the cases up to the first that has no row, which is a FAULT that says how the
/// child ended; the cases after it did not run. A child that fails after writing every row fails its
/// last case (the child checks its GPU context before it writes a row, so a case that broke it is
/// found as it ends: [`crate::check::run_cases`]).
pub fn run(mut command: Command, batch: &Batch<'_>, mut starting: impl FnMut(usize)) -> Vec<CaseRun> {
    use std::os::unix::process::CommandExt as _;
    let Some(first) = batch.cases.first() else {
        return Vec::new();
    };
    starting(0);
    // A lab stopped by Ctrl-C or killed takes its case child with it (issue 60): the child leads a
    // group of its own, which a Ctrl-C at the terminal does not reach.
    sandbox::end_with_parent(&mut command);
    // Where checks share the GPU, the child says how long it waited for it (`gpu_lock::Waits`).
    let waits = crate::gpu_lock::named().then(|| waits_file(&first.result));
    if let Some(waits) = &waits {
        command.env(crate::gpu_lock::WAITS_ENV, waits);
    }
    let spawned = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => return vec![CaseRun::fault(&first.case, format!("cannot start the case: {err}"))],
    };
    let activity = Arc::new(Activity::start());
    let stdout = child
        .stdout
        .take()
        .map(|stream| drain(stream, Arc::clone(&activity), batch.boundary));
    let stderr = child
        .stderr
        .take()
        .map(|stream| drain(stream, Arc::clone(&activity), batch.boundary));
    let ending = wait(&mut child, batch, &activity, waits.as_deref(), &mut starting);
    if let Some(waits) = waits.as_ref().filter(|_| !batch.others) {
        crate::gpu_lock::add_child(&Waits::read(waits));
    }
    // Whatever the case left behind in its group (a process still holding the pipes) goes too, or
    // the readers below would wait for it.
    stop_group(&child);
    let joined =
        |handle: Option<std::thread::JoinHandle<Vec<Captured>>>| handle.and_then(|h| h.join().ok()).unwrap_or_default();
    let (stdout, stderr) = (joined(stdout), joined(stderr));
    let exit = match &ending {
        Ending::Exited(status) => status.code(),
        _ => None,
    };
    let mut runs = Vec::new();
    for (index, slot) in batch.cases.iter().enumerate() {
        let (out, err) = (
            stdout.get(index).cloned().unwrap_or_default(),
            stderr.get(index).cloned().unwrap_or_default(),
        );
        let read = read_row(&slot.result, &slot.case);
        let last = read.is_err() || index + 1 == batch.cases.len();
        let result = match read {
            Ok(row) if !last || exited_well(&ending, batch.finished) => row.result,
            // No row, or a row and then a failure before the child ended: the case's own (see
            // above), or the machine's where something else killed it.
            Ok(_) | Err(None) => Err(without_row(&ending, batch.limits, &err, batch.finished)),
            Err(Some(why)) => Err(why.into()),
        };
        let row = Row {
            case: slot.case.clone(),
            result,
        };
        runs.push(CaseRun {
            row,
            stdout: out,
            stderr: err,
            exit: if last { exit } else { None },
        });
        if last {
            break;
        }
    }
    runs
}

/// Whether the child ended as a child that did its work ends: success, or `finished`.
fn exited_well(ending: &Ending, finished: Option<i32>) -> bool {
    matches!(ending, Ending::Exited(status) if status.success() || (finished.is_some() && status.code() == finished))
}

/// Why a case has no row (or a row and then a failure): MACHINE where the child died of a SIGKILL the
/// check did not send (issue 60: the kernel's OOM killer, an administrator, the batch system; its own
/// stops at the limits are [`Ending::Silent`] and the like, and nothing of a kernel week's submission
/// runs on the host, nor can a program week's, in its own PID namespace, signal the case), else the
/// case's own FAULT ([`ended`]).
fn without_row(ending: &Ending, limits: Limits, stderr: &Captured, finished: Option<i32>) -> NoResult {
    use std::os::unix::process::ExitStatusExt as _;
    match ending {
        Ending::Exited(status) if status.signal() == Some(libc::SIGKILL) => NoResult::Machine(format!(
            "the case was killed by SIGKILL, which the check did not send (the system's OOM killer, an administrator or the batch system?): grade it again ({})",
            stderr.last_line().unwrap_or("no message")
        )),
        _ => ended(ending, limits, stderr, finished).into(),
    }
}

/// Why a case has no row (or a row and then a failure), from how its child ended and what the case
/// printed last on stderr.
fn ended(ending: &Ending, limits: Limits, stderr: &Captured, finished: Option<i32>) -> String {
    match ending {
        Ending::Silent => format!(
            "printed nothing for {} s and did not end (an endless loop?); stopped",
            limits.silence.as_secs()
        ),
        Ending::TooLong => format!("still running after {} s; stopped", limits.total.as_secs()),
        Ending::OutOfTime(seconds) => out_of_time(*seconds),
        Ending::Lost(why) => format!("lost the case: {why}"),
        _ if exited_well(ending, finished) => "the case ended without reporting a result".to_string(),
        Ending::Exited(status) => format!("{} ({status})", stderr.last_line().unwrap_or("no message")),
    }
}

/// Why a case stopped at the check's `--time-limit` of `seconds`.
pub(crate) fn out_of_time(seconds: u64) -> String {
    format!("still running when the --time-limit of {seconds} s ran out; stopped")
}

/// The file in which the child whose first case writes its row to `first_result` reports its waits
/// for the GPU, beside that row's file.
pub(crate) fn waits_file(first_result: &Path) -> PathBuf {
    let mut path = first_result.as_os_str().to_owned();
    path.push("-gpu-waits");
    path.into()
}

/// How long the child has been silent, where waiting for the GPU (reported in `waits`) counts as
/// activity: a wait going on, and the start or end of one.
fn silent_for(activity: &Activity, waits: &Waits) -> Duration {
    if waits.now > Duration::ZERO {
        return Duration::ZERO;
    }
    activity.silent_for().min(waits.since_last.unwrap_or(Duration::MAX))
}

/// The limit the child has reached, if any, its `waits` for the GPU counted against none.
fn limit_reached(batch: &Batch<'_>, activity: &Activity, waits: &Waits) -> Option<Ending> {
    if let Some(deadline) = batch.deadline.filter(|at| at.passed_beside(waits.total())) {
        Some(Ending::OutOfTime(deadline.seconds))
    } else if activity.running_for().saturating_sub(waits.total()) > batch.limits.total {
        Some(Ending::TooLong)
    } else if silent_for(activity, waits) > batch.limits.silence {
        Some(Ending::Silent)
    } else {
        None
    }
}

/// Waits for the child, stopping its whole process group once its case has been silent or running
/// too long, or the deadline has come. A case's row appearing starts the next case's clock. The time
/// the child reports in `waits` that it waited for the GPU counts against none of these (the file
/// is read only where one is named; a case's own limit is spared all of its child's waits, its earlier
/// cases' too, which errs on the generous side).
fn wait(
    child: &mut std::process::Child,
    batch: &Batch<'_>,
    activity: &Activity,
    waits: Option<&Path>,
    starting: &mut impl FnMut(usize),
) -> Ending {
    let mut running = 0;
    loop {
        while running + 1 < batch.cases.len() && batch.cases[running].result.exists() {
            running += 1;
            activity.next_case();
            starting(running);
        }
        // Waits only ever hold a limit off: the child's file is read only once one is reached
        // without them, not at every turn of this loop.
        let stopped = limit_reached(batch, activity, &Waits::default())
            .and_then(|_| limit_reached(batch, activity, &waits.map(Waits::read).unwrap_or_default()));
        match child.try_wait() {
            Ok(Some(status)) => return Ending::Exited(status),
            Ok(None) if stopped.is_some() => {
                stop_group(child);
                let _ = child.wait(); // reaped; how it ended no longer matters
                return stopped.unwrap_or(Ending::TooLong);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(err) => {
                stop_group(child);
                let _ = child.wait(); // reaped, if it still can be
                return Ending::Lost(err.to_string());
            }
        }
    }
}

/// SIGKILL to the child's process group (it leads one of its own: `process_group(0)`); nothing where
/// the group has no process left.
pub(crate) fn stop_group(child: &std::process::Child) {
    if let Ok(group) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals that process group; ours by construction.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}

/// The one row the child wrote for `case`, or why there is none: `None` where there is no file (the
/// case never got to write one), else what is wrong with it.
pub fn read_row(path: &Path, case: &str) -> Result<Row, Option<String>> {
    use std::io::Read as _;
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(err) => return Err(Some(format!("cannot read the case's result: {err}"))),
    };
    let mut bytes = Vec::new();
    file.take(MAX_ROW_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("cannot read the case's result: {err}"))?;
    if bytes.len() as u64 > MAX_ROW_BYTES {
        return Err(Some(format!(
            "the case's result is oversized (over {MAX_ROW_BYTES} bytes)"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| "the case's result is malformed (not UTF-8)".to_string())?;
    let lines: Vec<&str> = text.lines().collect();
    let why = match lines.as_slice() {
        [line] if text.ends_with('\n') => match Row::from_line(line) {
            Some(row) if row.case == case => return Ok(row),
            Some(row) => format!("the case's result is for another case ({})", row.case),
            None => "the case's result is malformed".to_string(),
        },
        [] => "the case's result is empty".to_string(),
        [_] => "the case's result is malformed (no line end)".to_string(),
        more => format!("the case reported {} results, not one", more.len()),
    };
    Err(Some(why))
}

/// In the child: writes the row into the file the parent named. The file must not exist yet: a
/// second row is refused here, and the parent would refuse it too.
pub fn write_row(path: &Path, row: &Row) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("writing the case's result to {}", path.display()))?;
    writeln!(file, "{}", row.to_line()).with_context(|| format!("writing the case's result to {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::{Outcome, Row};
    use common::private_dir::PrivateDir;

    /// Issue 65: a child waiting for the GPU is not silent, nor one that just began or ended a wait.
    #[test]
    fn waiting_for_the_gpu_is_no_silence() {
        let activity = Activity::start();
        std::thread::sleep(Duration::from_millis(50));
        assert!(silent_for(&activity, &Waits::default()) >= Duration::from_millis(50));
        let waiting = Waits {
            now: Duration::from_millis(40),
            ..Waits::default()
        };
        assert_eq!(silent_for(&activity, &waiting), Duration::ZERO);
        let just_ended = Waits {
            since_last: Some(Duration::from_millis(1)),
            ..Waits::default()
        };
        assert_eq!(silent_for(&activity, &just_ended), Duration::from_millis(1));
    }

    const CASE: &str = "17 x 33 x 5";

    fn good_row() -> Row {
        Row {
            case: CASE.to_string(),
            result: Ok(Outcome {
                wrong: 0,
                elements: 85,
                first: None,
                times: Some(crate::times::Times {
                    student_ms: 1.0,
                    ours_ms: 1.0,
                    spread: 0.0,
                }),
                finding: None,
            }),
        }
    }

    /// A stand-in child: `sh -c SCRIPT` with `$1` the result file.
    fn stand_in(script: &str, limit: Duration) -> CaseRun {
        stand_in_with(
            script,
            Limits {
                silence: limit,
                total: limit,
            },
            None,
        )
    }

    fn stand_in_with(script: &str, limits: Limits, finished: Option<i32>) -> CaseRun {
        let dir = PrivateDir::new("case-process-test").unwrap();
        let slot = Slot {
            case: CASE.to_string(),
            result: dir.path().join("result-0"),
        };
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(&slot.result)
            .env("ROW", good_row().to_line())
            .env(
                "FAKE",
                Row {
                    case: CASE.into(),
                    result: Ok(Outcome { wrong: 0, ..outcome() }),
                }
                .to_line(),
            );
        let batch = Batch {
            cases: std::slice::from_ref(&slot),
            limits,
            deadline: None,
            finished,
            boundary: "",
            others: false,
        };
        let mut runs = run(command, &batch, |_| {});
        assert_eq!(runs.len(), 1);
        runs.remove(0)
    }

    /// A stand-in child of three cases `a`, `b`, `c`: `$1` is the folder of their result files
    /// (`r-a`, ...), `$ROW_a`, `$ROW_b` and `$ROW_c` their rows, `$END` the boundary.
    fn batch_stand_in(script: &str, limits: Limits, deadline: Option<Deadline>) -> (Vec<CaseRun>, Vec<usize>) {
        let dir = PrivateDir::new("case-process-test").unwrap();
        let slots: Vec<Slot> = ["a", "b", "c"]
            .iter()
            .map(|case| Slot {
                case: case.to_string(),
                result: dir.path().join(format!("r-{case}")),
            })
            .collect();
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(dir.path())
            .env("END", "<end 42>\n");
        for slot in &slots {
            command.env(
                format!("ROW_{}", slot.case),
                Row {
                    case: slot.case.clone(),
                    ..good_row()
                }
                .to_line(),
            );
        }
        let batch = Batch {
            cases: &slots,
            limits,
            deadline,
            finished: None,
            boundary: "<end 42>\n",
            others: false,
        };
        let mut started = Vec::new();
        let runs = run(command, &batch, |index| started.push(index));
        (runs, started)
    }

    fn outcome() -> Outcome {
        Outcome {
            wrong: 3,
            elements: 85,
            first: None,
            times: None,
            finding: None,
        }
    }

    #[test]
    fn the_row_comes_from_the_result_file_and_a_row_on_stdout_is_ignored() {
        let run = stand_in(
            "printf '%s\\n' \"$FAKE\"; printf '%s\\n' \"$ROW\" > \"$1\"",
            Duration::from_secs(20),
        );
        assert_eq!(run.row, good_row());
        // A row printed on stdout alone (a kernel's printf) is no result.
        let forged = stand_in("printf '%s\\n' \"$ROW\"", Duration::from_secs(20));
        assert_eq!(
            forged.row.result,
            Err("the case ended without reporting a result".into())
        );
        assert_eq!(forged.stdout.last_line(), Some(good_row().to_line().trim()));
    }

    #[test]
    fn two_oversized_malformed_or_foreign_rows_are_faults_with_a_reason() {
        let limit = Duration::from_secs(20);
        let fault = |script: &str| stand_in(script, limit).row.result.unwrap_err().why().to_string();
        assert_eq!(
            fault("printf '%s\\n%s\\n' \"$ROW\" \"$ROW\" > \"$1\""),
            "the case reported 2 results, not one"
        );
        assert!(fault("head -c 100000 /dev/zero | tr '\\0' x > \"$1\"").starts_with("the case's result is oversized"));
        assert_eq!(
            fault("echo 'CHECK-ROW\tnonsense' > \"$1\""),
            "the case's result is malformed"
        );
        assert_eq!(
            fault("printf '%s' \"$ROW\" > \"$1\""),
            "the case's result is malformed (no line end)"
        );
        assert_eq!(fault(": > \"$1\""), "the case's result is empty");
        assert!(fault("printf '%s\\n' \"$ROW\" | sed 's/17 x 33/18 x 33/' > \"$1\"")
            .starts_with("the case's result is for another case"));
        // A child that fails says why, from its last line on stderr.
        let failed = fault("echo 'lab-mmm: error: CUDA_ERROR_ILLEGAL_ADDRESS' >&2; exit 1");
        assert!(
            failed.starts_with("lab-mmm: error: CUDA_ERROR_ILLEGAL_ADDRESS (exit status: 1)"),
            "{failed}"
        );
    }

    #[test]
    fn a_process_the_case_left_holding_its_output_does_not_hold_up_the_parent() {
        let started = std::time::Instant::now();
        let run = stand_in("sleep 60 & printf '%s\\n' \"$ROW\" > \"$1\"", Duration::from_secs(120));
        assert_eq!(run.row, good_row());
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "waited {:?} for the leftover sleep",
            started.elapsed()
        );
    }

    #[test]
    fn megabytes_of_output_flow_while_the_child_runs() {
        // 8 MiB on stdout and 8 MiB on stderr: far past a pipe's 64 KiB, which would stall a child
        // whose parent reads only after it exits.
        let run = stand_in(
            "i=0; while [ $i -lt 16 ]; do head -c 524288 /dev/zero | tr '\\0' 'x' | fold -w 99; head -c 524288 /dev/zero | tr '\\0' 'y' | fold -w 99 >&2; i=$((i+1)); done; printf '%s\\n' \"$ROW\" > \"$1\"",
            Duration::from_secs(60),
        );
        assert_eq!(run.row, good_row());
        assert!(
            run.stdout.bytes >= 8 << 20 && run.stderr.bytes >= 8 << 20,
            "{} {}",
            run.stdout.bytes,
            run.stderr.bytes
        );
        assert!(run.stdout.shown().lines().count() <= crate::output::HEAD + 1 + crate::output::TAIL);
    }

    #[test]
    fn a_hung_child_and_its_children_are_stopped_at_the_limit() {
        // The background sleep holds stdout too: had it survived the stop, the drain would wait for it.
        let silent = Limits {
            silence: Duration::from_millis(300),
            total: Duration::from_secs(20),
        };
        let run = stand_in_with("sleep 30 & sleep 30", silent, None);
        assert_eq!(
            run.row.result,
            Err("printed nothing for 0 s and did not end (an endless loop?); stopped".into())
        );
        let chatty = stand_in_with(
            "while true; do echo still here; sleep 0.05; done",
            Limits {
                silence: Duration::from_secs(20),
                total: Duration::from_millis(500),
            },
            None,
        );
        assert_eq!(chatty.row.result, Err("still running after 0 s; stopped".into()));
    }

    /// Issue 60: a case killed by a SIGKILL the check did not send (the OOM killer's signal) is the
    /// machine's; one the check stopped at its limits, or that died of another signal, is its own.
    #[test]
    fn a_sigkill_the_check_did_not_send_is_the_machines() {
        let run = stand_in("echo allocating >&2; kill -KILL $$", Duration::from_secs(20));
        assert!(
            matches!(&run.row.result, Err(crate::row::NoResult::Machine(why)) if why.starts_with("the case was killed by SIGKILL, which the check did not send") && why.ends_with("(allocating)")),
            "{:?}",
            run.row.result
        );
        let crashed = stand_in("kill -SEGV $$", Duration::from_secs(20));
        assert!(
            matches!(&crashed.row.result, Err(crate::row::NoResult::Fault(why)) if why.contains("SIGSEGV")),
            "{:?}",
            crashed.row.result
        );
    }

    /// Issue 21: a correct kernel that prints from every thread is slow, but never silent for long.
    #[test]
    fn a_child_that_keeps_printing_runs_past_the_silence_limit() {
        let limits = Limits {
            silence: Duration::from_millis(400),
            total: Duration::from_secs(20),
        };
        let run = stand_in_with(
            "i=0; while [ $i -lt 12 ]; do echo block $i; sleep 0.1; i=$((i+1)); done; printf '%s\\n' \"$ROW\" > \"$1\"",
            limits,
            None,
        );
        assert_eq!(run.row, good_row());
        assert_eq!(run.stdout.lines(), 12);
    }

    /// Under compute-sanitizer a finding changes the exit code; the row the case wrote still counts.
    #[test]
    fn the_exit_code_of_a_finished_run_with_findings_still_gives_the_row() {
        let limits = Limits {
            silence: Duration::from_secs(20),
            total: Duration::from_secs(20),
        };
        let script = "printf '%s\\n' \"$ROW\" > \"$1\"; exit 86";
        assert_eq!(stand_in_with(script, limits, Some(86)).row, good_row());
        assert!(stand_in_with(script, limits, None)
            .row
            .result
            .unwrap_err()
            .why()
            .ends_with("(exit status: 86)"));
    }

    #[test]
    fn a_child_writes_its_row_once() {
        let dir = PrivateDir::new("case-process-test").unwrap();
        let path = dir.path().join("result");
        write_row(&path, &good_row()).unwrap();
        assert!(write_row(&path, &good_row()).is_err());
        assert_eq!(read_row(&path, CASE).unwrap(), good_row());
    }

    /// Issue 39: one child runs the cases in turn; each case gets its own output, its own clock, and
    /// the child's end is the fault of the case it was in.
    #[test]
    fn a_batch_gives_each_case_its_row_and_output_and_stops_at_the_case_that_ends_it() {
        let limits = Limits {
            silence: Duration::from_secs(20),
            total: Duration::from_secs(20),
        };
        let all = r#"for c in a b c; do echo "out of $c"; echo "err of $c" >&2; printenv ROW_$c > "$1/r-$c"; printf "$END"; printf "$END" >&2; done"#;
        let (runs, started) = batch_stand_in(all, limits, None);
        assert_eq!(started, [0, 1, 2]);
        assert_eq!(
            runs.iter().map(|run| run.row.case.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert!(runs.iter().all(|run| run.row.passed()), "{runs:?}");
        assert_eq!(runs[1].stdout.shown(), "out of b\n");
        assert_eq!(runs[2].stderr.shown(), "err of c\n");
        // The child dies in case b: a has its row, b the fault with b's last words, c did not run.
        let dies = r#"printenv ROW_a > "$1/r-a"; echo 'a is fine' >&2; printf "$END" >&2; echo 'lab: error: CUDA_ERROR_ILLEGAL_ADDRESS' >&2; exit 1"#;
        let (runs, _) = batch_stand_in(dies, limits, None);
        assert_eq!(runs.len(), 2);
        assert!(runs[0].row.passed());
        assert_eq!(
            runs[1].row.result,
            Err("lab: error: CUDA_ERROR_ILLEGAL_ADDRESS (exit status: 1)".into())
        );
        assert_eq!(runs[1].exit, Some(1));
        // The clock is each case's: three cases of 0.4 s each pass a limit of 1 s; a hung one stops.
        let slow = r#"for c in a b c; do sleep 0.4; printenv ROW_$c > "$1/r-$c"; done"#;
        let each_second = Limits {
            silence: Duration::from_secs(1),
            total: Duration::from_secs(1),
        };
        assert!(batch_stand_in(slow, each_second, None)
            .0
            .iter()
            .all(|run| run.row.passed()));
        let hangs = r#"printenv ROW_a > "$1/r-a"; sleep 30"#;
        let (runs, _) = batch_stand_in(
            hangs,
            Limits {
                silence: Duration::from_millis(300),
                total: Duration::from_secs(20),
            },
            None,
        );
        assert_eq!(
            runs[1].row.result,
            Err("printed nothing for 0 s and did not end (an endless loop?); stopped".into())
        );
        // The --time-limit is the whole check's, whatever each case's clock says.
        let deadline = Deadline {
            at: Instant::now() + Duration::from_millis(600),
            seconds: 9,
        };
        let (runs, _) = batch_stand_in(slow, limits, Some(deadline));
        assert_eq!(
            runs.last().unwrap().row.result,
            Err("still running when the --time-limit of 9 s ran out; stopped".into())
        );
        assert!(runs.len() >= 2 && runs[0].row.passed(), "{runs:?}");
    }
}

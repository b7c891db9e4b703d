//! The check runner: what a lab's `--check` runs ([`Check`]). In the parent, the compiled image is
//! written into a private folder and the cases run in child processes of the lab (as few as the
//! cases allow; with `--sanitize` each case alone under compute-sanitizer's tools; racecheck and
//! synccheck on the race case in every check), the measured technique beside them. In a child, its
//! cases run one after another and each one's row is written where the parent said.
//!
//! Under the grader, several checks may share a GPU ([`gpu_lock`]), and each child holds it only for
//! the work that needs it: a case's timed loops and the measured child's launches (ncu) alone,
//! compute-sanitizer's runs beside each other. What a child waits for the GPU counts neither as its
//! silence nor against its limits ([`case_process`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use common::private_dir::PrivateDir;
use kernels::KernelImage;

use crate::case_process::{self, Batch, CaseRun, Deadline, Limits, Slot};
use crate::cases_file;
use crate::entries::{student_report, Entry};
use crate::exit::machine_of;
use crate::gpu_lock;
use crate::mark;
use crate::measure;
use crate::phases;
use crate::progress::Progress;
use crate::report::{report, unrun};
use crate::row::{NoResult, Outcome, Row};
use crate::sanitizer::{self, Tool};
use crate::student_args::StudentArgs;
use crate::times::CaseContext;

/// What a lab's `--check` runs: its name (for the private folder), the kernels the cases call (their
/// ptxas report chooses the sanitizer's tools) and the cases.
pub(crate) struct Check<'a, C> {
    pub lab: &'a str,
    pub entries: &'a [Entry],
    pub cases: cases_file::CaseSet<C>,
    /// The week's technique measured while the kernel runs, where the week teaches one.
    pub measure: Option<measure::Measure<'a, C>>,
    /// Flags every case's child gets beyond the parent's own: what the parent chose that its command
    /// line does not say (lab-mmm's week, taken from the file: `--kernel tiled`).
    pub child_flags: &'a [&'a str],
    /// Whether each case holds the GPU around each of its launches itself
    /// ([`crate::kernel_week::KernelWeek::holds_its_launches`]).
    pub holds_its_launches: bool,
}

/// In a check's child: runs the cases from `first` to `--check-last` with the parent's compile, one
/// after another in one CUDA context, and writes each row where the parent said. A [`Machine`] error
/// (the image could not be loaded for want of a GPU, or a step the lab takes before the student's
/// module is loaded: [`on_the_machine`]) becomes a MACHINE row; any other error ends the child, and
/// the parent makes the case a FAULT and runs the cases after it in a new child.
///
/// [`Machine`]: crate::exit::Machine
/// [`on_the_machine`]: crate::exit::on_the_machine
pub(crate) fn run_cases<C>(
    args: &StudentArgs,
    check: &Check<'_, C>,
    first: usize,
    compiled: &Result<&'static KernelImage>,
    run_case: impl Fn(&KernelImage, &C, CaseContext) -> Result<Outcome>,
) -> Result<()> {
    let prefix = args
        .check_result
        .as_deref()
        .context("--check-case needs --check-result")?;
    let result = |index: usize| case_process::result_file(prefix, index);
    let last = args.check_last.unwrap_or(first);
    let name = |index: usize| {
        if args.measure_technique {
            "measured".to_string()
        } else {
            check.cases.names.get(index).cloned().unwrap_or_default()
        }
    };
    let image = match compiled {
        Ok(image) => *image,
        Err(err) => {
            let why = machine_of(err).with_context(|| format!("{err:#}"))?;
            for index in first..=last {
                case_process::write_row(
                    &result(index),
                    &Row {
                        case: name(index),
                        result: Err(NoResult::Machine(why.clone())),
                    },
                )?;
            }
            return Ok(());
        }
    };
    if args.measure_technique {
        let measure = check.measure.as_ref().context("this week measures no technique")?;
        if let (Some(go), Some(parent)) = (&args.measure_after, args.measure_parent) {
            measure::wait_for_the_cases(go, parent)?;
        }
        // The context (with room for what the kernels print) made beside other checks' work; then,
        // in its turn with ncu (`gpu_lock::ncu_turn`), ncu's first launch beside them, and from
        // before the week's first launch to after its last alone on the GPU where checks share it
        // (`measure::alone`). The context is destroyed once the GPU is given back, and the turn
        // (declared first) given back after it.
        let mut ncu_turn = None;
        let held = phases::timed("context", roomy_context);
        let ncu_ready = held.as_ref().map(|gpu| {
            ncu_turn = crate::exit::on_the_machine(phases::timed("ncu's turn", gpu_lock::ncu_turn))?;
            phases::timed("ncu's first launch", || measure::first_launch(gpu))
        });
        let measured = match ncu_ready {
            Some(Err(err)) => Err(err),
            _ => measure::alone(|| (measure.run)(image, &measure.cases, args.measure_whose)),
        };
        // Its own line beside the check's (`LAB_PHASES`): where the hold that the check's line names
        // "ncu ... alone" went.
        phases::write(Path::new(&format!("{} (measured)", image.source)));
        let row = match measured {
            Ok(()) => measure::ran("measured"),
            Err(err) => Row {
                case: "measured".to_string(),
                result: Err(NoResult::Machine(machine_of(&err).with_context(|| format!("{err:#}"))?)),
            },
        };
        return case_process::write_row(&result(first), &row);
    }
    // The context for the whole child (not made in the measured child before its cases are done).
    let held = roomy_context();
    // Under compute-sanitizer the case holds the GPU beside other such runs: around each of its
    // launches where the lab's case takes the GPU for them itself (`holds_its_launches`,
    // `gpu_lock::launches_beside`), else for its whole run. Not under it, only its timed loops hold
    // the GPU alone, and its untimed launches shared (`gpu_lock::time_alone`).
    let whole_case = match (args.under_sanitizer, check.holds_its_launches) {
        (false, _) => {
            gpu_lock::time_alone();
            false
        }
        (true, true) => {
            gpu_lock::launches_beside();
            false
        }
        (true, false) => true,
    };
    for index in first..=last {
        let Some(case) = check.cases.cases.get(index) else {
            bail!("there is no check case {index}")
        };
        let beside = match whole_case {
            true => gpu_lock::Lease::shared().map(Some),
            false => Ok(None),
        };
        let ran = beside.and_then(|_beside| {
            run_case(
                image,
                case,
                CaseContext {
                    sanitized: args.under_sanitizer,
                },
            )
        });
        let row = match ran {
            Ok(outcome) => Row {
                case: name(index),
                result: Ok(outcome),
            },
            Err(err) => match machine_of(&err) {
                Some(why) => Row {
                    case: name(index),
                    result: Err(NoResult::Machine(why)),
                },
                None => return Err(err),
            },
        };
        // A context the case's kernel broke (an error that stays, found at the next call) fails this
        // case, before its row, and ends the child: the next case needs a fresh one.
        if let Some(gpu) = &held {
            gpu.synchronize().context("the GPU context after the case")?;
        }
        case_process::write_row(&result(index), &row)?;
        end_of_case(args.check_boundary.as_deref().unwrap_or_default())?;
    }
    Ok(())
}

/// The room device `printf` gets in a check's children (`cudaLimitPrintfFifoSize`): a line for each
/// of a million threads. Once the FIFO is full, every further `printf` waits for room: on an H200, a
/// kernel printing one line from each thread of a 1000 x 1000 matrix ended no launch within 60 s with
/// the default FIFO (8 MB there), and took 0.25 to 0.40 s a launch with this room (issue 65, run 12).
/// Its check then holds the GPU that much less; the student still sees the first 100 and the last 20
/// lines of each case.
const PRINTF_ROOM: usize = 256 << 20;

/// A reference to the GPU's primary context for the whole child, with [`PRINTF_ROOM`]: each case's
/// own `Gpu::open` then finds it made, instead of making it again (0.1 s on an H100). Where it fails,
/// each case's own open says why; where the room cannot be had (a small GPU), printing is only slower.
fn roomy_context() -> Option<common::gpu::Gpu> {
    let gpu = common::gpu::Gpu::open(0).ok()?;
    let _ = common::gpu::set_printf_room(PRINTF_ROOM);
    Some(gpu)
}

/// After a case's row: what its kernels printed (device `printf` goes through the C library's
/// buffered stdout) flushed, then the boundary on stdout and stderr, so that the parent gives each
/// case its own output.
fn end_of_case(boundary: &str) -> Result<()> {
    use std::io::Write as _;
    // SAFETY: fflush(NULL) flushes every open output stream of the C library; it takes no pointer
    // of ours.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    let mut stdout = std::io::stdout().lock();
    write!(stdout, "{boundary}")
        .and_then(|()| stdout.flush())
        .context("writing to stdout")?;
    eprint!("{boundary}");
    Ok(())
}

/// When a case counts as hung: after 30 s without output (our kernels take under 2 s per case,
/// process start included; a broken tree of child grids was seen to run for minutes without end), or
/// after 5 minutes however much it prints (a correct kernel printing from each of a million threads
/// takes about 20 s on an H200).
const CASE_LIMITS: Limits = Limits {
    silence: Duration::from_secs(30),
    total: Duration::from_secs(300),
};

/// The same under compute-sanitizer, which slows kernels down 10 to 100 times (racecheck the most)
/// and prints nothing until the program ends: only the total counts.
const SANITIZED_LIMITS: Limits = Limits {
    silence: Duration::from_secs(600),
    total: Duration::from_secs(600),
};

/// The most of a sanitizer's log that is read: its first finding is near the top.
const MAX_LOG_BYTES: u64 = 4 << 20;

/// The parent's side of `--check`: writes the compiled image into a private folder, runs the cases
/// in children (this program, with the parent's other flags: [`Children::run_all`]; with
/// `--sanitize` each case alone under compute-sanitizer), prints the table (or CSV) and what failing
/// cases printed, and fails unless every case passed.
///
/// `rules` are rows the lab made from the compiler's report or the PTX (where a variable lives, say),
/// before any case ran; they count like cases, and are shown even without a GPU.
pub(crate) fn run_check<C>(
    args: &StudentArgs,
    image: &KernelImage,
    check: &Check<'_, C>,
    rules: Vec<Row>,
) -> Result<()> {
    let sanitizer = match machine_for_the_cases(args) {
        Ok(sanitizer) => sanitizer,
        Err(why) => {
            // No case can run here: the rules, which need no GPU, and MACHINE for the rest.
            let mut rows = rules;
            rows.extend(unrun(check, &NoResult::Machine(why)));
            return report(args, check, &rows, &[], None, None);
        }
    };
    let dir = PrivateDir::new(&format!("{}-check", check.lab))?;
    let image_path = dir.path().join("kernel.image");
    let build = image
        .newest()
        .with_context(|| format!("{} was not compiled", image.source))?;
    std::fs::write(&image_path, build.image).with_context(|| format!("writing {}", image_path.display()))?;
    let exe = std::env::current_exe().context("finding this program to run the cases")?;
    let tools = Tool::for_kernels(uses_shared_memory_or_barriers(image, check.entries));
    let progress = Progress::new(check.cases.names.len());
    let deadline = args.time_limit.map(|seconds| Deadline {
        at: Instant::now() + Duration::from_secs(seconds),
        seconds,
    });
    // The measured child (ncu around this lab) starts now and waits for the cases before it touches
    // the GPU, so ncu's start overlaps them; it measures once they are done.
    let go = dir.path().join("go");
    let measured = check.measure.as_ref().map(|week| {
        // A measured child launching `whose` kernels, ncu's counters into `csv`: its metrics for the
        // student's PTX where it launches the student's alone, else for any code.
        let child = |whose: measure::Whose, csv: PathBuf| -> Result<measure::MeasuredChild, NoResult> {
            let prefix = dir.path().join(format!("result-measured-{}-", whose.flag()));
            let mut program = Command::new(&exe);
            program
                .args(child_args(&image_path, 0..=0, &prefix, false, check.child_flags, ""))
                .arg("--measure-technique")
                .args(["--measure-whose", whose.flag()]);
            program
                .arg("--measure-after")
                .arg(&go)
                .arg("--measure-parent")
                .arg(std::process::id().to_string());
            // The student's kernels alone (where checks share the GPU) may be measured in a batch.
            let theirs = whose == measure::Whose::Theirs;
            let ptx = build.ptx.filter(|_| theirs);
            week.child(&program, csv, case_process::result_file(&prefix, 0), ptx, theirs)
        };
        // It may wait as long as every case may run, then run as long as a measurement may.
        let per_case = if sanitizer.is_some() {
            SANITIZED_LIMITS.total * tools.len() as u32
        } else {
            CASE_LIMITS.total
        };
        let limits = Limits {
            silence: measure::LIMITS.silence,
            total: measure::LIMITS.total + per_case * check.cases.names.len() as u32,
        };
        // Where no lock file is named, the child launches the student's kernels and ours; where one
        // is (grade.sh, whatever its jobs), ours are measured once for all checks (`measure::Ours`).
        let prepared = (|| -> Result<measure::Measuring, NoResult> {
            let ours = match week.ours_file(check.lab, &check.cases.hash) {
                Some(file) => Some(measure::Ours {
                    child: child(measure::Whose::Ours, measure::Ours::partial(&file))?,
                    file,
                    per_case: week.launches_per_case / 2,
                    cases: week.cases.len(),
                }),
                None => None,
            };
            let whose = if ours.is_some() {
                measure::Whose::Theirs
            } else {
                measure::Whose::Both
            };
            Ok(measure::Measuring {
                child: child(whose, dir.path().join("measured.csv"))?,
                ours,
                limits,
                deadline,
            })
        })();
        (week, prepared)
    });
    let mut races = None;
    // Alone on a GPU, the measured child starts now and waits for the cases, so that ncu's start
    // overlaps them. Where checks share the GPU (the grader's lock), it starts after the cases, and
    // holds the GPU alone from before the week's first launch to after its last (`measure::alone`),
    // not while ncu starts, prepares its first launch or writes its report: started early, beside
    // 15 other checks whose ncu ran as their lock allowed then, it left a class of 48 on an H200
    // with none graded after 9 minutes (issue 65, run 1).
    let early = !gpu_lock::named();
    let (runs, measured) = std::thread::scope(|scope| {
        let start = |prepared: Result<measure::Measuring, NoResult>| {
            prepared.map(|measuring| scope.spawn(move || measuring.run()))
        };
        let (mut measuring, mut pending) = (None, None);
        if let Some((week, prepared)) = measured {
            if early {
                measuring = Some((week, Some(start(prepared))));
            } else {
                measuring = Some((week, None));
                pending = Some(prepared);
            }
        }
        let go = measure::Go(&go);
        let alone = uses_the_device_heap(image);
        let children = Children {
            exe: &exe,
            image: &image_path,
            dir: dir.path(),
            names: &check.cases.names,
            progress: &progress,
            deadline,
            flags: check.child_flags,
            boundary: boundary(),
            alone,
        };
        let runs = match &sanitizer {
            Some(sanitizer) => phases::timed("cases", || {
                (0..check.cases.names.len())
                    .map(|index| {
                        // A case the set says nothing of is checked with every tool.
                        let shared_checked = check.cases.shared_checked.get(index).copied().unwrap_or(true);
                        let tools: Vec<Tool> = tools
                            .iter()
                            .copied()
                            .filter(|&tool| shared_checked || tool == Tool::Memcheck)
                            .collect();
                        children.run_sanitized(index, sanitizer, &tools)
                    })
                    .collect()
            }),
            None => {
                let mut runs = phases::timed("cases", || children.run_all());
                races = phases::timed("races", || {
                    check_races(&children, check.cases.race_case, &tools, &mut runs)
                });
                runs
            }
        };
        drop(go);
        if let (Some((_, thread)), Some(prepared)) = (&mut measuring, pending) {
            *thread = Some(start(prepared));
        }
        progress.case(0, "the technique, measured with hardware counters (ncu)", None);
        let measured = measuring.map(|(week, thread)| {
            let measuring_started = Instant::now();
            let launches = thread
                .unwrap_or_else(|| Err(NoResult::Fault("the measurement did not start".into())))
                .and_then(|thread| {
                    thread
                        .join()
                        .unwrap_or_else(|_| Err("the measurement's thread panicked".into()))
                });
            phases::note("ncu", measuring_started.elapsed());
            let rows = week.rows(launches);
            // Under grade.sh (the closing mark), the machine's rows stay MACHINE; on a student's own
            // machine, rules it cannot measure are left to grading.
            if args.mark {
                rows
            } else {
                crate::measure::at_grading(rows)
            }
        });
        (runs, measured)
    });
    progress.clear();
    phases::write(Path::new(image.source));
    let mut rows = rules;
    rows.extend(measured.unwrap_or_default());
    rows.extend(runs.iter().map(|run| run.row.clone()));
    // The heading names the cases racecheck and synccheck left out only where they ran at all.
    let sanitized = sanitizer.is_some().then(|| {
        let shared = tools.contains(&Tool::Racecheck);
        check.cases.shared_checks_note().filter(|_| shared)
    });
    report(args, check, &rows, &runs, sanitized, races)
}

/// Issue 61: racecheck and synccheck on the case set's race case
/// ([`CaseSet::race_case`](cases_file::CaseSet::race_case)) in every check, not only under `--sanitize`: a missing barrier whose race the cases' values happen to hide
/// fails that case with the tool's finding. Where the kernels use no shared memory and no barrier
/// there is nothing to look for. Without compute-sanitizer, or where the tool itself fails, the case
/// keeps its plain verdict. What the table's heading says of it.
fn check_races(children: &Children, race_case: Option<usize>, tools: &[Tool], runs: &mut [CaseRun]) -> Option<String> {
    let index = race_case.filter(|_| tools.contains(&Tool::Racecheck))?;
    let name = children.names.get(index)?;
    let Some(sanitizer) = sanitizer::find() else {
        return Some(format!(
            "races not checked: no compute-sanitizer ({})",
            sanitizer::WHERE_WE_LOOK
        ));
    };
    let raced = children.run_sanitized(index, &sanitizer, &[Tool::Racecheck, Tool::Synccheck]);
    // Only a tool's finding fails the case here; anything else (a time limit used up, the tool's
    // own failure) leaves it as its plain run judged it.
    let by_a_tool = |why: &str| why.starts_with("racecheck: ") || why.starts_with("synccheck: ");
    let finding = match &raced.row.result {
        Ok(outcome) => outcome.finding.clone(),
        Err(NoResult::Fault(why)) if by_a_tool(why) => Some(why.clone()),
        Err(NoResult::Machine(why)) => {
            // Not checked for the machine's want (the GPU's lock, say): not graded, never passed as is.
            if let Some(run) = runs.get_mut(index) {
                run.row.result = Err(NoResult::Machine(why.clone()));
            }
            return Some(format!("races not checked on \"{name}\": {why}"));
        }
        Err(why) => return Some(format!("races not checked on \"{name}\": {}", why.why())),
    };
    let run = runs.get_mut(index)?;
    if run.row.passed() && finding.as_deref().is_some_and(by_a_tool) {
        run.row = raced.row;
    }
    Some(format!("racecheck and synccheck on \"{name}\" too"))
}

/// What the machine lacks for the cases, found before any runs: a GPU and its driver (cuInit), and
/// with `--sanitize` compute-sanitizer, which it returns.
fn machine_for_the_cases(args: &StudentArgs) -> std::result::Result<Option<PathBuf>, String> {
    common::gpu::count().map_err(|err| format!("{err:#}"))?;
    match args.sanitize {
        true => sanitizer::find().map(Some).ok_or_else(|| {
            format!(
                "--sanitize needs NVIDIA's compute-sanitizer, and none was found ({})",
                sanitizer::WHERE_WE_LOOK
            )
        }),
        false => Ok(None),
    }
}

/// Whether the student's kernels use shared memory or barriers, which decides whether racecheck and
/// synccheck run: every kernel of the image counts, not only the lab's `entries` (week 7's masters
/// launch `workers<F>`, which are kernels of the image too), from its ptxas report and its PTX
/// ([`sanitizer::uses_shared_memory_or_barriers`]). The parent compiled the image, so the report is
/// there; where it is not, or it lacks one of the `entries`, nothing is known and every tool runs.
fn uses_shared_memory_or_barriers(image: &KernelImage, entries: &[Entry]) -> bool {
    let Ok(report) = student_report(image) else { return true }; // unknown: run every tool
    if entries.iter().any(|entry| report.function(entry.name).is_none()) {
        return true;
    }
    sanitizer::uses_shared_memory_or_barriers(&report, image.newest().and_then(|build| build.ptx))
}

/// The cases' child processes, as the parent starts them.
struct Children<'a> {
    exe: &'a Path,
    image: &'a Path,
    dir: &'a Path,
    names: &'a [String],
    progress: &'a Progress,
    deadline: Option<Deadline>,
    /// [`Check::child_flags`].
    flags: &'a [&'a str],
    /// The line each child prints after each case ([`output::Segments`]).
    ///
    /// [`output::Segments`]: crate::output::Segments
    boundary: String,
    /// Each case in a child of its own ([`uses_the_device_heap`]).
    alone: bool,
}

/// Whether the student's kernels call `malloc`: the device heap belongs to the CUDA context, not to
/// the module, so what one case left there (a leak that fills it, or data a later `malloc` hands back)
/// would reach the next case in the same child. Such a file's cases run one per child, as they all
/// did before issue 39's budget. Read from the PTX nvcc made (conservatively: the word anywhere).
fn uses_the_device_heap(image: &KernelImage) -> bool {
    image
        .newest()
        .and_then(|build| build.ptx)
        .is_some_and(|ptx| ptx.contains("malloc"))
}

/// A line no kernel can print on purpose: made up by the parent for this check, and never on the GPU.
/// It is a flag's value on the child's command line, so it must not begin with `-`.
fn boundary() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let random = std::collections::hash_map::RandomState::new().build_hasher().finish();
    format!("<end of case {random:016x}>\n")
}

impl Children<'_> {
    /// Every case, in as few children as the cases allow: a child runs the cases from the first it
    /// is given until one ends it, and the next child starts after that one. A MACHINE row counts
    /// only from a child's first case (where nothing of the student's has run in it yet); one that
    /// comes later runs again, first in a fresh child.
    fn run_all(&self) -> Vec<CaseRun> {
        let mut runs: Vec<CaseRun> = Vec::new();
        while runs.len() < self.names.len() {
            let first = runs.len();
            if let Some(why) = self.time_used_up() {
                runs.extend(self.names[first..].iter().map(|name| CaseRun::fault(name, why.clone())));
                break;
            }
            let mut batch = self.run_from(first);
            if let Some(later) = batch.iter().skip(1).position(|run| run.row.on_the_machine()) {
                batch.truncate(later + 1);
            }
            runs.extend(batch);
        }
        runs
    }

    /// Why no case may start any more, once the `--time-limit` has passed.
    fn time_used_up(&self) -> Option<String> {
        let deadline = self.deadline.filter(Deadline::passed)?;
        Some(format!(
            "not run: the --time-limit of {} s was used up",
            deadline.seconds
        ))
    }

    /// One child for the cases from `first` on (`first` alone where [`Children::alone`]); the runs of
    /// those it got to (at least `first`).
    fn run_from(&self, first: usize) -> Vec<CaseRun> {
        let last = if self.alone { first } else { self.names.len() - 1 };
        let prefix = self.dir.join(format!("result-{first}-"));
        let slot = |(index, name): (usize, &String)| Slot {
            case: name.clone(),
            result: case_process::result_file(&prefix, index),
        };
        let slots: Vec<Slot> = self
            .names
            .iter()
            .enumerate()
            .take(last + 1)
            .skip(first)
            .map(slot)
            .collect();
        let mut command = Command::new(self.exe);
        command.args(child_args(
            self.image,
            first..=last,
            &prefix,
            false,
            self.flags,
            &self.boundary,
        ));
        let batch = Batch {
            cases: &slots,
            limits: CASE_LIMITS,
            deadline: self.deadline,
            finished: None,
            boundary: &self.boundary,
            others: false,
        };
        case_process::run(command, &batch, |offset| {
            self.progress.case(first + offset, &self.names[first + offset], None)
        })
    }

    /// Case `index` alone, under `tool` of compute-sanitizer with its log at `log`.
    fn run_under(&self, index: usize, sanitizer: &Path, tool: Tool, log: &Path) -> CaseRun {
        let name = &self.names[index];
        if let Some(why) = self.time_used_up() {
            return CaseRun::fault(name, why);
        }
        let prefix = self.dir.join(format!("result-{}-{index}-", tool.name()));
        let slot = [Slot {
            case: name.clone(),
            result: case_process::result_file(&prefix, index),
        }];
        let mut command = Command::new(sanitizer);
        command.args(sanitizer::arguments(tool, log)).arg(self.exe);
        command.args(child_args(self.image, index..=index, &prefix, true, self.flags, ""));
        let batch = Batch {
            cases: &slot,
            limits: SANITIZED_LIMITS,
            deadline: self.deadline,
            finished: Some(sanitizer::ERROR_EXIT_CODE),
            boundary: "",
            others: false,
        };
        case_process::run(command, &batch, |_| self.progress.case(index, name, Some(tool.name()))).remove(0)
    }

    /// Runs case `index` under each tool in turn until one finds something; the first run (memcheck)
    /// gives the values and the output. A later tool's run that ends without a row fails the case
    /// too: a check that did not run is not a pass. So does any run whose report does not vouch for
    /// it (no summary, an unknown exit code: [`sanitizer::verdict`]).
    fn run_sanitized(&self, index: usize, sanitizer: &Path, tools: &[Tool]) -> CaseRun {
        let mut first: Option<CaseRun> = None;
        for &tool in tools {
            let log = self.dir.join(format!("sanitizer-{index}-{}.log", tool.name()));
            let run = self.run_under(index, sanitizer, tool, &log);
            let verdict = sanitizer::verdict(
                tool,
                sanitizer::Ending::of(&run.row.result, run.exit),
                read_log(&log).as_deref(),
            );
            let stop = verdict != sanitizer::Verdict::Clean;
            let row = match (&first, run.row.result.is_err()) {
                (None, _) | (Some(_), true) => with_finding(run.row.clone(), verdict, tool),
                (Some(first), false) => with_finding(first.row.clone(), verdict, tool),
            };
            let stop = stop || row.result.is_err();
            let (stdout, stderr, exit) = match first.take() {
                Some(first) => (first.stdout, first.stderr, first.exit),
                None => (run.stdout, run.stderr, run.exit),
            };
            first = Some(CaseRun {
                row,
                stdout,
                stderr,
                exit,
            });
            if stop {
                break;
            }
        }
        first.unwrap_or_else(|| CaseRun::fault(&self.names[index], "no compute-sanitizer tool was chosen".to_string()))
    }
}

/// A sanitizer's verdict on a case's row: a finding fails a row with results, and replaces the fault
/// of one without (the finding says why the case died, whoever stopped it); a run the tool itself
/// failed is MACHINE whatever its row (issue 60). A fault under racecheck or synccheck says so.
fn with_finding(row: Row, verdict: sanitizer::Verdict, tool: Tool) -> Row {
    use sanitizer::Verdict;
    let result = match (row.result, verdict) {
        (Err(_), Verdict::Found(finding)) => Err(finding.into()),
        // The machine stopped the case (before the student's module was loaded, or a SIGKILL the
        // check did not send) and the report shows nothing of the student's.
        (Err(NoResult::Machine(why)), _) => Err(NoResult::Machine(why)),
        (Ok(outcome), Verdict::Clean) => Ok(outcome),
        (Ok(outcome), Verdict::Found(finding)) => Ok(Outcome {
            finding: Some(finding),
            ..outcome
        }),
        (_, Verdict::Machine(why)) => Err(NoResult::Machine(why)),
        (Err(fault), Verdict::Clean) if tool == Tool::Memcheck => Err(fault),
        (Err(fault), Verdict::Clean) => Err(format!("under {}: {}", tool.name(), fault.why()).into()),
    };
    Row { case: row.case, result }
}

/// A sanitizer's log, if it wrote one: its start (the first finding is near the top) and, where it
/// is longer than [`MAX_LOG_BYTES`], its end too, where the summary is, whole lines only, with a line
/// between that says how much was left out.
fn read_log(path: &Path) -> Option<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    const TAIL_BYTES: u64 = 64 << 10;
    let mut file = std::fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut head = Vec::new();
    (&mut file).take(MAX_LOG_BYTES).read_to_end(&mut head).ok()?;
    if size <= MAX_LOG_BYTES {
        return Some(String::from_utf8_lossy(&head).into_owned());
    }
    let start = size.saturating_sub(TAIL_BYTES).max(MAX_LOG_BYTES);
    let mut tail = Vec::new();
    file.seek(SeekFrom::Start(start)).ok()?;
    file.take(TAIL_BYTES).read_to_end(&mut tail).ok()?;
    // A line cut at either end is left out, so that half a summary line is never read as one.
    head.truncate(head.iter().rposition(|&byte| byte == b'\n').map_or(0, |end| end + 1));
    let tail = tail
        .iter()
        .position(|&byte| byte == b'\n')
        .map_or(&[][..], |end| &tail[end + 1..]);
    let left_out = size - head.len() as u64 - tail.len() as u64;
    Some(format!(
        "{}(... {left_out} bytes of the report left out ...)\n{}",
        String::from_utf8_lossy(&head),
        String::from_utf8_lossy(tail)
    ))
}

/// This program's command line for the cases in `cases`: the parent's flags without those of the
/// parent alone, plus the image, the cases, the prefix of their result files, whether a sanitizer
/// runs them and the line that ends each case (none where empty). Arguments stay `OsString`s: a
/// path need not be UTF-8.
fn child_args(
    image: &Path,
    cases: std::ops::RangeInclusive<usize>,
    result: &Path,
    sanitized: bool,
    flags: &[&str],
    boundary: &str,
) -> Vec<OsString> {
    let mut args = Vec::new();
    let mut skip_value = false;
    for arg in std::env::args_os().skip(1) {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        match arg.to_str() {
            Some("--check" | "--csv" | "--sanitize" | "--show-output" | mark::FLAG) => {}
            Some("--kernel-source" | "--time-limit" | "--details") => skip_value = true,
            Some(text)
                if ["--kernel-source=", "--time-limit=", "--details="]
                    .iter()
                    .any(|flag| text.starts_with(flag)) => {}
            _ => args.push(arg),
        }
    }
    args.extend(flags.iter().map(OsString::from));
    args.extend([
        OsString::from("--kernel-image"),
        image.into(),
        "--check-case".into(),
        cases.start().to_string().into(),
    ]);
    args.extend([
        OsString::from("--check-last"),
        cases.end().to_string().into(),
        "--check-result".into(),
        result.into(),
    ]);
    if !boundary.is_empty() {
        args.extend([OsString::from("--check-boundary"), boundary.into()]);
    }
    if sanitized {
        args.push("--under-sanitizer".into());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{exit_code, on_the_machine, whose_compile_error, Usage};
    use crate::row::tests::outcome;
    use kernels::runtime::CompileError;

    /// The boundary travels as a flag's value: one that began with `-` was taken for a flag.
    #[test]
    fn the_childs_command_line_parses_with_its_boundary() {
        #[derive(clap::Parser)]
        struct Lab {
            #[command(flatten)]
            student: StudentArgs,
        }
        let boundary = boundary();
        assert_ne!(boundary, super::boundary(), "each check makes up its own");
        let args = child_args(
            Path::new("k.image"),
            3..=11,
            Path::new("result-3-"),
            false,
            &["--kernel", "tiled"],
            &boundary,
        );
        let mut line = vec![OsString::from("lab")];
        line.extend(args.into_iter().skip_while(|arg| arg != "--kernel-image"));
        let parsed = <Lab as clap::Parser>::try_parse_from(line).unwrap();
        assert_eq!(
            (parsed.student.check_case, parsed.student.check_last),
            (Some(3), Some(11))
        );
        assert_eq!(parsed.student.check_boundary.as_deref(), Some(boundary.as_str()));
    }

    /// Issue 45: MACHINE comes only from the lab's own steps. A fault whose words say "machine" (what
    /// a case printed, or its child's last line) stays the student's FAULT; a child's row is MACHINE
    /// only with the tag our code writes into the result file, which a kernel's printf cannot reach.
    #[test]
    fn only_the_labs_own_steps_make_a_machine_row() {
        let said = Row::from_line("CHECK-ROW\tc\tfault\tmachine: no usable CUDA GPU").unwrap();
        assert_eq!(said.verdict(), "FAULT");
        assert_eq!(
            NoResult::from("machine: out of memory"),
            NoResult::Fault("machine: out of memory".into())
        );
        let ours = Row {
            case: "c".into(),
            result: Err(NoResult::Machine("no usable CUDA GPU".into())),
        };
        assert_eq!(Row::from_line(&ours.to_line()), Some(ours.clone()));
        assert_eq!(ours.verdict(), "MACHINE");
        // Under compute-sanitizer, a case the machine stopped before the student's module stays MACHINE.
        assert_eq!(
            with_finding(
                ours.clone(),
                sanitizer::Verdict::Machine("no summary".into()),
                Tool::Memcheck
            ),
            ours
        );
        // Errors are the machine's where a step of ours says so, usage where the call is wrong.
        let machine = on_the_machine::<()>(Err(anyhow::anyhow!("CUDA_ERROR_OUT_OF_MEMORY"))).unwrap_err();
        assert_eq!(
            (exit_code(&machine), format!("{machine:#}")),
            (3, "machine: CUDA_ERROR_OUT_OF_MEMORY".to_string())
        );
        assert_eq!(
            exit_code(&anyhow::anyhow!("CUDA_ERROR_OUT_OF_MEMORY").context("the student's kernel")),
            1
        );
        assert_eq!(
            exit_code(&anyhow::Error::new(Usage("c.txt:2: bad".into())).context("reading")),
            2
        );
        assert_eq!(exit_code(&whose_compile_error(CompileError::NoNvcc)), 3);
        assert_eq!(
            exit_code(&whose_compile_error(CompileError::Nvcc {
                path: "a.cu".into(),
                messages: "a.cu(1): error: x\n".into()
            })),
            1
        );
    }

    #[test]
    fn a_sanitizer_finding_fails_a_case_and_explains_a_fault() {
        use sanitizer::Verdict;
        let row = |result| Row {
            case: "c".into(),
            result,
        };
        assert_eq!(
            with_finding(row(Ok(outcome(0))), Verdict::Clean, Tool::Memcheck),
            row(Ok(outcome(0)))
        );
        assert!(!with_finding(
            row(Ok(outcome(0))),
            Verdict::Found("memcheck: x".into()),
            Tool::Memcheck
        )
        .passed());
        assert_eq!(
            with_finding(
                row(Err("launch failed".into())),
                Verdict::Found("memcheck: x".into()),
                Tool::Memcheck
            )
            .result,
            Err("memcheck: x".into())
        );
        assert_eq!(
            with_finding(row(Err("stopped".into())), Verdict::Clean, Tool::Racecheck).result,
            Err("under racecheck: stopped".into())
        );
        // Fails closed, and on the machine (issue 60): a run the tool itself failed is MACHINE,
        // however right its values, never a pass and never the student's FAULT.
        let no_summary = "memcheck: compute-sanitizer gave no summary (its report is empty)";
        assert_eq!(
            with_finding(row(Ok(outcome(0))), Verdict::Machine(no_summary.into()), Tool::Memcheck).result,
            Err(NoResult::Machine(no_summary.into()))
        );
        let code = "racecheck: compute-sanitizer exited with code 7, which it does not use";
        assert_eq!(
            with_finding(
                row(Err("x (exit status: 7)".into())),
                Verdict::Machine(code.into()),
                Tool::Racecheck
            )
            .result,
            Err(NoResult::Machine(code.into()))
        );
        // A case killed by a SIGKILL the check did not send is the machine's, unless the report
        // shows an error of the kernel's: then that error is why it died.
        let killed = row(Err(NoResult::Machine("killed by SIGKILL".into())));
        assert_eq!(with_finding(killed.clone(), Verdict::Clean, Tool::Memcheck), killed);
        assert_eq!(
            with_finding(killed, Verdict::Found("memcheck: x".into()), Tool::Memcheck).result,
            Err("memcheck: x".into())
        );
    }

    #[test]
    fn a_sanitizer_log_is_read_at_its_start_and_at_its_end() {
        let dir = PrivateDir::new("sanitizer-log-test").unwrap();
        let path = dir.path().join("log");
        assert_eq!(read_log(&path), None, "no log");
        std::fs::write(&path, "========= ERROR SUMMARY: 0 errors\n").unwrap();
        assert_eq!(read_log(&path).unwrap(), "========= ERROR SUMMARY: 0 errors\n");
        // Past MAX_LOG_BYTES the summary at the end is still read, and no cut line is.
        let line = "=========     Host Frame: [0x2ea231] in libcuda.so.1\n";
        let long = line.repeat(MAX_LOG_BYTES as usize / line.len() + 4096) + "========= ERROR SUMMARY: 0 errors\n";
        std::fs::write(&path, &long).unwrap();
        let read = read_log(&path).unwrap();
        assert!(
            read.len() < long.len() && read.ends_with("\n========= ERROR SUMMARY: 0 errors\n"),
            "{}",
            &read[read.len() - 200..]
        );
        assert!(read.lines().all(|l| l == line.trim_end()
            || l.ends_with("ERROR SUMMARY: 0 errors")
            || l.contains("bytes of the report left out")));
        assert_eq!(
            sanitizer::verdict(Tool::Memcheck, sanitizer::Ending::Finished, Some(&read)),
            sanitizer::Verdict::Clean
        );
    }

    #[test]
    fn racecheck_and_synccheck_run_where_any_kernel_of_the_image_needs_them() {
        // Week 7: the lab launches the masters, which launch the workers; a worker's barrier counts.
        let image = |workers: &str, ptx: Option<&'static str>| {
            let ptxas = format!(
                "ptxas info    : Compiling entry function 'adaptive_master_pi' for 'sm_90'\nptxas info    : Used 40 registers, used 0 barriers\n\
                 ptxas info    : Compiling entry function '_Z7workersI23FourOverOnePlusXSquaredEvdddddiiP5Tally' for 'sm_90'\nptxas info    : Used 42 registers, {workers}\n"
            );
            let build = kernels::ArchImage {
                arch: 90,
                image: &[],
                relocatable_ptx: None,
                ptx,
                ptxas: Box::leak(ptxas.into_boxed_str()),
            };
            KernelImage {
                source: "adaptive_simpson.cu",
                flags: &[],
                builds: Box::leak(Box::new([build])),
                linked_with_device_runtime: true,
                ptx_inside: true,
            }
        };
        let master = [Entry {
            name: "adaptive_master_pi",
            declaration: "",
        }];
        assert!(!uses_shared_memory_or_barriers(
            &image("used 0 barriers", None),
            &master
        ));
        assert!(uses_shared_memory_or_barriers(&image("used 1 barriers", None), &master));
        assert!(uses_shared_memory_or_barriers(
            &image("used 0 barriers, 64 bytes smem", None),
            &master
        ));
        assert!(
            uses_shared_memory_or_barriers(
                &image("used 0 barriers", Some(".extern .shared .align 8 .b8 halves[];\n")),
                &master
            ),
            "dynamic shared memory"
        );
        let missing = [Entry {
            name: "adaptive_master_sin",
            declaration: "",
        }];
        assert!(
            uses_shared_memory_or_barriers(&image("used 0 barriers", None), &missing),
            "unknown: every tool"
        );
    }
}

//! A student's kernel inside a lab (`assignments/`): `--kernel-source FILE.cu` compiles the file when
//! the lab starts, before the GPU is opened, and runs the lab's experiment with it; `--check` runs the
//! week's cases and prints one table: each case's verdict, the first wrong element with the block and
//! thread that computed it, and the time against our kernel.
//!
//! The cases of `--check` run in child processes of the lab (the same program with the hidden flags
//! `--kernel-image` and `--check-case`), one after another in each: a kernel that faults or traps
//! ruins its CUDA context for good, so it takes only its own case with it, and the cases after it run
//! in a new child ([`case_process`]).
//!
//! This crate is the grading engine, whole: the week's cases ([`weeks`], [`cases_file`],
//! [`parameters`]), the case processes and their output ([`case_process`], [`output`], [`progress`]),
//! the rules read from the PTX ([`ptx`]) and from hardware counters ([`measure`]), the guard zones
//! ([`guard`]), compute-sanitizer ([`sanitizer`]), the table and the CSV (here) and the CSV's closing
//! mark for grade.sh ([`mark`]); and, as a binary,
//! the generator of the weeks' templates and broken kernels (`cargo run -p grading --bin templates`).
//! `assignments/grade.sh` grades a class with the labs' `--check`. It depends on `common`, `kernels`,
//! the profiler (for ncu's counters) and `sandbox` (the program weeks' box), never on a lab; the four
//! labs with assignments depend on it.

pub mod case_process;
pub mod cases_file;
pub mod guard;
pub mod mark;
pub mod measure;
pub mod output;
pub mod parameters;
pub mod program;
pub mod progress;
pub mod ptx;
pub mod sanitizer;
pub mod weeks;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use kernels::runtime::{self, CompileError};
use kernels::KernelImage;

use case_process::{Batch, CaseRun, Deadline, Limits, Slot};
use common::private_dir::PrivateDir;
use common::timing::Timing;
use common::verify::{Poison, Random};
use progress::Progress;
use sanitizer::Tool;

/// The flags every lab with a student's kernel has, flattened into its own (`#[command(flatten)]`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct StudentArgs {
    /// Your kernel: compile this CUDA file with nvcc when the lab starts (the flags ours are built with)
    /// and run the experiment with it instead of ours. Without --check its ptxas report is printed first.
    #[arg(long, value_name = "FILE.cu")]
    pub kernel_source: Option<PathBuf>,
    /// With --kernel-source: run the week's test cases (awkward sizes, random inputs, outputs poisoned
    /// first, guard zones around them) and print one table; the exit code is 0 only if every case passes.
    #[arg(long, requires = "kernel_source")]
    pub check: bool,
    /// With --check: print the results as CSV (a header and one row), for assignments/grade.sh; with
    /// --list-cases: the CSV header alone.
    #[arg(long)]
    pub csv: bool,
    /// With --check: run each case under compute-sanitizer (memcheck; racecheck and synccheck too
    /// where the kernels use shared memory or barriers, on the cases within the lab's budget for
    /// them); its first finding fails the case. Slow.
    #[arg(long, requires = "check")]
    pub sanitize: bool,
    /// With --check: show what every case printed, not only the failing ones'.
    #[arg(long, requires = "check")]
    pub show_output: bool,
    /// With --check: stop after SECONDS in all; the case still running then and the cases after it
    /// fail with a note. For grading, so that one slow submission cannot hold up the others
    /// (assignments/grade.sh sets it).
    #[arg(long, value_name = "SECONDS", requires = "check", value_parser = clap::value_parser!(u64).range(1..))]
    pub time_limit: Option<u64>,
    /// With --check or --list-cases: the cases in FILE instead of the week's (one per line, `#`
    /// comments; the lab's README says the fields).
    #[arg(long, value_name = "FILE")]
    pub cases: Option<PathBuf>,
    /// With --check: also write FILE (JSON), the whole check for a feedback page: every row as the
    /// table has it, what the failing cases printed, a compile error. FILE must not exist yet
    /// (assignments/grade.sh --feedback sets it).
    #[arg(long, value_name = "FILE", requires = "check", conflicts_with = "dry_run")]
    pub details: Option<PathBuf>,
    /// Print the cases --check runs, with the case set's hash, and exit (no GPU needed).
    #[arg(long, conflicts_with = "check")]
    pub list_cases: bool,
    /// With --check: compile the file and judge only the rules read from what nvcc made; no case
    /// runs, nothing is measured, no GPU is used (the file is compiled for the newest architecture
    /// the labs are built for, on any machine). Exit code 0 when it compiles and those rules pass.
    #[arg(long, requires = "check", conflicts_with = "sanitize")]
    pub dry_run: bool,
    /// Internal (--check's child processes): the image the parent compiled.
    #[arg(long, hide = true, requires = "check_case")]
    pub kernel_image: Option<PathBuf>,
    /// Internal (--check's child processes): the first case to run.
    #[arg(long, hide = true, requires_all = ["kernel_image", "check_result"])]
    pub check_case: Option<usize>,
    /// Internal (--check's child processes): the last case to run, one after another from the first.
    #[arg(long, hide = true, requires = "check_case")]
    pub check_last: Option<usize>,
    /// Internal (--check's child processes): where the rows go, each case's index after this prefix.
    #[arg(long, hide = true, requires = "check_case")]
    pub check_result: Option<PathBuf>,
    /// Internal (--check's child processes): the line printed on stdout and stderr after each case.
    #[arg(long, hide = true, requires = "check_case")]
    pub check_boundary: Option<String>,
    /// Internal (--check's child processes): the case runs under compute-sanitizer.
    #[arg(long, hide = true, requires = "check_case")]
    pub under_sanitizer: bool,
    /// Internal (grade.sh): read a key from stdin and end stdout with the closing mark ([`mark`],
    /// which reads the flag itself, before anything runs).
    #[arg(long, hide = true, requires = "csv")]
    pub mark: bool,
    /// Internal (--check's child processes): the child runs under ncu for the measured rules.
    #[arg(long, hide = true, requires = "check_case")]
    pub measure_technique: bool,
    /// Internal (--check's child processes): the measured child waits for this file (the cases are
    /// done) before it touches the GPU, and for no parent that is gone (`--measure-parent`).
    #[arg(long, hide = true, requires_all = ["measure_technique", "measure_parent"])]
    pub measure_after: Option<PathBuf>,
    /// Internal (--check's child processes): the process id of the check that started the measurement.
    #[arg(long, hide = true, requires = "measure_after")]
    pub measure_parent: Option<u32>,
}

/// A kernel the lab calls: the entry name it looks up (mangled for C++ kernels) and the declaration a
/// student must write, for the error message.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    pub declaration: &'static str,
}

impl Entry {
    /// The kernel's name as the student wrote it (`simpson`, not `_Z7simpsonddPd`): the identifier
    /// before the parameters in its declaration.
    pub fn c_name(&self) -> &'static str {
        let before = self.declaration.split('(').next().unwrap_or(self.declaration);
        before
            .rsplit(|c: char| c.is_whitespace() || c == '*')
            .next()
            .unwrap_or(self.name)
    }
}

impl StudentArgs {
    /// The image to run: `ours`, or the student's file compiled like it (its entries and their
    /// parameters checked, its report shown), or in a child process the parent's compile. Needs no GPU.
    pub fn image(&self, ours: &'static KernelImage, entries: &[Entry]) -> Result<&'static KernelImage> {
        let image = self.compile(ours, entries)?;
        self.accept(image, ours, entries)?;
        Ok(image)
    }

    /// The first half of [`StudentArgs::image`]: the flags checked, then the student's file compiled
    /// like `ours` (in a child, the parent's compile loaded); `ours` where there is no file or only
    /// the cases are listed. A file of another week's (it defines none of `entries` and another lab's
    /// kernels: [`weeks::belongs_elsewhere`]) is refused before nvcc runs. Errors say whose they are:
    /// [`Usage`], [`Machine`], else the student's file.
    pub fn compile(&self, ours: &'static KernelImage, entries: &[Entry]) -> Result<&'static KernelImage> {
        if self.csv && !self.check && !self.list_cases {
            bail!(Usage("--csv goes with --check or --list-cases".to_string()));
        }
        if self.cases.is_some() && !self.checking() {
            bail!(Usage("--cases goes with --check or --list-cases".to_string()));
        }
        if let Some(path) = &self.kernel_image {
            let arch = common::gpu::first_gpu_arch()
                .ok_or_else(|| Machine("no usable CUDA GPU for the check's case".to_string()))?;
            return Ok(Box::leak(Box::new(runtime::load(path, ours, arch)?)));
        }
        let Some(path) = &self.kernel_source else {
            return Ok(ours);
        };
        if self.list_cases {
            return Ok(ours); // listing the cases compiles nothing
        }
        refuse_another_weeks_file(path, entries)?;
        let (arch, _) = compile_target(self.dry_run);
        let output = runtime::compile(path, ours, arch).map_err(|err| {
            if let CompileError::Nvcc { messages, .. } = &err {
                eprint!("{messages}");
            }
            whose_compile_error(err)
        })?;
        // nvcc's warnings for a file that compiled (the front end's and ptxas's), which the report
        // alone would drop.
        for warning in warnings(&output.messages).chain(warnings(output.image.newest().map_or("", |build| build.ptxas)))
        {
            eprintln!("{warning}");
        }
        Ok(Box::leak(Box::new(output.image)))
    }

    /// The second half of [`StudentArgs::image`]: the student's `image` has every one of `entries`,
    /// each taking what ours takes; then, before any case (and before the GPU is needed), one line
    /// that says it compiled and to what, or without `--check` its ptxas report. Nothing for `ours`.
    pub fn accept(&self, image: &'static KernelImage, ours: &'static KernelImage, entries: &[Entry]) -> Result<()> {
        if std::ptr::eq(image, ours) || self.kernel_image.is_some() {
            return Ok(());
        }
        let (_, for_whom) = compile_target(self.dry_run);
        require_entries(image, entries)?;
        for entry in entries {
            require_same_parameters(image, ours, entry)?;
        }
        if self.check {
            eprintln!("{}", compiled(image, entries, &for_whom));
        } else {
            print_report(image, entries, &for_whom);
        }
        Ok(())
    }

    /// Whether this run checks (`--check`, `--list-cases`, or its cases in a child process): the
    /// lab then needs every kernel the cases call.
    pub fn checking(&self) -> bool {
        self.check || self.list_cases || self.check_case.is_some()
    }

    /// `--list-cases`, `--check` (the parent: every case in a child, `rules` first; with `--dry-run`
    /// the rules alone) or one case in a child (its row written for the parent); `None` when none was
    /// asked for and the lab runs its experiment. `compiled` is what [`StudentArgs::image`] made of the
    /// student's file (a file that failed still gets its CSV row, FAIL in every column, and exit code
    /// 1), `ours` the lab's image (the rules' names come from it where the file did not compile),
    /// `rules` reads the rules from an image, `run_case` runs one case with it.
    pub fn run_check_if_asked<C>(
        &self,
        compiled: &Result<&'static KernelImage>,
        ours: &'static KernelImage,
        check: &Check<'_, C>,
        rules: impl FnOnce(&KernelImage) -> Result<Vec<Row>>,
        run_case: impl Fn(&KernelImage, &C, CaseContext) -> Result<Outcome>,
    ) -> Option<Result<()>> {
        if self.list_cases {
            return Some(rules(ours).map(|rules| list_cases(self, check, &rules)));
        }
        if self.check {
            return Some(match compiled {
                Ok(image) if self.dry_run => rules(image).and_then(|rules| dry_run(self, check, rules)),
                Ok(image) => rules(image).and_then(|rules| run_check(self, image, check, rules)),
                Err(err) => rules(ours).and_then(|rules| file_failed(self, check, &rules, err)),
            });
        }
        let first = self.check_case?;
        Some(run_cases(self, check, first, compiled, run_case))
    }
}

/// An error in how the lab was called (a flag, a `--cases` file), not in the student's file nor the
/// machine: exit code 2 under [`run_lab`].
#[derive(Debug)]
pub struct Usage(pub String);

/// What keeps the machine from running a check (no GPU or driver, a driver too old, GPU memory the
/// lab's own allocation cannot get, compute-sanitizer or ncu missing, no permission for the GPU's
/// counters), found by the lab's own steps, never by anything the student's code did or printed:
/// MACHINE in the table and the CSV, exit code 3 under [`run_lab`].
#[derive(Debug)]
pub struct Machine(pub String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "machine: {}", self.0)
    }
}

impl std::error::Error for Usage {}
impl std::error::Error for Machine {}

/// `result` of a step of the lab's own that needs only the machine (the GPU opened, our kernels
/// loaded, the case's buffers allocated), taken before the student's module is loaded: its error is
/// the machine's. Whatever comes after the student's module is loaded is the student's (a module
/// that holds most of the GPU's memory, say).
pub fn on_the_machine<T>(result: Result<T>) -> Result<T> {
    result.map_err(|err| match err.downcast::<Machine>() {
        Ok(machine) => anyhow::Error::new(machine),
        Err(err) => anyhow::Error::new(Machine(format!("{err:#}"))),
    })
}

/// Why the machine failed, where `err` is (or wraps) a [`Machine`] error.
fn machine_of(err: &anyhow::Error) -> Option<String> {
    err.chain()
        .find_map(|cause| cause.downcast_ref::<Machine>())
        .map(|machine| machine.0.clone())
}

/// The exit code for `err`: 2 for [`Usage`], 3 for [`Machine`], 1 for anything else (the student's
/// failures, and errors of the lab's experiment).
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.chain().any(|cause| cause.is::<Usage>()) {
        2
    } else if err.chain().any(|cause| cause.is::<Machine>()) {
        3
    } else {
        1
    }
}

/// [`common::cli::run_lab`] for a lab with a student's kernel: the same one line on stderr, with the
/// exit codes `--check` and `--list-cases` promise assignments/grade.sh: 0 all passed, 1 the student's
/// failures, 2 usage (a bad flag, a bad `--cases` file: [`Usage`]), 3 the machine ([`Machine`]).
/// Without those flags every error ends with 1, as in every lab.
///
/// With `--mark` (grade.sh's), stdout ends with the closing mark ([`mark`]); `--verify-mark` alone
/// checks one.
pub fn run_lab<A: clap::Parser>(run: impl FnOnce(A) -> Result<()>) -> std::process::ExitCode {
    if std::env::args_os().nth(1).is_some_and(|arg| arg == mark::VERIFY_FLAG) {
        return mark::verify_from_stdin();
    }
    if let Err(why) = mark::start() {
        eprintln!("{}: error: {why}", A::command().get_name());
        return std::process::ExitCode::from(2);
    }
    let (mut code, mut message) = (None, String::new());
    let exit = common::cli::run_lab(|args: A| {
        let result = run(args);
        code = Some(result.as_ref().map_or_else(exit_code, |()| 0));
        if let Err(err) = &result {
            message = format!("{err:#}");
        }
        result
    });
    let grading =
        std::env::args_os().any(|arg| ["--check", "--list-cases", "--dry-run"].iter().any(|flag| arg == *flag));
    let code = match code {
        _ if exit == std::process::ExitCode::SUCCESS => 0,
        Some(code) if grading => code,
        Some(_) => 1,
        None if grading => 2, // clap refused the command line
        None => 1,
    };
    mark::finish(code, &message);
    std::process::ExitCode::from(code)
}

/// Refuses a file of another week's (issue 45: week 3's mmm.cu in lab-simpson failed inside the
/// kernel with an `#error`): one line naming its lab, before nvcc runs. An unreadable file is left to
/// the compile, which says so.
fn refuse_another_weeks_file(path: &Path, entries: &[Entry]) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let wanted: Vec<&str> = entries.iter().map(Entry::c_name).collect();
    match weeks::belongs_elsewhere(&path.display().to_string(), &text, &wanted) {
        Some(line) => bail!(line),
        None => Ok(()),
    }
}

/// A compile error as whose it is: a file that is not there is a [`Usage`] error, no nvcc (or none
/// for this GPU, or its files not handled) the [`Machine`]'s, the rest the student's file's.
fn whose_compile_error(err: CompileError) -> anyhow::Error {
    match err {
        CompileError::Missing { .. } => anyhow::Error::new(Usage(err.to_string())),
        CompileError::NoNvcc | CompileError::Unsupported { .. } | CompileError::Io(_) => {
            anyhow::Error::new(Machine(err.to_string()))
        }
        CompileError::Nvcc { ref messages, .. } => match messages.lines().find(|line| line.contains("error")) {
            Some(first) => anyhow::anyhow!("{err}; the first: {}", first.trim()),
            None => anyhow::Error::new(err),
        },
        CompileError::TooLong { .. } | CompileError::ForeignInclude { .. } | CompileError::TooLarge { .. } => {
            anyhow::Error::new(err)
        }
    }
}

/// What a lab's `--check` runs: its name (for the private folder), the kernels the cases call (their
/// ptxas report chooses the sanitizer's tools) and the cases.
pub struct Check<'a, C> {
    pub lab: &'a str,
    pub entries: &'a [Entry],
    pub cases: cases_file::CaseSet<C>,
    /// The week's technique measured while the kernel runs, where the week teaches one.
    pub measure: Option<measure::Measure<'a, C>>,
    /// Flags every case's child gets beyond the parent's own: what the parent chose that its command
    /// line does not say (lab-mmm's week, taken from the file: `--kernel tiled`).
    pub child_flags: &'a [&'a str],
}

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
const MAX_SPREAD: f64 = 0.10;
/// A ratio below this is faster than the week's technique allows against our kernel of the same
/// technique (issue 39: the public leaderboards' exploits, work skipped or moved out of the timed
/// launches, show as ratios far below 1). It does not fail the case, whose values were checked on
/// every launch; the table and the CSV flag it for a teacher to look at.
pub const SUSPICIOUS_RATIO: f64 = 0.5;

/// The student's timed launches, each one checked ([`checked_runs`]).
#[derive(Debug, Clone)]
pub struct Checked {
    pub timing: Timing,
    /// The first launch whose output was wrong: its index among these launches and what was wrong.
    pub wrong: Option<(usize, String)>,
}

/// `launches` timed runs of the student's kernel, each one checked (issue 39: every timed run is a
/// checked run). `run` poisons the output, launches (its warm-up poisoned too), reads the output back
/// and returns the timed launch's time with what is wrong with the output, if anything. A kernel that
/// skips its work when the output is already there, or does it only while it is checked, fails.
pub fn checked_runs(launches: usize, mut run: impl FnMut() -> Result<(Timing, Option<String>)>) -> Result<Checked> {
    let mut samples = Vec::with_capacity(launches);
    let mut first_wrong = None;
    for launch in 0..launches {
        let (timing, wrong) = run()?;
        samples.extend(timing.samples_ms);
        if first_wrong.is_none() {
            first_wrong = wrong.map(|what| (launch, what));
        }
    }
    Ok(Checked {
        timing: Timing::gpu(samples),
        wrong: first_wrong,
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

/// What [`CaseContext::time`] found: the times (none under compute-sanitizer) and, as a case's
/// finding, the first timed launch of the student's kernel that left a wrong output.
#[derive(Debug, Clone, Default)]
pub struct Timed {
    pub times: Option<Times>,
    pub wrong: Option<String>,
}

impl CaseContext {
    /// The student's kernel (`theirs`, every launch checked: [`checked_runs`]) and ours timed on the
    /// case, each closure running its kernel the given number of times, each launch after a warm-up
    /// of its own (issue 29: a fair ratio). Over [`TIME_ROUNDS`] rounds, ours goes first in the even ones and theirs in the odd
    /// ones, so neither always meets the colder GPU; the medians are over every round's launches.
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
        for round in 0..TIME_ROUNDS {
            let mut student = || -> Result<()> {
                let checked = theirs(TIMED_LAUNCHES)?;
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
        Ok(Timed {
            times: Some(Times::of(&Timing::gpu(theirs_ms), &Timing::gpu(ours_ms))),
            wrong,
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

    /// Issue 61: a finding where the student's median is below the physical floor of the case: the
    /// time in which `bytes` (what the kernel must read or write at least once) can move at
    /// [`FLOOR_BANDWIDTHS`] times the GPU's peak memory bandwidth (`peak_bandwidth`, bytes/s). No
    /// kernel that does the case's work is that fast: its work was done elsewhere, or the clock was
    /// fooled. Nothing where the bandwidth is unknown.
    pub fn below_the_floor(&self, bytes: f64, peak_bandwidth: f64) -> Option<String> {
        if !(peak_bandwidth.is_finite() && peak_bandwidth > 0.0) {
            return None;
        }
        let floor_ms = bytes / (FLOOR_BANDWIDTHS * peak_bandwidth) * 1e3;
        (self.student_ms < floor_ms).then(|| {
            format!(
                "faster than the GPU can be: a median of {:.6} ms, where moving the case's {} once takes at least {floor_ms:.6} ms at {FLOOR_BANDWIDTHS} times this GPU's peak memory bandwidth ({:.0} GB/s)",
                self.student_ms,
                common::format_bytes(bytes as u64),
                peak_bandwidth / 1e9
            )
        })
    }
}

/// How many times its memory's peak bandwidth a GPU may move a case's data at, at most, for
/// [`Times::below_the_floor`]: L2 serves data just written at a few times the memory's rate (about 5
/// times on an RTX 4090), so 8 leaves room for every GPU of the course.
const FLOOR_BANDWIDTHS: f64 = 8.0;

/// In a check's child: runs the cases from `first` to `--check-last` with the parent's compile, one
/// after another in one CUDA context, and writes each row where the parent said. A [`Machine`] error
/// (the image could not be loaded for want of a GPU, or a step the lab takes before the student's
/// module is loaded: [`on_the_machine`]) becomes a MACHINE row; any other error ends the child, and
/// the parent makes the case a FAULT and runs the cases after it in a new child.
fn run_cases<C>(
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
    // One reference to the GPU's primary context for the whole child: each case's own `Gpu::open`
    // then finds it made, instead of making it again (0.1 s on an H100). Where it fails, each case's
    // own open says why.
    let held = common::gpu::Gpu::open(0).ok();
    if args.measure_technique {
        let measure = check.measure.as_ref().context("this week measures no technique")?;
        if let (Some(go), Some(parent)) = (&args.measure_after, args.measure_parent) {
            measure::wait_for_the_cases(go, parent)?;
        }
        let row = match (measure.run)(image, &measure.cases) {
            Ok(()) => measure::ran("measured"),
            Err(err) => Row {
                case: "measured".to_string(),
                result: Err(NoResult::Machine(machine_of(&err).with_context(|| format!("{err:#}"))?)),
            },
        };
        return case_process::write_row(&result(first), &row);
    }
    for index in first..=last {
        let Some(case) = check.cases.cases.get(index) else {
            bail!("there is no check case {index}")
        };
        let row = match run_case(
            image,
            case,
            CaseContext {
                sanitized: args.under_sanitizer,
            },
        ) {
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

/// `--list-cases`: the case names (rules first) and the set's hash, or with `--csv` the CSV header.
fn list_cases<C>(args: &StudentArgs, check: &Check<'_, C>, rules: &[Row]) {
    let names: Vec<&str> = rules
        .iter()
        .map(|row| row.case.as_str())
        .chain(unrun_names(check))
        .collect();
    if args.csv {
        println!("{}", csv_header(&names));
    } else {
        println!("{} cases (case set {}):", names.len(), check.cases.hash);
        for name in names {
            println!("{name}");
        }
        if let Some(note) = check.cases.shared_checks_note() {
            let left_out = check
                .cases
                .names
                .iter()
                .zip(&check.cases.shared_checked)
                .filter(|(_, &checked)| !checked)
                .map(|(name, _)| name.as_str());
            // On stderr: stdout is the count and the names, which grade.sh reads.
            eprintln!(
                "With --sanitize, where the kernels use shared memory or barriers: {note}; left out: {}.",
                left_out.collect::<Vec<_>>().join("; ")
            );
        }
    }
}

/// The names of the rows the GPU gives, in the table's order: the measured rules, then the cases.
fn unrun_names<'a, C>(check: &'a Check<'_, C>) -> impl Iterator<Item = &'a str> {
    let measured = check.measure.as_ref().map_or(&[][..], |measure| measure.rules);
    measured
        .iter()
        .copied()
        .chain(check.cases.names.iter().map(String::as_str))
}

/// The rows the GPU would have given, each without a result for the same reason `why`.
fn unrun<C>(check: &Check<'_, C>, why: &NoResult) -> Vec<Row> {
    unrun_names(check)
        .map(|name| Row {
            case: name.to_string(),
            result: Err(why.clone()),
        })
        .collect()
}

/// The note a dry run's CSV row carries, and the reason its GPU rows give.
const DRY_RUN: &str = "dry run: no GPU used";

/// `--check --dry-run`: the rules read from what nvcc made, no case run, nothing measured, no CUDA
/// context; the table says which checks did not run. Fails only where a rule fails.
fn dry_run<C>(args: &StudentArgs, check: &Check<'_, C>, rules: Vec<Row>) -> Result<()> {
    let ruled = rules.len();
    let mut rows = rules;
    rows.extend(unrun(check, &NoResult::NotRun(DRY_RUN.to_string())));
    let skipped = rows.len() - ruled;
    let source = args.kernel_source.as_deref().unwrap_or(Path::new("?"));
    if args.csv {
        mark::print(&csv(source, &rows, &check.cases.hash, DRY_RUN));
    } else {
        let rules = if ruled == 0 {
            ": this week has no rules read from what nvcc made".to_string()
        } else {
            format!(", the rules read from what nvcc made:\n\n{}", table(&rows[..ruled]))
        };
        println!("\n--check --dry-run of {}{rules}", source.display());
        println!("\nNot run (a dry run uses no GPU): the {skipped} cases and measured rules below; --check without --dry-run runs them.");
        for row in &rows[ruled..] {
            println!("  {}", row.case);
        }
    }
    say_verdict(args, verdict(&rows))
}

/// `--check` of a file the lab could not take (it did not compile, lacks a kernel, takes other
/// parameters, is another week's): the error, and with `--csv` the row too, FAIL in every column (no
/// case can pass with this file, on any machine; with `--dry-run` the GPU's columns are `-`) and the
/// note `compile error: ` with the error's line. Errors of the call ([`Usage`]) or of the machine
/// ([`Machine`]: no nvcc) get no row: they are not the student's.
fn file_failed<C>(args: &StudentArgs, check: &Check<'_, C>, rules: &[Row], err: &anyhow::Error) -> Result<()> {
    let message = format!("{err:#}");
    let kind = match exit_code(err) {
        2 => anyhow::Error::new(Usage(message.clone())),
        3 => anyhow::Error::new(Machine(machine_of(err).unwrap_or_else(|| message.clone()))),
        _ => anyhow::anyhow!(message.clone()),
    };
    if exit_code(err) == 1 {
        let failed = |name: &str| Row {
            case: name.to_string(),
            result: Ok(Outcome {
                wrong: 1,
                elements: 1,
                first: None,
                times: None,
                finding: Some(message.clone()),
            }),
        };
        let mut rows: Vec<Row> = rules.iter().map(|rule| failed(&rule.case)).collect();
        rows.extend(unrun_names(check).map(|name| match args.dry_run {
            true => Row {
                case: name.to_string(),
                result: Err(NoResult::NotRun(DRY_RUN.to_string())),
            },
            false => failed(name),
        }));
        let source = args.kernel_source.as_deref().unwrap_or(Path::new("?"));
        if args.csv {
            mark::print(&csv(
                source,
                &rows,
                &check.cases.hash,
                &format!("compile error: {}", one_line(&message)),
            ));
        }
        write_details(
            args,
            check,
            &rows,
            serde_json::json!({ "compile_error": message, "verdict": message }),
        )?;
    }
    Err(kind)
}

/// `text` on one line: its lines trimmed and joined with spaces.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The architecture a student's file is compiled for: GPU 0's, where the labs run it, else (no GPU
/// here, or a dry run, which asks none) the newest the labs are built for, so that compile errors and
/// the rules read from what nvcc made still show, the same on every machine. With a sentence that
/// says which.
fn compile_target(dry_run: bool) -> (u32, String) {
    let newest = kernels::BUILT_ARCHS[kernels::BUILT_ARCHS.len() - 1];
    if dry_run {
        return (
            newest,
            "dry run: for the newest architecture the labs are built for".to_string(),
        );
    }
    match common::gpu::first_gpu_arch() {
        Some(arch) => (arch, "for GPU 0".to_string()),
        None => (
            newest,
            "no GPU found: for the newest architecture the labs are built for".to_string(),
        ),
    }
}

/// The build of a student's image (it has one, for the GPU it runs on) and its parsed report.
fn student_report(image: &KernelImage) -> Result<kernels::ptxas::Report> {
    let build = image
        .newest()
        .with_context(|| format!("{} was not compiled", image.source))?;
    build
        .report()
        .with_context(|| format!("reading nvcc's report on {}", image.source))
}

/// Every entry the lab calls must be a kernel of the student's image; the error names what the lab
/// looked for and what the file has.
pub fn require_entries(image: &KernelImage, entries: &[Entry]) -> Result<()> {
    let report = student_report(image)?;
    let kernels: Vec<&str> = report
        .functions
        .iter()
        .filter(|f| f.is_entry())
        .map(|f| f.name.as_str())
        .collect();
    for entry in entries {
        if !kernels.contains(&entry.name) {
            let has = if kernels.is_empty() {
                "no kernels".to_string()
            } else {
                format!("the kernels {}", kernels.join(", "))
            };
            bail!(
                "{} has no kernel `{}` (the lab looks for `{}`); it has {has}",
                image.source,
                entry.declaration,
                entry.name
            );
        }
    }
    Ok(())
}

/// nvcc's warning lines in what it printed (`mmm.cu(12): warning #177-D: variable ...`).
fn warnings(messages: &str) -> impl Iterator<Item = &str> {
    messages.lines().filter(|line| line.contains("warning"))
}

/// One line for `--check`: the file compiled, for which architecture, and each entry's registers and
/// shared memory (`mmm.cu compiled (for GPU 0, sm_90): mmm_f64 40 registers, 4096 bytes shared; ...`).
fn compiled(image: &KernelImage, entries: &[Entry], for_whom: &str) -> String {
    // By its name alone: this line reaches the student's feedback page.
    let name = program::shown(Path::new(image.source));
    let Some(build) = image.newest() else {
        return format!("{name} compiled");
    };
    let report = build.report().ok();
    let resources: Vec<String> = entries
        .iter()
        .filter_map(|entry| Some((entry, report.as_ref()?.function(entry.name)?)))
        .map(|(entry, f)| {
            format!(
                "{} {} registers, {} bytes shared",
                entry.c_name(),
                f.registers,
                f.shared_bytes
            )
        })
        .collect();
    format!(
        "{name} compiled ({for_whom}, {}): {}",
        kernels::arch_name(build.arch),
        resources.join("; ")
    )
}

/// The ptxas report of the student's entries, as the slides show ours, after the command that made it
/// and for which GPU.
fn print_report(image: &KernelImage, entries: &[Entry], for_whom: &str) {
    let Some(build) = image.newest() else { return };
    println!(
        "{}",
        common::ptxas_view::student_command(image, build.arch, image.linked_with_device_runtime)
    );
    println!("({for_whom}, {})", kernels::arch_name(build.arch));
    if let Ok(report) = build.report() {
        for entry in entries {
            for line in report
                .function(entry.name)
                .map(|f| f.lines.as_slice())
                .unwrap_or_default()
            {
                println!("{line}");
            }
        }
    }
}

/// The student's kernel takes what ours takes (same parameter sizes and offsets, read from both
/// images: [`parameters`]), so the lab's launch fits it; otherwise a one-line error with both lists.
pub fn require_same_parameters(student: &KernelImage, ours: &KernelImage, entry: &Entry) -> Result<()> {
    // The newest builds: a student's only one, and ours with every kernel (parameters do not change with
    // the architecture).
    let image = |of: &KernelImage| of.newest().map_or(&[][..], |build| build.image);
    let expected = parameters::parameters(image(ours), entry.name)
        .map_err(|why| anyhow::anyhow!("reading our {}'s parameters: {why}", entry.name))?;
    let theirs = match parameters::parameters(image(student), entry.name) {
        Ok(theirs) => theirs,
        Err(why) => {
            eprintln!(
                "note: {}: {why}; the parameters of {} are not compared",
                student.source, entry.name
            );
            return Ok(());
        }
    };
    if theirs != expected {
        let sizes = |list: &[(usize, usize)]| {
            list.iter()
                .map(|(_, size)| format!("{size}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        bail!(
            "{}: kernel `{}` takes {} parameter(s) of {} bytes, but the lab passes {} of {} bytes: `{}`",
            student.source,
            entry.name,
            theirs.len(),
            sizes(&theirs),
            expected.len(),
            sizes(&expected),
            entry.declaration
        );
    }
    Ok(())
}

/// The first element a kernel got wrong, in the lab's words.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstWrong {
    /// Where: "sub-interval 256", "C(3, 17)".
    pub position: String,
    /// What it holds: a number, or "never written" for an element that kept both poisons.
    pub value: String,
    pub expected: String,
    /// Which block and thread should have computed it: "block (1, 0), thread (0, 3)".
    pub computed_by: String,
}

/// What one case found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub wrong: usize,
    pub elements: usize,
    pub first: Option<FirstWrong>,
    /// The student's kernel and ours timed on the case; none for a rule read from the compiler's
    /// report, or under compute-sanitizer.
    pub times: Option<Times>,
    /// A fault beyond the values, which fails the case however right they are: a write outside the
    /// output or into an input (the guard zones and input copies), or compute-sanitizer's first finding.
    pub finding: Option<String>,
}

impl Outcome {
    /// The first of `findings` (guard zones, then inputs) becomes the outcome's finding.
    pub fn with_findings(mut self, findings: impl IntoIterator<Item = Option<String>>) -> Outcome {
        self.finding = self.finding.or_else(|| findings.into_iter().flatten().next());
        self
    }
}

/// A row of the check table, as a child process reports it (or why it has no result).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub case: String,
    pub result: std::result::Result<Outcome, NoResult>,
}

/// Why a row has no result. A plain message (`From<String>`) is a FAULT, the student's: a row is the
/// machine's only where the lab's own step said so ([`Machine`], [`on_the_machine`]), never from
/// anything the student's code printed or did.
#[derive(Debug, Clone, PartialEq)]
pub enum NoResult {
    /// The case ran and died, or hung, or its run could not be vouched for: FAULT.
    Fault(String),
    /// The machine could not run it (no GPU, no compute-sanitizer, no ncu, ...): MACHINE.
    Machine(String),
    /// Not run at all (`--dry-run`): `-`.
    NotRun(String),
}

impl NoResult {
    /// The reason, in words.
    pub fn why(&self) -> &str {
        match self {
            NoResult::Fault(why) | NoResult::Machine(why) | NoResult::NotRun(why) => why,
        }
    }
}

impl From<String> for NoResult {
    fn from(why: String) -> NoResult {
        NoResult::Fault(why)
    }
}

impl From<&str> for NoResult {
    fn from(why: &str) -> NoResult {
        NoResult::Fault(why.to_string())
    }
}

impl Row {
    /// A rule's row, found from the compiler's report or the code before any case runs: `checked`
    /// kernels (or variables) looked at, `failures` those that break the rule, the first one shown.
    pub fn rule(case: &str, checked: usize, failures: Vec<FirstWrong>) -> Row {
        let wrong = failures.len();
        Row {
            case: case.to_string(),
            result: Ok(Outcome {
                wrong,
                elements: checked,
                first: failures.into_iter().next(),
                times: None,
                finding: None,
            }),
        }
    }

    /// A rule read from the build's PTX by `read`, which returns how many kernels it looked at and
    /// those that break the rule; a FAULT row where there is no PTX (our own kernels keep none: only
    /// `--list-cases` without `--kernel-source` meets them).
    pub fn rule_on_ptx(
        case: &str,
        build: &kernels::ArchImage,
        read: impl FnOnce(&crate::ptx::Module) -> (usize, Vec<FirstWrong>),
    ) -> Row {
        match build.ptx {
            Some(text) => {
                let (checked, failures) = read(&crate::ptx::Module::parse(text));
                Row::rule(case, checked, failures)
            }
            None => Row {
                case: case.to_string(),
                result: Err("no PTX was kept to read".into()),
            },
        }
    }

    pub fn passed(&self) -> bool {
        matches!(&self.result, Ok(outcome) if outcome.wrong == 0 && outcome.finding.is_none())
    }

    /// Whether the machine kept this row from a result ([`NoResult::Machine`]).
    pub fn on_the_machine(&self) -> bool {
        matches!(self.result, Err(NoResult::Machine(_)))
    }

    /// PASS, FAIL (wrong values or a finding), FAULT (no result), MACHINE (the machine could not run
    /// it) or `-` (not run).
    pub fn verdict(&self) -> &'static str {
        match &self.result {
            _ if self.passed() => "PASS",
            Ok(_) => "FAIL",
            Err(NoResult::Fault(_)) => "FAULT",
            Err(NoResult::Machine(_)) => "MACHINE",
            Err(NoResult::NotRun(_)) => "-",
        }
    }

    /// The child's line in its result file: tab-separated, so it survives any text but tabs and
    /// newlines, which [`clean`] replaces.
    pub fn to_line(&self) -> String {
        match &self.result {
            Ok(o) => {
                let first = o.first.clone().unwrap_or(FirstWrong {
                    position: String::new(),
                    value: String::new(),
                    expected: String::new(),
                    computed_by: String::new(),
                });
                let time =
                    |field: fn(&Times) -> f64| o.times.as_ref().map_or(String::new(), |times| field(times).to_string());
                let fields = [
                    clean(&self.case),
                    o.wrong.to_string(),
                    o.elements.to_string(),
                    clean(&first.position),
                    clean(&first.value),
                    clean(&first.expected),
                    clean(&first.computed_by),
                    time(|times| times.student_ms),
                    time(|times| times.ours_ms),
                    time(|times| times.spread),
                    o.finding.as_deref().map_or(String::new(), clean),
                ];
                format!("{LINE_TAG}\t{}", fields.join("\t"))
            }
            Err(NoResult::Machine(why)) => format!("{LINE_TAG}\t{}\tmachine\t{}", clean(&self.case), clean(why)),
            Err(other) => format!("{LINE_TAG}\t{}\tfault\t{}", clean(&self.case), clean(other.why())),
        }
    }

    /// Reads a line written by [`Row::to_line`]; anything else is `None`.
    pub fn from_line(line: &str) -> Option<Row> {
        let fields: Vec<&str> = line.strip_prefix(LINE_TAG)?.strip_prefix('\t')?.split('\t').collect();
        match fields.as_slice() {
            [case, "fault", fault] => Some(Row {
                case: case.to_string(),
                result: Err(NoResult::Fault(fault.to_string())),
            }),
            [case, "machine", why] => Some(Row {
                case: case.to_string(),
                result: Err(NoResult::Machine(why.to_string())),
            }),
            [case, wrong, elements, position, value, expected, by, student, ours, spread, finding] => {
                let first = (!position.is_empty()).then(|| FirstWrong {
                    position: position.to_string(),
                    value: value.to_string(),
                    expected: expected.to_string(),
                    computed_by: by.to_string(),
                });
                let times = match [*student, *ours, *spread] {
                    ["", "", ""] => None,
                    _ => Some(Times {
                        student_ms: student.parse().ok()?,
                        ours_ms: ours.parse().ok()?,
                        spread: spread.parse().ok()?,
                    }),
                };
                let finding = (!finding.is_empty()).then(|| finding.to_string());
                Some(Row {
                    case: case.to_string(),
                    result: Ok(Outcome {
                        wrong: wrong.parse().ok()?,
                        elements: elements.parse().ok()?,
                        first,
                        times,
                        finding,
                    }),
                })
            }
            _ => None,
        }
    }
}

const LINE_TAG: &str = "CHECK-ROW";

fn clean(text: &str) -> String {
    text.replace(['\t', '\n', '\r'], " ")
}

/// The first element where `ok(gpu, cpu)` fails, and how many do: for building an [`Outcome`].
pub fn first_mismatch<G: Copy, C: Copy>(gpu: &[G], cpu: &[C], ok: impl Fn(G, C) -> bool) -> (usize, Option<usize>) {
    let mut first = None;
    let mut wrong = 0;
    for (index, (&g, &c)) in gpu.iter().zip(cpu).enumerate() {
        if !ok(g, c) {
            wrong += 1;
            first.get_or_insert(index);
        }
    }
    (wrong + gpu.len().abs_diff(cpu.len()), first)
}

/// A number for the table, to 13 digits (a double off by a few roundings must show where it
/// differs); a NaN is "NaN": whether it was ever written is [`written`]'s to say.
pub fn shown(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else {
        format!("{value:.12e}")
    }
}

/// What an output element holds, from the case's two runs, the first with [`Poison::POISON_WORD`]
/// in the output and the second with [`Poison::SECOND_POISON_WORD`]: "never written" only where it
/// kept each run's poison, else the first run's value as `show` writes it (a NaN the kernel wrote is
/// a NaN, not "never written").
pub fn written<T: Poison>(first: T, second: T, show: impl Fn(T) -> String) -> String {
    if first.holds_word(T::POISON_WORD) && second.holds_word(T::SECOND_POISON_WORD) {
        "never written".to_string()
    } else {
        show(first)
    }
}

/// What an output element holds after one run that began with [`Poison::POISON_WORD`] in the output
/// (a timed run's check, which has no second run to tell a written NaN apart): "never written" where
/// it still holds that word, else its value as `show` writes it.
pub fn written_once<T: Poison>(value: T, show: impl Fn(T) -> String) -> String {
    if value.holds_word(T::POISON_WORD) {
        "never written".to_string()
    } else {
        show(value)
    }
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
fn run_check<C>(args: &StudentArgs, image: &KernelImage, check: &Check<'_, C>, rules: Vec<Row>) -> Result<()> {
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
        let prefix = dir.path().join("result-measured-");
        let mut program = Command::new(&exe);
        program
            .args(child_args(&image_path, 0..=0, &prefix, false, check.child_flags, ""))
            .arg("--measure-technique");
        program
            .arg("--measure-after")
            .arg(&go)
            .arg("--measure-parent")
            .arg(std::process::id().to_string());
        let csv = dir.path().join("measured.csv");
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
        (
            week,
            week.under_ncu(&program, &csv)
                .map(|under_ncu| (under_ncu, csv, case_process::result_file(&prefix, 0), limits)),
        )
    });
    let mut races = None;
    let (runs, measured) = std::thread::scope(|scope| {
        let measuring = measured.map(|(week, prepared)| {
            let thread = prepared.map(|(under_ncu, csv, result, limits)| {
                scope.spawn(move || measure::launches(under_ncu, &csv, &result, limits, deadline))
            });
            (week, thread)
        });
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
            Some(sanitizer) => (0..check.cases.names.len())
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
                .collect(),
            None => {
                let mut runs = children.run_all();
                races = check_races(&children, check.cases.race_case, &tools, &mut runs);
                runs
            }
        };
        drop(go);
        progress.case(0, "the technique, measured with hardware counters (ncu)", None);
        let measured = measuring.map(|(week, thread)| {
            let launches = thread.and_then(|thread| {
                thread
                    .join()
                    .unwrap_or_else(|_| Err("the measurement's thread panicked".into()))
            });
            week.rows(launches)
        });
        (runs, measured)
    });
    progress.clear();
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

/// Issue 61: racecheck and synccheck on the case set's race case ([`CaseSet::race_case`]) in every
/// check, not only under `--sanitize`: a missing barrier whose race the cases' values happen to hide
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

/// The end of `--check`: the table (or CSV) of `rows`, what failing cases printed (`runs`), and the
/// verdict. With `--csv`, stdout is the CSV alone: grade.sh takes exactly its header and its row.
/// `sanitized`: `None` without compute-sanitizer, else which cases racecheck and synccheck left out
/// (`Some(None)`: none). `races`: what [`check_races`] says, where it ran.
fn report<C>(
    args: &StudentArgs,
    check: &Check<'_, C>,
    rows: &[Row],
    runs: &[CaseRun],
    sanitized: Option<Option<String>>,
    races: Option<String>,
) -> Result<()> {
    let source = args.kernel_source.as_deref().unwrap_or(Path::new("?"));
    let verdict = verdict(rows);
    let failing = runs.iter().filter(|run| !run.row.passed());
    let printed: Vec<serde_json::Value> = failing.map(|run| serde_json::json!({ "case": run.row.case, "stdout": run.stdout.shown(), "stderr": run.stderr.shown() })).collect();
    let said = verdict.as_ref().map_or_else(|err| format!("{err:#}"), String::clone);
    write_details(
        args,
        check,
        rows,
        serde_json::json!({
            "sanitized": sanitized.is_some(),
            "sanitizer_note": sanitized.clone().flatten(),
            "races_note": races,
            "outputs": printed,
            "verdict": said,
        }),
    )?;
    let note = machine_note(rows).unwrap_or_default();
    if args.csv {
        mark::print(&csv(source, rows, &check.cases.hash, &note));
    } else {
        let under = match (sanitized, races) {
            (None, None) => String::new(),
            (None, Some(races)) => format!(", {races}"),
            (Some(None), _) => ", under compute-sanitizer".to_string(),
            (Some(Some(note)), _) => format!(", under compute-sanitizer: {note}"),
        };
        println!(
            "\n--check of {} ({} cases, case set {}{under}):\n\n{}",
            source.display(),
            rows.len(),
            check.cases.hash,
            table(rows)
        );
        print!("{}", outputs(runs, args.show_output));
        if let Some(note) = machine_note(rows) {
            println!("\nMACHINE: {note}. Run --check again where the machine can (--dry-run judges the rules read from what nvcc made without a GPU).");
        }
    }
    say_verdict(args, verdict)
}

/// `--details FILE`: the check as JSON for the feedback crate (issue 44): the lab, the file, the case
/// set and its cases' names (the other rows are rules), every row in the form a case's child reports
/// it ([`Row::to_line`], which the feedback reads back with [`Row::from_line`]), and `more` (what the
/// failing cases printed, the verdict, or a compile error). The file must be new: nothing a user
/// gave is overwritten.
fn write_details<C>(args: &StudentArgs, check: &Check<'_, C>, rows: &[Row], more: serde_json::Value) -> Result<()> {
    use std::io::Write as _;
    let Some(path) = &args.details else { return Ok(()) };
    let source = args.kernel_source.as_deref().unwrap_or(Path::new("?"));
    let mut details = serde_json::json!({
        "lab": check.lab,
        "source": source.display().to_string(),
        "case_set": check.cases.hash,
        "cases": check.cases.names,
        "rows": rows.iter().map(Row::to_line).collect::<Vec<_>>(),
    });
    if let (Some(details), serde_json::Value::Object(more)) = (details.as_object_mut(), more) {
        details.extend(more);
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("--details: cannot make {} (it must not exist yet)", path.display()))?;
    writeln!(file, "{details:#}").with_context(|| format!("writing {}", path.display()))
}

/// The verdict's line: on stdout after the table, on stderr after the CSV; an error as it is.
fn say_verdict(args: &StudentArgs, verdict: Result<String>) -> Result<()> {
    let verdict = verdict?;
    if args.csv {
        eprintln!("{verdict}");
    } else {
        println!("{verdict}");
    }
    Ok(())
}

/// The CSV's note where the machine kept checks from running: `machine: ` and the first reason.
fn machine_note(rows: &[Row]) -> Option<String> {
    first_machine_reason(rows).map(|why| format!("machine: {why}"))
}

/// The first reason, in one line, why the machine could not run one of `rows`.
fn first_machine_reason(rows: &[Row]) -> Option<String> {
    rows.iter().find_map(|row| match &row.result {
        Err(NoResult::Machine(why)) => Some(one_line(why)),
        _ => None,
    })
}

/// The last line of `--check`: that every check passed, or the error that says how many did not.
/// Rows the machine could not run make it a [`Machine`] error (exit code 3) even beside the student's
/// failures: the row is incomplete, and its FAIL and FAULT columns stand, so a run on a working
/// machine is needed for the rest and changes none of them. Rows not run (`--dry-run`) count for
/// nothing.
fn verdict(rows: &[Row]) -> Result<String> {
    let judged: Vec<&Row> = rows
        .iter()
        .filter(|row| !matches!(row.result, Err(NoResult::NotRun(_))))
        .collect();
    let failed = judged
        .iter()
        .filter(|row| !row.passed() && !row.on_the_machine())
        .count();
    let machine = judged.iter().filter(|row| row.on_the_machine()).count();
    match (failed, first_machine_reason(rows)) {
        (0, Some(why)) => Err(anyhow::Error::new(Machine(format!(
            "{machine} of {} checks could not run on this machine, none of them for the kernel: {why}",
            judged.len()
        )))),
        (failed, Some(why)) => Err(anyhow::Error::new(Machine(format!(
            "{failed} of {} checks failed, and {machine} could not run on this machine: {why}",
            judged.len()
        )))),
        (0, None) if judged.len() < rows.len() => Ok(format!(
            "The file compiles and all {} rules read from what nvcc made pass; the rest did not run (--dry-run)",
            judged.len()
        )),
        (0, None) => Ok(format!("Solution is correct: all {} cases pass", rows.len())),
        (failed, None) => bail!(
            "{failed} of {} {} failed",
            judged.len(),
            if judged.len() < rows.len() { "rules" } else { "cases" }
        ),
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

/// What the cases printed, under the table: the failing cases', or every case's with `all`.
fn outputs(runs: &[CaseRun], all: bool) -> String {
    let mut out = String::new();
    for run in runs.iter().filter(|run| all || !run.row.passed()) {
        for (stream, captured) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            if !captured.is_empty() {
                out.push_str(&format!(
                    "\n{} of case \"{}\" ({} lines, {} bytes):\n{}",
                    stream,
                    run.row.case,
                    captured.lines(),
                    captured.bytes,
                    captured.shown()
                ));
            }
        }
    }
    out
}

/// The check table.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from("| case | verdict | wrong | first wrong element | its value | expected | computed by | your GPU time in ms | ours | ratio (spread) | outside the values |\n");
    out.push_str("|------|---------|-------|---------------------|-----------|----------|-------------|---------------------|------|----------------|--------------------|\n");
    for row in rows {
        let line = match &row.result {
            Ok(o) => {
                let first = o.first.as_ref().map_or("| - | - | - | -".to_string(), |f| format!("| {} | {} | {} | {}", f.position, f.value, f.expected, f.computed_by));
                let (student, ours, ratio) = o.times.as_ref().map_or(("-".into(), "-".into(), "-".into()), time_cells);
                let finding = o.finding.as_deref().unwrap_or("-");
                format!("| {} | {} | {} of {} {first} | {student} | {ours} | {ratio} | {finding} |", row.case, row.verdict(), o.wrong, o.elements)
            }
            Err(NoResult::Machine(_)) => format!("| {} | MACHINE | not run: the machine could not (below), which says nothing of the kernel | | | | | | | | |", row.case),
            Err(NoResult::NotRun(why)) => format!("| {} | - | not run ({why}) | | | | | | | | |", row.case),
            Err(fault) => format!("| {} | FAULT | {} | | | | | | | | |", row.case, fault.why()),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The table's time cells: `0.1234`, `0.1000`, `1.23x ±2%`, with "unsteady" where the launches
/// spread widely and a flag for a teacher where the ratio is suspiciously low.
fn time_cells(times: &Times) -> (String, String, String) {
    let mut ratio = format!("{:.2}x ±{:.0}%", times.ratio(), 100.0 * times.spread);
    if !times.steady() {
        ratio.push_str(", unsteady");
    }
    if times.suspicious() {
        ratio.push_str(&format!(
            ", faster than our kernel of the same technique by over {:.0}x: a teacher should look",
            1.0 / SUSPICIOUS_RATIO
        ));
    }
    (
        format!("{:.4}", times.student_ms),
        format!("{:.4}", times.ours_ms),
        ratio,
    )
}

/// A text field for CSV (RFC 4180): always quoted, quotes inside doubled, so commas, quotes and line
/// breaks in a name stay in one field. A field a spreadsheet would take for a formula (it begins with
/// `=`, `+`, `-`, `@`, a tab or a carriage return: a submission named `=HYPERLINK(...)`) gets a `'`
/// first, which spreadsheets show as text (issue 29).
pub fn csv_field(text: &str) -> String {
    let as_text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        "'"
    } else {
        ""
    };
    format!("\"{as_text}{}\"", text.replace('"', "\"\""))
}

/// The CSV header for these case names.
pub(crate) fn csv_header(cases: &[&str]) -> String {
    let names: Vec<String> = cases.iter().map(|name| csv_field(name)).collect();
    format!("file,{},passed,time ratio,flags,note,case set", names.join(","))
}

/// The CSV's `time ratio` and `flags` columns from the student's time over ours in each case that
/// passed: their geometric mean, and a flag for a teacher where some are under [`SUSPICIOUS_RATIO`].
pub(crate) fn ratio_columns(ratios: &[f64]) -> (String, String) {
    let mean = if ratios.is_empty() {
        String::new()
    } else {
        format!(
            "{:.3}",
            (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp()
        )
    };
    let fast: Vec<f64> = ratios
        .iter()
        .copied()
        .filter(|ratio| *ratio < SUSPICIOUS_RATIO)
        .collect();
    let flags = match fast.iter().copied().reduce(f64::min) {
        Some(lowest) => csv_field(&format!(
            "suspiciously fast: {} case(s) under {SUSPICIOUS_RATIO}x ours, lowest {lowest:.2}x",
            fast.len()
        )),
        None => String::new(),
    };
    (mean, flags)
}

/// The grading row: the file, each case's verdict, how many passed, the geometric mean of the time
/// ratios over every case that passed (unsteady ones too: [`MAX_SPREAD`] says why), the flags for a
/// teacher (ratios below [`SUSPICIOUS_RATIO`]), the note (`machine: ...` where the machine kept checks
/// from running, `dry run: no GPU used`, `compile error: ...`; empty otherwise), and the case set's
/// hash, last.
pub fn csv(source: &Path, rows: &[Row], case_set: &str, note: &str) -> String {
    let names: Vec<&str> = rows.iter().map(|row| row.case.as_str()).collect();
    let verdicts: Vec<&str> = rows.iter().map(Row::verdict).collect();
    let times: Vec<Times> = rows
        .iter()
        .filter(|row| row.passed())
        .filter_map(|row| row.result.as_ref().ok()?.times)
        .collect();
    let ratios: Vec<f64> = times.iter().map(Times::ratio).collect();
    let (mean, flags) = ratio_columns(&ratios);
    // Of the checks that ran or should have: a dry run's `-` columns count for nothing.
    let counted = rows
        .iter()
        .filter(|row| !matches!(row.result, Err(NoResult::NotRun(_))))
        .count();
    let passed = rows.iter().filter(|row| row.passed()).count();
    let note = if note.is_empty() {
        String::new()
    } else {
        csv_field(note)
    };
    format!(
        "{}\n{},{},{passed}/{},{mean},{flags},{note},{case_set}\n",
        csv_header(&names),
        csv_field(&source.display().to_string()),
        verdicts.join(","),
        counted
    )
}

impl fmt::Display for FirstWrong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is {}, expected {} (computed by {})",
            self.position, self.value, self.expected, self.computed_by
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 61: a median below the time the case's bytes take at 8 times the peak bandwidth is a
    /// finding; at or above it, or with no bandwidth known, nothing.
    #[test]
    fn a_time_below_the_physical_floor_is_a_finding() {
        let times = |student_ms| Times {
            student_ms,
            ours_ms: 1.0,
            spread: 0.0,
        };
        // 8 GB at 8 x 1 TB/s: 1 ms.
        let (bytes, peak) = (8e9, 1e12);
        let finding = times(0.5).below_the_floor(bytes, peak).unwrap();
        assert!(
            finding.starts_with("faster than the GPU can be: a median of 0.500000 ms, where moving the case's")
                && finding.contains("at least 1.000000 ms at 8 times this GPU's peak memory bandwidth (1000 GB/s)"),
            "{finding}"
        );
        assert_eq!(times(1.0).below_the_floor(bytes, peak), None);
        assert_eq!(times(0.5).below_the_floor(bytes, 0.0), None);
        assert_eq!(times(0.5).below_the_floor(bytes, f64::NAN), None);
    }

    fn outcome(wrong: usize) -> Outcome {
        let first = (wrong > 0).then(|| FirstWrong {
            position: "C(1, 2)".into(),
            value: "never written".into(),
            expected: "3.0e0".into(),
            computed_by: "block (0, 0), thread (2, 1)".into(),
        });
        Outcome {
            wrong,
            elements: 12,
            first,
            times: Some(Times {
                student_ms: 2.0,
                ours_ms: 1.0,
                spread: 0.02,
            }),
            finding: None,
        }
    }

    fn found(finding: &str) -> Outcome {
        Outcome {
            finding: Some(finding.into()),
            ..outcome(0)
        }
    }

    #[test]
    fn the_kernel_that_runs_first_alternates_and_the_medians_are_over_every_round() {
        let order = std::cell::RefCell::new(String::new());
        let ours = |launches: usize| {
            order.borrow_mut().push('o');
            Ok(Timing::gpu(vec![1.0; launches]))
        };
        let theirs = |launches: usize| {
            order.borrow_mut().push('t');
            Ok(Checked {
                timing: Timing::gpu(vec![3.0; launches]),
                wrong: None,
            })
        };
        let timed = CaseContext { sanitized: false }.time(ours, theirs).unwrap();
        assert_eq!(order.borrow().as_str(), "otto".repeat(TIME_ROUNDS / 2));
        let times = timed.times.unwrap();
        assert_eq!(
            (
                times.student_ms,
                times.ours_ms,
                times.spread,
                times.ratio(),
                timed.wrong
            ),
            (3.0, 1.0, 0.0, 3.0, None)
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

    #[test]
    fn unsteady_ratios_stay_in_the_csv_mean_and_fast_ones_are_flagged() {
        let unsteady = Outcome {
            times: Some(Times {
                student_ms: 8.0,
                ours_ms: 1.0,
                spread: 0.25,
            }),
            ..outcome(0)
        };
        let rows = vec![
            Row {
                case: "a".into(),
                result: Ok(outcome(0)),
            },
            Row {
                case: "b".into(),
                result: Ok(unsteady),
            },
        ];
        assert!(
            table(&rows).contains("| 8.0000 | 1.0000 | 8.00x ±25%, unsteady | - |"),
            "{}",
            table(&rows)
        );
        assert!(csv(Path::new("s.cu"), &rows, "0123456789abcdef", "")
            .ends_with(",PASS,PASS,2/2,4.000,,,0123456789abcdef\n"));
        let fast = Outcome {
            times: Some(Times {
                student_ms: 0.16,
                ours_ms: 1.0,
                spread: 0.01,
            }),
            ..outcome(0)
        };
        let rows = vec![Row {
            case: "a".into(),
            result: Ok(fast),
        }];
        assert!(
            table(&rows)
                .contains("0.16x ±1%, faster than our kernel of the same technique by over 2x: a teacher should look"),
            "{}",
            table(&rows)
        );
        assert!(
            csv(Path::new("s.cu"), &rows, "h", "")
                .ends_with(",PASS,1/1,0.160,\"suspiciously fast: 1 case(s) under 0.5x ours, lowest 0.16x\",,h\n"),
            "{}",
            csv(Path::new("s.cu"), &rows, "h", "")
        );
    }

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

    #[test]
    fn rows_survive_the_trip_from_child_to_parent() {
        for row in [
            Row {
                case: "17 x 33 x 5, f64".into(),
                result: Ok(outcome(0)),
            },
            Row {
                case: "1 x 1 x 1".into(),
                result: Ok(outcome(3)),
            },
            Row {
                case: "tabs\tand\nnewlines".into(),
                result: Err("CUDA_ERROR_ILLEGAL_ADDRESS (700)".into()),
            },
            Row {
                case: "a rule".into(),
                result: Ok(Outcome {
                    times: None,
                    ..outcome(1)
                }),
            },
            Row {
                case: "past C".into(),
                result: Ok(found("written outside C: C[m*n + 40], 40 elements past the end")),
            },
        ] {
            let back = Row::from_line(&row.to_line()).unwrap();
            assert_eq!(back.case, clean(&row.case));
            assert_eq!(back.result, row.result);
        }
        assert!(Row::from_line("other output").is_none());
        assert!(Row::from_line("CHECK-ROW\ta\t1\t2").is_none());
        assert!(
            Row::from_line("CHECK-ROW\ta\tx\t12\t\t\t\t\t\t\t").is_none(),
            "a count that is no number"
        );
    }

    #[test]
    fn the_table_and_the_csv_say_what_failed_where() {
        let rows = vec![
            Row {
                case: "a".into(),
                result: Ok(outcome(0)),
            },
            Row {
                case: "b".into(),
                result: Ok(outcome(3)),
            },
            Row {
                case: "c".into(),
                result: Err("killed".into()),
            },
            Row {
                case: "d".into(),
                result: Ok(found("A(3, 7) was changed")),
            },
        ];
        let table = table(&rows);
        assert!(
            table.contains("| a | PASS | 0 of 12 | - | - | - | - | 2.0000 | 1.0000 | 2.00x ±2% | - |"),
            "{table}"
        );
        assert!(
            table.contains("| b | FAIL | 3 of 12 | C(1, 2) | never written | 3.0e0 | block (0, 0), thread (2, 1) |"),
            "{table}"
        );
        assert!(table.contains("| c | FAULT | killed |"), "{table}");
        assert!(
            table
                .contains("| d | FAIL | 0 of 12 | - | - | - | - | 2.0000 | 1.0000 | 2.00x ±2% | A(3, 7) was changed |"),
            "{table}"
        );
        assert_eq!(
            csv(Path::new("alice/mmm.cu"), &rows, "0123456789abcdef", ""),
            "file,\"a\",\"b\",\"c\",\"d\",passed,time ratio,flags,note,case set\n\"alice/mmm.cu\",PASS,FAIL,FAULT,FAIL,1/4,2.000,,,0123456789abcdef\n"
        );
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

    /// Issue 45: the machine's rows make the verdict a [`Machine`] error (exit code 3), beside the
    /// student's failures too (the row is incomplete; its FAILs stand), with the note `machine: `;
    /// rows not run (`--dry-run`) count for nothing.
    #[test]
    fn machine_rows_give_exit_code_3_and_a_note_and_dry_runs_count_the_rules() {
        let machine = Row {
            case: "m".into(),
            result: Err(NoResult::Machine("no ncu\nfound".into())),
        };
        let (pass, fail) = (
            Row {
                case: "a".into(),
                result: Ok(outcome(0)),
            },
            Row {
                case: "b".into(),
                result: Ok(outcome(3)),
            },
        );
        let error = verdict(&[pass.clone(), machine.clone()]).unwrap_err();
        assert_eq!(
            (exit_code(&error), error.to_string()),
            (
                3,
                "machine: 1 of 2 checks could not run on this machine, none of them for the kernel: no ncu found"
                    .to_string()
            )
        );
        let error = verdict(&[fail.clone(), machine.clone()]).unwrap_err();
        assert_eq!(
            (exit_code(&error), error.to_string()),
            (
                3,
                "machine: 1 of 2 checks failed, and 1 could not run on this machine: no ncu found".to_string()
            )
        );
        let rows = [pass.clone(), fail.clone(), machine.clone()];
        assert_eq!(machine_note(&rows).as_deref(), Some("machine: no ncu found"));
        assert!(csv(Path::new("s.cu"), &rows, "h", "machine: no ncu found")
            .ends_with(",PASS,FAIL,MACHINE,1/3,2.000,,\"machine: no ncu found\",h\n"));
        let not_run = Row {
            case: "n".into(),
            result: Err(NoResult::NotRun(DRY_RUN.into())),
        };
        assert_eq!(
            verdict(&[pass.clone(), not_run.clone()]).unwrap(),
            "The file compiles and all 1 rules read from what nvcc made pass; the rest did not run (--dry-run)"
        );
        assert_eq!(exit_code(&verdict(&[fail, not_run.clone()]).unwrap_err()), 1);
        assert!(csv(Path::new("s.cu"), &[pass, not_run.clone()], "h", DRY_RUN)
            .ends_with(",PASS,-,1/1,2.000,,\"dry run: no GPU used\",h\n"));
        assert!(table(&[not_run]).contains("| n | - | not run (dry run: no GPU used) |"));
        assert!(table(&[machine])
            .contains("| m | MACHINE | not run: the machine could not (below), which says nothing of the kernel |"));
    }

    #[test]
    fn the_verdict_counts_the_cases_that_did_not_pass() {
        let pass = Row {
            case: "a".into(),
            result: Ok(outcome(0)),
        };
        assert_eq!(
            verdict(std::slice::from_ref(&pass)).unwrap(),
            "Solution is correct: all 1 cases pass"
        );
        let rows = vec![
            pass,
            Row {
                case: "b".into(),
                result: Err("killed".into()),
            },
        ];
        assert_eq!(verdict(&rows).unwrap_err().to_string(), "1 of 2 cases failed");
    }

    #[test]
    fn csv_fields_keep_commas_quotes_and_line_breaks_inside() {
        assert_eq!(csv_field("Doe, Jane \"JD\"/mmm.cu"), "\"Doe, Jane \"\"JD\"\"/mmm.cu\"");
        assert_eq!(csv_field("mmm.cu(3): error: x\nmore"), "\"mmm.cu(3): error: x\nmore\"");
        let rows = vec![Row {
            case: "f64, 1 x 1 times 1 x 1".into(),
            result: Ok(outcome(0)),
        }];
        let text = csv(Path::new("a \"b\", c.cu"), &rows, "h", "");
        assert_eq!(text.lines().nth(1), Some("\"a \"\"b\"\", c.cu\",PASS,1/1,2.000,,,h"));
        assert!(text.starts_with("file,\"f64, 1 x 1 times 1 x 1\",passed"));
    }

    #[test]
    fn csv_fields_that_look_like_formulas_stay_text() {
        for (name, field) in [
            ("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""),
            ("+cmd|x", "\"'+cmd|x\""),
            ("-1", "\"'-1\""),
            ("@SUM(A1)", "\"'@SUM(A1)\""),
            ("\tx", "\"'\tx\""),
            ("\rx", "\"'\rx\""),
        ] {
            assert_eq!(csv_field(name), field);
        }
        assert_eq!(csv_field("a=b-c"), "\"a=b-c\"", "only the first character counts");
    }

    #[test]
    fn mismatches_count_and_point_at_the_first() {
        assert_eq!(
            first_mismatch(&[1.0, 2.0, 5.0, 7.0], &[1.0, 2.0, 3.0, 4.0], |g: f64, c: f64| g == c),
            (2, Some(2))
        );
        assert_eq!(first_mismatch(&[1.0], &[1.0, 2.0], |g: f64, c: f64| g == c), (1, None));
        assert_eq!(shown(f64::NAN), "NaN");
    }

    #[test]
    fn never_written_means_both_poisons_stayed() {
        let second = f64::from_bits(u64::from(f64::SECOND_POISON_WORD) << 32 | u64::from(f64::SECOND_POISON_WORD));
        assert_eq!(written(f64::POISON, second, shown), "never written");
        // The kernel's own NaN, in either run, is a value it wrote.
        assert_eq!(written(f64::NAN, f64::NAN, shown), "NaN");
        assert_eq!(written(f64::POISON, f64::POISON, shown), "NaN");
        assert_eq!(written(2.5, 2.5, shown), "2.500000000000e0");
        assert_eq!(
            written(u32::POISON, u32::SECOND_POISON_WORD, |p| format!("{p:x}")),
            "never written"
        );
        assert_eq!(written_once(f64::POISON, shown), "never written");
        assert_eq!(
            (written_once(f64::NAN, shown), written_once(2.5, shown)),
            ("NaN".to_string(), "2.500000000000e0".to_string())
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

    #[test]
    fn a_missing_kernel_names_what_the_lab_looked_for() {
        let build = kernels::ArchImage { arch: 90, image: &[], relocatable_ptx: None, ptx: None, ptxas: "ptxas info    : Compiling entry function '_Z7simpsonffPf' for 'sm_90'\nptxas info    : Used 8 registers\n" };
        let image = KernelImage {
            source: "mine.cu",
            flags: &[],
            builds: Box::leak(Box::new([build])),
            linked_with_device_runtime: false,
            ptx_inside: true,
        };
        let entry = Entry {
            name: "_Z7simpsonddPd",
            declaration: "__global__ void simpson(double a, double b, double* sums)",
        };
        let error = require_entries(&image, &[entry]).unwrap_err().to_string();
        assert_eq!(error, "mine.cu has no kernel `__global__ void simpson(double a, double b, double* sums)` (the lab looks for `_Z7simpsonddPd`); it has the kernels _Z7simpsonffPf");
    }

    #[test]
    fn a_different_signature_is_found_in_the_images_without_a_gpu() {
        let dir = PrivateDir::new("signature-test").unwrap();
        let path = dir.path().join("mmm.cu");
        std::fs::write(&path, "#include \"matrix_view.cuh\"\nextern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b) { b(0, 0) = a(0, 0); }\n").unwrap();
        let image = runtime::compile(&path, &kernels::MMM_BS16, kernels::BUILT_ARCHS[0])
            .unwrap()
            .image;
        let entry = Entry {
            name: "mmm_f64",
            declaration:
                "extern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c)",
        };
        let error = require_same_parameters(&image, &kernels::MMM_BS16, &entry)
            .unwrap_err()
            .to_string();
        assert!(error.ends_with("kernel `mmm_f64` takes 2 parameter(s) of 16, 16 bytes, but the lab passes 3 of 16, 16, 16 bytes: `extern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c)`"), "{error}");
        require_same_parameters(&kernels::MMM_BS16, &kernels::MMM_BS16, &entry).unwrap();
    }
}

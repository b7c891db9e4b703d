//! Weeks 5 and 6: a student's whole CUDA program, graded by its results and by what its trace shows
//! (issue 43). The technique these weeks teach lives in host code (which host memory, how many
//! streams, in which order copies and kernels are issued), so `--program-source FILE.cu --check`
//! builds the student's program with nvcc ([`kernels::runtime::compile_program`]), runs each case as
//! a child process under our CUPTI recorder ([`run`]; `grading/programs/recorder.cpp`), checks the
//! file the program wrote against the CPU's values, and reads the rules from the trace ([`rules`]).
//!
//! A lab offers a week by implementing [`Week`]: its cases, their input files and command lines, and
//! the rows it judges from the output and the trace. The German products' week ([`mmm_week`]) is
//! here rather than in a lab because two labs grade it (weeks 5 and 6, pageable and pinned). This module does the rest: the build, the
//! processes, the table, the CSV, the chronograms.

pub mod chronogram;
pub mod csv;
pub mod imports;
pub mod mmm_week;
pub mod per_case;
pub mod repeat;
pub mod rows;
pub mod rules;
pub mod run;
pub mod trace;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use kernels::private_dir::PrivateDir;
use kernels::runtime::{self, CompileError};

use crate::cases_file::{CaseFormat, CaseSet};
use crate::exit::{Machine, Usage};
use crate::phases;
pub use per_case::PerCase;
use rows::fault;
pub use rows::{
    gpu_time, gpu_time_if_comparable, host_memory, kernel_time, overlap, results, results_and_waits, waited, Rule,
    Verdict,
};
use trace::Trace;

/// The course's header for whole programs: the only one a week-5 or week-6 program may include
/// besides the toolkit's and the system's (`CHECK_CUDA`, arguments, reading and writing floats).
pub const HEADER: (&str, &str) = ("course_program.h", include_str!("../../programs/course_program.h"));

/// The recorder's source, built beside the student's program for each check.
pub(crate) const RECORDER: &str = include_str!("../../programs/recorder.cpp");

/// How long one case may run: ours take well under a second.
const CASE_LIMIT: Duration = Duration::from_secs(60);

/// The flags of a lab that grades a week's whole program, flattened into its own.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ProgramArgs {
    /// Your whole program (weeks 5 and 6), for --check: compiled with nvcc, then run on the week's
    /// cases (random inputs in files, sizes on its command line) under a CUPTI recorder.
    #[arg(long, value_name = "FILE.cu")]
    pub program_source: Option<PathBuf>,
    /// With --program-source: run the week's cases and print one table of every case's results and
    /// of the rules read from its trace. Exit code 0 only if all pass.
    #[arg(long, requires = "program_source")]
    pub check: bool,
    /// With --check: print the results as CSV (a header and one row), for assignments/grade.sh; with
    /// --list-cases: the CSV header alone.
    #[arg(long)]
    pub csv: bool,
    /// Internal (grade.sh): read a key from stdin and end stdout with the closing mark
    /// ([`crate::mark`], which reads the flag itself, before anything runs).
    #[arg(long, hide = true, requires = "csv")]
    pub mark: bool,
    /// With --check: show what the program printed in every case, not only in the failing ones.
    #[arg(long, requires = "check")]
    pub show_output: bool,
    /// With --check: stop after SECONDS in all; the cases not run by then fail with a note.
    #[arg(long, value_name = "SECONDS", requires = "check", value_parser = clap::value_parser!(u64).range(1..))]
    pub time_limit: Option<u64>,
    /// With --check: write each case's chronogram (case-N.svg, from its trace: a lane per stream), the
    /// trace itself (case-N.trace) and, where the lab draws one, our own run's (case-N-ours.svg) into
    /// DIR, which must not exist yet.
    #[arg(long, value_name = "DIR", requires = "check")]
    pub chronograms: Option<PathBuf>,
    /// With --check or --list-cases: the cases in FILE instead of the week's (one per line, `#`
    /// comments; the week's README says the fields).
    #[arg(long, value_name = "FILE")]
    pub cases: Option<PathBuf>,
    /// Print the cases --check runs, with the case set's hash, and exit (no GPU needed).
    #[arg(long, conflicts_with = "check")]
    pub list_cases: bool,
    /// With --check: compile the program, judge what it calls (the static checks), and stop; no case
    /// runs, no GPU is used. Exit code 0 when it compiles and passes them.
    #[arg(long, requires = "check")]
    pub dry_run: bool,
    /// With --check: run the program even where this machine cannot confine its files to the case's
    /// folder (no Landlock: a Linux kernel older than 5.13, or Landlock off). Without it such a
    /// machine refuses the check (MACHINE): the program could read the hidden cases and the other
    /// submissions. The layers this machine has still apply; the table's first line says which.
    #[arg(long, requires = "check")]
    pub unsandboxed: bool,
    /// With --check: our own solution of the week, run on every case before the program (default:
    /// the week's file in this repository's reference/weeks/, where there is one). Where it meets a
    /// time rule only narrowly on a case (a case too small to overlap), the program is held to its
    /// share of the limit, and not judged where that share is under a quarter; a case whose results
    /// or copies it gets wrong is refused: the case, not the program, is wrong.
    #[arg(long, value_name = "FILE.cu", requires = "check")]
    pub ours: Option<PathBuf>,
}

impl ProgramArgs {
    /// Whether the lab was asked for a program check, a listing of its cases, or a flag of theirs.
    pub fn requested(&self) -> bool {
        self.program_source.is_some() || self.check || self.list_cases || self.csv || self.cases.is_some()
    }
}

/// A case made ready to run: the program's arguments (files in the case's folder), and the file it
/// must write, with its size.
pub struct Prepared {
    pub arguments: Vec<OsString>,
    pub output: PathBuf,
    pub output_bytes: u64,
}

impl Prepared {
    /// The usual case: `count` random floats in [-1, 1) from `seed` written into `dir/input.bin`,
    /// the program's command line `sizes`, then that file's and `dir/output.bin`'s paths, and an
    /// output of `output_floats` floats. Returns the inputs too, for the CPU's values.
    pub fn random_input(
        dir: &Path,
        count: usize,
        seed: u64,
        sizes: &[String],
        output_floats: usize,
    ) -> Result<(Prepared, Vec<f32>)> {
        let mut random = common::verify::Random::new(seed);
        let floats: Vec<f32> = (0..count).map(|_| random.uniform(-1.0, 1.0) as f32).collect();
        let bytes: Vec<u8> = floats.iter().flat_map(|x| x.to_le_bytes()).collect();
        let (input, output) = (dir.join("input.bin"), dir.join("output.bin"));
        std::fs::write(&input, bytes).with_context(|| format!("writing {}", input.display()))?;
        let arguments = sizes
            .iter()
            .map(OsString::from)
            .chain([input.into_os_string(), output.clone().into_os_string()])
            .collect();
        let prepared = Prepared {
            arguments,
            output,
            output_bytes: 4 * output_floats as u64,
        };
        Ok((prepared, floats))
    }
}

/// A week whose students hand in a whole program. The associated functions need no GPU (listing
/// and loading the cases); the methods run with one.
pub trait Week {
    type Case;
    /// The week's folder in `assignments/` (`05-streams`), for the table and the CSV.
    const NAME: &'static str;
    /// Our solution's file in `reference/weeks/` (`pipeline.cu`), the default of `--ours`.
    const SOLUTION: &'static str;
    /// The fields of a line of a `--cases` file (`N NST SEED`).
    const FIELDS: &'static str;
    /// The rules' columns in the CSV, each `name: what it asks`, the name as the rows have it.
    const RULES: &'static [&'static str];
    /// The week's own cases.
    fn builtin() -> Vec<Self::Case>;
    /// A case from the fields of a line of a `--cases` file, or what is wrong with them.
    fn parse(fields: &[&str]) -> Result<Self::Case, String>;
    /// The case as a `--cases` line, for the case set's hash.
    fn line(case: &Self::Case) -> String;
    /// The case in a few words (`N 4194304, Nst 4`): its label in the table, its column in the CSV.
    fn name(case: &Self::Case) -> String;
    /// What the cases depend on beyond their lines (week 5's STEPS per GPU model), hashed with them
    /// into the case set's hash: a change to it is a new case set.
    fn hashed() -> String {
        String::new()
    }
    /// What the check chose for this GPU, said once above the table.
    fn about(&self) -> String {
        String::new()
    }
    /// Draws our own run of the case into `path` (SVG), for the chronograms beside the program's;
    /// a week without one draws nothing.
    fn our_chronogram(&mut self, _case: &Self::Case, _path: &Path) -> Result<()> {
        Ok(())
    }
    /// Writes the case's inputs into `dir` and says how to run the program on them.
    fn prepare(&mut self, case: &Self::Case, dir: &Path) -> Result<Prepared>;
    /// The case's rows, from the file the program wrote (or why it is unusable) and its trace. An
    /// error is the machine's (our own run for the time's comparison failed).
    fn judge(&mut self, case: &Self::Case, output: Result<Vec<u8>, String>, trace: &Trace) -> Result<Vec<Rule>>;
}

/// The cases `args` ask for: the week's, or a `--cases` file's ([`Usage`] errors name its line).
pub fn case_set<W: Week>(args: &ProgramArgs) -> Result<CaseSet<W::Case>> {
    let parse = |fields: &[&str]| W::parse(fields).map(|case| vec![case]);
    let format = CaseFormat {
        fields: W::FIELDS,
        parse: &parse,
        line: &W::line,
        name: &W::name,
        shared_checks: None,
    };
    let mut set = format.load(args.cases.as_deref(), W::builtin())?;
    let hashed = W::hashed();
    if !hashed.is_empty() {
        set.hash = crate::cases_file::case_set_hash(&[set.hash, hashed]);
    }
    Ok(set)
}

/// `--list-cases`: the cases and the rules with the case set's hash, or with `--csv` the CSV header
/// (no GPU, no program).
fn list_cases<W: Week>(args: &ProgramArgs) -> Result<()> {
    let set = case_set::<W>(args)?;
    if args.csv {
        println!("{}", csv::header(&set.names, W::RULES));
    } else {
        println!("{} cases (case set {}):", set.names.len() + W::RULES.len(), set.hash);
        set.names
            .iter()
            .map(String::as_str)
            .chain(W::RULES.iter().copied())
            .for_each(|name| println!("{name}"));
    }
    Ok(())
}

/// The student's program and our recorder, built, and the cases to run it on.
pub struct Built<C> {
    program: runtime::Program,
    recorder: PathBuf,
    /// The folder of the CUPTI the recorder loads: the sandbox lets the program read it.
    cupti: PathBuf,
    arch: u32,
    set: CaseSet<C>,
    /// The sandbox's layers on this machine (from its probe), for the table's first line.
    layers: Option<sandbox::Layers>,
    /// Our solution, built as the program is ([`our_solution`]), and its file as given.
    ours: Option<(runtime::Program, PathBuf)>,
    /// The GPU, held alone from before the lab opens it to the end of the cases: every run of a
    /// program week is timed ([`crate::gpu_lock`]; nothing where the grader names no lock).
    gpu: Option<crate::gpu_lock::Guard>,
}

/// The first half of `--program-source FILE --check`, before the lab opens the GPU: the flags and
/// the cases checked, the student's program compiled (for GPU 0, or without a GPU for the newest
/// architecture the labs are built for, so that a compile error shows anywhere) and the recorder
/// built.
fn build<W: Week>(args: &ProgramArgs) -> Result<Built<W::Case>> {
    let Some(source) = args.program_source.as_deref().filter(|_| args.check) else {
        let flag = if args.program_source.is_some() {
            "--program-source FILE.cu"
        } else if args.csv || args.cases.is_some() {
            "--csv or --cases"
        } else {
            "--program"
        };
        bail!(Usage(format!("{flag} goes with --check (or --list-cases)")));
    };
    if let Some(dir) = args.chronograms.as_deref().filter(|dir| dir.exists()) {
        bail!(Usage(format!(
            "--chronograms {}: give a folder that does not exist yet",
            dir.display()
        )));
    }
    let set = case_set::<W>(args)?;
    let newest = kernels::BUILT_ARCHS[kernels::BUILT_ARCHS.len() - 1];
    let arch = if args.dry_run {
        newest
    } else {
        common::gpu::first_gpu_arch().unwrap_or(newest)
    };
    let program = phases::timed("compile", || compile(source, arch))?;
    let refused = imports::refused(&program.object, &program.executable).map_err(Machine)?;
    if !refused.is_empty() {
        bail!(
            "the program {} {}: a program of the week may not (not run)",
            shown(source),
            refused.join(", ")
        );
    }
    let (recorder, cupti) = phases::timed("compile", || build_recorder(program.dir.path()))?;
    let ours = match our_solution::<W>(args).filter(|_| !args.dry_run) {
        Some(path) => Some((phases::timed("compile", || compile_ours(&path, arch))?, path)),
        None => None,
    };
    Ok(Built {
        program,
        recorder,
        cupti,
        arch,
        set,
        layers: None,
        ours,
        gpu: None,
    })
}

/// Our solution of the week: `--ours`, else `reference/weeks/<W::SOLUTION>` of the repository the
/// lab was built in (two folders above its binary: `target/release/`, `gpu-bundle/bin/`) or of the
/// current folder; `None` where there is none (the student pack has none).
fn our_solution<W: Week>(args: &ProgramArgs) -> Option<PathBuf> {
    if let Some(path) = &args.ours {
        return Some(path.clone());
    }
    let relative = Path::new("reference/weeks").join(W::SOLUTION);
    let beside_binary = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join(&relative)));
    [beside_binary, Some(relative)]
        .into_iter()
        .flatten()
        .find(|path| path.is_file())
}

/// Our solution, compiled as a program is: any failure is the machine's (or the teacher's `--ours`).
fn compile_ours(path: &Path, arch: u32) -> Result<runtime::Program> {
    runtime::compile_program(path, &[HEADER], arch).map_err(|err| {
        anyhow::Error::new(Machine(format!(
            "our solution {} (--ours) did not compile: {}",
            path.display(),
            match err {
                CompileError::Nvcc { messages, .. } => messages,
                other => other.to_string(),
            }
        )))
    })
}

/// The student's file by its name alone: messages and notes never show the grading machine's folders.
pub(crate) fn shown(source: &Path) -> String {
    source.file_name().map_or_else(
        || source.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// What the program of a case may touch: its own folder (read and write; its home and TMPDIR), the
/// program and our recorder (read and run), CUPTI's folder (read); no process of its own.
fn policy<C>(built: &Built<C>, case_dir: &Path) -> sandbox::Policy {
    let mut policy = sandbox::Policy::new(case_dir, "/usr/bin:/bin");
    policy.execute = vec![built.program.dir.path().to_path_buf()];
    policy.read = vec![built.cupti.clone()];
    policy
}

/// The sandbox's layers on this machine, found before the first case (no GPU): a machine that cannot
/// keep a program away from other files refuses the check, unless the teacher said `--unsandboxed`.
fn sandbox_layers<C>(args: &ProgramArgs, built: &Built<C>) -> Result<sandbox::Layers> {
    let probe_dir = PrivateDir::new("lab-probe").map_err(|err| Machine(err.to_string()))?;
    let layers = sandbox::probe(&policy(built, probe_dir.path())).map_err(Machine)?;
    if !layers.confines_files() && !args.unsandboxed {
        bail!(Machine(format!(
            "this machine cannot confine a program to its case's folder (no Landlock: a Linux kernel of 5.13 or later with Landlock on is needed), so the program could read the hidden cases and the other submissions; --unsandboxed runs it anyway ({layers})"
        )));
    }
    Ok(layers)
}

/// What `--program-source FILE --check` does before it needs a GPU: `--list-cases` (then `None`), the
/// build, and `--dry-run` (then `None`). `Some` is the built program, for [`check`].
pub fn before_gpu<W: Week>(args: &ProgramArgs) -> Result<Option<Built<W::Case>>> {
    if args.list_cases {
        list_cases::<W>(args)?;
        return Ok(None);
    }
    let mut built = build::<W>(args)?;
    if args.dry_run {
        dry_run::<W>(args, &built);
        return Ok(None);
    }
    built.layers = Some(sandbox_layers(args, &built)?);
    built.gpu = Some(crate::gpu_lock::exclusive().map_err(|err| Machine(format!("{err:#}")))?);
    Ok(Some(built))
}

/// `--check --dry-run`: the program compiled; every case and rule `-`.
fn dry_run<W: Week>(args: &ProgramArgs, built: &Built<W::Case>) {
    let source = args.program_source.as_deref().unwrap_or(Path::new("?"));
    if args.csv {
        let not_run = vec![Vec::new(); built.set.cases.len()];
        crate::mark::print(&csv::row(
            source,
            &built.set,
            W::RULES,
            &not_run,
            "dry run: no GPU used",
        ));
    } else {
        println!(
            "{}: {} compiled for sm_{} (dry run: no case runs, no GPU used)",
            W::NAME,
            source.display(),
            built.arch
        );
    }
}

/// The second half: runs every case of `week` with the program `build` made, prints the table (or
/// the CSV row) and returns an error when anything failed ([`crate::exit::run_lab`] turns it into the
/// exit code).
pub fn check<W: Week>(args: &ProgramArgs, built: &Built<W::Case>, week: &mut W) -> Result<()> {
    let source = args.program_source.as_deref().unwrap_or(Path::new("?"));
    let layers = built.layers.map(|layers| layers.to_string()).unwrap_or_default();
    if args.csv {
        eprintln!("{layers}");
    } else {
        let ours = match &built.ours {
            Some((_, path)) => format!(
                "Our solution ({}) runs just before and just after the program on each case, under the same recorder, and the time rules compare the program with the faster of the two; where a value lies within 15% of a limit, or misses one by less than a factor of 4, both run again (3, then 5 pairs) and the median run counts.",
                path.display()
            ),
            None => "No solution of ours beside this lab (--ours): every rule is judged on every case.".to_string(),
        };
        println!(
            "{}: {} compiled for sm_{}; the cases (set {}) run it under a CUPTI recorder. {}\n{ours}\n{layers}\n",
            W::NAME,
            source.display(),
            built.arch,
            built.set.hash,
            week.about()
        );
        println!("| case | rule | measured | the week asks | verdict |");
        println!("|------|------|----------|---------------|---------|");
    }
    let started = Instant::now();
    let mut per_case = Vec::new();
    for (index, case) in built.set.cases.iter().enumerate() {
        let label = format!("{} ({})", index + 1, built.set.names[index]);
        let rows = match args.time_limit.filter(|limit| started.elapsed().as_secs() >= *limit) {
            Some(limit) => vec![fault(format!("not run: the --time-limit of {limit} s ran out"))],
            None => run_case(args, week, case, &label, built, index)?,
        };
        if !args.csv {
            for row in &rows {
                println!("| {label} | {}", row.cells());
            }
        }
        per_case.push(rows);
    }
    let all: Vec<&Rule> = per_case.iter().flatten().collect();
    let failed = all
        .iter()
        .filter(|row| matches!(row.verdict, Verdict::Fail | Verdict::Fault))
        .count();
    let judged = all.iter().filter(|row| row.verdict != Verdict::NotApplicable).count();
    if args.csv {
        crate::mark::print(&csv::row(source, &built.set, W::RULES, &per_case, ""));
    } else {
        println!("\n{} of {judged} rules passed", judged - failed);
    }
    phases::write(source);
    if failed > 0 {
        bail!("{failed} of {judged} rules failed");
    }
    Ok(())
}

/// One case: the program's runs with ours between them (ours, program, ours, program, ..., ours),
/// as many of the program's as [`repeat::PAIRS`] says (more where a value lies near a limit,
/// [`repeat::near_a_limit`], or one run missed a limit by less than a factor of
/// [`repeat::CONFIRM`], [`repeat::failed_once`]); each rule's row from their median
/// ([`repeat::median_rows`]), against ours ([`rows::against_ours`]). A run that cannot be judged, in
/// any pair, ends the case with its fault. What the program printed is shown for a failing case: the
/// run that could not be judged, else the first.
fn run_case<W: Week>(
    args: &ProgramArgs,
    week: &mut W,
    case: &W::Case,
    label: &str,
    built: &Built<W::Case>,
    index: usize,
) -> Result<Vec<Rule>> {
    let (mut yours, mut ours) = (Vec::new(), Vec::new());
    let mut first_run = None;
    let mut rows = Vec::new();
    let mut next = None;
    for pairs in repeat::PAIRS {
        while yours.len() < pairs {
            // The first pair writes the chronograms, as the case's `index`.
            let chronograms = yours.is_empty().then_some(index);
            let pair = run_pair(args, week, case, label, built, chronograms, &mut next)?;
            // A run that cannot be judged is the case's verdict, whichever pair it was: its rows are
            // one fault row, which no median of the other runs' rules would keep.
            if pair.yours.iter().any(|row| row.verdict == Verdict::Fault) {
                show_output(args, label, &pair.ran, true);
                return Ok(pair.yours);
            }
            ours.extend(pair.ours);
            yours.push(pair.yours);
            first_run.get_or_insert(pair.ran);
        }
        let our_rows = repeat::median_rows(&ours);
        rows = repeat::median_rows(&yours);
        if built.ours.is_some() {
            rows = rows::against_ours(rows, &our_rows);
        }
        let again = repeat::near_a_limit(&rows, &our_rows)
            .or_else(|| (yours.len() == 1).then(|| repeat::failed_once(&rows)).flatten());
        if again.is_none() {
            break;
        }
    }
    let failed = rows
        .iter()
        .any(|row| matches!(row.verdict, Verdict::Fail | Verdict::Fault));
    if let Some(ran) = &first_run {
        show_output(args, label, ran, failed);
    }
    Ok(rows)
}

/// What the program printed in `ran`, where its case `failed` or `--show-output` asks, and not in a
/// CSV run.
fn show_output(args: &ProgramArgs, label: &str, ran: &run::Ran, failed: bool) {
    if (failed || args.show_output) && !args.csv {
        for (stream, captured) in [("stdout", &ran.stdout), ("stderr", &ran.stderr)] {
            if !captured.is_empty() {
                eprintln!("--- case {label}: the program's {stream} ---\n{}", captured.shown());
            }
        }
    }
}

/// One pair of runs of a case: ours, then the program.
struct Pair {
    /// Our solution's rows, where there is one.
    ours: Option<Vec<Rule>>,
    /// The program's rows, its time rules against ours's run ([`rows::timed_against`]); one fault
    /// row where the run cannot be judged.
    yours: Vec<Rule>,
    /// The program's run, for what it printed.
    ran: run::Ran,
}

/// A fresh folder of the case's ([`case_folder`]) where our solution, if there is one, has just run
/// ([`run_ours`]): the program's next run is there, and ours's run is the one before it.
struct Ready {
    dir: PrivateDir,
    prepared: Prepared,
    ours: Option<(Vec<Rule>, Trace)>,
}

/// A case's folder made [`Ready`]: its inputs written, and ours run in it.
fn ready<W: Week>(week: &mut W, case: &W::Case, label: &str, built: &Built<W::Case>) -> Result<Ready> {
    let (dir, prepared) = case_folder(week, case)?;
    let ours = match &built.ours {
        Some((program, _)) => Some(run_ours(week, case, label, built, program, dir.path(), &prepared)?),
        None => None,
    };
    Ok(Ready { dir, prepared, ours })
}

/// A pair of runs: the program in a fresh folder of the case's, where ours has just run (`next`,
/// left by the pair before, else made now): a run cannot leave anything for the next. Ours runs
/// again just after the program, in a folder of its own, which it leaves in `next` for the next
/// pair; the program's time rules take the faster of ours's two runs around it ([`repeat::faster`]),
/// so that `k` pairs take `2k + 1` runs. A pair given `chronograms` (the case's index) writes them.
fn run_pair<W: Week>(
    args: &ProgramArgs,
    week: &mut W,
    case: &W::Case,
    label: &str,
    built: &Built<W::Case>,
    chronograms: Option<usize>,
    next: &mut Option<Ready>,
) -> Result<Pair> {
    let Ready {
        dir,
        prepared,
        ours: before,
    } = match next.take() {
        Some(ready) => ready,
        None => ready(week, case, label, built)?,
    };
    let boxed = sandbox::Sandbox::prepare(&policy(built, dir.path())).map_err(Machine)?;
    let ran = phases::timed("runs", || {
        run::run(
            &built.program.executable,
            &built.recorder,
            &prepared.arguments,
            dir.path(),
            CASE_LIMIT,
            &boxed,
        )
    });
    let (yours, ours) = match (ran.fault(), &ran.trace) {
        (None, Ok(trace)) => {
            if let (Some(folder), Some(index)) = (&args.chronograms, chronograms) {
                chronogram::write(folder, index, label, trace)?;
                week.our_chronogram(case, &folder.join(format!("case-{}-ours.svg", index + 1)))
                    .map_err(|err| Machine(format!("{err:#}")))?;
                let kept = folder.join(format!("case-{}.trace", index + 1));
                std::fs::write(&kept, &ran.trace_text)
                    .map_err(|err| anyhow::anyhow!("cannot keep the trace as {}: {err}", kept.display()))?;
            }
            let output = run::read_output(&prepared.output, prepared.output_bytes);
            let rows = phases::timed("judge", || week.judge(case, output, trace))
                .map_err(|err| Machine(format!("{err:#}")))?;
            match before {
                Some(before) => {
                    // A folder of its own: the program may have changed anything in its own.
                    let after = next.insert(ready(week, case, label, built)?);
                    let after = after.ours.clone().context("ours ran before the program, not after")?;
                    let (our_rows, our_trace) = repeat::faster(before, after);
                    (rows::timed_against(rows, trace, &our_trace), Some(our_rows))
                }
                None => (rows, None),
            }
        }
        (why, _) => (vec![fault(why.unwrap_or_default())], before.map(|(rows, _)| rows)),
    };
    Ok(Pair { ours, yours, ran })
}

/// A fresh private folder for a run on `case`, with the case's inputs written into it.
fn case_folder<W: Week>(week: &mut W, case: &W::Case) -> Result<(PrivateDir, Prepared)> {
    let dir = PrivateDir::new("lab-case").map_err(|err| Machine(err.to_string()))?;
    let prepared =
        phases::timed("inputs", || week.prepare(case, dir.path())).map_err(|err| Machine(format!("{err:#}")))?;
    Ok((dir, prepared))
}

/// Our solution on the case, in the case's folder (its output removed after),
/// boxed as the program is: its rows, its time rules against its own run, for
/// [`rows::against_ours`], and its trace, for the program's time rules. A run that fails is the
/// machine's; a rule it fails that no case's size excuses ([`rows::excused_by_size`]) refuses the
/// case.
fn run_ours<W: Week>(
    week: &mut W,
    case: &W::Case,
    label: &str,
    built: &Built<W::Case>,
    ours: &runtime::Program,
    dir: &Path,
    prepared: &Prepared,
) -> Result<(Vec<Rule>, Trace)> {
    let mut policy = policy(built, dir);
    policy.execute.push(ours.dir.path().to_path_buf());
    let boxed = sandbox::Sandbox::prepare(&policy).map_err(Machine)?;
    let ran = phases::timed("runs", || {
        run::run(
            &ours.executable,
            &built.recorder,
            &prepared.arguments,
            dir,
            CASE_LIMIT,
            &boxed,
        )
    });
    if let Some(why) = ran.fault() {
        bail!(Machine(format!("case {label}: our own solution did not run: {why}")));
    }
    let trace = ran.trace.map_err(Machine)?;
    let output = run::read_output(&prepared.output, prepared.output_bytes);
    match std::fs::remove_file(&prepared.output) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            bail!(Machine(format!("cannot remove our solution's output: {err}")))
        }
        _ => {}
    }
    let rows =
        phases::timed("judge", || week.judge(case, output, &trace)).map_err(|err| Machine(format!("{err:#}")))?;
    let rows = rows::timed_against(rows, &trace, &trace);
    if let Some(row) = rows
        .iter()
        .find(|row| row.verdict == Verdict::Fail && !rows::excused_by_size(row.name))
    {
        bail!(Usage(format!(
            "case {label}: our own solution fails the rule '{}' there ({}): a case this week cannot grade; drop it from the --cases file",
            row.name, row.measured
        )));
    }
    Ok((rows, trace))
}

/// The student's program, built for `arch`; a compile error is the student's, a missing nvcc the
/// machine's.
fn compile(source: &Path, arch: u32) -> Result<runtime::Program> {
    runtime::compile_program(source, &[HEADER], arch).map_err(|err| match err {
        CompileError::NoNvcc | CompileError::Io(_) | CompileError::Unsupported { .. } => {
            anyhow::Error::new(Machine(err.to_string()))
        }
        CompileError::Nvcc { messages, path } => {
            eprint!("{messages}");
            anyhow::anyhow!("compile error: nvcc could not compile {} (its messages are above)", path.display())
        }
        CompileError::ForeignInclude { path, include } => anyhow::anyhow!(
            "{} includes {include}: a program may include only {} and the headers of the CUDA toolkit (not CUPTI's) and the system (not compiled)",
            path.display(),
            HEADER.0
        ),
        CompileError::Missing { path, reason } => {
            anyhow::Error::new(Usage(format!("cannot read the program {}: {reason}", path.display())))
        }
        CompileError::TooLarge { path, bytes } => anyhow::anyhow!(
            "the program {} has {bytes} bytes; a program of the week has a few thousand (not compiled)",
            path.display()
        ),
        other => anyhow::anyhow!("{other}"),
    })
}

/// The recorder, built into `dir` with the CUPTI the labs find (as `--profile` does), and CUPTI's
/// folder.
fn build_recorder(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let cupti = profiler::cupti::candidates()
        .into_iter()
        .find(|path| path.is_file())
        .ok_or_else(|| {
            Machine(
                "no CUPTI (libcupti.so.13) to record the program with; bash scripts/cuda-toolchain.sh installs it"
                    .into(),
            )
        })?;
    let recorder = runtime::compile_recorder(RECORDER, &cupti, dir).map_err(|err| match err {
        CompileError::Nvcc { messages, .. } => Machine(format!("the recorder did not compile: {messages}")),
        other => Machine(format!("the recorder did not compile: {other}")),
    })?;
    let folder = cupti.canonicalize().unwrap_or(cupti);
    Ok((recorder, folder.parent().unwrap_or(Path::new("/")).to_path_buf()))
}

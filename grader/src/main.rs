//! `grader`: grades a folder of submissions for one week (`assignments/grade.sh` runs it). `--help`
//! says everything; the crate's doc says what each module owns.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser};
use grader::csv::shown;
use grader::feedback::{self, Feedback};
use grader::lab::{self, Lab};
use grader::local::{default_jobs, find_gpus, keep_beside, Local};
use grader::output::{claim, new_or_empty, Csv};
use grader::rows::Rows;
use grader::slurm::{self, Array, Resources};
use grader::stop::{stop, Stop, ME, NOT_GRADED, USAGE};
use grader::submissions;
use grader::weeks::{self, Week};

const ABOUT: &str = "Grades a folder of submissions for one week: each runs through the week's lab (--check --csv), after our own solution has passed the same cases, and the CSV has a row per student.";

const LONG_ABOUT: &str = "Grades a folder of submissions for one week: each runs through the week's lab (--check --csv), after our own solution has passed the same cases, and the CSV has a row per student.

  bash assignments/grade.sh [OPTIONS] WEEK SUBMISSIONS --out grades.csv
  bash assignments/grade.sh --dry-run WEEK SUBMISSIONS --out compiles.csv   (no GPU: compile, static rules)
  bash assignments/grade.sh --slurm [OPTIONS] WEEK SUBMISSIONS OUT          (one Slurm array task and GPU each)
  bash assignments/grade.sh --collect OUT --out grades.csv                  (the array's CSV)

WEEK: {KERNEL_WEEKS} (a kernel is handed in), or {PROGRAM_WEEKS} (a whole program; its trace is judged too; no --sanitize and no --feedback yet).

A submission is SUBMISSIONS/<student>.cu or a folder SUBMISSIONS/<student>/ with one .cu file anywhere in it (hidden files and __MACOSX/ are skipped; in a program week a folder may hold several, one named like the starter). Other files are listed once as skipped; one student handing in twice (ann.cu and ann/) is refused. Submissions are graded in byte order.

The CSV: student, file, each case's and rule's PASS / FAIL / FAULT (MACHINE: the machine failed it), passed, the time ratio against ours, flags, the case set, a note, the score (0 to 100: the cases passed, and the rules passed times the share of the cases passed; empty where the row is no grade), and with --ids the student id. A grade comes only from the lab's own closing mark over its row; a lab that leaves no row is \"not graded\", never 0.

Exit code: 0 every submission graded (whatever its grades); 1 some not graded (a case set changed, a lab without a row, Slurm tasks without one); 2 bad arguments, or a case our own solution fails; 3 the machine failed (no GPU, MACHINE verdicts, our solution failing); 4 Slurm tasks still pending (collect again later). Everything written is private to the grading account (umask 077). The labs come from LAB_BIN_DIR (gpu-bundle/bin), else from cargo build --release.";

/// `--help`'s long text, with the weeks from the one list.
fn long_about() -> String {
    LONG_ABOUT
        .replace("{KERNEL_WEEKS}", &weeks::names_of(false).join(", "))
        .replace("{PROGRAM_WEEKS}", &weeks::names_of(true).join(", "))
}

#[derive(Parser, Debug)]
#[command(name = "grade.sh", about = ABOUT)]
struct Args {
    /// Grade N submissions at once (default: one per GPU), spread over the GPUs in turn (those
    /// CUDA_VISIBLE_DEVICES names, else all nvidia-smi lists); labs that share a GPU run their timed
    /// work and ncu one at a time (a lock per GPU) while others compile
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// Run every case under compute-sanitizer (slow)
    #[arg(long)]
    sanitize: bool,
    /// The cases in FILE instead of the week's (hidden cases; see the week's README)
    #[arg(long, value_name = "FILE")]
    cases: Option<PathBuf>,
    /// A submission's --check stops after this many seconds (default 600, 3600 with --sanitize)
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    limit: Option<u64>,
    /// How much each case and rule counts: lines "NAME WEIGHT", NAME a column as the header names it,
    /// a rule's name before its ": ", or * (every column no other line names); others weigh 1
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    /// The most a submission that fails one of the week's rules (its technique) scores, 0 to 100
    /// (default 50; 100: no cap)
    #[arg(long, value_name = "PERCENT", default_value_t = 50.0, value_parser = percent)]
    rule_cap: f64,
    /// Add the column "student id": lines "FILE_OR_FOLDER_NAME,STUDENT_ID"
    #[arg(long, value_name = "FILE")]
    ids: Option<PathBuf>,
    /// Write the CSV to FILE (a temporary file renamed; the previous FILE kept as FILE.bak) instead of
    /// stdout
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Keep each submission's --check output as DIR/<name>.txt (new or empty; default: beside the CSV)
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Also write a feedback page per student and the class page into DIR (new or empty); the CSV gets
    /// the column "most like"
    #[arg(long, value_name = "DIR")]
    feedback: Option<PathBuf>,
    /// With --feedback: the students' pages show only the cases' verdicts
    #[arg(long)]
    feedback_hide_cases: bool,
    /// With --feedback: also compare with every .cu file in DIR (earlier years'); repeat for more
    #[arg(long, value_name = "DIR")]
    earlier: Vec<PathBuf>,
    /// No GPU: each submission only compiled and its static rules judged; no scores
    #[arg(long)]
    dry_run: bool,
    /// Submit one Slurm array task per submission, each with one GPU, into the folder OUT
    #[arg(long)]
    slurm: bool,
    /// With --slurm: sbatch's --partition
    #[arg(long, value_name = "P")]
    partition: Option<String>,
    /// With --slurm: sbatch's --account
    #[arg(long, value_name = "A")]
    account: Option<String>,
    /// With --slurm: any other sbatch option, as sbatch takes it (--sbatch=--qos=course,
    /// --sbatch=--constraint=a100, --sbatch=--gres=gpu:a100:1 where the cluster names GPU types);
    /// repeat for more
    #[arg(long, value_name = "OPTION", allow_hyphen_values = true)]
    sbatch: Vec<String>,
    /// With --slurm: each task's time limit in minutes (default: --limit and 10 minutes more)
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u32).range(1..))]
    time: Option<u32>,
    /// With --slurm: each task's CPUs (default 2; with --sanitize 2 and 12G, week 03 with --sanitize 4 and 16G)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    cpus: Option<u32>,
    /// With --slurm: each task's memory, as sbatch takes it (8G, 500M; default 8G)
    #[arg(long, value_name = "SIZE", value_parser = memory)]
    mem: Option<String>,
    /// With --slurm: at most N tasks of the array at once (sbatch --array=...%N; default 8)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    throttle: Option<u32>,
    /// With --slurm: also submit a job that writes OUT/grades.csv when the array is done
    #[arg(long)]
    collect_job: bool,
    /// The CSV of the array --slurm wrote into OUT, the same as a local run's
    #[arg(long, value_name = "OUT")]
    collect: Option<PathBuf>,
    /// What one array task runs (OUT/task.sh calls it)
    #[arg(long, value_name = "OUT", hide = true)]
    task: Option<PathBuf>,
    /// The check of our solution the array waits for (OUT/canary.sh calls it)
    #[arg(long, value_name = "OUT", hide = true)]
    canary: Option<PathBuf>,
    /// Print the weeks, one per line: NAME FOLDER LAB [FLAGS], tab-separated (the student pack and the
    /// docs' test read them), and exit
    #[arg(long, exclusive = true)]
    list_weeks: bool,
    /// WEEK SUBMISSIONS, and OUT for --slurm
    #[arg(value_name = "WEEK SUBMISSIONS [OUT]")]
    positional: Vec<OsString>,
}

/// A share from 0 to 100.
fn percent(text: &str) -> std::result::Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|value| (0.0..=100.0).contains(value))
        .ok_or_else(|| format!("needs a number from 0 to 100, not '{text}'"))
}

/// A memory size as sbatch takes it: a whole number, optionally K, M, G or T.
fn memory(text: &str) -> std::result::Result<String, String> {
    let digits = text.strip_suffix(['K', 'M', 'G', 'T']).unwrap_or(text);
    let whole = !digits.is_empty() && !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit());
    whole
        .then(|| text.to_string())
        .ok_or_else(|| format!("needs a size as sbatch takes it (8G, 500M), not '{text}'"))
}

fn main() -> ExitCode {
    // SAFETY: umask only sets this process's file mode mask; it touches no memory.
    unsafe { libc::umask(0o077) };
    let parsed = Args::command()
        .long_about(long_about())
        .try_get_matches()
        .and_then(|matches| Args::from_arg_matches(&matches));
    let args = match parsed {
        Ok(args) => args,
        Err(err)
            if matches!(
                err.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            let text = err.to_string();
            let line = text
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ");
            eprintln!("{ME}: {line} (--help for more)");
            return ExitCode::from(USAGE);
        }
    };
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let (code, line) = match err.downcast_ref::<Stop>() {
                Some(stop) => (stop.code, stop.line.clone()),
                None => (NOT_GRADED, format!("{err:#}")),
            };
            eprintln!("{ME}: {line}");
            ExitCode::from(code)
        }
    }
}

fn run(args: Args) -> Result<u8> {
    if args.list_weeks {
        return list_weeks();
    }
    let mode = if args.slurm {
        "slurm"
    } else if args.collect.is_some() {
        "collect"
    } else if args.task.is_some() {
        "task"
    } else if args.canary.is_some() {
        "canary"
    } else {
        "local"
    };
    check_options(&args, mode)?;
    let repository = lab::repository();
    match mode {
        "task" | "canary" => {
            let out = args
                .task
                .as_ref()
                .or(args.canary.as_ref())
                .expect("the mode says which");
            let array = Array::read(&std::path::absolute(out)?, &repository)?;
            if mode == "task" {
                array.task(&lab::mark_key()?)
            } else {
                array.canary(&repository)
            }
        }
        "collect" => {
            if !args.positional.is_empty() {
                return Err(stop(
                    USAGE,
                    "--collect takes only the folder --slurm wrote (--help for more)",
                ));
            }
            let out = std::path::absolute(args.collect.as_ref().expect("the mode says which"))?;
            let array = Array::read(&out, &repository)?;
            let weights = args
                .weights
                .clone()
                .or_else(|| Some(out.join("weights")).filter(|file| file.is_file()));
            let ids_file = args
                .ids
                .clone()
                .or_else(|| Some(out.join("ids")).filter(|file| file.is_file()));
            let rows = Rows::new(
                &array.lab,
                &array.submissions,
                (weights.as_deref(), ids_file.as_deref()),
                &slurm::folder_shown(&array),
                args.rule_cap,
            )?;
            array.collect(&rows, &csv_of(&args))
        }
        _ => grade(args, mode, &repository),
    }
}

/// `--list-weeks`: the one list of weeks, for scripts and tests.
fn list_weeks() -> Result<u8> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    for week in &weeks::WEEKS {
        let line = [week.name, week.folder, week.lab]
            .iter()
            .chain(week.args)
            .copied()
            .collect::<Vec<_>>();
        writeln!(out, "{}", line.join("\t"))?;
    }
    out.flush()?;
    Ok(0)
}

/// The options that go with one mode only, and those that exclude each other.
fn check_options(args: &Args, mode: &str) -> Result<()> {
    let slurm_only = [
        ("--partition", args.partition.is_some()),
        ("--account", args.account.is_some()),
        ("--sbatch", !args.sbatch.is_empty()),
        ("--time", args.time.is_some()),
        ("--cpus", args.cpus.is_some()),
        ("--mem", args.mem.is_some()),
        ("--throttle", args.throttle.is_some()),
        ("--collect-job", args.collect_job),
    ];
    if let Some((option, _)) = slurm_only.iter().find(|(_, given)| *given).filter(|_| mode != "slurm") {
        return Err(stop(USAGE, format!("{option} goes with --slurm")));
    }
    let local_only = [
        ("--keep", args.keep.is_some()),
        ("--feedback", args.feedback.is_some()),
        ("--dry-run", args.dry_run),
        ("--jobs", args.jobs.is_some()),
    ];
    if let Some((option, _)) = local_only.iter().find(|(_, given)| *given).filter(|_| mode != "local") {
        return Err(stop(USAGE, format!("{option} goes with a local run, not --{mode}")));
    }
    if args.out.is_some() && !matches!(mode, "local" | "collect") {
        return Err(stop(
            USAGE,
            format!("--out goes with a local run or --collect, not --{mode}"),
        ));
    }
    if let Some(out) = &args.out {
        // Checked before anything is graded: a class graded into a CSV that cannot be written is lost.
        let folder = out
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if out.is_dir() || !folder.is_dir() {
            return Err(stop(
                USAGE,
                format!("--out: '{}' is no file in an existing folder", shown(out)),
            ));
        }
    }
    if args.dry_run && args.sanitize {
        return Err(stop(
            USAGE,
            "--dry-run runs no case, so --sanitize has nothing to run under compute-sanitizer",
        ));
    }
    if args.dry_run && args.feedback.is_some() {
        return Err(stop(
            USAGE,
            "--dry-run runs no case, so --feedback would have nothing to show; grade on a GPU for it",
        ));
    }
    if args.feedback_hide_cases && args.feedback.is_none() {
        return Err(stop(USAGE, "--feedback-hide-cases goes with --feedback DIR"));
    }
    if !args.earlier.is_empty() && args.feedback.is_none() {
        return Err(stop(USAGE, "--earlier goes with --feedback DIR"));
    }
    for (option, file) in [
        ("--cases", &args.cases),
        ("--weights", &args.weights),
        ("--ids", &args.ids),
    ] {
        if let Some(file) = file.as_ref().filter(|file| !file.is_file()) {
            return Err(stop(USAGE, format!("{option}: '{}' is not a file", shown(file))));
        }
    }
    if let Some(dir) = args.earlier.iter().find(|dir| !dir.is_dir()) {
        return Err(stop(USAGE, format!("--earlier: '{}' is not a folder", shown(dir))));
    }
    if let Some(dir) = args.feedback.as_ref().filter(|dir| !new_or_empty(dir)) {
        return Err(stop(
            USAGE,
            format!(
                "--feedback: {} is not a new or empty folder (nothing is overwritten)",
                shown(&std::path::absolute(dir)?)
            ),
        ));
    }
    Ok(())
}

/// Where the CSV goes: --out's file, else stdout.
fn csv_of(args: &Args) -> Csv {
    args.out.clone().map_or(Csv::Stdout, Csv::File)
}

/// A local run or a Slurm submission: the week, its lab and the submissions, what costs nothing
/// checked first; a local run checks for a GPU before it builds the lab.
fn grade(args: Args, mode: &str, repository: &Path) -> Result<u8> {
    let expected = if mode == "slurm" { 3 } else { 2 };
    if args.positional.len() != expected {
        let usage = if mode == "slurm" {
            "--slurm [OPTIONS] WEEK SUBMISSIONS OUT"
        } else {
            "[OPTIONS] WEEK SUBMISSIONS"
        };
        return Err(stop(
            USAGE,
            format!(
                "usage: bash assignments/grade.sh {usage} (WEEK: {}; --help for more)",
                weeks::names()
            ),
        ));
    }
    let limit = args.limit.unwrap_or(if args.sanitize { 3600 } else { 600 });
    let week_name = args.positional[0].to_string_lossy();
    let week: &'static Week =
        weeks::week(&week_name).ok_or_else(|| stop(USAGE, format!("no week {week_name} ({})", weeks::names())))?;
    if week.is_program() && args.sanitize {
        return Err(stop(
            USAGE,
            format!(
                "--sanitize: not for {}, whose programs are judged by their trace",
                week.name
            ),
        ));
    }
    if week.is_program() && args.feedback.is_some() {
        return Err(stop(
            USAGE,
            format!("--feedback: not for {} yet (its lab writes no --details)", week.name),
        ));
    }
    let given = &args.positional[1];
    let folder = std::path::absolute(PathBuf::from(given))?;
    if !folder.is_dir() {
        return Err(stop(USAGE, format!("{} is not a folder", shown(Path::new(given)))));
    }
    let folder_shown = shown(&folder);
    let csv = csv_of(&args);
    let submissions = submissions::list(&folder, &folder_shown, csv.file().as_deref())?;
    let out = args
        .positional
        .get(2)
        .map(|out| std::path::absolute(PathBuf::from(out)))
        .transpose()?;
    if let Some(out) = out.as_ref().filter(|out| !new_or_empty(out)) {
        return Err(slurm::not_empty(&shown(out)));
    }
    let devices = if mode == "local" && !args.dry_run {
        find_gpus()?
    } else {
        Vec::new()
    };
    let cases_file = args.cases.as_ref().map(std::path::absolute).transpose()?;
    let lab = Lab::open(
        week,
        repository,
        cases_file,
        args.sanitize,
        limit,
        args.dry_run,
        folder_shown.clone(),
    )?;
    let weights = args.weights.as_ref().map(std::path::absolute).transpose()?;
    let ids_file = args.ids.as_ref().map(std::path::absolute).transpose()?;
    let rows = Rows::new(
        &lab,
        &submissions,
        (weights.as_deref(), ids_file.as_deref()),
        &folder_shown,
        args.rule_cap,
    )?;
    if let Some(out) = out {
        let (cpus, memory) = slurm::default_needs(week, args.sanitize);
        let mut options: Vec<String> = Vec::new();
        options.extend(args.partition.iter().map(|value| format!("--partition={value}")));
        options.extend(args.account.iter().map(|value| format!("--account={value}")));
        options.extend(args.sbatch.iter().cloned());
        if let Some(bad) = options
            .iter()
            .find(|option| option.contains(char::is_whitespace) || !option.starts_with("--"))
        {
            return Err(stop(
                USAGE,
                format!("'{bad}' is no sbatch option for a script line (--name=value, without spaces)"),
            ));
        }
        let needs = Resources {
            cpus: args.cpus.unwrap_or(cpus),
            memory: args.mem.clone().unwrap_or_else(|| memory.to_string()),
            minutes: args.time.map_or(limit / 60 + 10, u64::from),
            throttle: args.throttle.unwrap_or(8),
            options,
        };
        return slurm::submit(
            &lab,
            &submissions,
            &out,
            &shown(Path::new(&args.positional[2])),
            &needs,
            args.collect_job,
            (&weights, &ids_file),
        );
    }
    let feedback = match &args.feedback {
        Some(dir) => {
            let feedback = Feedback {
                bin: feedback::find(repository)?,
                dir: claim(&std::path::absolute(dir)?, "--feedback")?,
                week: week.name,
                repository: repository.to_path_buf(),
                hide_cases: args.feedback_hide_cases,
                earlier: args
                    .earlier
                    .iter()
                    .map(std::path::absolute)
                    .collect::<std::io::Result<_>>()?,
            };
            feedback.prepare()?;
            Some(feedback)
        }
        None => None,
    };
    let keep = match &args.keep {
        Some(dir) => Some(claim(&std::path::absolute(dir)?, "--keep")?),
        None => keep_beside(&csv)?,
    };
    let local = Local {
        lab,
        repository: repository.to_path_buf(),
        submissions,
        rows,
        jobs: args.jobs.map_or_else(|| default_jobs(&devices), |jobs| jobs as usize),
        devices,
        keep,
        feedback,
        csv,
        key: lab::mark_key()?,
    };
    local.run()
}

//! Weeks 5 and 6: a student's whole CUDA program, graded by its results and by what its trace shows
//! (issue 43). The technique these weeks teach lives in host code (which host memory, how many
//! streams, in which order copies and kernels are issued), so `--program-source FILE.cu --check`
//! builds the student's program with nvcc ([`kernels::runtime::compile_program`]), runs each case as
//! a child process under our CUPTI recorder ([`run`]; `grading/programs/recorder.cpp`), checks the
//! file the program wrote against the CPU's values, and reads the rules from the trace ([`rules`]).
//!
//! A lab offers a week by implementing [`Week`]: its cases, their input files and command lines, and
//! the rows it judges from the output and the trace. This module does the rest: the build, the
//! processes, the table, the CSV, the chronograms.

pub mod rules;
pub mod run;
pub mod trace;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use kernels::private_dir::PrivateDir;
use kernels::runtime::{self, CompileError};
use profiler::records::{Activity, Direction, What};
use profiler::timeline::{svg, Kind, Source, Span};

use crate::{csv_field, Machine, Usage};
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
    /// Your whole program (weeks 5 and 6): compile this CUDA file with nvcc and run the week's cases
    /// (random inputs in files, sizes on its command line) under a CUPTI recorder; print one table of
    /// every case's results and of the rules read from its trace. Exit code 0 only if all pass.
    #[arg(long, value_name = "FILE.cu", requires = "check")]
    pub program_source: Option<PathBuf>,
    /// With --program-source: run the week's cases (required: a program is only ever checked).
    #[arg(long, requires = "program_source")]
    pub check: bool,
    /// With --check: print the results as CSV (a header and one row), for assignments/grade.sh.
    #[arg(long, requires = "check")]
    pub csv: bool,
    /// With --check: show what the program printed in every case, not only in the failing ones.
    #[arg(long, requires = "check")]
    pub show_output: bool,
    /// With --check: stop after SECONDS in all; the cases not run by then fail with a note.
    #[arg(long, value_name = "SECONDS", requires = "check", value_parser = clap::value_parser!(u64).range(1..))]
    pub time_limit: Option<u64>,
    /// With --check: write each case's chronogram (case-N.svg, from its trace: a lane per stream) and
    /// the trace itself (case-N.trace) into DIR, which must not exist yet.
    #[arg(long, value_name = "DIR", requires = "check")]
    pub chronograms: Option<PathBuf>,
}

/// A rule's verdict for one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    /// The case could not be judged: the program failed, was stopped, or left no trace.
    Fault,
    /// The rule does not apply to this case (one stream cannot overlap), or this GPU (one copy engine).
    NotApplicable,
}

impl Verdict {
    fn cell(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Fault => "FAULT",
            Verdict::NotApplicable => "-",
        }
    }
}

/// One row of the table: a rule, what was measured, what the week asks, the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub name: &'static str,
    pub measured: String,
    pub wants: String,
    pub verdict: Verdict,
}

impl Rule {
    /// `passed` decides PASS or FAIL.
    pub fn judged(name: &'static str, measured: String, wants: impl Into<String>, passed: bool) -> Rule {
        let verdict = if passed { Verdict::Pass } else { Verdict::Fail };
        Rule {
            name,
            measured,
            wants: wants.into(),
            verdict,
        }
    }

    /// The row's cells after the case's: `rule | measured | wants | verdict |`.
    pub fn cells(&self) -> String {
        format!(
            "{} | {} | {} | {} |",
            self.name,
            self.measured,
            self.wants,
            self.verdict.cell()
        )
    }

    /// Whether `line`, a row of a printed table, is this row: for the tests that judge a saved trace
    /// again. A measured value's ratio in parentheses is left out: it was computed from times the
    /// table shows rounded.
    pub fn printed_as(&self, line: &str) -> bool {
        let without_ratio = |text: &str| text.split(" (").next().unwrap_or_default().to_string();
        let inner = line.trim().trim_start_matches("| ").trim_end_matches(" |");
        let cells: Vec<&str> = inner.split(" | ").collect();
        cells.len() == 5
            && cells[1] == self.name
            && without_ratio(cells[2]) == without_ratio(&self.measured)
            && cells[3] == self.wants
            && cells[4] == self.verdict.cell()
    }

    pub fn not_applicable(name: &'static str, why: impl Into<String>) -> Rule {
        Rule {
            name,
            measured: why.into(),
            wants: String::new(),
            verdict: Verdict::NotApplicable,
        }
    }
}

/// The results row: the `n` floats the program wrote (little-endian, as course_program.h's
/// write_floats writes them), each equal in bits to `expected(i)`, the CPU's value.
pub fn results(output: Result<Vec<u8>, String>, n: usize, expected: impl Fn(usize) -> f32 + Sync) -> Rule {
    use rayon::prelude::*;
    let wants = "every element equal to the CPU's (bits)";
    let bytes = match output {
        Ok(bytes) if bytes.len() == 4 * n => bytes,
        Ok(bytes) => return Rule::judged("results", format!("{} bytes, not {}", bytes.len(), 4 * n), wants, false),
        Err(why) => return Rule::judged("results", why, wants, false),
    };
    let got = |i: usize| f32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
    let wrong: Vec<usize> = (0..n)
        .into_par_iter()
        .filter(|&i| got(i).to_bits() != expected(i).to_bits())
        .collect();
    let measured = match wrong.first() {
        None => format!("all {n} right"),
        Some(&i) => format!(
            "{} of {n} wrong; the first at {i}: {} (CPU {})",
            wrong.len(),
            got(i),
            expected(i)
        ),
    };
    Rule::judged("results", measured, wants, wrong.is_empty())
}

/// The rule every program week has: the program began to read its results (course_program.h's
/// `write_floats`) only once the GPU's last kernel and copy had ended. A program that does not wait
/// may still write the right numbers (its copies were quick); this finds it anyway.
pub fn waited(trace: &Trace) -> Rule {
    let wants = "after the GPU's last work ended";
    match rules::read_after_ns(&trace.activities, &trace.marks, "write_floats") {
        None => Rule::judged(
            "waits",
            "the results were never written with write_floats".into(),
            wants,
            false,
        ),
        Some(ns) if ns >= 0 => Rule::judged(
            "waits",
            format!("results read {:.3} ms after", ns as f64 / 1e6),
            wants,
            true,
        ),
        Some(ns) => Rule::judged(
            "waits",
            format!("results read {:.3} ms before the GPU was done", -ns as f64 / 1e6),
            wants,
            false,
        ),
    }
}

/// A case made ready to run: the program's arguments (files in the case's folder), and the file it
/// must write, with its size.
pub struct Prepared {
    pub arguments: Vec<OsString>,
    pub output: PathBuf,
    pub output_bytes: u64,
}

/// A week whose students hand in a whole program.
pub trait Week {
    type Case;
    /// The week's folder in `assignments/` (`05-streams`), for the table and the CSV.
    const NAME: &'static str;
    fn cases(&self) -> Vec<Self::Case>;
    /// The case in a few words, for the table (`N 4194304, Nst 4, 2000 steps`).
    fn describe(&self, case: &Self::Case) -> String;
    /// Writes the case's inputs into `dir` and says how to run the program on them.
    fn prepare(&mut self, case: &Self::Case, dir: &Path) -> Result<Prepared>;
    /// The case's rows, from the file the program wrote (or why it is unusable) and its trace. An
    /// error is the machine's (our own run for the time's comparison failed).
    fn judge(&mut self, case: &Self::Case, output: Result<Vec<u8>, String>, trace: &Trace) -> Result<Vec<Rule>>;
}

/// The student's program and our recorder, built.
pub struct Built {
    program: runtime::Program,
    recorder: PathBuf,
    arch: u32,
}

/// The first half of `--program-source FILE --check`, before the lab opens the GPU: the flags
/// checked, the student's program compiled (for GPU 0, or without a GPU for the newest architecture
/// the labs are built for, so that a compile error shows anywhere) and the recorder built.
pub fn build(args: &ProgramArgs) -> Result<Built> {
    let Some(source) = &args.program_source else {
        bail!(Usage("--check needs --program-source FILE.cu".into()));
    };
    if let Some(dir) = &args.chronograms {
        if dir.exists() {
            bail!(Usage(format!(
                "--chronograms {}: give a folder that does not exist yet",
                dir.display()
            )));
        }
    }
    let newest = kernels::BUILT_ARCHS[kernels::BUILT_ARCHS.len() - 1];
    let arch = common::gpu::first_gpu_arch().unwrap_or(newest);
    let program = compile(source, arch)?;
    let recorder = build_recorder(program.dir.path())?;
    Ok(Built {
        program,
        recorder,
        arch,
    })
}

/// The second half: runs every case of `week` with the program `build` made, prints the table (or
/// the CSV row) and returns an error when anything failed ([`crate::run_lab`] turns it into the
/// exit code).
pub fn check<W: Week>(args: &ProgramArgs, built: &Built, week: &mut W) -> Result<()> {
    let source = args.program_source.as_deref().unwrap_or(Path::new("?"));
    if !args.csv {
        println!(
            "{}: {} compiled for sm_{}; the week's cases run it under a CUPTI recorder\n",
            W::NAME,
            source.display(),
            built.arch
        );
        println!("| case | rule | measured | the week asks | verdict |");
        println!("|------|------|----------|---------------|---------|");
    }
    let started = Instant::now();
    let mut all = Vec::new();
    for (index, case) in week.cases().iter().enumerate() {
        let label = format!("{} ({})", index + 1, week.describe(case));
        let rows = match args.time_limit.filter(|limit| started.elapsed().as_secs() >= *limit) {
            Some(limit) => vec![fault(format!("not run: the --time-limit of {limit} s ran out"))],
            None => run_case(
                args,
                week,
                case,
                &label,
                &built.program.executable,
                &built.recorder,
                index,
            )?,
        };
        if !args.csv {
            for row in &rows {
                println!("| {label} | {}", row.cells());
            }
        }
        all.extend(rows);
    }
    let failed = all
        .iter()
        .filter(|row| matches!(row.verdict, Verdict::Fail | Verdict::Fault))
        .count();
    let judged = all.iter().filter(|row| row.verdict != Verdict::NotApplicable).count();
    if args.csv {
        print!("{}", csv(source, W::NAME, &all));
    } else {
        println!("\n{} of {judged} rules passed", judged - failed);
    }
    if failed > 0 {
        bail!("{failed} of {judged} rules failed");
    }
    Ok(())
}

/// One case: its folder, the program run under the recorder, the rows.
fn run_case<W: Week>(
    args: &ProgramArgs,
    week: &mut W,
    case: &W::Case,
    label: &str,
    executable: &Path,
    recorder: &Path,
    index: usize,
) -> Result<Vec<Rule>> {
    let dir = PrivateDir::new("lab-case").map_err(|err| Machine(err.to_string()))?;
    let prepared = week
        .prepare(case, dir.path())
        .map_err(|err| Machine(format!("{err:#}")))?;
    let ran = run::run(executable, recorder, &prepared.arguments, dir.path(), CASE_LIMIT);
    let failing = ran.fault();
    let rows = match (&failing, &ran.trace) {
        (None, Ok(trace)) => {
            if let Some(folder) = &args.chronograms {
                write_chronogram(folder, index, label, trace)?;
                let kept = folder.join(format!("case-{}.trace", index + 1));
                std::fs::copy(dir.path().join(run::TRACE), &kept)
                    .map_err(|err| anyhow::anyhow!("cannot keep the trace as {}: {err}", kept.display()))?;
            }
            let output = run::read_output(&prepared.output, prepared.output_bytes);
            let mut rows = week
                .judge(case, output, trace)
                .map_err(|err| Machine(format!("{err:#}")))?;
            if trace.dropped > 0 {
                rows.push(Rule::judged(
                    "trace",
                    format!("{} records lost", trace.dropped),
                    "none lost",
                    false,
                ));
            }
            rows
        }
        (why, _) => vec![fault(why.clone().unwrap_or_default())],
    };
    let failed = rows
        .iter()
        .any(|row| matches!(row.verdict, Verdict::Fail | Verdict::Fault));
    if (failed || args.show_output) && !args.csv {
        for (stream, captured) in [("stdout", &ran.stdout), ("stderr", &ran.stderr)] {
            if !captured.is_empty() {
                eprintln!("--- case {label}: the program's {stream} ---\n{}", captured.shown());
            }
        }
    }
    Ok(rows)
}

fn fault(why: String) -> Rule {
    Rule {
        name: "runs",
        measured: why,
        wants: "exits with 0 after writing its trace".to_string(),
        verdict: Verdict::Fault,
    }
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

/// The recorder, built into `dir` with the CUPTI the labs find (as `--profile` does).
fn build_recorder(dir: &Path) -> Result<PathBuf> {
    let cupti = profiler::cupti::candidates()
        .into_iter()
        .find(|path| path.is_file())
        .ok_or_else(|| {
            Machine(
                "no CUPTI (libcupti.so.13) to record the program with; bash scripts/cuda-toolchain.sh installs it"
                    .into(),
            )
        })?;
    runtime::compile_recorder(RECORDER, &cupti, dir).map_err(|err| match err {
        CompileError::Nvcc { messages, .. } => Machine(format!("the recorder did not compile: {messages}")).into(),
        other => Machine(format!("the recorder did not compile: {other}")).into(),
    })
}

/// `DIR/case-N.svg`: the case's trace as a chronogram, a lane per stream.
fn write_chronogram(dir: &Path, index: usize, label: &str, trace: &Trace) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|err| Usage(format!("cannot create {}: {err}", dir.display())))?;
    let (lanes, spans) = chronogram(&trace.activities);
    let legend = "Kernels and copies as CUPTI recorded them in your program (the recorder's trace).";
    let path = dir.join(format!("case-{}.svg", index + 1));
    std::fs::write(&path, svg(&format!("case {label}"), &lanes, &spans, legend))
        .map_err(|err| anyhow::anyhow!("cannot write {}: {err}", path.display()))
}

/// The lanes (one per stream, in the order of their first work) and the bars of a trace, in ms from
/// its first record.
pub fn chronogram(activities: &[Activity]) -> (Vec<String>, Vec<Span>) {
    let origin = activities.iter().map(|a| a.start_ns).min().unwrap_or(0);
    let ms = |ns: u64| ns.saturating_sub(origin) as f64 / 1e6;
    let mut streams: Vec<(u32, u32)> = Vec::new();
    let mut spans = Vec::new();
    let mut sorted: Vec<&Activity> = activities.iter().collect();
    sorted.sort_by_key(|a| a.start_ns);
    for activity in sorted {
        let kind = match activity.what {
            What::Kernel { .. } => Kind::Kernel,
            What::Copy {
                direction: Direction::HtoD,
                ..
            } => Kind::CopyIn,
            What::Copy {
                direction: Direction::DtoH,
                ..
            } => Kind::CopyOut,
            _ => continue,
        };
        let key = (activity.device, activity.stream);
        let lane = streams.iter().position(|s| *s == key).unwrap_or_else(|| {
            streams.push(key);
            streams.len() - 1
        });
        spans.push(Span {
            lane,
            kind,
            label: activity.name.clone(),
            start_ms: ms(activity.start_ns),
            end_ms: ms(activity.end_ns),
            source: Source::StampsAndEvents,
        });
    }
    let lanes = streams.iter().map(|(_, stream)| format!("stream {stream}")).collect();
    (lanes, spans)
}

/// The grading row: the file, the week, how many rules passed of those that apply, and the rules
/// that did not pass, each with what was measured.
pub fn csv(source: &Path, week: &str, rows: &[Rule]) -> String {
    let judged: Vec<&Rule> = rows
        .iter()
        .filter(|row| row.verdict != Verdict::NotApplicable)
        .collect();
    let passed = judged.iter().filter(|row| row.verdict == Verdict::Pass).count();
    let mut failing: Vec<String> = judged
        .iter()
        .filter(|row| row.verdict != Verdict::Pass)
        .map(|row| format!("{} {}: {}", row.verdict.cell(), row.name, row.measured))
        .collect();
    failing.dedup();
    format!(
        "file,week,passed,failing\n{},{},{passed}/{},{}\n",
        csv_field(&source.display().to_string()),
        csv_field(week),
        judged.len(),
        csv_field(&failing.join("; "))
    )
}

#[cfg(test)]
mod tests {
    use super::rules::tests::{copy, kernel};
    use super::*;

    #[test]
    fn a_chronogram_has_a_lane_per_stream_in_order_of_first_work() {
        let work = [
            kernel(9, 2_000_000, 3_000_000),
            copy(Direction::HtoD, 4, 1_000_000, 2_000_000),
        ];
        let (lanes, spans) = chronogram(&work);
        assert_eq!(lanes, ["stream 4", "stream 9"]);
        assert_eq!(
            (spans[0].lane, spans[0].kind, spans[0].start_ms),
            (0, Kind::CopyIn, 0.0)
        );
        assert_eq!((spans[1].lane, spans[1].kind, spans[1].end_ms), (1, Kind::Kernel, 2.0));
    }

    #[test]
    fn results_are_compared_bit_for_bit_and_the_first_wrong_one_is_named() {
        let bytes = |values: &[f32]| Ok(values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
        let right = results(bytes(&[1.0, 2.0, 3.0]), 3, |i| (i + 1) as f32);
        assert_eq!((right.measured.as_str(), right.verdict), ("all 3 right", Verdict::Pass));
        let wrong = results(bytes(&[1.0, 0.0, -0.0]), 3, |i| [1.0, 2.0, 0.0][i]);
        assert_eq!(wrong.measured, "2 of 3 wrong; the first at 1: 0 (CPU 2)");
        assert_eq!(wrong.verdict, Verdict::Fail);
        let short = results(bytes(&[1.0]), 3, |_| 1.0);
        assert_eq!(short.measured, "4 bytes, not 12");
        let missing = results(Err("the program wrote no output.bin".into()), 3, |_| 1.0);
        assert_eq!(
            (missing.measured.as_str(), missing.verdict),
            ("the program wrote no output.bin", Verdict::Fail)
        );
    }

    #[test]
    fn the_csv_row_counts_the_rules_that_apply_and_names_the_failing_ones() {
        let rows = [
            Rule::judged("results", "all 10 right".into(), "all right", true),
            Rule::judged("streams", "1".into(), "at least 4", false),
            Rule::not_applicable("both directions", "one copy engine"),
        ];
        assert_eq!(
            csv(Path::new("=a.cu"), "05-streams", &rows),
            "file,week,passed,failing\n\"'=a.cu\",\"05-streams\",1/2,\"FAIL streams: 1\"\n"
        );
    }
}

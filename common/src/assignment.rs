//! A student's kernel inside a lab (`assignments/`): `--kernel-source FILE.cu` compiles the file when
//! the lab starts, before the GPU is opened, and runs the lab's experiment with it; `--check` runs the
//! week's cases and prints one table: each case's verdict, the first wrong element with the block and
//! thread that computed it, and the time against our kernel.
//!
//! Every case of `--check` runs in a child process of the lab (the same program with the hidden flags
//! `--kernel-image` and `--check-case`): a kernel that faults or traps ruins its CUDA context for good,
//! so it takes only its own case with it, and the next case starts on a fresh one.

use std::ffi::c_void;
use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use cust::function::Function;
use kernels::runtime::{self, CompileError};
use kernels::KernelImage;

use crate::{check_cuda, raw};

/// The flags every lab with a student's kernel has, flattened into its own (`#[command(flatten)]`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct StudentArgs {
    /// Your kernel: compile this CUDA file with nvcc when the lab starts (the flags ours are built with)
    /// and run the experiment with it instead of ours. Its ptxas report is printed first.
    #[arg(long, value_name = "FILE.cu")]
    pub kernel_source: Option<PathBuf>,
    /// With --kernel-source: run the week's test cases (awkward sizes, random inputs, outputs poisoned
    /// first) and print one table; the exit code is 0 only if every case passes.
    #[arg(long, requires = "kernel_source")]
    pub check: bool,
    /// With --check: print the results as CSV (a header and one row), for assignments/grade.sh.
    #[arg(long, requires = "check")]
    pub csv: bool,
    /// Internal (--check's child processes): the image the parent compiled.
    #[arg(long, hide = true, requires = "check_case")]
    pub kernel_image: Option<PathBuf>,
    /// Internal (--check's child processes): the case to run.
    #[arg(long, hide = true, requires = "kernel_image")]
    pub check_case: Option<usize>,
}

/// A kernel the lab calls: the entry name it looks up (mangled for C++ kernels) and the declaration a
/// student must write, for the error message.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    pub declaration: &'static str,
}

impl StudentArgs {
    /// Whether the lab runs a student's kernel (from a file, or in a check's child process).
    pub fn student(&self) -> bool {
        self.kernel_source.is_some() || self.kernel_image.is_some()
    }

    /// The image to run: `ours`, or the student's file compiled like it (its report shown and its
    /// entries checked), or in a child process the parent's compile. Needs no GPU.
    pub fn image(&self, ours: &'static KernelImage, entries: &[Entry]) -> Result<&'static KernelImage> {
        if let Some(path) = &self.kernel_image {
            return Ok(Box::leak(Box::new(runtime::load(path, ours)?)));
        }
        let Some(path) = &self.kernel_source else { return Ok(ours) };
        let image = runtime::compile(path, ours).map_err(|err| {
            if let CompileError::Nvcc { messages, .. } = &err {
                eprint!("{messages}");
            }
            anyhow::Error::new(err)
        })?;
        require_entries(&image, entries)?;
        if !self.check {
            print_report(&image, entries);
        }
        Ok(Box::leak(Box::new(image)))
    }

    /// Whether this run checks (`--check`, or one case of it in a child process): the lab then needs
    /// every kernel the cases call.
    pub fn checking(&self) -> bool {
        self.check || self.check_case.is_some()
    }

    /// `--check` (the parent: every case in a child, `rules` first) or one case in a child; `None` when
    /// neither was asked for and the lab runs its experiment.
    pub fn run_check_if_asked(
        &self,
        image: &KernelImage,
        lab: &str,
        cases: &[String],
        rules: impl FnOnce() -> Result<Vec<Row>>,
        run_case: impl FnOnce(usize) -> Result<()>,
    ) -> Option<Result<()>> {
        if self.check {
            return Some(rules().and_then(|rules| run_check(self, image, cases, rules, lab)));
        }
        self.check_case.map(run_case)
    }
}

/// Every entry the lab calls must be a kernel of the student's image; the error names what the lab
/// looked for and what the file has.
pub fn require_entries(image: &KernelImage, entries: &[Entry]) -> Result<()> {
    let report = image.report().with_context(|| format!("reading nvcc's report on {}", image.source))?;
    let kernels: Vec<&str> = report.functions.iter().filter(|f| f.is_entry()).map(|f| f.name.as_str()).collect();
    for entry in entries {
        if !kernels.contains(&entry.name) {
            let has = if kernels.is_empty() { "no kernels".to_string() } else { format!("the kernels {}", kernels.join(", ")) };
            bail!("{} has no kernel `{}` (the lab looks for `{}`); it has {has}", image.source, entry.declaration, entry.name);
        }
    }
    Ok(())
}

/// The ptxas report of the student's entries, as the slides show ours.
fn print_report(image: &KernelImage, entries: &[Entry]) {
    println!("$ nvcc -arch={}{} --ptxas-options=-v {}", kernels::TARGET_ARCH, image.flags.iter().map(|f| format!(" {f}")).collect::<String>(), image.source);
    if let Ok(report) = image.report() {
        for entry in entries {
            for line in report.function(entry.name).map(|f| f.lines.as_slice()).unwrap_or_default() {
                println!("{line}");
            }
        }
    }
}

/// `cuFuncGetParamInfo`: each parameter's (offset, size) in bytes; the driver's view of a signature,
/// which it knows even for `extern "C"` kernels whose names say nothing of their parameters.
fn parameters(function: &Function, get: raw::FuncGetParamInfo) -> Result<Vec<(usize, usize)>> {
    let mut list = Vec::new();
    loop {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: a loaded function's handle and two out-parameters.
        let status = unsafe { get(function.to_raw().cast::<c_void>(), list.len(), &mut offset, &mut size) };
        if status == raw::CUDA_ERROR_INVALID_VALUE {
            return Ok(list); // past the last parameter
        }
        check_cuda!(status)?;
        list.push((offset, size));
    }
}

/// The student's kernel takes what ours takes (same parameter sizes and offsets), so the lab's launch
/// fits it; otherwise a one-line error with both lists.
/// A driver older than CUDA 12.4 cannot say; the check then rests on the names alone, and says so.
pub fn require_same_parameters(student: &Function, ours: &Function, entry: &Entry, source: &str) -> Result<()> {
    let Some(get) = raw::func_get_param_info() else {
        eprintln!("note: this driver cannot list kernel parameters (cuFuncGetParamInfo, CUDA 12.4); {}'s are not compared", entry.name);
        return Ok(());
    };
    let (theirs, expected) = (parameters(student, get)?, parameters(ours, get)?);
    if theirs != expected {
        let sizes = |list: &[(usize, usize)]| list.iter().map(|(_, size)| format!("{size}")).collect::<Vec<_>>().join(", ");
        bail!(
            "{source}: kernel `{}` takes {} parameter(s) of {} bytes, but the lab passes {} of {} bytes: `{}`",
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
    /// What it holds: a number, or "never written" for the poison.
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
    /// Median times (ms) of the student's kernel and ours on the case; none for a rule read from the
    /// compiler's report.
    pub student_ms: Option<f64>,
    pub ours_ms: Option<f64>,
}

impl Outcome {
    /// The student's time over ours, where both ran.
    pub fn ratio(&self) -> Option<f64> {
        Some(self.student_ms? / self.ours_ms?)
    }
}

/// A row of the check table, as a child process reports it (or the fault it died of).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub case: String,
    pub result: std::result::Result<Outcome, String>,
}

impl Row {
    pub fn passed(&self) -> bool {
        matches!(&self.result, Ok(outcome) if outcome.wrong == 0)
    }

    /// The child's line on stdout: tab-separated, so it survives any text but tabs and newlines,
    /// which [`clean`] replaces.
    pub fn to_line(&self) -> String {
        match &self.result {
            Ok(o) => {
                let first = o.first.clone().unwrap_or(FirstWrong { position: String::new(), value: String::new(), expected: String::new(), computed_by: String::new() });
                let time = |ms: Option<f64>| ms.map_or(String::new(), |ms| ms.to_string());
                let fields = [clean(&self.case), o.wrong.to_string(), o.elements.to_string(), clean(&first.position), clean(&first.value), clean(&first.expected), clean(&first.computed_by), time(o.student_ms), time(o.ours_ms)];
                format!("{LINE_TAG}\t{}", fields.join("\t"))
            }
            Err(fault) => format!("{LINE_TAG}\t{}\tfault\t{}", clean(&self.case), clean(fault)),
        }
    }

    /// Reads a line written by [`Row::to_line`].
    pub fn from_line(line: &str) -> Option<Row> {
        let fields: Vec<&str> = line.strip_prefix(LINE_TAG)?.strip_prefix('\t')?.split('\t').collect();
        match fields.as_slice() {
            [case, "fault", fault] => Some(Row { case: case.to_string(), result: Err(fault.to_string()) }),
            [case, wrong, elements, position, value, expected, by, student, ours] => {
                let first = (!position.is_empty()).then(|| FirstWrong { position: position.to_string(), value: value.to_string(), expected: expected.to_string(), computed_by: by.to_string() });
                let time = |text: &str| if text.is_empty() { Some(None) } else { text.parse().ok().map(Some) };
                Some(Row {
                    case: case.to_string(),
                    result: Ok(Outcome { wrong: wrong.parse().ok()?, elements: elements.parse().ok()?, first, student_ms: time(student)?, ours_ms: time(ours)? }),
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

/// A value for the table: "never written" for the poison (NaN), else the number to 13 digits (a
/// double off by a few roundings must show where it differs).
pub fn shown(value: f64) -> String {
    if value.is_nan() {
        "never written".to_string()
    } else {
        format!("{value:.12e}")
    }
}

/// In a check's child process: prints the case's row for the parent.
pub fn report_case(case: &str, outcome: Outcome) {
    println!("{}", Row { case: case.to_string(), result: Ok(outcome) }.to_line());
}

/// How long one case may run before it counts as hung. Our kernels take under 2 s per case, process
/// start included; a broken tree of child grids was seen to run for minutes without end.
const CASE_TIME_LIMIT: Duration = Duration::from_secs(30);

/// The parent's side of `--check`: writes the compiled image where the children find it, runs each
/// case in a child (this program, with the parent's other flags), prints the table (or CSV) and fails
/// unless every case passed.
///
/// `rules` are rows the lab made from the compiler's report (where a variable lives, say), before
/// any case ran; they count like cases.
fn run_check(args: &StudentArgs, image: &KernelImage, cases: &[String], rules: Vec<Row>, lab: &str) -> Result<()> {
    crate::gpu::count()?; // no GPU: one error now, not one per case
    let path = std::env::temp_dir().join(format!("{lab}-check-{}.image", std::process::id()));
    std::fs::write(&path, image.image).with_context(|| format!("writing {}", path.display()))?;
    let mut rows = rules;
    rows.extend(cases.iter().enumerate().map(|(index, case)| run_child(&path, index, case)));
    let _ = std::fs::remove_file(&path); // our own scratch file
    let source = args.kernel_source.as_deref().unwrap_or(Path::new("?"));
    if args.csv {
        print!("{}", csv(source, &rows));
    } else {
        println!("\n--check of {} ({} cases):\n\n{}", source.display(), rows.len(), table(&rows));
    }
    let failed = rows.iter().filter(|row| !row.passed()).count();
    if failed > 0 {
        bail!("{failed} of {} cases failed", rows.len());
    }
    println!("Solution is correct: all {} cases pass", rows.len());
    Ok(())
}

/// This program's command line for case `index`: the parent's flags without `--kernel-source`,
/// `--check` and `--csv`, plus the image and the case.
fn child_args(image: &Path, index: usize) -> Vec<String> {
    let mut args = Vec::new();
    let mut skip_value = false;
    for arg in std::env::args().skip(1) {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        match arg.as_str() {
            "--check" | "--csv" => {}
            "--kernel-source" => skip_value = true,
            _ if arg.starts_with("--kernel-source=") => {}
            _ => args.push(arg),
        }
    }
    args.extend(["--kernel-image".to_string(), image.display().to_string(), "--check-case".to_string(), index.to_string()]);
    args
}

fn run_child(image: &Path, index: usize, case: &str) -> Row {
    let fault = |why: String| Row { case: case.to_string(), result: Err(why) };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => return fault(format!("cannot find this program to run the case: {err}")),
    };
    let mut child = match Command::new(exe).args(child_args(image, index)).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(err) => return fault(format!("cannot start the case: {err}")),
    };
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > CASE_TIME_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return fault(format!("still running after {} s (an endless loop?); stopped", CASE_TIME_LIMIT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(err) => return fault(format!("lost the case: {err}")),
        }
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    let _ = child.stdout.take().map(|mut out| out.read_to_string(&mut stdout));
    let _ = child.stderr.take().map(|mut err| err.read_to_string(&mut stderr));
    match stdout.lines().find_map(Row::from_line) {
        Some(row) if status.success() => row,
        _ => {
            let why = stderr.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("no message").trim();
            fault(format!("{why} ({status})"))
        }
    }
}

/// The check table.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from("| case | verdict | wrong | first wrong element | its value | expected | computed by | your GPU time in ms | ours | ratio |\n");
    out.push_str("|------|---------|-------|---------------------|-----------|----------|-------------|---------------------|------|-------|\n");
    for row in rows {
        let line = match &row.result {
            Ok(o) => {
                let verdict = if o.wrong == 0 { "PASS" } else { "FAIL" };
                let first = o.first.as_ref().map_or("| - | - | - | -".to_string(), |f| format!("| {} | {} | {} | {}", f.position, f.value, f.expected, f.computed_by));
                let ms = |ms: Option<f64>| ms.map_or("-".to_string(), |ms| format!("{ms:.4}"));
                let ratio = o.ratio().map_or("-".to_string(), |r| format!("{r:.2}x"));
                format!("| {} | {verdict} | {} of {} {first} | {} | {} | {ratio} |", row.case, o.wrong, o.elements, ms(o.student_ms), ms(o.ours_ms))
            }
            Err(fault) => format!("| {} | FAULT | {fault} | | | | | | | |", row.case),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The grading row: the file, each case's verdict, how many passed, and the geometric mean of the time
/// ratios over the cases that passed.
pub fn csv(source: &Path, rows: &[Row]) -> String {
    let header: Vec<String> = rows.iter().map(|row| format!("\"{}\"", row.case.replace('"', "'"))).collect();
    let verdicts: Vec<&str> = rows.iter().map(|row| if row.passed() { "PASS" } else if row.result.is_err() { "FAULT" } else { "FAIL" }).collect();
    let ratios: Vec<f64> = rows.iter().filter(|row| row.passed()).filter_map(|row| row.result.as_ref().ok()?.ratio()).collect();
    let mean = if ratios.is_empty() { String::new() } else { format!("{:.3}", (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp()) };
    let passed = rows.iter().filter(|row| row.passed()).count();
    format!(
        "file,{},passed,time ratio\n\"{}\",{},{passed}/{},{mean}\n",
        header.join(","),
        source.display().to_string().replace('"', "'"),
        verdicts.join(","),
        rows.len()
    )
}

impl fmt::Display for FirstWrong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is {}, expected {} (computed by {})", self.position, self.value, self.expected, self.computed_by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(wrong: usize) -> Outcome {
        let first = (wrong > 0).then(|| FirstWrong { position: "C(1, 2)".into(), value: "never written".into(), expected: "3.0e0".into(), computed_by: "block (0, 0), thread (2, 1)".into() });
        Outcome { wrong, elements: 12, first, student_ms: Some(2.0), ours_ms: Some(1.0) }
    }

    #[test]
    fn rows_survive_the_trip_from_child_to_parent() {
        for row in [
            Row { case: "17 x 33 x 5, f64".into(), result: Ok(outcome(0)) },
            Row { case: "1 x 1 x 1".into(), result: Ok(outcome(3)) },
            Row { case: "tabs\tand\nnewlines".into(), result: Err("CUDA_ERROR_ILLEGAL_ADDRESS (700)".into()) },
            Row { case: "a rule".into(), result: Ok(Outcome { student_ms: None, ours_ms: None, ..outcome(1) }) },
        ] {
            let back = Row::from_line(&row.to_line()).unwrap();
            assert_eq!(back.case, clean(&row.case));
            assert_eq!(back.result, row.result);
        }
        assert!(Row::from_line("other output").is_none());
    }

    #[test]
    fn the_table_and_the_csv_say_what_failed_where() {
        let rows = vec![
            Row { case: "a".into(), result: Ok(outcome(0)) },
            Row { case: "b".into(), result: Ok(outcome(3)) },
            Row { case: "c".into(), result: Err("killed".into()) },
        ];
        let table = table(&rows);
        assert!(table.contains("| a | PASS | 0 of 12 | - | - | - | - | 2.0000 | 1.0000 | 2.00x |"), "{table}");
        assert!(table.contains("| b | FAIL | 3 of 12 | C(1, 2) | never written | 3.0e0 | block (0, 0), thread (2, 1) |"), "{table}");
        assert!(table.contains("| c | FAULT | killed |"), "{table}");
        assert_eq!(csv(Path::new("alice/mmm.cu"), &rows), "file,\"a\",\"b\",\"c\",passed,time ratio\n\"alice/mmm.cu\",PASS,FAIL,FAULT,1/3,2.000\n");
    }

    #[test]
    fn mismatches_count_and_point_at_the_first() {
        assert_eq!(first_mismatch(&[1.0, 2.0, 5.0, 7.0], &[1.0, 2.0, 3.0, 4.0], |g: f64, c: f64| g == c), (2, Some(2)));
        assert_eq!(first_mismatch(&[1.0], &[1.0, 2.0], |g: f64, c: f64| g == c), (1, None));
        assert_eq!(shown(f64::NAN), "never written");
    }

    #[test]
    fn a_missing_kernel_names_what_the_lab_looked_for() {
        let image = KernelImage { source: "mine.cu", flags: &[], image: &[], ptxas: "ptxas info    : Compiling entry function '_Z7simpsonffPf' for 'sm_90'\nptxas info    : Used 8 registers\n", linked_with_device_runtime: false };
        let entry = Entry { name: "_Z7simpsonddPd", declaration: "__global__ void simpson(double a, double b, double* sums)" };
        let error = require_entries(&image, &[entry]).unwrap_err().to_string();
        assert_eq!(error, "mine.cu has no kernel `__global__ void simpson(double a, double b, double* sums)` (the lab looks for `_Z7simpsonddPd`); it has the kernels _Z7simpsonffPf");
    }
}

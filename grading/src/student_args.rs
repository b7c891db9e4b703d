//! The flags every lab with a student's kernel has ([`StudentArgs`]) and what they do before any
//! case runs: the student's file compiled like ours (a file of another week's refused first) and
//! accepted, its entries and their parameters checked and one line or its ptxas report shown; then
//! `--list-cases`, `--check` or a case's child, as asked (`run_check_if_asked`, which a lab reaches
//! through [`crate::kernel_week`]).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use kernels::runtime::{self, CompileError};
use kernels::KernelImage;

use crate::check::{run_cases, run_check, Check};
use crate::entries::{require_entries, require_same_parameters, Entry};
use crate::exit::{whose_compile_error, Machine, Usage};
use crate::program;
use crate::report::{dry_run, file_failed, list_cases};
use crate::row::{Outcome, Row};
use crate::times::CaseContext;
use crate::weeks;

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
    /// Internal (grade.sh): read a key from stdin and end stdout with the closing mark ([`mark`](crate::mark),
    /// which reads the flag itself, before anything runs).
    #[arg(long, hide = true, requires = "csv")]
    pub mark: bool,
    /// Internal (--check's child processes): the child runs under ncu for the measured rules.
    #[arg(long, hide = true, requires = "check_case")]
    pub measure_technique: bool,
    /// Internal (--check's child processes): whose kernels the measured child launches.
    #[arg(long, hide = true, value_enum, default_value_t = crate::measure::Whose::Both, requires = "measure_technique")]
    pub measure_whose: crate::measure::Whose,
    /// Internal (--check's child processes): the measured child waits for this file (the cases are
    /// done) before it touches the GPU, and for no parent that is gone (`--measure-parent`).
    #[arg(long, hide = true, requires_all = ["measure_technique", "measure_parent"])]
    pub measure_after: Option<PathBuf>,
    /// Internal (--check's child processes): the process id of the check that started the measurement.
    #[arg(long, hide = true, requires = "measure_after")]
    pub measure_parent: Option<u32>,
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
        let output = crate::phases::timed("compile", || runtime::compile(path, ours, arch)).map_err(|err| {
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
    pub(crate) fn run_check_if_asked<C>(
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

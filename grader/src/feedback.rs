//! `--feedback DIR`: what the feedback program needs from a run (each submission's file, name, output
//! and details in DIR/runs), its column "most like", and the pages it makes after the CSV.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use crate::csv::shown;
use crate::lab::{is_executable, Graded};
use crate::output::Claimed;
use crate::stop::{say, stop, NOT_GRADED};
use crate::submissions::Submission;

/// A run's feedback: the program, its folder and what it is asked for.
#[derive(Debug)]
pub struct Feedback {
    pub bin: PathBuf,
    pub dir: Claimed,
    pub week: &'static str,
    pub repository: PathBuf,
    pub hide_cases: bool,
    /// `--earlier`: folders of earlier years' submissions.
    pub earlier: Vec<PathBuf>,
}

/// The feedback program: LAB_BIN_DIR's, else cargo's release build.
pub fn find(repository: &Path) -> Result<PathBuf> {
    let dir = match std::env::var_os("LAB_BIN_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => std::path::absolute(PathBuf::from(dir))?,
        None => {
            crate::say_building("cargo build --release -p feedback");
            let built = Command::new("cargo")
                .args(["build", "--release", "-q", "-p", "feedback"])
                .current_dir(repository)
                .status();
            if !built.is_ok_and(|status| status.success()) {
                return Err(stop(NOT_GRADED, "cargo build --release -p feedback failed"));
            }
            repository.join("target/release")
        }
    };
    let bin = dir.join("feedback");
    if !is_executable(&bin) {
        return Err(stop(
            NOT_GRADED,
            format!(
                "{} is missing: build it again with bash scripts/gpu-bundle.sh (or unset LAB_BIN_DIR)",
                shown(&bin)
            ),
        ));
    }
    Ok(bin)
}

impl Feedback {
    fn runs(&self) -> PathBuf {
        self.dir.path.join("runs")
    }

    /// Makes DIR/runs.
    pub fn prepare(&self) -> Result<()> {
        std::fs::create_dir_all(self.runs())
            .map_err(|err| stop(NOT_GRADED, format!("cannot make {}: {err}", shown(&self.runs()))))
    }

    /// Submission `index`'s name in DIR/runs, and where its file and the lab's details go.
    pub fn run_files(&self, index: usize, submission: &Submission) -> (PathBuf, PathBuf) {
        let runs = self.runs();
        // A failed write costs the page its name, never the grade.
        let _ = std::fs::write(runs.join(format!("{index}.name")), submission.shown());
        (runs.join(format!("{index}.cu")), runs.join(format!("{index}.json")))
    }

    /// Keeps submission `index`'s output for its page.
    pub fn keep_output(&self, index: usize, graded: &Graded) {
        let _ = std::fs::write(self.runs().join(format!("{index}.out")), &graded.kept);
    }

    /// Each submission's "most like", from the files graded, against each other, our files of the week
    /// (its solution, broken and red-team kernels) and earlier years'; the week's starter not counted.
    /// A failure here costs the column, never the grades.
    pub fn alike(&self, count: usize) -> Vec<String> {
        let empty = vec![String::new(); count];
        let folder = self.repository.join("assignments").join(self.week);
        let Some(starter) = cu_files(&folder).into_iter().next() else {
            say(&format!(
                "assignments/{} has no starter .cu file to compare with: the column \"most like\" stays empty",
                self.week
            ));
            return empty;
        };
        let name = starter.file_name().unwrap_or_default().to_owned();
        let relative = |path: &Path| path.strip_prefix(&self.repository).unwrap_or(path).to_path_buf();
        let mut args: Vec<OsString> = vec![
            "alike".into(),
            "--runs".into(),
            self.runs().into(),
            "--count".into(),
            count.to_string().into(),
        ];
        args.extend([OsString::from("--template"), relative(&starter).into()]);
        let mut ours = vec![self.repository.join("kernels/cuda").join(&name)];
        ours.retain(|file| file.is_file());
        ours.extend(cu_files(&folder.join("broken")));
        ours.extend(cu_files(&folder.join("adversarial")));
        for file in ours {
            args.extend([OsString::from("--ours"), relative(&file).into()]);
        }
        for dir in &self.earlier {
            args.extend([OsString::from("--earlier"), dir.into()]);
        }
        let ran = Command::new(&self.bin)
            .args(&args)
            .current_dir(&self.repository)
            .status();
        if !ran.is_ok_and(|status| status.success()) {
            say("feedback alike failed (above): the column \"most like\" stays empty");
            return empty;
        }
        (0..count)
            .map(|index| {
                std::fs::read_to_string(self.runs().join(format!("{index}.alike")))
                    .unwrap_or_default()
                    .trim_end_matches('\n')
                    .to_string()
            })
            .collect()
    }

    /// The students' pages and the class page, from the CSV `csv` and DIR/runs.
    pub fn pages(&self, csv: &str) -> Result<()> {
        let grades = self.runs().join("grades.csv");
        std::fs::write(&grades, csv)
            .map_err(|err| stop(NOT_GRADED, format!("cannot write {}: {err}", shown(&grades))))?;
        let mut command = Command::new(&self.bin);
        command
            .args(["pages", "--week", self.week, "--runs"])
            .arg(self.runs())
            .arg("--grades")
            .arg(&grades);
        if self.hide_cases {
            command.arg("--hide-cases");
        }
        command
            .arg("--out")
            .arg(&self.dir.path)
            .stdout(std::process::Stdio::null());
        if !command.status().is_ok_and(|status| status.success()) {
            return Err(stop(NOT_GRADED, "feedback pages failed (above)"));
        }
        let dir = shown(&self.dir.path);
        say(&format!(
            "feedback for each student in {dir}/, the class page {dir}/index.html"
        ));
        Ok(())
    }
}

/// The `.cu` files directly in `dir`, in byte order.
fn cu_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|item| item.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cu") && path.is_file())
        .collect();
    files.sort();
    files
}

//! Grading here: our solution's check of the cases first, then every submission, `--jobs` at a time,
//! each job on its own GPU where there are enough; the CSV in the submissions' order, whatever order
//! they finish in; each `--check`'s output kept; the feedback pages last.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Result;

use crate::feedback::Feedback;
use crate::lab::{Graded, Lab};
use crate::output::{claim, Claimed, Csv};
use crate::rows::Rows;
use crate::stop::{say, stop, Final, NOT_GRADED};
use crate::submissions::Submission;

/// A local run.
pub struct Local {
    pub lab: Lab,
    pub repository: PathBuf,
    pub submissions: Vec<Submission>,
    pub rows: Rows,
    pub jobs: usize,
    /// The GPUs to grade on (CUDA_VISIBLE_DEVICES values); a dry run has none.
    pub devices: Vec<String>,
    pub keep: Option<Claimed>,
    pub feedback: Option<Feedback>,
    pub csv: Csv,
    pub key: String,
}

/// Whether `value` names a GPU: GPU numbers or UUIDs; not empty, `NoDevFiles` or `-1` (Slurm's and
/// CUDA's "none").
pub fn names_gpu(value: &str) -> bool {
    let first = value.split(',').next().unwrap_or("");
    (!first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()))
        || first
            .strip_prefix("GPU-")
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        || first.strip_prefix("MIG-").is_some_and(|id| !id.is_empty())
}

/// The GPUs to grade on: those CUDA_VISIBLE_DEVICES names (a scheduler's share of the machine), else
/// every GPU nvidia-smi lists; none is one line and exit code 1, before anything is built.
pub fn find_gpus() -> Result<Vec<String>> {
    const ELSE: &str = "grade on a GPU node, or use --dry-run (compiles and checks the static rules only)";
    if let Some(visible) = std::env::var_os("CUDA_VISIBLE_DEVICES") {
        let visible = visible.to_string_lossy().into_owned();
        if !names_gpu(&visible) {
            return Err(stop(
                NOT_GRADED,
                format!("no GPU here: CUDA_VISIBLE_DEVICES='{visible}' names none; {ELSE}"),
            ));
        }
        return Ok(visible.split(',').map(str::to_string).collect());
    }
    let listed = std::process::Command::new("nvidia-smi")
        .arg("-L")
        .stderr(std::process::Stdio::null())
        .output();
    let count = listed.map_or(0, |output| {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter(|line| line.starts_with("GPU "))
            .count()
    });
    if count == 0 {
        return Err(stop(NOT_GRADED, format!("no GPU here (nvidia-smi lists none, CUDA_VISIBLE_DEVICES is unset); grading runs every case on one: {ELSE}")));
    }
    Ok((0..count).map(|gpu| gpu.to_string()).collect())
}

/// Where each submission's `--check` output is kept where `--keep` does not say: a new folder beside
/// the CSV (grades-checks/, or grades-checks-2/ ... where that has files), or nowhere when the CSV
/// goes to no file; stderr says which.
pub fn keep_beside(csv: &Csv) -> Result<Option<Claimed>> {
    let Some(file) = csv.file() else {
        say("the --check outputs are not kept (stdout is not a file; --keep DIR keeps them)");
        return Ok(None);
    };
    let text = file.to_string_lossy();
    let stem = text
        .strip_suffix(".csv")
        .or(text.strip_suffix(".CSV"))
        .unwrap_or(&text)
        .to_string();
    let mut number = 1;
    loop {
        let dir = if number == 1 {
            PathBuf::from(format!("{stem}-checks"))
        } else {
            PathBuf::from(format!("{stem}-checks-{number}"))
        };
        if crate::output::new_or_empty(&dir) {
            match claim(&dir, "--keep") {
                Ok(claimed) => return Ok(Some(claimed)),
                // Another run holds it: the next number. Any other failure (a folder that cannot be
                // made) says so, rather than trying number after number.
                Err(_) if dir.is_dir() => {}
                Err(err) => return Err(err),
            }
        }
        number += 1;
    }
}

/// Says where the outputs are kept.
pub fn say_kept(keep: &Option<Claimed>) {
    if let Some(keep) = keep {
        say(&format!(
            "each submission's --check output is kept in {}/",
            crate::csv::shown(&keep.path)
        ));
    }
}

impl Local {
    /// Grades every submission and writes the CSV; the exit code says what was not graded.
    pub fn run(self) -> Result<u8> {
        self.lab
            .check_ours(&self.repository, self.devices.first().map(String::as_str))?;
        say_kept(&self.keep);
        let graded = self.grade_all();
        let alike = match &self.feedback {
            Some(feedback) => Some(feedback.alike(self.submissions.len())),
            None => None,
        };
        let text = self.rows.csv(&self.submissions, &graded, alike.as_deref());
        self.csv.write(&text)?;
        let mut code = Final::default();
        self.rows.report(&self.submissions, &graded, &mut code);
        if let Some(feedback) = &self.feedback {
            feedback.pages(&text)?;
        }
        Ok(code.0)
    }

    /// Every submission graded, `--jobs` at a time: job slot s grades on GPU s modulo their count, so
    /// that with no more jobs than GPUs no two submissions share one.
    fn grade_all(&self) -> Vec<Graded> {
        let total = self.submissions.len();
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Graded>>> = Mutex::new(vec![None; total]);
        std::thread::scope(|scope| {
            for slot in 0..self.jobs.min(total) {
                let device = (!self.devices.is_empty()).then(|| self.devices[slot % self.devices.len()].as_str());
                let (next, results) = (&next, &results);
                scope.spawn(move || loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(submission) = self.submissions.get(index) else {
                        break;
                    };
                    let started = Instant::now();
                    let graded = self.grade_one(index, submission, device);
                    say(&format!(
                        "graded {} of {total}: {} ({} s)",
                        index + 1,
                        submission.shown(),
                        started.elapsed().as_secs()
                    ));
                    results.lock().unwrap_or_else(|poisoned| poisoned.into_inner())[index] = Some(graded);
                });
            }
        });
        let results = results.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        results
            .into_iter()
            .map(|graded| graded.expect("every index is graded by one slot"))
            .collect()
    }

    /// One submission, its output kept.
    fn grade_one(&self, index: usize, submission: &Submission, device: Option<&str>) -> Graded {
        let runs = self
            .feedback
            .as_ref()
            .map(|feedback| feedback.run_files(index, submission));
        let graded = self.lab.grade(
            submission,
            device,
            &self.key,
            runs.as_ref().map(|(cu, json)| (cu.as_path(), json.as_path())),
        );
        if let Some(keep) = &self.keep {
            keep_output(&keep.path, submission, &graded);
        }
        if let Some(feedback) = &self.feedback {
            feedback.keep_output(index, &graded);
        }
        graded
    }
}

/// Keeps `graded`'s output as DIR/<file or folder name>.txt; a failure is said, never fatal.
pub fn keep_output(dir: &Path, submission: &Submission, graded: &Graded) {
    let mut name = submission.entry.file_name().unwrap_or_default().to_owned();
    name.push(".txt");
    if std::fs::write(dir.join(name), &graded.kept).is_err() {
        say(&format!(
            "could not keep {}'s --check output in {}",
            crate::csv::shown(&submission.entry),
            crate::csv::shown(dir)
        ));
    }
}

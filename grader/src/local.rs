//! Grading here: our solution's check of the cases first, then every submission, `--jobs` at a time
//! (by default one per GPU: [`default_jobs`]), the jobs spread over the GPUs in turn; the CSV in
//! the submissions' order, whatever order they finish in; each `--check`'s output kept; the feedback
//! pages last.
//!
//! With more jobs than GPUs, several share a GPU (issue 65: nvcc compiling some submissions while
//! the GPU runs the others' cases), and a per-GPU lock keeps the GPU's timed work and ncu apart: each
//! lab gets `LAB_GPU_LOCK`, a file per GPU in a private folder of this run ([`LockFolder`]), and runs
//! its timed cases and its ncu run holding it alone, its sanitizer runs beside other such runs
//! (`grading::gpu_lock`). A kernel week's labs run with one hardware queue per CUDA context, which
//! makes the contexts their processes make cost the others on the GPU less (`Lab::on_gpu`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Result;

use crate::feedback::Feedback;
use crate::lab::{Graded, Lab};
use crate::output::{claim, Claimed, Csv};
use crate::rows::Rows;
use crate::stop::{say, stop, Final, MACHINE, NOT_GRADED};
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

/// Without `--jobs`: one job per GPU, or in a dry run, which only compiles, one per CPU core. More
/// jobs than GPUs share them, their timed work kept apart by the GPUs' lock; on an H200 one job graded
/// a week-3 submission in about 7 s, 12 jobs graded 95 in 360 s and 32 jobs 107 in 540 s: beside more
/// jobs each check holds the GPU's lock longer (issue 65, runs 10, 52 and 53, `results/h200/issue65/`).
/// Since a kernel week's checks get one hardware queue per CUDA context (`Lab::on_gpu`), 16 jobs
/// graded a class of 300 in 571 s (run 96); 24 jobs were faster for a minute (run 94) but no faster
/// over a whole class (run 95): `--jobs 16` on one H200. Without `--jobs` it stays one job per GPU:
/// a machine's cores and memory, not only its GPUs, bound how many checks it can run at once.
pub fn default_jobs(devices: &[String]) -> usize {
    if devices.is_empty() {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        devices.len()
    }
}

/// The folder of a run's GPU lock files ([`Lab::gpu_locks`]): new, private (0700) in the system's
/// temporary folder, and removed with what is in it when dropped. The labs make the files in it.
pub struct LockFolder {
    pub path: PathBuf,
}

impl LockFolder {
    /// A new one; a folder that cannot be made is the machine's (exit code 3), before anything is
    /// graded.
    pub fn new() -> Result<LockFolder> {
        use std::os::unix::fs::DirBuilderExt as _;
        let tmp = std::env::temp_dir();
        let random = crate::lab::random_hex().map(|hex| hex[..16].to_string());
        let made = random.and_then(|random| {
            let path = tmp.join(format!("grade-gpu-locks-{}-{random}", std::process::id()));
            std::fs::DirBuilder::new().mode(0o700).create(&path).map(|()| path)
        });
        match made {
            Ok(path) => Ok(LockFolder { path }),
            Err(err) => Err(stop(
                MACHINE,
                format!(
                    "cannot make a private folder for the GPUs' locks in {}: {err}",
                    crate::csv::shown(&tmp)
                ),
            )),
        }
    }
}

impl Drop for LockFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
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
    /// Our solution's check ([`Lab::check_ours`]) on every GPU at once, before any submission (once
    /// in a dry run): each GPU shown to work, and the counters of our kernels that the checks on it
    /// share measured there before any student's check runs (issue 65, `grading::measure::Ours`).
    fn check_ours_everywhere(&self) -> Result<()> {
        if self.devices.is_empty() {
            return self.lab.check_ours(&self.repository, None);
        }
        std::thread::scope(|scope| {
            let checks: Vec<_> = self
                .devices
                .iter()
                .map(|device| scope.spawn(move || self.lab.check_ours(&self.repository, Some(device))))
                .collect();
            checks.into_iter().try_for_each(|check| {
                check
                    .join()
                    .unwrap_or_else(|_| Err(stop(MACHINE, "our solution's check panicked".to_string())))
            })
        })
    }

    /// Grades every submission and writes the CSV; the exit code says what was not graded. The GPUs'
    /// lock files live as long as the run.
    pub fn run(mut self) -> Result<u8> {
        let locks = match self.devices.is_empty() {
            true => None,
            false => Some(LockFolder::new()?),
        };
        self.lab.gpu_locks = locks.as_ref().map(|locks| locks.path.clone());
        self.lab.cpu_threads = crate::lab::cpu_threads(self.jobs);
        self.check_ours_everywhere()?;
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

    /// Every submission graded, `--jobs` at a time: job slot s grades on GPU s modulo their count (with
    /// no more jobs than GPUs, no two submissions share one; with more, the GPU's lock keeps their
    /// timed work apart).
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

/// Keeps `graded`'s output as `DIR/<file or folder name>.txt`; a failure is said, never fatal.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::gpu_lock_file;

    #[test]
    fn a_gpu_lock_file_is_named_after_its_device() {
        let folder = Path::new("/tmp/locks");
        assert_eq!(gpu_lock_file(folder, "0"), folder.join("gpu-0.lock"));
        assert_eq!(
            gpu_lock_file(folder, "GPU-8a3c-11ef"),
            folder.join("gpu-GPU-8a3c-11ef.lock")
        );
        assert_eq!(
            gpu_lock_file(folder, "MIG-GPU-8a3c/1/0"),
            folder.join("gpu-MIG-GPU-8a3c_1_0.lock")
        );
        assert_eq!(gpu_lock_file(folder, "../x y"), folder.join("gpu-___x_y.lock"));
    }

    #[test]
    fn the_lock_folder_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt as _;
        let (first, second) = (LockFolder::new().unwrap(), LockFolder::new().unwrap());
        assert_ne!(first.path, second.path);
        let mode = std::fs::metadata(&first.path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let path = first.path.clone();
        std::fs::write(gpu_lock_file(&path, "0"), "").unwrap();
        drop(first);
        assert!(!path.exists(), "removed with its files");
    }

    /// Several jobs share the cores, each at least one; a job alone has them all.
    #[test]
    fn jobs_share_the_cores_at_least_one_each() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(crate::lab::cpu_threads(1), None);
        assert_eq!(crate::lab::cpu_threads(2), Some((cores / 2).max(1)));
        assert_eq!(crate::lab::cpu_threads(cores * 4), Some(1));
    }

    #[test]
    fn jobs_default_to_one_per_gpu_and_one_per_core_in_a_dry_run() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(default_jobs(&["0".to_string(), "1".to_string()]), 2);
        assert_eq!(default_jobs(&[]), cores);
    }
}

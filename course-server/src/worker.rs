//! A GPU worker: claims a job from the server, grades it with the grader's own check (the lab's
//! sandboxed `--check`, its closing mark, our solution checked first on this GPU), sends the row, the
//! lab's output and the feedback page back, and renews its lease while it grades. A result the
//! machine caused (no GPU, MACHINE verdicts, a lab without a row) gives the job back instead, for
//! another worker: it is never a student's grade.
//!
//! `--stand-in MS` grades nothing: it answers after MS milliseconds with a made-up row, so that the
//! queue can be tested and loaded without a GPU.

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Result};
use grader::csv::{record, shown};
use grader::feedback::{self, Feedback};
use grader::lab::{self, Lab, State};
use grader::output::claim;
use grader::rows::Rows;
use grader::submissions::Submission;
use grader::weeks::{self, Week};
use serde::Deserialize;

use crate::client::Client;
use crate::store::Grade;

/// The most of the lab's output a grade keeps.
const KEPT_BYTES: usize = 256 * 1024;

/// A job as the server hands it out.
#[derive(Debug, Deserialize)]
struct Job {
    job: i64,
    lease: String,
    student: String,
    week: String,
    cases: Option<String>,
    weights: Option<String>,
    hide_cases: bool,
    rule_cap: f64,
    time_limit: u64,
}

/// How a worker grades.
pub struct Options {
    pub name: String,
    /// CUDA_VISIBLE_DEVICES for the labs.
    pub device: Option<String>,
    /// Compile and judge the static rules only (no GPU): grades without scores.
    pub dry_run: bool,
    pub stand_in: Option<Duration>,
    pub poll: Duration,
    /// Stop after this many jobs (tests).
    pub jobs: Option<usize>,
}

pub struct Worker {
    client: Client,
    options: Options,
    repository: PathBuf,
    scratch: PathBuf,
    key: String,
    /// Each week's lab, by week and cases, opened and our solution checked once.
    labs: HashMap<(String, Option<String>), Lab>,
    /// The feedback program, found once (without LAB_BIN_DIR finding it runs cargo).
    feedback: Option<PathBuf>,
}

impl Worker {
    pub fn new(client: Client, options: Options) -> Result<Worker> {
        // The worker's own folder, new and private (hidden cases and other students' files are
        // written here): a random name made by this call, never one another account made first.
        let scratch = std::env::temp_dir().join(format!("course-worker-{}", &crate::auth::random_hex()?[..16]));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&scratch)
            .map_err(|err| anyhow!("cannot make {}: {err}", scratch.display()))?;
        Ok(Worker {
            client,
            options,
            repository: lab::repository(),
            scratch,
            key: lab::mark_key()?,
            labs: HashMap::new(),
            feedback: None,
        })
    }

    /// Claims and grades jobs until stopped (or `--jobs` of them are done).
    pub fn run(&mut self) -> Result<()> {
        let mut done = 0;
        eprintln!("course-server worker {}: asking for work", self.options.name);
        while self.options.jobs.is_none_or(|jobs| done < jobs) {
            let answer = self
                .client
                .post_json("/api/worker/claim", &serde_json::json!({ "name": self.options.name }));
            let answer = match answer {
                Ok(answer) => answer,
                Err(err) => {
                    eprintln!(
                        "course-server worker {}: {err} (trying again in 5 s)",
                        self.options.name
                    );
                    std::thread::sleep(Duration::from_secs(5));
                    continue;
                }
            };
            match answer.status {
                204 => std::thread::sleep(self.options.poll),
                200 => {
                    let job: Job = serde_json::from_slice(&answer.body)?;
                    self.take(&job);
                    done += 1;
                }
                // Too many requests, or a server (or its proxy) restarting: later.
                429 | 500..=599 => {
                    eprintln!(
                        "course-server worker {}: {} (trying again in 5 s)",
                        self.options.name,
                        answer.text()
                    );
                    std::thread::sleep(Duration::from_secs(5));
                }
                _ => return Err(anyhow!("the server refused the worker: {}", answer.text())),
            }
        }
        Ok(())
    }

    /// Grades `job` with heartbeats beside it, and reports.
    fn take(&mut self, job: &Job) {
        let started = std::time::Instant::now();
        let beating = Arc::new(AtomicBool::new(true));
        let heart = {
            let (client, beating, id) = (self.client.clone(), Arc::clone(&beating), job.job);
            let body = serde_json::json!({ "lease": job.lease });
            std::thread::spawn(move || {
                let mut waited = Duration::ZERO;
                while beating.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(200));
                    waited += Duration::from_millis(200);
                    if waited >= Duration::from_secs(20) {
                        waited = Duration::ZERO;
                        let beat = client.post_json(&format!("/api/worker/jobs/{id}/heartbeat"), &body);
                        // The lease went to another worker: its report will be refused; say so once.
                        if beat.is_ok_and(|answer| answer.status == 409) {
                            eprintln!("course-server worker: job {id}: the lease ran out and another worker has it");
                            break;
                        }
                    }
                }
            })
        };
        let report = match self.file(job).and_then(|file| self.grade(job, &file)) {
            Ok(Ok(grade)) => serde_json::json!({ "lease": job.lease, "grade": grade }),
            Ok(Err(why)) | Err(why) => {
                serde_json::json!({ "lease": job.lease, "give_back": why.to_string() })
            }
        };
        beating.store(false, Ordering::SeqCst);
        let _ = heart.join();
        self.send(job, &report);
        eprintln!(
            "course-server worker {}: job {} ({} for {}) in {:.1} s",
            self.options.name,
            job.job,
            job.week,
            job.student,
            started.elapsed().as_secs_f64()
        );
    }

    /// The report sent, tried again while the server is away (a restart), until the lease would be over.
    fn send(&self, job: &Job, report: &serde_json::Value) {
        let path = format!("/api/worker/jobs/{}/report", job.job);
        for _ in 0..crate::store::LEASE_MS / 1000 {
            match self.client.post_json(&path, report) {
                Ok(answer) if answer.status == 200 => return,
                Ok(answer) if answer.status == 409 => {
                    eprintln!(
                        "course-server worker {}: job {}: {}",
                        self.options.name,
                        job.job,
                        answer.text()
                    );
                    return;
                }
                Ok(answer) => eprintln!("course-server worker: job {}: {}", job.job, answer.text()),
                Err(err) => eprintln!("course-server worker: job {}: {err}", job.job),
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }

    fn file(&self, job: &Job) -> Result<Vec<u8>> {
        let answer = self
            .client
            .get(&format!("/api/worker/jobs/{}/file?lease={}", job.job, job.lease))?;
        if answer.status != 200 {
            return Err(anyhow!("the job's file: {}", answer.text()));
        }
        Ok(answer.body)
    }

    /// The grade of `file`, or why the machine cannot give one (the job goes back).
    fn grade(&mut self, job: &Job, file: &[u8]) -> Result<Result<Grade>> {
        if let Some(wait) = self.options.stand_in {
            std::thread::sleep(wait);
            return Ok(Ok(stand_in(&job.student, file)));
        }
        let week = weeks::week(&job.week).ok_or_else(|| anyhow!("this worker knows no week {}", job.week))?;
        let subs = self.scratch.join("subs");
        let _ = std::fs::remove_dir_all(&subs);
        std::fs::create_dir_all(&subs)?;
        let entry = subs.join(format!("{}.cu", job.student));
        std::fs::write(&entry, file)?;
        let submission = Submission { entry };
        let lab = self.lab(week, job)?.clone();
        let pages = self.scratch.join("pages");
        let _ = std::fs::remove_dir_all(&pages);
        let feedback = if week.is_program() || self.options.dry_run {
            None
        } else {
            let feedback = Feedback {
                bin: self.feedback_bin()?,
                dir: claim(&pages, "--feedback")?,
                week: week.name,
                repository: self.repository.clone(),
                hide_cases: job.hide_cases,
                earlier: Vec::new(),
            };
            feedback.prepare()?;
            Some(feedback)
        };
        let runs = feedback.as_ref().map(|feedback| feedback.run_files(0, &submission));
        let graded = lab.grade(
            &submission,
            self.options.device.as_deref(),
            &self.key,
            runs.as_ref().map(|(cu, json)| (cu.as_path(), json.as_path())),
        );
        if !graded.state.scored() && !matches!(graded.state, State::DryPass | State::DryFail) {
            let note = record(&graded.line)
                .and_then(|fields| fields.last().cloned())
                .unwrap_or_default();
            return Ok(Err(anyhow!("{}: {note}", graded.state.word())));
        }
        let weights = match &job.weights {
            Some(text) => {
                let file = self.scratch.join("weights.txt");
                std::fs::write(&file, text)?;
                Some(file)
            }
            None => None,
        };
        let one = std::slice::from_ref(&submission);
        let rows = Rows::new(&lab, one, (weights.as_deref(), None), &lab.folder, job.rule_cap)?;
        let csv = rows.csv(one, std::slice::from_ref(&graded), None);
        let page = feedback.as_ref().and_then(|feedback| {
            feedback.keep_output(0, &graded);
            feedback.pages(&csv).ok()?;
            student_page(&pages)
        });
        let mut lines = csv.lines();
        let header = lines.next().unwrap_or("").to_string();
        // The worker's own folders are nobody's business: the row names the file only.
        let row = lines.next().unwrap_or("").replace(&format!("{}/", shown(&subs)), "");
        let kept = String::from_utf8_lossy(&graded.kept[..graded.kept.len().min(KEPT_BYTES)]).into_owned();
        let details = runs.and_then(|(_, json)| std::fs::read_to_string(json).ok());
        Ok(Ok(Grade {
            details,
            ..grade_of(&graded.state, header, row, kept, page)
        }))
    }

    fn feedback_bin(&mut self) -> Result<PathBuf> {
        if let Some(found) = &self.feedback {
            return Ok(found.clone());
        }
        let found = feedback::find(&self.repository)?;
        self.feedback = Some(found.clone());
        Ok(found)
    }

    /// The week's lab for `job`'s cases: opened, and our own solution checked on this GPU, once.
    fn lab(&mut self, week: &'static Week, job: &Job) -> Result<&Lab> {
        let key = (week.name.to_string(), job.cases.clone());
        if !self.labs.contains_key(&key) {
            let cases_file = match &job.cases {
                Some(text) => {
                    let file = self
                        .scratch
                        .join(format!("cases-{}-{}.txt", week.name, self.labs.len()));
                    std::fs::write(&file, text)?;
                    Some(file)
                }
                None => None,
            };
            let subs = shown(&self.scratch.join("subs"));
            let lab = Lab::open(
                week,
                &self.repository,
                cases_file,
                false,
                job.time_limit,
                self.options.dry_run,
                subs,
            )?;
            lab.check_ours(&self.repository, self.options.device.as_deref())?;
            self.labs.insert(key.clone(), lab);
        }
        Ok(&self.labs[&key])
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// The feedback program's page of the one student in `dir` (`001-<name>.html`).
fn student_page(dir: &Path) -> Option<String> {
    let found = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("001-") && name.ends_with(".html"))
        })?;
    std::fs::read_to_string(found).ok()
}

/// A grade from the grader's CSV header and row: its score, whether every verdict passed, the time
/// against ours.
pub fn grade_of(state: &State, header: String, row: String, kept: String, page: Option<String>) -> Grade {
    let names = record(&header).unwrap_or_default();
    let fields = record(&row).unwrap_or_default();
    let value = |name: &str| {
        names
            .iter()
            .position(|each| each == name)
            .and_then(|at| fields.get(at))
            .and_then(|value| value.parse::<f64>().ok())
    };
    let end = names.iter().position(|name| name == "passed").unwrap_or(2);
    let verdicts = fields.get(2..end.min(fields.len())).unwrap_or(&[]);
    Grade {
        state: state.word().to_string(),
        score: value("score"),
        passing: *state == State::Graded && !verdicts.is_empty() && verdicts.iter().all(|verdict| verdict == "PASS"),
        ratio: value("time ratio"),
        header,
        row,
        kept,
        page,
        details: None,
    }
}

/// A stand-in's made-up grade: a file with a kernel (`__global__`) passes at its length's ratio.
fn stand_in(student: &str, file: &[u8]) -> Grade {
    let passes = file.windows(10).any(|window| window == b"__global__");
    let verdict = if passes { "PASS" } else { "FAIL" };
    let score = if passes { "100.0" } else { "0.0" };
    let ratio = 1.0 + (file.len() % 100) as f64 / 100.0;
    let row = format!(
        "{},{},{verdict},{} of 1,{ratio:.3},,standin,\"stand-in worker: nothing ran\",{score}",
        grader::csv::field(student),
        grader::csv::field(&format!("{student}.cu")),
        u8::from(passes)
    );
    grade_of(
        &State::Graded,
        "student,file,case 1,passed,time ratio,flags,case set,note,score".into(),
        row,
        "(a stand-in worker: nothing ran)".into(),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grade_reads_its_score_verdicts_and_ratio_from_the_row() {
        let header = "student,file,\"a, b\",rule: tiled,passed,time ratio,flags,case set,note,score".to_string();
        let grade = grade_of(
            &State::Graded,
            header.clone(),
            "ann,ann.cu,PASS,PASS,2 of 2,0.97,,ab12,\"\",100.0".into(),
            String::new(),
            None,
        );
        assert_eq!(
            (grade.score, grade.passing, grade.ratio),
            (Some(100.0), true, Some(0.97))
        );
        let failing = grade_of(
            &State::Graded,
            header.clone(),
            "ann,ann.cu,PASS,FAIL,1 of 2,,,ab12,\"\",50.0".into(),
            String::new(),
            None,
        );
        assert_eq!(
            (failing.score, failing.passing, failing.ratio),
            (Some(50.0), false, None)
        );
        let nothing = grade_of(
            &State::Nothing,
            header,
            "ann,ann.cu,-,-,0 of 2,,,ab12,\"no .cu file\",0.0".into(),
            String::new(),
            None,
        );
        assert!(!nothing.passing);
    }

    #[test]
    fn a_stand_in_passes_a_kernel_and_fails_anything_else() {
        assert!(stand_in("ann", b"__global__ void k() {}").passing);
        let failing = stand_in("Doe, Jane", b"int main() {}");
        assert!(!failing.passing && failing.score == Some(0.0), "{failing:?}");
        assert!(failing.row.starts_with("\"Doe, Jane\","));
    }
}

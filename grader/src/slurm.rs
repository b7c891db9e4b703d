//! Grading as a Slurm job array: one task and one GPU per submission, throttled, after a job that runs
//! our solution on the cases; each task's state and row written as one file in one rename; `--collect`
//! makes the same CSV as a local run, with Slurm's word for each task without a row.

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use crate::csv::{escaped, shown};
use crate::lab::{is_executable, Graded, Lab, State};
use crate::listing::{is_hash, Listing};
use crate::local::{keep_output, names_gpu};
use crate::rows::Rows;
use crate::stop::{say, stop, Final, MACHINE, NOT_GRADED, USAGE, WAITING};
use crate::submissions::Submission;
use crate::weeks::{self, Week};

/// What a task asks of a node besides its GPU, and the teacher's options for sbatch.
#[derive(Debug, Clone)]
pub struct Resources {
    pub cpus: u32,
    pub memory: String,
    pub minutes: u64,
    /// At most this many tasks at once (the array's `%`).
    pub throttle: u32,
    /// Options passed to sbatch as they are (`--partition=gpu`, `--qos=course`, `--constraint=a100`).
    pub options: Vec<String>,
}

/// What a task asks for by default: a check runs nvcc once, then the lab and one case process at a
/// time; compute-sanitizer adds its own bookkeeping, the most with racecheck on week 3's largest
/// cases. Estimates with room, not measured peaks.
pub fn default_needs(week: &Week, sanitize: bool) -> (u32, &'static str) {
    match (sanitize, week.name) {
        (false, _) => (2, "8G"),
        (true, "03-mmm-tiled") => (4, "16G"),
        (true, _) => (2, "12G"),
    }
}

/// A folder --slurm wrote: the array's settings and submissions.
pub struct Array {
    pub out: PathBuf,
    pub lab: Lab,
    pub submissions: Vec<Submission>,
    /// The array's job id (empty before sbatch gave one).
    pub job: String,
}

/// `text` quoted for a shell script.
fn quoted(text: &[u8]) -> Vec<u8> {
    let mut out = b"'".to_vec();
    for &byte in text {
        if byte == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(byte);
        }
    }
    out.push(b'\'');
    out
}

fn quoted_path(path: &Path) -> String {
    String::from_utf8_lossy(&quoted(path.as_os_str().as_bytes())).into_owned()
}

const KEYS: &str = "week, lab_bin, cases_file, sanitize, limit, header, cases, hash";

/// Submits the array for `lab`'s week into `out` (new or empty) and prints what was submitted.
pub fn submit(
    lab: &Lab,
    submissions: &[Submission],
    out: &Path,
    out_shown: &str,
    needs: &Resources,
    collect_job: bool,
    files: (&Option<PathBuf>, &Option<PathBuf>),
) -> Result<u8> {
    if which("sbatch").is_none() {
        return Err(stop(NOT_GRADED, "--slurm needs Slurm's sbatch, and there is none here"));
    }
    for value in [
        out.as_os_str().as_bytes(),
        lab.bin.as_os_str().as_bytes(),
        lab.listing.header.as_bytes(),
    ] {
        if value.contains(&b'\n') {
            return Err(stop(
                USAGE,
                "a path or the lab's header holds a line break; --slurm's settings cannot",
            ));
        }
    }
    let made = !out.exists();
    let undo = || {
        if made {
            let _ = fs::remove_dir_all(out);
        } else if let Ok(items) = fs::read_dir(out) {
            for item in items.flatten() {
                let _ = fs::remove_dir_all(item.path()).or_else(|_| fs::remove_file(item.path()));
            }
        }
    };
    let written = write_array(lab, submissions, out, needs, files);
    if let Err(err) = written {
        undo();
        return Err(stop(NOT_GRADED, format!("cannot write {out_shown}: {err}")));
    }
    let canary = sbatch(&[], &out.join("canary.sh"));
    let array = canary.as_ref().ok().map(|canary| {
        let range = format!("--array=0-{}%{}", submissions.len() - 1, needs.throttle);
        sbatch(
            &[
                range,
                format!("--dependency=afterok:{canary}"),
                "--kill-on-invalid-dep=yes".into(),
            ],
            &out.join("task.sh"),
        )
    });
    let (canary, job) = match (canary, array) {
        (Ok(canary), Some(Ok(job))) => (canary, job),
        (canary, _) => {
            if let Ok(canary) = canary {
                let _ = Command::new("scancel").arg(canary).status();
            }
            undo();
            return Err(stop(NOT_GRADED, format!("sbatch refused the array or the check of our solution it waits for (its words are above); nothing was submitted and {out_shown} is as it was: the same command can run again")));
        }
    };
    fs::write(out.join("job"), format!("{job}\n"))?;
    fs::write(out.join("canary-job"), format!("{canary}\n"))?;
    let week = lab.week.name;
    println!(
        "grade.sh: submitted job array {job}: {} tasks, one GPU, {} CPUs and {} each, at most {} at once (week {week})",
        submissions.len(),
        needs.cpus,
        needs.memory,
        needs.throttle
    );
    println!("after job {canary}, our own solution on the cases: if it fails them, the array is cancelled and --collect says why");
    println!("follow it with: squeue -j {job}");
    if collect_job {
        let collector = sbatch(&[format!("--dependency=afterany:{job}")], &out.join("collect.sh")).map_err(|_| {
            stop(NOT_GRADED, format!("sbatch refused the collect job (the array {job} runs; collect by hand: bash assignments/grade.sh --collect {out_shown} --out grades.csv)"))
        })?;
        fs::write(out.join("collect-job"), format!("{collector}\n"))?;
        let out = out.display();
        println!(
            "then the collect job {collector} writes {out}/grades.csv (its log: {out}/logs/collect-{collector}.log)"
        );
    } else {
        println!("then: bash assignments/grade.sh --collect {out_shown} --out grades.csv");
    }
    Ok(0)
}

/// Runs sbatch --parsable with `args` on `script`: the job id, or an error (sbatch's words are on stderr).
fn sbatch(args: &[String], script: &Path) -> Result<String> {
    let output = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .arg(script)
        .stderr(std::process::Stdio::inherit())
        .output()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if output.status.success() && !id.is_empty() {
        Ok(id)
    } else {
        anyhow::bail!("sbatch failed")
    }
}

/// The array's files: the settings every task reads (KEY=VALUE lines, read as data), the submissions
/// (NUL-separated: names may hold any byte), task.sh, canary.sh, collect.sh, --weights and --ids.
fn write_array(
    lab: &Lab,
    submissions: &[Submission],
    out: &Path,
    needs: &Resources,
    files: (&Option<PathBuf>, &Option<PathBuf>),
) -> std::io::Result<()> {
    for dir in ["rows", "logs", "checks"] {
        fs::create_dir_all(out.join(dir))?;
    }
    let mut settings = b"# grade.sh --slurm: what every task and --collect read, as data (KEY=VALUE, one a line; keys:\n# week, lab_bin, cases_file, sanitize, limit, header, cases, hash); never run.\n".to_vec();
    let mut line = |key: &str, value: &[u8]| {
        settings.extend_from_slice(format!("{key}=").as_bytes());
        settings.extend_from_slice(value);
        settings.push(b'\n');
    };
    line("week", lab.week.name.as_bytes());
    line("lab_bin", lab.bin.as_os_str().as_bytes());
    if let Some(file) = &lab.cases_file {
        line("cases_file", file.as_os_str().as_bytes());
    }
    line("sanitize", if lab.sanitize { b"yes" } else { b"no" });
    line("limit", lab.limit.to_string().as_bytes());
    line("header", lab.listing.header.as_bytes());
    line("cases", lab.listing.cases.to_string().as_bytes());
    line("hash", lab.listing.hash.as_bytes());
    fs::write(out.join("settings"), settings)?;
    let mut list = Vec::new();
    for submission in submissions {
        list.extend_from_slice(submission.entry.as_os_str().as_bytes());
        list.push(0);
    }
    fs::write(out.join("submissions"), list)?;
    let (weights, ids) = files;
    if let Some(file) = weights {
        fs::copy(file, out.join("weights"))?;
    }
    if let Some(file) = ids {
        fs::copy(file, out.join("ids"))?;
    }
    let grader = quoted_path(&std::env::current_exe()?);
    let folder = quoted_path(out);
    let week = lab.week.name;
    let gpu_job = |name: &str, log: &str| -> String {
        let mut lines = format!("#SBATCH --job-name={name}\n#SBATCH --gres=gpu:1\n#SBATCH --cpus-per-task={}\n#SBATCH --mem={}\n#SBATCH --time={}\n#SBATCH --output={}/logs/{log}\n", needs.cpus, needs.memory, needs.minutes, out.display());
        for option in &needs.options {
            lines.push_str(&format!("#SBATCH {option}\n"));
        }
        lines
    };
    let task = format!(
        "#!/usr/bin/env bash\n# One task of a grading array (grade.sh --slurm); run again for chosen tasks: sbatch --array=3,5 {}\n# A task that Slurm gives no GPU (no --gres=gpu:1, a partition without GPUs) writes a row that says so and fails.\n{}exec {grader} --task {folder}\n",
        quoted_path(&out.join("task.sh")),
        gpu_job(&format!("grade-{week}"), "%A_%a.log")
    );
    let canary = format!(
        "#!/usr/bin/env bash\n# Our own solution on the cases, before any submission (issue 66): the array waits for this job\n# (--dependency=afterok) and Slurm cancels it if the job fails; --collect then says why in one line.\n{}exec {grader} --canary {folder}\n",
        gpu_job(&format!("grade-{week}-canary"), "canary-%j.log")
    );
    let mut collect = format!(
        "#!/usr/bin/env bash\n# The array's CSV into {}/grades.csv once its tasks have ended (grade.sh --slurm --collect-job\n# submits it with --dependency=afterany:<array job id>); after tasks are run again: sbatch {}\n#SBATCH --job-name=grade-{week}-collect\n#SBATCH --cpus-per-task=1\n#SBATCH --mem=1G\n#SBATCH --time=10\n#SBATCH --output={}/logs/collect-%j.log\n",
        out.display(),
        quoted_path(&out.join("collect.sh")),
        out.display()
    );
    for option in &needs.options {
        collect.push_str(&format!("#SBATCH {option}\n"));
    }
    collect.push_str(&format!(
        "exec {grader} --collect {folder} --out {}\n",
        quoted_path(&out.join("grades.csv"))
    ));
    fs::write(out.join("task.sh"), task)?;
    fs::write(out.join("canary.sh"), canary)?;
    fs::write(out.join("collect.sh"), collect)
}

/// Where `program` is on the PATH.
fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|file| is_executable(file))
    })
}

impl Array {
    /// Reads what --slurm wrote into `out`: the settings, as data (a line that is not KEY=VALUE with a
    /// key of the list and a value of its kind is an error), the submissions and the job id.
    pub fn read(out: &Path, repository: &Path) -> Result<Array> {
        let shown_out = shown(out);
        let (Ok(settings), Ok(list)) = (fs::read(out.join("settings")), fs::read(out.join("submissions"))) else {
            return Err(stop(USAGE, format!("{shown_out} was not written by grade.sh --slurm")));
        };
        let bad = |number: usize, why: String| stop(NOT_GRADED, format!("{shown_out}/settings, line {number}: {why}"));
        let (mut week, mut bin, mut cases_file, mut sanitize, mut limit, mut header, mut cases, mut hash) =
            (None, None, None, None, None, None, None, None);
        let mut seen: Vec<String> = Vec::new();
        for (at, line) in settings.split(|b| *b == b'\n').enumerate() {
            let number = at + 1;
            if line.is_empty() || line.starts_with(b"#") {
                continue;
            }
            let text = String::from_utf8_lossy(line);
            let Some((key, value)) = text
                .split_once('=')
                .filter(|(key, _)| !seen.iter().any(|each| each == key))
            else {
                return Err(bad(
                    number,
                    format!("not KEY=VALUE with a key of its own: {}", escaped(line)),
                ));
            };
            seen.push(key.to_string());
            let raw = &line[key.len() + 1..];
            let absolute = || (raw.starts_with(b"/")).then(|| PathBuf::from(OsString::from_vec(raw.to_vec())));
            let ok = match key {
                "week" => weeks::week(value).map(|found| week = Some(found)),
                "lab_bin" => absolute().map(|path| bin = Some(path)),
                "cases_file" => absolute().map(|path| cases_file = Some(path)),
                "sanitize" => matches!(value, "yes" | "no").then(|| sanitize = Some(value == "yes")),
                "limit" => value
                    .parse::<u64>()
                    .ok()
                    .filter(|limit| *limit > 0 && !value.starts_with('+') && !value.starts_with('0'))
                    .map(|parsed| limit = Some(parsed)),
                "header" => (!value.is_empty()).then(|| header = Some(value.to_string())),
                "cases" => value
                    .parse::<usize>()
                    .ok()
                    .filter(|_| value.bytes().all(|b| b.is_ascii_digit()))
                    .map(|parsed| cases = Some(parsed)),
                "hash" => is_hash(value).then(|| hash = Some(value.to_string())),
                _ => return Err(bad(number, format!("unknown key '{key}' ({KEYS})"))),
            };
            if ok.is_none() {
                return Err(bad(number, format!("'{value}' is no value for {key}")));
            }
        }
        let missing = |key: &str| stop(NOT_GRADED, format!("{shown_out}/settings has no {key}"));
        let week = week.ok_or_else(|| missing("week"))?;
        let bin = bin.ok_or_else(|| missing("lab_bin"))?;
        let sanitize = sanitize.ok_or_else(|| missing("sanitize"))?;
        let limit = limit.ok_or_else(|| missing("limit"))?;
        let header = header.ok_or_else(|| missing("header"))?;
        let cases = cases.ok_or_else(|| missing("cases"))?;
        let hash = hash.ok_or_else(|| missing("hash"))?;
        let submissions: Vec<Submission> = list
            .split(|b| *b == 0)
            .filter(|entry| !entry.is_empty())
            .map(|entry| Submission {
                entry: PathBuf::from(OsString::from_vec(entry.to_vec())),
            })
            .collect();
        let folder = submissions
            .first()
            .and_then(|first| first.entry.parent())
            .map_or(String::new(), shown);
        let job = fs::read_to_string(out.join("job"))
            .unwrap_or_default()
            .trim()
            .to_string();
        if !job.bytes().all(|b| b.is_ascii_digit()) {
            return Err(stop(NOT_GRADED, format!("{shown_out}/job is not a job id: {job}")));
        }
        let listing = Listing::new(&header, cases, &hash)?;
        let starter = crate::lab::starter_code(week, repository);
        let lab = Lab {
            week,
            bin,
            cases_file,
            sanitize,
            limit,
            dry: false,
            listing,
            folder,
            starter,
            // One lab per task and GPU: nothing to share.
            gpu_locks: None,
            cpu_threads: None,
        };
        Ok(Array {
            out: out.to_path_buf(),
            lab,
            submissions,
            job,
        })
    }

    fn row_file(&self, index: usize) -> PathBuf {
        self.out.join("rows").join(format!("{index}.row"))
    }

    /// One array task (`--task`), on the GPU Slurm gave it: its state and row written as one file in one
    /// rename, or nothing. Without a GPU, or without the lab on this node, the row says so and the task
    /// fails: it never grades on whatever GPU 0 is.
    pub fn task(&self, key: &str) -> Result<u8> {
        let total = self.submissions.len();
        let index = std::env::var("SLURM_ARRAY_TASK_ID")
            .ok()
            .and_then(|id| id.parse::<usize>().ok())
            .filter(|index| *index < total);
        let Some(index) = index else {
            let id = std::env::var("SLURM_ARRAY_TASK_ID").unwrap_or_else(|_| "unset".into());
            return Err(stop(NOT_GRADED, format!("grade.sh --task runs as a task of the array --slurm submitted (SLURM_ARRAY_TASK_ID {id}, {total} submissions)")));
        };
        // A row from an earlier run of this task is no grade of this one: a run that dies leaves none.
        let _ = fs::remove_file(self.row_file(index));
        let submission = &self.submissions[index];
        let entry = shown(&submission.entry);
        let (graded, why) = match slurm_gpu() {
            None => {
                let why = "no GPU was given to this task (check --gres=gpu:1 and the partition)".to_string();
                (
                    self.lab.no_result(submission, &entry, &why, State::NoGpu, None),
                    Some((NOT_GRADED, why)),
                )
            }
            Some(_) if !is_executable(&self.lab.bin) => {
                let why = format!("machine: the lab {} is not on this node (not graded: the repository or LAB_BIN_DIR must be on a file system the nodes share)", shown(&self.lab.bin));
                (
                    self.lab.no_result(submission, &entry, &why, State::Machine, None),
                    Some((MACHINE, why)),
                )
            }
            Some(device) => (self.lab.grade(submission, Some(&device), key, None), None),
        };
        keep_output(&self.out.join("checks"), submission, &graded);
        let text = format!("{}\n{}\n", graded.state.word(), graded.line);
        crate::output::replace(&self.row_file(index), text.as_bytes())?;
        let _ = fs::remove_file(self.out.join("rows").join(format!("{index}.row.bak")));
        if let Some((code, why)) = why {
            return Err(stop(code, why));
        }
        match graded.state {
            State::Changed => Err(stop(
                NOT_GRADED,
                format!(
                    "the case set changed during grading, not graded (expected {})",
                    self.lab.listing.hash
                ),
            )),
            State::Machine => Err(stop(
                MACHINE,
                format!(
                    "the machine failed this task, not graded: see {}/checks",
                    shown(&self.out)
                ),
            )),
            _ => Ok(0),
        }
    }

    /// Our solution on the cases (`--canary`), as the job the array waits for (issue 66). Its verdict
    /// goes to OUT/canary.state (passed, refused or machine) with the line that says why in
    /// OUT/canary.why; a verdict other than passed fails the job, and Slurm then cancels the array.
    pub fn canary(&self, repository: &Path) -> Result<u8> {
        let _ = fs::remove_file(self.out.join("canary.state"));
        let _ = fs::remove_file(self.out.join("canary.why"));
        let checked = match slurm_gpu() {
            None => Err(stop(MACHINE, "no GPU was given to the check of our solution (check --gres=gpu:1 and the partition)")),
            Some(_) if !is_executable(&self.lab.bin) => Err(stop(MACHINE, format!("the lab {} is not on this node (the repository or LAB_BIN_DIR must be on a file system the nodes share)", shown(&self.lab.bin)))),
            Some(device) => self.lab.check_ours(repository, Some(&device)),
        };
        let (state, why, code) = match &checked {
            Ok(()) => ("passed", String::new(), 0),
            Err(err) => {
                let code = err
                    .downcast_ref::<crate::stop::Stop>()
                    .map_or(MACHINE, |stop| stop.code);
                (if code == USAGE { "refused" } else { "machine" }, err.to_string(), code)
            }
        };
        fs::write(self.out.join("canary.why"), format!("{why}\n"))?;
        fs::write(self.out.join("canary.state"), format!("{state}\n"))?;
        checked.map(|()| 0).map_err(|_| stop(code, why))
    }

    /// `--collect`: the array's CSV, as a local run's; tasks without a row get one with Slurm's word on
    /// them. stderr names the tasks still pending or running (collect again later), and apart those
    /// that failed, got no GPU or that the machine failed, with the command that runs them again.
    pub fn collect(&self, rows: &Rows, csv: &crate::output::Csv) -> Result<u8> {
        let mut code = Final::default();
        self.collect_canary(&mut code)?;
        let live = self.live_tasks();
        let total = self.submissions.len();
        let graded: Vec<Graded> = (0..total)
            .map(|index| {
                let submission = &self.submissions[index];
                let entry = shown(&submission.entry);
                if let Some(graded) = self.read_row(index) {
                    return graded;
                }
                match live.iter().find(|(task, _)| *task == index) {
                    Some((_, state)) => self.lab.no_result(
                        submission,
                        &entry,
                        &format!("no result yet from array task {index}: {state} (collect again later)"),
                        State::Waiting,
                        None,
                    ),
                    None => self.lab.no_result(
                        submission,
                        &entry,
                        &format!(
                            "no result from array task {index}: {}",
                            job_state(&format!("{}_{index}", self.job))
                        ),
                        State::Missing,
                        None,
                    ),
                }
            })
            .collect();
        csv.write(&rows.csv(&self.submissions, &graded, None))?;
        let indices = |states: &[State]| -> Vec<usize> {
            (0..total)
                .filter(|index| states.contains(&graded[*index].state))
                .collect()
        };
        let join = |list: &[usize]| list.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let waiting = indices(&[State::Waiting]);
        if !waiting.is_empty() {
            say(&format!(
                "{} of {total} tasks are still pending or running ({}), not failed: collect again later (squeue -j {})",
                waiting.len(),
                join(&waiting),
                self.job
            ));
            code.worse(WAITING);
        }
        let (missing, no_gpu, machine) = (
            indices(&[State::Missing, State::Lost]),
            indices(&[State::NoGpu]),
            indices(&[State::Machine]),
        );
        let again = indices(&[State::Missing, State::Lost, State::NoGpu, State::Machine]);
        if !again.is_empty() {
            let mut what = Vec::new();
            for (list, name) in [
                (&missing, "no row"),
                (&no_gpu, "no GPU"),
                (&machine, "the machine failed"),
            ] {
                if !list.is_empty() {
                    what.push(format!("{name}: {}; ", join(list)));
                }
            }
            let job = if self.job.is_empty() { "JOB" } else { &self.job };
            say(&format!(
                "{} of {total} tasks have no grades ({}their logs: {}/logs/{job}_N.log); to run only those again: sbatch --array={} {}",
                again.len(),
                what.concat(),
                shown(&self.out),
                join(&again),
                shown(&self.out.join("task.sh"))
            ));
            if !missing.is_empty() {
                code.worse(NOT_GRADED);
            }
        }
        rows.report(&self.submissions, &graded, &mut code);
        Ok(code.0)
    }

    /// Task `index`'s row: its state and line, or `None` where it has none.
    fn read_row(&self, index: usize) -> Option<Graded> {
        let text = fs::read_to_string(self.row_file(index)).ok()?;
        let (word, line) = text.split_once('\n')?;
        let state = State::from_word(word)?;
        Some(Graded {
            line: line.trim_end_matches('\n').to_string(),
            state,
            kept: Vec::new(),
        })
    }

    /// The tasks Slurm still has in its queue (pending, running, completing) and their states.
    fn live_tasks(&self) -> Vec<(usize, String)> {
        if self.job.is_empty() {
            return Vec::new();
        }
        let text = slurm_says("squeue", &["-h", "-r", "-j", &self.job, "-o", "%i %T"]);
        text.lines()
            .filter_map(|line| {
                let (id, state) = line.split_once(' ')?;
                let task = id.strip_prefix(&format!("{}_", self.job))?.parse().ok()?;
                Some((task, state.to_string()))
            })
            .collect()
    }

    /// `--collect`'s part for the canary job (issue 66): refused cases stop it with the canary's line
    /// (exit code 2), our solution failing on the node too (exit code 3); a canary still in the queue
    /// is told apart; one that ended without a verdict (killed, out of time) is the machine's.
    fn collect_canary(&self, code: &mut Final) -> Result<()> {
        let Ok(canary) = fs::read_to_string(self.out.join("canary-job")) else {
            return Ok(());
        };
        let canary = canary.trim();
        let state = fs::read_to_string(self.out.join("canary.state")).unwrap_or_default();
        let why = fs::read_to_string(self.out.join("canary.why")).unwrap_or_default();
        let why = why.trim_end();
        let out = shown(&self.out);
        let again = format!(
            "run both again where the GPU works: sbatch {out}/canary.sh, then sbatch --array=0-{} {out}/task.sh",
            self.submissions.len().saturating_sub(1)
        );
        match state.trim() {
            "passed" => Ok(()),
            "refused" => Err(stop(USAGE, format!("nothing graded: {why}"))),
            "machine" => Err(stop(
                MACHINE,
                format!("nothing graded, the machine's fault: {why} (log: {out}/logs/canary-{canary}.log); {again}"),
            )),
            _ => {
                if !slurm_says("squeue", &["-h", "-j", canary]).is_empty() {
                    say(&format!("the check of our solution on the cases (job {canary}) is still pending or running; the tasks wait for it: collect again later"));
                    code.worse(WAITING);
                    return Ok(());
                }
                Err(stop(MACHINE, format!("nothing graded: the check of our solution on the cases (job {canary}) ended without a verdict ({}; log: {out}/logs/canary-{canary}.log), the machine's fault; {again}", job_state(canary))))
            }
        }
    }
}

/// The GPU Slurm gave this job (CUDA_VISIBLE_DEVICES, else the step's or the job's GPUs), or none.
fn slurm_gpu() -> Option<String> {
    ["CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"]
        .into_iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| names_gpu(value))
}

/// What Slurm's tool `program` prints on stdout for `args`; nothing where it cannot run.
fn slurm_says(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output();
    output.map_or(String::new(), |output| {
        String::from_utf8_lossy(&output.stdout).into_owned()
    })
}

/// Slurm's word on job `id` (an array task: JOB_TASK): "STATE, exit CODE, REASON" from sacct, else from
/// scontrol (while the job is in the controller's memory), else that it is not known.
fn job_state(id: &str) -> String {
    let sacct = slurm_says("sacct", &["-j", id, "-n", "-P", "-X", "-o", "State,ExitCode,Reason"]);
    if let Some(line) = sacct.lines().next().filter(|line| !line.is_empty()) {
        let parts: Vec<&str> = line.split('|').chain(["", ""]).collect();
        return format!("{}, exit {}, {}", parts[0], parts[1], parts[2]);
    }
    let scontrol = slurm_says("scontrol", &["-o", "show", "job", id]);
    if let Some(line) = scontrol.lines().next().filter(|line| !line.is_empty()) {
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|word| word.strip_prefix(name))
                .unwrap_or("")
        };
        return format!(
            "{}, exit {}, {}",
            field("JobState="),
            field("ExitCode="),
            field("Reason=")
        );
    }
    "state unknown to Slurm now (no accounting, and no longer in the controller's memory)".to_string()
}

/// The submissions folder of an array as --ids names it.
pub fn folder_shown(array: &Array) -> String {
    if array.lab.folder.is_empty() {
        "the array".to_string()
    } else {
        array.lab.folder.clone()
    }
}

/// Why --slurm refuses a folder `shown` that already has files.
pub fn not_empty(shown: &str) -> anyhow::Error {
    stop(
        USAGE,
        format!("{shown} is not empty; --slurm writes a new folder (nothing is overwritten)"),
    )
}

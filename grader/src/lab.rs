//! Running a week's lab: the repository it grades from, finding its binary, what it lists, the key of
//! its closing marks, our own solution's check of the cases, and one submission's `--check`, whose row
//! counts only under the lab's closing mark (issue 60).

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Result;

use crate::csv::{escaped, record, shown, text_of};
use crate::listing::{is_hash, passed_shown, row, Listing};
use crate::stop::{stop, MACHINE, NOT_GRADED, USAGE};
use crate::submissions::{code_of, Found, Submission};
use crate::weeks::{Handed, Week};

/// The repository: where grade.sh says (GRADE_REPOSITORY: the GPU bundle's own folder), else where
/// this program was built.
pub fn repository() -> PathBuf {
    std::env::var_os("GRADE_REPOSITORY")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap_or(Path::new("."))
                .to_path_buf()
        })
}

/// A key for the labs' closing marks (issue 60): random, new for each grading process, and handed
/// to the labs on their stdin only.
pub fn mark_key() -> Result<String> {
    random_hex().map_err(|err| {
        stop(
            NOT_GRADED,
            format!("cannot read 32 random bytes from /dev/urandom: {err}"),
        )
    })
}

/// 32 random bytes from the kernel, as 64 hex digits (the marks' keys, the course server's tokens).
pub fn random_hex() -> std::io::Result<String> {
    use std::io::Read as _;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom").and_then(|mut random| random.read_exact(&mut bytes))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// How a submission's grading went; the CSV's score and stderr's report follow from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The lab's row, verdicts and all.
    Graded,
    /// No result, the student's doing (a compile error, no .cu file): scored 0.
    Nothing,
    /// No row, and nothing says why (a panic, a crash of the lab): not graded.
    Lost,
    /// Graded on another case set than grading began with: not graded.
    Changed,
    /// The machine failed it (MACHINE verdicts, exit code 3): not graded.
    Machine,
    /// The lab refused the grader's arguments (exit code 2): not graded.
    Refused,
    /// A dry run: compiled, and its static rules passed or failed.
    DryPass,
    DryFail,
    /// A Slurm task without a GPU; one still waiting; one without a row.
    NoGpu,
    Waiting,
    Missing,
}

const STATES: [(State, &str); 11] = [
    (State::Graded, "graded"),
    (State::Nothing, "nothing"),
    (State::Lost, "lost"),
    (State::Changed, "changed"),
    (State::Machine, "machine"),
    (State::Refused, "refused"),
    (State::DryPass, "dry-pass"),
    (State::DryFail, "dry-fail"),
    (State::NoGpu, "no-gpu"),
    (State::Waiting, "waiting"),
    (State::Missing, "missing"),
];

impl State {
    /// Its word in a Slurm row file.
    pub fn word(self) -> &'static str {
        STATES
            .iter()
            .find(|(state, _)| *state == self)
            .map_or("", |(_, word)| word)
    }

    pub fn from_word(word: &str) -> Option<State> {
        STATES.iter().find(|(_, each)| *each == word).map(|(state, _)| *state)
    }

    /// Whether the row gets a score (a dry run's never does).
    pub fn scored(self) -> bool {
        matches!(self, State::Graded | State::Nothing)
    }
}

/// One submission graded: its row (without score and id), how it went, and what is kept of the lab's
/// output (the command, its stderr and stdout).
#[derive(Debug, Clone)]
pub struct Graded {
    pub line: String,
    pub state: State,
    pub kept: Vec<u8>,
}

/// What every submission's check shares: the week, its lab and flags, the cases it lists.
#[derive(Debug, Clone)]
pub struct Lab {
    pub week: &'static Week,
    pub bin: PathBuf,
    pub cases_file: Option<PathBuf>,
    pub sanitize: bool,
    pub limit: u64,
    pub dry: bool,
    pub listing: Listing,
    /// The submissions folder as the notes leave it out.
    pub folder: String,
    /// The code of the week's starter (see [`code_of`]): handed in unchanged, it scores 0 unrun.
    pub starter: Option<Vec<u8>>,
    /// The folder of the GPUs' lock files, where several labs share a GPU (a local run's jobs): each
    /// lab gets `LAB_GPU_LOCK` naming its GPU's ([`gpu_lock_file`]), under which its timed cases run
    /// alone. None: the labs run as they are (a Slurm task, one course-server worker per GPU).
    pub gpu_locks: Option<PathBuf>,
    /// The threads each lab's parallel CPU work may use (`RAYON_NUM_THREADS`) where several jobs
    /// share the machine's cores ([`cpu_threads`]); none: every core (a job alone, a Slurm task).
    pub cpu_threads: Option<usize>,
}

/// Each of `jobs` labs' share of the machine's cores, at least one, where there are several jobs:
/// with 16 jobs on 16 cores, each lab's CPU products and checks on every core made the lab that held
/// the GPU wait for a core (issue 65: a check held the GPU 2.0 to 6.4 s where 16 shared it, 2.6 s
/// alone, run 26).
pub fn cpu_threads(jobs: usize) -> Option<usize> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    (jobs > 1).then(|| (cores / jobs).max(1))
}

/// The variable that names a lab's GPU lock file, for the grader and the labs (`grading::gpu_lock`).
pub const GPU_LOCK_ENV: &str = "LAB_GPU_LOCK";

/// The variable that caps the hardware queues each CUDA context gets (`CUDA_DEVICE_MAX_CONNECTIONS`,
/// 8 where unset): [`Lab::on_gpu`] sets it to 1 for a kernel week's check.
pub const CONNECTIONS_ENV: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// The lock file of GPU `device` (a CUDA_VISIBLE_DEVICES value: a number or a UUID) in `folder`:
/// `gpu-<device>.lock`, every character but letters, digits and `-` made `_`.
pub fn gpu_lock_file(folder: &Path, device: &str) -> PathBuf {
    let name: String = device
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect();
    folder.join(format!("gpu-{name}.lock"))
}

/// The code of `week`'s starter in `repository`, where it is there.
pub fn starter_code(week: &Week, repository: &Path) -> Option<Vec<u8>> {
    std::fs::read(week.starter(repository)).ok().map(|text| code_of(&text))
}

/// The lab binary `lab`: LAB_BIN_DIR's (one line if it has none, with how to build them), else cargo's
/// release build in `repository`.
pub fn find(lab: &str, repository: &Path) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("LAB_BIN_DIR").filter(|dir| !dir.is_empty()) {
        let shown = escaped(dir.as_bytes());
        let dir = std::path::absolute(PathBuf::from(&dir))?;
        let bin = dir.join(lab);
        if is_executable(&bin) {
            return Ok(bin);
        }
        let mut others: Vec<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|item| item.file_name().as_bytes().starts_with(b"lab-") && is_executable(&item.path()))
            .map(|item| escaped(item.file_name().as_bytes()))
            .collect();
        others.sort();
        if others.is_empty() {
            return Err(stop(NOT_GRADED, format!("LAB_BIN_DIR={shown} has no lab binaries yet: build them with bash scripts/gpu-bundle.sh (they go to gpu-bundle/bin), or unset LAB_BIN_DIR to build with cargo here")));
        }
        return Err(stop(NOT_GRADED, format!("LAB_BIN_DIR={shown} has no executable {lab} (only {}): build them again with bash scripts/gpu-bundle.sh", others.join(", "))));
    }
    crate::say_building(&format!("cargo build --release -p {lab}"));
    let built = Command::new("cargo")
        .args(["build", "--release", "-q", "-p", lab])
        .current_dir(repository)
        .status();
    if !built.is_ok_and(|status| status.success()) {
        return Err(stop(NOT_GRADED, format!("cargo build --release -p {lab} failed")));
    }
    let bin = repository.join("target/release").join(lab);
    if !is_executable(&bin) {
        return Err(stop(NOT_GRADED, format!("{} is not an executable lab", bin.display())));
    }
    Ok(bin)
}

/// Whether `path` is an executable file.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o100 != 0)
}

/// The first line of `bytes` that is not empty, as text.
fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.lines().find(|line| !line.is_empty()).unwrap_or("").to_string()
}

/// `line` without a lab's `lab-x: error: ` in front.
fn without_lab_name(line: &str) -> &str {
    match line.split_once(": error: ") {
        Some((lab, rest)) if lab.starts_with("lab-") && !lab.contains(' ') => rest,
        _ => line,
    }
}

/// What the lab of `week` checks: its CSV header and the case set (`--list-cases --csv` and
/// `--list-cases`). A `--cases` file it refuses is that file's line (exit code 2).
pub fn list(bin: &Path, week: &Week, cases_file: Option<&Path>) -> Result<Listing> {
    let shown = bin.display();
    let run = |csv: bool| -> Result<String> {
        let mut command = Command::new(bin);
        command.args(week.args).args(cases_args(cases_file)).arg("--list-cases");
        if csv {
            command.arg("--csv");
        }
        let output = command
            .stdin(Stdio::null())
            .output()
            .map_err(|err| stop(NOT_GRADED, format!("{shown} does not run: {err}")))?;
        match output.status.code() {
            Some(0) => Ok(String::from_utf8_lossy(&output.stdout)
                .trim_end_matches('\n')
                .to_string()),
            Some(2) => Err(stop(USAGE, without_lab_name(&first_line(&output.stderr)).to_string())),
            _ => Err(stop(
                NOT_GRADED,
                format!("{shown} does not run: {}", first_line(&output.stderr)),
            )),
        }
    };
    let header = run(true)?;
    let (cases, hash) = Listing::count(run(false)?.lines().next().unwrap_or(""))?;
    Listing::new(header.lines().next().unwrap_or(""), cases, &hash)
}

/// `--cases FILE`, where there is one.
pub fn cases_args(cases_file: Option<&Path>) -> Vec<OsString> {
    cases_file.map_or(Vec::new(), |file| vec!["--cases".into(), file.into()])
}

/// Whether the lab knows `--check --dry-run` (an older one does not).
pub fn has_dry_run(bin: &Path) -> bool {
    Command::new(bin)
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).contains("--dry-run"))
}

/// `words` as a shell would take them back, for the kept output and messages.
pub fn shell_words(words: &[OsString]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|word| {
            let text = escaped(word.as_bytes());
            if !text.is_empty()
                && text
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
            {
                text
            } else {
                format!("'{}'", text.replace('\'', "'\\''"))
            }
        })
        .collect();
    quoted.join(" ")
}

/// An exit code, a signal's as a shell gives it (128 + the signal).
fn exit_code(status: std::process::ExitStatus) -> i32 {
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

impl Lab {
    /// The week's lab ready to grade the submissions of `folder` (as messages show it): its binary
    /// found, its cases listed (the week's, or `cases_file`'s), a lab too old for `dry` refused, the
    /// week's starter read to tell it from a submission.
    pub fn open(
        week: &'static Week,
        repository: &Path,
        cases_file: Option<PathBuf>,
        sanitize: bool,
        limit: u64,
        dry: bool,
        folder: String,
    ) -> Result<Lab> {
        let bin = find(week.lab, repository)?;
        let listing = list(&bin, week, cases_file.as_deref())?;
        if dry && !has_dry_run(&bin) {
            return Err(stop(NOT_GRADED, format!("{} has no --check --dry-run yet (an older lab): build the labs again (cargo, or bash scripts/gpu-bundle.sh)", shown(&bin))));
        }
        Ok(Lab {
            week,
            bin,
            cases_file,
            sanitize,
            limit,
            dry,
            listing,
            folder,
            starter: starter_code(week, repository),
            gpu_locks: None,
            cpu_threads: None,
        })
    }

    /// The command that checks `file` (without `--check` and what follows it).
    fn command(&self, file: &Path) -> Vec<OsString> {
        let mut words: Vec<OsString> = vec![self.bin.clone().into(), self.week.source_flag().into(), file.into()];
        words.extend(self.week.args.iter().map(OsString::from));
        words.extend(cases_args(self.cases_file.as_deref()));
        words
    }

    /// The flags of a check: `--check --dry-run --csv`, or `[--sanitize] --check --time-limit S --csv`.
    fn check_flags(&self) -> Vec<OsString> {
        let limit = self.limit.to_string();
        let flags: Vec<&str> = if self.dry {
            vec!["--check", "--dry-run", "--csv"]
        } else if self.sanitize {
            vec!["--sanitize", "--check", "--time-limit", &limit, "--csv"]
        } else {
            vec!["--check", "--time-limit", &limit, "--csv"]
        };
        flags.into_iter().map(OsString::from).collect()
    }

    /// `command` run on GPU `device` (none in a dry run), with its lock file where [`Lab::gpu_locks`]
    /// says, and its share of the cores where [`Lab::cpu_threads`] says.
    ///
    /// A kernel week's check (and each process it starts: its cases, compute-sanitizer's runs, ncu's
    /// measured run) runs with one hardware queue per CUDA context ([`CONNECTIONS_ENV`]), on any
    /// number of jobs, so that one job and many grade under the same settings. Each of those
    /// processes makes a context, and where checks share a GPU, contexts being made and destroyed
    /// slow everyone's driver calls (issue 65, run 72). On an H200 (issue 65, run 91) one process's
    /// context, from its making to its end, took 67.6 ms with one queue and 179.6 ms with the
    /// default 8; a request of ncu's batch beside 8 processes making contexts took 1.222 s and
    /// 2.665 s; a class of week-3 copies with 16 jobs graded 37.8 a minute past its first minute
    /// and 27.2 without, with the same verdicts (run 92). A kernel week's processes launch on one
    /// stream at a time, which one queue serves as well. A program week's are left alone: one queue
    /// would serialize the streams its programs, ours included, overlap.
    fn on_gpu(&self, command: &mut Command, device: Option<&str>) {
        if let Some(threads) = self.cpu_threads {
            command.env("RAYON_NUM_THREADS", threads.to_string());
        }
        if let Some(device) = device {
            command.env("CUDA_VISIBLE_DEVICES", device);
            if let Some(folder) = &self.gpu_locks {
                command.env(GPU_LOCK_ENV, gpu_lock_file(folder, device));
            }
            if matches!(self.week.handed, Handed::Kernel { .. }) {
                command.env(CONNECTIONS_ENV, "1");
            }
        }
    }

    /// Our own solution's check of the cases, before any submission (issue 66), with the same flags:
    /// a case it fails is refused in one line (exit code 2: drop the case); our solution failing the
    /// week's own cases, or not running, is the machine's (exit code 3), never a student's FAULT or 0.
    /// In a dry run it is compiled and its static rules judged: a machine without nvcc is one line.
    pub fn check_ours(&self, repository: &Path, device: Option<&str>) -> Result<()> {
        let ours = self.week.ours(repository);
        if !ours.is_file() {
            return Err(stop(
                MACHINE,
                format!(
                    "our solution {} is missing: grade from a clone of the whole repository",
                    ours.display()
                ),
            ));
        }
        let shown = match &self.cases_file {
            Some(file) => format!("--cases {}", shown(file)),
            None => "the week's own cases".to_string(),
        };
        let mut words = self.command(&ours);
        let plain: Vec<String> = words.iter().map(|word| escaped(word.as_bytes())).collect();
        let printed = format!("{} --check", plain.join(" "));
        words.extend(self.check_flags());
        let mut command = Command::new(&words[0]);
        command.args(&words[1..]).stdin(Stdio::null());
        self.on_gpu(&mut command, device);
        let output = command.output().map_err(|err| {
            stop(
                MACHINE,
                format!("our own solution does not run here ({err}): the machine's fault, nothing graded"),
            )
        })?;
        let code = exit_code(output.status);
        if code == 0 {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr
            .lines()
            .find(|line| line.starts_with("lab-") && line.contains(": error: "))
            .map(|line| without_lab_name(line).to_string());
        if code == 2 {
            let why = line.unwrap_or_else(|| "the lab refused the check of our solution".into());
            return Err(stop(USAGE, format!("{shown}: {why}")));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        if code == 1 && self.cases_file.is_some() {
            if let Some(fields) = stdout.trim_end_matches('\n').lines().last().and_then(record) {
                for (at, name) in self.listing.verdict_names().iter().enumerate() {
                    let verdict = fields.get(at + 1).map_or("", String::as_str);
                    if verdict != "PASS" && verdict != "-" {
                        let verdict = if verdict.is_empty() { "no verdict" } else { verdict };
                        return Err(stop(USAGE, format!("{shown}: our own solution gets {verdict} for '{name}' there: a case the week cannot grade; drop it from the file (what it printed: {printed})")));
                    }
                }
            }
        }
        let why = line.unwrap_or_else(|| format!("exit code {code}"));
        Err(stop(
            MACHINE,
            format!(
                "our own solution fails on this machine ({why}): the machine's fault, nothing graded; see {printed}"
            ),
        ))
    }

    /// A row without the lab's results, in state `state`.
    pub fn no_result(
        &self,
        submission: &Submission,
        file: &str,
        note: &str,
        state: State,
        hash: Option<&str>,
    ) -> Graded {
        let line = row(
            &submission.shown(),
            file,
            &self.listing.without_results(hash),
            note,
            &self.folder,
        );
        let kept = format!(
            "# grade.sh: {}\n# not run: {}\n",
            shown(&submission.entry),
            escaped(note.as_bytes())
        );
        Graded {
            line,
            state,
            kept: kept.into_bytes(),
        }
    }

    /// Grades `submission` on GPU `device` (a CUDA_VISIBLE_DEVICES value; none in a dry run), the lab
    /// reading `key` for its closing mark. With `runs` (`--feedback`), the file graded is copied to
    /// `runs.0` and the lab writes what the feedback pages read to `runs.1`.
    pub fn grade(
        &self,
        submission: &Submission,
        device: Option<&str>,
        key: &str,
        runs: Option<(&Path, &Path)>,
    ) -> Graded {
        let entry = shown(&submission.entry);
        let (file, where_) = match submission.file(self.week.program_file()) {
            Found::File { path, note } => (path, note),
            Found::Nothing(why) => return self.no_result(submission, &entry, &why, State::Nothing, None),
        };
        let unchanged = !self.dry
            && self
                .starter
                .as_ref()
                .is_some_and(|starter| std::fs::read(&file).is_ok_and(|text| code_of(&text) == *starter));
        if unchanged {
            let file = shown(&file);
            let why = [
                Some("the week's starter, unchanged (only comments or layout differ): nothing handed in".to_string()),
                where_,
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ");
            return self.no_result(submission, &file, &why, State::Nothing, None);
        }
        let mut words = self.command(&file);
        if let Some((copy, details)) = runs {
            // A failed copy costs the page its code, never the grade.
            let _ = std::fs::copy(&file, copy);
            words.extend([OsString::from("--details"), details.into()]);
        }
        words.extend(self.check_flags());
        words.push("--mark".into());
        let mut command = Command::new(&words[0]);
        command.args(&words[1..]);
        self.on_gpu(&mut command, device);
        let (status, stdout, stderr) = run_with_input(&mut command, format!("{key}\n").as_bytes());
        // The mark is over the bytes the lab printed (a shell's $(...) drops the trailing line breaks).
        let end = stdout.iter().rposition(|byte| *byte != b'\n').map_or(0, |at| at + 1);
        let stdout = &stdout[..end];
        let mut kept = format!("# grade.sh: {} (exit code {status})\n# stderr:\n", shell_words(&words)).into_bytes();
        kept.extend_from_slice(&stderr);
        kept.extend_from_slice(b"# stdout:\n");
        kept.extend_from_slice(stdout);
        kept.push(b'\n');
        let file_shown = shown(&file);
        let marked = self.verify(key, status, stdout);
        let verdict = self.judge(
            submission,
            &file_shown,
            where_,
            marked,
            status,
            &text_of(stdout),
            &stderr,
        );
        Graded { kept, ..verdict }
    }

    /// The row and state from the lab's exit code `status`, stdout `output` and stderr: a grade comes
    /// only from the lab, so its row, exit code and error line count only where its closing mark holds
    /// (`marked`: the message of its error line, or why the mark does not hold).
    #[allow(clippy::too_many_arguments)]
    fn judge(
        &self,
        submission: &Submission,
        file: &str,
        where_: Option<String>,
        marked: std::result::Result<String, String>,
        status: i32,
        output: &str,
        stderr: &[u8],
    ) -> Graded {
        let student = submission.shown();
        let note_with = |note: String| -> String {
            [Some(note), where_.clone()]
                .into_iter()
                .flatten()
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join("; ")
        };
        let without = |note: String, state: State, hash: Option<&str>| Graded {
            line: row(&student, file, &self.listing.without_results(hash), &note, &self.folder),
            state,
            kept: Vec::new(),
        };
        let refused = |message: &str| {
            let why = if message.is_empty() {
                first_line(stderr)
            } else {
                message.to_string()
            };
            let why = if why.is_empty() { "no message".to_string() } else { why };
            without(format!("not graded: the lab refused grade.sh's arguments (exit code 2; a lab older or newer than grade.sh?): {why}"), State::Refused, None)
        };
        let message = match marked {
            Ok(message) => message,
            Err(_) if status == 2 => return refused(""),
            Err(why) => {
                let note = format!("machine: {why} (exit code {status}: a lab killed by a signal, or a line that is not the lab's; not graded, grade again where it works)");
                return without(note_with(note), State::Machine, None);
            }
        };
        let output = if output.starts_with("#mark ") {
            ""
        } else {
            output.rfind("\n#mark ").map_or(output, |at| &output[..at])
        };
        // The lab's CSV: its header and one row, with the case set and as many fields as the header.
        let parsed = output.split_once('\n').and_then(|(header, body)| {
            let names = record(header).filter(|names| names.first().map(String::as_str) == Some("file"))?;
            let at = names.iter().rposition(|name| name == "case set")?;
            let fields = record(body).filter(|fields| fields.len() == names.len() && is_hash(&fields[at]))?;
            Some((header, fields[at].clone(), fields))
        });
        let machine_reason = || message.starts_with("machine: ").then(|| message.clone());
        match parsed {
            Some((_, got, _)) if got != self.listing.hash => {
                let note = format!("case set changed during grading: {got}, expected {}", self.listing.hash);
                without(note, State::Changed, Some(&got))
            }
            Some((header, _, fields)) if header == self.listing.header => {
                let mut values = Vec::new();
                let mut lab_note = String::new();
                let mut machine = 0;
                for (at, value) in fields.iter().enumerate().skip(1) {
                    if Some(at) == self.listing.note_at {
                        lab_note = value.clone();
                    } else if self.listing.names[at] == "passed" {
                        values.push(passed_shown(value));
                    } else {
                        values.push(value.clone());
                    }
                    if at <= self.listing.cases && value == "MACHINE" {
                        machine += 1;
                    }
                }
                let (note, state) = if machine > 0 || status == 3 {
                    let reason = if lab_note.starts_with("machine: ") {
                        Some(std::mem::take(&mut lab_note))
                    } else {
                        machine_reason()
                    };
                    let reason =
                        reason.unwrap_or_else(|| format!("machine: the lab could not run here (exit code {status})"));
                    let cases = self.listing.cases;
                    (format!("{reason} ({machine} of {cases} cases could not run on this machine: not graded, grade again where it works)"), State::Machine)
                } else if self.dry {
                    // The lab's note says what a dry run did (or the compile error).
                    let note = if lab_note.is_empty() {
                        "dry run: no GPU used".to_string()
                    } else {
                        String::new()
                    };
                    (note, if status == 0 { State::DryPass } else { State::DryFail })
                } else {
                    (String::new(), State::Graded)
                };
                let note = [note, where_.clone().unwrap_or_default(), lab_note]
                    .into_iter()
                    .filter(|part| !part.is_empty())
                    .collect::<Vec<_>>()
                    .join("; ");
                Graded {
                    line: row(&student, file, &values, &note, &self.folder),
                    state,
                    kept: Vec::new(),
                }
            }
            Some(_) => without(
                note_with(
                    "not graded: the lab's row has another header than the one it listed (a lab of another commit?)"
                        .into(),
                ),
                State::Lost,
                None,
            ),
            None if status == 2 => refused(&message),
            None if status == 3 || machine_reason().is_some() => {
                let reason = machine_reason()
                    .unwrap_or_else(|| format!("machine: the lab could not run here (exit code 3): {message}"));
                without(
                    note_with(format!("{reason} (not graded, grade again where it works)")),
                    State::Machine,
                    None,
                )
            }
            None => {
                // nvcc's first error names the line; else the lab's own message: the student's. A lab
                // that ends without a row and without a word (a panic, a crash) grades nobody.
                let stderr = String::from_utf8_lossy(stderr);
                let compiler = stderr
                    .lines()
                    .find(|line| line.contains("): error"))
                    .map(str::to_string);
                let lab = self.week.lab;
                match compiler.or_else(|| (!message.is_empty()).then(|| format!("{lab}: error: {message}"))) {
                    Some(reason) => without(note_with(format!("compile error or no result: {reason}")), State::Nothing, None),
                    None => without(
                        note_with(format!("not graded: the lab ended without a row and without saying why (exit code {status}: a panic or a crash of the lab, not the student's; its output is in the kept --check output)")),
                        State::Lost,
                        None,
                    ),
                }
            }
        }
    }

    /// The lab's own check of its closing mark over `status` and `output` (this run's `key`): the
    /// message of its error line where the mark holds, else why not.
    fn verify(&self, key: &str, status: i32, output: &[u8]) -> std::result::Result<String, String> {
        let mut input = format!("{key}\n{status}\n").into_bytes();
        input.extend_from_slice(output);
        input.push(b'\n');
        let mut command = Command::new(&self.bin);
        command.arg("--verify-mark");
        let (code, stdout, stderr) = run_with_input(&mut command, &input);
        if code == 0 {
            Ok(text_of(&stdout).trim_end_matches('\n').to_string())
        } else {
            let why = String::from_utf8_lossy(&stderr)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            Err(if why.is_empty() {
                format!("the lab's --verify-mark failed (exit code {code})")
            } else {
                why
            })
        }
    }
}

/// Runs `command` with `input` on its stdin: its exit code (a signal's as 128 + it), stdout and stderr.
pub fn run_with_input(command: &mut Command, input: &[u8]) -> (i32, Vec<u8>, Vec<u8>) {
    let child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(err) => {
            return (
                127,
                Vec::new(),
                format!("cannot run {}: {err}\n", command.get_program().to_string_lossy()).into_bytes(),
            )
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A lab that exits before reading its key closes the pipe; its exit code says the rest.
        let _ = stdin.write_all(input);
    }
    match child.wait_with_output() {
        Ok(output) => (exit_code(output.status), output.stdout, output.stderr),
        Err(err) => (127, Vec::new(), format!("{err}\n").into_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lab of week `name`, with nothing listed: enough for the settings a check runs with.
    fn lab_of(name: &str, gpu_locks: Option<PathBuf>) -> Lab {
        Lab {
            week: crate::weeks::week(name).unwrap(),
            bin: PathBuf::from("lab"),
            cases_file: None,
            sanitize: false,
            limit: 600,
            dry: false,
            listing: Listing {
                header: String::new(),
                names: Vec::new(),
                cases: 0,
                hash: String::new(),
                note_at: None,
            },
            folder: String::new(),
            starter: None,
            gpu_locks,
            cpu_threads: Some(2),
        }
    }

    /// What `lab` sets for a check on `device`, by name.
    fn settings(lab: &Lab, device: Option<&str>) -> Vec<(String, String)> {
        let mut command = Command::new("lab");
        lab.on_gpu(&mut command, device);
        let mut set: Vec<(String, String)> = command
            .get_envs()
            .map(|(name, value)| {
                let value = value.map_or(String::new(), |value| value.to_string_lossy().into_owned());
                (name.to_string_lossy().into_owned(), value)
            })
            .collect();
        set.sort();
        set
    }

    /// A kernel week's check on a GPU gets one hardware queue per context, with one job as with
    /// many (issue 65, runs 91 and 92); a program week's keeps the driver's default, whose streams
    /// overlap; a dry run, on no GPU, gets no GPU settings at all.
    #[test]
    fn a_kernel_weeks_check_on_a_gpu_gets_one_queue_per_context() {
        let pairs = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect()
        };
        let locks = PathBuf::from("/run/locks");
        assert_eq!(
            settings(&lab_of("03-mmm-tiled", Some(locks.clone())), Some("1")),
            pairs(&[
                ("CUDA_DEVICE_MAX_CONNECTIONS", "1"),
                ("CUDA_VISIBLE_DEVICES", "1"),
                ("LAB_GPU_LOCK", "/run/locks/gpu-1.lock"),
                ("RAYON_NUM_THREADS", "2"),
            ])
        );
        assert_eq!(
            settings(&lab_of("07-dynamic-parallelism", None), Some("0")),
            pairs(&[
                ("CUDA_DEVICE_MAX_CONNECTIONS", "1"),
                ("CUDA_VISIBLE_DEVICES", "0"),
                ("RAYON_NUM_THREADS", "2"),
            ])
        );
        assert_eq!(
            settings(&lab_of("05-streams", Some(locks)), Some("1")),
            pairs(&[
                ("CUDA_VISIBLE_DEVICES", "1"),
                ("LAB_GPU_LOCK", "/run/locks/gpu-1.lock"),
                ("RAYON_NUM_THREADS", "2"),
            ])
        );
        assert_eq!(
            settings(&lab_of("03-mmm-tiled", None), None),
            pairs(&[("RAYON_NUM_THREADS", "2")])
        );
    }
}

//! Helpers for the labs' tests: running a lab binary as a user would, and knowing whether this
//! machine has a GPU (CI has none; the GPU tests are `#[ignore]`d there and run by
//! `gpu-bundle/run.sh` with `--include-ignored` on a GPU machine).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::private_dir::PrivateDir;

/// What a lab run printed and how it ended.
#[derive(Debug)]
pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// What a finished run left: its exit code and its output as text.
    fn of(output: &std::process::Output) -> Outcome {
        Outcome {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// The run failed with exit code 1 and exactly one line on stderr, `<lab>: error: ...`, that
    /// contains `needle`; no panic, no backtrace, no usage dump.
    pub fn is_one_line_error(&self, lab: &str, needle: &str) -> bool {
        self.is_one_line_error_with(1, lab, needle)
    }

    /// [`Outcome::is_one_line_error`] with exit code `code`: 2 for a usage error of `--check` and
    /// `--list-cases` (a bad `--cases` file), 3 for the machine (issue 45).
    pub fn is_one_line_error_with(&self, code: i32, lab: &str, needle: &str) -> bool {
        let lines: Vec<&str> = self.stderr.lines().collect();
        self.code == Some(code)
            && lines.len() == 1
            && lines[0].starts_with(&format!("{lab}: error: "))
            && lines[0].contains(needle)
            && !self.stderr.contains("panicked")
    }
}

/// Runs `binary` with `args`, without a terminal.
pub fn run(binary: &str, args: &[&str]) -> Outcome {
    run_in(Path::new("."), binary, args)
}

/// Runs `binary` with `args` in the folder `dir`.
pub fn run_in(dir: &Path, binary: &str, args: &[&str]) -> Outcome {
    run_with(dir, binary, args, &[])
}

/// Runs `binary` with `args`, `input` on its stdin (grade.sh's key for `--mark`, a run to check for
/// `--verify-mark`).
pub fn run_with_stdin(binary: &str, args: &[&str], input: &[u8]) -> Outcome {
    run_with_stdin_and_env(binary, args, input, &[])
}

/// [`run_with_stdin`] with the variables `env` set too (a stand-in `NCU`, say).
pub fn run_with_stdin_and_env(binary: &str, args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Outcome {
    use std::io::Write as _;
    let mut child = Command::new(binary)
        .args(args)
        .envs(env.iter().copied())
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {binary}: {err}"));
    // A lab that stops reading early closes the pipe; what it did then is in its output.
    let _ = child.stdin.take().map(|mut stdin| stdin.write_all(input));
    let output = child
        .wait_with_output()
        .unwrap_or_else(|err| panic!("waiting for {binary}: {err}"));
    Outcome::of(&output)
}

/// Issue 60: `lab --verify-mark` vouches for `stdout`, the output of a run with `--mark` and `key`
/// that ended with `code`, and for nothing changed: a verdict, the exit code, a row after the mark.
pub fn assert_mark_vouches_for(lab: &str, key: &str, code: u8, stdout: &str) {
    let verified =
        |code: u8, stdout: &str| run_with_stdin(lab, &["--verify-mark"], format!("{key}\n{code}\n{stdout}").as_bytes());
    let held = verified(code, stdout);
    assert_eq!(held.code, Some(0), "{held:?}");
    let changed = [
        (
            code,
            stdout.replacen(",-,", ",PASS,", 1).replacen(",PASS,", ",FAIL,", 1),
        ),
        (code.wrapping_add(1), stdout.to_string()),
        (code, format!("{stdout}\"x.cu\",PASS\n")),
    ];
    for (code, changed) in changed {
        let refused = verified(code, &changed);
        assert!(
            refused.code == Some(1) && refused.stderr.starts_with("the lab's output carries no valid mark"),
            "{refused:?}"
        );
    }
}

/// [`run_in`] with the variables `env` set too (a stand-in for a tool: `COMPUTE_SANITIZER`, `NCU`).
pub fn run_with(dir: &Path, binary: &str, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let output = Command::new(binary)
        .current_dir(dir)
        .args(args)
        .envs(env.iter().copied())
        .env("RUST_BACKTRACE", "1") // a panic would show a backtrace; the tests check there is none
        .output()
        .unwrap_or_else(|err| panic!("cannot start {binary}: {err}"));
    Outcome::of(&output)
}

/// Runs `command` (stdin closed, stdout and stderr read as it writes them) for at most `limit`; a run
/// still going then is killed and reported, so that a hung lab fails its test instead of hanging it.
pub fn run_within(command: &mut Command, limit: Duration) -> Result<Outcome, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("cannot start {:?}: {err}", command.get_program()))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|err| format!("waiting for the run: {err}"))? {
            Some(status) => break status,
            None if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("still running after {} s; stopped", limit.as_secs_f64()));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let text = |reader: std::thread::JoinHandle<String>| reader.join().unwrap_or_default();
    Ok(Outcome {
        code: status.code(),
        stdout: text(stdout),
        stderr: text(stderr),
    })
}

/// Reads a child's pipe to its end on a thread of its own, so that a child writing more than the
/// pipe holds never blocks on it.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut text);
        }
        String::from_utf8_lossy(&text).into_owned()
    })
}

/// The lab binary `name` for a test: in `LAB_BIN_DIR` when set (gpu-bundle/run.sh sets it on the GPU
/// machine, where the test executables run without the cargo tree), else cargo's own (`built`, from
/// `env!("CARGO_BIN_EXE_<name>")`).
pub fn lab_binary(name: &str, built: &str) -> String {
    std::env::var_os("LAB_BIN_DIR").map_or(built.to_string(), |dir| {
        Path::new(&dir).join(name).display().to_string()
    })
}

/// A file of the repository (`assignments/...`, `kernels/cuda/...`), from the current folder when it is
/// the repository root (gpu-bundle/run.sh runs there), else from cargo's tree (`manifest_dir/..`).
pub fn repository_file(relative: &str, manifest_dir: &str) -> String {
    let here = Path::new(relative);
    if here.exists() {
        here.display().to_string()
    } else {
        Path::new(manifest_dir).join("..").join(relative).display().to_string()
    }
}

/// `LAB --kernel-source FILE [extra] --check`, as a student runs it: `lab` and `built` as for
/// [`lab_binary`], `file` as for [`repository_file`].
pub fn check_kernel_source(lab: &str, built: &str, manifest_dir: &str, file: &str, extra: &[&str]) -> Outcome {
    check_kernel_source_with(lab, built, manifest_dir, file, extra, &[])
}

/// [`check_kernel_source`] with the variables `env` set too ([`run_with`]).
pub fn check_kernel_source_with(
    lab: &str,
    built: &str,
    manifest_dir: &str,
    file: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Outcome {
    check_source("--kernel-source", lab, built, (manifest_dir, file), extra, env)
}

/// `LAB --program-source FILE [extra] --check` (weeks 5 and 6), as [`check_kernel_source`].
pub fn check_program_source(lab: &str, built: &str, manifest_dir: &str, file: &str, extra: &[&str]) -> Outcome {
    check_program_source_with(lab, built, manifest_dir, file, extra, &[])
}

/// [`check_program_source`] with the variables `env` set too ([`run_with`]).
pub fn check_program_source_with(
    lab: &str,
    built: &str,
    manifest_dir: &str,
    file: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Outcome {
    check_source("--program-source", lab, built, (manifest_dir, file), extra, env)
}

/// `LAB FLAG FILE [extra] --check` with `env`, `file` as for [`repository_file`] from `manifest_dir`.
fn check_source(
    flag: &str,
    lab: &str,
    built: &str,
    (manifest_dir, file): (&str, &str),
    extra: &[&str],
    env: &[(&str, &str)],
) -> Outcome {
    let file = repository_file(file, manifest_dir);
    let mut args = vec![flag, file.as_str()];
    args.extend(extra);
    args.push("--check");
    run_with(Path::new("."), &lab_binary(lab, built), &args, env)
}

/// Issue 65, item 3: the check appended one line to the `LAB_PHASES` file `path`, which held
/// `before`: `NAME: ` (the checked file's name), each of `phases` timed, the wait for the GPU and the
/// whole check; and `run` printed none of it.
pub fn assert_phases_appended(path: &str, before: &str, name: &str, phases: &[&str], run: &Outcome) {
    let written = std::fs::read_to_string(path).unwrap_or_default();
    let line = written.strip_prefix(before).unwrap_or_default();
    let parts: Vec<String> = phases.iter().map(|phase| format!("{phase} ")).collect();
    assert!(
        line.lines().count() == 1
            && line.starts_with(&format!("{name}: "))
            && parts.iter().all(|part| line.contains(part.as_str()))
            && line.contains(" s, waited for the GPU ")
            && line.contains(" s, all "),
        "{written}"
    );
    assert!(
        !run.stderr.contains(", all ") && !run.stdout.contains(", all "),
        "{run:?}"
    );
}

/// Issue 60: every red-team program of `week` ([`adversaries`], at least `count`) meets what its
/// header's `// expect:` line promises, checked by `check` with `--show-output`: `refused: REASON`
/// (exit 1, REASON on stderr, nothing run), or a verdict (`FAIL`, `FAULT`) in the table of a run in
/// the box (exit 1), with the words of a `// reason:` line in it where the header has one (so that a
/// verdict reached some other way does not count). Nothing marked `FORGED` or `LEAKED` shows anywhere.
pub fn assert_red_team_fails(week: &str, manifest_dir: &str, count: usize, check: impl Fn(&str, &[&str]) -> Outcome) {
    let corpus = adversaries(week, manifest_dir);
    assert!(corpus.len() >= count, "{corpus:?}");
    for adversary in corpus {
        let file = &adversary.file;
        let outcome = check(file, &["--show-output"]);
        let everything = format!("{}{}", outcome.stdout, outcome.stderr);
        for marker in ["FORGED", "LEAKED"] {
            assert!(!everything.contains(marker), "{file}: {marker}\n{everything}");
        }
        assert_eq!(outcome.code, Some(1), "{file}: {outcome:?}");
        match adversary.expect.strip_prefix("refused: ") {
            Some(reason) => assert!(outcome.stderr.contains(reason), "{file}: {outcome:?}"),
            None => {
                let verdict = adversary.expect.split(',').next().unwrap_or(&adversary.expect);
                assert!(
                    outcome.stdout.contains(&format!("| {verdict} |")),
                    "{file}: {outcome:?}"
                );
                assert!(outcome.stdout.contains("\nsandbox: namespaces"), "{file}: {outcome:?}");
                if let Some(reason) = &adversary.reason {
                    assert!(outcome.stdout.contains(reason.as_str()), "{file}: {outcome:?}");
                }
            }
        }
        println!("{file}: {}", adversary.expect);
    }
}

/// The rows of a program's `--check` table (`| case | rule | measured | wants | verdict |`) for
/// `rule` whose verdict is `verdict`.
pub fn rule_rows<'a>(stdout: &'a str, rule: &str, verdict: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .filter(|line| line.contains(&format!(" | {rule} | ")) && line.ends_with(&format!("| {verdict} |")))
        .collect()
}

/// The row of a `--check` table whose case contains `case` (the first such), for asserting on it.
pub fn check_row<'a>(stdout: &'a str, case: &str) -> &'a str {
    stdout
        .lines()
        .find(|line| line.starts_with("| ") && line.contains(case))
        .unwrap_or_else(|| panic!("no row for {case:?} in\n{stdout}"))
}

/// The seed of a test's random legal cases (issue 66): `LAB_LEGAL_SEED` where set (to draw a failing
/// run's cases again), else the clock. The test prints it with any failure.
pub fn legal_seed() -> u64 {
    std::env::var("LAB_LEGAL_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |since| since.as_nanos() as u64)
        })
}

/// How many random legal cases a test draws per week: `LAB_LEGAL_CASES` where set (a few hundred for
/// a thorough run), else `default`, sized for the GPU tests' time.
pub fn legal_case_count(default: usize) -> usize {
    std::env::var("LAB_LEGAL_CASES")
        .ok()
        .and_then(|count| count.parse().ok())
        .unwrap_or(default)
}

/// A whole number from 1 to `max`, its logarithm uniform: small sizes as likely as large ones, which
/// is where the rules of a week change.
pub fn log_uniform(random: &mut crate::verify::Random, max: u64) -> u64 {
    let drawn = random.uniform(0.0, (max as f64).ln()).exp().round() as u64;
    drawn.clamp(1, max)
}

/// Issue 66: `count` case lines drawn by `draw` from a week's legal space, each kept only where the
/// lab accepts it (`lab --list-cases --cases` with that line alone exits with 0: the parser is the
/// legal space's definition), for [`assert_passes_cases`]. `lab_args` select the week (`--kernel tiled`).
pub fn legal_lines(lab: &str, lab_args: &[&str], count: usize, mut draw: impl FnMut() -> String) -> Vec<String> {
    let mut lines = Vec::new();
    let mut attempts = 0;
    while lines.len() < count {
        attempts += 1;
        let line = draw();
        assert!(
            attempts <= 100 * count,
            "{lab} refused nearly every drawn case, the last {line:?}"
        );
        let single = temp_file("legal-line.txt", &line);
        let mut args = lab_args.to_vec();
        args.extend(["--cases", single.as_str(), "--list-cases"]);
        if run(lab, &args).code == Some(0) {
            lines.push(line);
        }
    }
    lines
}

/// Issue 66's cases of the German products (`COUNT N SEED`, weeks 5 and 6) that nobody can overlap:
/// three tiny products, many of one element or of 16 x 16, two large ones.
pub const PRODUCT_CASES: [&str; 4] = ["3 7 1", "64 1 2", "64 16 3", "2 1000 4"];

/// A random case of the German products' legal space: N up to 1024 (the CPU's products take
/// seconds), COUNT up to 64 with COUNT x N x N within 2^27.
pub fn product_case(random: &mut crate::verify::Random) -> String {
    let side = log_uniform(random, 1024);
    let most = ((1u64 << 27) / (side * side)).min(64);
    format!("{} {side} {}", 1 + random.below(most), random.next_u64())
}

/// The case lines of a `--cases` file's text (a lab's `tests/corners.txt`): the lines that are
/// neither empty nor `#` comments.
pub fn case_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(String::from)
        .collect()
}

/// Issue 62: `lab [lab_args] --list-cases --cases FILE` accepts every line of `file` (a lab's
/// corners of its legal case space, which its GPU tests run with ours): the parser, the legal space's
/// definition, must not narrow below them unnoticed. No GPU needed.
pub fn assert_corners_are_legal(lab: &str, lab_args: &[&str], file: &str) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|err| panic!("{file}: {err}"));
    let mut args = lab_args.to_vec();
    args.extend(["--list-cases", "--cases", file]);
    let listed = run(lab, &args);
    let count = case_lines(&text).len();
    assert!(
        listed.code == Some(0) && count > 0 && listed.stdout.lines().count() > count,
        "{file}: {listed:?}"
    );
}

/// Runs `check` (a lab's `--kernel-source` or `--program-source FILE [flags] --check`) on our solution
/// `file` with `lines` as its cases and asserts that it passes, naming the seed they were drawn from
/// and the lines: issue 66's tests.
pub fn assert_passes_cases(
    seed: u64,
    file: &str,
    flags: &[&str],
    lines: &[String],
    check: impl Fn(&str, &[&str]) -> Outcome,
) -> Outcome {
    let cases = temp_file("legal-cases.txt", &lines.join("\n"));
    let mut flags = flags.to_vec();
    flags.extend(["--cases", cases.as_str()]);
    let ours = check(file, &flags);
    assert_eq!(
        ours.code,
        Some(0),
        "seed {seed}, {file}, cases {lines:?}:\n{}\n{}",
        ours.stdout,
        ours.stderr
    );
    println!("{file}: {} legal cases pass (seed {seed})", lines.len());
    ours
}

/// Issues 60, 61 and 66: every program of the honest corpus of `week` (`05-streams`,
/// `06-pinned-mapped`) passes `check` with every rule judged, on the week's own cases and on fixed
/// small ones: [`PRODUCT_CASES`] for the German program's files (named `mmm-*`, checked with
/// `mmm_flags`), `cases` for the others. (Fixed cases: the seed printed is 0.)
pub fn assert_honest_programs_pass(
    week: &str,
    manifest_dir: &str,
    mmm_flags: &[&str],
    cases: &[&str],
    check: impl Fn(&str, &[&str]) -> Outcome,
) {
    for file in honest_kernels(week, manifest_dir) {
        let mmm = file.rsplit('/').next().is_some_and(|name| name.starts_with("mmm-"));
        let (flags, cases): (&[&str], &[&str]) = if mmm { (mmm_flags, &PRODUCT_CASES) } else { (&[], cases) };
        let default = check(&file, flags);
        assert_eq!(default.code, Some(0), "{file}: {default:?}");
        assert!(
            !rule_rows(&default.stdout, "results", "PASS").is_empty(),
            "{file}: {}",
            default.stdout
        );
        let cases: Vec<String> = cases.iter().map(|case| case.to_string()).collect();
        assert_passes_cases(0, &file, flags, &cases, &check);
    }
}

/// Writes `text` to a fresh file `name` in a private temporary folder of this test process
/// ([`PrivateDir`]: no other account can guess or touch it) and returns its path.
pub fn temp_file(name: &str, text: &str) -> String {
    static DIR: OnceLock<PrivateDir> = OnceLock::new();
    let dir = DIR
        .get_or_init(|| PrivateDir::new("cuda-labs-test").unwrap_or_else(|err| panic!("{err:#}")))
        .path();
    let path = dir.join(name);
    fs::write(&path, text).unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
    path.display().to_string()
}

/// [`temp_file`], executable: a stand-in for a tool, written by the test that uses it.
pub fn temp_script(name: &str, text: &str) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let path = temp_file(name, text);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700))
        .unwrap_or_else(|err| panic!("cannot make {path} executable: {err}"));
    path
}

/// True where the NVIDIA kernel driver lists a GPU. (Device nodes are no sign: installing Debian's
/// libcuda1 creates /dev/nvidiactl on machines without any GPU.)
pub fn machine_has_gpu() -> bool {
    fs::read_dir("/proc/driver/nvidia/gpus").is_ok_and(|gpus| gpus.count() > 0)
}

/// Asserts what a lab run without flags does on this machine: without a GPU, the one-line
/// "no usable CUDA GPU" error; with one, a verified run. It runs in a fresh folder, where default
/// output files (tracer.png) find no file to refuse to overwrite.
pub fn assert_default_run_suits_this_machine(binary: &str, lab: &str) {
    let dir = std::env::temp_dir().join(format!("{lab}-default-run-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap_or_else(|err| panic!("cannot create {}: {err}", dir.display()));
    let outcome = run_in(&dir, binary, &[]);
    let _ = fs::remove_dir_all(&dir);
    if machine_has_gpu() {
        assert_eq!(outcome.code, Some(0), "{outcome:?}");
        assert!(outcome.stdout.contains("Result = PASS"), "{outcome:?}");
    } else {
        assert!(
            outcome.is_one_line_error(
                lab,
                "no usable CUDA GPU (this lab needs an NVIDIA GPU and its driver): CUDA_ERROR_"
            ),
            "{outcome:?}"
        );
        // The machine's state, said in the driver's words, not as a failed call in our source.
        assert!(!outcome.stderr.contains(" failed at "), "{outcome:?}");
    }
}

/// The value flags of a lab's `--help` (`--size`, `-n, --intervals`, ...), each with how many values
/// it takes at least and at most (`--size <N|M> [K] [N]`: 1 and 3).
fn value_flags(help: &str) -> Vec<(String, usize, usize)> {
    help.lines()
        .filter_map(|line| {
            let head: Vec<&str> = line.trim_start().split("  ").next()?.split_whitespace().collect();
            let flag = head.iter().find(|word| word.starts_with("--"))?.trim_end_matches(',');
            let required = head.iter().filter(|word| word.starts_with('<')).count();
            let optional = head.iter().filter(|word| word.starts_with('[')).count();
            (line.trim_start().starts_with('-') && required > 0 && !matches!(flag, "--help" | "--version"))
                .then(|| (flag.to_string(), required, required + optional))
        })
        .collect()
}

/// What users type where a number or a size belongs: the edges of u32 and u64 and past them, negative
/// numbers, units, floats, hex, nothing; then random u64s from `seed`.
fn awkward_values(seed: u64, random_count: usize) -> Vec<String> {
    let fixed = [
        "0",
        "1",
        "-1",
        "-5",
        "4294967295",
        "4294967296",
        "1152921504606846976",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999",
        "1e3",
        "1.5",
        "0x10",
        "NaN",
        "inf",
        "",
        " ",
        "1,2",
        "16KiB",
        "1GiB",
        "16EiB",
        "17179869184GiB",
        "4 KiB",
        "nonsense",
    ];
    let mut random = crate::verify::Random::new(seed);
    let random_values = (0..random_count)
        .map(|_| random.next_u64() >> random.below(64))
        .map(|value| value.to_string());
    fixed
        .iter()
        .map(|value| value.to_string())
        .chain(random_values)
        .collect()
}

/// `--as-printed` is one cold run, so it takes no `--repetitions`: together, clap's one-line error.
pub fn assert_as_printed_takes_no_repetitions(binary: &str, lab: &str) {
    let outcome = run(binary, &["--as-printed", "--repetitions", "3"]);
    assert!(
        outcome.is_one_line_error(lab, "'--as-printed' cannot be used with '--repetitions"),
        "{outcome:?}"
    );
}

/// The property of issue 26 (items 5 to 7) for every value flag in `lab`'s `--help`, each given every
/// [`awkward_values`] value, once or as many times as it takes: the run ends within 60 s, with exit
/// code 0 or one line `<lab>: error: ...` of at most 400 characters and exit code 1 (2 for a usage
/// error of the check's flags); never a panic
/// (an overflow included) or a usage dump. The GPU is hidden (`CUDA_VISIBLE_DEVICES` empty) and the run is in a
/// fresh private folder, so a value that is accepted stops at the no-GPU error on any machine and a
/// file flag given a number writes nothing here.
pub fn assert_every_value_flag_fails_cleanly(binary: &str, lab: &str) {
    let help = run(binary, &["--help"]);
    let flags = value_flags(&help.stdout);
    assert!(flags.len() >= 3, "{lab} --help lists only {flags:?}:\n{}", help.stdout);
    let dir = PrivateDir::new("cuda-labs-flags").unwrap_or_else(|err| panic!("{err:#}"));
    let mut runs: Vec<Vec<String>> = flags
        .iter()
        .flat_map(|(flag, least, most)| {
            let counts = if least == most {
                vec![*least]
            } else {
                vec![*least, *most]
            };
            counts.into_iter().flat_map(move |count| {
                awkward_values(crate::verify::Random::new(flag.len() as u64).next_u64(), 4)
                    .into_iter()
                    .map(move |value| {
                        std::iter::once(flag.clone())
                            .chain(std::iter::repeat_n(value, count))
                            .collect()
                    })
            })
        })
        .collect();
    runs.extend(flag_combinations(&flags, 128));
    let failures: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<_> = runs.chunks(runs.len().div_ceil(4)).collect();
        let workers: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(|| {
                    chunk
                        .iter()
                        .filter_map(|args| bad_ending(dir.path(), binary, lab, args))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("a checking thread panicked"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} runs of {lab} ended badly:\n{}",
        failures.len(),
        runs.len(),
        failures.join("\n")
    );
}

/// `count` runs with about half of `flags` each, every one given numbers that most flags accept (one
/// per value it takes: small, powers of two, u32's largest, random u32s), so that flags whose product
/// overflows (--size and --count) meet past the parser.
fn flag_combinations(flags: &[(String, usize, usize)], count: u64) -> Vec<Vec<String>> {
    let mut random = crate::verify::Random::new(count);
    let values: Vec<String> = [1, 2, 3, 16, 32, 64, 1024, 65_535, 1 << 24, u32::MAX]
        .into_iter()
        .chain((0..8).map(|_| (random.next_u64() as u32) >> random.below(32)))
        .map(|value| value.to_string())
        .collect();
    (0..count)
        .map(|_| {
            let mut args = Vec::new();
            for (flag, _, most) in flags {
                if random.below(2) == 0 {
                    continue;
                }
                args.push(flag.clone());
                args.extend((0..*most).map(|_| values[random.below(values.len() as u64) as usize].clone()));
            }
            args
        })
        .collect()
}

/// `None` if `binary args` ended as [`assert_every_value_flag_fails_cleanly`] requires, else what went
/// wrong.
fn bad_ending(dir: &Path, binary: &str, lab: &str, args: &[String]) -> Option<String> {
    let mut command = Command::new(binary);
    command
        .current_dir(dir)
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .env("RUST_BACKTRACE", "1");
    let outcome = match run_within(&mut command, Duration::from_secs(60)) {
        Ok(outcome) => outcome,
        Err(why) => return Some(format!("{args:?}: {why}")),
    };
    // On top of one line and no panic: short, and no panic caught by our hook ("internal error",
    // Rust's "attempt to multiply with overflow") or clap's usage.
    // Exit code 2 is a usage error of the check's flags (a `--cases` file that is a number).
    let one_line_error = (outcome.is_one_line_error(lab, "") || outcome.is_one_line_error_with(2, lab, ""))
        && outcome.stderr.len() <= 400
        && !["internal error", "attempt to", "Usage:"]
            .iter()
            .any(|word| outcome.stderr.contains(word));
    (!(outcome.code == Some(0) || one_line_error))
        .then(|| format!("{args:?}: exit {:?}, stderr {:?}", outcome.code, outcome.stderr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_past_its_limit_is_stopped_and_reported() {
        let started = Instant::now();
        let err = run_within(Command::new("sleep").arg("30"), Duration::from_millis(200)).unwrap_err();
        assert_eq!(err, "still running after 0.2 s; stopped");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn output_larger_than_a_pipe_is_read_whole() {
        let outcome = run_within(
            Command::new("sh").args(["-c", "head -c 300000 /dev/zero; echo done >&2; exit 3"]),
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(
            (outcome.code, outcome.stdout.len(), outcome.stderr.as_str()),
            (Some(3), 300000, "done\n")
        );
    }
}

/// The honest corpus of `week` (`assignments/<week>/honest/*.cu`, issue 61): correct kernels written
/// differently from ours, which every rule must pass; their paths, sorted, at least six.
pub fn honest_kernels(week: &str, manifest_dir: &str) -> Vec<String> {
    let files: Vec<String> = corpus_files(week, "honest", manifest_dir)
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    assert!(files.len() >= 6, "{week}: an honest corpus of {} kernels", files.len());
    files
}

/// The `.cu` files of `assignments/<week>/<folder>/`, sorted by name.
fn corpus_files(week: &str, folder: &str, manifest_dir: &str) -> Vec<PathBuf> {
    let folder = PathBuf::from(repository_file(&format!("assignments/{week}/{folder}"), manifest_dir));
    let mut files: Vec<PathBuf> = fs::read_dir(&folder)
        .unwrap_or_else(|err| panic!("{}: {err}", folder.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cu"))
        .collect();
    files.sort();
    files
}

/// One file of a week's red-team corpus (`assignments/<week>/adversarial/`, issues 39 and 60): its
/// path and the verdict its header promises (`// expect: ...`, `// why: ...`, and for a program the
/// words the verdict's table must hold, `// reason: ...`, where it says).
#[derive(Debug, Clone)]
pub struct Adversary {
    pub file: String,
    pub expect: String,
    pub why: String,
    pub reason: Option<String>,
}

impl Adversary {
    /// Whether the verdict needs no GPU: a compile error, or a rule read from what nvcc made.
    pub fn is_static(&self) -> bool {
        self.expect.starts_with("compile error")
            || self.expect.ends_with("(ptxas report)")
            || self.expect.ends_with("(PTX)")
    }
}

/// The corpus of `week` (`03-mmm-tiled`), sorted by file name; every file must say what it expects.
pub fn adversaries(week: &str, manifest_dir: &str) -> Vec<Adversary> {
    corpus_files(week, "adversarial", manifest_dir)
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            let field = |name: &str| {
                text.lines()
                    .find_map(|line| line.strip_prefix(name))
                    .map(str::trim)
                    .map(str::to_string)
            };
            let file = path.canonicalize().unwrap().display().to_string();
            let expect = field("// expect: ").unwrap_or_else(|| panic!("{file} has no `// expect:` line"));
            let why = field("// why: ").unwrap_or_else(|| panic!("{file} has no `// why:` line"));
            let reason = field("// reason: ");
            Adversary {
                file,
                expect,
                why,
                reason,
            }
        })
        .collect()
}

/// Runs `lab --kernel-source FILE extra --check` from the repository root (where the corpus's
/// includes point) and says how the verdict differs from the promised one, if it does.
pub fn verdict_of(
    adversary: &Adversary,
    lab: &str,
    built: &str,
    manifest_dir: &str,
    extra: &[&str],
) -> Result<(), String> {
    let root = Path::new(&repository_file("assignments", manifest_dir)).join("..");
    let mut args = vec!["--kernel-source", adversary.file.as_str()];
    args.extend(extra);
    args.push("--check");
    let outcome = run_in(&root, &lab_binary(lab, built), &args);
    let shown = || format!("{}: expected {}, got:\n{outcome:?}", adversary.file, adversary.expect);
    if let Some(needle) = adversary.expect.strip_prefix("compile error: ") {
        return (outcome.code != Some(0) && outcome.stderr.contains("error") && outcome.stderr.contains(needle))
            .then_some(())
            .ok_or_else(shown);
    }
    if adversary.expect == "PASS" {
        return (outcome.code == Some(0) && outcome.stdout.contains("Solution is correct"))
            .then_some(())
            .ok_or_else(shown);
    }
    let row = adversary.expect.strip_prefix("FAIL ").ok_or_else(|| {
        format!(
            "{}: `// expect: {}` is none of PASS, FAIL <row>, compile error: <words>",
            adversary.file, adversary.expect
        )
    })?;
    let found = outcome
        .stdout
        .lines()
        .find(|line| line.starts_with(&format!("| {row} |")));
    match found {
        Some(line) if line.contains("| FAIL |") && outcome.code != Some(0) => Ok(()),
        _ => Err(shown()),
    }
}

/// Runs every kernel of `week`'s red-team corpus ([`adversaries`]; with `only_static`, those whose
/// verdict needs no GPU, of which there must be some) through `lab --check` and asserts each verdict,
/// naming every kernel that got another.
pub fn assert_red_team(week: &str, lab: &str, built: &str, manifest_dir: &str, extra: &[&str], only_static: bool) {
    let corpus: Vec<Adversary> = adversaries(week, manifest_dir)
        .into_iter()
        .filter(|adversary| !only_static || adversary.is_static())
        .collect();
    assert!(!corpus.is_empty(), "{week}: no red-team kernel to run");
    let failures: Vec<String> = corpus
        .iter()
        .filter_map(|adversary| verdict_of(adversary, lab, built, manifest_dir, extra).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

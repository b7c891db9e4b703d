//! `--check --sanitize`: each case's child runs under NVIDIA's compute-sanitizer, and the first thing
//! it found becomes the case's verdict in one line. memcheck finds stores and loads outside any
//! allocation (a write past C that misses our guard zones), misaligned accesses and faults with the
//! thread that made them; racecheck finds shared-memory hazards (a missing `__syncthreads()` is
//! reported on every run, whatever the timing); synccheck finds barriers that not all threads reach.
//!
//! The report goes to a log file of its own (`--log-file`), never mixed with the kernel's `printf`.
//!
//! It fails closed (issue 39): a run counts as clean only when it ran to its end and its report
//! ends in the tool's own summary that counts no error. A run without a report or a summary, with a
//! summary we cannot read, with the tool's own error line, or with an exit code compute-sanitizer
//! does not give is a FAULT with one line that says which ([`verdict`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The exit code compute-sanitizer gives when it found an error (`--error-exitcode`); any code the
/// lab does not use would do ([`LAB_EXIT_CODES`]), since the log is read either way.
pub const ERROR_EXIT_CODE: i32 = 86;

/// Where to look, said in the error when it is nowhere.
pub const WHERE_WE_LOOK: &str = "looked at COMPUTE_SANITIZER, $CUDA_PATH/bin, /usr/local/cuda/bin, PATH and .toolchain/cuda/bin; it comes with the CUDA toolkit";

/// One compute-sanitizer tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Memcheck,
    Racecheck,
    Synccheck,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Memcheck => "memcheck",
            Tool::Racecheck => "racecheck",
            Tool::Synccheck => "synccheck",
        }
    }

    /// memcheck always; racecheck and synccheck where the student's kernels use shared memory or
    /// barriers (the ptxas report says so), since they find nothing elsewhere and are the slow ones.
    pub fn for_kernels(uses_shared_memory_or_barriers: bool) -> Vec<Tool> {
        if uses_shared_memory_or_barriers {
            vec![Tool::Memcheck, Tool::Racecheck, Tool::Synccheck]
        } else {
            vec![Tool::Memcheck]
        }
    }
}

/// compute-sanitizer, found as nvcc is: `COMPUTE_SANITIZER`, `$CUDA_PATH/bin`, `/usr/local/cuda/bin`,
/// `PATH`, and `<repository>/.toolchain/cuda/bin`.
pub fn find() -> Option<PathBuf> {
    kernels::nvcc::find_tool(
        "compute-sanitizer",
        "COMPUTE_SANITIZER",
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels"),
    )
}

/// The arguments before the program: the tool, its report into `log`, and our exit code on errors.
pub fn arguments(tool: Tool, log: &Path) -> Vec<OsString> {
    let words = [
        "--tool",
        tool.name(),
        "--error-exitcode",
        &ERROR_EXIT_CODE.to_string(),
        "--log-file",
    ]
    .map(OsString::from);
    words.into_iter().chain([log.as_os_str().to_owned()]).collect()
}

/// The lab's own exit codes, which compute-sanitizer passes on when it found no error: 1 for an error
/// (`cli::run_lab`), 101 for a panic (Rust's). With 0 and [`ERROR_EXIT_CODE`] these are the only
/// codes a case's run under compute-sanitizer ends with; any other is the machine's (the tool's own).
pub const LAB_EXIT_CODES: [i32; 2] = [1, 101];

/// The most characters of a report's line that a verdict quotes.
const QUOTED_CHARS: usize = 120;

/// How a case's run under compute-sanitizer ended, as the parent saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Exit code 0, and the case's row was taken: the program ran to its end, and the tool found nothing.
    Finished,
    /// Exit code [`ERROR_EXIT_CODE`], and the case's row was taken: the tool says it found errors, so
    /// its report must show them.
    FinishedWithErrors,
    /// Any other exit code; no row was taken.
    Exited(i32),
    /// No exit code: killed by a signal, stopped at its limits, never started, or its row unreadable.
    Stopped,
}

impl Ending {
    /// From the case's result and exit code: a row means [`Ending::Finished`] or, after
    /// [`ERROR_EXIT_CODE`], [`Ending::FinishedWithErrors`] (the case's process takes one only after exit
    /// code 0 or that); a fault that ends in `(exit status: N)`, which it adds for any other code,
    /// [`Ending::Exited`]; any other fault [`Ending::Stopped`].
    pub fn of<T>(result: &Result<T, crate::row::NoResult>, exit: Option<i32>) -> Ending {
        match result {
            Ok(_) if exit == Some(ERROR_EXIT_CODE) => Ending::FinishedWithErrors,
            Ok(_) => Ending::Finished,
            Err(fault) => exit_code_in(fault.why()).map_or(Ending::Stopped, Ending::Exited),
        }
    }
}

/// `N` of a fault that ends in `(exit status: N)` (`ExitStatus`'s words).
fn exit_code_in(fault: &str) -> Option<i32> {
    fault.strip_suffix(')')?.rsplit_once("(exit status: ")?.1.parse().ok()
}

/// What one run under compute-sanitizer came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The tool's summary counts no error; for a run that died (no row), the report adds nothing to
    /// the case's own fault.
    Clean,
    /// The first error the tool found, in one line: it fails the case.
    Found(String),
    /// The tool itself failed, and why in one line: MACHINE (issue 60), never a pass and never the
    /// student's FAULT. The tool's target is always the lab's own case child (the program weeks run
    /// no sanitizer), whose exit codes and calls are ours, and a kernel's `printf` goes to stdout,
    /// not to the tool's log; grade.sh has run our own solution through the same tool first.
    Machine(String),
}

/// The verdict on one run of `tool`, from how it ended and its report (`None`: it wrote none). It
/// fails closed: a run is clean only where it finished and its report has the tool's summary
/// (`ERROR SUMMARY: 0 errors`; racecheck's `RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0
/// warnings)`) and nothing else wrong.
///
/// - The first error in the report is the verdict, however the run ended: what, in which kernel,
///   which block and thread where the report says, and where relative to the nearest allocation.
///   Warnings (a racecheck hazard between writes of the same value) are not errors. A summary that
///   counts errors without showing one is the verdict too.
/// - An exit code neither compute-sanitizer (0, [`ERROR_EXIT_CODE`]) nor the lab
///   ([`LAB_EXIT_CODES`]) gives is the machine's.
/// - A finished run without a report, without the tool's summary, with a summary we cannot read,
///   or with the tool's own error line (`Error: ...`, `Target application returned an error`) is the
///   machine's.
pub fn verdict(tool: Tool, ending: Ending, report: Option<&str>) -> Verdict {
    let lines: Vec<&str> = report
        .map(|report| report.lines().map(strip_prefix).collect())
        .unwrap_or_default();
    if let Some(found) = first_error(&lines) {
        return Verdict::Found(format!("{}: {found}", tool.name()));
    }
    let machine = |why: String| Verdict::Machine(format!("{}: {why}", tool.name()));
    let summary = summary_errors(tool, &lines);
    let counted = |errors: u64| {
        Verdict::Found(format!(
            "{}: {errors} error{} (nothing more in its report)",
            tool.name(),
            if errors == 1 { "" } else { "s" }
        ))
    };
    match ending {
        Ending::Exited(code) if !LAB_EXIT_CODES.contains(&code) => {
            let said = tool_error(&lines).map_or(String::new(), |line| format!(" ({})", quoted(line)));
            return machine(format!(
                "compute-sanitizer exited with code {code}, which it does not use{said}"
            ));
        }
        // The case died of a fault of its own, which stands unless the summary counted errors.
        Ending::Exited(_) | Ending::Stopped => {
            return match summary {
                Ok(errors) if errors > 0 => counted(errors),
                _ => Verdict::Clean,
            }
        }
        Ending::Finished | Ending::FinishedWithErrors => {}
    }
    if report.is_none() {
        return machine("compute-sanitizer wrote no report".to_string());
    }
    match (summary, tool_error(&lines)) {
        (Ok(errors), _) if errors > 0 => counted(errors),
        (_, Some(line)) => machine(format!("compute-sanitizer said {}", quoted(line))),
        (Ok(_), None) if ending == Ending::FinishedWithErrors => machine(format!(
            "compute-sanitizer exited with code {ERROR_EXIT_CODE} (errors found), but its report counts none"
        )),
        (Ok(_), None) => Verdict::Clean,
        (Err(why), None) => machine(why),
    }
}

/// The first error in a report's lines (prefix stripped), in one line without the tool's name.
fn first_error(lines: &[&str]) -> Option<String> {
    for (index, line) in lines.iter().enumerate() {
        let next = &lines[index + 1..lines.len().min(index + 8)];
        let found =
            if line.starts_with("Invalid ") || line.starts_with("Misaligned ") || line.starts_with("Out-of-range ") {
                Some(memory_error(line, next))
            } else if let Some(race) = line.strip_prefix("Error: Race reported between ") {
                Some(race_error(race, next))
            } else if line.starts_with("ERROR: Potential ") && line.contains(" hazard detected") {
                Some(format!(
                    "shared-memory hazard: {}",
                    line.trim_start_matches("ERROR: ").trim_end_matches(':').trim()
                ))
            } else if line.starts_with("Barrier error detected") {
                Some(barrier_error(line, next))
            } else if line.starts_with("Program hit ") {
                Some(format!(
                    "a CUDA call failed: {}",
                    line.trim_start_matches("Program hit ").trim_end_matches('.')
                ))
            } else {
                None
            };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The errors the summary lines count, over all of them: `ERROR SUMMARY: 2 errors` (every tool) and
/// `RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)`. The tool's own summary must be
/// there (racecheck's may be either); else, or where a summary line does not read as one, why not.
fn summary_errors(tool: Tool, lines: &[&str]) -> Result<u64, String> {
    let (mut total, mut the_tools) = (0, false);
    for line in lines {
        let (errors, of_the_tool) = if let Some(rest) = line.strip_prefix("ERROR SUMMARY:") {
            (error_count(rest), true)
        } else if let Some(rest) = line.strip_prefix("RACECHECK SUMMARY:") {
            (racecheck_errors(rest), tool == Tool::Racecheck)
        } else {
            continue;
        };
        total += errors.ok_or_else(|| format!("compute-sanitizer's summary could not be read: {}", quoted(line)))?;
        the_tools |= of_the_tool;
    }
    if !the_tools {
        let end = match lines.iter().rev().find(|line| !line.is_empty()) {
            Some(last) => format!("its report ends with {}", quoted(last)),
            None => "its report is empty".to_string(),
        };
        return Err(format!("compute-sanitizer gave no summary ({end})"));
    }
    Ok(total)
}

/// ` 2 errors` (or ` 1 error`) -> 2.
fn error_count(text: &str) -> Option<u64> {
    let mut words = text.split_whitespace();
    let count = words.next()?.parse().ok()?;
    matches!(words.next()?, "error" | "errors").then_some(count)
}

/// ` 1 hazard displayed (1 error, 0 warnings)` -> 1.
fn racecheck_errors(text: &str) -> Option<u64> {
    let (hazards, counts) = text.split_once('(')?;
    let mut words = hazards.split_whitespace();
    words.next()?.parse::<u64>().ok()?;
    matches!(words.next()?, "hazard" | "hazards").then_some(())?;
    error_count(counts.split_once(',')?.0)
}

/// compute-sanitizer's own line that the run went wrong: `Error: ...` (no attachable process, a target
/// that ended before its first CUDA call or did not terminate), an internal error, `Target application
/// returned an error`. Looked for only where [`first_error`] found no error of the program's.
fn tool_error<'a>(lines: &[&'a str]) -> Option<&'a str> {
    lines.iter().copied().find(|line| {
        line.starts_with("Error") || line.starts_with("Internal") || line.starts_with("Target application")
    })
}

/// A report's line in quotes, cut to [`QUOTED_CHARS`] characters.
fn quoted(line: &str) -> String {
    match line.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("\"{}...\"", &line[..cut]),
        None => format!("\"{line}\""),
    }
}

/// Whether the kernels of a student's image use shared memory or barriers, where racecheck and
/// synccheck have something to look at: any function of its ptxas `report` (every kernel of the
/// image, not only those the lab launches: week 7's masters launch `workers<F>`, whose shared memory
/// and barriers count as much) with `smem` or a barrier, or, where the `ptx` was kept, any access to
/// or declaration of shared memory (dynamic shared memory, `extern __shared__`, is in no `smem`) or any
/// barrier instruction in it.
pub fn uses_shared_memory_or_barriers(report: &kernels::ptxas::Report, ptx: Option<&str>) -> bool {
    let in_report = report
        .functions
        .iter()
        .any(|f| f.shared_bytes > 0 || f.barriers.unwrap_or(0) > 0);
    let in_ptx = |ptx: &str| {
        ptx.lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .any(|code| {
                code.contains(".shared")
                    || code
                        .split_whitespace()
                        .any(|word| word.starts_with("bar.") || word.starts_with("barrier."))
            })
    };
    in_report || ptx.is_some_and(in_ptx)
}

/// The line without compute-sanitizer's `========= ` prefix and indentation.
fn strip_prefix(line: &str) -> &str {
    line.trim_start_matches('=').trim()
}

/// `Invalid __global__ write of size 8 bytes in mmm_f64, block (0,0,0), thread (0,0,0): 321 bytes
/// after the nearest allocation (of size 8,000 bytes)`.
fn memory_error(what: &str, next: &[&str]) -> String {
    let mut found = what.to_string();
    if let Some(kernel) = next.iter().find_map(|line| kernel_at(line)) {
        found.push_str(&format!(" in {kernel}"));
    }
    if let Some((thread, block)) = next.iter().find_map(|line| thread_and_block(line)) {
        found.push_str(&format!(", block {block}, thread {thread}"));
    }
    if let Some(place) = next.iter().find_map(|line| line.strip_prefix("and is ")) {
        let place = match place.split_once(" at 0x") {
            Some((relation, rest)) => format!(
                "{relation}{}",
                rest.split_once(" of size ")
                    .map_or(String::new(), |(_, size)| format!(" (of size {size})"))
            ),
            None => place.to_string(),
        };
        found.push_str(&format!(": {place}"));
    } else if let Some(address) = next
        .iter()
        .find(|line| line.ends_with("is out of bounds") || line.contains("is misaligned"))
    {
        found.push_str(&format!(": {address}"));
    }
    found
}

/// `shared-memory hazard in mmm_f64: a Write access and a Read access race (6144 hazards)`.
fn race_error(first: &str, next: &[&str]) -> String {
    let access = |text: &str| text.split(" at ").next().unwrap_or(text).trim().to_string();
    let kernel = first.split_once(" at ").and_then(|(_, place)| kernel_name(place));
    let second = next.iter().find_map(|line| line.strip_prefix("and "));
    let count = second
        .and_then(|line| line.rsplit_once('['))
        .map(|(_, count)| count.trim_end_matches(']').to_string());
    let mut found = "shared-memory hazard".to_string();
    if let Some(kernel) = kernel {
        found.push_str(&format!(" in {kernel}"));
    }
    found.push_str(&format!(": a {}", access(first)));
    if let Some(second) = second {
        found.push_str(&format!(" and a {} race", access(second)));
    }
    if let Some(count) = count {
        found.push_str(&format!(" ({count})"));
    }
    found
}

/// `barrier divergence (Divergent thread(s) in block) in k, block (0,0,0), thread (0,0,0)`.
fn barrier_error(line: &str, next: &[&str]) -> String {
    let what = line
        .trim_start_matches("Barrier error detected")
        .trim_start_matches('.')
        .trim()
        .trim_end_matches('.');
    let mut found = if what.is_empty() {
        "barrier divergence".to_string()
    } else {
        format!("barrier divergence ({what})")
    };
    if let Some(kernel) = next.iter().find_map(|line| kernel_at(line)) {
        found.push_str(&format!(" in {kernel}"));
    }
    if let Some((thread, block)) = next.iter().find_map(|line| thread_and_block(line)) {
        found.push_str(&format!(", block {block}, thread {thread}"));
    }
    found
}

/// The kernel of an `at ...` line: `at mmm_f64(MatrixView<double>, ...)+0x1b0 in mmm.cu:40` (today's
/// format) or `at 0x1b8 in kernel(float *, float *)` (older ones).
fn kernel_at(line: &str) -> Option<String> {
    let place = line.strip_prefix("at ")?;
    if place.starts_with("0x") {
        kernel_name(place.split_once(" in ")?.1)
    } else {
        kernel_name(place)
    }
}

/// `mmm_f64(MatrixView<double>, ...)+0x1b0 in mmm.cu:40` -> `mmm_f64`.
fn kernel_name(place: &str) -> Option<String> {
    let end = place.find(['(', '+', ' ']).unwrap_or(place.len());
    let name = place[..end].trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// `by thread (31,0,0) in block (4,0,0)` -> (`(31,0,0)`, `(4,0,0)`).
fn thread_and_block(line: &str) -> Option<(String, String)> {
    let (thread, block) = line.strip_prefix("by thread ")?.split_once(" in block ")?;
    Some((thread.trim().to_string(), block.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::NoResult;

    // Reports as compute-sanitizer 2024-2025 prints them (the layout of NVIDIA's documentation and of
    // public logs), with our kernels' names.
    const MEMCHECK: &str = "\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 8 bytes
=========     at mmm_f64(MatrixView<double>, MatrixView<double>, MatrixView<double>)+0x1b0 in mmm.cu:40
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7f1a2b000141 is out of bounds
=========     and is 321 bytes after the nearest allocation at 0x7f1a2b000000 of size 8,000 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2ea231] in libcuda.so.1
=========
========= Program hit CUDA_ERROR_LAUNCH_FAILED (error 719) due to \"unspecified launch failure\" on CUDA API call to cuStreamSynchronize.
========= ERROR SUMMARY: 2 errors
";

    const OLD_MEMCHECK: &str = "\
========= Invalid __global__ read of size 4 bytes
=========     at 0x1b8 in kernel(float *, float *)
=========     by thread (31,0,0) in block (0,0,0)
=========     Address 0x7f7a4e000000 is out of bounds
========= ERROR SUMMARY: 1 error
";

    const RACECHECK: &str = "\
========= COMPUTE-SANITIZER
========= Warning: Race reported between Write access at mmm_f32(MatrixView<float>, MatrixView<float>, MatrixView<float>)+0x100 in mmm.cu:61
=========     and Write access at mmm_f32(MatrixView<float>, MatrixView<float>, MatrixView<float>)+0x100 in mmm.cu:61 [4 hazards]
========= Error: Race reported between Write access at mmm_f64(MatrixView<double>, MatrixView<double>, MatrixView<double>)+0x278 in mmm.cu:60
=========     and Read access at mmm_f64(MatrixView<double>, MatrixView<double>, MatrixView<double>)+0x298 in mmm.cu:66 [6144 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
";

    const SYNCCHECK: &str = "\
========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in block.
=========     at mmm_f64(MatrixView<double>, MatrixView<double>, MatrixView<double>)+0xb0 in mmm.cu:20
=========     by thread (0,0,0) in block (1,0,0)
========= ERROR SUMMARY: 16 errors
";

    const CLEAN: &str = "\
========= COMPUTE-SANITIZER
========= ERROR SUMMARY: 0 errors
";

    const CLEAN_RACECHECK: &str = "\
========= COMPUTE-SANITIZER
========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)
";

    /// The verdict on a run that finished (exit code 0 or ours for errors, its row taken).
    fn finished(tool: Tool, report: &str) -> Verdict {
        verdict(tool, Ending::Finished, Some(report))
    }

    fn found(text: &str) -> Verdict {
        Verdict::Found(text.to_string())
    }

    fn machine(text: &str) -> Verdict {
        Verdict::Machine(text.to_string())
    }

    #[test]
    fn a_write_past_the_allocation_says_what_where_and_who() {
        assert_eq!(
            finished(Tool::Memcheck, MEMCHECK),
            found("memcheck: Invalid __global__ write of size 8 bytes in mmm_f64, block (0,0,0), thread (0,0,0): 321 bytes after the nearest allocation (of size 8,000 bytes)")
        );
        assert_eq!(
            finished(Tool::Memcheck, OLD_MEMCHECK),
            found("memcheck: Invalid __global__ read of size 4 bytes in kernel, block (0,0,0), thread (31,0,0): Address 0x7f7a4e000000 is out of bounds")
        );
    }

    #[test]
    fn a_race_is_the_first_error_not_a_warning() {
        assert_eq!(
            finished(Tool::Racecheck, RACECHECK),
            found("racecheck: shared-memory hazard in mmm_f64: a Write access and a Read access race (6144 hazards)")
        );
        let only_warnings = RACECHECK.lines().take(3).collect::<Vec<_>>().join("\n")
            + "\n========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n";
        assert_eq!(finished(Tool::Racecheck, &only_warnings), Verdict::Clean);
        let hazard = "========= ERROR: Potential WAR hazard detected at __shared__ 0x8 in block (0, 0, 0) :\n";
        assert_eq!(
            finished(Tool::Racecheck, hazard),
            found(
                "racecheck: shared-memory hazard: Potential WAR hazard detected at __shared__ 0x8 in block (0, 0, 0)"
            )
        );
    }

    #[test]
    fn a_divergent_barrier_names_the_block() {
        assert_eq!(finished(Tool::Synccheck, SYNCCHECK), found("synccheck: barrier divergence (Divergent thread(s) in block) in mmm_f64, block (1,0,0), thread (0,0,0)"));
    }

    #[test]
    fn a_clean_summary_is_clean_and_a_bare_count_is_still_an_error() {
        assert_eq!(finished(Tool::Memcheck, CLEAN), Verdict::Clean);
        assert_eq!(finished(Tool::Synccheck, CLEAN), Verdict::Clean);
        assert_eq!(finished(Tool::Racecheck, CLEAN_RACECHECK), Verdict::Clean);
        assert_eq!(
            finished(Tool::Racecheck, CLEAN),
            Verdict::Clean,
            "racecheck's summary may be an ERROR SUMMARY"
        );
        assert_eq!(
            finished(Tool::Memcheck, "========= ERROR SUMMARY: 3 errors\n"),
            found("memcheck: 3 errors (nothing more in its report)")
        );
        assert_eq!(
            finished(Tool::Memcheck, "========= ERROR SUMMARY: 1 error\n"),
            found("memcheck: 1 error (nothing more in its report)")
        );
        assert_eq!(
            finished(
                Tool::Racecheck,
                "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n"
            ),
            found("racecheck: 2 errors (nothing more in its report)")
        );
        assert_eq!(
            finished(Tool::Memcheck, "========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuFuncGetParamInfo.\n"),
            found("memcheck: a CUDA call failed: CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuFuncGetParamInfo")
        );
    }

    #[test]
    fn a_run_without_the_tools_summary_is_the_machines_not_a_pass() {
        // Cut short before the summary (the tool was killed, the disk was full): no error shown, no pass.
        let truncated = "========= COMPUTE-SANITIZER\n=========     Saved host backtrace up to driver entry point at kernel launch time\n";
        assert_eq!(
            finished(Tool::Memcheck, truncated),
            machine("memcheck: compute-sanitizer gave no summary (its report ends with \"Saved host backtrace up to driver entry point at kernel launch time\")")
        );
        assert_eq!(
            finished(Tool::Memcheck, ""),
            machine("memcheck: compute-sanitizer gave no summary (its report is empty)")
        );
        assert_eq!(
            verdict(Tool::Memcheck, Ending::Finished, None),
            machine("memcheck: compute-sanitizer wrote no report")
        );
        // Cut short after an error: the error is the verdict.
        let cut_after_an_error: String = MEMCHECK.lines().take(4).map(|line| format!("{line}\n")).collect();
        assert!(
            matches!(finished(Tool::Memcheck, &cut_after_an_error), Verdict::Found(f) if f.starts_with("memcheck: Invalid __global__ write of size 8 bytes in mmm_f64"))
        );
        // Another tool's summary is not this tool's.
        assert_eq!(
            finished(Tool::Memcheck, CLEAN_RACECHECK),
            machine("memcheck: compute-sanitizer gave no summary (its report ends with \"RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\")")
        );
    }

    #[test]
    fn garbage_or_a_summary_we_cannot_read_is_the_machines() {
        let garbage = "\u{7f}ELF\u{2}\u{1}\u{1}\nsegment 0x1000\n";
        assert_eq!(
            finished(Tool::Memcheck, garbage),
            machine("memcheck: compute-sanitizer gave no summary (its report ends with \"segment 0x1000\")")
        );
        for (tool, summary) in [
            (Tool::Memcheck, "ERROR SUMMARY: lots of errors"),
            (Tool::Memcheck, "ERROR SUMMARY: 0"),
            (Tool::Memcheck, "ERROR SUMMARY: -1 errors"),
            (Tool::Synccheck, "ERROR SUMMARY: 0 warnings"),
            (Tool::Racecheck, "RACECHECK SUMMARY: 0 hazards displayed"),
            (Tool::Racecheck, "RACECHECK SUMMARY: 0 hazards displayed (none)"),
        ] {
            let report = format!("========= COMPUTE-SANITIZER\n========= {summary}\n");
            assert_eq!(
                finished(tool, &report),
                Verdict::Machine(format!(
                    "{}: compute-sanitizer's summary could not be read: \"{summary}\"",
                    tool.name()
                )),
                "{summary}"
            );
        }
        // A clean summary does not make up for an unreadable one beside it.
        let both = format!("{CLEAN}========= ERROR SUMMARY: ? errors\n");
        assert!(matches!(finished(Tool::Memcheck, &both), Verdict::Machine(_)));
        let long = format!("========= {}\n", "x".repeat(500));
        let Verdict::Machine(why) = finished(Tool::Memcheck, &long) else {
            panic!("garbage passed")
        };
        assert!(why.ends_with(&format!("\"{}...\")", "x".repeat(120))), "{why}");
    }

    #[test]
    fn the_tools_own_error_is_the_machines() {
        let returned = format!("========= Target application returned an error\n{CLEAN}");
        assert_eq!(
            finished(Tool::Memcheck, &returned),
            machine("memcheck: compute-sanitizer said \"Target application returned an error\"")
        );
        let no_process = "========= Error: No attachable process found. compute-sanitizer timed-out.\n========= ERROR SUMMARY: 0 errors\n";
        assert_eq!(finished(Tool::Racecheck, no_process), machine("racecheck: compute-sanitizer said \"Error: No attachable process found. compute-sanitizer timed-out.\""));
        // Errors counted beside it are the verdict: a finding says more than the tool's complaint.
        let counted = "========= Target application returned an error\n========= ERROR SUMMARY: 2 errors\n";
        assert_eq!(
            finished(Tool::Memcheck, counted),
            found("memcheck: 2 errors (nothing more in its report)")
        );
    }

    #[test]
    fn an_exit_code_compute_sanitizer_does_not_use_is_the_machines() {
        assert_eq!(
            verdict(Tool::Memcheck, Ending::Exited(7), Some(CLEAN)),
            machine("memcheck: compute-sanitizer exited with code 7, which it does not use")
        );
        assert_eq!(
            verdict(Tool::Synccheck, Ending::Exited(255), None),
            machine("synccheck: compute-sanitizer exited with code 255, which it does not use")
        );
        let said = "========= Error: Target application terminated before first instrumented API call\n";
        assert_eq!(
            verdict(Tool::Memcheck, Ending::Exited(2), Some(said)),
            machine("memcheck: compute-sanitizer exited with code 2, which it does not use (\"Error: Target application terminated before first instrumented API call\")")
        );
        // A finding still explains the run.
        assert!(matches!(
            verdict(Tool::Memcheck, Ending::Exited(9), Some(MEMCHECK)),
            Verdict::Found(_)
        ));
        // The lab's own failure (1, or 101 for a panic), or a run stopped at its limits: the case's own
        // fault stands, unless the report counted errors.
        for ending in [Ending::Exited(1), Ending::Exited(101), Ending::Stopped] {
            assert_eq!(
                verdict(Tool::Memcheck, ending, Some(CLEAN)),
                Verdict::Clean,
                "{ending:?}"
            );
            assert_eq!(verdict(Tool::Memcheck, ending, None), Verdict::Clean, "{ending:?}");
            assert_eq!(
                verdict(Tool::Memcheck, ending, Some("========= ERROR SUMMARY: 4 errors\n")),
                found("memcheck: 4 errors (nothing more in its report)"),
                "{ending:?}"
            );
        }
    }

    #[test]
    fn how_a_run_ended_is_read_from_the_cases_result() {
        use std::os::unix::process::ExitStatusExt as _;
        use std::process::ExitStatus;
        // As the case's process words a fault for an exit code it takes no row after.
        let exited = |status: ExitStatus| {
            Ending::of::<()>(&Err(format!("lab-mmm: error: no GPU ({status})").into()), status.code())
        };
        assert_eq!(exited(ExitStatus::from_raw(7 << 8)), Ending::Exited(7));
        assert_eq!(exited(ExitStatus::from_raw(1 << 8)), Ending::Exited(1));
        assert_eq!(exited(ExitStatus::from_raw(9)), Ending::Stopped, "killed by SIGKILL");
        assert_eq!(
            Ending::of::<()>(&Err("still running after 600 s; stopped".into()), None),
            Ending::Stopped
        );
        assert_eq!(Ending::of(&Ok::<(), NoResult>(()), Some(0)), Ending::Finished);
        assert_eq!(
            Ending::of(&Ok::<(), NoResult>(()), Some(ERROR_EXIT_CODE)),
            Ending::FinishedWithErrors
        );
        // Issue 39: the tool said it found errors, and its report counts none: never a pass.
        let clean = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n";
        assert_eq!(verdict(Tool::Memcheck, Ending::Finished, Some(clean)), Verdict::Clean);
        assert_eq!(
            verdict(Tool::Memcheck, Ending::FinishedWithErrors, Some(clean)),
            Verdict::Machine(format!("memcheck: compute-sanitizer exited with code {ERROR_EXIT_CODE} (errors found), but its report counts none"))
        );
    }

    #[test]
    fn tools_follow_the_kernels() {
        assert_eq!(Tool::for_kernels(false), [Tool::Memcheck]);
        assert_eq!(
            Tool::for_kernels(true),
            [Tool::Memcheck, Tool::Racecheck, Tool::Synccheck]
        );
        assert_eq!(
            arguments(Tool::Racecheck, Path::new("/p/log"))[..2],
            ["--tool", "racecheck"]
        );
    }

    #[test]
    fn shared_memory_or_a_barrier_in_any_kernel_or_in_the_ptx_counts() {
        let report = |text: &str| kernels::ptxas::Report::parse(text).unwrap();
        let kernel = |name: &str, usage: &str| {
            format!("ptxas info    : Compiling entry function '{name}' for 'sm_90'\nptxas info    : Used 40 registers, {usage}\n")
        };
        let master = kernel("adaptive_master_pi", "used 0 barriers");
        let quiet = report(&(master.clone() + &kernel("_Z7workersI4SineEvdddddiiP5Tally", "used 0 barriers")));
        assert!(!uses_shared_memory_or_barriers(&quiet, None));
        assert!(!uses_shared_memory_or_barriers(
            &quiet,
            Some(".visible .entry adaptive_master_pi(\n{\n\tld.param.f64 \t%fd1, [p];\n\tret;\n}\n")
        ));
        assert!(uses_shared_memory_or_barriers(
            &report(&(master.clone() + &kernel("_Z7workersI4SineEvdddddiiP5Tally", "used 1 barriers"))),
            None
        ));
        assert!(uses_shared_memory_or_barriers(
            &report(&(master.clone() + &kernel("_Z7workersI4SineEvdddddiiP5Tally", "used 0 barriers, 16 bytes smem"))),
            None
        ));
        // Dynamic shared memory is in no smem; a barrier behind a predicate; a comment is no code.
        assert!(uses_shared_memory_or_barriers(
            &quiet,
            Some(".extern .shared .align 16 .b8 buffer[];\n")
        ));
        assert!(uses_shared_memory_or_barriers(&quiet, Some("\t@%p1 bar.sync \t0;\n")));
        assert!(!uses_shared_memory_or_barriers(
            &quiet,
            Some("\t// no .shared here, nor bar.sync\n")
        ));
    }
}

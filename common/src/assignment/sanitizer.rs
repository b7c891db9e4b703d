//! `--check --sanitize`: each case's child runs under NVIDIA's compute-sanitizer, and the first thing
//! it found becomes the case's verdict in one line. memcheck finds stores and loads outside any
//! allocation (a write past C that misses our guard zones), misaligned accesses and faults with the
//! thread that made them; racecheck finds shared-memory hazards (a missing `__syncthreads()` is
//! reported on every run, whatever the timing); synccheck finds barriers that not all threads reach.
//!
//! The report goes to a log file of its own (`--log-file`), never mixed with the kernel's `printf`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The exit code compute-sanitizer gives when it found an error (`--error-exitcode`); any code
/// would do, since the log is read either way.
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
    kernels::nvcc::find_tool("compute-sanitizer", "COMPUTE_SANITIZER", &Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels"))
}

/// The arguments before the program: the tool, its report into `log`, and our exit code on errors.
pub fn arguments(tool: Tool, log: &Path) -> Vec<OsString> {
    let words = ["--tool", tool.name(), "--error-exitcode", &ERROR_EXIT_CODE.to_string(), "--log-file"].map(OsString::from);
    words.into_iter().chain([log.as_os_str().to_owned()]).collect()
}

/// The first error in a compute-sanitizer report, in one line: what, in which kernel, which block
/// and thread where the report says, and where relative to the nearest allocation. Warnings (a
/// racecheck hazard between writes of the same value) are not errors. `None` if it found nothing.
pub fn first_finding(tool: Tool, report: &str) -> Option<String> {
    let lines: Vec<&str> = report.lines().map(strip_prefix).collect();
    for (index, line) in lines.iter().enumerate() {
        let next = &lines[index + 1..lines.len().min(index + 8)];
        let found = if line.starts_with("Invalid ") || line.starts_with("Misaligned ") || line.starts_with("Out-of-range ") {
            Some(memory_error(line, next))
        } else if let Some(race) = line.strip_prefix("Error: Race reported between ") {
            Some(race_error(race, next))
        } else if line.starts_with("ERROR: Potential ") && line.contains(" hazard detected") {
            Some(format!("shared-memory hazard: {}", line.trim_start_matches("ERROR: ").trim_end_matches(':').trim()))
        } else if line.starts_with("Barrier error detected") {
            Some(barrier_error(line, next))
        } else if line.starts_with("Program hit ") {
            Some(format!("a CUDA call failed: {}", line.trim_start_matches("Program hit ").trim_end_matches('.')))
        } else {
            None
        };
        if let Some(found) = found {
            return Some(format!("{}: {found}", tool.name()));
        }
    }
    let errors = lines.iter().find_map(|line| line.strip_prefix("ERROR SUMMARY: "))?;
    (!errors.starts_with("0 ")).then(|| format!("{}: {errors} (nothing more in its report)", tool.name()))
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
            Some((relation, rest)) => format!("{relation}{}", rest.split_once(" of size ").map_or(String::new(), |(_, size)| format!(" (of size {size})"))),
            None => place.to_string(),
        };
        found.push_str(&format!(": {place}"));
    } else if let Some(address) = next.iter().find(|line| line.ends_with("is out of bounds") || line.contains("is misaligned")) {
        found.push_str(&format!(": {address}"));
    }
    found
}

/// `shared-memory hazard in mmm_f64: a Write access and a Read access race (6144 hazards)`.
fn race_error(first: &str, next: &[&str]) -> String {
    let access = |text: &str| text.split(" at ").next().unwrap_or(text).trim().to_string();
    let kernel = first.split_once(" at ").and_then(|(_, place)| kernel_name(place));
    let second = next.iter().find_map(|line| line.strip_prefix("and "));
    let count = second.and_then(|line| line.rsplit_once('[')).map(|(_, count)| count.trim_end_matches(']').to_string());
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
    let what = line.trim_start_matches("Barrier error detected").trim_start_matches('.').trim().trim_end_matches('.');
    let mut found = if what.is_empty() { "barrier divergence".to_string() } else { format!("barrier divergence ({what})") };
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

    #[test]
    fn a_write_past_the_allocation_says_what_where_and_who() {
        assert_eq!(
            first_finding(Tool::Memcheck, MEMCHECK).unwrap(),
            "memcheck: Invalid __global__ write of size 8 bytes in mmm_f64, block (0,0,0), thread (0,0,0): 321 bytes after the nearest allocation (of size 8,000 bytes)"
        );
        assert_eq!(
            first_finding(Tool::Memcheck, OLD_MEMCHECK).unwrap(),
            "memcheck: Invalid __global__ read of size 4 bytes in kernel, block (0,0,0), thread (31,0,0): Address 0x7f7a4e000000 is out of bounds"
        );
    }

    #[test]
    fn a_race_is_the_first_error_not_a_warning() {
        assert_eq!(
            first_finding(Tool::Racecheck, RACECHECK).unwrap(),
            "racecheck: shared-memory hazard in mmm_f64: a Write access and a Read access race (6144 hazards)"
        );
        let only_warnings = RACECHECK.lines().take(3).collect::<Vec<_>>().join("\n") + "\n========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n";
        assert_eq!(first_finding(Tool::Racecheck, &only_warnings), None);
        let hazard = "========= ERROR: Potential WAR hazard detected at __shared__ 0x8 in block (0, 0, 0) :\n";
        assert_eq!(first_finding(Tool::Racecheck, hazard).unwrap(), "racecheck: shared-memory hazard: Potential WAR hazard detected at __shared__ 0x8 in block (0, 0, 0)");
    }

    #[test]
    fn a_divergent_barrier_names_the_block() {
        assert_eq!(first_finding(Tool::Synccheck, SYNCCHECK).unwrap(), "synccheck: barrier divergence (Divergent thread(s) in block) in mmm_f64, block (1,0,0), thread (0,0,0)");
    }

    #[test]
    fn a_clean_report_finds_nothing_and_a_bare_count_is_still_an_error() {
        assert_eq!(first_finding(Tool::Memcheck, "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"), None);
        assert_eq!(first_finding(Tool::Memcheck, ""), None);
        assert_eq!(first_finding(Tool::Memcheck, "========= ERROR SUMMARY: 3 errors\n").unwrap(), "memcheck: 3 errors (nothing more in its report)");
        assert_eq!(
            first_finding(Tool::Memcheck, "========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuFuncGetParamInfo.\n").unwrap(),
            "memcheck: a CUDA call failed: CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuFuncGetParamInfo"
        );
    }

    #[test]
    fn tools_follow_the_kernels() {
        assert_eq!(Tool::for_kernels(false), [Tool::Memcheck]);
        assert_eq!(Tool::for_kernels(true), [Tool::Memcheck, Tool::Racecheck, Tool::Synccheck]);
        assert_eq!(arguments(Tool::Racecheck, Path::new("/p/log"))[..2], ["--tool", "racecheck"]);
    }
}

//! `--ptxas`: the compiler's report of a kernel as the slides show it, beside what the driver says of
//! the loaded kernel, and the slide's register arithmetic for this GPU.

use anyhow::{Context as _, Result};
use cust::function::{BlockSize, Function, FunctionAttribute};
use kernels::{Code, KernelImage};

use crate::check_cuda;
use crate::device_info::DeviceInfo;

/// Prints the report of `kernel_name` from the build of `image` this GPU runs, the driver's attributes of `function` (the same
/// kernel, loaded), and what `threads_per_block` means for registers and blocks per multiprocessor.
pub fn print_ptxas(
    image: &KernelImage,
    kernel_name: &str,
    function: &Function,
    info: &DeviceInfo,
    threads_per_block: u32,
) -> Result<()> {
    let (code, report) = image.report_for(info.arch()).map_err(anyhow::Error::msg)?;
    let build = code.build();
    let resources = report.function(kernel_name).with_context(|| {
        format!(
            "{kernel_name} is not in the ptxas report of {} for {}",
            image.source,
            kernels::arch_name(build.arch)
        )
    })?;
    print_command(image, build.arch);
    for line in &resources.lines {
        println!("{line}");
    }
    if let Code::Ptx(_) = code {
        println!(
            "(This {} GPU runs {}: ptxas's report above is for {}; the driver's numbers below are for the code it made.)",
            kernels::arch_name(info.arch()),
            code.describe(),
            kernels::arch_name(build.arch)
        );
    }

    let attribute = |which| -> Result<i32> { Ok(check_cuda!(function.get_attribute(which))?) };
    let registers = attribute(FunctionAttribute::NumRegisters)?;
    println!("The driver's view of the loaded kernel {kernel_name}:");
    println!("  registers per thread       {registers}");
    println!(
        "  local memory per thread    {} bytes",
        attribute(FunctionAttribute::LocalSizeBytes)?
    );
    println!(
        "  static shared memory       {} bytes",
        attribute(FunctionAttribute::SharedMemorySizeBytes)?
    );
    println!(
        "  constant memory            {} bytes",
        attribute(FunctionAttribute::ConstSizeBytes)?
    );
    println!(
        "  max threads per block      {}",
        attribute(FunctionAttribute::MaxThreadsPerBlock)?
    );

    let blocks = check_cuda!(function.max_active_blocks_per_multiprocessor(BlockSize::x(threads_per_block), 0))?;
    println!(
        "{}",
        register_arithmetic(info, registers as u32, threads_per_block, blocks)
    );
    Ok(())
}

/// The command line the report comes from, as the slides show it: `$ nvcc -arch=sm_90 ... simpson.cu`.
pub fn print_command(image: &KernelImage, arch: u32) {
    let flags: String = image.flags.iter().map(|flag| format!(" {flag}")).collect();
    println!(
        "$ nvcc -arch={}{flags} --ptxas-options=-v {}",
        kernels::arch_name(arch),
        image.source
    );
}

/// The command that compiled a student's file (`--kernel-source`), written so that it runs again from
/// a shell as shown: our headers' folder, the flags, the file quoted where it needs it, and
/// `-c -o /dev/null`, since the report is what it is for.
pub fn student_command(image: &KernelImage, arch: u32, linked: bool) -> String {
    let flags: String = image
        .flags
        .iter()
        .map(|flag| format!(" {}", shell_word(flag)))
        .collect();
    let built_at = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/cuda");
    let headers = shell_word(
        &std::path::Path::new(built_at)
            .canonicalize()
            .map_or(built_at.to_string(), |path| path.display().to_string()),
    );
    let relocatable = if linked { " -rdc=true" } else { "" };
    // nvcc takes a comma in a file name for a list separator (the labs compile a copy, runtime.rs).
    let comma = if image.source.contains(',') {
        "  # nvcc splits names at commas: rename the file to run this"
    } else {
        ""
    };
    format!(
        "$ nvcc -std=c++17 -O3 -I {headers}{flags} -arch={}{relocatable} --ptxas-options=-v -c {} -o /dev/null{comma}",
        kernels::arch_name(arch),
        shell_word(image.source)
    )
}

/// `text` as one shell word: as it is where that is safe, else in single quotes (a `'` inside as
/// `'\''`).
fn shell_word(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=+-:,@%".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The slide's reasoning ("32768 registers per block: 1024 threads leave 32 registers each") for this
/// GPU and kernel. The driver's occupancy figure `driver_blocks` is the authority: it also counts the
/// allocation granularity, shared memory and the per-multiprocessor block limit.
fn register_arithmetic(info: &DeviceInfo, registers: u32, threads_per_block: u32, driver_blocks: u32) -> String {
    let full = info.max_threads_per_block;
    let per_thread_at_full = info.registers_per_block / full;
    let per_block = registers * threads_per_block;
    let by_registers = info.registers_per_multiprocessor / per_block.max(1);
    format!(
        "Registers: {} per block / {full} threads = {per_thread_at_full} per thread at full block size; \
         this kernel uses {registers}.\n\
         A block of {threads_per_block} thread(s) needs {registers} x {threads_per_block} = {per_block} registers; \
         {} registers per multiprocessor hold {by_registers} such blocks.\n\
         Occupancy (driver): {driver_blocks} blocks of {threads_per_block} = {} threads per multiprocessor \
         (at most {}), {:.0}% occupancy.",
        info.registers_per_block,
        info.registers_per_multiprocessor,
        driver_blocks * threads_per_block,
        info.max_threads_per_multiprocessor,
        100.0 * f64::from(driver_blocks * threads_per_block) / f64::from(info.max_threads_per_multiprocessor),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26: the line printed for a student's file runs again from a shell as it stands (it had
    /// no include path and unquoted paths), whatever the file is called.
    #[test]
    fn a_students_command_runs_again_as_printed() {
        let dir = crate::private_dir::PrivateDir::new("command-test").unwrap();
        let source = dir.path().join("my mmm v2 'x'.cu");
        std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/cuda/mmm.cu"), &source).unwrap();
        let image = KernelImage {
            source: Box::leak(source.display().to_string().into_boxed_str()),
            ..kernels::MMM_BS16
        };
        let line = student_command(&image, 90, false);
        assert!(
            line.starts_with("$ nvcc -std=c++17 -O3 -I ") && line.ends_with("'\\''x'\\''.cu' -o /dev/null"),
            "{line}"
        );
        let nvcc = kernels::nvcc::find(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels")))
            .expect("nvcc");
        let command = format!(
            "{}{}",
            shell_word(&nvcc.display().to_string()),
            line.strip_prefix("$ nvcc").unwrap()
        );
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(&command)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("ptxas info    : Used"),
            "{command}"
        );
        // nvcc itself cannot take a name with a comma (fatbinary splits it): the line says so.
        let comma = KernelImage {
            source: "Doe, Jane.cu",
            ..kernels::MMM_BS16
        };
        assert!(student_command(&comma, 90, false)
            .ends_with("-c 'Doe, Jane.cu' -o /dev/null  # nvcc splits names at commas: rename the file to run this"));
    }

    #[test]
    fn shell_words_are_quoted_only_where_needed() {
        assert_eq!(shell_word("kernels/cuda/mmm.cu"), "kernels/cuda/mmm.cu");
        assert_eq!(shell_word("-DBLOCK_SIZE=16"), "-DBLOCK_SIZE=16");
        assert_eq!(shell_word("a b.cu"), "'a b.cu'");
        assert_eq!(shell_word("it's.cu"), "'it'\\''s.cu'");
        assert_eq!(shell_word(""), "''");
    }
}

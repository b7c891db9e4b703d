//! lab-memory: the memory chapters' small programs. `--mode indexing` runs the Korean notes'
//! `getGlobalIdx` helpers for every grid and block shape, `--mode symbols` the Chinese notes'
//! `__device__` variables with `cudaMemcpyToSymbol` / `cudaMemcpyFromSymbol`, and `--mode device-query`
//! the Greek slides' device properties with the figures derived from them.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use common::gpu::Gpu;
use common::verify::{verdict, Random};
use cust::module::Module;
use lab_memory::device_query::{measure_copy, Query};
use lab_memory::indexing::{self, Dims, Helper};
use lab_memory::symbols::{round_trip, Symbols, SYMBOL_LENGTH};

/// The memory chapters: thread indexing, __device__ symbols, the device query.
#[derive(Parser, Debug)]
#[command(name = "lab-memory", version, about)]
struct Args {
    /// Which experiment: indexing (every getGlobalIdx helper), symbols (cudaMemcpyToSymbol and back),
    /// device-query (every property, the derived figures, a measured copy), or all.
    #[arg(long, value_enum, default_value = "all")]
    mode: Mode,
    /// indexing: blocks in x, y and z (a helper for a 1D or 2D grid uses the first one or two).
    #[arg(long, num_args = 3, value_names = ["X", "Y", "Z"], default_values_t = [3, 2, 2], value_parser = clap::value_parser!(u32).range(1..=65535))]
    grid: Vec<u32>,
    /// indexing: threads per block in x, y and z (likewise; at most 1024 in all).
    #[arg(long, num_args = 3, value_names = ["X", "Y", "Z"], default_values_t = [4, 3, 2], value_parser = clap::value_parser!(u32).range(1..=1024))]
    block: Vec<u32>,
    /// device-query: bytes of the device-to-device copy that measures the memory bandwidth.
    #[arg(long, default_value_t = 1 << 30, value_parser = clap::value_parser!(u64).range(4..=(1u64 << 34)))]
    copy_bytes: u64,
    /// Timed runs after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    Indexing,
    Symbols,
    DeviceQuery,
    All,
}

fn main() -> ExitCode {
    common::cli::run_lab(run)
}

fn run(args: Args) -> Result<()> {
    let block: u32 = args.block.iter().product();
    anyhow::ensure!(block <= 1024, "--block {} x {} x {} is {block} threads, more than a block may have (1024)", args.block[0], args.block[1], args.block[2]);
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    let module = gpu.load(&kernels::MEMORY)?;
    let mut passed = true;
    if matches!(args.mode, Mode::Indexing | Mode::All) {
        passed &= indexing(&module, &args)?;
    }
    if matches!(args.mode, Mode::Symbols | Mode::All) {
        passed &= symbols(&module, &args)?;
    }
    if matches!(args.mode, Mode::DeviceQuery | Mode::All) {
        passed &= device_query(&gpu, &args)?;
    }
    verdict(passed, "a GPU result differs from the CPU's")
}

/// Every helper on the --grid and --block sizes, checked; then the picture of a small 2D grid.
fn indexing(module: &Module, args: &Args) -> Result<bool> {
    let (grid, block) = ((args.grid[0], args.grid[1], args.grid[2]), (args.block[0], args.block[1], args.block[2]));
    println!("\nThread indexing: every thread writes its block and thread at getGlobalIdx_*(); the CPU checks each\n");
    println!("| helper | grid | block | threads | never written | misplaced | check |");
    println!("|--------|------|-------|---------|---------------|-----------|-------|");
    let mut passed = true;
    for helper in Helper::all() {
        let mapping = indexing::run(module, helper, grid, block)?;
        let (unwritten, misplaced) = mapping.wrong();
        passed &= unwritten + misplaced == 0;
        let dims = |(x, y, z): (u32, u32, u32)| format!("{x} x {y} x {z}");
        println!(
            "| {} | {} | {} | {} | {unwritten} | {misplaced} | {} |",
            helper.name(),
            dims(mapping.grid),
            dims(mapping.block),
            mapping.threads(),
            if unwritten + misplaced == 0 { "PASS" } else { "FAIL" }
        );
    }
    let small = indexing::run(module, Helper { grid: Dims::Two, block: Dims::Two }, (3, 2, 1), (4, 2, 1))?;
    println!("\ngetGlobalIdx_2D_2D on a grid of 3 x 2 blocks of 4 x 2 threads, each thread's index where it lies:\n");
    print!("{}", indexing::picture(&small));
    let (unwritten, misplaced) = small.wrong();
    Ok(passed && unwritten + misplaced == 0)
}

/// devData and devArray to the GPU, doubled (plus the index) there, back, against the CPU.
#[allow(clippy::approx_constant)] // 3.14 is the notes' value for devData, not an approximation of pi
fn symbols(module: &Module, args: &Args) -> Result<bool> {
    let mut random = Random::new(args.seed);
    let input = Symbols { data: 3.14, array: (0..SYMBOL_LENGTH).map(|_| random.uniform(-1.0, 1.0) as f32).collect() };
    let factor = 2.0;
    let output = round_trip(module, &input, factor)?;
    let differences = output.differences(&input.scaled(factor));
    println!("\n__device__ symbols: cudaMemcpyToSymbol(devData, 3.14) and devArray[{SYMBOL_LENGTH}] (random), scale_symbols<<<1, {SYMBOL_LENGTH}>>>({factor}),");
    println!("cudaMemcpyFromSymbol: devData = {} (CPU {}), devArray[1] = {} (CPU {}), {differences} of {} values differ: {}",
        output.data, input.scaled(factor).data, output.array[1], input.scaled(factor).array[1], SYMBOL_LENGTH + 1,
        if differences == 0 { "PASS" } else { "FAIL" });
    Ok(differences == 0)
}

/// The property listing, then the copy that checks the bandwidth figure against the hardware.
fn device_query(gpu: &Gpu, args: &Args) -> Result<bool> {
    let query = Query::read(gpu.device, gpu.info.clone())?;
    let count = common::gpu::count()?;
    println!("\nDevice query ({count} GPU{} on this machine), device 0:\n", if count == 1 { "" } else { "s" });
    for (name, value) in query.lines() {
        println!("  {name:<34} {value}");
    }
    let bytes = args.copy_bytes as usize / 4 * 4;
    gpu.ensure_fits(2 * bytes as u64, &format!("--copy-bytes {bytes}"))?;
    let (timing, wrong) = measure_copy(bytes, args.repetitions as usize, args.seed)?;
    // A device-to-device copy reads and writes every byte.
    let measured = 2.0 * bytes as f64 / (timing.median_ms() * 1e-3);
    println!(
        "\nDevice-to-device copy of {}: {timing}; {:.0} GB/s read + written = {:.0}% of the peak; {wrong} words differ: {}",
        common::format_bytes(bytes as u64),
        measured / 1e9,
        100.0 * measured / gpu.info.peak_bandwidth(),
        if wrong == 0 { "PASS" } else { "FAIL" }
    );
    Ok(wrong == 0)
}

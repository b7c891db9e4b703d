//! lab-memory: the memory chapters' small programs, one `--mode` each, every result checked against the
//! CPU: `coalescing` (the Chinese notes' `kernel_1` / `kernel_2`, then strides and offsets), `banks`
//! (shared-memory bank conflicts, the padded transpose), `indexing` (the Korean notes' `getGlobalIdx`
//! helpers), `registers` (`-maxrregcount`), `cache` (`cudaFuncSetCacheConfig` and the carveout),
//! `local` (`float a[3]` in registers or local memory), `divergence` (a branch that splits warps),
//! `symbols` (`cudaMemcpyToSymbol` / `FromSymbol`, `cudaGetSymbolAddress`, a `__device__` lock),
//! `contexts` (the context stack: `cuCtxCreate`, `cuCtxPopCurrent`, `cuCtxPushCurrent` on another thread),
//! `readonly` (`__ldg` and texture objects), `coherence` (the L2 as the only coherent level), `latency`
//! (the Greek slides' cycles per access, as a pointer chase), `transactions` (the German slides' 128-byte
//! L1 lines against L2's 32-byte transactions, as bytes per clock) and `device-query` (the Greek slides'
//! property listing, then both halves of the notes' bandwidth arithmetic: the GPU's and this machine's
//! CPU).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use common::cli::parse_bytes;
use common::gpu::Gpu;
use common::output::check_output_path;
use common::verify::verdict;
use lab_memory::{
    banks, cache, coalescing, coherence, contexts, device_query, divergence, indexing, latency, local_arrays, readonly,
    registers, symbols, transactions,
};

/// The memory chapters: coalescing, banks, thread indexing, register caps, local arrays, warp
/// divergence, caches, symbols, contexts, the read-only path, latencies, the device query.
#[derive(Parser, Debug)]
#[command(name = "lab-memory", version, about)]
struct Args {
    /// Which experiment: coalescing (the notes' kernel_1 and kernel_2, strides, offsets, word sizes from 8 to
    /// 128 bits, the order within a line), banks (shared-memory
    /// conflicts, the notes' structs, the padded transpose), indexing (every getGlobalIdx helper), registers
    /// (-maxrregcount), local (float a[3]: registers or local memory), divergence (threadIdx.x % 2 against
    /// one side per warp), cache (L1 / shared-memory preference), symbols (cudaMemcpyToSymbol and back,
    /// cudaGetSymbolAddress, a __device__ lock), contexts (a second context pushed, popped, used on another
    /// host thread), readonly (__ldg and a texture object), coherence (a write by one block, read by another
    /// through its L1, through L2 and volatile), latency (cycles per dependent access to
    /// registers, shared, constant, L1, L2 and DRAM), transactions (bytes per clock per multiprocessor of
    /// 128-byte warp loads hitting L1 against loads served by L2), device-query (every property, derived figures, a
    /// measured copy, the notes' arithmetic for this GPU and this CPU), or all.
    #[arg(long, value_enum, default_value = "all")]
    mode: Mode,
    /// coalescing: threads of the notes' kernel_1 and kernel_2 (kernel_2 needs 4000 bytes each), a
    /// multiple of 256: like the notes, the kernels check no bound.
    #[arg(long, default_value_t = 1 << 19, value_parser = clap::value_parser!(u32).range(256..=2_097_152))]
    notes_threads: u32,
    /// coalescing: size of each of the sweep's two buffers (4096, 64MiB, 1GiB); a wider stride copies
    /// fewer elements (at most 2^24).
    #[arg(long, default_value = "1GiB", value_parser = parse_bytes)]
    buffer_bytes: usize,
    /// coalescing: plot both sweeps as an SVG into this file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Let --plot replace an existing file.
    #[arg(long)]
    force: bool,
    /// banks: shared loads per thread in the walk.
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    steps: u32,
    /// banks: rows and columns of the transposed matrix (floats).
    #[arg(long, num_args = 2, value_names = ["ROWS", "COLS"], default_values_t = [4096, 4096], value_parser = clap::value_parser!(u32).range(1..=32768))]
    transpose: Vec<u32>,
    /// registers: rounds of the loop every thread runs with its 32 live floats.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    rounds: u32,
    /// registers: print each variant's ptxas report, the driver's view and the register arithmetic.
    #[arg(long)]
    ptxas: bool,
    /// local: rounds of three updates of float a[3] every thread makes (at most 150: the values grow
    /// about 1.7 times a round and would overflow a float past about 165).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(0..=local_arrays::MAX_ROUNDS as i64))]
    local_rounds: u32,
    /// divergence: steps every thread takes on its side of the branch.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    divergence_rounds: u32,
    /// indexing: blocks in x, y and z (a helper for a 1D or 2D grid uses the first one or two).
    #[arg(long, num_args = 3, value_names = ["X", "Y", "Z"], default_values_t = [3, 2, 2], value_parser = clap::value_parser!(u32).range(1..=65535))]
    grid: Vec<u32>,
    /// indexing: threads per block in x, y and z (likewise; at most 1024 in all).
    #[arg(long, num_args = 3, value_names = ["X", "Y", "Z"], default_values_t = [4, 3, 2], value_parser = clap::value_parser!(u32).range(1..=1024))]
    block: Vec<u32>,
    /// device-query: size of the device-to-device copy that measures the memory bandwidth (4096 to
    /// 16GiB, written like --buffer-bytes: 1073741824, 1GiB).
    #[arg(long, default_value = "256MiB", value_parser = parse_bytes)]
    copy_bytes: usize,
    /// Timed runs after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    profile: profiler::ProfileArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    Coalescing,
    Banks,
    Indexing,
    Registers,
    Local,
    Divergence,
    Cache,
    Symbols,
    Contexts,
    Readonly,
    Coherence,
    Latency,
    Transactions,
    DeviceQuery,
    All,
}

impl Mode {
    /// Whether `--mode` asks for `self`.
    fn chosen(self, asked: Mode) -> bool {
        asked == self || asked == Mode::All
    }
}

fn main() -> ExitCode {
    common::cli::run_lab(|args: Args| args.profile.clone().around(|| run(args)))
}

/// Checks what clap cannot before the GPU opens (so a wrong flag fails the same with or without one),
/// then runs every chosen mode, each printing its tables, and gives the verdict.
fn run(args: Args) -> Result<()> {
    let block: u32 = args.block.iter().product();
    anyhow::ensure!(
        args.copy_bytes <= 1 << 34,
        "--copy-bytes {} is over 16 GiB",
        args.copy_bytes
    );
    anyhow::ensure!(
        block <= 1024,
        "--block {} x {} x {} is {block} threads, more than a block may have (1024)",
        args.block[0],
        args.block[1],
        args.block[2]
    );
    anyhow::ensure!(
        args.notes_threads.is_multiple_of(coalescing::BLOCK),
        "--notes-threads {} is not a multiple of {}: the notes' kernels check no bound",
        args.notes_threads,
        coalescing::BLOCK
    );
    if let Some(path) = &args.plot {
        check_output_path(path, args.force)?;
    }
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    let module = gpu.load(&kernels::MEMORY)?;
    let (repetitions, seed) = (args.repetitions as usize, args.seed);
    let mut passed = true;
    if Mode::Coalescing.chosen(args.mode) {
        let settings = coalescing::Settings {
            notes_threads: args.notes_threads,
            buffer_bytes: args.buffer_bytes,
            plot: args.plot.as_deref(),
            force: args.force,
            repetitions,
            seed,
        };
        passed &= coalescing::report(&gpu, &module, &settings)?;
    }
    if Mode::Banks.chosen(args.mode) {
        let transpose = (args.transpose[0] as usize, args.transpose[1] as usize);
        passed &= banks::report(&gpu, &module, args.steps as usize, transpose, repetitions, seed)?;
    }
    if Mode::Indexing.chosen(args.mode) {
        let (grid, block) = (
            (args.grid[0], args.grid[1], args.grid[2]),
            (args.block[0], args.block[1], args.block[2]),
        );
        passed &= indexing::report(&module, grid, block)?;
    }
    if Mode::Registers.chosen(args.mode) {
        passed &= registers::report(&gpu, args.rounds as usize, args.ptxas, repetitions, seed)?;
    }
    if Mode::Local.chosen(args.mode) {
        passed &= local_arrays::report(&gpu, &module, args.local_rounds as usize, repetitions, seed)?;
    }
    if Mode::Divergence.chosen(args.mode) {
        passed &= divergence::report(&gpu, &module, args.divergence_rounds as usize, repetitions, seed)?;
    }
    if Mode::Cache.chosen(args.mode) {
        passed &= cache::report(&gpu, &module, repetitions, seed)?;
    }
    if Mode::Symbols.chosen(args.mode) {
        passed &= symbols::report(&module, seed)?;
    }
    if Mode::Contexts.chosen(args.mode) {
        passed &= contexts::report(&module)?;
    }
    if Mode::Readonly.chosen(args.mode) {
        passed &= readonly::report(&module, repetitions, seed)?;
    }
    if Mode::Coherence.chosen(args.mode) {
        passed &= coherence::report(&module, seed)?;
    }
    if Mode::Latency.chosen(args.mode) {
        passed &= latency::report(&gpu, &module, repetitions, seed)?;
    }
    if Mode::Transactions.chosen(args.mode) {
        passed &= transactions::report(&gpu, &module, repetitions, seed)?;
    }
    if Mode::DeviceQuery.chosen(args.mode) {
        passed &= device_query::report(&gpu, args.copy_bytes, repetitions, seed)?;
    }
    verdict(passed, "a GPU result differs from the CPU's")
}

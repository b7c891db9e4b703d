//! lab-streams: overlapping transfers and kernels with CUDA streams.
//!
//! `--mode mmm` (the default) is the German slides' table: COUNT products of random N x N doubles
//! run serially (`mmm`), as kernels only (`mmm-without-transfers`) and one stream per product
//! (`mmm-streamed`), from pageable host memory as on the slides. The other modes are the French
//! slides' chunked pipeline, the Korean notes' 15-stream sample and CPU work overlapped with the GPU,
//! from pinned host memory as in those originals (`--host-memory pageable` for the contrast), and
//! many small kernels at once on one GPU (`concurrent`), and what a kernel on the NULL stream does
//! to the other streams (`null-stream`). `--devices N` spreads the German products or the French
//! pipeline over N GPUs.

mod chunked;
mod concurrent;
mod devices;
mod fifteen;
mod null_stream;
mod overlap;
mod programs;
mod week5;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{ensure, Result};
use clap::Parser;
use common::gpu::Gpu;
use common::host_memory::ensure_host_fits;
use common::output::check_output_path;
use common::timing::{Runs, RunsArgs};
use common::verify::verdict;
use grading::program::mmm_week::Streamed;
use matrix::batch::Batch;
use matrix::mmm::parse_block_size;
use matrix::Pinned;

/// Overlapping transfers and kernels with CUDA streams (German, French and Korean slides).
#[derive(Parser, Debug)]
#[command(name = "lab-streams", version, about)]
pub struct Args {
    /// Which experiment: mmm (the slides' table), chunked (one job in chunks over 1 to 16 streams),
    /// fifteen (15 streams over 512 x 65535 ints), overlap (CPU work during GPU work), concurrent
    /// (small kernels on 1 to 32 streams: how many run at once), null-stream (a kernel on stream 0
    /// between kernels on other streams), or all.
    #[arg(long, value_enum, default_value = "mmm")]
    mode: Mode,
    /// mmm: size N of the N x N double matrices (the slides do not print theirs; 2048 takes seconds).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u32).range(1..))]
    size: u32,
    /// mmm: number of independent products (COUNT on the slides), one stream each when streamed.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=64))]
    count: u32,
    /// mmm: BLOCK_SIZE of the tiled kernel (16 or 32).
    #[arg(long, default_value_t = 16, value_parser = parse_block_size)]
    block_size: u32,
    /// chunked and overlap: number of floats in the vector job.
    #[arg(long, default_value_t = 1 << 24, value_parser = clap::value_parser!(u32).range(1..))]
    elements: u32,
    /// chunked and overlap: fused multiply-adds per element, to set kernel time against copy time
    /// (default 2000: the kernels take about as long as each copy on an H200, the most overlap can
    /// hide). concurrent: multiply-adds per thread of each small kernel (default 1000000, about 1 ms).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    steps: Option<u32>,
    /// concurrent: number of small kernels, spread round-robin over the streams.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    kernels: u32,
    /// concurrent: which stream each kernel goes to (launched in order either way). fifteen: all copies
    /// in, all kernels, all copies out as the notes (round-robin), or each stream's three in turn.
    #[arg(long, value_enum, default_value = "round-robin")]
    order: lab_streams::Order,
    /// concurrent: blocks of 256 threads per small kernel (one block fills a 132th of an H200).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    blocks_per_kernel: u32,
    /// mmm and chunked: spread the work over GPUs 0 to N-1 (portable pinned host memory, one context
    /// and its streams per GPU) and compare 1, 2, ... N GPUs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    devices: Option<u32>,
    #[command(flatten)]
    timing: RunsArgs,
    /// Seed of the random inputs and of the checks' samples.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// chunked, fifteen and overlap: host memory of the vector jobs; pinned as in the originals, or
    /// pageable to see what streams lose without it. (mmm always runs from pageable memory, as the
    /// German table does; lab-pinned runs it pinned.)
    #[arg(long, value_enum, default_value = "pinned")]
    host_memory: HostMemory,
    /// Draw one run as an SVG chronogram (one lane per stream) into this file: mmm-streamed, the
    /// chunked pipeline on 16 streams, the 15-stream sample, the small kernels on 32 streams or the
    /// four NULL-stream cases one above the other, whichever --mode names (with --devices: the run on
    /// N GPUs, a lane per GPU and stream).
    #[arg(long, value_name = "FILE.svg")]
    timeline: Option<PathBuf>,
    /// Let --timeline replace an existing file.
    #[arg(long, requires = "timeline")]
    force: bool,
    #[command(flatten)]
    profile: profiler::ProfileArgs,
    /// Week 5's graded programs (assignments/05-streams).
    #[command(flatten)]
    program: grading::program::ProgramArgs,
    /// With --program-source or --list-cases: which of week 5's programs, pipeline (the French
    /// slides' chunks over NST streams; the default) or mmm-streamed (the German slides' COUNT
    /// products, a stream each).
    #[arg(long = "program", value_enum, value_name = "NAME")]
    graded: Option<Week5Program>,
}

/// Week 5's graded programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Week5Program {
    /// pipeline N NST STEPS INPUT OUTPUT (assignments/05-streams/pipeline.cu).
    Pipeline,
    /// mmm_streamed COUNT N INPUT OUTPUT (assignments/05-streams/mmm_streamed.cu).
    MmmStreamed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    Mmm,
    Chunked,
    Fifteen,
    Overlap,
    Concurrent,
    NullStream,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum HostMemory {
    /// cudaHostAlloc / cudaMallocHost: the copy engines read it directly, copies overlap kernels.
    Pinned,
    /// malloc: every copy goes through the driver's staging buffer and holds the host.
    Pageable,
}

fn main() -> ExitCode {
    grading::run_lab(|args: Args| args.profile.clone().around(|| run(args)))
}

/// The largest job of the chosen modes (one mode runs at a time), with its host and GPU bytes: the
/// batch's A, B and C (mmm); the vector job's input and output, and on the host the CPU's values
/// (chunked, overlap); the 15-stream sample's In and Out.
fn largest_job(args: &Args) -> (String, u64, u64) {
    let (count, n, elements) = (args.count as u64, args.size as u64, u64::from(args.elements));
    let mut jobs = Vec::new();
    if chosen(args, Mode::Mmm) {
        let bytes = Batch::<Vec<f64>>::bytes(count as usize, n as usize);
        jobs.push((format!("COUNT = {count} products of {n} x {n} doubles"), bytes, bytes));
    }
    if chosen(args, Mode::Chunked) || chosen(args, Mode::Overlap) {
        jobs.push((format!("--elements {elements}"), 3 * 4 * elements, 2 * 4 * elements));
    }
    if chosen(args, Mode::Fifteen) {
        let n = fifteen::N as u64;
        jobs.push(("the 15-stream sample".to_string(), 2 * 4 * n, 2 * 4 * n));
    }
    jobs.into_iter().max_by_key(|(_, host, _)| *host).unwrap_or_default()
}

/// Whether `--mode` runs `mode`: names it, or says all.
fn chosen(args: &Args, mode: Mode) -> bool {
    args.mode == mode || args.mode == Mode::All
}

impl Args {
    /// How each experiment is timed: --repetitions after a warm-up, or --as-printed.
    fn runs(&self) -> Runs {
        self.timing.runs()
    }

    /// Multiply-adds per element of the French slides' vector job.
    fn vector_steps(&self) -> u32 {
        self.steps.unwrap_or(chunked::STEPS)
    }
}

fn run(args: Args) -> Result<()> {
    if args.program.requested() || args.graded.is_some() {
        return check_program(&args);
    }
    if let Some(path) = &args.timeline {
        ensure!(
            args.mode != Mode::Overlap && args.mode != Mode::All,
            "--timeline draws one run: use it with --mode mmm, chunked, fifteen, concurrent or null-stream"
        );
        check_output_path(path, args.force)?;
    }
    let (job, host_bytes, gpu_bytes) = largest_job(&args);
    ensure_host_fits(host_bytes, &job)?;
    if let Some(devices) = args.devices {
        ensure!(
            matches!(args.mode, Mode::Mmm | Mode::Chunked),
            "--devices spreads --mode mmm or chunked over several GPUs"
        );
        return verdict(
            devices::run(&args, devices)?,
            "a GPU result differs from the CPU reference",
        );
    }
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    gpu.ensure_fits(gpu_bytes, &job)?;
    let module = gpu.load(&kernels::STREAMS)?;
    let mut passed = true;
    if chosen(&args, Mode::Mmm) {
        passed &= programs::run(&gpu, &args)?;
    }
    let pinned = args.host_memory == HostMemory::Pinned;
    if chosen(&args, Mode::Chunked) {
        passed &= if pinned {
            chunked::run::<Pinned<f32>>(&module, &args)?
        } else {
            chunked::run::<Vec<f32>>(&module, &args)?
        };
    }
    if chosen(&args, Mode::Fifteen) {
        passed &= if pinned {
            fifteen::run::<Pinned<i32>>(&module, &args)?
        } else {
            fifteen::run::<Vec<i32>>(&module, &args)?
        };
    }
    if chosen(&args, Mode::Overlap) {
        passed &= if pinned {
            overlap::run::<Pinned<f32>>(&module, &args)?
        } else {
            overlap::run::<Vec<f32>>(&module, &args)?
        };
    }
    if chosen(&args, Mode::Concurrent) {
        passed &= concurrent::run(&gpu, &module, &args)?;
    }
    if chosen(&args, Mode::NullStream) {
        passed &= null_stream::run(&module, &args)?;
    }
    verdict(passed, "a GPU result differs from the CPU reference")
}

/// `--program-source FILE.cu --check` (and `--list-cases`): the student's week-5 program, case by
/// case ([`week5`], or for mmm-streamed [`grading::program::mmm_week`]).
fn check_program(args: &Args) -> Result<()> {
    match args.graded.unwrap_or(Week5Program::Pipeline) {
        Week5Program::Pipeline => check_pipeline(args),
        Week5Program::MmmStreamed => grading::program::mmm_week::check::<Streamed>(&args.program),
    }
}

fn check_pipeline(args: &Args) -> Result<()> {
    let Some(built) = grading::program::before_gpu::<week5::Week5>(&args.program)? else {
        return Ok(());
    };
    let gpu = grading::on_the_machine(Gpu::open(0))?;
    let module = grading::on_the_machine(gpu.load(&kernels::STREAMS))?;
    let mut week = grading::on_the_machine(week5::Week5::new(&module))?;
    grading::program::check(&args.program, &built, &mut week)
}

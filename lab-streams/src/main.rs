//! lab-streams: overlapping transfers and kernels with CUDA streams.
//!
//! `--mode mmm` (the default) is the German slides' table: COUNT products of random N x N doubles
//! run serially (`mmm`), as kernels only (`mmm-without-transfers`) and one stream per product
//! (`mmm-streamed`), from pageable host memory as on the slides. The other modes are the French
//! slides' chunked pipeline, the Korean notes' 15-stream sample and CPU work overlapped with the GPU.

mod chunked;
mod fifteen;
mod overlap;
mod programs;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use common::gpu::Gpu;
use common::mmm::parse_block_size;
use common::output::check_output_path;
use common::verify::verdict;

/// Overlapping transfers and kernels with CUDA streams (German, French and Korean slides).
#[derive(Parser, Debug)]
#[command(name = "lab-streams", version, about)]
pub struct Args {
    /// Which experiment: mmm (the slides' table), chunked (one job in chunks over 1 to 16 streams),
    /// fifteen (15 streams over 512 x 65535 ints), overlap (CPU work during GPU work), or all.
    #[arg(long, value_enum, default_value = "mmm")]
    mode: Mode,
    /// mmm: size N of the N x N double matrices.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
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
    /// chunked and overlap: fused multiply-adds per element, to set kernel time against copy time.
    #[arg(long, default_value_t = 20000, value_parser = clap::value_parser!(u32).range(1..))]
    steps: u32,
    /// Timed runs after one warm-up; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Seed of the random inputs and of the checks' samples.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// mmm: draw the mmm-streamed run as an SVG chronogram (one lane per stream) into this file.
    #[arg(long, value_name = "FILE.svg")]
    timeline: Option<PathBuf>,
    /// Let --timeline replace an existing file.
    #[arg(long, requires = "timeline")]
    force: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    Mmm,
    Chunked,
    Fifteen,
    Overlap,
    All,
}

fn main() -> ExitCode {
    common::cli::run_lab(run)
}

fn run(args: Args) -> Result<()> {
    if let Some(path) = &args.timeline {
        check_output_path(path, args.force)?;
    }
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    let module = gpu.load(&kernels::STREAMS)?;
    let mut passed = true;
    if matches!(args.mode, Mode::Mmm | Mode::All) {
        passed &= programs::run(&gpu, &args)?;
    }
    if matches!(args.mode, Mode::Chunked | Mode::All) {
        passed &= chunked::run(&module, &args)?;
    }
    if matches!(args.mode, Mode::Fifteen | Mode::All) {
        passed &= fifteen::run(&module, &args)?;
    }
    if matches!(args.mode, Mode::Overlap | Mode::All) {
        passed &= overlap::run(&module, &args)?;
    }
    verdict(passed, "a GPU result differs from the CPU reference")
}

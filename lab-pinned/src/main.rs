//! lab-pinned: page-locked host memory. Continues the table of lab-streams with the streamed products
//! from pinned matrices (`cudaMallocHost`), next to pageable ones, then measures copy bandwidth of
//! pageable, pinned and registered (`malloc` + `cudaHostRegister`) memory from 4 KiB to 1 GiB, and
//! (`--flags`) what the portable and mapped flags change for a second context.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use common::check_cuda;
use common::cli::parse_bytes;
use common::context::new_streams;
use common::gpu::Gpu;
use common::host_memory::{check_pinnable, ensure_host_fits};
use common::output::check_output_path;
use common::progress::Progress;
use common::timing::RunsArgs;
use common::verify::{verdict, Random};
use cust::stream::{Stream, StreamFlags};
use lab_pinned::flags;
use lab_pinned::sweep::{self, sizes, Kind};
use matrix::batch::{slide_ms, slide_table, Batch, Measured};
use matrix::mmm::{load_mmm, parse_block_size, MmmKernel};
use matrix::Pinned;
use profiler::timeline::{write_svg, Kernel};

/// Page-locked (pinned) and registered host memory, measured (slide: mmm-streamed-and-pinned).
#[derive(Parser, Debug)]
#[command(name = "lab-pinned", version, about)]
struct Args {
    /// Size N of the N x N double matrices (the slides do not print theirs; 2048 takes seconds).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u32).range(1..))]
    size: u32,
    /// Number of independent products (COUNT), one stream each (the slides used 10; 8 shows the same
    /// ratios and keeps the default run, two batches and five programs, within seconds).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    count: u32,
    /// BLOCK_SIZE of the tiled kernel (16 or 32).
    #[arg(long, default_value_t = 16, value_parser = parse_block_size)]
    block_size: u32,
    #[command(flatten)]
    timing: RunsArgs,
    /// Seed of the random matrices and of the checks.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Largest copy of the bandwidth sweep (4 KiB, 16 KiB, ... up to this), e.g. 16MiB or 1GiB; pinned
    /// memory reaches its full speed by 16 MiB, pageable memory's big-copy behaviour shows up to 1GiB.
    #[arg(long, default_value = "16MiB", value_parser = parse_bytes)]
    sweep_max: usize,
    /// Skip the bandwidth sweep.
    #[arg(long)]
    no_sweep: bool,
    /// Also show what the host-memory flags (portable, mapped) change for a second context: the
    /// copy bandwidth and device pointer of each kind of page-locked memory there (a second context
    /// and nine buffers: about a second more).
    #[arg(long)]
    flags: bool,
    /// Plot the sweep as an SVG into this file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Draw the streamed run from pinned memory as an SVG chronogram into this file.
    #[arg(long, value_name = "FILE.svg")]
    timeline: Option<PathBuf>,
    /// Let --plot and --timeline replace existing files.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    profile: profiler::ProfileArgs,
}

/// The slides' nvprof totals on their Fermi GPU.
const SLIDE_MS: [(&str, Option<f64>); 5] = [
    ("mmm (pageable)", Some(slide_ms::MMM)),
    ("mmm (pinned)", None),
    ("mmm-without-transfers", Some(slide_ms::MMM_WITHOUT_TRANSFERS)),
    ("mmm-streamed (pageable)", Some(slide_ms::MMM_STREAMED)),
    ("mmm-streamed-and-pinned", Some(slide_ms::MMM_STREAMED_AND_PINNED)),
];

fn main() -> ExitCode {
    common::cli::run_lab(|args: Args| args.profile.clone().around(|| run(args)))
}

fn run(args: Args) -> Result<()> {
    let (count, n) = (args.count as usize, args.size as usize);
    // Refuse before anything is allocated: the pinned batch, and the largest pinned sweep buffer.
    check_pinnable(Batch::<Vec<f64>>::bytes(count, n), 0)?;
    ensure_host_fits(
        Batch::<Vec<f64>>::bytes(count, n).saturating_mul(2),
        &format!("two batches of {count} products of {n} x {n} doubles"),
    )?;
    if !args.no_sweep {
        check_pinnable(args.sweep_max as u64, 0)?;
        ensure_host_fits(
            2 * args.sweep_max as u64,
            &format!("--sweep-max {}", common::format_bytes(args.sweep_max as u64)),
        )?;
    }
    for path in args.plot.iter().chain(&args.timeline) {
        check_output_path(path, args.force)?;
    }
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    gpu.ensure_fits(
        Batch::<Vec<f64>>::bytes(count, n).saturating_mul(2),
        &format!("two batches of {count} products of {n} x {n} doubles"),
    )?;
    let module = load_mmm(&gpu, args.block_size)?;
    let mmm = Kernel::get(&module, &MmmKernel::Tiled.c_name::<f64>())?;
    let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let streams = new_streams(count)?;
    let mut random = Random::new(args.seed);
    let runs = args.timing.runs();

    println!(
        "\nCOUNT = {count} products of random {n} x {n} doubles, tiled mmm with BLOCK_SIZE {}; each program timed {}",
        args.block_size,
        runs.describe()
    );
    // malloc'ed matrices, as in lab-streams ...
    let mut pageable = Batch::<Vec<f64>>::random(count, n, args.block_size, args.seed)?;
    // ... and the same from cudaMallocHost
    let mut pinned = Batch::<Pinned<f64>>::copy_of(&pageable)?;
    let progress = Progress::new(SLIDE_MS.len(), "lab-pinned");
    let measured = [
        progress.run(SLIDE_MS[0].0, || {
            pageable.time_serial(&mmm.plain, &main, runs, &mut random)
        })?,
        progress.run(SLIDE_MS[1].0, || {
            pinned.time_serial(&mmm.plain, &main, runs, &mut random)
        })?,
        progress.run(SLIDE_MS[2].0, || {
            pageable.time_kernels_only(&mmm.plain, &main, runs, &mut random)
        })?,
        progress.run(SLIDE_MS[3].0, || {
            pageable.time_streamed(&mmm, &main, &streams, runs, &mut random)
        })?,
        progress.run(SLIDE_MS[4].0, || {
            pinned.time_streamed(&mmm, &main, &streams, runs, &mut random)
        })?,
    ];
    drop(progress);
    for (m, (name, _)) in measured.iter().zip(SLIDE_MS) {
        println!("{name:<24} {}", m.timing);
    }
    let rows: Vec<(&str, &Measured, Option<f64>)> = measured
        .iter()
        .zip(SLIDE_MS)
        .map(|(m, (name, ms))| (name, m, ms))
        .collect();
    println!("\n{}", slide_table(&rows, measured[2].timing.median_ms()));
    if let Some(path) = &args.timeline {
        let spans = pinned.record_streamed(&mmm, &main, &streams)?;
        let title = format!(
            "mmm-streamed-and-pinned: {count} products of {n} x {n} doubles, {}",
            gpu.info.name
        );
        println!("{}", write_svg(path, args.force, &title, &pinned.lanes(), &spans)?);
    }
    drop((pageable, pinned)); // unpin before the sweep pins its own buffers
    let flags_passed = !args.flags || flags::report(&mut random)?;

    if !args.no_sweep {
        let sizes = sizes(args.sweep_max);
        let progress = Progress::new(Kind::ALL.len() * sizes.len(), "lab-pinned: bandwidth sweep");
        let mut points = Vec::new();
        for kind in Kind::ALL {
            points.extend(sweep::measure(kind, &sizes, &main, &mut random, &progress)?);
        }
        drop(progress);
        println!("\nCopy bandwidth (cudaMemcpy, median), GB/s = 10^9 bytes/s; every size checked by a round trip:\n");
        println!("{}", sweep::table(&points));
        if let Some(path) = &args.plot {
            sweep::plot(
                &points,
                &format!("Copy bandwidth by host memory, {}", gpu.info.name),
                path,
                args.force,
            )?;
            println!("Plot written to {}", path.display());
        }
    }
    verdict(
        measured.iter().all(|m| m.check.passed()) && flags_passed,
        "a product or a host buffer differs from the CPU reference",
    )
}

//! `--mode mmm`: the German slides' table, from pageable host memory.

use anyhow::Result;
use common::check_cuda;
use common::context::new_streams;
use common::gpu::Gpu;
use common::progress::Progress;
use common::verify::Random;
use cust::stream::{Stream, StreamFlags};
use matrix::batch::{slide_ms, slide_table, Batch, Measured};
use matrix::mmm::{load_mmm, MmmKernel};
use profiler::timeline::{write_svg, Kernel};

use crate::Args;

/// The slides' nvprof totals on their Fermi GPU, for the ratios beside ours.
const SLIDE_MS: [(&str, f64); 3] = [
    ("mmm", slide_ms::MMM),
    ("mmm-without-transfers", slide_ms::MMM_WITHOUT_TRANSFERS),
    ("mmm-streamed", slide_ms::MMM_STREAMED),
];

/// Runs the three programs, prints each GPU time and the table; returns whether every product passed.
pub fn run(gpu: &Gpu, args: &Args) -> Result<bool> {
    let (count, n) = (args.count as usize, args.size as usize);
    gpu.ensure_fits(
        Batch::<Vec<f64>>::bytes(count, n),
        &format!("{count} products of {n} x {n} doubles"),
    )?;
    let runs = args.runs();
    println!(
        "\nCOUNT = {count} products of random {n} x {n} doubles, tiled mmm with BLOCK_SIZE {}, pageable host memory; each program timed {}",
        args.block_size,
        runs.describe()
    );
    let module = load_mmm(gpu, args.block_size)?;
    let mmm = Kernel::get(&module, &MmmKernel::Tiled.c_name::<f64>())?;
    // cust 0.3.2 drops NON_BLOCKING, so these streams sync with the NULL stream like the slide's
    // cudaStreamCreate; `main` carries the timing events.
    let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let streams = new_streams(count)?;
    let mut batch = Batch::<Vec<f64>>::random(count, n, args.block_size, args.seed)?;
    let mut random = Random::new(args.seed);

    let progress = Progress::new(SLIDE_MS.len(), "lab-streams");
    let serial = progress.run("mmm", || batch.time_serial(&mmm.plain, &main, runs, &mut random))?;
    progress.println(format!("mmm                    {}", serial.timing));
    let kernels = progress.run("mmm-without-transfers", || {
        batch.time_kernels_only(&mmm.plain, &main, runs, &mut random)
    })?;
    progress.println(format!("mmm-without-transfers  {}", kernels.timing));
    let streamed = progress.run("mmm-streamed", || {
        batch.time_streamed(&mmm, &main, &streams, runs, &mut random)
    })?;
    progress.println(format!("mmm-streamed           {}", streamed.timing));
    drop(progress);

    let kernels_ms = kernels.timing.median_ms();
    let rows: Vec<(&str, &Measured, Option<f64>)> = [&serial, &kernels, &streamed]
        .into_iter()
        .zip(SLIDE_MS)
        .map(|(m, (name, ms))| (name, m, Some(ms)))
        .collect();
    println!("\n{}", slide_table(&rows, kernels_ms));
    if let Some(path) = &args.timeline {
        let spans = batch.record_streamed(&mmm, &main, &streams)?;
        let title = format!(
            "mmm-streamed: {count} products of {n} x {n} doubles, pageable host memory, {}",
            gpu.info.name
        );
        println!("{}", write_svg(path, args.force, &title, &batch.lanes(), &spans)?);
    }
    Ok([&serial, &kernels, &streamed].iter().all(|m| m.check.passed()))
}

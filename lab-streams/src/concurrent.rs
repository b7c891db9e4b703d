//! `--mode concurrent`: several kernels at once on one GPU (German slides: "four kernels in parallel"
//! on their Fermi GPU). Many small kernels of a few blocks each, spread over 1, 2, 4, ... 32 streams
//! (`--order`): the speedup over one stream, and the most kernels that ran at the same moment, read
//! from the kernels' own stamps of when their blocks ran.

use anyhow::Result;
use common::check_cuda;
use common::context::new_streams;
use common::gpu::Gpu;
use common::progress::Progress;
use common::timing::time_on_stream;
use common::verify::check_cell;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use lab_streams::small_kernels::{most_at_once, SmallKernels};
use lab_streams::vector::BLOCK_SIZE;
use lab_streams::Order;
use profiler::timeline::{record, stream_lanes, write_svg, Kernel};

use crate::Args;

pub const STREAM_COUNTS: [usize; 6] = [1, 2, 4, 8, 16, 32];
/// Multiply-adds per thread unless --steps says otherwise: about 1 ms per kernel on an H200, long
/// against the few µs the host needs to launch one, so launching does not limit the overlap.
pub const STEPS: u32 = 1_000_000;

pub fn run(gpu: &Gpu, module: &Module, args: &Args) -> Result<bool> {
    let lcg = Kernel::get(module, "lcg_work")?;
    let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let mut job = SmallKernels::random(
        args.kernels as usize,
        args.blocks_per_kernel,
        args.steps.unwrap_or(STEPS),
        args.seed,
    )?;
    print_limits(gpu, &job, args.order);
    println!("\n| streams | GPU time in ms | speedup over 1 stream | most kernels at once | check |");
    println!("|---------|----------------|-----------------------|----------------------|-------|");
    let mut passed = true;
    let (mut one_stream_ms, mut last) = (None, None);
    let progress = Progress::new(STREAM_COUNTS.len(), "lab-streams --mode concurrent");
    for count in STREAM_COUNTS {
        progress.step(format!("{count} streams"));
        let streams = new_streams(count)?;
        job.poison()?;
        let timing = time_on_stream(&main, args.runs().warmup, args.runs().repetitions, || {
            job.launch(&lcg, &main, &streams, args.order, None)
        })?;
        let wrong = job.wrong_elements()?;
        passed &= wrong == 0;
        // One more run with the stamped twins, for how many ran at once (and the chronogram).
        let spans = record(&main, |recorder| {
            job.launch(&lcg, &main, &streams, args.order, Some(recorder))
        })?;
        let baseline = *one_stream_ms.get_or_insert(timing.median_ms());
        progress.done();
        progress.println(format!(
            "| {count} | {:.3} | {:.2}x | {} | {} |",
            timing.median_ms(),
            baseline / timing.median_ms(),
            most_at_once(&spans),
            check_cell(wrong)
        ));
        last = Some((count, timing, spans));
    }
    drop(progress);
    if let Some((count, timing, spans)) = last {
        println!("\n{count} streams: {timing}");
        if let Some(path) = &args.timeline {
            let title = format!(
                "{} kernels of {} block(s) on {count} streams, {}",
                job.kernels, job.blocks, gpu.info.name
            );
            println!("{}", write_svg(path, args.force, &title, &stream_lanes(count), &spans)?);
        }
    }
    Ok(passed)
}

/// What bounds the number of kernels at once on this GPU, for the table's reader.
fn print_limits(gpu: &Gpu, job: &SmallKernels, order: Order) {
    let info = &gpu.info;
    let connections = std::env::var("CUDA_DEVICE_MAX_CONNECTIONS").unwrap_or_else(|_| "not set: 8".to_string());
    println!(
        "\nConcurrent kernels: {} kernels of {} block(s) x {BLOCK_SIZE} threads, {} multiply-adds per thread, {}",
        job.kernels,
        job.blocks,
        job.steps,
        match order {
            Order::RoundRobin => "kernel k on stream k % streams (--order round-robin)",
            Order::StreamByStream =>
                "the first kernels on stream 0, the next on stream 1, ... (--order stream-by-stream)",
        }
    );
    println!(
        "Limits: concurrent kernels {}; {} multiprocessors x {} blocks and {} threads each; \
         CUDA_DEVICE_MAX_CONNECTIONS (hardware queues the streams share) = {connections}",
        if info.concurrent_kernels {
            "supported"
        } else {
            "NOT supported"
        },
        info.multiprocessors,
        info.max_blocks_per_multiprocessor,
        info.max_threads_per_multiprocessor
    );
}

//! `--mode chunked`: the French slides' pipeline. One job cut into Nst chunks on Nst streams: all
//! copies in are enqueued, then all kernels, then all copies out; the host then waits per stream or
//! once for the device. Host time, since how the host waits is part of the lesson. The host buffers
//! are pinned by default, as the slides' `cudaHostAlloc` makes them; `--host-memory pageable` shows
//! what the pipeline loses without that.

use anyhow::Result;
use common::check_cuda;
use common::context::{fork, new_streams};
use common::progress::Progress;
use common::timing::time_on_host;
use common::verify::{check_cell, Random};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use lab_streams::vector::{Synchronize, VectorJob};
use matrix::HostStorage;
use profiler::timeline::{record, stream_lanes, write_svg, Kernel};

use crate::Args;

pub const STREAM_COUNTS: [usize; 5] = [1, 2, 4, 8, 16];
/// Multiply-adds per element unless --steps says otherwise: on an H200 the kernels then take about as
/// long as each copy, where overlap can hide the most.
pub const STEPS: u32 = 2000;
/// Elements checked against the CPU per run (all are checked for being written).
pub const SAMPLES: usize = 4096;

pub fn run<H: HostStorage<f32>>(module: &Module, args: &Args) -> Result<bool> {
    let work = Kernel::get(module, "vector_work")?;
    let mut job = VectorJob::<H>::random(args.elements as usize, args.vector_steps(), args.seed)?;
    let mut random = Random::new(args.seed);
    println!(
        "\nChunked pipeline: {} floats ({} MiB each way), {} fused multiply-adds each, {} host memory; timed {}",
        args.elements,
        (args.elements as usize * 4) >> 20,
        job.steps,
        H::KIND,
        args.runs().describe()
    );
    job.poison()?;
    let basic = time_on_host(args.runs().warmup, args.runs().repetitions, || job.basic(&work))?;
    let wrong = job.wrong_elements(SAMPLES, &mut random);
    let mut passed = wrong == 0;
    println!(
        "\nThe slides' basic approach (cudaMemcpy in, one grid of N/BSX blocks on stream 0, cudaMemcpy out): host time in ms: {:.3} {}",
        basic.median_ms(),
        check_cell(wrong)
    );
    println!("\n| streams | synchronize | host time in ms | speedup over 1 stream | check |");
    println!("|---------|-------------|-----------------|-----------------------|-------|");
    let mut best: Option<(f64, usize, Synchronize)> = None;
    let progress = Progress::new(2 * STREAM_COUNTS.len(), "lab-streams --mode chunked");
    for how in [Synchronize::PerStream, Synchronize::Device] {
        let mut one_stream_ms = None;
        for count in STREAM_COUNTS {
            progress.step(format!("{count} streams, {how:?}"));
            let streams = new_streams(count)?;
            job.poison()?;
            let timing = time_on_host(args.runs().warmup, args.runs().repetitions, || {
                job.pipeline(&work, &streams, how, None)
            })?;
            let wrong = job.wrong_elements(SAMPLES, &mut random);
            passed &= wrong == 0;
            let baseline = *one_stream_ms.get_or_insert(timing.median_ms());
            if best.is_none_or(|(ms, _, _)| timing.median_ms() < ms) {
                best = Some((timing.median_ms(), count, how));
            }
            progress.done();
            progress.println(format!(
                "| {count} | {how:?} | {:.3} | {:.2}x | {} |",
                timing.median_ms(),
                baseline / timing.median_ms(),
                check_cell(wrong)
            ));
        }
    }
    drop(progress);
    if let Some((ms, count, how)) = best {
        println!("\nFastest: {count} streams, {how:?}: host time in ms: {ms:.3}");
    }
    if let Some(path) = &args.timeline {
        let count = *STREAM_COUNTS.last().expect("stream counts");
        let streams = new_streams(count)?;
        let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
        let spans = record(&main, |recorder| {
            fork(&main, &streams)?;
            job.pipeline(&work, &streams, Synchronize::Device, Some(recorder))
        })?;
        let title = format!(
            "chunked pipeline: {} floats on {count} streams, {} host memory",
            args.elements,
            H::KIND
        );
        println!("{}", write_svg(path, args.force, &title, &stream_lanes(count), &spans)?);
    }
    Ok(passed)
}

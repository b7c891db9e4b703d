//! `--mode fifteen`: the Korean notes' sample. 15 streams over N = 512 x 65535 ints, `host_In[i] = i`
//! and `host_Out[i] = 0` as printed, Out cleared once on the GPU with a memset; then in three loops
//! over the streams every part of In copied in, every part's kernel (Out += In five times, 512
//! threads per block) and every part of Out copied back; timed with events on the NULL stream as the
//! notes do, against one stream. `--order stream-by-stream` issues each stream's three steps before
//! the next stream's instead. Pinned host memory by default, as the notes' `cudaMallocHost` (they say
//! streams need it). `--as-printed` runs the notes' program alone: 15 streams, one cold run.

use anyhow::Result;
use common::context::new_streams;
use common::timing::time_on_stream;
use common::verify::check_cell;
use cust::module::Module;
use cust::stream::Stream;
use lab_streams::vector::{AddFiveTimes, N_THREADS};
use lab_streams::Order;
use matrix::HostStorage;
use profiler::timeline::{record, stream_lanes, write_svg, LazyKernel};

use crate::Args;

pub const N: usize = 512 * 65535;
/// The notes' nStreams.
pub const STREAMS: usize = 15;

pub fn run<H: HostStorage<i32>>(module: &Module, args: &Args) -> Result<bool> {
    let runs = args.runs();
    // cudaEventRecord(StreamStart, 0): the NULL stream waits for the streams' earlier work and they
    // for its, so its two events enclose the whole run without a fork or a join.
    let null = Stream::null();
    let mut job = AddFiveTimes::<H>::as_printed(N)?;
    println!(
        "\nKorean notes' sample: N = 512 x 65535 = {N} ints, In[i] = i, Out += In five times, {N_THREADS} threads per block, {} host memory",
        H::KIND
    );
    println!(
        "Issued {}; Out cleared once on the GPU, so run k leaves 5 k In; timed {}\n",
        describe(args.order),
        runs.describe()
    );
    println!("| streams | GPU time in ms | speedup | check |");
    println!("|---------|----------------|---------|-------|");
    // A cold run times the notes' program alone: 15 streams, nothing run before.
    let counts: &[usize] = if runs.cold() { &[STREAMS] } else { &[1, STREAMS] };
    let mut passed = true;
    let mut one_stream_ms = None;
    let mut last = None;
    // Asked for at its first launch: a cold run then loads it there, as the notes' program does.
    let add = LazyKernel::new(module, "add_five_times");
    for &count in counts {
        let streams = new_streams(count)?;
        job.clear()?;
        // SAFETY: time_on_stream returns only once the device has finished, on every path.
        let timing = time_on_stream(&null, runs.warmup, runs.repetitions, || unsafe {
            job.run(&add, &streams, args.order, None)
        })?;
        let wrong = job.wrong_elements();
        passed &= wrong == 0;
        let baseline = *one_stream_ms.get_or_insert(timing.median_ms());
        // A cold run has no one-stream run to set it against.
        let speedup = if runs.cold() {
            "-".to_string()
        } else {
            format!("{:.2}x", baseline / timing.median_ms())
        };
        println!(
            "| {count} | {:.3} | {speedup} | {} |",
            timing.median_ms(),
            check_cell(wrong)
        );
        last = Some(timing);
    }
    if let Some(timing) = last {
        println!("\n{STREAMS} streams: {timing}");
        // printf("스트림 실행시간: %f msec\n", StreamTime): the notes' line ("stream run time").
        println!("스트림 실행시간: {:.6} msec", timing.median_ms());
    }
    if let Some(path) = &args.timeline {
        let streams = new_streams(STREAMS)?;
        // SAFETY: as above: record returns only once the device has finished.
        let spans = record(&null, |recorder| unsafe {
            job.run(&add, &streams, args.order, Some(recorder))
        })?;
        let title = format!(
            "Korean 15-stream sample: {N} ints, {} host memory, issued {}",
            H::KIND,
            describe(args.order)
        );
        println!(
            "{}",
            write_svg(path, args.force, &title, &stream_lanes(STREAMS), &spans)?
        );
    }
    Ok(passed)
}

/// How `order` issues the sample, for the heading and the chronogram's title.
fn describe(order: Order) -> &'static str {
    match order {
        Order::RoundRobin => "breadth first (all copies in, all kernels, all copies out)",
        Order::StreamByStream => "stream by stream (--order stream-by-stream)",
    }
}

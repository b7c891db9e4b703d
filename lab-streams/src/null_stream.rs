//! `--mode null-stream`: the German slides' warning about the NULL stream. A copy or kernel launched
//! without a stream goes to the NULL stream (the legacy default stream), which waits for all work
//! already queued on the context's other streams and holds up all work queued after it: one
//! forgotten stream argument serializes a pipeline. Small kernels on a few streams, with one more
//! kernel between their two halves, four ways: nothing between; on the NULL stream; on the NULL
//! stream with the other streams made `cudaStreamNonBlocking`; on the per-thread default stream
//! (`cudaStreamPerThread`, what `nvcc --default-stream per-thread` makes of stream 0). The kernels'
//! own stamps give the most that ran at once, and `--timeline` draws all four one above the other.

use anyhow::Result;
use common::check_cuda;
use common::context::{new_streams, Streams};
use common::raw::OrderEvent;
use common::timing::time_on_stream;
use common::verify::check_cell;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use lab_streams::small_kernels::{most_at_once, SmallKernels};
use lab_streams::Order;
use profiler::timeline::{record, write_svg, Kernel, Span};

use crate::Args;

/// Streams, one kernel each: each half of them fits the GPU at once, as the whole does.
pub const STREAMS: usize = 4;
/// Multiply-adds per thread of the small kernels unless --steps says otherwise (about 1 ms), and of
/// the one between (a few µs).
pub const STEPS: u32 = 1_000_000;
const BETWEEN_STEPS: u32 = 1000;

/// Where the kernel between the halves goes, and how the streams are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    Nothing,
    NullStream,
    NullStreamNonBlocking,
    PerThread,
}

impl Case {
    pub const ALL: [Case; 4] = [
        Case::Nothing,
        Case::NullStream,
        Case::NullStreamNonBlocking,
        Case::PerThread,
    ];

    fn streams_made_with(self) -> &'static str {
        match self {
            Case::NullStreamNonBlocking => "cudaStreamCreateWithFlags(cudaStreamNonBlocking)",
            _ => "cudaStreamCreate",
        }
    }

    fn between(self) -> &'static str {
        match self {
            Case::Nothing => "nothing",
            Case::NullStream | Case::NullStreamNonBlocking => "a kernel on stream 0 (<<<g, b>>>)",
            Case::PerThread => "a kernel on cudaStreamPerThread",
        }
    }

    /// The case's streams, with the fork and join events of [`common::context::Streams`].
    fn streams(self) -> Result<Streams> {
        match self {
            // SAFETY: the only synchronous copies of what these streams' kernels write are the
            // checks' read-backs, after `CurrentContext::synchronize` in `run`, and the recorder's read
            // of the stamps, after the join into `main` and `main`'s synchronize.
            Case::NullStreamNonBlocking => Streams::from_streams(
                (0..STREAMS)
                    .map(|_| Ok(check_cuda!(unsafe { Stream::new_non_blocking() })?))
                    .collect::<Result<_>>()?,
            ),
            _ => new_streams(STREAMS),
        }
    }

    /// The stream of the kernel between, if any.
    fn between_stream(self) -> Option<Stream> {
        match self {
            Case::Nothing => None,
            Case::NullStream | Case::NullStreamNonBlocking => Some(Stream::null()),
            Case::PerThread => Some(Stream::per_thread()),
        }
    }
}

pub fn run(module: &Module, args: &Args) -> Result<bool> {
    let lcg = Kernel::get(module, "lcg_work")?;
    let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let steps = args.steps.unwrap_or(STEPS);
    let mut job = SmallKernels::random(STREAMS, args.blocks_per_kernel, steps, args.seed)?;
    let mut op = SmallKernels::random(1, 1, BETWEEN_STEPS, args.seed + 1)?;
    let op_done = OrderEvent::new()?;
    println!(
        "\nThe NULL stream: {STREAMS} kernels of {} block(s), {steps} multiply-adds per thread, one per stream; between the first {} and the rest:\n",
        args.blocks_per_kernel,
        STREAMS / 2
    );
    println!("| streams made with | between the halves | GPU time in ms | most kernels at once | check |");
    println!("|-------------------|--------------------|----------------|----------------------|-------|");
    let mut passed = true;
    let mut drawn: Vec<Span> = Vec::new();
    for (c, case) in Case::ALL.into_iter().enumerate() {
        let streams = case.streams()?;
        job.poison()?;
        op.poison()?;
        let between = case.between_stream();
        let between = between.as_ref().map(|stream| (&op, stream, &op_done));
        let timing = time_on_stream(&main, args.runs().warmup, args.runs().repetitions, || {
            job.launch_split(&lcg, &main, &streams, Order::RoundRobin, between, None)
        })?;
        // Every stream has passed its work (non-blocking ones are not ordered with the NULL stream's
        // synchronous copies below): wait for the whole context before the results are read.
        check_cuda!(cust::context::CurrentContext::synchronize())?;
        let wrong = job.wrong_elements()? + if between.is_some() { op.wrong_elements()? } else { 0 };
        passed &= wrong == 0;
        let spans = record(&main, |recorder| {
            job.launch_split(&lcg, &main, &streams, Order::RoundRobin, between, Some(recorder))
        })?;
        let kernels: Vec<Span> = spans.iter().filter(|s| s.lane < STREAMS).cloned().collect();
        println!(
            "| {} | {} | {:.3} | {} | {} |",
            case.streams_made_with(),
            case.between(),
            timing.median_ms(),
            most_at_once(&kernels),
            check_cell(wrong)
        );
        drawn.extend(spans.into_iter().map(|span| Span {
            lane: c * (STREAMS + 1) + span.lane,
            ..span
        }));
    }
    if let Some(path) = &args.timeline {
        // Short lane names (the chronogram's margin is narrow); the title says which case is which.
        let lanes: Vec<String> = (b'A'..)
            .take(Case::ALL.len())
            .map(char::from)
            .flat_map(|case| {
                (0..STREAMS)
                    .map(move |s| format!("{case}: stream {}", s + 1))
                    .chain(std::iter::once(format!("{case}: between")))
            })
            .collect();
        let title = format!(
            "Kernels on {STREAMS} streams; between the halves: A none, B stream 0, C stream 0 + non-blocking streams, D per-thread stream"
        );
        println!("\n{}", write_svg(path, args.force, &title, &lanes, &drawn)?);
    }
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_between_goes_to_the_streams_the_cases_name() {
        assert!(Case::Nothing.between_stream().is_none());
        assert!(Case::NullStream
            .between_stream()
            .is_some_and(|s| s.as_inner().is_null()));
        assert_eq!(Case::PerThread.between_stream().map(|s| s.as_inner() as usize), Some(2));
    }
}

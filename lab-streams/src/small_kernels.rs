//! The concurrency lesson's job: many small kernels, each too small to fill the GPU, spread over some
//! streams. Every kernel advances a linear congruential generator `steps` times per thread (`lcg_work`
//! in `kernels/cuda/streams.cu`); the CPU checks every result by jumping ahead.

use std::ops::Range;

use anyhow::Result;
use common::check_cuda;
use common::context::{fork, join, Streams};
use common::raw::OrderEvent;
use common::verify::{poison, poisoned_device_buffer, Random};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::stream::Stream;
use profiler::timeline::{kernel_step, Kernel, Recorder, Span};

use crate::vector::{even_chunks, BLOCK_SIZE};
use crate::Order;

/// The stream of each of `kernels` kernels on `streams` streams.
pub fn streams_of(kernels: usize, streams: usize, order: Order) -> Vec<usize> {
    match order {
        Order::RoundRobin => (0..kernels).map(|k| k % streams).collect(),
        Order::StreamByStream => even_chunks(kernels, streams)
            .into_iter()
            .enumerate()
            .flat_map(|(stream, range)| std::iter::repeat_n(stream, range.len()))
            .collect(),
    }
}

/// The generator of `lcg_work`: x -> MULTIPLIER * x + INCREMENT (mod 2^32), Numerical Recipes' constants.
pub const MULTIPLIER: u32 = 1_664_525;
pub const INCREMENT: u32 = 1_013_904_223;

/// `seed` after `steps` steps of the generator, in log2(steps) operations: k steps are again a map
/// x -> a x + c, and doubling k composes that map with itself.
pub fn lcg_after(seed: u32, steps: u32) -> u32 {
    let (mut a, mut c) = (1u32, 0u32); // the steps taken so far: none
    let (mut step_a, mut step_c) = (MULTIPLIER, INCREMENT); // 2^i steps
    let mut remaining = steps;
    while remaining > 0 {
        if remaining & 1 == 1 {
            (a, c) = (step_a.wrapping_mul(a), step_a.wrapping_mul(c).wrapping_add(step_c));
        }
        (step_a, step_c) = (
            step_a.wrapping_mul(step_a),
            step_a.wrapping_mul(step_c).wrapping_add(step_c),
        );
        remaining >>= 1;
    }
    a.wrapping_mul(seed).wrapping_add(c)
}

/// `kernels` launches of `lcg_work`, each over `blocks` blocks of [`BLOCK_SIZE`] threads and its own
/// slice of the seeds and results.
pub struct SmallKernels {
    pub kernels: usize,
    pub blocks: u32,
    pub steps: u32,
    seeds: Vec<u32>,
    d_seeds: DeviceBuffer<u32>,
    d_out: DeviceBuffer<u32>,
}

impl SmallKernels {
    /// Random seeds, already on the GPU (no copies in what is timed); results poisoned.
    pub fn random(kernels: usize, blocks: u32, steps: u32, seed: u64) -> Result<SmallKernels> {
        let mut random = Random::new(seed);
        let seeds: Vec<u32> = (0..kernels * (blocks * BLOCK_SIZE) as usize)
            .map(|_| random.next_u64() as u32)
            .collect();
        Ok(SmallKernels {
            kernels,
            blocks,
            steps,
            d_seeds: check_cuda!(DeviceBuffer::from_slice(&seeds))?,
            d_out: poisoned_device_buffer(seeds.len())?,
            seeds,
        })
    }

    /// Kernel `k`'s elements.
    fn slice(&self, k: usize) -> Range<usize> {
        let per_kernel = (self.blocks * BLOCK_SIZE) as usize;
        k * per_kernel..(k + 1) * per_kernel
    }

    /// Every kernel, on the streams `order` gives, forked from `main` and joined back into it (events
    /// on `main` time the whole); with a recorder, the stamped twins.
    pub fn launch(
        &self,
        lcg: &Kernel,
        main: &Stream,
        streams: &Streams,
        order: Order,
        recorder: Option<&mut Recorder>,
    ) -> Result<()> {
        self.launch_split(lcg, main, streams, order, None, recorder)
    }

    /// [`Self::launch`], and after the first half of the kernels, `op`'s first kernel on `between`
    /// (drawn in lane `streams.len()`), joined into `main` through `done` so that `main`'s events
    /// enclose it too: the German slides' warning that work launched without a stream, on the NULL
    /// stream, waits for all work before it and holds up all work after it.
    pub fn launch_split(
        &self,
        lcg: &Kernel,
        main: &Stream,
        streams: &Streams,
        order: Order,
        between: Option<(&SmallKernels, &Stream, &OrderEvent)>,
        mut recorder: Option<&mut Recorder>,
    ) -> Result<()> {
        fork(main, streams)?;
        for (k, lane) in streams_of(self.kernels, streams.len(), order).into_iter().enumerate() {
            if k == self.kernels / 2 {
                if let Some((op, stream, done)) = between {
                    op.launch_one(lcg, 0, stream, streams.len(), &mut recorder)?;
                    done.record(stream)?;
                    done.wait(main)?;
                }
            }
            self.launch_one(lcg, k, &streams[lane], lane, &mut recorder)?;
        }
        join(main, streams)
    }

    /// Kernel `k` on `stream`, drawn in lane `lane`.
    fn launch_one(
        &self,
        lcg: &Kernel,
        k: usize,
        stream: &Stream,
        lane: usize,
        recorder: &mut Option<&mut Recorder>,
    ) -> Result<()> {
        let range = self.slice(k);
        let (seeds, out) = (
            self.d_seeds.index(range.clone()).as_device_ptr(),
            self.d_out.index(range.clone()).as_device_ptr(),
        );
        let (n, steps, blocks) = (range.len() as i32, self.steps as i32, self.blocks);
        kernel_step(recorder, lane, &format!("kernel {k}"), |stamp| {
            let (plain, stamped) = (&lcg.plain, &lcg.stamped);
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order,
            // and point into live device buffers as large as the kernel indexes.
            Ok(check_cuda!(unsafe {
                match stamp {
                    // __global__ void lcg_work(const unsigned* seeds, unsigned* out, int n, int steps)
                    None => launch!(plain<<<blocks, BLOCK_SIZE, 0, stream>>>(seeds, out, n, steps)),
                    Some(stamp) => launch!(stamped<<<blocks, BLOCK_SIZE, 0, stream>>>(seeds, out, n, steps, stamp)),
                }
            })?)
        })
    }

    /// The poison value into every result.
    pub fn poison(&mut self) -> Result<()> {
        poison(&mut self.d_out)
    }

    /// Results that are not the CPU's, every one checked (an unwritten one still holds the poison).
    pub fn wrong_elements(&self) -> Result<usize> {
        let mut out = vec![0u32; self.seeds.len()];
        check_cuda!(self.d_out.copy_to(&mut out[..]))?;
        Ok(out
            .iter()
            .zip(&self.seeds)
            .filter(|(gpu, seed)| **gpu != lcg_after(**seed, self.steps))
            .count())
    }
}

/// The most kernels that ran at the same moment, from their stamped spans.
pub fn most_at_once(spans: &[Span]) -> usize {
    let mut edges: Vec<(f64, i32)> = spans.iter().flat_map(|s| [(s.start_ms, 1), (s.end_ms, -1)]).collect();
    // At equal times an end comes before a start: kernels that merely touch did not overlap.
    edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let (mut running, mut most) = (0i32, 0i32);
    for (_, change) in edges {
        running += change;
        most = most.max(running);
    }
    most as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler::timeline::Kind;

    fn step_by_step(seed: u32, steps: u32) -> u32 {
        (0..steps).fold(seed, |x, _| x.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT))
    }

    #[test]
    fn jumping_ahead_gives_what_stepping_gives() {
        for (seed, steps) in [
            (0, 0),
            (1, 1),
            (12345, 2),
            (u32::MAX, 3),
            (7, 1000),
            (0xDEAD_BEEF, 100_003),
        ] {
            assert_eq!(
                lcg_after(seed, steps),
                step_by_step(seed, steps),
                "seed {seed}, {steps} steps"
            );
        }
    }

    #[test]
    fn spreads_kernels_round_robin_or_stream_by_stream() {
        assert_eq!(streams_of(7, 3, Order::RoundRobin), vec![0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(streams_of(7, 3, Order::StreamByStream), vec![0, 0, 0, 1, 1, 2, 2]);
        assert_eq!(streams_of(2, 4, Order::StreamByStream), vec![0, 1]);
        assert_eq!(streams_of(8, 4, Order::StreamByStream), vec![0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(streams_of(64, 32, Order::StreamByStream)[63], 31);
    }

    #[test]
    fn counts_the_most_kernels_running_together() {
        let span = |start_ms, end_ms| Span {
            lane: 0,
            kind: Kind::Kernel,
            label: String::new(),
            start_ms,
            end_ms,
            source: Default::default(),
        };
        assert_eq!(most_at_once(&[]), 0);
        assert_eq!(most_at_once(&[span(0.0, 1.0), span(1.0, 2.0), span(2.0, 3.0)]), 1);
        assert_eq!(
            most_at_once(&[span(0.0, 3.0), span(0.5, 1.0), span(0.9, 2.0), span(2.5, 4.0)]),
            3
        );
    }
}

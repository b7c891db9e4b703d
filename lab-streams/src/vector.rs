//! The vector jobs of the streams lectures: the French slides' chunked job (one chunk per stream; all
//! copies in, then all kernels, then all copies out) and the Korean notes' 15-stream sample. Both
//! keep their host buffers in pinned memory as the originals do (`cudaHostAlloc`, `cudaMallocHost`),
//! or in pageable memory for the contrast: the storage is the type parameter `H`.

use std::ops::Range;

use anyhow::Result;
use common::check_cuda;
use common::context::{synchronize_device, Streams, WaitForDevice};
use common::phases::{self, Phase};
use common::verify::{Poison, Random};
use cust::launch;
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer};
use cust::stream::Stream;
use matrix::HostStorage;
use profiler::timeline::{kernel_step, step, Kernel, Kind, LazyKernel, Recorder};
use rayon::prelude::*;

use crate::Order;

/// Threads per block of the vector kernels.
pub const BLOCK_SIZE: u32 = 256;

/// How the host waits for a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Synchronize {
    /// cudaStreamSynchronize on each stream in turn.
    PerStream,
    /// One cudaDeviceSynchronize.
    Device,
}

/// `n` split into `parts` contiguous ranges as the French slides cut their job, one per stream:
/// `N / Nst` elements each, from `i * (N / Nst)`; the slides assume Nst divides N, here the last
/// range takes the rest. (The Korean sample's `i * N / nStreams` gives the same parts at its N.)
pub fn chunks(n: usize, parts: usize) -> Vec<Range<usize>> {
    let size = n / parts;
    (0..parts)
        .map(|part| part * size..if part + 1 == parts { n } else { (part + 1) * size })
        .collect()
}

/// `n` split into `parts` contiguous ranges of nearly equal length, the first ones one longer: work
/// spread over GPUs or streams where no slide says how, so that no part is empty while `parts <= n`.
pub fn even_chunks(n: usize, parts: usize) -> Vec<Range<usize>> {
    let (base, extra) = (n / parts, n % parts);
    let mut start = 0;
    (0..parts)
        .map(|part| {
            let length = base + usize::from(part < extra);
            let range = start..start + length;
            start += length;
            range
        })
        .collect()
}

/// The French slides' job: `out[i]` is `in[i]` after `steps` fused multiply-adds.
pub struct VectorJob<H: HostStorage<f32>> {
    pub input: H,
    pub output: H,
    pub steps: i32,
    d_in: DeviceBuffer<f32>,
    d_out: DeviceBuffer<f32>,
}

impl<H: HostStorage<f32>> VectorJob<H> {
    /// Random inputs in [-1, 1); host and device buffers allocated now, before any timing.
    pub fn random(n: usize, steps: u32, seed: u64) -> Result<Self> {
        let mut random = Random::new(seed);
        let mut input = H::filled(n, 0.0)?;
        input.iter_mut().for_each(|x| *x = random.uniform(-1.0, 1.0) as f32);
        Ok(VectorJob {
            d_in: check_cuda!(DeviceBuffer::from_slice(&input))?,
            d_out: common::verify::poisoned_device_buffer(n)?,
            output: H::filled(n, f32::POISON)?,
            input,
            steps: steps as i32,
        })
    }

    /// NaN into the output, host and device.
    pub fn poison(&mut self) -> Result<()> {
        self.output.fill(f32::POISON);
        common::verify::poison(&mut self.d_out)
    }

    /// Stage 1 of the pipeline: every chunk's copy to the GPU, each on its stream.
    ///
    /// # Safety
    /// The copies read `input` after this returns (also after an error): until the streams have
    /// passed them, `input` must not be written and the job not dropped.
    pub unsafe fn copies_in(&mut self, streams: &[Stream], recorder: &mut Option<&mut Recorder>) -> Result<()> {
        for (lane, (stream, range)) in streams.iter().zip(chunks(self.input.len(), streams.len())).enumerate() {
            let mut d_chunk = self.d_in.index(range.clone());
            step(recorder, stream, lane, Kind::CopyIn, "in", || {
                // SAFETY: equal lengths (same range of equal buffers); `input` stays alive and unwritten
                // until the copy ran (this function's contract).
                Ok(check_cuda!(unsafe {
                    d_chunk.async_copy_from(&self.input[range], stream)
                })?)
            })?;
        }
        Ok(())
    }

    /// Stage 2: every chunk's kernel, each on its stream.
    pub fn kernels(&self, work: &Kernel, streams: &[Stream], recorder: &mut Option<&mut Recorder>) -> Result<()> {
        for (lane, (stream, range)) in streams.iter().zip(chunks(self.input.len(), streams.len())).enumerate() {
            let (d_in, d_out) = (self.d_in.index(range.clone()), self.d_out.index(range.clone()));
            let (d_in, d_out, n, steps) = (
                d_in.as_device_ptr(),
                d_out.as_device_ptr(),
                range.len() as i32,
                self.steps,
            );
            let blocks = (range.len() as u32).div_ceil(BLOCK_SIZE).max(1);
            kernel_step(recorder, lane, "work", |stamp| {
                let (plain, stamped) = (&work.plain, &work.stamped);
                // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order,
                // and point into live device buffers as large as the kernel indexes.
                Ok(check_cuda!(unsafe {
                    match stamp {
                        // __global__ void vector_work(const float* in, float* out, int n, int steps)
                        None => launch!(plain<<<blocks, BLOCK_SIZE, 0, stream>>>(d_in, d_out, n, steps)),
                        Some(stamp) => {
                            launch!(stamped<<<blocks, BLOCK_SIZE, 0, stream>>>(d_in, d_out, n, steps, stamp))
                        }
                    }
                })?)
            })?;
        }
        Ok(())
    }

    /// Stage 3: every chunk's copy back, each on its stream.
    ///
    /// # Safety
    /// The copies write `output` after this returns (also after an error): until the streams have
    /// passed them, `output` must not be read or written and the job not dropped.
    pub unsafe fn copies_out(&mut self, streams: &[Stream], recorder: &mut Option<&mut Recorder>) -> Result<()> {
        for (lane, (stream, range)) in streams.iter().zip(chunks(self.output.len(), streams.len())).enumerate() {
            let d_chunk = self.d_out.index(range.clone());
            step(recorder, stream, lane, Kind::CopyOut, "out", || {
                // SAFETY: equal lengths; `output` stays alive and untouched until the copy ran (this
                // function's contract).
                Ok(check_cuda!(unsafe {
                    d_chunk.async_copy_to(&mut self.output[range], stream)
                })?)
            })?;
        }
        Ok(())
    }

    /// The whole pipeline, then the host waits as `how` says; with a recorder, the run is recorded
    /// for the chronogram.
    pub fn pipeline(
        &mut self,
        work: &Kernel,
        streams: &[Stream],
        how: Synchronize,
        recorder: Option<&mut Recorder>,
    ) -> Result<()> {
        let waiting = WaitForDevice;
        // SAFETY: the job stays borrowed until the device has finished: `wait` below, or `waiting` on
        // any other way out.
        unsafe { self.enqueue(work, streams, recorder) }?;
        wait(streams, how)?;
        waiting.disarm(); // the host has waited as `how` says: no second wait inside what is timed
        Ok(())
    }

    /// The French slides' "basic approach": one synchronous `cudaMemcpy` in, one grid over every
    /// element on stream 0; then, ours and not the slide's, one synchronous `cudaMemcpy` out (which
    /// waits for the grid), so that the result is checked and timed as the pipeline's is. The bus and
    /// the GPU never work at the same time.
    pub fn basic(&mut self, work: &Kernel) -> Result<()> {
        check_cuda!(self.d_in.copy_from(&self.input[..]))?;
        self.kernels(work, &[Stream::null()], &mut None)?;
        check_cuda!(self.d_out.copy_to(&mut self.output[..]))?;
        Ok(())
    }

    /// The three stages, enqueued; the host does not wait.
    ///
    /// # Safety
    /// As for [`Self::copies_in`] and [`Self::copies_out`]: the job is neither used nor dropped until
    /// the streams have finished.
    pub unsafe fn enqueue(
        &mut self,
        work: &Kernel,
        streams: &[Stream],
        mut recorder: Option<&mut Recorder>,
    ) -> Result<()> {
        // SAFETY: the caller's contract covers both stages' copies.
        unsafe {
            self.copies_in(streams, &mut recorder)?;
            self.kernels(work, streams, &mut recorder)?;
            self.copies_out(streams, &mut recorder)
        }
    }

    /// The CPU's value of element `i` ([`expected`]).
    pub fn expected(&self, i: usize) -> f32 {
        expected(self.input[i], self.steps.max(0) as u32)
    }

    /// Elements still poisoned (never copied back) plus, at `samples` random elements, values that
    /// differ from the CPU's; 0 means the run is right.
    pub fn wrong_elements(&self, samples: usize, random: &mut Random) -> usize {
        let _phase = phases::enter(Phase::Verify);
        let unwritten = self.output.par_iter().filter(|x| x.is_poison()).count();
        let differing = (0..samples)
            .map(|_| random.below(self.output.len() as u64) as usize)
            .filter(|&i| self.output[i].to_bits() != self.expected(i).to_bits())
            .count();
        unwritten + differing
    }
}

/// The CPU's value of one element: `vector_work`'s `steps` fused multiply-adds, so the same bits.
pub fn expected(x: f32, steps: u32) -> f32 {
    (0..steps).fold(x, |x, _| x.mul_add(0.999, 0.001))
}

/// Elements side by side in [`expected_all`]: eight vectors of eight, enough independent chains to
/// keep a core's FMA units busy while each chain waits for its last result.
const LANES: usize = 64;

/// [`expected`] of every element of `inputs`, on every core, [`LANES`] elements side by side, which
/// the compiler turns into vector FMAs (x86-64 CPUs with FMA, found at run time; every aarch64).
/// One element after another, each FMA waits for the one before and, without the FMA feature,
/// calls libm: 7000003 elements at 2200 steps took 40 s of one core, against 0.3 s side by side,
/// with the same bits.
pub fn expected_all(inputs: &[f32], steps: u32) -> Vec<f32> {
    let mut values = inputs.to_vec();
    values.par_chunks_mut(LANES).for_each(|chunk| {
        let mut lanes = [0.0; LANES];
        lanes[..chunk.len()].copy_from_slice(chunk);
        side_by_side(&mut lanes, steps);
        chunk.copy_from_slice(&lanes[..chunk.len()]);
    });
    values
}

/// [`steps_side_by_side`], with vector FMA instructions where the CPU has them.
fn side_by_side(lanes: &mut [f32; LANES], steps: u32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: `lanes_with_fma` needs only AVX and FMA, which this CPU has (checked just above).
        unsafe { lanes_with_fma(lanes, steps) };
        return;
    }
    steps_side_by_side(lanes, steps);
}

/// [`steps_side_by_side`] compiled with x86-64's vector FMA instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
fn lanes_with_fma(lanes: &mut [f32; LANES], steps: u32) {
    steps_side_by_side(lanes, steps);
}

/// [`expected`] of each of `lanes`, a step of all of them at a time.
#[inline(always)]
fn steps_side_by_side(lanes: &mut [f32; LANES], steps: u32) {
    for _ in 0..steps {
        for x in lanes.iter_mut() {
            *x = x.mul_add(0.999, 0.001);
        }
    }
}

/// Waits for `streams` one by one, or for the whole device.
pub fn wait(streams: &[Stream], how: Synchronize) -> Result<()> {
    match how {
        Synchronize::PerStream => {
            for stream in streams {
                check_cuda!(stream.synchronize())?;
            }
            Ok(())
        }
        Synchronize::Device => synchronize_device(),
    }
}

/// The Korean notes' nThreads: threads per block of `add_five_times`. With N = 512 x 65535 each of the
/// 15 streams gets 65535 / 15 = 4369 whole blocks, as in the notes.
pub const N_THREADS: u32 = 512;

/// The Korean notes' sample: `Out += In` five times over N ints, split over the streams. As in the
/// notes, Out is cleared once (`host_Out[i] = 0`, `cudaMemset(dev_Out, 0, Size)`) and never copied in:
/// each run copies In in, adds and copies Out back, so after k runs Out holds 5 k In, which is what
/// the check expects.
pub struct AddFiveTimes<H: HostStorage<i32>> {
    pub input: H,
    pub output: H,
    d_in: DeviceBuffer<i32>,
    d_out: DeviceBuffer<i32>,
    /// Runs enqueued since the last [`Self::clear`].
    runs: i32,
}

/// One stream's part of the sample: its lane in the chronogram, its stream, its range of In and Out.
type Part<'a> = (usize, &'a Stream, Range<usize>);

impl<H: HostStorage<i32>> AddFiveTimes<H> {
    /// The notes' data: `host_In[i] = i`, `host_Out[i] = 0`.
    pub fn as_printed(n: usize) -> Result<Self> {
        let mut input = H::filled(n, 0)?;
        input.iter_mut().enumerate().for_each(|(i, x)| *x = i as i32);
        Self::with_input(input)
    }

    /// Random ints from 1 to 1000 in In, so that every expected sum differs from Out's 0.
    pub fn random(n: usize, seed: u64) -> Result<Self> {
        let mut random = Random::new(seed);
        let mut input = H::filled(n, 0)?;
        input.iter_mut().for_each(|x| *x = (1 + random.below(1000)) as i32);
        Self::with_input(input)
    }

    /// Out 0 on the host; In and Out on the GPU zeroed as the notes' two `cudaMemset`s.
    fn with_input(input: H) -> Result<Self> {
        let n = input.len();
        Ok(AddFiveTimes {
            d_in: check_cuda!(DeviceBuffer::zeroed(n))?,
            d_out: check_cuda!(DeviceBuffer::zeroed(n))?,
            output: H::filled(n, 0)?,
            input,
            runs: 0,
        })
    }

    /// Out cleared again as at the start (`cudaMemset(dev_Out, 0, Size)` and `host_Out[i] = 0`),
    /// outside every timed window. A part no stream copied back keeps 0 where 5 k In is not 0, so the
    /// check sees it.
    pub fn clear(&mut self) -> Result<()> {
        check_cuda!(self.d_out.set_32(0))?;
        self.output.fill(0);
        self.runs = 0;
        Ok(())
    }

    /// One run over `streams` in `order`; with a recorder, every copy and kernel lies between events
    /// for the chronogram. No fork or join, as in the notes: time it with events on the NULL stream
    /// (`Stream::null()`), which enclose the work of blocking streams such as
    /// those of [`common::context::new_streams`].
    ///
    /// # Safety
    /// The copies read `input` and write `output` after this returns (also after an error): until the
    /// device has finished them, the job must not be used or dropped.
    /// [`time_on_stream`](common::timing::time_on_stream) and [`record`](profiler::timeline::record)
    /// wait so on every path.
    pub unsafe fn run(
        &mut self,
        add: &LazyKernel,
        streams: &Streams,
        order: Order,
        mut recorder: Option<&mut Recorder>,
    ) -> Result<()> {
        let ranges = chunks(self.input.len(), streams.len());
        let parts: Vec<Part> = streams
            .iter()
            .zip(ranges)
            .enumerate()
            .map(|(lane, (stream, range))| (lane, stream, range))
            .collect();
        match order {
            Order::RoundRobin => {
                for part in &parts {
                    // SAFETY: this function's contract: `input` stays alive and unwritten until the copy ran.
                    unsafe { self.copy_in(part, &mut recorder) }?;
                }
                for part in &parts {
                    self.launch(add, part, &mut recorder)?;
                }
                for part in &parts {
                    // SAFETY: this function's contract: `output` stays alive and untouched until the copy ran.
                    unsafe { self.copy_out(part, &mut recorder) }?;
                }
            }
            Order::StreamByStream => {
                for part in &parts {
                    // SAFETY: as in the three loops above.
                    unsafe { self.copy_in(part, &mut recorder) }?;
                    self.launch(add, part, &mut recorder)?;
                    // SAFETY: as in the three loops above.
                    unsafe { self.copy_out(part, &mut recorder) }?;
                }
            }
        }
        self.runs += 1;
        Ok(())
    }

    /// The part's In to the GPU, on its stream.
    ///
    /// # Safety
    /// `input` must stay alive and unwritten until the stream has passed the copy.
    unsafe fn copy_in(&mut self, (lane, stream, range): &Part, recorder: &mut Option<&mut Recorder>) -> Result<()> {
        let mut d_in = self.d_in.index(range.clone());
        step(recorder, stream, *lane, Kind::CopyIn, "In", || {
            // SAFETY: equal lengths (one range of equal buffers); `input` outlives the copy (the contract).
            Ok(check_cuda!(unsafe {
                d_in.async_copy_from(&self.input[range.clone()], stream)
            })?)
        })
    }

    /// The part's kernel, `n / N_THREADS` blocks of [`N_THREADS`] (rounded up), on its stream.
    /// The kernel is asked for here, so that a cold run loads it where the notes' program does.
    fn launch(
        &self,
        add: &LazyKernel,
        (lane, stream, range): &Part,
        recorder: &mut Option<&mut Recorder>,
    ) -> Result<()> {
        let add = add.get()?;
        let (d_in, d_out) = (
            self.d_in.index(range.clone()).as_device_ptr(),
            self.d_out.index(range.clone()).as_device_ptr(),
        );
        let (n, blocks) = (range.len() as i32, (range.len() as u32).div_ceil(N_THREADS).max(1));
        kernel_step(recorder, *lane, "kernel", |stamp| {
            let (plain, stamped) = (&add.plain, &add.stamped);
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order,
            // and point into live device buffers as large as the kernel indexes.
            Ok(check_cuda!(unsafe {
                match stamp {
                    // __global__ void add_five_times(const int* in, int* out, int n)
                    None => launch!(plain<<<blocks, N_THREADS, 0, stream>>>(d_in, d_out, n)),
                    Some(stamp) => launch!(stamped<<<blocks, N_THREADS, 0, stream>>>(d_in, d_out, n, stamp)),
                }
            })?)
        })
    }

    /// The part's Out back to the host, on its stream.
    ///
    /// # Safety
    /// `output` must stay alive and untouched until the stream has passed the copy.
    unsafe fn copy_out(&mut self, (lane, stream, range): &Part, recorder: &mut Option<&mut Recorder>) -> Result<()> {
        let d_out = self.d_out.index(range.clone());
        step(recorder, stream, *lane, Kind::CopyOut, "Out", || {
            // SAFETY: equal lengths; `output` outlives the copy and nothing else touches it (the contract).
            Ok(check_cuda!(unsafe {
                d_out.async_copy_to(&mut self.output[range.clone()], stream)
            })?)
        })
    }

    /// Elements that are not 5 x runs x In (all of them checked). The GPU's int additions wrap, and so
    /// does this product: with the notes' In (up to N - 1) the sums pass 2^31 after 12 runs.
    pub fn wrong_elements(&self) -> usize {
        let _phase = phases::enter(Phase::Verify);
        let factor = 5i32.wrapping_mul(self.runs);
        let (input, output) = (&self.input[..], &self.output[..]);
        (0..input.len())
            .into_par_iter()
            .filter(|&i| output[i] != input[i].wrapping_mul(factor))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_everything_once_in_order() {
        assert_eq!(chunks(10, 3), vec![0..3, 3..6, 6..10]);
        assert_eq!(
            chunks(512 * 65535, 15).iter().map(|r| r.len()).collect::<Vec<_>>(),
            vec![2_236_928; 15]
        );
        assert_eq!(chunks(1 << 24, 16)[15], 15 << 20..1 << 24);
        assert_eq!(chunks(7, 1), vec![0..7]);
    }

    #[test]
    fn even_chunks_leave_no_part_empty_while_there_is_work_for_each() {
        assert_eq!(even_chunks(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(even_chunks(2, 4), vec![0..1, 1..2, 2..2, 2..2]);
        for (n, parts) in [(10, 4), (10, 6), (10, 10), (64, 32), (1000003, 16)] {
            let ranges = even_chunks(n, parts);
            assert!(ranges.iter().all(|r| !r.is_empty()), "{n} over {parts}: {ranges:?}");
            assert_eq!(ranges.last().map(|r| r.end), Some(n));
        }
    }

    /// Side by side or one after another, the same bits: on random inputs, a length that leaves a
    /// last chunk of 13 lanes, steps as week 5's H200 runs them.
    #[test]
    fn every_element_at_once_gives_the_bits_of_one_at_a_time() {
        let mut random = Random::new(65);
        let inputs: Vec<f32> = (0..3 * LANES + 13).map(|_| random.uniform(-1.0, 1.0) as f32).collect();
        for steps in [0, 1, 2200] {
            let all = expected_all(&inputs, steps);
            assert_eq!(all.len(), inputs.len());
            for (i, (&x, value)) in inputs.iter().zip(&all).enumerate() {
                assert_eq!(
                    value.to_bits(),
                    expected(x, steps).to_bits(),
                    "element {i}, {steps} steps"
                );
            }
        }
        assert_ne!(expected_all(&inputs, 2200), inputs, "the steps changed nothing");
        // The portable path too, which this machine's CPU may not take.
        let mut lanes = [0.0; LANES];
        lanes.copy_from_slice(&inputs[..LANES]);
        steps_side_by_side(&mut lanes, 2200);
        let want: Vec<u32> = inputs[..LANES].iter().map(|&x| expected(x, 2200).to_bits()).collect();
        assert_eq!(lanes.map(f32::to_bits).to_vec(), want);
    }
}

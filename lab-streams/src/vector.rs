//! The vector jobs of the streams lectures: the French slides' chunked job (one chunk per stream; all
//! copies in, then all kernels, then all copies out) and the Korean notes' 15-stream sample. Both
//! keep their host buffers in pinned memory as the originals do (`cudaHostAlloc`, `cudaMallocHost`),
//! or in pageable memory for the contrast: the storage is the type parameter `H`.

use std::ops::Range;

use anyhow::Result;
use common::check_cuda;
use common::context::{fork, join, synchronize_device, Streams, WaitForDevice};
use common::matrix::HostStorage;
use common::phases::{self, Phase};
use common::timeline::{kernel_step, step, Kernel, Kind, Recorder};
use common::verify::{Poison, Random};
use cust::launch;
use cust::memory::{AsyncCopyDestination, DeviceBuffer};
use cust::stream::Stream;
use rayon::prelude::*;

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

/// `n` split into `parts` contiguous ranges of nearly equal length (the first ones one longer).
pub fn chunks(n: usize, parts: usize) -> Vec<Range<usize>> {
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
            // SAFETY: equal lengths (same range of equal buffers); `input` stays alive and unwritten
            // until the copy ran (this function's contract).
            step(recorder, stream, lane, Kind::CopyIn, "in", || Ok(check_cuda!(unsafe { d_chunk.async_copy_from(&self.input[range], stream) })?))?;
        }
        Ok(())
    }

    /// Stage 2: every chunk's kernel, each on its stream.
    pub fn kernels(&self, work: &Kernel, streams: &[Stream], recorder: &mut Option<&mut Recorder>) -> Result<()> {
        for (lane, (stream, range)) in streams.iter().zip(chunks(self.input.len(), streams.len())).enumerate() {
            let (d_in, d_out) = (self.d_in.index(range.clone()), self.d_out.index(range.clone()));
            let (d_in, d_out, n, steps) = (d_in.as_device_ptr(), d_out.as_device_ptr(), range.len() as i32, self.steps);
            let blocks = (range.len() as u32).div_ceil(BLOCK_SIZE).max(1);
            kernel_step(recorder, lane, "work", |stamp| {
                let (plain, stamped) = (&work.plain, &work.stamped);
                // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order,
                // and point into live device buffers as large as the kernel indexes.
                Ok(check_cuda!(unsafe {
                    match stamp {
                        // __global__ void vector_work(const float* in, float* out, int n, int steps)
                        None => launch!(plain<<<blocks, BLOCK_SIZE, 0, stream>>>(d_in, d_out, n, steps)),
                        Some(stamp) => launch!(stamped<<<blocks, BLOCK_SIZE, 0, stream>>>(d_in, d_out, n, steps, stamp)),
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
            // SAFETY: equal lengths; `output` stays alive and untouched until the copy ran (this
            // function's contract).
            step(recorder, stream, lane, Kind::CopyOut, "out", || Ok(check_cuda!(unsafe { d_chunk.async_copy_to(&mut self.output[range], stream) })?))?;
        }
        Ok(())
    }

    /// The whole pipeline, then the host waits as `how` says; with a recorder, the run is recorded
    /// for the chronogram.
    pub fn pipeline(&mut self, work: &Kernel, streams: &[Stream], how: Synchronize, recorder: Option<&mut Recorder>) -> Result<()> {
        let waiting = WaitForDevice;
        // SAFETY: the job stays borrowed until the device has finished: `wait` below, or `waiting` on
        // any other way out.
        unsafe { self.enqueue(work, streams, recorder) }?;
        wait(streams, how)?;
        waiting.disarm(); // the host has waited as `how` says: no second wait inside what is timed
        Ok(())
    }

    /// The three stages, enqueued; the host does not wait.
    ///
    /// # Safety
    /// As for [`Self::copies_in`] and [`Self::copies_out`]: the job is neither used nor dropped until
    /// the streams have finished.
    pub unsafe fn enqueue(&mut self, work: &Kernel, streams: &[Stream], mut recorder: Option<&mut Recorder>) -> Result<()> {
        // SAFETY: the caller's contract covers both stages' copies.
        unsafe {
            self.copies_in(streams, &mut recorder)?;
            self.kernels(work, streams, &mut recorder)?;
            self.copies_out(streams, &mut recorder)
        }
    }

    /// The CPU's value of element `i`: the same fused multiply-adds, so the same bits.
    pub fn expected(&self, i: usize) -> f32 {
        (0..self.steps).fold(self.input[i], |x, _| x.mul_add(0.999, 0.001))
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

/// The Korean notes' sample: `out += in` five times over N ints, split over the streams, each stream
/// copying its part of `in` and `out` in, running the kernel and copying `out` back. (The notes copy
/// `out` in only once, before the first run; copying it in every run makes every run the same.)
pub struct AddFiveTimes<H: HostStorage<i32>> {
    pub input: H,
    pub original: H,
    pub output: H,
    d_in: DeviceBuffer<i32>,
    d_out: DeviceBuffer<i32>,
}

impl<H: HostStorage<i32>> AddFiveTimes<H> {
    /// Random ints from 1 to 1000 (five additions cannot overflow).
    pub fn random(n: usize, seed: u64) -> Result<Self> {
        let mut random = Random::new(seed);
        let (mut input, mut original) = (H::filled(n, 0)?, H::filled(n, 0)?);
        input.iter_mut().chain(original.iter_mut()).for_each(|x| *x = (1 + random.below(1000)) as i32);
        Ok(AddFiveTimes {
            d_in: check_cuda!(DeviceBuffer::from_slice(&input))?,
            d_out: check_cuda!(DeviceBuffer::from_slice(&original))?,
            output: H::filled(n, i32::MIN)?,
            input,
            original,
        })
    }

    /// One run over `streams`, forked from and joined into `main` (events on `main` time it); with a
    /// recorder, every copy and kernel lies between events for the chronogram.
    ///
    /// # Safety
    /// The copies read `input` and `original` and write `output` after this returns (also after an
    /// error): until the device has finished them, the job must not be used or dropped.
    /// [`time_on_stream`](common::timing::time_on_stream) and [`record`](common::timeline::record)
    /// wait so on every path.
    pub unsafe fn run(&mut self, add: &Kernel, main: &Stream, streams: &Streams, mut recorder: Option<&mut Recorder>) -> Result<()> {
        fork(main, streams)?;
        for (lane, (stream, range)) in streams.iter().zip(chunks(self.input.len(), streams.len())).enumerate() {
            let (mut d_in, mut d_out) = (self.d_in.index(range.clone()), self.d_out.index(range.clone()));
            // SAFETY: equal lengths (one range of equal buffers); the host buffers stay alive and
            // untouched until the copies ran (this function's contract).
            step(&mut recorder, stream, lane, Kind::CopyIn, "In, Out", || unsafe {
                check_cuda!(d_in.async_copy_from(&self.input[range.clone()], stream))?;
                Ok(check_cuda!(d_out.async_copy_from(&self.original[range.clone()], stream))?)
            })?;
            let (n, blocks) = (range.len() as i32, (range.len() as u32).div_ceil(BLOCK_SIZE).max(1));
            let (d_in, d_out_pointer) = (d_in.as_device_ptr(), d_out.as_device_ptr());
            kernel_step(&mut recorder, lane, "kernel", |stamp| {
                let (plain, stamped) = (&add.plain, &add.stamped);
                // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order,
                // and point into live device buffers as large as the kernel indexes.
                Ok(check_cuda!(unsafe {
                    match stamp {
                        // __global__ void add_five_times(const int* in, int* out, int n)
                        None => launch!(plain<<<blocks, BLOCK_SIZE, 0, stream>>>(d_in, d_out_pointer, n)),
                        Some(stamp) => launch!(stamped<<<blocks, BLOCK_SIZE, 0, stream>>>(d_in, d_out_pointer, n, stamp)),
                    }
                })?)
            })?;
            // SAFETY: as for the copies in.
            step(&mut recorder, stream, lane, Kind::CopyOut, "Out", || Ok(check_cuda!(unsafe { d_out.async_copy_to(&mut self.output[range], stream) })?))?;
        }
        join(main, streams)
    }

    /// Out back to the poison value, so a part no stream copied back shows.
    pub fn poison(&mut self) {
        self.output.fill(i32::MIN);
    }

    /// Elements that are not original + 5 * input (all of them checked).
    pub fn wrong_elements(&self) -> usize {
        let _phase = phases::enter(Phase::Verify);
        let (input, original, output) = (&self.input[..], &self.original[..], &self.output[..]);
        (0..input.len()).into_par_iter().filter(|&i| output[i] != original[i] + 5 * input[i]).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_everything_once_in_order() {
        assert_eq!(chunks(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(chunks(512 * 65535, 15).iter().map(|r| r.len()).collect::<Vec<_>>(), vec![2_236_928; 15]);
        assert_eq!(chunks(2, 4), vec![0..1, 1..2, 2..2, 2..2]);
    }
}

//! The Korean notes' two conditions on zero-copy memory (issue 64): a kernel that uses mapped memory
//! must meet the same coalescing conditions as for global memory ("맵드 메모리를 사용할 때, 글로벌
//! 메모리의 결합 전송과 동일한 조건을 커널에서 충족시켜야 한다"), and many small accesses to mapped memory
//! do worse than an ordinary transfer ("작은 크기의 데이터를 많은 횟수로 맵드 메모리를 엑세스 하게 되면,
//! 통상적인 데이터 전송보다 떨어지는 효과"). mapped.cu's `strided_read` reads `in[offset + i*stride]` for
//! N elements, at strides 1 to 32 and offsets 0 and 1, from device memory and from mapped host memory,
//! and writes `in + 1` to `out[offset + i*stride]` in device memory; a last run copies the same N
//! floats, packed in pinned memory, with one `cudaMemcpyAsync` and reads them from device memory.
//!
//! Why strides cost: memory moves in 32-byte sectors. A warp's 32 floats at stride 1 are 4 sectors; at
//! stride 8 or more every float is a sector of its own, 8 times the bytes asked for; one float off
//! (offset 1), the warp's 128 bytes straddle a fifth sector. Device memory pays for the sectors out of
//! terabytes per second; mapped memory pays across the bus (PCIe, tens of GB/s, a microsecond away),
//! where every sector is a read request of its own. So the same kernel loses bandwidth by the same
//! stride on both, and at a wide stride it takes many times longer to read its N floats from mapped
//! memory than one copy of them takes.
//!
//! Every run, device or mapped, starts with the L2 cache emptied (a memset over twice its size, outside
//! the timed events), so that no run finds its input left there by the one before. The input is random
//! and never zero; the check reads back the whole stretch of `out` a run could reach and wants
//! `in[j] + 1`, bit for bit, where an element was written and the poison everywhere else: before the
//! offset, between the elements, after the last.

use anyhow::{ensure, Result};
use common::check_cuda;
use common::gpu::{Flush, Gpu};
use common::host_memory::Mapped;
use common::progress::Progress;
use common::timing::{time_on_stream_after, Runs, Timing};
use common::verify::{check_cell, poison, poisoned_device_buffer, Poison, Random};
use cust::function::Function;
use cust::launch;
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DevicePointer, LockedBuffer};
use cust::module::Module;
use cust::stream::Stream;
use rayon::prelude::*;

use crate::BLOCK_SIZE;

/// The table's strides, in floats: from 4 sectors per warp (1) to a 128-byte line per float (32).
pub const STRIDES: [usize; 6] = [1, 2, 4, 8, 16, 32];
/// The table's offsets, in floats: aligned, and one float past a sector's start.
pub const OFFSETS: [usize; 2] = [0, 1];
/// `READS_PER_THREAD` in mapped.cu: the elements each thread reads, all before it writes any.
pub const READS_PER_THREAD: usize = 4;
/// Elements one block of [`BLOCK_SIZE`] threads reads.
pub const BLOCK_READS: usize = BLOCK_SIZE as usize * READS_PER_THREAD;
/// The most elements `--strided-elements` takes: the widest access spans 32 floats per element, so
/// the mapped input is then 512 MiB.
pub const MAX_ELEMENTS: u32 = 1 << 22;

/// Where `strided_read` reads and writes element i: `offset + i*stride`, in floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Floats between two elements.
    pub stride: usize,
    /// Floats before the first.
    pub offset: usize,
}

impl Access {
    /// The copy's read: the packed floats, from the start.
    pub const PACKED: Access = Access { stride: 1, offset: 0 };

    /// Every row of the table: each stride aligned, then one float off.
    pub fn all() -> impl Iterator<Item = Access> {
        STRIDES
            .into_iter()
            .flat_map(|stride| OFFSETS.into_iter().map(move |offset| Access { stride, offset }))
    }

    /// The access whose buffers are the largest: every other one fits in them.
    fn widest() -> Access {
        Access {
            stride: STRIDES[STRIDES.len() - 1],
            offset: OFFSETS[OFFSETS.len() - 1],
        }
    }

    /// `offset + i*stride`.
    pub fn index(&self, i: usize) -> usize {
        self.offset + i * self.stride
    }

    /// Floats the kernel reaches for `n` (at least 1) elements: up to the last one.
    pub fn reach(&self, n: usize) -> usize {
        self.index(n - 1) + 1
    }

    /// Floats of `out` the check reads: up to the last element's neighbour, which must stay poison.
    pub fn span(&self, n: usize) -> usize {
        self.reach(n) + 1
    }

    /// The element that `strided_read` writes at `out[j]`, if any.
    fn element_at(&self, j: usize, n: usize) -> Option<usize> {
        let from = j.checked_sub(self.offset)?;
        (from.is_multiple_of(self.stride) && from / self.stride < n).then_some(from / self.stride)
    }

    /// Floats of `out` (the first [`Access::span`] of them, read back) that are not what the CPU
    /// expects: `input[j] + 1` (f32, bit for bit) where an element was written, the poison at every
    /// other float. A missing float is wrong too.
    pub fn wrong(&self, n: usize, input: &[f32], out: &[f32]) -> usize {
        let span = self.span(n);
        let wrong = out[..span.min(out.len())]
            .par_iter()
            .enumerate()
            .filter(|&(j, value)| match self.element_at(j, n) {
                Some(_) => value.to_bits() != (input[j] + 1.0).to_bits(),
                None => !value.holds_word(f32::POISON_WORD),
            })
            .count();
        wrong + span.saturating_sub(out.len())
    }
}

/// Blocks of [`BLOCK_SIZE`] threads that read `n` elements, [`READS_PER_THREAD`] each.
pub fn blocks(n: usize) -> u32 {
    n.div_ceil(BLOCK_READS) as u32
}

/// One run of the table: where `in` lives, and how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// `in` in device memory (`cudaMalloc`), filled before the timing.
    Device(Access),
    /// `in` in mapped host memory (`cudaHostAlloc(..., cudaHostAllocMapped)`), through
    /// `cudaHostGetDevicePointer`: every read crosses the bus.
    Mapped(Access),
    /// The N floats packed in pinned memory (`cudaMallocHost`), copied to device memory with
    /// `cudaMemcpyAsync` inside the timing, then read at stride 1: what an ordinary transfer of the
    /// same data costs.
    AfterCopy,
}

impl Read {
    /// Where the run reads and writes.
    pub fn access(&self) -> Access {
        match self {
            Read::Device(access) | Read::Mapped(access) => *access,
            Read::AfterCopy => Access::PACKED,
        }
    }
}

/// A timed, checked run.
#[derive(Debug, Clone)]
pub struct Measured {
    /// N, the elements each run read.
    pub elements: usize,
    /// The timed runs, on the GPU's clock.
    pub timing: Timing,
    /// Floats of `out` that are not what the CPU expects.
    pub wrong: usize,
}

impl Measured {
    /// The bytes of `in` the program asked for (4 an element) per second, median run: across the bus,
    /// this is what the link delivers of use.
    pub fn bandwidth(&self) -> f64 {
        4.0 * self.elements as f64 / (self.timing.median_ms() * 1e-3)
    }
}

/// Memory the table takes for `n` elements on the host (the mapped input and the check's pinned
/// staging buffer, both as wide as the widest access, and the packed copy source) and again on the GPU
/// (input, output, packed copy; the flush comes on top).
pub fn buffer_bytes(n: usize) -> u64 {
    4 * (2 * Access::widest().span(n) + n) as u64
}

/// The table's buffers for N elements, for every row.
pub struct StridedRead<'m> {
    /// `strided_read`, fetched once: a lookup inside the timed runs would be host time between events.
    strided_read: Function<'m>,
    n: usize,
    /// `in` over the widest access's span: random, never zero. The CPU's reference reads it here.
    mapped_in: Mapped<f32>,
    /// The same floats in device memory.
    d_in: DeviceBuffer<f32>,
    /// The first N floats of `in`, packed in pinned memory, and where the copy puts them.
    h_in: LockedBuffer<f32>,
    d_packed: DeviceBuffer<f32>,
    /// Poisoned before every run.
    d_out: DeviceBuffer<f32>,
    /// Empties the L2 before every run.
    flush: Flush,
    /// Where the check reads `out` back (pinned: the copy engine writes it directly).
    staging: LockedBuffer<f32>,
}

impl<'m> StridedRead<'m> {
    /// The buffers for `n` elements, `in` drawn from `seed`, the flush sized for an L2 of `l2_bytes`.
    pub fn new(module: &'m Module, n: usize, l2_bytes: u32, seed: u64) -> Result<StridedRead<'m>> {
        ensure!(
            (1..=MAX_ELEMENTS as usize).contains(&n),
            "{n} strided elements: the table reads 1 to {MAX_ELEMENTS}"
        );
        let floats = Access::widest().span(n);
        // cudaHostAlloc(&mapped_in, floats * sizeof(float), cudaHostAllocMapped)
        let mut mapped_in = Mapped::new(floats, 0.0f32, false)?;
        Random::new(seed).fill(&mut mapped_in[..], |random| random.uniform(0.5, 1.5) as f32);
        Ok(StridedRead {
            strided_read: check_cuda!(module.get_function("strided_read"))?,
            n,
            d_in: check_cuda!(DeviceBuffer::from_slice(&mapped_in[..]))?,
            h_in: check_cuda!(LockedBuffer::from_slice(&mapped_in[..n]))?,
            d_packed: poisoned_device_buffer(n)?,
            d_out: poisoned_device_buffer(floats)?,
            flush: Flush::new(l2_bytes)?,
            staging: check_cuda!(LockedBuffer::new(&0.0f32, floats))?,
            mapped_in,
        })
    }

    /// Times `read` on `stream` as `runs` says, the L2 emptied before each run, and checks it.
    pub fn measure(&mut self, read: Read, stream: &Stream, runs: Runs) -> Result<Measured> {
        let (access, n) = (read.access(), self.n);
        poison(&mut self.d_out)?;
        if read == Read::AfterCopy {
            // A run that read the packed buffer before its copy landed would find the poison.
            poison(&mut self.d_packed)?;
        }
        // Where `in` is, and how many floats it holds there.
        let (input, input_len) = match read {
            Read::Device(_) => (self.d_in.as_device_ptr(), self.d_in.len()),
            // cudaHostGetDevicePointer(&d_mapped_in, mapped_in, 0)
            Read::Mapped(_) => (self.mapped_in.device_pointer()?, self.mapped_in.len()),
            Read::AfterCopy => (self.d_packed.as_device_ptr(), self.d_packed.len()),
        };
        ensure!(
            access.reach(n) <= input_len && access.span(n) <= self.d_out.len(),
            "{read:?}: {n} elements do not fit the buffers"
        );
        let out = self.d_out.as_device_ptr();
        let (strided_read, flush) = (&self.strided_read, &self.flush);
        let (h_in, d_packed) = (&self.h_in, &mut self.d_packed);
        let timing = time_on_stream_after(
            stream,
            runs.warmup,
            runs.repetitions,
            || flush.run(stream),
            || {
                if read == Read::AfterCopy {
                    // cudaMemcpyAsync(d_packed, h_in, n * sizeof(float), cudaMemcpyHostToDevice, stream)
                    // SAFETY: both hold n floats; h_in is pinned and outlives the copy, and
                    // time_on_stream_after waits for the stream before it returns.
                    check_cuda!(unsafe { d_packed.async_copy_from(h_in, stream) })?;
                }
                launch_strided_read(strided_read, input, out, access, n, stream)
            },
        )?;
        let span = access.span(n);
        let back = &mut self.staging.as_mut_slice()[..span];
        check_cuda!(self.d_out.index(..span).copy_to(back))?;
        Ok(Measured {
            elements: n,
            timing,
            wrong: access.wrong(n, &self.mapped_in, back),
        })
    }
}

fn launch_strided_read(
    strided_read: &Function,
    input: DevicePointer<f32>,
    out: DevicePointer<f32>,
    access: Access,
    n: usize,
    stream: &Stream,
) -> Result<()> {
    let grid = blocks(n);
    // __global__ void strided_read(const float* __restrict__ in, float* __restrict__ out, int stride, int offset, int n)
    // SAFETY: the arguments match the kernel's C signature above, in type and order; `input` (device
    // or mapped memory) holds access.reach(n) floats and `out` (device memory) more, as `measure`
    // ensured, so every index the kernel forms, and n, stride and offset, fit an int (the buffers
    // hold at most 2^27 floats); the host touches neither until time_on_stream_after has waited.
    check_cuda!(unsafe {
        launch!(strided_read<<<grid, BLOCK_SIZE, 0, stream>>>(
            input,
            out,
            access.stride as i32,
            access.offset as i32,
            n as i32
        ))
    })?;
    Ok(())
}

/// The table of the default run: every access from device and from mapped memory, then the copy.
/// Returns whether every float was right.
pub fn report(gpu: &Gpu, module: &Module, n: usize, stream: &Stream, runs: Runs, seed: u64) -> Result<bool> {
    let l2_bytes = gpu.info.l2_bytes;
    gpu.ensure_fits(
        buffer_bytes(n) + 2 * u64::from(l2_bytes),
        &format!("--strided-elements {n}"),
    )?;
    let mut strided = StridedRead::new(module, n, l2_bytes, seed)?;
    let accesses: Vec<Access> = Access::all().collect();
    let progress = Progress::new(2 * accesses.len() + 1, "strided reads");
    let mut measure = |read: Read, what: &str| progress.run(what, || strided.measure(read, stream, runs));
    let copied = measure(Read::AfterCopy, "strided_read after cudaMemcpyAsync")?;
    let mut rows = Vec::with_capacity(accesses.len());
    for access in accesses {
        let at = format!("stride {} offset {}", access.stride, access.offset);
        let device = measure(Read::Device(access), &format!("strided_read from device memory, {at}"))?;
        let mapped = measure(Read::Mapped(access), &format!("strided_read from mapped memory, {at}"))?;
        rows.push((access, device, mapped));
    }
    drop(progress);
    println!(
        "\nstrided_read: out[offset + i*stride] = in[offset + i*stride] + 1 for N = {n} floats, `in` in device memory or in mapped host memory (cudaHostAlloc(..., cudaHostAllocMapped), read through cudaHostGetDevicePointer), `out` in device memory. The L2 emptied before every run; {}. Effective GB/s: the 4 bytes of `in` each element reads, per second.\nLast row: the same N floats, packed in pinned memory (cudaMallocHost), copied with cudaMemcpyAsync, then read from device memory; mapped / copy is each mapped time over this row's.\n",
        runs.describe()
    );
    println!("| stride | offset | device GPU ms | device GB/s | mapped GPU ms | mapped GB/s | mapped / device | mapped / copy | check |");
    println!("|--------|--------|---------------|-------------|---------------|-------------|-----------------|---------------|-------|");
    let copy_ms = copied.timing.median_ms();
    for (access, device, mapped) in &rows {
        println!(
            "| {} | {} | {:.4} | {:.1} | {:.4} | {:.1} | {:.1} | {:.2} | {} |",
            access.stride,
            access.offset,
            device.timing.median_ms(),
            device.bandwidth() / 1e9,
            mapped.timing.median_ms(),
            mapped.bandwidth() / 1e9,
            mapped.timing.median_ms() / device.timing.median_ms(),
            mapped.timing.median_ms() / copy_ms,
            check_cell(device.wrong + mapped.wrong)
        );
    }
    println!(
        "| 1, after cudaMemcpyAsync | 0 | {copy_ms:.4} | {:.1} | - | - | - | - | {} |",
        copied.bandwidth() / 1e9,
        check_cell(copied.wrong)
    );
    Ok(copied.wrong == 0 && rows.iter().all(|(_, device, mapped)| device.wrong + mapped.wrong == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = include_str!("../../kernels/cuda/mapped.cu");

    #[test]
    fn the_table_has_every_stride_aligned_and_one_float_off() {
        let all: Vec<(usize, usize)> = Access::all().map(|a| (a.stride, a.offset)).collect();
        assert_eq!(all.len(), 12);
        assert_eq!(&all[..3], [(1, 0), (1, 1), (2, 0)]);
        assert_eq!(all[11], (32, 1));
        assert!(Access::all().all(|a| a.span(1000) <= Access::widest().span(1000)));
    }

    #[test]
    fn element_i_is_at_offset_plus_i_times_stride_and_the_span_ends_past_its_neighbour() {
        let access = Access { stride: 32, offset: 1 };
        assert_eq!((access.index(0), access.index(2)), (1, 65));
        assert_eq!((access.reach(3), access.span(3)), (66, 67));
        assert_eq!((Access::PACKED.reach(1), Access::PACKED.span(1)), (1, 2));
        assert_eq!(buffer_bytes(1), 4 * (2 * 3 + 1));
        assert_eq!(Access::widest().span(MAX_ELEMENTS as usize), 32 * (1 << 22) - 32 + 3);
    }

    #[test]
    fn every_element_gets_a_thread_however_awkward_n_is() {
        for n in [
            1,
            255,
            256,
            BLOCK_READS - 1,
            BLOCK_READS,
            BLOCK_READS + 1,
            3 * BLOCK_READS + 7,
        ] {
            let reads = blocks(n) as usize * BLOCK_READS;
            assert!(reads >= n && reads < n + BLOCK_READS, "n {n}: {} blocks", blocks(n));
        }
        assert!(
            SOURCE.contains("#define READS_PER_THREAD 4"),
            "mapped.cu's READS_PER_THREAD changed"
        );
        assert!(SOURCE.contains(
            "void strided_read(const float* __restrict__ in, float* __restrict__ out, int stride, int offset, int n)"
        ));
    }

    /// `out` as a right kernel leaves it: `in + 1` at every element, the poison elsewhere.
    fn right_out(access: Access, n: usize, input: &[f32]) -> Vec<f32> {
        let mut out = vec![f32::POISON; access.span(n)];
        for i in 0..n {
            out[access.index(i)] = input[access.index(i)] + 1.0;
        }
        out
    }

    #[test]
    fn the_check_passes_the_right_output_and_counts_every_wrong_float() {
        let mut random = Random::new(64);
        let input: Vec<f32> = (0..200).map(|_| random.uniform(0.5, 1.5) as f32).collect();
        for access in Access::all().filter(|a| a.span(5) <= input.len()) {
            assert_eq!(access.wrong(5, &input, &right_out(access, 5, &input)), 0, "{access:?}");
        }
        let access = Access { stride: 4, offset: 1 };
        let right = right_out(access, 5, &input);
        let wrong_after = |change: &dyn Fn(&mut Vec<f32>)| {
            let mut out = right.clone();
            change(&mut out);
            access.wrong(5, &input, &out)
        };
        assert_eq!(wrong_after(&|out| out[access.index(2)] = 7.0), 1, "a wrong value");
        assert_eq!(
            wrong_after(&|out| out[access.index(2)] = f32::POISON),
            1,
            "never written"
        );
        assert_eq!(
            wrong_after(&|out| out[access.index(2) + 1] = 1.0),
            1,
            "beside an element"
        );
        assert_eq!(wrong_after(&|out| out[0] = 1.0), 1, "before the offset");
        assert_eq!(
            wrong_after(&|out| out[access.span(5) - 1] = 1.0),
            1,
            "past the last element"
        );
        assert_eq!(
            wrong_after(&|out| out.truncate(access.span(5) - 2)),
            2,
            "floats missing"
        );
        assert_eq!(wrong_after(&|out| out[access.index(0)] = -0.0), 1, "bit for bit");
    }
}

//! `--mode coalescing`: the Chinese notes' `kernel_1` (`x[tid]`) and `kernel_2` (`x[1000*tid]`), then a
//! copy `out[offset + i*stride] = in[offset + i*stride] + 1` swept over strides and misaligned offsets
//! (`kernels/cuda/memory.cu`). Memory moves in 32-byte sectors: a warp's 32 floats at stride 1 fill 4
//! sectors, at stride 8 or more every float needs its own. The effective bandwidth (bytes the program
//! asked for, per second) is set against the peak from the memory clock and bus width. The same sweep
//! then copies words of 64 and 128 bits ([`Words`]), of 8 and 16 bits (`crate::small_words`) and each
//! line in another order (`crate::line_order`).
//!
//! Every run starts with the L2 cache emptied (a memset over twice its size, outside the timed events),
//! so wide strides, which touch few sectors, still come from DRAM. The input is a hash of the index that
//! the GPU writes and the host recomputes ([`pattern`]); the check reads back every element written and
//! its right neighbour, which must still hold the poison.

use std::ffi::c_void;
use std::path::Path;

use anyhow::{ensure, Result};
use common::gpu::{Flush, Gpu};
use common::output::create_output_file;
use common::phases::{self, Phase};
use common::progress::Progress;
use common::timing::{time_on_stream_after, Timing};
use common::verify::{check_cell, poison, poisoned_device_buffer, Poison};
use common::{check_cuda, raw};
use cust::function::Function;
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer, DevicePointer, LockedBuffer};
use cust::module::Module;
use cust::stream::Stream;
use rayon::prelude::*;

use crate::{blocks_for, mix, new_stream};

/// `kernel_2`'s stride: `x[1000*tid]`.
pub const NOTES_STRIDE: usize = 1000;
/// Threads per block of every launch here.
pub const BLOCK: u32 = 256;
/// `COPIES_PER_THREAD` in memory.cu: elements each thread of `strided_copy` copies.
pub const COPIES_PER_THREAD: usize = 4;
/// The most elements one sweep launch copies (2^24 threads: enough to keep every multiprocessor's
/// loads in flight at stride 1).
pub const MAX_ELEMENTS: usize = 1 << 24;

/// What `fill_pattern` writes at index `j`: a float in [0.5, 1.5), never zero, exact on both sides.
pub fn pattern(j: usize, seed: u32) -> f32 {
    0.5 + (mix(j as u32 ^ seed) >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// What every float copy leaves: the input plus 1.
fn plus_one(x: f32) -> f32 {
    x + 1.0
}

/// One launch of the sweep: `elements` threads, thread i at `offset + i * stride` (in floats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub stride: usize,
    pub offset: usize,
    pub elements: usize,
}

impl Access {
    /// The launch for `stride` and `offset` in buffers of `floats`: as many elements as fit, at most
    /// [`MAX_ELEMENTS`].
    pub fn fitting(stride: usize, offset: usize, floats: usize) -> Access {
        let elements = floats.saturating_sub(offset + 2) / stride + 1;
        Access {
            stride,
            offset,
            elements: elements.min(MAX_ELEMENTS),
        }
    }

    /// Floats a buffer needs: up to the last element, plus its neighbour that the check reads.
    pub fn span(&self) -> usize {
        self.offset + (self.elements - 1) * self.stride + 2
    }

    /// Distinct 32-byte sectors the first full warp touches, in one direction: 4 when coalesced and
    /// aligned, 5 when misaligned, up to 32.
    pub fn sectors_per_warp(&self) -> usize {
        let mut sectors: Vec<usize> = (0..32)
            .map(|lane| (self.offset + lane * self.stride) * 4 / 32)
            .collect();
        sectors.dedup();
        sectors.len()
    }

    /// The sector model's bandwidth, given the coalesced one: it falls with the bytes moved per byte
    /// asked for.
    pub fn predicted(&self, coalesced_bandwidth: f64) -> f64 {
        coalesced_bandwidth * 4.0 / self.sectors_per_warp() as f64
    }
}

/// A timed, checked launch.
#[derive(Debug, Clone)]
pub struct Measured {
    pub access: Access,
    pub timing: Timing,
    /// Elements (or neighbours) that are not what the CPU expects.
    pub wrong: usize,
}

impl Measured {
    /// Bytes read and written that the program asked for, per second (median run).
    pub fn bandwidth(&self) -> f64 {
        8.0 * self.access.elements as f64 / (self.timing.median_ms() * 1e-3)
    }
}

/// The strides of the sweep, 1 to 1024.
pub fn strides() -> Vec<usize> {
    vec![1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256, 512, 1024]
}

/// The offsets of the misalignment sweep, in floats (8 floats are one sector, 32 a 128-byte line).
pub fn offsets() -> Vec<usize> {
    vec![0, 1, 2, 4, 8, 16, 24, 31, 32]
}

/// The German slides' alignment table: a copy is fast when a half-warp's first word sits on a
/// boundary of 16 words, 64, 128 and 256 bytes for 32-, 64- and 128-bit words. A copy of `floats`
/// floats as words of `bytes`, starting `shift` bytes after the buffers' (256-byte aligned) start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Words {
    /// 4 (float, `strided_copy`), 8 (float2, `word_copy_64`) or 16 (float4, `word_copy_128`).
    pub bytes: usize,
    /// A multiple of `bytes`, so that every word is aligned to its size as the hardware requires.
    pub shift: usize,
    /// A multiple of the floats in a word.
    pub floats: usize,
}

impl Words {
    pub const SIZES: [usize; 3] = [4, 8, 16];

    /// The copy of words of `bytes` at `shift` in buffers of `buffer_floats`: as many whole words as
    /// fit before the last float (the check's neighbour), at most [`MAX_ELEMENTS`] floats.
    pub fn fitting(bytes: usize, shift: usize, buffer_floats: usize) -> Words {
        let per_word = bytes / 4;
        let floats = buffer_floats.saturating_sub(shift / 4 + 1).min(MAX_ELEMENTS) / per_word * per_word;
        Words { bytes, shift, floats }
    }

    /// The rows of the table: each word size aligned, shifted by one word, and shifted by 32, 64 and
    /// 128 bytes (a whole sector, and the slides' boundaries of the smaller words).
    pub fn rows(buffer_floats: usize) -> Vec<Words> {
        Words::SIZES
            .iter()
            .flat_map(|&bytes| {
                [0, bytes, 32, 64, 128]
                    .into_iter()
                    .map(move |shift| Words::fitting(bytes, shift, buffer_floats))
            })
            .collect()
    }

    /// The boundary the slides ask a half-warp's first word to sit on.
    pub fn slides_boundary(&self) -> usize {
        16 * self.bytes
    }

    /// Distinct 32-byte sectors one warp's 32 words touch, in one direction.
    pub fn sectors_per_warp(&self) -> usize {
        (self.shift % 32 + 32 * self.bytes).div_ceil(32)
    }

    /// The same floats as an [`Access`] at stride 1, for the check and the bandwidth.
    pub fn access(&self) -> Access {
        Access {
            stride: 1,
            offset: self.shift / 4,
            elements: self.floats,
        }
    }
}

/// The sweep's buffers: `input` holds the pattern, `output` is poisoned before every launch.
pub struct Sweep<'a> {
    /// `strided_copy`, fetched once: a lookup inside the timed runs would be host time between events.
    copy: Function<'a>,
    /// `word_copy_64` and `word_copy_128`, likewise.
    word_copies: [Function<'a>; 2],
    stream: Stream,
    input: DeviceBuffer<f32>,
    output: DeviceBuffer<f32>,
    flush: Flush,
    /// Where every check's elements land (pinned, made once).
    staging: LockedBuffer<f32>,
    seed: u32,
}

impl<'a> Sweep<'a> {
    /// Two buffers of `floats` each, the input filled by `fill_pattern`, warmed up for a GPU of peak
    /// bandwidth `peak` (bytes/s).
    pub fn new(module: &'a Module, floats: usize, l2_bytes: u32, peak: f64, seed: u32) -> Result<Sweep<'a>> {
        let stream = new_stream()?;
        let input = poisoned_device_buffer::<f32>(floats)?;
        let fill = check_cuda!(module.get_function("fill_pattern"))?;
        // __global__ void fill_pattern(float* x, size_t len, unsigned seed)
        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
        // point into live device buffers as large as the kernel indexes.
        check_cuda!(unsafe { launch!(fill<<<1024, BLOCK, 0, stream>>>(input.as_device_ptr(), floats, seed)) })?;
        check_cuda!(stream.synchronize())?;
        let output = poisoned_device_buffer::<f32>(floats)?;
        let staging = staging(MAX_ELEMENTS.min(floats))?;
        let copy = check_cuda!(module.get_function("strided_copy"))?;
        let word_copies = [
            check_cuda!(module.get_function("word_copy_64"))?,
            check_cuda!(module.get_function("word_copy_128"))?,
        ];
        let sweep = Sweep {
            copy,
            word_copies,
            stream,
            input,
            output,
            flush: Flush::new(l2_bytes)?,
            staging,
            seed,
        };
        sweep.warm_up(peak)?;
        Ok(sweep)
    }

    /// Copies the whole buffer, untimed, for about 20 ms: a GPU that was idle runs its first launches
    /// at a lower clock, and the first row of the table would pay for it. The number of copies comes
    /// from the peak bandwidth (`peak`, bytes/s), not the clock, so that every run of the same command
    /// on the same GPU launches the same kernels (`--counters` matches launches between two runs).
    fn warm_up(&self, peak: f64) -> Result<()> {
        let _phase = phases::enter(Phase::Gpu);
        let access = Access::fitting(1, 0, self.input.len());
        let copy_seconds = (8 * self.input.len()) as f64 / peak;
        let copies = (20e-3 / copy_seconds).ceil().clamp(1.0, 1000.0) as usize;
        for _ in 0..copies {
            self.launch(access)?;
        }
        check_cuda!(self.stream.synchronize())?;
        Ok(())
    }

    /// Times `access` (the L2 emptied before each run) and checks it.
    pub fn measure(&mut self, access: Access, repetitions: usize) -> Result<Measured> {
        self.measure_launch(access, repetitions, plus_one, |sweep| sweep.launch(access))
    }

    /// Times the copy of `words` (the L2 emptied before each run) and checks it like an [`Access`].
    pub fn measure_words(&mut self, words: Words, repetitions: usize) -> Result<Measured> {
        ensure!(
            Words::SIZES.contains(&words.bytes)
                && words.shift.is_multiple_of(words.bytes)
                && words.floats.is_multiple_of(words.bytes / 4),
            "{words:?}: words of 4, 8 or 16 bytes, aligned to their size, whole words"
        );
        self.measure_launch(words.access(), repetitions, plus_one, |sweep| sweep.launch_words(words))
    }

    /// Times another kernel that writes `access`'s elements as `strided_copy` would (the L2 emptied
    /// before each run) and checks them: `launch` enqueues it, given the stream, the input and the
    /// output.
    pub fn measure_other(
        &mut self,
        access: Access,
        repetitions: usize,
        launch: impl Fn(&Stream, DevicePointer<f32>, DevicePointer<f32>) -> Result<()>,
    ) -> Result<Measured> {
        self.measure_other_as(access, repetitions, plus_one, launch)
    }

    /// [`Sweep::measure_other`] for a kernel that leaves `changed(x)` where the input float was `x`: a
    /// copy in words narrower than a float adds 1 to each of the float's bytes or halves instead.
    pub fn measure_other_as(
        &mut self,
        access: Access,
        repetitions: usize,
        changed: impl Fn(f32) -> f32 + Sync,
        launch: impl Fn(&Stream, DevicePointer<f32>, DevicePointer<f32>) -> Result<()>,
    ) -> Result<Measured> {
        self.measure_launch(access, repetitions, changed, |sweep| {
            launch(&sweep.stream, sweep.input.as_device_ptr(), sweep.output.as_device_ptr())
        })
    }

    /// Times `launch`, which writes `changed(input)` at `access`'s elements, and checks them.
    fn measure_launch(
        &mut self,
        access: Access,
        repetitions: usize,
        changed: impl Fn(f32) -> f32 + Sync,
        launch: impl Fn(&Sweep) -> Result<()>,
    ) -> Result<Measured> {
        ensure!(
            access.elements > 0 && access.span() <= self.input.len(),
            "stride {} offset {}: {} elements do not fit",
            access.stride,
            access.offset,
            access.elements
        );
        poison(&mut self.output)?;
        let timing = time_on_stream_after(
            &self.stream,
            1,
            repetitions,
            || self.flush.run(&self.stream),
            || launch(self),
        )?;
        let back = read_strided(
            &self.output,
            access.offset,
            access.stride,
            access.elements,
            self.staging.as_mut_slice(),
        )?;
        let seed = self.seed;
        let wrong = back.wrong(|i| changed(pattern(access.offset + i * access.stride, seed)));
        Ok(Measured { access, timing, wrong })
    }

    /// One `strided_copy` launch of `access`, enqueued on the sweep's stream.
    fn launch(&self, access: Access) -> Result<()> {
        let (copy, stream) = (&self.copy, &self.stream);
        let grid = blocks_for(access.elements.div_ceil(COPIES_PER_THREAD), BLOCK);
        // __global__ void strided_copy(const float* in, float* out, int stride, int offset, int n)
        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
        // point into live device buffers as large as the kernel indexes.
        check_cuda!(unsafe {
            launch!(copy<<<grid, BLOCK, 0, stream>>>(self.input.as_device_ptr(), self.output.as_device_ptr(), access.stride as i32, access.offset as i32, access.elements as i32))
        })?;
        Ok(())
    }
}

impl Sweep<'_> {
    /// One `word_copy_64` or `word_copy_128` launch of `words` (a float copy is [`Sweep::launch`] at
    /// stride 1), enqueued on the sweep's stream.
    fn launch_words(&self, words: Words) -> Result<()> {
        let per_word = words.bytes / 4;
        if per_word == 1 {
            return self.launch(words.access());
        }
        let function = &self.word_copies[usize::from(per_word == 4)];
        let stream = &self.stream;
        let n = (words.floats / per_word) as i32;
        let grid = blocks_for((n as usize).div_ceil(COPIES_PER_THREAD), BLOCK);
        let shifted = |buffer: &DeviceBuffer<f32>| {
            DevicePointer::<f32>::from_raw(buffer.as_device_ptr().as_raw() + words.shift as u64)
        };
        let (input, output) = (shifted(&self.input), shifted(&self.output));
        // __global__ void word_copy_128(const float4* in, float4* out, int n)
        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order;
        // both pointers are `shift` bytes (a multiple of the word) into buffers that hold the `floats`
        // floats after them and more (`measure_launch` ensures the span fits before any launch).
        check_cuda!(unsafe { launch!(function<<<grid, BLOCK, 0, stream>>>(input, output, n)) })?;
        Ok(())
    }
}

/// What a launch left, as read back into the staging buffer: the elements it was to write, and the
/// floats just after them, which it was not to write (for stride 1 only the one after the last
/// element). A view, not a copy: the sweep reads back up to 16 Mi elements per row of its table, and
/// copying them out of the staging buffer cost a second of the default run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Readback<'a> {
    values: &'a [f32],
    /// `values` holds each element followed by its neighbour; otherwise (stride 1) the elements in a
    /// run, then the one neighbour after the last.
    pairs: bool,
}

impl<'a> Readback<'a> {
    /// Element, neighbour, element, neighbour, ...
    pub fn pairs(values: &'a [f32]) -> Readback<'a> {
        Readback { values, pairs: true }
    }

    /// The elements, then the neighbour after the last.
    pub fn run(values: &'a [f32]) -> Readback<'a> {
        Readback { values, pairs: false }
    }

    /// Elements that differ from `expected(i)`, plus neighbours that are no longer poison.
    pub fn wrong(&self, expected: impl Fn(usize) -> f32 + Sync) -> usize {
        let _phase = phases::enter(Phase::Verify);
        if self.pairs {
            return self
                .values
                .par_chunks(2)
                .enumerate()
                .map(|(i, pair)| usize::from(pair[0] != expected(i)) + usize::from(!pair[1].is_poison()))
                .sum();
        }
        let (elements, after) = self.values.split_at(self.values.len() - 1);
        elements
            .par_iter()
            .enumerate()
            .filter(|&(i, &value)| value != expected(i))
            .count()
            + usize::from(!after[0].is_poison())
    }
}

/// Element `offset + i * stride` and its right neighbour for i < `elements`: one copy for stride 1, a
/// 2D copy (cudaMemcpy2D, rows of two floats, `stride` floats apart) otherwise. Both land in `staging`
/// (at least `2 * elements` floats), which should be pinned: the copy engine then writes the rows
/// itself, where into pageable memory the driver would stage millions of 8-byte rows.
pub fn read_strided<'s>(
    buffer: &DeviceBuffer<f32>,
    offset: usize,
    stride: usize,
    elements: usize,
    staging: &'s mut [f32],
) -> Result<Readback<'s>> {
    ensure!(
        elements > 0 && offset + (elements - 1) * stride + 2 <= buffer.len(),
        "reading past the end of the buffer"
    );
    ensure!(
        staging.len() >= 2 * elements,
        "the staging buffer holds {} floats, not {}",
        staging.len(),
        2 * elements
    );
    if stride == 1 {
        let run = &mut staging[..elements + 1];
        check_cuda!(buffer.index(offset..offset + elements + 1).copy_to(&mut run[..]))?;
        return Ok(Readback::run(run));
    }
    let copy = raw::Memcpy2D::device_to_host(
        buffer.as_device_ptr().as_raw() + 4 * offset as u64,
        4 * stride,
        staging.as_mut_ptr().cast::<c_void>(),
        8,
        elements,
    );
    // SAFETY: the rows lie inside `buffer` and `staging` holds `elements` rows of 8 bytes (both checked).
    check_cuda!(unsafe { raw::cuMemcpy2D(&copy) })?;
    Ok(Readback::pairs(&staging[..2 * elements]))
}

/// Pinned host memory for [`read_strided`]: `2 * elements` floats.
pub fn staging(elements: usize) -> Result<LockedBuffer<f32>> {
    Ok(check_cuda!(LockedBuffer::new(&0.0f32, 2 * elements))?)
}

/// The notes' kernels: `kernel_1` writes `x[tid]`, `kernel_2` writes `x[1000*tid]`, each `threadIdx.x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notes {
    Kernel1,
    Kernel2,
}

impl Notes {
    pub fn name(self) -> &'static str {
        match self {
            Notes::Kernel1 => "kernel_1",
            Notes::Kernel2 => "kernel_2",
        }
    }

    pub fn stride(self) -> usize {
        match self {
            Notes::Kernel1 => 1,
            Notes::Kernel2 => NOTES_STRIDE,
        }
    }

    /// Floats the buffer needs for `threads`, with the neighbour of the last write.
    pub fn floats(self, threads: usize) -> usize {
        (threads - 1) * self.stride() + 2
    }
}

/// Runs a notes kernel on `blocks` x `block` threads, the L2 emptied before each run; checks that
/// thread t wrote `t % block` at `t * stride` and nothing beside it.
pub fn run_notes(
    module: &Module,
    kernel: Notes,
    blocks: u32,
    block: u32,
    l2_bytes: u32,
    repetitions: usize,
) -> Result<Measured> {
    let threads = blocks as usize * block as usize;
    ensure!(
        threads > 0 && kernel.stride() * (threads - 1) < i32::MAX as usize,
        "{} threads overflow the notes' int index",
        threads
    );
    let x = poisoned_device_buffer::<f32>(kernel.floats(threads))?;
    let function = check_cuda!(module.get_function(kernel.name()))?;
    let stream = new_stream()?;
    let flush = Flush::new(l2_bytes)?;
    let _named = common::timing::observer::program(kernel.name());
    let timing = time_on_stream_after(
        &stream,
        1,
        repetitions,
        || flush.run(&stream),
        || {
            // __global__ void kernel_1(float* x), kernel_2(float* x)
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
            // point into live device buffers as large as the kernel indexes.
            check_cuda!(unsafe { launch!(function<<<blocks, block, 0, stream>>>(x.as_device_ptr())) })?;
            Ok(())
        },
    )?;
    let wrong = read_strided(&x, 0, kernel.stride(), threads, staging(threads)?.as_mut_slice())?
        .wrong(|t| (t % block as usize) as f32);
    Ok(Measured {
        access: Access {
            stride: kernel.stride(),
            offset: 0,
            elements: threads,
        },
        timing,
        wrong,
    })
}

/// The two sweeps as an SVG: effective bandwidth against stride (log scale) with the sector model, and
/// against offset, each under the peak.
pub fn plot(
    strides: &[Measured],
    offsets: &[Measured],
    peak: f64,
    title: &str,
    path: &Path,
    overwrite: bool,
) -> Result<()> {
    use plotters::prelude::*;
    let _phase = phases::enter(Phase::Output);
    drop(create_output_file(path, overwrite)?); // the same refusal as every output; plotters rewrites it
    let draw = |err: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {err}", path.display());
    let root = SVGBackend::new(path, (1100, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw(&e))?;
    let root = root.titled(title, ("sans-serif", 18)).map_err(|e| draw(&e))?;
    let (left, right) = root.split_horizontally(650);
    let top = peak / 1e9 * 1.08;
    let peak_style = BLACK.stroke_width(1);
    let (measured_colour, model_colour) = (RGBColor(78, 121, 167), RGBColor(225, 87, 89));

    let max_stride = strides.iter().map(|m| m.access.stride).max().unwrap_or(1) as f64;
    let mut chart = ChartBuilder::on(&left)
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((1.0..max_stride * 1.2).log_scale(), 0.0..top)
        .map_err(|e| draw(&e))?;
    chart
        .configure_mesh()
        .x_desc("stride (floats)")
        .y_desc("effective GB/s")
        .draw()
        .map_err(|e| draw(&e))?;
    let coalesced = strides.first().map_or(0.0, Measured::bandwidth);
    let series = [
        (
            "measured",
            measured_colour.stroke_width(3),
            strides
                .iter()
                .map(|m| (m.access.stride as f64, m.bandwidth() / 1e9))
                .collect::<Vec<_>>(),
        ),
        (
            "32-byte sector model",
            model_colour.stroke_width(2),
            strides
                .iter()
                .map(|m| (m.access.stride as f64, m.access.predicted(coalesced) / 1e9))
                .collect(),
        ),
        (
            "peak",
            peak_style,
            vec![(1.0, peak / 1e9), (max_stride * 1.2, peak / 1e9)],
        ),
    ];
    for (label, style, points) in series {
        chart
            .draw_series(LineSeries::new(points, style))
            .map_err(|e| draw(&e))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()
        .map_err(|e| draw(&e))?;

    let max_offset = offsets.iter().map(|m| m.access.offset).max().unwrap_or(1).max(1) as f64;
    let mut chart = ChartBuilder::on(&right)
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max_offset, 0.0..top)
        .map_err(|e| draw(&e))?;
    chart
        .configure_mesh()
        .x_desc("offset (floats), stride 1")
        .y_desc("effective GB/s")
        .draw()
        .map_err(|e| draw(&e))?;
    chart
        .draw_series(LineSeries::new(
            offsets.iter().map(|m| (m.access.offset as f64, m.bandwidth() / 1e9)),
            measured_colour.stroke_width(3),
        ))
        .map_err(|e| draw(&e))?;
    chart
        .draw_series(PointSeries::of_element(
            offsets.iter().map(|m| (m.access.offset as f64, m.bandwidth() / 1e9)),
            4,
            measured_colour.filled(),
            &|c, s, st| Circle::new(c, s, st),
        ))
        .map_err(|e| draw(&e))?;
    chart
        .draw_series(LineSeries::new(
            vec![(0.0, peak / 1e9), (max_offset, peak / 1e9)],
            peak_style,
        ))
        .map_err(|e| draw(&e))?;
    root.present().map_err(|e| draw(&e))
}

/// What `--mode coalescing` takes from the command line (more than fits a short argument list).
pub struct Settings<'a> {
    /// Threads of the notes' `kernel_1` and `kernel_2`, a multiple of [`BLOCK`]: the kernels check no bound.
    pub notes_threads: u32,
    /// Size of each of the sweep's two buffers; a wider stride copies fewer elements.
    pub buffer_bytes: usize,
    /// Where to plot both sweeps as an SVG, if anywhere.
    pub plot: Option<&'a Path>,
    /// Whether the plot may replace an existing file.
    pub force: bool,
    /// Timed runs of every kernel after one warm-up; the median is reported.
    pub repetitions: usize,
    /// Seed of the sweep's input, which the GPU makes and the CPU recomputes.
    pub seed: u64,
}

/// `--mode coalescing`: the notes' two kernels, then the stride and offset sweeps of a strided copy:
/// tables, and the plot. Returns whether every element was right.
pub fn report(gpu: &Gpu, module: &Module, settings: &Settings) -> Result<bool> {
    let peak = gpu.info.peak_bandwidth();
    let reps = settings.repetitions;
    let l2 = gpu.info.l2_bytes;
    println!(
        "\nCoalescing: every run starts with the L2 cache emptied; peak {:.0} GB/s (2 x memory clock x bus width)\n",
        peak / 1e9
    );
    let blocks = settings.notes_threads / BLOCK;
    gpu.ensure_fits(
        4 * Notes::Kernel2.floats(settings.notes_threads as usize) as u64 + 2 * u64::from(l2),
        "--notes-threads",
    )?;
    println!("| kernel | threads | writes | GPU time in ms | effective GB/s | % of peak | check |");
    println!("|--------|---------|--------|----------------|----------------|-----------|-------|");
    let mut passed = true;
    for kernel in [Notes::Kernel1, Notes::Kernel2] {
        let run = run_notes(module, kernel, blocks, BLOCK, l2, reps)?;
        // Only writes: 4 bytes per thread.
        let bandwidth = run.bandwidth() / 2.0;
        passed &= run.wrong == 0;
        let writes = if kernel == Notes::Kernel1 {
            "x[tid]"
        } else {
            "x[1000*tid]"
        };
        println!(
            "| {} | {} | {writes} | {:.4} | {:.0} | {:.1}% | {} |",
            kernel.name(),
            run.access.elements,
            run.timing.median_ms(),
            bandwidth / 1e9,
            100.0 * bandwidth / peak,
            check_cell(run.wrong)
        );
    }

    let floats = settings.buffer_bytes / 4;
    gpu.ensure_fits(
        2 * floats as u64 * 4 + 2 * u64::from(l2),
        &format!("--buffer-bytes {}", settings.buffer_bytes),
    )?;
    let mut sweep = Sweep::new(module, floats, l2, peak, settings.seed as u32)?;
    let strides: Vec<Access> = strides()
        .into_iter()
        .map(|stride| Access::fitting(stride, 0, floats))
        .collect();
    let offsets: Vec<Access> = offsets()
        .into_iter()
        .map(|offset| Access::fitting(1, offset, floats))
        .collect();
    let progress = Progress::new(strides.len() + offsets.len(), "coalescing sweep");
    let mut measure = |access: &Access| {
        progress.run(&format!("stride {} offset {}", access.stride, access.offset), || {
            sweep.measure(*access, reps)
        })
    };
    let by_stride: Vec<Measured> = strides.iter().map(&mut measure).collect::<Result<_>>()?;
    let by_offset: Vec<Measured> = offsets.iter().map(&mut measure).collect::<Result<_>>()?;
    progress.done();
    let coalesced = by_stride[0].bandwidth();
    println!("\nout[offset + i*stride] = in[offset + i*stride] + 1, by stride (offset 0); bytes read and written that the program asked for:\n");
    println!("| stride | elements | sectors per warp | GPU time in ms | effective GB/s | % of peak | sector model GB/s | check |");
    println!("|--------|----------|------------------|----------------|----------------|-----------|-------------------|-------|");
    for m in &by_stride {
        println!(
            "| {} | {} | {} | {:.4} | {:.0} | {:.1}% | {:.0} | {} |",
            m.access.stride,
            m.access.elements,
            m.access.sectors_per_warp(),
            m.timing.median_ms(),
            m.bandwidth() / 1e9,
            100.0 * m.bandwidth() / peak,
            m.access.predicted(coalesced) / 1e9,
            check_cell(m.wrong)
        );
    }
    let aligned = by_offset[0].bandwidth();
    println!("\nThe same copy at stride 1, misaligned by an offset (8 floats = one 32-byte sector):\n");
    println!("| offset | sectors per warp | GPU time in ms | effective GB/s | % of peak | sector model GB/s | check |");
    println!("|--------|------------------|----------------|----------------|-----------|-------------------|-------|");
    for m in &by_offset {
        println!(
            "| {} | {} | {:.4} | {:.0} | {:.1}% | {:.0} | {} |",
            m.access.offset,
            m.access.sectors_per_warp(),
            m.timing.median_ms(),
            m.bandwidth() / 1e9,
            100.0 * m.bandwidth() / peak,
            m.access.predicted(aligned) / 1e9,
            check_cell(m.wrong)
        );
    }
    let by_word = words_table(&mut sweep, floats, reps)?;
    let by_small_word = crate::small_words::table(module, &mut sweep, &by_word[0], reps)?;
    let by_order = crate::line_order::table(module, &mut sweep, floats, reps)?;
    if let Some(path) = settings.plot {
        plot(
            &by_stride,
            &by_offset,
            peak,
            &format!("Effective bandwidth by stride and by offset, {}", gpu.info.name),
            path,
            settings.force,
        )?;
        println!("\nPlot: {}", path.display());
    }
    Ok(passed
        && by_stride
            .iter()
            .chain(&by_offset)
            .chain(&by_word)
            .chain(&by_small_word)
            .chain(&by_order)
            .all(|m| m.wrong == 0))
}

/// Measures every row of a table under one progress bar: `what` names the bar, `label` each row.
pub fn measure_rows<T: Copy, L: AsRef<str>>(
    rows: &[T],
    what: &str,
    label: impl Fn(T) -> L,
    mut measure: impl FnMut(T) -> Result<Measured>,
) -> Result<Vec<Measured>> {
    let progress = Progress::new(rows.len(), what);
    let measured = rows
        .iter()
        .map(|&row| progress.run(label(row).as_ref(), || measure(row)))
        .collect::<Result<_>>()?;
    progress.done();
    Ok(measured)
}

/// The German slides' alignment table, measured: each word size aligned and shifted.
fn words_table(sweep: &mut Sweep, floats: usize, repetitions: usize) -> Result<Vec<Measured>> {
    let rows = Words::rows(floats);
    let measured = measure_rows(
        &rows,
        "alignment by word size",
        |words| format!("{}-byte words, shift {}", words.bytes, words.shift),
        |words| sweep.measure_words(words, repetitions),
    )?;
    println!("\nThe German slides' alignment table: 32-, 64- and 128-bit words (float, float2, float4), each from its boundary and shifted:\n");
    println!("| word | shift (bytes) | the slides' boundary | first word on it | sectors per warp | GPU time in ms | effective GB/s | vs shift 0 | sector model | check |");
    println!("|------|---------------|----------------------|------------------|------------------|----------------|----------------|------------|--------------|-------|");
    let mut aligned = 0.0;
    for (words, m) in rows.iter().zip(&measured) {
        if words.shift == 0 {
            aligned = m.bandwidth();
        }
        // An aligned warp needs `bytes` sectors (32 words of `bytes` bytes, 32 bytes a sector).
        let model = words.bytes as f64 / words.sectors_per_warp() as f64;
        println!(
            "| {}-bit | {} | {} bytes | {} | {} | {:.4} | {:.0} | {:.2} | {:.2} | {} |",
            8 * words.bytes,
            words.shift,
            words.slides_boundary(),
            if words.shift.is_multiple_of(words.slides_boundary()) {
                "yes"
            } else {
                "no"
            },
            words.sectors_per_warp(),
            m.timing.median_ms(),
            m.bandwidth() / 1e9,
            m.bandwidth() / aligned,
            model,
            check_cell(m.wrong)
        );
    }
    Ok(measured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_is_the_gpus_hash_in_half_to_three_halves() {
        // mix(0) = 0, so index 0 with seed 0 is exactly 0.5; other values spread over [0.5, 1.5).
        assert_eq!(pattern(0, 0), 0.5);
        let values: Vec<f32> = (0..10_000).map(|j| pattern(j, 7)).collect();
        assert!(values.iter().all(|v| (0.5..1.5).contains(v)));
        assert!(values.iter().any(|v| *v < 0.6) && values.iter().any(|v| *v > 1.4));
        assert_ne!(pattern(1, 7), pattern(2, 7));
        let source = include_str!("../../kernels/cuda/memory.cu");
        for constant in [
            "0x7feb352dU",
            "0x846ca68bU",
            "0.5f + (float)(mix((unsigned)j ^ seed) >> 8) * (1.0f / 16777216.0f)",
            "#define COPIES_PER_THREAD 4",
            "copy_plus_one<COPIES_PER_THREAD>(in, out, stride, offset, n);",
        ] {
            assert!(source.contains(constant), "memory.cu's hash changed: {constant}");
        }
    }

    #[test]
    fn wider_words_pay_one_sector_in_more_for_a_misaligned_start() {
        let at = |bytes, shift| Words::fitting(bytes, shift, 1 << 20);
        assert_eq!((at(4, 0).sectors_per_warp(), at(4, 4).sectors_per_warp()), (4, 5));
        assert_eq!((at(8, 0).sectors_per_warp(), at(8, 8).sectors_per_warp()), (8, 9));
        assert_eq!((at(16, 0).sectors_per_warp(), at(16, 16).sectors_per_warp()), (16, 17));
        assert_eq!(at(16, 32).sectors_per_warp(), 16, "a whole sector off: no cost");
        assert_eq!(at(8, 0).slides_boundary(), 128);
        let w = Words::fitting(16, 16, 103);
        assert_eq!(
            (w.floats, w.access().offset),
            (96, 4),
            "whole words before the last float"
        );
        assert!(w.access().span() <= 103);
        let rows = Words::rows(1 << 20);
        assert_eq!(rows.len(), 15);
        assert!(rows
            .iter()
            .all(|w| w.shift.is_multiple_of(w.bytes) && w.floats.is_multiple_of(w.bytes / 4)));
        let source = include_str!("../../kernels/cuda/memory.cu");
        assert!(source.contains("void word_copy_64(const float2* __restrict__ in, float2* __restrict__ out, int n)"));
        assert!(source.contains("void word_copy_128(const float4* __restrict__ in, float4* __restrict__ out, int n)"));
    }

    #[test]
    fn sectors_per_warp_follow_stride_and_alignment() {
        let at = |stride, offset| {
            Access {
                stride,
                offset,
                elements: 1 << 20,
            }
            .sectors_per_warp()
        };
        assert_eq!(
            [at(1, 0), at(2, 0), at(4, 0), at(8, 0), at(1024, 0)],
            [4, 8, 16, 32, 32]
        );
        assert_eq!([at(1, 1), at(1, 8), at(1, 31), at(1, 32)], [5, 4, 5, 4]);
        let access = Access {
            stride: 2,
            offset: 0,
            elements: 10,
        };
        assert_eq!(access.predicted(100.0), 50.0);
    }

    #[test]
    fn a_launch_fits_its_buffer_with_the_neighbour() {
        for (stride, offset) in [(1, 0), (3, 31), (1024, 0), (1000, 5)] {
            let floats = 1_000_003;
            let access = Access::fitting(stride, offset, floats);
            assert!(access.span() <= floats && access.span() + stride > floats, "{access:?}");
        }
        assert_eq!(Access::fitting(1, 0, 1 << 30).elements, MAX_ELEMENTS);
        assert_eq!(Notes::Kernel2.floats(3), 2002);
    }

    #[test]
    fn the_check_catches_wrong_values_and_writes_beside_the_elements() {
        let poison = f32::POISON;
        let expected = |i: usize| i as f32;
        assert_eq!(Readback::pairs(&[0.0, poison, 1.0, poison]).wrong(expected), 0);
        assert_eq!(Readback::pairs(&[0.0, poison, 7.0, poison]).wrong(expected), 1);
        assert_eq!(
            Readback::pairs(&[0.0, 3.0, 1.0, poison]).wrong(expected),
            1,
            "a write beside an element"
        );
        assert_eq!(
            Readback::pairs(&[0.0, poison, poison, poison]).wrong(expected),
            1,
            "never written"
        );
        assert_eq!(
            Readback::pairs(&[7.0, 3.0, 1.0, 4.0]).wrong(expected),
            3,
            "every kind at once"
        );
        assert_eq!(Readback::run(&[0.0, 1.0, 2.0, poison]).wrong(expected), 0);
        assert_eq!(
            Readback::run(&[0.0, 1.0, 2.0, 9.0]).wrong(expected),
            1,
            "a write past the last element"
        );
        assert_eq!(Readback::run(&[0.0, 5.0, 2.0, poison]).wrong(expected), 1);
    }

    #[test]
    fn the_plot_has_both_sweeps_under_the_peak() {
        let dir = std::env::temp_dir().join(format!("coalescing-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("coalescing.svg");
        let measured = |stride, offset, ms| Measured {
            access: Access {
                stride,
                offset,
                elements: 1 << 20,
            },
            timing: Timing::gpu(vec![ms]),
            wrong: 0,
        };
        let strides: Vec<Measured> = strides()
            .into_iter()
            .map(|s| measured(s, 0, 0.01 * s.min(16) as f64))
            .collect();
        let offsets: Vec<Measured> = offsets().into_iter().map(|o| measured(1, o, 0.011)).collect();
        plot(&strides, &offsets, 1e12, "made-up numbers", &path, false).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("stride (floats)") && svg.contains("offset (floats), stride 1")
        );
        assert!(svg.contains("32-byte sector model") && svg.contains("made-up numbers"));
        assert!(
            plot(&strides, &offsets, 1e12, "again", &path, false).is_err(),
            "never over an existing file"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! `--devices N`: the German COUNT products (`--mode mmm`) or the French pipeline (`--mode chunked`)
//! spread over N GPUs, as the German slides' last use of streams. One host thread drives every GPU the
//! way the slides' `cudaSetDevice` loop does: a context per GPU, made current before its work is
//! enqueued, its own streams, and its share of the work. Host buffers are pinned as portable
//! (`cudaHostAllocPortable`), so every GPU's copy engines read and write them directly.
//!
//! Timed on the host from the first enqueue to the last GPU done (events belong to one context and
//! cannot time several GPUs), for 1, 2, ... N GPUs, every result checked.

use anyhow::{ensure, Result};
use common::check_cuda;
use common::context::{fork, join, new_streams, Streams};
use common::device_info::DeviceInfo;
use common::gpu::{self, Gpu};
use common::host_memory::Portable;
use common::progress::Progress;
use common::timing::time_on_host;
use common::verify::{check_cell, Random};
use cust::context::CurrentContext;
use cust::device::Device;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use lab_streams::vector::{even_chunks, VectorJob};
use matrix::batch::Batch;
use matrix::mmm::{load_mmm, MmmKernel};
use profiler::timeline::{write_svg, Kernel, Recorder, Span};

use crate::{chunked, Args, Mode};

/// The work one GPU gets: its products, or its part of the vector job.
trait Share: Sized {
    /// The kernel it launches (with its `_stamped` twin).
    fn kernel_name() -> String;
    /// Share `index` of `of` for `gpu`, allocated there (its context is current), with the module
    /// and streams it needs.
    fn new(gpu: &Gpu, index: usize, of: usize, args: &Args) -> Result<(Self, Module, usize)>;
    /// Enqueues the work on `streams`, forked from `main` and joined back into it.
    ///
    /// # Safety
    /// The copies use the share's host memory after this returns (also after an error): until its GPU
    /// has finished them, the share must not be used or dropped.
    unsafe fn enqueue(
        &mut self,
        kernel: &Kernel,
        main: &Stream,
        streams: &Streams,
        recorder: Option<&mut Recorder>,
    ) -> Result<()>;
    fn poison(&mut self) -> Result<()>;
    /// Whether the results are right, and the table's cell that says so.
    fn check(&mut self, random: &mut Random) -> (bool, String);
}

/// The German slides' products: each GPU gets its share of the COUNT products, one stream each.
impl Share for Batch<Portable<f64>> {
    fn kernel_name() -> String {
        MmmKernel::Tiled.c_name::<f64>()
    }

    fn new(gpu: &Gpu, index: usize, of: usize, args: &Args) -> Result<(Self, Module, usize)> {
        let (count, n) = (even_chunks(args.count as usize, of)[index].len(), args.size as usize);
        gpu.ensure_fits(
            Batch::<Portable<f64>>::bytes(count, n),
            &format!("{count} products of {n} x {n} doubles"),
        )?;
        let batch = Batch::random(count, n, args.block_size, args.seed + index as u64)?;
        Ok((batch, load_mmm(gpu, args.block_size)?, count))
    }

    unsafe fn enqueue(
        &mut self,
        mmm: &Kernel,
        main: &Stream,
        streams: &Streams,
        recorder: Option<&mut Recorder>,
    ) -> Result<()> {
        // SAFETY: the same contract as this function's.
        unsafe { self.streamed(mmm, main, streams, recorder) }
    }

    fn poison(&mut self) -> Result<()> {
        self.poison_results()
    }

    fn check(&mut self, random: &mut Random) -> (bool, String) {
        let check = Batch::check(self, random);
        (
            check.passed(),
            format!(
                "{} (max rel. error {:.1e})",
                if check.passed() { "PASS" } else { "FAIL" },
                check.error
            ),
        )
    }
}

/// The French slides' pipeline: GPU g of d gets the g-th of d contiguous parts of the vector, in
/// chunks over 16 streams.
impl Share for VectorJob<Portable<f32>> {
    fn kernel_name() -> String {
        "vector_work".to_string()
    }

    fn new(gpu: &Gpu, index: usize, of: usize, args: &Args) -> Result<(Self, Module, usize)> {
        let elements = even_chunks(args.elements as usize, of)[index].len();
        gpu.ensure_fits(2 * 4 * elements as u64, &format!("{elements} floats"))?;
        let job = VectorJob::random(elements, args.vector_steps(), args.seed + index as u64)?;
        Ok((
            job,
            gpu.load(&kernels::STREAMS)?,
            *chunked::STREAM_COUNTS.last().expect("stream counts"),
        ))
    }

    unsafe fn enqueue(
        &mut self,
        work: &Kernel,
        main: &Stream,
        streams: &Streams,
        recorder: Option<&mut Recorder>,
    ) -> Result<()> {
        fork(main, streams)?;
        // SAFETY: the same contract as this function's.
        unsafe { VectorJob::enqueue(self, work, streams, recorder) }?;
        join(main, streams)
    }

    fn poison(&mut self) -> Result<()> {
        VectorJob::poison(self)
    }

    fn check(&mut self, random: &mut Random) -> (bool, String) {
        let wrong = self.wrong_elements(chunked::SAMPLES, random);
        (wrong == 0, check_cell(wrong))
    }
}

/// One GPU with what a run needs on it, made before anything is timed. Its fields are dropped with
/// its context current (see `Drop`), the context itself last.
struct Part {
    streams: Streams,
    main: Stream,
    module: Module,
    gpu: Gpu,
}

impl Drop for Part {
    fn drop(&mut self) {
        // Streams and the module belong to this GPU's context. Nothing to report a failure to.
        let _ = self.gpu.make_current();
    }
}

/// The GPUs of a run and the share of the work each has (`shares[i]` lives on `parts[i]`): two lists,
/// so that the kernels can be looked up in the parts' modules once, before the timed runs, while the
/// shares are used mutably.
struct Spread<S: Share> {
    shares: Vec<S>,
    parts: Vec<Part>,
}

impl<S: Share> Drop for Spread<S> {
    fn drop(&mut self) {
        // Each share's buffers belong to its GPU's context: dropped with that context current.
        for (share, part) in self.shares.drain(..).zip(&self.parts) {
            let _ = part.gpu.make_current();
            drop(share);
        }
    }
}

/// The parts of a run on GPUs 0 to `count` - 1.
fn spread_over<S: Share>(count: usize, args: &Args) -> Result<Spread<S>> {
    let mut spread = Spread {
        shares: Vec::new(),
        parts: Vec::new(),
    };
    for index in 0..count {
        let gpu = Gpu::open(index as u32)?;
        let (share, module, streams) = S::new(&gpu, index, count, args)?;
        let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
        spread.parts.push(Part {
            streams: new_streams(streams)?,
            main,
            module,
            gpu,
        });
        spread.shares.push(share);
    }
    Ok(spread)
}

/// Waits for every part's GPU when dropped: every way out of [`run_once`] before its own waits.
struct WaitForParts<'a>(&'a [Part]);

impl Drop for WaitForParts<'_> {
    fn drop(&mut self) {
        for part in self.0 {
            // Nothing to add to the error on its way out.
            let _ = part.gpu.make_current().map(|()| CurrentContext::synchronize());
        }
    }
}

/// Every part's work enqueued on its GPU, then the host waits for all of them; with recorders (one
/// per part), the recorded run. `kernels[i]` is part i's kernel.
fn run_once<S: Share>(
    shares: &mut [S],
    parts: &[Part],
    kernels: &[Kernel],
    mut recorders: Option<&mut [Recorder]>,
) -> Result<()> {
    let waiting = WaitForParts(parts);
    for (index, (share, part)) in shares.iter_mut().zip(parts).enumerate() {
        part.gpu.make_current()?;
        let recorder = recorders.as_deref_mut().map(|recorders| &mut recorders[index]);
        // SAFETY: the shares stay borrowed until every GPU has finished: the waits below, or
        // `waiting` on any other way out.
        unsafe { share.enqueue(&kernels[index], &part.main, &part.streams, recorder) }?;
    }
    for part in parts {
        part.gpu.make_current()?;
        check_cuda!(part.main.synchronize())?;
    }
    std::mem::forget(waiting); // every GPU is done: no second wait inside what is timed
    Ok(())
}

/// Runs `--mode mmm` or `--mode chunked` on 1 to `devices` GPUs; returns whether every result passed.
pub fn run(args: &Args, devices: u32) -> Result<bool> {
    // Every GPU gets at least one product or element; checked before the driver is asked anything.
    let (work, unit) = if args.mode == Mode::Mmm {
        (args.count, "products (--count")
    } else {
        (args.elements, "elements (--elements")
    };
    ensure!(
        devices <= work,
        "--devices {devices} needs at least {devices} {unit} {work})"
    );
    let available = gpu::count()?;
    ensure!(
        devices <= available,
        "--devices {devices}: this machine has {available} GPU{}",
        if available == 1 { "" } else { "s" }
    );
    if args.mode == Mode::Mmm {
        println!(
            "COUNT = {} products of random {n} x {n} doubles, tiled mmm with BLOCK_SIZE {}, portable pinned host memory, \
             one stream per product",
            args.count,
            args.block_size,
            n = args.size
        );
        spread::<Batch<Portable<f64>>>(args, devices as usize)
    } else {
        println!(
            "Chunked pipeline: {} floats, {} fused multiply-adds each, portable pinned host memory, 16 streams per GPU",
            args.elements,
            args.vector_steps()
        );
        spread::<VectorJob<Portable<f32>>>(args, devices as usize)
    }
}

fn spread<S: Share>(args: &Args, devices: usize) -> Result<bool> {
    for index in 0..devices as u32 {
        // The properties need no context: the GPUs' contexts are made per run, in `spread_over`.
        println!("{}", DeviceInfo::query(check_cuda!(Device::get_device(index))?, index)?);
    }
    println!("\n| GPUs | host time in ms | speedup over 1 GPU | check |");
    println!("|------|-----------------|--------------------|-------|");
    let mut random = Random::new(args.seed);
    let (mut passed, mut one_gpu_ms) = (true, None);
    let progress = Progress::new(devices, "lab-streams --devices");
    for count in 1..=devices {
        progress.step(format!("{count} GPUs"));
        let mut spread = spread_over::<S>(count, args)?;
        for (share, part) in spread.shares.iter_mut().zip(&spread.parts) {
            part.gpu.make_current()?;
            share.poison()?;
        }
        let kernels = spread
            .parts
            .iter()
            .map(|part| Kernel::get(&part.module, &S::kernel_name()))
            .collect::<Result<Vec<_>>>()?;
        let timing = time_on_host(args.runs().warmup, args.runs().repetitions, || {
            run_once(&mut spread.shares, &spread.parts, &kernels, None)
        })?;
        let checks: Vec<(bool, String)> = spread.shares.iter_mut().map(|share| share.check(&mut random)).collect();
        passed &= checks.iter().all(|(ok, _)| *ok);
        let cell = checks
            .iter()
            .map(|(_, cell)| cell.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let baseline = *one_gpu_ms.get_or_insert(timing.median_ms());
        progress.done();
        progress.println(format!(
            "| {count} | {:.3} | {:.2}x | {cell} |",
            timing.median_ms(),
            baseline / timing.median_ms()
        ));
        if count == devices {
            progress.println(format!("\n{count} GPUs: {timing}"));
            if let Some(path) = &args.timeline {
                let (lanes, spans) = record(&mut spread.shares, &spread.parts, &kernels)?;
                let title = format!("{count} GPUs, a lane per GPU and stream, portable pinned host memory");
                progress.println(write_svg(path, args.force, &title, &lanes, &spans)?);
            }
        }
    }
    Ok(passed)
}

/// One recorded run on every part: a recorder per GPU, started before any work is enqueued; their
/// spans moved onto the first one's axis by the host clock and into a lane per GPU and stream.
fn record<S: Share>(shares: &mut [S], parts: &[Part], kernels: &[Kernel]) -> Result<(Vec<String>, Vec<Span>)> {
    let mut recorders = Vec::new();
    for part in parts {
        part.gpu.make_current()?;
        recorders.push(Recorder::start(&part.main)?);
    }
    run_once(shares, parts, kernels, Some(&mut recorders))?;
    let (mut lanes, mut spans) = (Vec::new(), Vec::new());
    for (index, (part, recorder)) in parts.iter().zip(&recorders).enumerate() {
        part.gpu.make_current()?;
        let offset_ms = (recorder.started - recorders[0].started).as_secs_f64() * 1e3;
        let first_lane = lanes.len();
        lanes.extend((0..part.streams.len()).map(|stream| format!("GPU {index} stream {stream}")));
        spans.extend(recorder.spans()?.into_iter().map(|span| Span {
            lane: first_lane + span.lane,
            start_ms: span.start_ms + offset_ms,
            end_ms: span.end_ms + offset_ms,
            ..span
        }));
    }
    Ok((lanes, spans))
}

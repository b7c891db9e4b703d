//! `--mode overlap`: CPU work overlapped with GPU work (French slides). The CPU computes the reference
//! values the check needs while the GPU runs the chunked job on 4 streams; the host synchronizes
//! explicitly before it uses the GPU's results. Pinned host memory by default: from pageable memory
//! the copies hold the CPU until they are done. Then the notes' own program, in both versions they print:
//! `malloc`'d arrays registered with `cudaHostRegister`, everything on stream 0, the copy back enqueued
//! before the CPU's share, then `cudaDeviceSynchronize()` (first version) or `cudaStreamSynchronize(0)`.
//! Then how the host waits (German slides): `cudaEventSynchronize` busy-waits, burning a core, unless
//! the event was made with `cudaEventBlockingSync`; and how finely `cudaEventElapsedTime` measures
//! (German slides: "about half a microsecond").

use std::time::Instant;

use anyhow::Result;
use common::check_cuda;
use common::context::{new_streams, WaitForDevice};
use common::host_memory::Registered;
use common::verify::Random;
use cust::event::{Event, EventFlags};
use cust::module::Module;
use cust::stream::Stream;
use lab_streams::vector::{wait, Synchronize, VectorJob};
use matrix::HostStorage;
use profiler::timeline::Kernel;

use crate::Args;

const STREAMS: usize = 4;

pub fn run<H: HostStorage<f32>>(module: &Module, args: &Args) -> Result<bool> {
    let work = Kernel::get(module, "vector_work")?;
    let mut job = VectorJob::<H>::random(args.elements as usize, args.vector_steps(), args.seed)?;
    let streams = new_streams(STREAMS)?;
    job.pipeline(&work, &streams, Synchronize::Device, None)?; // warm-up

    // Size the CPU's share so that it takes about as long as the GPU's.
    let gpu_ms = host_ms(|| job.pipeline(&work, &streams, Synchronize::Device, None))?;
    let probe = 1000;
    let per_element_ms = host_ms(|| {
        std::hint::black_box((0..probe).map(|i| job.expected(i)).sum::<f32>());
        Ok(())
    })? / probe as f64;
    let cpu_elements = ((gpu_ms / per_element_ms) as usize).clamp(1, job.input.len());
    let mut random = Random::new(args.seed);
    let picks: Vec<usize> = (0..cpu_elements)
        .map(|_| random.below(job.input.len() as u64) as usize)
        .collect();

    job.poison()?;
    let start = Instant::now();
    job.pipeline(&work, &streams, Synchronize::Device, None)?;
    let expected = cpu_work(&job, &picks);
    let serial_ms = start.elapsed().as_secs_f64() * 1e3;
    let serial_ok = matches(&job, &expected);

    let (overlapped_ms, overlapped_ok) = cpu_during_gpu(
        &mut job,
        &work,
        &streams,
        CopyBack::AfterCpu,
        Synchronize::Device,
        &picks,
    )?;

    println!(
        "\nCPU work during GPU work: the GPU runs the chunked job on {STREAMS} streams ({} floats, {} steps, {} host memory),",
        args.elements,
        job.steps,
        H::KIND
    );
    println!("the CPU computes the reference of {cpu_elements} elements (about as long as the GPU's {gpu_ms:.2} ms)\n");
    println!("| schedule | host time in ms | check |");
    println!("|----------|-----------------|-------|");
    println!("| GPU, then CPU | {serial_ms:.2} | {} |", pass(serial_ok));
    println!(
        "| CPU between enqueueing the kernels and the copies back | {overlapped_ms:.2} | {} |",
        pass(overlapped_ok)
    );
    let mut printed_ok = true;
    for (version, how, wait) in [
        ("first", Synchronize::Device, "cudaDeviceSynchronize()"),
        ("second", Synchronize::PerStream, "cudaStreamSynchronize(0)"),
    ] {
        let (ms, ok) = as_printed(&work, args, &picks, how)?;
        println!(
            "| the notes' program ({version} version): malloc'd arrays, cudaHostRegister, stream 0, copy back, k2_CPU, {wait} | {ms:.2} | {} |",
            pass(ok)
        );
        printed_ok &= ok;
    }
    println!("\nOverlapped: host time in ms: {overlapped_ms:.2} against {serial_ms:.2} one after the other");
    event_waits(&job, &work, &streams[0])?;
    let resolution_ok = event_resolution(&streams[0], args.seed)?;
    Ok(serial_ok && overlapped_ok && printed_ok && resolution_ok)
}

/// The CPU's share: the reference values of the elements `picks` names.
fn cpu_work<H: HostStorage<f32>>(job: &VectorJob<H>, picks: &[usize]) -> Vec<(usize, f32)> {
    picks.iter().map(|&i| (i, job.expected(i))).collect()
}

/// Where the copies back are enqueued: the French notes enqueue them before the CPU's share. Our own
/// schedule enqueues them after it, so that from pageable memory, where a copy back holds the host until
/// it is done, the CPU still works while the kernels run.
#[derive(Clone, Copy, PartialEq)]
enum CopyBack {
    BeforeCpu,
    AfterCpu,
}

/// The job's copies in and kernels enqueued on `streams`, the copies out enqueued before or after the
/// CPU's share (`picks`, computed while the GPU works), then the explicit wait (`how`) before the results
/// are used. Returns the host time of it all and whether the results are right.
fn cpu_during_gpu<H: HostStorage<f32>>(
    job: &mut VectorJob<H>,
    work: &Kernel,
    streams: &[Stream],
    copy_back: CopyBack,
    how: Synchronize,
    picks: &[usize],
) -> Result<(f64, bool)> {
    job.poison()?;
    let start = Instant::now();
    // Any way out before the explicit wait below waits for the GPU first.
    let waiting = WaitForDevice;
    // SAFETY: the copies read `input` and write `output` after these calls return. Meanwhile the CPU
    // only reads `input` (cpu_work), and `output` is read only after the wait below (or `waiting`).
    // Pinned: returns at once; pageable: once the data is staged.
    unsafe { job.copies_in(streams, &mut None) }?;
    // Returns at once.
    job.kernels(work, streams, &mut None)?;
    if copy_back == CopyBack::BeforeCpu {
        // SAFETY: as above. Pinned: returns at once; pageable: once the data is back.
        unsafe { job.copies_out(streams, &mut None) }?;
    }
    // The CPU works while the GPU does.
    let expected = cpu_work(job, picks);
    if copy_back == CopyBack::AfterCpu {
        // SAFETY: as above.
        unsafe { job.copies_out(streams, &mut None) }?;
    }
    wait(streams, how)?; // explicit, before the results are used
    waiting.disarm();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    Ok((ms, matches(job, &expected)))
}

/// The French notes' program, numbered as they number it: the same job in memory `malloc` gave,
/// registered (1, 2: `cudaHostRegister`); the copy in, one grid and the copy out on stream 0 (3, 4, 5);
/// the CPU's share meanwhile (6, `k2_CPU`); the wait (7): `cudaDeviceSynchronize()` in their first
/// version, `cudaStreamSynchronize(0)` (the wait per stream, of the one stream there is) in the second;
/// the results used (8, `k3_CPU`: the check); `cudaHostUnregister` (9, 10) when the job is dropped.
/// Returns the host time from 3 to 7 (after one untimed run) and whether the results are right.
fn as_printed(work: &Kernel, args: &Args, picks: &[usize], how: Synchronize) -> Result<(f64, bool)> {
    let mut job = VectorJob::<Registered<f32>>::random(args.elements as usize, args.vector_steps(), args.seed)?;
    let stream_0 = [Stream::null()];
    job.pipeline(work, &stream_0, how, None)?; // warm-up
    cpu_during_gpu(&mut job, work, &stream_0, CopyBack::BeforeCpu, how, picks)
}

/// Kernels the host waits for in [`event_waits`]: a tenth of a second with the defaults on an H100.
const WAITED_KERNELS: usize = 64;

/// The German slides' `cudaEventSynchronize`: "without cudaEventBlockingSync it busy-waits". The job's
/// kernel launched [`WAITED_KERNELS`] times on `stream`, an event recorded after them, and the host
/// waiting for it: the wait's wall time against the CPU time the process spent meanwhile.
fn event_waits<H: HostStorage<f32>>(job: &VectorJob<H>, work: &Kernel, stream: &Stream) -> Result<()> {
    println!("\nThe host waiting for {WAITED_KERNELS} of those kernels with cudaEventSynchronize\n");
    println!("| event made with | wait: wall ms | process CPU ms | CPU / wall |");
    println!("|-----------------|---------------|----------------|------------|");
    for (name, flags) in [
        ("cudaEventDefault (busy-wait)", EventFlags::DEFAULT),
        ("cudaEventBlockingSync", EventFlags::BLOCKING_SYNC),
    ] {
        let done = check_cuda!(Event::new(flags | EventFlags::DISABLE_TIMING))?;
        let waiting = WaitForDevice; // an error below still waits for the kernels before `job` goes
        for _ in 0..WAITED_KERNELS {
            job.kernels(work, std::slice::from_ref(stream), &mut None)?;
        }
        check_cuda!(done.record(stream))?;
        let cpu_start = process_cpu_ms();
        let wall_ms = host_ms(|| Ok(check_cuda!(done.synchronize())?))?;
        let cpu_ms = process_cpu_ms() - cpu_start;
        waiting.disarm();
        println!("| {name} | {wall_ms:.2} | {cpu_ms:.2} | {:.2} |", cpu_ms / wall_ms);
    }
    Ok(())
}

/// Pairs of events [`event_resolution`] times.
const EVENT_PAIRS: usize = 2000;

/// The German slides: `cudaEventElapsedTime`'s resolution is about half a microsecond. Pairs of events
/// on an idle stream, the host waiting a random 0 to 4 us between the two records, so the true gaps
/// spread evenly, a few ns apart; the measured ones fall on the clock's steps, and the smallest step
/// between two distinct measured gaps is the resolution. Every gap must be finite and not negative
/// (the check: an event measured before it was recorded would be a driver fault).
fn event_resolution(stream: &Stream, seed: u64) -> Result<bool> {
    let mut random = Random::new(seed);
    let (start, end) = (
        check_cuda!(Event::new(EventFlags::DEFAULT))?,
        check_cuda!(Event::new(EventFlags::DEFAULT))?,
    );
    let mut gaps = Vec::with_capacity(EVENT_PAIRS);
    for _ in 0..EVENT_PAIRS {
        let wait = std::time::Duration::from_nanos(random.below(4000));
        check_cuda!(start.record(stream))?;
        let begun = Instant::now();
        while begun.elapsed() < wait {}
        check_cuda!(end.record(stream))?;
        check_cuda!(end.synchronize())?;
        gaps.push(check_cuda!(end.elapsed_time_f32(&start))?);
    }
    let right = gaps.iter().all(|gap| gap.is_finite() && *gap >= 0.0);
    let mut distinct: Vec<f64> = gaps.iter().map(|&gap| f64::from(gap) * 1e3).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let step = distinct
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .fold(f64::INFINITY, f64::min);
    println!(
        "
cudaEventElapsedTime's resolution (German slides: about half a microsecond): {EVENT_PAIRS} pairs of events, the host waiting 0 to 4 us between them: {} distinct gaps from {:.3} to {:.3} us, the smallest step between two {:.3} us; every gap finite and not negative: {}",
        distinct.len(),
        distinct.first().copied().unwrap_or(f64::NAN),
        distinct.last().copied().unwrap_or(f64::NAN),
        step,
        pass(right)
    );
    Ok(right)
}

/// User and system CPU time of the whole process so far (`getrusage`), in ms.
fn process_cpu_ms() -> f64 {
    common::timing::cpu_used(libc::RUSAGE_SELF).as_secs_f64() * 1e3
}

fn host_ms(mut work: impl FnMut() -> Result<()>) -> Result<f64> {
    let start = Instant::now();
    work()?;
    Ok(start.elapsed().as_secs_f64() * 1e3)
}

/// Every element written, and the CPU's values equal the GPU's bit for bit.
fn matches<H: HostStorage<f32>>(job: &VectorJob<H>, expected: &[(usize, f32)]) -> bool {
    use common::verify::Poison;
    job.output.iter().all(|x| !x.is_poison())
        && expected
            .iter()
            .all(|&(i, value)| job.output[i].to_bits() == value.to_bits())
}

fn pass(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

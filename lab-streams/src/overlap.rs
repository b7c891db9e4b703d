//! `--mode overlap`: CPU work overlapped with GPU work (French slides). The CPU computes the reference
//! values the check needs while the GPU runs the chunked job on 4 streams; the host synchronizes
//! explicitly before it uses the GPU's results. Pinned host memory by default (the slides register
//! theirs with `cudaHostRegister`): from pageable memory the copies hold the CPU until they are done.

use std::time::Instant;

use anyhow::Result;
use common::context::{new_streams, WaitForDevice};
use common::verify::Random;
use cust::module::Module;
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
    let cpu_work = |job: &VectorJob<H>| picks.iter().map(|&i| (i, job.expected(i))).collect::<Vec<_>>();

    job.poison()?;
    let start = Instant::now();
    job.pipeline(&work, &streams, Synchronize::Device, None)?;
    let expected = cpu_work(&job);
    let serial_ms = start.elapsed().as_secs_f64() * 1e3;
    let serial_ok = matches(&job, &expected);

    job.poison()?;
    let start = Instant::now();
    let waiting = WaitForDevice; // any way out before the explicit wait below waits for the GPU first
                                 // SAFETY: the copies read `input` and write `output` after these calls return. Meanwhile the CPU
                                 // only reads `input` (cpu_work), and `output` is read only after the wait below (or `waiting`).
    unsafe { job.copies_in(&streams, &mut None) }?; // pinned: returns at once; pageable: once the data is staged
    job.kernels(&work, &streams, &mut None)?; // returns at once
    let expected = cpu_work(&job); // the CPU works while the kernels run
                                   // SAFETY: as above.
    unsafe { job.copies_out(&streams, &mut None) }?; // pinned: returns at once; pageable: once the data is back
    wait(&streams, Synchronize::Device)?; // explicit, before the results are used
    waiting.disarm();
    let overlapped_ms = start.elapsed().as_secs_f64() * 1e3;
    let overlapped_ok = matches(&job, &expected);

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
    println!("\nOverlapped: host time in ms: {overlapped_ms:.2} against {serial_ms:.2} one after the other");
    Ok(serial_ok && overlapped_ok)
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

//! `--mode mmm`: the German slides' table, from pageable host memory.

use anyhow::Result;
use common::batch::{Batch, Measured};
use common::check_cuda;
use common::gpu::Gpu;
use common::mmm::{load_mmm, MmmKernel};
use common::timeline::{overlap, svg};
use common::verify::Random;
use cust::stream::{Stream, StreamFlags};

use crate::Args;

/// The slides' nvprof totals on their Fermi GPU, for the ratios beside ours.
const SLIDE_MS: [(&str, f64); 3] = [("mmm", 2034.15), ("mmm-without-transfers", 1641.09), ("mmm-streamed", 1850.16)];

/// Runs the three programs, prints each GPU time and the table; returns whether every product passed.
pub fn run(gpu: &Gpu, args: &Args) -> Result<bool> {
    let (count, n) = (args.count as usize, args.size as usize);
    gpu.ensure_fits(Batch::<Vec<f64>>::bytes(count, n), &format!("{count} products of {n} x {n} doubles"))?;
    println!(
        "\nCOUNT = {count} products of random {n} x {n} doubles, tiled mmm with BLOCK_SIZE {}, pageable host memory",
        args.block_size
    );
    let module = load_mmm(gpu, args.block_size)?;
    let mmm = check_cuda!(module.get_function(MmmKernel::Tiled.c_name::<f64>()))?;
    // cust 0.3.2 drops NON_BLOCKING, so these streams sync with the NULL stream like the slide's
    // cudaStreamCreate; `main` carries the timing events.
    let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let streams: Vec<Stream> =
        (0..count).map(|_| check_cuda!(Stream::new(StreamFlags::DEFAULT, None))).collect::<Result<_, _>>()?;
    let mut batch = Batch::<Vec<f64>>::random(count, n, args.block_size, args.seed)?;
    let mut random = Random::new(args.seed);
    let repetitions = args.repetitions as usize;

    let serial = batch.time_serial(&mmm, &main, repetitions, &mut random)?;
    println!("mmm                    {}", serial.timing);
    let kernels = batch.time_kernels_only(&mmm, &main, repetitions, &mut random)?;
    println!("mmm-without-transfers  {}", kernels.timing);
    let streamed = batch.time_streamed(&mmm, &main, &streams, repetitions, &mut random)?;
    println!("mmm-streamed           {}", streamed.timing);

    let measured = [&serial, &kernels, &streamed];
    println!("\n{}", table(&measured, kernels.timing.median_ms()));
    if let Some(path) = &args.timeline {
        let spans = batch.record_streamed(&mmm, &main, &streams)?;
        let lanes: Vec<String> = (0..count).map(|i| format!("stream {i}")).collect();
        let title = format!("mmm-streamed: {count} products of {n} x {n} doubles, pageable host memory, {}", gpu.info.name);
        let mut file = common::output::create_output_file(path, args.force)?;
        std::io::Write::write_all(&mut file, svg(&title, &lanes, &spans).as_bytes())?;
        let (kernel_ms, copy_ms, both_ms) = overlap(&spans);
        println!(
            "Timeline written to {}: kernels busy {kernel_ms:.1} ms, copies busy {copy_ms:.1} ms, both at once {both_ms:.1} ms",
            path.display()
        );
    }
    Ok(measured.iter().all(|m| m.check.passed()))
}

fn table(measured: &[&Measured; 3], kernels_ms: f64) -> String {
    let mut table = String::from(
        "| program | GPU time in ms | ratio to kernels only | slide (Fermi) ms | slide ratio | check |\n\
         |---------|----------------|-----------------------|------------------|-------------|-------|\n",
    );
    for (m, (name, slide_ms)) in measured.iter().zip(SLIDE_MS) {
        table.push_str(&format!(
            "| {name} | {:.2} | {:.3} | {slide_ms:.2} | {:.3} | {} (max rel. error {:.1e}) |\n",
            m.timing.median_ms(),
            m.timing.median_ms() / kernels_ms,
            slide_ms / SLIDE_MS[1].1,
            if m.check.passed() { "PASS" } else { "FAIL" },
            m.check.error
        ));
    }
    table
}

//! lab-mmm: the slide program mmm.cu. Reads A and B (or makes random ones), copies them to the GPU,
//! multiplies with the naive `mmm-ab` and the tiled `mmm` kernel, copies C back, checks C against the
//! CPU and prints each kernel's time and GFLOP/s. `--ladder` goes beyond the slides: the steps from the
//! tiled kernel towards cuBLAS; `--tile-example` works the slides' TILE_WIDTH = 2 example on the GPU.

use std::process::ExitCode;

mod args;

use anyhow::{Context as _, Result};
use common::check_cuda;
use common::gpu::Gpu;
use common::host_memory::ensure_host_fits;
use common::output::check_output_path;
use common::progress::Progress;
use common::ptxas_view::print_ptxas;
use common::verify::{verdict, Random};
use cust::module::Module;
use grading::Entry;
use kernels::KernelImage;
use lab_mmm::background::Checker;
use lab_mmm::climb::climb;
use lab_mmm::{
    check, format_table, host_bytes, reads, sweep, tile_example, time_on_gpu, unroll, KernelChoice, Precision,
    PrecisionFlag, Row,
};
use matrix::mmm::{check_product_fits, check_sizes_match};
use matrix::staging::Staging;
use matrix::{file, Element, Matrix};

use crate::args::Args;

fn main() -> ExitCode {
    grading::run_lab(|args: Args| args.profile.clone().around(|| run(args)))
}

fn run(args: Args) -> Result<()> {
    // A student's mmm.cu (assignments/02-mmm-ab, 03-mmm-tiled) is compiled first, before the GPU opens.
    if args.student.checking() {
        return check::run(args.kernel, &args.student);
    }
    // The slides' "block (0, 0) for TILE_WIDTH = 2", traced by the GPU: a program of its own.
    if args.tile_example {
        let gpu = Gpu::open(0)?;
        println!("{}", gpu.info);
        return tile_example::show(&gpu, args.seed);
    }
    let chosen = args.kernel.unwrap_or(KernelChoice::Both).kernels();
    let entries: Vec<Entry> = chosen.iter().flat_map(|&kernel| check::entries(kernel)).collect();
    let images: Vec<(u32, &'static KernelImage)> = args
        .block_size
        .iter()
        .map(|&bs| {
            let ours = kernels::mmm_for_block_size(bs).with_context(|| {
                format!(
                    "--block-size {bs}: mmm.cu is compiled for BLOCK_SIZE {:?} only",
                    kernels::MMM_BLOCK_SIZES
                )
            })?;
            Ok((bs, args.student.image(ours, &entries)?))
        })
        .collect::<Result<_>>()?;
    let mut random = Random::new(args.seed);
    let precision = args.precision.unwrap_or(if args.ladder {
        PrecisionFlag::All
    } else {
        PrecisionFlag::Both
    });
    let precisions = if args.ladder {
        precision.of_ladder()
    } else {
        precision.of_slides()?
    };
    if args.sweep {
        if let Some(path) = &args.plot {
            check_output_path(path, args.force)?;
        }
        let gpu = Gpu::open(0)?;
        println!("{}", gpu.info);
        let repetitions = args.repetitions as usize;
        return sweep::run(
            &gpu,
            &precisions,
            repetitions,
            args.plot.as_deref(),
            args.force,
            &mut random,
        );
    }
    let files = args.read_files()?;
    let sizes = match &files {
        Some((a, b)) => {
            check_sizes_match(a, b)?;
            (a.rows(), a.cols(), b.cols())
        }
        None => args.random_sizes()?,
    };
    // Every size is checked against host and GPU memory before the random matrices are filled.
    ensure_host_fits(
        host_bytes(sizes),
        &format!("multiplying {} x {} by {} x {}", sizes.0, sizes.1, sizes.1, sizes.2),
    )?;
    // --reads runs this lab under ncu with --reads-child, which only launches the kernels.
    if args.reads_child {
        let gpu = Gpu::open(0)?;
        return reads::launch_all(&gpu, sizes, &precisions, &args.block_size, &mut random);
    }
    if args.reads {
        return show_reads(&args, sizes, &precisions);
    }
    if let Some(path) = &args.output {
        check_output_path(path, args.force)?;
    }
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    for &block_size in &args.block_size {
        if precisions.contains(&Precision::F64) {
            check_product_fits::<f64>(&gpu, sizes, block_size)?;
        }
        if precisions.iter().any(|&p| p != Precision::F64) {
            check_product_fits::<f32>(&gpu, sizes, block_size)?;
        }
    }
    let (mut a, mut b) = match files {
        Some(files) => files,
        None => random_inputs(sizes, args.seed, &mut random)?,
    };
    if args.ladder {
        return climb(&gpu, &a, &b, &precisions, args.repetitions as usize, &mut random);
    }
    if args.unroll {
        let variants = unroll::variants(&args.block_size)?;
        let repetitions = args.repetitions as usize;
        let rows = unroll::run(&gpu, (&mut a, &mut b), &precisions, &variants, repetitions, &mut random)?;
        println!("\n{}", unroll::format_table(&rows));
        let failed = rows.iter().filter(|row| !row.check.passed()).count();
        return verdict(
            failed == 0,
            &format!("{failed} of {} products differ from the CPU", rows.len()),
        );
    }
    if args.print || !args.files.is_empty() {
        print!("A =\n{a}B =\n{b}");
    }
    let modules: Vec<(u32, Module)> = images
        .iter()
        .map(|&(bs, image)| Ok((bs, gpu.load(image)?)))
        .collect::<Result<_>>()?;
    let progress = Progress::new(precisions.len() * args.block_size.len() * chosen.len(), "lab-mmm");

    // The copies go through page-locked pieces filled on all cores ([`Staging`]), one set for every
    // precision: the copies are not what this program times, and the driver's own copy from pageable
    // memory took longer than the kernels at 8192 (issue 41).
    let c_bytes = (a.rows() * b.cols() * std::mem::size_of::<f64>()) as u64;
    let mut staging = Staging::for_copies_of([a.bytes(), b.bytes(), c_bytes])?;
    let setup = Setup {
        gpu: &gpu,
        modules: &modules,
        args: &args,
        progress: &progress,
    };
    let mut products = Products::default();
    for &precision in &precisions {
        // of_slides gives f64 and f32 only: the slides' kernels have no TF32 or bf16 version.
        if precision == Precision::F64 {
            multiply(&setup, (&mut a, &mut b), &mut staging, &mut random, &mut products)?;
        } else {
            let (mut a, mut b) = (a.convert::<f32, _>()?, b.convert::<f32, _>()?);
            multiply(&setup, (&mut a, &mut b), &mut staging, &mut random, &mut products)?;
        }
    }
    drop(progress);
    let Products { rows, c_for_output } = products;

    println!("\n{}", format_table(&rows));
    if let (Some(path), Some(c)) = (&args.output, &c_for_output) {
        file::write(c, path, args.force)?;
        println!("C written to {}", path.display());
    }
    if args.ptxas {
        print_reports(&gpu, &modules, &images, &rows)?;
    }
    let failed = rows.iter().filter(|row| !row.check.passed()).count();
    verdict(
        failed == 0,
        &format!("{failed} of {} products differ from the CPU", rows.len()),
    )
}

fn random_inputs(
    (m, k, n): (usize, usize, usize),
    seed: u64,
    random: &mut Random,
) -> Result<(Matrix<f64>, Matrix<f64>)> {
    println!("Random A ({m} x {k}) and B ({k} x {n}), uniform in [-1, 1), seed {seed}.");
    Ok((Matrix::random(m, k, random)?, Matrix::random(k, n, random)?))
}

/// What every precision's run shares: the GPU, the modules (one per BLOCK_SIZE), the flags and the
/// progress line.
struct Setup<'a> {
    gpu: &'a Gpu,
    modules: &'a [(u32, Module)],
    args: &'a Args,
    progress: &'a Progress,
}

/// What the products leave for the end of the program: the table's rows, and with --output the C it
/// writes (the first precision's, as f64; converted only then: a gigabyte at 16384 squared).
#[derive(Default)]
struct Products {
    rows: Vec<Row>,
    c_for_output: Option<Matrix<f64>>,
}

/// The slide's program for element type T: copy A and B to the GPU, run each kernel, copy C back,
/// check it. The CPU checks each C on a thread of its own while the GPU runs the next kernel
/// ([`Checker`]). A and B leave the GPU at the end, for the next precision.
fn multiply<T: Element>(
    setup: &Setup,
    (a, b): (&mut Matrix<T>, &mut Matrix<T>),
    staging: &mut Staging,
    random: &mut Random,
    products: &mut Products,
) -> Result<()> {
    let &Setup {
        gpu,
        modules,
        args,
        progress,
    } = setup;
    let mut c = Matrix::<T>::new(a.rows(), b.cols())?;
    a.copy_to_gpu_staged(staging)?;
    b.copy_to_gpu_staged(staging)?;
    // A and B are only read from here on, by the kernels and by the check's thread: shared borrows,
    // which the thread may hold until the scope ends.
    let (inputs_a, inputs_b) = (&*a, &*b);

    let (runs, checks) = std::thread::scope(|scope| -> Result<_> {
        // One CPU reference for every kernel below, computed while the first one runs.
        let mut checker = Checker::start(scope, inputs_a, inputs_b, random);
        let mut runs = Vec::new();
        for (block_size, module) in modules {
            for kernel in args.kernel.unwrap_or(KernelChoice::Both).kernels() {
                progress.step(format!("{} {} BLOCK_SIZE {block_size}", kernel.slide_name(), T::NAME));
                let timing = time_on_gpu(
                    module,
                    kernel,
                    *block_size,
                    inputs_a,
                    inputs_b,
                    &mut c,
                    args.repetitions as usize,
                )?;
                c.copy_from_gpu_staged(staging)?;
                // C's host copy goes to the check and another takes its place: the two alternate,
                // while C's device copy stays where the kernels write it.
                checker.hand_over(&mut c)?;
                progress.done();
                progress.println(format!(
                    "{} {} BLOCK_SIZE {block_size}: {timing}",
                    kernel.slide_name(),
                    T::NAME
                ));
                runs.push((kernel, *block_size, timing));
            }
        }
        Ok((runs, checker.finish(&mut c)?))
    })?;
    // The table's rows, once every check is in: the verdicts come after the kernels that follow.
    anyhow::ensure!(
        runs.len() == checks.len(),
        "{} products, {} checks",
        runs.len(),
        checks.len()
    );
    let element_size = std::mem::size_of::<T>() as f64;
    for ((kernel, block_size, timing), check) in runs.into_iter().zip(checks) {
        products.rows.push(Row {
            kernel,
            function: kernel.c_name::<T>(),
            precision: T::NAME,
            block_size,
            timing,
            flops: 2.0 * (a.rows() * a.cols() * b.cols()) as f64,
            bandwidth_bound: gpu.info.peak_bandwidth() / element_size
                * kernel.operations_per_loaded_element(block_size),
            check,
        });
    }
    if args.print || !args.files.is_empty() {
        print!("C = A * B ({}) =\n{c}", T::NAME);
    }
    if args.output.is_some() && products.c_for_output.is_none() {
        products.c_for_output = Some(c.convert()?);
    }
    a.free_gpu_copy();
    b.free_gpu_copy();
    Ok(())
}

/// `--reads`: the kernels counted under ncu, the table, and PASS where every kernel's loads per element
/// of C are the notes' count (within 1 %), at the block sizes that divide the sizes (elsewhere the
/// count is not the notes' whole count: [`reads::ReadRow::judged`]).
fn show_reads(args: &Args, sizes: (usize, usize, usize), precisions: &[Precision]) -> Result<()> {
    let launched = reads::launches(precisions, &args.block_size);
    let child = reads::child_arguments(sizes, precisions, &args.block_size, args.seed);
    let (measured, ncu) = reads::measure(&child)?;
    let rows = reads::rows(&launched, sizes, &measured)?;
    let (m, k, n) = sizes;
    println!(
        "Global reads of mmm-ab and mmm at {m} x {k} x {n}, counted by Nsight Compute ({ncu}): one launch of each, caches flushed before it\n"
    );
    println!("{}", reads::format_table(&rows));
    let off = rows
        .iter()
        .filter(|row| row.judged() && (row.loads_per_element / row.slides_per_element() - 1.0).abs() > 0.01)
        .count();
    let judged = rows.iter().filter(|row| row.judged()).count();
    verdict(
        off == 0,
        &format!("{off} of {judged} kernels read other than the notes count"),
    )
}

/// `--ptxas`: the report of every kernel that ran, beside the driver's view.
fn print_reports(
    gpu: &Gpu,
    modules: &[(u32, Module)],
    images: &[(u32, &'static KernelImage)],
    rows: &[Row],
) -> Result<()> {
    for ((block_size, module), (_, image)) in modules.iter().zip(images) {
        for row in rows.iter().filter(|row| row.block_size == *block_size) {
            let function = check_cuda!(module.get_function(&row.function))?;
            println!();
            print_ptxas(image, &row.function, &function, &gpu.info, block_size * block_size)?;
        }
    }
    Ok(())
}

//! lab-mmm: the slide program mmm.cu. Reads A and B (or makes random ones), copies them to the GPU,
//! multiplies with the naive `mmm-ab` and the tiled `mmm` kernel, copies C back, checks C against the
//! CPU and prints each kernel's time and GFLOP/s. `--ladder` goes beyond the slides: the steps from the
//! tiled kernel towards cuBLAS.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use clap::Parser;
use common::check_cuda;
use common::gpu::Gpu;
use common::host_memory::ensure_host_fits;
use common::output::check_output_path;
use common::progress::Progress;
use common::ptxas_view::print_ptxas;
use common::verify::{verdict, Random};
use cust::module::Module;
use grading::{Check, Entry, StudentArgs};
use kernels::KernelImage;
use lab_mmm::cublas::{Cublas, Gemm};
use lab_mmm::ladder::{
    format_ladder, library_math, library_row, precision_cost, resources, run_library, run_step, Ladder, LadderRow,
    Operands, Rung, Step, TILED_BLOCK_SIZE,
};
use lab_mmm::sweep;
use lab_mmm::{check, format_table, multiply_on_gpu, Precision, PrecisionFlag, Row};
use matrix::mmm::{check_product_fits, check_sizes_match, parse_block_size, CpuProduct, MmmKernel};
use matrix::{file, Element, Matrix};

/// C = A * B on the GPU with the slides' Matrix class (slide: mmm.cu).
#[derive(Parser, Debug)]
#[command(name = "lab-mmm", version, about)]
#[command(group(clap::ArgGroup::new("written").args(["output", "plot"]).multiple(true)))]
struct Args {
    /// Matrix files A and B, as on the slide: one row per line, numbers separated by spaces, '#' starts a
    /// comment line. A's columns must equal B's rows. Without files: random 1024 x 1024 matrices.
    #[arg(value_names = ["A", "B"], num_args = 2, conflicts_with_all = ["random", "size"])]
    files: Vec<PathBuf>,
    /// Random N x N matrices A and B instead of files: the same as --size N, spelled as in the
    /// reference program (reference/mmm).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "size")]
    random: Option<u32>,
    /// Random matrices instead of files, sized as in the other labs: --size N for N x N A and B, or
    /// --size M K N for an M x K A and a K x N B.
    #[arg(long, num_args = 1..=3, value_names = ["N|M", "K", "N"], value_parser = clap::value_parser!(u32).range(1..))]
    size: Vec<u32>,
    /// Which kernel: naive (the slides' mmm-ab), tiled (mmm), or both (the default). With --check:
    /// naive checks week 2, tiled week 3; without it, the file says which week (week 3 where its tiled
    /// kernel keeps shared memory), and a line says what is checked.
    #[arg(long, value_enum)]
    kernel: Option<KernelChoice>,
    /// BLOCK_SIZE: threads per block are BLOCK_SIZE x BLOCK_SIZE, tiles are BLOCK_SIZE x BLOCK_SIZE.
    /// The kernels are compiled for 16 and 32; give one or both, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,32", value_parser = parse_block_size)]
    block_size: Vec<u32>,
    /// Element type: f64 (the slides' double), f32, both, or all (with --ladder also tf32: the TF32
    /// tensor cores on f32 matrices). Default: both; all with --ladder.
    #[arg(long, value_enum)]
    precision: Option<PrecisionFlag>,
    /// Timed launches per kernel after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Seed of the random matrices and of the verification's random vectors and samples.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print A, B and C (done anyway when A and B come from files).
    #[arg(long)]
    print: bool,
    /// Write C (of the first precision run) to this file, in the input format.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Let --output and --plot replace existing files.
    #[arg(long, requires = "written")]
    force: bool,
    /// Also print the ptxas report of each kernel run, the driver's view of it and the register arithmetic.
    #[arg(long)]
    ptxas: bool,
    /// Beyond the slides: the tiled kernel, then register blocking, 16-byte loads, cp.async stages,
    /// warp tiling and the tensor cores (FP64 and TF32), each timed, checked and set beside cuBLAS
    /// (random 4096 x 4096 unless sizes are given; --kernel and --block-size do not apply).
    #[arg(long, conflicts_with_all = ["files", "output", "print", "kernel_source"])]
    ladder: bool,
    /// With --ladder: the best step of each precision and cuBLAS at sizes 256 to 8192 and a few thin
    /// shapes (8192 x 256 x 8192, ...), as a table.
    #[arg(long, requires = "ladder", conflicts_with_all = ["size", "random"])]
    sweep: bool,
    /// With --sweep: also draw TFLOP/s and the share of cuBLAS by size into this SVG file.
    #[arg(long, value_name = "FILE.svg", requires = "sweep")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    student: StudentArgs,
    #[command(flatten)]
    profile: profiler::ProfileArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum KernelChoice {
    Naive,
    Tiled,
    Both,
}

fn main() -> ExitCode {
    grading::run_lab(|args: Args| args.profile.clone().around(|| run(args)))
}

fn run(args: Args) -> Result<()> {
    // A student's mmm.cu (assignments/02-mmm-ab, 03-mmm-tiled) is compiled first, before the GPU opens.
    if args.student.checking() {
        return check(&args);
    }
    let chosen = kernels_to_run(args.kernel.unwrap_or(KernelChoice::Both));
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
        return sweep(&gpu, &precisions, &args, &mut random);
    }
    let files = read_files(&args)?;
    let sizes = match &files {
        Some((a, b)) => {
            check_sizes_match(a, b)?;
            (a.rows(), a.cols(), b.cols())
        }
        None => random_sizes(&args)?,
    };
    // Every size is checked against host and GPU memory before the random matrices are filled.
    ensure_host_fits(
        host_bytes(sizes),
        &format!("multiplying {} x {} by {} x {}", sizes.0, sizes.1, sizes.1, sizes.2),
    )?;
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
    let (a, b) = match files {
        Some(files) => files,
        None => random_inputs(sizes, args.seed, &mut random)?,
    };
    if args.ladder {
        return climb(&gpu, &a, &b, &precisions, &args, &mut random);
    }
    if args.print || !args.files.is_empty() {
        print!("A =\n{a}B =\n{b}");
    }
    let modules: Vec<(u32, Module)> = images
        .iter()
        .map(|&(bs, image)| Ok((bs, gpu.load(image)?)))
        .collect::<Result<_>>()?;
    let progress = Progress::new(precisions.len() * args.block_size.len() * chosen.len(), "lab-mmm");

    let mut rows = Vec::new();
    let mut first_c: Option<Matrix<f64>> = None;
    for &precision in &precisions {
        let c = match precision {
            Precision::F64 => multiply::<f64>(&gpu, &modules, (&a, &b), &args, &mut random, &mut rows, &progress)?,
            // of_slides gives no TF32: the slides' kernels multiply in f64 and f32 only.
            Precision::F32 | Precision::Tf32 => {
                multiply::<f32>(&gpu, &modules, (&a, &b), &args, &mut random, &mut rows, &progress)?
            }
        };
        first_c.get_or_insert(c);
    }
    drop(progress);

    println!("\n{}", format_table(&rows));
    if let (Some(path), Some(c)) = (&args.output, &first_c) {
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

/// A and B from the two files, if given.
fn read_files(args: &Args) -> Result<Option<(Matrix<f64>, Matrix<f64>)>> {
    match &args.files[..] {
        [a, b] => Ok(Some((file::read(a)?, file::read(b)?))),
        _ => Ok(None),
    }
}

/// (M, K, N) of the random A (M x K) and B (K x N): --random N, --size N, --size M K N, or 1024 x 1024
/// (4096 x 4096 for the ladder, where the small size would hide what each step gains).
fn random_sizes(args: &Args) -> Result<(usize, usize, usize)> {
    Ok(match (args.random, &args.size[..]) {
        (Some(n), _) | (None, &[n]) => (n as usize, n as usize, n as usize),
        (None, &[m, k, n]) => (m as usize, k as usize, n as usize),
        (None, []) => {
            let n = if args.ladder { 4096 } else { 1024 };
            println!("No matrix files given: multiplying random {n} x {n} matrices (see --help).");
            (n, n, n)
        }
        (None, two) => bail!(
            "--size takes N (N x N matrices) or M K N, not the {} numbers {two:?}",
            two.len()
        ),
    })
}

fn random_inputs(
    (m, k, n): (usize, usize, usize),
    seed: u64,
    random: &mut Random,
) -> Result<(Matrix<f64>, Matrix<f64>)> {
    println!("Random A ({m} x {k}) and B ({k} x {n}), uniform in [-1, 1), seed {seed}.");
    Ok((Matrix::random(m, k, random)?, Matrix::random(k, n, random)?))
}

/// Host memory the run needs at most: A and B in f64, their copies and C in the precision running, and
/// three m x n f64 arrays (the CPU reference, C converted back, the C kept for --output).
/// Computed in u128 (sizes up to 2^32 - 1 each) and saturated, so a size no machine can hold is
/// refused by the fit check rather than wrapping.
fn host_bytes((m, k, n): (usize, usize, usize)) -> u64 {
    let (m, k, n) = (m as u128, k as u128, n as u128);
    let (inputs, product) = (m * k + k * n, m * n);
    u64::try_from(8 * inputs + 8 * (inputs + product) + 3 * 8 * product).unwrap_or(u64::MAX)
}

/// The slide's program for element type T: copy A and B to the GPU, run each kernel, copy C back,
/// check it. Returns the last C (as f64, for --output).
fn multiply<T: Element>(
    gpu: &Gpu,
    modules: &[(u32, Module)],
    (a64, b64): (&Matrix<f64>, &Matrix<f64>),
    args: &Args,
    random: &mut Random,
    rows: &mut Vec<Row>,
    progress: &Progress,
) -> Result<Matrix<f64>> {
    let mut a: Matrix<T> = a64.convert()?;
    let mut b: Matrix<T> = b64.convert()?;
    a.copy_to_gpu()?;
    b.copy_to_gpu()?;
    let mut c = Matrix::<T>::new(a.rows(), b.cols())?;
    let reference = CpuProduct::new(&a, &b, random); // one CPU product for every kernel below

    for (block_size, module) in modules {
        for kernel in kernels_to_run(args.kernel.unwrap_or(KernelChoice::Both)) {
            progress.step(format!("{} {} BLOCK_SIZE {block_size}", kernel.slide_name(), T::NAME));
            let timing = multiply_on_gpu(module, kernel, *block_size, &a, &b, &mut c, args.repetitions as usize)?;
            let check = reference.check(&a, &b, &c, random);
            progress.done();
            progress.println(format!(
                "{} {} BLOCK_SIZE {block_size}: {timing}",
                kernel.slide_name(),
                T::NAME
            ));
            let element_size = std::mem::size_of::<T>() as f64;
            rows.push(Row {
                kernel,
                function: kernel.c_name::<T>(),
                precision: T::NAME,
                block_size: *block_size,
                timing,
                flops: 2.0 * (a.rows() * a.cols() * b.cols()) as f64,
                bandwidth_bound: gpu.info.peak_bandwidth() / element_size
                    * kernel.operations_per_loaded_element(*block_size),
                check,
            });
        }
    }
    if args.print || !args.files.is_empty() {
        print!("C = A * B ({}) =\n{c}", T::NAME);
    }
    c.convert()
}

/// `--ladder`: every step in each precision (f64, the slides' double, first), each checked, beside
/// cuBLAS; the table last.
fn climb(
    gpu: &Gpu,
    a64: &Matrix<f64>,
    b64: &Matrix<f64>,
    precisions: &[Precision],
    args: &Args,
    random: &mut Random,
) -> Result<()> {
    let ladder = Ladder::load(gpu)?;
    let cublas = load_cublas();
    let mut rows = Vec::new();
    for &precision in precisions {
        match precision {
            Precision::F64 => climb_in::<f64>(
                gpu,
                (&ladder, cublas.as_ref()),
                (a64, b64),
                precision,
                args,
                random,
                &mut rows,
            )?,
            Precision::F32 | Precision::Tf32 => climb_in::<f32>(
                gpu,
                (&ladder, cublas.as_ref()),
                (a64, b64),
                precision,
                args,
                random,
                &mut rows,
            )?,
        }
    }
    println!("\n{}", format_ladder(&rows));
    if let Some(cost) = precision_cost(&rows) {
        println!("{cost}");
    }
    let rungs: Vec<&Rung> = rows
        .iter()
        .filter_map(|row| {
            if let LadderRow::Ran(rung) = row {
                Some(rung)
            } else {
                None
            }
        })
        .collect();
    let failed = rungs.iter().filter(|rung| !rung.check.passed()).count();
    verdict(
        failed == 0,
        &format!("{failed} of {} products differ from the CPU", rungs.len()),
    )
}

/// cuBLAS on the same matrices, the speed limit every step is measured against (issue 24); without
/// it, one line says so and the ladder runs on.
fn load_cublas() -> Option<Cublas> {
    match Cublas::load() {
        Ok(cublas) => Some(cublas),
        Err(err) => {
            println!("{err:#}: the ladder runs without cuBLAS's rows.");
            None
        }
    }
}

/// The ladder in one precision, with matrices of T: A and B copied to the GPU once, each step run,
/// timed and checked (a step this GPU or build cannot run gets a row that says why), then cuBLAS
/// where it was found.
fn climb_in<T: Gemm>(
    gpu: &Gpu,
    (ladder, cublas): (&Ladder, Option<&Cublas>),
    (a64, b64): (&Matrix<f64>, &Matrix<f64>),
    precision: Precision,
    args: &Args,
    random: &mut Random,
    rows: &mut Vec<LadderRow>,
) -> Result<()> {
    let mut operands = Operands::<T>::new(a64, b64, random)?;
    let (flops, repetitions) = (operands.flops(), args.repetitions as usize);
    let steps = Step::of_precision::<T>(precision);
    let progress = Progress::new(
        steps.len() + usize::from(cublas.is_some()),
        &format!("lab-mmm --ladder ({precision})"),
    );
    for &step in &steps {
        progress.step(step.name());
        if let Some(why) = ladder.unavailable::<T>(step) {
            progress.done();
            rows.push(LadderRow::NotRun { step, precision, why });
            continue;
        }
        let Some(timing) = run_step(ladder, step, &operands.a, &operands.b, &mut operands.c, repetitions)? else {
            progress.done();
            continue;
        };
        let check = operands.check(precision.tolerance(), random);
        let (registers, shared_bytes, blocks_per_sm, occupancy) = resources::<T>(gpu, ladder, step)?;
        progress.done();
        progress.println(format!("{} {precision}: {timing}", step.name()));
        rows.push(LadderRow::Ran(Rung {
            step,
            precision,
            timing,
            check,
            flops,
            registers,
            shared_bytes,
            blocks_per_sm,
            occupancy,
        }));
    }
    if let Some(cublas) = cublas {
        let math = library_math(precision);
        let name = library_row::<T>(math);
        progress.step(name);
        let timing = run_library(cublas, math, &operands.a, &operands.b, &mut operands.c, repetitions)?;
        let check = operands.check(precision.tolerance(), random);
        progress.done();
        progress.println(format!("{name} {precision}: {timing}"));
        rows.push(LadderRow::Library {
            name,
            precision,
            timing,
            check,
            flops,
        });
    }
    Ok(())
}

/// `--ladder --sweep`: for each shape, random A and B, then each precision's best step and cuBLAS,
/// timed and checked; the table, and the plot where asked.
fn sweep(gpu: &Gpu, precisions: &[Precision], args: &Args, random: &mut Random) -> Result<()> {
    let ladder = Ladder::load(gpu)?;
    let cublas = load_cublas();
    let progress = Progress::new(sweep::SHAPES.len() * precisions.len(), "lab-mmm --ladder --sweep");
    let mut points = Vec::new();
    for (m, k, n) in sweep::SHAPES {
        ensure_host_fits(host_bytes((m, k, n)), &format!("the sweep's {m} x {k} by {k} x {n}"))?;
        check_product_fits::<f64>(gpu, (m, k, n), TILED_BLOCK_SIZE)?;
        let (a, b) = (Matrix::random(m, k, random)?, Matrix::random(k, n, random)?);
        for &precision in precisions {
            progress.step(format!("{} {precision}", sweep::shape_name((m, k, n))));
            let tools = (&ladder, cublas.as_ref());
            let repetitions = args.repetitions as usize;
            let point = match precision {
                Precision::F64 => sweep::measure::<f64>(tools, precision, (&a, &b), repetitions, random)?,
                Precision::F32 | Precision::Tf32 => {
                    sweep::measure::<f32>(tools, precision, (&a, &b), repetitions, random)?
                }
            };
            progress.done();
            points.extend(point);
        }
    }
    drop(progress);
    println!("\n{}", sweep::table(&points));
    if let Some(path) = &args.plot {
        let title = format!("lab-mmm --ladder --sweep on {}", gpu.info.name);
        sweep::plot(&points, &title, path, args.force)?;
        println!("Plot written to {}", path.display());
    }
    let failed = points.iter().filter(|point| !point.passed).count();
    verdict(
        failed == 0,
        &format!("{failed} of {} shapes and precisions differ from the CPU", points.len()),
    )
}

/// `--check`, `--list-cases` or a case's child: the week's kernels (`--kernel`, or for `--check` the
/// file's week: [`check::week_of`]), their cases and rules.
fn check(args: &Args) -> Result<()> {
    let ours = &kernels::MMM_BS16;
    let every: Vec<Entry> = [MmmKernel::Naive, MmmKernel::Tiled]
        .into_iter()
        .flat_map(check::entries)
        .collect();
    let (chosen, compiled, child_flags): (_, _, &[&str]) = match args.kernel {
        Some(choice) => {
            let chosen = kernels_to_run(choice);
            let entries: Vec<Entry> = chosen.iter().flat_map(|&kernel| check::entries(kernel)).collect();
            check::case_set(&chosen, args.student.cases.as_deref())?; // a bad --cases file first
            (chosen, args.student.image(ours, &entries), &[])
        }
        None if args.student.check_case.is_some() || args.student.list_cases => (
            kernels_to_run(KernelChoice::Both),
            args.student.image(ours, &every),
            &[],
        ),
        None => {
            check::case_set(&[MmmKernel::Naive], args.student.cases.as_deref())?;
            match args.student.compile(ours, &every) {
                Ok(image) => {
                    let (week, line) = check::week_of(image);
                    eprintln!("{line}");
                    let entries = check::entries(week);
                    // The cases' children get the week the file chose, which the command line lacks.
                    let flags: &[&str] = if week == MmmKernel::Tiled {
                        &["--kernel", "tiled"]
                    } else {
                        &["--kernel", "naive"]
                    };
                    (
                        vec![week],
                        args.student.accept(image, ours, &entries).map(|()| image),
                        flags,
                    )
                }
                Err(err) => (kernels_to_run(KernelChoice::Both), Err(err), &[]),
            }
        }
    };
    let entries: Vec<Entry> = chosen.iter().flat_map(|&kernel| check::entries(kernel)).collect();
    let cases = Check {
        lab: "lab-mmm",
        entries: &entries,
        cases: check::case_set(&chosen, args.student.cases.as_deref())?,
        measure: check::measure(&chosen),
        child_flags,
    };
    let rules = |image: &KernelImage| check::technique_rules(image, &chosen);
    args.student
        .run_check_if_asked(&compiled, ours, &cases, rules, check::run_case)
        .unwrap_or(Ok(()))
}

fn kernels_to_run(choice: KernelChoice) -> Vec<MmmKernel> {
    match choice {
        KernelChoice::Naive => vec![MmmKernel::Naive],
        KernelChoice::Tiled => vec![MmmKernel::Tiled],
        KernelChoice::Both => vec![MmmKernel::Naive, MmmKernel::Tiled],
    }
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

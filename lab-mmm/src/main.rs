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
use common::matrix::{file, Element, Matrix};
use common::matrix::host_memory::ensure_host_fits;
use common::mmm::{check_product_fits, check_sizes_match, parse_block_size, CpuProduct, MmmKernel};
use common::output::check_output_path;
use common::progress::Progress;
use common::ptxas_view::print_ptxas;
use common::assignment::{Check, Entry, StudentArgs};
use common::verify::{verdict, Random};
use cust::module::Module;
use lab_mmm::cublas::{Cublas, Gemm};
use lab_mmm::ladder::{format_ladder, resources, run_library, run_step, Ladder, LadderRow, Rung, Step};
use kernels::KernelImage;
use lab_mmm::{check, format_table, multiply_on_gpu, Precision, Row};

/// C = A * B on the GPU with the slides' Matrix class (slide: mmm.cu).
#[derive(Parser, Debug)]
#[command(name = "lab-mmm", version, about)]
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
    /// Which kernel: naive (the slides' mmm-ab), tiled (mmm), or both.
    #[arg(long, value_enum, default_value = "both")]
    kernel: KernelChoice,
    /// BLOCK_SIZE: threads per block are BLOCK_SIZE x BLOCK_SIZE, tiles are BLOCK_SIZE x BLOCK_SIZE.
    /// The kernels are compiled for 16 and 32; give one or both, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,32", value_parser = parse_block_size)]
    block_size: Vec<u32>,
    /// Element type: f64 (the slides' double), f32, or both.
    #[arg(long, value_enum, default_value = "both")]
    precision: Precision,
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
    /// Let --output replace an existing file.
    #[arg(long, requires = "output")]
    force: bool,
    /// Also print the ptxas report of each kernel run, the driver's view of it and the register arithmetic.
    #[arg(long)]
    ptxas: bool,
    /// Beyond the slides: the tiled kernel, then register blocking, 16-byte loads, cp.async double
    /// buffering and (f64) the tensor cores, each timed and checked (random 4096 x 4096 unless sizes
    /// are given; --kernel and --block-size do not apply).
    #[arg(long, conflicts_with_all = ["files", "output", "print", "kernel_source"])]
    ladder: bool,
    #[command(flatten)]
    student: StudentArgs,
    #[command(flatten)]
    profile: common::profile::ProfileArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum KernelChoice {
    Naive,
    Tiled,
    Both,
}

fn main() -> ExitCode {
    common::cli::run_lab(|args: Args| args.profile.clone().around(|| run(args)))
}

fn run(args: Args) -> Result<()> {
    // A student's mmm.cu (assignments/02-mmm-ab, 03-mmm-tiled) is compiled first, before the GPU opens.
    let chosen = kernels_to_run(args.kernel);
    let entries: Vec<Entry> = chosen.iter().flat_map(|&kernel| check::entries(kernel)).collect();
    if args.student.checking() {
        let image = args.student.image(&kernels::MMM_BS16, &entries)?;
        let cases = Check { lab: "lab-mmm", entries: &entries, cases: check::case_set(&chosen, args.student.cases.as_deref())? };
        let rules = || check::technique_rules(image, &chosen);
        if let Some(done) = args.student.run_check_if_asked(image, &cases, rules, |case, context| check::run_case(image, case, context)) {
            return done;
        }
    }
    let images: Vec<(u32, &'static KernelImage)> = args
        .block_size
        .iter()
        .map(|&bs| {
            let ours = kernels::mmm_for_block_size(bs).with_context(|| format!("--block-size {bs}: mmm.cu is compiled for BLOCK_SIZE {:?} only", kernels::MMM_BLOCK_SIZES))?;
            Ok((bs, args.student.image(ours, &entries)?))
        })
        .collect::<Result<_>>()?;
    let mut random = Random::new(args.seed);
    let files = read_files(&args)?;
    let sizes = match &files {
        Some((a, b)) => {
            check_sizes_match(a, b)?;
            (a.rows(), a.cols(), b.cols())
        }
        None => random_sizes(&args)?,
    };
    // Every size is checked against host and GPU memory before the random matrices are filled.
    ensure_host_fits(host_bytes(sizes), &format!("multiplying {} x {} by {} x {}", sizes.0, sizes.1, sizes.1, sizes.2))?;
    if let Some(path) = &args.output {
        check_output_path(path, args.force)?;
    }
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    for &block_size in &args.block_size {
        if runs_f64(args.precision) {
            check_product_fits::<f64>(&gpu, sizes, block_size)?;
        }
        if runs_f32(args.precision) {
            check_product_fits::<f32>(&gpu, sizes, block_size)?;
        }
    }
    let (a, b) = match files {
        Some(files) => files,
        None => random_inputs(sizes, args.seed, &mut random)?,
    };
    if args.ladder {
        return climb(&gpu, &a, &b, &args, &mut random);
    }
    if args.print || !args.files.is_empty() {
        print!("A =\n{a}B =\n{b}");
    }
    let modules: Vec<(u32, Module)> = images.iter().map(|&(bs, image)| Ok((bs, gpu.load(image)?))).collect::<Result<_>>()?;
    let progress = Progress::new(configurations(&args), "lab-mmm");

    let mut rows = Vec::new();
    let mut first_c: Option<Matrix<f64>> = None;
    if runs_f64(args.precision) {
        let c = multiply::<f64>(&gpu, &modules, (&a, &b), &args, &mut random, &mut rows, &progress)?;
        first_c.get_or_insert(c);
    }
    if runs_f32(args.precision) {
        let c = multiply::<f32>(&gpu, &modules, (&a, &b), &args, &mut random, &mut rows, &progress)?;
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
    verdict(failed == 0, &format!("{failed} of {} products differ from the CPU", rows.len()))
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
        (None, two) => bail!("--size takes N (N x N matrices) or M K N, not the {} numbers {two:?}", two.len()),
    })
}

fn random_inputs((m, k, n): (usize, usize, usize), seed: u64, random: &mut Random) -> Result<(Matrix<f64>, Matrix<f64>)> {
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

fn runs_f64(precision: Precision) -> bool {
    matches!(precision, Precision::F64 | Precision::Both)
}

fn runs_f32(precision: Precision) -> bool {
    matches!(precision, Precision::F32 | Precision::Both)
}

/// Kernels timed in all: precisions x block sizes x kernels, for the progress bar.
fn configurations(args: &Args) -> usize {
    let precisions = usize::from(runs_f64(args.precision)) + usize::from(runs_f32(args.precision));
    precisions * args.block_size.len() * kernels_to_run(args.kernel).len()
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
        for kernel in kernels_to_run(args.kernel) {
            progress.step(format!("{} {} BLOCK_SIZE {block_size}", kernel.slide_name(), T::NAME));
            let timing = multiply_on_gpu(module, kernel, *block_size, &a, &b, &mut c, args.repetitions as usize)?;
            let check = reference.check(&a, &b, &c, random);
            progress.done();
            progress.println(format!("{} {} BLOCK_SIZE {block_size}: {timing}", kernel.slide_name(), T::NAME));
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

/// `--ladder`: every step in f64 (the slides' double), then in f32, each checked; the table last.
fn climb(gpu: &Gpu, a64: &Matrix<f64>, b64: &Matrix<f64>, args: &Args, random: &mut Random) -> Result<()> {
    let ladder = Ladder::load(gpu)?;
    // cuBLAS on the same matrices, the speed limit every step is measured against (issue 24).
    let cublas = match Cublas::load() {
        Ok(cublas) => Some(cublas),
        Err(err) => {
            println!("{err:#}: the ladder runs without cuBLAS's rows.");
            None
        }
    };
    let mut rows = Vec::new();
    if runs_f64(args.precision) {
        climb_in::<f64>(gpu, (&ladder, cublas.as_ref()), a64, b64, args, random, &mut rows)?;
    }
    if runs_f32(args.precision) {
        climb_in::<f32>(gpu, (&ladder, cublas.as_ref()), a64, b64, args, random, &mut rows)?;
    }
    println!("\n{}", format_ladder(&rows));
    let rungs: Vec<&Rung> = rows.iter().filter_map(|row| if let LadderRow::Ran(rung) = row { Some(rung) } else { None }).collect();
    let failed = rungs.iter().filter(|rung| !rung.check.passed()).count();
    verdict(failed == 0, &format!("{failed} of {} products differ from the CPU", rungs.len()))
}

/// The ladder in precision T: A and B copied to the GPU once, each step run, timed and checked (a step
/// this GPU or build cannot run gets a row that says why), then cuBLAS where it was found.
fn climb_in<T: Gemm>(
    gpu: &Gpu,
    (ladder, cublas): (&Ladder, Option<&Cublas>),
    a64: &Matrix<f64>,
    b64: &Matrix<f64>,
    args: &Args,
    random: &mut Random,
    rows: &mut Vec<LadderRow>,
) -> Result<()> {
    let mut a: Matrix<T> = a64.convert()?;
    let mut b: Matrix<T> = b64.convert()?;
    a.copy_to_gpu()?;
    b.copy_to_gpu()?;
    let mut c = Matrix::<T>::new(a.rows(), b.cols())?;
    let reference = CpuProduct::new(&a, &b, random);
    let progress = Progress::new(Step::ALL.len() + usize::from(cublas.is_some()), &format!("lab-mmm --ladder ({})", T::NAME));
    let flops = 2.0 * (a.rows() * a.cols() * b.cols()) as f64;
    for step in Step::ALL {
        progress.step(step.name());
        if let Some(why) = ladder.unavailable::<T>(step) {
            progress.done();
            rows.push(LadderRow::NotRun { step, precision: T::NAME, why });
            continue;
        }
        let Some(timing) = run_step(ladder, step, &a, &b, &mut c, args.repetitions as usize)? else {
            progress.done();
            continue;
        };
        let check = reference.check(&a, &b, &c, random);
        let (registers, shared_bytes, blocks_per_sm, occupancy) = resources::<T>(gpu, ladder, step)?;
        progress.done();
        progress.println(format!("{} {}: {timing}", step.name(), T::NAME));
        rows.push(LadderRow::Ran(Rung { step, precision: T::NAME, timing, check, flops, registers, shared_bytes, blocks_per_sm, occupancy }));
    }
    if let Some(cublas) = cublas {
        progress.step(T::ROW);
        let timing = run_library(cublas, &a, &b, &mut c, args.repetitions as usize)?;
        let check = reference.check(&a, &b, &c, random);
        progress.done();
        progress.println(format!("{} {}: {timing}", T::ROW, T::NAME));
        rows.push(LadderRow::Library { name: T::ROW, precision: T::NAME, timing, check, flops });
    }
    Ok(())
}

fn kernels_to_run(choice: KernelChoice) -> Vec<MmmKernel> {
    match choice {
        KernelChoice::Naive => vec![MmmKernel::Naive],
        KernelChoice::Tiled => vec![MmmKernel::Tiled],
        KernelChoice::Both => vec![MmmKernel::Naive, MmmKernel::Tiled],
    }
}

/// `--ptxas`: the report of every kernel that ran, beside the driver's view.
fn print_reports(gpu: &Gpu, modules: &[(u32, Module)], images: &[(u32, &'static KernelImage)], rows: &[Row]) -> Result<()> {
    for ((block_size, module), (_, image)) in modules.iter().zip(images) {
        for row in rows.iter().filter(|row| row.block_size == *block_size) {
            let function = check_cuda!(module.get_function(&row.function))?;
            println!();
            print_ptxas(image, &row.function, &function, &gpu.info, block_size * block_size)?;
        }
    }
    Ok(())
}

//! lab-simpson: the slide program simpson.cu. Integrates f over [a, b] with Simpson's rule, one
//! sub-interval per GPU thread, adds the per-thread sums on the host, checks them against the CPU,
//! and with --ptxas shows the compiler's resource report as the slide does.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use common::check_cuda;
use common::gpu::Gpu;
use common::integrand::{compensated_sum, Integrand};
use common::ptxas_view::print_ptxas;
use common::verify::verdict;
use grading::{kernel_week, StudentArgs};
use lab_simpson::check::Week1;
use lab_simpson::{compare, error_bounds, kernel_name, simpson_on_cpu, simpson_on_gpu, Problem};

/// Simpson's rule on the GPU, one sub-interval per thread (slide: simpson.cu).
#[derive(Parser, Debug)]
#[command(name = "lab-simpson", version, about)]
struct Args {
    /// Lower end of the interval.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    a: f64,
    /// Upper end of the interval.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    b: f64,
    /// Number of sub-intervals N, one GPU thread each; a multiple of --block-size.
    #[arg(short = 'n', long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    intervals: u64,
    /// Threads per block (BLOCK_SIZE); the grid has N / BLOCK_SIZE blocks.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    block_size: u32,
    /// Function to integrate; pi is the slide's 4/(1+x^2), whose integral over [0, 1] is pi.
    #[arg(long, value_enum, default_value_t = Integrand::Pi)]
    integrand: Integrand,
    /// Timed launches after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Also print the kernel's ptxas report, the driver's view of it and the register arithmetic.
    #[arg(long)]
    ptxas: bool,
    #[command(flatten)]
    student: StudentArgs,
    #[command(flatten)]
    profile: profiler::ProfileArgs,
}

fn main() -> ExitCode {
    grading::run_lab(|args: Args| args.profile.clone().around(|| run(args)))
}

fn run(args: Args) -> Result<()> {
    // A student's file (assignments/01-simpson) is compiled first, before the GPU is opened; with
    // --check (or --list-cases) the week's check runs instead of the experiment, and the lab ends.
    let integrands = if args.student.checking() {
        Integrand::ALL.to_vec()
    } else {
        vec![args.integrand]
    };
    let Some(image) = kernel_week::run(&args.student, &Week1::new(&integrands))? else {
        return Ok(());
    };
    let problem = Problem::new(args.integrand, args.a, args.b, args.intervals, args.block_size)?;
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    let module = gpu.load(image)?;

    // sums = cudaMalloc(N doubles); simpson<<<N / BLOCK_SIZE, BLOCK_SIZE>>>(a, b, sums); copy sums back
    let run = simpson_on_gpu(&gpu, &module, &problem, args.repetitions as usize)?;
    let integral = compensated_sum(&run.sums);
    let exact = args.integrand.exact(args.a, args.b);
    println!(
        "Integral of {} over [{}, {}] with {} sub-intervals ({} blocks of {} threads):",
        args.integrand.formula(),
        args.a,
        args.b,
        args.intervals,
        problem.blocks(),
        args.block_size
    );
    println!("  result {integral:.15}");
    println!("  exact  {exact:.15}   |error| {:.3e}", (integral - exact).abs());
    println!("{}", run.timing);

    let cpu_sums = simpson_on_cpu(&problem);
    let (share, index) = compare(&run.sums, &cpu_sums, &error_bounds(&problem));
    println!(
        "GPU vs CPU, per sub-interval: the largest difference is {share:.3} of its error bound (sub-interval {index}; 1 or less is right)"
    );

    if args.ptxas {
        let name = kernel_name(args.integrand);
        let function = check_cuda!(module.get_function(name))?;
        print_ptxas(image, name, &function, &gpu.info, args.block_size)?;
    }
    verdict(
        share <= 1.0,
        &format!("GPU sum of sub-interval {index} differs from the CPU by {share:.3e} times its error bound"),
    )
}

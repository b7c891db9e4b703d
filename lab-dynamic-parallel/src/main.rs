//! lab-dynamic-parallel: kernels that launch kernels. Adaptive Simpson integration, where a master
//! kernel starts worker grids and every worker whose interval is not accurate enough hands its two
//! halves to a new child grid, all without the CPU; next to the same algorithm driven from the host
//! (one launch per level, with a synchronization and a read-back in between) and a CPU reference.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use common::check_cuda;
use common::gpu::Gpu;
use common::integrand::Integrand;
use common::ptxas_view::print_ptxas;
use common::verify::verdict;
use grading::{kernel_week, StudentArgs};
use lab_dynamic_parallel::check::Week7;
use lab_dynamic_parallel::{
    adaptive_on_cpu, device_driven, host_driven, set_pending_launch_limit, GpuRun, Problem, Tally, STUCK_AFTER,
};

/// Adaptive Simpson integration with dynamic parallelism (master and workers) against host-driven
/// launches and the CPU.
#[derive(Parser, Debug)]
#[command(name = "lab-dynamic-parallel", version, about)]
struct Args {
    /// Function to integrate; peak has a sharp peak at x = 0.3 that needs many small intervals.
    #[arg(long, value_enum, default_value_t = Integrand::Peak)]
    integrand: Integrand,
    /// Lower end of the interval.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    a: f64,
    /// Upper end of the interval.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    b: f64,
    /// Allowed error of the whole integral; each split halves it for the two halves.
    #[arg(long, default_value_t = 1e-10, allow_negative_numbers = true)]
    tolerance: f64,
    /// Deepest level of splitting (1 to 24: CUDA nests grids at most 24 deep). Intervals still not
    /// accurate there are accepted and counted as depth-limit hits.
    #[arg(long, default_value_t = 20)]
    max_depth: u32,
    /// Device-side launches that may be pending at once (cudaLimitDevRuntimePendingLaunchCount; CUDA's
    /// default is 2048). Launches past it may fail (they are counted) or stall the device runtime,
    /// which the lab reports after 30 s.
    #[arg(long, default_value_t = 32768, value_parser = clap::value_parser!(u32).range(1..))]
    pending_launches: u32,
    /// Timed runs of each GPU version after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Also print the ptxas reports of the master, worker and level kernels.
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
    // A student's adaptive_simpson.cu (assignments/07-dynamic-parallelism) is compiled (and linked with
    // the device runtime) first, before the GPU opens; with --check (or --list-cases) the week's check
    // runs instead of the experiment, and the lab ends.
    let integrands = if args.student.checking() {
        Integrand::ALL.to_vec()
    } else {
        vec![args.integrand]
    };
    let Some(image) = kernel_week::run(&args.student, &Week7::new(&integrands))? else {
        return Ok(());
    };
    let problem = Problem::new(args.integrand, args.a, args.b, args.tolerance, args.max_depth)?;
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    let module = gpu.load(image)?;
    set_pending_launch_limit(args.pending_launches as usize)?;
    println!(
        "Adaptive Simpson of {} over [{}, {}], tolerance {:e}, depth limit {}, pending-launch limit {}",
        args.integrand.formula(),
        args.a,
        args.b,
        args.tolerance,
        args.max_depth,
        args.pending_launches
    );

    let cpu = adaptive_on_cpu(&problem);
    if cpu.splits > u64::from(args.pending_launches) {
        println!(
            "Note: this tree has {} splits (the CPU's count), more than the pending-launch limit {}: child launches \
             past it may be refused (counted below) or stall the device runtime (stopped after {} s)",
            cpu.splits,
            args.pending_launches,
            STUCK_AFTER.as_secs()
        );
    }
    let device = device_driven(&module, &problem, args.repetitions as usize)?;
    let host = host_driven(&module, &problem, args.repetitions as usize)?;
    println!("device-driven (master + workers): {}", device.timing);
    println!("host-driven (one launch per level): {}", host.timing);

    let exact = args.integrand.exact(args.a, args.b);
    println!("\n| driven from | integral | abs. error vs CPU | abs. error vs exact | intervals | splits | launches from host | launches from device | deepest level | GPU time in ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    print_row("CPU reference", &cpu, cpu.integral, exact, None);
    print_row(
        "device (dynamic parallelism)",
        &device.tally,
        cpu.integral,
        exact,
        Some(&device),
    );
    print_row("host (launch per level)", &host.tally, cpu.integral, exact, Some(&host));
    println!(
        "\nThe host-driven version took {:.2}x the device-driven time.",
        host.timing.median_ms() / device.timing.median_ms()
    );
    report_limits("CPU reference", &cpu);
    report_limits("device-driven", &device.tally);
    report_limits("host-driven", &host.tally);

    if args.ptxas {
        print_reports(&gpu, image, &module, args.integrand)?;
    }
    let within = |tally: &Tally| (tally.integral - cpu.integral).abs() <= args.tolerance;
    verdict(
        within(&device.tally) && within(&host.tally),
        &format!(
            "a GPU result differs from the CPU reference by more than the tolerance {:e}",
            args.tolerance
        ),
    )
}

fn print_row(name: &str, tally: &Tally, cpu: f64, exact: f64, run: Option<&GpuRun>) {
    let (host, device, time) = match run {
        Some(run) => (
            run.host_launches.to_string(),
            run.device_launches.to_string(),
            format!("{:.4}", run.timing.median_ms()),
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    println!(
        "| {name} | {:.15} | {:.1e} | {:.1e} | {} | {} | {host} | {device} | {} | {time} |",
        tally.integral,
        (tally.integral - cpu).abs(),
        (tally.integral - exact).abs(),
        tally.accepted,
        tally.splits,
        tally.deepest
    );
}

/// Depth-limit hits and refused launches change the result: say so instead of hiding them.
fn report_limits(name: &str, tally: &Tally) {
    if tally.depth_limit_hits > 0 {
        println!(
            "{name}: the depth limit stopped {} intervals before they reached their tolerance (raise --max-depth)",
            tally.depth_limit_hits
        );
    }
    if tally.launch_failures > 0 {
        println!(
            "{name}: the device runtime refused {} child launches (pending-launch limit; raise --pending-launches); \
             those intervals kept their coarse estimate",
            tally.launch_failures
        );
    }
}

/// `--ptxas`: the master, the workers (a C++ template, so its mangled name) and the level kernel.
fn print_reports(
    gpu: &Gpu,
    image: &kernels::KernelImage,
    module: &cust::module::Module,
    integrand: Integrand,
) -> Result<()> {
    let workers = match integrand {
        Integrand::Pi => "_Z7workersI23FourOverOnePlusXSquaredEvdddddiiP5Tally",
        Integrand::Sin => "_Z7workersI4SineEvdddddiiP5Tally",
        Integrand::Exp => "_Z7workersI11ExponentialEvdddddiiP5Tally",
        Integrand::Peak => "_Z7workersI4PeakEvdddddiiP5Tally",
    };
    let kernels = [
        (format!("adaptive_master_{}", integrand.name()), 1),
        (workers.to_string(), 2),
        (format!("adaptive_level_{}", integrand.name()), 256),
    ];
    for (name, threads) in kernels {
        let function = check_cuda!(module.get_function(&name))?;
        println!();
        print_ptxas(image, &name, &function, &gpu.info, threads)?;
    }
    Ok(())
}

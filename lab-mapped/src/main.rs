//! lab-mapped: mapped (zero-copy) host memory. The slides' `mmm-mapped` (kernels read A and B and
//! write C in host memory, through `cudaHostGetDevicePointer`) against the pinned streamed version,
//! then the two jobs where mapped memory is competitive: the zero-copy `vectorAdd` and a write-only
//! kernel, each against explicit copies; the Korean notes' warning, measured: strided reads of
//! mapped memory against device memory and against one copy of the same data; last, the German
//! slides' price of write-combined memory: the CPU reading it.

mod week6;

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use common::check_cuda;
use common::context::new_streams;
use common::gpu::Gpu;
use common::host_memory::{check_pinnable, ensure_host_fits, Mapped};
use common::progress::Progress;
use common::timing::RunsArgs;
use common::verify::{check_cell, verdict, Random};
use cust::stream::{Stream, StreamFlags};
use grading::program::mmm_week::StreamedAndPinned;
use lab_mapped::{coalescing, cpu_reads, time_mapped, too_small, Launch, Memory, VectorAdd, WriteOnly, CPU_READ_WORDS};
use matrix::batch::{slide_ms, slide_table, Batch, Measured};
use matrix::mmm::{load_mmm, parse_block_size, MmmKernel};
use matrix::Pinned;
use profiler::timeline::Kernel;

/// Mapped (zero-copy) host memory against explicit copies (slide: mmm-mapped).
#[derive(Parser, Debug)]
#[command(name = "lab-mapped", version, about)]
struct Args {
    /// Size N of the N x N double matrices (every element of A and B crosses the bus N / BLOCK_SIZE
    /// times in mmm-mapped, so keep it moderate).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    size: u32,
    /// Number of independent products (COUNT).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=64))]
    count: u32,
    /// BLOCK_SIZE of the tiled kernel (16 or 32).
    #[arg(long, default_value_t = 16, value_parser = parse_block_size)]
    block_size: u32,
    /// Floats in the vectorAdd and write-only jobs.
    #[arg(long, default_value_t = 1 << 24, value_parser = clap::value_parser!(u32).range(1..))]
    elements: u32,
    /// Floats N of the strided-read table: in[offset + i*stride] for i < N, strides 1 to 32, offsets 0
    /// and 1, from device and from mapped memory. Its input spans 32 N floats on the host and again on
    /// the GPU, hence the limit.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u32).range(1..=i64::from(coalescing::MAX_ELEMENTS)))]
    strided_elements: u32,
    /// Allocate vectorAdd's mapped inputs write-combined (cudaHostAllocWriteCombined).
    #[arg(long)]
    write_combined: bool,
    /// Only the German slides' case "when the GPU's memory would not suffice": take all free GPU
    /// memory but half of what vectorAdd on --elements floats needs, then run vectorAdd with explicit
    /// copies (its cudaMalloc must fail) and zero-copy (it must compute every element).
    #[arg(long, conflicts_with_all = ["size", "count", "block_size", "strided_elements", "write_combined"])]
    too_small: bool,
    #[command(flatten)]
    timing: RunsArgs,
    /// Seed of the random inputs and of the checks.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    profile: profiler::ProfileArgs,
    /// Week 6's graded programs (assignments/06-pinned-mapped).
    #[command(flatten)]
    program: grading::program::ProgramArgs,
    /// With --program-source or --list-cases: which of week 6's programs, zero-copy (the Korean
    /// notes' vectorAdd from mapped memory; the default) or mmm-streamed-and-pinned (the German
    /// slides' COUNT products, a stream each, from pinned memory).
    #[arg(long = "program", value_enum, value_name = "NAME")]
    graded: Option<Week6Program>,
}

/// Week 6's graded programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Week6Program {
    /// zero_copy N INPUT OUTPUT (assignments/06-pinned-mapped/zero_copy.cu).
    ZeroCopy,
    /// mmm_streamed_and_pinned COUNT N INPUT OUTPUT (assignments/06-pinned-mapped/mmm_streamed_and_pinned.cu).
    MmmStreamedAndPinned,
}

fn main() -> ExitCode {
    grading::run_lab(|args: Args| args.profile.clone().around(|| run(args)))
}

fn run(args: Args) -> Result<()> {
    if args.program.requested() || args.graded.is_some() {
        return check_program(&args);
    }
    let (count, n, elements) = (args.count as usize, args.size as usize, args.elements as usize);
    let strided_elements = args.strided_elements as usize;
    // The pinned batch, the mapped batch, the vector jobs' pinned and mapped buffers and the strided
    // reads' (each freed before the next is made, but counted together).
    let host_bytes = Batch::<Vec<f64>>::bytes(count, n)
        .saturating_mul(2)
        .saturating_add(8 * 4 * elements as u64)
        .saturating_add(coalescing::buffer_bytes(strided_elements))
        .saturating_add(8 * CPU_READ_WORDS as u64);
    check_pinnable(host_bytes, 0)?;
    ensure_host_fits(
        host_bytes,
        &format!("--size {n} --count {count} --elements {elements} --strided-elements {strided_elements}"),
    )?;
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    println!(
        "unifiedAddressing: {}, integrated: {}, canMapHostMemory: {}",
        yes(gpu.info.unified_addressing),
        yes(gpu.info.integrated),
        yes(gpu.info.can_map_host_memory)
    );
    let probe = Mapped::new(1, 0.0f32, false)?;
    let device_address = probe.device_pointer()?.as_raw();
    println!(
        "A mapped buffer: host address {:#x}, device pointer {device_address:#x} ({})",
        probe.host_address(),
        if probe.host_address() == device_address {
            "the same: unified addressing"
        } else {
            "different"
        }
    );
    if args.too_small {
        return gpu_made_too_small(&gpu, &args);
    }

    gpu.ensure_fits(
        Batch::<Vec<f64>>::bytes(count, n),
        &format!("{count} products of {n} x {n} doubles"),
    )?;
    let module = load_mmm(&gpu, args.block_size)?;
    let mmm = Kernel::get(&module, &MmmKernel::Tiled.c_name::<f64>())?;
    let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let streams = new_streams(count)?;
    let mut random = Random::new(args.seed);
    let runs = args.timing.runs();

    println!(
        "\nCOUNT = {count} products of random {n} x {n} doubles, tiled mmm with BLOCK_SIZE {}; each program timed {}",
        args.block_size,
        runs.describe()
    );
    let progress = Progress::new(4, "lab-mapped");
    let mut pinned = Batch::<Pinned<f64>>::random(count, n, args.block_size, args.seed)?;
    let kernels = progress.run("mmm-without-transfers", || {
        pinned.time_kernels_only(&mmm.plain, &main, runs, &mut random)
    })?;
    let streamed = progress.run("mmm-streamed-and-pinned", || {
        pinned.time_streamed(&mmm, &main, &streams, runs, &mut random)
    })?;
    drop(pinned);
    // cudaHostAlloc(..., cudaHostAllocMapped) for A, B and C; the kernels get cudaHostGetDevicePointer's
    let mut mapped = Batch::<Mapped<f64>>::random_on_host(count, n, args.block_size, args.seed)?;
    // The slide's program: one stream per product; then the contrast, all of them on one stream.
    let mut mmm_mapped = |launch: Launch| {
        progress.run(launch.name(), || {
            time_mapped(&mut mapped, &mmm.plain, &main, launch, runs, &mut random)
        })
    };
    let zero_copy = mmm_mapped(Launch::PerProduct)?;
    let one_stream = mmm_mapped(Launch::OneStream)?;
    drop((mapped, progress));
    println!("mmm-without-transfers    {}", kernels.timing);
    println!("mmm-streamed-and-pinned  {}", streamed.timing);
    println!("mmm-mapped               {}", zero_copy.timing);
    println!("mmm-mapped (one stream)  {}", one_stream.timing);
    let rows: [(&str, &Measured, Option<f64>); 4] = [
        ("mmm-without-transfers", &kernels, Some(slide_ms::MMM_WITHOUT_TRANSFERS)),
        (
            "mmm-streamed-and-pinned",
            &streamed,
            Some(slide_ms::MMM_STREAMED_AND_PINNED),
        ),
        ("mmm-mapped", &zero_copy, Some(slide_ms::MMM_MAPPED)),
        ("mmm-mapped (one stream)", &one_stream, None),
    ];
    println!("\n{}", slide_table(&rows, kernels.timing.median_ms()));

    let vectors = gpu.load(&kernels::MAPPED)?;
    let add = check_cuda!(vectors.get_function("vector_add"))?;
    let write = check_cuda!(vectors.get_function("write_only"))?;
    let mut job = VectorAdd::random(elements, args.write_combined, args.seed)?;
    let mut writes = WriteOnly::new(elements)?;
    println!(
        "Touched once: {elements} floats; explicit = pinned buffers copied with cudaMemcpyAsync, zero-copy = mapped (cudaHostAlloc, cudaHostAllocMapped{}), registered = malloc, then cudaHostRegister(..., cudaHostRegisterMapped)\n",
        if args.write_combined { "; inputs write-combined" } else { "" }
    );
    println!("| job | explicit copies GPU ms | zero-copy GPU ms | zero-copy, registered GPU ms | zero-copy / explicit | check |");
    println!("|-----|------------------------|------------------|------------------------------|----------------------|-------|");
    let mut passed = rows.iter().all(|(_, m, _)| m.check.passed());
    // Each job from each memory it runs from: (median ms, wrong elements), or None.
    let mut add_rows = Vec::new();
    for memory in Memory::ALL {
        let timing = job.time(&add, memory, &main, runs)?;
        add_rows.push(Some((timing.median_ms(), job.wrong_elements())));
    }
    passed &= print_row("vectorAdd (2 reads, 1 write)", &add_rows);
    let mut write_rows = Vec::new();
    for memory in Memory::ALL {
        if !WriteOnly::MEMORIES.contains(&memory) {
            write_rows.push(None);
            continue;
        }
        let timing = writes.time(&write, memory, &main, runs)?;
        write_rows.push(Some((timing.median_ms(), writes.wrong_elements())));
    }
    passed &= print_row("write only (1 write)", &write_rows);
    // Their pinned and mapped buffers go before the strided reads pin theirs.
    drop((job, writes));
    passed &= coalescing::report(&gpu, &vectors, strided_elements, &main, runs, args.seed)?;
    let (plain, combined) = cpu_reads(CPU_READ_WORDS, runs.repetitions.max(3))?;
    println!(
        "\nThe CPU reading {} MiB of mapped memory on one thread (German slides: write-combined memory may speed the GPU's reads at the cost of the CPU's): {:.2} GB/s plain, {:.2} GB/s write-combined ({:.2}x the plain rate); every word read: PASS",
        (8 * CPU_READ_WORDS) >> 20,
        plain / 1e9,
        combined / 1e9,
        combined / plain
    );
    verdict(passed, "a GPU result differs from the CPU reference")
}

/// `--too-small`: vectorAdd on a GPU whose memory is taken but for half of what it needs
/// ([`too_small`]).
fn gpu_made_too_small(gpu: &Gpu, args: &Args) -> Result<()> {
    let vectors = gpu.load(&kernels::MAPPED)?;
    let add = check_cuda!(vectors.get_function("vector_add"))?;
    let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let n = args.elements as usize;
    let result = too_small::run(&add, n, args.timing.runs().repetitions, args.seed, &stream)?;
    verdict(
        too_small::report(&result, n),
        "the explicit program was not refused, or the zero-copy one computed a wrong element",
    )
}

/// A row of the vector table: each memory's (median ms, wrong elements) in [`Memory::ALL`]'s order,
/// `None` where the job does not run from that memory. Returns whether every result was right.
fn print_row(job: &str, rows: &[Option<(f64, usize)>]) -> bool {
    let cell = |row: &Option<(f64, usize)>| row.map_or("-".to_string(), |(ms, _)| format!("{ms:.3}"));
    let wrong: usize = rows.iter().flatten().map(|(_, wrong)| wrong).sum();
    let ratio = match (rows[0], rows[1]) {
        (Some((explicit_ms, _)), Some((zero_copy_ms, _))) => format!("{:.2}", zero_copy_ms / explicit_ms),
        _ => "-".to_string(),
    };
    println!(
        "| {job} | {} | {} | {} | {ratio} | {} |",
        cell(&rows[0]),
        cell(&rows[1]),
        cell(&rows[2]),
        check_cell(wrong)
    );
    wrong == 0
}

fn yes(flag: bool) -> &'static str {
    if flag {
        "yes"
    } else {
        "no"
    }
}

/// `--program-source FILE.cu --check` (and `--list-cases`): the student's week-6 program, case by
/// case ([`week6`], or for mmm-streamed-and-pinned [`grading::program::mmm_week`]).
fn check_program(args: &Args) -> Result<()> {
    match args.graded.unwrap_or(Week6Program::ZeroCopy) {
        Week6Program::ZeroCopy => check_zero_copy(args),
        Week6Program::MmmStreamedAndPinned => grading::program::mmm_week::check::<StreamedAndPinned>(&args.program),
    }
}

fn check_zero_copy(args: &Args) -> Result<()> {
    let Some(built) = grading::program::before_gpu::<week6::Week6>(&args.program)? else {
        return Ok(());
    };
    let gpu = grading::on_the_machine(Gpu::open(0))?;
    let module = grading::on_the_machine(gpu.load(&kernels::MAPPED))?;
    let mut week = grading::on_the_machine(week6::Week6::new(&module))?;
    grading::program::check(&args.program, &built, &mut week)
}

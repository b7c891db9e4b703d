//! lab-constant-tracer: the German slides' ray tracer with its spheres in `__constant__` memory. Copies
//! the spheres to the constant symbol (and back, to show the copy goes both ways), renders with
//! constant and with global memory, checks each image against a CPU render, writes a PNG, and times
//! constant against global memory for several sphere counts.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{ensure, Result};
use clap::Parser;
use common::check_cuda;
use common::gpu::Gpu;
use common::host_memory::ensure_host_fits;
use common::output::check_output_path;
use common::progress::Progress;
use common::ptxas_view::print_ptxas;
use common::verify::{verdict, Random};
use grading::{kernel_week, StudentArgs};
use lab_constant_tracer::check::Week4;
use lab_constant_tracer::gpu::{copy_from_constant, DeviceScene, Variant};
use lab_constant_tracer::render::{compare, compare_sampled, render_on_cpu, write_png, Comparison};
use lab_constant_tracer::scene::{random_scene, read_scene, View};

/// A ray tracer whose spheres live in constant memory, timed against global memory.
#[derive(Parser, Debug)]
#[command(name = "lab-constant-tracer", version, about)]
struct Args {
    /// Image width in pixels.
    #[arg(long, default_value_t = 1024)]
    width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 768)]
    height: u32,
    /// Number of random spheres (a floor and N - 1 balls), at most what 64 KiB of constant memory hold.
    #[arg(long, default_value_t = 64, conflicts_with = "scene")]
    spheres: usize,
    /// Scene file instead of random spheres: one sphere per line, `x y z radius r g b`.
    #[arg(long, value_name = "FILE")]
    scene: Option<PathBuf>,
    /// Seed of the random scenes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the image rendered from constant memory (PNG).
    #[arg(long, default_value = "tracer.png")]
    output: PathBuf,
    /// Let --output replace an existing file.
    #[arg(long)]
    force: bool,
    /// Sphere counts of the constant-against-global timing table (random scenes, same image size).
    #[arg(long, value_delimiter = ',', default_value = "8,16,32,64,128,256,1024,2340")]
    sweep: Vec<usize>,
    /// Skip the timing table.
    #[arg(long)]
    no_sweep: bool,
    /// Timed renders per kernel after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Also print the ptxas reports of the three kernels.
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
    // A student's tracer.cu (assignments/04-constant-tracer) is compiled first, before the GPU opens;
    // with --check (or --list-cases) the week's check runs instead of the experiment, and the lab ends.
    let Some(image) = kernel_week::run(&args.student, &Week4)? else {
        return Ok(());
    };
    let view = View::new(args.width, args.height)?;
    let image_bytes = 4 * view.pixels() as u64;
    // The GPU's image, its poison, the CPU's image and the PNG's bytes.
    ensure_host_fits(4 * image_bytes, &format!("a {} x {} image", args.width, args.height))?;
    let spheres = match &args.scene {
        Some(path) => read_scene(path)?,
        None => random_scene(args.spheres, args.seed)?,
    };
    for &count in &args.sweep {
        lab_constant_tracer::scene::check_count(count)?;
    }
    check_output_path(&args.output, args.force)?;
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    gpu.ensure_fits(image_bytes, &format!("a {} x {} image", args.width, args.height))?;
    let module = gpu.load(image)?;

    // cudaMemcpyToSymbol(sphere_storage, host_spheres, ...), and the same spheres in global memory
    let mut scene = DeviceScene::new(&module, &spheres, view)?;
    // cudaMemcpyFromSymbol: the copy goes both ways
    let back = copy_from_constant(&module, spheres.len())?;
    ensure!(
        back == spheres,
        "the spheres read back from constant memory differ from those written"
    );
    println!(
        "{} spheres ({} bytes) copied to constant memory and read back unchanged",
        spheres.len(),
        spheres.len() * kernels::SPHERE_SIZE
    );

    let reference = render_on_cpu(&spheres, &view);
    let mut all_passed = true;
    for variant in Variant::all_for(spheres.len()) {
        let (image, timing) = scene.render(&module, variant, args.repetitions as usize)?;
        let comparison = compare(&image, &reference);
        all_passed &= comparison.passed();
        println!("{:<22} {timing}; {}", variant.name(), describe(&comparison));
        if variant == Variant::Constant {
            write_png(&args.output, &view, &image, args.force)?;
            println!("{:<22} image written to {}", "", args.output.display());
        }
    }

    if !args.no_sweep {
        all_passed &= sweep(&module, &args, view)?;
    }
    if args.ptxas {
        for variant in [
            Variant::Constant,
            Variant::Global,
            Variant::ConstantFixed(kernels::TRACER_FIXED_COUNTS[0]),
        ] {
            let function = check_cuda!(module.get_function(variant.kernel_name()))?;
            println!();
            print_ptxas(image, &variant.kernel_name(), &function, &gpu.info, 256)?;
        }
    }
    verdict(all_passed, "a GPU image differs from the CPU render past the tolerance")
}

/// The constant-against-global table: a random scene per count, every variant timed; each image checked
/// at 4096 random pixels against the CPU (a full CPU render of thousands of spheres takes too long).
fn sweep(module: &cust::module::Module, args: &Args, view: View) -> Result<bool> {
    println!(
        "\n{} x {} pixels, median of {} renders:\n",
        view.width, view.height, args.repetitions
    );
    println!("| spheres | constant ms | global ms | constant, count fixed ms | global / constant | check |");
    println!("|---------|-------------|-----------|--------------------------|-------------------|-------|");
    let mut random = Random::new(args.seed);
    let mut all_passed = true;
    let progress = Progress::new(args.sweep.len(), "lab-constant-tracer: sweep");
    for &count in &args.sweep {
        progress.step(format!("{count} spheres"));
        let spheres = random_scene(count, args.seed + count as u64)?;
        let mut scene = DeviceScene::new(module, &spheres, view)?;
        let mut times = Vec::new();
        let mut passed = true;
        for variant in Variant::all_for(count) {
            let (image, timing) = scene.render(module, variant, args.repetitions as usize)?;
            passed &= compare_sampled(&image, &spheres, &view, 4096, &mut random).passed();
            times.push(timing.median_ms());
        }
        all_passed &= passed;
        let fixed = times.get(2).map_or("-".to_string(), |ms| format!("{ms:.3}"));
        progress.done();
        progress.println(format!(
            "| {count} | {:.3} | {:.3} | {fixed} | {:.2} | {} |",
            times[0],
            times[1],
            times[1] / times[0],
            if passed { "PASS" } else { "FAIL" }
        ));
    }
    Ok(all_passed)
}

fn describe(comparison: &Comparison) -> String {
    format!(
        "against the CPU: {} of {} pixels differ, {} unwritten, largest channel difference {} ({})",
        comparison.pixels_off,
        comparison.pixels,
        comparison.unwritten,
        comparison.max_channel_difference,
        if comparison.passed() { "PASS" } else { "FAIL" }
    )
}

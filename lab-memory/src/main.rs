//! lab-memory: the memory chapters' small programs, one `--mode` each, every result checked against the
//! CPU: `coalescing` (the Chinese notes' `kernel_1` / `kernel_2`, then strides and offsets), `banks`
//! (shared-memory bank conflicts, the padded transpose), `indexing` (the Korean notes' `getGlobalIdx`
//! helpers), `registers` (`-maxrregcount`), `cache` (`cudaFuncSetCacheConfig` and the carveout),
//! `symbols` (`cudaMemcpyToSymbol` / `FromSymbol`), `readonly` (`__ldg` and texture objects) and
//! `device-query` (the Greek slides' property listing).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use common::cli::parse_bytes;
use common::gpu::Gpu;
use common::output::check_output_path;
use common::progress::Progress;
use common::ptxas_view::print_ptxas;
use common::verify::{check_cell, verdict, Random};
use cust::module::Module;
use lab_memory::banks::{self, Transpose, Word};
use lab_memory::cache::{self, Preference};
use lab_memory::coalescing::{self, Access, Measured, Notes, Sweep};
use lab_memory::device_query::{measure_copy, Query};
use lab_memory::indexing::{self, Dims, Helper};
use lab_memory::readonly::{self, Path, Pattern};
use lab_memory::registers::{self, Variant, Work};
use lab_memory::symbols::{round_trip, Symbols, SYMBOL_LENGTH};

/// The memory chapters: coalescing, banks, thread indexing, register caps, caches, symbols, the
/// read-only path, the device query.
#[derive(Parser, Debug)]
#[command(name = "lab-memory", version, about)]
struct Args {
    /// Which experiment: coalescing (the notes' kernel_1 and kernel_2, strides, offsets), banks (shared-memory
    /// conflicts, the padded transpose), indexing (every getGlobalIdx helper), registers (-maxrregcount),
    /// cache (L1 / shared-memory preference), symbols (cudaMemcpyToSymbol and back), readonly (__ldg and
    /// a texture object), device-query (every property, derived figures, a measured copy), or all.
    #[arg(long, value_enum, default_value = "all")]
    mode: Mode,
    /// coalescing: threads of the notes' kernel_1 and kernel_2 (kernel_2 needs 4000 bytes each), a
    /// multiple of 256: like the notes, the kernels check no bound.
    #[arg(long, default_value_t = 1 << 19, value_parser = clap::value_parser!(u32).range(256..=2_097_152))]
    notes_threads: u32,
    /// coalescing: size of each of the sweep's two buffers (4096, 64MiB, 1GiB); a wider stride copies
    /// fewer elements (at most 2^24).
    #[arg(long, default_value = "1GiB", value_parser = parse_bytes)]
    buffer_bytes: usize,
    /// coalescing: plot both sweeps as an SVG into this file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Let --plot replace an existing file.
    #[arg(long)]
    force: bool,
    /// banks: shared loads per thread in the walk.
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    steps: u32,
    /// banks: rows and columns of the transposed matrix (floats).
    #[arg(long, num_args = 2, value_names = ["ROWS", "COLS"], default_values_t = [4096, 4096], value_parser = clap::value_parser!(u32).range(1..=32768))]
    transpose: Vec<u32>,
    /// registers: rounds of the loop every thread runs with its 32 live floats.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    rounds: u32,
    /// registers: print each variant's ptxas report, the driver's view and the register arithmetic.
    #[arg(long)]
    ptxas: bool,
    /// indexing: blocks in x, y and z (a helper for a 1D or 2D grid uses the first one or two).
    #[arg(long, num_args = 3, value_names = ["X", "Y", "Z"], default_values_t = [3, 2, 2], value_parser = clap::value_parser!(u32).range(1..=65535))]
    grid: Vec<u32>,
    /// indexing: threads per block in x, y and z (likewise; at most 1024 in all).
    #[arg(long, num_args = 3, value_names = ["X", "Y", "Z"], default_values_t = [4, 3, 2], value_parser = clap::value_parser!(u32).range(1..=1024))]
    block: Vec<u32>,
    /// device-query: size of the device-to-device copy that measures the memory bandwidth (4096 to
    /// 16GiB, written like --buffer-bytes: 1073741824, 1GiB).
    #[arg(long, default_value = "256MiB", value_parser = parse_bytes)]
    copy_bytes: usize,
    /// Timed runs after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    profile: profiler::ProfileArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    Coalescing,
    Banks,
    Indexing,
    Registers,
    Cache,
    Symbols,
    Readonly,
    DeviceQuery,
    All,
}

impl Mode {
    /// Whether `--mode` asks for `self`.
    fn chosen(self, asked: Mode) -> bool {
        asked == self || asked == Mode::All
    }
}

fn main() -> ExitCode {
    common::cli::run_lab(|args: Args| args.profile.clone().around(|| run(args)))
}

fn run(args: Args) -> Result<()> {
    let block: u32 = args.block.iter().product();
    anyhow::ensure!(
        args.copy_bytes <= 1 << 34,
        "--copy-bytes {} is over 16 GiB",
        args.copy_bytes
    );
    anyhow::ensure!(
        block <= 1024,
        "--block {} x {} x {} is {block} threads, more than a block may have (1024)",
        args.block[0],
        args.block[1],
        args.block[2]
    );
    anyhow::ensure!(
        args.notes_threads.is_multiple_of(coalescing::BLOCK),
        "--notes-threads {} is not a multiple of {}: the notes' kernels check no bound",
        args.notes_threads,
        coalescing::BLOCK
    );
    if let Some(path) = &args.plot {
        check_output_path(path, args.force)?;
    }
    let gpu = Gpu::open(0)?;
    println!("{}", gpu.info);
    let module = gpu.load(&kernels::MEMORY)?;
    let mut passed = true;
    if Mode::Coalescing.chosen(args.mode) {
        passed &= coalescing(&gpu, &module, &args)?;
    }
    if Mode::Banks.chosen(args.mode) {
        passed &= banks(&gpu, &module, &args)?;
    }
    if Mode::Indexing.chosen(args.mode) {
        passed &= indexing(&module, &args)?;
    }
    if Mode::Registers.chosen(args.mode) {
        passed &= registers(&gpu, &args)?;
    }
    if Mode::Cache.chosen(args.mode) {
        passed &= cache(&gpu, &module, &args)?;
    }
    if Mode::Symbols.chosen(args.mode) {
        passed &= symbols(&module, &args)?;
    }
    if Mode::Readonly.chosen(args.mode) {
        passed &= readonly(&module, &args)?;
    }
    if Mode::DeviceQuery.chosen(args.mode) {
        passed &= device_query(&gpu, &args)?;
    }
    verdict(passed, "a GPU result differs from the CPU's")
}

/// The notes' two kernels, then the stride and offset sweeps of a strided copy: tables, and the plot.
fn coalescing(gpu: &Gpu, module: &Module, args: &Args) -> Result<bool> {
    let peak = gpu.info.peak_bandwidth();
    let reps = args.repetitions as usize;
    let l2 = gpu.info.l2_bytes;
    println!(
        "\nCoalescing: every run starts with the L2 cache emptied; peak {:.0} GB/s (2 x memory clock x bus width)\n",
        peak / 1e9
    );
    let blocks = args.notes_threads / coalescing::BLOCK;
    gpu.ensure_fits(
        4 * Notes::Kernel2.floats(args.notes_threads as usize) as u64 + 2 * u64::from(l2),
        "--notes-threads",
    )?;
    println!("| kernel | threads | writes | GPU time in ms | effective GB/s | % of peak | check |");
    println!("|--------|---------|--------|----------------|----------------|-----------|-------|");
    let mut passed = true;
    for kernel in [Notes::Kernel1, Notes::Kernel2] {
        let run = coalescing::run_notes(module, kernel, blocks, coalescing::BLOCK, l2, reps)?;
        // Only writes: 4 bytes per thread.
        let bandwidth = run.bandwidth() / 2.0;
        passed &= run.wrong == 0;
        let writes = if kernel == Notes::Kernel1 {
            "x[tid]"
        } else {
            "x[1000*tid]"
        };
        println!(
            "| {} | {} | {writes} | {:.4} | {:.0} | {:.1}% | {} |",
            kernel.name(),
            run.access.elements,
            run.timing.median_ms(),
            bandwidth / 1e9,
            100.0 * bandwidth / peak,
            check_cell(run.wrong)
        );
    }

    let floats = args.buffer_bytes / 4;
    gpu.ensure_fits(
        2 * floats as u64 * 4 + 2 * u64::from(l2),
        &format!("--buffer-bytes {}", args.buffer_bytes),
    )?;
    let mut sweep = Sweep::new(module, floats, l2, peak, args.seed as u32)?;
    let strides: Vec<Access> = coalescing::strides()
        .into_iter()
        .map(|stride| Access::fitting(stride, 0, floats))
        .collect();
    let offsets: Vec<Access> = coalescing::offsets()
        .into_iter()
        .map(|offset| Access::fitting(1, offset, floats))
        .collect();
    let progress = Progress::new(strides.len() + offsets.len(), "coalescing sweep");
    let mut measure = |access: &Access| {
        progress.run(&format!("stride {} offset {}", access.stride, access.offset), || {
            sweep.measure(*access, reps)
        })
    };
    let by_stride: Vec<Measured> = strides.iter().map(&mut measure).collect::<Result<_>>()?;
    let by_offset: Vec<Measured> = offsets.iter().map(&mut measure).collect::<Result<_>>()?;
    progress.done();
    let coalesced = by_stride[0].bandwidth();
    println!("\nout[offset + i*stride] = in[offset + i*stride] + 1, by stride (offset 0); bytes read and written that the program asked for:\n");
    println!("| stride | elements | sectors per warp | GPU time in ms | effective GB/s | % of peak | sector model GB/s | check |");
    println!("|--------|----------|------------------|----------------|----------------|-----------|-------------------|-------|");
    for m in &by_stride {
        println!(
            "| {} | {} | {} | {:.4} | {:.0} | {:.1}% | {:.0} | {} |",
            m.access.stride,
            m.access.elements,
            m.access.sectors_per_warp(),
            m.timing.median_ms(),
            m.bandwidth() / 1e9,
            100.0 * m.bandwidth() / peak,
            m.access.predicted(coalesced) / 1e9,
            check_cell(m.wrong)
        );
    }
    let aligned = by_offset[0].bandwidth();
    println!("\nThe same copy at stride 1, misaligned by an offset (8 floats = one 32-byte sector):\n");
    println!("| offset | sectors per warp | GPU time in ms | effective GB/s | % of peak | sector model GB/s | check |");
    println!("|--------|------------------|----------------|----------------|-----------|-------------------|-------|");
    for m in &by_offset {
        println!(
            "| {} | {} | {:.4} | {:.0} | {:.1}% | {:.0} | {} |",
            m.access.offset,
            m.access.sectors_per_warp(),
            m.timing.median_ms(),
            m.bandwidth() / 1e9,
            100.0 * m.bandwidth() / peak,
            m.access.predicted(aligned) / 1e9,
            check_cell(m.wrong)
        );
    }
    if let Some(path) = &args.plot {
        coalescing::plot(
            &by_stride,
            &by_offset,
            peak,
            &format!("Effective bandwidth by stride and by offset, {}", gpu.info.name),
            path,
            args.force,
        )?;
        println!("\nPlot: {}", path.display());
    }
    Ok(passed && by_stride.iter().chain(&by_offset).all(|m| m.wrong == 0))
}

/// Bank conflicts by stride for 32- and 64-bit words, measured against predicted; then the transposes.
fn banks(gpu: &Gpu, module: &Module, args: &Args) -> Result<bool> {
    let reps = args.repetitions as usize;
    let steps = args.steps as usize;
    // Two blocks of 1024 per multiprocessor: 64 warps each, enough to keep the banks busy.
    let blocks = 2 * gpu.info.multiprocessors;
    println!("\nShared-memory banks: lane l reads word l*stride, {steps} times; n-way = time / time at stride 1 (same word size)\n");
    println!("| stride | 32-bit predicted | 32-bit measured | ns per step | 64-bit predicted | 64-bit measured | ns per step | check |");
    println!("|--------|------------------|-----------------|-------------|------------------|-----------------|-------------|-------|");
    let mut base = [0.0f64; 2];
    let mut passed = true;
    for stride in 1..=32 {
        let mut cells = Vec::new();
        let mut wrong = 0;
        for (w, word) in Word::ALL.into_iter().enumerate() {
            let (timing, bad) = banks::walk(module, word, stride, steps, blocks, reps)?;
            wrong += bad;
            if stride == 1 {
                base[w] = timing.median_ms();
            }
            cells.push(format!(
                "{:.0}-way | {:.2}-way | {:.2}",
                word.predicted_ways(stride),
                timing.median_ms() / base[w],
                timing.median_ms() * 1e6 / steps as f64
            ));
        }
        passed &= wrong == 0;
        println!("| {stride} | {} | {} | {} |", cells[0], cells[1], check_cell(wrong));
    }
    let (rows, cols) = (args.transpose[0] as usize, args.transpose[1] as usize);
    gpu.ensure_fits(
        8 * (rows * cols) as u64 + 2 * u64::from(gpu.info.l2_bytes),
        "--transpose",
    )?;
    println!("\nTranspose of a {rows} x {cols} float matrix, blocks of 32 x 8 threads, tiles of 32 x 32:\n");
    println!("| kernel | GPU time in ms | GB/s (read + written) | % of peak | check |");
    println!("|--------|----------------|-----------------------|-----------|-------|");
    let input = banks::random_matrix(rows, cols, args.seed);
    for kernel in Transpose::ALL {
        let (timing, wrong) = banks::transpose(module, kernel, &input, rows, cols, gpu.info.l2_bytes, reps)?;
        passed &= wrong == 0;
        let bandwidth = 8.0 * (rows * cols) as f64 / (timing.median_ms() * 1e-3);
        println!(
            "| {} | {:.4} | {:.0} | {:.1}% | {} |",
            kernel.label(),
            timing.median_ms(),
            bandwidth / 1e9,
            100.0 * bandwidth / gpu.info.peak_bandwidth(),
            check_cell(wrong)
        );
    }
    Ok(passed)
}

/// The register-pressure kernel under every cap: registers, spills, occupancy, time.
fn registers(gpu: &Gpu, args: &Args) -> Result<bool> {
    // Eight blocks of 256 per multiprocessor, twice over: every variant fills the GPU at least twice.
    let n = 2 * 2048 * gpu.info.multiprocessors as usize;
    let work = Work::new(n, args.rounds as usize, 61, args.seed);
    let variants = Variant::all(gpu.info.arch())?;
    let (code, _) = kernels::REGISTERS
        .report_for(gpu.info.arch())
        .map_err(anyhow::Error::msg)?;
    println!(
        "\nRegister caps: {} threads keep {} floats live through {} rounds (the CPU recomputes one thread in {})",
        n,
        registers::LIVE,
        args.rounds,
        work.step
    );
    println!(
        "Registers are the loaded kernel's (the driver's); spills and stack frame are ptxas's for {} (this GPU runs {}); ptxas's floor and choices differ by architecture.\n",
        kernels::arch_name(code.build().arch),
        code.describe()
    );
    let mut rows = Vec::new();
    let mut passed = true;
    for variant in &variants {
        let measured = registers::run(variant, &work, args.repetitions as usize)?;
        passed &= measured.wrong == 0;
        rows.push(measured);
    }
    let uncapped = rows.last().map_or(1.0, |m| m.timing.median_ms());
    println!("| -maxrregcount | registers | spill stores | spill loads | stack frame | blocks of {} per SM (occupancy) | GPU time in ms | vs no cap | check |", registers::BLOCK);
    println!("|---------------|-----------|--------------|-------------|-------------|-------------------------------|----------------|-----------|-------|");
    for (variant, m) in variants.iter().zip(&rows) {
        let r = &variant.resources;
        println!(
            "| {} | {} | {} B | {} B | {} B | {} ({:.0}%) | {:.4} | {:.2}x | {} |",
            variant.cap.map_or("none".to_string(), |cap| cap.to_string()),
            m.registers,
            r.spill_stores,
            r.spill_loads,
            r.stack_frame_bytes,
            m.blocks_per_multiprocessor,
            100.0 * m.occupancy(&gpu.info),
            m.timing.median_ms(),
            m.timing.median_ms() / uncapped,
            check_cell(m.wrong)
        );
    }
    if args.ptxas {
        for variant in &variants {
            println!("\n{}:", variant.label());
            let module = common::gpu::load_image(variant.image)?;
            let function = common::check_cuda!(module.get_function(registers::KERNEL))?;
            print_ptxas(variant.image, registers::KERNEL, &function, &gpu.info, registers::BLOCK)?;
        }
    }
    Ok(passed)
}

/// The gather under every L1 / shared-memory preference, for tables of several sizes.
fn cache(gpu: &Gpu, module: &Module, args: &Args) -> Result<bool> {
    let threads = 2 * gpu.info.multiprocessors as usize * gpu.info.max_threads_per_multiprocessor as usize;
    let reads = 64;
    let sizes = [16usize << 10, 64 << 10, 128 << 10, 192 << 10];
    println!(
        "\nCache configuration: {threads} threads each add {reads} entries of a table at hashed places; L1 and shared memory are one store per SM, up to {} of it shared memory\n",
        common::format_bytes(u64::from(gpu.info.shared_per_multiprocessor))
    );
    let header: Vec<String> = sizes
        .iter()
        .map(|&bytes| format!("table {}", common::format_bytes(bytes as u64)))
        .collect();
    println!("| preference | {} | check |", header.join(" | "));
    println!("|------------|{}-------|", "---------|".repeat(sizes.len()));
    let gathers: Vec<cache::Gather> = sizes
        .iter()
        .map(|&bytes| cache::Gather::new(bytes, threads, reads, args.seed))
        .collect();
    let mut passed = true;
    for preference in Preference::all() {
        let mut cells = Vec::new();
        let mut wrong = 0;
        for gather in &gathers {
            let (timing, bad) = cache::measure(module, gather, preference, args.repetitions as usize)?;
            wrong += bad;
            cells.push(format!("{:.4} ms", timing.median_ms()));
        }
        passed &= wrong == 0;
        println!(
            "| {} | {} | {} |",
            preference.name(),
            cells.join(" | "),
            check_cell(wrong)
        );
    }
    Ok(passed)
}

/// The gather through plain loads, the read-only path and a texture object, for two index patterns.
fn readonly(module: &Module, args: &Args) -> Result<bool> {
    let (table, n) = (1usize << 22, 1usize << 23);
    println!(
        "\nRead-only data path: out[i] = in[index[i]], {n} elements from a table of {} (in L2)\n",
        common::format_bytes(4 * table as u64)
    );
    println!("| indices | path | GPU time in ms | GB/s (index + value + out) | check |");
    println!("|---------|------|----------------|----------------------------|-------|");
    let mut passed = true;
    for pattern in Pattern::ALL {
        let gather = readonly::Gather::new(table, n, pattern, args.seed)?;
        for path in Path::ALL {
            let (timing, wrong) = readonly::measure(module, &gather, path, args.repetitions as usize)?;
            passed &= wrong == 0;
            let bandwidth = 12.0 * n as f64 / (timing.median_ms() * 1e-3);
            println!(
                "| {} | {} | {:.4} | {:.0} | {} |",
                pattern.label(),
                path.label(),
                timing.median_ms(),
                bandwidth / 1e9,
                check_cell(wrong)
            );
        }
    }
    Ok(passed)
}

/// Every helper on the --grid and --block sizes, checked; then the picture of a small 2D grid.
fn indexing(module: &Module, args: &Args) -> Result<bool> {
    let (grid, block) = (
        (args.grid[0], args.grid[1], args.grid[2]),
        (args.block[0], args.block[1], args.block[2]),
    );
    println!("\nThread indexing: every thread writes its block and thread at getGlobalIdx_*(); the CPU checks each\n");
    println!("| helper | grid | block | threads | never written | misplaced | check |");
    println!("|--------|------|-------|---------|---------------|-----------|-------|");
    let mut passed = true;
    for helper in Helper::all() {
        let mapping = indexing::run(module, helper, grid, block)?;
        let (unwritten, misplaced) = mapping.wrong();
        passed &= unwritten + misplaced == 0;
        let dims = |(x, y, z): (u32, u32, u32)| format!("{x} x {y} x {z}");
        println!(
            "| {} | {} | {} | {} | {unwritten} | {misplaced} | {} |",
            helper.name(),
            dims(mapping.grid),
            dims(mapping.block),
            mapping.threads(),
            if unwritten + misplaced == 0 { "PASS" } else { "FAIL" }
        );
    }
    let small = indexing::run(
        module,
        Helper {
            grid: Dims::Two,
            block: Dims::Two,
        },
        (3, 2, 1),
        (4, 2, 1),
    )?;
    println!("\ngetGlobalIdx_2D_2D on a grid of 3 x 2 blocks of 4 x 2 threads, each thread's index where it lies:\n");
    print!("{}", indexing::picture(&small));
    let (unwritten, misplaced) = small.wrong();
    Ok(passed && unwritten + misplaced == 0)
}

/// devData and devArray to the GPU, doubled (plus the index) there, back, against the CPU.
#[allow(clippy::approx_constant)] // 3.14 is the notes' value for devData, not an approximation of pi
fn symbols(module: &Module, args: &Args) -> Result<bool> {
    let mut random = Random::new(args.seed);
    let input = Symbols {
        data: 3.14,
        array: (0..SYMBOL_LENGTH).map(|_| random.uniform(-1.0, 1.0) as f32).collect(),
    };
    let factor = 2.0;
    let output = round_trip(module, &input, factor)?;
    let differences = output.differences(&input.scaled(factor));
    println!("\n__device__ symbols: cudaMemcpyToSymbol(devData, 3.14) and devArray[{SYMBOL_LENGTH}] (random), scale_symbols<<<1, {SYMBOL_LENGTH}>>>({factor}),");
    println!(
        "cudaMemcpyFromSymbol: devData = {} (CPU {}), devArray[1] = {} (CPU {}), {differences} of {} values differ: {}",
        output.data,
        input.scaled(factor).data,
        output.array[1],
        input.scaled(factor).array[1],
        SYMBOL_LENGTH + 1,
        if differences == 0 { "PASS" } else { "FAIL" }
    );
    Ok(differences == 0)
}

/// The property listing, then the copy that checks the bandwidth figure against the hardware.
fn device_query(gpu: &Gpu, args: &Args) -> Result<bool> {
    let query = Query::read(gpu.device, gpu.info.clone())?;
    let count = common::gpu::count()?;
    println!(
        "\nDevice query ({count} GPU{} on this machine), device 0:\n",
        if count == 1 { "" } else { "s" }
    );
    for (name, value) in query.lines() {
        println!("  {name:<34} {value}");
    }
    let bytes = args.copy_bytes / 4 * 4;
    gpu.ensure_fits(2 * bytes as u64, &format!("--copy-bytes {bytes}"))?;
    let (timing, wrong) = measure_copy(bytes, args.repetitions as usize, args.seed)?;
    // A device-to-device copy reads and writes every byte.
    let measured = 2.0 * bytes as f64 / (timing.median_ms() * 1e-3);
    println!(
        "\nDevice-to-device copy of {}: {timing}; {:.0} GB/s read + written = {:.0}% of the peak; {wrong} words differ: {}",
        common::format_bytes(bytes as u64),
        measured / 1e9,
        100.0 * measured / gpu.info.peak_bandwidth(),
        if wrong == 0 { "PASS" } else { "FAIL" }
    );
    Ok(wrong == 0)
}

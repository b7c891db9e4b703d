//! GPU against CPU for every kernel, precision and block size, at awkward sizes, with C poisoned before
//! every launch. Needs a GPU: `bash gpu-bundle/run.sh` (README).

use std::time::{Duration, Instant};

use common::gpu::Gpu;
use common::verify::Random;
use cust::module::Module;
use lab_mmm::cublas::{Cublas, Math};
use lab_mmm::ladder::{run_library, run_library_in, run_step, Ladder, Step};
use lab_mmm::tile_example::{self, format_phases, Trace};
use lab_mmm::unroll;
use lab_mmm::wgmma::{self, WgmmaGemm};
use lab_mmm::{sweep, time_on_gpu, Precision, BF16_TOLERANCE, TF32_TOLERANCE};
use matrix::mmm::{check_product, check_product_fits, load_mmm, MmmKernel};
use matrix::{Element, Matrix};

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

fn open() -> (Gpu, Vec<(u32, Module)>) {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let modules = kernels::MMM_BLOCK_SIZES
        .iter()
        .map(|&bs| (bs, load_mmm(&gpu, bs).unwrap()))
        .collect();
    (gpu, modules)
}

/// Random m x k and k x n matrices on the GPU, and an m x n C.
fn operands<T: Element>((m, k, n): (usize, usize, usize), random: &mut Random) -> (Matrix<T>, Matrix<T>, Matrix<T>) {
    let mut a = Matrix::<T>::random(m, k, random).unwrap();
    let mut b = Matrix::<T>::random(k, n, random).unwrap();
    a.copy_to_gpu().unwrap();
    b.copy_to_gpu().unwrap();
    (a, b, Matrix::<T>::new(m, n).unwrap())
}

/// Multiplies random m x k and k x n matrices with every kernel and block size and checks each C.
fn check_shape<T: Element>(gpu: &Gpu, modules: &[(u32, Module)], (m, k, n): (usize, usize, usize), seed: u64) {
    let mut random = Random::new(seed);
    let (a, b, mut c) = operands::<T>((m, k, n), &mut random);
    for (block_size, module) in modules {
        check_product_fits::<T>(gpu, (m, k, n), *block_size).unwrap();
        for kernel in [MmmKernel::Naive, MmmKernel::Tiled] {
            time_on_gpu(module, kernel, *block_size, &a, &b, &mut c, 1).unwrap();
            c.copy_from_gpu().unwrap();
            let check = check_product(&a, &b, &c, &mut random);
            assert!(
                check.passed(),
                "{} {} BLOCK_SIZE {block_size} at {m} x {k} x {n}: {check:?}",
                kernel.slide_name(),
                T::NAME
            );
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_kernel_precision_and_block_size_agrees_with_the_cpu_at_awkward_sizes() {
    let (gpu, modules) = open();
    let square = [1, 15, 16, 17, 31, 33, 100, 255, 1000, 1024].map(|s| (s, s, s));
    let non_square = [(37, 1000, 129), (1000, 3, 17), (1, 513, 2), (300, 1, 400)];
    for (seed, shape) in square.into_iter().chain(non_square).enumerate() {
        check_shape::<f64>(&gpu, &modules, shape, seed as u64);
        check_shape::<f32>(&gpu, &modules, shape, seed as u64 + 100);
    }
}

/// `--unroll`'s path: mmm.cu's tiled kernel as printed, with `#pragma unroll 1` and without the pragma,
/// at every BLOCK_SIZE and in both precisions, C poisoned before every launch and checked against the
/// CPU, at sizes no tile divides and at 1000.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_unroll_variant_agrees_with_the_cpu_at_awkward_sizes() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let variants = unroll::variants(&kernels::MMM_BLOCK_SIZES).unwrap();
    assert_eq!(variants.len(), 3 * kernels::MMM_BLOCK_SIZES.len());
    for (seed, (m, k, n)) in [(100, 37, 53), (1, 513, 2), (1000, 1000, 1000)].into_iter().enumerate() {
        let mut random = Random::new(seed as u64);
        let mut a = Matrix::<f64>::random(m, k, &mut random).unwrap();
        let mut b = Matrix::<f64>::random(k, n, &mut random).unwrap();
        let rows = unroll::run(
            &gpu,
            (&mut a, &mut b),
            &[Precision::F64, Precision::F32],
            &variants,
            1,
            &mut random,
        )
        .unwrap();
        assert_eq!(rows.len(), 2 * variants.len());
        for row in &rows {
            assert!(
                row.check.passed() && row.registers.is_some(),
                "{} {} BLOCK_SIZE {} at {m} x {k} x {n}: {row:?}",
                row.variant,
                row.precision,
                row.block_size
            );
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_large_product_passes_freivalds_test_and_samples() {
    let (gpu, modules) = open();
    check_shape::<f32>(&gpu, &modules, (2048, 1536, 1200), 7);
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn matrices_larger_than_gpu_memory_are_refused_with_their_sizes() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    // 1 x huge times huge x 1: two vectors that alone pass the GPU's memory.
    let huge = (gpu.info.total_memory / 8) as usize;
    let err = check_product_fits::<f64>(&gpu, (1, huge, 1), 16)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!("1 x {huge} times {huge} x 1 in f64 needs")),
        "{err}"
    );
    // And a C too wide for the grid of 16 x 16 blocks.
    let wide = 16 * (gpu.info.max_grid_y as usize + 1);
    let err = check_product_fits::<f32>(&gpu, (wide, 1, 1), 16)
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs a grid of 1 x"), "{err}");
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn copies_go_both_ways_unchanged() {
    let _gpu = Gpu::open(0).expect(NEEDS_GPU);
    let mut random = Random::new(11);
    let original = Matrix::<f64>::random(33, 17, &mut random).unwrap();
    let mut m = Matrix::<f64>::from_row_major(33, 17, original.data()).unwrap();
    m.copy_to_gpu().unwrap();
    m.data_mut().fill(0.0);
    m.copy_from_gpu().unwrap();
    assert_eq!(m.data(), original.data());
}

/// Issue 64: the slides' "block (0, 0) for TILE_WIDTH = 2", run by mmm.cu's own tiled kernel: every
/// thread of every block stores and multiplies the elements the slide says, in the phase it says, into
/// and from the places it says, and Pd is the CPU's product; so `--tile-example` prints the table the
/// CPU predicts, and says PASS.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_tile_example_is_the_slides_table_in_every_block_and_its_product_is_right() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    for seed in [1, 2, 3] {
        let example = tile_example::run(&gpu, seed).unwrap();
        assert_eq!(example.trace.differences(), Vec::<String>::new(), "seed {seed}");
        assert_eq!(
            format_phases(&example.trace),
            format_phases(&Trace::expected()),
            "seed {seed}"
        );
        let check = example.check(&mut Random::new(seed));
        assert!(check.passed(), "seed {seed}: {check:?}");
    }
    let started = Instant::now();
    let lab = common::testing::lab_binary("lab-mmm", env!("CARGO_BIN_EXE_lab-mmm"));
    let outcome = common::testing::run(&lab, &["--tile-example"]);
    let took = started.elapsed();
    assert!(
        outcome.code == Some(0) && outcome.stdout.contains("Result = PASS"),
        "{outcome:?}"
    );
    assert!(
        outcome.stdout.contains(&format_phases(&Trace::expected())),
        "{}",
        outcome.stdout
    );
    assert!(took < Duration::from_secs(1), "--tile-example took {took:?}");
}

/// Every step of the ladder against the CPU, C poisoned before each: sizes that are not multiples of
/// any tile, k too short for one tile, odd row lengths (no 16-byte loads) and even ones. A step is
/// skipped only where it has no kernel in `T`, or the ladder says it cannot run here, and then its
/// kernel really is missing from the code this GPU runs (or the GPU is older than it needs).
fn check_ladder<T: Element>(ladder: &Ladder, (m, k, n): (usize, usize, usize), seed: u64) {
    let mut random = Random::new(seed);
    let (a, b, mut c) = operands::<T>((m, k, n), &mut random);
    for step in Step::ALL {
        if let Some(why) = ladder.unavailable::<T>(step) {
            let needs = kernels::needs(&step.c_name::<T>().unwrap())
                .unwrap_or_else(|| panic!("{} is unavailable ({why}) but needs nothing", step.name()));
            assert!(
                !ladder.has_kernel::<T>(step) || !needs.met_by(ladder.arch()),
                "{} is unavailable ({why}) but loaded",
                step.name()
            );
            eprintln!("{} {}: not run: {why}", step.name(), T::NAME);
            continue;
        }
        if run_step(ladder, step, &a, &b, &mut c, 1).unwrap().is_none() {
            assert!(step.c_name::<T>().is_none(), "{} {} did not run", step.name(), T::NAME);
            continue;
        }
        let check = step.precision::<T>().judge(check_product(&a, &b, &c, &mut random));
        assert!(
            check.passed(),
            "{} {} at {m} x {k} x {n}: {check:?}",
            step.name(),
            T::NAME
        );
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_step_of_the_ladder_is_right_at_awkward_sizes() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let ladder = Ladder::load(&gpu).unwrap();
    // The last six for steps 6 to 8 (128 x 256 x 16, 128 x 64 x 16 tiles) too: odd k and n (no 16-byte
    // copies of A or B, C stored element by element), tiles wholly inside A and B (their unchecked
    // copies) beside edge tiles, a k that ends in a partial tile after whole ones; for step 7, a k of
    // 14 (one partial tile, 16-byte copies) with m and n just past its tiles, and a C of whole tiles of
    // 128 x 64 (every copy unchecked, k of three whole tiles: each stage filled once).
    for (seed, shape) in [
        (1, 1, 1),
        (127, 129, 131),
        (200, 3, 77),
        (257, 255, 130),
        (64, 64, 64),
        (300, 301, 299),
        (129, 1024, 258),
        (1000, 777, 1531),
        (129, 257, 33),
        (300, 400, 520),
        (384, 1004, 1024),
        (200, 1999, 70),
        (130, 14, 66),
        (256, 48, 192),
    ]
    .into_iter()
    .enumerate()
    {
        check_ladder::<f64>(&ladder, shape, seed as u64);
        check_ladder::<f32>(&ladder, shape, seed as u64);
    }
}

/// Issue 41: split-K really splits thin products (several slices, the last one short, k ending in a
/// partial tile), and C, poisoned first, matches the CPU's; a C whose tiles fill the GPU runs the
/// step being split, unsplit, however long k is.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn split_k_splits_thin_products_and_is_right() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let ladder = Ladder::load(&gpu).unwrap();
    let split_steps = [Step::SplitWarpTiled, Step::SplitMmaTiled, Step::SplitTf32];
    // The last: step 10's 128 x 64 tiles cut at both edges, an odd n (C's slabs stored element by
    // element), an even k of 129 tiles whose last is 2 deep.
    let shapes = [
        (1, 3001, 1),
        (256, 8192, 256),
        (200, 1999, 70),
        (130, 515, 260),
        (257, 2050, 131),
    ];
    for step in split_steps {
        let mut split = 0;
        for (seed, shape) in shapes.into_iter().enumerate() {
            split += if step.c_name::<f64>().is_some() {
                split_and_check::<f64>(&ladder, step, shape, seed as u64)
            } else {
                split_and_check::<f32>(&ladder, step, shape, seed as u64)
            };
        }
        // One block of C and a k of 3001 split on any GPU of more than one multiprocessor.
        let ran = ladder.unavailable::<f64>(step).is_none() && ladder.unavailable::<f32>(step).is_none();
        assert!(!ran || split >= 1, "{} split nothing", step.name());
        // Step 10's kernel asks for two blocks per multiprocessor (its launch bounds), and Hopper holds
        // them: 256 x 8192 x 256, 8 of its tiles, is cut into more blocks than the GPU has
        // multiprocessors, still one wave.
        if step == Step::SplitMmaTiled && ran && ladder.arch() == 90 {
            let slices = ladder.split(step, (256, 8192, 256)).unwrap().slices;
            let multiprocessors = gpu.info.multiprocessors;
            assert!(
                8 * slices > multiprocessors && 8 * slices <= 2 * multiprocessors,
                "{slices} slices of 8 blocks on {multiprocessors} multiprocessors"
            );
        }
        let big = (2048, 4096, 4096);
        assert_eq!(
            ladder.split(step, big).map(|split| split.slices),
            Some(1),
            "{}",
            step.name()
        );
        let prepared_split = match step.c_name::<f64>() {
            Some(_) => ladder.prepare::<f64>(step, big).unwrap().and_then(|p| p.split()),
            None => ladder.prepare::<f32>(step, big).unwrap().and_then(|p| p.split()),
        };
        assert_eq!(
            prepared_split,
            None,
            "{}: one slice runs the step it splits",
            step.name()
        );
    }
}

/// `step` on an `m` x `k` times `k` x `n` product, split as `Split::choose` says for this GPU, and
/// within the step's tolerance of the CPU. Returns 1 where it ran split into several slices, else 0.
fn split_and_check<T: Element>(ladder: &Ladder, step: Step, (m, k, n): (usize, usize, usize), seed: u64) -> u32 {
    if let Some(why) = ladder.unavailable::<T>(step) {
        eprintln!("{} {}: not run: {why}", step.name(), T::NAME);
        return 0;
    }
    let expected = ladder.split(step, (m, k, n)).unwrap();
    let split = ladder.prepare::<T>(step, (m, k, n)).unwrap().unwrap().split();
    assert_eq!(
        split,
        (expected.slices > 1).then_some(expected),
        "{} at {m} x {k} x {n}",
        step.name()
    );
    let mut random = Random::new(seed);
    let (a, b, mut c) = operands::<T>((m, k, n), &mut random);
    run_step(ladder, step, &a, &b, &mut c, 2).unwrap().unwrap();
    let check = step.precision::<T>().judge(check_product(&a, &b, &c, &mut random));
    assert!(
        check.passed(),
        "{} {} at {m} x {k} x {n} in {split:?}: {check:?}",
        step.name(),
        T::NAME
    );
    u32::from(split.is_some())
}

/// Issue 41, item 2, and issue 65, item 1: steps 12 to 17 (Hopper's wgmma fed by TMA; 14 to 16 on
/// operands converted before their timed launches, 15 in clusters of two whose second block's tile
/// lies below C where C has an odd number of tile rows, 16 and 17 storing C by TMA where n % 4 == 0,
/// into the slabs too where they cut k, and from registers elsewhere) against the CPU, C poisoned before
/// each run: one element, k shorter than one stage and not a multiple of 4 (A copied into padded rows),
/// odd sizes everywhere, a k of 33 (a partial stage after a whole one), k of 36 and 4 (A read where it
/// is, in TF32, with a partial stage, ragged m and n, and less than one stage; not 1 x 4 x 1, whose
/// one element may cancel to far below its products' rounding in bf16), and a large square. Steps 12
/// and 17 meet all their tile shapes: step 12's 128 x 256 ones with A read in place and copied, step
/// 17's 256 x 128 ones and the narrow ones with A and B each read in place and copied, and more tiles
/// of each than multiprocessors. Sizes are m x k x n. On any GPU but an sm_90 running the sm_90a build, each step says it needs sm_90a, its
/// kernel is not in the module, and it does not run.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn hopper_steps_12_to_17_are_right_at_awkward_sizes_or_say_they_need_sm_90a() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let ladder = Ladder::load(&gpu).unwrap();
    let shapes = [
        (1, 1, 1),
        (17, 5, 33),
        (200, 70, 1999),
        (1000, 1001, 999),
        (129, 33, 257),
        (130, 36, 300),
        (64, 4, 96),
        (2048, 2048, 2048),
        // Step 12's 128 x 256 tiles with ragged edges (B^T made by its transpose, A read in place and
        // copied), and its narrow tiles with A copied and B read in place, and the other way round;
        // step 17's 256 x 128 tiles with each of A and B read in place or copied, and 153 of them
        // (more than an H100's or H200's 132 multiprocessors) with ragged edges.
        (1100, 36, 2000),
        (1100, 1001, 1999),
        (1100, 1001, 2000),
        (1100, 36, 1999),
        (2300, 64, 2170),
        (1000, 1001, 1000),
        (300, 516, 301),
        // 264 narrow tiles on an H100's 132 multiprocessors: blocks take a second tile.
        (1408, 300, 1536),
        // Split-K inside the step, C having too few tiles (on an H100: 2 slices in bf16 and none in
        // tf32, whose narrow tiles fill the GPU; 8 and 4, the last one shorter).
        (1024, 1024, 1024),
        (129, 2085, 257),
        // Split-K on 3 x 2 tiles: step 15's second pair has a tile below C; step 16 stores by TMA
        // into the slabs (n % 4 == 0).
        (300, 2085, 260),
    ];
    for step in [
        Step::WgmmaTf32,
        Step::WgmmaBf16,
        Step::WgmmaBf16Once,
        Step::WgmmaBf16Pair,
        Step::WgmmaBf16Stored,
        Step::WgmmaTf32Wide,
    ] {
        let mut random = Random::new(41);
        if let Some(why) = ladder.unavailable::<f32>(step) {
            assert!(why.starts_with("needs sm_90a (wgmma, TMA and setmaxnreg"), "{why}");
            assert!(
                !ladder.has_kernel::<f32>(step),
                "{} is unavailable but loaded",
                step.name()
            );
            let (a, b, mut c) = operands::<f32>((17, 5, 33), &mut random);
            assert!(run_step(&ladder, step, &a, &b, &mut c, 1).unwrap().is_none());
            assert!(
                ladder.arch() != 90 || !kernels::BUILT_ARCHS.contains(&90),
                "{}: an sm_90 GPU running a build for sm_90 must run it, not: {why}",
                step.name()
            );
            eprintln!("{}: not run: {why}", step.name());
            continue;
        }
        assert_eq!(ladder.arch(), 90, "{} runs on sm_90 only", step.name());
        if step.precision::<f32>() == Precision::Tf32 {
            let gemm = step.gemm().expect("a wgmma step runs a GEMM");
            let multiprocessors = gpu.info.multiprocessors;
            let tile = |(m, n): (usize, usize)| wgmma::tile(gemm, (m as u32, n as u32), multiprocessors);
            // In TF32 A is read in place where k % 4 == 0, and B where n % 4 == 0 on the tiles
            // computed as C^T (step 12's 128 x 256 ones read B^T, always a copy); the shapes above
            // meet each way, and have more tiles of each shape than multiprocessors.
            let tf32_reads: Vec<_> = shapes
                .iter()
                .map(|&(m, k, n)| {
                    let tile = tile((m, n));
                    (tile == gemm.large_tile(), k % 4 == 0, tile == wgmma::TILE || n % 4 == 0)
                })
                .collect();
            let mut wanted = vec![
                (true, true, true),
                (true, false, true),
                (false, true, true),
                (false, false, false),
                (false, true, false),
                (false, false, true),
            ];
            if gemm == WgmmaGemm::Tf32Wide {
                wanted.extend([(true, true, false), (true, false, false)]);
            }
            for read in wanted {
                assert!(tf32_reads.contains(&read), "{read:?}: {tf32_reads:?}");
            }
            for shape in [wgmma::NARROW_TILE, gemm.large_tile()] {
                assert!(
                    shapes.iter().any(|&(m, _, n)| {
                        tile((m, n)) == shape
                            && m.div_ceil(shape.0 as usize) * n.div_ceil(shape.1 as usize) > multiprocessors as usize
                    }) || shape == wgmma::TILE
                );
            }
        }
        let sliced = |sizes| {
            let launch = ladder.prepare::<f32>(step, sizes).unwrap().unwrap();
            launch.split().map(|split| split.slices)
        };
        // Every sm_90 GPU has 114 multiprocessors or more: 32 tiles of bf16's 128 x 256 leave most
        // idle, 128 do not; step 12's 128 narrow tiles at 1024 do not either.
        let (square, long, full) = (
            sliced((1024, 1024, 1024)),
            sliced((129, 2085, 257)),
            sliced((2048, 2048, 2048)),
        );
        let square_split = step.precision::<f32>() == Precision::Bf16;
        assert!(
            (square > Some(1)) == square_split && long > Some(1) && full.is_none(),
            "{}: {square:?} {long:?} {full:?}",
            step.name()
        );
        for (m, k, n) in shapes {
            let (a, b, mut c) = operands::<f32>((m, k, n), &mut random);
            run_step(&ladder, step, &a, &b, &mut c, 2).unwrap().unwrap();
            let check = step.precision::<f32>().judge(check_product(&a, &b, &c, &mut random));
            assert!(check.passed(), "{} at {m} x {k} x {n}: {check:?}", step.name());
            eprintln!("{} at {m} x {k} x {n}: max rel. error {:.1e}", step.name(), check.error);
        }
    }
}

/// Issue 24: cuBLAS in TF32 math really rounds (its error is TF32's, far above its own f32 GEMM's),
/// and the sweep's measurement runs and checks the best step and cuBLAS in every precision at an
/// awkward shape. Needs cuBLAS (the GPU machine's CUDA install).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn cublas_in_tf32_rounds_and_the_sweep_checks_every_precision() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let ladder = Ladder::load(&gpu).unwrap();
    let cublas = Cublas::load().expect("the ladder's tests need cuBLAS");
    let mut random = Random::new(24);
    let (a, b, mut c) = operands::<f32>((1024, 1024, 1024), &mut random);
    run_library(&cublas, Math::Default, &a, &b, &mut c, 1).unwrap();
    let f32_error = check_product(&a, &b, &c, &mut random).error;
    run_library(&cublas, Math::Tf32, &a, &b, &mut c, 1).unwrap();
    let tf32_error = check_product(&a, &b, &c, &mut random).error;
    assert!(
        f32_error < 1e-5 && tf32_error > 10.0 * f32_error && tf32_error < TF32_TOLERANCE,
        "f32 {f32_error:e}, tf32 {tf32_error:e}"
    );
    // bf16 keeps 3 bits fewer than TF32: its error is several times TF32's.
    run_library_in(&cublas, Precision::Bf16, &a, &b, &mut c, 1).unwrap();
    let bf16_error = check_product(&a, &b, &c, &mut random).error;
    assert!(
        bf16_error > 2.0 * tf32_error && bf16_error < BF16_TOLERANCE,
        "tf32 {tf32_error:e}, bf16 {bf16_error:e}"
    );

    let a64 = Matrix::<f64>::random(333, 517, &mut random).unwrap();
    let b64 = Matrix::<f64>::random(517, 261, &mut random).unwrap();
    for precision in Precision::ALL {
        let tools = (&ladder, Some(&cublas));
        let point = match precision {
            Precision::F64 => sweep::measure::<f64>(tools, precision, (&a64, &b64), 1, &mut random),
            Precision::F32 | Precision::Tf32 | Precision::Bf16 => {
                sweep::measure::<f32>(tools, precision, (&a64, &b64), 1, &mut random)
            }
        };
        let Some(point) = point.unwrap() else {
            // Step 0 runs everywhere; TF32 can have no step here (before sm_80, or a build without it),
            // bf16 none but on sm_90 (step 13).
            let first = Step::of_precision::<f32>(precision).first().copied();
            let why = first.and_then(|step| ladder.unavailable::<f32>(step));
            assert!(
                matches!(precision, Precision::Tf32 | Precision::Bf16) && why.is_some(),
                "no step of {precision} ran"
            );
            eprintln!("sweep: no {precision} step here: {}", why.unwrap_or_default());
            continue;
        };
        assert!(point.passed && point.library_tflops.is_some(), "{point:?}");
        assert_eq!((point.shape, point.precision), ((333, 517, 261), precision));
    }
}

/// Our kernels/cuda/mmm.cu, the solution that the tests below change into students' kernels.
fn our_mmm_cu() -> String {
    std::fs::read_to_string(common::testing::repository_file(
        "kernels/cuda/mmm.cu",
        env!("CARGO_MANIFEST_DIR"),
    ))
    .unwrap()
}

/// `lab-mmm --kernel-source FILE --kernel KERNEL --check`, as a student runs it (assignments/02, 03).
fn check(file: &str, kernel: &str) -> common::testing::Outcome {
    common::testing::check_kernel_source(
        "lab-mmm",
        env!("CARGO_BIN_EXE_lab-mmm"),
        env!("CARGO_MANIFEST_DIR"),
        file,
        &["--kernel", kernel],
    )
}

/// Issues 60 and 62: ncu failing on its own is the machine's. A stand-in for ncu runs the measured
/// program and writes no report. Under the grader (`--csv --mark`) week 3's measured rules are
/// MACHINE with the reason, the cases still pass, and the lab ends with exit code 3, not a FAULT. In
/// a student's own check (no mark: a laptop without counter access) the same rules are left to
/// grading, shown as "-", and everything else passing is exit code 0.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_ncu_failing_on_its_own_is_the_machines() {
    // ncu's options come first, then the program (the first executable file) and its arguments.
    let ncu = common::testing::temp_script(
        "ncu-without-report",
        "#!/bin/sh\nwhile [ $# -gt 0 ] && ! { [ -f \"$1\" ] && [ -x \"$1\" ]; }; do shift; done\nexec \"$@\"\n",
    );
    let lab = common::testing::lab_binary("lab-mmm", env!("CARGO_BIN_EXE_lab-mmm"));
    let file = common::testing::repository_file("kernels/cuda/mmm.cu", env!("CARGO_MANIFEST_DIR"));
    let key = "0123456789abcdef".repeat(4);
    let graded = common::testing::run_with_stdin_and_env(
        &lab,
        &[
            "--kernel-source",
            &file,
            "--kernel",
            "tiled",
            "--check",
            "--csv",
            "--mark",
        ],
        format!("{key}\n").as_bytes(),
        &[("NCU", ncu.as_str())],
    );
    let measured = |line: &str| line.split(',').filter(|field| *field == "MACHINE").count();
    assert!(
        graded.code == Some(3)
            && graded
                .stdout
                .lines()
                .nth(1)
                .is_some_and(|row| measured(row) == 3 && !row.contains("FAULT"))
            && graded.stderr.contains("not measured: ncu's counters could not be read"),
        "{graded:?}"
    );
    common::testing::assert_mark_vouches_for(&lab, &key, 3, &graded.stdout);
    let own = common::testing::check_kernel_source_with(
        "lab-mmm",
        env!("CARGO_BIN_EXE_lab-mmm"),
        env!("CARGO_MANIFEST_DIR"),
        "kernels/cuda/mmm.cu",
        &["--kernel", "tiled"],
        &[("NCU", ncu.as_str())],
    );
    let left_to_grading = |line: &&str| {
        line.contains("tiling, measured:") && line.contains("| - | not run (measured when the course grades it")
    };
    assert!(
        own.code == Some(0)
            && own.stdout.lines().filter(left_to_grading).count() == 3
            && !own.stdout.contains("| FAULT |")
            && !own.stdout.contains("| MACHINE |")
            && own
                .stdout
                .contains("all 15 checks that ran here pass; 3 measured rules did not run on this machine"),
        "{own:?}"
    );
}

/// Issue 65, item 3: with `LAB_PHASES` naming a file, week 3's check appends its line and each
/// measured child (ncu around the lab) one of its own, named `(measured)`: its context, its turn
/// with ncu, ncu's first launch (of a kernel of ours, where ncu prepares its counters), modules,
/// inputs and launches, with its wait for the GPU and its hold of it. With no lock named, and with
/// one as grade.sh names it: then the student's kernels are measured in a batch
/// (`grading::ncu_batch`), here of one, whose line is `batch of 1 (measured)`, and ours may be
/// measured by a child of its own, a second such line.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_each_measured_child_appends_its_own_phases() {
    let lock = common::testing::temp_file("measured-phases-gpu.lock", "");
    for (name, named) in [
        ("measured-phases-no-lock.txt", None),
        ("measured-phases-lock.txt", Some(&lock)),
    ] {
        let phases = common::testing::temp_file(name, "");
        let mut env = vec![("LAB_PHASES", phases.as_str())];
        env.extend(named.map(|lock| ("LAB_GPU_LOCK", lock.as_str())));
        let run = common::testing::check_kernel_source_with(
            "lab-mmm",
            env!("CARGO_BIN_EXE_lab-mmm"),
            env!("CARGO_MANIFEST_DIR"),
            "kernels/cuda/mmm.cu",
            &["--kernel", "tiled"],
            &env,
        );
        assert_eq!(run.code, Some(0), "{run:?}");
        let written = std::fs::read_to_string(&phases).unwrap_or_default();
        let (measured, checks): (Vec<&str>, Vec<&str>) =
            written.lines().partition(|line| line.contains(" (measured): "));
        let parts = [
            "context ",
            "ncu's turn ",
            "ncu's first launch ",
            "modules ",
            "inputs ",
            " launches ",
            "waited for the GPU ",
            "held it alone ",
        ];
        let batched = measured.iter().any(|line| line.starts_with("batch of 1 (measured): "));
        assert!(
            checks.len() == 1
                && checks[0].starts_with("mmm.cu: ")
                && (1..=2).contains(&measured.len())
                && measured.iter().all(|line| parts.iter().all(|part| line.contains(part)))
                && batched == named.is_some(),
            "{written}"
        );
    }
}

/// Issue 65, item 3: checks that share a GPU (a lock named, as grade.sh names it) and measure at the
/// same time are measured by one ncu process (`grading::ncu_batch`), and each one's measured rows
/// are those of its check alone on the GPU: an honest kernel, a naive body, loads through generic
/// pointers, a kernel that traps (which ends its batch: it is measured alone, and the others run
/// again), and ours.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_checks_measured_in_one_batch_get_the_rows_they_get_alone() {
    let files = [
        "assignments/03-mmm-tiled/honest/flat-tiles.cu",
        "assignments/03-mmm-tiled/broken/naive-body-in-tiled.cu",
        "assignments/03-mmm-tiled/adversarial/generic-pointers.cu",
        "assignments/03-mmm-tiled/broken/traps.cu",
        "kernels/cuda/mmm.cu",
    ];
    let measured_rows = |env: &[(&str, &str)], file: &str| {
        let run = common::testing::check_kernel_source_with(
            "lab-mmm",
            env!("CARGO_BIN_EXE_lab-mmm"),
            env!("CARGO_MANIFEST_DIR"),
            file,
            &["--kernel", "tiled"],
            env,
        );
        // A FAULT's reason quotes how its run ended, which may name its folder: its verdict alone.
        let rows: Vec<String> = run
            .stdout
            .lines()
            .filter(|line| line.contains("tiling, measured:"))
            .map(|line| match line.contains("| FAULT |") {
                true => line.split("| FAULT |").next().unwrap_or_default().to_string() + "| FAULT |",
                false => line.to_string(),
            })
            .collect();
        assert_eq!(rows.len(), 3, "{file}: {run:?}");
        rows
    };
    let alone: Vec<Vec<String>> = files.iter().map(|file| measured_rows(&[], file)).collect();
    let lock = common::testing::temp_file("batch-gpu.lock", "");
    let phases = common::testing::temp_file("batch-phases.txt", "");
    let env = [("LAB_GPU_LOCK", lock.as_str()), ("LAB_PHASES", phases.as_str())];
    let together: Vec<Vec<String>> = std::thread::scope(|scope| {
        let checks: Vec<_> = files
            .iter()
            .map(|file| scope.spawn(|| measured_rows(&env, file)))
            .collect();
        checks.into_iter().map(|check| check.join().unwrap()).collect()
    });
    let written = std::fs::read_to_string(&phases).unwrap_or_default();
    for ((file, alone), together) in files.iter().zip(&alone).zip(&together) {
        assert_eq!(alone, together, "{file}\n{written}");
    }
    // The five checks' cases end within seconds of each other (run 60: a batch of 4), so their
    // measured runs meet in a batch of two or more.
    let largest = written
        .lines()
        .filter_map(|line| line.strip_prefix("batch of ")?.split(' ').next()?.parse::<usize>().ok())
        .max();
    assert!(largest >= Some(2), "no batch of two or more:\n{written}");
    eprintln!("{written}");
}

/// With --csv, stdout is the CSV alone, a header and one row (grade.sh takes nothing else): a
/// passing solution's verdict line once followed the row there, and grade.sh then called every
/// passing submission "no result".
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_csv_is_the_header_and_one_row_and_nothing_else() {
    for file in ["kernels/cuda/mmm.cu", "assignments/03-mmm-tiled/mmm.cu"] {
        let csv = check_with(file, "tiled", &["--csv"]);
        let lines: Vec<&str> = csv.stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{csv:?}");
        // Week 3's two rules read from the code come first, its three measured ones next, then the
        // twelve cases.
        assert!(
            lines[0].starts_with("file,\"tiles: ")
                && lines[0].contains(",\"tiling, measured: global loads per element of C (ncu)\",")
                && lines[0].contains(",\"mmm f64, 1 x 1 times 1 x 1\","),
            "{csv:?}"
        );
        // The template computes nothing: it loads nothing (from global memory, or through generic
        // pointers), and fails the rest.
        let passed = if file.starts_with("kernels") {
            ",18/18,"
        } else {
            ",2/18,"
        };
        assert!(lines[1].contains(passed), "{csv:?}");
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn weeks_2_and_3_the_solution_passes_and_the_templates_fail() {
    for (kernel, template) in [
        ("naive", "assignments/02-mmm-ab/mmm.cu"),
        ("tiled", "assignments/03-mmm-tiled/mmm.cu"),
    ] {
        // Week 3 adds its three rules (tiles, barrier, loads) and three measured ones to the twelve cases.
        let rows = if kernel == "tiled" { 18 } else { 12 };
        let solution = check("kernels/cuda/mmm.cu", kernel);
        assert_eq!(solution.code, Some(0), "{solution:?}");
        assert!(
            solution
                .stdout
                .contains(&format!("Solution is correct: all {rows} cases pass")),
            "{solution:?}"
        );
        let template = check(template, kernel);
        assert_eq!(template.code, Some(1), "{template:?}");
        // The tiled template loads nothing: the rule on generic loads and the measured one on global
        // loads pass.
        let failed = if kernel == "tiled" { rows - 2 } else { rows };
        assert!(
            template.stderr.contains(&format!("{failed} of {rows} cases failed")),
            "{template:?}"
        );
        let row = common::testing::check_row(&template.stdout, "f64, 17 x 33 times 33 x 5");
        assert!(
            row.contains("| FAIL | 85 of 85 | C(0, 0) | never written |")
                && row.contains("block (0, 0), thread (0, 0)"),
            "{row}"
        );
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_2_broken_kernels_are_caught() {
    // b(col, k) for b(k, col): wrong from the first element on, on any B that is not symmetric.
    let swapped = check("assignments/02-mmm-ab/broken/swapped-indices.cu", "naive");
    assert_eq!(swapped.code, Some(1), "{swapped:?}");
    let row = common::testing::check_row(&swapped.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(
        row.contains("| FAIL |") && row.contains("| C(0, 0) |") && !row.contains("never written"),
        "{row}"
    );
    // No bounds check: threads outside C write into the next rows of C (or past it), with sums of
    // elements read past A and B.
    let unbounded = check("assignments/02-mmm-ab/broken/missing-bounds-check.cu", "naive");
    assert_eq!(unbounded.code, Some(1), "{unbounded:?}");
    let row = common::testing::check_row(&unbounded.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(row.contains("| FAIL |") || row.contains("| FAULT |"), "{row}");
    assert!(!unbounded.stderr.contains("panicked"), "{unbounded:?}");
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_broken_kernels_are_caught() {
    let unsynchronized = check("assignments/03-mmm-tiled/broken/missing-syncthreads.cu", "tiled");
    assert_eq!(unsynchronized.code, Some(1), "{unsynchronized:?}");
    assert!(
        common::testing::check_row(&unsynchronized.stdout, "f64, 1000 x 999").contains("| FAIL |"),
        "{unsynchronized:?}"
    );
    // The tile loop stops before the last, partial tile: only a k that is no multiple of 16 notices.
    let past = check("assignments/03-mmm-tiled/broken/off-by-one-bound.cu", "tiled");
    assert_eq!(past.code, Some(1), "{past:?}");
    assert!(
        common::testing::check_row(&past.stdout, "f64, 64 x 64 times").contains("| PASS |"),
        "{past:?}"
    );
    let row = common::testing::check_row(&past.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(row.contains("| FAIL |") && row.contains("| C(0, 0) |"), "{row}");
    let swapped = check("assignments/03-mmm-tiled/broken/swapped-tile-indices.cu", "tiled");
    assert_eq!(swapped.code, Some(1), "{swapped:?}");
    assert!(
        common::testing::check_row(&swapped.stdout, "f64, 64 x 64 times").contains("| FAIL |"),
        "{swapped:?}"
    );
}

/// `lab-mmm --kernel-source FILE --kernel KERNEL --check` with more flags (`--sanitize`, `--show-output`).
fn check_with(file: &str, kernel: &str, flags: &[&str]) -> common::testing::Outcome {
    let mut extra = vec!["--kernel", kernel];
    extra.extend(flags);
    common::testing::check_kernel_source(
        "lab-mmm",
        env!("CARGO_BIN_EXE_lab-mmm"),
        env!("CARGO_MANIFEST_DIR"),
        file,
        &extra,
    )
}

/// Issue 21: a kernel's printf is output, never a result, however much of it there is.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_forged_result_row_is_only_output() {
    let forged = check("assignments/03-mmm-tiled/broken/fake-result-row.cu", "tiled");
    assert_eq!(forged.code, Some(1), "{forged:?}");
    assert!(forged.stderr.contains(" of 18 cases failed"), "{forged:?}");
    let row = common::testing::check_row(&forged.stdout, "f64, 1 x 1 times 1 x 1");
    assert!(row.contains("| FAIL | 1 of 1 | C(0, 0) | never written |"), "{row}");
    // Its line is shown under the table as what the failing case printed.
    assert!(
        forged.stdout.contains("stdout of case \"mmm f64, 1 x 1 times 1 x 1\"")
            && forged.stdout.contains("CHECK-ROW\tmmm f64, 1 x 1 times 1 x 1\t0\t1"),
        "{forged:?}"
    );
}

/// Issue 21: a correct kernel that prints from every block, as students debug, passes the week's
/// cases (it once stalled on a full pipe and was called an endless loop).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_correct_kernel_that_prints_from_every_block_passes() {
    let chatty = check("assignments/03-mmm-tiled/broken/printf-every-block.cu", "tiled");
    assert_eq!(chatty.code, Some(0), "{chatty:?}");
    assert!(
        chatty.stdout.contains("Solution is correct: all 18 cases pass"),
        "{chatty:?}"
    );
}

/// Issue 21: one that prints from every thread too: megabytes a case, far past a pipe's 64 KiB and
/// the GPU's 1 MiB printf buffer. Printing a million lines per launch takes seconds on the GPU, so
/// the cases stop at 255 x 257 x 256 (65280 lines a launch). `--show-output` shows it, cut to the
/// first 100 and last 20 lines with the count of the rest.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_correct_kernel_that_prints_from_every_thread_passes() {
    let cases = common::testing::temp_file("chatty-cases.txt", "1 1 1 f64 1\n100 7 129 f32 2\n255 257 256 f64 3\n");
    let shown = check_with(
        "assignments/03-mmm-tiled/broken/printf-every-thread.cu",
        "tiled",
        &["--cases", &cases, "--show-output"],
    );
    assert_eq!(shown.code, Some(0), "{shown:?}");
    assert!(
        shown.stdout.contains("Solution is correct: all 9 cases pass"),
        "{shown:?}"
    );
    assert!(
        shown
            .stdout
            .contains("stdout of case \"mmm f64, 255 x 257 times 257 x 256\""),
        "{shown:?}"
    );
    assert!(
        shown.stdout.contains("more lines ...]") && shown.stdout.contains(": c("),
        "{shown:?}"
    );
}

/// A submission that runs far longer than its limit (every thread printing, at the week's
/// million-element cases) ends at --time-limit, as grade.sh runs it: the case running then and the
/// cases after it are FAULTs that say so, and no case of the run is lost from the table. The limit is
/// a quarter of the whole check's time on an H200: 21.6 s (issue 65, run 58), where a limit of 20 s
/// no longer cut it.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_time_limit_ends_a_check_that_runs_far_past_it() {
    let limited = check_with(
        "assignments/03-mmm-tiled/broken/printf-every-thread.cu",
        "tiled",
        &["--time-limit", "5"],
    );
    assert_eq!(limited.code, Some(1), "{limited:?}");
    assert!(limited.stdout.contains("--time-limit of 5 s"), "{limited:?}");
    let last = common::testing::check_row(&limited.stdout, "f32, 1000 x 999 times 999 x 1001");
    assert!(
        last.contains("| FAULT |") && last.contains("--time-limit of 5 s"),
        "{last}"
    );
    assert!(
        common::testing::check_row(&limited.stdout, "f64, 1 x 1 times 1 x 1").contains("| PASS |"),
        "{limited:?}"
    );
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_writes_outside_c_or_into_a_fail_and_say_where() {
    let past = check("assignments/03-mmm-tiled/broken/writes-past-c.cu", "tiled");
    assert_eq!(past.code, Some(1), "{past:?}");
    assert!(past.stderr.contains("12 of 18 cases failed"), "{past:?}");
    for case in [
        "f64, 1 x 1 times 1 x 1",
        "f64, 17 x 33 times 33 x 5",
        "f32, 1000 x 999 times 999 x 1001",
    ] {
        let row = common::testing::check_row(&past.stdout, case);
        assert!(
            row.contains("| FAIL | 0 of ") && row.contains("written outside C: C[m*n + 40], 40 elements past the end"),
            "{row}"
        );
    }
    let into_a = check("assignments/03-mmm-tiled/broken/writes-into-a.cu", "tiled");
    assert_eq!(into_a.code, Some(1), "{into_a:?}");
    let row = common::testing::check_row(&into_a.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(
        row.contains("| FAIL |") && row.contains("A(3, 7) was changed: 0.000000000000e0 instead of"),
        "{row}"
    );
    // A has no element (3, 7) in a 1 x 1 product: nothing to change there.
    assert!(
        common::testing::check_row(&into_a.stdout, "f64, 1 x 1 times 1 x 1").contains("| PASS |"),
        "{into_a:?}"
    );
}

/// Issue 21: a NaN the kernel wrote is a NaN; "never written" needs both poisons to stay.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_nan_the_kernel_wrote_is_not_called_never_written() {
    let nan = check("assignments/03-mmm-tiled/broken/writes-nan.cu", "tiled");
    assert_eq!(nan.code, Some(1), "{nan:?}");
    for case in ["f64, 17 x 33 times 33 x 5", "f32, 17 x 33 times 33 x 5"] {
        let row = common::testing::check_row(&nan.stdout, case);
        assert!(row.contains("| FAIL | 1 of 85 | C(0, 0) | NaN |"), "{row}");
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_kernel_that_traps_faults_every_case_and_the_others_still_run() {
    let trapped = check("assignments/03-mmm-tiled/broken/traps.cu", "tiled");
    assert_eq!(trapped.code, Some(1), "{trapped:?}");
    // The measured run traps too: its three rules are faults that say so.
    assert!(trapped.stderr.contains("15 of 18 cases failed"), "{trapped:?}");
    assert!(
        common::testing::check_row(&trapped.stdout, "tiling, measured: global loads")
            .contains("| FAULT | not measured: the measured run under ncu failed"),
        "{trapped:?}"
    );
    for case in ["f64, 1 x 1 times 1 x 1", "f32, 1000 x 999 times 999 x 1001"] {
        assert!(
            common::testing::check_row(&trapped.stdout, case).contains("| FAULT |"),
            "{trapped:?}"
        );
    }
}

/// Issue 39: the cases run one after another in a child, and a new child takes over after a case
/// that faults. A kernel that traps in the 17 x 33 x 5 cases alone fails those two; every other case,
/// the ones right after them included, passes; and each case's output (the kernel prints its sizes)
/// is its own, never its neighbour's.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_case_that_faults_ends_its_child_and_the_cases_after_it_still_pass() {
    let ours = our_mmm_cu();
    let loop_start = "    T sum = 0;\n    for (int tile = 0;";
    assert_eq!(ours.matches(loop_start).count(), 1, "the tiled kernel's loop moved");
    let traps = "    if (tx == 0 && ty == 0 && blockIdx.x == 0 && blockIdx.y == 0) printf(\"sizes %d %d %d\\n\", a.rows, a.cols, b.cols);\n    if (a.rows == 17 && row == 0 && col == 0) __trap();\n";
    let file = common::testing::temp_file(
        "traps-on-17.cu",
        &ours.replace(loop_start, &format!("{traps}{loop_start}")),
    );
    let checked = check_with(&file, "tiled", &["--show-output"]);
    assert_eq!(checked.code, Some(1), "{checked:?}");
    assert!(checked.stderr.contains("2 of 18 cases failed"), "{checked:?}");
    for precision in ["f64", "f32"] {
        let case = |sizes: &str| format!("mmm {precision}, {sizes}");
        assert!(
            common::testing::check_row(&checked.stdout, &case("17 x 33 times 33 x 5")).contains("| FAULT |"),
            "{checked:?}"
        );
        for (sizes, printed) in [
            ("1 x 1 times 1 x 1", "sizes 1 1 1"),
            ("100 x 7 times 7 x 129", "sizes 100 7 129"),
            ("1000 x 999 times 999 x 1001", "sizes 1000 999 1001"),
        ] {
            assert!(
                common::testing::check_row(&checked.stdout, &case(sizes)).contains("| PASS |"),
                "{checked:?}"
            );
            let output = checked
                .stdout
                .split(&format!("stdout of case \"{}\"", case(sizes)))
                .nth(1)
                .unwrap_or_else(|| panic!("no output of {sizes}: {checked:?}"));
            let own = output.split("stdout of case").next().unwrap_or_default();
            assert!(
                own.contains(printed)
                    && own
                        .lines()
                        .filter(|line| line.starts_with("sizes"))
                        .all(|line| line == printed),
                "{sizes}: {own}"
            );
        }
    }
}

/// A kernel that calls `malloc` runs each case in a child of its own (the device heap outlives the
/// module, so it would reach the next case): a correct one whose first block allocates and frees in
/// every launch passes every case, and so does one whose first block leaks 64 KiB per launch: a few
/// MB of the 8 MB heap in a case, which with the twelve cases in one child would run out and trap.
/// (A malloc in every block is no test of the heap: the allocator reads its own state from global
/// memory, 34 loads per element of C at 255 x 257 x 256 on an H200, which week 3's measured tiling
/// rule counts as the kernel's.)
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_kernel_that_calls_malloc_runs_each_case_on_a_heap_of_its_own() {
    let ours = our_mmm_cu();
    let loop_start = "    T sum = 0;\n    for (int tile = 0;";
    let first_block_frees =
        "if (tx == 0 && ty == 0 && blockIdx.x == 0 && blockIdx.y == 0) { void* scratch = malloc(16); \
         if (scratch == nullptr) __trap(); free(scratch); }";
    let first_block_leaks =
        "if (tx == 0 && ty == 0 && blockIdx.x == 0 && blockIdx.y == 0) { if (malloc(1 << 16) == nullptr) __trap(); }";
    for (name, heap) in [("frees", first_block_frees), ("leaks", first_block_leaks)] {
        let body = format!("    {heap}\n{loop_start}");
        let file = common::testing::temp_file(&format!("malloc-{name}.cu"), &ours.replace(loop_start, &body));
        let checked = check_with(&file, "tiled", &[]);
        assert_eq!(checked.code, Some(0), "{name}: {checked:?}");
        assert!(
            checked.stdout.contains("Solution is correct: all 18 cases pass"),
            "{name}: {checked:?}"
        );
    }
}

/// Issues 21 and 41: `--sanitize` on the week's own cases. Racecheck and synccheck leave out the two
/// 1000 x 999 x 1001 cases (over 2^25 multiply-adds; the heading says so), and still report the
/// missing second barrier on every case within the budget whose K spans more than one tile (a single
/// tile has no next tile to overwrite it); the write past C and the read past B fail the case where
/// the plain check does, memcheck on every case; the solution passes.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_under_sanitize_the_weeks_cases_still_find_the_race_and_the_accesses_past() {
    let heading = "under compute-sanitizer: racecheck and synccheck on 10 of 12 cases (those within 2^25 multiply-adds; of a kernel with none within it, its smallest), memcheck on all";
    let solution = check_with("kernels/cuda/mmm.cu", "tiled", &["--sanitize"]);
    assert_eq!(solution.code, Some(0), "{solution:?}");
    assert!(solution.stdout.contains(heading), "{solution:?}");
    let racy = check_with(
        "assignments/03-mmm-tiled/broken/missing-second-syncthreads.cu",
        "tiled",
        &["--sanitize"],
    );
    assert_eq!(racy.code, Some(1), "{racy:?}");
    for precision in ["f64", "f32"] {
        for sides in [
            "17 x 33 times 33 x 5",
            "64 x 64 times 64 x 64",
            "255 x 257 times 257 x 256",
        ] {
            let row = common::testing::check_row(&racy.stdout, &format!("{precision}, {sides}"));
            assert!(
                row.contains("| FAIL |") && row.contains("racecheck: shared-memory hazard"),
                "{row}"
            );
        }
    }
    for (file, case, finding) in [
        (
            "broken/writes-past-c.cu",
            "f64, 17 x 33 times 33 x 5",
            "elements past the end",
        ),
        (
            "broken/writes-past-c.cu",
            "f32, 1000 x 999 times 999 x 1001",
            "elements past the end",
        ),
        (
            "adversarial/reads-past-b.cu",
            "f64, 1 x 1 times 1 x 1",
            "read outside B",
        ),
        (
            "adversarial/reads-past-b.cu",
            "f32, 1000 x 999 times 999 x 1001",
            "read outside B",
        ),
    ] {
        let past = check_with(&format!("assignments/03-mmm-tiled/{file}"), "tiled", &["--sanitize"]);
        assert_eq!(past.code, Some(1), "{file}: {past:?}");
        let row = common::testing::check_row(&past.stdout, case);
        assert!(row.contains("| FAIL |") && row.contains(finding), "{file}: {row}");
    }
}

/// Issue 61: a plain `--check` runs racecheck and synccheck on its smallest case whose K spans two
/// tiles, so a missing second barrier fails without `--sanitize`, even where every value came out
/// right; the solution passes and the heading names the case.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_plain_check_finds_a_missing_barrier_on_its_race_case() {
    let racy = check("assignments/03-mmm-tiled/broken/missing-second-syncthreads.cu", "tiled");
    assert_eq!(racy.code, Some(1), "{racy:?}");
    let row = common::testing::check_row(&racy.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(
        row.contains("| FAIL |") && row.contains("racecheck: shared-memory hazard"),
        "{row}"
    );
    let heading = "racecheck and synccheck on \"mmm f64, 17 x 33 times 33 x 5\" too";
    assert!(racy.stdout.contains(heading), "{racy:?}");
    let solution = check("kernels/cuda/mmm.cu", "tiled");
    assert_eq!(solution.code, Some(0), "{solution:?}");
    assert!(solution.stdout.contains(heading), "{solution:?}");
}

/// Issue 21: our own calls give compute-sanitizer nothing to report, and the solution passes under
/// it; a write past C is found there too (by the guard zones, which memcheck cannot see into). On
/// awkward cases of up to 255 x 257 x 256, so that all three tools finish in seconds
/// (`gpu-bundle/time-checks.sh` times the week's own cases under `--sanitize`).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn weeks_2_and_3_the_solution_passes_under_compute_sanitizer() {
    let cases = common::testing::temp_file(
        "sanitize-cases.txt",
        "1 1 1 f64 1\n17 33 5 f64 2\n100 7 129 f32 3\n255 257 256 f64 4\n",
    );
    for kernel in ["naive", "tiled"] {
        let solution = check_with("kernels/cuda/mmm.cu", kernel, &["--sanitize", "--cases", &cases]);
        assert_eq!(solution.code, Some(0), "{solution:?}");
        let rows = if kernel == "tiled" { 10 } else { 4 }; // the four cases, and week 3's three rules and three measured ones
        assert!(
            solution
                .stdout
                .contains(&format!("Solution is correct: all {rows} cases pass")),
            "{solution:?}"
        );
        assert!(solution.stdout.contains("under compute-sanitizer"), "{solution:?}");
    }
    let past = check_with(
        "assignments/03-mmm-tiled/broken/writes-past-c.cu",
        "tiled",
        &["--sanitize", "--cases", &cases],
    );
    let row = common::testing::check_row(&past.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(
        row.contains("| FAIL |") && row.contains("40 elements past the end"),
        "{row}"
    );
}

/// Issue 21: hidden cases from a file, named in the CSV by their hash.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_hidden_cases_run_from_a_file() {
    let cases = common::testing::temp_file(
        "hidden-cases.txt",
        "# M K N PRECISION SEED\n31 47 19 f64 5\n300 17 1 f32 6\n",
    );
    let hidden = check_with("kernels/cuda/mmm.cu", "tiled", &["--cases", &cases, "--csv"]);
    assert_eq!(hidden.code, Some(0), "{hidden:?}");
    let lines: Vec<&str> = hidden.stdout.lines().collect();
    assert!(lines[0].ends_with(",\"mmm f64, 31 x 47 times 47 x 19\",\"mmm f32, 300 x 17 times 17 x 1\",passed,time ratio,flags,note,case set"), "{hidden:?}");
    assert!(
        lines[1].contains(",PASS,PASS,PASS,PASS,PASS,PASS,PASS,PASS,8/8,"),
        "{hidden:?}"
    );
}

/// Issue 29: the naive body in the tiled kernel gives right values and fails week 3's two rules only.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_the_naive_body_in_the_tiled_kernel_fails_the_rules_only() {
    let naive = check("assignments/03-mmm-tiled/broken/naive-body-in-tiled.cu", "tiled");
    assert_eq!(naive.code, Some(1), "{naive:?}");
    // The two rules read from the code, and the three measured, on the smallest case measured
    // (issue 61: every case whose size tells): 2 K = 128 global loads per element, none from shared
    // memory, no shared memory at all.
    assert!(naive.stderr.contains("5 of 18 cases failed"), "{naive:?}");
    assert!(
        common::testing::check_row(&naive.stdout, "tiling, measured: global loads")
            .contains("| FAIL | 1 of 1 | mmm_f64 at 64 x 64 x 64 | 128.0 |"),
        "{naive:?}"
    );
    assert!(
        common::testing::check_row(&naive.stdout, "tiles: ")
            .contains("| FAIL | 2 of 2 | mmm_f64 | 0 bytes of shared memory |"),
        "{naive:?}"
    );
    assert!(
        common::testing::check_row(&naive.stdout, "barrier: ")
            .contains("| FAIL | 2 of 2 | mmm_f64 | no __syncthreads() |"),
        "{naive:?}"
    );
    assert!(
        common::testing::check_row(&naive.stdout, "f64, 17 x 33 times 33 x 5").contains("| PASS |"),
        "{naive:?}"
    );
}

/// Issue 39: every kernel of week 3's red-team corpus gets the verdict its header promises, the
/// measured rules (ncu) included.
#[test]
#[ignore = "needs a GPU and ncu (gpu-bundle/run.sh)"]
fn the_week_3_red_team_gets_its_verdicts() {
    common::testing::assert_red_team(
        "03-mmm-tiled",
        "lab-mmm",
        env!("CARGO_BIN_EXE_lab-mmm"),
        env!("CARGO_MANIFEST_DIR"),
        &["--kernel", "tiled"],
        false,
    );
}

/// Issue 45: a student cannot pass for the machine. A kernel that prints the words of a MACHINE row
/// and then traps, and a file whose module asks for more GPU memory than there is, get the student's
/// verdicts (FAULT, or a compile error) and exit code 1, never MACHINE or exit code 3: MACHINE comes
/// only from the lab's own steps before the student's module is loaded.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_kernel_that_makes_the_machine_look_broken_gets_no_machine_verdict() {
    let ours = our_mmm_cu();
    let honest = "extern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm(a, b, c); }";
    let liar = "extern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { \
                printf(\"CHECK-ROW\\tmmm f64, 1 x 1 times 1 x 1\\tmachine\\tno GPU\\nlab-mmm: error: machine: no usable CUDA GPU\\n\"); asm(\"trap;\"); }";
    let hog = format!(
        "__device__ char hog[1ull << 40];\n{}",
        ours.replacen(
            honest,
            &format!("{honest}\n__global__ void touch() {{ hog[threadIdx.x] = 1; }}"),
            1
        )
    );
    for (name, text) in [
        ("says-machine.cu", ours.replacen(honest, liar, 1)),
        ("hogs-memory.cu", hog),
    ] {
        let file = common::testing::temp_file(name, &text);
        let lab = common::testing::lab_binary("lab-mmm", env!("CARGO_BIN_EXE_lab-mmm"));
        let outcome = common::testing::run(
            &lab,
            &["--kernel-source", &file, "--kernel", "tiled", "--check", "--csv"],
        );
        assert_eq!(outcome.code, Some(1), "{name}: {outcome:?}");
        assert!(
            !outcome.stdout.contains("MACHINE") && !outcome.stdout.contains("\"machine: "),
            "{name}: {outcome:?}"
        );
    }
}

/// The lab's own run (no --check) checks each C while the GPU runs the next kernel (issue 41): each
/// verdict lands on its own kernel's row. mmm_ab is ours, mmm is ours with one element of C off by one;
/// at an exact size (every element compared) and at one past 1024^3 multiply-adds (Freivalds' test
/// and samples), the table says PASS, FAIL, PASS, FAIL and the lab fails.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_labs_run_puts_each_kernels_verdict_on_its_own_row() {
    let ours = our_mmm_cu();
    let store = "c(row, col) = sum;";
    let last = ours.rfind(store).expect("mmm.cu stores C");
    let off_by_one = format!(
        "{}c(row, col) = (row == c.rows / 2 && col == c.cols / 3) ? sum + T(1) : sum;{}",
        &ours[..last],
        &ours[last + store.len()..]
    );
    let file = common::testing::temp_file("one-element-off.cu", &off_by_one);
    let lab = common::testing::lab_binary("lab-mmm", env!("CARGO_BIN_EXE_lab-mmm"));
    for size in [["100", "70", "129"], ["1100", "1000", "1000"]] {
        let mut flags = vec!["--kernel-source", &file, "--block-size", "16", "--size"];
        flags.extend(size);
        let outcome = common::testing::run(&lab, &flags);
        assert_eq!(outcome.code, Some(1), "{size:?}: {outcome:?}");
        let verdicts: Vec<(&str, &str, &str)> = outcome
            .stdout
            .lines()
            .filter(|line| line.starts_with("| mmm"))
            .map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                (cells[1], cells[2], cells[9])
            })
            .collect();
        assert_eq!(
            verdicts,
            [
                ("mmm-ab", "f64", "PASS"),
                ("mmm", "f64", "FAIL"),
                ("mmm-ab", "f32", "PASS"),
                ("mmm", "f32", "FAIL")
            ],
            "{size:?}: {outcome:?}"
        );
        assert!(
            outcome.stderr.contains("2 of 4 products differ from the CPU"),
            "{size:?}: {outcome:?}"
        );
    }
}

/// Issues 66 and 61: random cases from weeks 2 and 3's legal space (sides 1 to 8192, f64 or f32; the
/// draws keep M x K x N within 2^27 so that the CPU's products take seconds): our kernels pass every
/// one, naive and tiled, the measured rules included, and so does each kernel of the week's honest
/// corpus (`assignments/<week>/honest/`), on the week's own cases too. The seed is printed with a
/// failure (`LAB_LEGAL_SEED` draws the same cases again, `LAB_LEGAL_CASES` more of them).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn weeks_2_and_3_random_legal_cases_pass_our_kernels_and_the_honest_corpus() {
    use common::testing::{assert_passes_cases, legal_case_count, legal_lines, legal_seed, log_uniform};
    let seed = legal_seed();
    let mut random = Random::new(seed);
    let lab = common::testing::lab_binary("lab-mmm", env!("CARGO_BIN_EXE_lab-mmm"));
    for kernel in ["naive", "tiled"] {
        let lines = legal_lines(&lab, &["--kernel", kernel], legal_case_count(8), || {
            let (m, k) = (log_uniform(&mut random, 8192), log_uniform(&mut random, 8192));
            let n = log_uniform(&mut random, ((1u64 << 27) / (m * k)).clamp(1, 8192));
            let precision = ["f64", "f32"][random.below(2) as usize];
            format!("{m} {k} {n} {precision} {}", random.next_u64())
        });
        let check = |file: &str, extra: &[&str]| check_with(file, kernel, extra);
        assert_passes_cases(seed, "kernels/cuda/mmm.cu", &[], &lines, check);
        let week = if kernel == "naive" { "02-mmm-ab" } else { "03-mmm-tiled" };
        for file in common::testing::honest_kernels(week, env!("CARGO_MANIFEST_DIR")) {
            let default = check(&file, &[]);
            assert!(
                default.code == Some(0) && default.stdout.contains("Solution is correct"),
                "{file}: {default:?}"
            );
            assert_passes_cases(seed, &file, &[], &lines, check);
        }
    }
}

/// Issue 62 (every legal case): our kernels pass the corners of weeks 2 and 3's legal case space
/// (`tests/corners.txt`: the largest product and sides, the thinnest shapes), naive and tiled, which
/// random draws seldom reach. The CLI tests keep every line legal.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn weeks_2_and_3_the_corners_of_the_legal_case_space_pass_ours() {
    let corners = common::testing::case_lines(include_str!("corners.txt"));
    for kernel in ["naive", "tiled"] {
        let check = |file: &str, extra: &[&str]| check_with(file, kernel, extra);
        common::testing::assert_passes_cases(0, "kernels/cuda/mmm.cu", &[], &corners, check);
    }
}

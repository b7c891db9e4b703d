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

/// Weeks 2 and 3 (assignments/02-mmm-ab, 03-mmm-tiled): students' kernels through `--check`, and
/// grading's measured rules; in one test executable with the kernels' tests (`gpu-bundle.sh` takes
/// each package's `tests/gpu.rs`).
mod weeks;

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

/// Issue 41, item 2, and issue 65, item 1: steps 12 to 18 (Hopper's wgmma fed by TMA; 14 to 16 and 18
/// on operands converted before their timed launches, 15 in clusters of two whose second block's tile
/// lies below C where C has an odd number of tile rows, 16 to 18 storing C by TMA where n % 4 == 0,
/// into the slabs too where they cut k, and from registers elsewhere; 18 sharing the last round's
/// tiles out along k, three launches in a row, each of which must find the counts its launch before
/// left at zero) against the CPU, C poisoned before
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
fn hopper_steps_12_to_18_are_right_at_awkward_sizes_or_say_they_need_sm_90a() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let ladder = Ladder::load(&gpu).unwrap();
    let multiprocessors = gpu.info.multiprocessors;
    let mut shapes = vec![
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
        // Step 18 sharing out the last round (18 x 9 = 162 tiles, 30 left after 132 on an H100 or
        // H200, 48 after 114 on an H100 PCIe; of 63 stages: on 132, runs of 14 to 15, a tile in
        // pieces from up to six blocks) with ragged edges, stored by TMA and from registers (n % 4
        // != 0).
        (2300, 4000, 2170),
        (2300, 4001, 2171),
    ];
    shapes.extend(stream_k_shapes(multiprocessors));
    for step in [
        Step::WgmmaTf32,
        Step::WgmmaBf16,
        Step::WgmmaBf16Once,
        Step::WgmmaBf16Pair,
        Step::WgmmaBf16Stored,
        Step::WgmmaTf32Wide,
        Step::WgmmaBf16StreamK,
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
        if step == Step::WgmmaBf16StreamK {
            // 2300 x 4000 x 2170 and 2300 x 4001 x 2171 on an H100 or H200, else two like them
            // (stream_k_shapes): tiles shared out, stored by TMA and from registers.
            let shared_out = shapes.iter().filter(|&&shape| shares_out(shape, multiprocessors));
            assert!(
                shared_out.count() >= 2,
                "step 18 shares no tiles out on {multiprocessors} multiprocessors"
            );
        }
        let sliced = |sizes| {
            let launch = ladder.prepare::<f32>(step, sizes).unwrap().unwrap();
            launch.split().map(|split| split.slices)
        };
        // 32 tiles of bf16's 128 x 256 leave most of an H100's or H200's multiprocessors idle (split-K
        // where 64 or more), 128 do not; step 12's 128 narrow tiles at 1024 do not either.
        let (square, long, full) = (
            sliced((1024, 1024, 1024)),
            sliced((129, 2085, 257)),
            sliced((2048, 2048, 2048)),
        );
        let square_split = step.precision::<f32>() == Precision::Bf16 && multiprocessors >= 64;
        assert!(
            (square > Some(1)) == square_split && long > Some(1) && full.is_none(),
            "{}: {square:?} {long:?} {full:?}",
            step.name()
        );
        for &(m, k, n) in &shapes {
            let (a, b, mut c) = operands::<f32>((m, k, n), &mut random);
            run_step(&ladder, step, &a, &b, &mut c, 2).unwrap().unwrap();
            let check = step.precision::<f32>().judge(check_product(&a, &b, &c, &mut random));
            assert!(check.passed(), "{} at {m} x {k} x {n}: {check:?}", step.name());
            eprintln!("{} at {m} x {k} x {n}: max rel. error {:.1e}", step.name(), check.error);
        }
    }
}

/// Whether step 18 shares the last round of `shape`'s tiles out along k on `multiprocessors`.
fn shares_out((m, k, n): (usize, usize, usize), multiprocessors: u32) -> bool {
    let gemm = WgmmaGemm::Bf16StreamK;
    let slices = wgmma::split(gemm, (m, k, n), multiprocessors).slices;
    let stages = (2 * k).div_ceil(128) as u32;
    wgmma::tail(gemm, wgmma::TILE, (m as u32, n as u32), stages, slices, multiprocessors) > 0
}

/// Two shapes whose tiles step 18 shares out on this GPU (n % 4 == 0 and != 0), where the test's
/// 2300 x 4000 x 2170 does not (a GPU with other than an H100's or H200's 114 to 132
/// multiprocessors: an H20, a MIG slice): as tall as it takes, with ragged edges. None where it does.
fn stream_k_shapes(multiprocessors: u32) -> Vec<(usize, usize, usize)> {
    if shares_out((2300, 4000, 2170), multiprocessors) {
        return Vec::new();
    }
    (2..=64)
        .map(|tiles_m| tiles_m * 128 - 4)
        .find(|&m| shares_out((m, 4000, 2170), multiprocessors))
        .map(|m| vec![(m, 4000, 2170), (m, 4001, 2171)])
        .unwrap_or_default()
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

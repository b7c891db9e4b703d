//! GPU images against the CPU render for every variant, at awkward sizes and sphere counts, with the
//! image poisoned before each render. Needs a GPU: `bash gpu-bundle/run.sh` (README).

use common::gpu::Gpu;
use lab_constant_tracer::gpu::{copy_from_constant, copy_to_constant, DeviceScene, Variant};
use lab_constant_tracer::render::{compare, render_on_cpu};
use lab_constant_tracer::scene::{random_scene, View};

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_variant_matches_the_cpu_at_awkward_sizes_and_counts() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::TRACER).unwrap();
    let sizes = [(1, 1), (17, 13), (640, 480), (333, 1001)];
    let counts = [1, 7, 8, 16, 32, 64, 300];
    for (seed, &(width, height)) in sizes.iter().enumerate() {
        for &count in &counts {
            let spheres = random_scene(count, 10 * seed as u64 + count as u64).unwrap();
            let view = View::new(width, height).unwrap();
            let reference = render_on_cpu(&spheres, &view);
            let mut scene = DeviceScene::new(&module, &spheres, view).unwrap();
            for variant in Variant::all_for(count) {
                let (image, _) = scene.render(&module, variant, 1).unwrap();
                let comparison = compare(&image, &reference);
                assert!(
                    comparison.passed(),
                    "{} at {width} x {height}, {count} spheres: {comparison:?}",
                    variant.name()
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_full_constant_memory_of_spheres_renders_like_the_cpu() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::TRACER).unwrap();
    let spheres = random_scene(kernels::MAX_SPHERES, 99).unwrap();
    let view = View::new(160, 90).unwrap();
    let reference = render_on_cpu(&spheres, &view);
    let mut scene = DeviceScene::new(&module, &spheres, view).unwrap();
    for variant in [Variant::Constant, Variant::Global] {
        let (image, _) = scene.render(&module, variant, 1).unwrap();
        assert!(compare(&image, &reference).passed(), "{}", variant.name());
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn spheres_read_back_from_the_constant_symbol_are_the_ones_written() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::TRACER).unwrap();
    for count in [1, 100, kernels::MAX_SPHERES] {
        let spheres = random_scene(count, count as u64).unwrap();
        copy_to_constant(&module, &spheres).unwrap();
        assert_eq!(copy_from_constant(&module, count).unwrap(), spheres);
    }
    let too_many = vec![Default::default(); kernels::MAX_SPHERES + 1];
    assert!(copy_to_constant(&module, &too_many)
        .unwrap_err()
        .to_string()
        .contains("do not fit in constant memory"));
}

/// `lab-constant-tracer --kernel-source FILE [extra] --check`, as a student runs it (assignments/04-constant-tracer).
fn check(file: &str, extra: &[&str]) -> common::testing::Outcome {
    common::testing::check_kernel_source(
        "lab-constant-tracer",
        env!("CARGO_BIN_EXE_lab-constant-tracer"),
        env!("CARGO_MANIFEST_DIR"),
        file,
        extra,
    )
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_4_the_solution_passes_and_the_template_fails_on_both_counts() {
    let solution = check("kernels/cuda/tracer.cu", &[]);
    assert_eq!(solution.code, Some(0), "{solution:?}");
    assert!(
        solution.stdout.contains("Solution is correct: all 8 cases pass"),
        "{solution:?}"
    );
    let template = check("assignments/04-constant-tracer/tracer.cu", &[]);
    assert_eq!(template.code, Some(1), "{template:?}");
    let rule = common::testing::check_row(&template.stdout, "sphere_storage lives in constant memory");
    assert!(
        rule.contains("| FAIL |") && rule.contains("in global memory (65520 bytes gmem"),
        "{rule}"
    );
    let row = common::testing::check_row(&template.stdout, "17 x 13 pixels");
    assert!(
        row.contains("| FAIL | 221 of 221 | pixel (0, 0) | never written |")
            && row.contains("block (0, 0), thread (0, 0)"),
        "{row}"
    );
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_4_broken_kernels_are_caught() {
    // Right images from global memory: only the rule and the measured rule fail.
    let global = check("assignments/04-constant-tracer/broken/global-memory.cu", &[]);
    assert_eq!(global.code, Some(1), "{global:?}");
    assert!(global.stderr.contains("2 of 8 cases failed"), "{global:?}");
    assert!(
        common::testing::check_row(
            &global.stdout,
            "constant memory, measured: loads per pixel not from the constant cache"
        )
        .contains("| FAIL |"),
        "{global:?}"
    );
    assert!(
        common::testing::check_row(&global.stdout, "sphere_storage lives in constant memory").contains("| FAIL |"),
        "{global:?}"
    );
    // One sphere too few: the pixels where the last sphere shows are wrong, none unwritten. (Where the
    // scene hides its last sphere behind others, the case passes: the 640 x 480 one does.)
    let missing = check("assignments/04-constant-tracer/broken/last-sphere-missing.cu", &[]);
    assert_eq!(missing.code, Some(1), "{missing:?}");
    assert!(
        common::testing::check_row(&missing.stdout, "sphere_storage lives in constant memory").contains("| PASS |"),
        "{missing:?}"
    );
    let row = common::testing::check_row(&missing.stdout, "17 x 13 pixels, 3 spheres");
    assert!(
        row.contains("| FAIL |") && row.contains("| pixel (") && !row.contains("never written"),
        "{row}"
    );
}

/// Issue 21: under compute-sanitizer the solution passes: none of our calls is an error.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_4_the_solution_passes_under_compute_sanitizer() {
    let solution = common::testing::check_kernel_source(
        "lab-constant-tracer",
        env!("CARGO_BIN_EXE_lab-constant-tracer"),
        env!("CARGO_MANIFEST_DIR"),
        "kernels/cuda/tracer.cu",
        &["--sanitize"],
    );
    assert_eq!(solution.code, Some(0), "{solution:?}");
    assert!(
        solution.stdout.contains("Solution is correct: all 8 cases pass")
            && solution.stdout.contains("under compute-sanitizer"),
        "{solution:?}"
    );
}

/// Issues 66 and 61: random cases from week 4's legal space (1 to 8192 pixels each way, drawn up to
/// 2048 so that the CPU's images take seconds; any number of spheres the constant memory holds): our
/// tracer passes every one, pixel for pixel, the measured rule included, and so does each tracer of
/// the week's honest corpus (`assignments/04-constant-tracer/honest/`), on the week's own cases too.
/// The seed is printed with a failure (`LAB_LEGAL_SEED`, `LAB_LEGAL_CASES`).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_4_random_legal_cases_pass_our_tracer_and_the_honest_corpus() {
    use common::testing::{assert_passes_cases, legal_case_count, legal_lines, legal_seed, log_uniform};
    use lab_constant_tracer::check::MAX_SPHERE_TESTS;
    let seed = legal_seed();
    let mut random = common::verify::Random::new(seed);
    let lab = common::testing::lab_binary("lab-constant-tracer", env!("CARGO_BIN_EXE_lab-constant-tracer"));
    let lines = legal_lines(&lab, &[], legal_case_count(8), || {
        let (width, height) = (log_uniform(&mut random, 2048), log_uniform(&mut random, 2048));
        // At most MAX_SPHERE_TESTS sphere tests in all, the largest case a --cases file may ask for.
        let most = (MAX_SPHERE_TESTS / (width * height)).min(kernels::MAX_SPHERES as u64);
        let spheres = 1 + random.below(most);
        format!("{width} {height} {spheres} {}", random.next_u64())
    });
    assert_passes_cases(seed, "kernels/cuda/tracer.cu", &[], &lines, check);
    for file in common::testing::honest_kernels("04-constant-tracer", env!("CARGO_MANIFEST_DIR")) {
        let default = check(&file, &[]);
        assert!(
            default.code == Some(0) && default.stdout.contains("Solution is correct"),
            "{file}: {default:?}"
        );
        assert_passes_cases(seed, &file, &[], &lines, check);
    }
}

/// Issue 61: every kernel of week 4's red-team corpus gets the verdict its header promises, the
/// measured rule (ncu) included.
#[test]
#[ignore = "needs a GPU and ncu (gpu-bundle/run.sh)"]
fn the_week_4_red_team_gets_its_verdicts() {
    common::testing::assert_red_team(
        "04-constant-tracer",
        "lab-constant-tracer",
        env!("CARGO_BIN_EXE_lab-constant-tracer"),
        env!("CARGO_MANIFEST_DIR"),
        &[],
        false,
    );
}

/// Issue 62 (every legal case): our kernels pass the corners of week 4's legal case space
/// (`tests/corners.txt`: the largest sizes each field allows, the smallest, the thinnest shapes), which
/// random draws seldom reach. The CLI tests keep every line legal.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_4_the_corners_of_the_legal_case_space_pass_ours() {
    let corners = common::testing::case_lines(include_str!("corners.txt"));
    common::testing::assert_passes_cases(0, "kernels/cuda/tracer.cu", &[], &corners, check);
}

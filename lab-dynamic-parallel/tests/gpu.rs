//! Device-driven and host-driven adaptive Simpson against the CPU reference. Needs a GPU:
//! `bash gpu-bundle/run.sh` (README).

use common::gpu::Gpu;
use common::integrand::Integrand;
use common::verify::Random;
use lab_dynamic_parallel::{
    adaptive_on_cpu, device_driven, host_driven, set_pending_launch_limit, Problem, STUCK_AFTER,
};

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn both_gpu_versions_agree_with_the_cpu_for_every_integrand_on_random_intervals() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::ADAPTIVE_SIMPSON).unwrap();
    set_pending_launch_limit(1 << 16).unwrap();
    let mut random = Random::new(5);
    for integrand in Integrand::ALL {
        for tolerance in [1e-6, 1e-10, 1e-12] {
            let a = random.uniform(-0.5, 0.2);
            let b = random.uniform(0.4, 1.5);
            let problem = Problem::new(integrand, a, b, tolerance, 22).unwrap();
            let cpu = adaptive_on_cpu(&problem);
            for (name, run) in [
                ("device", device_driven(&module, &problem, 1).unwrap()),
                ("host", host_driven(&module, &problem, 1).unwrap()),
            ] {
                let tally = run.tally;
                // The tolerance, plus what summing the accepted intervals' estimates in another order
                // can change (at most one rounding per term).
                let rounding = tally.accepted as f64 * f64::EPSILON * cpu.integral.abs();
                assert!(
                    (tally.integral - cpu.integral).abs() <= tolerance + rounding,
                    "{name}-driven {problem:?}: {tally:?} against CPU {cpu:?}"
                );
                assert_eq!(tally.launch_failures, 0, "{name}-driven {problem:?}");
                // Same decisions as the CPU, up to an interval or two decided the other way by rounding.
                assert!(
                    tally.accepted.abs_diff(cpu.accepted) <= 4,
                    "{name}-driven {problem:?}: {tally:?} vs {cpu:?}"
                );
                assert_eq!(
                    tally.accepted,
                    tally.splits + 2,
                    "{name}-driven: every split makes two intervals"
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_device_driven_version_launches_one_child_grid_per_split_and_the_host_one_grid_per_level() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::ADAPTIVE_SIMPSON).unwrap();
    set_pending_launch_limit(1 << 16).unwrap();
    let problem = Problem::new(Integrand::Peak, 0.0, 1.0, 1e-10, 20).unwrap();
    let device = device_driven(&module, &problem, 2).unwrap();
    assert_eq!(
        (device.host_launches, device.device_launches),
        (1, 1 + device.tally.splits)
    );
    let host = host_driven(&module, &problem, 2).unwrap();
    assert_eq!(
        host.host_launches,
        u64::from(host.tally.deepest),
        "one launch per level"
    );
    assert_eq!(host.device_launches, 0);
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_depth_limit_hit_is_reported_by_both_versions() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::ADAPTIVE_SIMPSON).unwrap();
    let problem = Problem::new(Integrand::Peak, 0.0, 1.0, 1e-12, 4).unwrap();
    let cpu = adaptive_on_cpu(&problem);
    assert!(cpu.depth_limit_hits > 0);
    for run in [
        device_driven(&module, &problem, 1).unwrap(),
        host_driven(&module, &problem, 1).unwrap(),
    ] {
        assert_eq!(run.tally.depth_limit_hits, cpu.depth_limit_hits);
        assert_eq!(run.tally.deepest, 4);
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_tiny_pending_launch_limit_makes_launches_fail_and_they_are_counted() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::ADAPTIVE_SIMPSON).unwrap();
    set_pending_launch_limit(4).unwrap();
    let problem = Problem::new(Integrand::Peak, 0.0, 1.0, 1e-12, 22).unwrap();
    let run = device_driven(&module, &problem, 1).unwrap();
    set_pending_launch_limit(1 << 16).unwrap();
    assert!(run.tally.launch_failures > 0, "{:?}", run.tally);
    assert_eq!(run.device_launches, 1 + run.tally.splits - run.tally.launch_failures);
}

/// Past the default pending-launch limit the device runtime has been seen both to refuse launches
/// and to stall the tree for ever (H200, driver 580): the lab must end either way, with a verdict or
/// with one line saying the run is stuck, not hang the terminal.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_tree_past_the_pending_launch_limit_ends_with_a_verdict_or_a_stuck_message() {
    let binary = common::testing::lab_binary("lab-dynamic-parallel", env!("CARGO_BIN_EXE_lab-dynamic-parallel"));
    let mut command = std::process::Command::new(binary);
    command.args(["--tolerance", "1e-12", "--pending-launches", "2048"]);
    let outcome = common::testing::run_within(&mut command, STUCK_AFTER + std::time::Duration::from_secs(60)).unwrap();
    assert!(
        outcome.stdout.contains("more than the pending-launch limit 2048"),
        "{outcome:?}"
    );
    let verdict = outcome.stdout.contains("Result = PASS") || outcome.stdout.contains("refused");
    let stuck_message = format!(
        "the device-driven runs (master and workers) did not finish within {} s",
        STUCK_AFTER.as_secs_f64()
    );
    let stuck = outcome.is_one_line_error("lab-dynamic-parallel", &stuck_message);
    assert!(verdict || stuck, "{outcome:?}");
}

/// `lab-dynamic-parallel --kernel-source FILE [extra] --check`, as a student runs it (assignments/07).
fn check(file: &str, extra: &[&str]) -> common::testing::Outcome {
    common::testing::check_kernel_source(
        "lab-dynamic-parallel",
        env!("CARGO_BIN_EXE_lab-dynamic-parallel"),
        env!("CARGO_MANIFEST_DIR"),
        file,
        extra,
    )
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_7_the_solution_passes_and_the_template_fails() {
    let solution = check("kernels/cuda/adaptive_simpson.cu", &[]);
    assert_eq!(solution.code, Some(0), "{solution:?}");
    assert!(
        solution.stdout.contains("Solution is correct: all 8 cases pass"),
        "{solution:?}"
    ); // the rule, the measured rule and six cases
    let template = check("assignments/07-dynamic-parallelism/adaptive_simpson.cu", &[]);
    assert_eq!(template.code, Some(1), "{template:?}");
    // Without the child launch every split interval is lost.
    let row = common::testing::check_row(&template.stdout, "tolerance 1e-10, depth limit 20");
    assert!(
        row.contains("| FAIL |") && row.contains("| intervals accepted |"),
        "{row}"
    );
    assert!(
        common::testing::check_row(&template.stdout, "depth limit 1").contains("| PASS |"),
        "depth 1 needs no child grid"
    );
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_7_broken_kernels_are_caught() {
    let loose = check("assignments/07-dynamic-parallelism/broken/tolerance-not-halved.cu", &[]);
    assert_eq!(loose.code, Some(1), "{loose:?}");
    assert!(
        common::testing::check_row(&loose.stdout, "sin(x) on [0, 3]").contains("| FAIL | "),
        "{loose:?}"
    );
    // Same decisions while no depth limit is hit; the deepest level stays 1.
    let flat = check("assignments/07-dynamic-parallelism/broken/depth-not-increased.cu", &[]);
    assert_eq!(flat.code, Some(1), "{flat:?}");
    let row = common::testing::check_row(&flat.stdout, "1/((x-0.3)^2+1e-4) on [0, 1], tolerance 1e-10");
    assert!(row.contains("| FAIL | 1 of 4 | deepest level | 1 | 16 |"), "{row}");
    // Every right half is lost: fewer intervals accepted than split.
    // Issue 29: workers that loop instead of launching get every value right and fail the rules,
    // and (issue 61) every case whose tree is large enough that one grid's share of the integrand's
    // evaluations tells: the largest, 1/((x-0.3)^2+1e-4) on [0, 1] to 1e-10, among them.
    let looping = check(
        "assignments/07-dynamic-parallelism/broken/loops-instead-of-launching.cu",
        &[],
    );
    assert_eq!(looping.code, Some(1), "{looping:?}");
    assert!(
        common::testing::check_row(&looping.stdout, "1/((x-0.3)^2+1e-4) on [0, 1], tolerance 1e-10")
            .contains("one grid evaluated the integrand"),
        "{looping:?}"
    );
    assert!(
        common::testing::check_row(&looping.stdout, "child grids, measured").contains("| FAIL |"),
        "{looping:?}"
    );
    assert!(
        common::testing::check_row(&looping.stdout, "child grids: ").contains("| FAIL | 4 of 4 |"),
        "{looping:?}"
    );
    let lonely = check("assignments/07-dynamic-parallelism/broken/one-thread-per-child.cu", &[]);
    assert_eq!(lonely.code, Some(1), "{lonely:?}");
    assert!(
        common::testing::check_row(&lonely.stdout, "4/(1+x^2) on [0, 1]").contains("| FAIL | "),
        "{lonely:?}"
    );
}

/// Issue 21: under compute-sanitizer the solution passes: none of our calls is an error.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_7_the_solution_passes_under_compute_sanitizer() {
    let solution = common::testing::check_kernel_source(
        "lab-dynamic-parallel",
        env!("CARGO_BIN_EXE_lab-dynamic-parallel"),
        env!("CARGO_MANIFEST_DIR"),
        "kernels/cuda/adaptive_simpson.cu",
        &["--sanitize"],
    );
    assert_eq!(solution.code, Some(0), "{solution:?}");
    assert!(
        solution.stdout.contains("Solution is correct: all 8 cases pass")
            && solution.stdout.contains("under compute-sanitizer"),
        "{solution:?}"
    );
}

/// Issue 39: every kernel of week 7's red-team corpus gets the verdict its header promises, the
/// measured rule (ncu) included.
#[test]
#[ignore = "needs a GPU and ncu (gpu-bundle/run.sh)"]
fn the_week_7_red_team_gets_its_verdicts() {
    common::testing::assert_red_team(
        "07-dynamic-parallelism",
        "lab-dynamic-parallel",
        env!("CARGO_BIN_EXE_lab-dynamic-parallel"),
        env!("CARGO_MANIFEST_DIR"),
        &[],
        false,
    );
}

/// Issues 66 and 61: random cases from week 7's legal space (any integrand, A < B within 10^6, a
/// tolerance the lab finds meaningful for the case, depth 1 to 24; drawn lines the lab refuses are
/// drawn again): our kernels pass every one, the measured rule included, and so does each kernel of
/// the week's honest corpus (`assignments/07-dynamic-parallelism/honest/`), on the week's own cases
/// too. The seed is printed with a failure (`LAB_LEGAL_SEED`, `LAB_LEGAL_CASES`).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_7_random_legal_cases_pass_our_kernels_and_the_honest_corpus() {
    use common::testing::{assert_passes_cases, legal_case_count, legal_lines, legal_seed};
    let seed = legal_seed();
    let mut random = Random::new(seed);
    let lab = common::testing::lab_binary("lab-dynamic-parallel", env!("CARGO_BIN_EXE_lab-dynamic-parallel"));
    let lines = legal_lines(&lab, &[], legal_case_count(8), || {
        let integrand = Integrand::ALL[random.below(4) as usize].name();
        let a = random.uniform(-10.0, 10.0);
        let b = a + 10f64.powf(random.uniform(-2.0, 1.5));
        let tolerance = 10f64.powf(random.uniform(-11.0, -2.0));
        format!("{integrand} {a} {b} {tolerance:e} {}", 1 + random.below(24))
    });
    assert_passes_cases(seed, "kernels/cuda/adaptive_simpson.cu", &[], &lines, check);
    for file in common::testing::honest_kernels("07-dynamic-parallelism", env!("CARGO_MANIFEST_DIR")) {
        let default = check(&file, &[]);
        assert!(
            default.code == Some(0) && default.stdout.contains("Solution is correct"),
            "{file}: {default:?}"
        );
        assert_passes_cases(seed, &file, &[], &lines, check);
    }
}

/// Issue 62 (every legal case): our kernels pass the corners of week 7's legal case space
/// (`tests/corners.txt`: the largest sizes each field allows, the smallest, the thinnest shapes), which
/// random draws seldom reach. The CLI tests keep every line legal.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_7_the_corners_of_the_legal_case_space_pass_ours() {
    let corners = common::testing::case_lines(include_str!("corners.txt"));
    common::testing::assert_passes_cases(0, "kernels/cuda/adaptive_simpson.cu", &[], &corners, check);
}

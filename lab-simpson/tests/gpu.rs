//! GPU against CPU on random intervals and awkward sizes. Needs a GPU: run with
//! `cargo test -- --include-ignored` on a GPU machine with Rust, or `bash gpu-bundle/run.sh` (README).

use common::gpu::Gpu;
use common::integrand::{compensated_sum, Integrand};
use common::verify::Random;
use lab_simpson::{compare, error_bounds, simpson_on_cpu, simpson_on_gpu, Problem};

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn gpu_sums_match_the_cpu_for_every_integrand_at_awkward_sizes() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::SIMPSON).unwrap();
    let mut random = Random::new(2);
    for integrand in Integrand::ALL {
        for (block_size, blocks) in [
            (1, 1),
            (1, 777),
            (32, 3),
            (96, 1000),
            (255, 17),
            (256, 4096),
            (1024, 129),
        ] {
            let a = random.uniform(-1.0, 0.5);
            let b = a + random.uniform(0.1, 2.0);
            let problem = Problem::new(integrand, a, b, blocks * u64::from(block_size), block_size).unwrap();
            let run = simpson_on_gpu(&gpu, &module, &problem, 1).unwrap();
            let (share, index) = compare(&run.sums, &simpson_on_cpu(&problem), &error_bounds(&problem));
            assert!(
                share <= 1.0,
                "{problem:?}: sub-interval {index} off by {share} of its bound"
            );
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_slides_default_gives_pi_to_1e_12() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::SIMPSON).unwrap();
    let problem = Problem::new(Integrand::Pi, 0.0, 1.0, 1 << 20, 256).unwrap();
    let run = simpson_on_gpu(&gpu, &module, &problem, 3).unwrap();
    let pi = compensated_sum(&run.sums);
    assert!((pi - std::f64::consts::PI).abs() <= 1e-12, "{pi}");
    assert_eq!(run.timing.samples_ms.len(), 3);
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_block_size_over_the_device_limit_is_refused_with_the_limit() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::SIMPSON).unwrap();
    let too_big = gpu.info.max_threads_per_block * 2;
    let problem = Problem::new(Integrand::Pi, 0.0, 1.0, u64::from(too_big) * 4, too_big).unwrap();
    let err = simpson_on_gpu(&gpu, &module, &problem, 1)
        .err()
        .expect("refused")
        .to_string();
    let expected = format!(
        "--block-size {too_big} is over this GPU's {} threads per block",
        too_big / 2
    );
    assert_eq!(err, expected);
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_problem_larger_than_gpu_memory_is_refused_before_allocating() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::SIMPSON).unwrap();
    let intervals = 1024 * u64::from(gpu.info.max_grid_x); // 8 bytes each: terabytes
                                                           // Built directly: Problem::new would refuse it already, for host memory (tested without a GPU).
    let problem = Problem {
        integrand: Integrand::Pi,
        a: 0.0,
        b: 1.0,
        intervals,
        block_size: 1024,
    };
    let err = simpson_on_gpu(&gpu, &module, &problem, 1)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("of GPU memory, but"), "{err}");
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_launch_the_driver_refuses_is_one_error_naming_the_call_and_the_cuda_error() {
    use common::check_cuda;
    use cust::launch;
    use cust::stream::{Stream, StreamFlags};
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::SIMPSON).unwrap();
    let simpson = module.get_function("_Z7simpsonddPd").unwrap();
    let stream = Stream::new(StreamFlags::DEFAULT, None).unwrap();
    let sums = common::verify::poisoned_device_buffer::<f64>(4096).unwrap();
    // Past Problem::check_against on purpose: twice the threads a block may have.
    let too_many = 2 * gpu.info.max_threads_per_block;
    // SAFETY: the arguments match simpson(double a, double b, double* sums); the launch is meant to be
    // refused, and would write at most `sums`.
    let err =
        check_cuda!(unsafe { launch!(simpson<<<2, too_many, 0, stream>>>(0.0f64, 1.0f64, sums.as_device_ptr())) })
            .unwrap_err()
            .to_string();
    assert!(
        err.starts_with("unsafe { launch!(simpson<<<2, too_many, 0, stream>>>"),
        "{err}"
    );
    assert!(
        err.contains("lab-simpson/tests/gpu.rs:") && err.contains("CUDA_ERROR_INVALID_VALUE (1)"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// `lab-simpson --kernel-source FILE [extra] --check`, as a student runs it (assignments/01-simpson).
fn check(file: &str, extra: &[&str]) -> common::testing::Outcome {
    common::testing::check_kernel_source(
        "lab-simpson",
        env!("CARGO_BIN_EXE_lab-simpson"),
        env!("CARGO_MANIFEST_DIR"),
        file,
        extra,
    )
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_1_the_solution_passes_the_check_and_the_template_fails_it() {
    let solution = check("kernels/cuda/simpson.cu", &[]);
    assert_eq!(solution.code, Some(0), "{solution:?}");
    assert!(
        solution.stdout.contains("Solution is correct: all 6 cases pass"),
        "{solution:?}"
    );
    let template = check("assignments/01-simpson/simpson.cu", &[]);
    assert_eq!(template.code, Some(1), "{template:?}");
    assert!(template.stderr.contains("6 of 6 cases failed"), "{template:?}");
    let row = common::testing::check_row(&template.stdout, "96 sub-intervals");
    assert!(
        row.contains("| FAIL | 96 of 96 | sub-interval 0 | never written |") && row.contains("block 0, thread 0"),
        "{row}"
    );
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_1_broken_kernels_are_caught_where_they_go_wrong() {
    // i = threadIdx.x: every block rewrites the first 32 sums; block 1 should have written sum 32.
    let missing = check("assignments/01-simpson/broken/missing-block-offset.cu", &[]);
    assert_eq!(missing.code, Some(1), "{missing:?}");
    let row = common::testing::check_row(&missing.stdout, "96 sub-intervals");
    assert!(
        row.contains("| FAIL | 64 of 96 | sub-interval 32 | never written |") && row.contains("block 1, thread 0"),
        "{row}"
    );
    assert!(
        common::testing::check_row(&missing.stdout, " 1 sub-intervals").contains("| PASS |"),
        "one block has no other block to miss"
    );
    // x = a + (i + 1) h: every sum is written, each for the wrong sub-interval.
    let shifted = check("assignments/01-simpson/broken/off-by-one.cu", &[]);
    assert_eq!(shifted.code, Some(1), "{shifted:?}");
    let row = common::testing::check_row(&shifted.stdout, "96 sub-intervals");
    assert!(
        row.contains("| FAIL | 96 of 96 | sub-interval 0 |")
            && !row.contains("never written")
            && row.contains("block 0, thread 0"),
        "{row}"
    );
}

/// Issue 21: under compute-sanitizer the solution passes (none of our calls is an error) and the
/// missing block offset still fails where it did.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_1_the_solution_passes_under_compute_sanitizer() {
    let sanitized = |file: &str| {
        common::testing::check_kernel_source(
            "lab-simpson",
            env!("CARGO_BIN_EXE_lab-simpson"),
            env!("CARGO_MANIFEST_DIR"),
            file,
            &["--sanitize"],
        )
    };
    let solution = sanitized("kernels/cuda/simpson.cu");
    assert_eq!(solution.code, Some(0), "{solution:?}");
    assert!(
        solution.stdout.contains("Solution is correct: all 6 cases pass")
            && solution.stdout.contains("under compute-sanitizer"),
        "{solution:?}"
    );
    let missing = sanitized("assignments/01-simpson/broken/missing-block-offset.cu");
    let row = common::testing::check_row(&missing.stdout, "96 sub-intervals");
    assert!(
        row.contains("| FAIL | 64 of 96 | sub-interval 32 | never written |"),
        "{row}"
    );
}

/// Issue 60: compute-sanitizer failing on its own is the machine's, never the student's FAULT. Two
/// stand-ins for the tool run each case as the tool would and then fail: one says so in its report
/// ("Error: ..."), the other is killed by a SIGKILL the check did not send (as the OOM killer does).
/// Our own kernel then gets MACHINE on every case, with the reason, and exit code 3.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_1_compute_sanitizer_failing_on_its_own_is_the_machines() {
    // compute-sanitizer's arguments are --tool T --error-exitcode N --log-file LOG, then the program.
    let run_then = |ending: &str| format!("#!/bin/sh\nlog=$6\nshift 6\n\"$@\"\n{ending}\n");
    let said = common::testing::temp_script(
        "sanitizer-says-error",
        &run_then("printf '========= Error: stand-in for an internal error\\n========= ERROR SUMMARY: 0 errors\\n' > \"$log\"; exit 0"),
    );
    let killed = common::testing::temp_script(
        "sanitizer-killed",
        &run_then("printf '========= ERROR SUMMARY: 0 errors\\n' > \"$log\"; kill -KILL $$"),
    );
    for (tool, reason) in [
        (
            said,
            "compute-sanitizer said \"\"Error: stand-in for an internal error\"\"",
        ),
        (killed, "killed by SIGKILL, which the check did not send"),
    ] {
        let run = common::testing::check_kernel_source_with(
            "lab-simpson",
            env!("CARGO_BIN_EXE_lab-simpson"),
            env!("CARGO_MANIFEST_DIR"),
            "kernels/cuda/simpson.cu",
            &["--sanitize", "--csv"],
            &[("COMPUTE_SANITIZER", tool.as_str())],
        );
        let row = run.stdout.lines().nth(1).unwrap_or_default();
        assert!(
            run.code == Some(3)
                && row.matches(",MACHINE").count() == 6
                && !row.contains("FAULT")
                && row.contains(reason),
            "{run:?}"
        );
    }
}

/// Issue 65, item 3: with `LAB_PHASES` naming a file, a check appends one line to it, the file's
/// name and where its time went (compile, cases, races, the whole); its own output says nothing of
/// it, as students' feedback pages quote that.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_1_a_check_appends_its_phases_where_lab_phases_says() {
    let phases = common::testing::temp_file("phases.txt", "an earlier line\n");
    let run = common::testing::check_kernel_source_with(
        "lab-simpson",
        env!("CARGO_BIN_EXE_lab-simpson"),
        env!("CARGO_MANIFEST_DIR"),
        "kernels/cuda/simpson.cu",
        &[],
        &[("LAB_PHASES", phases.as_str())],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    common::testing::assert_phases_appended(&phases, "an earlier line\n", "simpson.cu", &["compile", "cases"], &run);
}

/// Issue 60: grade.sh's run of a check, `--mark` with the key on stdin: the case children run as
/// without it (they get no key), every case passes, stdout ends with the closing mark, and the lab
/// itself vouches for that output and for nothing else (`--verify-mark`).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_1_a_marked_check_is_vouched_for_and_a_changed_one_is_not() {
    let lab = common::testing::lab_binary("lab-simpson", env!("CARGO_BIN_EXE_lab-simpson"));
    let file = common::testing::repository_file("kernels/cuda/simpson.cu", env!("CARGO_MANIFEST_DIR"));
    let key = "0123456789abcdef".repeat(4);
    let run = common::testing::run_with_stdin(
        &lab,
        &["--kernel-source", &file, "--check", "--csv", "--mark"],
        format!("{key}\n").as_bytes(),
    );
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        run.code == Some(0) && lines.len() == 3 && lines[1].contains(",6/6,") && lines[2].starts_with("#mark 0 "),
        "{run:?}"
    );
    common::testing::assert_mark_vouches_for(&lab, &key, 0, &run.stdout);
}

/// Issues 61 and 66: week 1's honest corpus (`assignments/01-simpson/honest/`) passes the week's
/// cases and random legal ones (the draws of [`week_1_random_legal_cases_pass_our_kernels`], as case
/// lines), as our kernel does. The seed is printed with a failure (`LAB_LEGAL_SEED`, and
/// `LAB_LEGAL_CASES` for more cases).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_1_the_honest_corpus_passes_the_cases_and_random_legal_ones() {
    use common::testing::{assert_passes_cases, legal_case_count, legal_lines, legal_seed, log_uniform};
    let seed = legal_seed();
    let mut random = Random::new(seed);
    let lab = common::testing::lab_binary("lab-simpson", env!("CARGO_BIN_EXE_lab-simpson"));
    let lines = legal_lines(&lab, &[], legal_case_count(20), || {
        let integrand = ["pi", "sin", "exp", "peak"][random.below(4) as usize];
        let a = random.uniform(-1e6, 1e6);
        let b = if random.below(2) == 0 {
            a + 10f64.powf(random.uniform(-6.0, 3.0))
        } else {
            random.uniform(a, 1e6)
        };
        let block_size = log_uniform(&mut random, 1024);
        let blocks = log_uniform(&mut random, (1 << 22) / block_size);
        format!("{integrand} {a} {} {} {block_size}", b.min(1e6), blocks * block_size)
    });
    let files = std::iter::once("kernels/cuda/simpson.cu".to_string()).chain(common::testing::honest_kernels(
        "01-simpson",
        env!("CARGO_MANIFEST_DIR"),
    ));
    for file in files {
        let default = check(&file, &[]);
        assert!(default.code == Some(0), "{file}: {default:?}");
        assert_passes_cases(seed, &file, &[], &lines, check);
    }
}

/// Issue 66: random cases from the week's legal space (any integrand, A < B within 10^6, blocks of 1
/// to 1024 threads, sizes from 1 up) on our kernels, every sum within its error bound; the seed is
/// printed with a failure (`LAB_LEGAL_SEED` draws the same cases again, `LAB_LEGAL_CASES` more).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_1_random_legal_cases_pass_our_kernels() {
    use common::testing::{legal_case_count, legal_seed, log_uniform};
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::SIMPSON).unwrap();
    let seed = legal_seed();
    let mut random = Random::new(seed);
    let count = legal_case_count(300);
    for _ in 0..count {
        let integrand = Integrand::ALL[random.below(4) as usize];
        let a = random.uniform(-1e6, 1e6);
        let b = if random.below(2) == 0 {
            a + 10f64.powf(random.uniform(-6.0, 3.0))
        } else {
            random.uniform(a, 1e6)
        };
        let block_size = log_uniform(&mut random, 1024) as u32;
        let blocks = log_uniform(&mut random, (1 << 22) / u64::from(block_size));
        let Ok(problem) = Problem::new(integrand, a, b.min(1e6), blocks * u64::from(block_size), block_size) else {
            continue; // b rounded to a
        };
        let run = simpson_on_gpu(&gpu, &module, &problem, 1).unwrap();
        let (share, index) = compare(&run.sums, &simpson_on_cpu(&problem), &error_bounds(&problem));
        assert!(
            share <= 1.0,
            "seed {seed}: {problem:?}: sub-interval {index} off by {share} of its bound"
        );
    }
    println!("{count} random legal cases (seed {seed}) pass");
    // The case, through --check as a teacher's hidden case: nvcc's fma contraction of
    // a + i * h moves sums at x near 200 by more than a relative 1e-12, and no more than the bound.
    let cases = common::testing::temp_file("week-1-legal.txt", "sin 100 200 999999 999\nexp -700 709 999999 999\n");
    let ours = check("kernels/cuda/simpson.cu", &["--cases", &cases]);
    assert_eq!(ours.code, Some(0), "{ours:?}");
}

/// Issue 62 (every legal case): our kernels pass the corners of week 1's legal case space
/// (`tests/corners.txt`: the largest sizes each field allows, the smallest, the thinnest shapes), which
/// random draws seldom reach. The CLI tests keep every line legal.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_1_the_corners_of_the_legal_case_space_pass_ours() {
    let corners = common::testing::case_lines(include_str!("corners.txt"));
    common::testing::assert_passes_cases(0, "kernels/cuda/simpson.cu", &[], &corners, check);
}

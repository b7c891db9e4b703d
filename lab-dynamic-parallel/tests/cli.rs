//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{assert_default_run_suits_this_machine, assert_every_value_flag_fails_cleanly, run};

const LAB: &str = env!("CARGO_BIN_EXE_lab-dynamic-parallel");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in [
        "--integrand",
        "--a",
        "--b",
        "--tolerance",
        "--max-depth",
        "--pending-launches",
        "--repetitions",
        "--ptxas",
    ] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn fails_when_the_tolerance_is_not_positive() {
    for value in ["0", "-0.001"] {
        let outcome = run(LAB, &["--tolerance", value]);
        assert!(
            outcome.is_one_line_error("lab-dynamic-parallel", "must be a positive number"),
            "{outcome:?}"
        );
    }
}

#[test]
fn fails_when_the_depth_limit_is_out_of_range() {
    for value in ["0", "25"] {
        let outcome = run(LAB, &["--max-depth", value]);
        assert!(
            outcome.is_one_line_error("lab-dynamic-parallel", "is out of range: 1 to 24"),
            "{outcome:?}"
        );
    }
}

#[test]
fn fails_when_b_is_below_a() {
    let outcome = run(LAB, &["--a", "1", "--b", "0"]);
    assert!(
        outcome.is_one_line_error("lab-dynamic-parallel", "--b 0 must be greater than --a 1"),
        "{outcome:?}"
    );
}

#[test]
fn default_run_needs_a_gpu_and_says_so_without_one() {
    assert_default_run_suits_this_machine(LAB, "lab-dynamic-parallel");
}

#[test]
fn every_value_flag_takes_any_number_or_word_without_a_panic() {
    // Every flag of --help with numbers at and past u32 and u64, negative ones, units and words.
    assert_every_value_flag_fails_cleanly(LAB, "lab-dynamic-parallel");
}

/// Issue 29: week 7's rule needs no GPU (it reads the PTX), so it shows on any machine: our workers
/// launch their children, workers that loop instead do not.
#[test]
fn week_7_rule_finds_the_child_launch_in_the_ptx() {
    let check = |file: &str| {
        common::testing::check_kernel_source(
            "lab-dynamic-parallel",
            LAB,
            env!("CARGO_MANIFEST_DIR"),
            file,
            &["--dry-run"],
        )
    };
    let rule = "child grids: every workers<F>";
    let ours = check("kernels/cuda/adaptive_simpson.cu");
    assert!(
        common::testing::check_row(&ours.stdout, rule).contains("| PASS | 0 of 4 |"),
        "{ours:?}"
    );
    let looping = check("assignments/07-dynamic-parallelism/broken/loops-instead-of-launching.cu");
    assert_eq!(looping.code, Some(1), "{looping:?}");
    let row = common::testing::check_row(&looping.stdout, rule);
    assert!(
        row.contains("| FAIL | 4 of 4 | workers<FourOverOnePlusXSquared> | no device-side launch |"),
        "{row}"
    );
}

/// Issue 39: the red-team corpus of week 7, the verdicts that need no GPU; the GPU tests run all.
#[test]
fn the_week_7_red_team_gets_its_static_verdicts_without_a_gpu() {
    common::testing::assert_red_team(
        "07-dynamic-parallelism",
        "lab-dynamic-parallel",
        env!("CARGO_BIN_EXE_lab-dynamic-parallel"),
        env!("CARGO_MANIFEST_DIR"),
        &[],
        true,
    );
}

/// Issue 61: week 7's honest corpus (the child launch in a helper, a branch, on the tail-launch or a
/// named stream, with dim3 shapes) compiles and passes the rule read from the PTX; the GPU tests run
/// its cases.
#[test]
fn the_honest_corpus_of_week_7_passes_the_rule_read_from_the_ptx() {
    for file in common::testing::honest_kernels("07-dynamic-parallelism", env!("CARGO_MANIFEST_DIR")) {
        let outcome = common::testing::check_kernel_source(
            "lab-dynamic-parallel",
            LAB,
            env!("CARGO_MANIFEST_DIR"),
            &file,
            &["--dry-run"],
        );
        assert!(
            outcome.code == Some(0) && outcome.stdout.contains("| PASS |") && !outcome.stdout.contains("| FAIL |"),
            "{file}: {outcome:?}"
        );
    }
}

/// Issue 62: every line of `tests/corners.txt` (the corners of week 7's legal case space, which the
/// GPU tests run with ours) is still a legal case.
#[test]
fn the_corners_of_the_legal_case_space_are_legal() {
    common::testing::assert_corners_are_legal(LAB, &[], concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corners.txt"));
}

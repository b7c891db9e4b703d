//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{assert_default_run_suits_this_machine, assert_every_value_flag_fails_cleanly, run};

const LAB: &str = env!("CARGO_BIN_EXE_lab-dynamic-parallel");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in ["--integrand", "--a", "--b", "--tolerance", "--max-depth", "--pending-launches", "--repetitions", "--ptxas"] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn fails_when_the_tolerance_is_not_positive() {
    for value in ["0", "-0.001"] {
        let outcome = run(LAB, &["--tolerance", value]);
        assert!(outcome.is_one_line_error("lab-dynamic-parallel", "must be a positive number"), "{outcome:?}");
    }
}

#[test]
fn fails_when_the_depth_limit_is_out_of_range() {
    for value in ["0", "25"] {
        let outcome = run(LAB, &["--max-depth", value]);
        assert!(outcome.is_one_line_error("lab-dynamic-parallel", "is out of range: 1 to 24"), "{outcome:?}");
    }
}

#[test]
fn fails_when_b_is_below_a() {
    let outcome = run(LAB, &["--a", "1", "--b", "0"]);
    assert!(outcome.is_one_line_error("lab-dynamic-parallel", "--b 0 must be greater than --a 1"), "{outcome:?}");
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

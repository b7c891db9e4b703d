//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{assert_default_run_suits_this_machine, assert_every_value_flag_fails_cleanly, run};

const LAB: &str = env!("CARGO_BIN_EXE_lab-mapped");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in [
        "--size",
        "--count",
        "--block-size",
        "--elements",
        "--write-combined",
        "--repetitions",
        "--seed",
    ] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn refuses_to_map_more_than_half_of_the_machine_before_touching_the_gpu() {
    let outcome = run(LAB, &["--size", "60000", "--count", "64"]);
    assert!(
        outcome.is_one_line_error("lab-mapped", "more than the 50% the labs allow"),
        "{outcome:?}"
    );
}

#[test]
fn fails_on_zero_sizes() {
    for flag in ["--size", "--count", "--elements"] {
        let outcome = run(LAB, &[flag, "0"]);
        assert!(
            outcome.is_one_line_error("lab-mapped", "invalid value '0'"),
            "{flag}: {outcome:?}"
        );
    }
}

#[test]
fn default_run_needs_a_gpu_and_says_so_without_one() {
    assert_default_run_suits_this_machine(LAB, "lab-mapped");
}

#[test]
fn every_value_flag_takes_any_number_or_word_without_a_panic() {
    // Every flag of --help with numbers at and past u32 and u64, negative ones, units and words.
    assert_every_value_flag_fails_cleanly(LAB, "lab-mapped");
}

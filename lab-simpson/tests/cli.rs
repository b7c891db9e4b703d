//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{assert_default_run_suits_this_machine, run};

const LAB: &str = env!("CARGO_BIN_EXE_lab-simpson");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in ["--a", "--b", "--intervals", "--block-size", "--integrand", "--repetitions", "--ptxas"] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn fails_when_block_size_is_zero() {
    let outcome = run(LAB, &["--block-size", "0"]);
    assert!(outcome.is_one_line_error("lab-simpson", "'--block-size <BLOCK_SIZE>'"), "{outcome:?}");
}

#[test]
fn fails_when_intervals_is_zero_or_negative() {
    for value in ["0", "-5"] {
        let outcome = run(LAB, &["--intervals", value]);
        assert!(outcome.is_one_line_error("lab-simpson", value), "{outcome:?}");
    }
}

#[test]
fn fails_when_b_is_below_a() {
    let outcome = run(LAB, &["--a", "2", "--b", "-1"]);
    assert!(outcome.is_one_line_error("lab-simpson", "--b -1 must be greater than --a 2"), "{outcome:?}");
}

#[test]
fn fails_when_intervals_do_not_fill_whole_blocks() {
    let outcome = run(LAB, &["--intervals", "1000"]);
    assert!(outcome.is_one_line_error("lab-simpson", "not a multiple of --block-size 256"), "{outcome:?}");
}

#[test]
fn fails_on_an_unknown_integrand() {
    let outcome = run(LAB, &["--integrand", "tan"]);
    assert!(outcome.is_one_line_error("lab-simpson", "'tan'"), "{outcome:?}");
}

#[test]
fn default_run_needs_a_gpu_and_says_so_without_one() {
    assert_default_run_suits_this_machine(LAB, "lab-simpson");
}

#[test]
fn refuses_more_sub_intervals_than_host_memory_holds_before_touching_the_gpu() {
    let outcome = run(LAB, &["--intervals", "1099511627776"]);
    assert!(outcome.is_one_line_error("lab-simpson", "--intervals 1099511627776 needs 24.0 TiB of host memory"), "{outcome:?}");
}

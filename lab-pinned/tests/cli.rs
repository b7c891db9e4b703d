//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{
    assert_as_printed_takes_no_repetitions, assert_default_run_suits_this_machine,
    assert_every_value_flag_fails_cleanly, run,
};

const LAB: &str = env!("CARGO_BIN_EXE_lab-pinned");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in [
        "--size",
        "--count",
        "--block-size",
        "--repetitions",
        "--as-printed",
        "--seed",
        "--sweep-max",
        "--no-sweep",
        "--plot",
        "--timeline",
        "--force",
    ] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn refuses_to_pin_more_than_half_of_the_machine_before_touching_the_gpu() {
    let outcome = run(LAB, &["--size", "100000", "--count", "64"]);
    assert!(
        outcome.is_one_line_error("lab-pinned", "more than the 50% the labs allow"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--size", "16", "--sweep-max", "4096GiB"]);
    assert!(
        outcome.is_one_line_error("lab-pinned", "pinning 4.0 TiB would lock"),
        "{outcome:?}"
    );
}

#[test]
fn fails_on_a_malformed_sweep_size() {
    let outcome = run(LAB, &["--sweep-max", "1TB"]);
    assert!(outcome.is_one_line_error("lab-pinned", "unknown unit"), "{outcome:?}");
    let outcome = run(LAB, &["--sweep-max", "100"]);
    assert!(
        outcome.is_one_line_error("lab-pinned", "at least 4096 bytes"),
        "{outcome:?}"
    );
}

#[test]
fn refuses_to_overwrite_a_plot() {
    let existing = std::env::temp_dir().join(format!("lab-pinned-cli-{}.svg", std::process::id()));
    std::fs::write(&existing, "keep").unwrap();
    let outcome = run(LAB, &["--plot", existing.to_str().unwrap()]);
    assert!(
        outcome.is_one_line_error("lab-pinned", "exists; not overwriting it"),
        "{outcome:?}"
    );
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
}

#[test]
fn default_run_needs_a_gpu_and_says_so_without_one() {
    assert_default_run_suits_this_machine(LAB, "lab-pinned");
}

#[test]
fn every_value_flag_takes_any_number_or_word_without_a_panic() {
    // Every flag of --help with numbers at and past u32 and u64, negative ones, units and words.
    assert_every_value_flag_fails_cleanly(LAB, "lab-pinned");
}

#[test]
fn as_printed_is_one_cold_run_so_it_takes_no_repetitions() {
    assert_as_printed_takes_no_repetitions(LAB, "lab-pinned");
}

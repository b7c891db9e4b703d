//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{assert_default_run_suits_this_machine, run};

const LAB: &str = env!("CARGO_BIN_EXE_lab-memory");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in ["--mode", "--grid", "--block", "--copy-bytes", "--repetitions", "--seed", "indexing", "symbols", "device-query"] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn refuses_empty_grids_and_blocks_and_blocks_over_1024_threads() {
    for args in [&["--grid", "0", "1", "1"][..], &["--block", "4", "0", "1"], &["--repetitions", "0"], &["--copy-bytes", "2"]] {
        let outcome = run(LAB, args);
        assert!(outcome.is_one_line_error("lab-memory", "invalid value"), "{args:?}: {outcome:?}");
    }
    let outcome = run(LAB, &["--block", "32", "32", "2"]);
    assert!(outcome.is_one_line_error("lab-memory", "--block 32 x 32 x 2 is 2048 threads, more than a block may have (1024)"), "{outcome:?}");
    let outcome = run(LAB, &["--mode", "banks"]);
    assert!(outcome.is_one_line_error("lab-memory", "'banks'"), "{outcome:?}");
}

#[test]
fn default_run_needs_a_gpu_and_says_so_without_one() {
    assert_default_run_suits_this_machine(LAB, "lab-memory");
}

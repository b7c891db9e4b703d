//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{assert_default_run_suits_this_machine, assert_every_value_flag_fails_cleanly, run, temp_file};

const LAB: &str = env!("CARGO_BIN_EXE_lab-memory");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    let flags = [
        "--mode",
        "--notes-threads",
        "--buffer-bytes",
        "--plot",
        "--force",
        "--steps",
        "--transpose",
        "--rounds",
        "--ptxas",
        "--grid",
        "--block",
        "--copy-bytes",
        "--repetitions",
        "--seed",
    ];
    let modes = [
        "coalescing",
        "banks",
        "indexing",
        "registers",
        "cache",
        "symbols",
        "readonly",
        "transactions",
        "device-query",
    ];
    for flag in flags.into_iter().chain(modes) {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn refuses_empty_grids_and_blocks_and_blocks_over_1024_threads() {
    let bad = [
        &["--grid", "0", "1", "1"][..],
        &["--block", "4", "0", "1"],
        &["--repetitions", "0"],
        &["--copy-bytes", "2"],
        &["--notes-threads", "100"],
        &["--buffer-bytes", "100"],
        &["--buffer-bytes", "1TB"],
        &["--transpose", "0", "5"],
        &["--steps", "0"],
    ];
    for args in bad {
        let outcome = run(LAB, args);
        assert!(
            outcome.is_one_line_error("lab-memory", "invalid value"),
            "{args:?}: {outcome:?}"
        );
    }
    // Issue 26: --copy-bytes reads sizes like --buffer-bytes, and says its limit.
    let outcome = run(LAB, &["--mode", "device-query", "--copy-bytes", "17GiB"]);
    assert!(
        outcome.is_one_line_error("lab-memory", "--copy-bytes 18253611008 is over 16 GiB"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--block", "32", "32", "2"]);
    assert!(
        outcome.is_one_line_error(
            "lab-memory",
            "--block 32 x 32 x 2 is 2048 threads, more than a block may have (1024)"
        ),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--mode", "texture"]);
    assert!(outcome.is_one_line_error("lab-memory", "'texture'"), "{outcome:?}");
    let outcome = run(LAB, &["--notes-threads", "1000"]);
    assert!(
        outcome.is_one_line_error(
            "lab-memory",
            "--notes-threads 1000 is not a multiple of 256: the notes' kernels check no bound"
        ),
        "{outcome:?}"
    );
}

#[test]
fn never_plots_over_a_file_or_into_a_missing_folder() {
    let existing = temp_file("lab-memory-plot.svg", "keep");
    let outcome = run(LAB, &["--mode", "coalescing", "--plot", &existing]);
    assert!(
        outcome.is_one_line_error("lab-memory", "exists; not overwriting it (--force replaces it)"),
        "{outcome:?}"
    );
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
    let outcome = run(LAB, &["--plot", "/no/such/folder/plot.svg"]);
    assert!(
        outcome.is_one_line_error("lab-memory", "the folder /no/such/folder does not exist"),
        "{outcome:?}"
    );
}

#[test]
fn default_run_needs_a_gpu_and_says_so_without_one() {
    assert_default_run_suits_this_machine(LAB, "lab-memory");
}

#[test]
fn every_value_flag_takes_any_number_or_word_without_a_panic() {
    // Every flag of --help with numbers at and past u32 and u64, negative ones, units and words.
    assert_every_value_flag_fails_cleanly(LAB, "lab-memory");
}

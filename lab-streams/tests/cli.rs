//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{
    assert_as_printed_takes_no_repetitions, assert_default_run_suits_this_machine,
    assert_every_value_flag_fails_cleanly, run,
};

const LAB: &str = env!("CARGO_BIN_EXE_lab-streams");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in [
        "--mode",
        "--size",
        "--count",
        "--block-size",
        "--elements",
        "--steps",
        "--repetitions",
        "--as-printed",
        "--seed",
        "--timeline",
        "--force",
        "--host-memory",
        "--kernels",
        "--blocks-per-kernel",
        "--devices",
        "concurrent",
        "--order",
    ] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn fails_on_zero_sizes_and_counts() {
    for flag in [
        "--size",
        "--count",
        "--elements",
        "--steps",
        "--repetitions",
        "--kernels",
        "--blocks-per-kernel",
        "--devices",
    ] {
        let outcome = run(LAB, &[flag, "0"]);
        assert!(
            outcome.is_one_line_error("lab-streams", "invalid value '0'"),
            "{flag}: {outcome:?}"
        );
    }
}

#[test]
fn fails_on_an_unknown_mode_and_an_uncompiled_block_size() {
    let outcome = run(LAB, &["--mode", "fast"]);
    assert!(outcome.is_one_line_error("lab-streams", "'fast'"), "{outcome:?}");
    let outcome = run(LAB, &["--block-size", "64"]);
    assert!(
        outcome.is_one_line_error("lab-streams", "compiled for BLOCK_SIZE [16, 32] only"),
        "{outcome:?}"
    );
}

#[test]
fn refuses_a_timeline_over_an_existing_file_or_in_a_missing_folder() {
    let existing = std::env::temp_dir().join(format!("lab-streams-cli-{}.svg", std::process::id()));
    std::fs::write(&existing, "keep").unwrap();
    let outcome = run(LAB, &["--timeline", existing.to_str().unwrap()]);
    assert!(
        outcome.is_one_line_error("lab-streams", "exists; not overwriting it"),
        "{outcome:?}"
    );
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
    let outcome = run(LAB, &["--timeline", "/nonexistent/t.svg"]);
    assert!(
        outcome.is_one_line_error("lab-streams", "the folder /nonexistent does not exist"),
        "{outcome:?}"
    );
}

#[test]
fn refuses_an_unknown_host_memory_and_a_timeline_for_modes_it_cannot_draw() {
    let outcome = run(LAB, &["--mode", "chunked", "--host-memory", "mapped"]);
    assert!(outcome.is_one_line_error("lab-streams", "'mapped'"), "{outcome:?}");
    for mode in ["overlap", "all"] {
        let outcome = run(
            LAB,
            &["--mode", mode, "--timeline", "/tmp/lab-streams-never-written.svg"],
        );
        assert!(
            outcome.is_one_line_error(
                "lab-streams",
                "--timeline draws one run: use it with --mode mmm, chunked, fifteen, concurrent or null-stream"
            ),
            "{mode}: {outcome:?}"
        );
    }
}

#[test]
fn default_run_needs_a_gpu_and_says_so_without_one() {
    assert_default_run_suits_this_machine(LAB, "lab-streams");
}

#[test]
fn refuses_a_batch_larger_than_host_memory_before_touching_the_gpu() {
    let outcome = run(LAB, &["--size", "100000", "--count", "64"]);
    assert!(
        outcome.is_one_line_error(
            "lab-streams",
            "COUNT = 64 products of 100000 x 100000 doubles needs 14.0 TiB of host memory"
        ),
        "{outcome:?}"
    );
}

#[test]
fn spreads_only_the_products_and_the_pipeline_over_several_gpus() {
    for mode in ["fifteen", "overlap", "concurrent", "all"] {
        let outcome = run(LAB, &["--mode", mode, "--devices", "2"]);
        assert!(
            outcome.is_one_line_error(
                "lab-streams",
                "--devices spreads --mode mmm or chunked over several GPUs"
            ),
            "{mode}: {outcome:?}"
        );
    }
    let outcome = run(LAB, &["--devices", "3", "--count", "2"]);
    assert!(
        outcome.is_one_line_error("lab-streams", "--devices 3 needs at least 3 products (--count 2)"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--devices", "2", "--mode", "chunked", "--elements", "1"]);
    assert!(
        outcome.is_one_line_error("lab-streams", "--devices 2 needs at least 2 elements (--elements 1)"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--devices", "65"]);
    assert!(
        outcome.is_one_line_error("lab-streams", "invalid value '65'"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--kernels", "4097"]);
    assert!(
        outcome.is_one_line_error("lab-streams", "invalid value '4097'"),
        "{outcome:?}"
    );
}

#[test]
fn every_value_flag_takes_any_number_or_word_without_a_panic() {
    // Every flag of --help with numbers at and past u32 and u64, negative ones, units and words.
    assert_every_value_flag_fails_cleanly(LAB, "lab-streams");
}

/// Week 5's two graded programs: `--program` picks the German one, whose cases and rules list without
/// a GPU (no GPU time rule from pageable memory); a bad name, `--program` alone and a bad cases line
/// are one-line errors; the program compiles in a dry run (CI has nvcc).
#[test]
fn the_german_program_lists_its_cases_and_compiles_without_a_gpu() {
    let outcome = run(LAB, &["--program", "mmm-streamed", "--list-cases"]);
    assert_eq!(outcome.code, Some(0), "{outcome:?}");
    for line in [
        "COUNT 10, N 1024",
        "COUNT 4, N 1000",
        "streams: COUNT streams carry a product each",
        "kernel time",
    ] {
        assert!(outcome.stdout.contains(line), "{line}: {}", outcome.stdout);
    }
    assert!(!outcome.stdout.contains("GPU time"), "{}", outcome.stdout);
    let pipeline = run(LAB, &["--list-cases"]);
    assert!(pipeline.stdout.contains("N 4194304, Nst 4"), "{}", pipeline.stdout);
    let outcome = run(LAB, &["--program", "bogus"]);
    assert!(
        outcome.is_one_line_error("lab-streams", "possible values: pipeline, mmm-streamed"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--program", "mmm-streamed"]);
    assert!(
        outcome.is_one_line_error("lab-streams", "--program goes with --check"),
        "{outcome:?}"
    );
    let cases = common::testing::temp_file("mmm-cases.txt", "# COUNT N SEED\n2 64 1\n65 64 1\n");
    let outcome = run(LAB, &["--program", "mmm-streamed", "--cases", &cases, "--list-cases"]);
    assert!(
        outcome.is_one_line_error_with(2, "lab-streams", ":3: COUNT \"65\" is not a number from 1 to 64"),
        "{outcome:?}"
    );
    let source = common::testing::repository_file("assignments/05-streams/mmm_streamed.cu", env!("CARGO_MANIFEST_DIR"));
    let outcome = run(
        LAB,
        &[
            "--program",
            "mmm-streamed",
            "--program-source",
            &source,
            "--check",
            "--dry-run",
        ],
    );
    assert_eq!(outcome.code, Some(0), "{outcome:?}");
    assert!(outcome.stdout.contains("compiled for sm_"), "{}", outcome.stdout);
}

#[test]
fn as_printed_is_one_cold_run_so_it_takes_no_repetitions() {
    assert_as_printed_takes_no_repetitions(LAB, "lab-streams");
}

/// Issue 62: every line of `tests/corners-*.txt` (the corners of week 5's legal case spaces, which the
/// GPU tests run with ours) is still a legal case.
#[test]
fn the_corners_of_the_legal_case_spaces_are_legal() {
    let dir = env!("CARGO_MANIFEST_DIR");
    common::testing::assert_corners_are_legal(LAB, &[], &format!("{dir}/tests/corners-pipeline.txt"));
    common::testing::assert_corners_are_legal(
        LAB,
        &["--program", "mmm-streamed"],
        &format!("{dir}/tests/corners-mmm-streamed.txt"),
    );
}

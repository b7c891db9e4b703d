//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{
    assert_as_printed_takes_no_repetitions, assert_default_run_suits_this_machine,
    assert_every_value_flag_fails_cleanly, run,
};

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
        "--strided-elements",
        "--write-combined",
        "--too-small",
        "--repetitions",
        "--as-printed",
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
    for flag in ["--size", "--count", "--elements", "--strided-elements"] {
        let outcome = run(LAB, &[flag, "0"]);
        assert!(
            outcome.is_one_line_error("lab-mapped", "invalid value '0'"),
            "{flag}: {outcome:?}"
        );
    }
}

/// Issue 64: the strided-read table's input spans 32 N floats on the host and again on the GPU.
#[test]
fn refuses_more_strided_elements_than_the_table_maps() {
    let outcome = run(LAB, &["--strided-elements", "4194305"]);
    assert!(
        outcome.is_one_line_error("lab-mapped", "4194305 is not between 1 and 4194304"),
        "{outcome:?}"
    );
}

/// Issue 64: `--too-small` is a run of its own, sized by --elements only.
#[test]
fn too_small_takes_no_matrix_flags() {
    for flag in ["--size", "--count", "--strided-elements"] {
        let outcome = run(LAB, &["--too-small", flag, "64"]);
        assert!(
            outcome.is_one_line_error("lab-mapped", "cannot be used with"),
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

/// Week 6's two graded programs: `--program mmm-streamed-and-pinned` lists its cases and rules (with
/// host memory, overlap and GPU time) without a GPU, and its starter compiles in a dry run.
#[test]
fn the_german_program_lists_its_cases_and_compiles_without_a_gpu() {
    let outcome = run(LAB, &["--program", "mmm-streamed-and-pinned", "--list-cases", "--csv"]);
    assert_eq!(outcome.code, Some(0), "{outcome:?}");
    for column in [
        "\"COUNT 16, N 256\"",
        "host memory: no copy from pageable memory",
        "overlap:",
        "GPU time:",
    ] {
        assert!(outcome.stdout.contains(column), "{column}: {}", outcome.stdout);
    }
    let outcome = run(LAB, &["--program", "zero-copy", "--list-cases"]);
    assert!(outcome.stdout.contains("no copy"), "{}", outcome.stdout);
    let source = common::testing::repository_file(
        "assignments/06-pinned-mapped/mmm_streamed_and_pinned.cu",
        env!("CARGO_MANIFEST_DIR"),
    );
    let outcome = run(
        LAB,
        &[
            "--program",
            "mmm-streamed-and-pinned",
            "--program-source",
            &source,
            "--check",
            "--dry-run",
            "--csv",
        ],
    );
    assert_eq!(outcome.code, Some(0), "{outcome:?}");
    assert!(outcome.stdout.contains("dry run: no GPU used"), "{}", outcome.stdout);
}

#[test]
fn as_printed_is_one_cold_run_so_it_takes_no_repetitions() {
    assert_as_printed_takes_no_repetitions(LAB, "lab-mapped");
}

/// Issue 62: every line of the corners of week 6's legal case spaces (which the GPU tests run with
/// ours) is still a legal case.
#[test]
fn the_corners_of_the_legal_case_spaces_are_legal() {
    let dir = env!("CARGO_MANIFEST_DIR");
    common::testing::assert_corners_are_legal(LAB, &[], &format!("{dir}/tests/corners-zero-copy.txt"));
    common::testing::assert_corners_are_legal(
        LAB,
        &["--program", "mmm-streamed-and-pinned"],
        &format!("{dir}/../lab-streams/tests/corners-mmm-streamed.txt"),
    );
}

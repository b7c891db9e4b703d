//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{assert_default_run_suits_this_machine, assert_every_value_flag_fails_cleanly, run, temp_file};

const LAB: &str = env!("CARGO_BIN_EXE_lab-constant-tracer");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in [
        "--width",
        "--height",
        "--spheres",
        "--scene",
        "--seed",
        "--output",
        "--force",
        "--sweep",
        "--no-sweep",
        "--repetitions",
        "--ptxas",
    ] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn fails_on_zero_spheres_and_on_more_than_constant_memory_holds() {
    let outcome = run(LAB, &["--spheres", "0"]);
    assert!(
        outcome.is_one_line_error("lab-constant-tracer", "at least one sphere"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--spheres", "2341"]);
    assert!(
        outcome.is_one_line_error("lab-constant-tracer", "64 KiB hold at most 2340 spheres of 28 bytes"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--sweep", "8,5000"]);
    assert!(
        outcome.is_one_line_error("lab-constant-tracer", "5000 spheres do not fit"),
        "{outcome:?}"
    );
}

#[test]
fn fails_on_a_zero_width_or_height() {
    for args in [["--width", "0"], ["--height", "0"]] {
        let outcome = run(LAB, &args);
        assert!(
            outcome.is_one_line_error("lab-constant-tracer", "at least 1 x 1 pixels"),
            "{outcome:?}"
        );
    }
}

#[test]
fn fails_on_a_malformed_scene_naming_line_and_field() {
    let scene = temp_file("bad.txt", "# ok\n0 0 5 1 1 0 0\n0 0 5 1 one 0 0\n");
    let outcome = run(LAB, &["--scene", &scene]);
    assert!(
        outcome.is_one_line_error("lab-constant-tracer", ":3: field r = \"one\" is not a finite number"),
        "{outcome:?}"
    );
}

#[test]
fn fails_on_an_output_path_that_cannot_be_written() {
    let outcome = run(LAB, &["--output", "/nonexistent/folder/x.png"]);
    assert!(
        outcome.is_one_line_error("lab-constant-tracer", "the folder /nonexistent/folder does not exist"),
        "{outcome:?}"
    );
}

#[test]
fn refuses_to_overwrite_an_existing_image() {
    let existing = temp_file("existing.png", "not an image");
    let outcome = run(LAB, &["--output", &existing]);
    assert!(
        outcome.is_one_line_error("lab-constant-tracer", "exists; not overwriting it"),
        "{outcome:?}"
    );
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "not an image");
}

#[test]
fn the_example_scene_parses() {
    let scene = format!("{}/scenes/three.txt", env!("CARGO_MANIFEST_DIR"));
    let spheres = lab_constant_tracer::scene::read_scene(std::path::Path::new(&scene)).unwrap();
    assert_eq!(spheres.len(), 4);
}

#[test]
fn default_run_needs_a_gpu_and_says_so_without_one() {
    assert_default_run_suits_this_machine(LAB, "lab-constant-tracer");
}

#[test]
fn every_value_flag_takes_any_number_or_word_without_a_panic() {
    // Every flag of --help with numbers at and past u32 and u64, negative ones, units and words.
    assert_every_value_flag_fails_cleanly(LAB, "lab-constant-tracer");
}

/// Issue 61: week 4's honest corpus (the spheres reached through other casts, a helper, a named
/// pointer, the tracer written out) compiles and passes the rule read from the ptxas report; the GPU
/// tests run its cases.
#[test]
fn the_honest_corpus_of_week_4_passes_the_rule_read_from_the_ptxas_report() {
    for file in common::testing::honest_kernels("04-constant-tracer", env!("CARGO_MANIFEST_DIR")) {
        let outcome = common::testing::check_kernel_source(
            "lab-constant-tracer",
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

/// A case the CPU's reference render could not finish in a case's time (a teacher's 1165 x 1620 x
/// 1934 stopped as hung on an H200) is one line naming the file, the line and the budget, exit code
/// 2, before anything runs; the largest case within it is listed.
#[test]
fn a_case_past_the_cpus_budget_is_a_usage_error() {
    let cases = temp_file("tracer-budget-cases.txt", "640 480 64 3\n8192 8192 2340 1\n");
    let source =
        common::testing::repository_file("assignments/04-constant-tracer/tracer.cu", env!("CARGO_MANIFEST_DIR"));
    let outcome = run(LAB, &["--kernel-source", &source, "--check", "--cases", &cases]);
    assert!(
        outcome.is_one_line_error_with(
            2,
            "lab-constant-tracer",
            &format!("{cases}:2: WIDTH x HEIGHT x SPHERES is 8192 x 8192 x 2340 = 157034741760 sphere tests")
        ),
        "{outcome:?}"
    );
    let largest = temp_file("tracer-largest-case.txt", "8192 8192 64 1\n");
    let listed = run(LAB, &["--list-cases", "--cases", &largest]);
    assert!(
        listed.code == Some(0) && listed.stdout.contains("8192 x 8192 pixels, 64 spheres"),
        "{listed:?}"
    );
}

/// Issue 62: every line of `tests/corners.txt` (the corners of week 4's legal case space, which the
/// GPU tests run with ours) is still a legal case.
#[test]
fn the_corners_of_the_legal_case_space_are_legal() {
    common::testing::assert_corners_are_legal(LAB, &[], concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corners.txt"));
}

//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{assert_default_run_suits_this_machine, assert_every_value_flag_fails_cleanly, run};

const LAB: &str = env!("CARGO_BIN_EXE_lab-simpson");

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in [
        "--a",
        "--b",
        "--intervals",
        "--block-size",
        "--integrand",
        "--repetitions",
        "--ptxas",
    ] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn fails_when_block_size_is_zero() {
    let outcome = run(LAB, &["--block-size", "0"]);
    assert!(
        outcome.is_one_line_error("lab-simpson", "'--block-size <BLOCK_SIZE>'"),
        "{outcome:?}"
    );
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
    assert!(
        outcome.is_one_line_error("lab-simpson", "--b -1 must be greater than --a 2"),
        "{outcome:?}"
    );
}

#[test]
fn fails_when_intervals_do_not_fill_whole_blocks() {
    let outcome = run(LAB, &["--intervals", "1000"]);
    assert!(
        outcome.is_one_line_error("lab-simpson", "not a multiple of --block-size 256"),
        "{outcome:?}"
    );
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

/// Issue 26: any u64 is an answer, not an overflow (it was a panic in the dev profile and a wrapped
/// size in release).
#[test]
fn any_interval_count_up_to_the_largest_u64_is_a_one_line_error() {
    for (intervals, message) in [
        ("18446744073709551615", "--intervals 18446744073709551615 is not a multiple of --block-size 256: the slide's kernel gives each of its gridDim.x * blockDim.x threads one sub-interval (try a multiple of 256)"),
        ("18446744073709551360", "--intervals 18446744073709551360 is too large: its sums alone would need over 16 EiB"),
        ("576460752303423488", "--intervals 576460752303423488 needs 12.0 EiB of host memory"),
    ] {
        let outcome = run(LAB, &["--intervals", intervals]);
        assert!(outcome.is_one_line_error("lab-simpson", message), "{outcome:?}");
    }
}

#[test]
fn refuses_more_sub_intervals_than_host_memory_holds_before_touching_the_gpu() {
    let outcome = run(LAB, &["--intervals", "1099511627776"]);
    assert!(
        outcome.is_one_line_error("lab-simpson", "--intervals 1099511627776 needs 24.0 TiB of host memory"),
        "{outcome:?}"
    );
}

#[test]
fn a_students_kernel_is_compiled_before_the_gpu_and_its_errors_are_clear() {
    let missing = run(LAB, &["--kernel-source", "no-such-kernel.cu"]);
    assert!(
        missing.is_one_line_error(
            "lab-simpson",
            "cannot read the kernel source no-such-kernel.cu (looked in "
        ),
        "{missing:?}"
    );
    // nvcc's own message, file and line, then the lab's one line.
    let bad = common::testing::temp_file(
        "bad.cu",
        "__global__ void simpson(double a, double b, double* sums) {\n  sums[0] = c;\n}\n",
    );
    let outcome = run(LAB, &["--kernel-source", &bad]);
    assert_eq!(outcome.code, Some(1), "{outcome:?}");
    assert!(
        outcome
            .stderr
            .contains("bad.cu(2): error: identifier \"c\" is undefined"),
        "{outcome:?}"
    );
    // Issue 45: the one line names the first error too, for a CSV's note.
    assert!(
        outcome
            .stderr
            .trim_end()
            .ends_with("bad.cu (its messages are above); the first: ")
            || outcome
                .stderr
                .trim_end()
                .ends_with("bad.cu(2): error: identifier \"c\" is undefined"),
        "{outcome:?}"
    );
    assert!(
        outcome.stderr.contains("bad.cu (its messages are above); the first: "),
        "{outcome:?}"
    );
    let float = common::testing::temp_file(
        "float.cu",
        "__global__ void simpson(float a, float b, float* sums) { sums[0] = a + b; }\n",
    );
    let outcome = run(LAB, &["--kernel-source", &float]);
    assert!(outcome.is_one_line_error("lab-simpson", "has no kernel `__global__ void simpson(double a, double b, double* sums)` (the lab looks for `_Z7simpsonddPd`); it has the kernels _Z7simpsonffPf"), "{outcome:?}");
    let outcome = run(LAB, &["--check"]);
    assert!(
        outcome.is_one_line_error_with(
            2,
            "lab-simpson",
            "the following required arguments were not provided: --kernel-source <FILE.cu>"
        ),
        "{outcome:?}"
    );
}

#[test]
fn the_week_1_template_compiles_and_shows_its_ptxas_report() {
    let template = common::testing::repository_file("assignments/01-simpson/simpson.cu", env!("CARGO_MANIFEST_DIR"));
    let outcome = run(LAB, &["--kernel-source", &template]);
    assert!(
        outcome
            .stdout
            .contains("ptxas info    : Compiling entry function '_Z7simpsonddPd' for 'sm_"),
        "{outcome:?}"
    );
    if !common::testing::machine_has_gpu() {
        assert!(
            outcome.is_one_line_error("lab-simpson", "no usable CUDA GPU"),
            "{outcome:?}"
        );
        // Issue 26: first that the file compiled and to what, then one line: the machine has no GPU
        // (issue 45: MACHINE, exit code 3).
        let check = run(LAB, &["--kernel-source", &template, "--check"]);
        let lines: Vec<&str> = check.stderr.lines().collect();
        assert_eq!(
            (check.code, lines.len()),
            (Some(3), 2),
            "one error, not one per case: {check:?}"
        );
        assert!(lines[0].ends_with("simpson 4 registers, 0 bytes shared; simpson_sin 4 registers, 0 bytes shared; simpson_exp 4 registers, 0 bytes shared; simpson_peak 4 registers, 0 bytes shared") && lines[0].contains("simpson.cu compiled (no GPU found"), "{check:?}");
        assert!(lines[1].starts_with("lab-simpson: error: machine: 6 of 6 checks could not run on this machine, none of them for the kernel: no usable CUDA GPU"), "{check:?}");
        assert!(
            common::testing::check_row(&check.stdout, "blocks of 1").contains("| MACHINE |"),
            "{check:?}"
        );
    }
}

#[test]
fn every_value_flag_takes_any_number_or_word_without_a_panic() {
    // Every flag of --help with numbers at and past u32 and u64, negative ones, units and words.
    assert_every_value_flag_fails_cleanly(LAB, "lab-simpson");
}

/// Issue 45: week 3's mmm.cu given to lab-simpson is one line naming lab-mmm, decided before nvcc
/// (which would stop at an `#error` inside the file), with or without --check.
#[test]
fn another_weeks_file_names_the_lab_it_belongs_to() {
    let mmm = common::testing::repository_file("assignments/03-mmm-tiled/mmm.cu", env!("CARGO_MANIFEST_DIR"));
    for args in [
        &["--kernel-source", &mmm, "--check"][..],
        &["--kernel-source", &mmm][..],
    ] {
        let outcome = run(LAB, args);
        assert!(outcome.is_one_line_error("lab-simpson", "mmm.cu is week 02-mmm-ab or 03-mmm-tiled's file (it defines mmm_ab_f32, mmm_ab_f64, mmm_f32, mmm_f64): check it with lab-mmm --kernel naive or --kernel tiled, not lab-simpson"), "{outcome:?}");
    }
    // A dry run of week 1's own file: it compiles, and week 1 has no rule read from what nvcc made.
    let simpson = common::testing::repository_file("assignments/01-simpson/simpson.cu", env!("CARGO_MANIFEST_DIR"));
    let dry = run(LAB, &["--kernel-source", &simpson, "--check", "--dry-run", "--csv"]);
    // grade.sh's run of it (issue 60): the key on stdin, the closing mark after the CSV, which the lab
    // vouches for, and for nothing changed; no key is a usage error in one line.
    let key = "00ff".repeat(16);
    let marked = common::testing::run_with_stdin(
        LAB,
        &["--kernel-source", &simpson, "--check", "--dry-run", "--csv", "--mark"],
        format!("{key}\n").as_bytes(),
    );
    assert!(
        marked.code == Some(0)
            && marked.stdout.starts_with(&dry.stdout)
            && marked
                .stdout
                .lines()
                .nth(2)
                .is_some_and(|mark| mark.starts_with("#mark 0 ")),
        "{marked:?}"
    );
    common::testing::assert_mark_vouches_for(LAB, &key, 0, &marked.stdout);
    let keyless = common::testing::run_with_stdin(
        LAB,
        &["--kernel-source", &simpson, "--check", "--dry-run", "--csv", "--mark"],
        b"",
    );
    assert!(
        keyless.is_one_line_error_with(
            2,
            "lab-simpson",
            "--mark needs a key of 64 hex digits on stdin's first line"
        ),
        "{keyless:?}"
    );
    assert_eq!(dry.code, Some(0), "{dry:?}");
    assert!(
        dry.stdout
            .lines()
            .nth(1)
            .unwrap_or_default()
            .ends_with("\",-,-,-,-,-,-,0/0,,,\"dry run: no GPU used\",")
            || dry.stdout.contains(",-,-,-,-,-,-,0/0,,,\"dry run: no GPU used\","),
        "{dry:?}"
    );
}

/// Issue 61: week 1's honest corpus (correct kernels written differently from ours: points from the
/// interval's ends, helpers, explicit fma, weights in a loop, a grid-stride loop) compiles and its
/// dry run passes; the GPU tests run its cases.
#[test]
fn the_honest_corpus_of_week_1_compiles_and_its_dry_run_passes() {
    for file in common::testing::honest_kernels("01-simpson", env!("CARGO_MANIFEST_DIR")) {
        let outcome = run(LAB, &["--kernel-source", &file, "--check", "--dry-run"]);
        assert!(
            outcome.code == Some(0) && !outcome.stdout.contains("| FAIL |"),
            "{file}: {outcome:?}"
        );
    }
}

/// Issue 62: every line of `tests/corners.txt` (the corners of week 1's legal case space, which the
/// GPU tests run with ours) is still a legal case.
#[test]
fn the_corners_of_the_legal_case_space_are_legal() {
    common::testing::assert_corners_are_legal(LAB, &[], concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corners.txt"));
}

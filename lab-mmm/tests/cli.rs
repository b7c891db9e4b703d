//! The command line as a user meets it, on any machine (CI has no GPU).

use common::testing::{assert_default_run_suits_this_machine, assert_every_value_flag_fails_cleanly, run, temp_file};

const LAB: &str = env!("CARGO_BIN_EXE_lab-mmm");

fn data(name: &str) -> String {
    format!("{}/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn help_explains_every_flag() {
    let outcome = run(LAB, &["--help"]);
    assert_eq!(outcome.code, Some(0));
    for flag in [
        "--random",
        "--size",
        "--kernel",
        "--block-size",
        "--precision",
        "--repetitions",
        "--seed",
        "--print",
        "--output",
        "--force",
        "--ptxas",
        "--ladder",
        "--sweep",
        "--plot",
        "--tile-example",
        "--unroll",
        "--reads",
    ] {
        assert!(outcome.stdout.contains(flag), "--help does not mention {flag}");
    }
    // What --reads runs under ncu is no flag of the user's.
    assert!(!outcome.stdout.contains("--reads-child"), "{}", outcome.stdout);
}

/// `--unroll` times the tiled kernel's variants and `--reads` counts the slides' two kernels under ncu:
/// neither takes the flags that choose or write another run's products, nor the other, and `--reads`
/// runs its own ncu (not inside `--counters`').
#[test]
fn unroll_and_reads_refuse_what_they_do_not_run() {
    for (args, flag) in [
        (&["--unroll", "--reads"][..], "--unroll"),
        (&["--unroll", "--kernel", "naive"], "--unroll"),
        (&["--unroll", "--ladder"], "--unroll"),
        (&["--unroll", "--output", "/tmp/lab-mmm-never-written.txt"], "--unroll"),
        (&["--reads", "--counters"], "--reads"),
        (&["--reads", "--ptxas"], "--reads"),
        (&["--reads", "--kernel", "tiled"], "--reads"),
        (&["--reads", "lab-mmm/data/A.txt", "lab-mmm/data/B.txt"], "--reads"),
    ] {
        let outcome = run(LAB, args);
        assert!(
            outcome.is_one_line_error("lab-mmm", &format!("'{flag}")) && outcome.stderr.contains("cannot be used with"),
            "{args:?}: {outcome:?}"
        );
    }
    let outcome = run(LAB, &["--unroll", "--block-size", "8"]);
    assert!(outcome.is_one_line_error("lab-mmm", "--block-size"), "{outcome:?}");
}

#[test]
fn fails_on_a_file_that_does_not_exist() {
    let outcome = run(LAB, &["/nonexistent/A.txt", &data("B.txt")]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "reading /nonexistent/A.txt: No such file"),
        "{outcome:?}"
    );
}

#[test]
fn fails_on_a_malformed_number_naming_file_line_and_column() {
    let a = temp_file("bad-number.txt", "1 2\n3 4,5\n");
    let outcome = run(LAB, &[&a, &data("B.txt")]);
    assert!(
        outcome.is_one_line_error("lab-mmm", &format!("{a}:2:3: \"4,5\" is not a finite number")),
        "{outcome:?}"
    );
}

#[test]
fn fails_on_ragged_rows() {
    let a = temp_file("ragged.txt", "1 2 3\n4 5\n");
    let outcome = run(LAB, &[&a, &data("B.txt")]);
    assert!(
        outcome.is_one_line_error("lab-mmm", ":2: this row has 2 elements, the first row (line 1) has 3"),
        "{outcome:?}"
    );
}

#[test]
fn fails_on_an_empty_file() {
    let a = temp_file("empty.txt", "# nothing here\n\n");
    let outcome = run(LAB, &[&a, &data("B.txt")]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "no matrix in the file"),
        "{outcome:?}"
    );
}

#[test]
fn fails_when_inner_sizes_do_not_match_before_touching_the_gpu() {
    let outcome = run(LAB, &[&data("B.txt"), &data("B.txt")]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "sizes of the matrices do not match: A is 4 x 2, B is 4 x 2"),
        "{outcome:?}"
    );
}

#[test]
fn fails_on_a_size_of_zero() {
    for args in [
        vec!["--random", "0"],
        vec!["--size", "0"],
        vec!["--size", "4", "0", "4"],
    ] {
        let outcome = run(LAB, &args);
        assert!(outcome.is_one_line_error("lab-mmm", "invalid value '0'"), "{outcome:?}");
    }
}

#[test]
fn fails_on_a_block_size_that_is_not_compiled() {
    let outcome = run(LAB, &["--block-size", "16,8"]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "compiled for BLOCK_SIZE [16, 32] only"),
        "{outcome:?}"
    );
}

#[test]
fn refuses_to_overwrite_an_output_file() {
    let existing = temp_file("C.txt", "1\n");
    let outcome = run(LAB, &["--random", "4", "--output", &existing]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "exists; not overwriting it (--force replaces it)"),
        "{outcome:?}"
    );
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "1\n");
}

#[test]
fn default_run_needs_a_gpu_and_says_so_without_one() {
    assert_default_run_suits_this_machine(LAB, "lab-mmm");
}

#[test]
fn refuses_random_matrices_larger_than_host_memory_before_filling_them() {
    // Issue 12: this used to fill host matrices for a minute, or abort with a backtrace.
    let outcome = run(LAB, &["--random", "200000"]);
    let needle = "multiplying 200000 x 200000 by 200000 x 200000 needs 2.3 TiB of host memory, but this machine has";
    assert!(outcome.is_one_line_error("lab-mmm", needle), "{outcome:?}");
}

/// TF32 and the sweep are the ladder's; the plot is the sweep's. Each misuse is one line, before any
/// GPU is looked for, and no plot is written over a file that is there.
#[test]
fn tf32_the_sweep_and_its_plot_belong_to_the_ladder() {
    let outcome = run(LAB, &["--precision", "tf32"]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "--precision tf32 is the ladder's (--ladder)"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--sweep"]);
    assert!(outcome.is_one_line_error("lab-mmm", "--ladder"), "{outcome:?}");
    let outcome = run(LAB, &["--ladder", "--plot", "/tmp/lab-mmm-never-written.svg"]);
    assert!(outcome.is_one_line_error("lab-mmm", "--sweep"), "{outcome:?}");
    let outcome = run(LAB, &["--ladder", "--sweep", "--size", "100"]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "'--sweep' cannot be used with"),
        "{outcome:?}"
    );
    let plot = temp_file("lab-mmm-sweep.svg", "not a plot");
    let outcome = run(LAB, &["--ladder", "--sweep", "--plot", &plot]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "exists; not overwriting it (--force replaces it)"),
        "{outcome:?}"
    );
    assert_eq!(std::fs::read_to_string(&plot).unwrap(), "not a plot");
}

/// --force replaces the file of --output or --plot; alone it has nothing to replace.
#[test]
fn force_needs_a_file_to_replace() {
    for args in [&["--force"][..], &["--ladder", "--force"]] {
        let outcome = run(LAB, args);
        assert!(
            outcome.is_one_line_error("lab-mmm", "<--output <FILE>|--plot <FILE.svg>>"),
            "{outcome:?}"
        );
    }
}

/// --tile-example is the slide's example, its sizes and tile width: no matrices, block sizes or
/// precisions of ours, and each such flag is one line before any GPU is looked for.
#[test]
fn the_tile_example_takes_no_matrices_block_sizes_or_precisions() {
    for args in [
        &["--tile-example", "--block-size", "16"][..],
        &["--tile-example", "--size", "8"],
        &["--tile-example", "--precision", "f32"],
        &["--tile-example", "--ladder"],
        &["--tile-example", &data("A.txt"), &data("B.txt")],
    ] {
        let outcome = run(LAB, args);
        assert!(
            outcome.is_one_line_error("lab-mmm", "'--tile-example' cannot be used with"),
            "{args:?}: {outcome:?}"
        );
    }
}

#[test]
fn the_ladder_runs_on_random_matrices_only() {
    let outcome = run(LAB, &["--ladder", "lab-mmm/data/A.txt", "lab-mmm/data/B.txt"]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "'--ladder' cannot be used with"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--ladder", "--output", "/tmp/lab-mmm-never-written.txt"]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "'--ladder' cannot be used with"),
        "{outcome:?}"
    );
}

#[test]
fn a_students_file_without_the_weeks_kernel_is_one_line_naming_it() {
    let other = common::testing::temp_file("other.cu", "#include \"matrix_view.cuh\"\nextern \"C\" __global__ void mmm_ab_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) {}\n");
    let outcome = run(LAB, &["--kernel-source", &other, "--kernel", "naive"]);
    assert!(outcome.is_one_line_error("lab-mmm", "has no kernel `extern \"C\" __global__ void mmm_ab_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c)` (the lab looks for `mmm_ab_f32`); it has the kernels mmm_ab_f64"), "{outcome:?}");
    let outcome = run(LAB, &["--kernel-source", &other, "--ladder"]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "cannot be used with"),
        "{outcome:?}"
    );
}

/// Issue 21: hidden cases are read and checked before anything else, errors naming file, line and
/// value; `--list-cases` shows them (and with `--csv` the grading header) on any machine.
#[test]
fn a_cases_file_is_listed_or_refused_line_by_line_without_a_gpu() {
    let cases = temp_file(
        "week3-cases.txt",
        "# M K N PRECISION SEED\n31 47 19 f64 5  # odd sizes\n\n300 17 1 f32 6\n",
    );
    let listed = run(LAB, &["--kernel", "tiled", "--list-cases", "--cases", &cases]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    let lines: Vec<&str> = listed.stdout.lines().collect();
    // Week 3's three rules read from the code come first (issues 29 and 39), then its three measured
    // ones, then the file's cases.
    assert!(
        lines[0].starts_with("8 cases (case set ")
            && lines[1].starts_with("tiles: ")
            && lines[2].starts_with("barrier: ")
            && lines[3].starts_with("loads: "),
        "{listed:?}"
    );
    assert!(
        lines[4..7].iter().all(|line| line.starts_with("tiling, measured: ")),
        "{listed:?}"
    );
    assert_eq!(
        lines[7..],
        ["mmm f64, 31 x 47 times 47 x 19", "mmm f32, 300 x 17 times 17 x 1"],
        "{listed:?}"
    );
    let header = run(LAB, &["--kernel", "naive", "--list-cases", "--csv", "--cases", &cases]);
    assert_eq!(header.stdout, "file,\"mmm-ab f64, 31 x 47 times 47 x 19\",\"mmm-ab f32, 300 x 17 times 17 x 1\",passed,time ratio,flags,note,case set\n", "{header:?}");
    let bad = temp_file("bad-cases.txt", "31 47 19 f64 5\n0 47 19 f64 5\n");
    let refused = run(LAB, &["--kernel", "tiled", "--list-cases", "--cases", &bad]);
    assert!(
        refused.is_one_line_error_with(
            2,
            "lab-mmm",
            &format!("{bad}:2: M \"0\" is not a number from 1 to 8192")
        ),
        "{refused:?}"
    );
    let huge = temp_file("huge-cases.txt", "2048 2048 2048 f64 1\n2048 2048 2049 f64 1\n");
    assert!(run(LAB, &["--list-cases", "--cases", &huge]).is_one_line_error_with(
        2,
        "lab-mmm",
        ":2: M x K x N = 8594128896 is over 8589934592 (2048 x 2048 x 2048), too long for the CPU's product"
    ));
    let short = temp_file("short-cases.txt", "31 47\n");
    assert!(run(LAB, &["--list-cases", "--cases", &short]).is_one_line_error_with(
        2,
        "lab-mmm",
        ":1: 2 fields where a case has 5 (M K N PRECISION SEED)"
    ));
    // The week's own cases have a hash of their own.
    let week = run(LAB, &["--kernel", "tiled", "--list-cases"]);
    assert!(
        week.stdout.starts_with("18 cases (case set ") && !week.stdout.contains(&lines[0][lines[0].len() - 18..]),
        "{week:?}"
    );
}

#[test]
fn check_flags_without_check_are_one_line_errors() {
    assert!(run(LAB, &["--csv"]).is_one_line_error("lab-mmm", "--csv goes with --check or --list-cases"));
    let cases = temp_file("unused-cases.txt", "1 1 1 f64 1\n");
    assert!(run(LAB, &["--cases", &cases]).is_one_line_error("lab-mmm", "--cases goes with --check or --list-cases"));
    // --sanitize needs --check, which needs a file.
    assert!(run(LAB, &["--sanitize"]).is_one_line_error("lab-mmm", "--kernel-source"));
    assert!(run(LAB, &["--time-limit", "60"]).is_one_line_error("lab-mmm", "--kernel-source"));
    let source = temp_file("time-limit.cu", "");
    // With --check, a bad flag is a usage error of the check: exit code 2 (issue 45).
    assert!(
        run(LAB, &["--kernel-source", &source, "--check", "--time-limit", "0"]).is_one_line_error_with(
            2,
            "lab-mmm",
            "--time-limit"
        )
    );
    assert!(run(LAB, &["--kernel-source", &source, "--dry-run"]).is_one_line_error_with(2, "lab-mmm", "--check"));
}

/// Issue 29: a student's file is compiled, and --check would run, in private folders made for the
/// purpose: with TMPDIR and the working folder fresh and empty, both are empty again after the run
/// (here it ends at the missing GPU, after the compile; on a GPU machine, after the cases).
#[test]
fn a_check_leaves_no_file_behind_in_the_temporary_or_working_folder() {
    let (tmp, work) = (
        common::private_dir::PrivateDir::new("tmpdir-test").unwrap(),
        common::private_dir::PrivateDir::new("cwd-test").unwrap(),
    );
    let source = format!("{}/../kernels/cuda/mmm.cu", env!("CARGO_MANIFEST_DIR"));
    for args in [
        &["--kernel-source", &source, "--kernel", "tiled", "--check"][..],
        &["--kernel-source", &source, "--kernel", "tiled"][..],
    ] {
        let output = std::process::Command::new(LAB)
            .args(args)
            .current_dir(work.path())
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap();
        assert!(
            !String::from_utf8_lossy(&output.stderr).contains("panicked"),
            "{output:?}"
        );
        for dir in [tmp.path(), work.path()] {
            let left: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .collect();
            assert!(left.is_empty(), "{args:?} left {left:?}");
        }
    }
}

#[test]
fn size_reads_as_in_the_other_labs_one_number_for_square_matrices() {
    // Too large for any host, so the run stops at the size check (before any GPU) and names the sizes.
    let outcome = run(LAB, &["--size", "3000000"]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "multiplying 3000000 x 3000000 by 3000000 x 3000000 needs"),
        "{outcome:?}"
    );
    let outcome = run(LAB, &["--size", "3000000", "3000000", "7"]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "multiplying 3000000 x 3000000 by 3000000 x 7 needs"),
        "{outcome:?}"
    );
}

#[test]
fn size_with_two_numbers_says_what_it_takes() {
    let outcome = run(LAB, &["--size", "4", "5"]);
    assert!(
        outcome.is_one_line_error(
            "lab-mmm",
            "--size takes N (N x N matrices) or M K N, not the 2 numbers [4, 5]"
        ),
        "{outcome:?}"
    );
}

#[test]
fn the_largest_sizes_are_refused_without_overflow() {
    let outcome = run(LAB, &["--size", "4294967295"]);
    assert!(
        outcome.is_one_line_error("lab-mmm", "needs 16.0 EiB of host memory"),
        "{outcome:?}"
    );
}

#[test]
fn every_value_flag_takes_any_number_or_word_without_a_panic() {
    // Every flag of --help with numbers at and past u32 and u64, negative ones, units and words.
    assert_every_value_flag_fails_cleanly(LAB, "lab-mmm");
}

/// Issue 29: week 3's rules need no GPU (they read what nvcc made), so they show on any machine: our
/// kernel keeps both, the naive body in the tiled kernel breaks both, and a missing first barrier
/// keeps the second one in the loop (the values and racecheck catch that one).
#[test]
fn week_3_rules_read_the_tiles_from_ptxas_and_the_barrier_from_the_ptx() {
    let check = |file: &str| {
        common::testing::check_kernel_source(
            "lab-mmm",
            LAB,
            env!("CARGO_MANIFEST_DIR"),
            file,
            &["--kernel", "tiled", "--dry-run"],
        )
    };
    let (tiles, barrier) = ("tiles: mmm_f64 and mmm_f32", "barrier: mmm_f64 and mmm_f32");
    for file in [
        "kernels/cuda/mmm.cu",
        "assignments/03-mmm-tiled/broken/missing-syncthreads.cu",
    ] {
        let outcome = check(file);
        for rule in [tiles, barrier] {
            assert!(
                common::testing::check_row(&outcome.stdout, rule).contains("| PASS | 0 of 2 |"),
                "{file}: {outcome:?}"
            );
        }
    }
    let naive = check("assignments/03-mmm-tiled/broken/naive-body-in-tiled.cu");
    assert_eq!(naive.code, Some(1), "{naive:?}");
    let row = common::testing::check_row(&naive.stdout, tiles);
    assert!(row.contains("| FAIL | 2 of 2 | mmm_f64 | 0 bytes of shared memory | at least 4096: two 16 x 16 tiles of double | ptxas report (sm_"), "{row}");
    let row = common::testing::check_row(&naive.stdout, barrier);
    assert!(row.contains("| FAIL | 2 of 2 | mmm_f64 | no __syncthreads() | __syncthreads() inside the loop over the tiles | the PTX |"), "{row}");
    // Week 2 (the naive kernels) has no rule.
    let week_2 = common::testing::check_kernel_source(
        "lab-mmm",
        LAB,
        env!("CARGO_MANIFEST_DIR"),
        "kernels/cuda/mmm.cu",
        &["--kernel", "naive", "--dry-run"],
    );
    assert!(
        !week_2.stdout.contains("tiles:") && week_2.code == Some(0),
        "{week_2:?}"
    );
}

/// Issue 61: the honest corpora of weeks 2 and 3 (correct kernels written differently from ours:
/// flat or padded tiles, helpers, while loops, pointer walks, fused multiply-adds) compile and pass
/// every rule read from what nvcc made; the GPU tests run their cases.
#[test]
fn the_honest_corpora_of_weeks_2_and_3_pass_the_rules_read_from_the_code() {
    for (week, kernel) in [("02-mmm-ab", "naive"), ("03-mmm-tiled", "tiled")] {
        for file in common::testing::honest_kernels(week, env!("CARGO_MANIFEST_DIR")) {
            let outcome = common::testing::check_kernel_source(
                "lab-mmm",
                LAB,
                env!("CARGO_MANIFEST_DIR"),
                &file,
                &["--kernel", kernel, "--dry-run"],
            );
            assert!(
                outcome.code == Some(0) && !outcome.stdout.contains("| FAIL |"),
                "{file}: {outcome:?}"
            );
        }
    }
}

/// Issue 39: the red-team corpus of week 3, the verdicts that need no GPU (compile errors, rules read
/// from what nvcc made); the GPU tests run all of them.
#[test]
fn the_week_3_red_team_gets_its_static_verdicts_without_a_gpu() {
    common::testing::assert_red_team(
        "03-mmm-tiled",
        "lab-mmm",
        env!("CARGO_BIN_EXE_lab-mmm"),
        env!("CARGO_MANIFEST_DIR"),
        &["--kernel", "tiled"],
        true,
    );
}

/// Issue 45: `--check --dry-run` compiles the file and judges the rules read from what nvcc made, on
/// a machine without a GPU (CI's): every case and measured rule is `-`, the note says so, and the
/// exit code is 0 only where the file compiles and the rules pass.
#[test]
fn a_dry_run_judges_the_rules_alone_without_a_gpu() {
    let dry = |file: &str| {
        common::testing::check_kernel_source(
            "lab-mmm",
            LAB,
            env!("CARGO_MANIFEST_DIR"),
            file,
            &["--kernel", "tiled", "--dry-run", "--csv"],
        )
    };
    let row = |outcome: &common::testing::Outcome| outcome.stdout.lines().nth(1).unwrap_or_default().to_string();
    let starter = dry("assignments/03-mmm-tiled/mmm.cu");
    assert_eq!(starter.code, Some(1), "{starter:?}");
    assert!(
        row(&starter).contains("mmm.cu\",FAIL,FAIL,PASS,-,-,-,-,-,-,-,-,-,-,-,-,-,-,-,1/3,,,\"dry run: no GPU used\","),
        "{starter:?}"
    );
    let ours = dry("kernels/cuda/mmm.cu");
    assert_eq!(ours.code, Some(0), "{ours:?}");
    assert!(
        row(&ours).contains(",PASS,PASS,PASS,-,") && row(&ours).contains(",3/3,,,\"dry run: no GPU used\","),
        "{ours:?}"
    );
    assert!(
        ours.stderr
            .contains("compiled (dry run: for the newest architecture the labs are built for, sm_"),
        "{ours:?}"
    );
    let broken = dry("assignments/03-mmm-tiled/broken/naive-body-in-tiled.cu");
    assert!(
        broken.code == Some(1) && row(&broken).contains(",FAIL,FAIL,PASS,-,"),
        "{broken:?}"
    );
    // The table says which checks did not run.
    let table = common::testing::check_kernel_source(
        "lab-mmm",
        LAB,
        env!("CARGO_MANIFEST_DIR"),
        "kernels/cuda/mmm.cu",
        &["--kernel", "tiled", "--dry-run"],
    );
    assert!(
        table.code == Some(0)
            && table
                .stdout
                .contains("Not run (a dry run uses no GPU): the 15 cases and measured rules below"),
        "{table:?}"
    );
    // A file that does not compile: FAIL for the rules, `-` for the rest, the compile error as the note.
    let bad = temp_file("dry-bad.cu", "#include \"matrix_view.cuh\"\nextern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { c(0, 0) = x; }\n");
    let outcome = run(
        LAB,
        &[
            "--kernel-source",
            &bad,
            "--kernel",
            "tiled",
            "--check",
            "--dry-run",
            "--csv",
        ],
    );
    assert!(
        outcome.code == Some(1)
            && row(&outcome).contains(",FAIL,FAIL,FAIL,-,")
            && row(&outcome).contains("0/3,,,\"compile error: nvcc could not compile"),
        "{outcome:?}"
    );
    assert!(
        row(&outcome).contains("the first: ") && row(&outcome).contains("error: identifier \"\"x\"\" is undefined"),
        "{outcome:?}"
    );
}

/// Issue 45: a file name that is not UTF-8 (grade.sh passes names as they are) is checked like any
/// other, never a panic.
#[test]
fn a_file_name_that_is_not_utf8_is_checked() {
    use std::os::unix::ffi::OsStrExt;
    let source = std::fs::read(common::testing::repository_file(
        "kernels/cuda/mmm.cu",
        env!("CARGO_MANIFEST_DIR"),
    ))
    .unwrap();
    let dir = std::path::PathBuf::from(temp_file("placeholder.txt", ""))
        .parent()
        .unwrap()
        .to_path_buf();
    let file = dir.join(std::ffi::OsStr::from_bytes(b"J\xfcrgen.cu"));
    std::fs::write(&file, source).unwrap();
    let outcome = std::process::Command::new(LAB)
        .arg("--kernel-source")
        .arg(&file)
        .args(["--kernel", "tiled", "--check", "--dry-run", "--csv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&outcome.stderr);
    assert_eq!(outcome.status.code(), Some(0), "{stderr}");
    assert!(
        String::from_utf8_lossy(&outcome.stdout).contains(",PASS,PASS,PASS,-,"),
        "{stderr}"
    );
}

/// Issue 45: without a GPU, `--check` still prints its row: the rules judged, MACHINE for the rest,
/// the note `machine: ` and why, exit code 3; never the student's FAULT or a compile error.
#[test]
fn a_check_without_a_gpu_is_the_machines_with_exit_code_3() {
    if common::testing::machine_has_gpu() {
        return; // the GPU tests run the cases
    }
    let outcome = common::testing::check_kernel_source(
        "lab-mmm",
        LAB,
        env!("CARGO_MANIFEST_DIR"),
        "kernels/cuda/mmm.cu",
        &["--kernel", "tiled", "--csv"],
    );
    let row = outcome.stdout.lines().nth(1).unwrap_or_default();
    assert_eq!(outcome.code, Some(3), "{outcome:?}");
    assert!(
        row.contains("\",PASS,PASS,PASS,MACHINE,MACHINE,MACHINE,MACHINE,")
            && row.contains(",3/18,,,\"machine: no usable CUDA GPU"),
        "{outcome:?}"
    );
    assert!(
        outcome
            .stderr
            .lines()
            .last()
            .unwrap_or_default()
            .starts_with("lab-mmm: error: machine: 15 of 18 checks could not run on this machine"),
        "{outcome:?}"
    );
    // A rule the student fails stands beside the machine's columns; the row is incomplete: exit 3.
    let starter = common::testing::check_kernel_source(
        "lab-mmm",
        LAB,
        env!("CARGO_MANIFEST_DIR"),
        "assignments/03-mmm-tiled/mmm.cu",
        &["--kernel", "tiled"],
    );
    assert_eq!(starter.code, Some(3), "{starter:?}");
    assert!(
        common::testing::check_row(&starter.stdout, "tiles: ").contains("| FAIL |")
            && common::testing::check_row(&starter.stdout, "mmm f64, 1 x 1").contains("| MACHINE |"),
        "{starter:?}"
    );
    assert!(
        starter.stdout.contains("\nMACHINE: machine: no usable CUDA GPU"),
        "{starter:?}"
    );
    // A compile error is the student's, GPU or not.
    let bad = temp_file("machine-bad.cu", "this is not CUDA\n");
    let outcome = run(LAB, &["--kernel-source", &bad, "--kernel", "tiled", "--check", "--csv"]);
    assert!(
        outcome.code == Some(1)
            && outcome
                .stdout
                .lines()
                .nth(1)
                .unwrap_or_default()
                .contains(",FAIL,FAIL,FAIL,FAIL,"),
        "{outcome:?}"
    );
}

/// Issue 45: without --kernel, --check says which week it checks, chosen from the file (weeks 2 and 3
/// hand out the same mmm.cu; week 3's tiled kernel keeps tiles in shared memory), and how to choose.
#[test]
fn the_week_is_chosen_from_the_file_and_said_in_one_line() {
    let dry = |file: &str| {
        common::testing::check_kernel_source(
            "lab-mmm",
            LAB,
            env!("CARGO_MANIFEST_DIR"),
            file,
            &["--dry-run", "--csv"],
        )
    };
    let tiled = dry("kernels/cuda/mmm.cu");
    assert!(tiled.stderr.lines().next().unwrap_or_default().ends_with("its tiled mmm keeps tiles in shared memory: checking week 3 (03-mmm-tiled, as --kernel tiled); --kernel naive checks week 2's mmm_ab"), "{tiled:?}");
    assert!(
        tiled.stdout.starts_with("file,\"tiles: ") && !tiled.stdout.contains("mmm-ab f64"),
        "{tiled:?}"
    );
    let starter = dry("assignments/02-mmm-ab/mmm.cu");
    assert!(starter.stderr.lines().next().unwrap_or_default().contains("its tiled mmm uses no shared memory: checking week 2 (02-mmm-ab, as --kernel naive); --kernel tiled checks week 3's tiled mmm"), "{starter:?}");
    assert!(
        starter.stdout.starts_with("file,\"mmm-ab f64, 1 x 1")
            && starter
                .stdout
                .lines()
                .next()
                .unwrap_or_default()
                .matches("mmm-ab")
                .count()
                == 12,
        "{starter:?}"
    );
}

/// Issue 45: a bad `--cases` file is one line naming the file, the line and the problem, exit code 2,
/// before anything is compiled.
#[test]
fn a_bad_cases_file_with_check_is_a_usage_error() {
    let bad = temp_file("check-bad-cases.txt", "31 47 19 f64 5\n5 x 3 f32 2\n");
    let source = common::testing::repository_file("assignments/03-mmm-tiled/mmm.cu", env!("CARGO_MANIFEST_DIR"));
    let outcome = run(
        LAB,
        &[
            "--kernel-source",
            &source,
            "--kernel",
            "tiled",
            "--check",
            "--csv",
            "--cases",
            &bad,
        ],
    );
    assert!(
        outcome.is_one_line_error_with(
            2,
            "lab-mmm",
            &format!("{bad}:2: K \"x\" is not a number from 1 to 8192")
        ),
        "{outcome:?}"
    );
    let missing = run(
        LAB,
        &["--kernel-source", &source, "--check", "--cases", "/no/such/cases.txt"],
    );
    assert!(
        missing.is_one_line_error_with(2, "lab-mmm", "cannot read the cases file /no/such/cases.txt"),
        "{missing:?}"
    );
}

/// Issue 45: another week's file is one line naming its lab, not an `#error` from inside the kernel.
#[test]
fn another_weeks_file_names_the_lab_it_belongs_to() {
    let simpson = common::testing::repository_file("assignments/01-simpson/simpson.cu", env!("CARGO_MANIFEST_DIR"));
    let outcome = run(LAB, &["--kernel-source", &simpson, "--kernel", "tiled", "--check"]);
    assert!(outcome.is_one_line_error("lab-mmm", "simpson.cu is week 01-simpson's file (it defines simpson, simpson_sin, simpson_exp, simpson_peak): check it with lab-simpson, not lab-mmm"), "{outcome:?}");
}

/// Issue 62: every line of `tests/corners.txt` (the corners of weeks 2 and 3's legal case space, which
/// the GPU tests run with ours) is still a legal case of both weeks.
#[test]
fn the_corners_of_the_legal_case_space_are_legal() {
    for kernel in ["naive", "tiled"] {
        common::testing::assert_corners_are_legal(
            LAB,
            &["--kernel", kernel],
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corners.txt"),
        );
    }
}

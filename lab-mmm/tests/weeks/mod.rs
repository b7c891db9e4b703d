//! Weeks 2 and 3 on a GPU (`tests/gpu.rs`): our mmm.cu, the starters, and the broken, adversarial and
//! honest kernels of `assignments/02-mmm-ab` and `03-mmm-tiled` through `lab-mmm --check` as students
//! and grade.sh run it, the measured rules, time limits, compute-sanitizer and the legal cases.

use common::verify::Random;

/// Our kernels/cuda/mmm.cu, the solution that the tests below change into students' kernels.
fn our_mmm_cu() -> String {
    std::fs::read_to_string(common::testing::repository_file(
        "kernels/cuda/mmm.cu",
        env!("CARGO_MANIFEST_DIR"),
    ))
    .unwrap()
}

/// `lab-mmm --kernel-source FILE --kernel KERNEL --check`, as a student runs it (assignments/02, 03).
fn check(file: &str, kernel: &str) -> common::testing::Outcome {
    check_with(file, kernel, &[])
}

/// Issues 60 and 62: ncu failing on its own is the machine's. A stand-in for ncu runs the measured
/// program and writes no report. Under the grader (`--csv --mark`) week 3's measured rules are
/// MACHINE with the reason, the cases still pass, and the lab ends with exit code 3, not a FAULT. In
/// a student's own check (no mark: a laptop without counter access) the same rules are left to
/// grading, shown as "-", and everything else passing is exit code 0.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_ncu_failing_on_its_own_is_the_machines() {
    // ncu's options come first, then the program (the first executable file) and its arguments.
    let ncu = common::testing::temp_script(
        "ncu-without-report",
        "#!/bin/sh\nwhile [ $# -gt 0 ] && ! { [ -f \"$1\" ] && [ -x \"$1\" ]; }; do shift; done\nexec \"$@\"\n",
    );
    let lab = common::testing::lab_binary("lab-mmm", env!("CARGO_BIN_EXE_lab-mmm"));
    let file = common::testing::repository_file("kernels/cuda/mmm.cu", env!("CARGO_MANIFEST_DIR"));
    let key = "0123456789abcdef".repeat(4);
    let graded = common::testing::run_with_stdin_and_env(
        &lab,
        &[
            "--kernel-source",
            &file,
            "--kernel",
            "tiled",
            "--check",
            "--csv",
            "--mark",
        ],
        format!("{key}\n").as_bytes(),
        &[("NCU", ncu.as_str())],
    );
    let measured = |line: &str| line.split(',').filter(|field| *field == "MACHINE").count();
    assert!(
        graded.code == Some(3)
            && graded
                .stdout
                .lines()
                .nth(1)
                .is_some_and(|row| measured(row) == 3 && !row.contains("FAULT"))
            && graded.stderr.contains("not measured: ncu's counters could not be read"),
        "{graded:?}"
    );
    common::testing::assert_mark_vouches_for(&lab, &key, 3, &graded.stdout);
    let own = check_with_env("kernels/cuda/mmm.cu", "tiled", &[], &[("NCU", ncu.as_str())]);
    let left_to_grading = |line: &&str| {
        line.contains("tiling, measured:") && line.contains("| - | not run (measured when the course grades it")
    };
    assert!(
        own.code == Some(0)
            && own.stdout.lines().filter(left_to_grading).count() == 3
            && !own.stdout.contains("| FAULT |")
            && !own.stdout.contains("| MACHINE |")
            && own
                .stdout
                .contains("all 15 checks that ran here pass; 3 measured rules did not run on this machine"),
        "{own:?}"
    );
}

/// Issue 65, item 3: with `LAB_PHASES` naming a file, week 3's check appends its line and each
/// measured child (ncu around the lab) one of its own, named `(measured)`: its context, its turn
/// with ncu, ncu's first launch (of a kernel of ours, where ncu prepares its counters), modules,
/// inputs and launches, with its wait for the GPU and its hold of it. With no lock named, and with
/// one as grade.sh names it: then the student's kernels are measured in a batch
/// (`grading::ncu_batch`), here of one, whose line is `batch of 1 (measured)` (the check's own line
/// has `ncu's batch`), and ours may be measured by a child of its own, a second such line.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_each_measured_child_appends_its_own_phases() {
    let lock = common::testing::temp_file("measured-phases-gpu.lock", "");
    for (name, named) in [
        ("measured-phases-no-lock.txt", None),
        ("measured-phases-lock.txt", Some(&lock)),
    ] {
        let phases = common::testing::temp_file(name, "");
        let mut env = vec![("LAB_PHASES", phases.as_str())];
        env.extend(named.map(|lock| ("LAB_GPU_LOCK", lock.as_str())));
        let run = check_with_env("kernels/cuda/mmm.cu", "tiled", &[], &env);
        assert_eq!(run.code, Some(0), "{run:?}");
        let written = std::fs::read_to_string(&phases).unwrap_or_default();
        let (measured, checks): (Vec<&str>, Vec<&str>) =
            written.lines().partition(|line| line.contains(" (measured): "));
        let parts = [
            "context ",
            "ncu's turn ",
            "ncu's first launch ",
            "modules ",
            "inputs ",
            " launches ",
            "waited for the GPU ",
            "held it alone ",
        ];
        let batched = measured.iter().any(|line| line.starts_with("batch of 1 (measured): "));
        assert!(
            checks.len() == 1
                && checks[0].starts_with("mmm.cu: ")
                && (1..=2).contains(&measured.len())
                && measured.iter().all(|line| parts.iter().all(|part| line.contains(part)))
                && batched == named.is_some()
                && checks[0].contains(", ncu's batch ") == named.is_some(),
            "{written}"
        );
    }
}

/// Issue 65, item 3: checks that share a GPU (a lock named, as grade.sh names it) and measure at the
/// same time are measured by one ncu process (`grading::ncu_batch`; a check whose part of ncu's file
/// came from a batch says so in its line of phases), and each one's measured rows are those of its
/// check alone on the GPU: an honest kernel, a naive body, loads through generic
/// pointers, a kernel that traps (which ends its batch: it is measured alone, and the others run
/// again), and ours.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_checks_measured_in_one_batch_get_the_rows_they_get_alone() {
    let files = [
        "assignments/03-mmm-tiled/honest/flat-tiles.cu",
        "assignments/03-mmm-tiled/broken/naive-body-in-tiled.cu",
        "assignments/03-mmm-tiled/adversarial/generic-pointers.cu",
        "assignments/03-mmm-tiled/broken/traps.cu",
        "kernels/cuda/mmm.cu",
    ];
    let measured_rows = |env: &[(&str, &str)], file: &str| {
        let run = check_with_env(file, "tiled", &[], env);
        // A FAULT's reason quotes how its run ended, which may name its folder: its verdict alone.
        let rows: Vec<String> = run
            .stdout
            .lines()
            .filter(|line| line.contains("tiling, measured:"))
            .map(|line| match line.contains("| FAULT |") {
                true => line.split("| FAULT |").next().unwrap_or_default().to_string() + "| FAULT |",
                false => line.to_string(),
            })
            .collect();
        assert_eq!(rows.len(), 3, "{file}: {run:?}");
        rows
    };
    let alone: Vec<Vec<String>> = files.iter().map(|file| measured_rows(&[], file)).collect();
    let lock = common::testing::temp_file("batch-gpu.lock", "");
    let phases = common::testing::temp_file("batch-phases.txt", "");
    let env = [("LAB_GPU_LOCK", lock.as_str()), ("LAB_PHASES", phases.as_str())];
    let together: Vec<Vec<String>> = std::thread::scope(|scope| {
        let checks: Vec<_> = files
            .iter()
            .map(|file| scope.spawn(|| measured_rows(&env, file)))
            .collect();
        checks.into_iter().map(|check| check.join().unwrap()).collect()
    });
    let written = std::fs::read_to_string(&phases).unwrap_or_default();
    for ((file, alone), together) in files.iter().zip(&alone).zip(&together) {
        assert_eq!(alone, together, "{file}\n{written}");
    }
    // The five checks' cases end within seconds of each other (run 60: a batch of 4), so two or more
    // of them are measured by a batch, which their lines say ("ncu's batch"), not alone after it.
    let batched = written.lines().filter(|line| line.contains(", ncu's batch ")).count();
    assert!(batched >= 2, "{batched} checks measured by a batch:\n{written}");
    eprintln!("{written}");
}

/// With --csv, stdout is the CSV alone, a header and one row (grade.sh takes nothing else): a
/// passing solution's verdict line once followed the row there, and grade.sh then called every
/// passing submission "no result".
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_csv_is_the_header_and_one_row_and_nothing_else() {
    for file in ["kernels/cuda/mmm.cu", "assignments/03-mmm-tiled/mmm.cu"] {
        let csv = check_with(file, "tiled", &["--csv"]);
        let lines: Vec<&str> = csv.stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{csv:?}");
        // Week 3's two rules read from the code come first, its three measured ones next, then the
        // twelve cases.
        assert!(
            lines[0].starts_with("file,\"tiles: ")
                && lines[0].contains(",\"tiling, measured: global loads per element of C (ncu)\",")
                && lines[0].contains(",\"mmm f64, 1 x 1 times 1 x 1\","),
            "{csv:?}"
        );
        // The template computes nothing: it loads nothing (from global memory, or through generic
        // pointers), and fails the rest.
        let passed = if file.starts_with("kernels") {
            ",18/18,"
        } else {
            ",2/18,"
        };
        assert!(lines[1].contains(passed), "{csv:?}");
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn weeks_2_and_3_the_solution_passes_and_the_templates_fail() {
    for (kernel, template) in [
        ("naive", "assignments/02-mmm-ab/mmm.cu"),
        ("tiled", "assignments/03-mmm-tiled/mmm.cu"),
    ] {
        // Week 3 adds its three rules (tiles, barrier, loads) and three measured ones to the twelve cases.
        let rows = if kernel == "tiled" { 18 } else { 12 };
        let solution = check("kernels/cuda/mmm.cu", kernel);
        assert_eq!(solution.code, Some(0), "{solution:?}");
        assert!(
            solution
                .stdout
                .contains(&format!("Solution is correct: all {rows} cases pass")),
            "{solution:?}"
        );
        let template = check(template, kernel);
        assert_eq!(template.code, Some(1), "{template:?}");
        // The tiled template loads nothing: the rule on generic loads and the measured one on global
        // loads pass.
        let failed = if kernel == "tiled" { rows - 2 } else { rows };
        assert!(
            template.stderr.contains(&format!("{failed} of {rows} cases failed")),
            "{template:?}"
        );
        let row = common::testing::check_row(&template.stdout, "f64, 17 x 33 times 33 x 5");
        assert!(
            row.contains("| FAIL | 85 of 85 | C(0, 0) | never written |")
                && row.contains("block (0, 0), thread (0, 0)"),
            "{row}"
        );
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_2_broken_kernels_are_caught() {
    // b(col, k) for b(k, col): wrong from the first element on, on any B that is not symmetric.
    let swapped = check("assignments/02-mmm-ab/broken/swapped-indices.cu", "naive");
    assert_eq!(swapped.code, Some(1), "{swapped:?}");
    let row = common::testing::check_row(&swapped.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(
        row.contains("| FAIL |") && row.contains("| C(0, 0) |") && !row.contains("never written"),
        "{row}"
    );
    // No bounds check: threads outside C write into the next rows of C (or past it), with sums of
    // elements read past A and B.
    let unbounded = check("assignments/02-mmm-ab/broken/missing-bounds-check.cu", "naive");
    assert_eq!(unbounded.code, Some(1), "{unbounded:?}");
    let row = common::testing::check_row(&unbounded.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(row.contains("| FAIL |") || row.contains("| FAULT |"), "{row}");
    assert!(!unbounded.stderr.contains("panicked"), "{unbounded:?}");
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_broken_kernels_are_caught() {
    let unsynchronized = check("assignments/03-mmm-tiled/broken/missing-syncthreads.cu", "tiled");
    assert_eq!(unsynchronized.code, Some(1), "{unsynchronized:?}");
    assert!(
        common::testing::check_row(&unsynchronized.stdout, "f64, 1000 x 999").contains("| FAIL |"),
        "{unsynchronized:?}"
    );
    // The tile loop stops before the last, partial tile: only a k that is no multiple of 16 notices.
    let past = check("assignments/03-mmm-tiled/broken/off-by-one-bound.cu", "tiled");
    assert_eq!(past.code, Some(1), "{past:?}");
    assert!(
        common::testing::check_row(&past.stdout, "f64, 64 x 64 times").contains("| PASS |"),
        "{past:?}"
    );
    let row = common::testing::check_row(&past.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(row.contains("| FAIL |") && row.contains("| C(0, 0) |"), "{row}");
    let swapped = check("assignments/03-mmm-tiled/broken/swapped-tile-indices.cu", "tiled");
    assert_eq!(swapped.code, Some(1), "{swapped:?}");
    assert!(
        common::testing::check_row(&swapped.stdout, "f64, 64 x 64 times").contains("| FAIL |"),
        "{swapped:?}"
    );
}

/// `lab-mmm --kernel-source FILE --kernel KERNEL --check` with more flags (`--sanitize`, `--show-output`).
fn check_with(file: &str, kernel: &str, flags: &[&str]) -> common::testing::Outcome {
    check_with_env(file, kernel, flags, &[])
}

/// [`check_with`] with the variables `env` set too (`LAB_GPU_LOCK` as grade.sh names it,
/// `LAB_PHASES`, `NCU`).
fn check_with_env(file: &str, kernel: &str, flags: &[&str], env: &[(&str, &str)]) -> common::testing::Outcome {
    let mut extra = vec!["--kernel", kernel];
    extra.extend(flags);
    common::testing::check_kernel_source_with(
        "lab-mmm",
        env!("CARGO_BIN_EXE_lab-mmm"),
        env!("CARGO_MANIFEST_DIR"),
        file,
        &extra,
        env,
    )
}

/// Issue 21: a kernel's printf is output, never a result, however much of it there is.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_forged_result_row_is_only_output() {
    let forged = check("assignments/03-mmm-tiled/broken/fake-result-row.cu", "tiled");
    assert_eq!(forged.code, Some(1), "{forged:?}");
    assert!(forged.stderr.contains(" of 18 cases failed"), "{forged:?}");
    let row = common::testing::check_row(&forged.stdout, "f64, 1 x 1 times 1 x 1");
    assert!(row.contains("| FAIL | 1 of 1 | C(0, 0) | never written |"), "{row}");
    // Its line is shown under the table as what the failing case printed.
    assert!(
        forged.stdout.contains("stdout of case \"mmm f64, 1 x 1 times 1 x 1\"")
            && forged.stdout.contains("CHECK-ROW\tmmm f64, 1 x 1 times 1 x 1\t0\t1"),
        "{forged:?}"
    );
}

/// Issue 21: a correct kernel that prints from every block, as students debug, passes the week's
/// cases (it once stalled on a full pipe and was called an endless loop).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_correct_kernel_that_prints_from_every_block_passes() {
    let chatty = check("assignments/03-mmm-tiled/broken/printf-every-block.cu", "tiled");
    assert_eq!(chatty.code, Some(0), "{chatty:?}");
    assert!(
        chatty.stdout.contains("Solution is correct: all 18 cases pass"),
        "{chatty:?}"
    );
}

/// Issue 21: one that prints from every thread too: megabytes a case, far past a pipe's 64 KiB and
/// the GPU's 1 MiB printf buffer. Printing a million lines per launch takes seconds on the GPU, so
/// the cases stop at 255 x 257 x 256 (65280 lines a launch). `--show-output` shows it, cut to the
/// first 100 and last 20 lines with the count of the rest.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_correct_kernel_that_prints_from_every_thread_passes() {
    let cases = common::testing::temp_file("chatty-cases.txt", "1 1 1 f64 1\n100 7 129 f32 2\n255 257 256 f64 3\n");
    let shown = check_with(
        "assignments/03-mmm-tiled/broken/printf-every-thread.cu",
        "tiled",
        &["--cases", &cases, "--show-output"],
    );
    assert_eq!(shown.code, Some(0), "{shown:?}");
    assert!(
        shown.stdout.contains("Solution is correct: all 9 cases pass"),
        "{shown:?}"
    );
    assert!(
        shown
            .stdout
            .contains("stdout of case \"mmm f64, 255 x 257 times 257 x 256\""),
        "{shown:?}"
    );
    assert!(
        shown.stdout.contains("more lines ...]") && shown.stdout.contains(": c("),
        "{shown:?}"
    );
}

/// A submission that runs far longer than its limit (every thread printing, at the week's
/// million-element cases) ends at --time-limit, as grade.sh runs it: the case running then and the
/// cases after it are FAULTs that say so, and no case of the run is lost from the table. The limit is
/// a quarter of the whole check's time on an H200: 21.6 s (issue 65, run 58), where a limit of 20 s
/// no longer cut it. With a lock named, as grade.sh names it (the measured run then starts after the
/// races, and may go to a batch), the measured rows are the same: the limit's words.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_time_limit_ends_a_check_that_runs_far_past_it() {
    let file = "assignments/03-mmm-tiled/broken/printf-every-thread.cu";
    let limited = check_with(file, "tiled", &["--time-limit", "5"]);
    let lock = common::testing::temp_file("time-limit-gpu.lock", "");
    let locked = check_with_env(
        file,
        "tiled",
        &["--time-limit", "5"],
        &[("LAB_GPU_LOCK", lock.as_str())],
    );
    let measured = |run: &common::testing::Outcome| -> Vec<String> {
        let rows = run.stdout.lines().filter(|line| line.contains("tiling, measured:"));
        rows.map(str::to_string).collect()
    };
    assert!(
        measured(&limited).len() == 3 && measured(&limited) == measured(&locked),
        "{limited:?}\n{locked:?}"
    );
    assert_eq!(limited.code, Some(1), "{limited:?}");
    assert!(limited.stdout.contains("--time-limit of 5 s"), "{limited:?}");
    let last = common::testing::check_row(&limited.stdout, "f32, 1000 x 999 times 999 x 1001");
    assert!(
        last.contains("| FAULT |") && last.contains("--time-limit of 5 s"),
        "{last}"
    );
    assert!(
        common::testing::check_row(&limited.stdout, "f64, 1 x 1 times 1 x 1").contains("| PASS |"),
        "{limited:?}"
    );
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_writes_outside_c_or_into_a_fail_and_say_where() {
    let past = check("assignments/03-mmm-tiled/broken/writes-past-c.cu", "tiled");
    assert_eq!(past.code, Some(1), "{past:?}");
    assert!(past.stderr.contains("12 of 18 cases failed"), "{past:?}");
    for case in [
        "f64, 1 x 1 times 1 x 1",
        "f64, 17 x 33 times 33 x 5",
        "f32, 1000 x 999 times 999 x 1001",
    ] {
        let row = common::testing::check_row(&past.stdout, case);
        assert!(
            row.contains("| FAIL | 0 of ") && row.contains("written outside C: C[m*n + 40], 40 elements past the end"),
            "{row}"
        );
    }
    let into_a = check("assignments/03-mmm-tiled/broken/writes-into-a.cu", "tiled");
    assert_eq!(into_a.code, Some(1), "{into_a:?}");
    let row = common::testing::check_row(&into_a.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(
        row.contains("| FAIL |") && row.contains("A(3, 7) was changed: 0.000000000000e0 instead of"),
        "{row}"
    );
    // A has no element (3, 7) in a 1 x 1 product: nothing to change there.
    assert!(
        common::testing::check_row(&into_a.stdout, "f64, 1 x 1 times 1 x 1").contains("| PASS |"),
        "{into_a:?}"
    );
}

/// Issue 21: a NaN the kernel wrote is a NaN; "never written" needs both poisons to stay.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_nan_the_kernel_wrote_is_not_called_never_written() {
    let nan = check("assignments/03-mmm-tiled/broken/writes-nan.cu", "tiled");
    assert_eq!(nan.code, Some(1), "{nan:?}");
    for case in ["f64, 17 x 33 times 33 x 5", "f32, 17 x 33 times 33 x 5"] {
        let row = common::testing::check_row(&nan.stdout, case);
        assert!(row.contains("| FAIL | 1 of 85 | C(0, 0) | NaN |"), "{row}");
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_kernel_that_traps_faults_every_case_and_the_others_still_run() {
    let trapped = check("assignments/03-mmm-tiled/broken/traps.cu", "tiled");
    assert_eq!(trapped.code, Some(1), "{trapped:?}");
    // The measured run traps too: its three rules are faults that say so.
    assert!(trapped.stderr.contains("15 of 18 cases failed"), "{trapped:?}");
    assert!(
        common::testing::check_row(&trapped.stdout, "tiling, measured: global loads")
            .contains("| FAULT | not measured: the measured run under ncu failed"),
        "{trapped:?}"
    );
    for case in ["f64, 1 x 1 times 1 x 1", "f32, 1000 x 999 times 999 x 1001"] {
        assert!(
            common::testing::check_row(&trapped.stdout, case).contains("| FAULT |"),
            "{trapped:?}"
        );
    }
}

/// Issue 39: the cases run one after another in a child, and a new child takes over after a case
/// that faults. A kernel that traps in the 17 x 33 x 5 cases alone fails those two; every other case,
/// the ones right after them included, passes; and each case's output (the kernel prints its sizes)
/// is its own, never its neighbour's.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_case_that_faults_ends_its_child_and_the_cases_after_it_still_pass() {
    let ours = our_mmm_cu();
    let loop_start = "    T sum = 0;\n    for (int tile = 0;";
    assert_eq!(ours.matches(loop_start).count(), 1, "the tiled kernel's loop moved");
    let traps = "    if (tx == 0 && ty == 0 && blockIdx.x == 0 && blockIdx.y == 0) printf(\"sizes %d %d %d\\n\", a.rows, a.cols, b.cols);\n    if (a.rows == 17 && row == 0 && col == 0) __trap();\n";
    let file = common::testing::temp_file(
        "traps-on-17.cu",
        &ours.replace(loop_start, &format!("{traps}{loop_start}")),
    );
    let checked = check_with(&file, "tiled", &["--show-output"]);
    assert_eq!(checked.code, Some(1), "{checked:?}");
    assert!(checked.stderr.contains("2 of 18 cases failed"), "{checked:?}");
    for precision in ["f64", "f32"] {
        let case = |sizes: &str| format!("mmm {precision}, {sizes}");
        assert!(
            common::testing::check_row(&checked.stdout, &case("17 x 33 times 33 x 5")).contains("| FAULT |"),
            "{checked:?}"
        );
        for (sizes, printed) in [
            ("1 x 1 times 1 x 1", "sizes 1 1 1"),
            ("100 x 7 times 7 x 129", "sizes 100 7 129"),
            ("1000 x 999 times 999 x 1001", "sizes 1000 999 1001"),
        ] {
            assert!(
                common::testing::check_row(&checked.stdout, &case(sizes)).contains("| PASS |"),
                "{checked:?}"
            );
            let output = checked
                .stdout
                .split(&format!("stdout of case \"{}\"", case(sizes)))
                .nth(1)
                .unwrap_or_else(|| panic!("no output of {sizes}: {checked:?}"));
            let own = output.split("stdout of case").next().unwrap_or_default();
            assert!(
                own.contains(printed)
                    && own
                        .lines()
                        .filter(|line| line.starts_with("sizes"))
                        .all(|line| line == printed),
                "{sizes}: {own}"
            );
        }
    }
}

/// A kernel that calls `malloc` runs each case in a child of its own (the device heap outlives the
/// module, so it would reach the next case): a correct one whose first block allocates and frees in
/// every launch passes every case, and so does one whose first block leaks 64 KiB per launch: a few
/// MB of the 8 MB heap in a case, which with the twelve cases in one child would run out and trap.
/// (A malloc in every block is no test of the heap: the allocator reads its own state from global
/// memory, 34 loads per element of C at 255 x 257 x 256 on an H200, which week 3's measured tiling
/// rule counts as the kernel's.)
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_kernel_that_calls_malloc_runs_each_case_on_a_heap_of_its_own() {
    let ours = our_mmm_cu();
    let loop_start = "    T sum = 0;\n    for (int tile = 0;";
    let first_block_frees =
        "if (tx == 0 && ty == 0 && blockIdx.x == 0 && blockIdx.y == 0) { void* scratch = malloc(16); \
         if (scratch == nullptr) __trap(); free(scratch); }";
    let first_block_leaks =
        "if (tx == 0 && ty == 0 && blockIdx.x == 0 && blockIdx.y == 0) { if (malloc(1 << 16) == nullptr) __trap(); }";
    for (name, heap) in [("frees", first_block_frees), ("leaks", first_block_leaks)] {
        let body = format!("    {heap}\n{loop_start}");
        let file = common::testing::temp_file(&format!("malloc-{name}.cu"), &ours.replace(loop_start, &body));
        let checked = check_with(&file, "tiled", &[]);
        assert_eq!(checked.code, Some(0), "{name}: {checked:?}");
        assert!(
            checked.stdout.contains("Solution is correct: all 18 cases pass"),
            "{name}: {checked:?}"
        );
    }
}

/// Issues 21 and 41: `--sanitize` on the week's own cases. Racecheck and synccheck leave out the two
/// 1000 x 999 x 1001 cases (over 2^25 multiply-adds; the heading says so), and still report the
/// missing second barrier on every case within the budget whose K spans more than one tile (a single
/// tile has no next tile to overwrite it); the write past C and the read past B fail the case where
/// the plain check does, memcheck on every case; the solution passes.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_under_sanitize_the_weeks_cases_still_find_the_race_and_the_accesses_past() {
    let heading = "under compute-sanitizer: racecheck and synccheck on 10 of 12 cases (those within 2^25 multiply-adds; of a kernel with none within it, its smallest), memcheck on all";
    let solution = check_with("kernels/cuda/mmm.cu", "tiled", &["--sanitize"]);
    assert_eq!(solution.code, Some(0), "{solution:?}");
    assert!(solution.stdout.contains(heading), "{solution:?}");
    let racy = check_with(
        "assignments/03-mmm-tiled/broken/missing-second-syncthreads.cu",
        "tiled",
        &["--sanitize"],
    );
    assert_eq!(racy.code, Some(1), "{racy:?}");
    for precision in ["f64", "f32"] {
        for sides in [
            "17 x 33 times 33 x 5",
            "64 x 64 times 64 x 64",
            "255 x 257 times 257 x 256",
        ] {
            let row = common::testing::check_row(&racy.stdout, &format!("{precision}, {sides}"));
            assert!(
                row.contains("| FAIL |") && row.contains("racecheck: shared-memory hazard"),
                "{row}"
            );
        }
    }
    for (file, case, finding) in [
        (
            "broken/writes-past-c.cu",
            "f64, 17 x 33 times 33 x 5",
            "elements past the end",
        ),
        (
            "broken/writes-past-c.cu",
            "f32, 1000 x 999 times 999 x 1001",
            "elements past the end",
        ),
        (
            "adversarial/reads-past-b.cu",
            "f64, 1 x 1 times 1 x 1",
            "read outside B",
        ),
        (
            "adversarial/reads-past-b.cu",
            "f32, 1000 x 999 times 999 x 1001",
            "read outside B",
        ),
    ] {
        let past = check_with(&format!("assignments/03-mmm-tiled/{file}"), "tiled", &["--sanitize"]);
        assert_eq!(past.code, Some(1), "{file}: {past:?}");
        let row = common::testing::check_row(&past.stdout, case);
        assert!(row.contains("| FAIL |") && row.contains(finding), "{file}: {row}");
    }
}

/// Issue 61: a plain `--check` runs racecheck and synccheck on its smallest case whose K spans two
/// tiles, so a missing second barrier fails without `--sanitize`, even where every value came out
/// right; the solution passes and the heading names the case. The same with a lock named, as
/// grade.sh names it, where the race case holds the GPU only around its launches (issue 65,
/// `grading::gpu_lock::launches_beside`).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_a_plain_check_finds_a_missing_barrier_on_its_race_case() {
    let lock = common::testing::temp_file("race-case-gpu.lock", "");
    for named in [None, Some(&lock)] {
        let env: Vec<(&str, &str)> = named.map(|lock| ("LAB_GPU_LOCK", lock.as_str())).into_iter().collect();
        let racy = check_with_env(
            "assignments/03-mmm-tiled/broken/missing-second-syncthreads.cu",
            "tiled",
            &[],
            &env,
        );
        assert_eq!(racy.code, Some(1), "{racy:?}");
        let row = common::testing::check_row(&racy.stdout, "f64, 17 x 33 times 33 x 5");
        assert!(
            row.contains("| FAIL |") && row.contains("racecheck: shared-memory hazard"),
            "{row}"
        );
        let heading = "racecheck and synccheck on \"mmm f64, 17 x 33 times 33 x 5\" too";
        assert!(racy.stdout.contains(heading), "{racy:?}");
        let solution = check_with_env("kernels/cuda/mmm.cu", "tiled", &[], &env);
        assert_eq!(solution.code, Some(0), "{solution:?}");
        assert!(solution.stdout.contains(heading), "{solution:?}");
    }
}

/// Issue 21: our own calls give compute-sanitizer nothing to report, and the solution passes under
/// it; a write past C is found there too (by the guard zones, which memcheck cannot see into). On
/// awkward cases of up to 255 x 257 x 256, so that all three tools finish in seconds
/// (`gpu-bundle/time-checks.sh` times the week's own cases under `--sanitize`).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn weeks_2_and_3_the_solution_passes_under_compute_sanitizer() {
    let cases = common::testing::temp_file(
        "sanitize-cases.txt",
        "1 1 1 f64 1\n17 33 5 f64 2\n100 7 129 f32 3\n255 257 256 f64 4\n",
    );
    for kernel in ["naive", "tiled"] {
        let solution = check_with("kernels/cuda/mmm.cu", kernel, &["--sanitize", "--cases", &cases]);
        assert_eq!(solution.code, Some(0), "{solution:?}");
        let rows = if kernel == "tiled" { 10 } else { 4 }; // the four cases, and week 3's three rules and three measured ones
        assert!(
            solution
                .stdout
                .contains(&format!("Solution is correct: all {rows} cases pass")),
            "{solution:?}"
        );
        assert!(solution.stdout.contains("under compute-sanitizer"), "{solution:?}");
    }
    let past = check_with(
        "assignments/03-mmm-tiled/broken/writes-past-c.cu",
        "tiled",
        &["--sanitize", "--cases", &cases],
    );
    let row = common::testing::check_row(&past.stdout, "f64, 17 x 33 times 33 x 5");
    assert!(
        row.contains("| FAIL |") && row.contains("40 elements past the end"),
        "{row}"
    );
}

/// Issue 21: hidden cases from a file, named in the CSV by their hash.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_hidden_cases_run_from_a_file() {
    let cases = common::testing::temp_file(
        "hidden-cases.txt",
        "# M K N PRECISION SEED\n31 47 19 f64 5\n300 17 1 f32 6\n",
    );
    let hidden = check_with("kernels/cuda/mmm.cu", "tiled", &["--cases", &cases, "--csv"]);
    assert_eq!(hidden.code, Some(0), "{hidden:?}");
    let lines: Vec<&str> = hidden.stdout.lines().collect();
    assert!(lines[0].ends_with(",\"mmm f64, 31 x 47 times 47 x 19\",\"mmm f32, 300 x 17 times 17 x 1\",passed,time ratio,flags,note,case set"), "{hidden:?}");
    assert!(
        lines[1].contains(",PASS,PASS,PASS,PASS,PASS,PASS,PASS,PASS,8/8,"),
        "{hidden:?}"
    );
}

/// Issue 29: the naive body in the tiled kernel gives right values and fails week 3's two rules only.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn week_3_the_naive_body_in_the_tiled_kernel_fails_the_rules_only() {
    let naive = check("assignments/03-mmm-tiled/broken/naive-body-in-tiled.cu", "tiled");
    assert_eq!(naive.code, Some(1), "{naive:?}");
    // The two rules read from the code, and the three measured, on the smallest case measured
    // (issue 61: every case whose size tells): 2 K = 128 global loads per element, none from shared
    // memory, no shared memory at all.
    assert!(naive.stderr.contains("5 of 18 cases failed"), "{naive:?}");
    assert!(
        common::testing::check_row(&naive.stdout, "tiling, measured: global loads")
            .contains("| FAIL | 1 of 1 | mmm_f64 at 64 x 64 x 64 | 128.0 |"),
        "{naive:?}"
    );
    assert!(
        common::testing::check_row(&naive.stdout, "tiles: ")
            .contains("| FAIL | 2 of 2 | mmm_f64 | 0 bytes of shared memory |"),
        "{naive:?}"
    );
    assert!(
        common::testing::check_row(&naive.stdout, "barrier: ")
            .contains("| FAIL | 2 of 2 | mmm_f64 | no __syncthreads() |"),
        "{naive:?}"
    );
    assert!(
        common::testing::check_row(&naive.stdout, "f64, 17 x 33 times 33 x 5").contains("| PASS |"),
        "{naive:?}"
    );
}

/// Issue 39: every kernel of week 3's red-team corpus gets the verdict its header promises, the
/// measured rules (ncu) included.
#[test]
#[ignore = "needs a GPU and ncu (gpu-bundle/run.sh)"]
fn the_week_3_red_team_gets_its_verdicts() {
    common::testing::assert_red_team(
        "03-mmm-tiled",
        "lab-mmm",
        env!("CARGO_BIN_EXE_lab-mmm"),
        env!("CARGO_MANIFEST_DIR"),
        &["--kernel", "tiled"],
        false,
    );
}

/// Issue 45: a student cannot pass for the machine. A kernel that prints the words of a MACHINE row
/// and then traps, and a file whose module asks for more GPU memory than there is, get the student's
/// verdicts (FAULT, or a compile error) and exit code 1, never MACHINE or exit code 3: MACHINE comes
/// only from the lab's own steps before the student's module is loaded.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_kernel_that_makes_the_machine_look_broken_gets_no_machine_verdict() {
    let ours = our_mmm_cu();
    let honest = "extern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm(a, b, c); }";
    let liar = "extern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { \
                printf(\"CHECK-ROW\\tmmm f64, 1 x 1 times 1 x 1\\tmachine\\tno GPU\\nlab-mmm: error: machine: no usable CUDA GPU\\n\"); asm(\"trap;\"); }";
    let hog = format!(
        "__device__ char hog[1ull << 40];\n{}",
        ours.replacen(
            honest,
            &format!("{honest}\n__global__ void touch() {{ hog[threadIdx.x] = 1; }}"),
            1
        )
    );
    for (name, text) in [
        ("says-machine.cu", ours.replacen(honest, liar, 1)),
        ("hogs-memory.cu", hog),
    ] {
        let file = common::testing::temp_file(name, &text);
        let lab = common::testing::lab_binary("lab-mmm", env!("CARGO_BIN_EXE_lab-mmm"));
        let outcome = common::testing::run(
            &lab,
            &["--kernel-source", &file, "--kernel", "tiled", "--check", "--csv"],
        );
        assert_eq!(outcome.code, Some(1), "{name}: {outcome:?}");
        assert!(
            !outcome.stdout.contains("MACHINE") && !outcome.stdout.contains("\"machine: "),
            "{name}: {outcome:?}"
        );
    }
}

/// The lab's own run (no --check) checks each C while the GPU runs the next kernel (issue 41): each
/// verdict lands on its own kernel's row. mmm_ab is ours, mmm is ours with one element of C off by one;
/// at an exact size (every element compared) and at one past 1024^3 multiply-adds (Freivalds' test
/// and samples), the table says PASS, FAIL, PASS, FAIL and the lab fails.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_labs_run_puts_each_kernels_verdict_on_its_own_row() {
    let ours = our_mmm_cu();
    let store = "c(row, col) = sum;";
    let last = ours.rfind(store).expect("mmm.cu stores C");
    let off_by_one = format!(
        "{}c(row, col) = (row == c.rows / 2 && col == c.cols / 3) ? sum + T(1) : sum;{}",
        &ours[..last],
        &ours[last + store.len()..]
    );
    let file = common::testing::temp_file("one-element-off.cu", &off_by_one);
    let lab = common::testing::lab_binary("lab-mmm", env!("CARGO_BIN_EXE_lab-mmm"));
    for size in [["100", "70", "129"], ["1100", "1000", "1000"]] {
        let mut flags = vec!["--kernel-source", &file, "--block-size", "16", "--size"];
        flags.extend(size);
        let outcome = common::testing::run(&lab, &flags);
        assert_eq!(outcome.code, Some(1), "{size:?}: {outcome:?}");
        let verdicts: Vec<(&str, &str, &str)> = outcome
            .stdout
            .lines()
            .filter(|line| line.starts_with("| mmm"))
            .map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                (cells[1], cells[2], cells[9])
            })
            .collect();
        assert_eq!(
            verdicts,
            [
                ("mmm-ab", "f64", "PASS"),
                ("mmm", "f64", "FAIL"),
                ("mmm-ab", "f32", "PASS"),
                ("mmm", "f32", "FAIL")
            ],
            "{size:?}: {outcome:?}"
        );
        assert!(
            outcome.stderr.contains("2 of 4 products differ from the CPU"),
            "{size:?}: {outcome:?}"
        );
    }
}

/// Issues 66 and 61: random cases from weeks 2 and 3's legal space (sides 1 to 8192, f64 or f32; the
/// draws keep M x K x N within 2^27 so that the CPU's products take seconds): our kernels pass every
/// one, naive and tiled, the measured rules included, and so does each kernel of the week's honest
/// corpus (`assignments/<week>/honest/`), on the week's own cases too. The seed is printed with a
/// failure (`LAB_LEGAL_SEED` draws the same cases again, `LAB_LEGAL_CASES` more of them).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn weeks_2_and_3_random_legal_cases_pass_our_kernels_and_the_honest_corpus() {
    use common::testing::{assert_passes_cases, legal_case_count, legal_lines, legal_seed, log_uniform};
    let seed = legal_seed();
    let mut random = Random::new(seed);
    let lab = common::testing::lab_binary("lab-mmm", env!("CARGO_BIN_EXE_lab-mmm"));
    for kernel in ["naive", "tiled"] {
        let lines = legal_lines(&lab, &["--kernel", kernel], legal_case_count(8), || {
            let (m, k) = (log_uniform(&mut random, 8192), log_uniform(&mut random, 8192));
            let n = log_uniform(&mut random, ((1u64 << 27) / (m * k)).clamp(1, 8192));
            let precision = ["f64", "f32"][random.below(2) as usize];
            format!("{m} {k} {n} {precision} {}", random.next_u64())
        });
        let check = |file: &str, extra: &[&str]| check_with(file, kernel, extra);
        assert_passes_cases(seed, "kernels/cuda/mmm.cu", &[], &lines, check);
        let week = if kernel == "naive" { "02-mmm-ab" } else { "03-mmm-tiled" };
        for file in common::testing::honest_kernels(week, env!("CARGO_MANIFEST_DIR")) {
            let default = check(&file, &[]);
            assert!(
                default.code == Some(0) && default.stdout.contains("Solution is correct"),
                "{file}: {default:?}"
            );
            assert_passes_cases(seed, &file, &[], &lines, check);
        }
    }
}

/// Issue 62 (every legal case): our kernels pass the corners of weeks 2 and 3's legal case space
/// (`tests/corners.txt`: the largest product and sides, the thinnest shapes), naive and tiled, which
/// random draws seldom reach. The CLI tests keep every line legal.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn weeks_2_and_3_the_corners_of_the_legal_case_space_pass_ours() {
    let corners = common::testing::case_lines(include_str!("../corners.txt"));
    for kernel in ["naive", "tiled"] {
        let check = |file: &str, extra: &[&str]| check_with(file, kernel, extra);
        common::testing::assert_passes_cases(0, "kernels/cuda/mmm.cu", &[], &corners, check);
    }
}

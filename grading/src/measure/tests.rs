//! The measured rules' unit tests: rows, ours kept, the filter of ncu, the optional metrics, the wait
//! for the cases (none needs a GPU).

use super::*;

#[test]
fn a_measured_rule_shows_its_value_whether_it_holds_or_not_and_a_nan_fails() {
    let row = rule_row("loads", "mmm_f64", 32.0, Bound::AtMost(48.0), "tiled", 32.0);
    assert!(row.passed());
    assert_eq!(
        row.result.as_ref().unwrap().first.as_ref().unwrap().expected,
        "at most 48.0 (tiled; ours 32.0)"
    );
    assert!(!rule_row("loads", "mmm_f64", 512.0, Bound::AtMost(48.0), "tiled", 32.0).passed());
    assert!(!rule_row("loads", "mmm_f64", f64::NAN, Bound::AtLeast(1.0), "x", 2.0).passed());
    assert!(rule_row("shared", "mmm_f64", 512.0, Bound::AtLeast(64.0), "x", 512.0).passed());
}

#[test]
fn without_ncu_every_rule_is_machine_and_other_failures_a_fault() {
    let run = |_: &KernelImage, _: &[()], _: Whose| Ok(());
    let judge = |_: &(), _: &[Launch]| {
        vec![Row {
            case: "judged".to_string(),
            result: Err("".into()),
        }]
    };
    let measure = Measure {
        cases: vec![()],
        rules: &["a", "b"],
        metrics: &["m"],
        optional_metrics: &[],
        kernels: "k",
        launches_per_case: 4,
        run: &run,
        judge: &judge,
    };
    let three = vec![
        Launch {
            kernel: "k".to_string(),
            values: Default::default()
        };
        3
    ];
    let rows = measure.rows(Ok(three));
    assert!(
        rows.iter()
            .all(|row| row.result
                == Err("not measured: ncu measured 3 launches of k, not the 4 the check made".into())),
        "{rows:?}"
    );
    let four = vec![
        Launch {
            kernel: "k".to_string(),
            values: Default::default()
        };
        4
    ];
    assert_eq!(measure.rows(Ok(four))[0].case, "judged");
    let rows = measure.rows(Err("the --time-limit was used up".into()));
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|row| row.result == Err("not measured: the --time-limit was used up".into())),
        "{rows:?}"
    );
    // Issue 45: no ncu, or no permission for the counters, is the machine's: MACHINE, never PASS.
    let rows = measure.rows(Err(NoResult::Machine("no ncu".to_string())));
    assert!(
        rows.iter().all(|row| row.verdict() == "MACHINE"
            && row.result == Err(NoResult::Machine("not measured: no ncu".to_string()))),
        "{rows:?}"
    );
    // A child that writes no row (here `true`) is a fault too, wherever ncu is.
    let dir = common::private_dir::PrivateDir::new("measure-test").unwrap();
    let found = launches(child_of(Command::new("true"), dir.path()), LIMITS, None);
    assert!(found.is_err(), "{found:?}");
    if counters::ncu().is_err() {
        let Err(why) = measure.child(&Command::new("true"), "/tmp/x".into(), "/tmp/y".into(), None, false) else {
            panic!("a measured child without ncu")
        };
        assert!(
            matches!(&why, NoResult::Machine(why) if why.starts_with("these rules need Nsight Compute (ncu)")),
            "{why:?}"
        );
    }
}

/// A child that runs `command`, its counters and its row in `dir`.
fn child_of(command: Command, dir: &Path) -> MeasuredChild {
    MeasuredChild {
        under_ncu: command,
        batch: None,
        csv: dir.join("csv"),
        result: dir.join("row"),
        optional: Vec::new(),
        usual: true,
    }
}

/// A launch of `kernel` whose one metric is `value`.
fn launch(kernel: &str, value: f64) -> Launch {
    Launch {
        kernel: kernel.to_string(),
        values: [("m__x.sum".to_string(), value)].into(),
    }
}

/// Measured apart, the student's launches and ours come back in the order of one child that
/// launches both, case by case; counts that differ are a fault.
#[test]
fn the_students_launches_and_ours_interleave_case_by_case() {
    let theirs = vec![launch("t", 1.0), launch("t", 2.0), launch("t", 3.0), launch("t", 4.0)];
    let ours = vec![launch("o", 5.0), launch("o", 6.0), launch("o", 7.0), launch("o", 8.0)];
    let values = |launches: Vec<Launch>| launches.iter().map(|l| l.value("m__x.sum")).collect::<Vec<_>>();
    let both = interleave(theirs.clone(), ours.clone(), 2).unwrap();
    assert_eq!(values(both), [1.0, 2.0, 5.0, 6.0, 3.0, 4.0, 7.0, 8.0]);
    let both = interleave(theirs.clone(), ours.clone(), 1).unwrap();
    assert_eq!(values(both), [1.0, 5.0, 2.0, 6.0, 3.0, 7.0, 4.0, 8.0]);
    let short = interleave(theirs[..3].to_vec(), ours, 1).unwrap_err();
    assert!(
        matches!(&short, NoResult::Fault(why) if why.contains("3 launches of the student's kernels and 4 of ours")),
        "{short:?}"
    );
    assert!(Whose::Both.theirs() && Whose::Both.ours());
    assert!(Whose::Theirs.theirs() && !Whose::Theirs.ours());
    assert!(!Whose::Ours.theirs() && Whose::Ours.ours());
}

/// Ours are measured once: where the file holds as many launches as expected, they are read and no
/// child runs; where it holds another count, or nothing, the child runs, and one that fails is the
/// machine's and leaves nothing kept.
#[test]
fn ours_kept_are_read_and_not_measured_again() {
    let dir = common::private_dir::PrivateDir::new("ours-test").unwrap();
    let file = dir.path().join("ours.csv");
    let ours = |per_case: usize| Ours {
        file: file.clone(),
        // A child that would fail: no row, no counters.
        child: child_of(Command::new("false"), dir.path()),
        per_case,
        cases: 2,
    };
    let csv =
        "\"ID\",\"Kernel Name\",\"m__x.sum\"\n\"\",\"\",\"\"\n\"0\",\"mmm_f64\",\"1,024\"\n\"1\",\"mmm_f32\",\"7\"\n";
    std::fs::write(&file, csv).unwrap();
    let kept = ours_once(ours(1)).unwrap();
    assert_eq!(
        kept.iter().map(|l| l.value("m__x.sum")).collect::<Vec<_>>(),
        [1024.0, 7.0]
    );
    // 4 expected, 2 kept: measured again, and the child fails: the machine's, never the student's.
    let failed = ours_once(ours(2)).unwrap_err();
    assert!(
        matches!(&failed, NoResult::Machine(why) if why.starts_with("measuring our kernels: ")),
        "{failed:?}"
    );
    std::fs::remove_file(&file).unwrap();
    assert!(matches!(ours_once(ours(1)), Err(NoResult::Machine(_))));
    assert!(!file.exists(), "a failed measurement keeps nothing");
}

/// Issue 62: on a student's own machine, measured rules the machine kept from running are not run,
/// to be measured at grading; a fault stays a fault.
#[test]
fn a_students_own_check_leaves_unmeasurable_rules_to_grading() {
    let rows = at_grading(vec![
        Row {
            case: "loads".into(),
            result: Err(NoResult::Machine("ncu may not read this GPU's counters here".into())),
        },
        Row {
            case: "shared".into(),
            result: Err(NoResult::Fault("the measured run under ncu failed".into())),
        },
    ]);
    assert_eq!(rows[0].verdict(), "-");
    assert_eq!(
        rows[0].result,
        Err(NoResult::NotRun(format!(
            "{AT_GRADING}; here: ncu may not read this GPU's counters here"
        )))
    );
    assert_eq!(rows[1].verdict(), "FAULT");
}

/// Issue 61: every case is measured, and a rule's row is the first case that breaks it, else
/// the last case's.
#[test]
fn each_rule_shows_the_first_case_that_breaks_it_else_the_last() {
    let run = |_: &KernelImage, _: &[f64], _: Whose| Ok(());
    let judge = |case: &f64, launches: &[Launch]| {
        let name = format!("{case} ({} launches)", launches.len());
        vec![
            rule_row("loads", &name, *case, Bound::AtMost(2.0), "tiled", 1.0),
            rule_row("shared", &name, *case, Bound::AtLeast(0.0), "tiled", 1.0),
        ]
    };
    let measure = |cases: Vec<f64>| Measure {
        cases,
        rules: &["loads", "shared"],
        metrics: &["m"],
        optional_metrics: &[],
        kernels: "k",
        launches_per_case: 2,
        run: &run,
        judge: &judge,
    };
    let launches = |count: usize| {
        Ok(vec![
            Launch {
                kernel: "k".to_string(),
                values: Default::default()
            };
            count
        ])
    };
    let position = |row: &Row| row.result.as_ref().unwrap().first.as_ref().unwrap().position.clone();
    let rows = measure(vec![1.0, 3.0, 5.0, 2.0]).rows(launches(8));
    assert_eq!(rows.len(), 2);
    assert!(!rows[0].passed() && position(&rows[0]) == "3 (2 launches)", "{rows:?}");
    assert!(rows[1].passed() && position(&rows[1]) == "2 (2 launches)", "{rows:?}");
    let rows = measure(vec![1.0, 3.0]).rows(launches(3));
    assert!(rows.iter().all(|row| row.verdict() == "FAULT"), "{rows:?}");
}

/// Issue 65: ncu measures our first launch with the week's kernels (a name or a `regex:`), and its
/// launch is never one of theirs: not where a student names a kernel of theirs after it either.
#[test]
fn ncu_measures_our_first_launch_and_it_is_not_the_weeks() {
    let run = |_: &KernelImage, _: &[f64], _: Whose| Ok(());
    let judge = |_: &f64, _: &[Launch]| Vec::new();
    let measure = |kernels| Measure {
        cases: vec![1.0],
        rules: &[],
        metrics: &["m"],
        optional_metrics: &[],
        kernels,
        launches_per_case: 1,
        run: &run,
        judge: &judge,
    };
    assert_eq!(
        measure("regex:^mmm_f(32|64)$").kernels_with_first_launch(),
        "regex:^ncu_first_launch$|^mmm_f(32|64)$"
    );
    assert_eq!(measure("k").kernels_with_first_launch(), "regex:^ncu_first_launch$|^k$");
    assert_eq!(
        measure("mmm(float*)").kernels_with_first_launch(),
        r"regex:^ncu_first_launch$|^mmm\(float\*\)$"
    );
    let csv = "\"ID\",\"Kernel Name\",\"m__x\"\n\"\",\"\",\"\"\n\"0\",\"ncu_first_launch\",\"1\"\n\"1\",\"k\",\"5\"\n";
    let read = read_launches(csv, &[]).unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!((read[0].kernel.as_str(), read[0].values["m__x"]), ("k", 5.0));
}

/// Issue 61: `cp.async` and TMA are counted where the GPU has them, and ncu is never asked for a
/// metric the GPU lacks. Issue 65: a metric that counts instructions is asked for only where the
/// PTX names one of them, or where the PTX is unknown.
#[test]
fn optional_metrics_are_read_where_the_gpu_and_the_code_can_move_them() {
    let run = |_: &KernelImage, _: &[()], _: Whose| Ok(());
    let judge = |_: &(), _: &[Launch]| Vec::new();
    let metric = |metric, from_arch, opcodes| OptionalMetric {
        metric,
        from_arch,
        opcodes,
    };
    let measure = Measure {
        cases: vec![()],
        rules: &["a"],
        metrics: &["m"],
        optional_metrics: &[
            metric("tex", 75, &["tex", "suld"]),
            metric("ldgsts", 80, &[]),
            metric("tma", 90, &["cp.async.bulk"]),
        ],
        kernels: "k",
        launches_per_case: 1,
        run: &run,
        judge: &judge,
    };
    let kernel = |body: &str| format!(".visible .entry k()\n{{\n\t{body};\n}}\n");
    let (loads, surfaces, tensors) = (
        kernel("ld.global.f32 %f1, [%rd1]"),
        kernel("suld.b.1d.b32.trap {%r1}, [%rd1, {%r2}]"),
        kernel("cp.async.bulk.tensor.2d.shared::cluster.global [%r1], [%rd1, {%r2, %r3}], [%r4]"),
    );
    let plain = Some(loads.as_str());
    assert_eq!(measure.metrics_for(None, None), ["m"]);
    assert_eq!(measure.metrics_for(Some(75), plain), ["m"]);
    assert_eq!(measure.metrics_for(Some(75), None), ["m", "tex"]);
    assert_eq!(measure.metrics_for(Some(86), plain), ["m", "ldgsts"]);
    assert_eq!(measure.metrics_for(Some(90), plain), ["m", "ldgsts"]);
    assert_eq!(measure.metrics_for(Some(90), Some(&surfaces)), ["m", "tex", "ldgsts"]);
    assert_eq!(measure.metrics_for(Some(90), Some(&tensors)), ["m", "ldgsts", "tma"]);
    // The usual metrics: a plain kernel's; ours (no PTX) and one with bulk copies read others.
    let usual = |arch, ptx| measure.usual(arch, &measure.metrics_for(arch, ptx));
    assert!(usual(Some(90), plain));
    assert!(!usual(Some(90), None) && !usual(Some(90), Some(&tensors)));
    assert!(usual(Some(75), Some(&tensors)), "no TMA before sm_90");
    assert_eq!(measure.metrics_for(Some(120), None), ["m", "tex", "ldgsts", "tma"]);
    let launch = Launch {
        kernel: "k".to_string(),
        values: [("ldgsts".to_string(), 5.0)].into_iter().collect(),
    };
    assert_eq!((optional(&launch, "ldgsts"), optional(&launch, "tma")), (5.0, 0.0));
    // A metric asked for and not given is NaN, never 0.
    let csv = "\"ID\",\"Kernel Name\",\"m__ldgsts\"\n\"\",\"\",\"\"\n\"1\",\"k1\",\"5\"\n";
    let read = read_launches(csv, &["m__ldgsts".to_string(), "m__tma".to_string()]).unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(optional(&read[0], "m__ldgsts"), 5.0);
    assert!(optional(&read[0], "m__tma").is_nan());
    assert_eq!(optional(&read_launches(csv, &[]).unwrap()[0], "m__tma"), 0.0);
}

#[test]
fn the_measured_child_waits_for_the_cases_and_not_for_a_parent_that_is_gone() {
    let dir = common::private_dir::PrivateDir::new("measure-wait").unwrap();
    let go = dir.path().join("go");
    drop(Go(&go));
    wait_for_the_cases(&go, std::process::id()).unwrap();
    let never = dir.path().join("never");
    let error = wait_for_the_cases(&never, u32::MAX >> 1).unwrap_err().to_string();
    assert!(error.contains("is gone"), "{error}");
}

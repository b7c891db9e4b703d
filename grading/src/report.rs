//! What `--check` prints and says in the end: the table (or the CSV row) of a check, what its failing
//! cases printed, the `--details` file and the verdict; and the checks that run no case:
//! `--list-cases`, `--dry-run` and a file the lab could not take.

use std::path::Path;

use anyhow::{bail, Result};

use crate::case_process::CaseRun;
use crate::check::Check;
use crate::csv::{csv, csv_header};
use crate::exit::{exit_code, machine_of, Machine, Usage};
use crate::mark;
use crate::row::{table, NoResult, Outcome, Row};
use crate::student_args::StudentArgs;

/// `--list-cases`: the case names (rules first) and the set's hash, or with `--csv` the CSV header.
pub(crate) fn list_cases<C>(args: &StudentArgs, check: &Check<'_, C>, rules: &[Row]) {
    let names: Vec<&str> = rules
        .iter()
        .map(|row| row.case.as_str())
        .chain(unrun_names(check))
        .collect();
    if args.csv {
        println!("{}", csv_header(&names));
    } else {
        println!("{} cases (case set {}):", names.len(), check.cases.hash);
        for name in names {
            println!("{name}");
        }
        if let Some(note) = check.cases.shared_checks_note() {
            let left_out = check
                .cases
                .names
                .iter()
                .zip(&check.cases.shared_checked)
                .filter(|(_, &checked)| !checked)
                .map(|(name, _)| name.as_str());
            // On stderr: stdout is the count and the names, which grade.sh reads.
            eprintln!(
                "With --sanitize, where the kernels use shared memory or barriers: {note}; left out: {}.",
                left_out.collect::<Vec<_>>().join("; ")
            );
        }
    }
}

/// The names of the rows the GPU gives, in the table's order: the measured rules, then the cases.
fn unrun_names<'a, C>(check: &'a Check<'_, C>) -> impl Iterator<Item = &'a str> {
    let measured = check.measure.as_ref().map_or(&[][..], |measure| measure.rules);
    measured
        .iter()
        .copied()
        .chain(check.cases.names.iter().map(String::as_str))
}

/// The rows the GPU would have given, each without a result for the same reason `why`.
pub(crate) fn unrun<C>(check: &Check<'_, C>, why: &NoResult) -> Vec<Row> {
    unrun_names(check)
        .map(|name| Row {
            case: name.to_string(),
            result: Err(why.clone()),
        })
        .collect()
}

/// The note a dry run's CSV row carries, and the reason its GPU rows give.
const DRY_RUN: &str = "dry run: no GPU used";

/// `--check --dry-run`: the rules read from what nvcc made, no case run, nothing measured, no CUDA
/// context; the table says which checks did not run. Fails only where a rule fails.
pub(crate) fn dry_run<C>(args: &StudentArgs, check: &Check<'_, C>, rules: Vec<Row>) -> Result<()> {
    let ruled = rules.len();
    let mut rows = rules;
    rows.extend(unrun(check, &NoResult::NotRun(DRY_RUN.to_string())));
    let skipped = rows.len() - ruled;
    let source = args.kernel_source.as_deref().unwrap_or(Path::new("?"));
    if args.csv {
        mark::print(&csv(source, &rows, &check.cases.hash, DRY_RUN));
    } else {
        let rules = if ruled == 0 {
            ": this week has no rules read from what nvcc made".to_string()
        } else {
            format!(", the rules read from what nvcc made:\n\n{}", table(&rows[..ruled]))
        };
        println!("\n--check --dry-run of {}{rules}", source.display());
        println!("\nNot run (a dry run uses no GPU): the {skipped} cases and measured rules below; --check without --dry-run runs them.");
        for row in &rows[ruled..] {
            println!("  {}", row.case);
        }
    }
    say_verdict(args, verdict(&rows))
}

/// `--check` of a file the lab could not take (it did not compile, lacks a kernel, takes other
/// parameters, is another week's): the error, and with `--csv` the row too, FAIL in every column (no
/// case can pass with this file, on any machine; with `--dry-run` the GPU's columns are `-`) and the
/// note `compile error: ` with the error's line. Errors of the call ([`Usage`]) or of the machine
/// ([`Machine`]: no nvcc) get no row: they are not the student's.
pub(crate) fn file_failed<C>(
    args: &StudentArgs,
    check: &Check<'_, C>,
    rules: &[Row],
    err: &anyhow::Error,
) -> Result<()> {
    let message = format!("{err:#}");
    let kind = match exit_code(err) {
        2 => anyhow::Error::new(Usage(message.clone())),
        3 => anyhow::Error::new(Machine(machine_of(err).unwrap_or_else(|| message.clone()))),
        _ => anyhow::anyhow!(message.clone()),
    };
    if exit_code(err) == 1 {
        let failed = |name: &str| Row {
            case: name.to_string(),
            result: Ok(Outcome {
                wrong: 1,
                elements: 1,
                first: None,
                times: None,
                finding: Some(message.clone()),
            }),
        };
        let mut rows: Vec<Row> = rules.iter().map(|rule| failed(&rule.case)).collect();
        rows.extend(unrun_names(check).map(|name| match args.dry_run {
            true => Row {
                case: name.to_string(),
                result: Err(NoResult::NotRun(DRY_RUN.to_string())),
            },
            false => failed(name),
        }));
        let source = args.kernel_source.as_deref().unwrap_or(Path::new("?"));
        if args.csv {
            mark::print(&csv(
                source,
                &rows,
                &check.cases.hash,
                &format!("compile error: {}", one_line(&message)),
            ));
        }
        write_details(
            args,
            check,
            &rows,
            serde_json::json!({ "compile_error": message, "verdict": message }),
        )?;
    }
    Err(kind)
}

/// `text` on one line: its lines trimmed and joined with spaces.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The end of `--check`: the table (or CSV) of `rows`, what failing cases printed (`runs`), and the
/// verdict. With `--csv`, stdout is the CSV alone: grade.sh takes exactly its header and its row.
/// `sanitized`: `None` without compute-sanitizer, else which cases racecheck and synccheck left out
/// (`Some(None)`: none). `races`: what `check_races` (in `check.rs`) says, where it ran.
pub(crate) fn report<C>(
    args: &StudentArgs,
    check: &Check<'_, C>,
    rows: &[Row],
    runs: &[CaseRun],
    sanitized: Option<Option<String>>,
    races: Option<String>,
) -> Result<()> {
    let source = args.kernel_source.as_deref().unwrap_or(Path::new("?"));
    let verdict = verdict(rows);
    let failing = runs.iter().filter(|run| !run.row.passed());
    let printed: Vec<serde_json::Value> = failing.map(|run| serde_json::json!({ "case": run.row.case, "stdout": run.stdout.shown(), "stderr": run.stderr.shown() })).collect();
    let said = verdict.as_ref().map_or_else(|err| format!("{err:#}"), String::clone);
    write_details(
        args,
        check,
        rows,
        serde_json::json!({
            "sanitized": sanitized.is_some(),
            "sanitizer_note": sanitized.clone().flatten(),
            "races_note": races,
            "outputs": printed,
            "verdict": said,
        }),
    )?;
    let note = machine_note(rows).unwrap_or_default();
    if args.csv {
        mark::print(&csv(source, rows, &check.cases.hash, &note));
    } else {
        let under = match (sanitized, races) {
            (None, None) => String::new(),
            (None, Some(races)) => format!(", {races}"),
            (Some(None), _) => ", under compute-sanitizer".to_string(),
            (Some(Some(note)), _) => format!(", under compute-sanitizer: {note}"),
        };
        println!(
            "\n--check of {} ({} cases, case set {}{under}):\n\n{}",
            source.display(),
            rows.len(),
            check.cases.hash,
            table(rows)
        );
        print!("{}", outputs(runs, args.show_output));
        if let Some(note) = machine_note(rows) {
            println!("\nMACHINE: {note}. Run --check again where the machine can (--dry-run judges the rules read from what nvcc made without a GPU).");
        }
    }
    say_verdict(args, verdict)
}

/// `--details FILE`: the check as JSON for the feedback crate (issue 44): the lab, the file, the case
/// set and its cases' names (the other rows are rules), every row in the form a case's child reports
/// it ([`Row::to_line`], which the feedback reads back with [`Row::from_line`]), and `more` (what the
/// failing cases printed, the verdict, or a compile error). The file must be new: nothing a user
/// gave is overwritten.
fn write_details<C>(args: &StudentArgs, check: &Check<'_, C>, rows: &[Row], more: serde_json::Value) -> Result<()> {
    use std::io::Write as _;
    let Some(path) = &args.details else { return Ok(()) };
    let source = args.kernel_source.as_deref().unwrap_or(Path::new("?"));
    let mut details = serde_json::json!({
        "lab": check.lab,
        "source": source.display().to_string(),
        "case_set": check.cases.hash,
        "cases": check.cases.names,
        "rows": rows.iter().map(Row::to_line).collect::<Vec<_>>(),
    });
    if let (Some(details), serde_json::Value::Object(more)) = (details.as_object_mut(), more) {
        details.extend(more);
    }
    // A file that is there already is the caller's mistake; a write the file system refuses (a full
    // disk) is the machine's, never the student's (issue 62): exit code 3, so the grader grades again.
    let shown = path.display();
    let mut file = match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Usage(format!("--details: cannot make {shown} (it must not exist yet)")).into())
        }
        Err(err) => return Err(Machine(format!("--details: cannot make {shown}: {err}")).into()),
    };
    writeln!(file, "{details:#}").map_err(|err| Machine(format!("--details: cannot write {shown}: {err}")).into())
}

/// The verdict's line: on stdout after the table, on stderr after the CSV; an error as it is.
fn say_verdict(args: &StudentArgs, verdict: Result<String>) -> Result<()> {
    let verdict = verdict?;
    if args.csv {
        eprintln!("{verdict}");
    } else {
        println!("{verdict}");
    }
    Ok(())
}

/// The CSV's note where the machine kept checks from running: `machine: ` and the first reason.
fn machine_note(rows: &[Row]) -> Option<String> {
    first_machine_reason(rows).map(|why| format!("machine: {why}"))
}

/// The first reason, in one line, why the machine could not run one of `rows`.
fn first_machine_reason(rows: &[Row]) -> Option<String> {
    rows.iter().find_map(|row| match &row.result {
        Err(NoResult::Machine(why)) => Some(one_line(why)),
        _ => None,
    })
}

/// Whether `rows` are a dry run's (its rows not run say so).
fn is_dry_run(rows: &[Row]) -> bool {
    rows.iter()
        .any(|row| matches!(&row.result, Err(NoResult::NotRun(why)) if why == DRY_RUN))
}

/// The last line of `--check`: that every check passed, or the error that says how many did not.
/// Rows the machine could not run make it a [`Machine`] error (exit code 3) even beside the student's
/// failures: the row is incomplete, and its FAIL and FAULT columns stand, so a run on a working
/// machine is needed for the rest and changes none of them. Rows not run (`--dry-run`) count for
/// nothing.
fn verdict(rows: &[Row]) -> Result<String> {
    let judged: Vec<&Row> = rows
        .iter()
        .filter(|row| !matches!(row.result, Err(NoResult::NotRun(_))))
        .collect();
    let failed = judged
        .iter()
        .filter(|row| !row.passed() && !row.on_the_machine())
        .count();
    let machine = judged.iter().filter(|row| row.on_the_machine()).count();
    match (failed, first_machine_reason(rows)) {
        (0, Some(why)) => Err(anyhow::Error::new(Machine(format!(
            "{machine} of {} checks could not run on this machine, none of them for the kernel: {why}",
            judged.len()
        )))),
        (failed, Some(why)) => Err(anyhow::Error::new(Machine(format!(
            "{failed} of {} checks failed, and {machine} could not run on this machine: {why}",
            judged.len()
        )))),
        (0, None) if judged.len() < rows.len() && !is_dry_run(rows) => Ok(format!(
            "all {} checks that ran here pass; {} measured rules did not run on this machine and run when the course grades",
            judged.len(),
            rows.len() - judged.len()
        )),
        (0, None) if judged.len() < rows.len() => Ok(format!(
            "The file compiles and all {} rules read from what nvcc made pass; the rest did not run (--dry-run)",
            judged.len()
        )),
        (0, None) => Ok(format!("Solution is correct: all {} cases pass", rows.len())),
        (failed, None) => bail!(
            "{failed} of {} {} failed",
            judged.len(),
            if judged.len() < rows.len() { "rules" } else { "cases" }
        ),
    }
}

/// What the cases printed, under the table: the failing cases', or every case's with `all`.
fn outputs(runs: &[CaseRun], all: bool) -> String {
    let mut out = String::new();
    for run in runs.iter().filter(|run| all || !run.row.passed()) {
        for (stream, captured) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            if !captured.is_empty() {
                out.push_str(&format!(
                    "\n{} of case \"{}\" ({} lines, {} bytes):\n{}",
                    stream,
                    run.row.case,
                    captured.lines(),
                    captured.bytes,
                    captured.shown()
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::tests::outcome;

    /// Issue 45: the machine's rows make the verdict a [`Machine`] error (exit code 3), beside the
    /// student's failures too (the row is incomplete; its FAILs stand), with the note `machine: `;
    /// rows not run (`--dry-run`) count for nothing.
    #[test]
    fn machine_rows_give_exit_code_3_and_a_note_and_dry_runs_count_the_rules() {
        let machine = Row {
            case: "m".into(),
            result: Err(NoResult::Machine("no ncu\nfound".into())),
        };
        let (pass, fail) = (
            Row {
                case: "a".into(),
                result: Ok(outcome(0)),
            },
            Row {
                case: "b".into(),
                result: Ok(outcome(3)),
            },
        );
        let error = verdict(&[pass.clone(), machine.clone()]).unwrap_err();
        assert_eq!(
            (exit_code(&error), error.to_string()),
            (
                3,
                "machine: 1 of 2 checks could not run on this machine, none of them for the kernel: no ncu found"
                    .to_string()
            )
        );
        let error = verdict(&[fail.clone(), machine.clone()]).unwrap_err();
        assert_eq!(
            (exit_code(&error), error.to_string()),
            (
                3,
                "machine: 1 of 2 checks failed, and 1 could not run on this machine: no ncu found".to_string()
            )
        );
        let rows = [pass.clone(), fail.clone(), machine.clone()];
        assert_eq!(machine_note(&rows).as_deref(), Some("machine: no ncu found"));
        assert!(csv(Path::new("s.cu"), &rows, "h", "machine: no ncu found")
            .ends_with(",PASS,FAIL,MACHINE,1/3,2.000,,\"machine: no ncu found\",h\n"));
        let not_run = Row {
            case: "n".into(),
            result: Err(NoResult::NotRun(DRY_RUN.into())),
        };
        assert_eq!(
            verdict(&[pass.clone(), not_run.clone()]).unwrap(),
            "The file compiles and all 1 rules read from what nvcc made pass; the rest did not run (--dry-run)"
        );
        assert_eq!(exit_code(&verdict(&[fail, not_run.clone()]).unwrap_err()), 1);
        // Issue 62: measured rules left to grading on a student's machine: the check passes.
        let left = Row {
            case: "tiling, measured: loads".into(),
            result: Err(NoResult::NotRun(format!(
                "{}; here: no ncu",
                crate::measure::AT_GRADING
            ))),
        };
        assert_eq!(
            verdict(&[pass.clone(), left]).unwrap(),
            "all 1 checks that ran here pass; 1 measured rules did not run on this machine and run when the course grades"
        );
        assert!(csv(Path::new("s.cu"), &[pass, not_run.clone()], "h", DRY_RUN)
            .ends_with(",PASS,-,1/1,2.000,,\"dry run: no GPU used\",h\n"));
        assert!(table(&[not_run]).contains("| n | - | not run (dry run: no GPU used) |"));
        assert!(table(&[machine])
            .contains("| m | MACHINE | not run: the machine could not (below), which says nothing of the kernel |"));
    }

    #[test]
    fn the_verdict_counts_the_cases_that_did_not_pass() {
        let pass = Row {
            case: "a".into(),
            result: Ok(outcome(0)),
        };
        assert_eq!(
            verdict(std::slice::from_ref(&pass)).unwrap(),
            "Solution is correct: all 1 cases pass"
        );
        let rows = vec![
            pass,
            Row {
                case: "b".into(),
                result: Err("killed".into()),
            },
        ];
        assert_eq!(verdict(&rows).unwrap_err().to_string(), "1 of 2 cases failed");
    }
}

//! The grading row of a program's check, in the shape assignments/grade.sh reads from every lab
//! (`file`, a verdict per column, `passed`, `time ratio`, `flags`, `note`, `case set`): a column per
//! case (its results: PASS, FAIL, FAULT where the program failed or left no trace, `-` not run), then
//! a column per rule (`name: what it asks`; grade.sh counts a column with `: ` as a rule, which
//! earns only as much as the cases pass), FAIL where any case failed it or could not be judged,
//! PASS where it passed wherever it applied, `-` where it never did.

use std::path::Path;

use super::{Rule, Verdict};
use crate::cases_file::CaseSet;
use crate::csv::{csv_field, csv_header, ratio_columns};

/// The header for these cases and rules.
pub fn header(cases: &[String], rules: &[&str]) -> String {
    let names: Vec<&str> = cases.iter().map(String::as_str).chain(rules.iter().copied()).collect();
    csv_header(&names)
}

/// The header and the row of `source`, from each case's rows (empty where the case did not run).
pub fn row<C>(source: &Path, set: &CaseSet<C>, rules: &[&str], per_case: &[Vec<Rule>], note: &str) -> String {
    let mut verdicts: Vec<&str> = per_case.iter().map(|rows| case_verdict(rows)).collect();
    verdicts.extend(rules.iter().map(|column| rule_verdict(per_case, column)));
    let counted = verdicts.iter().filter(|verdict| **verdict != "-").count();
    let passed = verdicts.iter().filter(|verdict| **verdict == "PASS").count();
    // The time's ratio over the cases whose results are right, as the kernel weeks' mean.
    let ratios: Vec<f64> = per_case
        .iter()
        .filter(|rows| case_verdict(rows) == "PASS")
        .flatten()
        .filter_map(|row| row.ratio)
        .filter(|ratio| *ratio > 0.0)
        .collect();
    let (mean, flags) = ratio_columns(&ratios);
    let note = if note.is_empty() {
        String::new()
    } else {
        csv_field(note)
    };
    format!(
        "{}\n{},{},{passed}/{counted},{mean},{flags},{note},{}\n",
        header(&set.names, rules),
        csv_field(&source.display().to_string()),
        verdicts.join(","),
        set.hash
    )
}

/// A case's column: FAULT where it could not be judged, else its results' verdict; `-` not run.
fn case_verdict(rows: &[Rule]) -> &'static str {
    if rows.iter().any(|row| row.verdict == Verdict::Fault) {
        return "FAULT";
    }
    rows.iter()
        .find(|row| row.name == "results")
        .map_or("-", |row| row.verdict.cell())
}

/// A rule's column (`name: what it asks`) over every case. A case that could not be judged leaves
/// every rule unproven there: FAIL, so that failing on purpose where a rule would fail gains nothing.
fn rule_verdict(per_case: &[Vec<Rule>], column: &str) -> &'static str {
    if per_case.iter().any(|rows| case_verdict(rows) == "FAULT") {
        return "FAIL";
    }
    let name = column.split(": ").next().unwrap_or(column);
    let verdicts: Vec<Verdict> = per_case
        .iter()
        .flatten()
        .filter(|row| row.name == name)
        .map(|row| row.verdict)
        .collect();
    if verdicts.contains(&Verdict::Fail) {
        "FAIL"
    } else if verdicts.contains(&Verdict::Pass) {
        "PASS"
    } else {
        "-"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> CaseSet<u32> {
        CaseSet::every_case_checked(
            vec![1, 2, 3],
            vec!["N 1".into(), "N 2".into(), "N 3".into()],
            "0123456789abcdef".into(),
        )
    }

    const RULES: [&str; 3] = [
        "waits: results read after the GPU's work",
        "overlap: at least 30%",
        "GPU time: at most 1.5x ours",
    ];

    #[test]
    fn a_column_per_case_and_per_rule_in_grade_shs_shape() {
        let rule = |name, passed| Rule::judged(name, String::new(), "", passed);
        let per_case = vec![
            vec![
                rule("results", true),
                rule("waits", true),
                rule("GPU time", true).with_times(0.4, 1.0),
            ],
            vec![
                rule("results", false),
                rule("waits", true),
                Rule::not_applicable("overlap", "one stream"),
            ],
            vec![super::super::rows::fault("no trace".into())],
        ];
        let csv = row(Path::new("=alice.cu"), &set(), &RULES, &per_case, "");
        assert_eq!(
            csv,
            "file,\"N 1\",\"N 2\",\"N 3\",\"waits: results read after the GPU's work\",\"overlap: at least 30%\",\
             \"GPU time: at most 1.5x ours\",passed,time ratio,flags,note,case set\n\
             \"'=alice.cu\",PASS,FAIL,FAULT,FAIL,FAIL,FAIL,1/6,0.400,\
             \"suspiciously fast: 1 case(s) under 0.5x ours, lowest 0.40x\",,0123456789abcdef\n"
        );
    }

    #[test]
    fn a_dry_run_row_has_nothing_judged_and_says_so() {
        let csv = row(
            Path::new("a.cu"),
            &set(),
            &RULES,
            &[vec![], vec![], vec![]],
            "dry run: no GPU used",
        );
        assert!(
            csv.ends_with("\"a.cu\",-,-,-,-,-,-,0/0,,,\"dry run: no GPU used\",0123456789abcdef\n"),
            "{csv}"
        );
        assert_eq!(header(&set().names, &RULES), csv.lines().next().unwrap());
    }
}

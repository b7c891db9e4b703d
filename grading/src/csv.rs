//! The grading row of a lab's `--check --csv`, which assignments/grade.sh reads ([`csv`]): the
//! header, each case's verdict, how many passed, the mean time ratio, the flags for a teacher, the
//! note and the case set; its fields and columns are the program weeks' too (`program::csv`).

use std::path::Path;

use crate::row::{NoResult, Row};
use crate::times::{Times, SUSPICIOUS_RATIO};

/// A text field, as the grader's CSV module writes it (the one CSV module, `grader::csv`): quoted,
/// quotes doubled, control characters and bytes that are not UTF-8 as `\xNN`, and a `'` before a field
/// a spreadsheet would take for a formula (issue 29).
pub use grader::csv::field as csv_field;

/// The CSV header for these case names.
pub(crate) fn csv_header(cases: &[&str]) -> String {
    let names: Vec<String> = cases.iter().map(|name| csv_field(name)).collect();
    format!("file,{},passed,time ratio,flags,note,case set", names.join(","))
}

/// The CSV's `time ratio` and `flags` columns from the student's time over ours in each case that
/// passed: their geometric mean, and a flag for a teacher where some are under [`SUSPICIOUS_RATIO`].
pub(crate) fn ratio_columns(ratios: &[f64]) -> (String, String) {
    let mean = if ratios.is_empty() {
        String::new()
    } else {
        format!(
            "{:.3}",
            (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp()
        )
    };
    let fast: Vec<f64> = ratios
        .iter()
        .copied()
        .filter(|ratio| *ratio < SUSPICIOUS_RATIO)
        .collect();
    let flags = match fast.iter().copied().reduce(f64::min) {
        Some(lowest) => csv_field(&format!(
            "suspiciously fast: {} case(s) under {SUSPICIOUS_RATIO}x ours, lowest {lowest:.2}x",
            fast.len()
        )),
        None => String::new(),
    };
    (mean, flags)
}

/// The grading row: the file, each case's verdict, how many passed, the geometric mean of the time
/// ratios over every case that passed (unsteady ones too: [`MAX_SPREAD`] says why), the flags for a
/// teacher (ratios below [`SUSPICIOUS_RATIO`]), the note (`machine: ...` where the machine kept checks
/// from running, `dry run: no GPU used`, `compile error: ...`; empty otherwise), and the case set's
/// hash, last.
///
/// [`MAX_SPREAD`]: crate::times::MAX_SPREAD
pub fn csv(source: &Path, rows: &[Row], case_set: &str, note: &str) -> String {
    let names: Vec<&str> = rows.iter().map(|row| row.case.as_str()).collect();
    let verdicts: Vec<&str> = rows.iter().map(Row::verdict).collect();
    let times: Vec<Times> = rows
        .iter()
        .filter(|row| row.passed())
        .filter_map(|row| row.result.as_ref().ok()?.times)
        .collect();
    let ratios: Vec<f64> = times.iter().map(Times::ratio).collect();
    let (mean, flags) = ratio_columns(&ratios);
    // Of the checks that ran or should have: a dry run's `-` columns count for nothing.
    let counted = rows
        .iter()
        .filter(|row| !matches!(row.result, Err(NoResult::NotRun(_))))
        .count();
    let passed = rows.iter().filter(|row| row.passed()).count();
    let note = if note.is_empty() {
        String::new()
    } else {
        csv_field(note)
    };
    format!(
        "{}\n{},{},{passed}/{},{mean},{flags},{note},{case_set}\n",
        csv_header(&names),
        csv_field(&source.display().to_string()),
        verdicts.join(","),
        counted
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::tests::{found, outcome};
    use crate::row::{table, Outcome};

    #[test]
    fn unsteady_ratios_stay_in_the_csv_mean_and_fast_ones_are_flagged() {
        let unsteady = Outcome {
            times: Some(Times {
                student_ms: 8.0,
                ours_ms: 1.0,
                spread: 0.25,
            }),
            ..outcome(0)
        };
        let rows = vec![
            Row {
                case: "a".into(),
                result: Ok(outcome(0)),
            },
            Row {
                case: "b".into(),
                result: Ok(unsteady),
            },
        ];
        assert!(
            table(&rows).contains("| 8.0000 | 1.0000 | 8.00x ±25%, unsteady | - |"),
            "{}",
            table(&rows)
        );
        assert!(csv(Path::new("s.cu"), &rows, "0123456789abcdef", "")
            .ends_with(",PASS,PASS,2/2,4.000,,,0123456789abcdef\n"));
        let fast = Outcome {
            times: Some(Times {
                student_ms: 0.16,
                ours_ms: 1.0,
                spread: 0.01,
            }),
            ..outcome(0)
        };
        let rows = vec![Row {
            case: "a".into(),
            result: Ok(fast),
        }];
        assert!(
            table(&rows)
                .contains("0.16x ±1%, faster than our kernel of the same technique by over 2x: a teacher should look"),
            "{}",
            table(&rows)
        );
        assert!(
            csv(Path::new("s.cu"), &rows, "h", "")
                .ends_with(",PASS,1/1,0.160,\"suspiciously fast: 1 case(s) under 0.5x ours, lowest 0.16x\",,h\n"),
            "{}",
            csv(Path::new("s.cu"), &rows, "h", "")
        );
    }

    #[test]
    fn the_table_and_the_csv_say_what_failed_where() {
        let rows = vec![
            Row {
                case: "a".into(),
                result: Ok(outcome(0)),
            },
            Row {
                case: "b".into(),
                result: Ok(outcome(3)),
            },
            Row {
                case: "c".into(),
                result: Err("killed".into()),
            },
            Row {
                case: "d".into(),
                result: Ok(found("A(3, 7) was changed")),
            },
        ];
        let table = table(&rows);
        assert!(
            table.contains("| a | PASS | 0 of 12 | - | - | - | - | 2.0000 | 1.0000 | 2.00x ±2% | - |"),
            "{table}"
        );
        assert!(
            table.contains("| b | FAIL | 3 of 12 | C(1, 2) | never written | 3.0e0 | block (0, 0), thread (2, 1) |"),
            "{table}"
        );
        assert!(table.contains("| c | FAULT | killed |"), "{table}");
        assert!(
            table
                .contains("| d | FAIL | 0 of 12 | - | - | - | - | 2.0000 | 1.0000 | 2.00x ±2% | A(3, 7) was changed |"),
            "{table}"
        );
        assert_eq!(
            csv(Path::new("alice/mmm.cu"), &rows, "0123456789abcdef", ""),
            "file,\"a\",\"b\",\"c\",\"d\",passed,time ratio,flags,note,case set\n\"alice/mmm.cu\",PASS,FAIL,FAULT,FAIL,1/4,2.000,,,0123456789abcdef\n"
        );
    }

    #[test]
    fn csv_fields_keep_commas_and_quotes_and_escape_line_breaks() {
        assert_eq!(csv_field("Doe, Jane \"JD\"/mmm.cu"), "\"Doe, Jane \"\"JD\"\"/mmm.cu\"");
        assert_eq!(
            csv_field("mmm.cu(3): error: x\nmore"),
            "\"mmm.cu(3): error: x\\x0amore\""
        );
        let rows = vec![Row {
            case: "f64, 1 x 1 times 1 x 1".into(),
            result: Ok(outcome(0)),
        }];
        let text = csv(Path::new("a \"b\", c.cu"), &rows, "h", "");
        assert_eq!(text.lines().nth(1), Some("\"a \"\"b\"\", c.cu\",PASS,1/1,2.000,,,h"));
        assert!(text.starts_with("file,\"f64, 1 x 1 times 1 x 1\",passed"));
    }

    #[test]
    fn csv_fields_that_look_like_formulas_stay_text() {
        for (name, field) in [
            ("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""),
            ("+cmd|x", "\"'+cmd|x\""),
            ("-1", "\"'-1\""),
            ("@SUM(A1)", "\"'@SUM(A1)\""),
            ("\tx", "\"\\x09x\""),
            ("\rx", "\"\\x0dx\""),
        ] {
            assert_eq!(csv_field(name), field);
        }
        assert_eq!(csv_field("a=b-c"), "\"a=b-c\"", "only the first character counts");
    }
}

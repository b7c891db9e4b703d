//! What grade.sh --feedback DIR keeps of each submission's run in DIR/runs, submission `i`'s files
//! named by its place in the CSV: `i.json` (the lab's `--check --details`), `i.out` (what grade.sh
//! keeps of the lab's output: the command, stderr, stdout), `i.cu` (a copy of the file graded) and
//! `i.name` (the student). With them the pages can be made again (`feedback pages`), anywhere.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use grading::Row;

/// The most of the lab's stderr a feedback page quotes: the compile messages come first.
const MOST_SAID_LINES: usize = 80;

/// One submission's run.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// The lab's `--details`, where it wrote them (not for a file that was not graded).
    pub details: Option<Details>,
    /// The lab's stderr (nvcc's messages, the verdict), at most [`MOST_SAID_LINES`] lines.
    pub said: String,
}

/// Submission `index`'s file with `suffix` (`json`, `out`, `cu`, `name`, `alike`) in the runs folder.
pub fn run_file(dir: &Path, index: usize, suffix: &str) -> PathBuf {
    dir.join(format!("{index}.{suffix}"))
}

/// A file's text, bytes that are not UTF-8 replaced (a student's file, a lab's output).
pub fn read_lossy(path: &Path) -> std::io::Result<String> {
    std::fs::read(path).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// The lab's `--check --details` file.
#[derive(Debug, Clone, Default)]
pub struct Details {
    pub case_set: String,
    /// The names of the cases, in the order the rows have them; the other rows are rules.
    pub cases: Vec<String>,
    pub rows: Vec<Row>,
    /// What the failing cases printed.
    pub outputs: Vec<Printed>,
    pub verdict: String,
    pub compile_error: Option<String>,
    pub sanitized: bool,
    /// Which cases racecheck and synccheck left out, where a budget left out any.
    pub sanitizer_note: Option<String>,
    /// Without `--sanitize`: the case racecheck and synccheck ran on as well, or why they did not
    /// (issue 61).
    pub races_note: Option<String>,
}

/// What a failing case printed, as the lab kept it (the first and last lines).
#[derive(Debug, Clone, Default)]
pub struct Printed {
    pub case: String,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Submission `index`'s run from `dir`; whatever is missing stays empty (a file never graded
    /// has no details).
    pub fn read(dir: &Path, index: usize) -> Run {
        let path = |suffix: &str| run_file(dir, index, suffix);
        // Details that do not read (a lab stopped while writing them) leave the page to the CSV's
        // verdicts, said on stderr: one run must not cost every student their page.
        let details = std::fs::read_to_string(path("json"))
            .ok()
            .and_then(|text| match Details::parse(&text) {
                Ok(details) => Some(details),
                Err(err) => {
                    eprintln!(
                        "feedback: {} does not read ({err:#}); that page shows the CSV's verdicts",
                        path("json").display()
                    );
                    None
                }
            });
        let said = read_lossy(&path("out"))
            .map(|kept| stderr_of(&kept))
            .unwrap_or_default();
        Run { details, said }
    }
}

impl Details {
    /// Reads the JSON the lab wrote; its rows with [`Row::from_line`], as the check's parent reads
    /// its children's.
    pub fn parse(text: &str) -> Result<Details> {
        let json: serde_json::Value = serde_json::from_str(text).context("not JSON")?;
        let text = |key: &str| json[key].as_str().unwrap_or_default().to_string();
        let texts = |key: &str| -> Vec<String> {
            json[key]
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|item| item.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let rows = texts("rows")
            .iter()
            .map(|line| Row::from_line(line).with_context(|| format!("a row that does not read: {line}")))
            .collect::<Result<Vec<Row>>>()?;
        let printed = |item: &serde_json::Value| Printed {
            case: item["case"].as_str().unwrap_or_default().to_string(),
            stdout: item["stdout"].as_str().unwrap_or_default().to_string(),
            stderr: item["stderr"].as_str().unwrap_or_default().to_string(),
        };
        Ok(Details {
            case_set: text("case_set"),
            cases: texts("cases"),
            rows,
            outputs: json["outputs"]
                .as_array()
                .map(|items| items.iter().map(printed).collect())
                .unwrap_or_default(),
            verdict: text("verdict"),
            compile_error: json["compile_error"].as_str().map(str::to_string),
            sanitized: json["sanitized"].as_bool().unwrap_or(false),
            sanitizer_note: json["sanitizer_note"].as_str().map(str::to_string),
            races_note: json["races_note"].as_str().map(str::to_string),
        })
    }

    /// Whether `row` is one of the cases (else a rule).
    pub fn is_case(&self, row: &Row) -> bool {
        self.cases.contains(&row.case)
    }
}

/// The stderr part of what grade.sh kept (`# stderr:` up to `# stdout:`), cut at [`MOST_SAID_LINES`].
fn stderr_of(kept: &str) -> String {
    let after = kept.split_once("# stderr:\n").map_or(kept, |(_, rest)| rest);
    let stderr = after.split("\n# stdout:").next().unwrap_or_default();
    let lines: Vec<&str> = stderr.lines().collect();
    let mut said = lines
        .iter()
        .take(MOST_SAID_LINES)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    if lines.len() > MOST_SAID_LINES {
        said.push_str(&format!("\n[... {} more lines ...]", lines.len() - MOST_SAID_LINES));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_details_read_back_into_rows() {
        let text = r#"{"lab": "lab-mmm", "case_set": "abc", "cases": ["mmm f64, 1 x 1 times 1 x 1"],
            "rows": ["CHECK-ROW\ttiles\t0\t2\t\t\t\t\t\t\t\t", "CHECK-ROW\tmmm f64, 1 x 1 times 1 x 1\tfault\tlab-mmm: error: trap"],
            "outputs": [{"case": "mmm f64, 1 x 1 times 1 x 1", "stdout": "hi\n", "stderr": ""}], "verdict": "1 of 2 cases failed"}"#;
        let details = Details::parse(text).unwrap();
        assert_eq!(details.rows.len(), 2);
        assert!(!details.is_case(&details.rows[0]) && details.is_case(&details.rows[1]));
        assert_eq!(details.rows[1].verdict(), "FAULT");
        assert_eq!(details.outputs[0].stdout, "hi\n");
        assert_eq!((details.sanitized, details.sanitizer_note), (false, None));
        // Under --sanitize, with the cases racecheck left out (issue 41).
        let note = r#""sanitized": true, "sanitizer_note": "racecheck and synccheck on 1 of 2 cases", "verdict""#;
        let sanitized = Details::parse(&text.replace(r#""verdict""#, note)).unwrap();
        assert_eq!(
            (sanitized.sanitized, sanitized.sanitizer_note.as_deref()),
            (true, Some("racecheck and synccheck on 1 of 2 cases"))
        );
        // A plain check that ran racecheck on one case as well (issue 61).
        let races = r#""races_note": "racecheck and synccheck on \"mmm f64, 1 x 1 times 1 x 1\" too", "verdict""#;
        let raced = Details::parse(&text.replace(r#""verdict""#, races)).unwrap();
        assert_eq!(
            raced.races_note.as_deref(),
            Some("racecheck and synccheck on \"mmm f64, 1 x 1 times 1 x 1\" too")
        );
        assert_eq!(details.races_note, None);
        assert!(Details::parse(r#"{"rows": ["nonsense"]}"#).is_err());
        assert!(Details::parse("not json").is_err());
    }

    #[test]
    fn the_lab_said_what_its_stderr_holds() {
        let kept = "# grade.sh: lab-mmm ... (exit code 1)\n# stderr:\nmmm.cu(3): error: x\nlab-mmm: error: nvcc could not compile\n# stdout:\nfile,a\n";
        assert_eq!(
            stderr_of(kept),
            "mmm.cu(3): error: x\nlab-mmm: error: nvcc could not compile"
        );
        let long: String = (0..200).map(|i| format!("line {i}\n")).collect();
        assert!(stderr_of(&format!("# stderr:\n{long}")).ends_with("[... 120 more lines ...]"));
    }
}

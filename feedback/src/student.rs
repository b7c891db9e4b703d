//! One student's feedback page: the week, the case set, every rule and case with its verdict, the
//! first wrong element and who computed it, the time against ours, what compute-sanitizer and the
//! guard zones found, what the failing cases printed, and what nvcc and the lab said. Nothing of
//! other students (similarity is for the teacher's class page only).

use grading::{NoResult, Row};

use crate::document::{Block, Cell};
use crate::grades::Grades;
use crate::runs::{Details, Run};

/// What the page may show of the cases: all of them, or (`--feedback-hide-cases`) only their
/// verdicts, so that hidden cases stay hidden: no sizes, no values, no output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cases {
    Shown,
    Hidden,
}

/// The page of submission `row` of `grades`, graded in `run`; `case_names` are the case set's cases
/// (from any run's details), which a page without details of its own needs to hide them.
pub fn page(
    week: &str,
    grades: &Grades,
    row: usize,
    run: &Run,
    cases: Cases,
    case_names: Option<&[String]>,
) -> Vec<Block> {
    let student = grades.field(row, "student");
    let names = run
        .details
        .as_ref()
        .map(|details| details.cases.as_slice())
        .or(case_names)
        .unwrap_or_default();
    let said = Said { cases, names };
    let mut blocks = vec![Block::Heading(1, format!("Feedback for {student}: week {week}"))];
    blocks.push(Block::List(summary(grades, row, run.details.as_ref(), &said)));
    match &run.details {
        Some(details) => blocks.extend(checks(details, &said)),
        None => blocks.extend(verdicts_only(grades, row, cases, case_names)),
    }
    if let Some(details) = run.details.as_ref().filter(|_| cases == Cases::Shown) {
        let mut printed_blocks = Vec::new();
        for printed in &details.outputs {
            for (stream, text) in [("stdout", &printed.stdout), ("stderr", &printed.stderr)] {
                if !text.trim().is_empty() {
                    printed_blocks.push(Block::Paragraph(format!("{stream} of \"{}\":", printed.case)));
                    printed_blocks.push(Block::Code(text.clone()));
                }
            }
        }
        // A section with nothing in it is left out.
        if !printed_blocks.is_empty() {
            blocks.push(Block::Heading(
                2,
                "What your kernel printed in the cases that failed".into(),
            ));
            blocks.extend(printed_blocks);
        }
    }
    if !run.said.trim().is_empty() {
        blocks.push(Block::Heading(2, "What nvcc and the lab said".into()));
        blocks.push(Block::Code(said.shown(&run.said)));
    }
    blocks
}

/// What the page may repeat of what the lab, nvcc and grade.sh said (the note, the verdict, nvcc's
/// messages, the lab's stderr): every absolute path by its file name alone, since the grading
/// machine's folders are none of the student's business (issue 60, item 5), and under hidden cases
/// every case's name replaced, whatever line it turns up in.
struct Said<'a> {
    cases: Cases,
    names: &'a [String],
}

impl Said<'_> {
    fn shown(&self, text: &str) -> String {
        let mut shown = file_names_only(text);
        if self.cases == Cases::Hidden {
            let mut names: Vec<&String> = self.names.iter().filter(|name| !name.is_empty()).collect();
            names.sort_by_key(|name| std::cmp::Reverse(name.len())); // a name inside a longer one last
            for name in names {
                shown = shown.replace(name.as_str(), "a hidden case");
            }
        }
        shown
    }
}

/// `text` with each absolute path (a `/` that begins a word) cut to its last part: `/tmp/x/ann.cu(3):`
/// becomes `ann.cu(3):`.
pub(crate) fn file_names_only(text: &str) -> String {
    const BEFORE: &[char] = &['"', '\'', '(', '[', '<', '=', '`'];
    const AFTER: &[char] = &['"', '\'', '(', ')', '[', ']', '<', '>', ',', ';', '`'];
    let mut shown = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('/') {
        let begins_word = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || BEFORE.contains(&c));
        let end = rest[at..]
            .find(|c: char| c.is_whitespace() || AFTER.contains(&c) || c == ':')
            .map_or(rest.len(), |length| at + length);
        shown.push_str(&rest[..at]);
        let path = &rest[at..end];
        match path.trim_end_matches('/').rsplit('/').next().filter(|_| begins_word) {
            Some(name) if path.len() > 1 && !name.is_empty() => shown.push_str(name),
            _ => shown.push_str(path),
        }
        rest = &rest[end..];
    }
    shown.push_str(rest);
    shown
}

/// How many cases and how many rules passed, each of those judged (`-` is not judged).
fn passed(grades: &Grades, row: usize) -> String {
    let (mut cases, mut rules) = ([0, 0], [0, 0]);
    for column in grades.checks() {
        let verdict = grades.rows[row].get(column).map_or("-", String::as_str);
        if verdict == "-" {
            continue;
        }
        let count = if grader::weights::is_rule(&grades.header[column]) {
            &mut rules
        } else {
            &mut cases
        };
        count[0] += usize::from(verdict == "PASS");
        count[1] += 1;
    }
    let mut text = format!("Passed: {} of {} cases", cases[0], cases[1]);
    if rules[1] > 0 {
        text.push_str(&format!(" and {} of {} rules", rules[0], rules[1]));
    }
    text
}

/// The lines at the top: the file, the case set (not for hidden cases: a student could hash guesses
/// with `--list-cases`), the result, the score and the note.
fn summary(grades: &Grades, row: usize, details: Option<&Details>, said: &Said) -> Vec<Cell> {
    let cases = said.cases;
    let field = |name: &str| grades.field(row, name);
    let mut lines = vec![Cell::Text(format!("File graded: {}", said.shown(field("file"))))];
    if cases == Cases::Shown {
        lines.push(Cell::Text(format!(
            "Case set: {}",
            details.map_or(field("case set"), |details| details.case_set.as_str())
        )));
    }
    lines.push(Cell::Text(passed(grades, row)));
    let score = field("score");
    lines.push(Cell::Text(if score.is_empty() {
        "Score: - (not graded)".to_string()
    } else {
        format!(
            "Score: {score} of 100 (the cases passed, and the rules passed as far as the cases are right; \
             a failed rule of the week's technique caps it, at half unless your teacher says otherwise)"
        )
    }));
    if !field("time ratio").is_empty() {
        lines.push(Cell::Text(format!(
            "Your time over ours (geometric mean of the cases that passed): {}",
            field("time ratio")
        )));
    }
    for name in ["flags", "note"] {
        if !field(name).is_empty() {
            lines.push(Cell::Text(format!(
                "{}: {}",
                capitalised(name),
                said.shown(field(name))
            )));
        }
    }
    if let Some(details) = details {
        // "2 of 18 cases failed" counts rules as cases; the line "Passed" counts both apart.
        if !counts_only(&details.verdict) {
            lines.push(Cell::Text(format!("Verdict: {}", said.shown(&details.verdict))));
        }
        match (details.sanitized, &details.sanitizer_note) {
            (true, None) => lines.push(Cell::Text("Every case ran under compute-sanitizer.".into())),
            (true, Some(note)) => lines.push(Cell::Text(format!(
                "Every case ran under compute-sanitizer: {}.",
                said.shown(note)
            ))),
            (false, _) => {}
        }
        if let Some(note) = &details.races_note {
            lines.push(Cell::Text(format!("Races: {}.", said.shown(note))));
        }
    }
    lines
}

/// Whether a lab's verdict only counts what failed ("2 of 18 cases failed"), which the page says better.
fn counts_only(verdict: &str) -> bool {
    let words: Vec<&str> = verdict.split(' ').collect();
    matches!(words[..], [failed, "of", all, "cases", "failed"]
        if [failed, all].iter().all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
}

/// The rules' table and the cases' table, as the lab's `--check` judged them: a rule's row says what
/// was measured or read and its bound, a case's row its values and times.
fn checks(details: &Details, said: &Said) -> Vec<Block> {
    let cases = said.cases;
    let header = [
        "case",
        "verdict",
        "wrong",
        "first wrong element",
        "its value",
        "expected",
        "computed by",
        "your time in ms",
        "ours",
        "ratio",
        "found outside the values",
    ];
    let mut hidden = 0;
    let (case_rows, rule_rows): (Vec<&Row>, Vec<&Row>) = details.rows.iter().partition(|row| details.is_case(row));
    let rows = case_rows
        .into_iter()
        .map(|row| {
            let hide = cases == Cases::Hidden;
            hidden += usize::from(hide);
            let name = if hide {
                format!("hidden case {hidden}")
            } else {
                row.case.clone()
            };
            cells(row, name, hide)
        })
        .collect();
    let mut blocks = vec![Block::Heading(2, "Rules and cases".into())];
    if !rule_rows.is_empty() {
        blocks.push(Block::Table {
            header: ["rule", "verdict", "where", "value", "bound", "from"]
                .map(String::from)
                .to_vec(),
            rows: rule_rows.into_iter().map(rule_cells).collect(),
        });
    }
    if let Some(error) = &details.compile_error {
        // The lab's error ends with nvcc's first error; all of nvcc's messages are in the last section.
        let first = error
            .rsplit_once("the first: ")
            .map_or(error.as_str(), |(_, first)| first);
        blocks.push(Block::Paragraph(format!(
            "The file did not compile, so every check fails. nvcc's first error: {}",
            said.shown(first)
        )));
    }
    blocks.push(Block::Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
    });
    if hidden > 0 {
        blocks.push(Block::Paragraph(format!("The {hidden} cases are the teacher's hidden ones: only their verdicts are shown (a fault's message too would tell their sizes).")));
    }
    blocks
}

/// One rule's row: where it was judged, the value read or measured, its bound, and from what.
fn rule_cells(row: &Row) -> Vec<Cell> {
    let mut cells = vec![Cell::Text(row.case.clone()), Cell::from(row.verdict())];
    match &row.result {
        Ok(outcome) => match &outcome.first {
            Some(first) => cells.extend(
                [&first.position, &first.value, &first.expected, &first.computed_by]
                    .map(|text| Cell::Text(file_names_only(text))),
            ),
            None => cells.extend((0..4).map(|_| Cell::from("-"))),
        },
        Err(NoResult::Machine(why)) => cells.push(Cell::Text(format!(
            "not judged: the machine could not ({}); this says nothing of your kernel",
            file_names_only(why)
        ))),
        Err(why) => cells.push(Cell::Text(file_names_only(why.why()))),
    }
    cells.resize(6, Cell::Text(String::new()));
    cells
}

/// One case's row; `hide` leaves out what would tell a hidden case's sizes or values.
fn cells(row: &Row, name: String, hide: bool) -> Vec<Cell> {
    let dash = || Cell::from("-");
    let mut cells = vec![Cell::Text(name), Cell::from(row.verdict())];
    match &row.result {
        // A hidden case's element count, times and fault would tell its sizes: its verdict alone.
        _ if hide => cells.extend((0..9).map(|_| dash())),
        Ok(outcome) => {
            cells.push(Cell::Text(format!("{} of {}", outcome.wrong, outcome.elements)));
            match &outcome.first {
                Some(first) => cells.extend(
                    [
                        first.position.clone(),
                        first.value.clone(),
                        first.expected.clone(),
                        first.computed_by.clone(),
                    ]
                    .map(Cell::Text),
                ),
                None => cells.extend([dash(), dash(), dash(), dash()]),
            }
            match &outcome.times {
                Some(times) => cells.extend(
                    [
                        format!("{:.4}", times.student_ms),
                        format!("{:.4}", times.ours_ms),
                        format!("{:.2}x", times.ratio()),
                    ]
                    .map(Cell::Text),
                ),
                None => cells.extend([dash(), dash(), dash()]),
            }
            cells.push(
                outcome
                    .finding
                    .as_deref()
                    .map_or_else(dash, |found| Cell::Text(file_names_only(found))),
            );
        }
        Err(NoResult::Machine(why)) => cells.push(Cell::Text(format!(
            "not run: the machine could not ({}); this says nothing of your kernel",
            file_names_only(why)
        ))),
        Err(why) => cells.push(Cell::Text(file_names_only(why.why()))),
    }
    cells.resize(11, Cell::Text(String::new()));
    cells
}

/// Without the lab's details (the file was never run: no `.cu`, several, a link): the CSV's verdicts.
/// Hidden cases are named by number; where the case set's names are not known, every column is.
fn verdicts_only(grades: &Grades, row: usize, cases: Cases, case_names: Option<&[String]>) -> Vec<Block> {
    let mut hidden = 0;
    let rows = grades
        .checks()
        .map(|column| {
            let name = &grades.header[column];
            let hide = cases == Cases::Hidden && case_names.is_none_or(|names| names.contains(name));
            hidden += usize::from(hide);
            let shown = if hide {
                format!("hidden case {hidden}")
            } else {
                name.clone()
            };
            vec![
                Cell::Text(shown),
                Cell::Text(or_dash(&grades.rows[row][column]).to_string()),
            ]
        })
        .collect();
    vec![
        Block::Heading(2, "Rules and cases".into()),
        Block::Table {
            header: vec!["check".into(), "verdict".into()],
            rows,
        },
    ]
}

fn or_dash(text: &str) -> &str {
    if text.is_empty() {
        "-"
    } else {
        text
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |first| first.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passed_counts_cases_and_rules_apart() {
        let grades = Grades::parse(
            "student,file,\"tiles: two\",\"loads: few\",\"mmm 1\",\"mmm 2\",\"mmm 3\",passed\na,a.cu,PASS,-,PASS,FAIL,PASS,3 of 4\n",
        )
        .unwrap();
        assert_eq!(passed(&grades, 0), "Passed: 2 of 3 cases and 1 of 1 rules");
    }

    #[test]
    fn paths_are_cut_to_their_file_names() {
        assert_eq!(
            file_names_only("/tmp/tmp.Fv9/ann lee.cu compiled"),
            "ann lee.cu compiled"
        );
        assert_eq!(
            file_names_only("/home/t/subs/ann.cu(12): error in \"/usr/include/x.h\", see /opt/cuda/"),
            "ann.cu(12): error in \"x.h\", see cuda"
        );
        assert_eq!(
            file_names_only("3/4 passed, a/b and / alone"),
            "3/4 passed, a/b and / alone"
        );
        assert_eq!(file_names_only("(/a/b.cu:3)"), "(b.cu:3)");
    }

    #[test]
    fn hidden_cases_are_not_named_in_anything_said() {
        let names = ["N 4096, 4 streams".to_string(), "N 4096, 4 streams, seed 9".to_string()];
        let hidden = Said {
            cases: Cases::Hidden,
            names: &names,
        };
        assert_eq!(
            hidden.shown("case N 4096, 4 streams, seed 9 failed; N 4096, 4 streams too"),
            "case a hidden case failed; a hidden case too"
        );
        let shown = Said {
            cases: Cases::Shown,
            names: &names,
        };
        assert_eq!(shown.shown("N 4096, 4 streams in /x/y.cu"), "N 4096, 4 streams in y.cu");
    }
}

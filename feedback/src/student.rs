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
    let mut blocks = vec![Block::Heading(1, format!("Feedback for {student}: week {week}"))];
    blocks.push(Block::List(summary(grades, row, run.details.as_ref(), cases)));
    match &run.details {
        Some(details) => blocks.extend(checks(details, cases)),
        None => blocks.extend(verdicts_only(grades, row, cases, case_names)),
    }
    if let Some(details) = run
        .details
        .as_ref()
        .filter(|details| !details.outputs.is_empty() && cases == Cases::Shown)
    {
        blocks.push(Block::Heading(
            2,
            "What your kernel printed in the cases that failed".into(),
        ));
        for printed in &details.outputs {
            for (stream, text) in [("stdout", &printed.stdout), ("stderr", &printed.stderr)] {
                if !text.trim().is_empty() {
                    blocks.push(Block::Paragraph(format!("{stream} of \"{}\":", printed.case)));
                    blocks.push(Block::Code(text.clone()));
                }
            }
        }
    }
    if !run.said.trim().is_empty() {
        blocks.push(Block::Heading(2, "What nvcc and the lab said".into()));
        blocks.push(Block::Code(run.said.clone()));
    }
    blocks
}

/// The lines at the top: the file, the case set (not for hidden cases: a student could hash guesses
/// with `--list-cases`), the result, the score and the note.
fn summary(grades: &Grades, row: usize, details: Option<&Details>, cases: Cases) -> Vec<Cell> {
    let field = |name: &str| grades.field(row, name);
    let mut lines = vec![Cell::Text(format!("File graded: {}", field("file")))];
    if cases == Cases::Shown {
        lines.push(Cell::Text(format!(
            "Case set: {}",
            details.map_or(field("case set"), |details| details.case_set.as_str())
        )));
    }
    lines.push(Cell::Text(format!("Passed: {} checks", or_dash(field("passed")))));
    lines.push(Cell::Text(format!("Score: {}", or_dash(field("score")))));
    if !field("time ratio").is_empty() {
        lines.push(Cell::Text(format!(
            "Your time over ours (geometric mean of the cases that passed): {}",
            field("time ratio")
        )));
    }
    for name in ["flags", "note"] {
        if !field(name).is_empty() {
            lines.push(Cell::Text(format!("{}: {}", capitalised(name), field(name))));
        }
    }
    if let Some(details) = details {
        lines.push(Cell::Text(format!("Verdict: {}", details.verdict)));
        match (details.sanitized, &details.sanitizer_note) {
            (true, None) => lines.push(Cell::Text("Every case ran under compute-sanitizer.".into())),
            (true, Some(note)) => lines.push(Cell::Text(format!("Every case ran under compute-sanitizer: {note}."))),
            (false, _) => {}
        }
    }
    lines
}

/// The table of every rule and case, as the lab's `--check` prints it.
fn checks(details: &Details, cases: Cases) -> Vec<Block> {
    let header = [
        "check",
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
    let rows = details
        .rows
        .iter()
        .map(|row| {
            let hide = cases == Cases::Hidden && details.is_case(row);
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
    if let Some(error) = &details.compile_error {
        // The lab's error ends with nvcc's first error; all of nvcc's messages are in the last section.
        let first = error
            .rsplit_once("the first: ")
            .map_or(error.as_str(), |(_, first)| first);
        blocks.push(Block::Paragraph(format!(
            "The file did not compile, so every check fails. nvcc's first error: {first}"
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

/// One row of the table; `hide` leaves out what would tell a hidden case's sizes or values.
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
            cells.push(outcome.finding.clone().map_or_else(dash, Cell::Text));
        }
        Err(NoResult::Machine(why)) => cells.push(Cell::Text(format!(
            "not run: the machine could not ({why}); this says nothing of your kernel"
        ))),
        Err(why) => cells.push(Cell::Text(why.why().to_string())),
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

//! The grader's CSV from the graded rows: the header, each row with its score (and id, and the
//! submission it is most like), and the lines on stderr that say which rows are not grades.

use std::path::Path;

use anyhow::Result;

use crate::csv::{field, record};
use crate::ids;
use crate::lab::{Graded, Lab, State};
use crate::listing::Listing;
use crate::stop::{say, Final, MACHINE, NOT_GRADED};
use crate::submissions::Submission;
use crate::weights::Weights;

/// What every row of a run shares.
#[derive(Debug, Clone)]
pub struct Rows {
    pub listing: Listing,
    pub weights: Weights,
    /// `--ids`: each submission's id.
    pub ids: Option<Vec<Option<String>>>,
    pub dry: bool,
    /// The most a row with a failed rule scores (`--rule-cap`, 50 by default).
    pub cap: f64,
}

impl Rows {
    /// What the rows of `lab`'s run on `submissions` share: its listing, the weights (`weights`, a
    /// --weights file, else every column alike), the ids (`ids`, an --ids file, matched to the
    /// submissions of `folder`) and the rule cap.
    pub fn new(
        lab: &Lab,
        submissions: &[Submission],
        (weights, ids): (Option<&Path>, Option<&Path>),
        folder: &str,
        cap: f64,
    ) -> Result<Rows> {
        let names = lab.listing.verdict_names();
        let weights = match weights {
            Some(file) => Weights::read(file, names, lab.week.name)?,
            None => Weights::even(names.len()),
        };
        let ids = ids.map(|file| ids::read(file, submissions, folder)).transpose()?;
        Ok(Rows {
            listing: lab.listing.clone(),
            weights,
            ids,
            dry: lab.dry,
            cap,
        })
    }

    /// The CSV: its header and a row per submission, in the submissions' order; `alike` is the column
    /// "most like" (`--feedback`).
    pub fn csv(&self, submissions: &[Submission], graded: &[Graded], alike: Option<&[String]>) -> String {
        let mut text = self.listing.csv_header(self.ids.is_some(), alike.is_some());
        text.push('\n');
        for (index, row) in graded.iter().enumerate() {
            text.push_str(&row.line);
            text.push(',');
            text.push_str(&self.score(row));
            if let Some(ids) = &self.ids {
                text.push(',');
                text.push_str(&field(ids.get(index).cloned().flatten().as_deref().unwrap_or("")));
            }
            if let Some(alike) = alike {
                text.push(',');
                text.push_str(&field(alike.get(index).map_or("", String::as_str)));
            }
            text.push('\n');
        }
        debug_assert_eq!(graded.len(), submissions.len());
        text
    }

    /// A row's score: empty where it is no grade (the machine's, another case set, a dry run).
    fn score(&self, row: &Graded) -> String {
        if self.dry || !row.state.scored() {
            return String::new();
        }
        let cases = self.listing.cases;
        match record(&row.line) {
            Some(fields) if fields.len() >= cases + 2 => {
                self.weights
                    .score(self.listing.verdict_names(), &fields[2..2 + cases], self.cap)
            }
            _ => String::new(),
        }
    }

    /// The lines on stderr for the rows that are not grades, one per kind, and the exit code they give.
    pub fn report(&self, submissions: &[Submission], graded: &[Graded], code: &mut Final) {
        let total = submissions.len();
        let named = |states: &[State]| -> Vec<String> {
            (submissions.iter().zip(graded))
                .filter(|(_, row)| states.contains(&row.state))
                .map(|(submission, _)| submission.shown())
                .collect()
        };
        let changed = named(&[State::Changed]);
        if !changed.is_empty() {
            say(&format!(
                "the case set changed during grading (expected {}) for {} of {total} students, not graded: {}",
                self.listing.hash,
                changed.len(),
                changed.join(", ")
            ));
            code.worse(NOT_GRADED);
        }
        let refused = named(&[State::Refused]);
        if !refused.is_empty() {
            say(&format!(
                "the lab refused its arguments (exit code 2) for {} of {total} submissions, not graded: {}; their notes quote it (build the labs and grade.sh from one commit)",
                refused.len(),
                refused.join(", ")
            ));
            code.worse(NOT_GRADED);
        }
        let lost = named(&[State::Lost]);
        if !lost.is_empty() {
            say(&format!(
                "the lab gave no row for {} of {total} submissions, not graded (never 0): {}; their notes say what the lab did: grade them again",
                lost.len(),
                lost.join(", ")
            ));
            code.worse(NOT_GRADED);
        }
        let machine = named(&[State::Machine, State::NoGpu]);
        if !machine.is_empty() {
            let who = if machine.len() == total {
                "every submission".to_string()
            } else {
                format!("{} of {total} submissions: {}", machine.len(), machine.join(", "))
            };
            say(&format!("the machine (not the students) failed, no grades for {who}; their notes begin 'machine: ' and say why: grade them again where the GPU works"));
            code.worse(MACHINE);
        }
        if self.dry {
            let passed = graded.iter().filter(|row| row.state == State::DryPass).count();
            say(&format!(
                "dry run: {passed} of {total} submissions compile and pass the static rules (no case ran; no scores)"
            ));
        }
    }
}

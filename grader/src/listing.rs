//! What a lab says it checks (`--list-cases --csv`, `--list-cases`): its CSV header, the cases and
//! rules, and the case set's hash; and the rows of the grader's CSV that follow from it, each as long
//! as its header.

use anyhow::Result;

use crate::csv::{field, record, value};
use crate::stop::{stop, NOT_GRADED};

/// The lab's columns, as its `--list-cases --csv` names them.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The header line as the lab prints it: a row is the lab's only with exactly this header.
    pub header: String,
    /// Its columns, `file` first.
    pub names: Vec<String>,
    /// How many cases and rules (the verdict columns, after `file`).
    pub cases: usize,
    /// The case set's hash.
    pub hash: String,
    /// The index of the lab's own `note`, if it has one.
    pub note_at: Option<usize>,
}

impl Listing {
    /// The case count and the case set's hash from the first line of the lab's `--list-cases`
    /// (`N cases (case set HASH):`, or the like: its first and fifth words).
    pub fn count(first_line: &str) -> Result<(usize, String)> {
        let cleaned = first_line.replace(['(', ')', ':'], "");
        let words: Vec<&str> = cleaned.split_whitespace().collect();
        let cases = words.first().and_then(|word| word.parse::<usize>().ok());
        match (cases, words.get(4).filter(|hash| is_hash(hash))) {
            (Some(cases), Some(hash)) => Ok((cases, hash.to_string())),
            _ => Err(stop(NOT_GRADED, format!("the lab listed no cases: {first_line}"))),
        }
    }

    /// The listing from the lab's CSV header, its case count and the case set's hash.
    pub fn new(header: &str, cases: usize, hash: &str) -> Result<Listing> {
        let names =
            record(header).ok_or_else(|| stop(NOT_GRADED, format!("the lab's CSV header is not CSV: {header}")))?;
        if names.first().map(String::as_str) != Some("file") || names.len() <= cases + 1 {
            return Err(stop(
                NOT_GRADED,
                format!("the lab's CSV header does not begin with file and its {cases} cases: {header}"),
            ));
        }
        if !names.iter().any(|name| name == "case set") {
            return Err(stop(
                NOT_GRADED,
                format!("the lab's CSV header has no case set column: {header}"),
            ));
        }
        let note_at = names.iter().rposition(|name| name == "note");
        Ok(Listing {
            header: header.to_string(),
            names,
            cases,
            hash: hash.to_string(),
            note_at,
        })
    }

    /// The cases' and rules' names, in the order of their columns.
    pub fn verdict_names(&self) -> &[String] {
        &self.names[1..=self.cases]
    }

    /// The lab's columns as the grader's CSV has them, after `student`: the lab's note, if any, is
    /// left out (the grader's note takes it in); the lab's own quoting kept where it can be.
    pub fn out_header(&self) -> String {
        let Some(note_at) = self.note_at else {
            return self.header.clone();
        };
        if note_at == self.names.len() - 1 {
            if let Some(cut) = self
                .header
                .strip_suffix(",note")
                .or(self.header.strip_suffix(",\"note\""))
            {
                return cut.to_string();
            }
        }
        let shown: Vec<String> = (self.names.iter().enumerate())
            .filter(|(at, _)| *at != note_at)
            .map(|(_, name)| {
                if name.bytes().all(|b| b.is_ascii_alphabetic() || b == b' ') {
                    name.clone()
                } else {
                    field(name)
                }
            })
            .collect();
        shown.join(",")
    }

    /// The CSV's header line: the student, the lab's columns, the note and score, and the optional
    /// columns.
    pub fn csv_header(&self, ids: bool, alike: bool) -> String {
        let mut line = format!("student,{},note,score", self.out_header());
        if ids {
            line.push_str(",student id");
        }
        if alike {
            line.push_str(",most like");
        }
        line
    }

    /// The lab's fields of a row without results: a dash per case and rule, nothing passed, the case
    /// set (`hash`, else the listing's), the other columns empty; the lab's note left out.
    pub fn without_results(&self, hash: Option<&str>) -> Vec<String> {
        (1..self.names.len())
            .filter(|at| Some(*at) != self.note_at)
            .map(|at| match self.names[at].as_str() {
                _ if at <= self.cases => "-".to_string(),
                "passed" => format!("0 of {}", self.cases),
                "case set" => hash.unwrap_or(&self.hash).to_string(),
                _ => String::new(),
            })
            .collect()
    }
}

/// The lab's `passed` value (`9/18`) as the CSV shows it: `9 of 18`, which no spreadsheet takes for a
/// date. Anything else stays as it is.
pub fn passed_shown(value: &str) -> String {
    match value.split_once('/') {
        Some((passed, of))
            if [passed, of]
                .iter()
                .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit())) =>
        {
            format!("{passed} of {of}")
        }
        _ => value.to_string(),
    }
}

/// Whether `text` is a case set's hash (letters and digits).
pub fn is_hash(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A row of the grader's CSV without score and id: the student, the file, the lab's fields and the
/// note (paths in it made relative to the submissions folder `folder`, never the grading machine's).
pub fn row(student: &str, file: &str, values: &[String], note: &str, folder: &str) -> String {
    let note = note.replace(&format!("{folder}/"), "");
    let mut line = format!("{},{}", field(student), field(file));
    for each in values {
        line.push(',');
        line.push_str(&value(each));
    }
    line.push(',');
    line.push_str(&field(&note));
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "file,\"tiles: two tiles\",\"mmm f64, 1 x 1\",passed,time ratio,flags,note,case set";

    #[test]
    fn a_labs_header_in_parts() {
        assert_eq!(
            Listing::count("2 cases (case set: 00ff):").unwrap(),
            (2, "00ff".to_string())
        );
        let listing = Listing::new(HEADER, 2, "00ff").unwrap();
        assert_eq!(listing.verdict_names(), ["tiles: two tiles", "mmm f64, 1 x 1"]);
        assert_eq!(listing.hash, "00ff");
        assert_eq!(
            listing.out_header(),
            "file,\"tiles: two tiles\",\"mmm f64, 1 x 1\",passed,time ratio,flags,case set"
        );
        assert_eq!(listing.without_results(None), ["-", "-", "0 of 2", "", "", "00ff"]);
        assert_eq!(passed_shown("9/18"), "9 of 18");
        assert_eq!(passed_shown("x/1"), "x/1");
        assert_eq!(
            row(
                "=a",
                "/s/a.cu",
                &listing.without_results(Some("11")),
                "in /s/a.cu",
                "/s"
            ),
            "\"'=a\",\"/s/a.cu\",-,-,\"0 of 2\",,,11,\"in a.cu\""
        );
    }

    #[test]
    fn a_header_that_is_not_the_labs_is_refused() {
        assert!(Listing::new("student,a,b", 2, "00ff").is_err());
        assert!(Listing::count("no cases").is_err());
        assert!(Listing::new("file,a,b,passed", 2, "00ff").is_err());
    }
}

//! grade.sh's CSV, read back (through the grader's CSV module): a header and one row per submission.

use anyhow::{bail, Result};

/// The CSV: its header and rows, each row as long as the header.
#[derive(Debug, Clone, PartialEq)]
pub struct Grades {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Grades {
    /// Reads grade.sh's CSV; a row of another length than the header is an error naming its line.
    pub fn parse(text: &str) -> Result<Grades> {
        let mut records = grader::csv::records(text)?.into_iter();
        let Some(header) = records.next() else {
            bail!("the grades CSV is empty")
        };
        let rows: Vec<Vec<String>> = records.collect();
        if let Some(at) = rows.iter().position(|row| row.len() != header.len()) {
            bail!(
                "row {} of the grades CSV has {} fields, its header {}",
                at + 2,
                rows[at].len(),
                header.len()
            );
        }
        Ok(Grades { header, rows })
    }

    /// The index of the column named `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|field| field == name)
    }

    /// The cases' and rules' columns: those between `file` and `passed`.
    pub fn checks(&self) -> std::ops::Range<usize> {
        let first = self.column("file").map_or(0, |file| file + 1);
        first..self.column("passed").unwrap_or(first).max(first)
    }

    /// Row `row`'s field in the column named `name`; empty where there is none.
    pub fn field(&self, row: usize, name: &str) -> &str {
        self.column(name)
            .and_then(|column| self.rows.get(row)?.get(column))
            .map_or("", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_keep_commas_quotes_and_line_breaks() {
        let text = "student,file,\"mmm f64, 1 x 1\",passed,note\n\"Doe, \"\"J\"\"\",\"a\nb.cu\",PASS,1/1,\"'=1+1\"\r\n";
        let grades = Grades::parse(text).unwrap();
        assert_eq!(grades.header[2], "mmm f64, 1 x 1");
        assert_eq!(grades.rows, [vec!["Doe, \"J\"", "a\nb.cu", "PASS", "1/1", "'=1+1"]]);
        assert_eq!(grades.checks(), 2..3);
        assert_eq!(grades.field(0, "note"), "'=1+1");
        assert_eq!(grades.field(0, "score"), "");
    }

    #[test]
    fn a_short_row_or_an_open_quote_is_an_error() {
        assert_eq!(
            Grades::parse("a,b\n1\n").unwrap_err().to_string(),
            "row 2 of the grades CSV has 1 fields, its header 2"
        );
        assert!(Grades::parse("a,b\n\"1,2\n").is_err());
        assert!(Grades::parse("").is_err());
    }
}

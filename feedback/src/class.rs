//! The class page (`index.html` beside the students' pages): each case's and rule's pass rate, the
//! time ratios as a plot, the submissions a teacher should open (did not compile, faulted, ran out of
//! time, suspiciously fast, too alike), what compute-sanitizer and the guard zones found, by kind,
//! and every student with a link to their page.

use std::collections::BTreeMap;

use anyhow::Result;
use grading::NoResult;

use crate::alike::Likeness;
use crate::document::{Block, Cell};
use crate::grades::Grades;
use crate::runs::Run;
use crate::student::file_names_only;

/// Everything the class page is made from.
pub struct Class<'a> {
    pub week: &'a str,
    pub grades: &'a Grades,
    pub runs: &'a [Run],
    pub likeness: &'a Likeness,
    /// Each submission's page, relative to the class page.
    pub pages: &'a [String],
}

impl Class<'_> {
    fn name(&self, row: usize) -> String {
        self.grades.field(row, "student").to_string()
    }

    fn link(&self, row: usize) -> Cell {
        Cell::Link {
            text: self.name(row),
            href: self.pages[row].clone(),
        }
    }

    /// The page's blocks.
    pub fn page(&self) -> Result<Vec<Block>> {
        let count = self.grades.rows.len();
        let mut blocks = vec![Block::Heading(1, format!("Week {}: {count} submissions", self.week))];
        blocks.push(Block::Paragraph(self.summary()));
        blocks.push(Block::Heading(2, "Each rule and case".into()));
        blocks.push(self.pass_rates());
        blocks.push(Block::Heading(2, "Time over ours".into()));
        let ratios: Vec<f64> = (0..count)
            .filter_map(|row| self.grades.field(row, "time ratio").parse().ok())
            .collect();
        let says = format!(
            "{} submissions with a time ratio: their time over ours, the geometric mean over the cases they passed",
            ratios.len()
        );
        blocks.push(Block::Svg {
            svg: crate::plot::time_ratios(&ratios)?,
            says,
        });
        blocks.push(Block::Heading(2, "To look at".into()));
        blocks.extend(self.to_look_at());
        blocks.push(Block::Heading(
            2,
            "What compute-sanitizer and the guard zones found".into(),
        ));
        blocks.push(self.findings());
        blocks.push(Block::Heading(2, "Students".into()));
        blocks.push(self.students());
        Ok(blocks)
    }

    /// One sentence of counts.
    fn summary(&self) -> String {
        let rows = 0..self.grades.rows.len();
        let all = rows
            .clone()
            .filter(|&row| {
                self.grades
                    .checks()
                    .all(|column| self.grades.rows[row][column] == "PASS")
            })
            .count();
        let uncompiled = rows
            .clone()
            .filter(|&row| self.grades.field(row, "note").starts_with("compile error"))
            .count();
        let faulted = rows
            .clone()
            .filter(|&row| {
                self.grades
                    .checks()
                    .any(|column| self.grades.rows[row][column] == "FAULT")
            })
            .count();
        let machine = rows
            .filter(|&row| self.grades.field(row, "note").starts_with("machine: "))
            .count();
        format!("{all} passed every check, {uncompiled} did not compile, {faulted} faulted in some check, and the machine could not grade {machine}.")
    }

    /// Each column of the CSV: how many passed, failed, faulted.
    fn pass_rates(&self) -> Block {
        let count = self.grades.rows.len().max(1);
        let rows = self
            .grades
            .checks()
            .map(|column| {
                let with = |verdict: &str| self.grades.rows.iter().filter(|row| row[column] == verdict).count();
                let passed = with("PASS");
                let percent = 100.0 * passed as f64 / count as f64;
                let name = Cell::Text(self.grades.header[column].clone());
                vec![
                    name,
                    Cell::Bar {
                        percent,
                        text: format!("{passed} ({percent:.0}%)"),
                    },
                    Cell::Text(with("FAIL").to_string()),
                    Cell::Text(with("FAULT").to_string()),
                    Cell::Text(with("MACHINE").to_string()),
                ]
            })
            .collect();
        Block::Table {
            header: ["check", "passed", "failed", "faulted", "machine"]
                .map(String::from)
                .to_vec(),
            rows,
        }
    }

    /// The lists of submissions to open.
    fn to_look_at(&self) -> Vec<Block> {
        let mut blocks = Vec::new();
        let mut list = |title: &str, items: Vec<Cell>| match items.is_empty() {
            true => blocks.push(Block::Paragraph(format!("{title}: none."))),
            false => blocks.extend([Block::Paragraph(format!("{title}:")), Block::List(items)]),
        };
        let rows: Vec<usize> = (0..self.grades.rows.len()).collect();
        let noted = |prefix: &str| -> Vec<Cell> {
            rows.iter()
                .filter(|&&row| self.grades.field(row, "note").starts_with(prefix))
                .map(|&row| self.with_text(row, &file_names_only(self.grades.field(row, "note"))))
                .collect()
        };
        list("Did not compile", noted("compile error"));
        let faults: Vec<(usize, Vec<String>)> = rows
            .iter()
            .map(|&row| (row, self.fault_reasons(row)))
            .filter(|(_, why)| !why.is_empty())
            .collect();
        let (timed_out, faulted): (Vec<_>, Vec<_>) = faults
            .iter()
            .partition(|(_, why)| why.iter().all(|why| ran_out_of_time(why)));
        list(
            "Faulted",
            faulted
                .iter()
                .map(|(row, why)| self.with_text(*row, &why.join("; ")))
                .collect(),
        );
        list(
            "Ran out of time",
            timed_out
                .iter()
                .map(|(row, why)| self.with_text(*row, &why.join("; ")))
                .collect(),
        );
        list(
            "Suspiciously fast (a teacher should look at how)",
            rows.iter()
                .filter(|&&row| !self.grades.field(row, "flags").is_empty())
                .map(|&row| self.with_text(row, self.grades.field(row, "flags")))
                .collect(),
        );
        let groups = self
            .likeness
            .clusters()
            .iter()
            .map(|group| {
                let names: Vec<String> = group.iter().map(|&row| self.name(row)).collect();
                let (pairs, lowest, highest) = self.likeness.within_group(group);
                let range = if pairs == 1 {
                    format!("{:.0}% alike", 100.0 * highest)
                } else {
                    format!(
                        "{pairs} pairs from {:.0}% to {:.0}% alike",
                        100.0 * lowest,
                        100.0 * highest
                    )
                };
                Cell::Text(format!("{} submissions: {} ({range})", group.len(), names.join("; ")))
            })
            .collect();
        list("Groups of submissions too alike (template code not counted)", groups);
        let sides = self
            .likeness
            .sides
            .iter()
            .map(|&(a, b, ..)| Cell::Link {
                text: format!("{} beside {}", self.name(a), self.name(b)),
                href: side_page(a, b),
            })
            .collect();
        list("Side by side (each of them beside the one most like it)", sides);
        let ours = self.file_matches(&self.likeness.ours, "our", "of our files");
        list("Too like our own files (solution, broken kernels)", ours);
        let earlier = self.file_matches(&self.likeness.earlier, "the earlier", "of the earlier files");
        list("Too like an earlier year's submission (--earlier)", earlier);
        blocks
    }

    /// One line a student for `matches` (sorted most alike first): the most alike file, named after
    /// `whose`, and how many `more` files besides.
    fn file_matches(&self, matches: &[(usize, String, f64)], whose: &str, more_files: &str) -> Vec<Cell> {
        let mut firsts: Vec<(usize, &str, f64, usize)> = Vec::new();
        for (row, file, score) in matches {
            match firsts.iter_mut().find(|first| first.0 == *row) {
                Some(first) => first.3 += 1,
                None => firsts.push((*row, file, *score, 0)),
            }
        }
        firsts
            .iter()
            .map(|&(row, file, score, more)| {
                let more = match more {
                    0 => String::new(),
                    more => format!(" and {more} more {more_files}"),
                };
                self.with_text(row, &format!("{:.0}% like {whose} {file}{more}", 100.0 * score))
            })
            .collect()
    }

    /// A student's link with a text after it, as one list item.
    fn with_text(&self, row: usize, text: &str) -> Cell {
        Cell::Link {
            text: format!("{}: {text}", self.name(row)),
            href: self.pages[row].clone(),
        }
    }

    /// Why submission `row`'s faulted checks faulted, each reason once.
    fn fault_reasons(&self, row: usize) -> Vec<String> {
        let Some(details) = &self.runs[row].details else {
            return Vec::new();
        };
        let mut reasons: Vec<String> = details
            .rows
            .iter()
            .filter_map(|r| match &r.result {
                Err(NoResult::Fault(why)) => Some(shortened(why)),
                _ => None,
            })
            .collect();
        reasons.dedup();
        reasons
    }

    /// Findings (compute-sanitizer's, the guard zones', inputs changed), by kind: the text with its
    /// numbers taken out, and how many submissions and checks had it.
    fn findings(&self) -> Block {
        let mut kinds: BTreeMap<String, (Vec<usize>, usize)> = BTreeMap::new();
        for (row, run) in self.runs.iter().enumerate() {
            for finding in run
                .details
                .iter()
                .flat_map(|details| &details.rows)
                .filter_map(|r| r.result.as_ref().ok()?.finding.as_deref())
            {
                let (who, checks) = kinds.entry(kind_of(finding)).or_default();
                if !who.contains(&row) {
                    who.push(row);
                }
                *checks += 1;
            }
        }
        let rows = kinds.into_iter().map(|(kind, (who, checks))| {
            let names = who.iter().map(|&row| self.name(row)).collect::<Vec<_>>().join(", ");
            vec![
                Cell::Text(kind),
                Cell::Text(who.len().to_string()),
                Cell::Text(checks.to_string()),
                Cell::Text(names),
            ]
        });
        Block::Table {
            header: ["kind", "submissions", "checks", "who"].map(String::from).to_vec(),
            rows: rows.collect(),
        }
    }

    /// Every student with their page, result and note.
    fn students(&self) -> Block {
        let names: Vec<String> = (0..self.grades.rows.len()).map(|row| self.name(row)).collect();
        let rows = (0..self.grades.rows.len())
            .map(|row| {
                let field = |name: &str| Cell::Text(self.grades.field(row, name).to_string());
                vec![
                    self.link(row),
                    field("passed"),
                    field("score"),
                    field("time ratio"),
                    Cell::Text(file_names_only(self.grades.field(row, "note"))),
                    Cell::Text(self.likeness.most_like(row, &names)),
                ]
            })
            .collect();
        Block::Table {
            header: ["student", "passed", "score", "time ratio", "note", "most like"]
                .map(String::from)
                .to_vec(),
            rows,
        }
    }
}

/// Whether a fault says the check ran out of time (the --time-limit, a case's limits).
fn ran_out_of_time(why: &str) -> bool {
    why.contains("--time-limit") || why.starts_with("still running") || why.starts_with("printed nothing")
}

/// A fault's reason, cut to its first 160 characters.
fn shortened(why: &str) -> String {
    let mut short: String = why.chars().take(160).collect();
    if short.len() < why.len() {
        short.push_str(" ...");
    }
    short
}

/// A finding's kind: its first clause, numbers as N ("wrote N elements past the end of C").
fn kind_of(finding: &str) -> String {
    let clause = finding.split(['(', ';']).next().unwrap_or(finding).trim();
    let mut kind = String::new();
    for c in clause.chars() {
        match c.is_ascii_digit() {
            true if kind.ends_with('N') => {}
            true => kind.push('N'),
            false => kind.push(c),
        }
    }
    kind.chars().take(120).collect()
}

/// The page that shows submissions `a` and `b` (places in the CSV, from 0) side by side.
pub fn side_page(a: usize, b: usize) -> String {
    format!("alike-{:03}-{:03}.html", a + 1, b + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_of_one_kind_differ_only_in_numbers() {
        assert_eq!(
            kind_of("wrote 40 elements past the end of C (m*n): C[85] to C[124]"),
            "wrote N elements past the end of C"
        );
        assert_eq!(
            kind_of("memcheck: Invalid __global__ write of size 8 bytes; at mmm_f64+0x1d0"),
            "memcheck: Invalid __global__ write of size N bytes"
        );
        assert!(ran_out_of_time(
            "still running when the --time-limit of 60 s ran out; stopped"
        ));
        assert!(!ran_out_of_time("lab-mmm: error: CUDA_ERROR_LAUNCH_FAILED"));
    }
}

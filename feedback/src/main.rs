//! `feedback`: what assignments/grade.sh --feedback runs after grading (issue 44).
//!
//!     feedback alike --runs DIR/runs --count N --template STARTER.cu [--ours FILE.cu]... [--earlier DIR]...
//!     feedback pages --week WEEK --runs DIR/runs --grades GRADES.csv [--hide-cases] --out DIR
//!     feedback scores --template STARTER.cu FILE.cu FILE.cu...
//!
//! `alike` compares the graded files (DIR/runs/i.cu) and writes each submission's "most like"
//! (DIR/runs/i.alike, for the CSV's column) and DIR/runs/alike.json; `pages` writes a feedback page
//! per student (Markdown and HTML), the class page DIR/index.html, and a page for each submission
//! too alike beside the one most like it (DIR/alike-AAA-BBB.html, for the teacher). A teacher can
//! run `pages` again on the same runs (with --hide-cases, say) into another folder. `scores` prints
//! how alike every pair of files is, for a teacher who wants the numbers behind a flag.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use feedback::alike::Likeness;
use feedback::class::{side_page, Class};
use feedback::document::{html, markdown, Block, Source};
use feedback::grades::Grades;
use feedback::runs::{read_lossy, run_file, Run};
use feedback::similarity::{self, Fingerprints};
use feedback::student::{self, Cases};

#[derive(Parser, Debug)]
#[command(about = "Feedback pages and a class page from grade.sh's runs (assignments/grade.sh --feedback)")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Finds the submissions too alike: each other, our own files, or earlier years' (--earlier).
    Alike {
        /// grade.sh's runs folder (DIR/runs): i.cu (the file graded) and i.name for each submission i.
        #[arg(long)]
        runs: PathBuf,
        /// How many submissions there are.
        #[arg(long)]
        count: usize,
        /// The week's starter file: its code is the students' in common, so it is not counted.
        #[arg(long, value_name = "STARTER.cu")]
        template: PathBuf,
        /// Our own files a student could copy (the week's solution, its broken kernels).
        #[arg(long, value_name = "FILE.cu")]
        ours: Vec<PathBuf>,
        /// A folder of earlier years' submissions of the week: every .cu file in it or its
        /// subfolders is compared with each submission, as our files are.
        #[arg(long, value_name = "DIR")]
        earlier: Vec<PathBuf>,
    },
    /// Prints how alike every pair of FILES is, the starter's code taken out: what `alike` flags
    /// from, for a teacher who wants the numbers (or to try the similarity on files of their own).
    Scores {
        /// The week's starter file: its code is the students' in common, so it is not counted.
        #[arg(long, value_name = "STARTER.cu")]
        template: PathBuf,
        /// The sources to compare, two or more.
        #[arg(required = true, num_args = 2.., value_name = "FILE.cu")]
        files: Vec<PathBuf>,
    },
    /// Writes the feedback pages and the class page.
    Pages {
        /// The week, for the titles (03-mmm-tiled).
        #[arg(long)]
        week: String,
        /// grade.sh's runs folder (DIR/runs): i.json, i.out and alike.json.
        #[arg(long)]
        runs: PathBuf,
        /// grade.sh's CSV, a row per submission in the order of the runs.
        #[arg(long, value_name = "GRADES.csv")]
        grades: PathBuf,
        /// Show only the verdicts of the cases, nothing of their sizes, values or output.
        #[arg(long)]
        hide_cases: bool,
        /// Where the pages go; no file there is overwritten.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

fn main() -> std::process::ExitCode {
    common::cli::run_lab(|args: Args| match args.command {
        Command::Alike {
            runs,
            count,
            template,
            ours,
            earlier,
        } => alike(&runs, count, &template, &ours, &earlier),
        Command::Scores { template, files } => scores(&template, &files),
        Command::Pages {
            week,
            runs,
            grades,
            hide_cases,
            out,
        } => pages(
            &week,
            &runs,
            &grades,
            if hide_cases { Cases::Hidden } else { Cases::Shown },
            &out,
        ),
    })
}

fn alike(runs: &Path, count: usize, template: &Path, ours: &[PathBuf], earlier: &[PathBuf]) -> Result<()> {
    let template = read_lossy(template).with_context(|| format!("reading the template {}", template.display()))?;
    let read_all = |paths: &[PathBuf]| -> Result<Vec<(String, String)>> {
        paths
            .iter()
            .map(|path| {
                Ok((
                    path.display().to_string(),
                    read_lossy(path).with_context(|| format!("reading {}", path.display()))?,
                ))
            })
            .collect()
    };
    let ours = read_all(ours)?;
    let mut earlier_files = Vec::new();
    for dir in earlier {
        sources_in(dir, &mut earlier_files).with_context(|| format!("reading the folder {}", dir.display()))?;
    }
    // A file reached through two folders given (one inside the other, or spelt two ways) once.
    let mut keyed: Vec<(PathBuf, PathBuf)> = earlier_files
        .into_iter()
        .map(|path| (path.canonicalize().unwrap_or_else(|_| path.clone()), path))
        .collect();
    keyed.sort();
    keyed.dedup_by(|a, b| a.0 == b.0);
    let earlier_files: Vec<PathBuf> = keyed.into_iter().map(|(_, path)| path).collect();
    let earlier = read_all(&earlier_files)?;
    let sources: Vec<Option<String>> = (0..count)
        .map(|index| read_lossy(&run_file(runs, index, "cu")).ok())
        .collect();
    let names: Vec<String> = (0..count)
        .map(|index| read_lossy(&run_file(runs, index, "name")).unwrap_or_default())
        .collect();
    let likeness = Likeness::find(&sources, &template, &ours, &earlier);
    for index in 0..count {
        write_new(&run_file(runs, index, "alike"), &likeness.most_like(index, &names))?;
    }
    write_new(&runs.join("alike.json"), &likeness.to_json().to_string())
}

/// Every `.cu` file in `dir` and its subfolders (not through links), into `found`.
fn sources_in(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() {
            sources_in(&path, found)?;
        } else if kind.is_file() && path.extension().is_some_and(|ext| ext == "cu") {
            found.push(path);
        }
    }
    Ok(())
}

/// `scores`: a line per pair, `A ~ B: 0.987, 74 of 75 fingerprints`, flagged ones marked.
fn scores(template: &Path, files: &[PathBuf]) -> Result<()> {
    let template = read_lossy(template).with_context(|| format!("reading the template {}", template.display()))?;
    let template = Fingerprints::of(&template);
    let prints: Vec<Fingerprints> = files
        .iter()
        .map(|path| {
            let source = read_lossy(path).with_context(|| format!("reading {}", path.display()))?;
            Ok(Fingerprints::of(&source).without(&template))
        })
        .collect::<Result<_>>()?;
    for (a, first) in prints.iter().enumerate() {
        for (b, second) in prints.iter().enumerate().skip(a + 1) {
            println!(
                "{} ~ {}: {:.3}, {} of {} fingerprints{}",
                files[a].display(),
                files[b].display(),
                similarity::similarity(first, second),
                similarity::shared(first, second),
                first.len().min(second.len()),
                if similarity::too_alike(first, second).is_some() {
                    ", too alike"
                } else {
                    ""
                }
            );
        }
    }
    Ok(())
}

fn pages(week: &str, runs_dir: &Path, grades: &Path, cases: Cases, out: &Path) -> Result<()> {
    let text = std::fs::read_to_string(grades).with_context(|| format!("reading {}", grades.display()))?;
    let grades = Grades::parse(&text).with_context(|| format!("reading {}", grades.display()))?;
    let likeness = match std::fs::read_to_string(runs_dir.join("alike.json")) {
        Ok(text) => Likeness::from_json(&text)?,
        Err(_) => Likeness::default(),
    };
    let runs: Vec<Run> = (0..grades.rows.len()).map(|index| Run::read(runs_dir, index)).collect();
    let likeness = likeness.within(grades.rows.len());
    std::fs::create_dir_all(out).with_context(|| format!("making {}", out.display()))?;
    let names: Vec<String> = (0..grades.rows.len())
        .map(|row| page_name(row, grades.field(row, "student")))
        .collect();
    let case_names = runs.iter().find_map(|run| Some(run.details.as_ref()?.cases.as_slice()));
    for (row, run) in runs.iter().enumerate() {
        let blocks = student::page(week, &grades, row, run, cases, case_names);
        let title = format!("Feedback for {}: week {week}", grades.field(row, "student"));
        write_new(&out.join(format!("{}.md", names[row])), &markdown(&blocks))?;
        write_new(&out.join(format!("{}.html", names[row])), &html(&title, &blocks))?;
    }
    side_pages(runs_dir, &grades, &likeness, out)?;
    let pages: Vec<String> = names.iter().map(|name| format!("{name}.html")).collect();
    let class = Class {
        week,
        grades: &grades,
        runs: &runs,
        likeness: &likeness,
        pages: &pages,
    };
    write_new(&out.join("index.html"), &html(&format!("Week {week}"), &class.page()?))?;
    println!(
        "feedback: {} pages and {}",
        runs.len(),
        out.join("index.html").display()
    );
    Ok(())
}

/// What a side-by-side page's marks mean.
const SIDE_BY_SIDE: &str = "Marked: the lines in runs of tokens both files share once names, literals and the order \
of independent statements are set aside, and the starter's code is taken out. A flag is for a teacher to read, \
not a verdict.";

/// A page (HTML and Markdown) for each pair of `likeness.sides`: both graded files side by side,
/// the lines that match marked.
fn side_pages(runs_dir: &Path, grades: &Grades, likeness: &Likeness, out: &Path) -> Result<()> {
    for &(a, b, ref left, ref right) in &likeness.sides {
        let student = |row: usize| grades.field(row, "student").to_string();
        let source = |row: usize, marked: &[usize]| -> Result<Source> {
            let path = run_file(runs_dir, row, "cu");
            Ok(Source {
                title: student(row),
                text: read_lossy(&path).with_context(|| format!("reading {}", path.display()))?,
                marked: marked.iter().copied().collect(),
            })
        };
        let score = likeness
            .pairs
            .iter()
            .find(|pair| (pair.0, pair.1) == (a, b))
            .map_or(0.0, |pair| pair.2);
        let title = format!("{} and {}: {:.0}% alike", student(a), student(b), 100.0 * score);
        let blocks = [
            Block::Heading(1, title.clone()),
            Block::Paragraph(SIDE_BY_SIDE.into()),
            Block::SideBySide([source(a, left)?, source(b, right)?]),
        ];
        let page = side_page(a, b);
        write_new(&out.join(&page), &html(&title, &blocks))?;
        write_new(&out.join(page.replace(".html", ".md")), &markdown(&blocks))?;
    }
    Ok(())
}

/// A page's file name: its place in the CSV and the student's name with only letters, digits, `.`,
/// `-` and `_` (the rest `_`), so that every link works from disk whatever the name holds.
fn page_name(row: usize, student: &str) -> String {
    let safe: String = student
        .chars()
        .take(60)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{:03}-{}", row + 1, safe.trim_start_matches('.'))
}

/// Writes `text` into `path`, which must not exist yet.
fn write_new(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot make {} (it must not exist yet)", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_are_safe_and_unique() {
        assert_eq!(page_name(0, "Doe, Jane"), "001-Doe__Jane");
        assert_eq!(page_name(11, "../../etc/passwd"), "012-_.._etc_passwd");
        assert_eq!(page_name(2, "été\\x0a"), "003-_t__x0a");
    }
}

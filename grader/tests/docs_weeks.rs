//! The docs' hand-written lists of weeks against the one list, `grader::weeks::WEEKS`: a week added
//! there and not to a list, or a list naming a week that does not exist, fails here (the issue's "the
//! week list exists once": the docs may repeat it, but only as it is).
//!
//! The lists checked, all in assignments/README.md: the table of weeks at its top, the program weeks
//! `grade.sh` grades, the "Weeks:" line that says what `grade.sh` takes, and the table of what a Slurm
//! task asks for. Left out on purpose: the table of how long `--check` took before issue 39 (a saved
//! run of the kernel weeks of then, not a list kept up to date). Any other week named anywhere in the
//! docs (README.md, assignments/*.md, the weeks' READMEs) must exist.

use std::fs;
use std::path::{Path, PathBuf};

use grader::slurm::default_needs;
use grader::weeks::{names_of, Week, WEEKS};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn read(relative: &str) -> String {
    fs::read_to_string(repository().join(relative)).unwrap_or_else(|err| panic!("{relative}: {err}"))
}

/// The cells of each row of the Markdown table whose header line starts with `header`.
fn table(text: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines().skip_while(|line| !line.starts_with(header));
    assert!(lines.next().is_some(), "no table headed {header:?}");
    lines
        .skip(1) // |---|---|
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_string())
                .collect()
        })
        .collect()
}

/// What `text` holds in backquotes, in order.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The table of weeks, the teacher's first look at the course: a row per week folder, in the course's
/// order, linking the folder's README; the lab column starts with the folder's lab, and every week's
/// flags of the folder (`--kernel naive`, `--program mmm-streamed`) are in its row.
#[test]
fn the_table_of_weeks_has_a_row_per_folder_in_order_with_its_lab_and_flags() {
    let rows = table(&read("assignments/README.md"), "| week | lab |");
    let mut folders: Vec<&str> = Vec::new();
    for week in &WEEKS {
        if !folders.contains(&week.folder) {
            folders.push(week.folder);
        }
    }
    let linked: Vec<&str> = rows.iter().map(|row| row[0].as_str()).collect();
    let wanted: Vec<String> = folders
        .iter()
        .map(|folder| format!("[{folder}]({folder}/README.md)"))
        .collect();
    assert_eq!(linked, wanted, "the rows of assignments/README.md's table of weeks");
    for (row, folder) in rows.iter().zip(&folders) {
        for week in WEEKS.iter().filter(|week| week.folder == *folder) {
            assert_eq!(row[1].split_whitespace().next(), Some(week.lab), "{}'s lab", week.name);
            let flags = format!("`{}`", week.args.join(" "));
            assert!(
                week.args.is_empty() || row.join("|").contains(&flags),
                "{}'s {flags} is not in its row",
                week.name
            );
        }
    }
}

/// The "Weeks:" line under "Grading a folder of submissions": the kernel weeks, then after "; " the
/// program weeks, as `grade.sh --help` lists them.
#[test]
fn the_weeks_line_names_every_week_grade_sh_takes() {
    let text = read("assignments/README.md");
    let start = text
        .find("Weeks: `01-simpson`")
        .expect("assignments/README.md has a line \"Weeks: `01-simpson`, ...\"");
    let paragraph = text[start..].split("\n\n").next().unwrap();
    let (kernel, program) = paragraph.split_once("; ").expect("kernel weeks; program weeks");
    assert_eq!(quoted(kernel), names_of(false), "the kernel weeks of {paragraph:?}");
    assert_eq!(quoted(program), names_of(true), "the program weeks of {paragraph:?}");
}

/// The program weeks' section: "`grade.sh 05-streams` / `05-mmm-streamed` / ... grade a class".
#[test]
fn the_program_weeks_section_names_every_program_week() {
    let text = read("assignments/README.md").replace('\n', " ");
    let start = text
        .find("`grade.sh 0")
        .expect("assignments/README.md names `grade.sh 05-streams`");
    let end = start + text[start..].find(" grade a class").expect("... grade a class");
    let listed: Vec<&str> = quoted(&text[start..end])
        .iter()
        .map(|each| each.trim_start_matches("grade.sh "))
        .collect();
    assert_eq!(listed, names_of(true));
}

/// The table of what a Slurm task asks for: every week in one row, and that row's CPUs and memory the
/// grader's (`slurm::default_needs`), with `--sanitize` too where a week takes it.
#[test]
fn the_slurm_table_gives_every_week_its_cpus_and_memory() {
    let rows = table(&read("assignments/README.md"), "| week | CPUs, memory |");
    let mut listed: Vec<&str> = Vec::new();
    for row in &rows {
        for name in row[0].split(", ") {
            let week: &Week = WEEKS
                .iter()
                .find(|week| week.name == name)
                .unwrap_or_else(|| panic!("the Slurm table names {name:?}, which is no week"));
            let needs = |sanitize| {
                let (cpus, memory) = default_needs(week, sanitize);
                format!("{cpus}, {memory}")
            };
            assert_eq!(row[1], needs(false), "{name}");
            let sanitized = if week.is_program() {
                "no `--sanitize`".to_string()
            } else {
                needs(true)
            };
            assert_eq!(row[2], sanitized, "{name} with --sanitize");
            listed.push(week.name);
        }
    }
    listed.sort_unstable();
    let mut every: Vec<&str> = WEEKS.iter().map(|week| week.name).collect();
    every.sort_unstable();
    assert_eq!(listed, every, "each week once in the Slurm table");
}

/// Anything that reads as a week (`0N-name`, as in `--weeks 01-simpson,02-mmm-ab` or
/// `05-streams/broken/`) in the docs is a week or a week's folder.
#[test]
fn every_week_the_docs_name_exists() {
    let mut docs = vec![PathBuf::from("README.md")];
    for entry in fs::read_dir(repository().join("assignments")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "md") {
            docs.push(path);
        } else if path.join("README.md").is_file() {
            docs.push(path.join("README.md"));
        }
    }
    for doc in &docs {
        let text = fs::read_to_string(repository().join(doc)).unwrap();
        for name in week_like(&text) {
            assert!(
                WEEKS.iter().any(|week| week.name == name || week.folder == name),
                "{} names {name}, which is no week",
                doc.display()
            );
        }
    }
}

/// Every `0N-name` of `text` that starts a word or a path's part: a zero, a digit, a dash, then lower
/// case letters and dashes (not `check-05-pipeline.log`, a saved run's name).
fn week_like(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(3))
        .filter(|&at| {
            bytes[at] == b'0'
                && bytes[at + 1].is_ascii_digit()
                && bytes[at + 2] == b'-'
                && bytes[at + 3].is_ascii_lowercase()
                && (at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || b"._-".contains(&bytes[at - 1])))
        })
        .map(|at| {
            let rest = &text[at + 3..];
            let end = rest
                .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
                .unwrap_or(rest.len());
            text[at..at + 3 + end].trim_end_matches('-')
        })
        .collect()
}

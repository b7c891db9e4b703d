//! The submissions in a folder: `<student>.cu` files and `<student>/` folders, in byte order, and the
//! one file graded of each. What is neither (notes.txt, the CSV itself) is no submission; one student
//! handing in twice (`ann.cu` beside `ann/`) is refused rather than graded twice.

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::csv::escaped;
use crate::stop::{say, stop, USAGE};

/// One submission: a file or folder of the submissions folder.
#[derive(Debug, Clone)]
pub struct Submission {
    /// Its path: the submissions folder (as given, made absolute) and its name.
    pub entry: PathBuf,
}

/// The file of a submission to grade, or why there is none (the student's: the row scores 0).
#[derive(Debug, PartialEq)]
pub enum Found {
    /// The file, and a note where a folder's file is not the obvious one.
    File {
        path: PathBuf,
        note: Option<String>,
    },
    Nothing(String),
}

impl Submission {
    /// Its file or folder name, as bytes.
    pub fn name(&self) -> &[u8] {
        self.entry.file_name().map_or(b"", |name| name.as_bytes())
    }

    /// The student: the name without `.cu` (or `.CU`).
    pub fn student(&self) -> &[u8] {
        without_cu(self.name())
    }

    /// The student as CSV and stderr show it.
    pub fn shown(&self) -> String {
        escaped(self.student())
    }

    /// The file this submission hands in. A folder's is its only `.cu` file at any depth (hidden files
    /// and folders and macOS's `__MACOSX/` copies are not the student's), or in a program week the one
    /// named like the starter (`program_file`), where exactly one is. A link is nothing: it could point
    /// at any file of the machine that grades, ours too.
    pub fn file(&self, program_file: Option<&str>) -> Found {
        let entry = &self.entry;
        if is_link(entry) {
            return Found::Nothing(LINK.into());
        }
        if !entry.is_dir() {
            return if is_cu(self.name()) && entry.is_file() {
                Found::File {
                    path: entry.clone(),
                    note: None,
                }
            } else {
                Found::Nothing("no .cu file".into())
            };
        }
        let mut files = Vec::new();
        cu_files(entry, &mut files);
        files.sort_by(|a, b| a.as_os_str().as_bytes().cmp(b.as_os_str().as_bytes()));
        let inside = |path: &Path| crate::csv::shown(path.strip_prefix(entry).unwrap_or(path));
        if files.len() > 1 {
            if let Some(program) = program_file {
                let named: Vec<&PathBuf> = files
                    .iter()
                    .filter(|file| file.file_name().is_some_and(|name| name == program))
                    .collect();
                if let [only] = named[..] {
                    let note = format!("graded {}, the folder's {program}", inside(only));
                    return self.linked_or(only.clone(), Some(note));
                }
            }
            let names: Vec<String> = files.iter().map(|file| inside(file)).collect();
            let or_named = program_file
                .map(|name| format!(", or one named {name}"))
                .unwrap_or_default();
            return Found::Nothing(format!(
                "several .cu files: {} (hand in one{or_named})",
                names.join(", ")
            ));
        }
        let Some(file) = files.pop() else {
            return Found::Nothing("no .cu file".into());
        };
        let deeper = file.parent() != Some(entry.as_path());
        let note = deeper.then(|| format!("graded {}, the folder's only .cu file", inside(&file)));
        self.linked_or(file, note)
    }

    /// `file` where it is a file itself, else nothing.
    fn linked_or(&self, file: PathBuf, note: Option<String>) -> Found {
        if is_link(&file) {
            Found::Nothing(LINK.into())
        } else {
            Found::File { path: file, note }
        }
    }
}

const LINK: &str = "a link, not a file (hand in the .cu file itself)";

fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

/// Whether a name ends in `.cu`, in any case.
fn is_cu(name: &[u8]) -> bool {
    name.len() > 3 && name[name.len() - 3..].eq_ignore_ascii_case(b".cu")
}

fn without_cu(name: &[u8]) -> &[u8] {
    if is_cu(name) {
        &name[..name.len() - 3]
    } else {
        name
    }
}

/// Every `.cu` file under `folder` (links too, which are then refused), hidden names and `__MACOSX`
/// pruned, links to folders not followed.
fn cu_files(folder: &Path, files: &mut Vec<PathBuf>) {
    let Ok(read) = fs::read_dir(folder) else {
        return;
    };
    for item in read.flatten() {
        let name = item.file_name();
        if name.as_bytes().starts_with(b".") || name == "__MACOSX" {
            continue;
        }
        let path = item.path();
        match item.file_type() {
            Ok(kind) if kind.is_dir() => cu_files(&path, files),
            Ok(_) if is_cu(name.as_bytes()) => files.push(path),
            _ => {}
        }
    }
}

/// The submissions of `folder` in byte order. `written` is where this run writes its CSV, if in the
/// folder: the CSV, its `.bak` and its kept `--check` outputs are skipped, with a line each. Names that
/// are neither a `.cu` file nor a folder are listed once on stderr as skipped; no submissions at all,
/// or one student's two submissions, end the run (exit code 2).
pub fn list(folder: &Path, shown: &str, written: Option<&Path>) -> Result<Vec<Submission>> {
    let mut names: Vec<OsString> = fs::read_dir(folder)
        .map_err(|err| stop(USAGE, format!("cannot read {shown}: {err}")))?
        .flatten()
        .map(|item| item.file_name())
        .filter(|name| !name.as_bytes().starts_with(b"."))
        .collect();
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut submissions: Vec<Submission> = Vec::new();
    let mut skipped = Vec::new();
    for name in names {
        let entry = folder.join(&name);
        if written.is_some_and(|csv| is_output(&entry, csv)) {
            say(&format!(
                "{} is the CSV or its --check outputs, not a submission: skipped",
                crate::csv::shown(&entry)
            ));
            continue;
        }
        if !entry.is_dir() && !is_cu(name.as_bytes()) {
            skipped.push(escaped(name.as_bytes()));
            continue;
        }
        let submission = Submission { entry };
        if let Some(other) = submissions.iter().find(|other| other.student() == submission.student()) {
            return Err(stop(
                USAGE,
                format!(
                    "{shown}: {} and {} are one student's ({}): keep one of them, nothing graded",
                    escaped(other.name()),
                    escaped(submission.name()),
                    submission.shown()
                ),
            ));
        }
        submissions.push(submission);
    }
    if !skipped.is_empty() {
        say(&format!(
            "{shown}: {} not graded, neither a .cu file nor a folder: {}",
            skipped.len(),
            skipped.join(", ")
        ));
    }
    if submissions.is_empty() {
        return Err(stop(
            USAGE,
            format!("{shown} has no submissions (no <student>.cu files or <student>/ folders in it)"),
        ));
    }
    Ok(submissions)
}

/// Whether `entry` is what this run writes beside `csv` (a canonical path): the CSV itself, a file
/// named after it (`grades.csv.bak`), or a folder of kept outputs (`grades-checks`, `grades-checks-2`).
fn is_output(entry: &Path, csv: &Path) -> bool {
    let Ok(real) = entry.canonicalize() else {
        return false;
    };
    let (real, csv) = (real.as_os_str().as_bytes(), csv.as_os_str().as_bytes());
    let stem = if csv.len() > 4 && csv[csv.len() - 4..].eq_ignore_ascii_case(b".csv") {
        &csv[..csv.len() - 4]
    } else {
        csv
    };
    let checks = [stem, b"-checks"].concat();
    real == csv || real.starts_with(&[csv, b"."].concat()) || (entry.is_dir() && real.starts_with(&checks))
}

/// The code of a source file without its comments and white space: a starter handed in with only
/// its layout or comments changed is still the starter.
pub fn code_of(text: &[u8]) -> Vec<u8> {
    let mut code = Vec::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        if text[at..].starts_with(b"//") {
            at += text[at..].iter().position(|b| *b == b'\n').unwrap_or(text.len() - at);
        } else if text[at..].starts_with(b"/*") {
            at += text[at + 2..]
                .windows(2)
                .position(|pair| pair == b"*/")
                .map_or(text.len() - at, |end| end + 4);
        } else {
            if !text[at].is_ascii_whitespace() {
                code.push(text[at]);
            }
            at += 1;
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("grader-submissions-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn only_cu_files_and_folders_in_byte_order() {
        let dir = folder("order");
        for name in ["b.cu", "B.CU", "a", "notes.txt", ".hidden.cu"] {
            if name == "a" {
                fs::create_dir(dir.join(name)).unwrap();
            } else {
                fs::write(dir.join(name), "x").unwrap();
            }
        }
        let found = list(&dir, "subs", None).unwrap();
        let names: Vec<String> = found.iter().map(Submission::shown).collect();
        assert_eq!(names, ["B", "a", "b"]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_starter_with_other_comments_and_layout_is_the_starter() {
        let starter = b"// fill in\n__global__ void k(int *a) {\n    /* TODO */\n}\n";
        assert_eq!(code_of(starter), code_of(b"__global__ void k(int *a)\r\n{ } // mine"));
        assert_ne!(code_of(starter), code_of(b"__global__ void k(int *a) { a[0] = 1; }"));
    }

    #[test]
    fn one_student_twice_is_refused() {
        let dir = folder("twice");
        fs::create_dir(dir.join("ann lee")).unwrap();
        fs::write(dir.join("ann lee.cu"), "x").unwrap();
        let err = list(&dir, "subs", None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "subs: ann lee and ann lee.cu are one student's (ann lee): keep one of them, nothing graded"
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_folders_file() {
        let dir = folder("file");
        fs::create_dir_all(dir.join("eve/src")).unwrap();
        fs::create_dir_all(dir.join("eve/__MACOSX")).unwrap();
        fs::write(dir.join("eve/src/mmm.cu"), "x").unwrap();
        fs::write(dir.join("eve/__MACOSX/mmm.cu"), "x").unwrap();
        fs::write(dir.join("eve/src/.#mmm.cu"), "x").unwrap();
        let eve = Submission { entry: dir.join("eve") };
        assert_eq!(
            eve.file(None),
            Found::File {
                path: dir.join("eve/src/mmm.cu"),
                note: Some("graded src/mmm.cu, the folder's only .cu file".into())
            }
        );
        fs::write(dir.join("eve/pipeline.cu"), "x").unwrap();
        assert_eq!(
            eve.file(None),
            Found::Nothing("several .cu files: pipeline.cu, src/mmm.cu (hand in one)".into())
        );
        assert_eq!(
            eve.file(Some("pipeline.cu")),
            Found::File {
                path: dir.join("eve/pipeline.cu"),
                note: Some("graded pipeline.cu, the folder's pipeline.cu".into())
            }
        );
        fs::remove_dir_all(dir).unwrap();
    }
}

//! `--ids`: the column "student id", from lines `FILE_OR_FOLDER_NAME,STUDENT_ID` (a spreadsheet's
//! export: `"Doe, Jane.cu",s9` as CSV quotes it; the name without .cu, or written with `\xNN`, does
//! too).

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use crate::csv::{escaped, record};
use crate::stop::{say, stop, USAGE};
use crate::submissions::Submission;
use crate::weights::numbered_lines;

/// Each submission's id (by its index; `None` where the file gives none).
pub fn read(file: &Path, submissions: &[Submission], folder_shown: &str) -> Result<Vec<Option<String>>> {
    let shown = crate::csv::shown(file);
    let mut id_for: HashMap<String, (String, usize)> = HashMap::new();
    for (number, name, id) in entries(file, &format!("--ids {shown}"))? {
        if let Some((other, at)) = id_for.get(&name) {
            if *other != id {
                return Err(stop(
                    USAGE,
                    format!(
                        "--ids {shown}, line {number}: {} has the id {} already (line {at})",
                        escaped(name.as_bytes()),
                        escaped(other.as_bytes())
                    ),
                ));
            }
        }
        id_for.insert(name, (id, number));
    }
    match_ids(&id_for, submissions, &shown, folder_shown)
}

/// The lines `NAME,STUDENT_ID` of an ids file (its line number, the name, the id; blank lines and
/// `#` comments left out), each name and id trimmed and not empty; `what` names the file in the
/// one-line errors (`--ids FILE`). The course server reads its students through it too.
pub fn entries(file: &Path, what: &str) -> Result<Vec<(usize, String, String)>> {
    let bytes = std::fs::read(file).map_err(|err| stop(USAGE, format!("{what}: {err}")))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut found = Vec::new();
    for (number, line) in numbered_lines(&text) {
        let blank = line.trim();
        if blank.is_empty() || blank.starts_with('#') {
            continue;
        }
        let (name, id) = match record(line) {
            Some(fields) if fields.len() == 2 => (fields[0].clone(), fields[1].clone()),
            _ => match line.rsplit_once(',') {
                Some((name, id)) => (name.to_string(), id.to_string()),
                None => {
                    return Err(stop(
                        USAGE,
                        format!(
                            "{what}, line {number}: not FILE_OR_FOLDER_NAME,STUDENT_ID: {}",
                            escaped(line.as_bytes())
                        ),
                    ))
                }
            },
        };
        // Spaces around either are a spreadsheet's, not the name's.
        let (name, id) = (name.trim().to_string(), id.trim().to_string());
        if name.is_empty() || id.is_empty() {
            return Err(stop(
                USAGE,
                format!(
                    "{what}, line {number}: an empty name or id: {}",
                    escaped(line.as_bytes())
                ),
            ));
        }
        found.push((number, name, id));
    }
    Ok(found)
}

/// Each submission's id from `id_for` (name: id and its line), what is left unmatched said on stderr.
fn match_ids(
    id_for: &HashMap<String, (String, usize)>,
    submissions: &[Submission],
    shown: &str,
    folder_shown: &str,
) -> Result<Vec<Option<String>>> {
    let mut used = Vec::new();
    let mut without = Vec::new();
    let ids: Vec<Option<String>> = submissions
        .iter()
        .map(|submission| {
            let (base, student) = (submission.name(), submission.student());
            let candidates = [
                String::from_utf8_lossy(base).into_owned(),
                escaped(base),
                String::from_utf8_lossy(student).into_owned(),
                escaped(student),
            ];
            let found = candidates.into_iter().find(|name| id_for.contains_key(name));
            match found {
                Some(name) => {
                    let id = id_for[&name].0.clone();
                    used.push(name);
                    Some(id)
                }
                None => {
                    without.push(escaped(base));
                    None
                }
            }
        })
        .collect();
    if !without.is_empty() {
        say(&format!(
            "--ids {shown} has no id for {} of {} submissions (their student id is empty): {}",
            without.len(),
            submissions.len(),
            without.join(", ")
        ));
    }
    let mut unused: Vec<(usize, &String)> = (id_for.iter())
        .filter(|(name, _)| !used.contains(name))
        .map(|(name, (_, line))| (*line, name))
        .collect();
    unused.sort();
    if !unused.is_empty() {
        let lines: Vec<String> = unused
            .iter()
            .map(|(line, name)| format!("line {line}: {}", escaped(name.as_bytes())))
            .collect();
        say(&format!(
            "--ids {shown} names {} submissions that are not in {folder_shown}: {}",
            unused.len(),
            lines.join(", ")
        ));
    }
    Ok(ids)
}

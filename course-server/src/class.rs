//! A week's class page (issue 44's, made by the feedback program) served live to the teacher: the
//! runs folder the feedback program reads is written from each student's chosen grade (the
//! gradebook's choice: their file, the lab's output and details) and the pages made from it, once for
//! each state of the week's grades (kept under the database's folder, in `class/`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};

use crate::course::CourseWeek;
use crate::gradebook;
use crate::server::App;

/// The feedback program, found once per server (without LAB_BIN_DIR finding it runs cargo).
fn feedback_program() -> Result<PathBuf> {
    static FOUND: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(found) = FOUND.get() {
        return Ok(found.clone());
    }
    let found = grader::feedback::find(&grader::lab::repository())?;
    Ok(FOUND.get_or_init(|| found).clone())
}

/// The folder with the week's class page (`index.html`) and the students' pages, made where missing.
pub fn pages(app: &App, week: &CourseWeek) -> Result<PathBuf> {
    let name = week.week.name;
    let (csv, runs, key) = {
        let store = app.store.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let round = store.round(name)?;
        let grades = store.week_grades(name)?;
        let chosen: Vec<_> = gradebook::chosen(&app.course, week, &grades)
            .into_iter()
            .filter_map(|(student, chosen)| Some((student, chosen?)))
            .collect();
        let Some((_, first)) = chosen.first() else {
            bail!("week {name} has no grade yet");
        };
        // One header per page: a row of another (a lab of another commit) is left out.
        let header = first.grade.header.clone();
        let chosen: Vec<_> = chosen
            .into_iter()
            .filter(|(_, chosen)| chosen.grade.header == header)
            .collect();
        let mut csv = format!("{header}\n");
        let mut runs = Vec::new();
        for (student, chosen) in &chosen {
            let submission = chosen.submission;
            csv.push_str(&chosen.grade.row);
            csv.push('\n');
            let (file, kept, details) = store
                .run_of(submission, round)?
                .ok_or_else(|| anyhow!("submission {submission} has no grade in round {round}"))?;
            runs.push((student.name.clone(), file, kept, details));
        }
        let ids: Vec<String> = chosen.iter().map(|(_, chosen)| chosen.submission.to_string()).collect();
        let key = crate::auth::hashed(&format!("{round}:{}", ids.join(",")));
        (csv, runs, key)
    };
    let folder = app
        .course
        .database
        .parent()
        .unwrap_or(Path::new("."))
        .join("class")
        .join(name);
    let done = folder.join(&key[..16]);
    if done.join("index.html").is_file() {
        return Ok(done);
    }
    let making = folder.join(format!("making-{}-{}", std::process::id(), &key[..16]));
    let _ = std::fs::remove_dir_all(&making);
    let runs_dir = making.join("runs");
    std::fs::create_dir_all(&runs_dir).with_context(|| format!("cannot make {}", runs_dir.display()))?;
    for (index, (student, file, kept, details)) in runs.iter().enumerate() {
        let at = |suffix: &str| runs_dir.join(format!("{index}.{suffix}"));
        std::fs::write(at("name"), student)?;
        std::fs::write(at("cu"), file)?;
        std::fs::write(at("out"), kept)?;
        if let Some(details) = details {
            std::fs::write(at("json"), details)?;
        }
    }
    std::fs::write(runs_dir.join("grades.csv"), &csv)?;
    let feedback = feedback_program()?;
    let made = Command::new(&feedback)
        .args(["pages", "--week", name, "--runs"])
        .arg(&runs_dir)
        .arg("--grades")
        .arg(runs_dir.join("grades.csv"))
        .arg("--out")
        .arg(making.join("pages"))
        .output()
        .with_context(|| format!("cannot run {}", feedback.display()))?;
    if !made.status.success() {
        bail!(
            "feedback pages failed: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        );
    }
    // Made whole, then renamed: a page is never served half written.
    match std::fs::rename(making.join("pages"), &done) {
        Ok(()) => {}
        Err(_) if done.join("index.html").is_file() => {} // another request made it meanwhile
        Err(err) => return Err(anyhow!("cannot keep the class page in {}: {err}", done.display())),
    }
    let _ = std::fs::remove_dir_all(&making);
    Ok(done)
}

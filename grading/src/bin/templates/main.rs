//! Writes every week's template and broken files into `assignments/<week>/` from the marked sources in
//! `kernels/cuda` (kernels) and `reference/weeks` (whole programs; see `assignment.rs` beside this
//! file). Run from anywhere: `cargo run -p grading --bin templates`. These are made files: this
//! replaces them, and a test fails when a committed one differs from what this makes. With `--audit
//! DIR` it checks instead that a folder meant for students holds none of our solutions (`audit.rs`;
//! scripts/student-pack.sh runs it).

mod assignment;
mod audit;
mod honest;

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let arguments: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let done = match arguments.as_slice() {
        [] => write_templates(&repository),
        [flag, dir] if flag == "--audit" => run_audit(&repository, Path::new(dir)),
        _ => Err(USAGE.to_string()),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("templates: error: {message}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: templates (writes every week's files into assignments/) | templates --audit DIR (checks a folder for students)";

/// Every week's template and broken kernels, written into its folder.
fn write_templates(repository: &Path) -> Result<(), String> {
    for week in assignment::WEEKS {
        let source = repository.join(week.root()).join(week.source());
        let folder = repository.join("assignments").join(week.folder());
        let text =
            std::fs::read_to_string(&source).map_err(|err| format!("cannot read {}: {err}", source.display()))?;
        for (name, text) in week.files(&text)? {
            let path = folder.join(&name);
            let parent = path.parent().unwrap_or(&folder);
            std::fs::create_dir_all(parent)
                .and_then(|()| std::fs::write(&path, text))
                .map_err(|err| format!("cannot write {}: {err}", path.display()))?;
            println!("assignments/{}/{name}", week.folder());
        }
    }
    Ok(())
}

/// `--audit DIR`: one line per finding, then what was looked at; an error when anything was found.
fn run_audit(repository: &Path, dir: &Path) -> Result<(), String> {
    let evidence = audit::evidence(&assignment::WEEKS, repository)?;
    let templates = audit::template_paths(&assignment::WEEKS);
    let (findings, looked) = audit::audit(dir, &evidence, &templates)?;
    for finding in &findings {
        println!("{finding}");
    }
    let summary = format!(
        "{} files, {} solution lines searched, {} fatbins read",
        looked.files, looked.evidence, looked.fatbins
    );
    if findings.is_empty() {
        println!("audit: {} holds no solution: {summary}", dir.display());
        Ok(())
    } else {
        Err(format!(
            "{} holds what students must not get ({} findings above; {summary})",
            dir.display(),
            findings.len()
        ))
    }
}

//! Writes every week's template and broken kernels into `assignments/<week>/` from the marked kernels
//! in `kernels/cuda` (see `kernels::assignment`). Run from anywhere: `cargo run -p kernels --bin
//! templates`. These are made files: this replaces them, and a test fails when a committed one differs
//! from what this makes.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for week in kernels::assignment::WEEKS {
        let source = repository.join("kernels/cuda").join(week.source);
        let folder = repository.join("assignments").join(week.folder);
        let made = std::fs::read_to_string(&source).map_err(|err| format!("cannot read {}: {err}", source.display())).and_then(|text| week.files(&text));
        let written = made.and_then(|files| {
            files.iter().try_for_each(|(name, text)| {
                let path = folder.join(name);
                let parent = path.parent().unwrap_or(&folder);
                std::fs::create_dir_all(parent).and_then(|()| std::fs::write(&path, text)).map_err(|err| format!("cannot write {}: {err}", path.display()))?;
                println!("assignments/{}/{name}", week.folder);
                Ok(())
            })
        });
        if let Err(message) = written {
            eprintln!("templates: error: {message}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

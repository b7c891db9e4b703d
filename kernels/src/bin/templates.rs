//! Writes every week's template into `assignments/<week>/` from the marked kernels in `kernels/cuda`
//! (see `kernels::assignment`). Run from anywhere: `cargo run -p kernels --bin templates`. The templates
//! are made files: this replaces them, and a test fails when a committed one differs from what this makes.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for week in kernels::assignment::WEEKS {
        let source = repository.join("kernels/cuda").join(week.source);
        let made = std::fs::read_to_string(&source)
            .map_err(|err| format!("cannot read {}: {err}", source.display()))
            .and_then(|text| kernels::assignment::template(week.source, &text));
        let folder = repository.join("assignments").join(week.folder);
        let path = folder.join(week.source);
        let written = made.and_then(|text| {
            std::fs::create_dir_all(&folder).and_then(|()| std::fs::write(&path, text)).map_err(|err| format!("cannot write {}: {err}", path.display()))
        });
        match written {
            Ok(()) => println!("{}", path.display()),
            Err(message) => {
                eprintln!("templates: error: {message}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

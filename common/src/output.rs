//! Files the labs write (matrices, images, plots): never over something that is already there unless
//! the user said `--force`.

use std::fs::{File, OpenOptions};
use std::path::Path;

use anyhow::{Context as _, Result};

/// Creates `path` for writing. An existing file is an error unless `overwrite`; the message says how
/// to replace it.
pub fn create_output_file(path: &Path, overwrite: bool) -> Result<File> {
    let mut options = OpenOptions::new();
    options.write(true);
    if overwrite {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    options.open(path).with_context(|| {
        if path.exists() && !overwrite {
            format!("{} exists; not overwriting it (--force replaces it)", path.display())
        } else {
            format!("writing {}", path.display())
        }
    })
}

/// The same checks before any work is done, so a long run does not end in this error: no existing
/// file (unless `overwrite`), and a folder to write into.
pub fn check_output_path(path: &Path, overwrite: bool) -> Result<()> {
    anyhow::ensure!(
        overwrite || !path.exists(),
        "{} exists; not overwriting it (--force replaces it)",
        path.display()
    );
    if let Some(folder) = path.parent().filter(|folder| !folder.as_os_str().is_empty()) {
        anyhow::ensure!(
            folder.is_dir(),
            "cannot write {}: the folder {} does not exist",
            path.display(),
            folder.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_an_existing_file_unless_told_and_names_unwritable_paths() {
        let dir = std::env::temp_dir().join(format!("output-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.txt");
        std::fs::write(&path, "keep").unwrap();
        let err = create_output_file(&path, false).unwrap_err().to_string();
        assert!(
            err.ends_with("x.txt exists; not overwriting it (--force replaces it)"),
            "{err}"
        );
        assert!(check_output_path(&path, false).is_err() && check_output_path(&path, true).is_ok());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep");
        create_output_file(&path, true).unwrap();
        let err = format!(
            "{:#}",
            create_output_file(Path::new("/nonexistent/x.png"), false).unwrap_err()
        );
        assert!(err.starts_with("writing /nonexistent/x.png: "), "{err}");
        let err = check_output_path(Path::new("/nonexistent/x.png"), false)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "cannot write /nonexistent/x.png: the folder /nonexistent does not exist"
        );
        assert!(check_output_path(Path::new("relative-name.png"), false).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

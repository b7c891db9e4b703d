//! Where the grader writes: the CSV (`--out FILE` in one rename, the previous kept as `FILE.bak`, or
//! stdout, whose write errors end the run non-zero), and folders it claims for a run (new or empty, and
//! locked, so that two runs never write into one).

use std::fs::{self, File};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::csv::shown;
use crate::stop::{stop, NOT_GRADED, USAGE};

/// Where the CSV goes.
#[derive(Debug, Clone)]
pub enum Csv {
    Stdout,
    File(PathBuf),
}

impl Csv {
    /// The file the CSV lands in, as a canonical path where it is one (`--out`, or stdout redirected
    /// to a file): the submissions beside it skip it, and the kept outputs go beside it.
    pub fn file(&self) -> Option<PathBuf> {
        match self {
            Csv::File(path) => {
                let parent = path
                    .parent()
                    .filter(|parent| !parent.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                Some(parent.canonicalize().ok()?.join(path.file_name()?))
            }
            Csv::Stdout => stdout_file(),
        }
    }

    /// Writes `text`: to stdout, or to `--out`'s file through a temporary file renamed over it, the
    /// previous one kept as FILE.bak. A write that fails ends the run (exit code 1).
    pub fn write(&self, text: &str) -> Result<()> {
        match self {
            Csv::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())
                    .and_then(|()| out.flush())
                    .map_err(|err| stop(NOT_GRADED, format!("cannot write the CSV to stdout: {err}")))
            }
            Csv::File(path) => replace(path, text.as_bytes()),
        }
    }
}

/// Writes `bytes` to `path` in one rename, the previous file kept as `path.bak`.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    let fail = |err: std::io::Error| stop(NOT_GRADED, format!("cannot write {}: {err}", shown(path)));
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".tmp-{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let written = File::create(&temporary).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    if let Err(err) = written {
        let _ = fs::remove_file(&temporary);
        return Err(fail(err));
    }
    if path.exists() {
        let mut backup = path.as_os_str().to_owned();
        backup.push(".bak");
        fs::rename(path, PathBuf::from(backup)).map_err(fail)?;
    }
    fs::rename(&temporary, path).map_err(fail)
}

/// The regular file stdout writes to, if it is one.
fn stdout_file() -> Option<PathBuf> {
    let meta = fs::metadata("/proc/self/fd/1").ok()?;
    if !meta.is_file() {
        return None;
    }
    let path = fs::read_link("/proc/self/fd/1").ok()?;
    // The link names the file stdout had when opened; the same inode says it is still that file.
    let same = fs::metadata(&path).is_ok_and(|now| now.ino() == meta.ino() && now.dev() == meta.dev());
    same.then_some(path)
}

/// Whether `dir` may take what the grader writes: not there yet, or empty.
pub fn new_or_empty(dir: &Path) -> bool {
    match fs::read_dir(dir) {
        Ok(mut items) => items.next().is_none(),
        Err(_) => !dir.exists(),
    }
}

/// A folder this run writes into: made if new, and locked while the run lasts.
#[derive(Debug)]
pub struct Claimed {
    pub path: PathBuf,
    _lock: File,
}

/// Claims `dir` for `option` (`--keep`, `--feedback`): it must be new or empty, and no other run may
/// hold it; one line and exit code 2 otherwise.
pub fn claim(dir: &Path, option: &str) -> Result<Claimed> {
    let refused = || {
        stop(
            USAGE,
            format!(
                "{option}: {} is not a new or empty folder (nothing is overwritten)",
                shown(dir)
            ),
        )
    };
    if !new_or_empty(dir) {
        return Err(refused());
    }
    fs::create_dir_all(dir).map_err(|err| stop(NOT_GRADED, format!("cannot make {}: {err}", shown(dir))))?;
    let lock = File::open(dir).map_err(|err| stop(NOT_GRADED, format!("cannot open {}: {err}", shown(dir))))?;
    // SAFETY: flock on a descriptor this File owns and keeps open; it touches no memory.
    let locked = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if !locked {
        return Err(stop(
            USAGE,
            format!("{option}: {} is in use by another grading run", shown(dir)),
        ));
    }
    // Another run may have written between the look and the lock.
    if !new_or_empty(dir) {
        return Err(refused());
    }
    Ok(Claimed {
        path: dir.to_path_buf(),
        _lock: lock,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_keeps_the_previous_csv_and_a_claimed_folder_is_held() {
        let dir = std::env::temp_dir().join(format!("grader-output-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("grades.csv");
        replace(&csv, b"one\n").unwrap();
        replace(&csv, b"two\n").unwrap();
        assert_eq!(fs::read(&csv).unwrap(), b"two\n");
        assert_eq!(fs::read(dir.join("grades.csv.bak")).unwrap(), b"one\n");
        let pages = dir.join("pages");
        let held = claim(&pages, "--feedback").unwrap();
        let err = claim(&pages, "--feedback").unwrap_err().to_string();
        assert!(err.ends_with("is in use by another grading run"), "{err}");
        drop(held);
        fs::write(pages.join("x"), "").unwrap();
        assert!(claim(&pages, "--feedback")
            .unwrap_err()
            .to_string()
            .ends_with("(nothing is overwritten)"));
        fs::remove_dir_all(dir).unwrap();
    }
}

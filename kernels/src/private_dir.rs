//! A fresh private folder for files a lab writes for itself or hands to its own child processes
//! (nvcc's work for a student's file, `--check`'s compiled image and each case's result file). `mkdtemp(3)` picks a name nobody can predict and creates it
//! with mode 0700 in one step, so another account on a shared course machine can neither create the
//! path first (a link, or a file of its own) nor read or write what is in it.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Path, PathBuf};

use std::io::{Error, ErrorKind, Result};

/// A folder made by `mkdtemp` under the temporary folder; removed with everything in it on drop.
#[derive(Debug)]
pub struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// `$TMPDIR/<prefix>-XXXXXX`, mode 0700.
    pub fn new(prefix: &str) -> Result<PrivateDir> {
        let template = std::env::temp_dir().join(format!("{prefix}-XXXXXX"));
        let mut bytes = CString::new(template.as_os_str().as_bytes())
            .map_err(|_| Error::new(ErrorKind::InvalidInput, "the temporary folder's path holds a NUL byte"))?
            .into_bytes_with_nul();
        // SAFETY: a writable NUL-terminated template ending in XXXXXX, which mkdtemp overwrites in place.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast::<libc::c_char>()) };
        if made.is_null() {
            let why = Error::last_os_error();
            return Err(Error::new(
                why.kind(),
                format!(
                    "cannot create a private folder in {}: {why}",
                    std::env::temp_dir().display()
                ),
            ));
        }
        bytes.pop(); // the NUL
        Ok(PrivateDir {
            path: PathBuf::from(OsString::from_vec(bytes)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        // Our own folder; nothing to report if it is already gone.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_private_dir_is_fresh_only_ours_and_gone_after_use() {
        let (one, two) = (
            PrivateDir::new("labs-test").unwrap(),
            PrivateDir::new("labs-test").unwrap(),
        );
        assert_ne!(one.path(), two.path());
        let mode = std::fs::metadata(one.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        std::fs::write(one.path().join("file"), "x").unwrap();
        let path = one.path().to_path_buf();
        drop(one);
        assert!(!path.exists());
    }
}

//! Loading a shared library at run time from a list of places, as cuBLAS (lab-mmm's ladder) and CUPTI
//! (`--profile`) are: the first that loads wins, and the loader's message for the last one tried goes
//! into the caller's error, which says where it looked.

use std::ffi::OsStr;
use std::path::Path;

use libloading::Library;

/// The first of `candidates` that loads, with the candidate it came from; else the dynamic loader's
/// message for the last one tried. A candidate with a folder in it is passed over when no such file
/// exists (the loader would only say so); a bare name goes to the loader's own search path.
///
/// # Safety
///
/// Loading a library runs its initialisers. Every candidate must name a library whose initialisers
/// are sound to run in this process at any time (cuBLAS and CUPTI need nothing from the caller).
pub unsafe fn load_first<P: AsRef<OsStr>>(candidates: impl IntoIterator<Item = P>) -> Result<(Library, P), String> {
    let mut last = String::from("not found");
    for candidate in candidates {
        let name = candidate.as_ref();
        if Path::new(name).components().count() > 1 && !Path::new(name).exists() {
            continue;
        }
        // SAFETY: the caller vouches for every candidate's initialisers (this function's contract).
        match unsafe { Library::new(name) } {
            Ok(library) => return Ok((library, candidate)),
            Err(err) => last = err.to_string(),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_library_that_loads_wins_and_missing_files_are_passed_over() {
        // SAFETY: the C library is already loaded in every Rust process on Linux; loading it again
        // runs no initialiser a second time.
        let (_library, from) = unsafe { load_first(["/no/such/folder/libc.so.6", "libc.so.6"]) }.unwrap();
        assert_eq!(from, "libc.so.6");
    }

    #[test]
    fn when_none_loads_the_loader_names_the_last_one_tried() {
        // SAFETY: neither exists, so nothing is loaded.
        let err = unsafe { load_first(["/no/such/folder/libx.so", "libcuda-labs-no-such-library.so.99"]) }.unwrap_err();
        assert!(err.contains("libcuda-labs-no-such-library.so.99"), "{err}");
        // SAFETY: nothing exists here, nothing is loaded.
        let err = unsafe { load_first(["/no/such/folder/libx.so"]) }.unwrap_err();
        assert_eq!(err, "not found");
    }
}

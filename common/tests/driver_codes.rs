//! The driver's result codes in our patched cust_raw (vendor/cust_raw) against the pinned toolkit's
//! `cuda.h`: a code the header has and the bindings lack is one a driver call could return into a
//! type that does not know it (issue 30). Runs without a GPU; fails where no `cuda.h` is found.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cust::sys::cudaError_enum;

/// `cuda.h` of the toolkit whose nvcc builds the kernels.
fn cuda_h() -> PathBuf {
    let kernels_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let nvcc = kernels::nvcc::find(&kernels_dir).expect("no nvcc found (bash scripts/cuda-toolchain.sh installs one)");
    let root = nvcc
        .canonicalize()
        .expect("nvcc's path")
        .parent()
        .and_then(Path::parent)
        .expect("nvcc in <toolkit>/bin")
        .to_path_buf();
    // Beside that nvcc only: another toolkit's header would compare the bindings with the wrong CUDA.
    let candidates = [
        root.join("include/cuda.h"),
        root.join("targets/x86_64-linux/include/cuda.h"),
    ];
    candidates
        .into_iter()
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("no cuda.h beside {}", nvcc.display()))
}

/// The `NAME = value` entries of `typedef enum cudaError_enum { ... } CUresult;`, comments removed.
fn header_codes(header: &str) -> BTreeMap<String, i32> {
    let start = header
        .find("typedef enum cudaError_enum {")
        .expect("cuda.h has no cudaError_enum");
    let end = start
        + header[start..]
            .find("} CUresult;")
            .expect("cudaError_enum does not end");
    let mut body = String::new();
    let mut rest = &header[start..end];
    while let Some(open) = rest.find("/*") {
        body.push_str(&rest[..open]);
        let close = rest[open..].find("*/").expect("a comment that does not end");
        rest = &rest[open + close + 2..];
    }
    body.push_str(rest);
    body.split(',')
        .filter_map(|entry| entry.split_once('='))
        .map(|(name, value)| {
            let name = name
                .trim()
                .rsplit(['{', ' ', '\n'])
                .next()
                .unwrap_or_default()
                .to_string();
            let value = value
                .trim()
                .parse()
                .unwrap_or_else(|err| panic!("{name} = {value:?}: {err}"));
            (name, value)
        })
        .collect()
}

#[test]
fn every_result_code_of_the_pinned_cuda_h_is_a_value_of_the_bindings_and_no_other() {
    let header = std::fs::read_to_string(cuda_h()).expect("read cuda.h");
    let expected = header_codes(&header);
    assert!(
        expected.len() > 90 && expected["CUDA_ERROR_DEVICE_UNAVAILABLE"] == 46,
        "a parse that found too little: {expected:?}"
    );
    let bound: BTreeMap<String, i32> = cudaError_enum::ALL
        .iter()
        .map(|(name, code)| (name.to_string(), code.0))
        .collect();
    let missing: Vec<String> = expected
        .iter()
        .filter(|(name, value)| bound.get(*name) != Some(value))
        .map(|(name, value)| format!("    {name} = {value},"))
        .collect();
    assert!(missing.is_empty(), "vendor/cust_raw/src/cuda.rs lacks, or has other values for, these codes of cuda.h (in its result_codes! list):\n{}", missing.join("\n"));
    let extra: Vec<&String> = bound.keys().filter(|name| !expected.contains_key(*name)).collect();
    assert!(
        extra.is_empty(),
        "codes in the bindings that cuda.h does not have: {extra:?}"
    );
}

#[test]
fn any_code_at_all_is_a_value_and_the_names_match_as_patterns() {
    // What a driver newer than the toolkit might return: a value of the type, compared, not undefined.
    let future = cudaError_enum(12_345);
    assert!(!matches!(
        future,
        cudaError_enum::CUDA_SUCCESS | cudaError_enum::CUDA_ERROR_UNKNOWN
    ));
    assert!(matches!(
        cudaError_enum(46),
        cudaError_enum::CUDA_ERROR_DEVICE_UNAVAILABLE
    ));
}

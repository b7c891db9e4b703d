//! `feedback scores`: every pair of files with how alike they are, as `alike` judges them.

use std::process::Command;

/// `feedback scores` run from the repository's root with `args`: exit status, stdout, stderr.
fn scores(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_feedback"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .arg("scores")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn every_pair_gets_a_line_and_copies_are_marked() {
    let (code, stdout, stderr) = scores(&[
        "--template",
        "assignments/03-mmm-tiled/mmm.cu",
        "kernels/cuda/mmm.cu",
        "feedback/tests/fixtures/03-mmm-tiled/disguised-copy.cu",
        "feedback/tests/fixtures/03-mmm-tiled/independent-1.cu",
    ]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].starts_with("kernels/cuda/mmm.cu ~ feedback/tests/fixtures/03-mmm-tiled/disguised-copy.cu: 1.000, ")
            && lines[0].ends_with(" fingerprints, too alike"),
        "{stdout}"
    );
    assert!(
        lines[1].contains("independent-1.cu: 0.") && !lines[1].contains("too alike"),
        "{stdout}"
    );
}

#[test]
fn a_missing_file_or_a_single_one_is_a_one_line_error() {
    let (code, stdout, stderr) = scores(&[
        "--template",
        "assignments/03-mmm-tiled/mmm.cu",
        "no-such.cu",
        "kernels/cuda/mmm.cu",
    ]);
    assert_eq!((code, stdout.as_str()), (Some(1), ""));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("feedback: error: reading no-such.cu: "), "{stderr}");
    let (code, _, stderr) = scores(&["--template", "assignments/03-mmm-tiled/mmm.cu", "kernels/cuda/mmm.cu"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.lines().count() == 1 && stderr.contains("2 values required"),
        "{stderr}"
    );
}

//! The command line: --help, and every mistake one line naming it, exit code 1, no panic.

mod common;

use std::process::Command;

use common::{Course, BIN};

fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let output = Command::new(BIN)
        .args(args)
        .env_remove("COURSE_TOKEN")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn help_shows_how_to_start_a_course_and_add_workers() {
    let (code, out, _) = run(&["--help"], &[]);
    assert_eq!(code, 0);
    for wanted in [
        "tokens --course course.toml --teacher --all-students",
        "course-server worker --server",
        "curl -H",
    ] {
        assert!(out.contains(wanted), "{wanted}: {out}");
    }
}

#[test]
fn every_mistake_is_one_line_and_exit_code_1() {
    let course = Course::new("cli", "");
    let file = course.file();
    let file = file.to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&[], "give the course: course-server --course course.toml"),
        (
            &["--course", "/nowhere/course.toml"],
            "/nowhere/course.toml: cannot read",
        ),
        (&["tokens", "--course", file], "no token asked for"),
        (
            &["tokens", "--course", file, "--student", "s9"],
            "no student with the id s9",
        ),
        (
            &["tokens", "--course", file, "--worker", "local-3"],
            "not beginning with local-",
        ),
        (
            &["gradebook", "--course", file, "05-streams"],
            "no week 05-streams in the course",
        ),
        (
            &["submit", "--server", "http://127.0.0.1:9", "03-mmm-tiled", "x.cu"],
            "no token: set COURSE_TOKEN",
        ),
        (
            &["--course", file, "--listen", "nowhere", "--workers", "0"],
            "listen address \"nowhere\"",
        ),
    ];
    for (args, wanted) in cases {
        let (code, _, err) = run(args, &[]);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.starts_with("course-server: error: ") && err.contains(wanted),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // A server that is not there: one line naming it.
    let (code, _, err) = run(
        &["submit", "--server", "http://127.0.0.1:9", "03-mmm-tiled", file],
        &[("COURSE_TOKEN", "x")],
    );
    assert!(
        code == 1 && err.contains("http://127.0.0.1:9/api/weeks/03-mmm-tiled/submissions"),
        "{err}"
    );
}

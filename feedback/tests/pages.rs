//! The pages made again, without a GPU, from a real grading run: grade.sh --feedback on an H100 with
//! week 3's solution, template, broken kernels, two independent solutions, two renamed copies of
//! ours, a file that does not compile and a folder with two files (fixtures/runs-03-mmm-tiled, the
//! run's log in results/h100/assignments/issue44-feedback.log).

use std::path::{Path, PathBuf};
use std::process::Command;

const RUNS: &str = "tests/fixtures/runs-03-mmm-tiled";

/// A fresh folder for this test's pages.
fn fresh(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("feedback-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `feedback pages` on the fixture's runs into `out`, with `extra` flags; its exit status and stderr.
fn pages(out: &Path, extra: &[&str]) -> (bool, String) {
    pages_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNS), out, extra)
}

/// `feedback pages` on week 3's `runs` (with its grades.csv) into `out`.
fn pages_of(runs: &Path, out: &Path, extra: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_feedback"))
        .args(["pages", "--week", "03-mmm-tiled", "--runs"])
        .arg(runs)
        .arg("--grades")
        .arg(runs.join("grades.csv"))
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The page of the student whose name ends the file's name (`017-writes-past-c.md`).
fn page_of(out: &Path, student: &str, suffix: &str) -> String {
    let entry = std::fs::read_dir(out).unwrap().flatten().find(|entry| {
        entry
            .file_name()
            .to_string_lossy()
            .ends_with(&format!("-{student}.{suffix}"))
    });
    read(entry.unwrap_or_else(|| panic!("no page of {student}")).path())
}

#[test]
fn every_student_has_a_page_and_the_class_page_links_each_and_says_who_to_look_at() {
    let out = fresh("all");
    let (ok, stderr) = pages(&out, &[]);
    assert!(ok, "{stderr}");
    let index = read(out.join("index.html"));
    let links: Vec<&str> = index
        .split("href=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    assert!(links.iter().all(|link| out.join(link).is_file()), "{links:?}");
    let mut linked: Vec<&str> = links.clone();
    linked.sort_unstable();
    linked.dedup();
    assert_eq!(linked.len(), 19, "{linked:?}");
    assert!(
        index.contains("Week 03-mmm-tiled: 19 submissions")
            && index.contains("6 passed every check, 1 did not compile"),
        "{index}"
    );
    assert!(index.contains("<svg") && index.matches("<rect").count() > 7, "the plot");
    // Who to look at: the file that did not compile, the kernel that traps, the copies.
    let section = |title: &str| {
        index
            .split(title)
            .nth(1)
            .and_then(|rest| rest.split("</ul>").next())
            .unwrap_or_default()
            .to_string()
    };
    assert!(section("Did not compile:").contains("does-not-compile"), "{index}");
    assert!(section("Faulted:").contains("traps: "), "{index}");
    // One group: the copies of ours and the broken kernels made from it, 91 pairs in one line (names
    // are joined by "; ": one of them, "solution, ours", holds a comma).
    let groups = section("Groups of submissions too alike");
    assert_eq!(groups.matches("<li>").count(), 1, "{groups}");
    assert!(
        groups.contains("14 submissions: copy-renamed-by-sed; fake-result-row; ")
            && groups.contains("renamed-copy")
            && groups.contains("(91 pairs from 78% to 100% alike)"),
        "{groups}"
    );
    assert!(
        !groups.contains("independent-"),
        "independent solutions flagged: {groups}"
    );
    assert!(
        section("Too like our own files")
            .contains("renamed-copy: 99% like our kernels/cuda/mmm.cu and 12 more of our files"),
        "{index}"
    );
    assert!(
        index.contains("written outside C: C[m*n + N], N elements past the end"),
        "findings by kind: {index}"
    );
    // Nothing is overwritten: a second run into the same folder stops at the first page.
    let (again, stderr) = pages(&out, &[]);
    assert!(!again && stderr.contains("it must not exist yet"), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_students_page_says_what_failed_where_and_what_nvcc_said() {
    let out = fresh("students");
    assert!(pages(&out, &[]).0);
    let past = page_of(&out, "writes-past-c", "md");
    assert!(
        past.contains("| mmm f64, 17 x 33 times 33 x 5 | FAIL | 0 of 85 |")
            && past.contains("written outside C: C\\[m\\*n \\+ 40\\]"),
        "{past}"
    );
    let uncompiled = page_of(&out, "does-not-compile", "md");
    assert!(
        uncompiled.contains("The file did not compile") && uncompiled.contains("(21): error: "),
        "{uncompiled}"
    );
    // What the lab said names the file as graded, by its name alone: no student's page shows a folder
    // of the grading machine (the class page is the teacher's).
    let copy = page_of(&out, "copy-renamed-by-sed", "md");
    assert!(
        copy.contains("copy-renamed-by-sed.cu compiled (for GPU 0, sm_90)"),
        "{copy}"
    );
    for entry in std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name() != "index.html")
    {
        let page = read(entry.path());
        assert!(
            !page.contains("/work/") && !page.contains("/tmp/"),
            "{}: {page}",
            entry.path().display()
        );
    }
    let traps = page_of(&out, "traps", "html");
    assert!(traps.contains("<span class=\"FAULT\">FAULT</span>"), "{traps}");
    let two = page_of(&out, "two-files", "md");
    assert!(two.contains("several .cu files: a.cu, b.cu (hand in one)"), "{two}");
    // No student's page names another student.
    let other = page_of(&out, "copy-renamed-by-sed", "md");
    assert!(!other.contains("renamed-copy") && !other.contains("alike"), "{other}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn hidden_cases_show_their_verdicts_and_nothing_of_their_sizes_or_values() {
    let out = fresh("hidden");
    assert!(pages(&out, &["--hide-cases"]).0);
    for entry in std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name() != "index.html")
    {
        let page = read(entry.path());
        let leaks = [
            "x 999",
            "17 x 33",
            "C[m*n",
            "C\\[m",
            "0 of 85",
            "of 1001000",
            "3e07eb7411a21322",
            "CUDA_ERROR",
        ];
        assert!(
            leaks.iter().all(|leak| !page.contains(leak)),
            "{}: {page}",
            entry.path().display()
        );
    }
    let past = page_of(&out, "writes-past-c", "md");
    assert!(
        past.contains("| hidden case 2 | FAIL | - | - | - | - | - | - | - | - | - |"),
        "{past}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// The fixture's graded files and names copied into `runs` (a fresh folder), and `feedback alike`
/// run on them with our week-3 files, as grade.sh runs it.
fn alike_again(runs: &Path) {
    std::fs::create_dir_all(runs).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNS);
    for entry in std::fs::read_dir(&fixture).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".cu") || name.ends_with(".name") || name == "grades.csv" {
            std::fs::copy(entry.path(), runs.join(&name)).unwrap();
        }
    }
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut ours = vec!["kernels/cuda/mmm.cu".to_string()];
    for folder in ["broken", "adversarial"] {
        let mut files: Vec<String> = std::fs::read_dir(repository.join("assignments/03-mmm-tiled").join(folder))
            .unwrap()
            .flatten()
            .map(|e| format!("assignments/03-mmm-tiled/{folder}/{}", e.file_name().to_string_lossy()))
            .collect();
        files.sort();
        ours.extend(files);
    }
    let ours: Vec<std::ffi::OsString> = ours.iter().flat_map(|file| ["--ours".into(), file.into()]).collect();
    assert!(alike(runs, &ours).success());
}

/// `feedback alike` on the 19 runs in `runs`, week 3's starter taken out, with `extra` flags, from
/// the repository (where our files' names lead).
fn alike(runs: &Path, extra: &[std::ffi::OsString]) -> std::process::ExitStatus {
    Command::new(env!("CARGO_BIN_EXE_feedback"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .args([
            "alike",
            "--count",
            "19",
            "--template",
            "assignments/03-mmm-tiled/mmm.cu",
            "--runs",
        ])
        .arg(runs)
        .args(extra)
        .status()
        .unwrap()
}

/// Issue 61: `--earlier DIR` compares each submission with every .cu file of an earlier year's folder
/// (and its subfolders): a submission handed in again this year, reformatted, is found, and the class
/// page lists it; an independent solution is not.
#[test]
fn an_earlier_years_submission_handed_in_again_is_found() {
    let runs = fresh("earlier-runs");
    alike_again(&runs);
    let earlier = fresh("earlier-years");
    std::fs::create_dir_all(earlier.join("2025/week3")).unwrap();
    // independent-1's file (submission 3) as an earlier year's, every line indented once more.
    let reformatted: String = read(runs.join("3.cu"))
        .lines()
        .map(|line| format!("  {line}\n"))
        .collect();
    std::fs::write(earlier.join("2025/week3/lee.cu"), reformatted).unwrap();
    std::fs::write(earlier.join("notes.txt"), "not a source").unwrap();
    let earlier_flag = ["--earlier".into(), earlier.clone().into_os_string()];
    let status = alike(&runs, &earlier_flag);
    assert!(!status.success(), "alike writes no file over grade.sh's");
    for index in 0..19 {
        std::fs::remove_file(runs.join(format!("{index}.alike"))).unwrap();
    }
    std::fs::remove_file(runs.join("alike.json")).unwrap();
    let status = alike(&runs, &earlier_flag);
    assert!(status.success());
    let lee = earlier.join("2025/week3/lee.cu").display().to_string();
    assert!(
        read(runs.join("3.alike")).starts_with(&format!("earlier {lee}, ")),
        "{}",
        read(runs.join("3.alike"))
    );
    assert_eq!(read(runs.join("4.alike")), "", "independent-2 is like nobody");
    let out = fresh("earlier-pages");
    let (made, stderr) = pages_of(&runs, &out, &[]);
    assert!(made, "{stderr}");
    let class = read(out.join("index.html"));
    assert!(class.contains("Too like an earlier year"), "{class}");
    assert!(class.contains(&format!("like the earlier {lee}")), "{class}");
    for dir in [runs, earlier, out] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn alike_finds_the_same_pairs_again() {
    let runs = fresh("alike");
    alike_again(&runs);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNS);
    for index in 0..19 {
        let name = |dir: &Path| read(dir.join(format!("{index}.alike")));
        assert_eq!(
            name(&runs),
            name(&fixture),
            "submission {index} ({})",
            read(fixture.join(format!("{index}.name")))
        );
    }
    let _ = std::fs::remove_dir_all(&runs);
}

/// Issue 61: each submission too alike is shown beside the one most like it, on a page of its own
/// the class page links, the lines that match marked (HTML `<mark>`, Markdown `>`); the starter's
/// lines and the independent solutions are not.
#[test]
fn submissions_too_alike_are_shown_side_by_side_with_the_matching_lines_marked() {
    let runs = fresh("side-runs");
    alike_again(&runs);
    let out = fresh("side-pages");
    let (made, stderr) = pages_of(&runs, &out, &[]);
    assert!(made, "{stderr}");
    let index = read(out.join("index.html"));
    let sides: Vec<&str> = index
        .split("href=\"alike-")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    // One group of copies (13 since the normal form: the naive body in the tiled kernel no longer
    // reads as a copy): each of them beside the one most like it, on fewer pages than members.
    let group = index
        .split("13 submissions: ")
        .nth(1)
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_default();
    let names: Vec<&str> = group.split("; ").collect();
    assert_eq!(names.len(), 13, "{index}");
    let section = index.split("Side by side").nth(1).unwrap_or_default();
    assert!(names.iter().all(|name| section.contains(name)), "{section}");
    assert!((7..=12).contains(&sides.len()), "{index}");
    assert!(
        !index.contains("independent-1 beside") && !index.contains("beside independent-"),
        "{index}"
    );
    let page = read(out.join("alike-001-011.html"));
    assert!(
        page.contains("copy-renamed-by-sed and renamed-copy: 99% alike")
            && page.matches("<mark>").count() > 40
            && page.contains("<mark>  16              total += a(i, kk) * b(kk, j);</mark>"),
        "{page}"
    );
    // The starter's own lines are not marked: its includes, its guard.
    assert!(!page.contains("<mark>   4  #include"), "{page}");
    let markdown = read(out.join("alike-001-011.md"));
    assert!(
        markdown.contains("    >   16              total += a(i, kk) * b(kk, j);"),
        "{markdown}"
    );
    let _ = std::fs::remove_dir_all(&runs);
    let _ = std::fs::remove_dir_all(&out);
}

//! The API as a stranger, a student, another student, a worker and the teacher use it: who may do
//! what, the limits, and a job's way from upload to grade, with no GPU (the worker is this test).

mod common;

use common::{bearer, request, Course};

const WEEK: &str = "03-mmm-tiled";

fn submit(course: &Course, token: &str, week: &str, file: &[u8]) -> common::Answer {
    let auth = bearer(token);
    request(
        "POST",
        &format!("{}/api/weeks/{week}/submissions", course.url),
        &[("Authorization", &auth)],
        file,
    )
}

fn get(course: &Course, token: &str, path: &str) -> common::Answer {
    let auth = bearer(token);
    request(
        "GET",
        &format!("{}{path}", course.url),
        &[("Authorization", &auth)],
        b"",
    )
}

fn post_json(course: &Course, token: &str, path: &str, body: serde_json::Value) -> common::Answer {
    let auth = bearer(token);
    request(
        "POST",
        &format!("{}{path}", course.url),
        &[("Authorization", &auth), ("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
}

fn started() -> Course {
    let mut course = Course::new(
        "api",
        "[limits]\nupload_bytes = 4096\nper_hour = 3\nrequests_per_second = 1000.0\n",
    );
    course.make_tokens(&["--all-students", "--teacher", "--worker", "w"]);
    course.start(&["--workers", "0"]);
    course
}

#[test]
fn strangers_are_refused_everywhere_but_the_sign_in_page() {
    let course = started();
    let (ann, worker) = (course.token("s1"), course.token("w"));
    for (method, path) in [
        ("GET", "/api/submissions"),
        ("GET", "/api/submissions/1"),
        ("POST", "/api/weeks/03-mmm-tiled/submissions"),
        ("POST", "/api/worker/claim"),
        ("GET", "/api/worker/jobs/1/file?lease=x"),
        ("GET", "/admin/weeks/03-mmm-tiled/gradebook.csv"),
    ] {
        for auth in ["", "Bearer nonsense", &bearer(&format!("{ann}x"))] {
            let answer = request(
                method,
                &format!("{}{path}", course.url),
                &[("Authorization", auth)],
                b"{}",
            );
            assert!(
                answer.status == 401 || answer.status == 415,
                "{method} {path} with '{auth}': {}",
                answer.status
            );
            assert_ne!(answer.status, 200);
        }
    }
    let home = request("GET", &format!("{}/", course.url), &[], b"");
    assert_eq!(home.status, 200);
    assert!(home.body.contains("Sign in"), "{}", home.body);
    // Each role only its own routes.
    assert_eq!(
        post_json(&course, &ann, "/api/worker/claim", serde_json::json!({ "name": "x" })).status,
        403
    );
    assert_eq!(
        get(&course, &ann, "/admin/weeks/03-mmm-tiled/gradebook.csv").status,
        403
    );
    assert_eq!(submit(&course, &worker, WEEK, b"__global__").status, 403);
    assert_eq!(
        submit(&course, &course.token("teacher"), WEEK, b"__global__").status,
        403
    );
}

#[test]
fn a_submission_goes_from_upload_to_grade_and_only_its_student_and_the_teacher_see_it() {
    let course = started();
    let (ann, bob, worker, teacher) = (
        course.token("s1"),
        course.token("s2"),
        course.token("w"),
        course.token("teacher"),
    );
    // The limits, each one line.
    let answer = submit(&course, &ann, "04-constant-tracer", b"__global__");
    assert_eq!(
        (answer.status, answer.body.trim()),
        (404, "no week 04-constant-tracer in this course")
    );
    assert_eq!(submit(&course, &ann, WEEK, b"").status, 400);
    let answer = submit(&course, &ann, WEEK, &[b'x'; 4097]);
    assert!(answer.status == 413, "{} {}", answer.status, answer.body);
    let answer = submit(
        &course,
        &ann,
        WEEK,
        b"__global__ void mmm() {}\n<script>alert(1)</script>",
    );
    assert_eq!(answer.status, 202, "{}", answer.body);
    let id = answer.json()["id"].as_i64().unwrap();
    assert_eq!(answer.json()["position"], 0);
    let again = submit(&course, &ann, WEEK, b"__global__");
    assert_eq!(again.status, 429);
    assert!(again.body.contains("one at a time"), "{}", again.body);
    // Bob sees nothing of Ann's: her submission is as missing as one that never was.
    assert_eq!(
        get(&course, &bob, &format!("/api/submissions/{id}")).body,
        get(&course, &bob, "/api/submissions/999")
            .body
            .replace("999", &id.to_string())
    );
    assert_eq!(get(&course, &bob, &format!("/api/submissions/{id}")).status, 404);
    assert_eq!(get(&course, &bob, "/api/submissions").json(), serde_json::json!([]));
    assert_eq!(get(&course, &ann, "/api/submissions").json()[0]["state"], "queued");
    // The worker takes it, reads the file, sends a grade; a second report of the same lease changes nothing.
    let claim = post_json(
        &course,
        &worker,
        "/api/worker/claim",
        serde_json::json!({ "name": "gpu0" }),
    );
    assert_eq!(claim.status, 200, "{}", claim.body);
    let job = claim.json();
    assert_eq!(
        (job["student"].as_str(), job["week"].as_str()),
        (Some("ann"), Some(WEEK))
    );
    let (number, lease) = (job["job"].as_i64().unwrap(), job["lease"].as_str().unwrap().to_string());
    let file = get(
        &course,
        &worker,
        &format!("/api/worker/jobs/{number}/file?lease={lease}"),
    );
    assert!(file.body.starts_with("__global__ void mmm()"), "{}", file.body);
    assert_eq!(
        get(&course, &worker, &format!("/api/worker/jobs/{number}/file?lease=other")).status,
        409
    );
    assert_eq!(
        post_json(
            &course,
            &worker,
            "/api/worker/claim",
            serde_json::json!({ "name": "gpu1" })
        )
        .status,
        204
    );
    let grade = serde_json::json!({
        "state": "graded",
        "header": "student,file,\"mmm f64, 17 x 33 times 33 x 5\",\"tiling: shared memory\",passed,time ratio,flags,case set,note,score",
        "row": "ann,ann.cu,PASS,PASS,2 of 2,0.980,,abc123,\"<b>note</b>\",100.0",
        "score": 100.0, "passing": true, "ratio": 0.98, "kept": "# stderr: <script>", "page": "<html><script>alert(1)</script></html>"
    });
    let report = serde_json::json!({ "lease": lease, "grade": grade });
    let path = format!("/api/worker/jobs/{number}/report");
    assert_eq!(post_json(&course, &worker, &path, report.clone()).json()["taken"], true);
    assert_eq!(post_json(&course, &worker, &path, report).json()["repeated"], true);
    let late = serde_json::json!({ "lease": "another", "give_back": "x" });
    assert_eq!(post_json(&course, &worker, &path, late).status, 409);
    assert_eq!(common::count(&course.database(), "SELECT count(*) FROM grades"), 1);
    // Ann sees her grade; the teacher too; Bob still nothing.
    let seen = get(&course, &ann, &format!("/api/submissions/{id}")).json();
    assert_eq!(
        (seen["submission"]["state"].as_str(), seen["grade"]["score"].as_f64()),
        (Some("graded"), Some(100.0))
    );
    assert_eq!(get(&course, &teacher, &format!("/api/submissions/{id}")).status, 200);
    assert_eq!(get(&course, &bob, &format!("/api/submissions/{id}")).status, 404);
    assert_eq!(get(&course, &bob, &format!("/submissions/{id}/feedback")).status, 404);
    // Her pages: what she handed in and what the lab printed, escaped; the feedback page sandboxed.
    let page = get(&course, &ann, &format!("/submissions/{id}"));
    assert!(
        page.body.contains("&lt;script&gt;alert(1)") && !page.body.contains("<script>"),
        "{}",
        page.body
    );
    assert!(page.body.contains("&lt;b&gt;note&lt;/b&gt;"), "{}", page.body);
    let feedback = get(&course, &ann, &format!("/submissions/{id}/feedback"));
    assert!(feedback
        .header("content-security-policy")
        .unwrap()
        .starts_with("sandbox;"));
    // The gradebook: Ann's row, and the others' without a grade.
    let book = get(&course, &teacher, "/admin/weeks/03-mmm-tiled/gradebook.csv").body;
    let lines: Vec<&str> = book.lines().collect();
    assert!(lines[0].ends_with(",score,student id"), "{book}");
    assert!(
        lines[1].starts_with("ann,ann.cu,PASS,PASS") && lines[1].ends_with(",100.0,\"s1\""),
        "{book}"
    );
    assert!(
        lines[3].starts_with("\"Doe, Jane\",") && lines[3].contains("nothing graded"),
        "{book}"
    );
    // The per-hour limit (3 here): Ann's fourth within the hour is refused.
    for _ in 0..2 {
        let answer = submit(&course, &ann, WEEK, b"__global__");
        assert_eq!(answer.status, 202, "{}", answer.body);
        grade_next(&course, &worker, grade_of(0.0));
    }
    let answer = submit(&course, &ann, WEEK, b"__global__");
    assert_eq!(answer.status, 429);
    assert!(
        answer.body.contains("3 submissions in the last hour"),
        "{}",
        answer.body
    );
}

/// As the worker with `token`: claims the next job and reports `grade` for it; the claim and the
/// report's answer.
fn grade_next(course: &Course, token: &str, grade: serde_json::Value) -> (serde_json::Value, common::Answer) {
    let claim = post_json(
        course,
        token,
        "/api/worker/claim",
        serde_json::json!({ "name": "gpu0" }),
    )
    .json();
    let report = serde_json::json!({ "lease": claim["lease"], "grade": grade });
    let answer = post_json(
        course,
        token,
        &format!("/api/worker/jobs/{}/report", claim["job"]),
        report,
    );
    (claim, answer)
}

fn grade_of(score: f64) -> serde_json::Value {
    serde_json::json!({ "state": "graded", "header": "student,file,score", "row": format!("ann,ann.cu,{score}"),
        "score": score, "passing": false, "ratio": null, "kept": "", "page": null })
}

#[test]
fn a_late_submission_is_graded_but_not_counted() {
    let course = started();
    let (ann, teacher) = (course.token("s1"), course.token("teacher"));
    let answer = submit(&course, &ann, "01-simpson", b"__global__");
    assert_eq!(answer.status, 202);
    let seen = get(&course, &ann, "/api/submissions").json();
    assert_eq!(seen[0]["late"], true);
    let book = get(&course, &teacher, "/admin/weeks/01-simpson/gradebook.csv").body;
    assert!(
        book.lines()
            .nth(1)
            .unwrap()
            .contains("nothing graded before the deadline"),
        "{book}"
    );
}

#[test]
fn a_week_with_hidden_cases_shows_its_student_only_verdicts() {
    let mut course = Course::new("hidden", "");
    let toml = std::fs::read_to_string(course.file()).unwrap();
    let toml = toml.replace("leaderboard = true\n", "leaderboard = true\nhide_cases = true\n");
    std::fs::write(course.file(), toml).unwrap();
    course.make_tokens(&["--all-students", "--teacher", "--worker", "w"]);
    course.start(&["--workers", "0"]);
    let (ann, worker, teacher) = (course.token("s1"), course.token("w"), course.token("teacher"));
    let id = submit(&course, &ann, WEEK, b"__global__").json()["id"]
        .as_i64()
        .unwrap();
    let grade = serde_json::json!({ "state": "graded",
        "header": "student,file,\"mmm f64, 17 x 33 times 33 x 5\",\"tiling: shared memory\",passed,score",
        "row": "ann,ann.cu,FAIL,PASS,1 of 2,50.0", "score": 50.0, "passing": false, "ratio": null,
        "kept": "case 17 x 33 failed at C[3][4]", "page": null });
    let (claim, _) = grade_next(&course, &worker, grade);
    assert_eq!(claim["hide_cases"], true);
    let seen = get(&course, &ann, &format!("/api/submissions/{id}")).json();
    let header = seen["grade"]["header"].as_str().unwrap();
    assert_eq!(header, "student,file,\"case 1\",\"tiling: shared memory\",passed,score");
    assert!(!seen["grade"]["kept"].as_str().unwrap().contains("17 x 33"));
    let page = get(&course, &ann, &format!("/submissions/{id}")).body;
    assert!(!page.contains("17 x 33"), "{page}");
    let theirs = get(&course, &teacher, &format!("/api/submissions/{id}")).json();
    assert!(theirs["grade"]["header"].as_str().unwrap().contains("17 x 33"));
}

/// The teacher's class page, made live by the feedback program from the chosen grades: here from a
/// real week-3 grading run's rows and details (feedback/tests/fixtures).
#[test]
fn the_class_page_is_made_from_the_chosen_grades_and_served_sandboxed() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../feedback/tests/fixtures/runs-03-mmm-tiled");
    let feedback = std::path::Path::new(common::BIN).with_file_name("feedback");
    assert!(
        feedback.is_file(),
        "{} is missing: build the workspace first",
        feedback.display()
    );
    let mut course = Course::new("class", "");
    course.make_tokens(&["--all-students", "--teacher", "--worker", "w"]);
    course.start_with_env(
        &["--workers", "0"],
        &[("LAB_BIN_DIR", feedback.parent().unwrap().to_str().unwrap())],
    );
    let (worker, teacher) = (course.token("w"), course.token("teacher"));
    let csv = std::fs::read_to_string(fixture.join("grades.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap().to_string();
    let header = header.strip_suffix(",most like").unwrap_or(&header).to_string();
    let fields = |line: &str| grader::csv::record(line).unwrap();
    for (student, index) in [("s1", 0), ("s2", 1)] {
        let row = lines.next().unwrap();
        let mut values = fields(row);
        values.truncate(fields(&header).len());
        let row: Vec<String> = values.iter().map(|value| grader::csv::field(value)).collect();
        let id = submit(&course, &course.token(student), WEEK, b"__global__").json()["id"]
            .as_i64()
            .unwrap();
        let details = std::fs::read_to_string(fixture.join(format!("{index}.json"))).unwrap();
        let score: f64 = values.last().unwrap().parse().unwrap();
        let grade = serde_json::json!({ "state": "graded", "header": header, "row": row.join(","), "score": score,
            "passing": false, "ratio": null, "kept": "", "page": null, "details": details });
        let (_, report) = grade_next(&course, &worker, grade);
        assert_eq!(report.status, 200, "submission {id}: {}", report.body);
    }
    let index = get(&course, &teacher, "/admin/weeks/03-mmm-tiled/class/index.html");
    assert_eq!(index.status, 200, "{}", index.body);
    assert!(index.header("content-security-policy").unwrap().starts_with("sandbox;"));
    assert!(
        index.body.contains("Week 03-mmm-tiled: 2 submissions"),
        "{}",
        index.body
    );
    let page = index
        .body
        .split("href=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let student = get(&course, &teacher, &format!("/admin/weeks/03-mmm-tiled/class/{page}"));
    assert!(student.body.contains("Feedback for"), "{page}: {}", student.body);
    for refused in ["..%2Fcourse.toml", ".hidden.html", "index.txt"] {
        assert_eq!(
            get(&course, &teacher, &format!("/admin/weeks/03-mmm-tiled/class/{refused}")).status,
            404,
            "{refused}"
        );
    }
    assert_eq!(
        get(
            &course,
            &course.token("s1"),
            "/admin/weeks/03-mmm-tiled/class/index.html"
        )
        .status,
        403
    );
}

/// Made-up tokens are each a new caller with a bucket of their own, but not a new address: one
/// address carries at most 50 callers' rates. Here a caller's rate is 0.1 a second (bursts of 1), an
/// address's 5 (bursts of 20).
#[test]
fn made_up_tokens_from_one_address_still_meet_the_address_limit() {
    let mut course = Course::new("flood", "[limits]\nrequests_per_second = 0.1\n");
    course.make_tokens(&["--all-students"]);
    course.start(&["--workers", "0"]);
    let started = std::time::Instant::now();
    let statuses: Vec<u16> = (0..100)
        .map(|n| get(&course, &format!("made-up-{n}"), "/api/submissions").status)
        .collect();
    // The address's bucket: 20 at once and 5 a second since; every other answer 429.
    let allowed = 20.0 + 5.0 * started.elapsed().as_secs_f64();
    let passed = statuses.iter().filter(|status| **status != 429).count();
    assert!(statuses[..15].iter().all(|status| *status == 401), "{statuses:?}");
    assert!(
        passed as f64 <= allowed + 1.0,
        "{passed} passed, {allowed:.1} allowed: {statuses:?}"
    );
    // A student's own bucket is another, of one request at once.
    std::thread::sleep(std::time::Duration::from_secs(5));
    let ann = course.token("s1");
    let own: Vec<u16> = (0..2).map(|_| get(&course, &ann, "/api/submissions").status).collect();
    assert_eq!(own, [200, 429]);
}

//! The web pages as a browser uses them: sign in with a token, a session cookie, forms that need
//! their session's CSRF token and the server's own origin.

mod common;

use common::{request, Course};

/// Signs in with `token`: the session cookie.
fn sign_in(course: &Course, token: &str) -> String {
    let answer = request(
        "POST",
        &format!("{}/login", course.url),
        &[("Content-Type", "application/x-www-form-urlencoded")],
        format!("token={token}").as_bytes(),
    );
    assert_eq!(answer.status, 303, "{}", answer.body);
    let cookie = answer.header("set-cookie").unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    cookie.split(';').next().unwrap().to_string()
}

/// The CSRF token in a page's forms.
fn csrf_of(page: &str) -> String {
    let at = page.find("name=\"csrf\" value=\"").unwrap() + 19;
    page[at..at + 64].to_string()
}

#[test]
fn forms_need_their_sessions_csrf_token_and_this_servers_origin() {
    let mut course = Course::new("web", "");
    course.make_tokens(&["--all-students"]);
    course.start(&["--workers", "0"]);
    let wrong = request(
        "POST",
        &format!("{}/login", course.url),
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"token=abc",
    );
    assert!(wrong.status == 200 && wrong.body.contains("Not signed in") && wrong.header("set-cookie").is_none());
    let (ann, bob) = (
        sign_in(&course, &course.token("s1")),
        sign_in(&course, &course.token("s2")),
    );
    let home = request("GET", &format!("{}/", course.url), &[("Cookie", &ann)], b"");
    assert!(home.body.contains("Signed in as ann (s1)"), "{}", home.body);
    assert!(home
        .header("content-security-policy")
        .unwrap()
        .contains("default-src 'none'"));
    let csrf = csrf_of(&home.body);
    let bobs = csrf_of(&request("GET", &format!("{}/", course.url), &[("Cookie", &bob)], b"").body);
    let form = ("Content-Type", "application/x-www-form-urlencoded");
    let host = format!("127.0.0.1:{}", course.port);
    let origin = format!("http://{host}");
    let post = |cookie: &str, body: String, origin: &str| {
        request(
            "POST",
            &format!("{}/alias", course.url),
            &[("Cookie", cookie), form, ("Origin", origin)],
            body.as_bytes(),
        )
    };
    assert_eq!(post(&ann, "alias=fast".into(), &origin).status, 403, "no CSRF token");
    assert_eq!(
        post(&ann, format!("csrf={bobs}&alias=fast"), &origin).status,
        403,
        "another session's"
    );
    assert_eq!(
        post(&ann, format!("csrf={csrf}&alias=fast"), "http://evil.example").status,
        403,
        "another site"
    );
    assert_eq!(post(&ann, format!("csrf={csrf}&alias=fast"), &origin).status, 303);
    assert_eq!(
        post(&bob, format!("csrf={bobs}&alias=fast"), &origin).status,
        409,
        "Ann's alias"
    );
    assert_eq!(
        post(&bob, format!("csrf={bobs}&alias=ann"), &origin).status,
        400,
        "a student's name"
    );
    assert_eq!(
        post(&bob, format!("csrf={bobs}&alias=ANN"), &origin).status,
        400,
        "in other letters"
    );
    assert_eq!(
        post(&bob, format!("csrf={bobs}&alias=fast+(you)"), &origin).status,
        400,
        "the page's words"
    );
    // The API is no way around the forms: a browser's cookie is no key there.
    let through_api = request(
        "POST",
        &format!("{}/api/weeks/03-mmm-tiled/submissions", course.url),
        &[("Cookie", &ann), ("Content-Type", "text/plain")],
        b"__global__ void mmm() {}",
    );
    assert_eq!(through_api.status, 401, "{}", through_api.body);
    let home = request("GET", &format!("{}/", course.url), &[("Cookie", &ann)], b"");
    assert!(home.body.contains("Yours: fast"), "{}", home.body);
    // A new token for Bob ends the sessions of his old one.
    course.make_tokens(&["--student", "s2"]);
    let home = request("GET", &format!("{}/", course.url), &[("Cookie", &bob)], b"");
    assert!(home.body.contains("Sign in with the token"), "{}", home.body);
    // Signed out, the cookie is worth nothing.
    let out = request(
        "POST",
        &format!("{}/logout", course.url),
        &[("Cookie", &ann), form, ("Origin", &origin)],
        format!("csrf={csrf}").as_bytes(),
    );
    assert_eq!(out.status, 303);
    let home = request("GET", &format!("{}/", course.url), &[("Cookie", &ann)], b"");
    assert!(home.body.contains("Sign in with the token"), "{}", home.body);
}

#[test]
fn an_upload_form_queues_the_file_and_its_page_shows_the_place_in_the_queue() {
    let mut course = Course::new("upload", "");
    course.make_tokens(&["--all-students"]);
    course.start(&["--workers", "0"]);
    let ann = sign_in(&course, &course.token("s1"));
    let csrf = csrf_of(&request("GET", &format!("{}/", course.url), &[("Cookie", &ann)], b"").body);
    let boundary = "XyZ";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"mmm.cu\"\r\n\r\n__global__ void mmm() {{}}\r\n--{boundary}--\r\n"
    );
    let content_type = format!("multipart/form-data; boundary={boundary}");
    let answer = request(
        "POST",
        &format!("{}/weeks/03-mmm-tiled/submit", course.url),
        &[("Cookie", &ann), ("Content-Type", &content_type)],
        body.as_bytes(),
    );
    assert_eq!(answer.status, 303, "{}", answer.body);
    let location = answer.header("location").unwrap().to_string();
    let page = request("GET", &format!("{}{location}", course.url), &[("Cookie", &ann)], b"");
    assert!(
        page.body.contains("queued: next") && page.body.contains("http-equiv=\"refresh\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("__global__ void mmm()"), "{}", page.body);
    let without = body.replace(&csrf, &"0".repeat(64));
    let answer = request(
        "POST",
        &format!("{}/weeks/03-mmm-tiled/submit", course.url),
        &[("Cookie", &ann), ("Content-Type", &content_type)],
        without.as_bytes(),
    );
    assert_eq!(answer.status, 403);
}

#[test]
fn the_teacher_signs_in_to_the_admin_page_and_regrades_a_week_from_it() {
    let mut course = Course::new("admin", "");
    course.make_tokens(&["--all-students", "--teacher"]);
    course.start(&["--workers", "0"]);
    let student = sign_in(&course, &course.token("s1"));
    assert_eq!(
        request("GET", &format!("{}/admin", course.url), &[("Cookie", &student)], b"").status,
        403
    );
    let teacher = sign_in(&course, &course.token("teacher"));
    let admin = request("GET", &format!("{}/admin", course.url), &[("Cookie", &teacher)], b"");
    assert!(
        admin.body.contains("Queue and failed jobs") && admin.body.contains("03-mmm-tiled"),
        "{}",
        admin.body
    );
    let csrf = csrf_of(&admin.body);
    let origin = format!("http://127.0.0.1:{}", course.port);
    let regrade = |cookie: &str, csrf: &str| {
        request(
            "POST",
            &format!("{}/admin/weeks/03-mmm-tiled/regrade", course.url),
            &[
                ("Cookie", cookie),
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Origin", &origin),
            ],
            format!("csrf={csrf}").as_bytes(),
        )
    };
    let students_csrf = csrf_of(&request("GET", &format!("{}/", course.url), &[("Cookie", &student)], b"").body);
    assert_eq!(regrade(&student, &students_csrf).status, 403);
    assert_eq!(regrade(&teacher, &csrf).status, 303);
    assert_eq!(
        common::count(
            &course.database(),
            "SELECT round FROM rounds WHERE week = '03-mmm-tiled'"
        ),
        2
    );
}

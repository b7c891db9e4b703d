//! The web pages: sign-in with a token, a student's weeks and submissions with an upload form, a
//! submission's verdicts and feedback page (with its place in the queue while it waits), the
//! leaderboards, and the teacher's admin page (queue, workers, failed jobs, regrade, gradebook).
//!
//! Plain HTML, no script: every value is escaped, a page that waits reloads itself, and the feedback
//! program's page is served under a Content-Security-Policy sandbox, so nothing a submission prints
//! runs as code in a student's browser.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Multipart, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use grader::csv::record;
use grader::weights::is_rule;
use serde::Deserialize;

use crate::auth;
use crate::gradebook;
use crate::server::{cookie, fail, now, App, Failure};
use crate::store::{Role, Seen, Who};

/// How long a browser stays signed in.
const SESSION_SECONDS: i64 = 12 * 3600;

pub fn routes(upload_limit: usize) -> Router<Arc<App>> {
    Router::new()
        .route("/", get(home))
        .route("/login", post(login))
        .route("/logout", post(logout))
        .route("/alias", post(alias))
        .route("/weeks/{week}/submit", post(submit))
        .route("/weeks/{week}/leaderboard", get(leaderboard))
        .route("/submissions/{id}", get(submission))
        .route("/submissions/{id}/feedback", get(feedback))
        .route("/admin", get(admin))
        .route("/admin/weeks/{week}/regrade", post(regrade))
        .route("/admin/weeks/{week}/gradebook.csv", get(gradebook_csv))
        .route("/admin/weeks/{week}/class/{page}", get(class_page))
        .layer(DefaultBodyLimit::max(upload_limit))
}

/// `text` safe anywhere in HTML, attributes included.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}\
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}\
.PASS{background:#dfd}.FAIL,.FAULT{background:#fdd}.MACHINE{background:#ffd}pre{background:#f6f6f6;padding:.6rem;overflow-x:auto}\
form{margin:.5rem 0}.note{color:#555}";

/// A whole page; `refresh` reloads it every so many seconds (a submission waiting in the queue).
fn page(title: &str, refresh: Option<u32>, body: &str) -> Response {
    let refresh = refresh.map_or(String::new(), |seconds| {
        format!("<meta http-equiv=\"refresh\" content=\"{seconds}\">")
    });
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{refresh}<title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n",
        escape(title)
    );
    (
        [(
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        )],
        Html(html),
    )
        .into_response()
}

/// A page of the feedback program's, served sandboxed. It escapes what it shows; the sandbox is the
/// second wall: no script, no form, no request anywhere, whatever the page holds.
fn sandboxed(html: String) -> Response {
    let policy = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:";
    ([(header::CONTENT_SECURITY_POLICY, policy)], Html(html)).into_response()
}

/// A form's CSRF field for `session`.
fn csrf_field(app: &App, session: &Option<String>) -> String {
    let token = session
        .as_deref()
        .map_or(String::new(), |session| auth::csrf(&app.secret, session));
    format!("<input type=\"hidden\" name=\"csrf\" value=\"{token}\">")
}

/// A form posted from a browser: its session's CSRF token, and its Origin (where sent) this server.
fn check_form(app: &App, headers: &HeaderMap, session: &Option<String>, csrf: Option<&str>) -> Result<(), Failure> {
    same_origin(headers)?;
    let Some(session) = session else {
        return Ok(()); // A bearer token: no cookie a browser could send on another site's behalf.
    };
    if csrf.is_some_and(|given| auth::csrf_holds(&app.secret, session, given)) {
        Ok(())
    } else {
        Err(fail(
            StatusCode::FORBIDDEN,
            "the form is stale or from another site (CSRF check): reload the page",
        ))
    }
}

/// A browser's Origin header, where it sends one, must name the host it posts to.
fn same_origin(headers: &HeaderMap) -> Result<(), Failure> {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|value| value.to_str().ok()) else {
        return Ok(());
    };
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    let origin_host = origin.split_once("://").map_or("", |(_, rest)| rest);
    if origin_host == host {
        Ok(())
    } else {
        Err(fail(
            StatusCode::FORBIDDEN,
            format!("a form from {origin} may not post here"),
        ))
    }
}

/// The header with every case's name (not the rules') as "case N": a week with hidden cases.
pub fn hidden_header(header: &str) -> String {
    let Some(names) = record(header) else {
        return header.to_string();
    };
    let end = names.iter().position(|name| name == "passed").unwrap_or(names.len());
    let mut case = 0;
    let shown: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(at, name)| {
            if at >= 2 && at < end && !is_rule(name) {
                case += 1;
                grader::csv::value(&format!("case {case}"))
            } else {
                grader::csv::value(name)
            }
        })
        .collect();
    shown.join(",")
}

#[derive(Deserialize)]
struct Login {
    token: String,
}

async fn login(State(app): State<Arc<App>>, headers: HeaderMap, Form(form): Form<Login>) -> Result<Response, Failure> {
    same_origin(&headers)?;
    let hash = auth::hashed(form.token.trim());
    let who = app.db(move |store| store.token(&hash)).await?;
    let Some(who) = who.filter(|who| who.role != Role::Worker) else {
        return Ok(page(
            "Not signed in",
            None,
            "<h1>Not signed in</h1><p>That token is not one of this course's. <a href=\"/\">Try again</a>.</p>",
        ));
    };
    let session = auth::random_hex()?;
    let hash = auth::hashed(&session);
    let stored = who.clone();
    app.db(move |store| {
        let now = now();
        store.add_session(&hash, &stored, now, now + SESSION_SECONDS * 1000)
    })
    .await?;
    let cookie = format!("session={session}; HttpOnly; SameSite=Strict; Path=/; Max-Age={SESSION_SECONDS}");
    let to = if who.role == Role::Teacher { "/admin" } else { "/" };
    Ok(([(header::SET_COOKIE, cookie)], Redirect::to(to)).into_response())
}

#[derive(Deserialize)]
struct Csrf {
    csrf: Option<String>,
}

async fn logout(State(app): State<Arc<App>>, headers: HeaderMap, Form(form): Form<Csrf>) -> Result<Response, Failure> {
    if let Some(session) = cookie(&headers, "session") {
        check_form(&app, &headers, &Some(session.clone()), form.csrf.as_deref())?;
        let hash = auth::hashed(&session);
        app.db(move |store| store.end_session(&hash)).await?;
    }
    let cookie = "session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0";
    Ok(([(header::SET_COOKIE, cookie)], Redirect::to("/")).into_response())
}

/// A time of the database (Unix milliseconds) in words.
fn when(at: i64) -> String {
    chrono::DateTime::from_timestamp_millis(at).map_or_else(
        || at.to_string(),
        |time| time.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// A submission's state in words, with its place in the queue.
fn state_shown(seen: &Seen) -> String {
    let mut text = match (seen.state.as_str(), seen.position) {
        ("queued", Some(0)) => "queued: next".to_string(),
        ("queued", Some(before)) => format!("queued: {before} before it"),
        ("graded", _) => match seen.score {
            Some(score) => format!("graded: {score:.1}"),
            None => "graded: no score".into(),
        },
        (state, _) => state.to_string(),
    };
    if seen.late {
        text.push_str(" (after the deadline: not counted)");
    }
    text
}

async fn home(State(app): State<Arc<App>>, headers: HeaderMap) -> Result<Response, Failure> {
    let Some((who, session)) = app.caller(&headers).await? else {
        let body = format!(
            "<h1>{}</h1><p>Sign in with the token your teacher gave you.</p>\
             <form method=\"post\" action=\"/login\"><label>Token <input name=\"token\" type=\"password\" size=\"70\" autocomplete=\"off\"></label> \
             <button>Sign in</button></form>",
            escape(&app.course.name)
        );
        return Ok(page(&app.course.name, None, &body));
    };
    if who.role == Role::Teacher {
        return Ok(Redirect::to("/admin").into_response());
    }
    let name = who.name.clone();
    let (seen, alias) = app
        .db(move |store| Ok((store.seen(Some(&name), None)?, store.alias(&name)?)))
        .await?;
    let shown_name = app
        .course
        .student(&who.name)
        .map_or(who.name.as_str(), |student| student.name.as_str());
    let csrf = csrf_field(&app, &session);
    let mut body = format!(
        "<h1>{}</h1><p>Signed in as {} ({}). <form method=\"post\" action=\"/logout\" style=\"display:inline\">{csrf}<button>Sign out</button></form></p>",
        escape(&app.course.name),
        escape(shown_name),
        escape(&who.name)
    );
    body.push_str("<h2>Weeks</h2><table><tr><th>week</th><th>deadline</th><th>hand in</th><th></th></tr>");
    for week in &app.course.weeks {
        let name = week.week.name;
        let board = if week.leaderboard {
            format!("<a href=\"/weeks/{name}/leaderboard\">leaderboard</a>")
        } else {
            String::new()
        };
        body.push_str(&format!(
            "<tr><td>{name}</td><td>{}{}</td><td><form method=\"post\" action=\"/weeks/{name}/submit\" enctype=\"multipart/form-data\">{csrf}\
             <input type=\"file\" name=\"file\" accept=\".cu\" required> <button>Submit</button></form></td><td>{board}</td></tr>",
            escape(&week.deadline_shown),
            if now() / 1000 > week.deadline { " (passed)" } else { "" }
        ));
    }
    body.push_str("</table><h2>Your submissions</h2>");
    if seen.is_empty() {
        body.push_str("<p>None yet.</p>");
    } else {
        body.push_str("<table><tr><th>#</th><th>week</th><th>handed in</th><th>state</th></tr>");
        for seen in &seen {
            body.push_str(&format!(
                "<tr><td><a href=\"/submissions/{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&seen.week),
                when(seen.at),
                escape(&state_shown(seen)),
                id = seen.id
            ));
        }
        body.push_str("</table>");
    }
    body.push_str(&format!(
        "<h2>Leaderboard alias</h2><p>The leaderboards show an alias, never your name. Yours: {}</p>\
         <form method=\"post\" action=\"/alias\">{csrf}<input name=\"alias\" maxlength=\"24\" required> <button>Set</button></form>",
        alias.as_deref().map_or("none (the leaderboards show you as \"(no alias)\")".to_string(), escape)
    ));
    let waiting = seen
        .iter()
        .any(|seen| seen.state == "queued" || seen.state == "running");
    Ok(page(&app.course.name, waiting.then_some(5), &body))
}

async fn submit(
    State(app): State<Arc<App>>,
    Path(week): Path<String>,
    headers: HeaderMap,
    mut form: Multipart,
) -> Result<Response, Failure> {
    let (who, session) = app.signed_in(&headers, Role::Student).await?;
    let mut fields: HashMap<String, Vec<u8>> = HashMap::new();
    while let Some(part) = form
        .next_field()
        .await
        .map_err(|err| fail(StatusCode::BAD_REQUEST, format!("the form: {err}")))?
    {
        let name = part.name().unwrap_or("").to_string();
        let bytes = part
            .bytes()
            .await
            .map_err(|err| fail(StatusCode::PAYLOAD_TOO_LARGE, format!("the form: {err}")))?;
        fields.insert(name, bytes.to_vec());
    }
    let csrf = fields
        .get("csrf")
        .map(|bytes| String::from_utf8_lossy(bytes).into_owned());
    check_form(&app, &headers, &session, csrf.as_deref())?;
    let file = fields.remove("file").unwrap_or_default();
    let (id, _) = app.submit(&who.name, &week, file).await?;
    Ok(Redirect::to(&format!("/submissions/{id}")).into_response())
}

/// The verdict table of a grade: each column of its row under its name, verdicts coloured.
fn verdicts(header: &str, row: &str) -> String {
    let (Some(names), Some(fields)) = (record(header), record(row)) else {
        return format!("<pre>{}</pre>", escape(row));
    };
    let mut table = String::from("<table>");
    for (name, value) in names.iter().zip(&fields).skip(2) {
        table.push_str(&format!(
            "<tr><th>{}</th><td class=\"{}\">{}</td></tr>",
            escape(name),
            escape(value),
            escape(value)
        ));
    }
    table.push_str("</table>");
    table
}

async fn submission(State(app): State<Arc<App>>, Path(id): Path<i64>, headers: HeaderMap) -> Result<Response, Failure> {
    let Some((who, _)) = app.caller(&headers).await? else {
        return Ok(Redirect::to("/").into_response());
    };
    let (_, week) = app.visible(&who, id).await?;
    let (seen, graded) = app
        .db(move |store| Ok((store.seen(None, Some(id))?, store.graded(id)?)))
        .await?;
    let (Some(seen), Some((file, grade))) = (seen.into_iter().next(), graded) else {
        return Err(fail(StatusCode::NOT_FOUND, format!("no submission {id}")));
    };
    let mut body = format!(
        "<p><a href=\"/\">back</a></p><h1>Submission {id}: {}</h1><p>Handed in {}. <strong>{}</strong></p>",
        escape(&week),
        when(seen.at),
        escape(&state_shown(&seen))
    );
    if seen.state == "queued" || seen.state == "running" {
        body.push_str("<p class=\"note\">This page reloads itself every 3 seconds: the verdicts appear here.</p>");
    }
    if let Some(why) = seen.why.as_deref().filter(|_| seen.state != "graded") {
        body.push_str(&format!("<p class=\"note\">{}</p>", escape(why)));
    }
    if let Some(grade) = grade.map(|grade| app.shown_grade(&who, &week, grade)) {
        if grade.page.is_some() {
            body.push_str(&format!(
                "<p><a href=\"/submissions/{id}/feedback\">The feedback page</a></p>"
            ));
        }
        body.push_str(&verdicts(&grade.header, &grade.row));
        body.push_str(&format!(
            "<details><summary>The lab's output</summary><pre>{}</pre></details>",
            escape(&grade.kept)
        ));
    }
    body.push_str(&format!(
        "<details><summary>The file handed in</summary><pre>{}</pre></details>",
        escape(&String::from_utf8_lossy(&file))
    ));
    let waiting = seen.state == "queued" || seen.state == "running";
    Ok(page(&format!("Submission {id}"), waiting.then_some(3), &body))
}

async fn feedback(State(app): State<Arc<App>>, Path(id): Path<i64>, headers: HeaderMap) -> Result<Response, Failure> {
    let Some((who, _)) = app.caller(&headers).await? else {
        return Ok(Redirect::to("/").into_response());
    };
    app.visible(&who, id).await?;
    let graded = app.db(move |store| store.graded(id)).await?;
    let Some(page) = graded.and_then(|(_, grade)| grade?.page) else {
        return Err(fail(
            StatusCode::NOT_FOUND,
            format!("submission {id} has no feedback page (yet)"),
        ));
    };
    Ok(sandboxed(page))
}

#[derive(Deserialize)]
struct Alias {
    csrf: Option<String>,
    alias: String,
}

async fn alias(State(app): State<Arc<App>>, headers: HeaderMap, Form(form): Form<Alias>) -> Result<Response, Failure> {
    let (who, session) = app.signed_in(&headers, Role::Student).await?;
    check_form(&app, &headers, &session, form.csrf.as_deref())?;
    let alias = form.alias.trim().to_string();
    if alias.is_empty() || alias.chars().count() > 24 || alias.chars().any(char::is_control) {
        return Err(fail(StatusCode::BAD_REQUEST, "an alias is 1 to 24 characters"));
    }
    // Nobody poses as a classmate or as the page's own words ("(you)", "(no alias)").
    let lower = alias.to_lowercase();
    let taken = |text: &str| text.to_lowercase() == lower;
    let students = &app.course.students;
    if alias.contains(['(', ')'])
        || students
            .iter()
            .any(|student| taken(&student.name) || taken(&student.id))
    {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            "an alias may not be a student's name or id, nor hold brackets",
        ));
    }
    let set = app.db(move |store| store.set_alias(&who.name, &alias)).await?;
    if !set {
        return Err(fail(StatusCode::CONFLICT, "another student has that alias"));
    }
    Ok(Redirect::to("/").into_response())
}

async fn leaderboard(
    State(app): State<Arc<App>>,
    Path(week): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let Some((who, _)) = app.caller(&headers).await? else {
        return Ok(Redirect::to("/").into_response());
    };
    let Some(course_week) = app
        .course
        .week(&week)
        .filter(|week| week.leaderboard || who.role == Role::Teacher)
    else {
        return Err(fail(StatusCode::NOT_FOUND, format!("week {week} has no leaderboard")));
    };
    let name = course_week.week.name;
    let (grades, aliases) = app
        .db(move |store| {
            let grades = store.week_grades(name)?;
            let aliases: Vec<(String, Option<String>)> = grades
                .iter()
                .map(|each| Ok((each.student.clone(), store.alias(&each.student)?)))
                .collect::<anyhow::Result<_>>()?;
            Ok((grades, aliases))
        })
        .await?;
    let alias_of = |student: &str| {
        aliases
            .iter()
            .find(|(id, _)| id == student)
            .and_then(|(_, alias)| alias.clone())
    };
    let mut body = format!(
        "<p><a href=\"/\">back</a></p><h1>Leaderboard: {name}</h1><p>Passing submissions before the deadline, \
         each student's fastest; time against our solution's on the same GPU (below 1: faster than ours).</p>\
         <table><tr><th>place</th><th>who</th><th>time against ours</th></tr>"
    );
    for (place, (student, ratio)) in gradebook::leaderboard(&grades).iter().enumerate() {
        let shown = match (alias_of(student), who.role == Role::Teacher || *student == who.name) {
            (Some(alias), _) => escape(&alias),
            (None, true) => format!("({}, no alias)", escape(student)),
            (None, false) => "(no alias)".into(),
        };
        let mine = if *student == who.name { " (you)" } else { "" };
        body.push_str(&format!(
            "<tr><td>{}</td><td>{shown}{mine}</td><td>{ratio:.3}</td></tr>",
            place + 1
        ));
    }
    body.push_str("</table>");
    Ok(page(&format!("Leaderboard {name}"), None, &body))
}

async fn admin(State(app): State<Arc<App>>, headers: HeaderMap) -> Result<Response, Failure> {
    let Some((who, session)) = app.caller(&headers).await? else {
        return Ok(Redirect::to("/").into_response());
    };
    if who.role != Role::Teacher {
        return Err(fail(StatusCode::FORBIDDEN, "the admin page is the teacher's"));
    }
    let (queue, workers) = app.db(|store| Ok((store.queue()?, store.workers()?))).await?;
    let csrf = csrf_field(&app, &session);
    let mut body = format!(
        "<h1>{}: admin</h1><form method=\"post\" action=\"/logout\">{csrf}<button>Sign out</button></form><h2>Weeks</h2><table>\
         <tr><th>week</th><th>deadline</th><th>choose</th><th></th><th></th><th></th><th></th></tr>",
        escape(&app.course.name)
    );
    for week in &app.course.weeks {
        let name = week.week.name;
        let class = if week.week.is_program() {
            String::new()
        } else {
            format!("<a href=\"/admin/weeks/{name}/class/index.html\">class page</a>")
        };
        body.push_str(&format!(
            "<tr><td>{name}</td><td>{}</td><td>{:?}</td><td><a href=\"/admin/weeks/{name}/gradebook.csv\">gradebook</a></td><td>{class}</td>\
             <td><a href=\"/weeks/{name}/leaderboard\">leaderboard</a></td><td><form method=\"post\" action=\"/admin/weeks/{name}/regrade\">{csrf}<button>Regrade</button></form></td></tr>",
            escape(&week.deadline_shown),
            week.choose
        ));
    }
    body.push_str("</table><h2>Workers</h2><table><tr><th>worker</th><th>last seen</th><th>job</th></tr>");
    for (name, seen, job) in &workers {
        body.push_str(&format!(
            "<tr><td>{}</td><td>{} s ago</td><td>{}</td></tr>",
            escape(name),
            (now() - seen) / 1000,
            job.map_or(String::new(), |job| job.to_string())
        ));
    }
    body.push_str("</table><h2>Queue and failed jobs</h2><table><tr><th>job</th><th>student</th><th>week</th><th>state</th><th>worker</th><th>attempts</th><th>why</th></tr>");
    for queued in &queue {
        body.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            queued.job,
            escape(&queued.student),
            escape(&queued.week),
            escape(&queued.state),
            escape(queued.worker.as_deref().unwrap_or("")),
            queued.attempts,
            escape(queued.why.as_deref().unwrap_or(""))
        ));
    }
    body.push_str("</table>");
    Ok(page("admin", Some(10), &body))
}

async fn teacher(app: &Arc<App>, headers: &HeaderMap) -> Result<(Who, Option<String>), Failure> {
    app.signed_in(headers, Role::Teacher).await
}

async fn regrade(
    State(app): State<Arc<App>>,
    Path(week): Path<String>,
    headers: HeaderMap,
    Form(form): Form<Csrf>,
) -> Result<Response, Failure> {
    let (_, session) = teacher(&app, &headers).await?;
    check_form(&app, &headers, &session, form.csrf.as_deref())?;
    let Some(name) = app.course.week(&week).map(|week| week.week.name) else {
        return Err(fail(StatusCode::NOT_FOUND, format!("no week {week}")));
    };
    app.db(move |store| store.regrade(name, now())).await?;
    Ok(Redirect::to("/admin").into_response())
}

async fn gradebook_csv(
    State(app): State<Arc<App>>,
    Path(week): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    teacher(&app, &headers).await?;
    let Some(course_week) = app.course.week(&week).cloned() else {
        return Err(fail(StatusCode::NOT_FOUND, format!("no week {week}")));
    };
    let name = course_week.week.name;
    let grades = app.db(move |store| store.week_grades(name)).await?;
    let text = gradebook::csv(&app.course, &course_week, &grades);
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], text).into_response())
}

/// A page of the week's class page (`index.html`, a student's page, a side-by-side page), made from the
/// chosen grades where the week's grades changed.
async fn class_page(
    State(app): State<Arc<App>>,
    Path((week, page)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    teacher(&app, &headers).await?;
    let Some(course_week) = app.course.week(&week).filter(|week| !week.week.is_program()).cloned() else {
        return Err(fail(
            StatusCode::NOT_FOUND,
            format!("no class page for week {week} (a program week has none yet)"),
        ));
    };
    // Only the feedback program's own names: no path, nothing hidden.
    let safe = page.ends_with(".html")
        && !page.starts_with('.')
        && page.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if !safe {
        return Err(fail(StatusCode::NOT_FOUND, format!("no page {page}")));
    }
    let made = {
        let app = Arc::clone(&app);
        tokio::task::spawn_blocking(move || crate::class::pages(&app, &course_week))
            .await
            .map_err(|err| anyhow::anyhow!("the class page's task failed: {err}"))?
    };
    let folder = made.map_err(|err| fail(StatusCode::NOT_FOUND, format!("{err:#}")))?;
    let html = std::fs::read_to_string(folder.join(&page))
        .map_err(|_| fail(StatusCode::NOT_FOUND, format!("no page {page}")))?;
    Ok(sandboxed(html))
}

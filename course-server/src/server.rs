//! The HTTP server: who calls (a token, or a browser's session), the limits, and the routes of the
//! students' JSON API and the workers' queue API. The web pages are [`crate::web`]'s; the database
//! is [`crate::store`]'s, reached from a blocking thread so that SQLite's fsyncs never hold up the
//! runtime.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Extension, Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use crate::auth::{self, Buckets};
use crate::course::Course;
use crate::store::{Claimed, Grade, Outcome, Reported, Role, Seen, Store, Who};

/// What every request shares.
pub struct App {
    pub course: Course,
    pub store: Mutex<Store>,
    /// The key of the CSRF tokens, kept in the database so that a restart keeps forms valid.
    pub secret: String,
    /// Request rates per caller (token or session, else address) ...
    pub buckets: Buckets,
    /// ... and per address, [`ADDRESS_SHARE`] times as many: made-up tokens, each a fresh caller,
    /// still come from one address.
    pub address_buckets: Buckets,
}

/// Unix milliseconds now: the database's clock.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as i64)
}

/// A request refused: its status and one line saying why.
#[derive(Debug)]
pub struct Failure(pub StatusCode, pub String);

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        (
            self.0,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!("{}\n", self.1),
        )
            .into_response()
    }
}

impl From<anyhow::Error> for Failure {
    fn from(err: anyhow::Error) -> Failure {
        eprintln!("course-server: {err:#}");
        Failure(StatusCode::INTERNAL_SERVER_ERROR, "the server failed; try again".into())
    }
}

pub fn fail(status: StatusCode, why: impl Into<String>) -> Failure {
    Failure(status, why.into())
}

impl App {
    /// Runs `work` on the database in a blocking thread.
    pub async fn db<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&mut Store) -> anyhow::Result<T> + Send + 'static,
    ) -> Result<T, Failure> {
        let app = Arc::clone(self);
        let done = tokio::task::spawn_blocking(move || {
            let mut store = app.store.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            work(&mut store)
        })
        .await
        .map_err(|err| anyhow::anyhow!("a database task failed: {err}"))?;
        Ok(done?)
    }

    /// The caller: a bearer token, else a browser's session cookie (and that session, for CSRF).
    pub async fn caller(self: &Arc<Self>, headers: &HeaderMap) -> Result<Option<(Who, Option<String>)>, Failure> {
        if let Some(token) = bearer(headers) {
            let hash = auth::hashed(&token);
            return Ok(self.db(move |store| store.token(&hash)).await?.map(|who| (who, None)));
        }
        let Some(session) = cookie(headers, "session") else {
            return Ok(None);
        };
        let hash = auth::hashed(&session);
        let who = self.db(move |store| store.session(&hash, now())).await?;
        Ok(who.map(|who| (who, Some(session))))
    }

    /// The caller, who must be signed in with `role`.
    pub async fn signed_in(
        self: &Arc<Self>,
        headers: &HeaderMap,
        role: Role,
    ) -> Result<(Who, Option<String>), Failure> {
        match self.caller(headers).await? {
            Some((who, session)) if who.role == role => Ok((who, session)),
            Some(_) => Err(fail(
                StatusCode::FORBIDDEN,
                format!("this is for a {}'s token only", role.word()),
            )),
            None => Err(fail(
                StatusCode::UNAUTHORIZED,
                "sign in first: a token in 'Authorization: Bearer TOKEN', or on the web page",
            )),
        }
    }

    /// Stores `student`'s submission for `week`: its id and the jobs before it, or why not.
    pub async fn submit(self: &Arc<Self>, student: &str, week: &str, file: Vec<u8>) -> Result<(i64, i64), Failure> {
        let Some(course_week) = self.course.week(week) else {
            return Err(fail(StatusCode::NOT_FOUND, format!("no week {week} in this course")));
        };
        let limit = self.course.limits.upload_bytes;
        if file.is_empty() {
            return Err(fail(StatusCode::BAD_REQUEST, "the file is empty"));
        }
        if file.len() > limit {
            return Err(fail(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the file has {} bytes, over the course's limit of {limit}", file.len()),
            ));
        }
        let late = now() / 1000 > course_week.deadline;
        let per_hour = self.course.limits.per_hour;
        let (student, week) = (student.to_string(), week.to_string());
        let stored = self
            .db(move |store| store.submit((&student, &week, &file), late, per_hour, now()))
            .await?;
        stored.map_err(|why| fail(StatusCode::TOO_MANY_REQUESTS, why))
    }

    /// The submission `id` if `who` may see it (its student, or the teacher).
    pub async fn visible(self: &Arc<Self>, who: &Who, id: i64) -> Result<(String, String), Failure> {
        let owner = self.db(move |store| store.owner(id)).await?;
        match owner {
            Some((student, week))
                if who.role == Role::Teacher || (who.role == Role::Student && student == who.name) =>
            {
                Ok((student, week))
            }
            // Another student's submission is as missing as one that never was.
            _ => Err(fail(StatusCode::NOT_FOUND, format!("no submission {id} of yours"))),
        }
    }

    /// A grade as `who` may see it: a week with hidden cases shows its cases' verdicts only, under
    /// numbers, and none of the lab's output.
    pub fn shown_grade(&self, who: &Who, week: &str, mut grade: Grade) -> Grade {
        let hidden = self.course.week(week).is_some_and(|week| week.hide_cases);
        if hidden && who.role == Role::Student {
            grade.header = crate::web::hidden_header(&grade.header);
            grade.kept = "(the lab's output is not shown for a week with hidden cases)".into();
        }
        grade
    }
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value.strip_prefix("Bearer ").map(|token| token.trim().to_string())
}

/// The value of cookie `name`.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_string())
}

/// The server's routes, limits and all.
pub fn router(app: Arc<App>) -> Router {
    let upload_limit = app.course.limits.upload_bytes + 64 * 1024;
    // The API takes tokens only, checked before a body is read: a browser's cookie is no key
    // here, so another page cannot post through it (CSRF), and a stranger's body is never read.
    let api = Router::new()
        .route("/api/weeks/{week}/submissions", post(api_submit))
        .route("/api/submissions", get(api_list))
        .route("/api/submissions/{id}", get(api_one))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&app), with_token))
        .layer(DefaultBodyLimit::max(upload_limit));
    // A worker's report carries the lab's output and the page: larger than an upload.
    let workers = Router::new()
        .route("/api/worker/claim", post(worker_claim))
        .route("/api/worker/jobs/{id}/file", get(worker_file))
        .route("/api/worker/jobs/{id}/heartbeat", post(worker_heartbeat))
        .route("/api/worker/jobs/{id}/report", post(worker_report))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&app), with_worker_token))
        .layer(DefaultBodyLimit::max(32 << 20));
    Router::new()
        .merge(api)
        .merge(workers)
        .merge(crate::web::routes(upload_limit))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), limit_rate))
        .with_state(app)
}

/// The holder of the request's bearer token, or the answer that refuses it (401).
async fn holder(app: &Arc<App>, headers: &HeaderMap) -> Result<Who, Response> {
    let Some(token) = bearer(headers) else {
        return Err(fail(
            StatusCode::UNAUTHORIZED,
            "the API takes a token: 'Authorization: Bearer TOKEN'",
        )
        .into_response());
    };
    let hash = auth::hashed(&token);
    match app.db(move |store| store.token(&hash)).await {
        Ok(Some(who)) => Ok(who),
        Ok(None) => Err(fail(StatusCode::UNAUTHORIZED, "that token is not one of this course's").into_response()),
        Err(failure) => Err(failure.into_response()),
    }
}

/// An API route's caller: its token's holder, put in the request for the handler.
async fn with_token(State(app): State<Arc<App>>, mut request: Request, next: Next) -> Response {
    match holder(&app, request.headers()).await {
        Ok(who) => {
            request.extensions_mut().insert(who);
            next.run(request).await
        }
        Err(refused) => refused,
    }
}

/// [`with_token`] for the workers' routes: a worker's token, else 403.
async fn with_worker_token(State(app): State<Arc<App>>, mut request: Request, next: Next) -> Response {
    match holder(&app, request.headers()).await {
        Ok(who) if who.role == Role::Worker => {
            request.extensions_mut().insert(who);
            next.run(request).await
        }
        Ok(_) => fail(StatusCode::FORBIDDEN, "this is for a worker's token only").into_response(),
        Err(refused) => refused,
    }
}

/// How many callers' requests one address may carry: a class behind one proxy or NAT.
pub const ADDRESS_SHARE: f64 = 50.0;

/// Who a request is for the rate limit: its token or session (hashed), else its address. A class
/// behind one proxy or NAT shares an address, never a caller's bucket.
fn client(headers: &HeaderMap, address: SocketAddr) -> String {
    match bearer(headers).or_else(|| cookie(headers, "session")) {
        Some(key) => auth::hashed(&key),
        None => address.ip().to_string(),
    }
}

/// Refuses a client over its request rate (429).
async fn limit_rate(
    State(app): State<Arc<App>>,
    ConnectInfo(address): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let ip = address.ip().to_string();
    if !app.address_buckets.take(&ip) || !app.buckets.take(&client(request.headers(), address)) {
        return fail(StatusCode::TOO_MANY_REQUESTS, "too many requests: wait a second").into_response();
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, header::HeaderValue::from_static("DENY"));
    // Not "no-referrer": with it a browser sends "Origin: null" on the server's own forms.
    headers.insert(header::REFERRER_POLICY, header::HeaderValue::from_static("same-origin"));
    response
}

/// The API's student routes are a student's.
fn student_only(who: &Who) -> Result<(), Failure> {
    if who.role == Role::Student {
        Ok(())
    } else {
        Err(fail(StatusCode::FORBIDDEN, "this is for a student's token only"))
    }
}

async fn api_submit(
    State(app): State<Arc<App>>,
    Path(week): Path<String>,
    Extension(who): Extension<Who>,
    body: Bytes,
) -> Result<Response, Failure> {
    student_only(&who)?;
    let (id, position) = app.submit(&who.name, &week, body.to_vec()).await?;
    let answer = serde_json::json!({ "id": id, "position": position, "state": "queued" });
    Ok((StatusCode::ACCEPTED, Json(answer)).into_response())
}

async fn api_list(State(app): State<Arc<App>>, Extension(who): Extension<Who>) -> Result<Json<Vec<Seen>>, Failure> {
    student_only(&who)?;
    Ok(Json(app.db(move |store| store.seen(Some(&who.name), None)).await?))
}

async fn api_one(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
    Extension(who): Extension<Who>,
) -> Result<Json<serde_json::Value>, Failure> {
    let (_, week) = app.visible(&who, id).await?;
    let (seen, graded) = app
        .db(move |store| Ok((store.seen(None, Some(id))?, store.graded(id)?)))
        .await?;
    let grade = graded
        .and_then(|(_, grade)| grade)
        .map(|grade| app.shown_grade(&who, &week, Grade { page: None, ..grade }));
    Ok(Json(serde_json::json!({ "submission": seen.first(), "grade": grade })))
}

/// A worker's claim: its name, and the job's week and cases in the answer.
#[derive(Deserialize)]
struct Claim {
    name: String,
}

async fn worker_claim(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Json(claim): Json<Claim>,
) -> Result<Response, Failure> {
    let name = format!("{}/{}", who.name, claim.name);
    let lease = auth::random_hex()?;
    let claimed: Option<Claimed> = app.db(move |store| store.claim(&name, &lease, now())).await?;
    let Some(claimed) = claimed else {
        return Ok(StatusCode::NO_CONTENT.into_response());
    };
    let week = app.course.week(&claimed.week);
    let student = app
        .course
        .student(&claimed.student)
        .map_or(claimed.student.clone(), |student| student.name.clone());
    Ok(Json(serde_json::json!({
        "job": claimed.job,
        "lease": claimed.lease,
        "submission": claimed.submission,
        "student": student,
        "week": claimed.week,
        "cases": week.and_then(|week| week.cases.clone()),
        "weights": week.and_then(|week| week.weights.clone()),
        "hide_cases": week.is_some_and(|week| week.hide_cases),
        "rule_cap": week.map_or(50.0, |week| week.rule_cap),
        "time_limit": week.map_or(600, |week| week.time_limit),
    }))
    .into_response())
}

#[derive(Deserialize)]
struct LeaseQuery {
    lease: String,
}

async fn worker_file(
    State(app): State<Arc<App>>,
    Path(job): Path<i64>,
    axum::extract::Query(query): axum::extract::Query<LeaseQuery>,
) -> Result<Response, Failure> {
    let file = app.db(move |store| store.leased_file(job, &query.lease)).await?;
    match file {
        Some(file) => Ok(([(header::CONTENT_TYPE, "application/octet-stream")], file).into_response()),
        None => Err(fail(StatusCode::CONFLICT, "this lease no longer holds the job")),
    }
}

async fn worker_heartbeat(
    State(app): State<Arc<App>>,
    Path(job): Path<i64>,
    Json(lease): Json<LeaseQuery>,
) -> Result<StatusCode, Failure> {
    let renewed = app.db(move |store| store.heartbeat(job, &lease.lease, now())).await?;
    if renewed {
        Ok(StatusCode::OK)
    } else {
        Err(fail(
            StatusCode::CONFLICT,
            "this lease no longer holds the job: stop grading it",
        ))
    }
}

/// A worker's report: a grade, or the job given back with why.
#[derive(Deserialize)]
struct Report {
    lease: String,
    grade: Option<Grade>,
    give_back: Option<String>,
}

async fn worker_report(
    State(app): State<Arc<App>>,
    Path(job): Path<i64>,
    Json(report): Json<Report>,
) -> Result<Response, Failure> {
    let outcome = match (report.grade, report.give_back) {
        (Some(grade), None) => Outcome::Grade(grade),
        (None, Some(why)) => Outcome::GiveBack(why),
        _ => {
            return Err(fail(
                StatusCode::BAD_REQUEST,
                "a report holds a grade or give_back, one of them",
            ))
        }
    };
    let lease = report.lease;
    let reported = app.db(move |store| store.report(job, &lease, &outcome, now())).await?;
    match reported {
        Reported::Taken => Ok(Json(serde_json::json!({ "taken": true })).into_response()),
        Reported::Repeated => Ok(Json(serde_json::json!({ "taken": false, "repeated": true })).into_response()),
        Reported::Late => Err(fail(
            StatusCode::CONFLICT,
            "too late: the job's lease ran out and another worker has it",
        )),
    }
}

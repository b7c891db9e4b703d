//! The database: students' tokens and sessions, submissions (the file itself, so that a submission is
//! one transaction), the queue of grading jobs with their leases, and the grades. SQLite in WAL mode
//! with a full fsync at every commit: a submission answered "queued" survives a crash of the server or
//! the machine.
//!
//! The queue's promises: a job is claimed by one worker at a time (a lease, renewed by heartbeats); a
//! worker that stops renewing loses it to the next claim; a result counts only from the lease that
//! holds the job, once (one grade per submission and round, by the schema), so no job is ever graded
//! twice into two grades. Every function takes `now` (Unix milliseconds: a queue's waits are short) so
//! that tests drive the clock.

use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

/// How long a lease lasts without a heartbeat, in milliseconds.
pub const LEASE_MS: i64 = 90_000;
/// The most browser sessions one token holder keeps.
pub const SESSIONS_EACH: i64 = 20;
/// A job is given up after this many workers took it and stopped (died, or the machine failed it).
pub const MAX_ATTEMPTS: i64 = 3;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tokens(hash TEXT PRIMARY KEY, role TEXT NOT NULL, who TEXT NOT NULL, made INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sessions(hash TEXT PRIMARY KEY, role TEXT NOT NULL, who TEXT NOT NULL, expires INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS aliases(student TEXT PRIMARY KEY, alias TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS submissions(id INTEGER PRIMARY KEY, student TEXT NOT NULL, week TEXT NOT NULL,
    at INTEGER NOT NULL, late INTEGER NOT NULL, file BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS submissions_by_student ON submissions(student, at);
CREATE TABLE IF NOT EXISTS rounds(week TEXT PRIMARY KEY, round INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS jobs(id INTEGER PRIMARY KEY, submission INTEGER NOT NULL REFERENCES submissions(id),
    round INTEGER NOT NULL, priority INTEGER NOT NULL, state TEXT NOT NULL, lease TEXT, lease_until INTEGER,
    worker TEXT, attempts INTEGER NOT NULL DEFAULT 0, queued INTEGER NOT NULL, started INTEGER,
    finished INTEGER, why TEXT, UNIQUE(submission, round));
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state, priority, id);
CREATE TABLE IF NOT EXISTS grades(job INTEGER PRIMARY KEY REFERENCES jobs(id), submission INTEGER NOT NULL,
    round INTEGER NOT NULL, state TEXT NOT NULL, header TEXT NOT NULL, row TEXT NOT NULL, score REAL,
    passing INTEGER NOT NULL, ratio REAL, kept BLOB NOT NULL, page BLOB, details BLOB, at INTEGER NOT NULL,
    UNIQUE(submission, round));
CREATE TABLE IF NOT EXISTS job_leases(job INTEGER PRIMARY KEY, last_lease TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS workers(name TEXT PRIMARY KEY, seen INTEGER NOT NULL, job INTEGER);
CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// Who a token or session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Student,
    Teacher,
    Worker,
}

impl Role {
    pub fn word(self) -> &'static str {
        match self {
            Role::Student => "student",
            Role::Teacher => "teacher",
            Role::Worker => "worker",
        }
    }

    fn from_word(word: &str) -> Option<Role> {
        [Role::Student, Role::Teacher, Role::Worker]
            .into_iter()
            .find(|role| role.word() == word)
    }
}

/// A signed-in caller: their role and name (a student's id, a worker's name, "teacher").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Who {
    pub role: Role,
    pub name: String,
}

/// A job handed to a worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    pub job: i64,
    pub lease: String,
    pub submission: i64,
    pub student: String,
    pub week: String,
    pub file: Vec<u8>,
}

/// A worker's result for a job: a grade (the grader's row, the student's doing), or the job given
/// back (the machine's fault: it goes to the queue again, up to [`MAX_ATTEMPTS`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Grade(Grade),
    GiveBack(String),
}

/// What a grade holds: the grader's state word, CSV header and row, and what the pages show.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Grade {
    pub state: String,
    pub header: String,
    pub row: String,
    pub score: Option<f64>,
    pub passing: bool,
    pub ratio: Option<f64>,
    pub kept: String,
    pub page: Option<String>,
    /// The lab's `--details` (a kernel week's): what the class page is made from.
    #[serde(default)]
    pub details: Option<String>,
}

/// A grade of a week: its student (id) and submission.
#[derive(Debug, Clone, PartialEq)]
pub struct WeekGrade {
    pub student: String,
    pub submission: i64,
    pub grade: Grade,
}

/// What the class page needs of a graded submission: its file, the lab's output, its details.
pub type Run = (Vec<u8>, Vec<u8>, Option<Vec<u8>>);

/// How a worker's report ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Reported {
    /// Taken (a grade written, or the job queued again or given up).
    Taken,
    /// The same report again from the same lease: nothing changed.
    Repeated,
    /// The lease is no longer the job's (expired and claimed by another worker): nothing changed.
    Late,
}

/// A submission as its student sees it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Seen {
    pub id: i64,
    pub week: String,
    pub at: i64,
    pub late: bool,
    /// queued, running, graded, failed.
    pub state: String,
    /// Jobs before it in the queue, while queued.
    pub position: Option<i64>,
    pub score: Option<f64>,
    pub passing: bool,
    pub ratio: Option<f64>,
    pub why: Option<String>,
}

/// A job on the admin page.
#[derive(Debug, Clone)]
pub struct Queued {
    pub job: i64,
    pub student: String,
    pub week: String,
    pub state: String,
    pub worker: Option<String>,
    pub attempts: i64,
    pub why: Option<String>,
}

/// The database.
pub struct Store {
    db: Connection,
}

impl Store {
    /// Opens (or makes) the database at `path`.
    pub fn open(path: &std::path::Path) -> Result<Store> {
        let db = Connection::open(path).with_context(|| format!("cannot open the database {}", path.display()))?;
        db.busy_timeout(std::time::Duration::from_secs(30))?;
        db.pragma_update(None, "journal_mode", "WAL")?;
        db.pragma_update(None, "synchronous", "FULL")?;
        db.pragma_update(None, "foreign_keys", "ON")?;
        db.execute_batch(SCHEMA)
            .with_context(|| format!("cannot make the tables in {}", path.display()))?;
        Ok(Store { db })
    }

    /// Queues again the jobs the server's own workers held: they die with the server, so at a start
    /// nobody grades them (a remote worker's lease runs out in its time instead). The number queued.
    pub fn release_local(&self) -> Result<usize> {
        Ok(self.db.execute(
            "UPDATE jobs SET state = 'queued', lease = NULL WHERE state = 'running' AND substr(worker, 1, 6) = 'local-'",
            [],
        )?)
    }

    /// A setting, made with `make` where it is missing (the server's secret for CSRF tokens).
    pub fn setting(&self, key: &str, make: impl FnOnce() -> String) -> Result<String> {
        let found: Option<String> = self
            .db
            .query_row("SELECT value FROM settings WHERE key = ?", [key], |row| row.get(0))
            .optional()?;
        if let Some(value) = found {
            return Ok(value);
        }
        let value = make();
        self.db
            .execute("INSERT INTO settings(key, value) VALUES (?, ?)", params![key, value])?;
        Ok(value)
    }

    /// Stores a token's hash for `who`, replacing the holder's earlier token of that role (a student
    /// given a new token loses the old one, and every browser signed in with it).
    pub fn set_token(&mut self, hash: &str, who: &Who, now: i64) -> Result<()> {
        let tx = self.db.transaction()?;
        tx.execute(
            "DELETE FROM tokens WHERE role = ? AND who = ?",
            params![who.role.word(), who.name],
        )?;
        tx.execute(
            "DELETE FROM sessions WHERE role = ? AND who = ?",
            params![who.role.word(), who.name],
        )?;
        tx.execute(
            "INSERT INTO tokens(hash, role, who, made) VALUES (?, ?, ?, ?)",
            params![hash, who.role.word(), who.name, now],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Whether `who` holds a token.
    pub fn has_token(&self, who: &Who) -> Result<bool> {
        let count: i64 = self.db.query_row(
            "SELECT count(*) FROM tokens WHERE role = ? AND who = ?",
            params![who.role.word(), who.name],
            |row| row.get(0),
        )?;
        Ok(count > 0)
    }

    pub fn token(&self, hash: &str) -> Result<Option<Who>> {
        self.who("SELECT role, who FROM tokens WHERE hash = ?", params![hash])
    }

    /// A new session for `who` until `expires`; the expired ones go, and a holder keeps their
    /// newest [`SESSIONS_EACH`] (a script signing in again and again fills nothing).
    pub fn add_session(&mut self, hash: &str, who: &Who, now: i64, expires: i64) -> Result<()> {
        let tx = self.db.transaction()?;
        tx.execute("DELETE FROM sessions WHERE expires <= ?", [now])?;
        tx.execute(
            "INSERT INTO sessions(hash, role, who, expires) VALUES (?, ?, ?, ?)",
            params![hash, who.role.word(), who.name, expires],
        )?;
        tx.execute(
            "DELETE FROM sessions WHERE role = ?1 AND who = ?2 AND hash NOT IN
                 (SELECT hash FROM sessions WHERE role = ?1 AND who = ?2 ORDER BY expires DESC LIMIT ?3)",
            params![who.role.word(), who.name, SESSIONS_EACH],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn session(&self, hash: &str, now: i64) -> Result<Option<Who>> {
        self.who(
            "SELECT role, who FROM sessions WHERE hash = ? AND expires > ?",
            params![hash, now],
        )
    }

    pub fn end_session(&self, hash: &str) -> Result<()> {
        self.db.execute("DELETE FROM sessions WHERE hash = ?", [hash])?;
        Ok(())
    }

    fn who(&self, sql: &str, params: impl rusqlite::Params) -> Result<Option<Who>> {
        let found: Option<(String, String)> = self
            .db
            .query_row(sql, params, |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        Ok(found.and_then(|(role, name)| {
            Some(Who {
                role: Role::from_word(&role)?,
                name,
            })
        }))
    }

    /// The current round of `week` (1 until the first regrade).
    pub fn round(&self, week: &str) -> Result<i64> {
        round(&self.db, week)
    }

    /// Stores a submission and queues its job, in one transaction: its id and the jobs before it.
    /// `refusal`'s checks run inside it, so two uploads at once cannot both pass them.
    pub fn submit(
        &mut self,
        (student, week, file): (&str, &str, &[u8]),
        late: bool,
        per_hour: u32,
        now: i64,
    ) -> Result<std::result::Result<(i64, i64), String>> {
        let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if let Some(why) = refusal(&tx, student, per_hour, now)? {
            return Ok(Err(why));
        }
        let round = round(&tx, week)?;
        tx.execute(
            "INSERT INTO submissions(student, week, at, late, file) VALUES (?, ?, ?, ?, ?)",
            params![student, week, now, late, file],
        )?;
        let submission = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO jobs(submission, round, priority, state, queued) VALUES (?, ?, 0, 'queued', ?)",
            params![submission, round, now],
        )?;
        let job = tx.last_insert_rowid();
        let position = position(&tx, job)?;
        tx.commit()?;
        Ok(Ok((submission, position)))
    }

    /// The next job for worker `worker`: the oldest queued job of the highest priority (students'
    /// submissions before a regrade's), or one whose lease ran out. A job whose workers stopped
    /// [`MAX_ATTEMPTS`] times is given up instead (state failed, shown to its student and the teacher).
    pub fn claim(&mut self, worker: &str, lease: &str, now: i64) -> Result<Option<Claimed>> {
        let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO workers(name, seen, job) VALUES (?, ?, NULL)
             ON CONFLICT(name) DO UPDATE SET seen = excluded.seen, job = NULL",
            params![worker, now],
        )?;
        tx.execute(
            "UPDATE jobs SET state = 'failed', lease = NULL, finished = ?,
                 why = coalesce(why, 'every worker that took it stopped without a result')
             WHERE state = 'running' AND lease_until < ? AND attempts >= ?",
            params![now, now, MAX_ATTEMPTS],
        )?;
        let next: Option<i64> = tx
            .query_row(
                "SELECT id FROM jobs WHERE state = 'queued' OR (state = 'running' AND lease_until < ?)
                 ORDER BY priority, id LIMIT 1",
                [now],
                |row| row.get(0),
            )
            .optional()?;
        let Some(job) = next else {
            tx.commit()?;
            return Ok(None);
        };
        tx.execute(
            "UPDATE jobs SET state = 'running', lease = ?, lease_until = ?, worker = ?,
                 attempts = attempts + 1, started = ? WHERE id = ?",
            params![lease, now + LEASE_MS, worker, now, job],
        )?;
        tx.execute("UPDATE workers SET job = ? WHERE name = ?", params![job, worker])?;
        let claimed = tx.query_row(
            "SELECT submissions.id, student, week, file FROM jobs JOIN submissions ON submissions.id = jobs.submission
             WHERE jobs.id = ?",
            [job],
            |row| {
                Ok(Claimed {
                    job,
                    lease: lease.to_string(),
                    submission: row.get(0)?,
                    student: row.get(1)?,
                    week: row.get(2)?,
                    file: row.get(3)?,
                })
            },
        )?;
        tx.commit()?;
        Ok(Some(claimed))
    }

    /// The file of `job` while `lease` holds it.
    pub fn leased_file(&self, job: i64, lease: &str) -> Result<Option<Vec<u8>>> {
        Ok(self
            .db
            .query_row(
                "SELECT file FROM jobs JOIN submissions ON submissions.id = jobs.submission
                 WHERE jobs.id = ? AND jobs.lease = ? AND jobs.state = 'running'",
                params![job, lease],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// Renews `job`'s lease; false where the lease is no longer the job's (the worker should stop).
    pub fn heartbeat(&self, job: i64, lease: &str, now: i64) -> Result<bool> {
        self.db
            .execute("UPDATE workers SET seen = ? WHERE job = ?", params![now, job])?;
        let renewed = self.db.execute(
            "UPDATE jobs SET lease_until = ? WHERE id = ? AND lease = ? AND state = 'running'",
            params![now + LEASE_MS, job, lease],
        )?;
        Ok(renewed == 1)
    }

    /// A worker's result for `job` under `lease`.
    pub fn report(&mut self, job: i64, lease: &str, outcome: &Outcome, now: i64) -> Result<Reported> {
        let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let held: Option<(String, Option<String>, i64, i64, i64)> = tx
            .query_row(
                "SELECT state, lease, submission, round, attempts FROM jobs WHERE id = ?",
                [job],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)),
            )
            .optional()?;
        let Some((state, held_lease, submission, round, attempts)) = held else {
            bail!("no job {job}");
        };
        if state != "running" || held_lease.as_deref() != Some(lease) {
            let ended_here: Option<String> = tx
                .query_row("SELECT last_lease FROM job_leases WHERE job = ?", [job], |row| {
                    row.get(0)
                })
                .optional()?;
            return Ok(if ended_here.as_deref() == Some(lease) {
                Reported::Repeated
            } else {
                Reported::Late
            });
        }
        match outcome {
            Outcome::Grade(grade) => {
                tx.execute(
                    "INSERT INTO grades(job, submission, round, state, header, row, score, passing, ratio, kept, page, details, at)
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    params![
                        job,
                        submission,
                        round,
                        grade.state,
                        grade.header,
                        grade.row,
                        grade.score,
                        grade.passing,
                        grade.ratio,
                        grade.kept.as_bytes(),
                        grade.page.as_deref().map(str::as_bytes),
                        grade.details.as_deref().map(str::as_bytes),
                        now
                    ],
                )?;
                tx.execute(
                    "UPDATE jobs SET state = 'done', lease = NULL, finished = ? WHERE id = ?",
                    params![now, job],
                )?;
            }
            Outcome::GiveBack(why) => {
                let (state, finished) = if attempts >= MAX_ATTEMPTS {
                    ("failed", Some(now))
                } else {
                    ("queued", None)
                };
                tx.execute(
                    "UPDATE jobs SET state = ?, lease = NULL, finished = ?, why = ? WHERE id = ?",
                    params![state, finished, why, job],
                )?;
            }
        }
        tx.execute(
            "INSERT INTO job_leases(job, last_lease) VALUES (?, ?)
             ON CONFLICT(job) DO UPDATE SET last_lease = excluded.last_lease",
            params![job, lease],
        )?;
        tx.commit()?;
        Ok(Reported::Taken)
    }

    /// A student's submissions, newest first (`student` none: everyone's, for the teacher).
    pub fn seen(&self, student: Option<&str>, submission: Option<i64>) -> Result<Vec<Seen>> {
        let mut query = self.db.prepare(
            "SELECT s.id, s.week, s.at, s.late, j.id, j.state, j.why, g.score, g.passing, g.ratio
             FROM submissions s
             JOIN jobs j ON j.id = (SELECT max(id) FROM jobs WHERE submission = s.id)
             LEFT JOIN grades g ON g.job = (SELECT max(job) FROM grades WHERE submission = s.id)
             WHERE (?1 IS NULL OR s.student = ?1) AND (?2 IS NULL OR s.id = ?2)
             ORDER BY s.id DESC",
        )?;
        let rows = query.query_map(params![student, submission], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, bool>(3)?,
                row.get::<_, i64>(4)?,
                row.get::<_, String>(5)?,
                row.get::<_, Option<String>>(6)?,
                row.get::<_, Option<f64>>(7)?,
                row.get::<_, Option<bool>>(8)?,
                row.get::<_, Option<f64>>(9)?,
            ))
        })?;
        let mut seen = Vec::new();
        for row in rows {
            let (id, week, at, late, job, state, why, score, passing, ratio) = row?;
            let state = match state.as_str() {
                "done" => "graded".to_string(),
                other => other.to_string(),
            };
            let position = if state == "queued" {
                Some(position(&self.db, job)?)
            } else {
                None
            };
            seen.push(Seen {
                id,
                week,
                at,
                late,
                state,
                position,
                score,
                passing: passing.unwrap_or(false),
                ratio,
                why,
            });
        }
        Ok(seen)
    }

    /// A submission's student and week, to check who may see it.
    pub fn owner(&self, submission: i64) -> Result<Option<(String, String)>> {
        Ok(self
            .db
            .query_row(
                "SELECT student, week FROM submissions WHERE id = ?",
                [submission],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?)
    }

    /// A submission's file and its latest grade.
    pub fn graded(&self, submission: i64) -> Result<Option<(Vec<u8>, Option<Grade>)>> {
        let file: Option<Vec<u8>> = self
            .db
            .query_row("SELECT file FROM submissions WHERE id = ?", [submission], |row| {
                row.get(0)
            })
            .optional()?;
        let Some(file) = file else { return Ok(None) };
        let grade = self
            .db
            .query_row(
                "SELECT state, header, row, score, passing, ratio, kept, page FROM grades
                 WHERE submission = ? ORDER BY round DESC LIMIT 1",
                [submission],
                |row| grade_at(row, 0),
            )
            .optional()?;
        Ok(Some((file, grade)))
    }

    /// What the class page needs of a submission's grade in `round`: its file, the lab's output and
    /// its details.
    pub fn run_of(&self, submission: i64, round: i64) -> Result<Option<Run>> {
        Ok(self
            .db
            .query_row(
                "SELECT s.file, g.kept, g.details FROM submissions s JOIN grades g ON g.submission = s.id
                 WHERE s.id = ? AND g.round = ?",
                params![submission, round],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()?)
    }

    /// Each student's grades of `week` in its current round, on time, oldest first: what the
    /// gradebook, the leaderboard and the class page choose from.
    pub fn week_grades(&self, week: &str) -> Result<Vec<WeekGrade>> {
        let round = self.round(week)?;
        // Without the lab's output and the page: a gradebook of hundreds reads only what it shows.
        let mut query = self.db.prepare(
            "SELECT s.student, s.id, g.state, g.header, g.row, g.score, g.passing, g.ratio, x'', NULL
             FROM submissions s JOIN grades g ON g.submission = s.id AND g.round = ?
             WHERE s.week = ? AND s.late = 0 ORDER BY s.id",
        )?;
        let rows = query.query_map(params![round, week], |row| {
            Ok(WeekGrade {
                student: row.get(0)?,
                submission: row.get(1)?,
                grade: grade_at(row, 2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// On-time submissions of `week` whose job of the current round has no grade yet (queued or
    /// running; a failed one is on the admin page instead).
    pub fn ungraded(&self, week: &str) -> Result<i64> {
        let round = self.round(week)?;
        Ok(self.db.query_row(
            "SELECT count(*) FROM submissions s WHERE s.week = ? AND s.late = 0 AND NOT EXISTS
                 (SELECT 1 FROM grades g WHERE g.submission = s.id AND g.round = ?)
                 AND EXISTS (SELECT 1 FROM jobs j WHERE j.submission = s.id AND j.round = ? AND j.state <> 'failed')",
            params![week, round, round],
            |row| row.get(0),
        )?)
    }

    /// A regrade of `week`: a new round, and a job (after every student's own) for each on-time
    /// submission; its number of jobs.
    pub fn regrade(&mut self, week: &str, now: i64) -> Result<(i64, usize)> {
        let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let round = round(&tx, week)? + 1;
        tx.execute(
            "INSERT INTO rounds(week, round) VALUES (?, ?) ON CONFLICT(week) DO UPDATE SET round = excluded.round",
            params![week, round],
        )?;
        let queued = tx.execute(
            "INSERT INTO jobs(submission, round, priority, state, queued)
             SELECT id, ?, 1, 'queued', ? FROM submissions WHERE week = ? AND late = 0",
            params![round, now, week],
        )?;
        tx.commit()?;
        Ok((round, queued))
    }

    /// The queue for the admin page, unfinished and failed jobs first.
    pub fn queue(&self) -> Result<Vec<Queued>> {
        let mut query = self.db.prepare(
            "SELECT j.id, s.student, s.week, j.state, j.worker, j.attempts, j.why FROM jobs j
             JOIN submissions s ON s.id = j.submission WHERE j.state <> 'done'
             ORDER BY j.state = 'failed', j.priority, j.id LIMIT 500",
        )?;
        let rows = query.query_map([], |row| {
            Ok(Queued {
                job: row.get(0)?,
                student: row.get(1)?,
                week: row.get(2)?,
                state: row.get(3)?,
                worker: row.get(4)?,
                attempts: row.get(5)?,
                why: row.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The workers: name, last seen, the job they hold.
    pub fn workers(&self) -> Result<Vec<(String, i64, Option<i64>)>> {
        let mut query = self.db.prepare("SELECT name, seen, job FROM workers ORDER BY name")?;
        let rows = query.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Sets `student`'s alias on the leaderboard; false where another student has it.
    pub fn set_alias(&self, student: &str, alias: &str) -> Result<bool> {
        let taken: Option<String> = self
            .db
            .query_row("SELECT student FROM aliases WHERE alias = ?", [alias], |row| row.get(0))
            .optional()?;
        if taken.is_some_and(|other| other != student) {
            return Ok(false);
        }
        self.db.execute(
            "INSERT INTO aliases(student, alias) VALUES (?, ?) ON CONFLICT(student) DO UPDATE SET alias = excluded.alias",
            params![student, alias],
        )?;
        Ok(true)
    }

    pub fn alias(&self, student: &str) -> Result<Option<String>> {
        Ok(self
            .db
            .query_row("SELECT alias FROM aliases WHERE student = ?", [student], |row| {
                row.get(0)
            })
            .optional()?)
    }
}

/// The current round of `week` (1 until the first regrade).
fn round(db: &Connection, week: &str) -> Result<i64> {
    Ok(db
        .query_row("SELECT round FROM rounds WHERE week = ?", [week], |row| row.get(0))
        .optional()?
        .unwrap_or(1))
}

/// Why `student` may not submit now: one in flight, or `per_hour` in the last hour.
fn refusal(db: &Connection, student: &str, per_hour: u32, now: i64) -> Result<Option<String>> {
    let in_flight: i64 = db.query_row(
        "SELECT count(*) FROM jobs JOIN submissions ON submissions.id = jobs.submission
         WHERE submissions.student = ? AND jobs.state IN ('queued', 'running') AND jobs.priority = 0",
        [student],
        |row| row.get(0),
    )?;
    if in_flight > 0 {
        return Ok(Some(
            "your last submission is still being graded: one at a time, submit again when it is done".into(),
        ));
    }
    let recent: i64 = db.query_row(
        "SELECT count(*) FROM submissions WHERE student = ? AND at > ?",
        params![student, now - 3_600_000],
        |row| row.get(0),
    )?;
    if recent >= i64::from(per_hour) {
        return Ok(Some(format!(
            "{per_hour} submissions in the last hour already: the limit of the course; try again later"
        )));
    }
    Ok(None)
}

/// The grade in the eight columns from `first` on: state, header, row, score, passing, ratio, kept
/// (bytes) and page (bytes or NULL); not the details (the class page reads them, [`Store::run_of`]).
fn grade_at(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Grade> {
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    Ok(Grade {
        state: row.get(first)?,
        header: row.get(first + 1)?,
        row: row.get(first + 2)?,
        score: row.get(first + 3)?,
        passing: row.get(first + 4)?,
        ratio: row.get(first + 5)?,
        kept: text(row.get(first + 6)?),
        page: row.get::<_, Option<Vec<u8>>>(first + 7)?.map(text),
        details: None,
    })
}

/// The jobs before `job` in the queue (its priority first, then older ones of its own).
fn position(db: &Connection, job: i64) -> Result<i64> {
    Ok(db.query_row(
        "SELECT count(*) FROM jobs o, jobs j WHERE j.id = ?1 AND o.state IN ('queued', 'running')
             AND (o.priority < j.priority OR (o.priority = j.priority AND o.id < j.id))",
        [job],
        |row| row.get(0),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store in a fresh file (WAL needs a file, not memory).
    fn store(name: &str) -> Store {
        let path = std::env::temp_dir().join(format!("course-store-{}-{name}.sqlite", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        Store::open(&path).unwrap()
    }

    fn grade(score: f64) -> Outcome {
        Outcome::Grade(Grade {
            state: "graded".into(),
            header: "student,file,score".into(),
            row: format!("x,x.cu,{score}"),
            score: Some(score),
            passing: true,
            ratio: Some(1.0),
            kept: String::new(),
            page: None,
            details: None,
        })
    }

    fn submit(store: &mut Store, student: &str, now: i64) -> i64 {
        store
            .submit((student, "03-mmm-tiled", b"__global__"), false, 10, now)
            .unwrap()
            .unwrap()
            .0
    }

    fn grades(store: &Store) -> i64 {
        store
            .db
            .query_row("SELECT count(*) FROM grades", [], |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn jobs_go_out_oldest_first_one_worker_each_and_regrades_after_students() {
        let mut store = store("order");
        let (a, b) = (submit(&mut store, "a", 0), submit(&mut store, "b", 1));
        assert_eq!(store.seen(Some("b"), None).unwrap()[0].position, Some(1));
        store.regrade("03-mmm-tiled", 2).unwrap();
        let c = submit(&mut store, "c", 3);
        let first = store.claim("w1", "l1", 10).unwrap().unwrap();
        let second = store.claim("w2", "l2", 10).unwrap().unwrap();
        let third = store.claim("w3", "l3", 10).unwrap().unwrap();
        assert_eq!(
            [first.submission, second.submission, third.submission],
            [a, b, c],
            "the students' own jobs first"
        );
        let regraded = store.claim("w4", "l4", 10).unwrap().unwrap();
        assert_eq!(regraded.submission, a);
        assert_eq!(store.claim("w5", "l5", 10).unwrap().unwrap().submission, b);
        assert!(store.claim("w6", "l6", 10).unwrap().is_none(), "every job is held");
    }

    #[test]
    fn a_lease_that_runs_out_goes_to_the_next_worker_and_the_first_one_is_too_late() {
        let mut store = store("lease");
        submit(&mut store, "a", 0);
        let job = store.claim("w1", "l1", 0).unwrap().unwrap().job;
        assert!(store.heartbeat(job, "l1", LEASE_MS - 1).unwrap());
        assert!(
            store.claim("w2", "l2", LEASE_MS).unwrap().is_none(),
            "the heartbeat renewed it"
        );
        let taken = store.claim("w2", "l2", 2 * LEASE_MS).unwrap().unwrap();
        assert_eq!(taken.job, job);
        assert!(!store.heartbeat(job, "l1", 2 * LEASE_MS).unwrap());
        assert_eq!(
            store.report(job, "l1", &grade(100.0), 2 * LEASE_MS).unwrap(),
            Reported::Late
        );
        assert_eq!(grades(&store), 0);
        assert_eq!(
            store.report(job, "l2", &grade(50.0), 2 * LEASE_MS).unwrap(),
            Reported::Taken
        );
        assert_eq!(
            store.report(job, "l2", &grade(50.0), 2 * LEASE_MS).unwrap(),
            Reported::Repeated
        );
        assert_eq!(
            store.report(job, "l1", &grade(100.0), 2 * LEASE_MS).unwrap(),
            Reported::Late
        );
        assert_eq!(grades(&store), 1, "one job, one grade");
        assert_eq!(store.seen(Some("a"), None).unwrap()[0].score, Some(50.0));
    }

    #[test]
    fn a_job_given_back_is_queued_again_and_given_up_after_three_workers() {
        let mut store = store("give-back");
        submit(&mut store, "a", 0);
        for attempt in 1..=MAX_ATTEMPTS {
            let lease = format!("l{attempt}");
            let job = store.claim("w", &lease, attempt).unwrap().unwrap().job;
            let back = Outcome::GiveBack(format!("machine: no GPU ({attempt})"));
            assert_eq!(store.report(job, &lease, &back, attempt).unwrap(), Reported::Taken);
        }
        assert!(store.claim("w", "l9", 100).unwrap().is_none());
        let seen = &store.seen(Some("a"), None).unwrap()[0];
        assert_eq!(
            (seen.state.as_str(), seen.why.as_deref()),
            ("failed", Some("machine: no GPU (3)"))
        );
        // A worker that dies three times gives it up too, at the next claim.
        submit(&mut store, "b", 200);
        for attempt in 0..MAX_ATTEMPTS {
            store
                .claim("w", "dead", 1000 + attempt * (LEASE_MS + 1))
                .unwrap()
                .unwrap();
        }
        assert!(store.claim("w", "x", 1000 + 4 * (LEASE_MS + 1)).unwrap().is_none());
        assert_eq!(store.seen(Some("b"), None).unwrap()[0].state, "failed");
    }

    #[test]
    fn a_student_has_one_submission_in_flight_and_a_few_an_hour() {
        let mut store = store("limits");
        submit(&mut store, "a", 0);
        let refused = store.submit(("a", "03-mmm-tiled", b"x"), false, 10, 1).unwrap();
        assert!(refused.unwrap_err().contains("one at a time"));
        for at in 1..3 {
            let job = store.claim("w", "l", at * 10).unwrap().unwrap().job;
            store.report(job, "l", &grade(1.0), at * 10).unwrap();
            let _ = store
                .submit(("a", "03-mmm-tiled", b"x"), false, 3, at * 10 + 1)
                .unwrap()
                .unwrap();
        }
        let job = store.claim("w", "l", 50).unwrap().unwrap().job;
        store.report(job, "l", &grade(1.0), 50).unwrap();
        let refused = store.submit(("a", "03-mmm-tiled", b"x"), false, 3, 60).unwrap();
        assert!(refused.unwrap_err().contains("3 submissions in the last hour"));
        assert!(store
            .submit(("a", "03-mmm-tiled", b"x"), false, 3, 3_600_001)
            .unwrap()
            .is_ok());
    }

    #[test]
    fn a_holder_keeps_the_newest_sessions_and_a_new_token_ends_them_all() {
        let mut store = store("sessions");
        let ann = Who {
            role: Role::Student,
            name: "s1".into(),
        };
        store.add_session("old", &ann, 0, 10).unwrap();
        for at in 0..SESSIONS_EACH + 5 {
            store.add_session(&format!("s{at}"), &ann, 20 + at, 1000 + at).unwrap();
        }
        let count = |store: &Store| -> i64 {
            store
                .db
                .query_row("SELECT count(*) FROM sessions", [], |row| row.get(0))
                .unwrap()
        };
        assert_eq!(count(&store), SESSIONS_EACH, "the expired one and the oldest gone");
        assert!(store.session(&format!("s{}", SESSIONS_EACH + 4), 50).unwrap().is_some());
        assert!(store.session("s0", 50).unwrap().is_none());
        store.set_token("new", &ann, 60).unwrap();
        assert_eq!(count(&store), 0);
    }

    #[test]
    fn a_regrade_makes_a_new_round_that_the_week_grades_read() {
        let mut store = store("regrade");
        submit(&mut store, "a", 0);
        let job = store.claim("w", "l", 1).unwrap().unwrap().job;
        store.report(job, "l", &grade(40.0), 2).unwrap();
        assert_eq!(store.week_grades("03-mmm-tiled").unwrap()[0].grade.score, Some(40.0));
        assert_eq!(store.regrade("03-mmm-tiled", 3).unwrap(), (2, 1));
        assert!(store.week_grades("03-mmm-tiled").unwrap().is_empty());
        assert_eq!(store.ungraded("03-mmm-tiled").unwrap(), 1);
        let job = store.claim("w", "m", 4).unwrap().unwrap().job;
        store.report(job, "m", &grade(90.0), 5).unwrap();
        assert_eq!(store.week_grades("03-mmm-tiled").unwrap()[0].grade.score, Some(90.0));
        assert_eq!(store.seen(Some("a"), None).unwrap()[0].score, Some(90.0));
        assert_eq!(store.ungraded("03-mmm-tiled").unwrap(), 0);
    }
}

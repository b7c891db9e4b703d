//! A course server for the tests: a course in a fresh folder (three students, two weeks), its
//! tokens, and the server started as a program on a free port, killed when the test ends.
// Each test file uses its own part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_course-server");

/// A course folder, its server and tokens.
pub struct Course {
    pub dir: PathBuf,
    pub url: String,
    pub port: u16,
    pub tokens: Vec<(String, String)>,
    pub server: Option<Child>,
}

impl Course {
    /// A course in a new folder `name`; `extra` goes at the end of course.toml.
    pub fn new(name: &str, extra: &str) -> Course {
        // The tests of a file run at once in one process: a folder each.
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let number = MADE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("course-{name}-{}-{number}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ids.csv"), "ann,s1\nbob,s2\n\"Doe, Jane\",s3\n").unwrap();
        let toml = format!(
            "name = \"Test course\"\nstudents = \"ids.csv\"\n\
             [[week]]\nname = \"03-mmm-tiled\"\ndeadline = \"2099-01-01T00:00:00Z\"\nleaderboard = true\n\
             [[week]]\nname = \"01-simpson\"\ndeadline = \"2000-01-01T00:00:00Z\"\n{extra}"
        );
        std::fs::write(dir.join("course.toml"), toml).unwrap();
        let port = free_port();
        Course {
            dir,
            url: format!("http://127.0.0.1:{port}"),
            port,
            tokens: Vec::new(),
            server: None,
        }
    }

    /// Replaces the students with `count` of them, `student-N` with the id `sN`.
    pub fn with_students(self, count: usize) -> Course {
        let ids: String = (1..=count).map(|n| format!("student-{n},s{n}\n")).collect();
        std::fs::write(self.dir.join("ids.csv"), ids).unwrap();
        self
    }

    pub fn file(&self) -> PathBuf {
        self.dir.join("course.toml")
    }

    /// Makes tokens (`course-server tokens ARGS`) and keeps them by name.
    pub fn make_tokens(&mut self, args: &[&str]) {
        let output = Command::new(BIN)
            .args(["tokens", "--course"])
            .arg(self.file())
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        for line in String::from_utf8(output.stdout).unwrap().lines() {
            let (name, token) = line.rsplit_once(',').unwrap();
            self.tokens
                .push((name.trim_matches('"').to_string(), token.to_string()));
        }
    }

    pub fn token(&self, name: &str) -> String {
        self.tokens
            .iter()
            .rev()
            .find(|(each, _)| each == name)
            .unwrap()
            .1
            .clone()
    }

    /// Starts the server with `args` and waits until it answers.
    pub fn start(&mut self, args: &[&str]) {
        self.start_with_env(args, &[]);
    }

    /// Starts the server with `args` and `env`, and waits until it answers.
    pub fn start_with_env(&mut self, args: &[&str], env: &[(&str, &str)]) {
        let log = std::fs::File::create(self.dir.join("server.log")).unwrap();
        let child = Command::new(BIN)
            .envs(env.iter().copied())
            .arg("--course")
            .arg(self.file())
            .args(["--listen", &format!("127.0.0.1:{}", self.port)])
            .args(args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.server = Some(child);
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the server did not start: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the server with SIGKILL: no chance to finish anything.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.server.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    pub fn database(&self) -> PathBuf {
        self.dir.join("course.sqlite")
    }
}

impl Drop for Course {
    fn drop(&mut self) {
        // Local workers die with the server (PR_SET_PDEATHSIG).
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An answer: status and body.
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub headers: Vec<(String, String)>,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("{err}: {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(each, _)| each.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// One request: `method` `url` with `headers` and `body`, redirects not followed.
pub fn request(method: &str, url: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let mut builder = ureq::http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let mut response = agent.run(builder.body(body.to_vec()).unwrap()).unwrap();
    let headers = response
        .headers()
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap_or("").to_string()))
        .collect();
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap_or_default();
    Answer { status, body, headers }
}

pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// Waits until `done` holds, at most `limit`.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// The number of rows of `sql` in the course's database (read beside the server).
pub fn count(database: &Path, sql: &str) -> i64 {
    let db = rusqlite::Connection::open(database).unwrap();
    db.query_row(sql, [], |row| row.get(0)).unwrap()
}

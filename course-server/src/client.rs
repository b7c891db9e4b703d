//! The command line's side of the HTTP API: a student's `submit` and `status`, and the calls a
//! worker makes. The token comes from COURSE_TOKEN or a file, never from the command line (where
//! `ps` shows it to everyone on the machine).

use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use ureq::Agent;

/// A client of one server with one token.
#[derive(Clone)]
pub struct Client {
    agent: Agent,
    server: String,
    token: String,
}

/// The token: COURSE_TOKEN, else the first line of `file`.
pub fn token(file: Option<&Path>) -> Result<String> {
    if let Some(file) = file {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("--token-file {}: cannot read", file.display()))?;
        let token = text.lines().next().unwrap_or("").trim().to_string();
        if token.is_empty() {
            bail!("--token-file {}: empty", file.display());
        }
        return Ok(token);
    }
    match std::env::var("COURSE_TOKEN") {
        Ok(token) if !token.trim().is_empty() => Ok(token.trim().to_string()),
        _ => bail!("no token: set COURSE_TOKEN, or give --token-file FILE (the token your teacher gave you)"),
    }
}

/// What an answer was: its status and body.
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).trim_end().to_string()
    }

    pub fn json(&self) -> Result<serde_json::Value> {
        serde_json::from_slice(&self.body)
            .map_err(|err| anyhow!("the server's answer is no JSON ({err}): {}", self.text()))
    }
}

impl Client {
    pub fn new(server: &str, token: String) -> Client {
        let agent: Agent = Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        Client {
            agent,
            server: server.trim_end_matches('/').to_string(),
            token,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server)
    }

    fn answer(&self, sent: Result<ureq::http::Response<ureq::Body>, ureq::Error>, path: &str) -> Result<Answer> {
        let mut response = sent.map_err(|err| anyhow!("{}: {err}", self.url(path)))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_vec()
            .map_err(|err| anyhow!("{}: {err}", self.url(path)))?;
        Ok(Answer { status, body })
    }

    pub fn get(&self, path: &str) -> Result<Answer> {
        let sent = self
            .agent
            .get(self.url(path))
            .header("Authorization", format!("Bearer {}", self.token))
            .call();
        self.answer(sent, path)
    }

    pub fn post_json(&self, path: &str, body: &serde_json::Value) -> Result<Answer> {
        let sent = self
            .agent
            .post(self.url(path))
            .header("Authorization", format!("Bearer {}", self.token))
            .send_json(body);
        self.answer(sent, path)
    }

    pub fn post_bytes(&self, path: &str, body: &[u8]) -> Result<Answer> {
        let sent = self
            .agent
            .post(self.url(path))
            .header("Authorization", format!("Bearer {}", self.token))
            .header("Content-Type", "application/octet-stream")
            .send(body);
        self.answer(sent, path)
    }
}

/// `submit`: hands in `file` for `week`; with `wait`, waits for the grade and prints its verdicts.
pub fn submit(client: &Client, week: &str, file: &Path, wait: bool) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("{}: cannot read", file.display()))?;
    let answer = client.post_bytes(&format!("/api/weeks/{week}/submissions"), &bytes)?;
    if answer.status != 202 {
        bail!("not submitted: {}", answer.text());
    }
    let json = answer.json()?;
    let id = json["id"]
        .as_i64()
        .ok_or_else(|| anyhow!("the server gave no id: {}", answer.text()))?;
    println!(
        "submitted: submission {id}, {} before it in the queue; its page: {}/submissions/{id}",
        json["position"], client.server
    );
    if !wait {
        return Ok(());
    }
    loop {
        std::thread::sleep(Duration::from_secs(2));
        let answer = client.get(&format!("/api/submissions/{id}"))?;
        if answer.status != 200 {
            bail!("submission {id}: {}", answer.text());
        }
        let json = answer.json()?;
        let state = json["submission"]["state"].as_str().unwrap_or("").to_string();
        if state == "queued" || state == "running" {
            continue;
        }
        println!("{state}");
        if let (Some(header), Some(row)) = (json["grade"]["header"].as_str(), json["grade"]["row"].as_str()) {
            for (name, value) in grader::csv::record(header)
                .unwrap_or_default()
                .iter()
                .zip(grader::csv::record(row).unwrap_or_default())
                .skip(2)
            {
                println!("  {name}: {value}");
            }
        }
        return Ok(());
    }
}

/// `status`: a line per submission, newest first.
pub fn status(client: &Client) -> Result<()> {
    let answer = client.get("/api/submissions")?;
    if answer.status != 200 {
        bail!("{}", answer.text());
    }
    let json = answer.json()?;
    for seen in json.as_array().into_iter().flatten() {
        let score = seen["score"]
            .as_f64()
            .map_or(String::new(), |score| format!(" {score:.1}"));
        let position = seen["position"]
            .as_i64()
            .map_or(String::new(), |before| format!(" ({before} before it)"));
        let late = if seen["late"].as_bool() == Some(true) {
            " late"
        } else {
            ""
        };
        println!(
            "{}\t{}\t{}{score}{position}{late}",
            seen["id"],
            seen["week"].as_str().unwrap_or(""),
            seen["state"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

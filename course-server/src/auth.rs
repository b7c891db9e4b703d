//! Tokens, sessions, CSRF tokens and request rates. A token is 32 random bytes shown once; only its
//! SHA-256 is stored, so the database alone signs nobody in. A browser signs in with the token once
//! and then holds a session cookie (HttpOnly, SameSite=Strict); every form it posts carries an
//! HMAC of its session under the server's secret, and an Origin header, where the browser sends one,
//! must be the server's own.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context, Result};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// 32 random bytes from the kernel, as 64 hex digits (the grader's, as its marks' keys are made).
pub fn random_hex() -> Result<String> {
    grader::lab::random_hex().context("cannot read 32 random bytes from /dev/urandom")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// What the database keeps of a token or session: its SHA-256.
pub fn hashed(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// The CSRF token of `session`: HMAC-SHA256 under the server's `secret`.
pub fn csrf(secret: &str, session: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(session.as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// Whether `given` is `session`'s CSRF token, compared in constant time.
pub fn csrf_holds(secret: &str, session: &str, given: &str) -> bool {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(session.as_bytes());
    let Some(bytes) = unhex(given) else { return false };
    mac.verify_slice(&bytes).is_ok()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

/// Request rates, a token bucket per client (an address, or a signed-in name): `rate` a second on
/// average, bursts of four times as many.
pub struct Buckets {
    rate: f64,
    buckets: std::sync::Mutex<HashMap<String, (f64, Instant)>>,
}

impl Buckets {
    pub fn new(rate: f64) -> Buckets {
        Buckets {
            rate,
            buckets: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// Whether `client` may make one more request now.
    pub fn take(&self, client: &str) -> bool {
        let now = Instant::now();
        let burst = (self.rate * 4.0).max(1.0);
        let mut buckets = self.buckets.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if buckets.len() > 100_000 {
            // Forget the idle ones (a full bucket is the same as none).
            buckets.retain(|_, (_, at)| now.duration_since(*at).as_secs_f64() * self.rate < burst);
        }
        let (tokens, at) = buckets.entry(client.to_string()).or_insert((burst, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * self.rate).min(burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csrf_token_holds_for_its_session_only() {
        let token = csrf("secret", "session-a");
        assert!(csrf_holds("secret", "session-a", &token));
        assert!(!csrf_holds("secret", "session-b", &token));
        assert!(!csrf_holds("other", "session-a", &token));
        assert!(!csrf_holds("secret", "session-a", ""));
        assert!(!csrf_holds("secret", "session-a", "zz"));
    }

    #[test]
    fn tokens_are_random_and_stored_hashed() {
        let (a, b) = (random_hex().unwrap(), random_hex().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert_ne!(hashed(&a), a);
        assert_eq!(hashed(&a), hashed(&a));
    }

    #[test]
    fn a_bucket_allows_its_burst_then_refuses() {
        let buckets = Buckets::new(1.0);
        let taken = (0..10).filter(|_| buckets.take("x")).count();
        assert_eq!(taken, 4);
        assert!(buckets.take("y"));
    }
}

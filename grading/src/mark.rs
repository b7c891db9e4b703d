//! The lab's closing mark (issue 60): a grade comes only from the lab. With `--mark`, the lab reads a
//! key from its stdin before anything runs (grade.sh makes a new one for every grading run) and ends
//! its stdout with one line, `#mark CODE TAG MESSAGE`: its exit code, the message of its error line
//! (empty where everything passed), and the HMAC-SHA256 under that key of both and of everything it
//! printed through [`print()`] (the CSV). grade.sh checks it with `LAB --verify-mark` and takes a row, a
//! verdict and a MACHINE reason only from a run whose mark holds: a line printed by anything else
//! (after the mark, or instead of it), a lab killed by a signal or ended without its mark, gives no
//! grade.
//!
//! The key stays in the lab's own process: it is never on a command line or in the environment, the
//! case children, compilers and a program week's program get no stdin, and a kernel week's student
//! code runs on the GPU only.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;
use std::sync::{Mutex, PoisonError};

use hmac::{Hmac, Mac as _};
use sha2::Sha256;

/// The flag that asks for the mark (grade.sh's; hidden in `--help`).
pub const FLAG: &str = "--mark";
/// The flag, alone on the command line, that checks a mark: stdin holds the key, the exit code the
/// run ended with, then its stdout; the message is printed on success.
pub const VERIFY_FLAG: &str = "--verify-mark";
/// How the mark's line begins.
const PREFIX: &str = "#mark ";
/// The key's length in bytes (64 hex digits).
const KEY_BYTES: usize = 32;

/// The key and what [`print()`] printed, while the lab marks its output.
static MARKING: Mutex<Option<(Vec<u8>, Vec<u8>)>> = Mutex::new(None);

/// With [`FLAG`] on the command line: reads the key, one line of 64 hex digits, from stdin. Called
/// before anything else runs; an error is a usage error (grade.sh's fault, not the student's).
pub fn start() -> Result<(), String> {
    if !std::env::args_os().any(|arg| arg == FLAG) {
        return Ok(());
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|err| format!("{FLAG} reads its key from stdin: {err}"))?;
    let key = parse_key(line.trim_end())?;
    *MARKING.lock().unwrap_or_else(PoisonError::into_inner) = Some((key, Vec::new()));
    Ok(())
}

/// Prints `text` on stdout, and counts it in the mark where the lab marks its output.
pub fn print(text: &str) {
    print!("{text}");
    if let Some((_, printed)) = MARKING.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
        printed.extend_from_slice(text.as_bytes());
    }
}

/// The last line of stdout, where the lab marks its output: the exit `code`, and `message`, the
/// error line's text (made one line here, as the lab prints it).
pub fn finish(code: u8, message: &str) {
    let Some((key, printed)) = MARKING.lock().unwrap_or_else(PoisonError::into_inner).take() else {
        return;
    };
    let message = one_line(message);
    let mut stdout = std::io::stdout().lock();
    // A closed stdout leaves no mark, which grade.sh reads as no result: nothing better to do here.
    let _ = writeln!(
        stdout,
        "{PREFIX}{code} {} {message}",
        tag(&key, code, &message, &printed)
    );
    let _ = stdout.flush();
}

/// [`VERIFY_FLAG`]: checks the mark of a run from stdin (key, exit code, the run's stdout); prints the
/// message and exits 0 where it holds, else says why on stderr and exits 1.
pub fn verify_from_stdin() -> ExitCode {
    let mut input = Vec::new();
    let checked = std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|err| format!("reading stdin: {err}"))
        .and_then(|_| verify(&input));
    match checked {
        Ok(message) => {
            println!("{message}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("the lab's output carries no valid mark: {why}");
            ExitCode::FAILURE
        }
    }
}

/// The message of a mark that holds, from `input`: the key's line, the exit code's line, then the
/// run's stdout (any bytes: a file name need not be UTF-8), whose last line must be the mark.
fn verify(input: &[u8]) -> Result<String, String> {
    let mut parts = input.splitn(3, |&byte| byte == b'\n');
    let key = parse_key(&String::from_utf8_lossy(parts.next().unwrap_or_default()))?;
    let code: u8 = parts
        .next()
        .and_then(|line| std::str::from_utf8(line).ok()?.parse().ok())
        .ok_or("no exit code after the key")?;
    let stdout = parts.next().unwrap_or_default();
    let stdout = stdout.strip_suffix(b"\n").unwrap_or(stdout);
    let (printed, mark) = parts_of(stdout).ok_or("no mark line at the end of stdout")?;
    let mark = std::str::from_utf8(mark).map_err(|_| "its line is not UTF-8")?;
    let mut fields = mark.splitn(3, ' ');
    let (marked_code, claimed, message) = (
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default(),
    );
    if marked_code != code.to_string() {
        return Err(format!("it says exit code {marked_code}, the run ended with {code}"));
    }
    let claimed = hex_bytes(claimed).ok_or("its tag is not hex")?;
    mac(&key, code, message, printed)
        .verify_slice(&claimed)
        .map_err(|_| "its tag does not match what the run printed".to_string())?;
    Ok(message.to_string())
}

/// `stdout` split before its last line, which must be a mark: (what was printed before, the mark
/// without its prefix).
fn parts_of(stdout: &[u8]) -> Option<(&[u8], &[u8])> {
    let (printed, last) = match stdout.iter().rposition(|&byte| byte == b'\n') {
        Some(at) => (&stdout[..=at], &stdout[at + 1..]),
        None => (&stdout[..0], stdout),
    };
    Some((printed, last.strip_prefix(PREFIX.as_bytes())?))
}

/// The tag of a run, hex.
fn tag(key: &[u8], code: u8, message: &str, printed: &[u8]) -> String {
    mac(key, code, message, printed)
        .finalize()
        .into_bytes()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// HMAC-SHA256 under `key` of "CODE\nMESSAGE\n" and what was printed.
fn mac(key: &[u8], code: u8, message: &str, printed: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(format!("{code}\n{message}\n").as_bytes());
    mac.update(printed);
    mac
}

fn parse_key(line: &str) -> Result<Vec<u8>, String> {
    hex_bytes(line).filter(|key| key.len() == KEY_BYTES).ok_or_else(|| {
        format!(
            "{FLAG} needs a key of {} hex digits on stdin's first line",
            2 * KEY_BYTES
        )
    })
}

fn hex_bytes(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect()
}

/// `message` on one line, as the lab's error line prints it (`common::cli`).
fn one_line(message: &str) -> String {
    message.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    /// What a marked run prints: `printed`, then its mark.
    fn marked(code: u8, message: &str, printed: &str) -> String {
        let key = parse_key(KEY).unwrap();
        format!(
            "{printed}{PREFIX}{code} {} {message}",
            tag(&key, code, message, printed.as_bytes())
        )
    }

    fn input(code: u8, stdout: &str) -> Vec<u8> {
        format!("{KEY}\n{code}\n{stdout}\n").into_bytes()
    }

    #[test]
    fn a_mark_holds_for_what_the_lab_printed_and_gives_its_message() {
        let csv = "file,case\n\"a.cu\",PASS\n";
        assert_eq!(verify(&input(0, &marked(0, "", csv))), Ok(String::new()));
        let machine = "machine: no usable CUDA GPU";
        assert_eq!(verify(&input(3, &marked(3, machine, csv))), Ok(machine.to_string()));
        // A lab that printed nothing but its mark (a compile error without a row).
        assert_eq!(
            verify(&input(1, &marked(1, "compile error", ""))),
            Ok("compile error".to_string())
        );
    }

    /// A row or a MACHINE reason from anything but the lab, a mark of another run, or none: refused.
    #[test]
    fn anything_the_mark_does_not_cover_is_refused() {
        let csv = "file,case\n\"a.cu\",FAIL\n";
        let good = marked(1, "1 of 1 cases failed", csv);
        let refused = |stdout: &str, code: u8| verify(&input(code, stdout)).unwrap_err();
        assert!(refused(&good.replace("FAIL", "PASS"), 1).contains("does not match"));
        assert!(refused(&good.replace("1 of 1 cases failed", "machine: x"), 1).contains("does not match"));
        assert!(refused(&format!("{good}\n\"a.cu\",PASS"), 1).contains("no mark line"));
        assert!(refused(csv.trim_end(), 1).contains("no mark line"));
        assert!(refused(&good, 0).contains("the run ended with 0"));
        let good_tag = tag(&parse_key(KEY).unwrap(), 1, "1 of 1 cases failed", csv.as_bytes());
        assert!(refused(&good.replace(&good_tag, &"0".repeat(64)), 1).contains("does not match"));
        assert!(refused(&good.replace(&good_tag, "zz"), 1).contains("not hex"));
        let other_key = format!("{}{}", "ff", &KEY[2..]);
        assert!(verify(format!("{other_key}\n1\n{good}\n").as_bytes())
            .unwrap_err()
            .contains("does not match"));
        assert!(verify(format!("short\n1\n{good}\n").as_bytes())
            .unwrap_err()
            .contains("64 hex digits"));
        // A row's bytes need not be UTF-8 (a student's file name), and are covered as they are.
        let name = b"file,case\n\"\xff.cu\",PASS\n";
        let key = parse_key(KEY).unwrap();
        let mut stdout = name.to_vec();
        stdout.extend(format!("{PREFIX}0 {} \n", tag(&key, 0, "", name)).bytes());
        let mut bytes = format!("{KEY}\n0\n").into_bytes();
        bytes.extend(&stdout);
        assert_eq!(verify(&bytes), Ok(String::new()));
    }

    #[test]
    fn keys_are_64_hex_digits() {
        assert_eq!(parse_key(KEY).map(|key| key.len()), Ok(32));
        assert!(parse_key(&KEY[1..]).is_err());
        assert!(parse_key(&KEY.replace('a', "g")).is_err());
        assert!(parse_key("").is_err());
    }
}

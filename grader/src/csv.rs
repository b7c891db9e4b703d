//! The one CSV module of the teacher's side (RFC 4180): fields written as every reader takes them, and
//! records read back. The labs' rows, grade.sh's CSV and the feedback pages all go through here.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{bail, Result};

/// `bytes` as text that any CSV reader and terminal takes: bytes that are not UTF-8, and control
/// characters (a line break, a tab, DEL), as `\xNN`; the rest as it is. A submission's name may hold
/// any byte; the CSV must still open as UTF-8.
pub fn escaped(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len());
    let escape = |byte: u8, text: &mut String| text.push_str(&format!("\\x{byte:02x}"));
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_ascii_control() {
                escape(c as u8, &mut text);
            } else {
                text.push(c);
            }
        }
        for &byte in chunk.invalid() {
            escape(byte, &mut text);
        }
    }
    text
}

/// A path as messages and the CSV show it: its bytes [`escaped`].
pub fn shown(path: &Path) -> String {
    escaped(path.as_os_str().as_bytes())
}

/// `bytes` as text, every byte kept: UTF-8 as it is, other bytes as `\xNN` (a lab's output that
/// quotes a file name which is not UTF-8); control characters, line breaks too, stay.
pub fn text_of(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        for byte in chunk.invalid() {
            text.push_str(&format!("\\x{byte:02x}"));
        }
    }
    text
}

/// A text field: escaped as [`escaped`] says, always quoted, quotes inside doubled, so commas, quotes
/// and line breaks stay in one field. A field a spreadsheet would take for a formula (it begins with
/// `=`, `+`, `-` or `@`: a submission named `=HYPERLINK(...)`) gets a `'` first, which spreadsheets
/// show as text (issue 29).
pub fn field(text: &str) -> String {
    let text = escaped(text.as_bytes()).replace('"', "\"\"");
    let as_text = if text.starts_with(['=', '+', '-', '@']) {
        "'"
    } else {
        ""
    };
    format!("\"{as_text}{text}\"")
}

/// A field as it is where it needs no quotes (verdicts, counts, hashes, numbers), else as [`field`]
/// writes it.
pub fn value(text: &str) -> String {
    if text.bytes().all(|b| b.is_ascii_alphanumeric() || b".-_/".contains(&b)) {
        text.to_string()
    } else {
        field(text)
    }
}

/// The fields of `line` if it is exactly one record (quoted fields may hold line breaks); `None` where
/// it is not CSV or holds more than one record.
pub fn record(line: &str) -> Option<Vec<String>> {
    let mut all = records(line).ok()?;
    match all.len() {
        0 => Some(vec![String::new()]),
        1 => all.pop(),
        _ => None,
    }
}

/// The records of `text`: fields split at commas, quoted ones with `""` for a quote and line breaks
/// inside; a quote inside an unquoted field, or a quoted field with text after its closing quote, is
/// an error. The `'` put before a field a spreadsheet would take for a formula is kept.
pub fn records(text: &str) -> Result<Vec<Vec<String>>> {
    let (mut records, mut record, mut field) = (Vec::new(), Vec::new(), String::new());
    // Where the field stands: not begun, unquoted, inside quotes, or after its closing quote.
    #[derive(PartialEq)]
    enum At {
        Start,
        Bare,
        Quoted,
        Closed,
    }
    let (mut at, mut chars) = (At::Start, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (&at, c) {
            (At::Quoted, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (At::Quoted, '"') => at = At::Closed,
            (At::Quoted, c) => field.push(c),
            (At::Start, '"') => at = At::Quoted,
            (_, ',') => {
                record.push(std::mem::take(&mut field));
                at = At::Start;
            }
            (_, '\r') if chars.peek() == Some(&'\n') => {}
            (_, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                at = At::Start;
            }
            (At::Closed, c) => bail!("text after a quoted field's closing quote: {c:?}"),
            (_, '"') => bail!("a quote inside a field that is not quoted"),
            (_, c) => {
                field.push(c);
                at = At::Bare;
            }
        }
    }
    if at == At::Quoted {
        bail!("the CSV ends inside a quoted field");
    }
    if at != At::Start || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_any_byte_stay_one_utf8_field() {
        assert_eq!(escaped(b"new\nline\ttab"), "new\\x0aline\\x09tab");
        assert_eq!(escaped("Zoë".as_bytes()), "Zoë");
        // A UTF-16 surrogate's bytes, an overlong slash, a lone continuation byte: not UTF-8.
        assert_eq!(escaped(b"\xed\xa0\x80sur"), "\\xed\\xa0\\x80sur");
        assert_eq!(escaped(b"\xc0\xaf\x80"), "\\xc0\\xaf\\x80");
        assert_eq!(text_of(b"a\nb\xff"), "a\nb\\xff");
        assert_eq!(field("Doe, Jane \"JD\""), "\"Doe, Jane \"\"JD\"\"\"");
        assert_eq!(field("=1+2"), "\"'=1+2\"");
        assert_eq!(field("\tx"), "\"\\x09x\"");
        assert_eq!(value("9/18"), "9/18");
        assert_eq!(value("1.000"), "1.000");
        assert_eq!(value("a b"), "\"a b\"");
        assert_eq!(value(""), "");
    }

    #[test]
    fn records_read_back_what_fields_write() {
        let line = format!("{},{},PASS,,{}", field("Doe, \"J\""), field("a\nb"), value("x y"));
        assert_eq!(record(&line).unwrap(), ["Doe, \"J\"", "a\\x0ab", "PASS", "", "x y"]);
        let text = "a,\"b\nc\",d\r\n1,2,3\n";
        assert_eq!(records(text).unwrap(), [vec!["a", "b\nc", "d"], vec!["1", "2", "3"]]);
        assert_eq!(record("\"'=1+1\"").unwrap(), ["'=1+1"]);
        assert_eq!(record("a,").unwrap(), ["a", ""]);
    }

    #[test]
    fn what_is_not_one_record_is_refused() {
        assert!(record("a\nb").is_none());
        assert!(record("\"open").is_none());
        assert!(record("a\"b").is_none());
        assert!(record("\"a\"b").is_none());
        assert!(records("x,\"y").is_err());
    }
}

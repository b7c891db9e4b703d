//! The matrix text file format of lab-mmm:
//!
//! ```text
//! # comment lines and blank lines are skipped
//! 1.5  2   -3
//! 4    5.25 6e-3
//! ```
//!
//! One row per line, elements separated by spaces or tabs, any number syntax Rust's `f64` parser takes
//! (`1`, `-2.5`, `6e-3`), finite values only. The size is what the file holds; every row must be as long
//! as the first. [`write()`] writes the same format, with a `# rows x cols` comment first.

use std::fs;
use std::io::Write as _;
use std::path::Path;

use anyhow::{bail, Context as _, Result};

use super::{Element, HostStorage, Matrix};

/// The most a matrix file may hold: 8192 x 8192 doubles as text are about 1.3 GiB. A path such as
/// `/dev/urandom` would otherwise be read until the machine runs out of memory (issue 26).
const MAX_FILE_BYTES: u64 = 2 << 30;

/// What is read first to tell a text file from binary data: random bytes hold a NUL within it.
const SNIFF_BYTES: u64 = 64 << 10;

/// Reads a matrix file; errors name the file, the line and the column.
pub fn read<T: Element>(path: &Path) -> Result<Matrix<T>> {
    parse(&read_text(path)?, &path.display().to_string())
}

/// The file's text, at most [`MAX_FILE_BYTES`] of it, refused early if it starts with binary data.
fn read_text(path: &Path) -> Result<String> {
    use std::io::Read as _;
    let name = path.display();
    let file = fs::File::open(path).with_context(|| format!("reading {name}"))?;
    let mut limited = file.take(MAX_FILE_BYTES + 1);
    let mut bytes = Vec::new();
    (&mut limited)
        .take(SNIFF_BYTES)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {name}"))?;
    if let Some(at) = bytes.iter().position(|&byte| byte == 0) {
        bail!("{name}: not a text matrix file (a NUL byte at byte {at})");
    }
    limited
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {name}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        bail!(
            "{name}: larger than {}, more than a matrix file lab-mmm reads",
            common::format_bytes(MAX_FILE_BYTES)
        );
    }
    String::from_utf8(bytes)
        .map_err(|err| anyhow::anyhow!("{name}: not UTF-8 text (at byte {})", err.utf8_error().valid_up_to()))
}

/// A token as an error shows it: the whole of a short one, the start of a long one.
fn shown(token: &str) -> String {
    const SHOWN: usize = 40;
    match token.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{:?}... ({} bytes)", &token[..end], token.len()),
        None => format!("{token:?}"),
    }
}

/// Parses the text of a matrix file called `name` (for messages).
pub fn parse<T: Element>(text: &str, name: &str) -> Result<Matrix<T>> {
    let mut values: Vec<T> = Vec::new();
    let mut cols = 0;
    let mut first_row_line = 0;
    let mut rows = 0;
    for (index, line) in text.lines().enumerate() {
        let line_number = index + 1;
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let mut count = 0;
        for (column, token) in tokens(line) {
            let value: f64 =
                token.parse().ok().filter(|v: &f64| v.is_finite()).with_context(|| {
                    format!("{name}:{line_number}:{column}: {} is not a finite number", shown(token))
                })?;
            values.push(T::from_f64(value));
            count += 1;
        }
        if rows == 0 {
            cols = count;
            first_row_line = line_number;
        } else if count != cols {
            bail!(
                "{name}:{line_number}: this row has {count} elements, the first row (line {first_row_line}) has {cols}"
            );
        }
        rows += 1;
    }
    if rows == 0 {
        bail!("{name}: no matrix in the file (it is empty or only comments)");
    }
    Matrix::from_row_major(rows, cols, &values).with_context(|| name.to_string())
}

/// Whitespace-separated tokens with their 1-based column.
fn tokens(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = None;
    let mut spans = Vec::new();
    for (position, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(position),
            (true, Some(begin)) => {
                spans.push((begin + 1, &line[begin..position]));
                start = None;
            }
            _ => {}
        }
    }
    spans.into_iter()
}

/// Writes `matrix` in the format above. Refuses to replace an existing file unless `overwrite`.
pub fn write<T: Element, H: HostStorage<T>>(matrix: &Matrix<T, H>, path: &Path, overwrite: bool) -> Result<()> {
    let _phase = common::phases::enter(common::phases::Phase::Output);
    let mut file = common::output::create_output_file(path, overwrite)?;
    let mut text = format!("# {} x {} matrix\n", matrix.rows(), matrix.cols());
    for row in matrix.data().chunks(matrix.cols()) {
        let cells: Vec<String> = row.iter().map(|v| format!("{:?}", v.to_f64())).collect();
        text.push_str(&cells.join(" "));
        text.push('\n');
    }
    file.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows_comments_and_number_syntaxes() {
        let m: Matrix<f64> = parse("# A\n1 2.5\n\n  -3\t6e-3\n", "A.txt").unwrap();
        assert_eq!((m.rows(), m.cols()), (2, 2));
        assert_eq!(m.data(), &[1.0, 2.5, -3.0, 6e-3]);
    }

    #[test]
    fn names_file_line_and_column_of_a_malformed_number() {
        let err = parse::<f64>("1 2 3\n4 x5 6\n", "A.txt").unwrap_err().to_string();
        assert_eq!(err, "A.txt:2:3: \"x5\" is not a finite number");
        let err = parse::<f64>("1 nan\n", "B.txt").unwrap_err().to_string();
        assert_eq!(err, "B.txt:1:3: \"nan\" is not a finite number");
    }

    #[test]
    fn refuses_ragged_rows() {
        let err = parse::<f64>("# x\n1 2 3\n4 5\n", "A.txt").unwrap_err().to_string();
        assert_eq!(err, "A.txt:3: this row has 2 elements, the first row (line 2) has 3");
    }

    #[test]
    fn refuses_an_empty_file() {
        for text in ["", "\n\n", "# only a comment\n"] {
            let err = parse::<f32>(text, "E.txt").unwrap_err().to_string();
            assert_eq!(err, "E.txt: no matrix in the file (it is empty or only comments)");
        }
    }

    /// Issue 26: a stream of random bytes is refused at once (it was read until the machine ran out of
    /// memory), and a long token is shown cut.
    #[test]
    fn binary_data_and_long_tokens_are_refused_in_one_short_line() {
        let err = read::<f64>(Path::new("/dev/urandom")).unwrap_err().to_string();
        assert!(
            err.starts_with("/dev/urandom: not a text matrix file (a NUL byte at byte "),
            "{err}"
        );
        let long = format!("1 {}\n", "x".repeat(1 << 20));
        let err = parse::<f64>(&long, "L.txt").unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "L.txt:1:3: {:?}... (1048576 bytes) is not a finite number",
                "x".repeat(40)
            )
        );
    }

    #[test]
    fn a_missing_file_is_named() {
        let err = read::<f64>(Path::new("/nonexistent/A.txt")).unwrap_err();
        assert!(
            format!("{err:#}").starts_with("reading /nonexistent/A.txt: "),
            "{err:#}"
        );
    }

    #[test]
    fn writes_what_it_reads_and_never_overwrites_silently() {
        let dir = std::env::temp_dir().join(format!("matrix-file-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("C.txt");
        let _ = fs::remove_file(&path);
        let m = Matrix::<f64>::from_row_major(2, 2, &[0.1, -2.0, 1.0 / 3.0, 4e10]).unwrap();
        write(&m, &path, false).unwrap();
        let back: Matrix<f64> = read(&path).unwrap();
        assert_eq!(back.data(), m.data(), "round trip is exact");
        let err = write(&m, &path, false).unwrap_err().to_string();
        assert!(
            err.ends_with("C.txt exists; not overwriting it (--force replaces it)"),
            "{err}"
        );
        write(&m, &path, true).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Property tests (issue 12): whatever a matrix file holds, the reader answers with a matrix or a
    /// one-line error that names the file, never a panic.
    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn answers_in_one_line(text: &str) -> Result<(), TestCaseError> {
            match parse::<f64>(text, "A.txt") {
                Ok(matrix) => prop_assert!(matrix.rows() >= 1 && matrix.cols() >= 1),
                Err(err) => {
                    let message = format!("{err:#}");
                    prop_assert!(message.starts_with("A.txt") && !message.contains('\n'), "{}", message);
                }
            }
            Ok(())
        }

        proptest! {
            #[test]
            fn any_bytes_give_a_matrix_or_a_one_line_error(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
                answers_in_one_line(&String::from_utf8_lossy(&bytes))?;
            }

            #[test]
            fn number_like_text_gives_a_matrix_or_a_one_line_error(text in "[0-9eE.+ \t\n#xinfa-]{0,300}") {
                answers_in_one_line(&text)?;
            }
        }

        #[test]
        fn a_file_that_is_not_text_is_a_one_line_error() {
            let dir = common::private_dir::PrivateDir::new("matrix-bytes-test").unwrap();
            let path = dir.path().join("binary.txt");
            fs::write(&path, [0x31, 0x20, 0xFF, 0xFE, 0x0A]).unwrap();
            let message = format!("{:#}", read::<f64>(&path).unwrap_err());
            assert_eq!(message, format!("{}: not UTF-8 text (at byte 2)", path.display()));
        }
    }
}

//! The line a user sees while `--check` runs its cases (under compute-sanitizer one case of week 3
//! takes a minute): on a terminal's stderr only, one line rewritten as each case (and each sanitizer
//! tool) starts, cleared before the table. Where stderr is a file or a pipe nothing is written:
//! `grade.sh` keeps it to quote a compile error.

use std::io::{IsTerminal as _, Write as _};

/// Longest line written: wider than the terminal, `\r` would not return to its start.
const WIDTH: usize = 79;

/// Progress over `total` cases.
pub struct Progress {
    on: bool,
    total: usize,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        Progress {
            on: std::io::stderr().is_terminal(),
            total,
        }
    }

    /// Case `index` (from 0) starts, under `tool` of compute-sanitizer where given.
    pub fn case(&self, index: usize, name: &str, tool: Option<&str>) {
        if self.on {
            let mut stderr = std::io::stderr().lock();
            // Progress is a courtesy: a failed write to the terminal changes no result.
            let _ = write!(stderr, "\r\x1b[K{}", line(index, self.total, name, tool));
            let _ = stderr.flush();
        }
    }

    /// Clears the line, before the table is printed.
    pub fn clear(&self) {
        if self.on {
            eprint!("\r\x1b[K");
        }
    }
}

/// "--check: case 6 of 12, under racecheck: mmm f64, 1000 x 999 times 999 x 1001", cut at [`WIDTH`].
fn line(index: usize, total: usize, name: &str, tool: Option<&str>) -> String {
    let under = tool.map_or(String::new(), |tool| format!(", under {tool}"));
    let full = format!("--check: case {} of {total}{under}: {name}", index + 1);
    if full.chars().count() <= WIDTH {
        return full;
    }
    full.chars().take(WIDTH - 3).chain("...".chars()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_case_and_the_tool_within_one_terminal_line() {
        assert_eq!(
            line(5, 12, "mmm f64, 1 x 1 times 1 x 1", Some("racecheck")),
            "--check: case 6 of 12, under racecheck: mmm f64, 1 x 1 times 1 x 1"
        );
        assert_eq!(line(0, 7, "a scene", None), "--check: case 1 of 7: a scene");
        let long = line(0, 6, &"é".repeat(200), Some("memcheck"));
        assert_eq!(long.chars().count(), WIDTH);
        assert!(long.ends_with("é..."));
    }
}

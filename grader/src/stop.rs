//! How the grader ends: one line on stderr (`grade.sh: ` and why) and an exit code that says whose
//! the failure is, the same in every mode.

use std::fmt;

/// The name every line on stderr begins with: the command the README gives the teacher.
pub const ME: &str = "grade.sh";

/// Exit codes: every submission graded (whatever its grades).
pub const GRADED: u8 = 0;
/// Some submissions not graded (a case set changed, a lab without a row, Slurm tasks without one).
pub const NOT_GRADED: u8 = 1;
/// Bad arguments, or a case our own solution fails.
pub const USAGE: u8 = 2;
/// The machine failed (no GPU, our solution failing, MACHINE verdicts).
pub const MACHINE: u8 = 3;
/// Slurm tasks still pending or running: collect again later.
pub const WAITING: u8 = 4;

/// A stop with its exit code and its line (without `grade.sh: `).
#[derive(Debug)]
pub struct Stop {
    pub code: u8,
    pub line: String,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line)
    }
}

impl std::error::Error for Stop {}

/// An error that ends the run with `code` and the one line `line`.
pub fn stop(code: u8, line: impl Into<String>) -> anyhow::Error {
    Stop {
        code,
        line: line.into(),
    }
    .into()
}

/// A line on stderr, for the teacher, not the CSV.
pub fn say(line: &str) {
    eprintln!("{ME}: {line}");
}

/// The exit code of a run so far: the machine's (3) over others' (1) over "still running" (4) over 0.
#[derive(Debug, Default, Clone, Copy)]
pub struct Final(pub u8);

impl Final {
    /// Takes `code` where it is worse than the code so far.
    pub fn worse(&mut self, code: u8) {
        let rank = |code: u8| match code {
            MACHINE => 3,
            NOT_GRADED => 2,
            WAITING => 1,
            _ => 0,
        };
        if rank(code) > rank(self.0) {
            self.0 = code;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_outranks_the_students_and_waiting() {
        let mut code = Final::default();
        code.worse(WAITING);
        assert_eq!(code.0, WAITING);
        code.worse(MACHINE);
        code.worse(NOT_GRADED);
        assert_eq!(code.0, MACHINE);
    }
}

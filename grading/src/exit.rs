//! Whose an error is, and the exit code it gives: the call's ([`Usage`], 2), the machine's
//! ([`Machine`], 3; [`on_the_machine`] for the lab's own steps) or else the student's (1), a compile
//! error's too (`whose_compile_error`); and [`run_lab`], which ends a lab with the exit codes that
//! `--check` and `--list-cases` promise assignments/grade.sh.

use std::fmt;

use anyhow::Result;
use kernels::runtime::CompileError;

use crate::mark;
use crate::ncu_batch;

/// An error in how the lab was called (a flag, a `--cases` file), not in the student's file nor the
/// machine: exit code 2 under [`run_lab`].
#[derive(Debug)]
pub struct Usage(pub String);

/// What keeps the machine from running a check (no GPU or driver, a driver too old, GPU memory the
/// lab's own allocation cannot get, compute-sanitizer or ncu missing, no permission for the GPU's
/// counters), found by the lab's own steps, never by anything the student's code did or printed:
/// MACHINE in the table and the CSV, exit code 3 under [`run_lab`].
#[derive(Debug)]
pub struct Machine(pub String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "machine: {}", self.0)
    }
}

impl std::error::Error for Usage {}
impl std::error::Error for Machine {}

/// `result` of a step of the lab's own that needs only the machine (the GPU opened, our kernels
/// loaded, the case's buffers allocated), taken before the student's module is loaded: its error is
/// the machine's. Whatever comes after the student's module is loaded is the student's (a module
/// that holds most of the GPU's memory, say).
pub fn on_the_machine<T>(result: Result<T>) -> Result<T> {
    result.map_err(|err| match err.downcast::<Machine>() {
        Ok(machine) => anyhow::Error::new(machine),
        Err(err) => anyhow::Error::new(Machine(format!("{err:#}"))),
    })
}

/// Why the machine failed, where `err` is (or wraps) a [`Machine`] error.
pub(crate) fn machine_of(err: &anyhow::Error) -> Option<String> {
    err.chain()
        .find_map(|cause| cause.downcast_ref::<Machine>())
        .map(|machine| machine.0.clone())
}

/// The exit code for `err`: 2 for [`Usage`], 3 for [`Machine`], 1 for anything else (the student's
/// failures, and errors of the lab's experiment).
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.chain().any(|cause| cause.is::<Usage>()) {
        2
    } else if err.chain().any(|cause| cause.is::<Machine>()) {
        3
    } else {
        1
    }
}

/// [`common::cli::run_lab`] for a lab with a student's kernel: the same one line on stderr, with the
/// exit codes `--check` and `--list-cases` promise assignments/grade.sh: 0 all passed, 1 the student's
/// failures, 2 usage (a bad flag, a bad `--cases` file: [`Usage`]), 3 the machine ([`Machine`]).
/// Without those flags every error ends with 1, as in every lab.
///
/// With `--mark` (grade.sh's), stdout ends with the closing mark ([`mark`]); `--verify-mark` alone
/// checks one. `--measure-batch` runs the measured children of other checks in this process, one
/// after another ([`ncu_batch::serve`]).
pub fn run_lab<A: clap::Parser>(run: impl Fn(A) -> Result<()>) -> std::process::ExitCode {
    let first = std::env::args_os().nth(1);
    if first.as_ref().is_some_and(|arg| arg == mark::VERIFY_FLAG) {
        return mark::verify_from_stdin();
    }
    if first.is_some_and(|arg| arg == ncu_batch::FLAG) {
        return ncu_batch::serve(&run);
    }
    if let Err(why) = mark::start() {
        eprintln!("{}: error: {why}", A::command().get_name());
        return std::process::ExitCode::from(2);
    }
    let (mut code, mut message) = (None, String::new());
    let exit = common::cli::run_lab(|args: A| {
        let result = run(args);
        code = Some(result.as_ref().map_or_else(exit_code, |()| 0));
        if let Err(err) = &result {
            message = format!("{err:#}");
        }
        result
    });
    let grading =
        std::env::args_os().any(|arg| ["--check", "--list-cases", "--dry-run"].iter().any(|flag| arg == *flag));
    let code = match code {
        _ if exit == std::process::ExitCode::SUCCESS => 0,
        Some(code) if grading => code,
        Some(_) => 1,
        None if grading => 2, // clap refused the command line
        None => 1,
    };
    mark::finish(code, &message);
    std::process::ExitCode::from(code)
}

/// A compile error as whose it is: a file that is not there is a [`Usage`] error, no nvcc (or none
/// for this GPU, or its files not handled) the [`Machine`]'s, the rest the student's file's.
pub(crate) fn whose_compile_error(err: CompileError) -> anyhow::Error {
    match err {
        CompileError::Missing { .. } => anyhow::Error::new(Usage(err.to_string())),
        CompileError::NoNvcc | CompileError::Unsupported { .. } | CompileError::Io(_) => {
            anyhow::Error::new(Machine(err.to_string()))
        }
        CompileError::Nvcc { ref messages, .. } => match messages.lines().find(|line| line.contains("error")) {
            Some(first) => anyhow::anyhow!("{err}; the first: {}", first.trim()),
            None => anyhow::Error::new(err),
        },
        CompileError::TooLong { .. } | CompileError::ForeignInclude { .. } | CompileError::TooLarge { .. } => {
            anyhow::Error::new(err)
        }
    }
}

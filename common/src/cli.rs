//! One `main` for all labs: every error ends as one line on stderr and exit code 1, never a panic
//! message or a backtrace.

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

/// Parses the lab's flags and runs it:
///
/// ```ignore
/// fn main() -> ExitCode { common::cli::run_lab(run) }
/// fn run(args: Args) -> anyhow::Result<()> { ... }
/// ```
///
/// `--help` and `--version` print and exit 0. A bad flag, or an error from `run`, prints
/// `lab-name: error: <message and its causes on one line>` and exits 1.
///
/// With `LAB_PHASES` set, the run ends with the [`crate::phases`] line on stderr.
pub fn run_lab<A: Parser>(run: impl FnOnce(A) -> anyhow::Result<()>) -> ExitCode {
    crate::phases::start();
    let name = A::command().get_name().to_string();
    install_one_line_panic_hook(name.clone());
    let args = match A::try_parse() {
        Ok(args) => args,
        Err(err) if matches!(err.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            // Printing help can only fail on a closed stdout; there is nothing better to do then.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) => return fail(&name, &first_line_of_clap_error(&err.render().to_string())),
    };
    let result = run(args);
    if crate::phases::requested() {
        eprintln!("{}", crate::phases::summary());
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => fail(&name, &format!("{err:#}")),
    }
}

fn fail(name: &str, message: &str) -> ExitCode {
    let one_line = message.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    eprintln!("{name}: error: {one_line}");
    ExitCode::FAILURE
}

/// clap's message without its "error: " prefix and the usage lines that follow it.
fn first_line_of_clap_error(rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or("bad command line");
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// A bug should still end in one line: which lab, what, where.
fn install_one_line_panic_hook(name: String) {
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_string());
        let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("{name}: internal error{place}: {}", message.replace('\n', " "));
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_first_line_of_a_clap_error() {
        let rendered = "error: invalid value 'x' for '--block-size <N>': invalid digit\n\nUsage: lab [OPTIONS]\n";
        assert_eq!(first_line_of_clap_error(rendered), "invalid value 'x' for '--block-size <N>': invalid digit");
    }
}

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

/// `4096`, `64KiB`, `16MiB`, `1GiB` (also K, M, G): a byte count for a flag (`--sweep-max`,
/// `--buffer-bytes`); clap shows the message.
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let number: usize = number.parse().map_err(|_| format!("{text:?} is not a size like 4096, 64KiB or 1GiB"))?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use KiB, MiB or GiB)")),
    };
    number.checked_mul(scale).filter(|bytes| *bytes >= 4096).ok_or_else(|| format!("{text:?} must be at least 4096 bytes"))
}

fn fail(name: &str, message: &str) -> ExitCode {
    let one_line = message.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    eprintln!("{name}: error: {one_line}");
    ExitCode::FAILURE
}

/// clap's message without its "error: " prefix and the usage lines that follow it.
fn first_line_of_clap_error(rendered: &str) -> String {
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or("bad command line");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // "the following required arguments were not provided:" names them on the next line.
    match (first.ends_with(':'), lines.next()) {
        (true, Some(next)) if !next.trim().is_empty() => format!("{first} {}", next.trim()),
        _ => first.to_string(),
    }
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
        let missing = "error: the following required arguments were not provided:\n  --kernel-source <FILE.cu>\n\nUsage: lab\n";
        assert_eq!(first_line_of_clap_error(missing), "the following required arguments were not provided: --kernel-source <FILE.cu>");
    }

    #[test]
    fn parses_sizes_with_binary_units() {
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert_eq!(parse_bytes("64KiB"), Ok(64 << 10));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("16M"), Ok(16 << 20));
        assert!(parse_bytes("1TB").unwrap_err().contains("unknown unit"));
        assert!(parse_bytes("100").unwrap_err().contains("at least 4096"));
        assert!(parse_bytes("lots").is_err());
    }

    proptest::proptest! {
        /// Property test (issue 12): any size text is a size of at least 4 KiB or an error.
        #[test]
        fn any_sweep_size_text_is_a_size_or_an_error(text in "\\PC{0,12}|[0-9]{1,25}[KMGiB ]{0,4}") {
            match parse_bytes(&text) {
                Ok(bytes) => proptest::prop_assert!(bytes >= 4096),
                Err(message) => proptest::prop_assert!(!message.contains('\n')),
            }
        }
    }
}

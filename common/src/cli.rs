//! One `main` for all labs: every error ends as one line on stderr and exit code 1, never a panic
//! message or a backtrace.

use std::process::ExitCode;
use std::sync::OnceLock;

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
    let _ = LAB_NAME.set(name.clone());
    install_one_line_panic_hook(name.clone());
    let args = match A::try_parse() {
        Ok(args) => args,
        Err(err) if matches!(err.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            // Printing help can only fail on a closed stdout; there is nothing better to do then.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) => return fail(&name, &one_line_clap_error(&err.render().to_string())),
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
    let number: usize = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size like 4096, 64KiB or 1GiB"))?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use KiB, MiB or GiB)")),
    };
    number
        .checked_mul(scale)
        .filter(|bytes| *bytes >= 4096)
        .ok_or_else(|| format!("{text:?} must be at least 4096 bytes"))
}

/// The running lab's name, for [`exit_now`].
static LAB_NAME: OnceLock<String> = OnceLock::new();

/// Prints `message` as [`run_lab`] prints an error and ends the process at once, without running
/// destructors. Only for a GPU that is stuck in work that will not end: freeing its memory or its
/// context would wait for that work, so an ordinary error return would hang instead of reporting.
/// The driver frees everything when the process ends.
pub fn exit_now(message: &str) -> ! {
    let name = LAB_NAME.get().map_or("lab", String::as_str);
    let _ = fail(name, message);
    std::process::exit(1)
}

fn fail(name: &str, message: &str) -> ExitCode {
    let one_line = message.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    eprintln!("{name}: error: {one_line}");
    ExitCode::FAILURE
}

/// clap's message on one line: without its "error: " prefix and the usage lines, but with what it
/// says is accepted (`[possible values: ...]`), ranges in words, and a negative number called one.
fn one_line_clap_error(rendered: &str) -> String {
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or("bad command line");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let rest: Vec<&str> = lines.map(str::trim).collect();
    // "the following required arguments were not provided:" names them on the next line.
    let mut message = match (first.ends_with(':'), rest.first()) {
        (true, Some(next)) if !next.is_empty() => format!("{first} {next}"),
        _ => first.to_string(),
    };
    if let Some(values) = rest.iter().find(|line| line.starts_with("[possible values:")) {
        message = format!("{message} {values}");
    }
    if let Some(number) = message
        .strip_prefix("unexpected argument '")
        .and_then(|tail| tail.strip_suffix("' found"))
    {
        if number.starts_with('-') && number[1..].parse::<f64>().is_ok() {
            message = format!("{number} is not accepted: the values here are not negative");
        }
    }
    readable_range(&message)
}

/// "0 is not in 1..=4294967295" as "0 is not accepted: the least is 1" (the upper end is only the
/// integer type's), and "9 is not in 1..=8" as "9 is not between 1 and 8".
fn readable_range(message: &str) -> String {
    let Some(at) = message.find(" is not in ") else {
        return message.to_string();
    };
    let range = &message[at + " is not in ".len()..];
    let Some((low, high)) = range.split_once("..=") else {
        return message.to_string();
    };
    let high_end = high.find(|c: char| !c.is_ascii_digit()).unwrap_or(high.len());
    let (high_number, after) = high.split_at(high_end);
    let type_limits = [
        "2147483647",
        "4294967295",
        "9223372036854775807",
        "18446744073709551615",
    ];
    let words = if type_limits.contains(&high_number) {
        format!(" is not accepted: the least is {low}")
    } else {
        format!(" is not between {low} and {high_number}")
    };
    format!("{}{words}{after}", &message[..at])
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
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("{name}: internal error{place}: {}", message.replace('\n', " "));
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_first_line_of_a_clap_error() {
        let rendered = "error: invalid value 'x' for '--block-size <N>': invalid digit\n\nUsage: lab [OPTIONS]\n";
        assert_eq!(
            one_line_clap_error(rendered),
            "invalid value 'x' for '--block-size <N>': invalid digit"
        );
        let missing =
            "error: the following required arguments were not provided:\n  --kernel-source <FILE.cu>\n\nUsage: lab\n";
        assert_eq!(
            one_line_clap_error(missing),
            "the following required arguments were not provided: --kernel-source <FILE.cu>"
        );
    }

    /// Issue 26: the one line still says what is accepted.
    #[test]
    fn a_clap_error_keeps_what_is_accepted() {
        let values = "error: invalid value 'tiles' for '--kernel <KERNEL>'\n  [possible values: naive, tiled]\n\n  tip: a similar value exists: 'tiled'\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line_clap_error(values),
            "invalid value 'tiles' for '--kernel <KERNEL>' [possible values: naive, tiled]"
        );
        let least = "error: invalid value '0' for '--block-size <BLOCK_SIZE>': 0 is not in 1..=4294967295\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line_clap_error(least),
            "invalid value '0' for '--block-size <BLOCK_SIZE>': 0 is not accepted: the least is 1"
        );
        let between = "error: invalid value '99' for '--count <COUNT>': 99 is not in 1..=64\n";
        assert_eq!(
            one_line_clap_error(between),
            "invalid value '99' for '--count <COUNT>': 99 is not between 1 and 64"
        );
        let negative = "error: unexpected argument '-5' found\n\n  tip: to pass '-5' as a value, use '-- -5'\n\nUsage: lab-mmm [OPTIONS]\n";
        assert_eq!(
            one_line_clap_error(negative),
            "-5 is not accepted: the values here are not negative"
        );
        let flag = "error: unexpected argument '--fast' found\n\nUsage: lab\n";
        assert_eq!(one_line_clap_error(flag), "unexpected argument '--fast' found");
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

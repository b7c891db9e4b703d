//! A row of the check table: what one case found ([`Outcome`], [`FirstWrong`]) or why it has no
//! result ([`NoResult`]), its verdict and its line from a case's child to the parent ([`Row`]); what a
//! lab's cases build the outcome with ([`first_mismatch`], [`shown`], [`written`], [`written_once`]);
//! and the table itself ([`table`]).

use std::fmt;

use common::verify::Poison;

use crate::times::{Times, SUSPICIOUS_RATIO};

/// The first element a kernel got wrong, in the lab's words.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstWrong {
    /// Where: "sub-interval 256", "C(3, 17)".
    pub position: String,
    /// What it holds: a number, or "never written" for an element that kept both poisons.
    pub value: String,
    pub expected: String,
    /// Which block and thread should have computed it: "block (1, 0), thread (0, 3)".
    pub computed_by: String,
}

impl fmt::Display for FirstWrong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is {}, expected {} (computed by {})",
            self.position, self.value, self.expected, self.computed_by
        )
    }
}

/// What one case found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub wrong: usize,
    pub elements: usize,
    pub first: Option<FirstWrong>,
    /// The student's kernel and ours timed on the case; none for a rule read from the compiler's
    /// report, or under compute-sanitizer.
    pub times: Option<Times>,
    /// A fault beyond the values, which fails the case however right they are: a write outside the
    /// output or into an input (the guard zones and input copies), or compute-sanitizer's first finding.
    pub finding: Option<String>,
}

impl Outcome {
    /// The first of `findings` (guard zones, then inputs) becomes the outcome's finding.
    pub fn with_findings(mut self, findings: impl IntoIterator<Item = Option<String>>) -> Outcome {
        self.finding = self.finding.or_else(|| findings.into_iter().flatten().next());
        self
    }
}

/// A row of the check table, as a child process reports it (or why it has no result).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub case: String,
    pub result: std::result::Result<Outcome, NoResult>,
}

/// Why a row has no result. A plain message (`From<String>`) is a FAULT, the student's: a row is the
/// machine's only where the lab's own step said so ([`Machine`], [`on_the_machine`]), never from
/// anything the student's code printed or did.
///
/// [`Machine`]: crate::exit::Machine
/// [`on_the_machine`]: crate::exit::on_the_machine
#[derive(Debug, Clone, PartialEq)]
pub enum NoResult {
    /// The case ran and died, or hung, or its run could not be vouched for: FAULT.
    Fault(String),
    /// The machine could not run it (no GPU, no compute-sanitizer, no ncu, ...): MACHINE.
    Machine(String),
    /// Not run at all (`--dry-run`): `-`.
    NotRun(String),
}

impl NoResult {
    /// The reason, in words.
    pub fn why(&self) -> &str {
        match self {
            NoResult::Fault(why) | NoResult::Machine(why) | NoResult::NotRun(why) => why,
        }
    }
}

impl From<String> for NoResult {
    fn from(why: String) -> NoResult {
        NoResult::Fault(why)
    }
}

impl From<&str> for NoResult {
    fn from(why: &str) -> NoResult {
        NoResult::Fault(why.to_string())
    }
}

impl Row {
    /// A rule's row, found from the compiler's report or the code before any case runs: `checked`
    /// kernels (or variables) looked at, `failures` those that break the rule, the first one shown.
    pub fn rule(case: &str, checked: usize, failures: Vec<FirstWrong>) -> Row {
        let wrong = failures.len();
        Row {
            case: case.to_string(),
            result: Ok(Outcome {
                wrong,
                elements: checked,
                first: failures.into_iter().next(),
                times: None,
                finding: None,
            }),
        }
    }

    /// A rule read from the build's PTX by `read`, which returns how many kernels it looked at and
    /// those that break the rule; a FAULT row where there is no PTX (our own kernels keep none: only
    /// `--list-cases` without `--kernel-source` meets them).
    pub fn rule_on_ptx(
        case: &str,
        build: &kernels::ArchImage,
        read: impl FnOnce(&crate::ptx::Module) -> (usize, Vec<FirstWrong>),
    ) -> Row {
        match build.ptx {
            Some(text) => {
                let (checked, failures) = read(&crate::ptx::Module::parse(text));
                Row::rule(case, checked, failures)
            }
            None => Row {
                case: case.to_string(),
                result: Err("no PTX was kept to read".into()),
            },
        }
    }

    pub fn passed(&self) -> bool {
        matches!(&self.result, Ok(outcome) if outcome.wrong == 0 && outcome.finding.is_none())
    }

    /// Whether the machine kept this row from a result ([`NoResult::Machine`]).
    pub fn on_the_machine(&self) -> bool {
        matches!(self.result, Err(NoResult::Machine(_)))
    }

    /// PASS, FAIL (wrong values or a finding), FAULT (no result), MACHINE (the machine could not run
    /// it) or `-` (not run).
    pub fn verdict(&self) -> &'static str {
        match &self.result {
            _ if self.passed() => "PASS",
            Ok(_) => "FAIL",
            Err(NoResult::Fault(_)) => "FAULT",
            Err(NoResult::Machine(_)) => "MACHINE",
            Err(NoResult::NotRun(_)) => "-",
        }
    }

    /// The child's line in its result file: tab-separated, so it survives any text but tabs and
    /// newlines, which [`clean`] replaces.
    pub fn to_line(&self) -> String {
        match &self.result {
            Ok(o) => {
                let first = o.first.clone().unwrap_or(FirstWrong {
                    position: String::new(),
                    value: String::new(),
                    expected: String::new(),
                    computed_by: String::new(),
                });
                let time =
                    |field: fn(&Times) -> f64| o.times.as_ref().map_or(String::new(), |times| field(times).to_string());
                let fields = [
                    clean(&self.case),
                    o.wrong.to_string(),
                    o.elements.to_string(),
                    clean(&first.position),
                    clean(&first.value),
                    clean(&first.expected),
                    clean(&first.computed_by),
                    time(|times| times.student_ms),
                    time(|times| times.ours_ms),
                    time(|times| times.spread),
                    o.finding.as_deref().map_or(String::new(), clean),
                ];
                format!("{LINE_TAG}\t{}", fields.join("\t"))
            }
            Err(NoResult::Machine(why)) => format!("{LINE_TAG}\t{}\tmachine\t{}", clean(&self.case), clean(why)),
            Err(other) => format!("{LINE_TAG}\t{}\tfault\t{}", clean(&self.case), clean(other.why())),
        }
    }

    /// Reads a line written by [`Row::to_line`]; anything else is `None`.
    pub fn from_line(line: &str) -> Option<Row> {
        let fields: Vec<&str> = line.strip_prefix(LINE_TAG)?.strip_prefix('\t')?.split('\t').collect();
        match fields.as_slice() {
            [case, "fault", fault] => Some(Row {
                case: case.to_string(),
                result: Err(NoResult::Fault(fault.to_string())),
            }),
            [case, "machine", why] => Some(Row {
                case: case.to_string(),
                result: Err(NoResult::Machine(why.to_string())),
            }),
            [case, wrong, elements, position, value, expected, by, student, ours, spread, finding] => {
                let first = (!position.is_empty()).then(|| FirstWrong {
                    position: position.to_string(),
                    value: value.to_string(),
                    expected: expected.to_string(),
                    computed_by: by.to_string(),
                });
                let times = match [*student, *ours, *spread] {
                    ["", "", ""] => None,
                    _ => Some(Times {
                        student_ms: student.parse().ok()?,
                        ours_ms: ours.parse().ok()?,
                        spread: spread.parse().ok()?,
                    }),
                };
                let finding = (!finding.is_empty()).then(|| finding.to_string());
                Some(Row {
                    case: case.to_string(),
                    result: Ok(Outcome {
                        wrong: wrong.parse().ok()?,
                        elements: elements.parse().ok()?,
                        first,
                        times,
                        finding,
                    }),
                })
            }
            _ => None,
        }
    }
}

const LINE_TAG: &str = "CHECK-ROW";

fn clean(text: &str) -> String {
    text.replace(['\t', '\n', '\r'], " ")
}

/// The first element where `ok(gpu, cpu)` fails, and how many do: for building an [`Outcome`].
pub fn first_mismatch<G: Copy, C: Copy>(gpu: &[G], cpu: &[C], ok: impl Fn(G, C) -> bool) -> (usize, Option<usize>) {
    let mut first = None;
    let mut wrong = 0;
    for (index, (&g, &c)) in gpu.iter().zip(cpu).enumerate() {
        if !ok(g, c) {
            wrong += 1;
            first.get_or_insert(index);
        }
    }
    (wrong + gpu.len().abs_diff(cpu.len()), first)
}

/// A number for the table, to 13 digits (a double off by a few roundings must show where it
/// differs); a NaN is "NaN": whether it was ever written is [`written`]'s to say.
pub fn shown(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else {
        format!("{value:.12e}")
    }
}

/// What an output element holds, from the case's two runs, the first with [`Poison::POISON_WORD`]
/// in the output and the second with [`Poison::SECOND_POISON_WORD`]: "never written" only where it
/// kept each run's poison, else the first run's value as `show` writes it (a NaN the kernel wrote is
/// a NaN, not "never written").
pub fn written<T: Poison>(first: T, second: T, show: impl Fn(T) -> String) -> String {
    if first.holds_word(T::POISON_WORD) && second.holds_word(T::SECOND_POISON_WORD) {
        "never written".to_string()
    } else {
        show(first)
    }
}

/// What an output element holds after one run that began with [`Poison::POISON_WORD`] in the output
/// (a timed run's check, which has no second run to tell a written NaN apart): "never written" where
/// it still holds that word, else its value as `show` writes it.
pub fn written_once<T: Poison>(value: T, show: impl Fn(T) -> String) -> String {
    if value.holds_word(T::POISON_WORD) {
        "never written".to_string()
    } else {
        show(value)
    }
}

/// The check table.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from("| case | verdict | wrong | first wrong element | its value | expected | computed by | your GPU time in ms | ours | ratio (spread) | outside the values |\n");
    out.push_str("|------|---------|-------|---------------------|-----------|----------|-------------|---------------------|------|----------------|--------------------|\n");
    for row in rows {
        let line = match &row.result {
            Ok(o) => {
                let first = o.first.as_ref().map_or("| - | - | - | -".to_string(), |f| format!("| {} | {} | {} | {}", f.position, f.value, f.expected, f.computed_by));
                let (student, ours, ratio) = o.times.as_ref().map_or(("-".into(), "-".into(), "-".into()), time_cells);
                let finding = o.finding.as_deref().unwrap_or("-");
                format!("| {} | {} | {} of {} {first} | {student} | {ours} | {ratio} | {finding} |", row.case, row.verdict(), o.wrong, o.elements)
            }
            Err(NoResult::Machine(_)) => format!("| {} | MACHINE | not run: the machine could not (below), which says nothing of the kernel | | | | | | | | |", row.case),
            Err(NoResult::NotRun(why)) => format!("| {} | - | not run ({why}) | | | | | | | | |", row.case),
            Err(fault) => format!("| {} | FAULT | {} | | | | | | | | |", row.case, fault.why()),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The table's time cells: `0.1234`, `0.1000`, `1.23x ±2%`, with "unsteady" where the launches
/// spread widely and a flag for a teacher where the ratio is suspiciously low.
fn time_cells(times: &Times) -> (String, String, String) {
    let mut ratio = format!("{:.2}x ±{:.0}%", times.ratio(), 100.0 * times.spread);
    if !times.steady() {
        ratio.push_str(", unsteady");
    }
    if times.suspicious() {
        ratio.push_str(&format!(
            ", faster than our kernel of the same technique by over {:.0}x: a teacher should look",
            1.0 / SUSPICIOUS_RATIO
        ));
    }
    (
        format!("{:.4}", times.student_ms),
        format!("{:.4}", times.ours_ms),
        ratio,
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn outcome(wrong: usize) -> Outcome {
        let first = (wrong > 0).then(|| FirstWrong {
            position: "C(1, 2)".into(),
            value: "never written".into(),
            expected: "3.0e0".into(),
            computed_by: "block (0, 0), thread (2, 1)".into(),
        });
        Outcome {
            wrong,
            elements: 12,
            first,
            times: Some(Times {
                student_ms: 2.0,
                ours_ms: 1.0,
                spread: 0.02,
            }),
            finding: None,
        }
    }

    pub(crate) fn found(finding: &str) -> Outcome {
        Outcome {
            finding: Some(finding.into()),
            ..outcome(0)
        }
    }

    #[test]
    fn rows_survive_the_trip_from_child_to_parent() {
        for row in [
            Row {
                case: "17 x 33 x 5, f64".into(),
                result: Ok(outcome(0)),
            },
            Row {
                case: "1 x 1 x 1".into(),
                result: Ok(outcome(3)),
            },
            Row {
                case: "tabs\tand\nnewlines".into(),
                result: Err("CUDA_ERROR_ILLEGAL_ADDRESS (700)".into()),
            },
            Row {
                case: "a rule".into(),
                result: Ok(Outcome {
                    times: None,
                    ..outcome(1)
                }),
            },
            Row {
                case: "past C".into(),
                result: Ok(found("written outside C: C[m*n + 40], 40 elements past the end")),
            },
        ] {
            let back = Row::from_line(&row.to_line()).unwrap();
            assert_eq!(back.case, clean(&row.case));
            assert_eq!(back.result, row.result);
        }
        assert!(Row::from_line("other output").is_none());
        assert!(Row::from_line("CHECK-ROW\ta\t1\t2").is_none());
        assert!(
            Row::from_line("CHECK-ROW\ta\tx\t12\t\t\t\t\t\t\t").is_none(),
            "a count that is no number"
        );
    }

    #[test]
    fn mismatches_count_and_point_at_the_first() {
        assert_eq!(
            first_mismatch(&[1.0, 2.0, 5.0, 7.0], &[1.0, 2.0, 3.0, 4.0], |g: f64, c: f64| g == c),
            (2, Some(2))
        );
        assert_eq!(first_mismatch(&[1.0], &[1.0, 2.0], |g: f64, c: f64| g == c), (1, None));
        assert_eq!(shown(f64::NAN), "NaN");
    }

    #[test]
    fn never_written_means_both_poisons_stayed() {
        let second = f64::from_bits(u64::from(f64::SECOND_POISON_WORD) << 32 | u64::from(f64::SECOND_POISON_WORD));
        assert_eq!(written(f64::POISON, second, shown), "never written");
        // The kernel's own NaN, in either run, is a value it wrote.
        assert_eq!(written(f64::NAN, f64::NAN, shown), "NaN");
        assert_eq!(written(f64::POISON, f64::POISON, shown), "NaN");
        assert_eq!(written(2.5, 2.5, shown), "2.500000000000e0");
        assert_eq!(
            written(u32::POISON, u32::SECOND_POISON_WORD, |p| format!("{p:x}")),
            "never written"
        );
        assert_eq!(written_once(f64::POISON, shown), "never written");
        assert_eq!(
            (written_once(f64::NAN, shown), written_once(2.5, shown)),
            ("NaN".to_string(), "2.500000000000e0".to_string())
        );
    }
}

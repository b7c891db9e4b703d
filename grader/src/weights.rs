//! `--weights`: how much each case and rule counts in the score, and the score itself.
//!
//! The score is 0 to 100: the weights of the cases passed, plus the weights of the rules passed times
//! the share of the cases' weight passed, over all weights. Rules (a column named `rule: what it asks`)
//! judge how a kernel computes; an empty starter passes some ("at most 48 loads" holds for no load at
//! all), so they count only as far as the results are right. A rule judged on no case (`-`: one stream
//! cannot overlap, a case too small for it) is left out, its weight too.

use std::path::Path;

use anyhow::Result;

use crate::csv::escaped;
use crate::stop::{stop, USAGE};

/// Each verdict column's weight, in the columns' order.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights(pub Vec<f64>);

/// Whether a column is a rule's (`name: what it asks`) rather than a case's.
pub fn is_rule(name: &str) -> bool {
    name.contains(": ")
}

impl Weights {
    /// Every column weighs 1.
    pub fn even(columns: usize) -> Weights {
        Weights(vec![1.0; columns])
    }

    /// The weights `file` gives the columns `names` of week `week`: lines `NAME WEIGHT`, NAME a column
    /// as the header names it, a rule's name before its `: ` (weighing each of its columns), or `*` (every
    /// column no other line names); `#` lines are comments. A line that is not so, a name that is no
    /// column, a column weighted twice, or nothing weighed at all is one line and exit code 2.
    pub fn read(file: &Path, names: &[String], week: &str) -> Result<Weights> {
        let shown = crate::csv::shown(file);
        let bytes = std::fs::read(file).map_err(|err| stop(USAGE, format!("--weights {shown}: {err}")))?;
        let text = String::from_utf8_lossy(&bytes);
        let fail = |number: usize, why: String| stop(USAGE, format!("--weights {shown}, line {number}: {why}"));
        let mut weights = vec![None; names.len()];
        let mut default: Option<(f64, usize)> = None;
        for (number, line) in numbered_lines(&text) {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((name, weight)) = line.rsplit_once(char::is_whitespace) else {
                return Err(fail(number, format!("not NAME WEIGHT: {}", escaped(line.as_bytes()))));
            };
            let name = name.trim_end();
            let weight = parse_weight(weight).ok_or_else(|| {
                fail(
                    number,
                    format!("'{}' is no weight (a number, 0 or more)", escaped(weight.as_bytes())),
                )
            })?;
            if name == "*" {
                if let Some((_, line)) = default {
                    return Err(fail(number, format!("* has a weight already (line {line})")));
                }
                default = Some((weight, number));
                continue;
            }
            let mut matched = false;
            for (at, column) in names.iter().enumerate() {
                if column == name || column.strip_prefix(name).is_some_and(|rest| rest.starts_with(": ")) {
                    if let Some((_, line)) = weights[at] {
                        return Err(fail(number, format!("'{column}' has a weight already (line {line})")));
                    }
                    weights[at] = Some((weight, number));
                    matched = true;
                }
            }
            if !matched {
                return Err(fail(
                    number,
                    format!(
                        "week {week} has no case or rule named '{}' (names: a column of the CSV header as it is, a rule's name before its ': '{}, or *)",
                        escaped(name.as_bytes()),
                        rule_names(names)
                    ),
                ));
            }
        }
        let default = default.map_or(1.0, |(weight, _)| weight);
        let weights: Vec<f64> = weights
            .iter()
            .map(|set| set.map_or(default, |(weight, _)| weight))
            .collect();
        if weights.iter().sum::<f64>() <= 0.0 {
            return Err(stop(
                USAGE,
                format!("--weights {shown} weighs every case and rule 0: no score could be given"),
            ));
        }
        Ok(Weights(weights))
    }

    /// The score of a row whose verdicts are `verdicts` (the columns `names`), with one decimal; at most
    /// `cap` where a rule failed (a kernel that skips the week's technique earns at most that much).
    pub fn score(&self, names: &[String], verdicts: &[String], cap: f64) -> String {
        let (mut total, mut cases, mut cases_passed, mut rules_passed) = (0.0, 0.0, 0.0, 0.0);
        for ((name, verdict), weight) in names.iter().zip(verdicts).zip(&self.0) {
            let rule = is_rule(name);
            if rule && verdict == "-" {
                continue;
            }
            total += weight;
            let passed = verdict == "PASS";
            match (rule, passed) {
                (false, _) => {
                    cases += weight;
                    if passed {
                        cases_passed += weight;
                    }
                }
                (true, true) => rules_passed += weight,
                (true, false) => {}
            }
        }
        let share = if cases > 0.0 { cases_passed / cases } else { 1.0 };
        let score = if total > 0.0 {
            100.0 * (cases_passed + rules_passed * share) / total
        } else {
            0.0
        };
        let failed_rule = names
            .iter()
            .zip(verdicts)
            .any(|(name, verdict)| is_rule(name) && verdict != "PASS" && verdict != "-");
        let score = if failed_rule { score.min(cap) } else { score };
        format!("{score:.1}")
    }
}

/// A weight: a decimal number, 0 or more, without sign or exponent.
fn parse_weight(text: &str) -> Option<f64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    let shape = digits(whole) && digits(fraction) && (!whole.is_empty() || !fraction.is_empty());
    shape.then(|| text.parse().ok()).flatten()
}

/// The rules' names before their `: `, once each, as ` (a, b)`; empty where there are none.
fn rule_names(names: &[String]) -> String {
    let mut rules: Vec<&str> = Vec::new();
    for name in names.iter().filter(|name| is_rule(name)) {
        let rule = name.split(": ").next().unwrap_or(name);
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    if rules.is_empty() {
        String::new()
    } else {
        format!(" ({})", rules.join(", "))
    }
}

/// The lines of a text file a spreadsheet may have written, numbered from 1: a byte order mark and
/// carriage returns left out.
pub fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .enumerate()
        .map(|(at, line)| (at + 1, line.trim_end_matches('\r')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        [
            "tiles: two",
            "tiling, measured: loads",
            "tiling, measured: time",
            "mmm 1",
            "mmm 2",
        ]
        .map(String::from)
        .to_vec()
    }

    fn verdicts(list: &str) -> Vec<String> {
        list.split(' ').map(String::from).collect()
    }

    #[test]
    fn rules_count_as_far_as_the_cases_are_right() {
        let even = Weights::even(5);
        assert_eq!(
            even.score(&names(), &verdicts("PASS PASS PASS PASS PASS"), 100.0),
            "100.0"
        );
        assert_eq!(
            even.score(&names(), &verdicts("PASS PASS PASS FAIL FAIL"), 100.0),
            "0.0"
        );
        assert_eq!(
            even.score(&names(), &verdicts("PASS PASS PASS PASS FAIL"), 100.0),
            "50.0"
        );
        // A rule judged on no case is left out, its weight too.
        assert_eq!(even.score(&names(), &verdicts("- PASS PASS PASS FAIL"), 100.0), "50.0");
    }

    #[test]
    fn a_failed_rule_caps_the_score() {
        let even = Weights::even(5);
        // Every case right, the technique skipped: 80 without the cap, 50 with it.
        assert_eq!(
            even.score(&names(), &verdicts("FAIL PASS PASS PASS PASS"), 100.0),
            "80.0"
        );
        assert_eq!(
            even.score(&names(), &verdicts("FAIL PASS PASS PASS PASS"), 50.0),
            "50.0"
        );
        assert_eq!(even.score(&names(), &verdicts("- PASS PASS PASS PASS"), 50.0), "100.0");
    }

    #[test]
    fn weights_by_column_rule_or_star() {
        let dir = std::env::temp_dir().join(format!("grader-weights-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("w.txt");
        std::fs::write(&file, "\u{feff}# w\r\ntiling, measured 0\r\n* 2\nmmm 1  3\n").unwrap();
        assert_eq!(
            Weights::read(&file, &names(), "03").unwrap(),
            Weights(vec![2.0, 0.0, 0.0, 3.0, 2.0])
        );
        std::fs::write(&file, "tilse 1\n").unwrap();
        let err = Weights::read(&file, &names(), "03").unwrap_err().to_string();
        assert!(err.ends_with("line 1: week 03 has no case or rule named 'tilse' (names: a column of the CSV header as it is, a rule's name before its ': ' (tiles, tiling, measured), or *)"), "{err}");
        for (text, why) in [
            ("tiles", "not NAME WEIGHT: tiles"),
            ("tiles -1", "'-1' is no weight (a number, 0 or more)"),
            ("tiles 1e3", "'1e3' is no weight (a number, 0 or more)"),
        ] {
            std::fs::write(&file, text).unwrap();
            assert!(
                Weights::read(&file, &names(), "03")
                    .unwrap_err()
                    .to_string()
                    .ends_with(why),
                "{text}"
            );
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}

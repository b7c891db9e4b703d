//! nvprof's summary, from CUPTI's records: every kernel and copy by name, with its share of the GPU's
//! busy time, as the German and Korean slides show it (`Time(%) Time Calls Avg Min Max Name`).

use std::collections::BTreeMap;

use super::records::Activity;

/// One line of the table: every activity with one name.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub calls: usize,
    pub total_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Line {
    pub fn average_ns(&self) -> f64 {
        self.total_ns as f64 / self.calls as f64
    }
}

/// The lines, longest total first (nvprof's order); names sort ties so the order is stable.
pub fn lines(activities: &[Activity]) -> Vec<Line> {
    lines_of(
        activities
            .iter()
            .map(|activity| (activity.name.as_str(), activity.duration_ns())),
    )
}

/// [`lines`] of any named durations (nanoseconds).
fn lines_of<'a>(items: impl Iterator<Item = (&'a str, u64)>) -> Vec<Line> {
    let mut by_name: BTreeMap<&str, Line> = BTreeMap::new();
    for (name, duration) in items {
        let line = by_name.entry(name).or_insert_with(|| Line {
            name: name.to_string(),
            calls: 0,
            total_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        });
        line.calls += 1;
        line.total_ns += duration;
        line.min_ns = line.min_ns.min(duration);
        line.max_ns = line.max_ns.max(duration);
    }
    let mut lines: Vec<Line> = by_name.into_values().collect();
    lines.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.name.cmp(&b.name)));
    lines
}

/// The table as nvprof printed it, headed `GPU activities:`; names longer than `name_width` are cut
/// (nvprof cut them at the terminal's edge).
pub fn table(activities: &[Activity], name_width: usize) -> String {
    let mut out = header();
    out.push_str(&section("GPU activities:", &lines(activities), name_width));
    out
}

/// nvprof's second section, `API calls:`: every driver and runtime call the host made, by name, from
/// `(name, duration in ns)` pairs; shares of the time the host spent in them.
pub fn api_table(calls: &[(String, u64)], name_width: usize) -> String {
    let lines = lines_of(calls.iter().map(|(name, ns)| (name.as_str(), *ns)));
    section("API calls:", &lines, name_width)
}

/// nvprof's column heads.
fn header() -> String {
    format!(
        "{:>16} {:>9} {:>6} {:>9} {:>9} {:>9}  Name\n",
        "Time(%)", "Time", "Calls", "Avg", "Min", "Max"
    )
}

/// One section: `label` on its first line, each line's share of the section's total.
fn section(label: &str, lines: &[Line], name_width: usize) -> String {
    let busy: u64 = lines.iter().map(|line| line.total_ns).sum();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let label = if i == 0 { label } else { "" };
        let share = if busy == 0 {
            0.0
        } else {
            100.0 * line.total_ns as f64 / busy as f64
        };
        out.push_str(&format!(
            "{label:>15}{:>7.2}% {:>9} {:>6} {:>9} {:>9} {:>9}  {}\n",
            share,
            nvprof_time(line.total_ns as f64),
            line.calls,
            nvprof_time(line.average_ns()),
            nvprof_time(line.min_ns as f64),
            nvprof_time(line.max_ns as f64),
            cut(&line.name, name_width)
        ));
    }
    if lines.is_empty() {
        out.push_str(&format!("{label} none recorded\n"));
    }
    out
}

/// nvprof's time format: five significant digits in the largest unit below 1000 (`1.64119s`,
/// `94.167ms`, `4.7083ms`, `371.14us`), nanoseconds whole (`601ns`).
pub fn nvprof_time(ns: f64) -> String {
    if ns < 1e3 {
        return format!("{ns:.0}ns");
    }
    let (value, unit) = if ns < 1e6 {
        (ns / 1e3, "us")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        return format!("{:.5}s", ns / 1e9);
    };
    let decimals = if value >= 100.0 {
        2
    } else if value >= 10.0 {
        3
    } else {
        4
    };
    format!("{value:.decimals$}{unit}")
}

/// `name`, or its first `width - 3` characters and `...` where it is longer than `width`.
pub(super) fn cut(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        name.to_string()
    } else {
        let kept: String = name.chars().take(width.saturating_sub(3)).collect();
        format!("{kept}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Direction, What};

    fn activity(name: &str, start_ns: u64, end_ns: u64) -> Activity {
        let what = match Direction::from_label(name.trim_start_matches("[CUDA memcpy ").trim_end_matches(']')) {
            Some(direction) => What::Copy {
                direction,
                bytes: 1,
                pageable: false,
            },
            None => What::Kernel {
                grid: [1; 3],
                block: [1; 3],
            },
        };
        Activity {
            what,
            name: name.into(),
            start_ns,
            end_ns,
            device: 0,
            stream: 1,
            correlation: 0,
            channel: 0,
        }
    }

    #[test]
    fn formats_times_as_nvprof_did() {
        assert_eq!(nvprof_time(1_641_190_000.0), "1.64119s");
        assert_eq!(nvprof_time(94_167_000.0), "94.167ms");
        assert_eq!(nvprof_time(4_708_300.0), "4.7083ms");
        assert_eq!(nvprof_time(164_120_000.0), "164.12ms");
        assert_eq!(nvprof_time(371_140.0), "371.14us");
        assert_eq!(nvprof_time(601.0), "601ns");
    }

    #[test]
    fn groups_by_name_longest_total_first_with_shares_that_add_up() {
        let activities = vec![
            activity("[CUDA memcpy HtoD]", 0, 100),
            activity("mmm", 100, 1100),
            activity("[CUDA memcpy HtoD]", 1100, 1300),
            activity("[CUDA memcpy DtoH]", 1300, 1450),
            activity("mmm", 1450, 2450),
        ];
        let lines = lines(&activities);
        let names: Vec<&str> = lines.iter().map(|line| line.name.as_str()).collect();
        assert_eq!(names, ["mmm", "[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]"]);
        assert_eq!(
            (
                lines[1].calls,
                lines[1].total_ns,
                lines[1].min_ns,
                lines[1].max_ns,
                lines[1].average_ns()
            ),
            (2, 300, 100, 200, 150.0)
        );
        let table = table(&activities, 40);
        let shares: f64 = table
            .lines()
            .skip(1)
            .map(|line| line[15..22].trim().parse::<f64>().unwrap())
            .sum();
        assert!((shares - 100.0).abs() < 0.02, "{table}");
        assert!(
            table.lines().nth(1).unwrap().starts_with("GPU activities:  81.63%"),
            "{table}"
        );
    }

    #[test]
    fn api_calls_get_their_own_section_with_their_own_shares() {
        let calls = vec![
            ("cuMemHostAlloc".to_string(), 134_600_000),
            ("cuLaunchKernel".to_string(), 30_000),
            ("cuLaunchKernel".to_string(), 10_000),
        ];
        let table = api_table(&calls, 40);
        let first = table.lines().next().unwrap();
        assert!(first.starts_with("     API calls:  99.97%"), "{table}");
        assert!(table.lines().nth(1).unwrap().contains("2  20.000us"), "{table}");
        assert!(api_table(&[], 40).contains("API calls: none recorded"));
    }

    #[test]
    fn cuts_long_names_and_says_when_nothing_was_recorded() {
        let long = activity(&"k".repeat(50), 0, 10);
        assert!(table(&[long], 20).contains(&format!("{}...", "k".repeat(17))));
        assert!(table(&[], 20).contains("none recorded"));
    }
}

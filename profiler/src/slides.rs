//! The nvprof tables the slides printed, set beside ours by `--profile` for the same program: the
//! German slides' five matrix programs (COUNT 10 products of N x N doubles on their Fermi GPU, CUDA
//! 5.5; the slides do not print N) and the Korean notes' zero-copy `vectorAdd`. Only the numbers are kept, as the slides
//! give them; the layout is ours.

/// One line of a slide's table: Time(%), Time, Calls, Avg, Min, Max, Name, as printed.
type SlideLine = (
    &'static str,
    &'static str,
    u32,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

pub struct SlideTable {
    /// Which slides, which GPU and tools.
    pub source: &'static str,
    lines: &'static [SlideLine],
}

impl SlideTable {
    /// The lines in the columns of [`summary::table`](crate::summary::table).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (i, (share, time, calls, avg, min, max, name)) in self.lines.iter().enumerate() {
            let label = if i == 0 { "GPU activities:" } else { "" };
            out.push_str(&format!(
                "{label:>15}{share:>8} {time:>9} {calls:>6} {avg:>9} {min:>9} {max:>9}  {name}\n"
            ));
        }
        out
    }
}

const GERMAN: &str = "German slides, nvprof of CUDA 5.5 on their Fermi GPU, COUNT 10 (N not printed)";
const MMM_KERNEL: &str = "mmm(SquareMatrix<double>, SquareMatrix<double>, ...)";

/// The slide's table for the program named `program`, if the slides profiled it.
pub fn table(program: &str) -> Option<SlideTable> {
    let lines: &'static [SlideLine] = match program {
        "mmm" => &[
            ("90.38%", "1.64119s", 10, "164.12ms", "164.08ms", "164.14ms", MMM_KERNEL),
            (
                "5.19%",
                "94.167ms",
                20,
                "4.7083ms",
                "4.6672ms",
                "5.0939ms",
                "[CUDA memcpy HtoD]",
            ),
            (
                "4.44%",
                "80.588ms",
                10,
                "8.0588ms",
                "8.0159ms",
                "8.1020ms",
                "[CUDA memcpy DtoH]",
            ),
        ],
        "mmm-without-transfers" => &[(
            "100.00%", "1.64106s", 10, "164.11ms", "164.09ms", "164.12ms", MMM_KERNEL,
        )],
        "mmm-streamed" => &[
            ("90.36%", "1.64105s", 10, "164.11ms", "164.09ms", "164.14ms", MMM_KERNEL),
            (
                "5.19%",
                "94.228ms",
                20,
                "4.7114ms",
                "4.6703ms",
                "4.8342ms",
                "[CUDA memcpy HtoD]",
            ),
            (
                "4.45%",
                "80.833ms",
                10,
                "8.0833ms",
                "8.0303ms",
                "8.1465ms",
                "[CUDA memcpy DtoH]",
            ),
        ],
        "mmm-streamed-and-pinned" => &[
            ("95.87%", "1.64091s", 10, "164.09ms", "164.07ms", "164.10ms", MMM_KERNEL),
            (
                "2.76%",
                "47.267ms",
                20,
                "2.3633ms",
                "2.3505ms",
                "2.4718ms",
                "[CUDA memcpy HtoD]",
            ),
            (
                "1.37%",
                "23.461ms",
                10,
                "2.3461ms",
                "2.3449ms",
                "2.3534ms",
                "[CUDA memcpy DtoH]",
            ),
        ],
        "mmm-mapped" => &[(
            "100.00%", "3.04127s", 10, "304.13ms", "302.77ms", "314.53ms", MMM_KERNEL,
        )],
        "vectorAdd (zero-copy)" => {
            return Some(SlideTable {
                source: "Korean notes (2016), nvprof of the ZeroCopy sample on their GPU under Windows",
                lines: &[(
                    "100.00%",
                    "371.14us",
                    1,
                    "371.14us",
                    "371.14us",
                    "371.14us",
                    "vectorAdd(int*, int*, int*)",
                )],
            })
        }
        _ => return None,
    };
    Some(SlideTable { source: GERMAN, lines })
}

/// The programs with a slide table, for the labs' `--profile` help and tests.
pub const PROGRAMS: [&str; 6] = [
    "mmm",
    "mmm-without-transfers",
    "mmm-streamed",
    "mmm-streamed-and-pinned",
    "mmm-mapped",
    "vectorAdd (zero-copy)",
];

#[cfg(test)]
mod tests {
    use super::super::summary;
    use super::*;

    #[test]
    fn every_program_has_a_table_whose_times_read_as_nvprofs() {
        for program in PROGRAMS {
            let table = table(program).unwrap_or_else(|| panic!("{program}"));
            for (share, time, calls, avg, ..) in table.lines {
                let percent: f64 = share.trim_end_matches('%').parse().unwrap();
                assert!((0.0..=100.0).contains(&percent));
                // Time = Calls x Avg, to the digits printed.
                let total = parse_nvprof_time(time);
                let average = parse_nvprof_time(avg);
                assert!(
                    (total / (f64::from(*calls) * average) - 1.0).abs() < 1e-3,
                    "{program}: {time} vs {calls} x {avg}"
                );
                assert_eq!(
                    summary::nvprof_time(total),
                    *time,
                    "our format reads the slide's number back the same"
                );
            }
            assert!(table.text().starts_with("GPU activities:"));
        }
        assert!(table("chunked").is_none());
    }

    fn parse_nvprof_time(text: &str) -> f64 {
        for (unit, scale) in [("ms", 1e6), ("us", 1e3), ("ns", 1.0), ("s", 1e9)] {
            if let Some(number) = text.strip_suffix(unit) {
                return number.parse::<f64>().unwrap() * scale;
            }
        }
        panic!("{text}")
    }
}

//! The trace our CUPTI recorder writes when a student's program exits (`grading/programs/recorder.cpp`
//! says the format), read back into the profiler's [`Activity`] records, which the rules measure
//! and the chronogram draws. Only a whole trace counts: its first line must carry the random word
//! the check gave the recorder (a file the program wrote itself would have to guess it), and its
//! last line the number of records above it.

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use profiler::records::{Activity, Direction, What};

/// `CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE`: host memory the copy engines cannot read directly.
const MEMORY_PAGEABLE: u8 = 1;

/// A program's trace: every kernel, copy and memset, in the order CUPTI handed them over.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub activities: Vec<Activity>,
    /// Where the program got to, on CUPTI's clock: (time in ns, name), `write_floats` when it began
    /// to read its results.
    pub marks: Vec<(u64, String)>,
    /// When a CUDA call that waits for the GPU returned (time in ns, the call's name), on the same
    /// clock; `None` in a trace of the recorder's version 1, which did not record them (the traces
    /// the tests judge again).
    pub waits: Option<Vec<(u64, String)>>,
}

/// What CUPTI's clock and the check's may disagree by over one program's run: the GPU's timer
/// against the host's, and the moments just before the spawn and just after the exit.
const CLOCK_SLACK_NS: u64 = 2_000_000;

impl Trace {
    /// From the first record's start to the last record's end, mark or wait, in ns: how long the
    /// trace says the program was at work (0 for a trace with nothing in it).
    pub fn span_ns(&self) -> u64 {
        let starts = self.activities.iter().map(|a| a.start_ns);
        let ends = self.activities.iter().map(|a| a.end_ns);
        let waits = self.waits.iter().flatten();
        let marks = self.marks.iter().chain(waits).map(|(time, _)| *time);
        let first = starts.chain(marks.clone()).min();
        let last = ends.chain(marks).max();
        first.zip(last).map_or(0, |(first, last)| last.saturating_sub(first))
    }

    /// The trace, if it fits in `wall`, the program's run as the check timed it from outside (spawn
    /// to exit): a trace the program wrote itself, or one replayed from another run, that claims more
    /// time than the process lived is refused (issue 60, item 4). An honest trace always fits: every
    /// record happens while the process lives.
    pub fn within(self, wall: std::time::Duration) -> Result<Self> {
        let (span, wall_ns) = (self.span_ns(), wall.as_nanos().min(u64::MAX as u128) as u64);
        ensure!(
            span <= wall_ns + wall_ns / 1000 + CLOCK_SLACK_NS,
            "it spans {:.1} ms, but the program ran for only {:.1} ms",
            span as f64 / 1e6,
            wall_ns as f64 / 1e6
        );
        Ok(self)
    }
}

/// The recorder's version (its first line): version 2 adds the `wait` lines.
const VERSION: &str = "2";

/// Reads `text`, a trace of this recorder's version whose first line must name `nonce`.
pub fn parse(text: &str, nonce: &str) -> Result<Trace> {
    parse_versions(text, nonce, &[VERSION])
}

fn parse_versions(text: &str, nonce: &str, versions: &[&str]) -> Result<Trace> {
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next().ok_or_else(|| anyhow!("the trace is empty"))?;
    let header: Vec<&str> = first.split(' ').collect();
    ensure!(
        header.len() == 3 && header[0] == "lab-recorder" && versions.contains(&header[1]) && header[2] == nonce,
        "the trace's first line is not the recorder's of this run"
    );
    let mut activities = Vec::new();
    let mut marks = Vec::new();
    let mut waits = (header[1] != "1").then(Vec::new);
    while let Some((index, line)) = lines.next() {
        let fields: Vec<&str> = line.split('\t').collect();
        // A `wait` line in a version 1 trace is an unknown record, as that recorder wrote none.
        let timed = match (fields[0], waits.as_mut()) {
            ("mark", _) => Some(&mut marks),
            ("wait", Some(waits)) => Some(waits),
            _ => None,
        };
        if let Some(list) = timed {
            ensure!(fields.len() == 3, "line {}: `{}` takes 2 fields", index + 1, fields[0]);
            let time = number(fields[1]).with_context(|| format!("line {}", index + 1))?;
            list.push((time, fields[2].to_string()));
            continue;
        }
        if fields[0] == "end" {
            ensure!(fields.len() == 3, "line {}: `end` takes 2 fields", index + 1);
            let records: usize = number(fields[1]).with_context(|| format!("line {}", index + 1))?;
            let held = activities.len() + marks.len() + waits.as_ref().map_or(0, Vec::len);
            ensure!(
                records == held,
                "the trace ends with {records} records and holds {held}"
            );
            let dropped: u64 = number(fields[2]).with_context(|| format!("line {}", index + 1))?;
            // The rules measure what ran: with records missing they would judge part of it.
            ensure!(dropped == 0, "CUPTI lost {dropped} records (its buffers were full)");
            // Our trace ends the pipe: anything after it was written by someone else.
            ensure!(lines.next().is_none(), "something was written after the trace's end");
            return Ok(Trace {
                activities,
                marks,
                waits,
            });
        }
        activities.push(activity(&fields).with_context(|| format!("line {} of the trace", index + 1))?);
    }
    bail!("the trace has no `end` line: the recorder did not finish it")
}

/// Reads a trace `--chronograms` kept (case-N.trace), whose word is on its own first line: of this
/// recorder's version, or of version 1 (the saved traces the tests judge again).
fn parse_saved(text: &str) -> Result<Trace> {
    let nonce = text
        .lines()
        .next()
        .and_then(|line| line.split(' ').nth(2))
        .unwrap_or_default();
    parse_versions(text, nonce, &["1", VERSION])
}

/// A case kept for the tests that judge again what a GPU recorded: `DIR/NAME.trace` (as
/// `--chronograms` kept it) and `DIR/NAME.rows` (the rows its check printed for that case).
pub fn load_saved(dir: &std::path::Path, name: &str) -> Result<(Trace, String)> {
    let read = |ext: &str| {
        let path = dir.join(format!("{name}.{ext}"));
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
    };
    Ok((parse_saved(&read("trace")?)?, read("rows")?))
}

fn activity(fields: &[&str]) -> Result<Activity> {
    let want = |count: usize| {
        ensure!(
            fields.len() == count,
            "`{}` takes {} fields, not {}",
            fields[0],
            count - 1,
            fields.len() - 1
        );
        Ok(())
    };
    let common = |what: What, name: String| -> Result<Activity> {
        let (start_ns, end_ns): (u64, u64) = (number(fields[1])?, number(fields[2])?);
        // CUPTI leaves 0 in a record it could not finish (work still running at the forced flush).
        ensure!(
            start_ns > 0 && end_ns >= start_ns,
            "`{}` runs from {start_ns} to {end_ns} ns",
            fields[0]
        );
        Ok(Activity {
            what,
            name,
            start_ns,
            end_ns,
            device: number(fields[3])?,
            stream: number(fields[4])?,
            correlation: 0,
            channel: 0,
        })
    };
    match fields[0] {
        "kernel" => {
            want(8)?;
            let what = What::Kernel {
                grid: triple(fields[5])?,
                block: triple(fields[6])?,
            };
            common(what, profiler::records::demangle(fields[7]))
        }
        "memcpy" => {
            want(10)?;
            let direction = Direction::from_cupti(number(fields[5])?);
            let (source, destination): (u8, u8) = (number(fields[6])?, number(fields[7])?);
            let what = What::Copy {
                direction,
                bytes: number(fields[8])?,
                pageable: source == MEMORY_PAGEABLE || destination == MEMORY_PAGEABLE,
            };
            let mut copy = common(what, format!("[CUDA memcpy {}]", direction.label()))?;
            copy.channel = number(fields[9])?;
            Ok(copy)
        }
        "memset" => {
            want(6)?;
            common(
                What::Memset {
                    bytes: number(fields[5])?,
                },
                "[CUDA memset]".to_string(),
            )
        }
        other => bail!("unknown record `{other}`"),
    }
}

fn number<T: std::str::FromStr>(field: &str) -> Result<T> {
    field.parse().map_err(|_| anyhow!("`{field}` is not a number"))
}

fn triple(field: &str) -> Result<[i32; 3]> {
    let parts: Vec<&str> = field.split(',').collect();
    ensure!(parts.len() == 3, "`{field}` is not x,y,z");
    Ok([number(parts[0])?, number(parts[1])?, number(parts[2])?])
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A trace as the recorder writes it: two chunks on streams 13 and 14, one copy from pageable
    /// memory, and a wait for the GPU before the results are read.
    pub const TRACE: &str = "lab-recorder 2 abc123
memcpy\t1000\t2000\t0\t13\t1\t2\t3\t4096\t5
kernel\t2000\t5000\t0\t13\t4,1,1\t256,1,1\t_Z6kernelPKfPfii
memcpy\t2000\t3000\t0\t14\t1\t1\t3\t4096\t5
memset\t100\t200\t0\t7\t64
wait\t5500\tcudaDeviceSynchronize
mark\t6000\twrite_floats
end\t6\t0
";

    #[test]
    fn reads_every_record_of_a_whole_trace() {
        let trace = parse(TRACE, "abc123").unwrap();
        assert_eq!(trace.activities.len(), 4);
        let kernel = &trace.activities[1];
        assert_eq!(kernel.name, "kernel(float const*, float*, int, int)");
        assert_eq!((kernel.start_ns, kernel.end_ns, kernel.stream), (2000, 5000, 13));
        assert_eq!(
            kernel.what,
            What::Kernel {
                grid: [4, 1, 1],
                block: [256, 1, 1]
            }
        );
        assert_eq!(
            trace.activities[2].what,
            What::Copy {
                direction: Direction::HtoD,
                bytes: 4096,
                pageable: true
            }
        );
        assert_eq!(trace.activities[0].channel, 5);
        assert_eq!(trace.marks, [(6000, "write_floats".to_string())]);
        assert_eq!(trace.waits, Some(vec![(5500, "cudaDeviceSynchronize".to_string())]));
    }

    /// Version 1 (before the `wait` lines) is read only from a saved trace, with `waits` unknown;
    /// a check takes only the current version, and a version 1 trace holds no `wait` line.
    #[test]
    fn a_version_1_trace_is_read_only_as_a_saved_one_without_waits() {
        let version_1 = TRACE
            .replace("lab-recorder 2", "lab-recorder 1")
            .replace("wait\t5500\tcudaDeviceSynchronize\n", "")
            .replace("end\t6", "end\t5");
        let saved = parse_saved(&version_1).unwrap();
        assert_eq!((saved.activities.len(), saved.marks.len(), saved.waits), (4, 1, None));
        assert_eq!(parse_saved(TRACE).unwrap().waits.map(|waits| waits.len()), Some(1));
        assert!(format!("{:#}", parse(&version_1, "abc123").unwrap_err()).contains("not the recorder's of this run"));
        let forged = TRACE.replace("lab-recorder 2", "lab-recorder 1");
        assert!(format!("{:#}", parse_saved(&forged).unwrap_err()).contains("unknown record `wait`"));
    }

    #[test]
    fn refuses_a_trace_of_another_run_a_cut_one_and_a_malformed_one() {
        let refused = |text: &str| format!("{:#}", parse(text, "abc123").unwrap_err());
        assert!(refused(&TRACE.replace("abc123", "guessed")).contains("not the recorder's of this run"));
        assert!(refused("").contains("empty"));
        assert!(refused(TRACE.trim_end_matches("end\t6\t0\n")).contains("no `end` line"));
        assert!(refused(&TRACE.replace("end\t6", "end\t5")).contains("ends with 5 records and holds 6"));
        assert!(refused(&TRACE.replace("\twrite_floats", "")).contains("`mark` takes 2 fields"));
        assert!(refused(&TRACE.replace("\tcudaDeviceSynchronize", "")).contains("`wait` takes 2 fields"));
        assert!(refused(&TRACE.replace("4096\t5", "4k\t5")).contains("line 2 of the trace: `4k` is not a number"));
        assert!(refused(&TRACE.replace("4,1,1", "4,1")).contains("`4,1` is not x,y,z"));
        assert!(refused(&TRACE.replace("memset\t100\t200\t0\t7\t64", "graph\t1")).contains("unknown record `graph`"));
        assert!(refused(&TRACE.replace("\t64\n", "\n")).contains("`memset` takes 5 fields, not 4"));
        assert!(refused(&format!("{TRACE}end\t6\t0\n")).contains("written after the trace's end"));
        assert!(refused(&TRACE.replace("end\t6\t0", "end\t6\t3")).contains("CUPTI lost 3 records"));
        assert!(refused(&TRACE.replace("memset\t100\t200", "memset\t300\t200")).contains("runs from 300 to 200 ns"));
        assert!(refused(&TRACE.replace("memset\t100\t200", "memset\t0\t0")).contains("runs from 0 to 0 ns"));
    }

    /// The trace above spans 100 ns to 6000 ns (the memset to the mark); a forged or replayed one
    /// that claims more time than the program lived is refused, with both numbers.
    #[test]
    fn a_trace_longer_than_the_programs_run_is_refused() {
        use std::time::Duration;
        let trace = parse(TRACE, "abc123").unwrap();
        assert_eq!(trace.span_ns(), 5900);
        assert!(trace.clone().within(Duration::ZERO).is_ok(), "within the clocks' slack");
        let long = parse(&TRACE.replace("mark\t6000", "mark\t50000000"), "abc123").unwrap();
        assert!(long.clone().within(Duration::from_millis(50)).is_ok());
        let why = format!("{:#}", long.within(Duration::from_millis(40)).unwrap_err());
        assert_eq!(why, "it spans 50.0 ms, but the program ran for only 40.0 ms");
        let empty = Trace {
            activities: Vec::new(),
            marks: Vec::new(),
            waits: Some(Vec::new()),
        };
        assert_eq!(empty.span_ns(), 0);
    }
}

//! `--program-source FILE.cu --check`: week 6's graded program (`assignments/06-pinned-mapped`), the
//! Korean notes' zero-copy `vectorAdd` as a whole program:
//!
//! ```text
//! zero_copy N INPUT OUTPUT
//! ```
//!
//! It reads A and B (N floats each, one after the other) from INPUT, adds them with a kernel that
//! reads and writes mapped host memory across the bus, and writes C to OUTPUT. The check compares
//! OUTPUT with the CPU's sums, bit for bit, and reads the week's rules from the program's trace: no
//! copy at all, results read only after the kernel ended, a GPU time near ours (the lab's own
//! zero-copy vectorAdd on the same N, no more than 1.5 times), and kernels that take at least a
//! quarter of ours (not a kernel that does nothing while the CPU adds).

use std::path::Path;

use anyhow::Result;
use common::check_cuda;
use common::timing::Runs;
use cust::function::Function;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use grading::cases_file::field;
use grading::program::rules;
use grading::program::trace::Trace;
use grading::program::{PerCase, Prepared, Rule, Week};
use lab_mapped::{Memory, VectorAdd};
use profiler::records::Direction;

/// One case: N floats each in A, B and C, inputs from `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    pub n: usize,
    pub seed: u64,
}

/// The week's cases: a power of two, a prime, one element, fewer than a block, and 64 MiB per vector.
pub const CASES: [Case; 5] = [
    Case { n: 1 << 22, seed: 61 },
    Case { n: 3_000_017, seed: 62 },
    Case { n: 1, seed: 63 },
    Case { n: 200, seed: 64 },
    Case { n: 1 << 24, seed: 65 },
];

/// The most floats a case may have: A, B and C of them in mapped memory (1 GiB each).
pub const MAX_N: usize = 1 << 28;

/// The week, with what it needs of the GPU for our own runs.
pub struct Week6<'m> {
    add: Function<'m>,
    stream: Stream,
    /// A and B of the case being judged, kept from [`Week::prepare`].
    input: Vec<f32>,
    /// [`ours_ms`] of the case being judged, measured at its first run.
    ours: PerCase<Case, (f64, f64)>,
}

impl<'m> Week6<'m> {
    pub fn new(module: &'m Module) -> Result<Week6<'m>> {
        Ok(Week6 {
            add: check_cuda!(module.get_function("vector_add"))?,
            stream: check_cuda!(Stream::new(StreamFlags::NON_BLOCKING, None))?,
            input: Vec::new(),
            ours: PerCase::default(),
        })
    }
}

/// Our zero-copy vectorAdd (`add` on `stream`) on the case's N, and our kernel alone on device
/// memory: the medians of three runs after a warm-up, in ms.
fn ours_ms(add: &Function, stream: &Stream, case: &Case) -> Result<(f64, f64)> {
    let mut job = VectorAdd::random(case.n, false, case.seed)?;
    let zero_copy = job.time(add, Memory::ZeroCopy, stream, Runs::warm(3))?.median_ms();
    let on_device = job.time_kernel_on_device(add, stream, 3)?.median_ms();
    Ok((zero_copy, on_device))
}

/// The rules read from the trace; `ours_ms` is our GPU time on the same N.
pub fn trace_rules(trace: &Trace, ours_ms: f64) -> Vec<Rule> {
    let (_, copies) = rules::pageable_copies(&trace.activities);
    vec![
        Rule::judged(
            "no copy",
            format!("{copies} copies"),
            "none: the kernel reads and writes host memory",
            copies == 0,
        ),
        grading::program::gpu_time_if_comparable(trace, ours_ms),
    ]
}

impl Week for Week6<'_> {
    type Case = Case;
    const NAME: &'static str = "06-pinned-mapped";
    const SOLUTION: &'static str = "zero_copy.cu";
    const FIELDS: &'static str = "N SEED";
    const RULES: &'static [&'static str] = &[
        "waits: results read after the GPU's last work",
        "no copy: the kernel reads and writes host memory",
        "GPU time: at most 1.5x ours",
        "kernel time: at least 0.25x ours",
    ];

    fn builtin() -> Vec<Case> {
        CASES.to_vec()
    }

    fn parse(fields: &[&str]) -> Result<Case, String> {
        Ok(Case {
            n: field(fields[0], "N", 1..=MAX_N)?,
            seed: field(fields[1], "SEED", 0..=u64::MAX)?,
        })
    }

    fn line(case: &Case) -> String {
        format!("{} {}", case.n, case.seed)
    }

    fn name(case: &Case) -> String {
        format!("N {}", case.n)
    }

    fn prepare(&mut self, case: &Case, dir: &Path) -> Result<Prepared> {
        // A, then B: N floats each.
        let (prepared, input) = Prepared::random_input(dir, 2 * case.n, case.seed, &[case.n.to_string()], case.n)?;
        self.input = input;
        Ok(prepared)
    }

    fn judge(&mut self, case: &Case, output: Result<Vec<u8>, String>, trace: &Trace) -> Result<Vec<Rule>> {
        let (add, stream) = (&self.add, &self.stream);
        let (ours_ms, our_device_kernel_ms) = *self.ours.get_or_try_insert(case, || ours_ms(add, stream, case))?;
        let (a, b) = self.input.split_at(case.n);
        let results = grading::program::results(output, case.n, |i| a[i] + b[i]);
        let mut rows = grading::program::results_and_waits(results, trace);
        rows.extend(trace_rules(trace, ours_ms));
        // A program that copied A and B to the GPU anyway (it fails "no copy") has a kernel that
        // reads device memory, many times faster than ours across the bus: its kernel is weighed
        // against ours on device memory, so that the one mistake costs one rule.
        let copied_inputs = rules::copied_bytes(&trace.activities, Direction::HtoD) >= 8 * case.n as u64;
        let our_kernel_ms = if copied_inputs { our_device_kernel_ms } else { ours_ms };
        rows.push(grading::program::kernel_time(trace, our_kernel_ms));
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules judged again, without a GPU, on traces an H100 recorded (case 1, N 4194304, of
    /// `--check --chronograms`; results/h100/issue43/ has the whole runs): every row read from the
    /// trace is the row the check printed there.
    #[test]
    fn saved_traces_give_the_rows_their_gpu_run_printed() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces");
        for (name, passes) in [("ours", true), ("starter", false), ("copies-anyway", false)] {
            let (trace, printed) = grading::program::trace::load_saved(&dir, name).unwrap();
            let ours_ms =
                Rule::printed_ours_ms(&printed).unwrap_or_else(|| panic!("{name}: no time of ours in {printed}"));
            let mut rows = vec![grading::program::waited(&trace)];
            rows.extend(trace_rules(&trace, ours_ms));
            let missing = Rule::unprinted(&rows, &printed);
            assert!(missing.is_empty(), "{name}: {missing:?} not in\n{printed}");
            let no_copy = rows.iter().find(|r| r.name == "no copy").unwrap();
            assert_eq!(no_copy.verdict == grading::program::Verdict::Pass, passes, "{name}");
        }
    }
}

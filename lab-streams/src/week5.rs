//! `--program-source FILE.cu --check`: week 5's graded program (`assignments/05-streams`), the French
//! slides' chunked pipeline as a whole program:
//!
//! ```text
//! pipeline N NST STEPS INPUT OUTPUT
//! ```
//!
//! It reads N floats from INPUT, runs them through `kernel` (STEPS fused multiply-adds each) in NST
//! chunks on NST streams, and writes the N results to OUTPUT. The check compares OUTPUT with the
//! CPU's values, bit for bit, and reads the week's rules from the program's trace (the thresholds are
//! in the week's README): every element copied once each way, from pinned memory, on NST streams,
//! with kernels and copies overlapping, both copy engines at work, and a GPU time near ours: the
//! lab's own pipeline (`--mode chunked`) on the same case. STEPS is chosen for the GPU the check runs
//! on ([`calibrated_steps`]), so that the overlap rules ask the same of a T4 as of an H100.

use std::path::Path;

use anyhow::Result;
use common::check_cuda;
use common::context::{fork, new_streams};
use common::timing::{time_on_host, time_on_stream};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use grading::cases_file::field;
use grading::program::rules;
use grading::program::trace::Trace;
use grading::program::{Prepared, Rule, Week};
use lab_streams::vector::{Synchronize, VectorJob};
use matrix::Pinned;
use profiler::records::Direction;
use profiler::timeline::{record, stream_lanes, write_svg, Kernel};

/// One case: N floats in `streams` chunks, inputs from `seed`.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    pub n: usize,
    pub streams: usize,
    pub seed: u64,
}

/// The week's cases: even and awkward sizes (a prime N, an odd number of streams, chunks that do not
/// divide N), one stream (nothing to overlap), and 16 streams; chunks of a million floats or more, so
/// that each copy takes longer than the host needs to issue the next call.
pub const CASES: [Case; 5] = [
    Case {
        n: 1 << 22,
        streams: 4,
        seed: 51,
    },
    Case {
        n: 7_000_003,
        streams: 7,
        seed: 52,
    },
    Case {
        n: 1 << 24,
        streams: 16,
        seed: 53,
    },
    Case {
        n: 3_999_971,
        streams: 3,
        seed: 54,
    },
    Case {
        n: 1 << 21,
        streams: 1,
        seed: 55,
    },
];

/// The most floats a case may have: two buffers of them on the host and on the GPU (1 GiB each).
pub const MAX_N: usize = 1 << 28;

/// The least share of the shorter direction's copy time during which copies ran both ways at once,
/// where the GPU has two copy engines and the case four streams or more.
pub const MIN_BOTH_DIRECTIONS: f64 = 0.1;

/// The week, with what it needs of the GPU for our own runs.
pub struct Week5<'m> {
    pub work: Kernel<'m>,
    /// The GPU's copy engines (`asyncEngineCount`).
    pub copy_engines: i32,
    /// The multiply-adds per element of every case, chosen for this GPU ([`calibrated_steps`]).
    pub steps: u32,
    /// The inputs of the case being judged, kept from [`Week::prepare`].
    input: Vec<f32>,
}

impl<'m> Week5<'m> {
    pub fn new(module: &'m Module) -> Result<Week5<'m>> {
        let device = check_cuda!(cust::context::CurrentContext::get_device())?;
        let work = Kernel::get(module, "vector_work")?;
        Ok(Week5 {
            steps: calibrated_steps(&work)?,
            work,
            copy_engines: check_cuda!(device.get_attribute(cust::device::DeviceAttribute::AsyncEngineCount))?,
            input: Vec::new(),
        })
    }

    /// Our pipeline on the same case: the median host time of three runs after a warm-up, and the
    /// median time of its kernels alone (on one stream), in ms.
    fn ours_ms(&self, case: &Case) -> Result<(f64, f64)> {
        let mut job = VectorJob::<Pinned<f32>>::random(case.n, self.steps, case.seed)?;
        let streams = new_streams(case.streams)?;
        let pipeline = time_on_host(1, 3, || {
            job.pipeline(&self.work, &streams, Synchronize::PerStream, None)
        })?;
        let one = new_streams(1)?;
        let kernels = time_on_stream(&one[0], 1, 3, || job.kernels(&self.work, &one, &mut None))?;
        Ok((pipeline.median_ms(), kernels.median_ms()))
    }
}

/// The multiply-adds per element at which a chunk's kernel takes about half as long as its copy to
/// the GPU, on this GPU: then every stage of a good pipeline overlaps another (a kernel beside the
/// next chunk's copy in, a copy back beside a later copy in), whatever the GPU's speed of computing
/// against its bus. From two runs of our pipeline on one stream, at 1 and at 4001 steps: the
/// difference is the kernel's time per step, the first run is mostly the two copies.
pub fn calibrated_steps(work: &Kernel) -> Result<u32> {
    const N: usize = 1 << 22;
    const MANY: u32 = 4001;
    let streams = new_streams(1)?;
    let time = |steps: u32| -> Result<f64> {
        let mut job = VectorJob::<Pinned<f32>>::random(N, steps, 1)?;
        Ok(time_on_host(1, 3, || job.pipeline(work, &streams, Synchronize::PerStream, None))?.median_ms())
    };
    let (copies_ms, slow_ms) = (time(1)?, time(MANY)?);
    let per_step_ms = ((slow_ms - copies_ms) / f64::from(MANY - 1)).max(1e-9);
    let steps = (0.5 * (copies_ms / 2.0) / per_step_ms).clamp(10.0, 20_000.0);
    // Two significant digits, so that two checks on one GPU nearly always run the same cases.
    let unit = 10f64.powi(steps.log10().floor() as i32 - 1);
    Ok(((steps / unit).round() * unit) as u32)
}

/// The CPU's value of one element: the kernel's fused multiply-adds, so the same bits.
pub fn expected(x: f32, steps: u32) -> f32 {
    (0..steps).fold(x, |x, _| x.mul_add(0.999, 0.001))
}

/// The rules read from the trace, for a case of `streams` streams and `n` floats; `ours_ms` is our
/// GPU time on it.
pub fn trace_rules(trace: &Trace, n: usize, streams: usize, copy_engines: i32, ours_ms: f64) -> Vec<Rule> {
    let work = &trace.activities;
    let bytes = 4 * n as u64;
    let (to_gpu, to_host) = (
        rules::copied_bytes(work, Direction::HtoD),
        rules::copied_bytes(work, Direction::DtoH),
    );
    let used = rules::streams_with_work(work);
    let mut rows = vec![
        Rule::judged(
            "copies",
            format!("{to_gpu} bytes to the GPU, {to_host} back"),
            format!("{bytes} each way (every element once)"),
            to_gpu == bytes && to_host == bytes,
        ),
        grading::program::host_memory(trace),
        Rule::judged(
            "streams",
            format!("{used} streams carried work"),
            format!("at least {streams}"),
            used >= streams,
        ),
    ];
    rows.push(if streams < 2 {
        Rule::not_applicable("overlap", "one stream: nothing to overlap")
    } else {
        grading::program::overlap(trace)
    });
    rows.push(if copy_engines < 2 {
        Rule::not_applicable("both directions", format!("this GPU has {copy_engines} copy engine"))
    } else if streams < 4 {
        Rule::not_applicable("both directions", "fewer than 4 streams")
    } else {
        let both = rules::both_directions(work);
        Rule::judged(
            "both directions",
            format!("{:.0}% of the copy time", 100.0 * both.share()),
            format!("at least {:.0}%", 100.0 * MIN_BOTH_DIRECTIONS),
            both.share() >= MIN_BOTH_DIRECTIONS,
        )
        .with_margin(both.share() / MIN_BOTH_DIRECTIONS)
    });
    rows.push(grading::program::gpu_time(trace, ours_ms));
    rows
}

impl Week for Week5<'_> {
    type Case = Case;
    const NAME: &'static str = "05-streams";
    const SOLUTION: &'static str = "pipeline.cu";
    const FIELDS: &'static str = "N NST SEED";
    const RULES: &'static [&'static str] = &[
        "waits: results read after the GPU's last work",
        "copies: every element once each way",
        "host memory: no copy from pageable memory",
        "streams: NST streams carry work",
        "overlap: kernels beside copies, at least 30%",
        "both directions: copies both ways at once, at least 10%",
        "GPU time: at most 1.5x ours",
        "kernel time: at least 0.25x ours",
    ];

    fn builtin() -> Vec<Case> {
        CASES.to_vec()
    }

    fn parse(fields: &[&str]) -> Result<Case, String> {
        let n = field(fields[0], "N", 1..=MAX_N)?;
        Ok(Case {
            n,
            streams: field(fields[1], "NST", 1..=n.min(64))?,
            seed: field(fields[2], "SEED", 0..=u64::MAX)?,
        })
    }

    fn line(case: &Case) -> String {
        format!("{} {} {}", case.n, case.streams, case.seed)
    }

    fn name(case: &Case) -> String {
        format!("N {}, Nst {}", case.n, case.streams)
    }

    fn about(&self) -> String {
        format!(
            "STEPS {} on this GPU: a chunk's kernel takes about half as long as its copy",
            self.steps
        )
    }

    /// The lab's own pipeline on the case, drawn as `--mode chunked --timeline` draws it.
    fn our_chronogram(&mut self, case: &Case, path: &Path) -> Result<()> {
        let mut job = VectorJob::<Pinned<f32>>::random(case.n, self.steps, case.seed)?;
        let streams = new_streams(case.streams)?;
        let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
        let spans = record(&main, |recorder| {
            fork(&main, &streams)?;
            job.pipeline(&self.work, &streams, Synchronize::PerStream, Some(recorder))
        })?;
        let title = format!("ours: N {}, Nst {}, {} steps", case.n, case.streams, self.steps);
        write_svg(path, false, &title, &stream_lanes(case.streams), &spans)?;
        Ok(())
    }

    fn prepare(&mut self, case: &Case, dir: &Path) -> Result<Prepared> {
        let sizes = [case.n, case.streams, self.steps as usize].map(|size| size.to_string());
        let (prepared, input) = Prepared::random_input(dir, case.n, case.seed, &sizes, case.n)?;
        self.input = input;
        Ok(prepared)
    }

    fn judge(&mut self, case: &Case, output: Result<Vec<u8>, String>, trace: &Trace) -> Result<Vec<Rule>> {
        let (ours_ms, our_kernels_ms) = self.ours_ms(case)?;
        let (input, steps) = (&self.input, self.steps);
        let mut rows = vec![
            grading::program::results_costing(output, input.len(), u64::from(steps), |i| expected(input[i], steps)),
            grading::program::waited(trace),
        ];
        rows.extend(trace_rules(trace, case.n, case.streams, self.copy_engines, ours_ms));
        rows.push(grading::program::kernel_time(trace, our_kernels_ms));
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules judged again, without a GPU, on traces an H100 recorded (case 1, N 4194304 on 4
    /// streams, of `--check --chronograms`; results/h100/issue43/ has the whole runs): every row read
    /// from the trace is the row the check printed there, measured value and verdict.
    #[test]
    fn saved_traces_give_the_rows_their_gpu_run_printed() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces");
        for (name, failing) in [
            ("ours", ""),
            ("starter", "host memory"),
            ("one-stream", "streams"),
            ("synchronous-copies", "overlap"),
            ("pageable-memory", "host memory"),
            ("no-wait", "waits"),
        ] {
            let (trace, printed) = grading::program::trace::load_saved(&dir, name).unwrap();
            let ours_ms =
                Rule::printed_ours_ms(&printed).unwrap_or_else(|| panic!("{name}: no time of ours in {printed}"));
            let mut rows = vec![grading::program::waited(&trace)];
            rows.extend(trace_rules(&trace, 1 << 22, 4, 2, ours_ms));
            let missing = Rule::unprinted(&rows, &printed);
            assert!(missing.is_empty(), "{name}: {missing:?} not in\n{printed}");
            let failed: Vec<&str> = rows
                .iter()
                .filter(|r| r.verdict != grading::program::Verdict::Pass)
                .map(|r| r.name)
                .collect();
            assert_eq!(failed.is_empty(), failing.is_empty(), "{name}: {failed:?}");
            assert!(failing.is_empty() || failed.contains(&failing), "{name}: {failed:?}");
        }
    }
}

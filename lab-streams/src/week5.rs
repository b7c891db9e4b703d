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
//! lab's own pipeline (`--mode chunked`) on the same case. STEPS is fixed per GPU model
//! ([`STEPS_BY_MODEL`], part of the case set's hash), so that the overlap rules ask the same of a T4
//! as of an H100, and every check on one model runs the same cases; a model not in the table is
//! calibrated ([`calibrated_steps`]).

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
use grading::program::{PerCase, Prepared, Rule, Week};
use lab_streams::vector::{expected_all, Synchronize, VectorJob};
use matrix::Pinned;
use profiler::records::Direction;
use profiler::timeline::{record, stream_lanes, write_svg, Kernel};

/// One case: N floats in `streams` chunks, inputs from `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
        n: 5_999_971,
        streams: 5,
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
    /// The multiply-adds per element of every case, for this GPU ([`Steps::for_gpu`]).
    pub steps: Steps,
    /// The inputs of the case being judged, kept from [`Week::prepare`].
    input: Vec<f32>,
    /// The CPU's value of every element of the case being judged ([`expected_all`]).
    cpu: PerCase<Case, Vec<f32>>,
    /// Our pipeline's times on the case being judged ([`ours_ms`]).
    ours: PerCase<Case, (f64, f64)>,
}

impl<'m> Week5<'m> {
    pub fn new(module: &'m Module) -> Result<Week5<'m>> {
        let device = check_cuda!(cust::context::CurrentContext::get_device())?;
        let work = Kernel::get(module, "vector_work")?;
        let model = check_cuda!(device.name())?;
        Ok(Week5 {
            steps: Steps::for_gpu(&model, &work)?,
            work,
            copy_engines: check_cuda!(device.get_attribute(cust::device::DeviceAttribute::AsyncEngineCount))?,
            input: Vec::new(),
            cpu: PerCase::default(),
            ours: PerCase::default(),
        })
    }
}

/// Our pipeline on `case` with `steps` multiply-adds an element: the median host time of three
/// runs after a warm-up, and the median time of its kernels alone (on one stream), in ms.
fn ours_ms(work: &Kernel, steps: u32, case: &Case) -> Result<(f64, f64)> {
    let mut job = VectorJob::<Pinned<f32>>::random(case.n, steps, case.seed)?;
    let streams = new_streams(case.streams)?;
    let pipeline = time_on_host(1, 3, || job.pipeline(work, &streams, Synchronize::PerStream, None))?;
    let one = new_streams(1)?;
    let kernels = time_on_stream(&one[0], 1, 3, || job.kernels(work, &one, &mut None))?;
    Ok((pipeline.median_ms(), kernels.median_ms()))
}

/// STEPS on the GPU models it was measured on ([`calibrated_steps`], the name as the driver gives it).
/// Calibrated for a kernel half as long as its copy, an H200 gave 1000 to 1200 from one lab start to
/// the next (29 checks) and an H100 1100; a kernel's time grows with STEPS, so twice that for one as
/// long as its copy. A STEPS that moves moves the rules' measures with it (issue 65).
pub const STEPS_BY_MODEL: [(&str, u32); 2] = [("NVIDIA H100 80GB HBM3", 2200), ("NVIDIA H200", 2200)];

/// The STEPS of this check, and whether the table fixed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steps {
    pub count: u32,
    pub fixed: bool,
}

impl Steps {
    /// The table's STEPS for `model`, else this GPU calibrated, rounded to a power of two so that two
    /// checks on one model nearly always agree.
    pub fn for_gpu(model: &str, work: &Kernel) -> Result<Steps> {
        match Steps::of_model(model) {
            Some(steps) => Ok(steps),
            None => Ok(Steps {
                count: power_of_two(calibrated_steps(work)?),
                fixed: false,
            }),
        }
    }

    /// The table's entry for `model`, if it has one.
    pub fn of_model(model: &str) -> Option<Steps> {
        STEPS_BY_MODEL
            .iter()
            .find(|(name, _)| *name == model.trim())
            .map(|&(_, count)| Steps { count, fixed: true })
    }
}

/// The table as the case set's hash includes it: a new entry is a new case set.
pub fn steps_hashed() -> String {
    let models: Vec<String> = STEPS_BY_MODEL
        .iter()
        .map(|(model, steps)| format!("{model}={steps}"))
        .collect();
    format!("STEPS {}; other GPUs calibrated to a power of two", models.join(", "))
}

/// The power of two nearest `steps` on a log scale.
fn power_of_two(steps: u32) -> u32 {
    1 << (f64::from(steps.max(1)).log2().round() as u32)
}

/// The multiply-adds per element at which a chunk's kernel takes about as long as its copy to the
/// GPU, on this GPU: then every stage of a good pipeline overlaps another (a kernel beside the next
/// chunk's copy in, a copy back beside a later copy in), whatever the GPU's speed of computing
/// against its bus, and a program that runs the stages one after another takes longest against a
/// pipeline: 3 NST / (NST + 2) times as long in theory, 2x at NST 4, where a kernel of half the
/// copy's time left our H200's synchronous copies at 1.45x to 1.86x ours, on the GPU time rule's
/// 1.5x (issue 65). From two runs of our pipeline on one stream, at 1 and at 4001 steps: the
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
    let steps = ((copies_ms / 2.0) / per_step_ms).clamp(10.0, 20_000.0);
    // Two significant digits, as the table has them.
    let unit = 10f64.powi(steps.log10().floor() as i32 - 1);
    Ok(((steps / unit).round() * unit) as u32)
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

    fn hashed() -> String {
        steps_hashed()
    }

    fn about(&self) -> String {
        let how = if self.steps.fixed {
            "fixed for this GPU model"
        } else {
            "calibrated on this GPU, a model the week's table does not have"
        };
        format!(
            "STEPS {} ({how}): a chunk's kernel takes about as long as its copy",
            self.steps.count
        )
    }

    /// The lab's own pipeline on the case, drawn as `--mode chunked --timeline` draws it.
    fn our_chronogram(&mut self, case: &Case, path: &Path) -> Result<()> {
        let mut job = VectorJob::<Pinned<f32>>::random(case.n, self.steps.count, case.seed)?;
        let streams = new_streams(case.streams)?;
        let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
        let spans = record(&main, |recorder| {
            fork(&main, &streams)?;
            job.pipeline(&self.work, &streams, Synchronize::PerStream, Some(recorder))
        })?;
        let title = format!("ours: N {}, Nst {}, {} steps", case.n, case.streams, self.steps.count);
        write_svg(path, false, &title, &stream_lanes(case.streams), &spans)?;
        Ok(())
    }

    fn prepare(&mut self, case: &Case, dir: &Path) -> Result<Prepared> {
        let sizes = [case.n, case.streams, self.steps.count as usize].map(|size| size.to_string());
        let (prepared, input) = Prepared::random_input(dir, case.n, case.seed, &sizes, case.n)?;
        self.input = input;
        Ok(prepared)
    }

    /// Every element against the CPU's values and every rule of the trace. The CPU's values and our
    /// pipeline's times are the case's, computed at its first run and kept for its others: at N
    /// 7000003 and 2200 steps the values take a core 0.3 s even side by side ([`expected_all`]),
    /// and the GPU would wait for them at each of the case's runs.
    fn judge(&mut self, case: &Case, output: Result<Vec<u8>, String>, trace: &Trace) -> Result<Vec<Rule>> {
        let (input, steps) = (&self.input, self.steps.count);
        let values = self.cpu.get_or_try_insert(case, || Ok(expected_all(input, steps)))?;
        let results = grading::program::results(output, values.len(), |i| values[i]);
        let mut rows = grading::program::results_and_waits(results, trace);
        let (ours_ms, our_kernels_ms) = *self.ours.get_or_try_insert(case, || ours_ms(&self.work, steps, case))?;
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

    /// The models of the table get their STEPS whatever their name's padding; others none, so they
    /// are calibrated; calibration lands on powers of two; the table is in the hash.
    #[test]
    fn steps_are_fixed_per_model_and_hashed() {
        assert_eq!(
            Steps::of_model("NVIDIA H200 "),
            Some(Steps {
                count: 2200,
                fixed: true
            })
        );
        assert_eq!(Steps::of_model("NVIDIA H100 80GB HBM3").map(|s| s.count), Some(2200));
        assert_eq!(Steps::of_model("Tesla T4"), None);
        // 2000 to 2400, the H200's calibrations, all land on 2048.
        assert!([2000, 2200, 2400].iter().all(|&s| power_of_two(s) == 2048));
        assert_eq!((power_of_two(1), power_of_two(3), power_of_two(20_000)), (1, 4, 16384));
        let hashed = steps_hashed();
        assert!(
            STEPS_BY_MODEL.iter().all(|(model, _)| hashed.contains(model)),
            "{hashed}"
        );
    }
}

//! `--kernel-source` and `--check` for lab-simpson (assignments/01-simpson): the student's `simpson_rule`
//! runs in all four kernels of simpson.cu; each case integrates one function with an awkward count of
//! sub-intervals or block size, and every sub-interval's sum is compared with the CPU's. The sums
//! have guard zones on both sides; a write outside them fails the case.

use std::path::Path;

use anyhow::{Context as _, Result};
use common::gpu::Gpu;
use common::integrand::{moved_interval, Integrand};
use common::verify::{Poison as _, Random};
use grading::cases_file::{choice, field, CaseFormat, CaseSet};
use grading::kernel_week::KernelWeek;
use grading::{
    checked_runs, each_launch, first_mismatch, fresh_inputs, on_the_machine, shown, written, written_once, CaseContext,
    Entry, FirstWrong, Outcome,
};
use kernels::KernelImage;

use crate::{allocate_sums, error_bounds, kernel_name, simpson_after, simpson_into, simpson_on_cpu, within, Problem};

/// Week 1 (assignments/01-simpson) in the lab: the kernels of the integrands this run needs.
pub struct Week1 {
    entries: Vec<Entry>,
}

impl Week1 {
    /// The week with the kernels of `integrands` (all four where the lab checks a file).
    pub fn new(integrands: &[Integrand]) -> Week1 {
        Week1 {
            entries: integrands.iter().map(|&integrand| entry(integrand)).collect(),
        }
    }
}

impl KernelWeek for Week1 {
    type Case = Problem;
    const LAB: &'static str = "lab-simpson";

    fn ours(&self) -> &'static KernelImage {
        &kernels::SIMPSON
    }

    fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn case_set(&self, file: Option<&Path>) -> Result<CaseSet<Problem>> {
        case_set(file)
    }

    fn run_case(&self, image: &KernelImage, case: &Problem, context: CaseContext) -> Result<Outcome> {
        run_case(image, case, context)
    }
}

/// The kernel of `integrand` as the lab looks it up and as a student declares it.
fn entry(integrand: Integrand) -> Entry {
    let declaration = match integrand {
        Integrand::Pi => "__global__ void simpson(double a, double b, double* sums)",
        Integrand::Sin => "__global__ void simpson_sin(double a, double b, double* sums)",
        Integrand::Exp => "__global__ void simpson_exp(double a, double b, double* sums)",
        Integrand::Peak => "__global__ void simpson_peak(double a, double b, double* sums)",
    };
    Entry {
        name: kernel_name(integrand),
        declaration,
    }
}

/// The week's cases: every integrand, 1 to 2^20 sub-intervals, blocks of 1 to 1024 threads, counts
/// that are no power of two.
pub fn cases() -> Vec<Problem> {
    let case = |integrand, a, b, intervals, block_size| Problem {
        integrand,
        a,
        b,
        intervals,
        block_size,
    };
    vec![
        case(Integrand::Pi, 0.0, 1.0, 1, 1),
        case(Integrand::Pi, 0.0, 1.0, 96, 32),
        case(Integrand::Sin, 0.0, 3.0, 7000, 7),
        case(Integrand::Exp, -1.0, 2.0, 1 << 20, 256),
        case(Integrand::Peak, 0.0, 1.0, 3 * 1024, 1024),
        case(Integrand::Pi, 0.0, 1.0, 999_999, 999),
    ]
}

/// The fields of a line of a `--cases` file.
pub const CASE_FIELDS: &str = "INTEGRAND A B INTERVALS BLOCK_SIZE";

/// The week's cases, or those of a `--cases` file: `pi 0 1 96 32` per line.
fn case_set(file: Option<&Path>) -> Result<CaseSet<Problem>> {
    let parse = |fields: &[&str]| -> Result<Vec<Problem>, String> {
        let integrand = choice(fields[0], "INTEGRAND", &Integrand::ALL.map(|i| (i.name(), i)))?;
        let (a, b) = (field(fields[1], "A", -1e6..=1e6)?, field(fields[2], "B", -1e6..=1e6)?);
        let intervals = field(fields[3], "INTERVALS", 1..=1 << 26)?;
        let block_size = field(fields[4], "BLOCK_SIZE", 1..=1024)?;
        Problem::new(integrand, a, b, intervals, block_size)
            .map(|problem| vec![problem])
            .map_err(|err| err.to_string())
    };
    let line = |p: &Problem| {
        format!(
            "{} {} {} {} {}",
            p.integrand.name(),
            p.a,
            p.b,
            p.intervals,
            p.block_size
        )
    };
    CaseFormat {
        fields: CASE_FIELDS,
        parse: &parse,
        line: &line,
        name: &name,
        shared_checks: None,
    }
    .load(file, cases())
}

/// `problem` on a timed launch's fresh interval ([`moved_interval`]), with as many sub-intervals.
fn moved(problem: &Problem, random: &mut Random) -> Result<Problem> {
    let (a, b) = moved_interval(problem.a, problem.b, random);
    Problem::new(problem.integrand, a, b, problem.intervals, problem.block_size)
}

/// What is wrong with a timed launch's `sums` of `problem` (its fresh interval): the first
/// sub-interval whose sum is not within its bound of the CPU's, every one compared, as in the case's
/// own runs; `None` where nothing is.
fn wrong_on(problem: &Problem, sums: &[f64]) -> Option<String> {
    let (cpu, _, first) = compared(problem, sums);
    first.map(|i| {
        format!(
            "on [{}, {}] (a fresh interval), sub-interval {i} is {}, expected {}",
            problem.a,
            problem.b,
            written_once(sums[i], shown),
            shown(cpu[i])
        )
    })
}

/// `sums` of `problem` against the CPU's, each within its error bound: the CPU's sums, how many
/// are wrong and the first that is.
fn compared(problem: &Problem, sums: &[f64]) -> (Vec<f64>, usize, Option<usize>) {
    let cpu = simpson_on_cpu(problem);
    let expected: Vec<(f64, f64)> = cpu.iter().copied().zip(error_bounds(problem)).collect();
    let (wrong, first) = first_mismatch(sums, &expected, |g, (c, bound)| within(g, c, bound));
    (cpu, wrong, first)
}

/// How a case is named in the table.
pub fn name(problem: &Problem) -> String {
    format!(
        "{} on [{}, {}], {} sub-intervals, blocks of {}",
        problem.integrand.formula(),
        problem.a,
        problem.b,
        problem.intervals,
        problem.block_size
    )
}

/// Runs one case with the student's image (twice, with two poisons), then times it against ours. The
/// GPU, our kernels and every buffer come first, the machine's steps ([`on_the_machine`]); the
/// student's module is loaded after them.
fn run_case(student: &KernelImage, problem: &Problem, context: CaseContext) -> Result<Outcome> {
    let (gpu, ours, mut sums, mut our_sums) = on_the_machine((|| {
        let gpu = Gpu::open(0)?;
        let ours = gpu.load(&kernels::SIMPSON)?;
        let (sums, our_sums) = (allocate_sums(&gpu, problem)?, allocate_sums(&gpu, problem)?);
        Ok((gpu, ours, sums, our_sums))
    })())?;
    let module = gpu.load(student)?;
    let theirs = simpson_into(&module, problem, &mut sums, f64::POISON_WORD, 1)?;
    let again = simpson_into(&module, problem, &mut sums, f64::SECOND_POISON_WORD, 1)?;
    // Issue 61: every timed launch, ours and the student's, integrates over an interval of its own,
    // after a warm-up over another.
    let fresh = fresh_inputs(|random| moved(problem, random))?;
    let (mut ours_at, mut theirs_at) = (fresh.iter(), fresh.iter());
    let timed = context.time(
        |launches| {
            let timing = each_launch(launches, &mut ours_at, |[warm_up, moved]| {
                Ok(simpson_after(&ours, warm_up, moved, &mut our_sums, f64::POISON_WORD)?.timing)
            })?;
            our_sums.fill(f64::POISON_WORD)?; // issue 39: no sums of ours left for the student's kernel
            Ok(timing)
        },
        |launches| {
            checked_runs(launches, || {
                let [warm_up, moved] = theirs_at.next().context("no fresh interval left")?;
                let run = simpson_after(&module, warm_up, moved, &mut sums, f64::POISON_WORD)?;
                Ok((run.timing, wrong_on(moved, &run.sums)))
            })
        },
    )?;
    // The guard zones after every launch, the timed ones too.
    let outside = sums.trespass()?.map(|trespass| trespass.describe("sums", "n"));
    // The sums cross the GPU's memory at least once.
    let bytes = (theirs.sums.len() * std::mem::size_of::<f64>()) as f64;
    let below_the_floor = timed.below_the_floor(bytes, gpu.info.peak_bandwidth());
    let (cpu, wrong, first) = compared(problem, &theirs.sums);
    let block = problem.block_size as usize;
    let first = first.map(|i| FirstWrong {
        position: format!("sub-interval {i}"),
        value: written(theirs.sums[i], again.sums[i], shown),
        expected: shown(cpu[i]),
        computed_by: format!("block {}, thread {}", i / block, i % block),
    });
    Ok(Outcome {
        wrong,
        elements: cpu.len(),
        first,
        times: timed.times,
        finding: None,
    }
    .with_findings([outside, timed.wrong, below_the_floor]))
}

//! `--kernel-source` and `--check` for lab-simpson (assignments/01-simpson): the student's `simpson_rule`
//! runs in all four kernels of simpson.cu; each case integrates one function with an awkward count of
//! sub-intervals or block size, and every sub-interval's sum is compared with the CPU's. The sums
//! have guard zones on both sides; a write outside them fails the case.

use std::path::Path;

use anyhow::Result;
use common::gpu::Gpu;
use common::integrand::Integrand;
use common::verify::Poison as _;
use grading::cases_file::{choice, field, CaseFormat, CaseSet};
use grading::{
    checked_runs, first_mismatch, on_the_machine, shown, written, written_once, CaseContext, Entry, FirstWrong, Outcome,
};
use kernels::KernelImage;

use crate::{allocate_sums, error_bounds, kernel_name, simpson_into, simpson_on_cpu, within, Problem};

/// The kernel of `integrand` as the lab looks it up and as a student declares it.
pub fn entry(integrand: Integrand) -> Entry {
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
pub fn case_set(file: Option<&Path>) -> Result<CaseSet<Problem>> {
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
pub fn run_case(student: &KernelImage, problem: &Problem, context: CaseContext) -> Result<Outcome> {
    let (gpu, ours, mut sums, mut our_sums) = on_the_machine((|| {
        let gpu = Gpu::open(0)?;
        let ours = gpu.load(&kernels::SIMPSON)?;
        let (sums, our_sums) = (allocate_sums(&gpu, problem)?, allocate_sums(&gpu, problem)?);
        Ok((gpu, ours, sums, our_sums))
    })())?;
    let module = gpu.load(student)?;
    let theirs = simpson_into(&module, problem, &mut sums, f64::POISON_WORD, 1)?;
    let again = simpson_into(&module, problem, &mut sums, f64::SECOND_POISON_WORD, 1)?;
    let outside = sums.trespass()?.map(|trespass| trespass.describe("sums", "n"));
    let cpu = simpson_on_cpu(problem);
    // Each CPU sum with its error bound: a right sum is within it.
    let expected: Vec<(f64, f64)> = cpu.iter().copied().zip(error_bounds(problem)).collect();
    let right = |g: f64, (c, bound): (f64, f64)| within(g, c, bound);
    let timed = context.time(
        |launches| {
            let timing = simpson_into(&ours, problem, &mut our_sums, f64::POISON_WORD, launches)?.timing;
            our_sums.fill(f64::POISON_WORD)?; // issue 39: no sums of ours left for the student's kernel
            Ok(timing)
        },
        |launches| {
            checked_runs(launches, || {
                let run = simpson_into(&module, problem, &mut sums, f64::POISON_WORD, 1)?;
                let wrong = first_mismatch(&run.sums, &expected, right).1.map(|i| {
                    format!(
                        "sub-interval {i} is {}, expected {}",
                        written_once(run.sums[i], shown),
                        shown(cpu[i])
                    )
                });
                Ok((run.timing, wrong))
            })
        },
    )?;
    let (wrong, first) = first_mismatch(&theirs.sums, &expected, right);
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
    .with_findings([outside, timed.wrong]))
}

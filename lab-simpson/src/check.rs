//! `--kernel-source` and `--check` for lab-simpson (assignments/01-simpson): the student's `simpson_rule`
//! runs in all four kernels of simpson.cu; each case integrates one function with an awkward count of
//! sub-intervals or block size, and every sub-interval's sum is compared with the CPU's.

use anyhow::Result;
use common::assignment::{first_mismatch, report_case, shown, Entry, FirstWrong, Outcome};
use common::gpu::Gpu;
use common::integrand::Integrand;
use kernels::KernelImage;

use crate::{kernel_name, simpson_on_cpu, simpson_on_gpu, Problem, TOLERANCE};

/// The kernel of `integrand` as the lab looks it up and as a student declares it.
pub fn entry(integrand: Integrand) -> Entry {
    let declaration = match integrand {
        Integrand::Pi => "__global__ void simpson(double a, double b, double* sums)",
        Integrand::Sin => "__global__ void simpson_sin(double a, double b, double* sums)",
        Integrand::Exp => "__global__ void simpson_exp(double a, double b, double* sums)",
        Integrand::Peak => "__global__ void simpson_peak(double a, double b, double* sums)",
    };
    Entry { name: kernel_name(integrand), declaration }
}

/// The week's cases: every integrand, 1 to 2^20 sub-intervals, blocks of 1 to 1024 threads, counts
/// that are no power of two.
pub fn cases() -> Vec<Problem> {
    let case = |integrand, a, b, intervals, block_size| Problem { integrand, a, b, intervals, block_size };
    vec![
        case(Integrand::Pi, 0.0, 1.0, 1, 1),
        case(Integrand::Pi, 0.0, 1.0, 96, 32),
        case(Integrand::Sin, 0.0, 3.0, 7000, 7),
        case(Integrand::Exp, -1.0, 2.0, 1 << 20, 256),
        case(Integrand::Peak, 0.0, 1.0, 3 * 1024, 1024),
        case(Integrand::Pi, 0.0, 1.0, 999_999, 999),
    ]
}

/// How a case is named in the table.
pub fn name(problem: &Problem) -> String {
    format!("{} on [{}, {}], {} sub-intervals, blocks of {}", problem.integrand.formula(), problem.a, problem.b, problem.intervals, problem.block_size)
}

/// Runs case `index` with the student's image and ours and prints its row (a check's child process).
pub fn run_case(student: &KernelImage, index: usize) -> Result<()> {
    let problem = cases().get(index).cloned().ok_or_else(|| anyhow::anyhow!("there is no check case {index}"))?;
    let gpu = Gpu::open(0)?;
    let theirs = simpson_on_gpu(&gpu, &gpu.load(student)?, &problem, 3)?;
    let ours = simpson_on_gpu(&gpu, &gpu.load(&kernels::SIMPSON)?, &problem, 3)?;
    let cpu = simpson_on_cpu(&problem);
    // The same floor as `compare`: sums near zero are judged against a thousandth of the largest.
    let floor = 1e-3 * cpu.iter().fold(0.0_f64, |m, s| m.max(s.abs()));
    let (wrong, first) = first_mismatch(&theirs.sums, &cpu, |g, c| (g - c).abs() <= TOLERANCE * c.abs().max(floor));
    let block = problem.block_size as usize;
    let first = first.map(|i| FirstWrong {
        position: format!("sub-interval {i}"),
        value: shown(theirs.sums[i]),
        expected: shown(cpu[i]),
        computed_by: format!("block {}, thread {}", i / block, i % block),
    });
    report_case(&name(&problem), Outcome { wrong, elements: cpu.len(), first, student_ms: Some(theirs.timing.median_ms()), ours_ms: Some(ours.timing.median_ms()) });
    Ok(())
}

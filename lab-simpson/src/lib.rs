//! The steps of lab-simpson, called in the slide's order by `main.rs` and one by one by the GPU tests.

pub mod check;

use anyhow::{ensure, Context as _, Result};
use common::device_info::DeviceInfo;
use common::gpu::Gpu;
use common::integrand::Integrand;
use common::phases::{self, Phase};
use common::timing::{time_on_stream_after, Timing};
use common::verify::Poison as _;
use common::{check_cuda, verify};
use cust::launch;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use grading::guard::Guarded;
use rayon::prelude::*;

/// Largest relative difference allowed between a GPU and a CPU sub-interval sum: both evaluate the
/// same formula in double precision, so they differ by a few rounding steps (FMA contraction on the GPU).
pub const TOLERANCE: f64 = 1e-12;

/// The C++ kernel for `integrand`, by the mangled name ptxas reports and the driver looks up.
pub fn kernel_name(integrand: Integrand) -> &'static str {
    match integrand {
        Integrand::Pi => "_Z7simpsonddPd", // the slide's simpson(double, double, double*)
        Integrand::Sin => "_Z11simpson_sinddPd",
        Integrand::Exp => "_Z11simpson_expddPd",
        Integrand::Peak => "_Z12simpson_peakddPd",
    }
}

/// One integration: [a, b] cut into `intervals` sub-intervals, one GPU thread each.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub integrand: Integrand,
    pub a: f64,
    pub b: f64,
    pub intervals: u64,
    pub block_size: u32,
}

impl Problem {
    /// Checks what can be checked without a GPU.
    pub fn new(integrand: Integrand, a: f64, b: f64, intervals: u64, block_size: u32) -> Result<Problem> {
        common::integrand::check_interval(a, b)?;
        ensure!(block_size > 0, "--block-size must be at least 1");
        ensure!(intervals > 0, "--intervals must be at least 1");
        // The next multiple up, where there is one below 2^64 (checked arithmetic: any u64 is a user's).
        let next = intervals
            .div_ceil(u64::from(block_size))
            .checked_mul(u64::from(block_size));
        ensure!(
            intervals.is_multiple_of(u64::from(block_size)),
            "--intervals {intervals} is not a multiple of --block-size {block_size}: the slide's kernel gives \
             each of its gridDim.x * blockDim.x threads one sub-interval (try {})",
            next.map_or(format!("a multiple of {block_size}"), |next| format!(
                "--intervals {next}"
            ))
        );
        // The sums: the poison sent to the GPU, the GPU's copied back, the CPU's.
        let bytes = intervals
            .checked_mul(3 * 8)
            .with_context(|| format!("--intervals {intervals} is too large: its sums alone would need over 16 EiB"))?;
        common::host_memory::ensure_host_fits(bytes, &format!("--intervals {intervals}"))?;
        Ok(Problem {
            integrand,
            a,
            b,
            intervals,
            block_size,
        })
    }

    /// Blocks in the grid: N / BLOCK_SIZE.
    pub fn blocks(&self) -> u64 {
        self.intervals / u64::from(self.block_size)
    }

    /// Checks the launch against this GPU's limits.
    pub fn check_against(&self, info: &DeviceInfo) -> Result<()> {
        ensure!(
            self.block_size <= info.max_threads_per_block,
            "--block-size {} is over this GPU's {} threads per block",
            self.block_size,
            info.max_threads_per_block
        );
        ensure!(
            self.blocks() <= u64::from(info.max_grid_x),
            "--intervals {} needs {} blocks of {}, over this GPU's limit of {} blocks in x",
            self.intervals,
            self.blocks(),
            self.block_size,
            info.max_grid_x
        );
        Ok(())
    }

    /// Width of one sub-interval, computed as the kernel computes it.
    fn h(&self) -> f64 {
        (self.b - self.a) / self.intervals as f64
    }
}

/// The sums the GPU wrote, one per sub-interval, and the kernel's time.
pub struct GpuRun {
    pub sums: Vec<f64>,
    pub timing: Timing,
}

/// The slide program's GPU part: allocate `sums`, launch `simpson<<<N / BLOCK_SIZE, BLOCK_SIZE>>>`
/// (once to warm up, then `repetitions` times between events), copy `sums` back.
pub fn simpson_on_gpu(gpu: &Gpu, module: &Module, problem: &Problem, repetitions: usize) -> Result<GpuRun> {
    let mut sums = allocate_sums(gpu, problem)?;
    simpson_into(module, problem, &mut sums, f64::POISON_WORD, repetitions)
}

/// The device array `sums`, with guard zones around it (for `--check`), once `problem` is known to
/// run on this GPU: its block size, and memory for the sums, checked before anything is allocated.
pub fn allocate_sums(gpu: &Gpu, problem: &Problem) -> Result<Guarded<f64>> {
    problem.check_against(&gpu.info)?;
    let bytes = problem
        .intervals
        .saturating_mul(8)
        .saturating_add(2 * grading::guard::GUARD_BYTES as u64);
    gpu.ensure_fits(bytes, &format!("--intervals {}", problem.intervals))?;
    Guarded::new(problem.intervals as usize)
}

/// The same into `sums` (from [`allocate_sums`]), poisoned with `poison` first.
pub fn simpson_into(
    module: &Module,
    problem: &Problem,
    sums: &mut Guarded<f64>,
    poison: u32,
    repetitions: usize,
) -> Result<GpuRun> {
    ensure!(
        sums.len() as u64 == problem.intervals,
        "{} sums for {} sub-intervals",
        sums.len(),
        problem.intervals
    );
    let simpson = check_cuda!(module.get_function(kernel_name(problem.integrand)))?;
    let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let (a, b, d_sums) = (problem.a, problem.b, sums.as_device_ptr());
    let (grid, block) = (problem.blocks() as u32, problem.block_size);

    // Every launch, the warm-up's too, starts from poisoned sums (issue 39).
    let timing = time_on_stream_after(
        &stream,
        1,
        repetitions,
        || sums.fill(poison),
        || {
            // __global__ void simpson(double a, double b, double* sums)
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
            // point into live device buffers as large as the kernel indexes.
            check_cuda!(unsafe { launch!(simpson<<<grid, block, 0, stream>>>(a, b, d_sums)) })?;
            Ok(())
        },
    )?;
    check_cuda!(stream.synchronize())?; // a fault in the kernel shows up here
    Ok(GpuRun {
        sums: sums.read()?,
        timing,
    })
}

/// The same rule on the CPU, sub-interval by sub-interval, on all cores.
pub fn simpson_on_cpu(problem: &Problem) -> Vec<f64> {
    let _phase = phases::enter(Phase::Verify);
    let h = problem.h();
    (0..problem.intervals)
        .into_par_iter()
        .map(|i| problem.integrand.simpson(problem.a + i as f64 * h, h))
        .collect()
}

/// Largest relative difference between GPU and CPU sums and the sub-interval where it is. Sums near
/// zero (sin around pi) are judged against a thousandth of the largest sum rather than themselves.
pub fn compare(gpu: &[f64], cpu: &[f64]) -> (f64, usize) {
    let _phase = phases::enter(Phase::Verify);
    let largest = cpu.iter().fold(0.0_f64, |m, s| m.max(s.abs()));
    verify::max_relative_error(gpu, cpu, 1e-3 * largest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_an_interval_the_wrong_way_round() {
        let err = Problem::new(Integrand::Pi, 1.0, 0.0, 1024, 256).unwrap_err();
        assert_eq!(err.to_string(), "--b 0 must be greater than --a 1");
    }

    #[test]
    fn refuses_intervals_that_do_not_fill_whole_blocks_and_suggests_a_size() {
        let err = Problem::new(Integrand::Pi, 0.0, 1.0, 1000, 256)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--intervals 1000 is not a multiple of --block-size 256"),
            "{err}"
        );
        assert!(err.ends_with("(try --intervals 1024)"), "{err}");
    }

    #[test]
    fn refuses_infinite_ends() {
        assert!(Problem::new(Integrand::Pi, 0.0, f64::INFINITY, 1024, 256).is_err());
        assert!(Problem::new(Integrand::Pi, f64::NAN, 1.0, 1024, 256).is_err());
    }

    #[test]
    fn cpu_sums_add_up_to_pi() {
        let problem = Problem::new(Integrand::Pi, 0.0, 1.0, 1 << 12, 256).unwrap();
        let integral = common::integrand::compensated_sum(&simpson_on_cpu(&problem));
        approx::assert_abs_diff_eq!(integral, std::f64::consts::PI, epsilon = 1e-14);
    }

    #[test]
    fn compare_catches_an_unwritten_sum_and_a_wrong_one() {
        let cpu = vec![1.0, 2.0, 3.0];
        assert_eq!(compare(&cpu, &cpu), (0.0, 0));
        assert_eq!(compare(&[1.0, f64::NAN, 3.0], &cpu).0, f64::INFINITY);
        assert!(compare(&[1.0, 2.0, 3.0 + 1e-9], &cpu).0 > TOLERANCE);
    }

    #[test]
    fn every_integrand_has_its_own_kernel_in_the_build() {
        for integrand in Integrand::ALL {
            assert!(kernels::SIMPSON.in_every_build(kernel_name(integrand)), "{integrand:?}");
        }
    }
}

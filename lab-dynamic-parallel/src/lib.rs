//! The steps of lab-dynamic-parallel: adaptive Simpson integration on the CPU (the reference), driven
//! from the device (a master kernel and worker grids that launch child grids) and driven from the host
//! (one launch per level). `main.rs` calls them in order; the GPU tests call them one by one.

pub mod check;

use std::time::Duration;

use anyhow::{ensure, Result};
use common::check_cuda;
use common::context::WaitForDevice;
use common::integrand::Integrand;
use common::timing::{time_on_stream, time_on_stream_or_give_up, Timing};
use cust::context::{CurrentContext, ResourceLimit};
use cust::launch;
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceCopy};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use grading::guard::Guarded;

/// CUDA allows grids to nest at most 24 levels deep; a worker at depth d is a grid nested d levels
/// below the master, so the depth limit cannot go past this.
pub const MAX_NESTING_DEPTH: u32 = 24;

/// Threads per block of the host-driven level kernel.
const LEVEL_BLOCK_SIZE: u32 = 256;

/// What the GPU (or the CPU reference) reports: the layout of `struct Tally` in
/// `kernels/cuda/adaptive_simpson.cu`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub integral: f64,
    pub accepted: u64,
    pub splits: u64,
    pub depth_limit_hits: u64,
    pub launch_failures: u64,
    pub deepest: u32,
}

// SAFETY: plain numbers, same layout as the CUDA struct (checked by a test).
unsafe impl DeviceCopy for Tally {}

/// One interval of the host-driven work lists: `struct Interval` in `adaptive_simpson.cu`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Interval {
    pub a: f64,
    pub b: f64,
    pub whole: f64,
    pub tolerance: f64,
    pub depth: i32,
}

// SAFETY: plain numbers, same layout as the CUDA struct (checked by a test).
unsafe impl DeviceCopy for Interval {}

/// One adaptive integration, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Problem {
    pub integrand: Integrand,
    pub a: f64,
    pub b: f64,
    pub tolerance: f64,
    pub max_depth: u32,
}

impl Problem {
    pub fn new(integrand: Integrand, a: f64, b: f64, tolerance: f64, max_depth: u32) -> Result<Problem> {
        common::integrand::check_interval(a, b)?;
        ensure!(
            tolerance > 0.0 && tolerance.is_finite(),
            "--tolerance {tolerance} must be a positive number"
        );
        ensure!(
            (1..=MAX_NESTING_DEPTH).contains(&max_depth),
            "--max-depth {max_depth} is out of range: 1 to {MAX_NESTING_DEPTH} (CUDA nests grids at most {MAX_NESTING_DEPTH} deep)"
        );
        Ok(Problem {
            integrand,
            a,
            b,
            tolerance,
            max_depth,
        })
    }

    /// The two halves of [a, b] with their estimates: what the master hands to the first workers.
    fn first_intervals(&self) -> [Interval; 2] {
        let middle = self.a + (self.b - self.a) / 2.0;
        let half = |a: f64, b: f64| Interval {
            a,
            b,
            whole: self.integrand.simpson(a, b - a),
            tolerance: self.tolerance / 2.0,
            depth: 1,
        };
        [half(self.a, middle), half(middle, self.b)]
    }
}

/// The same decisions as the kernels' `decide`, depth first on the CPU.
pub fn adaptive_on_cpu(problem: &Problem) -> Tally {
    let _phase = common::phases::enter(common::phases::Phase::Verify);
    let mut tally = Tally::default();
    let mut pending: Vec<Interval> = problem.first_intervals().into();
    let mut contributions = Vec::new();
    while let Some(interval) = pending.pop() {
        let f = problem.integrand;
        let middle = interval.a + (interval.b - interval.a) / 2.0;
        let left = f.simpson(interval.a, middle - interval.a);
        let right = f.simpson(middle, interval.b - middle);
        let delta = left + right - interval.whole;
        tally.deepest = tally.deepest.max(interval.depth as u32);
        let converged = delta.abs() <= 15.0 * interval.tolerance;
        if converged || interval.depth as u32 >= problem.max_depth {
            contributions.push(left + right + delta / 15.0);
            tally.accepted += 1;
            tally.depth_limit_hits += u64::from(!converged);
            continue;
        }
        tally.splits += 1;
        let child = |a, b, whole| Interval {
            a,
            b,
            whole,
            tolerance: interval.tolerance / 2.0,
            depth: interval.depth + 1,
        };
        pending.push(child(interval.a, middle, left));
        pending.push(child(middle, interval.b, right));
    }
    tally.integral = common::integrand::compensated_sum(&contributions);
    tally
}

/// A GPU run: the tally of the last repetition, its time and how many grids were launched from where.
#[derive(Debug, Clone)]
pub struct GpuRun {
    pub tally: Tally,
    pub timing: Timing,
    pub host_launches: u64,
    pub device_launches: u64,
}

/// Sets how many device-side launches may wait at once (`cudaLimitDevRuntimePendingLaunchCount`,
/// 2048 unless raised). Past it, a device launch fails; the workers count such failures.
pub fn set_pending_launch_limit(limit: usize) -> Result<()> {
    check_cuda!(CurrentContext::set_resource_limit(
        ResourceLimit::DeviceRuntimePendingLaunchCount,
        limit
    ))?;
    Ok(())
}

/// How long the device-driven runs (a warm-up and the timed ones) may take before the lab reports them
/// stuck: one default run takes about 1.5 ms on an H200, and a tree past the pending-launch limit has
/// been seen to never end, in the warm-up or in a later run.
pub const STUCK_AFTER: Duration = Duration::from_secs(30);

/// Device-driven: the host launches `adaptive_master<<<1, 1>>>` once; every further grid is launched by
/// the GPU. The stream's synchronize returns when the whole tree of grids has finished.
pub fn device_driven(module: &Module, problem: &Problem, repetitions: usize) -> Result<GpuRun> {
    device_driven_into(module, problem, &Guarded::new(1)?, repetitions)
}

/// The same with the tally in `tally` (guard zones around it, for `--check`).
pub fn device_driven_into(
    module: &Module,
    problem: &Problem,
    tally: &Guarded<Tally>,
    repetitions: usize,
) -> Result<GpuRun> {
    device_driven_runs(module, [problem, problem], tally, repetitions)
}

/// One timed run on `problem` after a warm-up on `warm_up` (the same integrand, another interval):
/// a timed launch on fresh inputs (issue 61) that no launch before it integrated, so a kernel cannot
/// build the tree in the warm-up and replay its tally.
pub fn device_driven_after(
    module: &Module,
    warm_up: &Problem,
    problem: &Problem,
    tally: &Guarded<Tally>,
) -> Result<GpuRun> {
    ensure!(warm_up.integrand == problem.integrand, "a warm-up of another integrand");
    device_driven_runs(module, [warm_up, problem], tally, 1)
}

/// The warm-up on `warm_up` and `repetitions` timed runs on `problem`, into `tally`.
fn device_driven_runs(
    module: &Module,
    [warm_up, problem]: [&Problem; 2],
    tally: &Guarded<Tally>,
    repetitions: usize,
) -> Result<GpuRun> {
    let master = check_cuda!(module.get_function(format!("adaptive_master_{}", problem.integrand.name())))?;
    let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    // What is enqueued writes `tally`, which the caller owns: every way out of this call waits for it.
    let _wait = WaitForDevice;
    // SAFETY: used only in the runs below, and `tally`, borrowed for this whole call, outlives every
    // copy into it: `_wait` waits for all of them on every way out (a stuck run ends the process).
    let mut body = unsafe { tally.body() };
    let zero = [Tally::default()];
    let d_tally = tally.as_device_ptr();
    let mut runs = 0;

    let run = || {
        let run_on = if runs == 0 { warm_up } else { problem };
        runs += 1;
        let (a, b, tolerance, max_depth) = (run_on.a, run_on.b, run_on.tolerance, run_on.max_depth as i32);
        // SAFETY: `zero` outlives the copy (it is pageable, so the call returns once it is staged).
        check_cuda!(unsafe { body.async_copy_from(&zero, &stream) })?;
        // __global__ void adaptive_master_pi(double a, double b, double tolerance, int max_depth, Tally* tally)
        // SAFETY: the arguments match the kernel above; d_tally points at the guarded tally, borrowed for
        // this whole call.
        check_cuda!(unsafe { launch!(master<<<1, 1, 0, stream>>>(a, b, tolerance, max_depth, d_tally)) })?;
        Ok(())
    };
    // Watched: past the pending-launch limit the device runtime may stall the tree, in any run.
    let timing = time_on_stream_or_give_up(
        &stream,
        1,
        repetitions,
        STUCK_AFTER,
        "the device-driven runs (master and workers)",
        run,
    )?;
    let result = tally.read()?.first().copied().unwrap_or_default();
    Ok(GpuRun {
        tally: result,
        timing,
        host_launches: 1,
        // The master's first worker grid, then one child grid per split that the runtime accepted.
        device_launches: 1 + result.splits.saturating_sub(result.launch_failures),
    })
}

/// Host-driven: one launch of `adaptive_level` per level over that level's intervals, then a
/// synchronize and a read-back of how many intervals the next level has.
pub fn host_driven(module: &Module, problem: &Problem, repetitions: usize) -> Result<GpuRun> {
    let level = check_cuda!(module.get_function(format!("adaptive_level_{}", problem.integrand.name())))?;
    let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let mut tally = check_cuda!(DeviceBuffer::from_slice(&[Tally::default()]))?;
    let mut next_count = check_cuda!(DeviceBuffer::from_slice(&[0u32]))?;
    let first = check_cuda!(DeviceBuffer::from_slice(&problem.first_intervals()))?;
    // Each level reads one list and writes the other; they grow by doubling, so after the warm-up run
    // the timed runs allocate nothing.
    let mut lists = [Some(grown(None, 2)?), Some(grown(None, 2)?)];
    let max_depth = problem.max_depth as i32;
    let mut launches = 0;

    let timing = time_on_stream(&stream, 1, repetitions, || {
        check_cuda!(tally.copy_from(&[Tally::default()]))?;
        let (mut intervals, mut count, mut target) = (first.as_device_ptr(), first.len(), 0);
        launches = 0;
        while count > 0 {
            let next = grown(lists[target].take(), 2 * count)?;
            check_cuda!(next_count.copy_from(&[0u32]))?;
            let blocks = (count as u32).div_ceil(LEVEL_BLOCK_SIZE);
            // __global__ void adaptive_level_pi(const Interval* intervals, int count, Interval* next,
            //                                   unsigned int* next_count, int max_depth, Tally* tally)
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
            // point into live device buffers as large as the kernel indexes.
            check_cuda!(unsafe {
                launch!(level<<<blocks, LEVEL_BLOCK_SIZE, 0, stream>>>(
                    intervals, count as i32, next.as_device_ptr(), next_count.as_device_ptr(), max_depth,
                    tally.as_device_ptr()
                ))
            })?;
            launches += 1;
            check_cuda!(stream.synchronize())?; // the host waits for each level ...
            let mut counted = [0u32];
            check_cuda!(next_count.copy_to(&mut counted))?; // ... and reads how much work comes next
            count = counted[0] as usize;
            intervals = next.as_device_ptr();
            lists[target] = Some(next);
            target = 1 - target;
        }
        Ok(())
    })?;
    Ok(GpuRun {
        tally: read_tally(&tally)?,
        timing,
        host_launches: launches,
        device_launches: 0,
    })
}

/// `list` if it holds at least `count` intervals, else a new list of the next power of two.
fn grown(list: Option<DeviceBuffer<Interval>>, count: usize) -> Result<DeviceBuffer<Interval>> {
    match list {
        Some(list) if list.len() >= count => Ok(list),
        _ => {
            // SAFETY: the kernel writes the entries before anyone reads them (up to the count it reports).
            Ok(check_cuda!(unsafe {
                DeviceBuffer::uninitialized(count.next_power_of_two())
            })?)
        }
    }
}

fn read_tally(tally: &DeviceBuffer<Tally>) -> Result<Tally> {
    let mut host = [Tally::default()];
    check_cuda!(tally.copy_to(&mut host))?;
    Ok(host[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn tally_and_interval_have_the_layout_of_the_cuda_structs() {
        // struct Tally { double; 4 x unsigned long long; unsigned int; } and
        // struct Interval { 4 x double; int; }, padded to 8 on x86-64 and on the GPU.
        assert_eq!(
            (
                size_of::<Tally>(),
                offset_of!(Tally, launch_failures),
                offset_of!(Tally, deepest)
            ),
            (48, 32, 40)
        );
        assert_eq!(
            (
                size_of::<Interval>(),
                offset_of!(Interval, tolerance),
                offset_of!(Interval, depth)
            ),
            (40, 24, 32)
        );
    }

    #[test]
    fn cpu_reference_reaches_the_tolerance_for_every_integrand() {
        for integrand in Integrand::ALL {
            let problem = Problem::new(integrand, 0.0, 1.0, 1e-10, 20).unwrap();
            let tally = adaptive_on_cpu(&problem);
            let error = (tally.integral - integrand.exact(0.0, 1.0)).abs();
            assert!(error <= problem.tolerance, "{integrand:?}: {error:e} with {tally:?}");
            assert_eq!(tally.accepted, tally.splits + 2, "a binary tree over two first halves");
            assert_eq!(tally.depth_limit_hits, 0, "{integrand:?}");
        }
    }

    #[test]
    fn the_peak_needs_far_more_intervals_than_a_smooth_function() {
        let tally = |integrand| adaptive_on_cpu(&Problem::new(integrand, 0.0, 1.0, 1e-10, 20).unwrap());
        assert!(tally(Integrand::Peak).accepted > 10 * tally(Integrand::Exp).accepted);
    }

    #[test]
    fn a_shallow_depth_limit_is_counted_not_hidden() {
        let tally = adaptive_on_cpu(&Problem::new(Integrand::Peak, 0.0, 1.0, 1e-12, 3).unwrap());
        assert!(tally.depth_limit_hits > 0 && tally.deepest == 3, "{tally:?}");
    }

    #[test]
    fn refuses_bad_tolerance_depth_and_interval() {
        let message = |t, d, a, b| Problem::new(Integrand::Pi, a, b, t, d).unwrap_err().to_string();
        assert_eq!(message(0.0, 10, 0.0, 1.0), "--tolerance 0 must be a positive number");
        assert_eq!(
            message(-1e-3, 10, 0.0, 1.0),
            "--tolerance -0.001 must be a positive number"
        );
        assert!(message(1e-6, 0, 0.0, 1.0).starts_with("--max-depth 0 is out of range: 1 to 24"));
        assert!(message(1e-6, 25, 0.0, 1.0).starts_with("--max-depth 25 is out of range"));
        assert_eq!(message(1e-6, 10, 1.0, 0.5), "--b 0.5 must be greater than --a 1");
    }
}

//! `--mode divergence`: the Chinese notes' section 4. A warp runs one instruction for all its threads;
//! when its threads take different sides of a branch, it runs both sides one after the other, the
//! threads of the other side idle. `branch_by_lane` splits every warp (`threadIdx.x % 2`),
//! `branch_by_warp` gives each warp one side (`(threadIdx.x / 32) % 2`); both send half the threads
//! each way (`kernels/cuda/memory.cu`). Each also counts, with a ballot, the warps whose lanes take
//! different sides, which the CPU predicts: that checks the branch's condition, lane by lane. What
//! the split costs shows in the time, and in ncu's threads per warp instruction (`--counters`).

use anyhow::Result;
use common::check_cuda;
use common::gpu::Gpu;
use common::phases::{self, Phase};
use common::raw;
use common::timing::{time_on_stream_after, Timing};
use common::verify::{check_cell, poisoned_device_buffer, Random};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use rayon::prelude::*;

use crate::{blocks_for, new_stream};

/// Threads per block: whole warps.
pub const BLOCK: u32 = 256;

/// Which test splits the threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// `threadIdx.x % 2`: both sides in every warp.
    ByLane,
    /// `(threadIdx.x / 32) % 2`: one side per warp.
    ByWarp,
}

impl Branch {
    pub const ALL: [Branch; 2] = [Branch::ByLane, Branch::ByWarp];

    pub fn kernel(self) -> &'static str {
        match self {
            Branch::ByLane => "branch_by_lane",
            Branch::ByWarp => "branch_by_warp",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Branch::ByLane => "if (threadIdx.x % 2)",
            Branch::ByWarp => "if ((threadIdx.x / 32) % 2)",
        }
    }

    /// Whether thread `t` of its block takes the first side.
    pub fn odd(self, t: usize) -> bool {
        match self {
            Branch::ByLane => t % 2 == 1,
            Branch::ByWarp => (t / 32) % 2 == 1,
        }
    }

    /// Warps of a `blocks`-block grid whose lanes disagree at the branch.
    pub fn divergent_warps(self, blocks: u32) -> u64 {
        let warps_per_block = (BLOCK / 32) as usize;
        let split = (0..warps_per_block)
            .filter(|w| {
                let sides: Vec<bool> = (32 * w..32 * (w + 1)).map(|t| self.odd(t)).collect();
                sides.contains(&true) && sides.contains(&false)
            })
            .count();
        split as u64 * u64::from(blocks)
    }
}

/// What thread `i` (thread `t` of its block) writes: `rounds` steps of one side's update from `x`.
pub fn thread_result(branch: Branch, t: usize, mut x: f32, rounds: usize) -> f32 {
    for _ in 0..rounds {
        x = if branch.odd(t) {
            x.mul_add(0.999, 0.5)
        } else {
            (x * x).mul_add(0.25, 0.5)
        };
    }
    x
}

/// One kernel's run: its time, the warps its ballot counted, the threads whose result is wrong.
pub struct Measured {
    pub timing: Timing,
    pub divergent: u64,
    pub wrong: usize,
}

/// Runs `branch`'s kernel on `input` (random, in [0, 1)), `rounds` steps a thread; every result is
/// checked bit for bit.
pub fn run(module: &Module, branch: Branch, input: &[f32], rounds: usize, repetitions: usize) -> Result<Measured> {
    let function = check_cuda!(module.get_function(branch.kernel()))?;
    let device_input = check_cuda!(DeviceBuffer::from_slice(input))?;
    let out = poisoned_device_buffer::<f32>(input.len())?;
    let counter = poisoned_device_buffer::<u32>(1)?;
    let stream = new_stream()?;
    let grid = blocks_for(input.len(), BLOCK);
    let _named = common::timing::observer::program(&format!("divergence: {}", branch.label()));
    let zero_counter = || {
        // SAFETY: `counter`'s one word, on a live stream, ahead of each launch (outside its events).
        Ok(check_cuda!(unsafe {
            raw::cuMemsetD32Async(counter.as_device_ptr().as_raw(), 0, 1, stream.as_inner().cast())
        })?)
    };
    let timing = time_on_stream_after(&stream, 1, repetitions, zero_counter, || {
        // __global__ void branch_by_lane(const float* in, float* out, int n, int rounds, unsigned* divergent)
        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order;
        // `device_input` and `out` hold n floats, `counter` one word.
        check_cuda!(unsafe {
            launch!(function<<<grid, BLOCK, 0, stream>>>(device_input.as_device_ptr(), out.as_device_ptr(), input.len() as i32, rounds as i32, counter.as_device_ptr()))
        })?;
        Ok(())
    })?;
    let mut back = vec![0.0f32; input.len()];
    check_cuda!(out.copy_to(&mut back[..]))?;
    let mut count = [0u32];
    check_cuda!(counter.copy_to(&mut count[..]))?;
    let _phase = phases::enter(Phase::Verify);
    let wrong = back
        .par_iter()
        .enumerate()
        .filter(|&(i, g)| g.to_bits() != thread_result(branch, i % BLOCK as usize, input[i], rounds).to_bits())
        .count();
    Ok(Measured {
        timing,
        divergent: u64::from(count[0]),
        wrong,
    })
}

/// Random inputs in [0, 1) for `n` threads.
pub fn random_input(n: usize, seed: u64) -> Vec<f32> {
    let mut random = Random::new(seed);
    (0..n).map(|_| random.uniform(0.0, 1.0) as f32).collect()
}

/// `--mode divergence`: both kernels on one thread per resident thread slot, `rounds` steps each.
/// Returns whether every result and every count was right.
pub fn report(gpu: &Gpu, module: &Module, rounds: usize, repetitions: usize, seed: u64) -> Result<bool> {
    let n = gpu.info.max_threads_per_multiprocessor as usize * gpu.info.multiprocessors as usize;
    let input = random_input(n, seed);
    let blocks = blocks_for(n, BLOCK);
    println!("\nWarp divergence: {n} threads, half take each side of the branch, {rounds} steps on either side\n");
    println!(
        "| branch | warps split at the branch (ballot) | predicted | GPU time in ms | vs one side per warp | check |"
    );
    println!(
        "|--------|------------------------------------|-----------|----------------|----------------------|-------|"
    );
    let rows: Vec<(Branch, Measured)> = Branch::ALL
        .into_iter()
        .map(|branch| Ok((branch, run(module, branch, &input, rounds, repetitions)?)))
        .collect::<Result<_>>()?;
    let by_warp_ms = rows[1].1.timing.median_ms();
    let mut passed = true;
    for (branch, m) in &rows {
        let predicted = branch.divergent_warps(blocks);
        let wrong = m.wrong + usize::from(m.divergent != predicted);
        passed &= wrong == 0;
        println!(
            "| {} | {} of {} | {predicted} | {:.4} | {:.2}x | {} |",
            branch.label(),
            m.divergent,
            u64::from(blocks) * u64::from(BLOCK / 32),
            m.timing.median_ms(),
            m.timing.median_ms() / by_warp_ms,
            check_cell(wrong)
        );
    }
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_warp_splits_by_lane_and_none_by_warp() {
        assert_eq!(Branch::ByLane.divergent_warps(3), 3 * 8);
        assert_eq!(Branch::ByWarp.divergent_warps(3), 0);
        let odd = |b: Branch| (0..BLOCK as usize).filter(|&t| b.odd(t)).count();
        assert_eq!(odd(Branch::ByLane), 128, "half the threads each way");
        assert_eq!(odd(Branch::ByWarp), 128);
    }

    #[test]
    fn each_side_has_its_own_update() {
        assert_eq!(thread_result(Branch::ByLane, 1, 1.0, 1), 1.0f32.mul_add(0.999, 0.5));
        assert_eq!(thread_result(Branch::ByLane, 0, 1.0, 1), 0.75);
        assert_eq!(thread_result(Branch::ByWarp, 1, 1.0, 1), 0.75, "lane 1 of warp 0");
        assert_eq!(thread_result(Branch::ByWarp, 33, 0.5, 0), 0.5);
    }
}

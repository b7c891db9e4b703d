//! `--mode local`: the Chinese notes' local arrays. A small array like `float a[3]` whose elements the
//! code names with constants becomes three registers; indexed by a value known only at run time it
//! cannot stay there (a register has no address), and ptxas gives it a stack frame in local memory:
//! memory of each thread's own, in DRAM behind the L1 and L2 caches. `local_array_fixed` and
//! `local_array_indexed` (`kernels/cuda/memory.cu`) make the same updates; the table sets their ptxas
//! stack frames and the driver's local memory beside their times.

use anyhow::{Context as _, Result};
use common::check_cuda;
use common::gpu::Gpu;
use common::phases::{self, Phase};
use common::ptxas_view::print_ptxas;
use common::timing::{time_on_stream, Timing};
use common::verify::{check_cell, poisoned_device_buffer, Random};
use cust::function::FunctionAttribute;
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use rayon::prelude::*;

use crate::{blocks_for, new_stream};

/// Threads per block.
pub const BLOCK: u32 = 256;
/// The most rounds `--local-rounds` takes: the values grow about 1.7 times a round, so past about 165
/// they overflow to infinity, and a wrong kernel that also overflows would compare equal.
pub const MAX_ROUNDS: u32 = 150;

/// How the kernel names the elements of `a[3]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indexing {
    /// `a[0]`, `a[1]`, `a[2]`: three registers.
    Fixed,
    /// `a[j]`, `j` read from memory: local memory.
    Indexed,
}

impl Indexing {
    pub const ALL: [Indexing; 2] = [Indexing::Fixed, Indexing::Indexed];

    pub fn kernel(self) -> &'static str {
        match self {
            Indexing::Fixed => "local_array_fixed",
            Indexing::Indexed => "local_array_indexed",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Indexing::Fixed => "a[0], a[1], a[2] (constant indices)",
            Indexing::Indexed => "a[j], j known at run time",
        }
    }
}

/// What a thread computes from its three inputs, starting at element `first`: `3 * rounds` updates
/// `a[j] = fma(a[j], 0.5, a[j + 1])` (wrapping), then `a[0] + a[1] + a[2]`. `local_array_fixed` is
/// this with `first` 0.
pub fn thread_result(mut a: [f32; 3], first: usize, rounds: usize) -> f32 {
    let mut j = first;
    for _ in 0..3 * rounds {
        let k = (j + 1) % 3;
        a[j] = a[j].mul_add(0.5, a[k]);
        j = k;
    }
    a[0] + a[1] + a[2]
}

/// Random inputs for `n` threads: three values each (`in[i]`, `in[n + i]`, `in[2n + i]`) and a
/// start in 0..3 for the indexed kernel, one per warp: lanes that index their arrays alike make the
/// same access to local memory, so the time measures local memory, not lanes that disagree.
pub struct Work {
    pub n: usize,
    pub rounds: usize,
    pub input: Vec<f32>,
    pub first: Vec<i32>,
}

impl Work {
    pub fn new(n: usize, rounds: usize, seed: u64) -> Work {
        let mut random = Random::new(seed);
        let input = (0..3 * n).map(|_| random.uniform(-1.0, 1.0) as f32).collect();
        let warps: Vec<i32> = (0..n.div_ceil(32)).map(|_| random.below(3) as i32).collect();
        let first = (0..n).map(|i| warps[i / 32]).collect();
        Work {
            n,
            rounds,
            input,
            first,
        }
    }

    /// What thread `i` must write under `indexing`.
    pub fn expected(&self, indexing: Indexing, i: usize) -> f32 {
        let a = [self.input[i], self.input[self.n + i], self.input[2 * self.n + i]];
        let first = match indexing {
            Indexing::Fixed => 0,
            Indexing::Indexed => self.first[i] as usize,
        };
        thread_result(a, first, self.rounds)
    }
}

/// Runs `indexing`'s kernel on `work`, timed; returns the timing and the threads (all of them are
/// checked) whose result differs from the CPU's in any bit or is not finite.
pub fn run(module: &Module, indexing: Indexing, work: &Work, repetitions: usize) -> Result<(Timing, usize)> {
    let function = check_cuda!(module.get_function(indexing.kernel()))?;
    let input = check_cuda!(DeviceBuffer::from_slice(&work.input))?;
    let first = check_cuda!(DeviceBuffer::from_slice(&work.first))?;
    let out = poisoned_device_buffer::<f32>(work.n)?;
    let stream = new_stream()?;
    let grid = blocks_for(work.n, BLOCK);
    let (n, rounds) = (work.n as i32, work.rounds as i32);
    let _named = common::timing::observer::program(&format!("local arrays: {}", indexing.label()));
    let timing = time_on_stream(&stream, 1, repetitions, || {
        match indexing {
            // __global__ void local_array_fixed(const float* in, float* out, int n, int rounds)
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and
            // order; `input` holds 3n floats and `out` n.
            Indexing::Fixed => check_cuda!(unsafe {
                launch!(function<<<grid, BLOCK, 0, stream>>>(input.as_device_ptr(), out.as_device_ptr(), n, rounds))
            })?,
            // __global__ void local_array_indexed(const float* in, const int* first, float* out, int n, int rounds)
            // SAFETY: as above; `first` holds n ints, each 0, 1 or 2.
            Indexing::Indexed => check_cuda!(unsafe {
                launch!(function<<<grid, BLOCK, 0, stream>>>(input.as_device_ptr(), first.as_device_ptr(), out.as_device_ptr(), n, rounds))
            })?,
        }
        Ok(())
    })?;
    let mut back = vec![0.0f32; work.n];
    check_cuda!(out.copy_to(&mut back[..]))?;
    let _phase = phases::enter(Phase::Verify);
    let wrong = back
        .par_iter()
        .enumerate()
        .filter(|&(i, g)| !g.is_finite() || g.to_bits() != work.expected(indexing, i).to_bits())
        .count();
    Ok((timing, wrong))
}

/// `--mode local`: both kernels' ptxas reports, then their local memory and times side by side, on
/// two threads per resident thread slot, `rounds` rounds each. Returns whether every result was right.
pub fn report(gpu: &Gpu, module: &Module, rounds: usize, repetitions: usize, seed: u64) -> Result<bool> {
    let n = 2 * gpu.info.max_threads_per_multiprocessor as usize * gpu.info.multiprocessors as usize;
    let work = Work::new(n, rounds, seed);
    println!(
        "\nLocal arrays: float a[3], {n} threads, {} updates each, every thread checked\n",
        3 * rounds
    );
    let mut rows = Vec::new();
    for indexing in Indexing::ALL {
        let function = check_cuda!(module.get_function(indexing.kernel()))?;
        println!("{}:", indexing.label());
        print_ptxas(&kernels::MEMORY, indexing.kernel(), &function, &gpu.info, BLOCK)?;
        println!();
        let local = check_cuda!(function.get_attribute(FunctionAttribute::LocalSizeBytes))?;
        rows.push((indexing, local, run(module, indexing, &work, repetitions)?));
    }
    let (_, report) = kernels::MEMORY
        .report_for(gpu.info.arch())
        .map_err(anyhow::Error::msg)?;
    let registers_ms = rows[0].2 .0.median_ms();
    println!("| a[3] indexed as | ptxas stack frame | driver: local memory per thread | GPU time in ms | vs registers | check |");
    println!("|-----------------|-------------------|---------------------------------|----------------|--------------|-------|");
    for (indexing, local, (timing, wrong)) in &rows {
        let resources = report
            .function(indexing.kernel())
            .with_context(|| format!("{} is not in memory.cu's ptxas report", indexing.kernel()))?;
        println!(
            "| {} | {} bytes | {local} bytes | {:.4} | {:.2}x | {} |",
            indexing.label(),
            resources.stack_frame_bytes,
            timing.median_ms(),
            timing.median_ms() / registers_ms,
            check_cell(*wrong)
        );
    }
    Ok(rows.iter().all(|(_, _, (_, wrong))| *wrong == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_round_count_stays_finite() {
        // Inputs are in [-1, 1); all ones grow the fastest (the update's matrix has no negative entry).
        let a = [1.0f32, 1.0, 1.0];
        for first in 0..3 {
            assert!(thread_result(a, first, MAX_ROUNDS as usize).is_finite());
        }
        assert!(
            !thread_result(a, 0, 200).is_finite(),
            "the bound is needed: 200 rounds overflow"
        );
    }

    #[test]
    fn the_indexed_update_from_zero_is_the_fixed_one() {
        let a = [0.25f32, -1.0, 0.75];
        // One round by hand: a0 = 0.25*0.5 - 1; a1 = -1*0.5 + 0.75; a2 = 0.75*0.5 + a0.
        let a0 = 0.25f32.mul_add(0.5, -1.0);
        let a1 = (-1.0f32).mul_add(0.5, 0.75);
        let a2 = 0.75f32.mul_add(0.5, a0);
        assert_eq!(thread_result(a, 0, 1), a0 + a1 + a2);
        assert_ne!(thread_result(a, 1, 1), thread_result(a, 0, 1), "the start matters");
        assert_eq!(thread_result(a, 2, 0), 0.0, "no update: the plain sum");
    }

    #[test]
    fn each_kernel_reads_the_start_only_when_indexed() {
        let work = Work::new(200, 3, 9);
        assert!(work.first.iter().all(|f| (0..3).contains(f)));
        assert!(
            work.first.chunks(32).all(|warp| warp.iter().all(|&f| f == warp[0])),
            "one start per warp"
        );
        let i = (0..200)
            .find(|&i| work.first[i] != 0)
            .expect("a non-zero start among seven warps");
        assert_ne!(work.expected(Indexing::Fixed, i), work.expected(Indexing::Indexed, i));
        let source = include_str!("../../kernels/cuda/memory.cu");
        assert!(source.contains(
            "void local_array_fixed(const float* __restrict__ in, float* __restrict__ out, int n, int rounds)"
        ));
        assert!(source.contains(
            "void local_array_indexed(const float* __restrict__ in, const int* __restrict__ first, float* __restrict__ out, int n, int rounds)"
        ));
    }
}

//! `--mode latency`: the Greek slides' cycles per access (registers ~1, shared ~5, global ~500, cached
//! constant ~5), measured on today's GPU. One thread follows a chain in which every step needs the
//! value the step before returned, so nothing overlaps and the time per step is the latency
//! (`chase_*` in `kernels/cuda/memory.cu`). The chain is a random cycle the host makes
//! ([`cycle_table`]): each visited word holds the index of the next, `spacing` words apart, in an
//! order no prefetcher can guess. The kernel counts `clock64()` cycles around the walk; the host
//! walks the same table and checks that the GPU stopped where it should.
//!
//! Global memory has three rows where the slide has one: through L1 (`ld.global.ca`, a small table),
//! through L2 only (`ld.global.cg`, larger than any L1), and from DRAM (the first walk after the L2
//! was emptied, every step a new 2 KiB-spaced line). Registers are a chain of fused multiply-adds.

use anyhow::Result;
use common::check_cuda;
use common::gpu::{Flush, Gpu};
use common::phases::{self, Phase};
use common::verify::{check_cell, poisoned_device_buffer, Random};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use cust::stream::Stream;

use crate::device_query::Query;
use crate::new_stream;

/// `CHASE_SHARED_WORDS` in memory.cu: the shared table's size in words.
pub const SHARED_WORDS: usize = 4096;
/// `CHASE_CONSTANT_WORDS` in memory.cu: the `__constant__` table's size in words (1 KiB, which the
/// smallest constant cache of every GPU of the course holds).
pub const CONSTANT_WORDS: usize = 256;
/// Dependent steps every walk times: enough that the clock reads around them cost nothing.
pub const STEPS: usize = 4096;
/// Words in a 128-byte cache line.
const LINE_WORDS: usize = 32;

/// Where a chain's steps go, one row of the table each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Registers,
    Shared,
    Constant,
    L1,
    L2,
    Dram,
}

impl Place {
    pub const ALL: [Place; 6] = [
        Place::Registers,
        Place::Shared,
        Place::Constant,
        Place::L1,
        Place::L2,
        Place::Dram,
    ];

    /// The row's name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Place::Registers => "registers (dependent FMA)",
            Place::Shared => "shared memory",
            Place::Constant => "constant memory, cached",
            Place::L1 => "global, hit in L1",
            Place::L2 => "global, hit in L2 (L1 skipped)",
            Place::Dram => "global, from DRAM (L2 emptied)",
        }
    }

    /// What the Greek slides give for it, in cycles.
    pub fn slides(self) -> &'static str {
        match self {
            Place::Registers => "~1",
            Place::Shared | Place::Constant => "~5",
            Place::L1 | Place::L2 => "(not on the slide)",
            Place::Dram => "~500",
        }
    }

    /// The table's shape: (slots in the cycle, words between two slots).
    pub fn layout(self) -> (usize, usize) {
        match self {
            Place::Registers => (0, 0),
            Place::Shared => (SHARED_WORDS, 1),
            Place::Constant => (CONSTANT_WORDS, 1),
            // 16 KiB, one slot a line: fits every L1.
            Place::L1 => (128, LINE_WORDS),
            // 512 KiB: more than any L1, far less than any L2.
            Place::L2 => (STEPS, LINE_WORDS),
            // 8 MiB, each slot on its own 2 KiB stretch: every step a line no step before touched.
            Place::Dram => (STEPS, 512),
        }
    }
}

/// A random cycle through `slots` slots `spacing` words apart (Sattolo's shuffle: one cycle through
/// all of them): word `s * spacing` holds the index of the next slot's word, every other word 0.
pub fn cycle_table(slots: usize, spacing: usize, random: &mut Random) -> Vec<u32> {
    let mut order: Vec<usize> = (0..slots).collect();
    for i in (1..slots).rev() {
        order.swap(i, random.below(i as u64) as usize);
    }
    // After Sattolo's shuffle, slot s is followed by order[s], and following it visits every slot.
    let mut table = vec![0u32; slots * spacing];
    for (slot, &next) in order.iter().enumerate() {
        table[slot * spacing] = (next * spacing) as u32;
    }
    table
}

/// Where `steps` steps from `start` through `table` end: what the GPU's walk must return.
pub fn walk(table: &[u32], start: u32, steps: usize) -> u32 {
    (0..steps).fold(start, |j, _| table[j as usize])
}

/// `chase_registers`' result: `steps` times `x = fmaf(x, a, b)`, fused as on the GPU.
pub fn fma_chain(x: f32, a: f32, b: f32, steps: usize) -> f32 {
    (0..steps).fold(x, |x, _| x.mul_add(a, b))
}

/// One row: the median cycles per step over the repetitions, and whether every walk ended right.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub place: Place,
    pub cycles: f64,
    pub wrong: usize,
}

/// The launches of one row: the chain's table, where it lives, and the end the CPU expects.
struct Chain<'a> {
    module: &'a Module,
    stream: Stream,
    place: Place,
    table: DeviceBuffer<u32>,
    start: u32,
    expected: u64,
    /// The FMA chain's operands (registers only).
    fma: (f32, f32, f32),
}

impl<'a> Chain<'a> {
    /// Makes `place`'s table (random, from `random`), puts it where the kernel reads it, and walks it
    /// on the CPU.
    fn new(module: &'a Module, place: Place, random: &mut Random) -> Result<Chain<'a>> {
        let (slots, spacing) = place.layout();
        let table = if place == Place::Registers {
            vec![0u32]
        } else {
            cycle_table(slots, spacing, random)
        };
        let start = (random.below(slots.max(1) as u64) as usize * spacing) as u32;
        // x in [1, 2), a in (0.5, 1), b in [0.25, 0.5): the chain settles near b / (1 - a), never
        // zero, never overflowing, and every step's rounding counts.
        let fma = (
            random.uniform(1.0, 2.0) as f32,
            random.uniform(0.5, 1.0).max(0.5001) as f32,
            random.uniform(0.25, 0.5) as f32,
        );
        let expected = {
            let _phase = phases::enter(Phase::Verify);
            match place {
                Place::Registers => u64::from(fma_chain(fma.0, fma.1, fma.2, STEPS).to_bits()),
                // The others walk twice, warming up, then timed; DRAM's one cold walk is timed.
                Place::Dram => u64::from(walk(&table, start, STEPS)),
                _ => u64::from(walk(&table, start, 2 * STEPS)),
            }
        };
        if place == Place::Constant {
            let mut symbol = check_cuda!(module.get_global::<[u32; CONSTANT_WORDS]>(c"chase_constant"))?;
            let words: [u32; CONSTANT_WORDS] = table
                .clone()
                .try_into()
                .map_err(|_| anyhow::anyhow!("chase_constant holds {CONSTANT_WORDS} words"))?;
            check_cuda!(symbol.copy_from(&words))?;
        }
        Ok(Chain {
            module,
            stream: new_stream()?,
            place,
            table: check_cuda!(DeviceBuffer::from_slice(&table))?,
            start,
            expected,
            fma,
        })
    }

    /// One walk (after `flush`, for DRAM): cycles per step, and whether it ended where the CPU's did.
    fn run(&self, flush: &Flush) -> Result<(f64, bool)> {
        let out = poisoned_device_buffer::<u64>(2)?;
        let (stream, table, start, steps) = (&self.stream, self.table.as_device_ptr(), self.start, STEPS as i32);
        let kernel = |name: &str| check_cuda!(self.module.get_function(name));
        match self.place {
            Place::Registers => {
                let (x, a, b) = self.fma;
                let f = kernel("chase_registers")?;
                // __global__ void chase_registers(float x, float a, float b, int steps, unsigned long long* out)
                // SAFETY: the arguments match the C signature above in type and order; `out` holds the two
                // 64-bit words the one thread writes.
                check_cuda!(unsafe { launch!(f<<<1, 1, 0, stream>>>(x, a, b, steps, out.as_device_ptr())) })?;
            }
            Place::Shared => {
                let f = kernel("chase_shared")?;
                // __global__ void chase_shared(const unsigned* table, unsigned start, int steps, unsigned long long* out)
                // SAFETY: as above; `table` holds CHASE_SHARED_WORDS words (the layout's test), every one
                // an index into it.
                check_cuda!(unsafe { launch!(f<<<1, 1, 0, stream>>>(table, start, steps, out.as_device_ptr())) })?;
            }
            Place::Constant => {
                let f = kernel("chase_constant_memory")?;
                // __global__ void chase_constant_memory(unsigned start, int steps, unsigned long long* out)
                // SAFETY: as above; the constant table, written in `new`, holds only indices into itself.
                check_cuda!(unsafe { launch!(f<<<1, 1, 0, stream>>>(start, steps, out.as_device_ptr())) })?;
            }
            Place::L1 | Place::L2 | Place::Dram => {
                let f = kernel(if self.place == Place::L1 {
                    "chase_l1"
                } else {
                    "chase_l2"
                })?;
                let warm = i32::from(self.place != Place::Dram);
                if self.place == Place::Dram {
                    flush.run(stream)?;
                }
                // __global__ void chase_l2(const unsigned* table, unsigned start, int steps, int warm, unsigned long long* out)
                // SAFETY: as above; `table` is the whole cycle, every word an index into it.
                check_cuda!(unsafe {
                    launch!(f<<<1, 1, 0, stream>>>(table, start, steps, warm, out.as_device_ptr()))
                })?;
            }
        }
        check_cuda!(stream.synchronize())?;
        let mut back = [0u64; 2];
        check_cuda!(out.copy_to(&mut back[..]))?;
        Ok((back[1] as f64 / STEPS as f64, back[0] == self.expected))
    }
}

/// Every place's chain, `repetitions` walks each (a new random table per place): the median cycles
/// per step and the walks that ended wrong.
pub fn measure(gpu: &Gpu, module: &Module, repetitions: usize, seed: u64) -> Result<Vec<Latency>> {
    let flush = Flush::new(gpu.info.l2_bytes)?;
    let mut random = Random::new(seed);
    Place::ALL
        .iter()
        .map(|&place| {
            let chain = Chain::new(module, place, &mut random)?;
            let mut cycles = Vec::with_capacity(repetitions);
            let mut wrong = 0;
            for _ in 0..repetitions {
                let (per_step, right) = chain.run(&flush)?;
                cycles.push(per_step);
                wrong += usize::from(!right);
            }
            cycles.sort_by(f64::total_cmp);
            Ok(Latency {
                place,
                cycles: cycles[cycles.len() / 2],
                wrong,
            })
        })
        .collect()
}

/// `--mode latency`: the table, cycles beside the slide's and in nanoseconds at the GPU's rated
/// clock. Returns whether every walk ended where the CPU's did.
pub fn report(gpu: &Gpu, module: &Module, repetitions: usize, seed: u64) -> Result<bool> {
    let clock_khz = Query::read(gpu.device, gpu.info.clone())?.clock_khz;
    let rows = measure(gpu, module, repetitions, seed)?;
    println!(
        "\nLatency: one thread, {STEPS} dependent steps a walk, clock64() cycles per step (median of {repetitions}); ns at the rated {:.0} MHz:\n",
        f64::from(clock_khz) / 1e3
    );
    println!("| memory | Greek slides (cycles) | cycles per access | ns per access | check |");
    println!("|--------|-----------------------|-------------------|---------------|-------|");
    for row in &rows {
        println!(
            "| {} | {} | {:.1} | {:.1} | {} |",
            row.place.name(),
            row.place.slides(),
            row.cycles,
            row.cycles / f64::from(clock_khz) * 1e6,
            check_cell(row.wrong)
        );
    }
    Ok(rows.iter().all(|row| row.wrong == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_one_cycle_through_every_slot() {
        let mut random = Random::new(7);
        for (slots, spacing) in [(1, 1), (2, 1), (128, 32), (4096, 512)] {
            let table = cycle_table(slots, spacing, &mut random);
            assert_eq!(table.len(), slots * spacing);
            let mut seen = vec![false; slots];
            let mut j = 0u32;
            for _ in 0..slots {
                assert_eq!(j as usize % spacing, 0, "every index lands on a slot");
                assert!(
                    !seen[j as usize / spacing],
                    "a slot visited twice before the cycle closed"
                );
                seen[j as usize / spacing] = true;
                j = table[j as usize];
            }
            assert_eq!(j, 0, "the walk is back where it started after {slots} steps");
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn the_walk_and_the_fma_chain_are_what_the_gpu_computes() {
        let table = vec![2, 0, 1];
        assert_eq!(walk(&table, 0, 0), 0);
        assert_eq!(walk(&table, 0, 1), 2);
        assert_eq!(walk(&table, 0, 2), 1);
        assert_eq!(walk(&table, 0, 3), 0);
        // One fused rounding per step: 3 * 0.75 + 0.25 = 2.5 exactly, then 2.5 * 0.75 + 0.25.
        assert_eq!(fma_chain(3.0, 0.75, 0.25, 1), 2.5);
        assert_eq!(fma_chain(3.0, 0.75, 0.25, 2), 2.125);
        let settled = fma_chain(1.5, 0.9, 0.3, 2 * STEPS);
        assert!((settled - 3.0).abs() < 1e-5, "settles at b / (1 - a): {settled}");
    }

    #[test]
    fn the_tables_have_the_sizes_memory_cu_gives_them() {
        let source = include_str!("../../kernels/cuda/memory.cu");
        assert!(source.contains(&format!("#define CHASE_SHARED_WORDS {SHARED_WORDS}\n")));
        assert!(source.contains(&format!("#define CHASE_CONSTANT_WORDS {CONSTANT_WORDS}\n")));
        assert!(source.contains("__constant__ unsigned chase_constant[CHASE_CONSTANT_WORDS];"));
    }

    #[test]
    fn every_layout_fits_its_kernel_and_touches_a_new_line_where_it_should() {
        assert_eq!(Place::Shared.layout().0 * Place::Shared.layout().1, SHARED_WORDS);
        assert_eq!(Place::Constant.layout().0 * Place::Constant.layout().1, CONSTANT_WORDS);
        for place in [Place::L1, Place::L2, Place::Dram] {
            let (_, spacing) = place.layout();
            assert!(spacing >= LINE_WORDS, "{place:?}: one slot a line or more");
        }
        // The DRAM walk visits each slot once: no step finds a line an earlier step brought in.
        assert_eq!(Place::Dram.layout().0, STEPS);
    }
}

//! `--mode transactions`: the German slides on Fermi's caches. L1 and L2 lines are 128 bytes; a hit in
//! L1 moves a whole 128-byte line in one transaction, while data found only in L2 comes 32 bytes a
//! transaction. Measured as throughput: every warp of a full GPU reads a table 128 contiguous, aligned
//! bytes a load (`read_lines_l1` / `read_lines_l2` in `kernels/cuda/memory.cu`), the same small table
//! once through L1 (`__ldca`) and once past it (`__ldcg`, L2 only), then a table too large for any L1
//! through L1. Bytes per clock per multiprocessor, at the clock the device query reports, say how
//! wide each path is; `--counters` adds the sectors L1 hit and the sectors L2 served it.
//!
//! Each thread adds (wrapping) the words it read and writes the sum; lane l reads only words l mod 32,
//! each equally often, so the host knows every sum from the table's 32 column sums.

use anyhow::{ensure, Result};
use common::check_cuda;
use common::gpu::Gpu;
use common::phases::{self, Phase};
use common::timing::{time_on_stream, Timing};
use common::verify::{check_cell, poisoned_device_buffer};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;

use crate::device_query::Query;
use crate::{mix, new_stream};

/// One row: which load, over which table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// `__ldca` over a table that stays in L1.
    L1Hit,
    /// `__ldcg` over the same table: L1 skipped, every load served by L2.
    L2Only,
    /// `__ldca` over a table no L1 holds: lines come from L2 through L1, unless a warp of the same
    /// multiprocessor fetched them a moment before (about two thirds of the sectors on an H200, by ncu).
    LargeTable,
}

impl Path {
    pub const ALL: [Path; 3] = [Path::L1Hit, Path::L2Only, Path::LargeTable];

    pub fn kernel(self) -> &'static str {
        match self {
            Path::L1Hit | Path::LargeTable => "read_lines_l1",
            Path::L2Only => "read_lines_l2",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Path::L1Hit => "L1 hit (__ldca)",
            Path::L2Only => "L2 hit, L1 skipped (__ldcg)",
            Path::LargeTable => "larger than L1, through it (__ldca)",
        }
    }

    /// The table's size for a GPU with `l2_bytes` of L2.
    pub fn table_bytes(self, l2_bytes: usize) -> usize {
        match self {
            Path::L1Hit | Path::L2Only => SMALL_TABLE,
            Path::LargeTable => {
                let quarter = (l2_bytes / 4).max(SMALL_TABLE);
                LARGE_TABLE_MAX.min(1 << quarter.ilog2())
            }
        }
    }

    /// What the slides say one request costs: a 128-byte line from L1 in one transaction, or 32
    /// bytes a transaction from L2.
    pub fn slides_transactions(self) -> &'static str {
        match self {
            Path::L1Hit => "1 of 128 bytes",
            Path::L2Only | Path::LargeTable => "4 of 32 bytes",
        }
    }

    /// 32-byte sectors one request touches (the model): 4 on every path, one aligned line.
    pub fn sectors_per_request(self) -> usize {
        BYTES_PER_REQUEST / 32
    }
}

/// Threads per block.
pub const BLOCK: u32 = 256;
/// `LINE_READS_UNROLL` in memory.cu: loads in flight per thread.
pub const UNROLL: usize = 8;
/// Warp loads every thread takes part in: a multiple of [`UNROLL`], and of the lines of every table
/// up to [`LARGE_TABLE_MAX`] bytes, so that each lane reads each word of its column equally often.
pub const STEPS: usize = 32768;
/// The table that fits every L1 of the course's GPUs.
pub const SMALL_TABLE: usize = 16 << 10;
/// The largest table of the large-table row: 4 MiB, more than any L1, and at most a quarter of the L2.
pub const LARGE_TABLE_MAX: usize = 4 << 20;
/// Bytes a warp's load asks for: 32 lanes, 4 bytes each, one aligned line.
pub const BYTES_PER_REQUEST: usize = 128;

/// The table's words: a hash of the index, different for every seed.
pub fn table_words(bytes: usize, seed: u64) -> Vec<u32> {
    let salt = mix(seed as u32) ^ (seed >> 32) as u32;
    (0..bytes / 4).map(|j| mix(j as u32 ^ salt)).collect()
}

/// Each thread's sum, as the kernel computes it for `threads` threads over `table`: lane l reads word
/// l mod 32 of every line, each `STEPS * 32 / words` times.
pub fn expected_sums(table: &[u32], threads: usize) -> Vec<u32> {
    let visits = (STEPS * 32 / table.len()) as u32;
    let mut columns = [0u32; 32];
    for (j, &word) in table.iter().enumerate() {
        columns[j % 32] = columns[j % 32].wrapping_add(word);
    }
    (0..threads).map(|t| columns[t % 32].wrapping_mul(visits)).collect()
}

/// One row measured.
#[derive(Debug, Clone)]
pub struct Measured {
    pub path: Path,
    pub table_bytes: usize,
    pub threads: usize,
    pub timing: Timing,
    /// Threads whose sum is not the CPU's.
    pub wrong: usize,
}

impl Measured {
    /// Bytes the warps asked for.
    pub fn bytes(&self) -> f64 {
        (self.threads * STEPS * 4) as f64
    }

    /// Bytes asked for per second (median run).
    pub fn bandwidth(&self) -> f64 {
        self.bytes() / (self.timing.median_ms() * 1e-3)
    }

    /// The row of the table, cell by cell.
    pub fn cells(&self, multiprocessors: u32, clock_khz: u32) -> [String; 9] {
        [
            self.path.label().to_string(),
            common::format_bytes(self.table_bytes as u64),
            BYTES_PER_REQUEST.to_string(),
            self.path.sectors_per_request().to_string(),
            self.path.slides_transactions().to_string(),
            format!("{:.4}", self.timing.median_ms()),
            format!("{:.1}", self.bytes_per_clock(multiprocessors, clock_khz)),
            format!("{:.0}", self.bandwidth() / 1e9),
            check_cell(self.wrong),
        ]
    }

    /// Bytes per clock of each of `multiprocessors` multiprocessors at `clock_khz`.
    pub fn bytes_per_clock(&self, multiprocessors: u32, clock_khz: u32) -> f64 {
        self.bandwidth() / (f64::from(clock_khz) * 1e3 * f64::from(multiprocessors))
    }
}

/// Times and checks `path` with `blocks` blocks of [`BLOCK`] threads, the table made from `seed`.
pub fn measure(
    module: &Module,
    path: Path,
    l2_bytes: usize,
    blocks: u32,
    repetitions: usize,
    seed: u64,
) -> Result<Measured> {
    let table_bytes = path.table_bytes(l2_bytes);
    ensure!(
        table_bytes.is_power_of_two() && table_bytes <= LARGE_TABLE_MAX && blocks > 0,
        "{path:?}: a table of {table_bytes} bytes and {blocks} blocks"
    );
    let words = table_words(table_bytes, seed);
    let table = check_cuda!(DeviceBuffer::from_slice(&words))?;
    let threads = blocks as usize * BLOCK as usize;
    let out = poisoned_device_buffer::<u32>(threads)?;
    let stream = new_stream()?;
    let kernel = check_cuda!(module.get_function(path.kernel()))?;
    let (count, steps) = (words.len() as u32, STEPS as i32);
    let timing = time_on_stream(&stream, 1, repetitions, || {
        // __global__ void read_lines_l1(const unsigned* table, unsigned words, int steps, unsigned* out)
        // (read_lines_l2 likewise)
        // SAFETY: the arguments match the kernel's C signature in type and order; `words` is the
        // table's length, a power of two, and every index is taken modulo it; `out` holds one word
        // per thread of the grid.
        check_cuda!(unsafe {
            launch!(kernel<<<blocks, BLOCK, 0, stream>>>(table.as_device_ptr(), count, steps, out.as_device_ptr()))
        })?;
        Ok(())
    })?;
    let mut sums = vec![0u32; threads];
    check_cuda!(out.copy_to(&mut sums[..]))?;
    let _phase = phases::enter(Phase::Verify);
    let expected = expected_sums(&words, threads);
    let wrong = sums.iter().zip(&expected).filter(|(got, want)| got != want).count();
    Ok(Measured {
        path,
        table_bytes,
        threads,
        timing,
        wrong,
    })
}

/// `--mode transactions`: every path on a full GPU (as many blocks as its multiprocessors hold), the
/// table. Returns whether every sum was right.
pub fn report(gpu: &Gpu, module: &Module, repetitions: usize, seed: u64) -> Result<bool> {
    let clock_khz = Query::read(gpu.device, gpu.info.clone())?.clock_khz;
    let multiprocessors = gpu.info.multiprocessors;
    let blocks_per_sm = (gpu.info.max_threads_per_multiprocessor / BLOCK).max(1);
    let blocks = multiprocessors * blocks_per_sm;
    let l2 = gpu.info.l2_bytes as usize;
    let rows: Vec<Measured> = Path::ALL
        .iter()
        .map(|&path| measure(module, path, l2, blocks, repetitions, seed))
        .collect::<Result<_>>()?;
    let mhz = f64::from(clock_khz) / 1e3;
    println!("\nL1 lines against L2 sectors: {blocks} blocks of {BLOCK} threads, every warp load 128 aligned bytes, {STEPS} loads a thread (median of {repetitions}); bytes per clock per multiprocessor at the rated {mhz:.0} MHz on {multiprocessors} multiprocessors:\n");
    println!("| path | table | bytes per request | sectors per request (model) | the slides' transactions per request | GPU time in ms | bytes / clock / SM | GB/s | check |");
    println!("|------|-------|-------------------|-----------------------------|---------------------------------------|----------------|--------------------|------|-------|");
    for row in &rows {
        println!("| {} |", row.cells(multiprocessors, clock_khz).join(" | "));
    }
    Ok(rows.iter().all(|row| row.wrong == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's walk, step by step: what lane `t` of the grid sums over `table`.
    fn walked_sum(table: &[u32], t: usize) -> u32 {
        let mask = table.len() - 1;
        let mut at = (t / 32) * 32 * LINE_SPREAD + t % 32;
        let mut sum = 0u32;
        for _ in 0..STEPS {
            sum = sum.wrapping_add(table[at & mask]);
            at += 32;
        }
        sum
    }

    /// `LINE_SPREAD` in memory.cu.
    const LINE_SPREAD: usize = 97;

    #[test]
    fn every_lane_sums_its_column_as_the_kernel_walks_it() {
        let source = include_str!("../../kernels/cuda/memory.cu");
        assert!(source.contains(&format!("#define LINE_READS_UNROLL {UNROLL}\n")));
        assert!(source.contains(&format!("#define LINE_SPREAD {LINE_SPREAD}\n")));
        assert!(source.contains(
            "void read_lines_l1(const unsigned* __restrict__ table, unsigned words, int steps, unsigned* __restrict__ out)"
        ));
        assert_eq!(STEPS % UNROLL, 0);
        for bytes in [SMALL_TABLE, 64 << 10] {
            let table = table_words(bytes, 5);
            let expected = expected_sums(&table, 70);
            for t in [0, 1, 31, 32, 45, 69] {
                assert_eq!(expected[t], walked_sum(&table, t), "{bytes} bytes, thread {t}");
            }
        }
        assert_ne!(table_words(64, 1), table_words(64, 2));
    }

    #[test]
    fn the_tables_fit_where_they_should() {
        assert_eq!(Path::L1Hit.table_bytes(50 << 20), SMALL_TABLE);
        assert_eq!(Path::LargeTable.table_bytes(50 << 20), LARGE_TABLE_MAX);
        assert_eq!(
            Path::LargeTable.table_bytes(4 << 20),
            1 << 20,
            "a T4: a quarter of its L2"
        );
        assert_eq!(Path::LargeTable.table_bytes(6 << 20), 1 << 20);
        for path in Path::ALL {
            let lines = path.table_bytes(50 << 20) / BYTES_PER_REQUEST;
            assert_eq!(STEPS % lines, 0, "{path:?}: every word visited equally often");
            assert_eq!(path.sectors_per_request(), 4);
        }
    }
}

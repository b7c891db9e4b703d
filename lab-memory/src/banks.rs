//! `--mode banks`: shared memory is cut into 32 banks of 4-byte words (the German slides: word 33 is in
//! bank 1 again); a warp's loads from different words of one bank are served one after the other. The
//! kernels `bank_walk_32` / `bank_walk_64` (`kernels/cuda/memory.cu`) make every lane read word
//! `lane * stride` of 32- or 64-bit words, step after step; the time per step against stride 1 is the
//! measured n-way conflict, set beside the one the bank arithmetic predicts. Then a matrix transpose
//! through a shared tile, with and without the padding column that spreads a tile's column over the
//! banks (each run with the L2 emptied first, as in the coalescing sweep).

use anyhow::{ensure, Result};
use common::check_cuda;
use common::gpu::Gpu;
use common::phases::{self, Phase};
use common::timing::{time_on_stream, time_on_stream_after, Timing};
use common::verify::{check_cell, poisoned_device_buffer, Random};
use cust::function::{BlockSize, GridSize};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;

use crate::{differing, new_stream, Flush};

/// `BANK_TABLE_BYTES` in memory.cu: the table each block walks.
pub const BANK_TABLE_BYTES: usize = 16384;
/// Banks of shared memory, each 4 bytes wide.
pub const BANKS: usize = 32;
/// Threads per block of the walk: 32 warps.
pub const WALK_BLOCK: u32 = 1024;

/// The word each lane reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    Bits32,
    Bits64,
}

impl Word {
    pub const ALL: [Word; 2] = [Word::Bits32, Word::Bits64];

    pub fn bytes(self) -> usize {
        match self {
            Word::Bits32 => 4,
            Word::Bits64 => 8,
        }
    }

    pub fn kernel(self) -> &'static str {
        match self {
            Word::Bits32 => "bank_walk_32",
            Word::Bits64 => "bank_walk_64",
        }
    }

    /// Words in the table.
    pub fn words(self) -> usize {
        BANK_TABLE_BYTES / self.bytes()
    }

    /// Lanes served together: a whole warp for 4-byte words; for 8-byte words a half warp (16 lanes x 8
    /// bytes fill the 32 banks once).
    fn lanes_per_wavefront(self) -> usize {
        BANKS * 4 / self.bytes()
    }

    /// Passes (wavefronts) the banks need for one warp's read at `stride`: for each group of lanes served
    /// together, the most distinct 4-byte words any one bank must deliver.
    pub fn wavefronts(self, stride: usize) -> usize {
        let group = self.lanes_per_wavefront();
        (0..32 / group)
            .map(|g| {
                let mut words_per_bank = vec![Vec::new(); BANKS];
                for lane in g * group..(g + 1) * group {
                    let first = (lane * stride % self.words()) * self.bytes() / 4;
                    for word in first..first + self.bytes() / 4 {
                        let bank = &mut words_per_bank[word % BANKS];
                        if !bank.contains(&word) {
                            bank.push(word);
                        }
                    }
                }
                words_per_bank.iter().map(Vec::len).max().unwrap_or(1)
            })
            .sum()
    }

    /// The predicted n-way conflict: passes at `stride` over passes at stride 1.
    pub fn predicted_ways(self, stride: usize) -> f64 {
        self.wavefronts(stride) as f64 / self.wavefronts(1) as f64
    }

    /// Where lane `lane` ends after `steps` steps: each step moves it on by 32 strides.
    pub fn final_index(self, lane: usize, stride: usize, steps: usize) -> u32 {
        let words = self.words();
        ((lane * stride % words + steps % words * (32 * stride % words)) % words) as u32
    }
}

/// Runs the walk on `blocks` blocks of [`WALK_BLOCK`]; returns its timing and the threads whose final
/// index differs from the CPU's.
pub fn walk(
    module: &Module,
    word: Word,
    stride: usize,
    steps: usize,
    blocks: u32,
    repetitions: usize,
) -> Result<(Timing, usize)> {
    let threads = blocks as usize * WALK_BLOCK as usize;
    let out = poisoned_device_buffer::<u32>(threads)?;
    let function = check_cuda!(module.get_function(word.kernel()))?;
    let stream = new_stream()?;
    let _named = common::timing::observer::program(&format!("banks: {}-byte words, stride {stride}", word.bytes()));
    let timing = time_on_stream(&stream, 1, repetitions, || {
        // __global__ void bank_walk_32(unsigned* out, int stride, int steps)
        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
        // point into live device buffers as large as the kernel indexes.
        check_cuda!(unsafe {
            launch!(function<<<blocks, WALK_BLOCK, 0, stream>>>(out.as_device_ptr(), stride as i32, steps as i32))
        })?;
        Ok(())
    })?;
    let mut back = vec![0u32; threads];
    check_cuda!(out.copy_to(&mut back[..]))?;
    let _phase = phases::enter(Phase::Verify);
    let wrong = back
        .iter()
        .enumerate()
        .filter(|&(t, &index)| index != word.final_index(t % 32, stride, steps))
        .count();
    Ok((timing, wrong))
}

/// The transpose kernels, fastest-possible copy first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transpose {
    /// The same tiles copied, not transposed: the ceiling.
    Copy,
    /// No shared memory: coalesced reads, writes down a column.
    Naive,
    /// Through a 32 x 32 tile: a tile's column is one bank.
    Shared,
    /// Through a 32 x 33 tile: the padding column spreads it over all banks.
    Padded,
}

impl Transpose {
    pub const ALL: [Transpose; 4] = [Transpose::Copy, Transpose::Naive, Transpose::Shared, Transpose::Padded];
    /// `TILE_DIM` and `BLOCK_ROWS` in memory.cu.
    pub const TILE: u32 = 32;
    pub const BLOCK_ROWS: u32 = 8;

    pub fn kernel(self) -> &'static str {
        match self {
            Transpose::Copy => "copy_tiles",
            Transpose::Naive => "transpose_naive",
            Transpose::Shared => "transpose_shared",
            Transpose::Padded => "transpose_padded",
        }
    }

    /// What the table calls it.
    pub fn label(self) -> &'static str {
        match self {
            Transpose::Copy => "copy through the same blocks (no transpose)",
            Transpose::Naive => "transpose without shared memory",
            Transpose::Shared => "transpose, tile[32][32]",
            Transpose::Padded => "transpose, tile[32][33] (padded)",
        }
    }

    /// What the kernel should leave in `out` for the `rows` x `cols` matrix `input`.
    pub fn expected(self, input: &[f32], rows: usize, cols: usize) -> Vec<f32> {
        match self {
            Transpose::Copy => input.to_vec(),
            _ => (0..cols * rows).map(|k| input[(k % rows) * cols + k / rows]).collect(),
        }
    }
}

/// A `rows` x `cols` matrix of random floats in [-1, 1), row after row.
pub fn random_matrix(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let mut matrix = vec![0.0f32; rows * cols];
    Random::new(seed).fill(&mut matrix, |random| random.uniform(-1.0, 1.0) as f32);
    matrix
}

/// Transposes (or copies) the `rows` x `cols` matrix `input`, timed with the L2 emptied before each
/// run; returns the timing and the elements that differ from the CPU's.
pub fn transpose(
    module: &Module,
    kernel: Transpose,
    input: &[f32],
    rows: usize,
    cols: usize,
    l2_bytes: u32,
    repetitions: usize,
) -> Result<(Timing, usize)> {
    ensure!(
        input.len() == rows * cols,
        "a {rows} x {cols} matrix has {} elements, not {}",
        rows * cols,
        input.len()
    );
    let device_in = check_cuda!(DeviceBuffer::from_slice(input))?;
    let out = poisoned_device_buffer::<f32>(rows * cols)?;
    let function = check_cuda!(module.get_function(kernel.kernel()))?;
    let stream = new_stream()?;
    let flush = Flush::new(l2_bytes)?;
    let grid = GridSize::xy(
        cols.div_ceil(Transpose::TILE as usize) as u32,
        rows.div_ceil(Transpose::TILE as usize) as u32,
    );
    let block = BlockSize::xy(Transpose::TILE, Transpose::BLOCK_ROWS);
    let _named = common::timing::observer::program(kernel.label());
    let timing = time_on_stream_after(
        &stream,
        1,
        repetitions,
        || flush.run(&stream),
        || {
            // __global__ void transpose_padded(const float* in, float* out, int rows, int cols)
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
            // point into live device buffers as large as the kernel indexes.
            check_cuda!(unsafe {
                launch!(function<<<grid, block, 0, stream>>>(device_in.as_device_ptr(), out.as_device_ptr(), rows as i32, cols as i32))
            })?;
            Ok(())
        },
    )?;
    Ok((timing, differing(&out, &kernel.expected(input, rows, cols))?))
}

/// `--mode banks`: bank conflicts by stride for 32- and 64-bit words, measured against predicted, with
/// `steps` loads per thread; then the transposes of a `rows` x `cols` matrix. Returns whether every
/// result was right.
pub fn report(
    gpu: &Gpu,
    module: &Module,
    steps: usize,
    (rows, cols): (usize, usize),
    repetitions: usize,
    seed: u64,
) -> Result<bool> {
    // Two blocks of 1024 per multiprocessor: 64 warps each, enough to keep the banks busy.
    let blocks = 2 * gpu.info.multiprocessors;
    println!("\nShared-memory banks: lane l reads word l*stride, {steps} times; n-way = time / time at stride 1 (same word size)\n");
    println!("| stride | 32-bit predicted | 32-bit measured | ns per step | 64-bit predicted | 64-bit measured | ns per step | check |");
    println!("|--------|------------------|-----------------|-------------|------------------|-----------------|-------------|-------|");
    let mut base = [0.0f64; 2];
    let mut passed = true;
    for stride in 1..=32 {
        let mut cells = Vec::new();
        let mut wrong = 0;
        for (w, word) in Word::ALL.into_iter().enumerate() {
            let (timing, bad) = walk(module, word, stride, steps, blocks, repetitions)?;
            wrong += bad;
            if stride == 1 {
                base[w] = timing.median_ms();
            }
            cells.push(format!(
                "{:.0}-way | {:.2}-way | {:.2}",
                word.predicted_ways(stride),
                timing.median_ms() / base[w],
                timing.median_ms() * 1e6 / steps as f64
            ));
        }
        passed &= wrong == 0;
        println!("| {stride} | {} | {} | {} |", cells[0], cells[1], check_cell(wrong));
    }
    gpu.ensure_fits(
        8 * (rows * cols) as u64 + 2 * u64::from(gpu.info.l2_bytes),
        "--transpose",
    )?;
    println!("\nTranspose of a {rows} x {cols} float matrix, blocks of 32 x 8 threads, tiles of 32 x 32:\n");
    println!("| kernel | GPU time in ms | GB/s (read + written) | % of peak | check |");
    println!("|--------|----------------|-----------------------|-----------|-------|");
    let input = random_matrix(rows, cols, seed);
    for kernel in Transpose::ALL {
        let (timing, wrong) = transpose(module, kernel, &input, rows, cols, gpu.info.l2_bytes, repetitions)?;
        passed &= wrong == 0;
        let bandwidth = 8.0 * (rows * cols) as f64 / (timing.median_ms() * 1e-3);
        println!(
            "| {} | {:.4} | {:.0} | {:.1}% | {} |",
            kernel.label(),
            timing.median_ms(),
            bandwidth / 1e9,
            100.0 * bandwidth / gpu.info.peak_bandwidth(),
            check_cell(wrong)
        );
    }
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_two_bit_conflicts_are_the_gcd_of_stride_and_32() {
        for stride in 1..=32 {
            let gcd = (1..=32).rev().find(|d| stride % d == 0 && 32 % d == 0).unwrap();
            assert_eq!(Word::Bits32.wavefronts(stride), gcd, "stride {stride}");
        }
    }

    #[test]
    fn sixty_four_bit_words_take_two_passes_without_conflict() {
        assert_eq!(Word::Bits64.wavefronts(1), 2);
        assert_eq!(Word::Bits64.predicted_ways(1), 1.0);
        assert_eq!(Word::Bits64.predicted_ways(2), 2.0);
        assert_eq!(Word::Bits64.predicted_ways(3), 1.0);
        assert_eq!(Word::Bits64.predicted_ways(16), 16.0);
        assert_eq!(Word::Bits64.predicted_ways(32), 16.0, "16 lanes at most share a bank");
    }

    #[test]
    fn the_walk_ends_where_32_strides_per_step_take_each_lane() {
        let words = Word::Bits32.words();
        assert_eq!(Word::Bits32.final_index(3, 5, 0), 15);
        assert_eq!(Word::Bits32.final_index(3, 5, 1), 15 + 160);
        assert_eq!(
            Word::Bits32.final_index(31, 32, 1000) as usize,
            (31 * 32 + 1000 * 1024) % words
        );
        assert_eq!(
            Word::Bits64.final_index(31, 32, 7) as usize,
            (31 * 32 + 7 * 1024) % 2048
        );
        let source = include_str!("../../kernels/cuda/memory.cu");
        assert!(source.contains(&format!("#define BANK_TABLE_BYTES {BANK_TABLE_BYTES}")));
    }

    #[test]
    fn the_transpose_reference_swaps_rows_and_columns() {
        // 2 x 3: [[0 1 2] [3 4 5]] -> 3 x 2: [[0 3] [1 4] [2 5]]
        let input = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(Transpose::Padded.expected(&input, 2, 3), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        assert_eq!(Transpose::Copy.expected(&input, 2, 3), input);
    }
}

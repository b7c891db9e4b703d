//! `--mode banks`: shared memory is cut into 32 banks of 4-byte words (the German slides: word 33 is in
//! bank 1 again); a warp's loads from different words of one bank are served one after the other. The
//! kernels `bank_walk_32` / `bank_walk_64` (`kernels/cuda/memory.cu`) make every lane read word
//! `lane * stride` of 32- or 64-bit words, step after step; the time per step against stride 1 is the
//! measured n-way conflict, set beside the one the bank arithmetic predicts. The Korean notes' structs
//! and chars (`walk_*`) follow: the passes each element's loads need, predicted and timed. Then a matrix transpose
//! through a shared tile, with and without the padding column that spreads a tile's column over the
//! banks (each run with the L2 emptied first, as in the coalescing sweep).

use anyhow::{ensure, Result};
use common::check_cuda;
use common::gpu::{Flush, Gpu};
use common::phases::{self, Phase};
use common::timing::{time_on_stream, time_on_stream_after, Timing};
use common::verify::{check_cell, poisoned_device_buffer, Random};
use cust::function::{BlockSize, Function, GridSize};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer, DevicePointer};
use cust::module::Module;
use cust::stream::Stream;

use crate::{differing, new_stream};

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

    /// Passes (wavefronts) the banks need for one warp's read at `stride`.
    pub fn wavefronts(self, stride: usize) -> usize {
        passes(self.bytes(), |lane| (lane * stride % self.words()) * self.bytes())
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

/// Passes (wavefronts) the banks need for one warp instruction that loads `width` bytes a lane from
/// shared byte `address(lane)`. Lanes are served in groups: the whole warp for words of up to 4 bytes,
/// 128 / `width` lanes for wider ones (each group asks for at most 128 bytes). In each group, the bank
/// that must deliver the most distinct 4-byte words sets the passes; lanes that read the same word
/// share one delivery (a broadcast).
pub fn passes(width: usize, address: impl Fn(usize) -> usize) -> usize {
    let group = BANKS * 4 / width.max(4);
    (0..32 / group)
        .map(|g| {
            let mut words_per_bank = vec![Vec::new(); BANKS];
            for lane in g * group..(g + 1) * group {
                for word in address(lane) / 4..=(address(lane) + width - 1) / 4 {
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

/// Runs `kernel`, a walk through shared memory launched by `launch`, on `blocks` blocks of
/// [`WALK_BLOCK`]; returns its timing and the threads whose final index differs from
/// `final_index(lane)`.
fn timed_walk(
    module: &Module,
    kernel: &str,
    label: &str,
    blocks: u32,
    repetitions: usize,
    final_index: impl Fn(usize) -> u32,
    launch: impl Fn(&Function, &Stream, DevicePointer<u32>) -> Result<()>,
) -> Result<(Timing, usize)> {
    let threads = blocks as usize * WALK_BLOCK as usize;
    let out = poisoned_device_buffer::<u32>(threads)?;
    let function = check_cuda!(module.get_function(kernel))?;
    let stream = new_stream()?;
    let _named = common::timing::observer::program(label);
    let timing = time_on_stream(&stream, 1, repetitions, || {
        launch(&function, &stream, out.as_device_ptr())
    })?;
    let mut back = vec![0u32; threads];
    check_cuda!(out.copy_to(&mut back[..]))?;
    let _phase = phases::enter(Phase::Verify);
    let wrong = back
        .iter()
        .enumerate()
        .filter(|&(t, &index)| index != final_index(t % 32))
        .count();
    Ok((timing, wrong))
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
    let label = format!("banks: {}-byte words, stride {stride}", word.bytes());
    let final_index = |lane| word.final_index(lane, stride, steps);
    timed_walk(
        module,
        word.kernel(),
        &label,
        blocks,
        repetitions,
        final_index,
        |function, stream, out| {
            // __global__ void bank_walk_32(unsigned* out, int stride, int steps)
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
            // `out` holds a word for every thread of the grid.
            check_cuda!(unsafe {
                launch!(function<<<blocks, WALK_BLOCK, 0, stream>>>(out, stride as i32, steps as i32))
            })?;
            Ok(())
        },
    )
}

/// The Korean notes' elements, each read as `shared[BaseIndex + tid]` by lane `tid` (or
/// `shared[BaseIndex + 4 * tid]`, their fix for `char`): kernels `walk_*` in memory.cu.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    /// `float`: the 1-pass reference.
    Float,
    /// `struct {float x, y, z;}`: three 32-bit loads, 3 words apart.
    Float3,
    /// `struct {float x, y;}` in an array on an 8-byte boundary: the compiler (nvcc's PTX already)
    /// sees that and reads each element with one 64-bit load.
    Float2,
    /// The same array 4 bytes further on: two 32-bit loads, 2 words apart, as the notes assume.
    Float2Shifted,
    /// The same struct with `__align__(8)`: one 64-bit load.
    Float2Aligned,
    /// `char`, one per lane.
    Char,
    /// `char` at `4 * tid`.
    CharSpread,
    /// `double`.
    Double,
}

impl Element {
    pub const ALL: [Element; 8] = [
        Element::Float,
        Element::Float3,
        Element::Float2,
        Element::Float2Shifted,
        Element::Float2Aligned,
        Element::Char,
        Element::CharSpread,
        Element::Double,
    ];

    pub fn kernel(self) -> &'static str {
        match self {
            Element::Float => "walk_float",
            Element::Float3 => "walk_float3",
            Element::Float2 => "walk_float2",
            Element::Float2Shifted => "walk_float2_shifted",
            Element::Float2Aligned => "walk_float2_aligned",
            Element::Char => "walk_char",
            Element::CharSpread => "walk_char_spread",
            Element::Double => "walk_double",
        }
    }

    /// The notes' code for the read (the shifted and the aligned struct are ours).
    pub fn label(self) -> &'static str {
        match self {
            Element::Float => "float shared[tid]",
            Element::Float3 => "struct {float x, y, z;} shared[tid]",
            Element::Float2 => "struct {float x, y;} shared[tid]",
            Element::Float2Shifted => "struct {float x, y;} shared[tid], the array 4 bytes off an 8-byte boundary",
            Element::Float2Aligned => "struct __align__(8) {float x, y;} shared[tid]",
            Element::Char => "char shared[tid]",
            Element::CharSpread => "char shared[4 * tid]",
            Element::Double => "double shared[tid]",
        }
    }

    fn bytes(self) -> usize {
        match self {
            Element::Float => 4,
            Element::Float3 => 12,
            Element::Float2 | Element::Float2Shifted | Element::Float2Aligned | Element::Double => 8,
            Element::Char | Element::CharSpread => 1,
        }
    }

    /// Elements between two lanes.
    fn spread(self) -> usize {
        if self == Element::CharSpread {
            4
        } else {
            1
        }
    }

    /// Bytes from a 16-byte boundary to the array.
    fn shift(self) -> usize {
        if self == Element::Float2Shifted {
            4
        } else {
            0
        }
    }

    /// The loads that read one element, `(bytes, offset in the element)`, as the compiler emits them
    /// (a test holds them to nvcc's PTX): a 12-byte struct member by member; an 8-byte one in one load
    /// where every element is on an 8-byte boundary, else member by member.
    pub fn loads(self) -> &'static [(usize, usize)] {
        match self {
            Element::Float => &[(4, 0)],
            Element::Float3 => &[(4, 0), (4, 4), (4, 8)],
            Element::Float2Shifted => &[(4, 0), (4, 4)],
            Element::Float2 | Element::Float2Aligned | Element::Double => &[(8, 0)],
            Element::Char | Element::CharSpread => &[(1, 0)],
        }
    }

    /// Elements in the kernel's table: whole rounds of 32 * spread in BANK_TABLE_BYTES.
    pub fn count(self) -> usize {
        let round = 32 * self.spread();
        BANK_TABLE_BYTES / self.bytes() / round * round
    }

    /// Passes of the banks one step takes: the sum over the element's loads.
    pub fn passes(self) -> usize {
        self.loads()
            .iter()
            .map(|&(width, offset)| {
                passes(width, |lane| {
                    self.shift() + lane * self.spread() * self.bytes() + offset
                })
            })
            .sum()
    }

    /// Where lane `lane` ends after `steps` steps of 32 * spread elements.
    pub fn final_index(self, lane: usize, steps: usize) -> u32 {
        let count = self.count();
        ((lane * self.spread() + steps % count * (32 * self.spread())) % count) as u32
    }
}

/// Runs the walk over `element`s; like [`walk`].
pub fn element_walk(
    module: &Module,
    element: Element,
    steps: usize,
    blocks: u32,
    repetitions: usize,
) -> Result<(Timing, usize)> {
    let label = format!("banks: {}", element.label());
    let final_index = |lane| element.final_index(lane, steps);
    timed_walk(
        module,
        element.kernel(),
        &label,
        blocks,
        repetitions,
        final_index,
        |function, stream, out| {
            // __global__ void walk_float3(unsigned* out, int steps)
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
            // `out` holds a word for every thread of the grid.
            check_cuda!(unsafe { launch!(function<<<blocks, WALK_BLOCK, 0, stream>>>(out, steps as i32)) })?;
            Ok(())
        },
    )
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

/// The Korean notes' structs and chars: each element's walk, its predicted passes per step beside its
/// time against `float`'s. Returns whether every walk ended where the CPU says.
fn elements(module: &Module, steps: usize, blocks: u32, repetitions: usize) -> Result<bool> {
    println!("\nThe Korean notes' elements: lane tid reads shared[tid] (or shared[4 * tid]), {steps} times; passes of the banks per step, predicted, beside time / float's time\n");
    println!("| element read | loads per step | predicted passes | measured | ns per step | check |");
    println!("|--------------|----------------|------------------|----------|-------------|-------|");
    let mut base = None;
    let mut passed = true;
    for element in Element::ALL {
        let (timing, wrong) = element_walk(module, element, steps, blocks, repetitions)?;
        passed &= wrong == 0;
        let base_ms = *base.get_or_insert(timing.median_ms());
        println!(
            "| {} | {} | {} | {:.2} | {:.2} | {} |",
            element.label(),
            element.loads().len(),
            element.passes(),
            timing.median_ms() / base_ms,
            timing.median_ms() * 1e6 / steps as f64,
            check_cell(wrong)
        );
    }
    Ok(passed)
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
    passed &= elements(module, steps, blocks, repetitions)?;
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
    fn the_notes_structs_conflict_as_the_banks_predict() {
        let passes: Vec<usize> = Element::ALL.iter().map(|e| e.passes()).collect();
        // float 1; {x, y, z}: three conflict-free loads; {x, y}: one 64-bit load in two half-warp
        // passes; shifted: two 2-way 32-bit loads; aligned: as {x, y}; char: four lanes share a word
        // (a broadcast); 4 * tid: a bank each; double: two passes.
        assert_eq!(passes, [1, 3, 2, 4, 2, 1, 1, 2]);
        assert_eq!(Element::Float3.count(), 1344, "whole rounds of 32 in 16384 / 12");
        assert_eq!(Element::CharSpread.count(), BANK_TABLE_BYTES);
        assert_eq!(Element::CharSpread.final_index(31, 1), 124 + 128);
        assert_eq!(Element::Float3.final_index(1, 42), (1 + 42 * 32) % 1344);
        let source = include_str!("../../kernels/cuda/memory.cu");
        for element in Element::ALL {
            assert!(source.contains(&format!("void {}(unsigned* out, int steps)", element.kernel())));
        }
    }

    /// The `ld.shared` instructions of `entry` in `ptx`, by their type (`u32`, `v2.u32`, `u64`, `u8`).
    fn shared_loads(ptx: &str, entry: &str) -> std::collections::BTreeSet<String> {
        let start = ptx
            .find(&format!(".entry {entry}("))
            .unwrap_or_else(|| panic!("{entry} not in the PTX"));
        let body = &ptx[start..];
        let body = &body[..body.find("\n}").unwrap_or(body.len())];
        body.split_whitespace()
            .filter_map(|word| word.strip_prefix("ld.shared."))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_loads_the_prediction_assumes_are_the_ones_nvcc_emits() {
        let kernels_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
        let nvcc = kernels::nvcc::find(&kernels_dir).expect("nvcc, which the kernels' build needs too");
        let folder = common::private_dir::PrivateDir::new("banks-ptx").unwrap();
        let ptx = folder.path().join("memory.ptx");
        let status = std::process::Command::new(&nvcc)
            .args(["-arch=compute_90", "-ptx", "-o"])
            .arg(&ptx)
            .arg(kernels_dir.join("cuda/memory.cu"))
            .status()
            .expect("run nvcc");
        assert!(status.success(), "nvcc -ptx memory.cu failed");
        let ptx = std::fs::read_to_string(ptx).unwrap();
        for element in Element::ALL {
            let widths: std::collections::BTreeSet<usize> = element.loads().iter().map(|&(bytes, _)| bytes).collect();
            let expected: std::collections::BTreeSet<String> = widths
                .iter()
                .map(|&bytes| match (bytes, element) {
                    (1, _) => "u8",
                    (4, _) => "u32",
                    (8, Element::Double) => "u64",
                    (8, _) => "v2.u32",
                    _ => unreachable!("no load of {bytes} bytes"),
                })
                .map(str::to_string)
                .collect();
            assert_eq!(shared_loads(&ptx, element.kernel()), expected, "{element:?}");
        }
    }

    #[test]
    fn passes_count_distinct_words_per_bank_within_each_group() {
        assert_eq!(passes(4, |lane| 4 * lane), 1);
        assert_eq!(passes(4, |_| 0), 1, "one word for all lanes: a broadcast");
        assert_eq!(passes(4, |lane| 128 * lane), 32);
        assert_eq!(passes(8, |lane| 8 * lane), 2);
        assert_eq!(passes(16, |lane| 16 * lane), 4, "quarter warps of 128 bytes");
        assert_eq!(passes(1, |lane| lane), 1);
    }

    #[test]
    fn the_transpose_reference_swaps_rows_and_columns() {
        // 2 x 3: [[0 1 2] [3 4 5]] -> 3 x 2: [[0 3] [1 4] [2 5]]
        let input = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(Transpose::Padded.expected(&input, 2, 3), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        assert_eq!(Transpose::Copy.expected(&input, 2, 3), input);
    }
}

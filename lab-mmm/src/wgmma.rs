//! Steps 12 to 18 of `--ladder` (`kernels/cuda/mmm_wgmma.cu`): Hopper's wgmma fed by TMA. The host's
//! part: the operands as TMA wants them (rows of whole 16-byte pieces, and for bf16 converted copies,
//! B transposed), made by the prep kernels into buffers allocated when the step is prepared; the
//! tensor maps that describe them to the copy engine (`cuTensorMapEncodeTiled`); the tile shape; and
//! the persistent launch, a block per multiprocessor at most ([`blocks`]). For steps 12, 13 and 17
//! the prep kernels run inside the step's timed launch: they are part of what the step costs from
//! f32 matrices. Steps 14 to 16 and 18 are timed as cuBLAS's bf16 row is, on operands converted before the
//! timed launches ([`WgmmaLaunch::convert`]); steps 16 to 18 also store C by TMA, through a map of C
//! made here. Step 18 shares the last, partial round of tiles out along k ([`tail`]), its partial
//! sums in a workspace allocated with the step ([`StreamK`]). Step 17 is step 12 with no transpose of B; it and step 12 on a small C read A and B as
//! they are where their rows are whole 16-byte pieces: then they are one kernel. It depends on
//! [`crate::split_k`] where it cuts k, not on the ladder, which depends on it.

use std::ffi::c_int;

use anyhow::{ensure, Result};
use common::verify::poisoned_device_buffer;
use common::{check_cuda, raw};
use cust::function::{BlockSize, Function, GridSize};
use cust::launch;
use cust::memory::{DeviceBuffer, DevicePointer};
use cust::module::Module;
use cust::stream::Stream;
use matrix::{Element, MatrixView};

use crate::split_k::{Slabs, Split};

/// Rows and columns of C a block's tile has (`SharedTiles` in mmm_wgmma.cu), where C has tiles enough
/// for half the multiprocessors ([`tile`]).
pub const TILE: (u32, u32) = (128, 256);
/// A producer warpgroup and two consumers, as `THREADS`.
pub const THREADS: u32 = 384;
/// Bytes of k per stage in each row of a tile (`KBYTES`): one 128-byte swizzle row, the box's width.
const KBYTES: u32 = 128;
/// 192 KiB of stages and 1024 bytes to align them, as `SHARED_BYTES`: 193 KiB of the 227 a Hopper
/// block may have. Each tile shape fits as many stages as it can (4 of 128 x 256, 8 of 128 x 64).
pub const SHARED_BYTES: u32 = 192 * 1024 + 1024;
const _: () = assert!(SHARED_BYTES <= 227 * 1024, "more than a Hopper block may have");
/// Step 16's buffers for storing C through shared memory, as `STORE_BYTES`: two of 8 KiB per
/// consumer, past the stages.
const STORE_BYTES: u32 = 2 * 2 * 8192;
const _: () = assert!(
    SHARED_BYTES + STORE_BYTES <= 227 * 1024,
    "more than a Hopper block may have"
);
/// What one bulk store of step 16 writes: 32 floats (128 bytes, one swizzle row) by 64 rows.
const STORE_BOX: (u32, u32) = (32, 64);
/// Step 17's tiles on a large C (`Tf32Wide`): 256 x 128, computed as C^T, B read as it is.
pub const WIDE_TILE: (u32, u32) = (256, 128);
/// What one bulk store of step 17 writes: 32 floats by 32 rows.
const WIDE_STORE_BOX: (u32, u32) = (32, 32);
/// Step 12's tiles where [`TILE`]s leave half the multiprocessors idle (`Tf32Narrow`): 128 x 64.
pub const NARROW_TILE: (u32, u32) = (128, 64);
/// Rows of k in a box of B for the narrow tiles, as `Tf32Narrow::BK` (a stage's k: 128 bytes of TF32).
const NARROW_BOX_ROWS: u32 = KBYTES / 4;

/// Which of mmm_wgmma.cu's GEMMs a step runs, and when its operands are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WgmmaGemm {
    /// Step 12: TF32, the prep kernels inside each launch.
    Tf32,
    /// Step 13: bf16, converted inside each launch.
    Bf16,
    /// Step 14: bf16 converted before the timed launches, as cuBLAS's bf16 row gets its operands.
    Bf16Once,
    /// Step 15: step 14 in clusters of two blocks that share B^T's tiles (TMA multicast).
    Bf16Pair,
    /// Step 16: step 14 storing C through shared memory by TMA, overlapping the next tile.
    Bf16Stored,
    /// Step 17: TF32 with no transpose of B: C^T on [`WIDE_TILE`]s, B's tile read through
    /// registers, C stored as step 16 does; step 12's narrow tiles on a small C.
    Tf32Wide,
    /// Step 18: step 16 with the last, partial round of tiles shared out along k where it would leave
    /// the multiprocessors idle long (stream-K, [`tail`]: then one block per multiprocessor).
    Bf16StreamK,
}

impl WgmmaGemm {
    /// What its tensor cores read.
    pub fn operand(self) -> Operand {
        match self {
            WgmmaGemm::Tf32 | WgmmaGemm::Tf32Wide => Operand::Tf32,
            WgmmaGemm::Bf16
            | WgmmaGemm::Bf16Once
            | WgmmaGemm::Bf16Pair
            | WgmmaGemm::Bf16Stored
            | WgmmaGemm::Bf16StreamK => Operand::Bf16,
        }
    }

    /// Its kernel's name in mmm_wgmma.cu.
    pub fn kernel(self) -> &'static str {
        match self {
            WgmmaGemm::Tf32 => "wgmma_tma_tf32",
            WgmmaGemm::Bf16 => "wgmma_tma_bf16",
            WgmmaGemm::Bf16Once => "wgmma_tma_bf16_once",
            WgmmaGemm::Bf16Pair => "wgmma_tma_bf16_pair",
            WgmmaGemm::Bf16Stored => "wgmma_tma_bf16_stored",
            WgmmaGemm::Tf32Wide => "wgmma_tma_tf32_wide",
            WgmmaGemm::Bf16StreamK => "wgmma_tma_bf16_streamk",
        }
    }

    /// The dynamic shared memory its kernel launches with: the stages, and steps 16 to 18's store
    /// buffers.
    pub fn shared_bytes(self) -> u32 {
        match self {
            WgmmaGemm::Bf16Stored | WgmmaGemm::Tf32Wide | WgmmaGemm::Bf16StreamK => SHARED_BYTES + STORE_BYTES,
            _ => SHARED_BYTES,
        }
    }

    /// Blocks in a cluster, as the kernel's `__cluster_dims__`.
    fn cluster(self) -> u32 {
        match self {
            WgmmaGemm::Bf16Pair => 2,
            _ => 1,
        }
    }

    /// Whether its operands are converted before the timed launches ([`WgmmaLaunch::convert`]), not
    /// in each.
    fn converts_once(self) -> bool {
        matches!(
            self,
            WgmmaGemm::Bf16Once | WgmmaGemm::Bf16Pair | WgmmaGemm::Bf16Stored | WgmmaGemm::Bf16StreamK
        )
    }

    /// Whether its grid is the fewest clusters that need no more rounds of units than one per
    /// multiprocessor would ([`blocks`]): steps 14 to 18, whose time is their GEMM's alone (step 18
    /// where it shares nothing out: [`tail`]).
    fn evens_rounds(self) -> bool {
        self.converts_once() || self == WgmmaGemm::Tf32Wide
    }

    /// The tile it multiplies a C in where C has tiles enough ([`tile`]).
    pub fn large_tile(self) -> (u32, u32) {
        match self {
            WgmmaGemm::Tf32Wide => WIDE_TILE,
            _ => TILE,
        }
    }

    /// The bulk stores' box where it stores C by TMA: `None` where it stores from registers.
    fn store_box(self) -> Option<(u32, u32)> {
        match self {
            WgmmaGemm::Bf16Stored | WgmmaGemm::Bf16StreamK => Some(STORE_BOX),
            WgmmaGemm::Tf32Wide => Some(WIDE_STORE_BOX),
            _ => None,
        }
    }
}

/// What the tensor cores read: TF32 (f32 in memory, rounded by the copy engine) or bf16 (converted by
/// the prep kernels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    Tf32,
    Bf16,
}

impl Operand {
    /// Bytes per element in memory.
    fn bytes(self) -> usize {
        match self {
            Operand::Tf32 => 4,
            Operand::Bf16 => 2,
        }
    }

    /// Elements in a row of a copy with k columns: k rounded up to whole 16-byte pieces, since TMA
    /// wants every row of a matrix to start a multiple of 16 bytes after the one before.
    pub fn row_length(self, k: usize) -> usize {
        k.next_multiple_of(16 / self.bytes())
    }

    /// The prep kernels' suffix in mmm_wgmma.cu.
    fn suffix(self) -> &'static str {
        match self {
            Operand::Tf32 => "f32",
            Operand::Bf16 => "bf16",
        }
    }

    /// The tensor maps' element type (`TFLOAT32`: f32 in memory, rounded to TF32 as TMA copies it).
    fn data_type(self) -> c_int {
        match self {
            Operand::Tf32 => raw::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
            Operand::Bf16 => raw::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        }
    }
}

/// What `cuTensorMapEncodeTiled` is told of one operand, a `rows` x `cols` matrix in memory with rows
/// of `row_length` elements: sizes inner (`cols`: k for A and B^T, n for step 12's B on its narrow
/// tiles) first, the row stride in bytes, and the box one TMA copy brings: 128 bytes of the inner
/// size (32 tf32 or 64 bf16) by `box_rows` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapShape {
    pub dims: [u64; 2],
    pub row_bytes: u64,
    pub box_dims: [u32; 2],
}

impl MapShape {
    /// The shape of a `rows` x `cols` matrix of `operand`, rows `row_length` elements apart, in boxes
    /// of `box_rows` rows.
    pub fn new(operand: Operand, (rows, cols): (usize, usize), row_length: usize, box_rows: u32) -> MapShape {
        MapShape {
            dims: [cols as u64, rows as u64],
            row_bytes: (row_length * operand.bytes()) as u64,
            box_dims: [KBYTES / operand.bytes() as u32, box_rows],
        }
    }

    /// The tensor map of the matrix at `address`, swizzled in 128-byte rows (as the kernel's
    /// descriptors read it), zeros where a box reaches past the matrix.
    fn encode(&self, operand: Operand, address: u64) -> Result<raw::CuTensorMap> {
        encode_tiled(
            operand.data_type(),
            address,
            &self.dims,
            &[self.row_bytes],
            &self.box_dims,
        )
    }
}

/// `cuTensorMapEncodeTiled` for a tensor at `address` of `dims` elements (innermost first), the
/// strides in bytes of its outer dimensions, in boxes of `box_dims`, swizzled in 128-byte rows.
/// Strides and the address off 16 bytes are an error, not a driver call.
fn encode_tiled(
    data_type: c_int,
    address: u64,
    dims: &[u64],
    strides: &[u64],
    box_dims: &[u32],
) -> Result<raw::CuTensorMap> {
    ensure!(
        (2..=3).contains(&dims.len()) && dims.len() == box_dims.len() && strides.len() + 1 == dims.len(),
        "a tensor map of {} dimensions: 2 or 3, with as many box sizes and one stride fewer",
        dims.len()
    );
    ensure!(
        strides.iter().all(|stride| stride.is_multiple_of(16)) && address.is_multiple_of(16),
        "TMA needs rows and addresses on 16 bytes, not rows of {} bytes at {address:#x}",
        strides[0]
    );
    let mut map = raw::CuTensorMap { opaque: [0; 16] };
    let element_strides = [1u32; 3];
    // SAFETY: `map` is a 64-byte aligned CUtensorMap the driver fills; the slices live through the
    // call and hold rank entries (checked above; at most 3 element strides are read, the rank of
    // the maps made here), rank - 1 for the strides; the address is only recorded in the map, not
    // read (the kernel that uses the map reads it, and its caller keeps it alive).
    check_cuda!(unsafe {
        raw::cuTensorMapEncodeTiled(
            &mut map,
            data_type,
            dims.len() as u32,
            address as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            box_dims.as_ptr(),
            element_strides.as_ptr(),
            raw::CU_TENSOR_MAP_INTERLEAVE_NONE,
            raw::CU_TENSOR_MAP_SWIZZLE_128B,
            raw::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            raw::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    })?;
    Ok(map)
}

/// Steps 16 to 18's map of what their GEMM writes: `slices` matrices of `rows` x `cols` floats one
/// after the other at `address` (C itself, or split-K's slabs), as one tensor of cols x rows x
/// slices, in boxes of `store_box` (32 floats, 128 bytes, by 64 or 32 rows) of one slice, the 128-byte
/// swizzle their stores write in. `None` where TMA cannot write C (rows not whole 16-byte pieces: n %
/// 4 != 0; C's address off 16 bytes): the kernel then stores from registers, as step 14 does.
fn store_map(
    address: u64,
    (rows, cols): (usize, usize),
    slices: u32,
    store_box: (u32, u32),
) -> Result<Option<raw::CuTensorMap>> {
    let row_bytes = (cols * 4) as u64;
    if !row_bytes.is_multiple_of(16) || !address.is_multiple_of(16) {
        return Ok(None);
    }
    let dims = [cols as u64, rows as u64, u64::from(slices)];
    let map = encode_tiled(
        raw::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        address,
        &dims,
        &[row_bytes, row_bytes * rows as u64],
        &[store_box.0, store_box.1, 1],
    )?;
    Ok(Some(map))
}

/// Tiles of `tile` in an `m` x `n` C, as the kernel walks them.
fn tiles(tile: (u32, u32), (m, n): (u32, u32)) -> u32 {
    m.div_ceil(tile.0) * n.div_ceil(tile.1)
}

/// The tile the step multiplies an `m` x `n` C in: its large one ([`TILE`], step 17's
/// [`WIDE_TILE`]), but for TF32 128 x 64 where 128 x 256 tiles leave at least half the
/// multiprocessors idle (1024 x 1024: 32 tiles of 128 x 256 for an H100's 132, 128 of 128 x 64).
/// bf16 has one shape.
pub fn tile(gemm: WgmmaGemm, (m, n): (u32, u32), multiprocessors: u32) -> (u32, u32) {
    if gemm.operand() == Operand::Tf32 && 2 * tiles(TILE, (m, n)) <= multiprocessors {
        NARROW_TILE
    } else {
        gemm.large_tile()
    }
}

/// A cluster's units of C: its tiles of `tile`, those of a cluster of `cluster` blocks one above the
/// other (the kernel's `unit_of`).
fn cluster_tiles(tile: (u32, u32), (m, n): (u32, u32), cluster: u32) -> u32 {
    m.div_ceil(tile.0).div_ceil(cluster) * n.div_ceil(tile.1)
}

/// How the step cuts k for an `m` x `k` times `k` x `n` product: into slices of its 128-byte stages
/// where C's tiles ([`tile`]) still leave multiprocessors idle (256 x 256: 8 tiles of 128 x 64), as
/// split-K does for steps 9 to 11 ([`Split::choose`], one cluster per `cluster` multiprocessors); one
/// slice, C itself, elsewhere.
pub fn split(gemm: WgmmaGemm, (m, k, n): (usize, usize, usize), multiprocessors: u32) -> Split {
    let operand = gemm.operand();
    let stages = (k * operand.bytes()).div_ceil(KBYTES as usize) as u32;
    let c = (m as u32, n as u32);
    let units = cluster_tiles(tile(gemm, c, multiprocessors), c, gemm.cluster());
    Split::choose(units, stages, multiprocessors / gemm.cluster(), 1)
}

/// Blocks of the persistent grid: one per multiprocessor, fewer where C has fewer units (a cluster's
/// tiles, times the slices). Steps 14 to 18 take the fewest clusters that still need no more rounds
/// of units (4096 x 4096: 512 tiles in 4 rounds of 128 blocks, none idle in the last; 132 blocks
/// take 4 rounds as well, and leave 16 idle in the last).
pub fn blocks(gemm: WgmmaGemm, tile: (u32, u32), (m, n): (u32, u32), slices: u32, multiprocessors: u32) -> u32 {
    let cluster = gemm.cluster();
    let units = cluster_tiles(tile, (m, n), cluster) * slices;
    let clusters = (multiprocessors / cluster).max(1);
    let grid = if gemm.evens_rounds() {
        units.div_ceil(units.div_ceil(clusters))
    } else {
        units.min(clusters)
    };
    grid * cluster
}

/// The fewest stage-times per block that the multiprocessors a last round leaves idle must add up to
/// for step 18 to share it out ([`tail`]). An H200 multiplying bf16 runs at the clock its power
/// allows (ncu: 1.59 GHz, 132 blocks or 128): a multiprocessor idle in the last round lets the others
/// run faster, and sharing out costs fix-ups. At 4096 (a last round of 116 of 132 tiles of 64 stages:
/// 7.8 stage-times idle per block) sharing out took 0.192 ms where 132 blocks without it took 0.184;
/// at 8192 (68 of 132, of 128 stages: 62 per block) it took 1.384 and 1.387 ms where step 16 took
/// 1.394 and 1.392 (issue 65, runs 76, 77 and 79). 32 lies between: a guess from two sizes on one
/// GPU, which a GPU whose clocks its power does not hold back may put lower.
const MIN_IDLE_STAGES: u64 = 32;

/// Step 18's tiles shared out along k (stream-K): on a grid of one block per multiprocessor (not
/// [`blocks`]'), the tiles of the last round where C has more tiles than multiprocessors, not a whole
/// number of rounds of them, and a last round that would leave multiprocessors idle long enough
/// ([`MIN_IDLE_STAGES`]; 8192 x 8192: 2048 tiles of 128 x 256, 15 rounds of 132 and 68 left, which
/// would leave 64 multiprocessors idle for a round). Their `k_stages` stages each are cut into one
/// even run per block, so the last round takes 68 / 132 of one. None for the other steps, where k is
/// cut into slices, or where the runs would be shorter than a stage (the kernel's counts need every
/// block to have one).
pub fn tail(
    gemm: WgmmaGemm,
    tile: (u32, u32),
    (m, n): (u32, u32),
    k_stages: u32,
    slices: u32,
    multiprocessors: u32,
) -> u32 {
    let (tiles, blocks) = (tiles(tile, (m, n)), multiprocessors.max(1));
    let rest = tiles % blocks;
    let (rest_stages, idle_stages) = (
        u64::from(rest) * u64::from(k_stages),
        u64::from(blocks - rest) * u64::from(k_stages),
    );
    let worth_it = rest_stages >= u64::from(blocks) && idle_stages >= MIN_IDLE_STAGES * u64::from(blocks);
    match gemm == WgmmaGemm::Bf16StreamK && slices == 1 && tiles > blocks && worth_it {
        true => rest,
        false => 0,
    }
}

/// Step 18's workspace where it shares tiles out ([`tail`]): each block's partial sums (a consumer's
/// 128 accumulators per thread, for two consumers of 128 threads: 128 KiB a block) and, per tile
/// shared out and consumer, the count of partial sums left for it, zero between launches (the
/// kernel sets it back).
struct StreamK {
    tail: u32,
    partials: DeviceBuffer<f32>,
    arrivals: DeviceBuffer<u32>,
}

impl StreamK {
    /// The workspace for `tail` tiles shared out over `blocks` blocks.
    fn new(tail: u32, blocks: u32) -> Result<StreamK> {
        let partials = poisoned_device_buffer::<f32>(blocks as usize * 2 * 128 * 128)?;
        let arrivals = check_cuda!(DeviceBuffer::zeroed(2 * tail as usize))?;
        Ok(StreamK {
            tail,
            partials,
            arrivals,
        })
    }
}

/// A padded copy of one operand on the GPU: `rows` rows of `row_length` elements (the padding is never
/// read: the maps say the true sizes), and its tensor map, encoded once since the buffer stays where
/// it is. f32 words, poisoned, so an element the prep leaves unwritten is NaN.
struct Padded {
    rows: usize,
    row_length: usize,
    buffer: DeviceBuffer<f32>,
    map: raw::CuTensorMap,
}

impl Padded {
    /// A `rows` x `cols` copy of `operand`, read by the GEMM in boxes of `box_rows` rows.
    fn new(operand: Operand, (rows, cols): (usize, usize), box_rows: u32) -> Result<Padded> {
        let row_length = operand.row_length(cols);
        let words = (rows * row_length * operand.bytes()).div_ceil(4);
        let buffer = poisoned_device_buffer::<f32>(words)?;
        let map = MapShape::new(operand, (rows, cols), row_length, box_rows)
            .encode(operand, buffer.as_device_ptr().as_raw())?;
        Ok(Padded {
            rows,
            row_length,
            buffer,
            map,
        })
    }
}

/// What a prep kernel makes of an operand: a copy row by row into rows of whole 16-byte pieces, or
/// B's transpose, which TMA and wgmma read where both operands come from shared memory.
#[derive(Debug, Clone, Copy)]
enum Prep {
    Copy,
    Transpose,
}

/// How the GEMM reads one operand: its rows and columns as the tensor map sees them, the box's rows,
/// and the copy a prep kernel makes where the GEMM cannot read the caller's matrix itself.
struct Read {
    sizes: (usize, usize),
    box_rows: u32,
    prep: Prep,
    copy: Option<Padded>,
}

impl Read {
    /// The operand read as `rows` x `cols` in boxes of `box_rows` rows: from a copy made by `prep`
    /// where `copied`, else in place.
    fn new(operand: Operand, sizes: (usize, usize), box_rows: u32, (prep, copied): (Prep, bool)) -> Result<Read> {
        Ok(Read {
            sizes,
            box_rows,
            prep,
            copy: copied.then(|| Padded::new(operand, sizes, box_rows)).transpose()?,
        })
    }
}

/// One of steps 12 to 18 prepared for one product's sizes: its GEMM, its prep kernels and their
/// buffers, the tile shape, the multiprocessors the grid fills, and where k is cut into slices, the
/// slices' partial products and the kernel that sums them.
pub struct WgmmaLaunch<'a> {
    form: WgmmaGemm,
    /// m, k and n the buffers were made for.
    sizes: (i32, i32, i32),
    /// `form`'s kernel, looked up here by name: the launch below gives it its arguments.
    gemm: Function<'a>,
    copy: Function<'a>,
    transpose: Function<'a>,
    /// A (m x k), and B^T (n x k), or with the tiles computed as C^T (step 12's narrow ones, step
    /// 17's) B (k x n) in boxes of 32 rows of k.
    a: Read,
    b: Read,
    tile: (u32, u32),
    multiprocessors: u32,
    split: Split,
    /// The slices' partial products, where there are two slices or more.
    slabs: Option<Slabs<'a, f32>>,
    /// Step 18's workspace, where it shares tiles out along k ([`tail`]).
    stream_k: Option<StreamK>,
}

impl<'a> WgmmaLaunch<'a> {
    /// The step for an `m` x `k` times `k` x `n` product from `module` (mmm_wgmma.cu, whose GEMM has
    /// been allowed [`WgmmaGemm::shared_bytes`] of dynamic shared memory), its buffers allocated here,
    /// outside the timed launches. TF32 reads A as it is where its rows are whole 16-byte pieces (k %
    /// 4 == 0), and so B with the tiles computed as C^T (n % 4 == 0); bf16 always converts them. k is
    /// cut as [`split`] says; `slabs` makes the slabs for that split where it has more than one slice
    /// (the ladder does: its module has the kernel that sums them).
    pub fn prepare(
        module: &'a Module,
        form: WgmmaGemm,
        (m, k, n): (usize, usize, usize),
        multiprocessors: u32,
        slabs: impl FnOnce(Split) -> Result<Option<Slabs<'a, f32>>>,
    ) -> Result<WgmmaLaunch<'a>> {
        let operand = form.operand();
        let split = split(form, (m, k, n), multiprocessors);
        let slabs = slabs(split)?;
        ensure!(
            slabs
                .as_ref()
                .map_or(split.slices == 1, |slabs| slabs.holds(split.slices, (m * n) as u64)),
            "slabs for {} slices of {m} x {n} are not those of this split",
            split.slices
        );
        let tile = tile(form, (m as u32, n as u32), multiprocessors);
        let k_stages = (k * operand.bytes()).div_ceil(KBYTES as usize) as u32;
        let tail = tail(
            form,
            tile,
            (m as u32, n as u32),
            k_stages,
            split.slices,
            multiprocessors,
        );
        let stream_k = (tail > 0).then(|| StreamK::new(tail, multiprocessors)).transpose()?;
        let in_place = |length: usize| operand == Operand::Tf32 && length.is_multiple_of(4);
        let a = Read::new(operand, (m, k), tile.0, (Prep::Copy, !in_place(k)))?;
        // The tiles computed as C^T read B as it is, in boxes of a stage's 32 rows of k.
        let b = if tile == NARROW_TILE || tile == WIDE_TILE {
            Read::new(operand, (k, n), NARROW_BOX_ROWS, (Prep::Copy, !in_place(n)))?
        } else {
            ensure!(
                k.div_ceil(32) <= 65535,
                "k = {k} is longer than the wgmma steps' transpose of B takes (65535 x 32)"
            );
            // In a cluster each block brings its share of B^T's tile.
            Read::new(operand, (n, k), tile.1 / form.cluster(), (Prep::Transpose, true))?
        };
        let suffix = operand.suffix();
        Ok(WgmmaLaunch {
            form,
            sizes: (i32::try_from(m)?, i32::try_from(k)?, i32::try_from(n)?),
            gemm: check_cuda!(module.get_function(form.kernel()))?,
            copy: check_cuda!(module.get_function(format!("copy_pad_{suffix}")))?,
            transpose: check_cuda!(module.get_function(format!("transpose_pad_{suffix}")))?,
            a,
            b,
            tile,
            multiprocessors,
            split,
            slabs,
            stream_k,
        })
    }

    /// How k is cut, where it is (more than one slice).
    pub fn split(&self) -> Option<Split> {
        (self.split.slices > 1).then_some(self.split)
    }

    /// For steps 14 to 16 and 18, enqueues the conversion of `a` and `b` into the copies their GEMM reads,
    /// which [`WgmmaLaunch::launch`] then multiplies, however often; for steps 12 and 13, whose
    /// launches convert, nothing. Called before the timed launches, as cuBLAS's bf16 row converts.
    ///
    /// # Safety
    /// As for [`WgmmaLaunch::launch`], for `a` and `b`, until the GPU has finished the conversion.
    pub unsafe fn convert<T: Element>(&self, (a, b): (MatrixView<T>, MatrixView<T>), stream: &Stream) -> Result<()> {
        if self.form.converts_once() {
            self.ensure_sizes(a, b, a.rows, b.cols)?;
            self.map(&self.a, a, stream)?;
            self.map(&self.b, b, stream)?;
        }
        Ok(())
    }

    /// Enqueues the prep and the GEMM on `stream`: C = A * B for f32 views of the sizes prepared for.
    /// (Generic in `T` only because the ladder's launches are; anything but f32 is refused.) A view
    /// read in place whose address is not on 16 bytes is an error (a `Matrix`'s always is). Steps 14
    /// and 15 multiply the copies of A and B made by the last [`WgmmaLaunch::convert`] and read
    /// neither view.
    ///
    /// # Safety
    /// `a`, `b` and `c` must point at device memory holding their `rows` x `cols` elements, row-major
    /// (as a `Matrix`'s device copy does), that stays allocated, and that nothing else writes, until
    /// the GPU has finished the launch. No other launch of this `WgmmaLaunch` may run at the same
    /// time (on another stream): step 18's partial sums and counts are its own, one launch's.
    pub unsafe fn launch<T: Element>(
        &self,
        (a, b, c): (MatrixView<T>, MatrixView<T>, MatrixView<T>),
        stream: &Stream,
    ) -> Result<()> {
        let (m, k, n) = self.sizes;
        self.ensure_sizes(a, b, c.rows, c.cols)?;
        let (a_map, b_map) = match (&self.a.copy, &self.b.copy) {
            (Some(a), Some(b)) if self.form.converts_once() => (a.map, b.map),
            _ => (self.map(&self.a, a, stream)?, self.map(&self.b, b, stream)?),
        };
        let c = MatrixView {
            rows: m,
            cols: n,
            data: c.data.cast::<f32>(), // T is f32 (checked above)
        };
        let Split {
            slices,
            tiles_per_slice: stages_per_slice,
        } = self.split;
        // Step 18's tiles shared out along k on one block per multiprocessor, and its workspace;
        // where it shares nothing out (tail 0) it runs as step 16 does.
        let (grid, tail, partials, arrivals) = match &self.stream_k {
            Some(stream_k) => (
                self.multiprocessors,
                stream_k.tail as i32,
                stream_k.partials.as_device_ptr(),
                stream_k.arrivals.as_device_ptr(),
            ),
            None => {
                let grid = blocks(self.form, self.tile, (m as u32, n as u32), slices, self.multiprocessors);
                (grid, 0, DevicePointer::null(), DevicePointer::null())
            }
        };
        // The GEMM writes C itself, or with more than one slice the slabs, which sum_slices adds into C.
        let target = self.slabs.as_ref().map_or(c, |slabs| slabs.view(m, n));
        let (gemm, stages_per_slice) = (&self.gemm, stages_per_slice as i32);
        // Each launch: `gemm` is the kernel named, looked up by name in `prepare`. The maps describe
        // the caller's A and B (views of the sizes prepared for, checked above, whose memory is this
        // function's contract) or this struct's copies of them, freed only after a synchronize (Drop).
        // `target` is C (the caller's view, likewise) or the slabs, `slices` x m x n floats
        // (checked in `prepare`) that this struct owns; the kernel writes slab z for slice z <
        // ceil(k stages / stages_per_slice) = slices, in tiles of `tile` (narrow says which). It traps
        // unless it got THREADS threads, its shared memory (`shared`), stages_per_slice >= 1 and
        // clusters of its __cluster_dims__ (`blocks` gives a multiple of them).
        let shared = self.form.shared_bytes();
        match self.form {
            WgmmaGemm::Tf32 => {
                let narrow = i32::from(self.tile == NARROW_TILE);
                // __global__ void wgmma_tma_tf32(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b, MatrixView<float> c, int k, int stages_per_slice, int narrow)
                // SAFETY: the arguments match that signature in type and order (CuTensorMap is
                // CUtensorMap's 128 bytes); what they point to is as said before the match.
                check_cuda!(unsafe {
                    launch!(gemm<<<grid, THREADS, shared, stream>>>(a_map, b_map, target, k, stages_per_slice, narrow))
                })?;
            }
            WgmmaGemm::Bf16Stored => {
                let (c_map, tma_store) = self.store_map(target, slices)?;
                // __global__ void wgmma_tma_bf16_stored(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t, const __grid_constant__ CUtensorMap c_map, MatrixView<float> c, int k, int stages_per_slice, int tma_store)
                // SAFETY: as for the TF32 launch, with this signature; `c_map` describes `target`'s
                // slices x m x n floats, which the kernel writes in either way.
                check_cuda!(unsafe {
                    launch!(gemm<<<grid, THREADS, shared, stream>>>(a_map, b_map, c_map, target, k, stages_per_slice, tma_store))
                })?;
            }
            WgmmaGemm::Bf16StreamK => {
                let (c_map, tma_store) = self.store_map(target, slices)?;
                // __global__ void wgmma_tma_bf16_streamk(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t, const __grid_constant__ CUtensorMap c_map, MatrixView<float> c, int k, int stages_per_slice, int tma_store, int tail, float* partials, unsigned int* arrivals)
                // SAFETY: as for the step 16 launch, with this signature. Where `tail` > 0 (`prepare`:
                // one slice, more tiles than blocks), the workspace holds `grid` blocks' partial
                // sums and `tail` x 2 zero counts, this struct's, which no other launch uses
                // meanwhile (this function's contract); where 0 the pointers are not read. A block
                // waits only for blocks numbered above it, which leave their sums before they wait
                // themselves: with one block per multiprocessor all run at once, and where fewer
                // fit (another kernel beside it), the blocks started first, the lowest, still end.
                check_cuda!(unsafe {
                    launch!(gemm<<<grid, THREADS, shared, stream>>>(a_map, b_map, c_map, target, k, stages_per_slice, tma_store, tail, partials, arrivals))
                })?;
            }
            WgmmaGemm::Tf32Wide => {
                let (c_map, tma_store) = self.store_map(target, slices)?;
                let narrow = i32::from(self.tile == NARROW_TILE);
                // __global__ void wgmma_tma_tf32_wide(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b, const __grid_constant__ CUtensorMap c_map, MatrixView<float> c, int k, int stages_per_slice, int tma_store, int narrow)
                // SAFETY: as for the step 16 launch, with this signature; `b` is B's map on either
                // tile (`prepare`).
                check_cuda!(unsafe {
                    launch!(gemm<<<grid, THREADS, shared, stream>>>(a_map, b_map, c_map, target, k, stages_per_slice, tma_store, narrow))
                })?;
            }
            WgmmaGemm::Bf16 | WgmmaGemm::Bf16Once | WgmmaGemm::Bf16Pair => {
                // __global__ void wgmma_tma_bf16(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t, MatrixView<float> c, int k, int stages_per_slice),
                // wgmma_tma_bf16_once and wgmma_tma_bf16_pair the same
                // SAFETY: as for the TF32 launch, with this signature.
                check_cuda!(unsafe {
                    launch!(gemm<<<grid, THREADS, shared, stream>>>(a_map, b_map, target, k, stages_per_slice))
                })?;
            }
        }
        if let Some(slabs) = &self.slabs {
            slabs.add_into(c, self.multiprocessors, stream)?;
        }
        Ok(())
    }

    /// The map steps 16 to 18 store `target` (C or the slabs, `slices` of them) through, and whether
    /// they do (1) or store from registers (0), where TMA cannot write it: then a map of zeros, which
    /// the kernel, told so, does not read.
    fn store_map(&self, target: MatrixView<f32>, slices: u32) -> Result<(raw::CuTensorMap, i32)> {
        let (m, _, n) = self.sizes;
        let store_box = self.form.store_box().expect("only steps 16 to 18 store by TMA");
        let c_map = store_map(target.data.as_raw(), (m as usize, n as usize), slices, store_box)?;
        let tma_store = i32::from(c_map.is_some());
        Ok((c_map.unwrap_or(raw::CuTensorMap { opaque: [0; 16] }), tma_store))
    }

    /// That `a` and `b` are f32 and of the sizes prepared for, and C `rows` x `cols`.
    fn ensure_sizes<T: Element>(&self, a: MatrixView<T>, b: MatrixView<T>, rows: i32, cols: i32) -> Result<()> {
        let (m, k, n) = self.sizes;
        ensure!(
            T::NAME == "f32" && (a.rows, a.cols, b.rows, b.cols, rows, cols) == (m, k, k, n, m, n),
            "the wgmma steps were prepared for f32 {m} x {k} times {k} x {n}, not {} {} x {} times {} x {}",
            T::NAME,
            a.rows,
            a.cols,
            b.rows,
            b.cols
        );
        Ok(())
    }

    /// The tensor map the GEMM reads `src` through: its copy's, made here by the prep kernel, or one
    /// encoded now for the caller's matrix, which comes with each launch.
    fn map<T: Element>(&self, read: &Read, src: MatrixView<T>, stream: &Stream) -> Result<raw::CuTensorMap> {
        match &read.copy {
            Some(copy) => {
                self.prep(read.prep, src, copy, stream)?;
                Ok(copy.map)
            }
            None => {
                let (rows, cols) = read.sizes;
                MapShape::new(self.form.operand(), (rows, cols), cols, read.box_rows)
                    .encode(self.form.operand(), src.data.as_raw())
            }
        }
    }

    /// copy_pad_f32 or transpose_pad_f32 (or _bf16): `src` into `dst`, as `prep` says.
    fn prep<T: Element>(&self, prep: Prep, src: MatrixView<T>, dst: &Padded, stream: &Stream) -> Result<()> {
        let (rows, cols) = (src.rows as u32, src.cols as u32);
        // dst's rows and the elements each needs: src's rows, or the transpose's cols rows of rows.
        let (function, dst_rows, dst_row, grid, block) = match prep {
            Prep::Copy => (
                &self.copy,
                rows,
                cols,
                GridSize::xy(cols.div_ceil(256).min(64), rows.min(4096)),
                BlockSize::x(256),
            ),
            Prep::Transpose => (
                &self.transpose,
                cols,
                rows,
                GridSize::xy(cols.div_ceil(32), rows.div_ceil(32)),
                BlockSize::xy(32, 8),
            ),
        };
        ensure!(
            dst.rows == dst_rows as usize && dst.row_length >= dst_row as usize,
            "{prep:?}: a buffer of {} rows of {} for {dst_rows} rows of {dst_row}",
            dst.rows,
            dst.row_length
        );
        let (data, row_length) = (dst.buffer.as_device_ptr(), dst.row_length as i32);
        // __global__ void copy_pad_f32(MatrixView<float> src, float* dst, int ld), transpose_pad_f32 the
        // same, and _bf16 (Bf16* dst)
        // SAFETY: the signature's types in order; `dst` holds the rows of `row_length` elements that
        // the kernel writes for `src` (checked above), and nothing else.
        check_cuda!(unsafe { launch!(function<<<grid, block, 0, stream>>>(src, data, row_length)) })?;
        Ok(())
    }
}

impl Drop for WgmmaLaunch<'_> {
    /// The copies of A and B are freed only once the GPU has finished with them: a launch may still
    /// be running when its WgmmaLaunch goes. Nothing to do about an error here.
    fn drop(&mut self) {
        let _ = cust::context::CurrentContext::synchronize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tensor maps of a 1000 x 999 x 1001 product: A read as it is in TF32 only where its rows are
    /// whole 16-byte pieces; the boxes 128 bytes wide (32 tf32, 64 bf16) by a tile's rows.
    #[test]
    fn tensor_maps_give_k_first_row_strides_in_bytes_and_128_byte_boxes() {
        assert_eq!(
            MapShape::new(Operand::Tf32, (1000, 1000), 1000, 128),
            MapShape {
                dims: [1000, 1000],
                row_bytes: 4000,
                box_dims: [32, 128]
            }
        );
        // k = 1001: rows padded to 1004 floats, 1008 bf16s; the maps keep the true k.
        assert_eq!(Operand::Tf32.row_length(1001), 1004);
        assert_eq!(Operand::Bf16.row_length(1001), 1008);
        assert_eq!(Operand::Bf16.row_length(1), 8);
        assert_eq!(Operand::Tf32.row_length(4), 4);
        assert_eq!(
            MapShape::new(Operand::Bf16, (999, 1001), 1008, 256),
            MapShape {
                dims: [1001, 999],
                row_bytes: 2016,
                box_dims: [64, 256]
            }
        );
    }

    /// Step 12's B on its narrow tiles: n inner, boxes of 32 columns (128 bytes) by a stage's 32 k.
    #[test]
    fn the_narrow_tiles_read_b_by_its_rows_of_n() {
        assert_eq!(
            MapShape::new(
                Operand::Tf32,
                (999, 1001),
                Operand::Tf32.row_length(1001),
                NARROW_BOX_ROWS
            ),
            MapShape {
                dims: [1001, 999],
                row_bytes: 4016,
                box_dims: [32, 32]
            }
        );
    }

    #[test]
    fn a_misaligned_tensor_map_is_an_error_not_a_driver_call() {
        let shape = MapShape::new(Operand::Tf32, (17, 5), 5, 128);
        let error = shape.encode(Operand::Tf32, 0x1000).unwrap_err().to_string();
        assert!(
            error.starts_with("TMA needs rows and addresses on 16 bytes, not rows of 20 bytes"),
            "{error}"
        );
    }

    /// Step 16 stores C by TMA only where its rows are whole 16-byte pieces and it starts on 16 bytes;
    /// elsewhere there is no map and the kernel stores from registers. (The maps it does make are
    /// the driver's work, checked on the GPU.) A map of another rank is refused before the driver.
    #[test]
    fn steps_16_and_17_store_by_tma_only_where_c_rows_are_whole_16_byte_pieces() {
        assert!(store_map(0x1000, (1000, 999), 1, STORE_BOX).unwrap().is_none());
        assert!(store_map(0x1000, (1000, 1001), 4, WIDE_STORE_BOX).unwrap().is_none());
        assert!(store_map(0x1004, (1000, 1000), 1, STORE_BOX).unwrap().is_none());
        let error = encode_tiled(raw::CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 0x1000, &[4], &[], &[4]).unwrap_err();
        assert!(error.to_string().starts_with("a tensor map of 1 dimensions"), "{error}");
        assert_eq!(WgmmaGemm::Bf16Stored.shared_bytes(), SHARED_BYTES + 32768);
        assert_eq!(WgmmaGemm::Bf16Once.shared_bytes(), SHARED_BYTES);
        assert_eq!(
            (WgmmaGemm::Bf16Stored.kernel(), WgmmaGemm::Bf16Stored.cluster()),
            ("wgmma_tma_bf16_stored", 1)
        );
        assert!(WgmmaGemm::Bf16Stored.converts_once());
        // Step 17: the same buffers, chunks of 32 x 32 floats; TF32 read from f32 in each launch.
        let wide = WgmmaGemm::Tf32Wide;
        assert_eq!(wide.shared_bytes(), SHARED_BYTES + 32768);
        assert_eq!(
            (wide.kernel(), wide.cluster(), wide.operand(), wide.converts_once()),
            ("wgmma_tma_tf32_wide", 1, Operand::Tf32, false)
        );
        assert_eq!(
            (
                wide.store_box(),
                WgmmaGemm::Bf16Stored.store_box(),
                WgmmaGemm::Bf16Once.store_box()
            ),
            (Some((32, 32)), Some((32, 64)), None)
        );
    }

    /// As the kernel's constants: 192 KiB of stages and the alignment; the grid one block per
    /// multiprocessor, fewer where C has fewer tiles and slices.
    #[test]
    fn shared_memory_holds_the_stages_and_the_grid_one_block_per_multiprocessor() {
        assert_eq!(SHARED_BYTES, 4 * (16384 + 32768) + 1024);
        let (tf32, bf16) = (WgmmaGemm::Tf32, WgmmaGemm::Bf16);
        assert_eq!(blocks(bf16, TILE, (4096, 4096), 1, 132), 132);
        assert_eq!(blocks(bf16, TILE, (1, 1), 1, 132), 1);
        assert_eq!(blocks(bf16, TILE, (256, 8192), 1, 132), 64);
        assert_eq!(blocks(tf32, NARROW_TILE, (1000, 999), 1, 132), 8 * 16);
        assert_eq!(blocks(bf16, TILE, (1000, 999), 4, 132), 8 * 4 * 4);
        assert_eq!(blocks(tf32, NARROW_TILE, (256, 256), 16, 132), 128);
        assert_eq!(blocks(tf32, NARROW_TILE, (256, 256), 80, 132), 132);
    }

    /// Steps 14 to 16: as many units for each block (cluster) as the rounds need, no block idle in
    /// the last one where that can be helped; clusters of two blocks, on tiles one above the other.
    #[test]
    fn steps_14_and_15_share_c_out_evenly_and_15_launches_pairs() {
        let (once, pair) = (WgmmaGemm::Bf16Once, WgmmaGemm::Bf16Pair);
        // 512 tiles: 4 rounds of 128 blocks; 256 pairs: 4 rounds of 64 pairs.
        assert_eq!(blocks(once, TILE, (4096, 4096), 1, 132), 128);
        assert_eq!(blocks(pair, TILE, (4096, 4096), 1, 132), 128);
        // 2048 tiles: 16 rounds of 128; 1024 pairs: 16 rounds of 64.
        assert_eq!(blocks(once, TILE, (8192, 8192), 1, 132), 128);
        assert_eq!(blocks(pair, TILE, (8192, 8192), 1, 132), 128);
        // 9 x 4 = 36 tiles, one round; 5 x 4 = 20 pairs (the last row of tiles alone in its pair).
        assert_eq!(blocks(once, TILE, (1100, 1000), 1, 132), 36);
        assert_eq!(blocks(pair, TILE, (1100, 1000), 1, 132), 40);
        assert_eq!(blocks(pair, TILE, (1, 1), 1, 132), 2);
        // 19 x 7 = 133 tiles: 2 rounds of 67 blocks; 10 x 7 = 70 pairs: 2 rounds of 35 pairs.
        assert_eq!(blocks(once, TILE, (19 * 128, 7 * 256), 1, 132), 67);
        assert_eq!(blocks(pair, TILE, (19 * 128, 7 * 256), 1, 132), 2 * 35);
        assert_eq!((once.cluster(), pair.cluster(), WgmmaGemm::Bf16.cluster()), (1, 2, 1));
        assert!(once.converts_once() && pair.converts_once() && !WgmmaGemm::Bf16.converts_once());
        assert!(once.evens_rounds() && WgmmaGemm::Tf32Wide.evens_rounds() && !WgmmaGemm::Tf32.evens_rounds());
        assert_eq!(pair.kernel(), "wgmma_tma_bf16_pair");
    }

    /// Steps 12 and 17 take 128 x 64 tiles where 128 x 256 ones would leave half an H100's 132
    /// multiprocessors idle (66 tiles or fewer), step 17 256 x 128 ones elsewhere; step 13 has one
    /// shape.
    #[test]
    fn tf32_takes_narrow_tiles_where_wide_ones_leave_half_the_gpu_idle() {
        let (tf32, wide, bf16) = (WgmmaGemm::Tf32, WgmmaGemm::Tf32Wide, WgmmaGemm::Bf16);
        assert_eq!(tile(tf32, (1024, 1024), 132), (128, 64));
        assert_eq!(tile(tf32, (1408, 1536), 132), (128, 64)); // 11 x 6 = 66 wide tiles
        assert_eq!(tile(tf32, (1536, 1536), 132), (128, 256)); // 12 x 6 = 72
        assert_eq!(tile(tf32, (4096, 4096), 132), (128, 256));
        assert_eq!(tile(tf32, (1024, 1024), 60), (128, 256));
        assert_eq!(tile(bf16, (1024, 1024), 132), (128, 256));
        assert_eq!(tile(bf16, (1, 1), 132), (128, 256));
        assert_eq!(tile(wide, (1024, 1024), 132), (128, 64));
        assert_eq!(tile(wide, (1408, 1536), 132), (128, 64));
        assert_eq!(tile(wide, (1536, 1536), 132), (256, 128));
        assert_eq!(tile(wide, (4096, 4096), 132), (256, 128));
    }

    /// Step 17's grid: as many tiles for each block as the rounds need (4096: 16 x 32 tiles of 256 x
    /// 128 in 4 rounds of 128 blocks), and the narrow tiles' one block each up to the
    /// multiprocessors.
    #[test]
    fn step_17_shares_its_tiles_out_evenly() {
        let wide = WgmmaGemm::Tf32Wide;
        assert_eq!(blocks(wide, WIDE_TILE, (4096, 4096), 1, 132), 128);
        assert_eq!(blocks(wide, WIDE_TILE, (8192, 8192), 1, 132), 128);
        // 5 x 16 = 80 tiles: one round.
        assert_eq!(blocks(wide, WIDE_TILE, (1100, 2000), 1, 132), 80);
        assert_eq!(blocks(wide, NARROW_TILE, (1024, 1024), 1, 132), 128);
    }

    /// Step 18 shares out the last round's tiles where C has more tiles than multiprocessors, not a
    /// whole number of rounds, and a last round that would leave them idle for 32 stages a block or
    /// more (8192: 2048 tiles, 68 left after 15 rounds of 132, 64 idle for 128 stages), on one block
    /// per multiprocessor; nowhere else: a nearly full last round (4096: 116 of 132, 16 idle for 64
    /// stages), a whole number of rounds, one round or less (where k may be cut instead), runs
    /// shorter than a stage, or another step.
    #[test]
    fn step_18_shares_out_the_last_round_where_it_would_leave_the_gpu_idle_long() {
        let streamk = WgmmaGemm::Bf16StreamK;
        assert_eq!(tail(streamk, TILE, (8192, 8192), 128, 1, 132), 68);
        assert_eq!(tail(streamk, TILE, (4096, 4096), 64, 1, 132), 0);
        // Where it shares nothing out, step 16's grid (launch takes one block per multiprocessor
        // where it does).
        assert_eq!(blocks(streamk, TILE, (4096, 4096), 1, 132), 128);
        // 18 x 9 = 162 tiles, 30 left: of 47 stages (k = 3000 in bf16), 102 x 47 / 132 = 36 idle
        // stage-times a block; of 40 stages 31, too few; of one stage, runs shorter than a stage.
        assert_eq!(tail(streamk, TILE, (2300, 2170), 47, 1, 132), 30);
        assert_eq!(tail(streamk, TILE, (2300, 2170), 40, 1, 132), 0);
        // 133 tiles, 1 left, of 100 stages: a run of under a stage each.
        assert_eq!(tail(streamk, TILE, (19 * 128, 7 * 256), 100, 1, 132), 0);
        // 4 rounds of 128 on 128 multiprocessors; 128 tiles on 132; k cut into slices; step 16.
        assert_eq!(tail(streamk, TILE, (4096, 4096), 64, 1, 128), 0);
        assert_eq!(tail(streamk, TILE, (2048, 2048), 32, 1, 132), 0);
        assert_eq!(tail(streamk, TILE, (8192, 8192), 128, 2, 132), 0);
        assert_eq!(tail(WgmmaGemm::Bf16Stored, TILE, (8192, 8192), 128, 1, 132), 0);
        assert_eq!(
            (
                streamk.kernel(),
                streamk.shared_bytes(),
                streamk.store_box(),
                streamk.operand()
            ),
            (
                "wgmma_tma_bf16_streamk",
                SHARED_BYTES + STORE_BYTES,
                Some(STORE_BOX),
                Operand::Bf16
            )
        );
        assert!(streamk.converts_once() && streamk.evens_rounds());
        assert_eq!(split(streamk, (8192, 8192, 8192), 132).slices, 1);
    }

    /// Split-K where C's tiles leave an H100's 132 multiprocessors idle, slices of at least 8 stages of
    /// 128 bytes of k (256 k in TF32, 512 in bf16); C itself where the tiles fill the GPU (1024 x 1024
    /// in TF32: 128 narrow tiles).
    #[test]
    fn k_is_cut_where_c_has_too_few_tiles() {
        let slices = |gemm, sizes| {
            let Split {
                slices,
                tiles_per_slice,
            } = split(gemm, sizes, 132);
            (slices, tiles_per_slice)
        };
        assert_eq!(slices(WgmmaGemm::Tf32, (1024, 1024, 1024)), (1, 32));
        assert_eq!(slices(WgmmaGemm::Bf16, (1024, 1024, 1024)), (2, 8));
        assert_eq!(slices(WgmmaGemm::Bf16Once, (1024, 1024, 1024)), (2, 8));
        assert_eq!(slices(WgmmaGemm::Tf32, (4096, 4096, 4096)), (1, 128));
        assert_eq!(slices(WgmmaGemm::Tf32, (2048, 2048, 2048)), (1, 64));
        // 8 narrow tiles: 16 slices of 16 stages.
        assert_eq!(slices(WgmmaGemm::Tf32, (256, 8192, 256)), (16, 16));
        // 66 stages on 2 x 5 narrow tiles: 8 slices of 9 (none under 8 stages), the last of 3; bf16's 33
        // stages on 2 x 2 tiles in 4 slices of 9, the last of 6.
        assert_eq!(slices(WgmmaGemm::Tf32, (129, 2085, 257)), (8, 9));
        assert_eq!(slices(WgmmaGemm::Bf16, (129, 2085, 257)), (4, 9));
        // In pairs: 1 x 2 units on 66 pairs of multiprocessors.
        assert_eq!(slices(WgmmaGemm::Bf16Pair, (129, 2085, 257)), (4, 9));
        // 8 x 4 tiles, 4 x 4 pairs: 2 slices of 8 stages, as for the 32 tiles one by one.
        assert_eq!(slices(WgmmaGemm::Bf16Pair, (1024, 1024, 1024)), (2, 8));
        assert_eq!(slices(WgmmaGemm::Tf32, (1, 1, 1)), (1, 1));
        // Step 17 cuts k as step 12 does on the narrow tiles, and its 256 x 128 tiles fill the GPU.
        assert_eq!(slices(WgmmaGemm::Tf32Wide, (129, 2085, 257)), (8, 9));
        assert_eq!(slices(WgmmaGemm::Tf32Wide, (4096, 4096, 4096)), (1, 128));
    }
}

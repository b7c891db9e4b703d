//! `--ladder`: the steps from the slides' tiled kernel towards cuBLAS (`kernels/cuda/mmm_ladder.cu`, and
//! `kernels/cuda/mmm_wgmma.cu` for Hopper's steps 12 and 13, whose host side is [`crate::wgmma`]), each
//! timed like the slide's kernels and checked against the CPU.

use anyhow::{Context as _, Result};
use common::gpu::Gpu;
use common::timing::{time_on_stream, Timing};
use common::verify::{poisoned_device_buffer, Random};
use common::{check_cuda, raw};
use cust::function::{BlockSize, Function, FunctionAttribute, GridSize};
use cust::launch;
use cust::memory::DeviceBuffer;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use kernels::KernelImage;
use matrix::mmm::{launch_mmm, load_mmm, CpuProduct, MmmKernel, ProductCheck};
use matrix::{Element, Matrix, MatrixView};

use crate::cublas::{Bf16Matrix, Cublas, Gemm, Math, BF16_ROW};
use crate::wgmma::{self, Operand, WgmmaLaunch};
use crate::Precision;

/// One rung of the ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The slides' tiled mmm with BLOCK_SIZE 32: where the course stops.
    Tiled,
    /// Each thread computes 8 x 8 elements of a 128 x 128 block tile.
    RegisterBlocked,
    /// 16-byte loads; the A tile stored k-major with a padding column.
    WideLoads,
    /// Two shared-memory stages filled with cp.async.
    AsyncCopies,
    /// FP64 tensor cores: mma.sync m8n8k4 (f64 only).
    TensorCores,
    /// FP64 tensor cores with the shape Hopper added, m16n8k4 (f64 only).
    HopperTensorCores,
    /// Warp tiling, 8 x 16 per thread of a 128 x 256 tile, fragments loaded a step ahead, three
    /// cp.async stages (f32 only: f64 has the tensor cores).
    WarpTiled,
    /// Hopper's m16n8k8 on C's transpose, in step 6's pipeline: 128 x 64 tiles, warps of 64 x 32, two
    /// blocks per multiprocessor (f64 only).
    MmaTiled,
    /// The same kernel on the TF32 tensor cores, mma m16n8k8, from f32 matrices: precision "tf32".
    Tf32,
    /// Split-K: step 6 over slices of k, then a sum of the slices (f32 only; [`Split`]).
    SplitWarpTiled,
    /// Split-K on step 7 (f64 only).
    SplitMmaTiled,
    /// Split-K on step 8 (tf32).
    SplitTf32,
    /// Hopper's wgmma on TF32, fed by TMA, a producer warpgroup and two consumers (sm_90a, f32
    /// matrices: precision "tf32"); on a small C one consumer, with B read through registers instead
    /// of transposed first.
    WgmmaTf32,
    /// wgmma on bf16 copies of A and B^T, both read from shared memory: precision "bf16".
    WgmmaBf16,
}

/// The slides' BLOCK_SIZE for the first rung: the faster of the two on an H200.
pub const TILED_BLOCK_SIZE: u32 = 32;

impl Step {
    pub const ALL: [Step; 14] = [
        Step::Tiled,
        Step::RegisterBlocked,
        Step::WideLoads,
        Step::AsyncCopies,
        Step::TensorCores,
        Step::HopperTensorCores,
        Step::WarpTiled,
        Step::MmaTiled,
        Step::Tf32,
        Step::SplitWarpTiled,
        Step::SplitMmaTiled,
        Step::SplitTf32,
        Step::WgmmaTf32,
        Step::WgmmaBf16,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Step::Tiled => "0. mmm, tiled (the slides, BLOCK_SIZE 32)",
            Step::RegisterBlocked => "1. register blocking, 8 x 8 per thread",
            Step::WideLoads => "2. 16-byte loads, A tile k-major and padded",
            Step::AsyncCopies => "3. cp.async into two stages",
            Step::TensorCores => "4. FP64 tensor cores, mma m8n8k4 (DMMA.8)",
            Step::HopperTensorCores => "5. Hopper's mma m16n8k4 (DMMA.16)",
            Step::WarpTiled => "6. warp tiling, 3 cp.async stages (f32)",
            Step::MmaTiled => "7. DMMA m16n8k8 in warp tiles, 128 x 64, 3 stages (f64)",
            Step::Tf32 => "8. TF32 tensor cores, mma m16n8k8 (tf32)",
            Step::SplitWarpTiled => "9. split-K on step 6 (f32)",
            Step::SplitMmaTiled => "10. split-K on step 7 (f64)",
            Step::SplitTf32 => "11. split-K on step 8 (tf32)",
            Step::WgmmaTf32 => "12. wgmma + TMA, warp-specialized (tf32)",
            Step::WgmmaBf16 => "13. wgmma + TMA (bf16)",
        }
    }

    /// The kernel's C name for `T`, or `None` where the step has no kernel in that precision.
    pub fn c_name<T: Element>(self) -> Option<String> {
        let stem = match self {
            Step::Tiled => return Some(MmmKernel::Tiled.c_name::<T>()),
            Step::RegisterBlocked => "register_blocked",
            Step::WideLoads => "wide_loads",
            Step::AsyncCopies => "async_copies",
            Step::TensorCores | Step::HopperTensorCores if T::NAME != "f64" => return None,
            Step::TensorCores => "dmma_m8n8k4",
            Step::HopperTensorCores => "dmma_m16n8k4",
            Step::WarpTiled if T::NAME != "f32" => return None,
            Step::WarpTiled => "warp_tiled",
            Step::MmaTiled if T::NAME != "f64" => return None,
            Step::MmaTiled => "mma_tiled",
            Step::Tf32 if T::NAME != "f32" => return None,
            Step::Tf32 => return Some("mma_tiled_tf32".to_string()),
            Step::SplitWarpTiled if T::NAME != "f32" => return None,
            Step::SplitWarpTiled => "warp_tiled_split",
            Step::SplitMmaTiled if T::NAME != "f64" => return None,
            Step::SplitMmaTiled => "mma_tiled_split",
            Step::SplitTf32 if T::NAME != "f32" => return None,
            Step::SplitTf32 => return Some("mma_tiled_split_tf32".to_string()),
            Step::WgmmaTf32 | Step::WgmmaBf16 if T::NAME != "f32" => return None,
            Step::WgmmaTf32 => return Some("wgmma_tma_tf32".to_string()),
            Step::WgmmaBf16 => return Some("wgmma_tma_bf16".to_string()),
        };
        Some(format!("{stem}_{}", T::NAME))
    }

    /// The precision the step computes in with matrices of `T`: `T`'s own, but TF32 for steps 8, 11 and
    /// 12 and bf16 for step 13.
    pub fn precision<T: Element>(self) -> Precision {
        match (self, T::NAME) {
            (Step::Tf32 | Step::SplitTf32 | Step::WgmmaTf32, _) => Precision::Tf32,
            (Step::WgmmaBf16, _) => Precision::Bf16,
            (_, "f64") => Precision::F64,
            _ => Precision::F32,
        }
    }

    /// The steps of one precision of the ladder, in order, with matrices of `T`.
    pub fn of_precision<T: Element>(precision: Precision) -> Vec<Step> {
        Step::ALL
            .into_iter()
            .filter(|step| step.c_name::<T>().is_some() && step.precision::<T>() == precision)
            .collect()
    }

    /// The image holding the step's kernel (for its ptxas report).
    pub fn image(self) -> &'static KernelImage {
        match self {
            Step::Tiled => kernels::mmm_for_block_size(TILED_BLOCK_SIZE).expect("BLOCK_SIZE 32 is compiled"),
            Step::WgmmaTf32 | Step::WgmmaBf16 => &kernels::MMM_WGMMA,
            _ => &kernels::MMM_LADDER,
        }
    }

    /// What a wgmma step's tensor cores read; `None` for the other steps.
    pub fn operand(self) -> Option<Operand> {
        match self {
            Step::WgmmaTf32 => Some(Operand::Tf32),
            Step::WgmmaBf16 => Some(Operand::Bf16),
            _ => None,
        }
    }

    /// The step that a split-K step runs over slices of k; `None` for the others.
    pub fn split_of(self) -> Option<Step> {
        match self {
            Step::SplitWarpTiled => Some(Step::WarpTiled),
            Step::SplitMmaTiled => Some(Step::MmaTiled),
            Step::SplitTf32 => Some(Step::Tf32),
            _ => None,
        }
    }

    /// Threads per block, the rows x columns of C one block computes, and its dynamic shared memory.
    pub fn shape(self) -> (u32, (u32, u32), u32) {
        match self {
            Step::Tiled => (
                TILED_BLOCK_SIZE * TILED_BLOCK_SIZE,
                (TILED_BLOCK_SIZE, TILED_BLOCK_SIZE),
                0,
            ),
            Step::RegisterBlocked | Step::WideLoads | Step::AsyncCopies => (256, (128, 128), 0),
            // 4 x 2 warps of 32 x 32, two stages in dynamic shared memory.
            Step::TensorCores | Step::HopperTensorCores => (256, (128, 64), dmma_shared_bytes(128, 64)),
            // 2 x 4 warps of 64 x 64, three stages in dynamic shared memory.
            Step::WarpTiled => (256, (128, 256), warp_tiled_shared_bytes(128, 256)),
            // 2 x 2 warps of 64 x 32, three stages of 16 k in doubles; 2 x 4 warps of 64 x 64, three
            // stages of 16 k in floats.
            Step::MmaTiled => (128, (128, 64), dmma_tiled_shared_bytes(128, 64)),
            Step::Tf32 => (256, (128, 256), mma_tiled_shared_bytes::<f32>(128, 256, 16)),
            // Split-K: the step it splits, a block per tile of C and slice of k.
            Step::SplitWarpTiled => Step::WarpTiled.shape(),
            Step::SplitMmaTiled => Step::MmaTiled.shape(),
            Step::SplitTf32 => Step::Tf32.shape(),
            // A producer warpgroup and two consumers, stages of 128 bytes of k (wgmma.rs); step 12 takes
            // narrower tiles on a small C (wgmma::tile).
            Step::WgmmaTf32 | Step::WgmmaBf16 => (wgmma::THREADS, wgmma::TILE, wgmma::SHARED_BYTES),
        }
    }

    /// The launch grid for a C of `rows` x `cols`: blocks along the columns (x) and the rows (y), enough
    /// to cover C with the step's block tiles. (The wgmma steps' persistent blocks walk their tiles,
    /// step 12's narrower ones on a small C, and slices of k: [`wgmma::tile`], [`wgmma::blocks`].)
    pub fn grid(self, rows: u32, cols: u32) -> (u32, u32) {
        let (tile_rows, tile_cols) = self.shape().1;
        (cols.div_ceil(tile_cols), rows.div_ceil(tile_rows))
    }
}

/// Two stages of the A tile (rows x (16 + 4)) and the B tile (16 x (cols + 4)) in doubles, as
/// `DmmaShape::SHARED_BYTES` in mmm_ladder.cu.
fn dmma_shared_bytes(rows: u32, cols: u32) -> u32 {
    const DK: u32 = 16;
    const PAD: u32 = 4;
    2 * (rows * (DK + PAD) + DK * (cols + PAD)) * 8
}

/// Three stages of the A tile, k-major (16 x (rows + 4)), and the B tile (16 x cols) in floats, as
/// `WarpTiling::SHARED_BYTES` in mmm_ladder.cu.
fn warp_tiled_shared_bytes(rows: u32, cols: u32) -> u32 {
    const STAGES: u32 = 3;
    const BK: u32 = 16;
    const PAD: u32 = 4;
    STAGES * (BK * (rows + PAD) + BK * cols) * 4
}

/// Three stages of the A tile, row-major and unpadded (rows x 16), and the B tile (16 x (cols + 2)), in
/// doubles, as `DmmaTiling::SHARED_BYTES` in mmm_ladder.cu (step 7).
fn dmma_tiled_shared_bytes(rows: u32, cols: u32) -> u32 {
    const STAGES: u32 = 3;
    const BK: u32 = 16;
    STAGES * (rows * BK + BK * (cols + 2)) * 8
}

/// Three stages of the A tile, row-major (rows x (depth + 4)), and the B tile (depth x cols, each row
/// 32 bytes longer), of `T`, as `MmaTiling::SHARED_BYTES` in mmm_ladder.cu (step 8).
fn mma_tiled_shared_bytes<T>(rows: u32, cols: u32, depth: u32) -> u32 {
    const STAGES: u32 = 3;
    let size = std::mem::size_of::<T>() as u32;
    STAGES * (rows * (depth + 4) + depth * (cols + 32 / size)) * size
}

/// How deep in k one tile of a split-K step's kernel is (`BK` of steps 6, 7 and 8 in mmm_ladder.cu,
/// 16 for each): slices are whole tiles.
const SPLIT_TILE_DEPTH: u32 = 16;

/// The fewest tiles of k a split-K slice gets: each block fills its pipeline's stages first, and a
/// slice must run long after that for the split to pay.
const MIN_SLICE_TILES: u32 = 8;

/// How a split-K step cuts k for one product: `slices` slabs of C's size, each the partial product
/// over `tiles_per_slice` tiles of k (the last may have fewer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    pub slices: u32,
    pub tiles_per_slice: u32,
}

impl std::fmt::Display for Split {
    /// As the ladder's progress lines say it: "k in 32 slices of 32 tiles".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.slices {
            1 => write!(
                f,
                "one slice (C's tiles fill more than half the GPU, or k is too short to split): the step it splits runs as it is"
            ),
            slices => write!(f, "k in {slices} slices of {} tiles", self.tiles_per_slice),
        }
    }
}

impl Split {
    /// For a C of `blocks` block tiles and a k of `k_tiles` tiles, on `multiprocessors` that each hold
    /// `per_multiprocessor` blocks of the kernel at once (one of steps 9 and 11, two of step 10 on
    /// Hopper): as many slices as fill every multiprocessor's blocks once, none shallower than
    /// [`MIN_SLICE_TILES`]. One slice where C's tiles alone give more than half the multiprocessors a
    /// block (a second slice would find none idle: step 10 at 1024, 128 tiles, cut into 2 slices to
    /// fill the second block of each multiprocessor, ran 0.89x step 7 on an H100), or where k has fewer
    /// than two slices' worth of tiles.
    pub fn choose(blocks: u32, k_tiles: u32, multiprocessors: u32, per_multiprocessor: u32) -> Split {
        let blocks = blocks.max(1);
        let wanted = if 2 * blocks > multiprocessors {
            1
        } else {
            (multiprocessors * per_multiprocessor / blocks).max(1)
        };
        let deepest = (k_tiles / MIN_SLICE_TILES).max(1);
        let tiles_per_slice = k_tiles.div_ceil(wanted.min(deepest)).max(1);
        Split {
            slices: k_tiles.div_ceil(tiles_per_slice).max(1),
            tiles_per_slice,
        }
    }
}

/// The modules the ladder launches from: the slides' mmm (BLOCK_SIZE 32) and the ladder's kernels, and
/// the GPU's architecture, which some steps need to be new enough, and multiprocessors, which split-K
/// fills.
pub struct Ladder {
    tiled: Module,
    ladder: Module,
    /// mmm_wgmma.cu: on an sm_90 GPU its sm_90a build with steps 12 and 13, elsewhere the prep kernels
    /// only.
    wgmma: Module,
    arch: u32,
    multiprocessors: u32,
}

impl Ladder {
    pub fn load(gpu: &Gpu) -> Result<Ladder> {
        Ok(Ladder {
            tiled: load_mmm(gpu, TILED_BLOCK_SIZE)?,
            ladder: gpu.load(&kernels::MMM_LADDER)?,
            wgmma: gpu.load(&kernels::MMM_WGMMA)?,
            arch: gpu.info.arch(),
            multiprocessors: gpu.info.multiprocessors,
        })
    }

    /// The module holding the step's kernel.
    fn module(&self, step: Step) -> &Module {
        match step {
            Step::Tiled => &self.tiled,
            Step::WgmmaTf32 | Step::WgmmaBf16 => &self.wgmma,
            _ => &self.ladder,
        }
    }

    /// The step ready to launch on an `m` x `k` times `k` x `n` product in precision `T`: its kernel
    /// and, for split-K, the slices, the sum's kernel and the partial products' memory (allocated
    /// here, outside the timed launches). A split-K step whose C alone fills the GPU is the step it
    /// splits, as it is. `None` as for [`Ladder::function`].
    pub fn prepare<T: Element>(
        &self,
        step: Step,
        (m, k, n): (usize, usize, usize),
    ) -> Result<Option<StepLaunch<'_, T>>> {
        let Some(function) = self.function::<T>(step)? else {
            return Ok(None);
        };
        let wgmma = match step.operand() {
            Some(operand) => Some(WgmmaLaunch::prepare(
                &self.wgmma,
                operand,
                (m, k, n),
                self.multiprocessors,
                |split| self.slabs::<f32>(split, m * n),
            )?),
            None => None,
        };
        let mut launch = StepLaunch {
            step,
            function,
            split: None,
            wgmma,
            multiprocessors: self.multiprocessors,
        };
        if let (Some(base), Some(split)) = (step.split_of(), self.split(step, (m, k, n))) {
            let Some(slabs) = self.slabs::<T>(split, m * n)? else {
                return self.prepare::<T>(base, (m, k, n)); // one slice: the step it splits
            };
            launch.split = Some(SplitLaunch {
                sizes: (m as i32, k as i32, n as i32),
                split,
                slabs,
            });
        }
        Ok(Some(launch))
    }

    /// Split-K's slabs for `split` of a C of `elements` elements, where it has more than one slice.
    fn slabs<T: Element>(&self, split: Split, elements: usize) -> Result<Option<Slabs<'_, T>>> {
        if split.slices == 1 {
            return Ok(None);
        }
        let sum = check_cuda!(self.ladder.get_function(format!("sum_slices_{}", T::NAME)))?;
        // Poisoned, so that a slab a slice leaves unwritten turns C into NaN, not into old numbers.
        let partial = poisoned_device_buffer::<T>(split.slices as usize * elements)?;
        Ok(Some(Slabs {
            slices: split.slices,
            sum,
            partial,
        }))
    }

    /// How a split-K step cuts k for an `m` x `k` times `k` x `n` product here ([`Split::choose`], with
    /// this GPU's multiprocessors and the blocks of the step's kernel each holds); for steps 12 and 13,
    /// which cut k themselves where C has too few tiles, how they do ([`wgmma::split`]; `None` where
    /// they do not); `None` for the other steps.
    pub fn split(&self, step: Step, (m, k, n): (usize, usize, usize)) -> Option<Split> {
        if let Some(operand) = step.operand() {
            return Some(wgmma::split(operand, (m, k, n), self.multiprocessors)).filter(|split| split.slices > 1);
        }
        step.split_of()?;
        let (x, y) = step.grid(m as u32, n as u32);
        Some(Split::choose(
            x * y,
            (k as u32).div_ceil(SPLIT_TILE_DEPTH),
            self.multiprocessors,
            self.blocks_per_multiprocessor(step),
        ))
    }

    /// How many blocks of the step's kernel one multiprocessor holds at once, as the driver reports
    /// for its threads, registers and dynamic shared memory: step 10's launch bounds ask for two, and
    /// an H100 holds two (two of 74496 bytes are more than an sm_120 multiprocessor's 100 KiB). 1 where
    /// the kernel cannot run here (nor does the step).
    fn blocks_per_multiprocessor(&self, step: Step) -> u32 {
        let function = match step.c_name::<f64>() {
            Some(_) => self.function::<f64>(step),
            None => self.function::<f32>(step),
        };
        function
            .ok()
            .flatten()
            .and_then(|function| resident_blocks(&function, step).ok())
            .map_or(1, |blocks| blocks.max(1))
    }

    /// Why the step's kernel in precision `T` cannot run here ("needs sm_90 (...), this GPU is sm_86"),
    /// or `None` where it can or the step has no kernel in `T`.
    pub fn unavailable<T: Element>(&self, step: Step) -> Option<String> {
        let name = step.c_name::<T>()?;
        step.image().can_run(&name, self.arch).err()
    }

    /// The step's kernel in precision `T`, allowed the dynamic shared memory it launches with; `None`
    /// where the step has no kernel in that precision or cannot run here ([`Ladder::unavailable`]).
    pub fn function<T: Element>(&self, step: Step) -> Result<Option<Function<'_>>> {
        let Some(name) = step.c_name::<T>() else {
            return Ok(None);
        };
        if self.unavailable::<T>(step).is_some() {
            return Ok(None);
        }
        let function = check_cuda!(self.module(step).get_function(&name))?;
        allow_dynamic_shared(&function, step.shape().2)?;
        Ok(Some(function))
    }

    /// Whether the loaded module has the step's kernel in `T` at all: for the tests, which check that a
    /// step the ladder calls unavailable really is missing (or the GPU too old for it).
    pub fn has_kernel<T: Element>(&self, step: Step) -> bool {
        step.c_name::<T>()
            .is_some_and(|name| self.module(step).get_function(&name).is_ok())
    }

    /// The GPU's architecture: 90 for sm_90.
    pub fn arch(&self) -> u32 {
        self.arch
    }
}

/// A and B of one precision on the GPU, C beside them, and the CPU's product that every C is checked
/// against (computed once for all the steps and cuBLAS).
pub struct Operands<T: Element> {
    pub a: Matrix<T>,
    pub b: Matrix<T>,
    pub c: Matrix<T>,
    reference: CpuProduct,
}

impl<T: Element> Operands<T> {
    /// A and B (f64 on the host) converted to `T` and copied to the GPU; C allocated.
    pub fn new(a64: &Matrix<f64>, b64: &Matrix<f64>, random: &mut Random) -> Result<Operands<T>> {
        let mut a: Matrix<T> = a64.convert()?;
        let mut b: Matrix<T> = b64.convert()?;
        a.copy_to_gpu()?;
        b.copy_to_gpu()?;
        let c = Matrix::<T>::new(a.rows(), b.cols())?;
        let reference = CpuProduct::new(&a, &b, random);
        Ok(Operands { a, b, c, reference })
    }

    /// Multiply-adds times two.
    pub fn flops(&self) -> f64 {
        2.0 * (self.a.rows() * self.a.cols() * self.b.cols()) as f64
    }

    /// How C's host copy compares with the CPU's product, judged in `precision`.
    pub fn check(&self, precision: Precision, random: &mut Random) -> ProductCheck {
        precision.judge(self.reference.check(&self.a, &self.b, &self.c, random))
    }
}

impl<T: Gemm> Operands<T> {
    /// cuBLAS's row for `precision` ([`run_library_in`]) into C, and C checked: what the ladder and
    /// the sweep measure the steps against.
    pub fn run_cublas(
        &mut self,
        cublas: &Cublas,
        precision: Precision,
        repetitions: usize,
        random: &mut Random,
    ) -> Result<(Timing, ProductCheck)> {
        let timing = run_library_in(cublas, precision, &self.a, &self.b, &mut self.c, repetitions)?;
        Ok((timing, self.check(precision, random)))
    }
}

/// Poisons C, runs `step` once to warm up and `repetitions` times between events, copies C back.
/// `None` where the step has no kernel in precision `T`.
pub fn run_step<T: Element>(
    ladder: &Ladder,
    step: Step,
    a: &Matrix<T>,
    b: &Matrix<T>,
    c: &mut Matrix<T>,
    repetitions: usize,
) -> Result<Option<Timing>> {
    ensure_product_sizes(a, b, c)?;
    let Some(prepared) = ladder.prepare::<T>(step, (a.rows(), a.cols(), b.cols()))? else {
        return Ok(None);
    };
    let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    c.poison_on_gpu()?;
    let views = (a.view()?, b.view()?, c.view()?);
    let _named = common::timing::observer::program(&format!("{} {}", step.name(), step.precision::<T>()));
    // SAFETY: the views are of a's, b's and c's device copies (sizes checked above), which this
    // function borrows, c mutably, until the stream is synchronized below (or, on an error, until
    // their buffers are freed, which waits for the GPU).
    let timing = time_on_stream(&stream, 1, repetitions, || unsafe { prepared.launch(views, &stream) })?;
    check_cuda!(stream.synchronize())?; // kernel faults show up here
    c.copy_from_gpu()?;
    Ok(Some(timing))
}

/// C = A * B with cuBLAS computing as `math` says, timed like a step (a warm-up, then `repetitions`
/// between events), into C's host copy. cuBLAS is left in its default math.
pub fn run_library<T: Gemm>(
    cublas: &Cublas,
    math: Math,
    a: &Matrix<T>,
    b: &Matrix<T>,
    c: &mut Matrix<T>,
    repetitions: usize,
) -> Result<Timing> {
    ensure_product_sizes(a, b, c)?;
    cublas.use_math(math)?;
    let views = (a.view()?, b.view()?);
    // SAFETY: the views are A's and B's device copies, of their sizes, and C's view is C's; nothing
    // else writes them, and they outlive the work: time_gemm returns only once the device has finished.
    let timing = time_gemm(cublas, library_row::<T>(math), c, repetitions, |c| unsafe {
        cublas.gemm((views.0, views.1, c))
    });
    let reset = cublas.use_math(Math::Default);
    let timing = timing?; // the GEMM's own error first
    reset?;
    Ok(timing)
}

/// cuBLAS's row for `precision`: [`run_library`] in [`library_math`], or for bf16 cublasGemmEx on bf16
/// copies of A and B, rounded on the host before the timed launches: the library's speed on bf16
/// inputs (step 13's time includes its conversions).
pub fn run_library_in<T: Gemm>(
    cublas: &Cublas,
    precision: Precision,
    a: &Matrix<T>,
    b: &Matrix<T>,
    c: &mut Matrix<T>,
    repetitions: usize,
) -> Result<Timing> {
    if precision != Precision::Bf16 {
        return run_library(cublas, library_math(precision), a, b, c, repetitions);
    }
    ensure_product_sizes(a, b, c)?;
    let (a, b) = (Bf16Matrix::new(a)?, Bf16Matrix::new(b)?);
    // SAFETY: C's view is C's device copy, of its sizes, which nothing else writes; A's and B's copies
    // live until after time_gemm, which returns only once the device has finished.
    time_gemm(cublas, BF16_ROW, c, repetitions, |c| unsafe {
        cublas.gemm_bf16(&a, &b, c)
    })
}

/// A is m x k, B k x n and C m x n: the kernels and cuBLAS take k from A and the sizes of C from A
/// and B, and would read or write past a buffer of other sizes.
fn ensure_product_sizes<T: Element>(a: &Matrix<T>, b: &Matrix<T>, c: &Matrix<T>) -> Result<()> {
    anyhow::ensure!(
        a.cols() == b.rows() && c.rows() == a.rows() && c.cols() == b.cols(),
        "C = A * B needs A m x k, B k x n and C m x n, not A {} x {}, B {} x {}, C {} x {}",
        a.rows(),
        a.cols(),
        b.rows(),
        b.cols(),
        c.rows(),
        c.cols()
    );
    Ok(())
}

/// Times `gemm`, one cuBLAS call into C's device copy (given its view), as a step is timed: C poisoned
/// first, a warm-up, `repetitions` between events on a stream of their own; C's host copy after.
fn time_gemm<T: Element>(
    cublas: &Cublas,
    name: &str,
    c: &mut Matrix<T>,
    repetitions: usize,
    gemm: impl Fn(MatrixView<T>) -> Result<()>,
) -> Result<Timing> {
    let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    c.poison_on_gpu()?;
    let view = c.view()?;
    // SAFETY: the stream outlives the GEMMs below: time_on_stream returns only once the device has
    // finished.
    unsafe { cublas.use_stream(&stream) }?;
    let _named = common::timing::observer::program(name);
    let timing = time_on_stream(&stream, 1, repetitions, || gemm(view))?;
    check_cuda!(stream.synchronize())?;
    c.copy_from_gpu()?;
    Ok(timing)
}

/// A step ready to launch ([`Ladder::prepare`]): its kernel, which has already been allowed its
/// dynamic shared memory, for split-K what the split needs, for steps 12 and 13 their prep.
pub struct StepLaunch<'a, T: Element> {
    step: Step,
    function: Function<'a>,
    split: Option<SplitLaunch<'a, T>>,
    wgmma: Option<WgmmaLaunch<'a>>,
    multiprocessors: u32,
}

/// Split-K's part of a [`StepLaunch`]: the slices (more than one) and their slabs.
struct SplitLaunch<'a, T: Element> {
    /// The product's m, k and n, which the slabs and the split were made for.
    sizes: (i32, i32, i32),
    split: Split,
    slabs: Slabs<'a, T>,
}

/// Split-K's partial products: `slices` slabs of C's size, one per slice of k, and sum_slices, the
/// kernel that adds them into C in slice order (steps 9 to 11, and 12 and 13 where they cut k).
pub struct Slabs<'a, T: Element> {
    slices: u32,
    sum: Function<'a>,
    partial: DeviceBuffer<T>,
}

impl<T: Element> Slabs<'_, T> {
    /// The slabs as the split kernels take them: a view of C's size whose slab z starts z x rows x
    /// cols elements on.
    pub fn view(&self, rows: i32, cols: i32) -> MatrixView<T> {
        MatrixView {
            rows,
            cols,
            data: self.partial.as_device_ptr(),
        }
    }

    /// Whether these are `slices` slabs of `count` elements each.
    pub fn holds(&self, slices: u32, count: u64) -> bool {
        self.slices == slices && self.partial.len() as u64 == u64::from(slices) * count
    }

    /// Enqueues C = the sum of the slabs on `stream`, one element per thread, in a grid of at most 16
    /// blocks per multiprocessor that strides over C. `c` must be the C the slabs were made for.
    pub fn add_into(&self, c: MatrixView<T>, multiprocessors: u32, stream: &Stream) -> Result<()> {
        let sum = &self.sum;
        let count = c.rows as u64 * c.cols as u64;
        anyhow::ensure!(
            self.holds(self.slices, count),
            "{} slabs of {} elements in all do not make a C of {} x {}",
            self.slices,
            self.partial.len(),
            c.rows,
            c.cols
        );
        let blocks = count.div_ceil(256).min(u64::from(16 * multiprocessors)) as u32;
        let (partial, slices) = (self.partial.as_device_ptr(), self.slices as i32);
        // __global__ void sum_slices_f64(const double* partial, int slices, MatrixView<double> c), and _f32
        // SAFETY: the signature's types in order; `partial` holds `slices` slabs of C's size (checked
        // above), owned by this struct, which its owner frees only after a synchronize.
        check_cuda!(unsafe { launch!(sum<<<blocks, 256, 0, stream>>>(partial, slices, c)) })?;
        Ok(())
    }
}

impl<T: Element> StepLaunch<'_, T> {
    /// How split-K cuts k, where it does (a split-K step on a C with too few tiles).
    pub fn split(&self) -> Option<Split> {
        let wgmma = || self.wgmma.as_ref().and_then(WgmmaLaunch::split);
        self.split.as_ref().map(|split| split.split).or_else(wgmma)
    }

    /// Enqueues one product C = A * B on `stream` (the views of the sizes the step was prepared for).
    ///
    /// # Safety
    /// `a`, `b` and `c` must point at device memory holding their `rows` x `cols` elements, row-major
    /// (as a `Matrix`'s device copy does), that stays allocated, and that nothing else writes, until
    /// the GPU has finished the launch.
    pub unsafe fn launch(
        &self,
        (a, b, c): (MatrixView<T>, MatrixView<T>, MatrixView<T>),
        stream: &Stream,
    ) -> Result<()> {
        anyhow::ensure!(
            self.split.as_ref().is_none_or(|split| {
                let (m, k, n) = split.sizes;
                (a.rows, a.cols, b.rows, b.cols, c.rows, c.cols) == (m, k, k, n, m, n)
            }),
            "split-K was prepared for other sizes"
        );
        let function = &self.function;
        if self.step == Step::Tiled {
            return launch_mmm(function, a, b, c, TILED_BLOCK_SIZE, stream);
        }
        if let Some(wgmma) = &self.wgmma {
            // SAFETY: this function's contract is WgmmaLaunch::launch's.
            return unsafe { wgmma.launch((a, b, c), stream) };
        }
        let (threads, _, shared) = self.step.shape();
        let (blocks_x, blocks_y) = self.step.grid(c.rows as u32, c.cols as u32);
        let Some(split) = &self.split else {
            let grid = GridSize::xy(blocks_x, blocks_y);
            // __global__ void register_blocked_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c), ...
            // SAFETY: the arguments match the kernel's C signature beside the launch, in type and
            // order, and point into live device buffers as large as the kernel indexes (this
            // function's contract).
            check_cuda!(unsafe { launch!(function<<<grid, threads, shared, stream>>>(a, b, c)) })?;
            return Ok(());
        };
        let Split {
            slices,
            tiles_per_slice,
        } = split.split;
        let grid = GridSize::xyz(blocks_x, blocks_y, slices);
        let slabs = split.slabs.view(c.rows, c.cols);
        // __global__ void mma_tiled_split_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> partial, int tiles_per_slice), ...
        // SAFETY: the arguments match the kernel's C signature, in type and order; a and b are as
        // this function's contract says; `slabs` is the partial products' buffer of `slices` slabs
        // of C's size (made for these sizes, checked above), which this StepLaunch owns and does not
        // free before the GPU is done (its Drop).
        check_cuda!(unsafe {
            launch!(function<<<grid, threads, shared, stream>>>(a, b, slabs, tiles_per_slice as i32))
        })?;
        split.slabs.add_into(c, self.multiprocessors, stream)
    }
}

impl<T: Element> Drop for StepLaunch<'_, T> {
    /// The partial products' memory is freed only once the GPU has finished with it: a launch may
    /// still be running when its StepLaunch goes (the wgmma steps' copies: WgmmaLaunch's Drop).
    fn drop(&mut self) {
        if self.split.is_some() {
            let _ = cust::context::CurrentContext::synchronize();
        }
    }
}

/// cudaFuncSetAttribute(MaxDynamicSharedMemorySize): needed above 48 KiB of dynamic shared memory.
fn allow_dynamic_shared(function: &Function, bytes: u32) -> Result<()> {
    // SAFETY: a loaded function's handle and a plain integer attribute.
    check_cuda!(unsafe {
        raw::cuFuncSetAttribute(
            function.to_raw().cast(),
            raw::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes as i32,
        )
    })?;
    Ok(())
}

/// How cuBLAS computes in one of the ladder's precisions: f32 in TF32 math for TF32 (bf16 has a GEMM of
/// its own: [`run_library_in`]).
pub fn library_math(precision: Precision) -> Math {
    match precision {
        Precision::Tf32 => Math::Tf32,
        Precision::F64 | Precision::F32 | Precision::Bf16 => Math::Default,
    }
}

/// How the ladder's table names cuBLAS's row in `precision`, with matrices of `T`.
pub fn library_name<T: Gemm>(precision: Precision) -> &'static str {
    match precision {
        Precision::Bf16 => BF16_ROW,
        _ => library_row::<T>(library_math(precision)),
    }
}

/// How the ladder's table names cuBLAS's row for matrices of `T` and `math`.
pub fn library_row<T: Gemm>(math: Math) -> &'static str {
    match math {
        Math::Default => T::ROW,
        Math::Tf32 => "cuBLAS SGEMM, TF32 tensor cores (the library)",
    }
}

/// One rung, measured.
#[derive(Debug, Clone)]
pub struct Rung {
    pub step: Step,
    pub precision: Precision,
    pub timing: Timing,
    pub check: ProductCheck,
    /// Multiply-adds times two.
    pub flops: f64,
    pub registers: u32,
    pub shared_bytes: u32,
    /// Blocks a multiprocessor holds at once, and the share of its threads they are.
    pub blocks_per_sm: u32,
    pub occupancy: f64,
}

impl Rung {
    pub fn tflops(&self) -> f64 {
        self.flops / (self.timing.median_ms() * 1e9)
    }
}

/// Registers, shared memory (static and dynamic) and blocks per multiprocessor, from the driver: the
/// code that runs, also where the driver compiled it from PTX (ptxas's report is then an older
/// architecture's).
pub fn resources<T: Element>(gpu: &Gpu, ladder: &Ladder, step: Step) -> Result<(u32, u32, u32, f64)> {
    let (threads, _, dynamic) = step.shape();
    let loaded = ladder.function::<T>(step)?.context("a step that ran has a kernel")?;
    let registers = check_cuda!(loaded.get_attribute(FunctionAttribute::NumRegisters))? as u32;
    let shared = check_cuda!(loaded.get_attribute(FunctionAttribute::SharedMemorySizeBytes))? as u32;
    let blocks = resident_blocks(&loaded, step)?;
    let occupancy = f64::from(blocks * threads) / f64::from(gpu.info.max_threads_per_multiprocessor);
    Ok((registers, shared + dynamic, blocks, occupancy))
}

/// Blocks of `function`, the step's kernel, that one multiprocessor holds at once: the driver's
/// occupancy for the step's threads and dynamic shared memory (the table's column, and what split-K
/// fills).
fn resident_blocks(function: &Function, step: Step) -> Result<u32> {
    let (threads, _, dynamic) = step.shape();
    Ok(check_cuda!(function.max_active_blocks_per_multiprocessor(
        BlockSize::x(threads),
        dynamic as usize
    ))?)
}

/// A line of the ladder's table: a step measured, one this GPU or build cannot run (with the reason),
/// or cuBLAS on the same matrices.
#[derive(Debug, Clone)]
pub enum LadderRow {
    Ran(Rung),
    NotRun {
        step: Step,
        precision: Precision,
        why: String,
    },
    Library {
        name: &'static str,
        precision: Precision,
        timing: Timing,
        check: ProductCheck,
        flops: f64,
    },
}

impl LadderRow {
    /// cuBLAS's TFLOP/s in `precision`, where this row is its.
    fn library_tflops(&self, precision: Precision) -> Option<f64> {
        match self {
            LadderRow::Library {
                precision: p,
                timing,
                flops,
                ..
            } if *p == precision => Some(flops / (timing.median_ms() * 1e9)),
            _ => None,
        }
    }
}

/// The ladder's table: every rung's time, TFLOP/s, its share of cuBLAS's (same precision, where
/// cuBLAS ran), speedup over the rung before, its resources and its check; a step that cannot run
/// here says why in its row.
pub fn format_ladder(rows: &[LadderRow]) -> String {
    let mut table = String::from(
        "| step | precision | GPU time in ms | TFLOP/s | of cuBLAS | speedup over the step before | registers | shared memory | blocks per SM (occupancy) | max rel. error | check |\n\
         |------|-----------|----------------|---------|-----------|------------------------------|-----------|---------------|---------------------------|----------------|-------|\n",
    );
    let verdict = |check: &ProductCheck| if check.passed() { "PASS" } else { "FAIL" };
    for (index, row) in rows.iter().enumerate() {
        let rung = match row {
            LadderRow::Ran(rung) => rung,
            LadderRow::NotRun { step, precision, why } => {
                table.push_str(&format!(
                    "| {} | {precision} | not run: {why} | | | | | | | | - |\n",
                    step.name()
                ));
                continue;
            }
            LadderRow::Library {
                name,
                precision,
                timing,
                check,
                ..
            } => {
                let tflops = row.library_tflops(*precision).unwrap_or_default();
                table.push_str(&format!(
                    "| {name} | {precision} | {:.3} | {tflops:.2} | 100% | - | - | - | - | {:.1e} | {} |\n",
                    timing.median_ms(),
                    check.error,
                    verdict(check)
                ));
                continue;
            }
        };
        let share = rows
            .iter()
            .find_map(|other| other.library_tflops(rung.precision))
            .map_or("-".to_string(), |library| {
                format!("{:.0}%", 100.0 * rung.tflops() / library)
            });
        let before = rows[..index].iter().rev().find_map(|other| match other {
            LadderRow::Ran(other) if other.precision == rung.precision => Some(other),
            _ => None,
        });
        let speedup = before.map_or("-".to_string(), |b| {
            format!("{:.2}x", b.timing.median_ms() / rung.timing.median_ms())
        });
        table.push_str(&format!(
            "| {} | {} | {:.3} | {:.2} | {share} | {speedup} | {} | {} B | {} ({:.0}%) | {:.1e} | {} |\n",
            rung.step.name(),
            rung.precision,
            rung.timing.median_ms(),
            rung.tflops(),
            rung.registers,
            rung.shared_bytes,
            rung.blocks_per_sm,
            100.0 * rung.occupancy,
            rung.check.error,
            verdict(&rung.check),
        ));
    }
    table
}

/// What TF32 costs: the largest error of the fastest step that ran in tf32, bf16, f32 and f64, and
/// TF32's speed against f32's fastest; `None` without a TF32 step in the rows.
pub fn precision_cost(rows: &[LadderRow]) -> Option<String> {
    let fastest = |precision: Precision| {
        rows.iter()
            .filter_map(|row| match row {
                LadderRow::Ran(rung) if rung.precision == precision => Some(rung),
                _ => None,
            })
            .max_by(|x, y| x.tflops().total_cmp(&y.tflops()))
    };
    let tf32 = fastest(Precision::Tf32)?;
    let number = |step: Step| Step::ALL.iter().position(|&s| s == step).unwrap_or_default();
    let mut line = format!(
        "Max rel. error: {:.1e} in tf32 (step {})",
        tf32.check.error,
        number(tf32.step)
    );
    for precision in [Precision::Bf16, Precision::F32, Precision::F64] {
        if let Some(rung) = fastest(precision) {
            line.push_str(&format!(
                ", {:.1e} in {precision} (step {})",
                rung.check.error,
                number(rung.step)
            ));
        }
    }
    if let Some(f32) = fastest(Precision::F32) {
        line.push_str(&format!(
            ": TF32 gives up {:.0}x f32's accuracy for {:.1}x its speed.",
            tf32.check.error / f32.check.error.max(f64::MIN_POSITIVE),
            tf32.tflops() / f32.tflops()
        ));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rung(step: Step, precision: Precision, ms: f64) -> Rung {
        Rung {
            step,
            precision,
            timing: Timing::gpu(vec![ms]),
            check: ProductCheck {
                error: 1e-15,
                worst: (0, 0),
                method: "exact",
                tolerance: 1e-12,
            },
            flops: 2e9,
            registers: 96,
            shared_bytes: 37888,
            blocks_per_sm: 2,
            occupancy: 0.125,
        }
    }

    fn ran(step: Step, precision: Precision, ms: f64) -> LadderRow {
        LadderRow::Ran(rung(step, precision, ms))
    }

    #[test]
    fn every_step_names_its_kernel_and_only_f64_has_tensor_cores() {
        assert_eq!(Step::Tiled.c_name::<f64>().as_deref(), Some("mmm_f64"));
        assert_eq!(Step::AsyncCopies.c_name::<f32>().as_deref(), Some("async_copies_f32"));
        assert_eq!(Step::TensorCores.c_name::<f64>().as_deref(), Some("dmma_m8n8k4_f64"));
        assert_eq!(
            Step::HopperTensorCores.c_name::<f64>().as_deref(),
            Some("dmma_m16n8k4_f64")
        );
        assert_eq!(
            (
                Step::TensorCores.c_name::<f32>(),
                Step::HopperTensorCores.c_name::<f32>()
            ),
            (None, None)
        );
        // Step 6 is f32's: f64 has the tensor cores (steps 4 and 5).
        assert_eq!(Step::WarpTiled.c_name::<f32>().as_deref(), Some("warp_tiled_f32"));
        assert_eq!(Step::WarpTiled.c_name::<f64>(), None);
        assert_eq!(
            kernels::needs("warp_tiled_f32").map(|needs| needs.arch),
            Some(80),
            "cp.async"
        );
        // Step 7 is f64's, on Hopper's m16n8k8; step 8 multiplies f32 matrices in TF32.
        assert_eq!(
            (
                Step::MmaTiled.c_name::<f64>().as_deref(),
                Step::MmaTiled.c_name::<f32>()
            ),
            (Some("mma_tiled_f64"), None)
        );
        assert_eq!(
            (Step::Tf32.c_name::<f32>().as_deref(), Step::Tf32.c_name::<f64>()),
            (Some("mma_tiled_tf32"), None)
        );
        assert_eq!(
            kernels::needs("mma_tiled_f64").map(|needs| needs.arch),
            Some(90),
            "f64 m16n8k8"
        );
        assert_eq!(
            kernels::needs("mma_tiled_tf32").map(|needs| needs.arch),
            Some(80),
            "TF32 mma"
        );
        for step in Step::ALL {
            for name in [step.c_name::<f64>(), step.c_name::<f32>()].into_iter().flatten() {
                // In every build with what it needs (kernels::NEEDS): the newest, or for Hopper's own
                // sm_90a kernels the sm_90 build.
                let needs = kernels::needs(&name);
                for build in step.image().builds {
                    if needs.is_none_or(|needs| needs.met_by(build.arch)) {
                        let report = build.report().unwrap();
                        assert!(
                            report.function(&name).is_some_and(|f| f.is_entry()),
                            "{name} is not in {} for sm_{}",
                            step.image().source,
                            build.arch
                        );
                    }
                }
            }
        }
        // Steps 12 and 13: f32 matrices, Hopper only.
        assert_eq!(
            (
                Step::WgmmaTf32.c_name::<f32>().as_deref(),
                Step::WgmmaBf16.c_name::<f32>().as_deref(),
                Step::WgmmaTf32.c_name::<f64>()
            ),
            (Some("wgmma_tma_tf32"), Some("wgmma_tma_bf16"), None)
        );
        assert_eq!(
            kernels::needs("wgmma_tma_bf16").map(|needs| needs.arch_name()),
            Some("sm_90a".to_string())
        );
    }

    #[test]
    fn no_ladder_kernel_spills_and_each_fits_its_block() {
        for build in kernels::MMM_LADDER.builds {
            let report = build.report().unwrap();
            for step in &Step::ALL[1..] {
                // A kernel missing from an older build is what kernels::NEEDS says; its tests check that.
                for name in [step.c_name::<f64>(), step.c_name::<f32>()].into_iter().flatten() {
                    let Some(function) = report.function(&name) else {
                        continue;
                    };
                    let arch = build.arch;
                    assert_eq!(
                        (function.spill_stores, function.spill_loads),
                        (0, 0),
                        "{name} spills on sm_{arch}"
                    );
                    // 64 Ki registers per multiprocessor must hold at least one block.
                    assert!(
                        function.registers * step.shape().0 <= 65536,
                        "{name} on sm_{arch}: {} registers",
                        function.registers
                    );
                    // The least shared memory a block may have on a GPU that runs this build: 64 KiB
                    // on sm_75; 99 KiB from sm_80 on (an sm_80 build also runs on sm_86 and sm_89,
                    // which have 99 KiB, as has sm_120).
                    let limit = if arch < 80 { 64 * 1024 } else { 99 * 1024 };
                    assert!(
                        function.shared_bytes + step.shape().2 <= limit,
                        "{name} on sm_{arch}: shared memory"
                    );
                }
            }
        }
    }

    /// Step 6's launch: 256 threads, a 128 x 256 tile of C per block (rows x columns), and the three
    /// stages of mmm_ladder.cu's `WarpTiling<128, 256, 16, ...>`: 3 x (16 x (128 + 4) + 16 x 256)
    /// floats.
    #[test]
    fn warp_tiled_launches_256_threads_per_128_x_256_tile_with_three_stages() {
        assert_eq!(Step::WarpTiled.shape(), (256, (128, 256), 74496));
        assert_eq!(74496, 3 * (16 * (128 + 4) + 16 * 256) * 4);
        // More than the 64 KiB an sm_75 block may have (the kernel needs sm_80 anyway), within the
        // 99 KiB of the smallest GPUs that run it (sm_86, sm_89, sm_120).
        assert!(Step::WarpTiled.shape().2 > 64 * 1024 && Step::WarpTiled.shape().2 <= 99 * 1024);
    }

    /// Steps 7 and 8, three stages of 16 k each. Step 7: 128 threads, 128 x 64 tiles, A's rows of 16
    /// doubles (unpadded, swizzled) and B's of 64 + 2, as `DmmaTiling` in mmm_ladder.cu; two blocks
    /// fit an H100's multiprocessor (228 KiB, 1 KiB of it reserved per block). Step 8: 256 threads,
    /// 128 x 256 tiles, A's rows of k + 4 floats and B's of n floats and 32 bytes, as `MmaTiling`.
    /// Both run on sm_120, and step 8 from sm_80: each must fit the 99 KiB of sm_86, sm_89 and sm_120.
    #[test]
    fn the_tensor_core_tiles_and_their_three_stages() {
        assert_eq!(
            Step::MmaTiled.shape(),
            (128, (128, 64), 3 * (128 * 16 + 16 * (64 + 2)) * 8)
        );
        assert_eq!(
            Step::Tf32.shape(),
            (256, (128, 256), 3 * (128 * (16 + 4) + 16 * (256 + 8)) * 4)
        );
        assert_eq!((Step::MmaTiled.shape().2, Step::Tf32.shape().2), (74496, 81408));
        assert!(2 * (Step::MmaTiled.shape().2 + 1024) <= 228 * 1024);
        assert!(Step::MmaTiled.shape().2 <= 99 * 1024 && Step::Tf32.shape().2 <= 99 * 1024);
    }

    #[test]
    fn each_precision_climbs_its_own_steps() {
        use Step::*;
        assert_eq!(
            Step::of_precision::<f64>(Precision::F64),
            [
                Tiled,
                RegisterBlocked,
                WideLoads,
                AsyncCopies,
                TensorCores,
                HopperTensorCores,
                MmaTiled,
                SplitMmaTiled
            ]
        );
        assert_eq!(
            Step::of_precision::<f32>(Precision::F32),
            [
                Tiled,
                RegisterBlocked,
                WideLoads,
                AsyncCopies,
                WarpTiled,
                SplitWarpTiled
            ]
        );
        assert_eq!(Step::of_precision::<f32>(Precision::Tf32), [Tf32, SplitTf32, WgmmaTf32]);
        assert_eq!(Step::of_precision::<f32>(Precision::Bf16), [WgmmaBf16]);
        assert!(Step::of_precision::<f64>(Precision::Tf32).is_empty());
        assert!(Step::of_precision::<f64>(Precision::Bf16).is_empty());
        assert_eq!(
            (WgmmaTf32.precision::<f32>(), WgmmaBf16.precision::<f32>()),
            (Precision::Tf32, Precision::Bf16)
        );
        assert_eq!(
            (
                library_name::<f32>(Precision::Bf16),
                library_name::<f32>(Precision::Tf32)
            ),
            (
                "cuBLAS GemmEx, bf16 inputs, f32 sums (the library)",
                "cuBLAS SGEMM, TF32 tensor cores (the library)"
            )
        );
        assert_eq!(
            (
                Tf32.precision::<f32>(),
                WarpTiled.precision::<f32>(),
                MmaTiled.precision::<f64>()
            ),
            (Precision::Tf32, Precision::F32, Precision::F64)
        );
        assert_eq!(
            (library_math(Precision::Tf32), library_math(Precision::F32)),
            (Math::Tf32, Math::Default)
        );
    }

    /// Steps 12 and 13 come last, numbered as the table and the precision line number them; each step
    /// has the shape of mmm_wgmma.cu: 384 threads, 128 x 256 tiles (step 12's narrower ones on a small
    /// C: wgmma.rs), 192 KiB of stages.
    #[test]
    fn the_wgmma_steps_are_12_and_13_with_the_kernels_shape() {
        assert_eq!(&Step::ALL[12..], [Step::WgmmaTf32, Step::WgmmaBf16]);
        for (index, step) in Step::ALL.into_iter().enumerate() {
            assert!(step.name().starts_with(&format!("{index}. ")), "{}", step.name());
        }
        assert_eq!(Step::WgmmaTf32.name(), "12. wgmma + TMA, warp-specialized (tf32)");
        assert_eq!(Step::WgmmaBf16.name(), "13. wgmma + TMA (bf16)");
        assert_eq!(Step::WgmmaBf16.shape(), (384, (128, 256), 197632));
        assert_eq!(Step::WgmmaTf32.shape(), Step::WgmmaBf16.shape());
        assert_eq!(
            (
                Step::WgmmaTf32.operand(),
                Step::WgmmaBf16.operand(),
                Step::Tf32.operand()
            ),
            (Some(Operand::Tf32), Some(Operand::Bf16), None)
        );
        assert_eq!((Step::WgmmaTf32.split_of(), Step::WgmmaBf16.split_of()), (None, None));
    }

    /// Split-K runs the step it splits, in the same blocks; slices are whole tiles of k.
    #[test]
    fn split_k_steps_split_steps_6_to_8() {
        for (split, base, f64_name, f32_name) in [
            (
                Step::SplitWarpTiled,
                Step::WarpTiled,
                None,
                Some("warp_tiled_split_f32"),
            ),
            (Step::SplitMmaTiled, Step::MmaTiled, Some("mma_tiled_split_f64"), None),
            (Step::SplitTf32, Step::Tf32, None, Some("mma_tiled_split_tf32")),
        ] {
            assert_eq!((split.split_of(), split.shape()), (Some(base), base.shape()));
            assert_eq!(split.precision::<f32>(), base.precision::<f32>());
            assert_eq!(split.c_name::<f64>().as_deref(), f64_name);
            assert_eq!(split.c_name::<f32>().as_deref(), f32_name);
            let needs = |name: Option<String>| kernels::needs(&name.unwrap()).map(|needs| needs.arch);
            assert_eq!(
                needs(split.c_name::<f64>().or(split.c_name::<f32>())),
                needs(base.c_name::<f64>().or(base.c_name::<f32>()))
            );
        }
        // BK of WarpTiling, DmmaTiling and MmaTiling as the ladder instantiates them.
        assert_eq!(SPLIT_TILE_DEPTH, 16);
        assert_eq!(Step::WarpTiled.split_of(), None);
    }

    /// Enough slices to fill every multiprocessor's blocks once, none shallower than MIN_SLICE_TILES
    /// tiles, none empty; one slice where C's tiles give more than half the multiprocessors a block, or
    /// k is short.
    #[test]
    fn split_k_fills_the_multiprocessors_once_with_slices_deep_enough() {
        let split = |slices, tiles_per_slice| Split {
            slices,
            tiles_per_slice,
        };
        // 256 x 8192 x 256 on 132 multiprocessors: in steps 6's and 8's 128 x 256 x 16 tiles, one block
        // per multiprocessor, 2 blocks and 512 tiles of k; in step 7's 128 x 64 x 16, two blocks per
        // multiprocessor, 8 blocks.
        assert_eq!(Split::choose(2, 512, 132, 1), split(64, 8));
        assert_eq!(Split::choose(8, 512, 132, 2), split(32, 16));
        // 1024 cubed: 128 blocks of step 7, one on each multiprocessor already; 32 of tf32's.
        assert_eq!(Split::choose(128, 64, 132, 2), split(1, 64));
        assert_eq!(Split::choose(32, 64, 132, 1), split(4, 16));
        // 64 blocks leave half the multiprocessors idle: slices for both blocks of each.
        assert_eq!(Split::choose(64, 128, 132, 1), split(2, 64));
        assert_eq!(Split::choose(64, 128, 132, 2), split(4, 32));
        // C fills the GPU: one slice, the whole of k.
        assert_eq!(Split::choose(1024, 512, 132, 2), split(1, 512));
        assert_eq!(Split::choose(132, 7, 132, 1), split(1, 7));
        // k too short to split (fewer than two slices of MIN_SLICE_TILES).
        assert_eq!(Split::choose(1, 15, 132, 2), split(1, 15));
        assert_eq!(Split::choose(1, 16, 132, 1), split(2, 8));
        for per_multiprocessor in [1, 2] {
            for blocks in [1, 3, 4, 64, 66, 67, 131, 200] {
                for k_tiles in [1, 2, 9, 17, 100, 1000, 1025] {
                    let Split {
                        slices,
                        tiles_per_slice,
                    } = Split::choose(blocks, k_tiles, 132, per_multiprocessor);
                    assert!(slices * tiles_per_slice >= k_tiles, "k covered");
                    assert!((slices - 1) * tiles_per_slice < k_tiles, "no slice empty");
                    assert!(slices == 1 || tiles_per_slice >= MIN_SLICE_TILES);
                    assert!(slices == 1 || slices * blocks <= 132 * per_multiprocessor, "one wave");
                    assert!(slices == 1 || 2 * blocks <= 132, "only where multiprocessors are idle");
                }
            }
        }
    }

    /// The line under the table: each precision's last step's error, and TF32's price against f32.
    #[test]
    fn the_price_of_tf32_is_its_error_against_f32s_and_its_speed() {
        let with_error = |step, precision, ms, error| {
            let mut rung = rung(step, precision, ms);
            rung.check.error = error;
            LadderRow::Ran(rung)
        };
        let rows = [
            with_error(Step::MmaTiled, Precision::F64, 4.0, 1e-16),
            with_error(Step::AsyncCopies, Precision::F32, 4.0, 1e-6),
            with_error(Step::WarpTiled, Precision::F32, 3.0, 2e-7),
            with_error(Step::Tf32, Precision::Tf32, 1.0, 3e-4),
        ];
        assert_eq!(
            precision_cost(&rows).as_deref(),
            Some("Max rel. error: 3.0e-4 in tf32 (step 8), 2.0e-7 in f32 (step 6), 1.0e-16 in f64 (step 7): TF32 gives up 1500x f32's accuracy for 3.0x its speed.")
        );
        assert_eq!(precision_cost(&rows[..3]), None, "no TF32, no line");
        let with_bf16 = [
            with_error(Step::WgmmaTf32, Precision::Tf32, 1.0, 2e-4),
            with_error(Step::WgmmaBf16, Precision::Bf16, 0.5, 2e-3),
        ];
        assert_eq!(
            precision_cost(&with_bf16).as_deref(),
            Some("Max rel. error: 2.0e-4 in tf32 (step 12), 2.0e-3 in bf16 (step 13)")
        );
        assert_eq!(
            precision_cost(&rows[3..]).as_deref(),
            Some("Max rel. error: 3.0e-4 in tf32 (step 8)")
        );
    }

    /// The grid covers C with whole tiles, however C's sizes fall: blocks along the columns (x), then
    /// the rows (y).
    #[test]
    fn the_grid_covers_c_at_awkward_sizes() {
        assert_eq!(Step::WarpTiled.grid(4096, 4096), (16, 32));
        assert_eq!(Step::WarpTiled.grid(1000, 1531), (6, 8));
        assert_eq!(Step::WarpTiled.grid(1, 1), (1, 1));
        assert_eq!(Step::WarpTiled.grid(129, 257), (2, 2));
        assert_eq!(Step::WarpTiled.grid(128, 256), (1, 1));
        assert_eq!(Step::AsyncCopies.grid(4096, 4096), (32, 32));
        assert_eq!(Step::TensorCores.grid(129, 257), (5, 2));
        for step in &Step::ALL[1..] {
            let (_, (tile_rows, tile_cols), _) = step.shape();
            for (rows, cols) in [(1, 1), (1000, 1531), (129, 33), (4096, 4097)] {
                let (x, y) = step.grid(rows, cols);
                assert!(
                    x * tile_cols >= cols && (x - 1) * tile_cols < cols,
                    "{} at {rows} x {cols}",
                    step.name()
                );
                assert!(
                    y * tile_rows >= rows && (y - 1) * tile_rows < rows,
                    "{} at {rows} x {cols}",
                    step.name()
                );
            }
        }
    }

    #[test]
    fn table_compares_each_step_with_the_one_before_in_its_precision() {
        let table = format_ladder(&[
            ran(Step::Tiled, Precision::F64, 40.0),
            ran(Step::RegisterBlocked, Precision::F64, 10.0),
            ran(Step::Tiled, Precision::F32, 20.0),
            LadderRow::NotRun {
                step: Step::HopperTensorCores,
                precision: Precision::F64,
                why: "needs sm_90 (FP64 mma m16n8k4, new with Hopper), this GPU is sm_86".into(),
            },
            ran(Step::TensorCores, Precision::F64, 5.0),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[2].starts_with(
                "| 0. mmm, tiled (the slides, BLOCK_SIZE 32) | f64 | 40.000 | 0.05 | - | - | 96 | 37888 B | 2 (12%) |"
            ),
            "{}",
            lines[2]
        );
        assert!(lines[3].contains("| 10.000 | 0.20 | - | 4.00x |"), "{}", lines[3]);
        assert!(lines[4].contains("| f32 | 20.000 | 0.10 | - | - |"), "{}", lines[4]);
        assert_eq!(lines[5], "| 5. Hopper's mma m16n8k4 (DMMA.16) | f64 | not run: needs sm_90 (FP64 mma m16n8k4, new with Hopper), this GPU is sm_86 | | | | | | | | - |");
        assert!(lines[6].contains("| 5.000 | 0.40 | - | 2.00x |"), "{}", lines[6]);
    }

    /// Issue 24: cuBLAS's row, and each step's share of it in its own precision only.
    #[test]
    fn table_gives_each_step_its_share_of_cublas_in_its_precision() {
        let check = ProductCheck {
            error: 2e-16,
            worst: (0, 0),
            method: "exact",
            tolerance: 1e-12,
        };
        let library = LadderRow::Library {
            name: "cuBLAS DGEMM",
            precision: Precision::F64,
            timing: Timing::gpu(vec![4.0]),
            check,
            flops: 2e9,
        };
        let table = format_ladder(&[
            ran(Step::Tiled, Precision::F64, 40.0),
            ran(Step::Tiled, Precision::F32, 20.0),
            library,
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[2].contains("| 40.000 | 0.05 | 10% | - |"), "{}", lines[2]);
        assert!(lines[3].contains("| 20.000 | 0.10 | - | - |"), "{}", lines[3]);
        assert_eq!(
            lines[4],
            "| cuBLAS DGEMM | f64 | 4.000 | 0.50 | 100% | - | - | - | - | 2.0e-16 | PASS |"
        );
    }
}

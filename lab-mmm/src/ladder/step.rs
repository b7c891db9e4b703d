//! The ladder's rungs ([`Step`]): each step's name, kernel, precision and launch shape (threads, tile
//! of C, dynamic shared memory, grid), with the shared memory of the kernels' stages as
//! `kernels/cuda/mmm_ladder.cu` sizes them. It depends on the kernels' images, the slides' mmm and
//! [`crate::wgmma`] (the shape of steps 12 to 18), on nothing else of the ladder: the rest of the ladder
//! depends on it.

use kernels::KernelImage;
use matrix::mmm::MmmKernel;
use matrix::Element;

use crate::wgmma::{self, WgmmaGemm};
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
    /// Split-K: step 6 over slices of k, then a sum of the slices (f32 only; [`Split`](crate::split_k::Split)).
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
    /// Step 13's GEMM alone, on bf16 copies made before the timed launches as cuBLAS's bf16 row's are,
    /// each stage given back as soon as it is read, the grid no wider than its rounds of tiles need.
    WgmmaBf16Once,
    /// Step 14 in clusters of two blocks that share B^T's tiles, multicast by TMA.
    WgmmaBf16Pair,
    /// Step 14 storing C through shared memory by TMA, while the next tile's multiply-adds run.
    WgmmaBf16Stored,
    /// Step 12 with no transpose of B on a large C: C^T on 256 x 128 tiles, B's tile read through
    /// registers two k steps at a time, C stored as step 16 does (precision "tf32").
    WgmmaTf32Wide,
    /// Step 16 with the last, partial round of tiles shared out along k where it would leave the
    /// multiprocessors idle long (stream-K, one block per multiprocessor): a block ends a tile with
    /// the partial sums of the blocks that ran its later stages.
    WgmmaBf16StreamK,
}

/// The slides' BLOCK_SIZE for the first rung: the faster of the two on an H200.
pub const TILED_BLOCK_SIZE: u32 = 32;

impl Step {
    pub const ALL: [Step; 19] = [
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
        Step::WgmmaBf16Once,
        Step::WgmmaBf16Pair,
        Step::WgmmaBf16Stored,
        Step::WgmmaTf32Wide,
        Step::WgmmaBf16StreamK,
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
            Step::WgmmaBf16Once => "14. converted before timing, as cuBLAS's (bf16)",
            Step::WgmmaBf16Pair => "15. clusters of 2, B^T multicast by TMA (bf16)",
            Step::WgmmaBf16Stored => "16. C stored by TMA, overlapping the next tile (bf16)",
            Step::WgmmaTf32Wide => "17. no transpose: B through registers, C^T tiles (tf32)",
            Step::WgmmaBf16StreamK => "18. stream-K: the last round's tiles shared out along k (bf16)",
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
            // The wgmma steps: mmm_wgmma.cu's GEMMs, on f32 matrices only.
            _ => {
                return self
                    .gemm()
                    .filter(|_| T::NAME == "f32")
                    .map(|gemm| gemm.kernel().to_string())
            }
        };
        Some(format!("{stem}_{}", T::NAME))
    }

    /// The precision the step computes in with matrices of `T`: `T`'s own, but TF32 for steps 8, 11,
    /// 12 and 17 and bf16 for steps 13 to 16 and 18.
    pub fn precision<T: Element>(self) -> Precision {
        match (self, T::NAME) {
            (Step::Tf32 | Step::SplitTf32 | Step::WgmmaTf32 | Step::WgmmaTf32Wide, _) => Precision::Tf32,
            (
                Step::WgmmaBf16
                | Step::WgmmaBf16Once
                | Step::WgmmaBf16Pair
                | Step::WgmmaBf16Stored
                | Step::WgmmaBf16StreamK,
                _,
            ) => Precision::Bf16,
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
            _ if self.gemm().is_some() => &kernels::MMM_WGMMA,
            _ => &kernels::MMM_LADDER,
        }
    }

    /// Which of mmm_wgmma.cu's GEMMs a wgmma step runs; `None` for the other steps.
    pub fn gemm(self) -> Option<WgmmaGemm> {
        match self {
            Step::WgmmaTf32 => Some(WgmmaGemm::Tf32),
            Step::WgmmaBf16 => Some(WgmmaGemm::Bf16),
            Step::WgmmaBf16Once => Some(WgmmaGemm::Bf16Once),
            Step::WgmmaBf16Pair => Some(WgmmaGemm::Bf16Pair),
            Step::WgmmaBf16Stored => Some(WgmmaGemm::Bf16Stored),
            Step::WgmmaTf32Wide => Some(WgmmaGemm::Tf32Wide),
            Step::WgmmaBf16StreamK => Some(WgmmaGemm::Bf16StreamK),
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
            // A producer warpgroup and two consumers, stages of 128 bytes of k (wgmma.rs); steps 12 and
            // 17 take narrower tiles on a small C (wgmma::tile).
            _ => {
                let gemm = self.gemm().expect("every other step is a wgmma step, with a GEMM");
                (wgmma::THREADS, gemm.large_tile(), gemm.shared_bytes())
            }
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
pub(super) const SPLIT_TILE_DEPTH: u32 = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cublas::Math;
    use crate::ladder::library::{library_math, library_name};

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
        // Steps 12 to 18: f32 matrices, Hopper only.
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
        assert_eq!(
            Step::of_precision::<f32>(Precision::Tf32),
            [Tf32, SplitTf32, WgmmaTf32, WgmmaTf32Wide]
        );
        assert_eq!(
            Step::of_precision::<f32>(Precision::Bf16),
            [
                WgmmaBf16,
                WgmmaBf16Once,
                WgmmaBf16Pair,
                WgmmaBf16Stored,
                WgmmaBf16StreamK
            ]
        );
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

    /// Steps 12 to 18 come last, numbered as the table and the precision line number them; each step
    /// has the shape of mmm_wgmma.cu: 384 threads, 128 x 256 tiles (step 17's 256 x 128; steps 12
    /// and 17's narrower ones on a small C: wgmma.rs), 192 KiB of stages (and steps 16 to 18's
    /// store buffers).
    #[test]
    fn the_wgmma_steps_are_12_to_18_with_the_kernels_shape() {
        assert_eq!(
            &Step::ALL[12..],
            [
                Step::WgmmaTf32,
                Step::WgmmaBf16,
                Step::WgmmaBf16Once,
                Step::WgmmaBf16Pair,
                Step::WgmmaBf16Stored,
                Step::WgmmaTf32Wide,
                Step::WgmmaBf16StreamK
            ]
        );
        for (index, step) in Step::ALL.into_iter().enumerate() {
            assert!(step.name().starts_with(&format!("{index}. ")), "{}", step.name());
        }
        assert_eq!(Step::WgmmaTf32.name(), "12. wgmma + TMA, warp-specialized (tf32)");
        assert_eq!(Step::WgmmaBf16.name(), "13. wgmma + TMA (bf16)");
        assert_eq!(Step::WgmmaBf16.shape(), (384, (128, 256), 197632));
        assert_eq!(Step::WgmmaTf32.shape(), Step::WgmmaBf16.shape());
        assert_eq!(Step::WgmmaBf16Pair.shape(), Step::WgmmaBf16.shape());
        // Step 16: two 8 KiB store buffers per consumer past the stages, 225 KiB of the 227.
        assert_eq!(Step::WgmmaBf16Stored.shape(), (384, (128, 256), 197632 + 32768));
        assert_eq!(Step::WgmmaTf32Wide.shape(), (384, (256, 128), 197632 + 32768));
        assert_eq!(Step::WgmmaBf16StreamK.shape(), Step::WgmmaBf16Stored.shape());
        assert_eq!(
            (
                Step::WgmmaBf16StreamK.c_name::<f32>().as_deref(),
                Step::WgmmaBf16StreamK.c_name::<f64>(),
                Step::WgmmaBf16StreamK.gemm()
            ),
            (Some("wgmma_tma_bf16_streamk"), None, Some(WgmmaGemm::Bf16StreamK))
        );
        assert_eq!(
            (
                Step::WgmmaTf32Wide.c_name::<f32>().as_deref(),
                Step::WgmmaTf32Wide.c_name::<f64>(),
                Step::WgmmaTf32Wide.precision::<f32>()
            ),
            (Some("wgmma_tma_tf32_wide"), None, Precision::Tf32)
        );
        assert_eq!(
            (
                Step::WgmmaTf32.gemm(),
                Step::WgmmaBf16.gemm(),
                Step::WgmmaBf16Pair.gemm(),
                Step::Tf32.gemm()
            ),
            (
                Some(WgmmaGemm::Tf32),
                Some(WgmmaGemm::Bf16),
                Some(WgmmaGemm::Bf16Pair),
                None
            )
        );
        assert_eq!(
            (Step::WgmmaTf32.split_of(), Step::WgmmaBf16Once.split_of()),
            (None, None)
        );
        assert_eq!(
            Step::WgmmaBf16Once.c_name::<f32>().as_deref(),
            Some("wgmma_tma_bf16_once")
        );
        assert_eq!(Step::WgmmaBf16Pair.c_name::<f64>(), None);
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
}

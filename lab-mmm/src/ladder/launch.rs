//! Loading and launching the ladder's steps: the modules and each step's kernel, allowed its dynamic
//! shared memory ([`Ladder`]); a step prepared for one product's sizes and launched as its family
//! launches ([`StepLaunch`]: the slides' mmm, one kernel of the ladder's, split-K's slices and their
//! sum, or wgmma's prep and GEMM); one step timed ([`run_step`]); and what the driver says the kernel
//! takes ([`resources`]). It depends on the steps (`super::step`), the operands' sizes
//! (`super::operands`), [`crate::split_k`] and [`crate::wgmma`]; not on the table or cuBLAS.

use anyhow::{Context as _, Result};
use common::gpu::Gpu;
use common::timing::{time_on_stream, Timing};
use common::{check_cuda, raw};
use cust::function::{BlockSize, Function, FunctionAttribute, GridSize};
use cust::launch;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use matrix::mmm::{launch_mmm, load_mmm};
use matrix::{Element, Matrix, MatrixView};

use super::operands::ensure_product_sizes;
use super::step::{Step, SPLIT_TILE_DEPTH, TILED_BLOCK_SIZE};
use crate::split_k::{Slabs, Split};
use crate::wgmma::{self, WgmmaLaunch};

/// The modules the ladder launches from: the slides' mmm (BLOCK_SIZE 32) and the ladder's kernels, and
/// the GPU's architecture, which some steps need to be new enough, and multiprocessors, which split-K
/// fills.
pub struct Ladder {
    tiled: Module,
    ladder: Module,
    /// mmm_wgmma.cu: on an sm_90 GPU its sm_90a build with steps 12 to 18, elsewhere the prep kernels
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
            _ if step.gemm().is_some() => &self.wgmma,
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
        let wgmma = match step.gemm() {
            Some(gemm) => Some(WgmmaLaunch::prepare(
                &self.wgmma,
                gemm,
                (m, k, n),
                self.multiprocessors,
                |split| Slabs::new(&self.ladder, split, m * n),
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
            let Some(slabs) = Slabs::<T>::new(&self.ladder, split, m * n)? else {
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

    /// How a split-K step cuts k for an `m` x `k` times `k` x `n` product here ([`Split::choose`], with
    /// this GPU's multiprocessors and the blocks of the step's kernel each holds); for steps 12 to 18,
    /// which cut k themselves where C has too few tiles, how they do ([`wgmma::split`]; `None` where
    /// they do not); `None` for the other steps.
    pub fn split(&self, step: Step, (m, k, n): (usize, usize, usize)) -> Option<Split> {
        if let Some(gemm) = step.gemm() {
            return Some(wgmma::split(gemm, (m, k, n), self.multiprocessors)).filter(|split| split.slices > 1);
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
    unsafe { prepared.convert((views.0, views.1), &stream) }?;
    // SAFETY: as for the conversion just above.
    let timing = time_on_stream(&stream, 1, repetitions, || unsafe { prepared.launch(views, &stream) })?;
    check_cuda!(stream.synchronize())?; // kernel faults show up here
    c.copy_from_gpu()?;
    Ok(Some(timing))
}

/// A step ready to launch ([`Ladder::prepare`]): its kernel, which has already been allowed its
/// dynamic shared memory, for split-K what the split needs, for steps 12 to 18 their prep.
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

impl<T: Element> StepLaunch<'_, T> {
    /// How split-K cuts k, where it does (a split-K step on a C with too few tiles).
    pub fn split(&self) -> Option<Split> {
        let wgmma = || self.wgmma.as_ref().and_then(WgmmaLaunch::split);
        self.split.as_ref().map(|split| split.split).or_else(wgmma)
    }

    /// Enqueues what a step does once before its timed launches: steps 14 to 16 and 18's conversion of A
    /// and B ([`WgmmaLaunch::convert`]), which their launches then multiply; nothing for the others.
    ///
    /// # Safety
    /// As for [`StepLaunch::launch`], for `a` and `b`.
    pub unsafe fn convert(&self, (a, b): (MatrixView<T>, MatrixView<T>), stream: &Stream) -> Result<()> {
        match &self.wgmma {
            // SAFETY: this function's contract is WgmmaLaunch::convert's.
            Some(wgmma) => unsafe { wgmma.convert((a, b), stream) },
            None => Ok(()),
        }
    }

    /// Enqueues one product C = A * B on `stream` (the views of the sizes the step was prepared for;
    /// steps 14 to 16 and 18 multiply what [`StepLaunch::convert`] made of A and B).
    ///
    /// # Safety
    /// `a`, `b` and `c` must point at device memory holding their `rows` x `cols` elements, row-major
    /// (as a `Matrix`'s device copy does), that stays allocated, and that nothing else writes, until
    /// the GPU has finished the launch. No other launch of this `StepLaunch` may run at the same time
    /// (on another stream): step 18's partial sums and counts are its own, one launch's.
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

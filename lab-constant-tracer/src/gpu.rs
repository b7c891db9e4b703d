//! The tracer's GPU side: the spheres copied into the module's `__constant__` symbol and into a global
//! buffer, and the three kernels launched and timed.

use anyhow::{ensure, Result};
use common::check_cuda;
use common::timing::{time_on_stream_after, Timing};
use common::verify::Poison as _;
use cust::function::{BlockSize, GridSize};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use grading::guard::{Guarded, Trespass};

use crate::scene::{check_count, Sphere, View};

/// Threads per block are 16 x 16 pixels.
const TILE: u32 = 16;

/// Where a kernel reads the spheres from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// `__constant__` memory, the slide's way, any count.
    Constant,
    /// A global-memory buffer, same code.
    Global,
    /// `__constant__` memory with the count fixed at compile time (`trace_constant_fixed_<N>`).
    ConstantFixed(u32),
}

impl Variant {
    pub fn name(self) -> String {
        match self {
            Variant::Constant => "constant".to_string(),
            Variant::Global => "global".to_string(),
            Variant::ConstantFixed(n) => format!("constant, {n} fixed"),
        }
    }

    pub fn kernel_name(self) -> String {
        match self {
            Variant::Constant => "trace_constant".to_string(),
            Variant::Global => "trace_global".to_string(),
            Variant::ConstantFixed(n) => format!("trace_constant_fixed_{n}"),
        }
    }

    /// The variants that can render `count` spheres.
    pub fn all_for(count: usize) -> Vec<Variant> {
        let mut variants = vec![Variant::Constant, Variant::Global];
        if let Some(&n) = kernels::TRACER_FIXED_COUNTS.iter().find(|&&n| n as usize == count) {
            variants.push(Variant::ConstantFixed(n));
        }
        variants
    }
}

/// The whole `sphere_storage` symbol as Rust sees it: `Module::get_global` checks that the sizes agree.
type SphereStorage = [Sphere; kernels::MAX_SPHERES];

/// `cudaMemcpyToSymbol(sphere_storage, host_spheres, ...)`: the spheres into constant memory (the rest
/// of the storage zeroed).
pub fn copy_to_constant(module: &Module, spheres: &[Sphere]) -> Result<()> {
    check_count(spheres.len())?;
    let mut storage: Box<SphereStorage> = Box::new([Sphere::default(); kernels::MAX_SPHERES]);
    storage[..spheres.len()].copy_from_slice(spheres);
    let mut symbol = check_cuda!(module.get_global::<SphereStorage>(c"sphere_storage"))?;
    check_cuda!(symbol.copy_from(&*storage))?;
    Ok(())
}

/// `cudaMemcpyFromSymbol`: the first `count` spheres back out of constant memory.
pub fn copy_from_constant(module: &Module, count: usize) -> Result<Vec<Sphere>> {
    check_count(count)?;
    let symbol = check_cuda!(module.get_global::<SphereStorage>(c"sphere_storage"))?;
    let mut storage: Box<SphereStorage> = Box::new([Sphere::default(); kernels::MAX_SPHERES]);
    check_cuda!(symbol.copy_to(&mut *storage))?;
    Ok(storage[..count].to_vec())
}

/// The device buffers of one scene: the spheres in global memory and the image (with guard zones
/// around it, which `--check` reads).
pub struct DeviceScene {
    pub spheres: DeviceBuffer<Sphere>,
    pub count: usize,
    pub image: Guarded<u32>,
    pub view: View,
}

impl DeviceScene {
    /// Copies the spheres to constant memory and to a global buffer, and allocates the image.
    pub fn new(module: &Module, spheres: &[Sphere], view: View) -> Result<DeviceScene> {
        copy_to_constant(module, spheres)?;
        Ok(DeviceScene {
            spheres: check_cuda!(DeviceBuffer::from_slice(spheres))?,
            count: spheres.len(),
            image: Guarded::new(view.pixels())?,
            view,
        })
    }

    /// Poisons the image, renders it with `variant` (once to warm up, then `repetitions` times between
    /// events) and copies it back.
    pub fn render(&mut self, module: &Module, variant: Variant, repetitions: usize) -> Result<(Vec<u32>, Timing)> {
        self.render_poisoned(module, variant, repetitions, u32::POISON_WORD)
    }

    /// Whether anything was written outside the image, in the guard zones around it.
    pub fn trespass(&self) -> Result<Option<Trespass>> {
        self.image.trespass()
    }

    /// Poisons the image on the GPU: after our own timed renders (issue 39), so that no image of ours
    /// is left there for a student's kernel to find.
    pub fn clear(&mut self) -> Result<()> {
        self.image.fill(u32::POISON_WORD)
    }

    /// [`DeviceScene::render`] with the image poisoned with `poison` before every launch.
    pub fn render_poisoned(
        &mut self,
        module: &Module,
        variant: Variant,
        repetitions: usize,
        poison: u32,
    ) -> Result<(Vec<u32>, Timing)> {
        self.render_runs(module, variant, repetitions, poison, |_| Ok(()))
    }

    /// One timed render of `spheres` from `module`'s constant memory after a warm-up render of
    /// `warm_up` (as many spheres, another scene), each copied into constant memory just before its
    /// launch: a timed launch on fresh inputs (issue 61) that no launch before it rendered, so a
    /// kernel cannot render in the warm-up and replay the image.
    pub fn render_after(
        &mut self,
        module: &Module,
        warm_up: &[Sphere],
        spheres: &[Sphere],
        poison: u32,
    ) -> Result<(Vec<u32>, Timing)> {
        ensure!(
            warm_up.len() == self.count && spheres.len() == self.count,
            "scenes of {} and {} spheres where this one has {}",
            warm_up.len(),
            spheres.len(),
            self.count
        );
        self.render_runs(module, Variant::Constant, 1, poison, |launch| {
            copy_to_constant(module, if launch == 0 { warm_up } else { spheres })
        })
    }

    /// The renders of [`DeviceScene::render_poisoned`], `before(launch)` run ahead of each launch
    /// (0 for the warm-up) after the image is poisoned, outside the timed window. A synchronous copy
    /// there waits for the launch before it: the timing stream blocks on the legacy default stream.
    fn render_runs(
        &mut self,
        module: &Module,
        variant: Variant,
        repetitions: usize,
        poison: u32,
        mut before: impl FnMut(usize) -> Result<()>,
    ) -> Result<(Vec<u32>, Timing)> {
        if let Variant::ConstantFixed(n) = variant {
            ensure!(
                n as usize == self.count,
                "trace_constant_fixed_{n} renders {n} spheres, not {}",
                self.count
            );
        }
        let trace = check_cuda!(module.get_function(variant.kernel_name()))?;
        let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
        let grid = GridSize::xy(
            (self.view.width as u32).div_ceil(TILE),
            (self.view.height as u32).div_ceil(TILE),
        );
        let block = BlockSize::xy(TILE, TILE);
        let (spheres, count, image, view) = (
            self.spheres.as_device_ptr(),
            self.count as i32,
            self.image.as_device_ptr(),
            self.view,
        );
        // Every launch, the warm-up's too, starts from a poisoned image (issue 39).
        let target = &mut self.image;
        let mut launches = 0;
        let timing = time_on_stream_after(
            &stream,
            1,
            repetitions,
            || {
                target.fill(poison)?;
                before(launches)?;
                launches += 1;
                Ok(())
            },
            || {
                match variant {
                    // __global__ void trace_constant(int count, unsigned int* image, View view)
                    Variant::Constant => {
                        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and
                        // order, and point into live device buffers as large as the kernel indexes.
                        check_cuda!(unsafe { launch!(trace<<<grid, block, 0, stream>>>(count, image, view)) })
                    }
                    // __global__ void trace_global(const Sphere* spheres, int count, unsigned int* image, View view)
                    Variant::Global => {
                        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and
                        // order, and point into live device buffers as large as the kernel indexes.
                        check_cuda!(unsafe { launch!(trace<<<grid, block, 0, stream>>>(spheres, count, image, view)) })
                    }
                    // __global__ void trace_constant_fixed_N(unsigned int* image, View view)
                    Variant::ConstantFixed(_) => {
                        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and
                        // order, and point into live device buffers as large as the kernel indexes.
                        check_cuda!(unsafe { launch!(trace<<<grid, block, 0, stream>>>(image, view)) })
                    }
                }?;
                Ok(())
            },
        )?;
        check_cuda!(stream.synchronize())?;
        Ok((self.image.read()?, timing))
    }
}

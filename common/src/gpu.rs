//! Opening the GPU: driver, device, context, and the modules the labs load.

use anyhow::{ensure, Context as _, Result};
use cust::context::{Context, CurrentContext};
use cust::device::Device;
use cust::module::Module;
use cust::CudaFlags;
use kernels::KernelImage;

use crate::check_cuda;
use crate::device_info::DeviceInfo;

/// The GPU a lab runs on, with its context current on this thread for as long as this lives.
pub struct Gpu {
    pub device: Device,
    pub info: DeviceInfo,
    // Dropped last: modules and buffers must go before the context that owns them.
    context: Context,
}

impl Gpu {
    /// Initializes the driver and makes device `ordinal` current (a new context on it).
    pub fn open(ordinal: u32) -> Result<Gpu> {
        let count = count()?;
        ensure!(ordinal < count, "GPU {ordinal} does not exist: this machine has {count}");
        let device = check_cuda!(Device::get_device(ordinal))?;
        let context = check_cuda!(Context::new(device))?;
        let info = DeviceInfo::query(device, ordinal)?;
        Ok(Gpu { device, info, context })
    }

    /// Makes this GPU's context current on this thread (the runtime's cudaSetDevice), so that what
    /// follows allocates, copies and launches on this GPU: for work spread over several.
    pub fn make_current(&self) -> Result<()> {
        Ok(check_cuda!(CurrentContext::set_current(&self.context))?)
    }

    /// Loads an embedded kernel image (fatbin or cubin) into this GPU's context.
    pub fn load(&self, kernel: &KernelImage) -> Result<Module> {
        load_image(kernel)
    }

    /// Refuses, before allocating, work whose device buffers would not fit in free GPU memory.
    pub fn ensure_fits(&self, bytes: u64, what: &str) -> Result<()> {
        let (free, _total) = check_cuda!(cust::memory::mem_get_info())?;
        ensure!(
            bytes <= free as u64,
            "{what} needs {} of GPU memory, but {} has {} free",
            crate::format_bytes(bytes),
            self.info.name,
            crate::format_bytes(free as u64)
        );
        Ok(())
    }
}

/// How many GPUs this machine has (initializing the driver). Without a GPU or a driver this is the
/// error the user sees, so it says so plainly.
pub fn count() -> Result<u32> {
    check_cuda!(cust::init(CudaFlags::empty())).context("no usable CUDA GPU (this lab needs an NVIDIA GPU and its driver)")?;
    Ok(check_cuda!(Device::num_devices())?)
}

/// Loads an embedded kernel image (fatbin or cubin) into the current context.
pub fn load_image(kernel: &KernelImage) -> Result<Module> {
    let module = if kernel.linked_with_device_runtime {
        check_cuda!(Module::from_cubin(kernel.image, &[]))
    } else {
        check_cuda!(Module::from_fatbin(kernel.image, &[]))
    };
    module.with_context(|| format!("loading {} (built for {})", kernel.source, kernels::TARGET_ARCH))
}

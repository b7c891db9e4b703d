//! Opening the GPU: driver, device, context, and the modules the labs load.

use anyhow::{bail, ensure, Context as _, Result};
use std::ffi::CString;
use std::time::{Duration, Instant};

use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::event::{Event, EventFlags, EventStatus};
use cust::module::Module;
use cust::stream::Stream;
use cust::CudaFlags;
use kernels::{ArchImage, Code, KernelImage};

use crate::device_info::DeviceInfo;
use crate::{check_cuda, raw};

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
        let _part = crate::phases::enter_part("driver and context");
        let count = count()?;
        ensure!(
            ordinal < count,
            "GPU {ordinal} does not exist: this machine has {count}"
        );
        let device = check_cuda!(Device::get_device(ordinal))?;
        let context = new_context(device)?;
        let info = DeviceInfo::query(device, ordinal)?;
        Ok(Gpu { device, info, context })
    }

    /// Makes this GPU's context current on this thread (the runtime's cudaSetDevice), so that what
    /// follows allocates, copies and launches on this GPU: for work spread over several.
    pub fn make_current(&self) -> Result<()> {
        Ok(check_cuda!(CurrentContext::set_current(&self.context))?)
    }

    /// Waits for everything on this GPU's context: an error a kernel left in it (an illegal address,
    /// a trap) shows here, and stays for every later call.
    pub fn synchronize(&self) -> Result<()> {
        self.make_current()?;
        Ok(check_cuda!(CurrentContext::synchronize())?)
    }

    /// Loads a kernel image into this GPU's context: the build this GPU runs (see [`load_image`]).
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

/// Waits for everything enqueued on `stream` so far, for at most `limit`. Work that is still running
/// then is taken to be stuck (a kernel that never ends, a device runtime that stalls), and the lab
/// ends at once with `what` in its error ([`crate::cli::exit_now`]): a plain synchronize would wait
/// for ever, and so would the destructors of the buffers that work uses.
pub fn wait_or_give_up(stream: &Stream, limit: Duration, what: &str) -> Result<()> {
    let done = check_cuda!(Event::new(EventFlags::DISABLE_TIMING))?;
    check_cuda!(done.record(stream))?;
    let start = Instant::now();
    while check_cuda!(done.query())? == EventStatus::NotReady {
        if start.elapsed() > limit {
            crate::cli::exit_now(&format!(
                "{what} did not finish within {} s; stopped",
                limit.as_secs_f64()
            ));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// cust's `Context::new` (the device's primary context, made current), failing with the driver's own
/// code: cust 0.3.2 reports codes its `CudaError` lacks as `UnknownError`, among them
/// `CUDA_ERROR_DEVICE_UNAVAILABLE` (46), what a shared GPU in exclusive-process mode that another
/// process holds returns (issue 30). So the context is retained here first by a raw call that keeps the
/// code; cust's retain then only adds a reference to it, and ours is given back.
fn new_context(device: Device) -> Result<Context> {
    let mut handle = std::ptr::null_mut();
    // SAFETY: the driver writes one context handle; the device is one cuDeviceGet returned.
    check_cuda!(unsafe { raw::cuDevicePrimaryCtxRetain(&mut handle, device.as_raw()) })?;
    let context = check_cuda!(Context::new(device));
    // SAFETY: gives back the one reference retained above, whether or not cust's retain succeeded; the
    // context lives on with cust's reference, which its `Context` releases when dropped.
    let released = check_cuda!(unsafe { raw::cuDevicePrimaryCtxRelease(device.as_raw()) });
    let context = context?;
    released?;
    Ok(context)
}

/// Gives device `printf` `bytes` of FIFO in the current context (`cudaLimitPrintfFifoSize`), before
/// any kernel of it runs: once the FIFO is full, every further `printf` waits for room.
pub fn set_printf_room(bytes: usize) -> Result<()> {
    check_cuda!(CurrentContext::set_resource_limit(
        cust::context::ResourceLimit::PrintfFifoSize,
        bytes
    ))?;
    Ok(())
}

/// How many GPUs this machine has (initializing the driver). Without a GPU or a driver this is the
/// error the user sees, so it says so plainly, with the driver's own code (cuInit through `raw`, not
/// `cust::init`, which reports the codes it does not know, like 803, as unknown).
pub fn count() -> Result<u32> {
    // SAFETY: cuInit takes flags only; 0 is the one value defined.
    if let Err(err) = check_cuda!(unsafe { raw::cuInit(0) }) {
        // The machine's state, not a bug of ours: the driver's name and words for it, without the
        // call and our source location that other CUDA errors carry.
        bail!(
            "no usable CUDA GPU (this lab needs an NVIDIA GPU and its driver): {} ({}): {}",
            err.name(),
            err.code,
            err.text()
        );
    }
    Ok(check_cuda!(Device::num_devices())?)
}

/// The architecture of the current context's GPU: 86 for compute capability 8.6.
pub fn current_arch() -> Result<u32> {
    let device = check_cuda!(CurrentContext::get_device())?;
    arch_of(device)
}

fn arch_of(device: Device) -> Result<u32> {
    let major = check_cuda!(device.get_attribute(DeviceAttribute::ComputeCapabilityMajor))?;
    let minor = check_cuda!(device.get_attribute(DeviceAttribute::ComputeCapabilityMinor))?;
    Ok((major * 10 + minor) as u32)
}

/// The architecture of GPU 0 (the one the labs with a student's kernel run on), without opening a
/// context; `None` without a GPU or a driver.
pub fn first_gpu_arch() -> Option<u32> {
    cust::init(CudaFlags::empty()).ok()?;
    arch_of(Device::get_device(0).ok()?).ok()
}

/// Whether the kernels of GPU 0 can read and write the host's pageable memory
/// (`CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`: HMM or ATS), and so the memory of the process that
/// launched them, not only what it mapped for them; true where it cannot be told.
pub fn reaches_pageable_memory() -> bool {
    let access = || {
        cust::init(CudaFlags::empty()).ok()?;
        Device::get_device(0)
            .ok()?
            .get_attribute(DeviceAttribute::PageableMemoryAccess)
            .ok()
    };
    access().is_none_or(|access| access != 0)
}

/// Loads a kernel image into the current context: the build this GPU runs ([`KernelImage::code_for`]),
/// as machine code, or as PTX the driver compiles (linked with the device runtime here first where the
/// kernels launch kernels, since linked code carries no PTX).
pub fn load_image(kernel: &KernelImage) -> Result<Module> {
    let _part = crate::phases::enter_part("module loading");
    let code = kernel.code_or_error(current_arch()?).map_err(anyhow::Error::msg)?;
    let module = match code {
        Code::Ptx(build) if kernel.linked_with_device_runtime => link_with_device_runtime(kernel, build),
        Code::Machine(build) if kernel.linked_with_device_runtime => {
            Ok(check_cuda!(Module::from_cubin(build.image, &[]))?)
        }
        Code::Machine(build) | Code::Ptx(build) => Ok(check_cuda!(Module::from_fatbin(build.image, &[]))?),
    };
    module.with_context(|| format!("loading {} ({})", kernel.source, code.describe()))
}

/// cuLinkCreate, the relocatable PTX and libcudadevrt.a in, cuLinkComplete, and the linked cubin loaded:
/// what `nvcc -dlink -lcudadevrt` did at build time for the architectures built, done for this GPU.
fn link_with_device_runtime(kernel: &KernelImage, build: &ArchImage) -> Result<Module> {
    let ptx = build
        .relocatable_ptx
        .context("a linked image runs as PTX only with its relocatable PTX")?;
    let library = kernels::runtime::device_runtime_library().with_context(|| {
        format!(
            "{} launches kernels from the GPU; to run its compute_{} PTX on this newer GPU it must be linked with \
             libcudadevrt.a from a CUDA toolkit, and none was found ({})",
            kernel.source,
            build.arch,
            kernels::nvcc::HOW_TO_GET_NVCC
        )
    })?;
    let library = CString::new(library.display().to_string()).context("the library's path has a NUL byte")?;
    let ptx = CString::new(ptx).context("the PTX has a NUL byte")?;
    let link = raw::Link::create()?;
    link.add_ptx(&ptx)?;
    link.add_library(&library)?;
    let cubin = link.complete()?;
    Ok(check_cuda!(Module::from_cubin(cubin, &[]))?)
}

/// Empties the L2 cache before a timed run: a memset over twice its size. Runs that stream more than
/// the L2 holds would otherwise find part of their data there from the run before.
pub struct Flush {
    buffer: cust::memory::DeviceBuffer<u32>,
}

impl Flush {
    pub fn new(l2_bytes: u32) -> Result<Flush> {
        Ok(Flush {
            buffer: crate::verify::poisoned_device_buffer::<u32>((2 * l2_bytes as usize / 4).max(1))?,
        })
    }

    /// Enqueues the memset on `stream`, ahead of the run's start event. The host does not wait for it,
    /// so the run's launch is queued behind the event and no launch latency falls between the events.
    pub fn run(&self, stream: &Stream) -> Result<()> {
        // SAFETY: the whole buffer, in 32-bit words, on a live stream.
        Ok(check_cuda!(unsafe {
            raw::cuMemsetD32Async(
                self.buffer.as_device_ptr().as_raw(),
                0,
                self.buffer.len(),
                stream.as_inner().cast(),
            )
        })?)
    }
}

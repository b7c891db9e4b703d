//! What the labs print about the GPU before they start, and the limits they check flags against.

use std::fmt;

use anyhow::Result;
use cust::device::{Device, DeviceAttribute};

use crate::{check_cuda, raw};

/// The device properties the labs use (cudaGetDeviceProperties, read attribute by attribute).
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub ordinal: u32,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub multiprocessors: u32,
    pub total_memory: u64,
    pub l2_bytes: u32,
    pub registers_per_block: u32,
    pub registers_per_multiprocessor: u32,
    pub shared_per_block: u32,
    pub shared_per_block_optin: u32,
    pub shared_per_multiprocessor: u32,
    pub max_threads_per_block: u32,
    pub max_threads_per_multiprocessor: u32,
    pub max_blocks_per_multiprocessor: u32,
    pub max_grid_x: u32,
    pub max_grid_y: u32,
    pub memory_clock_khz: u32,
    pub memory_bus_width_bits: u32,
    pub total_constant_memory: u32,
    pub warp_size: u32,
    pub unified_addressing: bool,
    pub integrated: bool,
    pub can_map_host_memory: bool,
    pub async_engines: u32,
    pub concurrent_kernels: bool,
}

impl DeviceInfo {
    pub fn query(device: Device, ordinal: u32) -> Result<DeviceInfo> {
        let get = |attribute| -> Result<u32> { Ok(check_cuda!(device.get_attribute(attribute))? as u32) };
        // Attributes newer than cust's bindings.
        let get_raw = |attribute| -> Result<u32> {
            let mut value = 0;
            // SAFETY: the driver writes one int; `device` is a valid ordinal from Device::get_device.
            check_cuda!(unsafe { raw::cuDeviceGetAttribute(&mut value, attribute, device.as_raw()) })?;
            Ok(value as u32)
        };
        Ok(DeviceInfo {
            ordinal,
            name: check_cuda!(device.name())?,
            compute_capability: (
                get(DeviceAttribute::ComputeCapabilityMajor)? as i32,
                get(DeviceAttribute::ComputeCapabilityMinor)? as i32,
            ),
            multiprocessors: get(DeviceAttribute::MultiprocessorCount)?,
            total_memory: check_cuda!(device.total_memory())? as u64,
            l2_bytes: get(DeviceAttribute::L2CacheSize)?,
            registers_per_block: get(DeviceAttribute::MaxRegistersPerBlock)?,
            registers_per_multiprocessor: get(DeviceAttribute::MaxRegistersPerMultiprocessor)?,
            shared_per_block: get(DeviceAttribute::MaxSharedMemoryPerBlock)?,
            shared_per_block_optin: get_raw(raw::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            shared_per_multiprocessor: get(DeviceAttribute::MaxSharedMemoryPerMultiprocessor)?,
            max_threads_per_block: get(DeviceAttribute::MaxThreadsPerBlock)?,
            max_threads_per_multiprocessor: get(DeviceAttribute::MaxThreadsPerMultiprocessor)?,
            max_blocks_per_multiprocessor: get_raw(raw::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
            max_grid_x: get(DeviceAttribute::MaxGridDimX)?,
            max_grid_y: get(DeviceAttribute::MaxGridDimY)?,
            memory_clock_khz: get(DeviceAttribute::MemoryClockRate)?,
            memory_bus_width_bits: get(DeviceAttribute::GlobalMemoryBusWidth)?,
            total_constant_memory: get(DeviceAttribute::TotalConstantMemory)?,
            warp_size: get(DeviceAttribute::WarpSize)?,
            unified_addressing: get(DeviceAttribute::UnifiedAddressing)? != 0,
            integrated: get(DeviceAttribute::Integrated)? != 0,
            can_map_host_memory: get(DeviceAttribute::CanMapHostMemory)? != 0,
            async_engines: get(DeviceAttribute::AsyncEngineCount)?,
            concurrent_kernels: get(DeviceAttribute::ConcurrentKernels)? != 0,
        })
    }
}

impl DeviceInfo {
    /// The architecture as the compilers name it: 86 for compute capability 8.6 (sm_86).
    pub fn arch(&self) -> u32 {
        (self.compute_capability.0 * 10 + self.compute_capability.1) as u32
    }

    /// Peak device-memory bandwidth in bytes/s from the memory clock and bus width (double data rate),
    /// the figure the slides' bandwidth bounds start from.
    pub fn peak_bandwidth(&self) -> f64 {
        2.0 * f64::from(self.memory_clock_khz) * 1000.0 * f64::from(self.memory_bus_width_bits) / 8.0
    }
}

/// The header every lab prints first, so each output says which GPU its numbers come from.
impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.compute_capability;
        writeln!(
            f,
            "Device {}: {}, compute capability {major}.{minor}, {} multiprocessors, {} memory, {} L2",
            self.ordinal,
            self.name,
            self.multiprocessors,
            crate::format_bytes(self.total_memory),
            crate::format_bytes(self.l2_bytes.into()),
        )?;
        writeln!(
            f,
            "  per block: {} threads, {} registers, {} shared memory ({} opt-in); {} constant memory",
            self.max_threads_per_block,
            self.registers_per_block,
            crate::format_bytes(self.shared_per_block.into()),
            crate::format_bytes(self.shared_per_block_optin.into()),
            crate::format_bytes(self.total_constant_memory.into()),
        )?;
        write!(f, "  {}", kernels::build_summary(self.arch()))
    }
}

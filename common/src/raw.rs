//! Driver API calls that cust 0.3.2 does not wrap, declared here with plain `i32` results (cust's
//! bindings type `CUresult` as a Rust enum from CUDA 11.4, which a newer driver's code would break).
//! Check each call with [`check_cuda!`](crate::check_cuda).

use std::ffi::{c_int, c_void};

/// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`: shared memory a block may have after
/// `cuFuncSetAttribute` raises its limit (227 KiB on Hopper).
pub const CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
/// `CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR` (32 on Hopper).
pub const CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: c_int = 106;

/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: dynamic shared memory a kernel may be launched
/// with; above 48 KiB it must be raised first (cudaFuncSetAttribute).
pub const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;

extern "C" {
    /// `CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev)`
    pub fn cuDeviceGetAttribute(value: *mut c_int, attribute: c_int, device: c_int) -> c_int;
    /// `CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)`
    pub fn cuFuncSetAttribute(function: *mut c_void, attribute: c_int, value: c_int) -> c_int;
}

/// `CU_MEMHOSTALLOC_PORTABLE`: pinned for every context, not just the one that allocated it.
pub const CU_MEMHOSTALLOC_PORTABLE: u32 = 0x01;
/// `CU_MEMHOSTALLOC_DEVICEMAP`: mapped into the device's address space (cudaHostAllocMapped).
pub const CU_MEMHOSTALLOC_DEVICEMAP: u32 = 0x02;
/// `CU_MEMHOSTALLOC_WRITECOMBINED`: write-combined: fast for the GPU to read over the bus, very slow
/// for the CPU to read.
pub const CU_MEMHOSTALLOC_WRITECOMBINED: u32 = 0x04;
/// `CU_MEMHOSTREGISTER_DEVICEMAP`: registered memory mapped for the device too.
pub const CU_MEMHOSTREGISTER_DEVICEMAP: u32 = 0x02;

extern "C" {
    /// `CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags)` (cudaHostAlloc)
    pub fn cuMemHostAlloc(pointer: *mut *mut c_void, bytes: usize, flags: u32) -> c_int;
    /// `CUresult cuMemFreeHost(void* p)` (cudaFreeHost)
    pub fn cuMemFreeHost(pointer: *mut c_void) -> c_int;
    /// `CUresult cuMemHostGetDevicePointer(CUdeviceptr* pdptr, void* p, unsigned int Flags)`
    /// (cudaHostGetDevicePointer; `_v2` is the name the header maps it to)
    #[link_name = "cuMemHostGetDevicePointer_v2"]
    pub fn cuMemHostGetDevicePointer(device_pointer: *mut u64, pointer: *mut c_void, flags: u32) -> c_int;
    /// `CUresult cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags)` (cudaHostRegister)
    #[link_name = "cuMemHostRegister_v2"]
    pub fn cuMemHostRegister(pointer: *mut c_void, bytes: usize, flags: u32) -> c_int;
    /// `CUresult cuMemHostUnregister(void* p)` (cudaHostUnregister)
    pub fn cuMemHostUnregister(pointer: *mut c_void) -> c_int;
    /// `CUresult cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N)` (cudaMemset with a
    /// 32-bit word; cust has it only for bytemuck's Pod types)
    #[link_name = "cuMemsetD32_v2"]
    pub fn cuMemsetD32(device_pointer: u64, value: u32, words: usize) -> c_int;
}

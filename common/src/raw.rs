//! Driver API calls that cust 0.3.2 does not wrap, declared here with plain `i32` results (cust's
//! bindings type `CUresult` as a Rust enum from CUDA 11.4, which a newer driver's code would break).
//! Check each call with [`check_cuda!`](crate::check_cuda).

use std::ffi::c_int;

/// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`: shared memory a block may have after
/// `cuFuncSetAttribute` raises its limit (227 KiB on Hopper).
pub const CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
/// `CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR` (32 on Hopper).
pub const CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: c_int = 106;

extern "C" {
    /// `CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev)`
    pub fn cuDeviceGetAttribute(value: *mut c_int, attribute: c_int, device: c_int) -> c_int;
}

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
    /// `CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)`
    /// (cudaMemsetAsync with a 32-bit word): enqueued on the stream, the host does not wait.
    pub fn cuMemsetD32Async(device_pointer: u64, value: u32, words: usize, stream: *mut c_void) -> c_int;
}

/// `CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`: the percentage of the unified L1 / shared
/// memory a kernel would like as shared memory (cudaFuncAttributePreferredSharedMemoryCarveout), the
/// successor of cudaFuncSetCacheConfig; -1 is no preference, 0 the most L1, 100 the most shared memory.
pub const CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: c_int = 9;

/// `CU_FUNC_CACHE_PREFER_NONE`: cudaFuncSetCacheConfig's default, no preference.
pub const CU_FUNC_CACHE_PREFER_NONE: c_int = 0x00;
/// `CU_FUNC_CACHE_PREFER_SHARED`: more shared memory, less L1.
pub const CU_FUNC_CACHE_PREFER_SHARED: c_int = 0x01;
/// `CU_FUNC_CACHE_PREFER_L1`: more L1, less shared memory.
pub const CU_FUNC_CACHE_PREFER_L1: c_int = 0x02;
/// `CU_FUNC_CACHE_PREFER_EQUAL`: as much of each.
pub const CU_FUNC_CACHE_PREFER_EQUAL: c_int = 0x03;

/// `CU_MEMORYTYPE_HOST`, for [`Memcpy2D`].
pub const CU_MEMORYTYPE_HOST: u32 = 0x01;
/// `CU_MEMORYTYPE_DEVICE`, for [`Memcpy2D`].
pub const CU_MEMORYTYPE_DEVICE: u32 = 0x02;

/// `CUDA_MEMCPY2D`: a copy of `height` rows of `width_bytes` each, rows `*_pitch` bytes apart
/// (cudaMemcpy2D). Arrays are not used here, so their handles stay null.
#[repr(C)]
#[derive(Debug)]
pub struct Memcpy2D {
    pub src_x_bytes: usize,
    pub src_y: usize,
    pub src_memory_type: u32,
    pub src_host: *const c_void,
    pub src_device: u64,
    pub src_array: *mut c_void,
    pub src_pitch: usize,
    pub dst_x_bytes: usize,
    pub dst_y: usize,
    pub dst_memory_type: u32,
    pub dst_host: *mut c_void,
    pub dst_device: u64,
    pub dst_array: *mut c_void,
    pub dst_pitch: usize,
    pub width_bytes: usize,
    pub height: usize,
}

impl Memcpy2D {
    /// `height` rows of `width_bytes` from device memory at `source` (rows `source_pitch` apart) into
    /// `destination` on the host, packed (rows `width_bytes` apart).
    pub fn device_to_host(source: u64, source_pitch: usize, destination: *mut c_void, width_bytes: usize, height: usize) -> Memcpy2D {
        Memcpy2D {
            src_x_bytes: 0,
            src_y: 0,
            src_memory_type: CU_MEMORYTYPE_DEVICE,
            src_host: std::ptr::null(),
            src_device: source,
            src_array: std::ptr::null_mut(),
            src_pitch: source_pitch,
            dst_x_bytes: 0,
            dst_y: 0,
            dst_memory_type: CU_MEMORYTYPE_HOST,
            dst_host: destination,
            dst_device: 0,
            dst_array: std::ptr::null_mut(),
            dst_pitch: width_bytes,
            width_bytes,
            height,
        }
    }
}

/// `CU_RESOURCE_TYPE_LINEAR`: a texture over plain device memory.
pub const CU_RESOURCE_TYPE_LINEAR: u32 = 0x02;
/// `CU_AD_FORMAT_FLOAT`: 32-bit float elements.
pub const CU_AD_FORMAT_FLOAT: u32 = 0x20;

/// `CUDA_RESOURCE_DESC` with its union spelled as the `linear` member (device pointer, format,
/// channels, bytes) padded to the union's 128 bytes.
#[repr(C)]
pub struct ResourceDesc {
    pub resource_type: u32,
    pub device_pointer: u64,
    pub format: u32,
    pub channels: u32,
    pub bytes: usize,
    pub reserved: [u8; 128 - 24],
    pub flags: u32,
}

/// `CUDA_TEXTURE_DESC`; all zeros is what `tex1Dfetch` of whole elements needs (point filtering,
/// element coordinates, no flags).
#[repr(C)]
#[derive(Default)]
pub struct TextureDesc {
    pub address_mode: [u32; 3],
    pub filter_mode: u32,
    pub flags: u32,
    pub max_anisotropy: u32,
    pub mipmap_filter_mode: u32,
    pub mipmap_level_bias: f32,
    pub min_mipmap_level_clamp: f32,
    pub max_mipmap_level_clamp: f32,
    pub border_color: [f32; 4],
    pub reserved: [i32; 12],
}

/// `CUDA_ERROR_INVALID_VALUE`: what `cuFuncGetParamInfo` answers past the last parameter.
pub const CUDA_ERROR_INVALID_VALUE: c_int = 1;

/// `CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset,
/// size_t* paramSize)`: where a kernel's parameter lies and how big it is.
pub type FuncGetParamInfo = unsafe extern "C" fn(function: *mut c_void, index: usize, offset: *mut usize, size: *mut usize) -> c_int;

/// `cuFuncGetParamInfo`, from drivers of CUDA 12.4 on, looked up when called (`cuGetProcAddress`), so
/// the labs still link against an older libcuda (CI's); `None` from a driver without it.
pub fn func_get_param_info() -> Option<FuncGetParamInfo> {
    let mut pointer: *mut c_void = std::ptr::null_mut();
    let mut found = 0;
    // SAFETY: a NUL-terminated name and two out-parameters; the driver is initialized by then.
    let status = unsafe { cuGetProcAddress(c"cuFuncGetParamInfo".as_ptr(), &mut pointer, 12040, 0, &mut found) };
    // SAFETY: a non-null pointer the driver returned for this name has this signature (cuda.h).
    (status == 0 && !pointer.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, FuncGetParamInfo>(pointer) })
}

extern "C" {
    /// `CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
    /// CUdriverProcAddressQueryResult* symbolStatus)`
    #[link_name = "cuGetProcAddress_v2"]
    fn cuGetProcAddress(symbol: *const std::ffi::c_char, pointer: *mut *mut c_void, cuda_version: c_int, flags: u64, status: *mut c_int) -> c_int;
    /// `CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)` (cudaFuncSetCacheConfig)
    pub fn cuFuncSetCacheConfig(function: *mut c_void, config: c_int) -> c_int;
    /// `CUresult cuMemcpy2D(const CUDA_MEMCPY2D* pCopy)` (cudaMemcpy2D)
    #[link_name = "cuMemcpy2D_v2"]
    pub fn cuMemcpy2D(copy: *const Memcpy2D) -> c_int;
    /// `CUresult cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
    /// const CUDA_TEXTURE_DESC* pTexDesc, const CUDA_RESOURCE_VIEW_DESC* pResViewDesc)`
    /// (cudaCreateTextureObject)
    pub fn cuTexObjectCreate(texture: *mut u64, resource: *const ResourceDesc, texture_desc: *const TextureDesc, view: *const c_void) -> c_int;
    /// `CUresult cuTexObjectDestroy(CUtexObject texObject)` (cudaDestroyTextureObject)
    pub fn cuTexObjectDestroy(texture: u64) -> c_int;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_have_the_sizes_of_cuda_h() {
        // sizeof(CUDA_MEMCPY2D), sizeof(CUDA_RESOURCE_DESC), sizeof(CUDA_TEXTURE_DESC) on x86-64.
        assert_eq!(std::mem::size_of::<Memcpy2D>(), 128);
        assert_eq!(std::mem::size_of::<ResourceDesc>(), 144);
        assert_eq!(std::mem::offset_of!(ResourceDesc, device_pointer), 8);
        assert_eq!(std::mem::offset_of!(ResourceDesc, flags), 136);
        assert_eq!(std::mem::size_of::<TextureDesc>(), 104);
    }
}

//! Driver API calls that cust 0.3.2 does not wrap, or whose failure cust would report wrongly, declared
//! here with plain `i32` results: cust's `CudaError` names only part of CUDA 11.4's codes and turns every
//! other code into `UnknownError` (999), while these keep the driver's own code for
//! [`check_cuda!`](crate::check_cuda) to name (issue 30). Check each call with it.

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
    /// `CUresult cuInit(unsigned int Flags)` (what `cust::init` calls): starting the driver fails with
    /// codes cust does not know, such as `CUDA_ERROR_SYSTEM_DRIVER_MISMATCH` (803) after a driver update
    /// without a reboot.
    pub fn cuInit(flags: u32) -> c_int;
    /// `CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev)` (what cust's `Context::new`
    /// calls): fails with `CUDA_ERROR_DEVICE_UNAVAILABLE` (46), which cust does not know, on a GPU in
    /// exclusive-process mode that another process holds.
    pub fn cuDevicePrimaryCtxRetain(context: *mut *mut c_void, device: c_int) -> c_int;
    /// `CUresult cuDevicePrimaryCtxRelease(CUdevice dev)` (`_v2` is the name the header maps it to)
    #[link_name = "cuDevicePrimaryCtxRelease_v2"]
    pub fn cuDevicePrimaryCtxRelease(device: c_int) -> c_int;
}

extern "C" {
    /// `CUresult cuCtxAttach(CUcontext* pctx, unsigned int flags)`: deprecated ("should not be used",
    /// cuda.h 13.0) but still there; adds one to the current context's usage count and returns it.
    pub fn cuCtxAttach(context: *mut *mut c_void, flags: u32) -> c_int;
    /// `CUresult cuCtxDetach(CUcontext ctx)`: deprecated likewise; takes one off the usage count of
    /// `ctx`, which must be current, and destroys the context when it reaches zero.
    pub fn cuCtxDetach(context: *mut c_void) -> c_int;
}

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
/// `CU_MEMHOSTREGISTER_PORTABLE`: registered memory pinned for every context (cudaHostRegisterPortable).
pub const CU_MEMHOSTREGISTER_PORTABLE: u32 = 0x01;
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
    pub fn device_to_host(
        source: u64,
        source_pitch: usize,
        destination: *mut c_void,
        width_bytes: usize,
        height: usize,
    ) -> Memcpy2D {
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

extern "C" {
    /// `CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)` (cudaFuncSetCacheConfig)
    pub fn cuFuncSetCacheConfig(function: *mut c_void, config: c_int) -> c_int;
    /// `CUresult cuCtxSetCacheConfig(CUfunc_cache config)` (cudaDeviceSetCacheConfig): the current
    /// context's preference, for the kernels that state none of their own.
    pub fn cuCtxSetCacheConfig(config: c_int) -> c_int;
    /// `CUresult cuMemcpy2D(const CUDA_MEMCPY2D* pCopy)` (cudaMemcpy2D)
    #[link_name = "cuMemcpy2D_v2"]
    pub fn cuMemcpy2D(copy: *const Memcpy2D) -> c_int;
    /// `CUresult cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
    /// const CUDA_TEXTURE_DESC* pTexDesc, const CUDA_RESOURCE_VIEW_DESC* pResViewDesc)`
    /// (cudaCreateTextureObject)
    pub fn cuTexObjectCreate(
        texture: *mut u64,
        resource: *const ResourceDesc,
        texture_desc: *const TextureDesc,
        view: *const c_void,
    ) -> c_int;
    /// `CUresult cuTexObjectDestroy(CUtexObject texObject)` (cudaDestroyTextureObject)
    pub fn cuTexObjectDestroy(texture: u64) -> c_int;
}

/// `CUjitInputType`: what a piece handed to the linker is.
const CU_JIT_INPUT_PTX: c_int = 1;
/// An archive of host objects with device code in them, such as libcudadevrt.a.
const CU_JIT_INPUT_LIBRARY: c_int = 4;
/// `CUjit_option`s for the linker's error log: the buffer and its size.
const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
const LINK_LOG_BYTES: usize = 4096;

extern "C" {
    /// `CUresult cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues,
    /// CUlinkState* stateOut)`
    #[link_name = "cuLinkCreate_v2"]
    fn cuLinkCreate(
        options_count: u32,
        options: *mut c_int,
        values: *mut *mut c_void,
        state: *mut *mut c_void,
    ) -> c_int;
    /// `CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size,
    /// const char* name, unsigned int numOptions, CUjit_option* options, void** optionValues)`
    #[link_name = "cuLinkAddData_v2"]
    fn cuLinkAddData(
        state: *mut c_void,
        kind: c_int,
        data: *mut c_void,
        size: usize,
        name: *const std::ffi::c_char,
        options_count: u32,
        options: *mut c_int,
        values: *mut *mut c_void,
    ) -> c_int;
    /// `CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path,
    /// unsigned int numOptions, CUjit_option* options, void** optionValues)`
    #[link_name = "cuLinkAddFile_v2"]
    fn cuLinkAddFile(
        state: *mut c_void,
        kind: c_int,
        path: *const std::ffi::c_char,
        options_count: u32,
        options: *mut c_int,
        values: *mut *mut c_void,
    ) -> c_int;
    /// `CUresult cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut)`
    fn cuLinkComplete(state: *mut c_void, cubin: *mut *mut c_void, size: *mut usize) -> c_int;
    /// `CUresult cuLinkDestroy(CUlinkState state)`
    fn cuLinkDestroy(state: *mut c_void) -> c_int;
}

/// A pending link (cuLinkCreate ... cuLinkDestroy), with the error log the driver writes into.
pub struct Link {
    state: *mut c_void,
    /// What the driver was given and keeps using while the state lives: the log it writes into and
    /// the option arrays. Raw pointers from `Box::into_raw`, freed in Drop after the state: a `Box`
    /// moved into the struct would claim to be the only way to its memory, which the driver's copy of
    /// the pointer contradicts.
    log: *mut [u8; LINK_LOG_BYTES],
    options: *mut [c_int; 2],
    values: *mut [*mut c_void; 2],
}

impl Link {
    /// cuLinkCreate with an error log.
    pub fn create() -> anyhow::Result<Link> {
        let log = Box::into_raw(Box::new([0u8; LINK_LOG_BYTES]));
        let options = Box::into_raw(Box::new([CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]));
        // The size is passed by value in the pointer's place, as cuda.h says for this option.
        let values = Box::into_raw(Box::new([log.cast::<c_void>(), LINK_LOG_BYTES as *mut c_void]));
        // Owned from here on, so that an error below frees them too (Drop skips a null state).
        let mut link = Link {
            state: std::ptr::null_mut(),
            log,
            options,
            values,
        };
        // SAFETY: two options with their values, in allocations that live until Drop, after the state.
        crate::check_cuda!(unsafe {
            cuLinkCreate(
                2,
                options.cast::<c_int>(),
                values.cast::<*mut c_void>(),
                &mut link.state,
            )
        })?;
        Ok(link)
    }

    /// cuLinkAddData of PTX text.
    pub fn add_ptx(&self, ptx: &std::ffi::CStr) -> anyhow::Result<()> {
        // SAFETY: a live link state; the PTX is NUL-terminated and its size counts the NUL, as
        // cuLinkAddData wants for PTX; the driver copies what it reads before returning.
        let status = unsafe {
            cuLinkAddData(
                self.state,
                CU_JIT_INPUT_PTX,
                ptx.as_ptr() as *mut c_void,
                ptx.to_bytes_with_nul().len(),
                c"relocatable.ptx".as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        crate::check_cuda!(status).map_err(|err| anyhow::anyhow!("{err}: {}", self.log()))
    }

    /// cuLinkAddFile of a library (an archive such as libcudadevrt.a).
    pub fn add_library(&self, path: &std::ffi::CStr) -> anyhow::Result<()> {
        // SAFETY: a live link state and a NUL-terminated path, read during the call.
        let status = unsafe {
            cuLinkAddFile(
                self.state,
                CU_JIT_INPUT_LIBRARY,
                path.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        crate::check_cuda!(status).map_err(|err| anyhow::anyhow!("{err}: {}", self.log()))
    }

    /// What the linker said, for an error's context.
    pub fn log(&self) -> String {
        // SAFETY: `log` is a live allocation of ours (freed only in Drop); the driver writes it only
        // during the link calls, none of which runs while this reference lives.
        let log = unsafe { &*self.log };
        let end = log.iter().position(|&byte| byte == 0).unwrap_or(LINK_LOG_BYTES);
        format!(
            "linking with the device runtime: {}",
            String::from_utf8_lossy(&log[..end]).trim()
        )
    }

    /// cuLinkComplete: the linked cubin, owned by the link state (valid while `self` lives).
    pub fn complete(&self) -> anyhow::Result<&[u8]> {
        let (mut cubin, mut size) = (std::ptr::null_mut(), 0usize);
        // SAFETY: a live link state and two out-parameters.
        crate::check_cuda!(unsafe { cuLinkComplete(self.state, &mut cubin, &mut size) })
            .map_err(|err| anyhow::anyhow!("{err}: {}", self.log()))?;
        // SAFETY: the driver returned `size` bytes at `cubin`, which it keeps until cuLinkDestroy (Drop),
        // and the slice borrows `self`.
        Ok(unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) })
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if !self.state.is_null() {
            // SAFETY: the state from cuLinkCreate, destroyed once.
            unsafe { cuLinkDestroy(self.state) };
        }
        // SAFETY: each pointer came from `Box::into_raw` in `create` and is freed once, here, after
        // the state that used them is gone.
        unsafe {
            drop(Box::from_raw(self.log));
            drop(Box::from_raw(self.options));
            drop(Box::from_raw(self.values));
        }
    }
}

/// `CU_EVENT_DISABLE_TIMING`: an event that only orders work (cheaper to record and wait for).
const CU_EVENT_DISABLE_TIMING: u32 = 0x02;

extern "C" {
    /// `CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags)`
    fn cuEventCreate(event: *mut *mut c_void, flags: u32) -> c_int;
    /// `CUresult cuEventRecord(CUevent hEvent, CUstream hStream)`
    fn cuEventRecord(event: *mut c_void, stream: *mut c_void) -> c_int;
    /// `CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)`
    fn cuStreamWaitEvent(stream: *mut c_void, event: *mut c_void, flags: u32) -> c_int;
    /// `CUresult cuEventDestroy(CUevent hEvent)` (`_v2` is the name the header maps it to)
    #[link_name = "cuEventDestroy_v2"]
    fn cuEventDestroy(event: *mut c_void) -> c_int;
}

/// An event that orders streams (`cudaEventCreateWithFlags(&e, cudaEventDisableTiming)`), recorded and
/// waited for as often as needed. cust's `Stream::wait_event` takes its `Event` by value and destroys
/// it, so an event made once, before a timed window, could be waited for only once; this one stays.
pub struct OrderEvent(*mut c_void);

// SAFETY: a CUDA event handle may be recorded, waited for and destroyed from any host thread (the driver
// API is thread-safe); the handle is not tied to the thread that created it.
unsafe impl Send for OrderEvent {}

impl OrderEvent {
    pub fn new() -> anyhow::Result<OrderEvent> {
        let mut event = std::ptr::null_mut();
        // SAFETY: the driver writes one event handle into `event`.
        crate::check_cuda!(unsafe { cuEventCreate(&mut event, CU_EVENT_DISABLE_TIMING) })?;
        Ok(OrderEvent(event))
    }

    /// cudaEventRecord: the event completes when `stream` reaches this point.
    pub fn record(&self, stream: &cust::stream::Stream) -> anyhow::Result<()> {
        // SAFETY: both handles are live: the event is ours until Drop, the stream is borrowed.
        crate::check_cuda!(unsafe { cuEventRecord(self.0, stream.as_inner().cast()) })?;
        Ok(())
    }

    /// cudaStreamWaitEvent: work enqueued on `waiter` after this waits for the last `record`.
    pub fn wait(&self, waiter: &cust::stream::Stream) -> anyhow::Result<()> {
        // SAFETY: as in `record`; 0 is the default flag.
        crate::check_cuda!(unsafe { cuStreamWaitEvent(waiter.as_inner().cast(), self.0, 0) })?;
        Ok(())
    }
}

impl Drop for OrderEvent {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuEventCreate and is destroyed once; a wait still pending on it
        // is kept by the driver until it completes. Nothing to report a failure to.
        unsafe { cuEventDestroy(self.0) };
    }
}

/// `CUtensorMap`: what TMA (Hopper's copy engine for tiles) needs to know of a matrix in global memory,
/// filled by [`cuTensorMapEncodeTiled`] and passed to a kernel by value as a
/// `const __grid_constant__ CUtensorMap` parameter. 128 opaque bytes; the driver wants them 64-byte
/// aligned.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy)]
pub struct CuTensorMap {
    pub opaque: [u64; 16],
}

// SAFETY: 128 bytes of plain data that the kernel reads as its parameter; no pointer the host owns.
unsafe impl cust::memory::DeviceCopy for CuTensorMap {}

/// `CU_TENSOR_MAP_DATA_TYPE_FLOAT32`: 4-byte f32 elements, as they are.
pub const CU_TENSOR_MAP_DATA_TYPE_FLOAT32: c_int = 7;
/// `CU_TENSOR_MAP_DATA_TYPE_BFLOAT16`: 2-byte bf16 elements.
pub const CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: c_int = 9;
/// `CU_TENSOR_MAP_DATA_TYPE_TFLOAT32`: f32 elements, rounded to TF32 (10 bits of mantissa) as they are
/// copied.
pub const CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: c_int = 11;
/// `CU_TENSOR_MAP_INTERLEAVE_NONE`
pub const CU_TENSOR_MAP_INTERLEAVE_NONE: c_int = 0;
/// `CU_TENSOR_MAP_SWIZZLE_128B`: each 128-byte row of the box is stored with its 16-byte pieces
/// permuted by row (XOR with the row index mod 8), so reading a column touches every bank once.
pub const CU_TENSOR_MAP_SWIZZLE_128B: c_int = 3;
/// `CU_TENSOR_MAP_L2_PROMOTION_L2_256B`: L2 fetches 256 bytes at a time for these copies.
pub const CU_TENSOR_MAP_L2_PROMOTION_L2_256B: c_int = 3;
/// `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`: a box's elements outside the matrix arrive as zeros.
pub const CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: c_int = 0;

extern "C" {
    /// `CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
    /// cuuint32_t tensorRank, void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t*
    /// globalStrides, const cuuint32_t* boxDim, const cuuint32_t* elementStrides, CUtensorMapInterleave
    /// interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    /// CUtensorMapFloatOOBfill oobFill)` (CUDA 12.0): a host call, no GPU work. `globalStrides` has
    /// rank - 1 entries, in bytes (the first dimension is contiguous).
    pub fn cuTensorMapEncodeTiled(
        map: *mut CuTensorMap,
        data_type: c_int,
        rank: u32,
        address: *mut c_void,
        dims: *const u64,
        strides: *const u64,
        box_dims: *const u32,
        element_strides: *const u32,
        interleave: c_int,
        swizzle: c_int,
        l2_promotion: c_int,
        oob_fill: c_int,
    ) -> c_int;
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

    #[test]
    fn a_tensor_map_is_cuda_hs_128_bytes() {
        // sizeof(CUtensorMap); cuTensorMapEncodeTiled wants it 64-byte aligned.
        assert_eq!(std::mem::size_of::<CuTensorMap>(), 128);
        assert_eq!(std::mem::align_of::<CuTensorMap>(), 64);
    }
}

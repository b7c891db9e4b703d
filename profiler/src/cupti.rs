//! CUPTI's activity API, opened when a lab runs with `--profile` or `--trace` (`libloading`: the labs
//! build without a CUDA toolkit, and run without CUPTI when not asked to profile). CUPTI hands us
//! buffers of records through two callbacks; each finished buffer is read at once into
//! [`Record`]s kept in [`COLLECTED`], since a kernel record's name points into CUPTI's memory.

use std::alloc::{alloc, dealloc, Layout};
use std::ffi::{c_char, c_void, CStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use anyhow::{bail, Result};
use libloading::Library;

use super::records::{self, kind, Record};

/// `CUptiResult`: 0 is success.
type Status = i32;
/// `CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0`: the kind of id the timed windows push.
pub const EXTERNAL_KIND_CUSTOM0: u32 = 3;
/// `CUPTI_ACTIVITY_FLAG_FLUSH_FORCED`: also the buffers CUPTI has not filled yet.
pub const FLUSH_FORCED: u32 = 1;
/// Bytes per buffer handed to CUPTI (its samples use 8 MiB; records are 24 to 216 bytes).
const BUFFER_BYTES: usize = 8 << 20;
/// CUPTI requires buffers aligned to 8 bytes.
const BUFFER_ALIGN: usize = 8;

type RequestFn = extern "C" fn(*mut *mut u8, *mut usize, *mut usize);
type CompleteFn = extern "C" fn(*mut c_void, u32, *mut u8, usize, usize);

/// The CUPTI functions the labs call, looked up once.
pub struct Cupti {
    enable: unsafe extern "C" fn(u32) -> Status,
    disable: unsafe extern "C" fn(u32) -> Status,
    register_callbacks: unsafe extern "C" fn(RequestFn, CompleteFn) -> Status,
    flush_all: unsafe extern "C" fn(u32) -> Status,
    next_record: unsafe extern "C" fn(*mut u8, usize, *mut *mut u8) -> Status,
    dropped_records: unsafe extern "C" fn(*mut c_void, u32, *mut usize) -> Status,
    push_external: unsafe extern "C" fn(u32, u64) -> Status,
    pop_external: unsafe extern "C" fn(u32, *mut u64) -> Status,
    result_string: unsafe extern "C" fn(Status, *mut *const c_char) -> Status,
    callback_name: unsafe extern "C" fn(u32, u32, *mut *const c_char) -> Status,
    /// `CUPTI_API_VERSION` of the library (130001 for 13.0 update 1).
    pub version: u32,
    pub path: PathBuf,
    /// Kept loaded for the rest of the process: CUPTI does not support being unloaded.
    _library: Library,
}

/// The library, once opened.
static CUPTI: OnceLock<Cupti> = OnceLock::new();
/// Records read from finished buffers, in the order CUPTI handed them over.
static COLLECTED: Mutex<Vec<Record>> = Mutex::new(Vec::new());
/// Records CUPTI could not store (a full buffer) or we could not read.
static LOST: AtomicU64 = AtomicU64::new(0);

/// Where `libcupti.so.13` is looked for, in order: beside the lab's executable (the GPU bundle puts
/// it there), `$CUPTI_PATH`, the toolchain folder this checkout installed (`.toolchain/cuda/lib`),
/// `$CUDA_PATH` and `/usr/local/cuda` (`extras/CUPTI/lib64`, then `lib64`), and the loader's own path.
pub fn candidates() -> Vec<PathBuf> {
    const NAME: &str = "libcupti.so.13";
    let mut paths = Vec::new();
    if let Some(folder) = std::env::current_exe().ok().as_deref().and_then(Path::parent) {
        paths.push(folder.join(NAME));
    }
    if let Some(dir) = std::env::var_os("CUPTI_PATH") {
        paths.push(Path::new(&dir).join(NAME));
    }
    paths.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../.toolchain/cuda/lib")
            .join(NAME),
    );
    let roots = std::env::var_os("CUDA_PATH")
        .into_iter()
        .chain([OsString::from("/usr/local/cuda")]);
    // CUDA 13 keeps CUPTI beside the runtime (`lib64`); older toolkits under `extras/CUPTI`.
    for root in roots {
        paths.extend(["extras/CUPTI/lib64", "lib64"].map(|dir| Path::new(&root).join(dir).join(NAME)));
    }
    paths.push(PathBuf::from(NAME));
    paths
}

/// Opens CUPTI (once per process) and checks that it is a 13.x release, whose record layouts
/// [`records`] reads.
pub fn open() -> Result<&'static Cupti> {
    if let Some(cupti) = CUPTI.get() {
        return Ok(cupti);
    }
    // SAFETY: every candidate is CUPTI, whose initialisers need nothing from us.
    match unsafe { common::library::load_first(candidates()) } {
        Ok((library, path)) => {
            let cupti = Cupti::with(library, path)?;
            Ok(CUPTI.get_or_init(|| cupti))
        }
        Err(last) => bail!(
            "--profile and --trace need CUPTI (libcupti.so.13), found neither beside the lab, in $CUPTI_PATH, in .toolchain/cuda/lib \
             (bash scripts/cuda-toolchain.sh installs it) nor in $CUDA_PATH or /usr/local/cuda under extras/CUPTI/lib64 or lib64 ({last})"
        ),
    }
}

impl Cupti {
    fn with(library: Library, path: PathBuf) -> Result<Cupti> {
        // SAFETY: each symbol is looked up with the signature `cupti_activity.h` (13.0) declares, and
        // the pointers are used only while `_library` keeps the library loaded.
        let cupti = unsafe {
            let get_version = *library.get::<unsafe extern "C" fn(*mut u32) -> Status>(b"cuptiGetVersion\0")?;
            let mut version = 0;
            get_version(&mut version);
            Cupti {
                enable: *library.get(b"cuptiActivityEnable\0")?,
                disable: *library.get(b"cuptiActivityDisable\0")?,
                register_callbacks: *library.get(b"cuptiActivityRegisterCallbacks\0")?,
                flush_all: *library.get(b"cuptiActivityFlushAll\0")?,
                next_record: *library.get(b"cuptiActivityGetNextRecord\0")?,
                dropped_records: *library.get(b"cuptiActivityGetNumDroppedRecords\0")?,
                push_external: *library.get(b"cuptiActivityPushExternalCorrelationId\0")?,
                pop_external: *library.get(b"cuptiActivityPopExternalCorrelationId\0")?,
                result_string: *library.get(b"cuptiGetResultString\0")?,
                callback_name: *library.get(b"cuptiGetCallbackName\0")?,
                version,
                path,
                _library: library,
            }
        };
        if cupti.version / 10_000 != 13 {
            bail!(
                "{} is CUPTI API version {}; the labs read the records of CUPTI 13 (API 13xxxx)",
                cupti.path.display(),
                cupti.version
            );
        }
        Ok(cupti)
    }

    /// What the labs record: kernels, copies, memsets, and the driver and runtime calls whose
    /// external correlation records tie work to the timed window that enqueued it.
    pub const KINDS: [u32; 6] = [
        kind::CONCURRENT_KERNEL,
        kind::MEMCPY,
        kind::MEMSET,
        kind::DRIVER,
        kind::RUNTIME,
        kind::EXTERNAL_CORRELATION,
    ];

    /// Starts recording.
    pub fn start(&self) -> Result<()> {
        // SAFETY: both callbacks have the signatures CUPTI declares and only touch what they are given.
        self.check("cuptiActivityRegisterCallbacks", unsafe {
            (self.register_callbacks)(buffer_requested, buffer_completed)
        })?;
        for kind in Self::KINDS {
            // SAFETY: a plain call with a kind CUPTI 13 defines.
            self.check("cuptiActivityEnable", unsafe { (self.enable)(kind) })?;
        }
        Ok(())
    }

    /// Stops recording and returns every record since [`Cupti::start`], and how many were lost.
    pub fn stop(&self) -> Result<(Vec<Record>, u64)> {
        // SAFETY: plain calls; flushing runs `buffer_completed` for every buffer on this thread.
        self.check("cuptiActivityFlushAll", unsafe { (self.flush_all)(FLUSH_FORCED) })?;
        for kind in Self::KINDS {
            // SAFETY: as in `start`.
            self.check("cuptiActivityDisable", unsafe { (self.disable)(kind) })?;
        }
        let records = std::mem::take(&mut *COLLECTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        Ok((records, LOST.swap(0, Ordering::Relaxed)))
    }

    /// Hands over every record of work finished so far (recording goes on) and lets `read` look at
    /// all records collected since [`Cupti::start`].
    pub fn flush_and_read<T>(&self, read: impl FnOnce(&[Record]) -> T) -> Result<T> {
        // SAFETY: a plain call; flushing runs `buffer_completed` for every buffer on this thread.
        self.check("cuptiActivityFlushAll", unsafe { (self.flush_all)(FLUSH_FORCED) })?;
        Ok(read(&COLLECTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())))
    }

    /// API calls made until [`Cupti::pop_window`] belong to window `id` (their work gets an external
    /// correlation record).
    pub fn push_window(&self, id: u64) -> Result<()> {
        // SAFETY: a plain call.
        self.check("cuptiActivityPushExternalCorrelationId", unsafe {
            (self.push_external)(EXTERNAL_KIND_CUSTOM0, id)
        })
    }

    pub fn pop_window(&self) -> Result<()> {
        let mut id = 0;
        // SAFETY: CUPTI writes the popped id into `id`, which lives across the call.
        self.check("cuptiActivityPopExternalCorrelationId", unsafe {
            (self.pop_external)(EXTERNAL_KIND_CUSTOM0, &mut id)
        })
    }

    /// The name of API function `cbid` in `domain` (`cuLaunchKernel`), as nvprof's "API calls" named
    /// it; its number where CUPTI does not know it.
    pub fn callback_name(&self, domain: u32, cbid: u32) -> String {
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: CUPTI writes a pointer to a static NUL-terminated name, or fails and leaves it null.
        let status = unsafe { (self.callback_name)(domain, cbid, &mut name) };
        if status != 0 || name.is_null() {
            return format!("(API function {cbid} of domain {domain})");
        }
        // SAFETY: non-null and NUL-terminated, from CUPTI.
        unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
    }

    fn check(&self, call: &str, status: Status) -> Result<()> {
        if status == 0 {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: CUPTI writes a pointer to a static string or leaves it null.
        unsafe { (self.result_string)(status, &mut text) };
        let name = if text.is_null() {
            "unknown CUPTI error".to_string()
        } else {
            // SAFETY: non-null and NUL-terminated, from CUPTI.
            unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
        };
        bail!("{call} failed: {name} ({status})")
    }
}

/// CUPTI asks for a buffer to fill.
extern "C" fn buffer_requested(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    let layout = Layout::from_size_align(BUFFER_BYTES, BUFFER_ALIGN).expect("a valid layout");
    // SAFETY: the layout has a non-zero size; a null result (out of memory) tells CUPTI to drop
    // records, which `buffer_completed` then counts.
    let memory = unsafe { alloc(layout) };
    // SAFETY: CUPTI passes valid pointers to write the answer into.
    unsafe {
        *buffer = memory;
        *size = if memory.is_null() { 0 } else { BUFFER_BYTES };
        *max_records = 0; // as many as fit
    }
}

/// CUPTI hands back a buffer with `valid` bytes of records: read them, then free the buffer.
extern "C" fn buffer_completed(context: *mut c_void, stream: u32, buffer: *mut u8, _size: usize, valid: usize) {
    let Some(cupti) = CUPTI.get() else { return };
    if buffer.is_null() {
        return;
    }
    let mut read = Vec::new();
    let mut record: *mut u8 = std::ptr::null_mut();
    // SAFETY: `buffer` holds `valid` bytes of records; CUPTI steps `record` through them and returns
    // non-zero after the last. Each record is read only within those bytes.
    while unsafe { (cupti.next_record)(buffer, valid, &mut record) } == 0 {
        let offset = record as usize - buffer as usize;
        // SAFETY: every record starts with its 4-byte kind, inside the valid bytes.
        let kind = unsafe { record.cast::<u32>().read_unaligned() };
        let length = records::record_size(kind).unwrap_or(4);
        if offset + length > valid {
            LOST.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        // SAFETY: `length` bytes from `record` lie inside the valid part of the buffer (checked above).
        let bytes = unsafe { std::slice::from_raw_parts(record, length) };
        read.push(records::parse(bytes, |pointer| kernel_name(pointer as *const c_char)));
    }
    let mut dropped = 0usize;
    // SAFETY: CUPTI writes the count into `dropped`.
    if unsafe { (cupti.dropped_records)(context, stream, &mut dropped) } == 0 {
        LOST.fetch_add(dropped as u64, Ordering::Relaxed);
    }
    COLLECTED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .extend(read);
    let layout = Layout::from_size_align(BUFFER_BYTES, BUFFER_ALIGN).expect("a valid layout");
    // SAFETY: `buffer` came from `buffer_requested` with this layout, and CUPTI is done with it.
    unsafe { dealloc(buffer, layout) };
}

fn kernel_name(name: *const c_char) -> String {
    if name.is_null() {
        return "(unnamed kernel)".into();
    }
    // SAFETY: CUPTI's kernel records point at a NUL-terminated name it keeps while the buffer is read.
    unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
}

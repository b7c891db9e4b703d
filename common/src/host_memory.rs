//! Host memory beyond cust's: mapped memory (`cudaHostAlloc(..., cudaHostAllocMapped)`, read and
//! written by kernels over the bus through `cudaHostGetDevicePointer`), portable pinned memory
//! (`cudaHostAllocPortable`, pinned for every GPU's context) and registered memory (`cudaHostRegister`:
//! pinning what `malloc` gave). All are [`HostStorage`] for the matrix crate's `Matrix`, next to
//! pageable `Vec` and pinned `LockedBuffer`; the labs that move plain buffers use them too.
//!
//! Pinned memory cannot be paged out; pinning too much can bring the whole system down, so every
//! allocation here is first checked against [`PINNABLE_SHARE`] of the machine's memory.

use std::ffi::c_void;
use std::ops::{Deref, DerefMut};
use std::time::Instant;

use anyhow::{ensure, Context as _, Result};
use cust::memory::{DeviceCopy, DevicePointer, LockedBuffer};
use rayon::prelude::*;

use crate::check_cuda;
use crate::raw;

/// The largest share of the machine's memory the labs pin at once, in total.
pub const PINNABLE_SHARE: f64 = 0.5;

/// Refuses to pin `bytes` (on top of `already_pinned`) if that passes [`PINNABLE_SHARE`] of the
/// machine's memory, with the numbers.
pub fn check_pinnable(bytes: u64, already_pinned: u64) -> Result<()> {
    let total = machine_memory()?;
    let limit = (total as f64 * PINNABLE_SHARE) as u64;
    ensure!(
        already_pinned + bytes <= limit,
        "pinning {} would lock {} of this machine's {} of memory, more than the {:.0}% the labs allow \
         (pinned pages cannot be swapped out; too many can bring the whole system down)",
        crate::format_bytes(bytes),
        crate::format_bytes(already_pinned + bytes),
        crate::format_bytes(total),
        100.0 * PINNABLE_SHARE
    );
    Ok(())
}

/// Refuses, before anything is allocated, host buffers of `bytes` in all that would not fit in the
/// memory this machine has available now (MemAvailable): a lab that asks for more would be killed, or
/// would stall the machine swapping, long before it printed anything.
pub fn ensure_host_fits(bytes: u64, what: &str) -> Result<()> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").context("reading /proc/meminfo")?;
    let available = meminfo_bytes(&meminfo, "MemAvailable").context("no MemAvailable line in /proc/meminfo")?;
    ensure!(
        bytes <= available,
        "{what} needs {} of host memory, but this machine has {} available",
        crate::format_bytes(bytes),
        crate::format_bytes(available)
    );
    Ok(())
}

/// `len` copies of `value` in a new `Vec`, or a one-line error if the allocation fails: Rust's `vec!`
/// would abort the whole program with a message about the allocator instead. Written on all cores:
/// the first write to each page of fresh memory faults it in, and a gigabyte of faults takes most of a
/// second on one core (issue 41).
pub fn try_filled_vec<T: Copy + Send + Sync>(len: usize, value: T, what: &str) -> Result<Vec<T>> {
    filled_vec(len, value, what, false)
}

/// Matrices from this size on ask for huge pages ([`HostStorage`] for `Vec`).
const HUGE_PAGES_FROM: usize = 64 << 20;

/// [`try_filled_vec`], the memory backed by huge pages first where `huge` (and the system gives them).
fn filled_vec<T: Copy + Send + Sync>(len: usize, value: T, what: &str, huge: bool) -> Result<Vec<T>> {
    let mut data = Vec::new();
    data.try_reserve_exact(len).map_err(|_| {
        let bytes = (len as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        anyhow::anyhow!(
            "cannot allocate {} of host memory for {what}",
            crate::format_bytes(bytes)
        )
    })?;
    /// Elements per task: 64 KiB of f64, whole pages each.
    const STRETCH: usize = 1 << 13;
    if huge {
        advise_huge_pages(&mut data.spare_capacity_mut()[..len]);
    }
    data.spare_capacity_mut()[..len]
        .par_chunks_mut(STRETCH)
        .for_each(|stretch| stretch.iter_mut().for_each(|slot| _ = slot.write(value)));
    // SAFETY: the capacity is at least `len` (reserved above) and the loop wrote all `len` elements.
    unsafe { data.set_len(len) };
    Ok(data)
}

/// The whole pages of `region`, as `(offset of the first, bytes)`, or `None` where it holds none.
#[cfg(target_os = "linux")]
fn whole_pages<T>(region: &[T]) -> Option<(usize, usize)> {
    // SAFETY: sysconf reads a constant of the system; it takes no pointers.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
    let start = region.as_ptr() as usize;
    let end = start + std::mem::size_of_val(region);
    let (first, last) = (start.next_multiple_of(page), end / page * page);
    (first < last).then(|| (first - start, last - first))
}

/// Asks Linux to back `region` (memory nothing has touched yet) with huge pages (2 MiB on x86-64,
/// `MADV_HUGEPAGE`; the GPU machines' kernels give them on request): a gigabyte is then faulted in,
/// and freed again, in 512 pieces rather than 262144, which had cost as long as the copies of an
/// 8192-squared product (issue 41). Advice only: where the system has no huge pages, nothing changes.
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
fn advise_huge_pages<T>(region: &mut [std::mem::MaybeUninit<T>]) {
    #[cfg(target_os = "linux")]
    if let Some((offset, bytes)) = whole_pages(region) {
        // SAFETY: [offset, offset + bytes) is whole pages inside `region`, which the &mut borrow holds
        // alone; MADV_HUGEPAGE changes only how the kernel backs them, never their contents (here not
        // yet written). The result is ignored: an error means the advice was not taken, nothing more.
        unsafe {
            let pages = region.as_mut_ptr().cast::<u8>().add(offset);
            libc::madvise(pages.cast(), bytes, libc::MADV_HUGEPAGE);
        }
    }
}

/// MemTotal from /proc/meminfo.
fn machine_memory() -> Result<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").context("reading /proc/meminfo")?;
    meminfo_bytes(&meminfo, "MemTotal").context("no MemTotal line in /proc/meminfo")
}

/// The line `key:   24576000 kB` of /proc/meminfo, in bytes.
fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.split(':').next() == Some(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Host memory from `cudaHostAlloc` (`cuMemHostAlloc`), page-locked, with the flags of its kind `K`:
/// [`Mapped`], [`Portable`] or [`MappedPortable`].
pub struct HostAlloc<T: DeviceCopy, K: HostAllocKind> {
    pointer: *mut T,
    len: usize,
    kind: std::marker::PhantomData<K>,
}

/// The `cudaHostAlloc` flags of a [`HostAlloc`] and how the labs call it.
pub trait HostAllocKind {
    const FLAGS: u32;
    const KIND: &'static str;
}

/// `cudaHostAllocMapped`: see [`Mapped`].
pub struct MappedMemory;
impl HostAllocKind for MappedMemory {
    const FLAGS: u32 = raw::CU_MEMHOSTALLOC_DEVICEMAP;
    const KIND: &'static str = "mapped";
}

/// `cudaHostAllocPortable`: see [`Portable`].
pub struct PortableMemory;
impl HostAllocKind for PortableMemory {
    const FLAGS: u32 = raw::CU_MEMHOSTALLOC_PORTABLE;
    const KIND: &'static str = "portable pinned";
}

/// `cudaHostAllocMapped | cudaHostAllocPortable` (the Korean notes): see [`MappedPortable`].
pub struct MappedPortableMemory;
impl HostAllocKind for MappedPortableMemory {
    const FLAGS: u32 = raw::CU_MEMHOSTALLOC_DEVICEMAP | raw::CU_MEMHOSTALLOC_PORTABLE;
    const KIND: &'static str = "mapped portable";
}

/// Mapped, page-locked host memory: the host writes and reads it as a slice, kernels through
/// [`Mapped::device_pointer`] (which equals the host address where unified addressing is on).
///
/// Why a slice over memory a kernel may write is sound here (issue 30): a kernel gets at this memory
/// only through a launch, which is `unsafe`, and every launch on mapped memory is inside
/// `time_on_stream`, which returns only once the GPU is done; the `&mut` borrow of the buffer's owner
/// lasts that long, so no slice of it exists while a kernel runs. A slice made afterwards reads what
/// the kernel wrote: the synchronize makes the GPU's writes visible to the host.
pub type Mapped<T> = HostAlloc<T, MappedMemory>;

/// Page-locked memory that every context treats as pinned, not just the one that allocated it: the
/// slides' flag for host buffers that several GPUs copy from and to at full speed.
pub type Portable<T> = HostAlloc<T, PortableMemory>;

/// Mapped memory that every context treats as pinned and mapped: a kernel of any context may reach
/// it through [`HostAlloc::device_pointer`] asked in that context.
pub type MappedPortable<T> = HostAlloc<T, MappedPortableMemory>;

impl<T: DeviceCopy, K: HostAllocKind> HostAlloc<T, K> {
    /// `cudaHostAlloc(&p, len * sizeof(T), K::FLAGS | extra_flags)`, every element `value`.
    fn allocate(len: usize, value: T, extra_flags: u32) -> Result<Self> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .context("host allocation too large")?;
        check_pinnable(bytes as u64, 0)?;
        let mut pointer: *mut c_void = std::ptr::null_mut();
        // SAFETY: the driver writes a pointer to `bytes` bytes of host memory or fails.
        check_cuda!(unsafe { raw::cuMemHostAlloc(&mut pointer, bytes.max(1), K::FLAGS | extra_flags) })?;
        let pointer = pointer.cast::<T>();
        // Filled through the raw pointer: a `&mut [T]` over memory not yet initialised would be
        // undefined behaviour, however briefly it lived.
        for index in 0..len {
            // SAFETY: `index < len`, inside the `len * size_of::<T>()` bytes just allocated; page-locked
            // memory is page-aligned, so aligned for `T`; `write` reads nothing that was there.
            unsafe { pointer.add(index).write(value) };
        }
        Ok(HostAlloc {
            pointer,
            len,
            kind: std::marker::PhantomData,
        })
    }
}

impl<T: DeviceCopy> Mapped<T> {
    /// `cudaHostAlloc(&p, len * sizeof(T), cudaHostAllocMapped [| cudaHostAllocWriteCombined])`.
    pub fn new(len: usize, value: T, write_combined: bool) -> Result<Mapped<T>> {
        Self::allocate(
            len,
            value,
            if write_combined {
                raw::CU_MEMHOSTALLOC_WRITECOMBINED
            } else {
                0
            },
        )
    }

    /// The host address, to compare with the device pointer.
    pub fn host_address(&self) -> u64 {
        self.pointer as u64
    }
}

impl<T: DeviceCopy> MappedPortable<T> {
    /// `cudaHostAlloc(&p, len * sizeof(T), cudaHostAllocMapped | cudaHostAllocPortable)`.
    pub fn new(len: usize, value: T) -> Result<MappedPortable<T>> {
        Self::allocate(len, value, 0)
    }
}

impl<T: DeviceCopy, K: HostAllocKind> HostAlloc<T, K> {
    /// `cudaHostGetDevicePointer` in the current context: the address kernels use for this memory,
    /// or the driver's error where this context has no mapping of it.
    pub fn device_pointer(&self) -> Result<DevicePointer<T>> {
        device_pointer_of(self.pointer)
    }
}

/// Reads `words` (filled with 0, 1, 2, ...) on `threads` threads and returns the bytes read per
/// second of the fastest of `repetitions` reads: a CPU's memory bandwidth (lab-memory), or what a kind
/// of host memory costs the CPU to read (lab-mapped's write-combined memory). Each read's sum must be
/// n(n-1)/2: every word was read.
pub fn read_rate(words: &[u64], threads: usize, repetitions: usize) -> Result<f64> {
    let n = words.len() as u64;
    let expected = n.wrapping_mul(n.wrapping_sub(1)) / 2;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let chunk = words.len().div_ceil(threads).max(1);
    let mut best = f64::INFINITY;
    for _ in 0..repetitions.max(1) {
        let start = Instant::now();
        let sum = pool.install(|| {
            words
                .par_chunks(chunk)
                .map(|part| part.iter().fold(0u64, |sum, &w| sum.wrapping_add(w)))
                .reduce(|| 0, u64::wrapping_add)
        });
        best = best.min(start.elapsed().as_secs_f64());
        ensure!(
            sum == expected,
            "the bandwidth read summed {sum}, not {expected}: a word was missed"
        );
    }
    Ok(8.0 * words.len() as f64 / best)
}

/// `cudaHostGetDevicePointer` (`cuMemHostGetDevicePointer`) in the current context for the
/// page-locked memory at `pointer` (any kind: allocated, registered, `cudaMallocHost`'s); the driver's
/// error for memory it does not know as page-locked. A kernel given the address may write that
/// memory: its launch is `unsafe`, and its caller must keep the host off the memory until the GPU is done.
pub fn device_pointer_of<T: DeviceCopy>(pointer: *const T) -> Result<DevicePointer<T>> {
    let mut device = 0u64;
    // SAFETY: the driver only looks `pointer` up among the page-locked ranges it knows (an unknown one
    // is an error it returns) and writes one address into `device`.
    check_cuda!(unsafe { raw::cuMemHostGetDevicePointer(&mut device, pointer.cast_mut().cast(), 0) })?;
    Ok(DevicePointer::from_raw(device))
}

impl<T: DeviceCopy, K: HostAllocKind> Deref for HostAlloc<T, K> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` elements were allocated (and written) in `allocate`; freed only in drop.
        unsafe { std::slice::from_raw_parts(self.pointer, self.len) }
    }
}

impl<T: DeviceCopy, K: HostAllocKind> DerefMut for HostAlloc<T, K> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref; `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.pointer, self.len) }
    }
}

impl<T: DeviceCopy, K: HostAllocKind> AsRef<[T]> for HostAlloc<T, K> {
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T: DeviceCopy, K: HostAllocKind> AsMut<[T]> for HostAlloc<T, K> {
    fn as_mut(&mut self) -> &mut [T] {
        self
    }
}

// SAFETY: a `HostAlloc` owns its allocation alone, as cust's `LockedBuffer` does (which is Send and
// Sync on the same terms): page-locked host memory is ordinary memory to every host thread, and the
// driver's free may come from any thread.
unsafe impl<T: DeviceCopy + Send, K: HostAllocKind> Send for HostAlloc<T, K> {}
// SAFETY: shared references only read the elements, as `&[T]` does.
unsafe impl<T: DeviceCopy + Sync, K: HostAllocKind> Sync for HostAlloc<T, K> {}

impl<T: DeviceCopy, K: HostAllocKind> Drop for HostAlloc<T, K> {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc, freed once. A failure here has no one to report to.
        unsafe { raw::cuMemFreeHost(self.pointer.cast()) };
    }
}

/// Host memory for a matrix's `data` or a vector job's buffers: pageable, pinned, mapped or registered.
pub trait HostStorage<T: DeviceCopy>: Deref<Target = [T]> + DerefMut + AsRef<[T]> + AsMut<[T]> + Sized {
    /// How the slides call this memory, for printing.
    const KIND: &'static str;
    /// Whether it is pageable, the only memory [`fresh_pages`] may be given.
    const PAGEABLE: bool = false;
    fn filled(len: usize, value: T) -> Result<Self>;
}

/// Pageable memory (`malloc`, `new[]`): the driver copies it through a pinned staging buffer.
impl<T: DeviceCopy + Send + Sync> HostStorage<T> for Vec<T> {
    const KIND: &'static str = "pageable";
    const PAGEABLE: bool = true;
    fn filled(len: usize, value: T) -> Result<Vec<T>> {
        filled_vec(
            len,
            value,
            "a matrix",
            len.saturating_mul(std::mem::size_of::<T>()) >= HUGE_PAGES_FROM,
        )
    }
}

/// Hands the whole pages of `data` back to the kernel (`madvise(MADV_DONTNEED)`): they read as zeros,
/// and the first write to each faults a fresh page in, as in memory just allocated with `new[]` that
/// nothing has touched yet, and in pages of the usual size as `new[]` gets them (`MADV_NOHUGEPAGE`
/// first, for a large matrix that had asked for huge ones). The slides' programs copy their results
/// into such memory inside the timed region; `--as-printed` has those faults inside it too. The part of
/// a page that `data` shares with other memory keeps its values. Does nothing elsewhere than on Linux.
///
/// # Safety
/// `data` must be pageable memory from the allocator (a `Vec`'s, never registered with
/// `cudaHostRegister`), which is private and anonymous: pinned, registered or mapped pages are the
/// ones the GPU's mappings hold (the host would then see other pages than the GPU), and the pages
/// of a file mapping would come back with the file's contents.
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
pub unsafe fn fresh_pages(data: &mut [f64]) {
    #[cfg(target_os = "linux")]
    if let Some((offset, bytes)) = whole_pages(data) {
        // SAFETY: [offset, offset + bytes) is whole pages inside `data`, which the &mut borrow holds
        // alone, so nothing else reads them; they are private anonymous memory (the caller's
        // contract), where MADV_DONTNEED means "zero-filled at the next touch" (MADV_NOHUGEPAGE
        // changes only the size of the pages that come); all-zero bits are 0.0 in an f64. A failure
        // (they have none for such pages) leaves the values as they were.
        unsafe {
            let pages = data.as_mut_ptr().cast::<u8>().add(offset);
            libc::madvise(pages.cast(), bytes, libc::MADV_NOHUGEPAGE);
            libc::madvise(pages.cast(), bytes, libc::MADV_DONTNEED);
        }
    }
}

/// Page-locked memory (`cudaMallocHost`): the copy engines read it directly, and only such memory lets
/// `cudaMemcpyAsync` overlap with kernels.
pub type Pinned<T> = LockedBuffer<T>;

impl<T: DeviceCopy> HostStorage<T> for LockedBuffer<T> {
    const KIND: &'static str = "pinned";
    fn filled(len: usize, value: T) -> Result<LockedBuffer<T>> {
        check_pinnable((len * std::mem::size_of::<T>()) as u64, 0)?;
        Ok(check_cuda!(LockedBuffer::new(&value, len))?)
    }
}

impl<T: DeviceCopy> HostStorage<T> for Mapped<T> {
    const KIND: &'static str = MappedMemory::KIND;
    fn filled(len: usize, value: T) -> Result<Mapped<T>> {
        Mapped::new(len, value, false)
    }
}

impl<T: DeviceCopy> HostStorage<T> for Portable<T> {
    const KIND: &'static str = PortableMemory::KIND;
    fn filled(len: usize, value: T) -> Result<Portable<T>> {
        Portable::allocate(len, value, 0)
    }
}

/// Memory that `malloc` gave (a `Vec`), pinned after the fact with `cudaHostRegister` and unpinned
/// with `cudaHostUnregister` when dropped: handy for legacy code that allocates its own buffers.
pub struct Registered<T: DeviceCopy> {
    data: Vec<T>,
}

impl<T: DeviceCopy> Registered<T> {
    /// Registers `data` as page-locked (`flags`: 0, or `raw::CU_MEMHOSTREGISTER_DEVICEMAP` and / or
    /// `raw::CU_MEMHOSTREGISTER_PORTABLE`).
    pub fn register(mut data: Vec<T>, flags: u32) -> Result<Registered<T>> {
        let bytes = std::mem::size_of_val(data.as_slice());
        check_pinnable(bytes as u64, 0)?;
        ensure!(bytes > 0, "cannot register an empty buffer");
        // SAFETY: the Vec's buffer stays where it is (it is never grown) until drop unregisters it.
        check_cuda!(unsafe { raw::cuMemHostRegister(data.as_mut_ptr().cast(), bytes, flags) })?;
        Ok(Registered { data })
    }
}

impl<T: DeviceCopy> Registered<T> {
    /// `cudaHostGetDevicePointer` in the current context (see [`device_pointer_of`]): the address
    /// kernels reach registered memory at (registered with `cudaHostRegisterMapped`, or, with unified
    /// addressing, any registered memory). A kernel given it may write the memory: launch it only
    /// where the caller holds `&mut self` until the GPU is done, as for [`Mapped`].
    pub fn device_pointer(&self) -> Result<DevicePointer<T>> {
        device_pointer_of(self.data.as_ptr())
    }
}

impl<T: DeviceCopy> Deref for Registered<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.data
    }
}

impl<T: DeviceCopy> DerefMut for Registered<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.data
    }
}

impl<T: DeviceCopy> AsRef<[T]> for Registered<T> {
    fn as_ref(&self) -> &[T] {
        &self.data
    }
}

impl<T: DeviceCopy> AsMut<[T]> for Registered<T> {
    fn as_mut(&mut self) -> &mut [T] {
        &mut self.data
    }
}

impl<T: DeviceCopy> Drop for Registered<T> {
    fn drop(&mut self) {
        // SAFETY: registered in `register`; unregistered once, before the Vec frees the memory.
        unsafe { raw::cuMemHostUnregister(self.data.as_mut_ptr().cast()) };
    }
}

impl<T: DeviceCopy + Send + Sync> HostStorage<T> for Registered<T> {
    const KIND: &'static str = "registered";
    fn filled(len: usize, value: T) -> Result<Registered<T>> {
        Registered::register(try_filled_vec(len, value, "a registered buffer")?, 0)
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn the_read_sees_every_word() {
        let words: Vec<u64> = (0..100_003).collect();
        for threads in [1, 3] {
            assert!(read_rate(&words, threads, 2).unwrap() > 0.0);
        }
        let mut missing = words.clone();
        missing[5] = 0;
        assert!(read_rate(&missing, 2, 1).is_err(), "a wrong word fails the sum");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn fresh_pages_zero_the_whole_pages_and_keep_the_edges() {
        // SAFETY: sysconf takes no pointers.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize / 8;
        let mut data = vec![1.5f64; 64 * page];
        let (head, tail) = (1, data.len() - 1);
        // SAFETY: a Vec's own memory, never registered.
        unsafe { fresh_pages(&mut data[head..tail]) };
        assert!(data[0] == 1.5 && data[tail] == 1.5, "outside the slice: kept");
        let zeros = data.iter().filter(|&&x| x == 0.0).count();
        assert!(zeros >= data.len() - 2 * page && zeros < data.len(), "{zeros} zeros");
        let mut small = vec![2.5f64; 3];
        // SAFETY: as above.
        unsafe {
            fresh_pages(&mut small);
            fresh_pages(&mut []);
        }
        assert_eq!(small, [2.5; 3], "less than a page: nothing given back");
    }

    #[test]
    fn reads_meminfo_lines_in_bytes() {
        let meminfo = "MemTotal:       24576000 kB\nMemFree:        1000 kB\nMemAvailable:   2000 kB\n";
        assert_eq!(meminfo_bytes(meminfo, "MemTotal"), Some(24_576_000 * 1024));
        assert_eq!(meminfo_bytes(meminfo, "MemAvailable"), Some(2000 * 1024));
        assert_eq!(meminfo_bytes("MemFree: 1 kB\n", "MemTotal"), None);
    }

    #[test]
    fn refuses_host_buffers_larger_than_the_available_memory() {
        assert!(ensure_host_fits(1 << 20, "a small buffer").is_ok());
        let err = ensure_host_fits(u64::MAX / 2, "A and B").unwrap_err().to_string();
        assert!(
            err.starts_with("A and B needs 8.0 EiB of host memory, but this machine has "),
            "{err}"
        );
    }

    #[test]
    fn a_failed_host_allocation_is_an_error_not_an_abort() {
        assert_eq!(try_filled_vec(3, 1.5f64, "x").unwrap(), vec![1.5; 3]);
        let err = try_filled_vec(usize::MAX / 16, 0.0f64, "the matrix A")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cannot allocate ") && err.ends_with(" of host memory for the matrix A"),
            "{err}"
        );
    }

    #[test]
    fn refuses_to_pin_more_than_half_of_the_machine() {
        let total = machine_memory().unwrap();
        assert!(check_pinnable(total / 4, 0).is_ok());
        let err = check_pinnable(total / 4, total / 3).unwrap_err().to_string();
        assert!(
            err.starts_with("pinning ") && err.contains("more than the 50% the labs allow"),
            "{err}"
        );
    }
}

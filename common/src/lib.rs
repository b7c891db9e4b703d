//! What every lab shares: the labs' runtime.
//!
//! - [`check_cuda!`] (CHECK_CUDA of the slides): every CUDA call is checked where it is made and a
//!   failure names the call, file:line and CUDA's error name and text.
//! - [`gpu::Gpu`]: driver, device, context; no GPU, or a driver that cannot use it, is one clear error.
//! - [`device_info::DeviceInfo`]: the header each lab prints, and the limits flags are checked against.
//! - [`timing`]: CUDA events, warm-up, median: the slides' "GPU time in ms".
//! - [`verify`]: random inputs, poisoned outputs, relative error, `Result = PASS`.
//! - [`host_memory`]: pageable, pinned, mapped, portable and registered host memory, the limit on
//!   pinning, and the check of host buffers against available memory before anything is allocated.
//! - [`ptxas_view`]: `--ptxas`, the compiler's report beside the driver's view.
//! - [`cli::run_lab`]: one `main` for all labs; errors end as one line and exit code 1.
//! - [`integrand`]: the functions lab-simpson and lab-dynamic-parallel integrate.
//! - [`output`]: files the labs write, never over existing ones without `--force`.
//! - [`testing`]: running a lab binary in tests, and whether this machine has a GPU.
//! - [`phases`]: where a run's wall time goes (setup, GPU, verification, output), for `scripts/time-labs.sh`.
//! - [`progress`]: a progress bar on stderr for long work, drawn only on a terminal.
//! - [`timing::observer`]: the hooks through which the profiler sees the timed loops; [`private_dir`]:
//!   files only this user can touch.
//!
//! The rest of the house builds on this crate and this crate on none of it (issue 42): `profiler`
//! (`--profile`, `--trace`, `--counters`, the `--timeline` chronograms), `matrix` (the slides' Matrix
//! class, its files and its products), `grading` (`--kernel-source`, `--check`, the weeks' templates),
//! and `feedback` (the teacher's pages of `grade.sh --feedback`).
//!
//! From the CUDA runtime calls on the slides to what the labs call (cust 0.3.2, Driver API):
//!
//! | slide (runtime API)              | here                                                   |
//! |----------------------------------|--------------------------------------------------------|
//! | `cudaMalloc` + `cudaMemcpy`      | `DeviceBuffer::from_slice`, `copy_from`, `copy_to`     |
//! | `<<< Dg, Db, Ns, S >>>`          | `launch!(kernel<<<grid, block, sh, s>>>(...))`         |
//! | `cudaDeviceSynchronize`          | [`context::synchronize_device`]                        |
//! | `cudaStreamSynchronize`          | `stream.synchronize()`                                 |
//! | `cudaStreamCreate`               | [`context::new_streams`]                               |
//! | `cudaMallocHost`, `cudaHostAlloc`, `cudaHostRegister` | `LockedBuffer`, [`host_memory::Mapped`], [`...::Portable`](host_memory::Portable), [`...::Registered`](host_memory::Registered) |
//! | `cudaSetDevice` (ours): the slides print no call for several GPUs | [`gpu::Gpu::make_current`] |
//! | `cudaEventRecord`, `cudaEventElapsedTime` | [`timing::time_on_stream`]                             |
//! | `cudaMemcpyToSymbol`             | `module.get_global(name)?.copy_from(..)`               |
//! | `cudaGetDeviceProperties`        | [`device_info::DeviceInfo::query`]                     |
//!
//! Traps of cust 0.3.2 this crate works around: its `CudaError` reports every code it does not name
//! (CUDA 13's among them) as unknown, so its patched copy keeps the code behind that
//! (`vendor/cust/PATCHED.md`; its `CUresult` is patched to hold any code: `vendor/cust_raw/PATCHED.md`)
//! and calls it does not wrap are declared in [`raw`] with `i32` results; `Module::get_global::<T>`
//! panics unless `size_of::<T>()` equals the symbol's size, so the Rust type must match the CUDA
//! declaration.

pub mod cli;
pub mod context;
pub mod device_info;
pub mod error;
pub mod gpu;
pub mod host_memory;
pub mod integrand;
pub mod library;
pub mod output;
pub mod phases;
pub use kernels::private_dir;
pub mod progress;
pub mod ptxas_view;
pub mod raw;
pub mod testing;
pub mod timing;
pub mod verify;

/// `1.5 GiB`, `48.0 KiB`, `512 B`: sizes as people read them.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_bytes_in_binary_units() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(48 * 1024), "48.0 KiB");
        assert_eq!(format_bytes(141 * 1024 * 1024 * 1024), "141.0 GiB");
    }
}

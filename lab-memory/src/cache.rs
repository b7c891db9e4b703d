//! `--mode cache`: L1 and shared memory are one store per multiprocessor, split by a preference the
//! kernel states: `cudaFuncSetCacheConfig` (the Chinese notes: Kepler's 16 + 48, 32 + 32, 48 + 16 KB),
//! or the device states for every kernel that states none (`cudaDeviceSetCacheConfig`, the notes too),
//! and its successor, the carveout attribute (`cudaFuncAttributePreferredSharedMemoryCarveout`, a
//! percentage). `cached_gather` (`kernels/cuda/memory.cu`) adds table entries at hashed positions; when
//! the table fits the L1 the preference leaves, it is read from L1, else from L2.

use std::ffi::c_int;

use anyhow::Result;
use common::gpu::Gpu;
use common::phases::{self, Phase};
use common::timing::{time_on_stream, Timing};
use common::verify::{check_cell, poisoned_device_buffer, Random};
use common::{check_cuda, raw};
use cust::function::Function;
use cust::launch;
use cust::memory::DeviceBuffer;
use cust::module::Module;
use rayon::prelude::*;

use crate::{blocks_for, differing, mix, new_stream};

/// Threads per block of the gather.
pub const BLOCK: u32 = 256;

/// A kernel's stated preference between L1 and shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preference {
    /// Neither call made.
    Default,
    /// `cudaFuncSetCacheConfig(kernel, cudaFuncCachePrefer...)`: the `CU_FUNC_CACHE_PREFER_*` value.
    CacheConfig(c_int),
    /// `cudaDeviceSetCacheConfig(cudaFuncCachePrefer...)`, the kernel stating none.
    DeviceCacheConfig(c_int),
    /// `cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, percent)`.
    Carveout(i32),
}

impl Preference {
    pub fn all() -> Vec<Preference> {
        vec![
            Preference::Default,
            Preference::CacheConfig(raw::CU_FUNC_CACHE_PREFER_L1),
            Preference::CacheConfig(raw::CU_FUNC_CACHE_PREFER_EQUAL),
            Preference::CacheConfig(raw::CU_FUNC_CACHE_PREFER_SHARED),
            Preference::DeviceCacheConfig(raw::CU_FUNC_CACHE_PREFER_L1),
            Preference::DeviceCacheConfig(raw::CU_FUNC_CACHE_PREFER_SHARED),
            Preference::Carveout(0),
            Preference::Carveout(50),
            Preference::Carveout(100),
        ]
    }

    /// The call as a CUDA C programmer writes it.
    pub fn name(self) -> String {
        match self {
            Preference::Default => "no preference (default)".to_string(),
            Preference::CacheConfig(config) => format!("cudaFuncSetCacheConfig({})", config_name(config)),
            Preference::DeviceCacheConfig(config) => {
                format!("cudaDeviceSetCacheConfig({})", config_name(config))
            }
            Preference::Carveout(percent) => format!("carveout {percent}% shared"),
        }
    }

    /// States this preference on `function` or the device, after clearing all three settings, so one
    /// run's choice does not stay for the next.
    pub fn apply(self, function: &Function) -> Result<()> {
        let none = raw::CU_FUNC_CACHE_PREFER_NONE;
        let (config, device_config, carveout) = match self {
            Preference::Default => (none, none, -1),
            Preference::CacheConfig(config) => (config, none, -1),
            Preference::DeviceCacheConfig(config) => (none, config, -1),
            Preference::Carveout(percent) => (none, none, percent),
        };
        // SAFETY: a plain integer setting of the current context.
        check_cuda!(unsafe { raw::cuCtxSetCacheConfig(device_config) })?;
        let handle = function.to_raw().cast();
        // SAFETY: a loaded function's handle and plain integer settings.
        check_cuda!(unsafe {
            raw::cuFuncSetAttribute(
                handle,
                raw::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                carveout,
            )
        })?;
        // SAFETY: as above.
        check_cuda!(unsafe { raw::cuFuncSetCacheConfig(handle, config) })?;
        Ok(())
    }
}

/// `cudaFuncCachePrefer...` by its C name.
fn config_name(config: c_int) -> &'static str {
    match config {
        raw::CU_FUNC_CACHE_PREFER_L1 => "PreferL1",
        raw::CU_FUNC_CACHE_PREFER_EQUAL => "PreferEqual",
        raw::CU_FUNC_CACHE_PREFER_SHARED => "PreferShared",
        _ => "PreferNone",
    }
}

/// What thread `i` of `cached_gather` computes: the sum, in order, of `reads` hashed entries.
pub fn gather_sum(table: &[f32], i: usize, reads: usize) -> f32 {
    (0..reads).fold(0.0f32, |sum, r| {
        sum + table[mix((i as u32).wrapping_mul(131).wrapping_add(r as u32)) as usize % table.len()]
    })
}

/// A table of random floats and the expected sums of `threads` threads.
pub struct Gather {
    pub table: Vec<f32>,
    pub threads: usize,
    pub reads: usize,
    pub expected: Vec<f32>,
}

impl Gather {
    pub fn new(table_bytes: usize, threads: usize, reads: usize, seed: u64) -> Gather {
        let mut table = vec![0.0f32; table_bytes / 4];
        Random::new(seed).fill(&mut table, |random| random.uniform(0.5, 1.5) as f32);
        let _phase = phases::enter(Phase::Verify);
        let expected = (0..threads)
            .into_par_iter()
            .map(|i| gather_sum(&table, i, reads))
            .collect();
        Gather {
            table,
            threads,
            reads,
            expected,
        }
    }
}

/// Runs the gather with `preference`; returns the timing and the sums that differ from the CPU's.
pub fn measure(
    module: &Module,
    gather: &Gather,
    preference: Preference,
    repetitions: usize,
) -> Result<(Timing, usize)> {
    let table = check_cuda!(DeviceBuffer::from_slice(&gather.table))?;
    let out = poisoned_device_buffer::<f32>(gather.threads)?;
    let function = check_cuda!(module.get_function("cached_gather"))?;
    preference.apply(&function)?;
    let stream = new_stream()?;
    let grid = blocks_for(gather.threads, BLOCK);
    let timing = time_on_stream(&stream, 1, repetitions, || {
        // __global__ void cached_gather(const float* table, unsigned table_words, float* out, int n, int reads)
        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
        // point into live device buffers as large as the kernel indexes.
        check_cuda!(unsafe {
            launch!(function<<<grid, BLOCK, 0, stream>>>(table.as_device_ptr(), gather.table.len() as u32, out.as_device_ptr(), gather.threads as i32, gather.reads as i32))
        })?;
        Ok(())
    })?;
    Ok((timing, differing(&out, &gather.expected)?))
}

/// `--mode cache`: the gather under every L1 / shared-memory preference, for tables of several sizes.
/// Returns whether every sum was right.
pub fn report(gpu: &Gpu, module: &Module, repetitions: usize, seed: u64) -> Result<bool> {
    let threads = 2 * gpu.info.multiprocessors as usize * gpu.info.max_threads_per_multiprocessor as usize;
    let reads = 64;
    let sizes = [16usize << 10, 64 << 10, 128 << 10, 192 << 10];
    println!(
        "\nCache configuration: {threads} threads each add {reads} entries of a table at hashed places; L1 and shared memory are one store per SM, up to {} of it shared memory\n",
        common::format_bytes(u64::from(gpu.info.shared_per_multiprocessor))
    );
    let header: Vec<String> = sizes
        .iter()
        .map(|&bytes| format!("table {}", common::format_bytes(bytes as u64)))
        .collect();
    println!("| preference | {} | check |", header.join(" | "));
    println!("|------------|{}-------|", "---------|".repeat(sizes.len()));
    let gathers: Vec<Gather> = sizes
        .iter()
        .map(|&bytes| Gather::new(bytes, threads, reads, seed))
        .collect();
    let mut passed = true;
    for preference in Preference::all() {
        let mut cells = Vec::new();
        let mut wrong = 0;
        for gather in &gathers {
            let (timing, bad) = measure(module, gather, preference, repetitions)?;
            wrong += bad;
            cells.push(format!("{:.4} ms", timing.median_ms()));
        }
        passed &= wrong == 0;
        println!(
            "| {} | {} | {} |",
            preference.name(),
            cells.join(" | "),
            check_cell(wrong)
        );
    }
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_adds_the_hashed_entries_in_order() {
        let table = [1.0f32, 2.0, 4.0];
        let by_hand = (0..5).fold(0.0f32, |s, r| s + table[mix(7 * 131 + r) as usize % 3]);
        assert_eq!(gather_sum(&table, 7, 5), by_hand);
        assert_eq!(gather_sum(&table, 7, 0), 0.0);
        let gather = Gather::new(4096, 100, 8, 1);
        assert_eq!(gather.table.len(), 1024);
        assert_eq!(gather.expected[99], gather_sum(&gather.table, 99, 8));
        assert!(
            gather.expected.iter().all(|s| (4.0..12.0).contains(s)),
            "8 entries in [0.5, 1.5)"
        );
    }

    #[test]
    fn every_preference_has_the_callers_name() {
        let names: Vec<String> = Preference::all().into_iter().map(Preference::name).collect();
        assert_eq!(names[0], "no preference (default)");
        assert!(names.contains(&"cudaFuncSetCacheConfig(PreferShared)".to_string()));
        assert!(names.contains(&"cudaDeviceSetCacheConfig(PreferL1)".to_string()));
        assert!(names.contains(&"carveout 100% shared".to_string()));
    }
}

//! `--mode readonly`: what the Chinese notes call texture memory is today the read-only data path. A
//! gather `out[i] = in[index[i]]` (`kernels/cuda/memory.cu`) three ways: plain loads; `const __restrict__`
//! with `__ldg`, which promises the data does not change while the kernel runs, so the compiler may use
//! the non-coherent loads (LDG.E.CONSTANT in the SASS); and a texture object over the same memory,
//! created with the driver's `cuTexObjectCreate` (cudaCreateTextureObject) and read with `tex1Dfetch`.
//! Two index patterns: random over the whole table, and a neighbourhood where a warp's reads share lines.

use std::ffi::c_void;

use anyhow::Result;
use common::timing::{time_on_stream, Timing};
use common::verify::{check_cell, poisoned_device_buffer, Random};
use common::{check_cuda, raw};
use cust::launch;
use cust::memory::DeviceBuffer;
use cust::module::Module;

use crate::{blocks_for, differing, new_stream};

/// Threads per block of the gathers.
pub const BLOCK: u32 = 256;

/// How `out[i] = in[index[i]]` reads `in`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    Plain,
    ReadOnly,
    Texture,
}

impl Path {
    pub const ALL: [Path; 3] = [Path::Plain, Path::ReadOnly, Path::Texture];

    pub fn kernel(self) -> &'static str {
        match self {
            Path::Plain => "gather_plain",
            Path::ReadOnly => "gather_readonly",
            Path::Texture => "gather_texture",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Path::Plain => "plain loads",
            Path::ReadOnly => "const __restrict__ + __ldg",
            Path::Texture => "texture object, tex1Dfetch",
        }
    }
}

/// Which elements the gather reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Uniform over the whole table.
    Random,
    /// Within 64 elements of the thread's own place in the table: a warp's reads share cache lines.
    Neighbourhood,
}

impl Pattern {
    pub const ALL: [Pattern; 2] = [Pattern::Random, Pattern::Neighbourhood];

    pub fn label(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Neighbourhood => "neighbourhood (+-64)",
        }
    }

    /// `n` indices into a table of `table` elements.
    pub fn indices(self, n: usize, table: usize, random: &mut Random) -> Vec<i32> {
        (0..n)
            .map(|i| match self {
                Pattern::Random => random.below(table as u64) as i32,
                Pattern::Neighbourhood => {
                    let home = (i as u64 * table as u64 / n as u64) as i64;
                    (home + random.below(129) as i64 - 64).clamp(0, table as i64 - 1) as i32
                }
            })
            .collect()
    }
}

/// A texture object reading a device buffer of floats as a 1D texture; destroyed on drop.
pub struct Texture {
    pub handle: u64,
}

impl Texture {
    /// cudaCreateTextureObject over `buffer`: a linear resource of 32-bit floats, one channel, point
    /// filtering, element coordinates.
    pub fn over(buffer: &DeviceBuffer<f32>) -> Result<Texture> {
        let resource = raw::ResourceDesc {
            resource_type: raw::CU_RESOURCE_TYPE_LINEAR,
            device_pointer: buffer.as_device_ptr().as_raw(),
            format: raw::CU_AD_FORMAT_FLOAT,
            channels: 1,
            bytes: buffer.len() * 4,
            reserved: [0; 104],
            flags: 0,
        };
        let description = raw::TextureDesc::default();
        let mut handle = 0u64;
        // SAFETY: both descriptions live across the call; no resource view.
        check_cuda!(unsafe {
            raw::cuTexObjectCreate(&mut handle, &resource, &description, std::ptr::null::<c_void>())
        })?;
        Ok(Texture { handle })
    }
}

impl Drop for Texture {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuTexObjectCreate and is destroyed once. A failure here can only
        // be reported, not handled, so it is ignored like cust ignores errors in its own drops.
        let _ = unsafe { raw::cuTexObjectDestroy(self.handle) };
    }
}

/// A table on the GPU and indices into it, with the CPU's expected result.
pub struct Gather {
    pub input: DeviceBuffer<f32>,
    pub index: DeviceBuffer<i32>,
    pub expected: Vec<f32>,
}

impl Gather {
    pub fn new(table: usize, n: usize, pattern: Pattern, seed: u64) -> Result<Gather> {
        let mut random = Random::new(seed);
        let values: Vec<f32> = (0..table).map(|_| random.uniform(-1.0, 1.0) as f32).collect();
        let indices = pattern.indices(n, table, &mut random);
        let expected = indices.iter().map(|&j| values[j as usize]).collect();
        Ok(Gather {
            input: check_cuda!(DeviceBuffer::from_slice(&values))?,
            index: check_cuda!(DeviceBuffer::from_slice(&indices))?,
            expected,
        })
    }
}

/// Runs the gather through `path`; returns the timing and the elements that differ from the CPU's.
pub fn measure(module: &Module, gather: &Gather, path: Path, repetitions: usize) -> Result<(Timing, usize)> {
    let n = gather.expected.len();
    let out = poisoned_device_buffer::<f32>(n)?;
    let function = check_cuda!(module.get_function(path.kernel()))?;
    let stream = new_stream()?;
    let texture = Texture::over(&gather.input)?;
    let grid = blocks_for(n, BLOCK);
    let (input, index, output) = (
        gather.input.as_device_ptr(),
        gather.index.as_device_ptr(),
        out.as_device_ptr(),
    );
    let timing = time_on_stream(&stream, 1, repetitions, || {
        // __global__ void gather_plain(const float* in, const int* index, float* out, int n), likewise
        // gather_readonly; gather_texture(cudaTextureObject_t in, const int* index, float* out, int n)
        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
        // point into live device buffers as large as the kernel indexes.
        check_cuda!(unsafe {
            match path {
                Path::Texture => launch!(function<<<grid, BLOCK, 0, stream>>>(texture.handle, index, output, n as i32)),
                _ => launch!(function<<<grid, BLOCK, 0, stream>>>(input, index, output, n as i32)),
            }
        })?;
        Ok(())
    })?;
    Ok((timing, differing(&out, &gather.expected)?))
}

/// `--mode readonly`: the gather through plain loads, the read-only path and a texture object, for two
/// index patterns. Returns whether every element was right.
pub fn report(module: &Module, repetitions: usize, seed: u64) -> Result<bool> {
    let (table, n) = (1usize << 22, 1usize << 23);
    println!(
        "\nRead-only data path: out[i] = in[index[i]], {n} elements from a table of {} (in L2)\n",
        common::format_bytes(4 * table as u64)
    );
    println!("| indices | path | GPU time in ms | GB/s (index + value + out) | check |");
    println!("|---------|------|----------------|----------------------------|-------|");
    let mut passed = true;
    for pattern in Pattern::ALL {
        let gather = Gather::new(table, n, pattern, seed)?;
        for path in Path::ALL {
            let (timing, wrong) = measure(module, &gather, path, repetitions)?;
            passed &= wrong == 0;
            let bandwidth = 12.0 * n as f64 / (timing.median_ms() * 1e-3);
            println!(
                "| {} | {} | {:.4} | {:.0} | {} |",
                pattern.label(),
                path.label(),
                timing.median_ms(),
                bandwidth / 1e9,
                check_cell(wrong)
            );
        }
    }
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_stay_in_the_table_and_neighbourhoods_stay_near_home() {
        let mut random = Random::new(3);
        for (n, table) in [(1, 1), (1000, 7), (4096, 1 << 20), (100_000, 1000)] {
            for pattern in Pattern::ALL {
                let indices = pattern.indices(n, table, &mut random);
                assert!(
                    indices.iter().all(|&j| (0..table as i32).contains(&j)),
                    "{pattern:?} {n} {table}"
                );
            }
        }
        let near = Pattern::Neighbourhood.indices(4096, 1 << 20, &mut random);
        for (i, &j) in near.iter().enumerate() {
            assert!((j as i64 - (i as i64 * 256)).abs() <= 64, "{i}: {j}");
        }
    }

    #[test]
    fn the_kernels_are_the_three_paths() {
        for path in Path::ALL {
            assert!(kernels::MEMORY.in_every_build(path.kernel()), "{}", path.kernel());
        }
        let source = include_str!("../../kernels/cuda/memory.cu");
        assert!(source.contains("const float* __restrict__ in") && source.contains("__ldg(&in[__ldg(&index[i])])"));
        assert!(source.contains("tex1Dfetch<float>(in, index[i])"));
    }
}

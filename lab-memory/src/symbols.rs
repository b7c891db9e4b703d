//! `--mode symbols`: the Chinese notes' `__device__` variables (`kernels/cuda/memory.cu`): written from
//! the host with `cudaMemcpyToSymbol`, changed by a kernel, read back with `cudaMemcpyFromSymbol`.

use anyhow::Result;
use common::check_cuda;
use common::verify::Random;
use cust::launch;
use cust::memory::CopyDestination;
use cust::module::Module;

/// `SYMBOL_LENGTH` in memory.cu: the length of `devArray`.
pub const SYMBOL_LENGTH: usize = 256;

/// What the host puts in and gets back.
#[derive(Debug, Clone, PartialEq)]
pub struct Symbols {
    pub data: f32,
    pub array: Vec<f32>,
}

impl Symbols {
    /// What `scale_symbols(factor)` makes of `self`, computed on the CPU (each element one multiply
    /// and one add, rounded as the GPU rounds them: `devArray[i] * factor + i` may be fused there, so
    /// the check allows one rounding).
    pub fn scaled(&self, factor: f32) -> Symbols {
        Symbols {
            data: self.data * factor,
            array: self
                .array
                .iter()
                .enumerate()
                .map(|(i, x)| x.mul_add(factor, i as f32))
                .collect(),
        }
    }

    /// Elements (devData first) further than one rounding from `expected`.
    pub fn differences(&self, expected: &Symbols) -> usize {
        let close = |x: f32, y: f32| (x - y).abs() <= f32::EPSILON * x.abs().max(y.abs()).max(1.0);
        usize::from(!close(self.data, expected.data))
            + self
                .array
                .iter()
                .zip(&expected.array)
                .filter(|(x, y)| !close(**x, **y))
                .count()
    }
}

/// cudaMemcpyToSymbol(devData, ...), cudaMemcpyToSymbol(devArray, ...), scale_symbols<<<1, 256>>>,
/// cudaMemcpyFromSymbol for both.
pub fn round_trip(module: &Module, input: &Symbols, factor: f32) -> Result<Symbols> {
    let mut data = check_cuda!(module.get_global::<f32>(c"devData"))?;
    let mut array = check_cuda!(module.get_global::<[f32; SYMBOL_LENGTH]>(c"devArray"))?;
    let host_array: [f32; SYMBOL_LENGTH] = input
        .array
        .clone()
        .try_into()
        .map_err(|_| anyhow::anyhow!("devArray holds {SYMBOL_LENGTH} floats"))?;
    check_cuda!(data.copy_from(&input.data))?;
    check_cuda!(array.copy_from(&host_array))?;
    let scale = check_cuda!(module.get_function("scale_symbols"))?;
    let stream = crate::new_stream()?;
    // __global__ void scale_symbols(float factor)
    // SAFETY: one float, as the kernel above takes; it writes only the module's own __constant__ and
    // __device__ symbols.
    check_cuda!(unsafe { launch!(scale<<<1, SYMBOL_LENGTH as u32, 0, stream>>>(factor)) })?;
    check_cuda!(stream.synchronize())?;
    let (mut data_back, mut array_back) = (0.0f32, [0.0f32; SYMBOL_LENGTH]);
    check_cuda!(data.copy_to(&mut data_back))?;
    check_cuda!(array.copy_to(&mut array_back))?;
    Ok(Symbols {
        data: data_back,
        array: array_back.to_vec(),
    })
}

/// `--mode symbols`: devData and devArray to the GPU, doubled (plus the index) there, back, against
/// the CPU. Returns whether all values match.
#[allow(clippy::approx_constant)] // 3.14 is the notes' value for devData, not an approximation of pi
pub fn report(module: &Module, seed: u64) -> Result<bool> {
    let mut random = Random::new(seed);
    let input = Symbols {
        data: 3.14,
        array: (0..SYMBOL_LENGTH).map(|_| random.uniform(-1.0, 1.0) as f32).collect(),
    };
    let factor = 2.0;
    let output = round_trip(module, &input, factor)?;
    let differences = output.differences(&input.scaled(factor));
    println!("\n__device__ symbols: cudaMemcpyToSymbol(devData, 3.14) and devArray[{SYMBOL_LENGTH}] (random), scale_symbols<<<1, {SYMBOL_LENGTH}>>>({factor}),");
    println!(
        "cudaMemcpyFromSymbol: devData = {} (CPU {}), devArray[1] = {} (CPU {}), {differences} of {} values differ: {}",
        output.data,
        input.scaled(factor).data,
        output.array[1],
        input.scaled(factor).array[1],
        SYMBOL_LENGTH + 1,
        if differences == 0 { "PASS" } else { "FAIL" }
    );
    Ok(differences == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::approx_constant)] // the notes' 3.14, not pi
    fn scaling_multiplies_and_adds_the_index() {
        let input = Symbols {
            data: 3.14,
            array: vec![1.0, 2.0, 0.5],
        };
        let scaled = input.scaled(2.0);
        assert_eq!(
            scaled,
            Symbols {
                data: 6.28,
                array: vec![2.0, 5.0, 3.0]
            }
        );
        assert_eq!(scaled.differences(&input.scaled(2.0)), 0);
        assert_eq!(input.differences(&scaled), 4);
    }

    #[test]
    fn the_symbols_exist_with_the_sizes_the_host_assumes() {
        let source = include_str!("../../kernels/cuda/memory.cu");
        assert!(source.contains(&format!("#define SYMBOL_LENGTH {SYMBOL_LENGTH}")));
        assert!(
            source.contains("__device__ float devData;")
                && source.contains("__device__ float devArray[SYMBOL_LENGTH];")
        );
    }
}

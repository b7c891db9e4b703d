//! `--mode symbols`: the Chinese notes' global variables (`kernels/cuda/memory.cu`), every way the notes
//! list to reach them from the host:
//! - `__device__ float devData` and an array: written with `cudaMemcpyToSymbol`, changed by a kernel,
//!   read back with `cudaMemcpyFromSymbol`;
//! - `__device__ float* devPointer`: a `cudaMalloc`'d address copied into the symbol, which a kernel
//!   writes through;
//! - `__constant__ float constData[256]`: written with `cudaMemcpyToSymbol`, read back both with
//!   `cudaMemcpyFromSymbol` and with a plain copy from the address `cudaGetSymbolAddress` gives;
//! - `__device__ int reduction_lock = 0`, used as a lock by the blocks of a sum, each with a
//!   `__shared__ int` that one thread sets for the block.

use anyhow::Result;
use common::check_cuda;
use common::verify::check_cell;
use common::verify::{poisoned_device_buffer, Random};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};
use cust::module::Module;

use crate::{blocks_for, differing_bits};

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

/// What the host reads back after `through_pointer`: the buffer `devPointer` points to, and
/// `constData` read two ways.
#[derive(Debug, Clone, PartialEq)]
pub struct Constants {
    /// `devPointer[i] = 2 * constData[i] + i`, copied back from the cudaMalloc'd buffer.
    pub through_pointer: Vec<f32>,
    /// `cudaMemcpyFromSymbol(data, constData, sizeof(data))`.
    pub from_symbol: Vec<f32>,
    /// `cudaGetSymbolAddress(&address, constData)`, then a plain device-to-host copy from `address`.
    pub by_address: Vec<f32>,
}

/// What `through_pointer` writes for `constants`: `2 * constData[i] + i` (the doubling is exact, so
/// one rounding, fused or not).
pub fn through_pointer_expected(constants: &[f32]) -> Vec<f32> {
    constants.iter().enumerate().map(|(i, c)| 2.0 * c + i as f32).collect()
}

/// cudaMalloc(&ptr), cudaMemcpyToSymbol(devPointer, &ptr, sizeof(ptr)), cudaMemcpyToSymbol(constData,
/// data), through_pointer<<<1, 256>>>(), then the buffer and constData back.
pub fn constants(module: &Module, data: &[f32; SYMBOL_LENGTH]) -> Result<Constants> {
    let buffer = poisoned_device_buffer::<f32>(SYMBOL_LENGTH)?;
    // The symbol is a `float*`: 8 bytes that hold the buffer's device address.
    let mut dev_pointer = check_cuda!(module.get_global::<u64>(c"devPointer"))?;
    check_cuda!(dev_pointer.copy_from(&buffer.as_device_ptr().as_raw()))?;
    let mut const_data = check_cuda!(module.get_global::<[f32; SYMBOL_LENGTH]>(c"constData"))?;
    check_cuda!(const_data.copy_from(data))?;
    let through_pointer = check_cuda!(module.get_function("through_pointer"))?;
    let stream = crate::new_stream()?;
    // __global__ void through_pointer(void)
    // SAFETY: no arguments, as the kernel takes; it writes SYMBOL_LENGTH floats through devPointer,
    // which holds `buffer`'s address, and `buffer` lives until after the synchronize below.
    check_cuda!(unsafe { launch!(through_pointer<<<1, SYMBOL_LENGTH as u32, 0, stream>>>()) })?;
    check_cuda!(stream.synchronize())?;
    let mut through = vec![0.0f32; SYMBOL_LENGTH];
    check_cuda!(buffer.copy_to(&mut through[..]))?;
    let mut from_symbol = [0.0f32; SYMBOL_LENGTH];
    check_cuda!(const_data.copy_to(&mut from_symbol))?;
    let mut by_address = vec![0.0f32; SYMBOL_LENGTH];
    // SAFETY: the address and size cuModuleGetGlobal gave for constData: SYMBOL_LENGTH floats that
    // live as long as `module`, which outlives this copy.
    let constant_memory =
        unsafe { DeviceSlice::from_raw_parts(const_data.as_device_ptr().cast::<f32>(), SYMBOL_LENGTH) };
    check_cuda!(constant_memory.copy_to(&mut by_address[..]))?;
    Ok(Constants {
        through_pointer: through,
        from_symbol: from_symbol.to_vec(),
        by_address,
    })
}

/// Values the default run sums under the lock: enough blocks to queue for it.
pub const LOCKED_VALUES: usize = 1_000_003;

/// `BLOCK` of locked_sum.
pub const LOCK_BLOCK: u32 = 256;

/// What the blocks of locked_sum left under the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Locked {
    pub total: i64,
    pub blocks: i32,
    /// `reduction_lock` afterwards: 0 when every block let it go.
    pub lock: i32,
}

/// Zeroes lockedTotal and lockedBlocks, runs locked_sum over `input` (blocks of [`LOCK_BLOCK`]) and
/// reads the three symbols back.
pub fn locked_sum(module: &Module, input: &[i32]) -> Result<Locked> {
    anyhow::ensure!(
        !input.is_empty() && input.len() <= i32::MAX as usize,
        "locked_sum takes 1 to 2^31 - 1 values"
    );
    let mut total = check_cuda!(module.get_global::<i64>(c"lockedTotal"))?;
    let mut blocks = check_cuda!(module.get_global::<i32>(c"lockedBlocks"))?;
    let lock = check_cuda!(module.get_global::<i32>(c"reduction_lock"))?;
    check_cuda!(total.copy_from(&0))?;
    check_cuda!(blocks.copy_from(&0))?;
    let device_input = check_cuda!(DeviceBuffer::from_slice(input))?;
    let function = check_cuda!(module.get_function("locked_sum"))?;
    let stream = crate::new_stream()?;
    let grid = blocks_for(input.len(), LOCK_BLOCK);
    // __global__ void locked_sum(const int* in, int n)
    // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order; it
    // reads `n` ints of `device_input`, which lives until after the synchronize below.
    check_cuda!(unsafe {
        launch!(function<<<grid, LOCK_BLOCK, 0, stream>>>(device_input.as_device_ptr(), input.len() as i32))
    })?;
    check_cuda!(stream.synchronize())?;
    let mut locked = Locked {
        total: 0,
        blocks: 0,
        lock: -1,
    };
    check_cuda!(total.copy_to(&mut locked.total))?;
    check_cuda!(blocks.copy_to(&mut locked.blocks))?;
    check_cuda!(lock.copy_to(&mut locked.lock))?;
    Ok(locked)
}

/// What locked_sum must leave for `input`.
pub fn locked_expected(input: &[i32]) -> Locked {
    Locked {
        total: input.iter().map(|&x| i64::from(x)).sum(),
        blocks: blocks_for(input.len(), LOCK_BLOCK) as i32,
        lock: 0,
    }
}

/// `--mode symbols`: devData and devArray to the GPU, doubled (plus the index) there, back, against
/// the CPU; then devPointer and constData ([`constants`]), and the sum under reduction_lock
/// ([`locked_sum`]). Returns whether all values match.
#[allow(clippy::approx_constant)] // 3.14 is the notes' value for devData, not an approximation of pi
pub fn report(module: &Module, seed: u64) -> Result<bool> {
    let mut random = Random::new(seed);
    let input = Symbols {
        data: 3.14,
        array: (0..SYMBOL_LENGTH).map(|_| random.uniform(-1.0, 1.0) as f32).collect(),
    };
    let factor = 2.0;
    let output = round_trip(module, &input, factor)?;
    let expected = input.scaled(factor);
    let differences = output.differences(&expected);
    println!("\n__device__ symbols: cudaMemcpyToSymbol(devData, 3.14) and devArray[{SYMBOL_LENGTH}] (random), scale_symbols<<<1, {SYMBOL_LENGTH}>>>({factor}),");
    println!(
        "cudaMemcpyFromSymbol: devData = {} (CPU {}), devArray[1] = {} (CPU {}), {differences} of {} values differ: {}",
        output.data,
        expected.data,
        output.array[1],
        expected.array[1],
        SYMBOL_LENGTH + 1,
        if differences == 0 { "PASS" } else { "FAIL" }
    );
    let data: [f32; SYMBOL_LENGTH] = std::array::from_fn(|_| random.uniform(-1.0, 1.0) as f32);
    let got = constants(module, &data)?;
    let wrong = [
        differing_bits(&got.through_pointer, &through_pointer_expected(&data)),
        differing_bits(&got.from_symbol, &data),
        differing_bits(&got.by_address, &data),
    ];
    println!("\n| the notes' way | what the host reads back | values that differ from the CPU | check |");
    println!("|----------------|--------------------------|---------------------------------|-------|");
    for (way, read, wrong) in [
        (
            "cudaMemcpyToSymbol(devPointer, &ptr, sizeof(ptr)), constData written with cudaMemcpyToSymbol",
            "ptr[i] = 2 * constData[i] + i, written by a kernel through devPointer",
            wrong[0],
        ),
        (
            "cudaMemcpyFromSymbol(data, constData, sizeof(data))",
            "constData",
            wrong[1],
        ),
        (
            "cudaGetSymbolAddress(&address, constData), cudaMemcpy from address",
            "constData",
            wrong[2],
        ),
    ] {
        println!(
            "| {way} | {read} | {wrong} of {SYMBOL_LENGTH} | {} |",
            check_cell(wrong)
        );
    }
    let input: Vec<i32> = (0..LOCKED_VALUES).map(|_| random.below(1000) as i32).collect();
    let locked = locked_sum(module, &input)?;
    let expected = locked_expected(&input);
    println!(
        "\n__device__ int reduction_lock as a lock: {} blocks of {LOCK_BLOCK} each add their __shared__ int sum to plain __device__ variables under it:\ntotal {} (CPU {}), blocks counted {} (CPU {}), reduction_lock afterwards {}: {}",
        expected.blocks,
        locked.total,
        expected.total,
        locked.blocks,
        expected.blocks,
        locked.lock,
        if locked == expected { "PASS" } else { "FAIL" }
    );
    Ok(differences == 0 && wrong == [0; 3] && locked == expected)
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
    fn the_lock_counts_every_block_once_and_the_pointer_kernel_doubles() {
        let input = vec![7; 257];
        assert_eq!(
            locked_expected(&input),
            Locked {
                total: 7 * 257,
                blocks: 2,
                lock: 0
            }
        );
        assert_eq!(through_pointer_expected(&[0.5, -1.0, 0.25]), [1.0, -1.0, 2.5]);
        assert_eq!(
            differing_bits(&[0.0, 1.0], &[-0.0, 1.0, 2.0]),
            2,
            "-0 is not 0, and a missing value counts"
        );
    }

    #[test]
    fn the_symbols_exist_with_the_sizes_the_host_assumes() {
        let source = include_str!("../../kernels/cuda/memory.cu");
        assert!(source.contains(&format!("#define SYMBOL_LENGTH {SYMBOL_LENGTH}")));
        assert!(
            source.contains("__device__ float devData;")
                && source.contains("__device__ float devArray[SYMBOL_LENGTH];")
                && source.contains("__device__ float* devPointer;")
                && source.contains("__constant__ float constData[SYMBOL_LENGTH];")
                && source.contains("__device__ int reduction_lock = 0;")
                && source.contains("__device__ long long lockedTotal;")
                && source.contains("__device__ int lockedBlocks;")
        );
    }
}

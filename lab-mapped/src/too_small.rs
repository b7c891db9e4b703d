//! `--too-small`: the German slides' third case for mapped memory, "when the GPU's memory would not
//! suffice otherwise". Today's GPUs hold far more than a lab's inputs, so the lab makes its GPU small:
//! a filler allocation takes all free device memory but half of what vectorAdd's three arrays need.
//! Then vectorAdd runs both ways. The explicit program cannot allocate its device arrays; the
//! zero-copy program allocates nothing on the GPU and computes c across the bus.

use anyhow::{ensure, Result};
use common::check_cuda;
use common::error::CudaCallError;
use common::host_memory::Mapped;
use common::timing::{time_on_stream, Timing};
use common::verify::Poison;
use cust::error::{CudaError, CudaResult};
use cust::function::Function;
use cust::memory::DeviceBuffer;
use cust::stream::Stream;

use crate::{launch_add, random_inputs, wrong_sums, BLOCK_SIZE};

/// What the filler gives back per try when the driver refuses it: free memory as reported is not
/// all allocatable in one piece.
const STEP_BYTES: usize = 64 << 20;

/// What happened to each program on the GPU made small.
pub struct TooSmall {
    /// Bytes of device memory vectorAdd's explicit program needs (a, b and c).
    pub needed: u64,
    /// Bytes the driver reported free once the filler was in place.
    pub left: u64,
    /// The explicit program's allocation: the driver's error, or `None` if it got its memory.
    pub explicit_error: Option<CudaCallError>,
    /// The zero-copy kernel's time.
    pub zero_copy: Timing,
    /// Elements of the zero-copy c that are not a + b (every element checked).
    pub wrong: usize,
}

impl TooSmall {
    /// The lesson holds: the explicit program was refused for lack of memory, and the zero-copy one
    /// computed every element.
    pub fn passed(&self) -> bool {
        self.refused() && self.wrong == 0
    }

    fn refused(&self) -> bool {
        self.explicit_error
            .as_ref()
            .is_some_and(|error| error.code == CudaError::OutOfMemory as u32)
    }
}

/// Fills the GPU but half of what vectorAdd on `n` floats needs, then runs it both ways: the explicit
/// program's allocations, then the zero-copy kernel (`repetitions` times after a warm-up). The filler
/// is freed before this returns.
pub fn run(add: &Function, n: usize, repetitions: usize, seed: u64, stream: &Stream) -> Result<TooSmall> {
    let needed = 3 * n * size_of::<f32>();
    let filler = fill_all_but(needed / 2)?;
    let (left, _total) = check_cuda!(cust::memory::mem_get_info())?;
    ensure!(
        left < needed,
        "--too-small: the GPU still has {} free after the filler, enough for vectorAdd's {}",
        common::format_bytes(left as u64),
        common::format_bytes(needed as u64)
    );
    let explicit_error = check_cuda!(explicit_allocation(n)).err();

    let (a_values, b_values) = random_inputs(n, seed);
    let (mut a, mut b) = (Mapped::new(n, 0.0f32, false)?, Mapped::new(n, 0.0f32, false)?);
    let c = Mapped::new(n, f32::POISON, false)?;
    a.copy_from_slice(&a_values);
    b.copy_from_slice(&b_values);
    let pointers = [a.device_pointer()?, b.device_pointer()?, c.device_pointer()?];
    let blocks = (n as u32).div_ceil(BLOCK_SIZE);
    let zero_copy = time_on_stream(stream, 1, repetitions, || launch_add(add, pointers, n, blocks, stream))?;
    check_cuda!(stream.synchronize())?;
    let wrong = wrong_sums(&a_values, &b_values, &c);
    drop(filler);
    Ok(TooSmall {
        needed: needed as u64,
        left: left as u64,
        explicit_error,
        zero_copy,
        wrong,
    })
}

/// The explicit program's `cudaMalloc`s for a, b and c, freed at once.
fn explicit_allocation(n: usize) -> CudaResult<()> {
    // SAFETY: never read: the buffers only test whether the memory can be had.
    let buffers: CudaResult<Vec<DeviceBuffer<f32>>> =
        (0..3).map(|_| unsafe { DeviceBuffer::uninitialized(n) }).collect();
    buffers.map(drop)
}

/// One device allocation of all free memory but `keep` bytes, smaller by [`STEP_BYTES`] each time the
/// driver refuses it.
fn fill_all_but(keep: usize) -> Result<DeviceBuffer<u8>> {
    let (free, _total) = check_cuda!(cust::memory::mem_get_info())?;
    let mut bytes = free.saturating_sub(keep);
    loop {
        // SAFETY: never read: the filler only holds memory.
        let filler = unsafe { DeviceBuffer::<u8>::uninitialized(bytes) };
        if matches!(filler, Err(CudaError::OutOfMemory)) && bytes > STEP_BYTES {
            bytes -= STEP_BYTES;
            continue;
        }
        return Ok(check_cuda!(filler)?);
    }
}

/// The table `--too-small` prints; returns whether the lesson held.
pub fn report(result: &TooSmall, n: usize) -> bool {
    println!(
        "\nThe GPU made too small (German slides: mapped memory \"when the GPU's memory would not suffice\"): a filler leaves {} free; vectorAdd on {n} floats needs {}\n",
        common::format_bytes(result.left),
        common::format_bytes(result.needed)
    );
    println!("| program | device memory it allocates | what happened | GPU time in ms | check |");
    println!("|---------|----------------------------|---------------|----------------|-------|");
    println!(
        "| explicit: cudaMalloc a, b, c, copies, kernel | {} | {} | - | {} |",
        common::format_bytes(result.needed),
        match &result.explicit_error {
            Some(error) => format!("cudaMalloc failed: {}", error.name()),
            None => "it got its memory (the GPU was not made small enough)".to_string(),
        },
        if result.refused() { "PASS" } else { "FAIL" }
    );
    println!(
        "| zero-copy: the kernel reads a and b and writes c in mapped host memory | 0 | ran | {:.3} | {} |",
        result.zero_copy.median_ms(),
        if result.wrong == 0 {
            "PASS".to_string()
        } else {
            format!("FAIL ({} of {n} elements wrong)", result.wrong)
        }
    );
    result.passed()
}

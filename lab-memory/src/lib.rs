//! lab-memory's experiments, one module a `--mode`: each module's `report` runs its mode and prints its
//! tables for `main.rs`; the parts it is made of are called by the GPU tests too.

pub mod banks;
pub mod cache;
pub mod coalescing;
pub mod coherence;
pub mod contexts;
pub mod cpu_memory;
pub mod device_query;
pub mod divergence;
pub mod indexing;
pub mod latency;
pub mod line_order;
pub mod local_arrays;
pub mod readonly;
pub mod registers;
pub mod small_words;
pub mod symbols;
pub mod transactions;

use anyhow::Result;
use common::check_cuda;
use common::phases::{self, Phase};
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};

/// Blocks of `block` threads that cover `n` threads: `(n + block - 1) / block`.
pub fn blocks_for(n: usize, block: u32) -> u32 {
    n.div_ceil(block as usize) as u32
}

/// The stream an experiment launches on and times with events.
pub fn new_stream() -> Result<Stream> {
    Ok(check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?)
}

/// Copies `out` back and counts the elements whose bits differ from `expected` (bit for bit: these
/// kernels move or add floats in the CPU's order, so nothing may round differently).
pub fn differing(out: &DeviceBuffer<f32>, expected: &[f32]) -> Result<usize> {
    let mut back = vec![0.0f32; out.len()];
    check_cuda!(out.copy_to(&mut back[..]))?;
    let _phase = phases::enter(Phase::Verify);
    Ok(differing_bits(&back, expected))
}

/// Elements of `got` whose bits differ from `expected`'s, plus any difference in length.
pub fn differing_bits(got: &[f32], expected: &[f32]) -> usize {
    got.len().abs_diff(expected.len())
        + got
            .iter()
            .zip(expected)
            .filter(|(g, e)| g.to_bits() != e.to_bits())
            .count()
}

/// memory.cu's `mix`: the 32-bit integer hash behind the inputs the GPU makes itself (coalescing) and
/// the positions it reads (cache), recomputed here for the CPU reference.
pub fn mix(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

//! How every lab checks itself: random inputs that are never all zero, outputs poisoned before the run
//! so unwritten elements show, a CPU reference, and a PASS/FAIL verdict that fails the program.

use anyhow::{bail, Result};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy};

use crate::check_cuda;

/// A small, seedable random generator (SplitMix64), so a run can be repeated from its printed seed
/// independently of any crate's versioned algorithms.
#[derive(Debug, Clone)]
pub struct Random {
    state: u64,
}

impl Random {
    pub fn new(seed: u64) -> Random {
        Random { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [low, high).
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.next_f64()
    }

    /// Uniform in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A value no correct kernel writes, to fill output buffers with before a run.
pub trait Poison: DeviceCopy {
    const POISON: Self;
    /// True if this element still holds the poison (NaN for floats, where `==` would not work).
    fn is_poison(&self) -> bool;
}

impl Poison for f32 {
    const POISON: f32 = f32::NAN;
    fn is_poison(&self) -> bool {
        self.is_nan()
    }
}

impl Poison for f64 {
    const POISON: f64 = f64::NAN;
    fn is_poison(&self) -> bool {
        self.is_nan()
    }
}

impl Poison for u32 {
    const POISON: u32 = 0xDEAD_BEEF;
    fn is_poison(&self) -> bool {
        *self == Self::POISON
    }
}

/// A device buffer of `len` elements filled with poison: anything the kernel leaves unwritten stays
/// NaN (or 0xDEADBEEF) and fails the comparison with the CPU.
pub fn poisoned_device_buffer<T: Poison>(len: usize) -> Result<DeviceBuffer<T>> {
    Ok(check_cuda!(DeviceBuffer::from_slice(&vec![T::POISON; len]))?)
}

/// Overwrites an existing device buffer with poison.
pub fn poison<T: Poison>(buffer: &mut DeviceBuffer<T>) -> Result<()> {
    let poison = vec![T::POISON; buffer.len()];
    Ok(check_cuda!(buffer.copy_from(&poison))?)
}

/// The largest `|gpu - cpu| / scale` over all elements, and where; `scale` is `|cpu|` per element, or
/// `floor` where that is smaller, so values near zero are judged absolutely. Unwritten (poisoned) or
/// NaN elements give infinity, and so do slices of different lengths.
pub fn max_relative_error(gpu: &[f64], cpu: &[f64], floor: f64) -> (f64, usize) {
    if gpu.len() != cpu.len() {
        return (f64::INFINITY, gpu.len().min(cpu.len()));
    }
    let mut worst = (0.0, 0);
    for (index, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        let error = if g.is_nan() || c.is_nan() { f64::INFINITY } else { (g - c).abs() / c.abs().max(floor) };
        if error > worst.0 {
            worst = (error, index);
        }
    }
    worst
}

/// Prints `Result = PASS` or `Result = FAIL` like cuda-samples, and fails the program on FAIL.
pub fn verdict(pass: bool, what: &str) -> Result<()> {
    if pass {
        println!("Result = PASS");
        Ok(())
    } else {
        println!("Result = FAIL");
        bail!("{what}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_is_repeatable_and_covers_the_interval() {
        let (mut a, mut b) = (Random::new(7), Random::new(7));
        let draws: Vec<f64> = (0..1000).map(|_| a.uniform(-1.0, 1.0)).collect();
        assert!(draws.iter().zip((0..1000).map(|_| b.uniform(-1.0, 1.0))).all(|(x, y)| *x == y));
        assert!(draws.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(draws.iter().any(|x| *x < -0.9) && draws.iter().any(|x| *x > 0.9));
        assert_ne!(Random::new(8).next_u64(), Random::new(7).next_u64());
    }

    #[test]
    fn relative_error_finds_the_worst_element_and_poison() {
        let cpu = [1.0, 100.0, 0.0];
        assert_eq!(max_relative_error(&[1.0, 101.0, 0.0], &cpu, 1e-3), (0.01, 1));
        assert_eq!(max_relative_error(&[1.0, 100.0, 1e-6], &cpu, 1e-3).1, 2);
        assert_eq!(max_relative_error(&[f64::NAN, 100.0, 0.0], &cpu, 1e-3), (f64::INFINITY, 0));
    }

    #[test]
    fn poison_is_recognised() {
        assert!(f32::POISON.is_poison() && f64::POISON.is_poison() && u32::POISON.is_poison());
        assert!(!1.0f64.is_poison() && !0u32.is_poison());
    }

    #[test]
    fn a_failed_verdict_is_an_error() {
        assert!(verdict(true, "x").is_ok());
        assert_eq!(verdict(false, "GPU and CPU differ").unwrap_err().to_string(), "GPU and CPU differ");
    }
}

//! How every lab checks itself: random inputs that are never all zero, outputs poisoned before the run
//! so unwritten elements show, a CPU reference, and a PASS/FAIL verdict that fails the program.

use anyhow::{bail, ensure, Result};
use cust::memory::{DeviceBuffer, DeviceCopy};

use rand_pcg::rand_core::{Rng as _, SeedableRng as _};
use rand_pcg::Pcg64Mcg;
use rayon::prelude::*;

use crate::check_cuda;

/// The labs' seedable random numbers: PCG-64 (MCG variant) from `rand_pcg`, whose output for a seed
/// is promised not to change between versions, so a printed seed repeats a run's inputs exactly.
/// The conversions to floats and ranges below are ours and fixed for the same reason.
#[derive(Debug, Clone)]
pub struct Random {
    generator: Pcg64Mcg,
}

impl Random {
    pub fn new(seed: u64) -> Random {
        Random {
            generator: Pcg64Mcg::seed_from_u64(seed),
        }
    }

    /// A generator whose values no one knows in advance: seeded from the operating system's
    /// randomness (the keys std draws for its hash maps), for inputs a kernel must not be able to
    /// expect (issue 61). Its values are not reproducible; a seed on a command line would be readable.
    pub fn unpredictable() -> Random {
        use std::hash::{BuildHasher as _, Hasher as _};
        Random::new(std::collections::hash_map::RandomState::new().build_hasher().finish())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.generator.next_u64()
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

    /// The elements of `n` a check looks at: every one where checking all of them costs at most
    /// `budget` (`cost` each), else `samples` drawn from `self`, sorted and each once. For checks that
    /// run after every timed launch (issue 61), whose CPU side must stay a fraction of a case's time.
    pub fn checked_indices(&mut self, n: usize, cost: u64, budget: u64, samples: usize) -> Vec<usize> {
        if (n as u64).saturating_mul(cost) <= budget {
            return (0..n).collect();
        }
        let mut drawn: Vec<usize> = (0..samples).map(|_| self.below(n as u64) as usize).collect();
        drawn.sort_unstable();
        drawn.dedup();
        drawn
    }

    /// Fills `values` with `draw` on all cores: each stretch of 64 Ki values from its own generator,
    /// seeded by one draw of `self`, so the values depend on the seed alone, not on the number of
    /// cores (a 1 GiB buffer in milliseconds, not a second).
    pub fn fill<T: Send>(&mut self, values: &mut [T], draw: impl Fn(&mut Random) -> T + Sync) {
        const STRETCH: usize = 1 << 16;
        let seed = self.next_u64();
        values.par_chunks_mut(STRETCH).enumerate().for_each(|(index, stretch)| {
            let mut random = Random::new(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            for value in stretch {
                *value = draw(&mut random);
            }
        });
    }
}

/// A value no correct kernel writes, to fill output buffers with before a run. Its bits are one 32-bit
/// word repeated, so the GPU fills a buffer with it by itself (`cuMemsetD32`, no host copy).
pub trait Poison: DeviceCopy {
    /// The repeated word: all ones is a NaN both as f32 and as f64.
    const POISON_WORD: u32;
    const POISON: Self;
    /// A second poison, for a second run: an element that holds [`Poison::POISON_WORD`] after the first
    /// run and this after the second was never written; one that holds a poison only once was
    /// written with those bits (a kernel's own NaN). A NaN as f32 and f64 too, with other bits.
    const SECOND_POISON_WORD: u32;
    /// True if this element still holds the poison (NaN for floats, where `==` would not work).
    fn is_poison(&self) -> bool;
    /// The element's bits, to compare exactly (NaN == NaN, 0.0 != -0.0).
    fn bits(&self) -> u64;
    /// True if the element is `word` repeated: the memset's pattern.
    fn holds_word(&self, word: u32) -> bool {
        let repeated = u64::from(word) << 32 | u64::from(word);
        let size = std::mem::size_of::<Self>();
        self.bits() == if size >= 8 { repeated } else { u64::from(word) }
    }
}

impl Poison for f32 {
    const POISON_WORD: u32 = u32::MAX;
    const POISON: f32 = f32::from_bits(u32::MAX);
    const SECOND_POISON_WORD: u32 = 0x7FF5_5A5A;
    fn is_poison(&self) -> bool {
        self.is_nan()
    }
    fn bits(&self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Poison for f64 {
    const POISON_WORD: u32 = u32::MAX;
    const POISON: f64 = f64::from_bits(u64::MAX);
    const SECOND_POISON_WORD: u32 = 0x7FF5_5A5A;
    fn is_poison(&self) -> bool {
        self.is_nan()
    }
    fn bits(&self) -> u64 {
        self.to_bits()
    }
}

impl Poison for u32 {
    const POISON_WORD: u32 = 0xDEAD_BEEF;
    const POISON: u32 = 0xDEAD_BEEF;
    const SECOND_POISON_WORD: u32 = 0x0BAD_F00D;
    fn is_poison(&self) -> bool {
        *self == Self::POISON
    }
    fn bits(&self) -> u64 {
        u64::from(*self)
    }
}

impl Poison for u64 {
    const POISON_WORD: u32 = 0xDEAD_BEEF;
    const POISON: u64 = 0xDEAD_BEEF_DEAD_BEEF;
    const SECOND_POISON_WORD: u32 = 0x0BAD_F00D;
    fn is_poison(&self) -> bool {
        *self == Self::POISON
    }
    fn bits(&self) -> u64 {
        *self
    }
}

/// A device buffer of `len` elements filled with poison: anything the kernel leaves unwritten stays
/// NaN (or 0xDEADBEEF) and fails the comparison with the CPU.
pub fn poisoned_device_buffer<T: Poison>(len: usize) -> Result<DeviceBuffer<T>> {
    // SAFETY: every element is written by the memset below before anything reads it.
    let mut buffer = check_cuda!(unsafe { DeviceBuffer::uninitialized(len) })?;
    poison(&mut buffer)?;
    Ok(buffer)
}

/// Overwrites an existing device buffer with poison (a memset on the device; synchronous, so do it
/// outside timed regions).
pub fn poison<T: Poison>(buffer: &mut DeviceBuffer<T>) -> Result<()> {
    let bytes = buffer.len() * std::mem::size_of::<T>();
    ensure!(
        bytes.is_multiple_of(4),
        "a poisoned buffer must hold whole 32-bit words"
    );
    // SAFETY: `bytes / 4` words from the start of the buffer are exactly the buffer.
    Ok(check_cuda!(unsafe {
        crate::raw::cuMemsetD32(buffer.as_device_ptr().as_raw(), T::POISON_WORD, bytes / 4)
    })?)
}

/// The largest `|gpu - cpu| / scale` over all elements, and where (the first such element); `scale` is
/// `|cpu|` per element, or `floor` where that is smaller, so values near zero are judged absolutely.
/// Unwritten (poisoned) or NaN elements give infinity, and so do slices of different lengths. GPU
/// values may be f32 or f64; the comparison is in f64, on all cores.
pub fn max_relative_error<G: Copy + Into<f64> + Sync>(gpu: &[G], cpu: &[f64], floor: f64) -> (f64, usize) {
    max_error(gpu, cpu, |_, g, c| {
        if g.is_nan() || c.is_nan() {
            f64::INFINITY
        } else {
            (g - c).abs() / c.abs().max(floor)
        }
    })
}

/// The largest `error(index, gpu, cpu)` over all elements, and where (the first such element);
/// infinity for slices of different lengths. On all cores. [`max_relative_error`] is one such error;
/// lab-simpson's, each sum against its own error bound, another.
pub fn max_error<G: Copy + Into<f64> + Sync>(
    gpu: &[G],
    cpu: &[f64],
    error: impl Fn(usize, f64, f64) -> f64 + Sync,
) -> (f64, usize) {
    if gpu.len() != cpu.len() {
        return (f64::INFINITY, gpu.len().min(cpu.len()));
    }
    gpu.par_iter()
        .zip(cpu)
        .enumerate()
        .map(|(index, (&g, &c))| (error(index, g.into(), c), index))
        .reduce(
            || (0.0, 0),
            |x, y| if y.0 > x.0 || (y.0 == x.0 && y.1 < x.1) { y } else { x },
        )
}

/// Prints `Result = PASS` or `Result = FAIL` like cuda-samples, and fails the program on FAIL.
/// A table's check column: PASS, or how many elements were wrong.
pub fn check_cell(wrong: usize) -> String {
    if wrong == 0 {
        "PASS".to_string()
    } else {
        format!("FAIL ({wrong} wrong)")
    }
}

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
    fn every_index_is_checked_within_the_budget_and_a_sorted_sample_past_it() {
        let mut random = Random::new(3);
        assert_eq!(random.checked_indices(5, 4, 20, 2), [0, 1, 2, 3, 4]);
        let sampled = random.checked_indices(1000, 4, 20, 64);
        assert!(!sampled.is_empty() && sampled.len() <= 64, "{sampled:?}");
        assert!(sampled.windows(2).all(|pair| pair[0] < pair[1]) && sampled[sampled.len() - 1] < 1000);
    }

    #[test]
    fn random_is_repeatable_and_covers_the_interval() {
        let (mut a, mut b) = (Random::new(7), Random::new(7));
        let draws: Vec<f64> = (0..1000).map(|_| a.uniform(-1.0, 1.0)).collect();
        assert!(draws
            .iter()
            .zip((0..1000).map(|_| b.uniform(-1.0, 1.0)))
            .all(|(x, y)| *x == y));
        assert!(draws.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(draws.iter().any(|x| *x < -0.9) && draws.iter().any(|x| *x > 0.9));
        assert_ne!(Random::new(8).next_u64(), Random::new(7).next_u64());
    }

    #[test]
    fn relative_error_finds_the_worst_element_and_poison() {
        let cpu = [1.0, 100.0, 0.0];
        assert_eq!(max_relative_error(&[1.0, 101.0, 0.0], &cpu, 1e-3), (0.01, 1));
        assert_eq!(max_relative_error(&[1.0, 100.0, 1e-6], &cpu, 1e-3).1, 2);
        assert_eq!(
            max_relative_error(&[f64::NAN, 100.0, 0.0], &cpu, 1e-3),
            (f64::INFINITY, 0)
        );
    }

    #[test]
    fn poison_is_recognised() {
        assert!(f32::POISON.is_poison() && f64::POISON.is_poison() && u32::POISON.is_poison());
        assert_eq!(
            f32::POISON.to_bits(),
            f32::POISON_WORD,
            "the memset word makes the poison"
        );
        assert_eq!(
            f64::POISON.to_bits(),
            u64::from(f64::POISON_WORD) << 32 | u64::from(f64::POISON_WORD)
        );
        assert_eq!(u32::POISON, u32::POISON_WORD);
        assert!(!1.0f64.is_poison() && !0u32.is_poison());
        // The second poison is a poison too (NaN), but other bits.
        assert!(f64::from_bits(u64::from(f64::SECOND_POISON_WORD) << 32 | u64::from(f64::SECOND_POISON_WORD)).is_nan());
        assert!(f32::from_bits(f32::SECOND_POISON_WORD).is_nan());
        assert!(f64::POISON.holds_word(f64::POISON_WORD) && !f64::POISON.holds_word(f64::SECOND_POISON_WORD));
        assert!(
            f32::from_bits(f32::SECOND_POISON_WORD).holds_word(f32::SECOND_POISON_WORD)
                && 0xDEAD_BEEFu32.holds_word(u32::POISON_WORD)
        );
    }

    #[test]
    fn a_failed_verdict_is_an_error() {
        assert!(verdict(true, "x").is_ok());
        assert_eq!(
            verdict(false, "GPU and CPU differ").unwrap_err().to_string(),
            "GPU and CPU differ"
        );
    }
}

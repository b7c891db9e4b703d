//! `--mode coherence`: the German slides' "coherence only through the L2, writes go straight to it".
//! Two blocks of one thread (`l1_coherence` in `kernels/cuda/memory.cu`): the reader loads `x` through
//! its L1, the writer stores a new `x` and raises a flag, and the reader loads `x` again through its L1,
//! through L2 only and as a volatile load. The L2 and volatile loads must see the new value (the check);
//! the L1 load may still see the old line, which is the slide's point, and the table counts how often
//! it did. The multiprocessors of both blocks are shown: on one, they share an L1 and nothing can be
//! stale.

use anyhow::Result;
use common::check_cuda;
use common::verify::{Poison, Random};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;

use crate::new_stream;

/// Trials per run: the L1 load's outcome depends on timing, so one trial says little.
pub const TRIALS: usize = 20;
/// How long a block waits for the other's flag before it gives up (clock cycles, about a second).
const PATIENCE: i64 = 2_000_000_000;

/// What the reader saw in one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trial {
    pub before: u32,
    pub through_l1: u32,
    pub through_l2: u32,
    pub volatile: u32,
    pub writer_sm: u32,
    pub reader_sm: u32,
    /// Waits that gave up (the blocks were not resident together): the trial then proves nothing.
    pub gave_up: u32,
}

impl Trial {
    /// Whether the loads that must see the write saw it, the first load the old value, and no wait
    /// gave up.
    pub fn right(&self, old: u32, new: u32) -> bool {
        self.before == old && self.through_l2 == new && self.volatile == new && self.gave_up == 0
    }
}

/// One trial: `x` = `old` in device memory, the writer stores `new`.
pub fn trial(module: &Module, old: u32, new: u32) -> Result<Trial> {
    let x = check_cuda!(DeviceBuffer::from_slice(&[old]))?;
    let flags = check_cuda!(DeviceBuffer::from_slice(&[0u32, 0]))?;
    let mut start = [u32::POISON; 7];
    start[6] = 0;
    let out = check_cuda!(DeviceBuffer::from_slice(&start))?;
    let kernel = check_cuda!(module.get_function("l1_coherence"))?;
    let stream = new_stream()?;
    // __global__ void l1_coherence(unsigned* x, unsigned* flags, unsigned new_value, long long patience, unsigned* out)
    // SAFETY: the arguments match the kernel's C signature, in type and order; x holds one word, flags
    // two, out seven, all the kernel touches; each wait gives up after PATIENCE cycles, so the launch
    // ends even if the two blocks are never resident together.
    check_cuda!(unsafe {
        launch!(kernel<<<2, 1, 0, stream>>>(x.as_device_ptr(), flags.as_device_ptr(), new, PATIENCE, out.as_device_ptr()))
    })?;
    check_cuda!(stream.synchronize())?;
    let mut back = [0u32; 7];
    check_cuda!(out.copy_to(&mut back[..]))?;
    Ok(Trial {
        before: back[0],
        through_l1: back[1],
        through_l2: back[2],
        volatile: back[3],
        writer_sm: back[4],
        reader_sm: back[5],
        gave_up: back[6],
    })
}

/// The trials' counts: wrong trials, loads after the write that did not see it (by way), trials with
/// both blocks on one multiprocessor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub wrong: usize,
    pub stale_l1: usize,
    pub stale_l2: usize,
    pub stale_volatile: usize,
    pub same_sm: usize,
}

/// Runs `trials` trials, each with its own random old and new values.
pub fn run(module: &Module, trials: usize, seed: u64) -> Result<Counts> {
    let mut random = Random::new(seed);
    let mut counts = Counts::default();
    for _ in 0..trials {
        // Never poison, never equal: a load that read nothing or the wrong word shows.
        let old = 1 + random.below(1 << 30) as u32;
        let new = old + 1 + random.below(1 << 30) as u32;
        let t = trial(module, old, new)?;
        counts.wrong += usize::from(!t.right(old, new));
        counts.stale_l1 += usize::from(t.through_l1 != new);
        counts.stale_l2 += usize::from(t.through_l2 != new);
        counts.stale_volatile += usize::from(t.volatile != new);
        counts.same_sm += usize::from(t.writer_sm == t.reader_sm);
    }
    Ok(counts)
}

/// `--mode coherence`: the table. Returns whether every trial's L2 and volatile loads saw the write.
pub fn report(module: &Module, seed: u64) -> Result<bool> {
    let counts = run(module, TRIALS, seed)?;
    println!("\nCoherence: the reader loads x through its L1, another block writes x, the reader loads it again ({TRIALS} trials, {} with both blocks on one multiprocessor):\n", counts.same_sm);
    println!("| the reader's load after the write | saw the new x | did not | the slides |");
    println!("|-----------------------------------|---------------|----------|------------|");
    println!(
        "| through L1 (ld.global.ca) | {} | {} | not kept coherent: may hold the old line |",
        TRIALS - counts.stale_l1,
        counts.stale_l1
    );
    println!(
        "| through L2 only (ld.global.cg) | {} | {} | coherent: writes go straight to L2 |",
        TRIALS - counts.stale_l2,
        counts.stale_l2
    );
    println!(
        "| volatile | {} | {} | coherent (skips L1) |",
        TRIALS - counts.stale_volatile,
        counts.stale_volatile
    );
    println!(
        "\nThe L2 and volatile loads, and the load before the write: {}",
        common::verify::check_cell(counts.wrong)
    );
    Ok(counts.wrong == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_is_right_only_when_the_l2_and_volatile_loads_saw_the_write() {
        let seen = Trial {
            before: 5,
            through_l1: 5,
            through_l2: 9,
            volatile: 9,
            writer_sm: 0,
            reader_sm: 1,
            gave_up: 0,
        };
        assert!(seen.right(5, 9), "a stale L1 load is the slide's point, not a failure");
        assert!(Trial { through_l1: 9, ..seen }.right(5, 9));
        assert!(!Trial { through_l2: 5, ..seen }.right(5, 9));
        assert!(!Trial {
            volatile: u32::POISON,
            ..seen
        }
        .right(5, 9));
        assert!(!Trial { before: 9, ..seen }.right(5, 9));
        assert!(!Trial { gave_up: 1, ..seen }.right(5, 9));
    }
}

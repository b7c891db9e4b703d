//! Guard zones around a kernel's output, for `--check`: the buffer is allocated with
//! [`GUARD_BYTES`] more on each side, filled with [`GUARD_WORD`], and the kernel gets a pointer to the
//! part in between. After the kernel, any guard word that changed is a write outside the output,
//! reported with its element index ("C[m*n + 40], 40 elements past the end"). compute-sanitizer does
//! not see such writes (they stay inside our allocation); the guards see them without it, in every
//! run. A write farther away than the guards is memcheck's to find (`--sanitize`).
//!
//! Inputs the kernel must only read are compared bit for bit with their host copies
//! ([`first_changed`]).

use std::marker::PhantomData;

use anyhow::{ensure, Context as _, Result};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DevicePointer, DeviceSlice};

use common::check_cuda;
use common::verify::Poison;

/// Bytes of guard on each side: 1 MiB, a multiple of 256 so the output starts as aligned as a
/// `cudaMalloc` would give it. A missing bounds check on a 1000 x 1001 C in f64 writes up to 15 rows
/// (120 KB) past the end: inside.
pub const GUARD_BYTES: usize = 1 << 20;

/// What the guard zones hold; no value a correct kernel computes is likely to have these bits.
pub const GUARD_WORD: u32 = 0xA5A5_5A5A;

/// What the guard zones around an input hold (issue 39): all bits set, a NaN as f32 and as f64, so a
/// kernel that reads past A or B gets NaN into its result, which then fails the comparison.
pub const INPUT_GUARD_WORD: u32 = u32::MAX;

/// A device buffer of `len` elements with guard zones on both sides.
pub struct Guarded<T: DeviceCopy> {
    words: DeviceBuffer<u32>,
    /// What the guard zones hold: [`GUARD_WORD`] around an output, [`INPUT_GUARD_WORD`] around an input.
    guard: u32,
    len: usize,
    element: PhantomData<T>,
}

const GUARD_WORDS: usize = GUARD_BYTES / 4;

impl<T: DeviceCopy> Guarded<T> {
    /// Allocates the buffer and fills all of it, output included, with the guard word; poison or
    /// initialise the output with [`Guarded::fill`] or through [`Guarded::body`].
    pub fn new(len: usize) -> Result<Guarded<T>> {
        Guarded::with_guard(len, GUARD_WORD)
    }

    /// [`Guarded::new`] with `guard` in the zones: [`INPUT_GUARD_WORD`] for an input.
    pub fn with_guard(len: usize, guard: u32) -> Result<Guarded<T>> {
        let size = std::mem::size_of::<T>();
        ensure!(
            size > 0 && size.is_multiple_of(4),
            "a guarded buffer holds elements of whole 32-bit words, not {size} bytes"
        );
        let words = len
            .checked_mul(size / 4)
            .and_then(|body| body.checked_add(2 * GUARD_WORDS))
            .context("a guarded buffer this large does not fit in memory")?;
        // SAFETY: every word is written by the memset below before anything reads it.
        let buffer = check_cuda!(unsafe { DeviceBuffer::<u32>::uninitialized(words) })?;
        // SAFETY: `words` 32-bit words from the start of the buffer are exactly the buffer.
        check_cuda!(unsafe { common::raw::cuMemsetD32(buffer.as_device_ptr().as_raw(), guard, words) })?;
        Ok(Guarded {
            words: buffer,
            guard,
            len,
            element: PhantomData,
        })
    }

    /// Elements of the output.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the output starts: what the kernel gets.
    pub fn as_device_ptr(&self) -> DevicePointer<T> {
        self.words.as_device_ptr().wrapping_add(GUARD_WORDS).cast::<T>()
    }

    /// The output, between the guards, for copies in and out.
    ///
    /// # Safety
    /// A `DeviceSlice` is a (pointer, length) pair with no lifetime, and its copies are safe to call:
    /// the caller must not use it, nor let a copy it started run, after `self` is dropped.
    pub unsafe fn body(&self) -> DeviceSlice<T> {
        // SAFETY: the output's `len` elements lie inside `words`, which lives as long as `self`; how
        // long the slice is used is the caller's promise (above).
        unsafe { DeviceSlice::from_raw_parts(self.as_device_ptr(), self.len) }
    }

    /// Fills the output (not the guards) with a repeated word: a poison before a run.
    pub fn fill(&mut self, word: u32) -> Result<()> {
        let body_words = self.len * std::mem::size_of::<T>() / 4;
        // SAFETY: `body_words` words from the output's start end where the trailing guard begins.
        Ok(check_cuda!(unsafe {
            common::raw::cuMemsetD32(self.as_device_ptr().as_raw(), word, body_words)
        })?)
    }

    /// Refills both guard zones with `word` (which [`Guarded::trespass`] then expects): an input's
    /// zones set to zero tell whether a NaN in the result came from reading them.
    pub fn fill_guards(&mut self, word: u32) -> Result<()> {
        let trailing = self.words.len() - GUARD_WORDS;
        // SAFETY: the first GUARD_WORDS words and the last GUARD_WORDS words of the buffer.
        unsafe {
            check_cuda!(common::raw::cuMemsetD32(
                self.words.as_device_ptr().as_raw(),
                word,
                GUARD_WORDS
            ))?;
            check_cuda!(common::raw::cuMemsetD32(
                self.words.as_device_ptr().wrapping_add(trailing).as_raw(),
                word,
                GUARD_WORDS
            ))?;
        }
        self.guard = word;
        Ok(())
    }

    /// Copies `host` into the body (an input, before the kernel).
    pub fn write(&mut self, host: &[T]) -> Result<()> {
        ensure!(
            host.len() == self.len,
            "{} elements for a guarded buffer of {}",
            host.len(),
            self.len
        );
        // SAFETY: a synchronous copy, done before this borrow of `self` ends.
        Ok(check_cuda!(unsafe { self.body() }.copy_from(host))?)
    }

    /// The output, copied to the host.
    pub fn read(&self) -> Result<Vec<T>>
    where
        T: Default + Send + Sync,
    {
        let mut host = common::host_memory::try_filled_vec(self.len, T::default(), "a guarded output")?;
        // SAFETY: a synchronous copy, done before this borrow of `self` ends.
        check_cuda!(unsafe { self.body() }.copy_to(&mut host))?;
        Ok(host)
    }

    /// The guard zones, copied back and checked: `None` if no word of them changed.
    pub fn trespass(&self) -> Result<Option<Trespass>> {
        let mut before = vec![0u32; GUARD_WORDS];
        let mut after = vec![0u32; GUARD_WORDS];
        let total = self.words.len();
        check_cuda!(self.words.index(..GUARD_WORDS).copy_to(&mut before[..]))?;
        check_cuda!(self.words.index(total - GUARD_WORDS..).copy_to(&mut after[..]))?;
        Ok(find_trespass(
            &before,
            &after,
            self.guard,
            std::mem::size_of::<T>(),
            self.len,
        ))
    }
}

/// A write outside an output: the element index nearest to the output (negative before it), and how
/// many elements outside it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trespass {
    pub element: i64,
    pub len: usize,
    pub changed: usize,
}

impl Trespass {
    /// "C[m*n + 40], 40 elements past the end" or "C[-3], 3 elements before the start", with how
    /// many more: `name` is the output's name and `length` its element count as a formula (`m*n`).
    pub fn describe(&self, name: &str, length: &str) -> String {
        let place = if self.element < 0 {
            let before = self.element.unsigned_abs();
            format!(
                "{name}[{}], {before} element{} before the start",
                self.element,
                plural(before)
            )
        } else {
            match self.element.unsigned_abs() - self.len as u64 {
                0 => format!("{name}[{length}], the first element past the end"),
                past => format!("{name}[{length} + {past}], {past} element{} past the end", plural(past)),
            }
        };
        match self.changed {
            0 | 1 => format!("written outside {name}: {place}"),
            more => format!("written outside {name}: {place} (and {} more)", more - 1),
        }
    }
}

fn plural(count: u64) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// Compares both guard zones with `guard`, the word they were filled with: the changed element
/// nearest to the output (past the end first), and how many changed in all.
pub fn find_trespass(before: &[u32], after: &[u32], guard: u32, element_bytes: usize, len: usize) -> Option<Trespass> {
    // Element of the word at `index` of the zone before the output: its first byte lies
    // 4 * (before.len() - index) bytes before the start, so it belongs to element
    // floor(-bytes / element_bytes).
    let element_before = |index: usize| -(((before.len() - index) * 4).div_ceil(element_bytes) as i64);
    let element_after = |index: usize| (len + index * 4 / element_bytes) as i64;
    let mut changed: Vec<i64> = before
        .iter()
        .enumerate()
        .filter(|(_, w)| **w != guard)
        .map(|(i, _)| element_before(i))
        .collect();
    changed.extend(
        after
            .iter()
            .enumerate()
            .filter(|(_, w)| **w != guard)
            .map(|(i, _)| element_after(i)),
    );
    changed.dedup();
    let nearest = changed
        .iter()
        .copied()
        .filter(|&e| e >= 0)
        .min()
        .or_else(|| changed.iter().copied().max())?;
    Some(Trespass {
        element: nearest,
        len,
        changed: changed.len(),
    })
}

/// The first element of an input that differs bit for bit from its host copy, and how many do:
/// an input the kernel was to read only.
pub fn first_changed<T: Poison>(original: &[T], now: &[T]) -> Option<(usize, usize)> {
    let (changed, first) = crate::row::first_mismatch(now, original, |a: T, b: T| a.bits() == b.bits());
    first.map(|index| (index, changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones() -> (Vec<u32>, Vec<u32>) {
        (vec![GUARD_WORD; 128], vec![GUARD_WORD; 128])
    }

    #[test]
    fn untouched_guards_find_nothing() {
        let (before, after) = zones();
        assert_eq!(find_trespass(&before, &after, GUARD_WORD, 8, 100), None);
    }

    #[test]
    fn a_write_past_the_end_names_its_element() {
        let (before, mut after) = zones();
        after[80] = 0; // f64: words 80 and 81 are element 40 past the end
        after[81] = 0;
        let found = find_trespass(&before, &after, GUARD_WORD, 8, 100).unwrap();
        assert_eq!(
            found,
            Trespass {
                element: 140,
                len: 100,
                changed: 1
            }
        );
        assert_eq!(
            found.describe("C", "m*n"),
            "written outside C: C[m*n + 40], 40 elements past the end"
        );
        after[0] = 1;
        assert_eq!(
            find_trespass(&before, &after, GUARD_WORD, 8, 100)
                .unwrap()
                .describe("C", "m*n"),
            "written outside C: C[m*n], the first element past the end (and 1 more)"
        );
    }

    #[test]
    fn a_write_before_the_start_counts_back_from_it() {
        let (mut before, after) = zones();
        before[127] = 0; // the last word before the output: element -1 for f64 and for f32
        assert_eq!(find_trespass(&before, &after, GUARD_WORD, 8, 10).unwrap().element, -1);
        assert_eq!(
            find_trespass(&before, &after, GUARD_WORD, 4, 10)
                .unwrap()
                .describe("sums", "n"),
            "written outside sums: sums[-1], 1 element before the start"
        );
        let (mut before, after) = zones();
        before[128 - 6] = 0; // 24 bytes before: f64 element -3, a 48-byte struct's element -1
        assert_eq!(
            find_trespass(&before, &after, GUARD_WORD, 8, 10)
                .unwrap()
                .describe("C", "m*n"),
            "written outside C: C[-3], 3 elements before the start"
        );
        assert_eq!(find_trespass(&before, &after, GUARD_WORD, 48, 1).unwrap().element, -1);
    }

    #[test]
    fn a_changed_input_is_found_bit_for_bit() {
        let original = [1.0, 2.0, f64::NAN, 4.0];
        assert_eq!(first_changed(&original, &original), None);
        assert_eq!(first_changed(&original, &[1.0, 2.0, f64::NAN, -4.0]), Some((3, 1)));
        assert_eq!(first_changed(&original, &[0.0, 2.0, 0.0, 4.0]), Some((0, 2)));
        assert_eq!(first_changed(&[0.0f32], &[-0.0f32]), Some((0, 1)));
    }
}

//! What a week computes once per case and keeps for the case's other runs: a case's runs (ours's and
//! the program's, in every pair) are all judged on the same inputs, from the case's seed, so our own
//! timings and the CPU's values need not be redone for each (issue 65, item 4: a round of nine checks
//! held an H200 for 533 s, most of it recomputing these while the GPU waited).

use anyhow::Result;

/// A value of one case, kept until a run of another case asks.
pub struct PerCase<C, T> {
    kept: Option<(C, T)>,
}

impl<C, T> Default for PerCase<C, T> {
    fn default() -> Self {
        PerCase { kept: None }
    }
}

impl<C: PartialEq + Clone, T> PerCase<C, T> {
    /// The value kept for `case`, if it is the one kept.
    pub fn get_mut(&mut self, case: &C) -> Option<&mut T> {
        self.kept
            .as_mut()
            .filter(|(kept, _)| kept == case)
            .map(|(_, value)| value)
    }

    /// The value kept for `case`, else `compute`'s, kept in place of the last case's (and nothing
    /// kept where it failed). The last case's value is dropped first: a case's buffers may take as
    /// much of the host's or the GPU's memory as a case may.
    pub fn get_or_try_insert(&mut self, case: &C, compute: impl FnOnce() -> Result<T>) -> Result<&mut T> {
        let kept = match self.kept.take() {
            Some((kept, value)) if kept == *case => (kept, value),
            last => {
                drop(last);
                (case.clone(), compute()?)
            }
        };
        Ok(&mut self.kept.insert(kept).1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Computed at a case's first run only, again after another case, and not kept where it failed.
    #[test]
    fn a_value_is_computed_once_per_case() {
        let mut kept = PerCase::default();
        let mut computed = 0;
        let mut get = |case: u32| {
            kept.get_or_try_insert(&case, || {
                computed += 1;
                anyhow::ensure!(case != 9, "case 9 fails");
                Ok(case * 10)
            })
            .map_or(0, |value| *value)
        };
        assert_eq!([get(1), get(1), get(2), get(2), get(1)], [10, 10, 20, 20, 10]);
        assert_eq!([get(9), get(9), get(1)], [0, 0, 10]);
        assert_eq!(computed, 6, "1, 2, 1 again, 9 twice (never kept), then 1");
        assert_eq!(kept.get_mut(&1), Some(&mut 10));
        assert_eq!(kept.get_mut(&2), None);
    }

    /// Another case's value is computed only once the last one is gone.
    #[test]
    fn the_last_case_is_dropped_before_the_next_is_computed() {
        let alive = std::rc::Rc::new(());
        let mut kept = PerCase::default();
        kept.get_or_try_insert(&1, || Ok(std::rc::Rc::clone(&alive))).unwrap();
        assert_eq!(std::rc::Rc::strong_count(&alive), 2);
        kept.get_or_try_insert(&2, || {
            assert_eq!(std::rc::Rc::strong_count(&alive), 1, "case 1's value still held");
            Ok(std::rc::Rc::new(()))
        })
        .unwrap();
    }
}

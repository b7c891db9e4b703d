//! What keeps a timed loop of [`crate::timing`] alone on its GPU, without `common` knowing who else
//! uses it (issue 65: a class graded with several checks per GPU). The grader's checks install a
//! [`Keeper`] in each case's process (`grading::gpu_lock`); every timed loop then holds the GPU from
//! its first warm-up until its last event has been read, and nothing else of the case does: the CPU's
//! work before and after (fresh inputs drawn, outputs checked) runs beside other checks' loops. A
//! case's untimed launches of the kernel under check hold it shared ([`beside`]): beside other checks'
//! untimed work, never beside a timed loop, which a student's kernel would otherwise slow. Until one
//! is installed (a lab run as it is, a student's own `--check`), [`hold`] and [`beside`] hold
//! nothing.

use std::sync::OnceLock;

use anyhow::Result;

/// The side that knows how the GPU is shared.
pub trait Keeper: Sync {
    /// The GPU held alone until the returned value is dropped.
    fn hold(&self) -> Result<Box<dyn Send>>;
    /// The GPU held shared (beside other such holds, not beside [`Keeper::hold`]'s) until the
    /// returned value is dropped.
    fn beside(&self) -> Result<Box<dyn Send>>;
}

static KEEPER: OnceLock<&'static dyn Keeper> = OnceLock::new();

/// Makes every timed loop from now on hold the GPU through `keeper`. A process has at most one: a
/// second call is ignored.
pub fn install(keeper: &'static dyn Keeper) {
    let _ = KEEPER.set(keeper);
}

/// The GPU held alone for a timed loop, until dropped (nothing held without a keeper).
pub(crate) fn hold() -> Result<Option<Box<dyn Send>>> {
    KEEPER.get().map(|keeper| keeper.hold()).transpose()
}

/// The GPU held shared for untimed launches of a kernel under check, until dropped (nothing held
/// without a keeper).
pub fn beside() -> Result<Option<Box<dyn Send>>> {
    KEEPER.get().map(|keeper| keeper.beside()).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts the holds it gave out, alone and shared.
    struct Counting(AtomicUsize, AtomicUsize);

    impl Keeper for Counting {
        fn hold(&self) -> Result<Box<dyn Send>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(Box::new(()))
        }

        fn beside(&self) -> Result<Box<dyn Send>> {
            self.1.fetch_add(1, Ordering::SeqCst);
            Ok(Box::new(()))
        }
    }

    /// Once installed, every hold, alone or shared, goes through the keeper; a second keeper is
    /// ignored. (Other tests' timed loops may hold through it too, so the counts are lower bounds.)
    #[test]
    fn a_hold_goes_through_the_first_keeper_installed() {
        static KEEPER: Counting = Counting(AtomicUsize::new(0), AtomicUsize::new(0));
        static OTHER: Counting = Counting(AtomicUsize::new(0), AtomicUsize::new(0));
        install(&KEEPER);
        install(&OTHER);
        assert!(hold().unwrap().is_some());
        assert!(hold().unwrap().is_some());
        assert!(beside().unwrap().is_some());
        assert!(KEEPER.0.load(Ordering::SeqCst) >= 2);
        assert!(KEEPER.1.load(Ordering::SeqCst) >= 1);
        assert_eq!(OTHER.0.load(Ordering::SeqCst), 0, "the second keeper is ignored");
        assert_eq!(OTHER.1.load(Ordering::SeqCst), 0, "the second keeper is ignored");
    }
}

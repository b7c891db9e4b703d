//! The CPU's check of each C on a thread of its own, while the GPU computes the next product (issue
//! 41). At 8192 the four checks of `--kernel tiled` took 230 ms after the GPU's 1.4 s, one after the
//! other; beside the kernels, the lab waits only for the last check of each precision.
//!
//! The slide program checks C right after copying it back, and so does lab-mmm: it hands C's host
//! copy to this thread, takes a second host copy in its place (swapped, no element copied) and copies
//! the next kernel's C into that one. While the first kernel runs, the thread makes that second host
//! copy and computes the CPU's reference for A * B (the vectors of Freivalds' test, or up to 1024^3 the
//! whole product); then it checks each C in the order it was given and hands its host copy back. At
//! most one C is being checked at a time: two host copies in turn, double buffering as CUDA programs
//! do it between streams. The lab waits only where a check outlasts the next kernel (at 1024 the CPU's
//! reference, a tenth of a second, outlasts both of a precision's kernels) and for the last one.
//!
//! The time the lab waits for a check counts as verification in `LAB_PHASES`' summary ("waiting for
//! the CPU's check"); what the thread does beside the GPU is not on the lab's clock.

use std::num::NonZeroUsize;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::{Scope, ScopedJoinHandle};

use anyhow::{anyhow, Result};
use common::phases::{self, Phase};
use common::verify::Random;
use matrix::mmm::{CpuProduct, ProductCheck};
use matrix::{Element, Matrix};

/// The thread that checks the products of one A and B, and the lab's end of it.
pub struct Checker<'scope, T: Element> {
    /// Host copies of C to check, in the order of the kernels.
    to_check: Sender<Matrix<T>>,
    /// Host copies coming back free for the next C: first the new one (no check), then each checked
    /// one with its check. The thread sends one more than it is given, so each hand-over, and the
    /// finish, receives exactly one.
    returned: Receiver<(Option<ProductCheck>, Matrix<T>)>,
    checks: Vec<ProductCheck>,
    thread: Option<ScopedJoinHandle<'scope, Result<()>>>,
}

impl<'scope, T: Element> Checker<'scope, T> {
    /// Starts the thread in `scope`. It makes the second host copy of C (`a.rows()` x `b.cols()`) and
    /// computes the CPU's reference for `a` * `b` at once, and draws the checks' random rows and
    /// columns from `random` in the order a check on the lab's own thread would.
    pub fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        a: &'scope Matrix<T>,
        b: &'scope Matrix<T>,
        random: &'scope mut Random,
    ) -> Checker<'scope, T> {
        let (to_check, work) = channel::<Matrix<T>>();
        let (give_back, returned) = channel();
        let thread = scope.spawn(move || {
            let checks = || -> Result<()> {
                give_back.send((None, Matrix::new(a.rows(), b.cols())?))?;
                let reference = CpuProduct::new(a, b, random);
                for c in work {
                    let check = reference.check(a, b, &c, random);
                    give_back.send((Some(check), c))?; // fails only where the lab stopped on an error
                }
                Ok(())
            };
            // A panic becomes an error: the scope would otherwise panic too where the lab leaves it
            // early with an error of its own, and that error would be lost.
            std::panic::catch_unwind(AssertUnwindSafe(|| on_cores_but_one(checks)))
                .unwrap_or_else(|_| Err(anyhow!("the CPU's check of a product panicked")))
        });
        Checker {
            to_check,
            returned,
            checks: Vec::new(),
            thread: Some(thread),
        }
    }

    /// Hands C's host copy (the product just copied back) to the thread and puts a free host copy in
    /// its place: the new one the first time, after that the previous product's, once its check is
    /// done. C's device copy stays.
    pub fn hand_over(&mut self, c: &mut Matrix<T>) -> Result<()> {
        let (check, mut free) = self.receive()?;
        self.checks.extend(check);
        c.swap_host(&mut free)?;
        if self.to_check.send(free).is_err() {
            return Err(self.stopped());
        }
        Ok(())
    }

    /// Waits for the last check and puts the last product back into C's host copy (for `--print` and
    /// `--output`). The checks, in the order the products were handed over.
    pub fn finish(mut self, c: &mut Matrix<T>) -> Result<Vec<ProductCheck>> {
        let (check, mut last) = self.receive()?;
        if let Some(check) = check {
            self.checks.push(check);
            c.swap_host(&mut last)?;
        }
        drop(self.to_check); // the thread's loop ends
        if let Some(thread) = self.thread {
            thread
                .join()
                .map_err(|_| anyhow!("the CPU's check of a product panicked"))??;
        }
        Ok(self.checks)
    }

    /// The free host copy on its way, once it is here, with the check of the C it held.
    fn receive(&mut self) -> Result<(Option<ProductCheck>, Matrix<T>)> {
        let _phase = phases::enter(Phase::Verify);
        let _part = phases::enter_part("waiting for the CPU's check");
        self.returned.recv().map_err(|_| self.stopped())
    }

    /// The error of a thread that ended before its work did: its own (no host memory for the second
    /// copy of C, or a panic, whose message is on stderr already), read when it is joined here.
    fn stopped(&mut self) -> anyhow::Error {
        match self.thread.take().map(ScopedJoinHandle::join) {
            Some(Ok(Err(error))) => error,
            _ => anyhow!("the CPU's check of a product panicked"),
        }
    }
}

/// Runs `work` on rayon threads one fewer than the cores (at least one): the lab's own thread keeps a
/// core to launch the next kernel and record its events when they are due, not after a check's task.
fn on_cores_but_one<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    match rayon::ThreadPoolBuilder::new()
        .num_threads(cores.saturating_sub(1).max(1))
        .build()
    {
        Ok(pool) => pool.install(work),
        Err(_) => work(), // the system would not start the pool's threads: rayon's global pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use matrix::bound::ErrorBound;
    use matrix::mmm::check_product;

    /// A and B, and C = A * B computed on the CPU, as the GPU would leave it.
    fn product(m: usize, k: usize, n: usize, random: &mut Random) -> (Matrix<f64>, Matrix<f64>, Matrix<f64>) {
        let a = Matrix::random(m, k, random).unwrap();
        let b = Matrix::random(k, n, random).unwrap();
        let values: Vec<f64> = matrix::mmm::multiply_on_cpu(&a, &b);
        let c = Matrix::from_row_major(m, n, &values).unwrap();
        (a, b, c)
    }

    /// Hands over `products` one after the other through C's host copy, as main.rs does.
    fn check_beside(
        a: &Matrix<f64>,
        b: &Matrix<f64>,
        products: &[Matrix<f64>],
        seed: u64,
    ) -> (Vec<ProductCheck>, Matrix<f64>) {
        let mut random = Random::new(seed);
        let mut c = Matrix::<f64>::new(a.rows(), b.cols()).unwrap();
        let checks = std::thread::scope(|scope| {
            let mut checker = Checker::start(scope, a, b, &mut random);
            for product in products {
                c.data_mut().copy_from_slice(product.data()); // the copy back from the GPU
                checker.hand_over(&mut c).unwrap();
            }
            checker.finish(&mut c).unwrap()
        });
        (checks, c)
    }

    #[test]
    fn checks_each_product_in_order_and_gives_the_last_back() {
        for (m, k, n) in [(1, 1, 1), (33, 17, 65), (1100, 1000, 1000)] {
            let mut random = Random::new(7);
            let (a, b, right) = product(m, k, n, &mut random);
            let mut wrong = Matrix::from_row_major(m, n, right.data()).unwrap();
            wrong.data_mut()[(m / 2) * n + n / 3] += 0.5;
            let mut unwritten = Matrix::from_row_major(m, n, right.data()).unwrap();
            unwritten.data_mut()[m * n - 1] = f64::NAN;
            let mut right_again = Matrix::from_row_major(m, n, right.data()).unwrap();
            right_again.data_mut()[0] += ErrorBound::new(&a, &b).absolute() / 2.0; // within the bound, not the first product
            let products = [right, wrong, unwritten, right_again];
            let (checks, last) = check_beside(&a, &b, &products, 3);
            let passed: Vec<bool> = checks.iter().map(ProductCheck::passed).collect();
            assert_eq!(passed, [true, false, false, true], "{m} x {k} x {n}");
            assert_eq!(checks[1].worst, (m / 2, n / 3), "{m} x {k} x {n}");
            assert_eq!(checks[2].worst, (m - 1, n - 1), "{m} x {k} x {n}");
            assert_eq!(last.data(), products[3].data(), "C's host copy holds the last product");
            // The same verdicts and method as a check on the lab's own thread.
            for (product, beside) in products.iter().zip(&checks) {
                let here = check_product(&a, &b, product, &mut Random::new(3));
                assert_eq!((here.passed(), here.method), (beside.passed(), beside.method));
            }
        }
    }

    #[test]
    fn a_lab_that_stops_early_leaves_the_thread_to_end() {
        let mut random = Random::new(11);
        let (a, b, right) = product(40, 30, 20, &mut random);
        let mut c = Matrix::from_row_major(40, 20, right.data()).unwrap();
        std::thread::scope(|scope| {
            let mut checker = Checker::start(scope, &a, &b, &mut random);
            checker.hand_over(&mut c).unwrap();
            // An error in the next kernel returns here: the checker is dropped unfinished, and the
            // scope ends once the thread has (were it left waiting, this test would never end).
        });
        assert!(
            c.data().iter().all(|&value| value == 0.0),
            "C's host copy is the fresh one"
        );
    }
}

//! A and B of a `--check` case on the GPU: inside guard zones, and fresh for every timed launch.
//!
//! Issue 61: a kernel that keeps the product of its first launch in device memory of its own and
//! copies it out on later launches passed every timed launch that multiplied the same A and B again,
//! faster than ours. Now every launch that is timed, the student's and ours alike, multiplies A and B
//! drawn just before it (its warm-up multiplies others), from a generator seeded by the operating
//! system in the case's own process, uniform in [-1, 1) and wide ([`Matrix::random_wide`]) in turn; the
//! student's C is then checked against that launch's own A and B. Nothing a kernel remembers from
//! an earlier launch is the product it must write.

use anyhow::{Context as _, Result};
use common::timing::Timing;
use common::verify::Random;
use cust::module::Module;
use grading::guard::{Guarded, INPUT_GUARD_WORD};
use matrix::mmm::{exact_element, CpuProduct, MmmKernel, ProductCheck};
use matrix::{Element, Matrix, MatrixView};

use crate::{multiply_after, multiply_into, view_of_c};

/// The most multiply-adds a timed launch's C is compared with a CPU product element by element
/// (2^24, milliseconds on one core); above it, Freivalds' test and samples ([`CpuProduct`]) judge each
/// launch in O(n^2).
const EXACT_PER_LAUNCH: usize = 1 << 24;

/// A and B on the GPU inside guard zones of NaN (issue 39): a kernel that reads past either gets NaN
/// into C. The fields stay private: `views` point into `a` and `b`, which must live as long.
pub struct Inputs<T: Element> {
    a: Guarded<T>,
    b: Guarded<T>,
    views: (MatrixView<T>, MatrixView<T>),
}

/// A and B drawn for one launch, and which kind of values they hold.
pub struct Drawn<T: Element> {
    pub a: Matrix<T>,
    pub b: Matrix<T>,
    pub kind: &'static str,
}

impl<T: Element> Drawn<T> {
    /// Element (row, col) of A * B, in f64, as the check computes it: what a failure shows as expected.
    pub fn element(&self, row: usize, col: usize) -> f64 {
        exact_element(&self.a, &self.b, row, col)
    }
}

/// Where a case's fresh inputs come from: a generator nobody can know in advance
/// ([`Random::unpredictable`]), uniform and wide values in turn.
pub struct Fresh {
    random: Random,
    drawn: usize,
}

impl Fresh {
    pub fn new() -> Fresh {
        Fresh {
            random: Random::unpredictable(),
            drawn: 0,
        }
    }

    /// The next A (m x k) and B (k x n).
    fn draw<T: Element>(&mut self, (m, k, n): (usize, usize, usize)) -> Result<Drawn<T>> {
        self.drawn += 1;
        let random = &mut self.random;
        Ok(if self.drawn.is_multiple_of(2) {
            Drawn {
                a: Matrix::random_wide(m, k, random)?,
                b: Matrix::random_wide(k, n, random)?,
                kind: "wide values, zeros and ones",
            }
        } else {
            Drawn {
                a: Matrix::random(m, k, random)?,
                b: Matrix::random(k, n, random)?,
                kind: "uniform in [-1, 1)",
            }
        })
    }

    /// C (host copy, m x n) against the product of `drawn` ([`EXACT_PER_LAUNCH`]).
    pub fn check<T: Element>(&mut self, drawn: &Drawn<T>, c: &[T]) -> Result<ProductCheck> {
        let c = Matrix::from_row_major(drawn.a.rows(), drawn.b.cols(), c)?;
        let reference = CpuProduct::with_limit(&drawn.a, &drawn.b, &mut self.random, EXACT_PER_LAUNCH);
        Ok(reference.check(&drawn.a, &drawn.b, &c, &mut self.random))
    }
}

impl Default for Fresh {
    fn default() -> Fresh {
        Fresh::new()
    }
}

impl<T: Element> Inputs<T> {
    pub fn new(a: &Matrix<T>, b: &Matrix<T>) -> Result<Inputs<T>> {
        let guarded = |m: &Matrix<T>| -> Result<(Guarded<T>, MatrixView<T>)> {
            let mut dev = Guarded::with_guard(m.data().len(), INPUT_GUARD_WORD)?;
            dev.write(m.data())?;
            let view = MatrixView {
                rows: m.rows() as i32,
                cols: m.cols() as i32,
                data: dev.as_device_ptr(),
            };
            Ok((dev, view))
        };
        let ((a, a_view), (b, b_view)) = (guarded(a)?, guarded(b)?);
        Ok(Inputs {
            a,
            b,
            views: (a_view, b_view),
        })
    }

    /// A and B as kernels see them.
    pub fn views(&self) -> (MatrixView<T>, MatrixView<T>) {
        self.views
    }

    /// A's buffer, guard zones included.
    pub fn a(&self) -> &Guarded<T> {
        &self.a
    }

    /// B's buffer, guard zones included.
    pub fn b(&self) -> &Guarded<T> {
        &self.b
    }

    /// One timed launch of `module` on inputs nobody saw: before its warm-up and again before the
    /// timed launch, fresh A and B are written and C is poisoned with `poison`. The time, and the A and
    /// B of the timed launch, of which C must now be the product. Both pairs are drawn before the
    /// warm-up, so that the timed loop, which holds the GPU alone where checks share it
    /// (`grading::gpu_lock::time_alone`), only copies them: the kernel sees neither before its launch.
    pub fn time_on_fresh(
        &mut self,
        (module, kernel, block_size): (&Module, MmmKernel, u32),
        c: &mut Guarded<T>,
        poison: u32,
        fresh: &mut Fresh,
    ) -> Result<(Timing, Drawn<T>)> {
        let (a, b) = self.views;
        let sizes = (a.rows as usize, a.cols as usize, b.cols as usize);
        let c_view = view_of_c(a, b, c)?;
        let mut drawn = [fresh.draw::<T>(sizes)?, fresh.draw::<T>(sizes)?].into_iter();
        let mut last = None;
        let timing = multiply_after(module, kernel, block_size, (a, b, c_view), 1, || {
            let drawn = drawn.next().context("no fresh inputs left for the launch")?;
            self.a.write(drawn.a.data())?;
            self.b.write(drawn.b.data())?;
            c.fill(poison)?;
            last = Some(drawn);
            Ok(())
        })?;
        Ok((timing, last.context("no launch was timed")?))
    }

    /// Which input the student's kernel read outside of, for an element of C (`n` columns) that came
    /// out NaN: the kernel runs again with one input's guard zones zero instead of NaN, and if the
    /// element is then a number, the NaN came from there. The zones are NaN again afterwards.
    pub fn read_outside(
        &mut self,
        (theirs, kernel, block_size): (&Module, MmmKernel, u32),
        c: &mut Guarded<T>,
        element: usize,
    ) -> Result<Option<String>> {
        let views = self.views;
        let n = views.1.cols as usize;
        for (input, zones) in [("A", &mut self.a), ("B", &mut self.b)] {
            zones.fill_guards(0)?;
            multiply_into(theirs, kernel, block_size, views, c, T::POISON_WORD)?;
            zones.fill_guards(INPUT_GUARD_WORD)?;
            if !c.read()?[element].to_f64().is_nan() {
                let (row, col) = (element / n, element % n);
                return Ok(Some(format!("read outside {input}: C({row}, {col}) is NaN with NaN around {input} and a number with zeros there")));
            }
        }
        Ok(None)
    }
}

//! What the ladder's steps and cuBLAS multiply: A and B of one precision on the GPU, C beside them and
//! the CPU's product that every C is checked against ([`Operands`]), and the sizes every product
//! checks first ([`ensure_product_sizes`]). It depends on `common` and `matrix`, on nothing else of
//! the ladder.

use anyhow::Result;
use common::verify::Random;
use matrix::mmm::{CpuProduct, ProductCheck};
use matrix::{Element, Matrix};

use crate::Precision;

/// A and B of one precision on the GPU, C beside them, and the CPU's product that every C is checked
/// against (computed once for all the steps and cuBLAS).
pub struct Operands<T: Element> {
    pub a: Matrix<T>,
    pub b: Matrix<T>,
    pub c: Matrix<T>,
    reference: CpuProduct,
}

impl<T: Element> Operands<T> {
    /// A and B (f64 on the host) converted to `T` and copied to the GPU; C allocated.
    pub fn new(a64: &Matrix<f64>, b64: &Matrix<f64>, random: &mut Random) -> Result<Operands<T>> {
        let mut a: Matrix<T> = a64.convert()?;
        let mut b: Matrix<T> = b64.convert()?;
        a.copy_to_gpu()?;
        b.copy_to_gpu()?;
        let c = Matrix::<T>::new(a.rows(), b.cols())?;
        let reference = CpuProduct::new(&a, &b, random);
        Ok(Operands { a, b, c, reference })
    }

    /// Multiply-adds times two.
    pub fn flops(&self) -> f64 {
        2.0 * (self.a.rows() * self.a.cols() * self.b.cols()) as f64
    }

    /// How C's host copy compares with the CPU's product, judged in `precision`.
    pub fn check(&self, precision: Precision, random: &mut Random) -> ProductCheck {
        precision.judge(self.reference.check(&self.a, &self.b, &self.c, random))
    }
}

/// A is m x k, B k x n and C m x n: the kernels and cuBLAS take k from A and the sizes of C from A
/// and B, and would read or write past a buffer of other sizes.
pub(super) fn ensure_product_sizes<T: Element>(a: &Matrix<T>, b: &Matrix<T>, c: &Matrix<T>) -> Result<()> {
    anyhow::ensure!(
        a.cols() == b.rows() && c.rows() == a.rows() && c.cols() == b.cols(),
        "C = A * B needs A m x k, B k x n and C m x n, not A {} x {}, B {} x {}, C {} x {}",
        a.rows(),
        a.cols(),
        b.rows(),
        b.cols(),
        c.rows(),
        c.cols()
    );
    Ok(())
}

//! How far a C = A * B computed in floating point may lie from the exact product (issue 66): the bound
//! every check of an f32 or f64 product judges the GPU's C against, whatever order a kernel adds in
//! (rows of tiles, split sums, a tree) and whether or not nvcc contracts its multiply-adds into fmas.
//!
//! Element (i, j) of C is an inner product of length K. Rounded with unit roundoff u, in any order,
//! it moves by at most γ · Σ_p |a_ip| |b_pj| (Higham, "Accuracy and Stability of Numerical
//! Algorithms", 3.1), and Σ_p |a_ip| |b_pj| is at most |a_i| |b_j|, the lengths of row i of A and
//! column j of B (Cauchy-Schwarz). The bound takes the longest row and the longest column, so it is one
//! number for the whole product, and adds the CPU reference's own rounding (f64, also any order).

use rayon::prelude::*;

use crate::{Element, HostStorage, Matrix};

/// λ of Higham and Mary's probabilistic bound ("A new approach to probabilistic rounding error
/// analysis", SIAM J. Sci. Comput. 41, 2019): rounding alone exceeds it with a probability below
/// 2 n exp(-λ² / 2), under 10^-17 for an inner product of n = 8193 terms at λ = 10.
const LAMBDA: f64 = 10.0;

/// The largest |GPU - CPU| any element of one product may show from rounding alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorBound {
    absolute: f64,
}

impl ErrorBound {
    /// The bound of A * B computed in `T` on the GPU and in f64 on the CPU.
    pub fn new<T: Element, H: HostStorage<T>>(a: &Matrix<T, H>, b: &Matrix<T, H>) -> ErrorBound {
        Self::with_row_lengths(&row_lengths(a.data(), a.cols()), b)
    }

    /// [`ErrorBound::new`] from the lengths of A's rows ([`row_lengths`]), where the caller needs them
    /// too (Freivalds' test scores each row by its length): A is read once.
    pub fn with_row_lengths<T: Element, H: HostStorage<T>>(a_row_lengths: &[f64], b: &Matrix<T, H>) -> ErrorBound {
        let k = b.rows();
        let growth = growth(k, T::UNIT_ROUNDOFF) + growth(k, f64::UNIT_ROUNDOFF);
        let longest_a_row = a_row_lengths.iter().copied().fold(0.0, f64::max);
        ErrorBound {
            absolute: growth * longest_a_row * longest_column(b.data(), b.cols()),
        }
    }

    /// The bound itself, in C's units.
    pub fn absolute(self) -> f64 {
        self.absolute
    }

    /// The bound as a share of `largest`, C's largest |element|: the tolerance of a `ProductCheck`,
    /// whose errors are shares of that element too.
    pub fn relative_to(self, largest: f64) -> f64 {
        self.absolute / largest
    }
}

/// How much rounding with unit roundoff `u` may move an inner product of `k` terms, as a share of
/// Σ |a_p b_p|: the smaller of the worst case γ_n = n u / (1 - n u) and the probabilistic
/// exp(λ √n u + n u² / (1 - u)) - 1, with n = k + 1 roundings (k products and sums, one more where a
/// kernel sums in a wider type and rounds at the end). The probabilistic one assumes rounding errors
/// independent and of mean zero, as random inputs give; it is the smaller from about 100 terms on.
fn growth(k: usize, u: f64) -> f64 {
    let n = (k + 1) as f64;
    let worst_case = if n * u < 1.0 {
        n * u / (1.0 - n * u)
    } else {
        f64::INFINITY
    };
    let probabilistic = (LAMBDA * n.sqrt() * u + n * u * u / (1.0 - u)).exp_m1();
    worst_case.min(probabilistic)
}

/// The length of each row of a row-major matrix with `cols` columns, rows in parallel.
pub fn row_lengths<T: Element>(values: &[T], cols: usize) -> Vec<f64> {
    values
        .par_chunks(cols.max(1))
        .map(|row| row.iter().map(|v| v.to_f64().powi(2)).sum::<f64>().sqrt())
        .collect()
}

/// The length of the longest column of a row-major matrix with `cols` columns.
fn longest_column<T: Element>(values: &[T], cols: usize) -> f64 {
    let add_row = |mut sums: Vec<f64>, row: &[T]| {
        for (sum, v) in sums.iter_mut().zip(row) {
            *sum += v.to_f64().powi(2);
        }
        sums
    };
    values
        .par_chunks(cols.max(1))
        .fold(|| vec![0.0; cols], add_row)
        .reduce(
            || vec![0.0; cols],
            |mut x, y| {
                x.iter_mut().zip(&y).for_each(|(x, y)| *x += y);
                x
            },
        )
        .into_iter()
        .fold(0.0, f64::max)
        .sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mmm::multiply_on_cpu;
    use common::verify::Random;

    #[test]
    fn growth_is_the_worst_case_for_short_sums_and_the_probabilistic_one_for_long() {
        let u = f32::UNIT_ROUNDOFF;
        assert_eq!(growth(1, u), 2.0 * u / (1.0 - 2.0 * u));
        let long = growth(8192, u);
        assert!(long < 8193.0 * u / 5.0 && long > 900.0 * u, "{long:e}");
        assert!(growth(99, u) < growth(100, u));
    }

    #[test]
    fn lengths_are_of_each_row_and_the_longest_column() {
        let values = [3.0f64, 4.0, 0.0, 0.0];
        assert_eq!(
            (row_lengths(&values, 2), longest_column(&values, 2)),
            (vec![5.0, 0.0], 4.0)
        );
        assert_eq!(
            (row_lengths(&values, 1), longest_column(&values, 1)),
            (vec![3.0, 4.0, 0.0, 0.0], 5.0)
        );
    }

    /// The bound holds for products summed in f32 in the orders kernels use (row by row, in tiles of
    /// 16, pairwise), at sizes whose C is one element near zero too, where a share of C's largest
    /// element does not (issue 66: a 1 x 8192 x 1 product in f32 could fail a right kernel).
    #[test]
    fn f32_products_summed_in_any_order_are_within_the_bound() {
        let mut random = Random::new(66);
        for (m, k, n) in [(1, 8191, 1), (3, 1, 5), (7, 1000, 9), (2, 4097, 3), (16, 333, 16)] {
            for _ in 0..20 {
                let a: Matrix<f32> = Matrix::<f64>::random(m, k, &mut random).unwrap().convert().unwrap();
                let b: Matrix<f32> = Matrix::<f64>::random(k, n, &mut random).unwrap().convert().unwrap();
                let bound = ErrorBound::new(&a, &b).absolute();
                let exact = multiply_on_cpu(&a, &b);
                for (index, want) in exact.iter().enumerate() {
                    let (i, j) = (index / n, index % n);
                    let terms: Vec<f32> = (0..k).map(|p| a.data()[i * k + p] * b.data()[p * n + j]).collect();
                    for got in [in_order(&terms), in_tiles(&terms, 16), pairwise(&terms)] {
                        let error = (f64::from(got) - want).abs();
                        assert!(error <= bound, "{m} x {k} x {n}, C({i}, {j}): {error:e} > {bound:e}");
                    }
                }
            }
        }
    }

    /// lab-mmm/README.md's case for the bound: the rule it replaced, 1e-4 of C's largest element in
    /// f32, fails right 1 x 8192 x 1 products whose one element is near zero.
    #[test]
    fn a_share_of_the_largest_element_fails_right_products_the_bound_passes() {
        let mut random = Random::new(66);
        let mut failed_by_share = 0;
        for _ in 0..2000 {
            let a: Matrix<f32> = Matrix::<f64>::random(1, 8192, &mut random).unwrap().convert().unwrap();
            let b: Matrix<f32> = Matrix::<f64>::random(8192, 1, &mut random).unwrap().convert().unwrap();
            let want = multiply_on_cpu(&a, &b)[0];
            let terms: Vec<f32> = a.data().iter().zip(b.data()).map(|(x, y)| x * y).collect();
            let error = (f64::from(in_order(&terms)) - want).abs();
            assert!(error <= ErrorBound::new(&a, &b).absolute());
            failed_by_share += usize::from(error > 1e-4 * want.abs());
        }
        eprintln!("1e-4 of the largest element fails {failed_by_share} of 2000");
        assert!(failed_by_share > 0);
    }

    #[test]
    fn a_missing_term_is_found_at_the_default_sizes() {
        let mut random = Random::new(7);
        let a: Matrix<f32> = Matrix::<f64>::random(64, 1024, &mut random).unwrap().convert().unwrap();
        let b: Matrix<f32> = Matrix::<f64>::random(1024, 64, &mut random).unwrap().convert().unwrap();
        let bound = ErrorBound::new(&a, &b).absolute();
        let largest_term = (0..64 * 64)
            .map(|index| (a.data()[(index / 64) * 1024 + 1023] * b.data()[1023 * 64 + index % 64]).abs())
            .fold(0.0f32, f32::max);
        assert!(
            f64::from(largest_term) > 10.0 * bound,
            "{largest_term:e} against {bound:e}"
        );
    }

    fn in_order(terms: &[f32]) -> f32 {
        terms.iter().fold(0.0, |sum, term| sum + term)
    }

    fn in_tiles(terms: &[f32], tile: usize) -> f32 {
        terms.chunks(tile).fold(0.0, |sum, chunk| sum + in_order(chunk))
    }

    fn pairwise(terms: &[f32]) -> f32 {
        match terms.len() {
            0 => 0.0,
            1 => terms[0],
            len => pairwise(&terms[..len / 2]) + pairwise(&terms[len / 2..]),
        }
    }
}

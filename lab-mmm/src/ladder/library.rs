//! cuBLAS's rows of the ladder's table: the library timed as a step is, on the same operands and in the
//! math each precision computes in ([`run_library`], [`run_library_in`]), and what the table calls
//! those rows. The library itself is [`crate::cublas`]; this depends on it and on the operands
//! (`super::operands`), not on the steps.

use anyhow::Result;
use common::check_cuda;
use common::timing::{time_on_stream, Timing};
use common::verify::Random;
use cust::stream::{Stream, StreamFlags};
use matrix::mmm::ProductCheck;
use matrix::{Element, Matrix, MatrixView};

use super::operands::{ensure_product_sizes, Operands};
use crate::cublas::{Bf16Matrix, Cublas, Gemm, Math, BF16_ROW};
use crate::Precision;

impl<T: Gemm> Operands<T> {
    /// cuBLAS's row for `precision` ([`run_library_in`]) into C, and C checked: what the ladder and
    /// the sweep measure the steps against.
    pub fn run_cublas(
        &mut self,
        cublas: &Cublas,
        precision: Precision,
        repetitions: usize,
        random: &mut Random,
    ) -> Result<(Timing, ProductCheck)> {
        let timing = run_library_in(cublas, precision, &self.a, &self.b, &mut self.c, repetitions)?;
        Ok((timing, self.check(precision, random)))
    }
}

/// C = A * B with cuBLAS computing as `math` says, timed like a step (a warm-up, then `repetitions`
/// between events), into C's host copy. cuBLAS is left in its default math.
pub fn run_library<T: Gemm>(
    cublas: &Cublas,
    math: Math,
    a: &Matrix<T>,
    b: &Matrix<T>,
    c: &mut Matrix<T>,
    repetitions: usize,
) -> Result<Timing> {
    ensure_product_sizes(a, b, c)?;
    cublas.use_math(math)?;
    let views = (a.view()?, b.view()?);
    // SAFETY: the views are A's and B's device copies, of their sizes, and C's view is C's; nothing
    // else writes them, and they outlive the work: time_gemm returns only once the device has finished.
    let timing = time_gemm(cublas, library_row::<T>(math), c, repetitions, |c| unsafe {
        cublas.gemm((views.0, views.1, c))
    });
    let reset = cublas.use_math(Math::Default);
    let timing = timing?; // the GEMM's own error first
    reset?;
    Ok(timing)
}

/// cuBLAS's row for `precision`: [`run_library`] in [`library_math`], or for bf16 cublasGemmEx on bf16
/// copies of A and B, rounded on the host before the timed launches: the library's speed on bf16
/// inputs (step 13's time includes its conversions, those of steps 14 to 16 do not).
pub fn run_library_in<T: Gemm>(
    cublas: &Cublas,
    precision: Precision,
    a: &Matrix<T>,
    b: &Matrix<T>,
    c: &mut Matrix<T>,
    repetitions: usize,
) -> Result<Timing> {
    if precision != Precision::Bf16 {
        return run_library(cublas, library_math(precision), a, b, c, repetitions);
    }
    ensure_product_sizes(a, b, c)?;
    let (a, b) = (Bf16Matrix::new(a)?, Bf16Matrix::new(b)?);
    // SAFETY: C's view is C's device copy, of its sizes, which nothing else writes; A's and B's copies
    // live until after time_gemm, which returns only once the device has finished.
    time_gemm(cublas, BF16_ROW, c, repetitions, |c| unsafe {
        cublas.gemm_bf16(&a, &b, c)
    })
}

/// Times `gemm`, one cuBLAS call into C's device copy (given its view), as a step is timed: C poisoned
/// first, a warm-up, `repetitions` between events on a stream of their own; C's host copy after.
fn time_gemm<T: Element>(
    cublas: &Cublas,
    name: &str,
    c: &mut Matrix<T>,
    repetitions: usize,
    gemm: impl Fn(MatrixView<T>) -> Result<()>,
) -> Result<Timing> {
    let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    c.poison_on_gpu()?;
    let view = c.view()?;
    // SAFETY: the stream outlives the GEMMs below: time_on_stream returns only once the device has
    // finished.
    unsafe { cublas.use_stream(&stream) }?;
    let _named = common::timing::observer::program(name);
    let timing = time_on_stream(&stream, 1, repetitions, || gemm(view))?;
    check_cuda!(stream.synchronize())?;
    c.copy_from_gpu()?;
    Ok(timing)
}

/// How cuBLAS computes in one of the ladder's precisions: f32 in TF32 math for TF32 (bf16 has a GEMM of
/// its own: [`run_library_in`]).
pub fn library_math(precision: Precision) -> Math {
    match precision {
        Precision::Tf32 => Math::Tf32,
        Precision::F64 | Precision::F32 | Precision::Bf16 => Math::Default,
    }
}

/// How the ladder's table names cuBLAS's row in `precision`, with matrices of `T`.
pub fn library_name<T: Gemm>(precision: Precision) -> &'static str {
    match precision {
        Precision::Bf16 => BF16_ROW,
        _ => library_row::<T>(library_math(precision)),
    }
}

/// How the ladder's table names cuBLAS's row for matrices of `T` and `math`.
pub fn library_row<T: Gemm>(math: Math) -> &'static str {
    match math {
        Math::Default => T::ROW,
        Math::Tf32 => "cuBLAS SGEMM, TF32 tensor cores (the library)",
    }
}

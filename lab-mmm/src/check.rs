//! `--kernel-source` and `--check` for lab-mmm (assignments/02-mmm-ab and 03-mmm-tiled): the student's
//! `mmm_ab` or `mmm` in mmm.cu, compiled with BLOCK_SIZE 16 for the check. Each case multiplies random
//! matrices of awkward sizes in one precision; every element of C is compared with the CPU's product.

use anyhow::{Context as _, Result};
use common::assignment::{first_mismatch, report_case, require_same_parameters, shown, Entry, FirstWrong, Outcome};
use common::check_cuda;
use common::gpu::Gpu;
use common::matrix::{Element, Matrix};
use common::mmm::{multiply_on_cpu, MmmKernel};
use common::verify::Random;
use cust::module::Module;
use kernels::KernelImage;

use crate::multiply_on_gpu;

/// BLOCK_SIZE of the check.
pub const BLOCK_SIZE: u32 = 16;

/// The kernels of `kernel` the lab calls, both precisions, as looked up and as declared.
pub fn entries(kernel: MmmKernel) -> [Entry; 2] {
    match kernel {
        MmmKernel::Naive => [
            Entry { name: "mmm_ab_f64", declaration: "extern \"C\" __global__ void mmm_ab_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c)" },
            Entry { name: "mmm_ab_f32", declaration: "extern \"C\" __global__ void mmm_ab_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c)" },
        ],
        MmmKernel::Tiled => [
            Entry { name: "mmm_f64", declaration: "extern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c)" },
            Entry { name: "mmm_f32", declaration: "extern \"C\" __global__ void mmm_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c)" },
        ],
    }
}

/// The student's kernels take what ours take (the driver's parameter sizes): the lab's launch fits.
pub fn require_our_parameters(student: &Module, ours: &Module, kernels: &[MmmKernel], source: &str) -> Result<()> {
    for entry in kernels.iter().flat_map(|&kernel| entries(kernel)) {
        let theirs = check_cuda!(student.get_function(entry.name))?;
        let expected = check_cuda!(ours.get_function(entry.name))?;
        require_same_parameters(&theirs, &expected, &entry, source)?;
    }
    Ok(())
}

/// One case: a kernel, a precision, A (m x k) and B (k x n).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Case {
    pub kernel: MmmKernel,
    pub f64: bool,
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

/// The week's cases for each of `kernels`: one element, sizes below, at and above a tile, none of them
/// multiples of 16 but one, a k shorter than a tile, in both precisions.
pub fn cases(kernels: &[MmmKernel]) -> Vec<Case> {
    let sizes = [(1, 1, 1), (17, 33, 5), (64, 64, 64), (100, 7, 129), (255, 257, 256), (1000, 999, 1001)];
    kernels
        .iter()
        .flat_map(|&kernel| [true, false].into_iter().flat_map(move |f64| sizes.map(|(m, k, n)| Case { kernel, f64, m, k, n })))
        .collect()
}

pub fn name(case: &Case) -> String {
    format!("{} {}, {} x {} times {} x {}", case.kernel.slide_name(), if case.f64 { "f64" } else { "f32" }, case.m, case.k, case.k, case.n)
}

/// Runs case `index` of `kernels` with the student's image and ours, and prints its row.
pub fn run_case(student: &KernelImage, kernels: &[MmmKernel], index: usize) -> Result<()> {
    let case = *cases(kernels).get(index).with_context(|| format!("there is no check case {index}"))?;
    let gpu = Gpu::open(0)?;
    let theirs = gpu.load(student)?;
    let ours = gpu.load(&kernels::MMM_BS16)?;
    require_our_parameters(&theirs, &ours, &[case.kernel], student.source)?;
    let outcome = if case.f64 { compare::<f64>(&theirs, &ours, &case, index)? } else { compare::<f32>(&theirs, &ours, &case, index)? };
    report_case(&name(&case), outcome);
    Ok(())
}

/// C from the student's kernel against the CPU's product, element by element; both kernels timed.
fn compare<T: Element>(theirs: &Module, ours: &Module, case: &Case, seed: usize) -> Result<Outcome> {
    let mut random = Random::new(seed as u64 + 1);
    let mut a: Matrix<T> = Matrix::<f64>::random(case.m, case.k, &mut random)?.convert()?;
    let mut b: Matrix<T> = Matrix::<f64>::random(case.k, case.n, &mut random)?.convert()?;
    a.copy_to_gpu()?;
    b.copy_to_gpu()?;
    let mut c = Matrix::<T>::new(case.m, case.n)?;
    let reference_time = multiply_on_gpu(ours, case.kernel, BLOCK_SIZE, &a, &b, &mut c, 3)?;
    let timing = multiply_on_gpu(theirs, case.kernel, BLOCK_SIZE, &a, &b, &mut c, 3)?;
    let cpu = multiply_on_cpu(&a, &b);
    let largest = cpu.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
    let gpu: Vec<f64> = c.data().iter().map(|v| v.to_f64()).collect();
    let (wrong, first) = first_mismatch(&gpu, &cpu, |g, e| (g - e).abs() <= T::TOLERANCE * largest);
    let bs = BLOCK_SIZE as usize;
    let first = first.map(|i| {
        let (row, col) = (i / case.n, i % case.n);
        FirstWrong {
            position: format!("C({row}, {col})"),
            value: shown(gpu[i]),
            expected: shown(cpu[i]),
            computed_by: format!("block ({}, {}), thread ({}, {})", col / bs, row / bs, col % bs, row % bs),
        }
    });
    Ok(Outcome { wrong, elements: cpu.len(), first, student_ms: Some(timing.median_ms()), ours_ms: Some(reference_time.median_ms()) })
}

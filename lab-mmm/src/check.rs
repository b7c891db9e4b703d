//! `--kernel-source` and `--check` for lab-mmm (assignments/02-mmm-ab and 03-mmm-tiled): the student's
//! `mmm_ab` or `mmm` in mmm.cu, compiled with BLOCK_SIZE 16 for the check. Each case multiplies random
//! matrices of awkward sizes in one precision; every element of C is compared with the CPU's product.
//! C has guard zones on both sides, and A and B are compared with their host copies afterwards: a
//! write outside C or into A or B fails the case.

use std::path::Path;

use anyhow::{Context as _, Result};
use common::assignment::cases_file::{choice, field, CaseFormat, CaseSet};
use common::assignment::{first_mismatch, shown, written, CaseContext, Entry, FirstWrong, Outcome, Row};
use common::gpu::Gpu;
use common::guard::{first_changed, Guarded};
use common::matrix::{Element, Matrix};
use common::mmm::{multiply_on_cpu, MmmKernel};
use common::verify::Random;
use cust::module::Module;
use kernels::ptx::{self, Barriers};
use kernels::KernelImage;

use crate::{multiply_into, multiply_on_gpu};

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

/// The rules of week 3 (issue 29), where the tiled kernels are checked: what the week teaches, read
/// from the compiler's report and the PTX, for both precisions. Two BLOCK_SIZE x BLOCK_SIZE tiles in
/// shared memory, and a barrier inside the loop over the tiles: the naive body in the tiled kernel
/// gives right values a little slower and fails both. None for the naive kernels (week 2).
pub fn technique_rules(image: &KernelImage, kernels: &[MmmKernel]) -> Result<Vec<Row>> {
    if !kernels.contains(&MmmKernel::Tiled) {
        return Ok(Vec::new());
    }
    let build = image.newest().with_context(|| format!("{} was not compiled", image.source))?;
    let report = build.report().with_context(|| format!("reading nvcc's report on {}", image.source))?;
    let tiled = [("mmm_f64", "double", 8), ("mmm_f32", "float", 4)];
    let tiles = tiled.iter().filter_map(|&(name, element, bytes)| {
        let (needed, shared) = (2 * BLOCK_SIZE * BLOCK_SIZE * bytes, report.function(name).map_or(0, |f| f.shared_bytes));
        (shared < needed).then(|| FirstWrong {
            position: name.to_string(),
            value: format!("{shared} bytes of shared memory"),
            expected: format!("at least {needed}: two {BLOCK_SIZE} x {BLOCK_SIZE} tiles of {element}"),
            computed_by: format!("ptxas report ({})", kernels::arch_name(build.arch)),
        })
    });
    let barriers = |code: &ptx::Module| -> (usize, Vec<FirstWrong>) {
        let wrong = tiled.iter().filter_map(|&(name, _, _)| {
            let value = match code.entry(name).map_or(Barriers::None, |kernel| code.barriers(kernel)) {
                Barriers::InLoop => return None,
                Barriers::None => "no __syncthreads()",
                Barriers::OutsideLoops => "__syncthreads(), but outside every loop",
            };
            let expected = "__syncthreads() inside the loop over the tiles".to_string();
            Some(FirstWrong { position: name.to_string(), value: value.to_string(), expected, computed_by: "the PTX".to_string() })
        });
        (tiled.len(), wrong.collect())
    };
    Ok(vec![
        Row::rule("tiles: mmm_f64 and mmm_f32 keep two BLOCK_SIZE x BLOCK_SIZE tiles in shared memory (ptxas report)", tiled.len(), tiles.collect()),
        Row::rule_on_ptx("barrier: mmm_f64 and mmm_f32 wait at __syncthreads() inside the loop over the tiles (PTX)", build, barriers),
    ])
}

/// One case: a kernel, a precision, A (m x k) and B (k x n), and the seed of their random elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Case {
    pub kernel: MmmKernel,
    pub f64: bool,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub seed: u64,
}

/// The week's cases for each of `kernels`: one element, sizes below, at and above a tile, none of them
/// multiples of 16 but one, a k shorter than a tile, in both precisions.
pub fn cases(kernels: &[MmmKernel]) -> Vec<Case> {
    let sizes = [(1, 1, 1), (17, 33, 5), (64, 64, 64), (100, 7, 129), (255, 257, 256), (1000, 999, 1001)];
    let all = kernels.iter().flat_map(|&kernel| [true, false].into_iter().flat_map(move |f64| sizes.map(|(m, k, n)| (kernel, f64, m, k, n))));
    all.enumerate().map(|(index, (kernel, f64, m, k, n))| Case { kernel, f64, m, k, n, seed: index as u64 + 1 }).collect()
}

/// The fields of a line of a `--cases` file; each line runs with every kernel `--kernel` chose.
pub const CASE_FIELDS: &str = "M K N PRECISION SEED";

/// The largest M, K or N of a `--cases` line: its three matrices, their copies and the CPU's product
/// in f64 stay near 1 GB.
const LARGEST_SIDE: usize = 8192;

/// The largest M x K x N of a `--cases` line, 2048³: the case's child computes the CPU's product
/// without printing, in a few seconds at this size, well inside the 30 s a silent case may run before
/// it counts as hung (4096³ takes minutes on a few cores).
const LARGEST_PRODUCT: usize = 1 << 33;

/// The week's cases for `kernels`, or those of a `--cases` file: `1000 999 1001 f64 7` per line.
pub fn case_set(kernels: &[MmmKernel], file: Option<&Path>) -> Result<CaseSet<Case>> {
    let parse = |fields: &[&str]| -> Result<Vec<Case>, String> {
        let side = |index: usize, name: &str| field(fields[index], name, 1..=LARGEST_SIDE);
        let (m, k, n) = (side(0, "M")?, side(1, "K")?, side(2, "N")?);
        if m * k * n > LARGEST_PRODUCT {
            return Err(format!("M x K x N = {} is over {LARGEST_PRODUCT} (2048 x 2048 x 2048), too long for the CPU's product", m * k * n));
        }
        let f64 = choice(fields[3], "PRECISION", &[("f64", true), ("f32", false)])?;
        let seed = field(fields[4], "SEED", 0..=u64::MAX)?;
        Ok(kernels.iter().map(|&kernel| Case { kernel, f64, m, k, n, seed }).collect())
    };
    let line = |c: &Case| format!("{} {} {} {} {} {}", c.kernel.slide_name(), c.m, c.k, c.n, if c.f64 { "f64" } else { "f32" }, c.seed);
    CaseFormat { fields: CASE_FIELDS, parse: &parse, line: &line, name: &name }.load(file, cases(kernels))
}

pub fn name(case: &Case) -> String {
    format!("{} {}, {} x {} times {} x {}", case.kernel.slide_name(), if case.f64 { "f64" } else { "f32" }, case.m, case.k, case.k, case.n)
}

/// Runs one case with the student's image (twice, with two poisons), then times it against ours.
pub fn run_case(student: &KernelImage, case: &Case, context: CaseContext) -> Result<Outcome> {
    let gpu = Gpu::open(0)?;
    let theirs = gpu.load(student)?;
    let ours = gpu.load(&kernels::MMM_BS16)?;
    if case.f64 {
        compare::<f64>(&theirs, &ours, case, context)
    } else {
        compare::<f32>(&theirs, &ours, case, context)
    }
}

/// C from the student's kernel against the CPU's product, element by element; C's guard zones and
/// the device copies of A and B checked; then both kernels timed.
fn compare<T: Element>(theirs: &Module, ours: &Module, case: &Case, context: CaseContext) -> Result<Outcome> {
    let mut random = Random::new(case.seed);
    let mut a: Matrix<T> = Matrix::<f64>::random(case.m, case.k, &mut random)?.convert()?;
    let mut b: Matrix<T> = Matrix::<f64>::random(case.k, case.n, &mut random)?.convert()?;
    a.copy_to_gpu()?;
    b.copy_to_gpu()?;
    let mut c = Guarded::<T>::new(case.m * case.n)?;
    multiply_into(theirs, case.kernel, BLOCK_SIZE, (&a, &b), &mut c, T::POISON_WORD, 1)?;
    let gpu = c.read()?;
    multiply_into(theirs, case.kernel, BLOCK_SIZE, (&a, &b), &mut c, T::SECOND_POISON_WORD, 1)?;
    let again = c.read()?;
    let findings = [c.trespass()?.map(|trespass| trespass.describe("C", "m*n")), changed("A", &a)?, changed("B", &b)?];
    let mut our_c = Matrix::<T>::new(case.m, case.n)?;
    let times = context.time(
        |launches| multiply_on_gpu(ours, case.kernel, BLOCK_SIZE, &a, &b, &mut our_c, launches),
        |launches| multiply_into(theirs, case.kernel, BLOCK_SIZE, (&a, &b), &mut c, T::POISON_WORD, launches),
    )?;
    let cpu = multiply_on_cpu(&a, &b);
    let largest = cpu.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
    let (wrong, first) = first_mismatch(&gpu, &cpu, |g: T, e| (g.to_f64() - e).abs() <= T::TOLERANCE * largest);
    let bs = BLOCK_SIZE as usize;
    let first = first.map(|i| {
        let (row, col) = (i / case.n, i % case.n);
        FirstWrong {
            position: format!("C({row}, {col})"),
            value: written(gpu[i], again[i], |v: T| shown(v.to_f64())),
            expected: shown(cpu[i]),
            computed_by: format!("block ({}, {}), thread ({}, {})", col / bs, row / bs, col % bs, row % bs),
        }
    });
    Ok(Outcome { wrong, elements: cpu.len(), first, times, finding: None }.with_findings(findings))
}

/// "A(3, 7) was changed" where the kernel wrote into an input, from its device copy.
fn changed<T: Element>(name: &str, matrix: &Matrix<T>) -> Result<Option<String>> {
    let now = matrix.read_gpu_copy()?;
    Ok(first_changed(matrix.data(), &now).map(|(i, count)| {
        let (row, col) = (i / matrix.cols(), i % matrix.cols());
        let more = if count > 1 { format!(" (and {} more elements of {name})", count - 1) } else { String::new() };
        format!("{name}({row}, {col}) was changed: {} instead of {}{more}", shown(now[i].to_f64()), shown(matrix.data()[i].to_f64()))
    }))
}

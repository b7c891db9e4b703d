//! C = A * B as lab-mmm computes it, shared with the labs that reuse its product (streams, pinned,
//! mapped): which kernel to launch, the launch itself, and the check against the CPU.

use anyhow::{ensure, Context as _, Result};
use clap::ValueEnum;
use cust::function::{BlockSize, Function, GridSize};
use cust::launch;
use cust::memory::{DeviceCopy, DevicePointer};
use cust::module::Module;
use cust::stream::Stream;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::bound::{self, ErrorBound};
use crate::{Element, HostStorage, Matrix, MatrixView};
use common::check_cuda;
use common::device_info::DeviceInfo;
use common::gpu::Gpu;
use common::phases::{self, Phase};
use common::verify::Random;
use profiler::timeline::{Kernel, Stamp};

/// The two kernels of `kernels/cuda/mmm.cu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MmmKernel {
    /// The slides' mmm-ab: every operand straight from global memory.
    Naive,
    /// The slides' mmm: BLOCK_SIZE x BLOCK_SIZE tiles of A and B staged in shared memory.
    Tiled,
}

impl MmmKernel {
    /// The name on the slides.
    pub fn slide_name(self) -> &'static str {
        match self {
            MmmKernel::Naive => "mmm-ab",
            MmmKernel::Tiled => "mmm",
        }
    }

    /// The `extern "C"` name in the module for element type `T`: `mmm_ab_f32`, `mmm_f64`, ...
    pub fn c_name<T: Element>(self) -> String {
        match self {
            MmmKernel::Naive => format!("mmm_ab_{}", T::NAME),
            MmmKernel::Tiled => format!("mmm_{}", T::NAME),
        }
    }

    /// Floating-point operations per element loaded from global memory: the Greek slides' count
    /// (mmm-ab loads two numbers per multiply-add; a tile's element serves BLOCK_SIZE of them).
    pub fn operations_per_loaded_element(self, block_size: u32) -> f64 {
        match self {
            MmmKernel::Naive => 1.0,
            MmmKernel::Tiled => f64::from(block_size),
        }
    }
}

/// Loads `mmm.cu` as compiled for `block_size`; only the sizes in `kernels::MMM_BLOCK_SIZES` exist.
pub fn load_mmm(gpu: &Gpu, block_size: u32) -> Result<Module> {
    let image = kernels::mmm_for_block_size(block_size).with_context(|| {
        format!(
            "--block-size {block_size}: mmm.cu is compiled for BLOCK_SIZE {:?} only",
            kernels::MMM_BLOCK_SIZES
        )
    })?;
    gpu.load(image)
}

/// The slide's check, before any GPU work: A's columns must equal B's rows.
pub fn check_sizes_match<T: Element, H: HostStorage<T>>(a: &Matrix<T, H>, b: &Matrix<T, H>) -> Result<()> {
    ensure!(
        a.cols() == b.rows(),
        "sizes of the matrices do not match: A is {} x {}, B is {} x {} (A's columns must equal B's rows)",
        a.rows(),
        a.cols(),
        b.rows(),
        b.cols()
    );
    Ok(())
}

/// A BLOCK_SIZE the kernels are compiled for (`kernels::MMM_BLOCK_SIZES`); for clap's `value_parser`.
pub fn parse_block_size(text: &str) -> Result<u32, String> {
    let block_size: u32 = text.parse().map_err(|_| format!("{text:?} is not a number"))?;
    if kernels::MMM_BLOCK_SIZES.contains(&block_size) {
        Ok(block_size)
    } else {
        Err(format!(
            "mmm.cu is compiled for BLOCK_SIZE {:?} only",
            kernels::MMM_BLOCK_SIZES
        ))
    }
}

/// Refuses an m x k times k x n product in `T` that the kernels' grid or the GPU's free memory cannot
/// take, before anything is allocated.
pub fn check_product_fits<T: Element>(gpu: &Gpu, (m, k, n): (usize, usize, usize), block_size: u32) -> Result<()> {
    check_grid(&gpu.info, m, n, block_size)?;
    let bytes = ((m * k + k * n + m * n) * std::mem::size_of::<T>()) as u64;
    gpu.ensure_fits(bytes, &format!("{m} x {k} times {k} x {n} in {}", T::NAME))
}

fn check_grid(info: &DeviceInfo, m: usize, n: usize, block_size: u32) -> Result<()> {
    let grid = grid_for(m, n, block_size);
    ensure!(
        grid.y <= info.max_grid_y && grid.x <= info.max_grid_x,
        "C of {m} x {n} needs a grid of {} x {} blocks, over this GPU's {} x {}",
        grid.x,
        grid.y,
        info.max_grid_x,
        info.max_grid_y
    );
    Ok(())
}

/// One thread per element of the m x n matrix C: x runs along columns, y along rows, rounded up so
/// sizes that are not multiples of BLOCK_SIZE are covered (the kernels mask the rest).
pub fn grid_for(m: usize, n: usize, block_size: u32) -> GridSize {
    let blocks = |size: usize| size.div_ceil(block_size as usize) as u32;
    GridSize::xy(blocks(n), blocks(m))
}

/// Enqueues `mmm<<<grid, (BLOCK_SIZE, BLOCK_SIZE), 0, stream>>>(a, b, c)` (or mmm-ab).
pub fn launch_mmm<T: Element>(
    mmm: &Function,
    a: MatrixView<T>,
    b: MatrixView<T>,
    c: MatrixView<T>,
    block_size: u32,
    stream: &Stream,
) -> Result<()> {
    let (grid, block) = launch_shape(&c, block_size);
    // __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c)
    // SAFETY: a, b and c match the kernel's MatrixView parameters above, and the grid covers C only; the
    // views' buffers outlive the kernel (device memory is freed only once the GPU is done with it).
    check_cuda!(unsafe { launch!(mmm<<<grid, block, 0, stream>>>(a, b, c)) })?;
    Ok(())
}

/// One thread per element of C in BLOCK_SIZE x BLOCK_SIZE blocks.
fn launch_shape<T: DeviceCopy>(c: &MatrixView<T>, block_size: u32) -> (GridSize, BlockSize) {
    (
        grid_for(c.rows as usize, c.cols as usize, block_size),
        BlockSize::xy(block_size, block_size),
    )
}

/// [`launch_mmm`] for the chronograms: `mmm_f64_stamped` with the same grid, stamping when it ran,
/// or plain `mmm` where `stamp` is `None` (see [`profiler::timeline::kernel_step`]).
pub fn launch_mmm_maybe_stamped(
    mmm: &Kernel,
    (a, b, c): (MatrixView<f64>, MatrixView<f64>, MatrixView<f64>),
    block_size: u32,
    stream: &Stream,
    stamp: Option<DevicePointer<Stamp>>,
) -> Result<()> {
    let Some(stamp) = stamp else {
        return launch_mmm(&mmm.plain, a, b, c, block_size, stream);
    };
    let (grid, block) = launch_shape(&c, block_size);
    let stamped = &mmm.stamped;
    // __global__ void mmm_f64_stamped(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, Stamp* stamp)
    // SAFETY: as in launch_mmm, and the stamp points at a live slot of the recorder's stamp buffer.
    check_cuda!(unsafe { launch!(stamped<<<grid, block, 0, stream>>>(a, b, c, stamp)) })?;
    Ok(())
}

/// How a GPU product compared with the CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct ProductCheck {
    /// Largest |GPU - CPU| relative to the largest |element| of C, over every element ("exact") or
    /// over the rows Freivalds' test points at and a random block ("Freivalds + samples"): always
    /// elements computed exactly on the CPU, never an estimate.
    pub error: f64,
    /// Where the worst element is, (row, column).
    pub worst: (usize, usize),
    /// "exact" (every element against a CPU product) or "Freivalds + samples".
    pub method: &'static str,
    /// The largest `error` that passes: the product's error bound ([`ErrorBound`]) as a share of the
    /// same largest |element|, or a fixed share where a lab rounds the inputs too (TF32, bf16).
    pub tolerance: f64,
}

impl ProductCheck {
    pub fn passed(&self) -> bool {
        self.error <= self.tolerance
    }
}

/// Up to this many multiply-adds, the whole product is computed on the CPU (1024^3: a tenth of a second
/// on 16 cores).
const EXACT_LIMIT: usize = 1 << 30;
/// Rows and columns of the random block of C checked element by element, on top of Freivalds' test,
/// for larger products: 64 x 64 = 4096 elements.
const SAMPLE_SIDE: usize = 64;
/// Random vectors of +1 and -1 in Freivalds' test. With entries of size one, a wrong element moves its
/// row's residual by its whole error at any size (uniform entries in (-1, 1) could nearly hide it),
/// and two wrong elements of one row cancel in all eight vectors with probability 1/256 only.
const FREIVALDS_VECTORS: usize = 8;
/// Rows whose residuals stand out most, recomputed exactly on the CPU (issue 29): the residuals only
/// choose which rows are looked at; whether a product passes is decided by exact elements.
const SUSPECT_ROWS: usize = 16;

/// One row of the vectors of Freivalds' test (or of a product with them).
type Signs = [f64; FREIVALDS_VECTORS];

/// Compares the GPU's C (host copy) with A * B computed on the CPU in f64: exactly for products up to
/// 1024^3 multiply-adds, else with Freivalds' test (C X against A (B X) for eight random sign vectors
/// X, O(n^2)) to find the rows that are off, those rows recomputed exactly, and the 4096 elements
/// where 64 random rows meet 64 random columns. Every element looked at must lie within the product's
/// error bound ([`ErrorBound`]); any NaN left from the poison fails.
pub fn check_product<T: Element, H: HostStorage<T>>(
    a: &Matrix<T, H>,
    b: &Matrix<T, H>,
    c: &Matrix<T, H>,
    random: &mut Random,
) -> ProductCheck {
    CpuProduct::new(a, b, random).check(a, b, c, random)
}

/// What the CPU knows of A * B, computed once and compared with any number of GPU products of the
/// same A and B (lab-mmm checks four kernels against one reference).
pub struct CpuProduct {
    n: usize,
    /// How far a right C may be from the exact product, element by element.
    bound: ErrorBound,
    reference: Reference,
    /// Rows of A * B an earlier check computed exactly, by row. Kernels that round alike (the slides'
    /// mmm at BLOCK_SIZE 16 and 32 add in the same order) point Freivalds' test at the same rows,
    /// which are then not computed again: a pass over all of B each (issue 41).
    known_rows: Mutex<HashMap<usize, Vec<f64>>>,
}

enum Reference {
    /// Every element of A * B, and the largest |element| the errors are measured against.
    Exact { product: Vec<f64>, largest: f64 },
    /// Freivalds' sign vectors X (n rows), A (B X) (m rows), and the length of each row of A, which
    /// scales the rounding of that row of C.
    Freivalds {
        x: Vec<Signs>,
        abx: Vec<Signs>,
        a_row_lengths: Vec<f64>,
    },
}

impl CpuProduct {
    pub fn new<T: Element, H: HostStorage<T>>(a: &Matrix<T, H>, b: &Matrix<T, H>, random: &mut Random) -> CpuProduct {
        Self::with_limit(a, b, random, EXACT_LIMIT)
    }

    /// [`CpuProduct::new`] with exact products only up to `exact_limit` multiply-adds, Freivalds' test
    /// and samples above: a check that runs once per timed launch (issue 61) cannot spend a tenth
    /// of a second each.
    pub fn with_limit<T: Element, H: HostStorage<T>>(
        a: &Matrix<T, H>,
        b: &Matrix<T, H>,
        random: &mut Random,
        exact_limit: usize,
    ) -> CpuProduct {
        let _phase = phases::enter(Phase::Verify);
        let _part = phases::enter_part("CPU reference");
        let (m, k, n) = (a.rows(), a.cols(), b.cols());
        let a_row_lengths = bound::row_lengths(a.data(), k);
        let bound = ErrorBound::with_row_lengths(&a_row_lengths, b);
        if m * k * n <= exact_limit {
            let product = multiply_on_cpu(a, b);
            let largest = largest_magnitude(&product);
            return CpuProduct {
                n,
                bound,
                reference: Reference::Exact { product, largest },
                known_rows: Mutex::default(),
            };
        }
        let x: Vec<Signs> = (0..n)
            .map(|_| std::array::from_fn(|_| if random.below(2) == 0 { -1.0 } else { 1.0 }))
            .collect();
        let bx = multiply_vectors(b.data(), n, &x);
        let abx = multiply_vectors(a.data(), k, &bx);
        CpuProduct {
            n,
            bound,
            reference: Reference::Freivalds { x, abx, a_row_lengths },
            known_rows: Mutex::default(),
        }
    }

    /// Checks the GPU's C against this reference; `a` and `b` must be the matrices it was made from.
    pub fn check<T: Element, H: HostStorage<T>>(
        &self,
        a: &Matrix<T, H>,
        b: &Matrix<T, H>,
        c: &Matrix<T, H>,
        random: &mut Random,
    ) -> ProductCheck {
        let _phase = phases::enter(Phase::Verify);
        let n = self.n;
        match &self.reference {
            Reference::Exact { product, largest } => {
                let (error, index) = common::verify::max_relative_error(c.data(), product, *largest);
                ProductCheck {
                    error,
                    worst: (index / n, index % n),
                    method: "exact",
                    tolerance: self.bound.relative_to(*largest),
                }
            }
            Reference::Freivalds { x, abx, a_row_lengths } => {
                let (error, worst, largest) = self.freivalds_and_samples(a, b, c, (x, abx, a_row_lengths), random);
                ProductCheck {
                    error,
                    worst,
                    method: "Freivalds + samples",
                    tolerance: self.bound.relative_to(largest),
                }
            }
        }
    }

    /// The largest error of the rows Freivalds' test points at and of the sampled block, relative to
    /// the largest |element| of C, with where, and that largest |element|.
    fn freivalds_and_samples<T: Element, H: HostStorage<T>>(
        &self,
        a: &Matrix<T, H>,
        b: &Matrix<T, H>,
        c: &Matrix<T, H>,
        (x, abx, a_row_lengths): (&[Signs], &[Signs], &[f64]),
        random: &mut Random,
    ) -> (f64, (usize, usize), f64) {
        let n = self.n;
        let c_values = c.data();
        let scan = {
            let _part = phases::enter_part("residuals C X");
            scan_rows(c_values, n, x)
        };
        if let Some((i, j)) = scan.first_not_finite {
            return (f64::INFINITY, (i, j), f64::INFINITY);
        }
        let largest = scan.largest.max(f64::MIN_POSITIVE);
        let suspects = suspect_rows(&scan.cx, abx, a_row_lengths);
        let rows: Vec<usize> = (0..SAMPLE_SIDE)
            .map(|_| random.below(c.rows() as u64) as usize)
            .collect();
        let columns: Vec<usize> = (0..SAMPLE_SIDE).map(|_| random.below(n as u64) as usize).collect();
        let every_column: Vec<usize> = (0..n).collect();
        let worst_of = |rows: &[usize], columns: &[usize], exact: Vec<f64>| {
            let errors = rows
                .iter()
                .zip(exact.chunks(columns.len()))
                .flat_map(|(&i, exact_row)| {
                    columns
                        .iter()
                        .zip(exact_row)
                        .map(move |(&j, want)| ((c_values[i * n + j].to_f64() - want).abs() / largest, (i, j)))
                });
            errors.fold(
                (0.0, (0, 0)),
                |worst, error| if error.0 > worst.0 { error } else { worst },
            )
        };
        let _part = phases::enter_part("rows and samples recomputed");
        let suspected = worst_of(&suspects, &every_column, self.rows_of_product(a, b, &suspects));
        let sampled = worst_of(&rows, &columns, exact_block(a, b, &rows, &columns));
        let (error, worst) = if sampled.0 > suspected.0 { sampled } else { suspected };
        (error, worst, largest)
    }

    /// Rows `rows` of A * B, exactly, row-major: those an earlier check computed from memory, the
    /// others in one pass over B ([`exact_rows`]).
    fn rows_of_product<T: Element, H: HostStorage<T>>(
        &self,
        a: &Matrix<T, H>,
        b: &Matrix<T, H>,
        rows: &[usize],
    ) -> Vec<f64> {
        let mut known = self.known_rows.lock().unwrap_or_else(PoisonError::into_inner);
        let mut missing: Vec<usize> = rows.iter().copied().filter(|i| !known.contains_key(i)).collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let computed = exact_rows(a, b, &missing);
            for (&i, row) in missing.iter().zip(computed.chunks(self.n.max(1))) {
                known.insert(i, row.to_vec());
            }
        }
        rows.iter().flat_map(|i| known[i].iter().copied()).collect()
    }
}

/// What one pass over the GPU's C finds: C X for Freivalds' test, the largest |element|, and the first
/// element (row-major) that is NaN or infinite (the poison a kernel left, or its own overflow).
struct Scan {
    cx: Vec<Signs>,
    largest: f64,
    first_not_finite: Option<(usize, usize)>,
}

/// [`Scan`] of C (row-major, `n` columns), rows in parallel: C is read once, not three times (a
/// gigabyte at 8192 squared in f64). Each row is summed first, then searched for its largest and for
/// a number that is not finite, in loops of their own that the compiler can turn into vector
/// instructions (one loop for all three took a quarter longer, at 8192 on two cores).
fn scan_rows<T: Element>(c: &[T], n: usize, x: &[Signs]) -> Scan {
    let rows: Vec<(Signs, f64, Option<usize>)> = c
        .par_chunks(n)
        .map(|row| {
            let mut sums = [0.0; FREIVALDS_VECTORS];
            for (value, x_row) in row.iter().zip(x) {
                let value = value.to_f64();
                for (sum, sign) in sums.iter_mut().zip(x_row) {
                    *sum += value * sign;
                }
            }
            // NaN fails both comparisons: it is not finite, and not the largest.
            let (mut largest, mut finite) = (0.0f64, true);
            for value in row {
                let magnitude = value.to_f64().abs();
                finite &= magnitude <= f64::MAX;
                if magnitude > largest {
                    largest = magnitude;
                }
            }
            let first_not_finite = (!finite)
                .then(|| row.iter().position(|value| !value.to_f64().is_finite()))
                .flatten();
            (sums, largest, first_not_finite)
        })
        .collect();
    Scan {
        largest: rows.iter().map(|row| row.1).fold(0.0, f64::max),
        first_not_finite: rows.iter().enumerate().find_map(|(i, row)| row.2.map(|j| (i, j))),
        cx: rows.into_iter().map(|row| row.0).collect(),
    }
}

/// The [`SUSPECT_ROWS`] rows of C whose residuals C X - A (B X) are largest for the length of their
/// row of A (rounding grows with it, so rows of large numbers do not crowd out a wrong element
/// elsewhere; a residual in a row of zeros comes first).
fn suspect_rows(cx: &[Signs], abx: &[Signs], a_row_lengths: &[f64]) -> Vec<usize> {
    let score = |i: usize| {
        let residual = cx[i]
            .iter()
            .zip(&abx[i])
            .map(|(got, want)| (got - want).abs())
            .fold(0.0, f64::max);
        if residual == 0.0 {
            0.0
        } else {
            residual / a_row_lengths[i]
        }
    };
    let scores: Vec<f64> = (0..cx.len()).into_par_iter().map(score).collect();
    let mut rows: Vec<usize> = (0..cx.len()).collect();
    let count = SUSPECT_ROWS.min(rows.len());
    rows.select_nth_unstable_by(count - 1, |&i, &j| scores[j].total_cmp(&scores[i]));
    rows.truncate(count);
    rows
}

/// Element (row, col) of A * B, exactly (in f64), as [`CpuProduct`] computes the elements it checks.
pub fn exact_element<T: Element, H: HostStorage<T>>(a: &Matrix<T, H>, b: &Matrix<T, H>, row: usize, col: usize) -> f64 {
    exact_block(a, b, &[row], &[col])[0]
}

/// The elements of A * B where `rows` meet `columns`, exactly (in f64), row by row: B's columns are
/// gathered once, so the inner products read memory in order.
fn exact_block<T: Element, H: HostStorage<T>>(
    a: &Matrix<T, H>,
    b: &Matrix<T, H>,
    rows: &[usize],
    columns: &[usize],
) -> Vec<f64> {
    let (k, n) = (a.cols(), b.cols());
    let (a_values, b_values) = (a.data(), b.data());
    let b_columns: Vec<f64> = columns
        .par_iter()
        .flat_map_iter(|&j| (0..k).map(move |p| b_values[p * n + j].to_f64()))
        .collect();
    rows.par_iter()
        .flat_map_iter(|&i| {
            let a_row = &a_values[i * k..(i + 1) * k];
            b_columns
                .chunks(k)
                .map(move |b_column| a_row.iter().zip(b_column).map(|(x, y)| x.to_f64() * y).sum::<f64>())
        })
        .collect()
}

/// Whole rows of A * B, exactly (in f64), row-major. B is read once for all of them (it does not fit in
/// any cache at the sizes that come here): each task takes a stripe of its columns and, row of B by
/// row of B, adds that row's stripe to every wanted row's. Stripes of 256 to 1024 columns, one per
/// core where there are enough columns: the longer a stripe, the longer the runs of B each task reads
/// in order (16 rows of 4096 x 8192 took 2.4 times as long in stripes of 256 as in stripes of 1024).
fn exact_rows<T: Element, H: HostStorage<T>>(a: &Matrix<T, H>, b: &Matrix<T, H>, rows: &[usize]) -> Vec<f64> {
    let (k, n) = (a.cols(), b.cols());
    let stripe = (n / rayon::current_num_threads()).clamp(256, 1024);
    let (a_values, b_values) = (a.data(), b.data());
    // A's wanted rows, k-major: the numbers that multiply B's row p lie side by side.
    let a_columns: Vec<f64> = (0..k)
        .flat_map(|p| rows.iter().map(move |&i| a_values[i * k + p].to_f64()))
        .collect();
    let stripes: Vec<(usize, Vec<f64>)> = (0..n)
        .step_by(stripe)
        .collect::<Vec<usize>>()
        .into_par_iter()
        .map(|j0| {
            let width = stripe.min(n - j0);
            let mut sums = vec![0.0; rows.len() * width];
            for (p, a_p) in a_columns.chunks(rows.len()).enumerate() {
                let b_stripe = &b_values[p * n + j0..p * n + j0 + width];
                for (sum_row, &a_ip) in sums.chunks_mut(width).zip(a_p) {
                    for (sum, b_pj) in sum_row.iter_mut().zip(b_stripe) {
                        *sum += a_ip * b_pj.to_f64();
                    }
                }
            }
            (j0, sums)
        })
        .collect();
    let mut product = vec![0.0; rows.len() * n];
    for (j0, sums) in stripes {
        let width = sums.len() / rows.len().max(1);
        for (r, sum_row) in sums.chunks(width.max(1)).enumerate() {
            product[r * n + j0..r * n + j0 + width].copy_from_slice(sum_row);
        }
    }
    product
}

/// The largest |value| (at least the smallest positive f64, so errors can be divided by it).
fn largest_magnitude<T: Element>(values: &[T]) -> f64 {
    values
        .par_iter()
        .map(|v| v.to_f64().abs())
        .reduce(|| 0.0, f64::max)
        .max(f64::MIN_POSITIVE)
}

/// A * B on the CPU in f64, row-major, rows in parallel; in i-k-j order so the inner loop runs along
/// rows of B and C.
pub fn multiply_on_cpu<T: Element, H: HostStorage<T>>(a: &Matrix<T, H>, b: &Matrix<T, H>) -> Vec<f64> {
    let (k, n) = (a.cols(), b.cols());
    let (a_values, b_values) = (a.data(), b.data());
    let mut c = vec![0.0; a.rows() * n];
    c.par_chunks_mut(n)
        .zip(a_values.par_chunks(k))
        .for_each(|(c_row, a_row)| multiply_row(a_row, b_values, c_row));
    c
}

/// `c_row` += `a_row` * B, in i-k-j order: the inner loop runs along rows of B (`c_row.len()` columns).
fn multiply_row<T: Element>(a_row: &[T], b_values: &[T], c_row: &mut [f64]) {
    let n = c_row.len();
    for (a_ip, b_row) in a_row.iter().zip(b_values.chunks(n)) {
        let a_ip = a_ip.to_f64();
        for (c_ij, b_pj) in c_row.iter_mut().zip(b_row) {
            *c_ij += a_ip * b_pj.to_f64();
        }
    }
}

/// `matrix` (row-major, `cols` columns) times the vectors `x` (`cols` rows), rows in parallel, in f64.
fn multiply_vectors<T: Element>(matrix: &[T], cols: usize, x: &[Signs]) -> Vec<Signs> {
    matrix
        .par_chunks(cols)
        .map(|row| {
            let mut sums = [0.0; FREIVALDS_VECTORS];
            for (value, x_row) in row.iter().zip(x) {
                let value = value.to_f64();
                for (sum, sign) in sums.iter_mut().zip(x_row) {
                    *sum += value * sign;
                }
            }
            sums
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product_of(a: &Matrix<f64>, b: &Matrix<f64>) -> Matrix<f64> {
        Matrix::from_row_major(a.rows(), b.cols(), &multiply_on_cpu(a, b)).unwrap()
    }

    #[test]
    fn cpu_product_of_a_small_non_square_example() {
        let a = Matrix::<f64>::from_row_major(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let b = Matrix::<f64>::from_row_major(3, 1, &[1.0, 0.5, -1.0]).unwrap();
        assert_eq!(multiply_on_cpu(&a, &b), vec![-1.0, 0.5]);
    }

    #[test]
    fn refuses_inner_sizes_that_differ_and_block_sizes_that_are_not_compiled() {
        let a = Matrix::<f64>::new(3, 4).unwrap();
        let b = Matrix::<f64>::new(5, 2).unwrap();
        let err = check_sizes_match(&a, &b).unwrap_err().to_string();
        assert_eq!(
            err,
            "sizes of the matrices do not match: A is 3 x 4, B is 5 x 2 (A's columns must equal B's rows)"
        );
        assert_eq!(parse_block_size("32"), Ok(32));
        assert_eq!(
            parse_block_size("8"),
            Err("mmm.cu is compiled for BLOCK_SIZE [16, 32] only".to_string())
        );
        assert!(parse_block_size("x").is_err());
    }

    #[test]
    fn grid_covers_sizes_that_are_not_multiples_of_the_block() {
        let grid = grid_for(17, 33, 16);
        assert_eq!((grid.x, grid.y), (3, 2));
        let grid = grid_for(1, 1, 32);
        assert_eq!((grid.x, grid.y), (1, 1));
    }

    #[test]
    fn exact_check_passes_a_right_product_and_catches_one_wrong_element() {
        let mut random = Random::new(3);
        let a = Matrix::<f64>::random(20, 7, &mut random).unwrap();
        let b = Matrix::<f64>::random(7, 9, &mut random).unwrap();
        let mut c = product_of(&a, &b);
        let check = check_product(&a, &b, &c, &mut random);
        assert!(check.passed() && check.method == "exact", "{check:?}");
        c[(13, 4)] += 1e-6;
        let check = check_product(&a, &b, &c, &mut random);
        assert!(!check.passed(), "{check:?}");
        assert_eq!(check.worst, (13, 4));
    }

    #[test]
    fn freivalds_check_passes_a_right_product_and_catches_a_wrong_row_and_poison() {
        let mut random = Random::new(4);
        let a = Matrix::<f64>::random(110, 100, &mut random).unwrap();
        let b = Matrix::<f64>::random(100, 90, &mut random).unwrap();
        let mut c = product_of(&a, &b);
        let check = CpuProduct::with_limit(&a, &b, &mut random, 0).check(&a, &b, &c, &mut random);
        assert!(check.passed() && check.method == "Freivalds + samples", "{check:?}");
        for j in 0..90 {
            c[(57, j)] += 1e-5; // a whole row wrong by a little: Freivalds sees it
        }
        let check = CpuProduct::with_limit(&a, &b, &mut random, 0).check(&a, &b, &c, &mut random);
        assert!(!check.passed() && check.worst.0 == 57, "{check:?}");
        c[(3, 3)] = f64::NAN;
        let check = CpuProduct::with_limit(&a, &b, &mut random, 0).check(&a, &b, &c, &mut random);
        assert_eq!((check.error, check.worst), (f64::INFINITY, (3, 3)));
    }

    /// A, B and a right C of the given sizes, cheap to multiply at any size: B is the identity
    /// (`identity`, k = n) or has at most 32 rows. C carries noise of 1 % of the error bound.
    fn right_product<T: Element>(m: usize, k: usize, n: usize, identity: bool, random: &mut Random) -> [Matrix<T>; 3] {
        let a: Matrix<T> = Matrix::<f64>::random(m, k, random).unwrap().convert().unwrap();
        let b: Matrix<T> = if identity {
            let ones: Vec<T> = (0..k * n)
                .map(|index| T::from_f64(if index / n == index % n { 1.0 } else { 0.0 }))
                .collect();
            Matrix::from_row_major(k, n, &ones).unwrap()
        } else {
            Matrix::<f64>::random(k, n, random).unwrap().convert().unwrap()
        };
        let product = if identity {
            a.data().iter().map(|v| v.to_f64()).collect()
        } else {
            multiply_on_cpu(&a, &b)
        };
        let noise = ErrorBound::new(&a, &b).absolute() / 100.0;
        let c: Vec<T> = product
            .iter()
            .map(|v| T::from_f64(v + random.uniform(-noise, noise)))
            .collect();
        let c = Matrix::from_row_major(m, n, &c).unwrap();
        [a, b, c]
    }

    /// Issue 29: for every size, Freivalds' path passes a right product and fails every product with
    /// one wrong element (off by 1 % of C's typical element, its root mean square), a few, a wrong
    /// last row or a wrong last column, and names a wrong element.
    fn assert_freivalds_finds_every_wrong_product<T: Element>(m: usize, k: usize, n: usize, identity: bool, seed: u64) {
        let mut random = Random::new(seed);
        let [a, b, c] = right_product::<T>(m, k, n, identity, &mut random);
        let reference = CpuProduct::with_limit(&a, &b, &mut random, 0);
        let check = reference.check(&a, &b, &c, &mut random);
        let case = format!("{} {m} x {k} x {n} (B the identity: {identity}, seed {seed})", T::NAME);
        assert!(
            check.passed() && check.method == "Freivalds + samples",
            "{case}: a right product fails: {check:?}"
        );
        let typical = (c.data().iter().map(|v| v.to_f64().powi(2)).sum::<f64>() / (m * n) as f64).sqrt();
        let few = 2 + random.below(4) as usize;
        let cells = |count: usize, random: &mut Random| -> Vec<(usize, usize)> {
            (0..count)
                .map(|_| (random.below(m as u64) as usize, random.below(n as u64) as usize))
                .collect()
        };
        let wrongs: [(&str, Vec<(usize, usize)>); 4] = [
            ("one element", cells(1, &mut random)),
            ("a few elements", cells(few, &mut random)),
            ("the last row", (0..n).map(|j| (m - 1, j)).collect()),
            ("the last column", (0..m).map(|i| (i, n - 1)).collect()),
        ];
        for (what, elements) in wrongs {
            let mut wrong = Matrix::<T>::from_row_major(m, n, c.data()).unwrap();
            for &(i, j) in &elements {
                let sign = if random.below(2) == 0 { -1.0 } else { 1.0 };
                wrong[(i, j)] = T::from_f64(wrong[(i, j)].to_f64() + sign * 0.01 * typical);
            }
            let check = reference.check(&a, &b, &wrong, &mut random);
            assert!(
                !check.passed(),
                "{case}: {what} {elements:?} off by 1 % passes: {check:?}"
            );
            assert!(
                elements.contains(&check.worst),
                "{case}: {what} {elements:?}, but {:?} is named",
                check.worst
            );
        }
    }

    #[test]
    fn freivalds_finds_one_wrong_element_at_4096_in_every_trial() {
        for seed in 0..2 {
            assert_freivalds_finds_every_wrong_product::<f32>(4096, 4096, 4096, true, seed);
            assert_freivalds_finds_every_wrong_product::<f64>(4096, 4096, 4096, true, seed);
        }
    }

    #[test]
    fn rows_recomputed_in_stripes_are_the_products_rows() {
        let mut random = Random::new(41);
        for (m, k, n) in [(5, 3, 1), (40, 70, 255), (9, 33, 257), (20, 5, 700)] {
            let a = Matrix::<f32>::random(m, k, &mut random).unwrap();
            let b = Matrix::<f32>::random(k, n, &mut random).unwrap();
            let product = multiply_on_cpu(&a, &b);
            let rows = [m - 1, 0, m / 2];
            let recomputed = exact_rows(&a, &b, &rows);
            for (r, &i) in rows.iter().enumerate() {
                assert_eq!(
                    recomputed[r * n..(r + 1) * n],
                    product[i * n..(i + 1) * n],
                    "{m} x {k} x {n}, row {i}"
                );
            }
        }
    }

    #[test]
    fn rows_known_from_an_earlier_check_are_the_products_rows() {
        let mut random = Random::new(43);
        let a = Matrix::<f64>::random(30, 17, &mut random).unwrap();
        let b = Matrix::<f64>::random(17, 23, &mut random).unwrap();
        let product = multiply_on_cpu(&a, &b);
        let reference = CpuProduct::with_limit(&a, &b, &mut random, 0);
        for rows in [vec![3, 1], vec![1, 29, 3, 3], vec![0]] {
            let got = reference.rows_of_product(&a, &b, &rows);
            let want: Vec<f64> = rows
                .iter()
                .flat_map(|&i| product[i * 23..(i + 1) * 23].to_vec())
                .collect();
            assert_eq!(got, want, "rows {rows:?}");
        }
    }

    #[test]
    fn freivalds_finds_wrong_elements_at_random_sizes() {
        let mut random = Random::new(29);
        for seed in 0..12 {
            let (m, n) = (1 + random.below(4096) as usize, 1 + random.below(4096) as usize);
            let identity = seed % 2 == 0;
            let k = if identity { n } else { 1 + random.below(32) as usize };
            assert_freivalds_finds_every_wrong_product::<f32>(m, k, n, identity, seed);
            assert_freivalds_finds_every_wrong_product::<f64>(m, k, n, identity, seed);
        }
    }

    #[test]
    fn operations_per_loaded_element_follow_the_greek_slides() {
        assert_eq!(MmmKernel::Tiled.operations_per_loaded_element(16), 16.0);
        assert_eq!(MmmKernel::Tiled.operations_per_loaded_element(32), 32.0);
        assert_eq!(MmmKernel::Naive.operations_per_loaded_element(32), 1.0);
        assert_eq!(MmmKernel::Tiled.c_name::<f32>(), "mmm_f32");
        assert_eq!(MmmKernel::Naive.c_name::<f64>(), "mmm_ab_f64");
    }
}

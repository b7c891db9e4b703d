//! C = A * B as lab-mmm computes it, shared with the labs that reuse its product (streams, pinned,
//! mapped): which kernel to launch, the launch itself, and the check against the CPU.

use anyhow::{ensure, Context as _, Result};
use clap::ValueEnum;
use rayon::prelude::*;
use cust::function::{BlockSize, Function, GridSize};
use cust::launch;
use cust::module::Module;
use cust::memory::{DeviceCopy, DevicePointer};
use cust::stream::Stream;

use crate::check_cuda;
use crate::device_info::DeviceInfo;
use crate::gpu::Gpu;
use crate::matrix::{Element, HostStorage, Matrix, MatrixView};
use crate::phases::{self, Phase};
use crate::timeline::{Kernel, Stamp};
use crate::verify::Random;

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
        format!("--block-size {block_size}: mmm.cu is compiled for BLOCK_SIZE {:?} only", kernels::MMM_BLOCK_SIZES)
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
        Err(format!("mmm.cu is compiled for BLOCK_SIZE {:?} only", kernels::MMM_BLOCK_SIZES))
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
    (grid_for(c.rows as usize, c.cols as usize, block_size), BlockSize::xy(block_size, block_size))
}

/// [`launch_mmm`] for the chronograms: `mmm_f64_stamped` with the same grid, stamping when it ran,
/// or plain `mmm` where `stamp` is `None` (see [`crate::timeline::kernel_step`]).
pub fn launch_mmm_maybe_stamped(
    mmm: &Kernel,
    (a, b, c): (MatrixView<f64>, MatrixView<f64>, MatrixView<f64>),
    block_size: u32,
    stream: &Stream,
    stamp: Option<DevicePointer<Stamp>>,
) -> Result<()> {
    let Some(stamp) = stamp else { return launch_mmm(&mmm.plain, a, b, c, block_size, stream) };
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
    /// Largest |GPU - CPU| relative to the largest |element| of C (or, for Freivalds' test, the bound
    /// on it that follows from each row).
    pub error: f64,
    /// Where the worst element is, (row, column); for a Freivalds row, column is 0.
    pub worst: (usize, usize),
    /// "exact" (every element against a CPU product) or "Freivalds + samples".
    pub method: &'static str,
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

/// Compares the GPU's C (host copy) with A * B computed on the CPU in f64: exactly for products up to
/// 1024^3 multiply-adds, else with Freivalds' test (C x against A (B x) for a random x, O(n^2)) plus
/// the 4096 elements where 64 random rows meet 64 random columns, computed exactly. Any NaN left from
/// the poison fails.
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
    reference: Reference,
}

enum Reference {
    /// Every element of A * B, and the largest |element| the errors are measured against.
    Exact { product: Vec<f64>, largest: f64 },
    /// Freivalds' random vector x, its sum of |x_j| and A (B x).
    Freivalds { x: Vec<f64>, x_norm: f64, abx: Vec<f64> },
}

impl CpuProduct {
    pub fn new<T: Element, H: HostStorage<T>>(a: &Matrix<T, H>, b: &Matrix<T, H>, random: &mut Random) -> CpuProduct {
        Self::with_limit(a, b, random, EXACT_LIMIT)
    }

    fn with_limit<T: Element, H: HostStorage<T>>(
        a: &Matrix<T, H>,
        b: &Matrix<T, H>,
        random: &mut Random,
        exact_limit: usize,
    ) -> CpuProduct {
        let _phase = phases::enter(Phase::Verify);
        let (m, k, n) = (a.rows(), a.cols(), b.cols());
        if m * k * n <= exact_limit {
            let product = multiply_on_cpu(a, b);
            let largest = largest_magnitude(&product);
            return CpuProduct { n, reference: Reference::Exact { product, largest } };
        }
        let x: Vec<f64> = (0..n).map(|_| random.uniform(-1.0, 1.0)).collect();
        let x_norm = x.iter().map(|v| v.abs()).sum();
        let bx = multiply_vector(b.data(), n, &x);
        let abx = multiply_vector(a.data(), k, &bx);
        CpuProduct { n, reference: Reference::Freivalds { x, x_norm, abx } }
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
                let (error, index) = crate::verify::max_relative_error(c.data(), product, *largest);
                ProductCheck { error, worst: (index / n, index % n), method: "exact", tolerance: T::TOLERANCE }
            }
            Reference::Freivalds { x, x_norm, abx } => {
                let (error, worst) = self.freivalds_and_samples(a, b, c, (x, *x_norm, abx), random);
                ProductCheck { error, worst, method: "Freivalds + samples", tolerance: T::TOLERANCE }
            }
        }
    }

    /// The largest error Freivalds' test bounds, or the largest of the sampled block's, with where.
    fn freivalds_and_samples<T: Element, H: HostStorage<T>>(
        &self,
        a: &Matrix<T, H>,
        b: &Matrix<T, H>,
        c: &Matrix<T, H>,
        (x, x_norm, abx): (&[f64], f64, &[f64]),
        random: &mut Random,
    ) -> (f64, (usize, usize)) {
        let (n, k) = (self.n, a.cols());
        let c_values = c.data();
        if let Some(index) = c_values.par_iter().position_first(|v| !v.to_f64().is_finite()) {
            return (f64::INFINITY, (index / n, index % n));
        }
        let largest = largest_magnitude(c_values);
        // If every element is within tolerance * largest, row i of C x - A (B x) is within
        // tolerance * largest * sum|x|.
        let cx = multiply_vector(c_values, n, x);
        let mut worst = (0.0, (0, 0));
        for (row, (got, want)) in cx.iter().zip(abx).enumerate() {
            let error = (got - want).abs() / (largest * x_norm);
            if error > worst.0 {
                worst = (error, (row, 0));
            }
        }
        let rows: Vec<usize> = (0..SAMPLE_SIDE).map(|_| random.below(c.rows() as u64) as usize).collect();
        let columns: Vec<usize> = (0..SAMPLE_SIDE).map(|_| random.below(n as u64) as usize).collect();
        // B's sampled columns gathered once, so the inner products below read memory in order.
        let (a_values, b_values) = (a.data(), b.data());
        let b_columns: Vec<Vec<f64>> =
            columns.iter().map(|&j| (0..k).map(|p| b_values[p * n + j].to_f64()).collect()).collect();
        let sampled = rows
            .par_iter()
            .flat_map_iter(|&i| {
                let a_row = &a_values[i * k..(i + 1) * k];
                columns.iter().zip(&b_columns).map(move |(&j, b_column)| {
                    let exact: f64 = a_row.iter().zip(b_column).map(|(x, y)| x.to_f64() * y).sum();
                    ((c_values[i * n + j].to_f64() - exact).abs() / largest, (i, j))
                })
            })
            .reduce(|| (0.0, (0, 0)), |x, y| if y.0 > x.0 { y } else { x });
        if sampled.0 > worst.0 {
            worst = sampled;
        }
        worst
    }
}

/// The largest |value| (at least the smallest positive f64, so errors can be divided by it).
fn largest_magnitude<T: Element>(values: &[T]) -> f64 {
    values.par_iter().map(|v| v.to_f64().abs()).reduce(|| 0.0, f64::max).max(f64::MIN_POSITIVE)
}

/// A * B on the CPU in f64, row-major, rows in parallel; in i-k-j order so the inner loop runs along
/// rows of B and C.
pub fn multiply_on_cpu<T: Element, H: HostStorage<T>>(a: &Matrix<T, H>, b: &Matrix<T, H>) -> Vec<f64> {
    let (k, n) = (a.cols(), b.cols());
    let (a_values, b_values) = (a.data(), b.data());
    let mut c = vec![0.0; a.rows() * n];
    c.par_chunks_mut(n).zip(a_values.par_chunks(k)).for_each(|(c_row, a_row)| {
        for (p, a_ip) in a_row.iter().enumerate() {
            let a_ip = a_ip.to_f64();
            for (c_ij, b_pj) in c_row.iter_mut().zip(&b_values[p * n..(p + 1) * n]) {
                *c_ij += a_ip * b_pj.to_f64();
            }
        }
    });
    c
}

/// `matrix` (row-major, `cols` columns) times `x`, rows in parallel, in f64.
fn multiply_vector<T: Element>(matrix: &[T], cols: usize, x: &[f64]) -> Vec<f64> {
    matrix.par_chunks(cols).map(|row| row.iter().zip(x).map(|(a, b)| a.to_f64() * b).sum()).collect()
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
        assert_eq!(err, "sizes of the matrices do not match: A is 3 x 4, B is 5 x 2 (A's columns must equal B's rows)");
        assert_eq!(parse_block_size("32"), Ok(32));
        assert_eq!(parse_block_size("8"), Err("mmm.cu is compiled for BLOCK_SIZE [16, 32] only".to_string()));
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

    #[test]
    fn operations_per_loaded_element_follow_the_greek_slides() {
        assert_eq!(MmmKernel::Tiled.operations_per_loaded_element(16), 16.0);
        assert_eq!(MmmKernel::Tiled.operations_per_loaded_element(32), 32.0);
        assert_eq!(MmmKernel::Naive.operations_per_loaded_element(32), 1.0);
        assert_eq!(MmmKernel::Tiled.c_name::<f32>(), "mmm_f32");
        assert_eq!(MmmKernel::Naive.c_name::<f64>(), "mmm_ab_f64");
    }
}

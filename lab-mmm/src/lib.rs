//! The steps of lab-mmm, called by `main.rs` in the slide's order, by the GPU tests and by the
//! benchmark.

use anyhow::{bail, ensure, Result};
use clap::ValueEnum;
use common::check_cuda;
use common::context::WaitForDevice;
use common::timing::{time_on_stream, time_on_stream_after, Timing};
use cust::module::Module;
use cust::stream::Stream;
use grading::guard::Guarded;
use matrix::mmm::{launch_mmm, MmmKernel, ProductCheck};
use matrix::{Element, Matrix, MatrixView};

pub mod background;
pub mod check;
pub mod climb;
pub mod cublas;
pub mod inputs;
pub mod ladder;
pub mod reads;
pub mod split_k;
pub mod sweep;
pub mod tile_example;
pub mod unroll;
pub mod wgmma;

/// What `--precision` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrecisionFlag {
    F32,
    F64,
    /// TF32 tensor cores on f32 matrices (--ladder only: the slides' kernels have no TF32 version).
    Tf32,
    /// bf16 tensor cores on f32 matrices converted on the GPU (--ladder only, Hopper's steps 13 to 16).
    Bf16,
    /// f64 (the slides' double) first, then f32.
    Both,
    /// f64, f32 and, with --ladder, tf32 and bf16.
    All,
}

impl PrecisionFlag {
    /// The precisions the slides' kernels run in, in order; an error for tf32 and bf16, which they have
    /// not.
    pub fn of_slides(self) -> Result<Vec<Precision>> {
        Ok(match self {
            PrecisionFlag::F64 => vec![Precision::F64],
            PrecisionFlag::F32 => vec![Precision::F32],
            PrecisionFlag::Both | PrecisionFlag::All => vec![Precision::F64, Precision::F32],
            PrecisionFlag::Tf32 => {
                bail!("--precision tf32 is the ladder's (--ladder): the slides' mmm kernels have no TF32 version")
            }
            PrecisionFlag::Bf16 => {
                bail!("--precision bf16 is the ladder's (--ladder): the slides' mmm kernels have no bf16 version")
            }
        })
    }

    /// The precisions the ladder climbs, in order.
    pub fn of_ladder(self) -> Vec<Precision> {
        match self {
            PrecisionFlag::F64 => vec![Precision::F64],
            PrecisionFlag::F32 => vec![Precision::F32],
            PrecisionFlag::Tf32 => vec![Precision::Tf32],
            PrecisionFlag::Bf16 => vec![Precision::Bf16],
            PrecisionFlag::Both => vec![Precision::F64, Precision::F32],
            PrecisionFlag::All => Precision::ALL.to_vec(),
        }
    }
}

/// One precision a product is computed in: f64 (the slides' double), f32, TF32, the tensor cores'
/// rounded f32 (f32 matrices, the ladder's steps 8, 11 and 12 and cuBLAS in TF32 math), or bf16 (f32
/// matrices converted to bf16 on the GPU, products summed in f32: steps 13 to 16 and cuBLAS's GemmEx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    F64,
    F32,
    Tf32,
    Bf16,
}

/// Largest |GPU - CPU| of a TF32 product, relative to its largest element: TF32 keeps 10 bits of
/// mantissa, so each rounded number is off by up to 2^-11 (4.9e-4) of itself and each product by
/// twice that; sums of random signs cancel most of it (2e-4 measured at 4096 on an H100). Ten times
/// the rounding of one number leaves room for a product of two, and stays far below what a wrong
/// element gives (about its own size, 0.15 of the largest for a typical element at 4096).
pub const TF32_TOLERANCE: f64 = 5e-3;

/// The same for bf16, which keeps 7 bits of mantissa (8 with the implicit one): each rounded number is
/// off by up to 2^-8 (3.9e-3) of itself, eight times TF32's. The prototype of step 13 measured 2.0e-3 to
/// 2.6e-3 from 1 x 1 x 1 to 8192 cubed on an H100, as cuBLAS's bf16 GEMM on the same numbers (sums of
/// random signs cancel most of the rounding). 2e-2, five times one number's rounding, leaves room for
/// the product of two rounded numbers and a sum that cancels less, and is still seven times below a
/// wrong element's typical 0.15.
pub const BF16_TOLERANCE: f64 = 2e-2;

impl Precision {
    pub const ALL: [Precision; 4] = [Precision::F64, Precision::F32, Precision::Tf32, Precision::Bf16];

    /// For tables and progress lines.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F64 => "f64",
            Precision::F32 => "f32",
            Precision::Tf32 => "tf32",
            Precision::Bf16 => "bf16",
        }
    }

    /// How far a C in this precision may be from the CPU's, relative to C's largest element, where
    /// that is a fixed share: TF32 and bf16 round the inputs themselves. None for f64 and f32, judged
    /// against the product's error bound (`matrix::bound`), as every lab's check does.
    pub fn fixed_tolerance(self) -> Option<f64> {
        match self {
            Precision::F64 | Precision::F32 => None,
            Precision::Tf32 => Some(TF32_TOLERANCE),
            Precision::Bf16 => Some(BF16_TOLERANCE),
        }
    }

    /// `check` (made against the CPU's product) judged in this precision: its fixed tolerance where it
    /// has one.
    pub fn judge(self, check: ProductCheck) -> ProductCheck {
        match self.fixed_tolerance() {
            Some(tolerance) => ProductCheck { tolerance, ..check },
            None => check,
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One kernel at one block size and precision: its time and how its C compared with the CPU.
#[derive(Debug, Clone)]
pub struct Row {
    pub kernel: MmmKernel,
    /// The kernel's C name in the module, e.g. `mmm_f64`.
    pub function: String,
    pub precision: &'static str,
    pub block_size: u32,
    pub timing: Timing,
    pub check: ProductCheck,
    /// Multiply-adds times two.
    pub flops: f64,
    /// The Greek slides' bound: bandwidth / element size * operations per loaded element, in FLOP/s.
    pub bandwidth_bound: f64,
}

impl Row {
    pub fn gflops(&self) -> f64 {
        self.flops / (self.timing.median_ms() * 1e6)
    }
}

/// The slide's launch for one configuration on matrices already on the GPU: C is poisoned, `mmm`
/// (or `mmm-ab`) runs once to warm up and `repetitions` times between events. C stays on the GPU:
/// the caller copies it back (`copy_from_gpu`, or staged).
pub fn time_on_gpu<T: Element>(
    module: &Module,
    kernel: MmmKernel,
    block_size: u32,
    a: &Matrix<T>,
    b: &Matrix<T>,
    c: &mut Matrix<T>,
    repetitions: usize,
) -> Result<Timing> {
    c.poison_on_gpu()?;
    launch_timed(
        module,
        kernel,
        block_size,
        (a.view()?, b.view()?, c.view()?),
        repetitions,
    )
}

/// The same from A and B wherever they are (`--check` keeps them in guard zones) into a C with guard
/// zones around it; C stays on the GPU. Two launches, as a timed run makes them: a warm-up's and the
/// one whose C the check reads, each from C poisoned with `poison` (issue 39: a kernel that skips its
/// work when C is already written leaves C unwritten). Untimed, so where checks share the GPU it holds
/// it only shared (`common::timing::alone::beside`): beside other checks' untimed launches, never
/// beside a timed loop, which the student's kernel would slow (issue 65, run 50: in these runs, then
/// timed and alone, a kernel that traps held the GPU 8 to 14 s a check, one that prints from every
/// thread 16 s). Returns once both have ended, on every path.
pub fn multiply_into<T: Element>(
    module: &Module,
    kernel: MmmKernel,
    block_size: u32,
    (a, b): (MatrixView<T>, MatrixView<T>),
    c: &mut Guarded<T>,
    poison: u32,
) -> Result<()> {
    let c_view = view_of_c(a, b, c)?;
    let mmm = check_cuda!(module.get_function(kernel.c_name::<T>()))?;
    let stream = check_cuda!(Stream::new(cust::stream::StreamFlags::DEFAULT, None))?;
    let _beside = common::timing::alone::beside()?;
    // The launches read and write memory the caller frees once this returns (waited for before the
    // GPU is given back: `wait` is dropped first).
    let wait = WaitForDevice;
    for _ in 0..2 {
        // The memset goes to the NULL stream, which this (blocking) stream waits for and which waits for it.
        c.fill(poison)?;
        launch_mmm(&mmm, a, b, c_view, block_size, &stream)?;
    }
    check_cuda!(stream.synchronize())?; // kernel faults show up here
    wait.disarm();
    Ok(())
}

/// C's view in its guard zones, for A and B.
pub fn view_of_c<T: Element>(a: MatrixView<T>, b: MatrixView<T>, c: &Guarded<T>) -> Result<MatrixView<T>> {
    ensure!(
        c.len() == a.rows as usize * b.cols as usize,
        "C holds {} elements, not {} x {}",
        c.len(),
        a.rows,
        b.cols
    );
    Ok(MatrixView {
        rows: a.rows,
        cols: b.cols,
        data: c.as_device_ptr(),
    })
}

/// One warm-up and `repetitions` timed launches, each after `before` (which poisons C, and writes
/// fresh inputs where `--check` times a student's kernel: issue 61).
pub fn multiply_after<T: Element>(
    module: &Module,
    kernel: MmmKernel,
    block_size: u32,
    (a, b, c): (MatrixView<T>, MatrixView<T>, MatrixView<T>),
    repetitions: usize,
    before: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    let mmm = check_cuda!(module.get_function(kernel.c_name::<T>()))?;
    let stream = check_cuda!(Stream::new(cust::stream::StreamFlags::DEFAULT, None))?;
    // The memset goes to the NULL stream, which this (blocking) stream waits for and which waits for it.
    let timing = time_on_stream_after(&stream, 1, repetitions, before, || {
        launch_mmm(&mmm, a, b, c, block_size, &stream)
    })?;
    check_cuda!(stream.synchronize())?; // kernel faults show up here
    Ok(timing)
}

/// One launch and nothing else, untimed: what `--check` measures with hardware counters, where each
/// launch is counted.
pub fn multiply_once<T: Element>(
    module: &Module,
    kernel: MmmKernel,
    block_size: u32,
    a: &Matrix<T>,
    b: &Matrix<T>,
    c: &mut Matrix<T>,
) -> Result<()> {
    c.poison_on_gpu()?;
    let mmm = check_cuda!(module.get_function(kernel.c_name::<T>()))?;
    let stream = check_cuda!(Stream::new(cust::stream::StreamFlags::DEFAULT, None))?;
    launch_mmm(&mmm, a.view()?, b.view()?, c.view()?, block_size, &stream)?;
    Ok(check_cuda!(stream.synchronize())?)
}

/// One warm-up launch and `repetitions` timed ones on a stream of their own, then a synchronize.
fn launch_timed<T: Element>(
    module: &Module,
    kernel: MmmKernel,
    block_size: u32,
    (a, b, c): (MatrixView<T>, MatrixView<T>, MatrixView<T>),
    repetitions: usize,
) -> Result<Timing> {
    let mmm = check_cuda!(module.get_function(kernel.c_name::<T>()))?;
    let stream = check_cuda!(Stream::new(cust::stream::StreamFlags::DEFAULT, None))?;
    let timing = time_on_stream(&stream, 1, repetitions, || {
        launch_mmm(&mmm, a, b, c, block_size, &stream)
    })?;
    check_cuda!(stream.synchronize())?; // kernel faults show up here
    Ok(timing)
}

/// The table `lab-mmm` ends with; speedups are over mmm-ab at the same precision and block size.
pub fn format_table(rows: &[Row]) -> String {
    let mut table = String::from(
        "| kernel | precision | BLOCK_SIZE | GPU time in ms | GFLOP/s | speedup over mmm-ab | slide's bound GFLOP/s | max rel. error | check |\n\
         |--------|-----------|------------|----------------|---------|---------------------|-----------------------|----------------|-------|\n",
    );
    for row in rows {
        let naive = rows.iter().find(|other| {
            other.kernel == MmmKernel::Naive && other.precision == row.precision && other.block_size == row.block_size
        });
        let speedup = naive.map_or("-".to_string(), |n| {
            format!("{:.2}x", n.timing.median_ms() / row.timing.median_ms())
        });
        table.push_str(&format!(
            "| {} | {} | {} | {:.3} | {:.0} | {} | {:.0} | {:.1e} | {} |\n",
            row.kernel.slide_name(),
            row.precision,
            row.block_size,
            row.timing.median_ms(),
            row.gflops(),
            speedup,
            row.bandwidth_bound / 1e9,
            row.check.error,
            if row.check.passed() { "PASS" } else { "FAIL" },
        ));
    }
    table
}

/// `--kernel`: which of the slides' kernels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KernelChoice {
    Naive,
    Tiled,
    Both,
}

impl KernelChoice {
    /// The kernels chosen, the slides' order.
    pub fn kernels(self) -> Vec<MmmKernel> {
        match self {
            KernelChoice::Naive => vec![MmmKernel::Naive],
            KernelChoice::Tiled => vec![MmmKernel::Tiled],
            KernelChoice::Both => vec![MmmKernel::Naive, MmmKernel::Tiled],
        }
    }
}

/// Host memory the run needs at most: A and B in f64, their copies and C in the precision running, and
/// three m x n f64 arrays (the CPU reference of a small product, the second host copy of C that the
/// check reads while the next kernel runs, the C kept for --output).
/// Computed in u128 (sizes up to 2^32 - 1 each) and saturated, so a size no machine can hold is
/// refused by the fit check rather than wrapping.
pub fn host_bytes((m, k, n): (usize, usize, usize)) -> u64 {
    let (m, k, n) = (m as u128, k as u128, n as u128);
    let (inputs, product) = (m * k + k * n, m * n);
    u64::try_from(8 * inputs + 8 * (inputs + product) + 3 * 8 * product).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf32_and_bf16_are_the_ladders_and_all_means_every_precision_that_applies() {
        use Precision::*;
        assert_eq!(PrecisionFlag::All.of_slides().unwrap(), [F64, F32]);
        assert_eq!(PrecisionFlag::All.of_ladder(), [F64, F32, Tf32, Bf16]);
        assert_eq!(PrecisionFlag::Both.of_ladder(), [F64, F32]);
        assert_eq!(PrecisionFlag::Tf32.of_ladder(), [Tf32]);
        assert_eq!(PrecisionFlag::Bf16.of_ladder(), [Bf16]);
        for (flag, name) in [(PrecisionFlag::Tf32, "tf32"), (PrecisionFlag::Bf16, "bf16")] {
            let error = flag.of_slides().unwrap_err().to_string();
            assert!(
                error.starts_with(&format!("--precision {name} is the ladder's")),
                "{error}"
            );
        }
        assert_eq!(PrecisionFlag::from_str("bf16", true), Ok(PrecisionFlag::Bf16));
        // TF32 and bf16 are checked against their own rounding, f32 and f64 as everywhere else.
        let bounded = ProductCheck {
            error: 1e-9,
            worst: (0, 0),
            method: "exact",
            tolerance: 1e-10,
        };
        let judged = Precision::ALL.map(|precision| precision.judge(bounded.clone()).tolerance);
        assert_eq!(judged, [1e-10, 1e-10, TF32_TOLERANCE, BF16_TOLERANCE]);
        assert_eq!(format!("{Bf16} {Tf32} {F32} {F64}"), "bf16 tf32 f32 f64");
    }

    fn row(kernel: MmmKernel, ms: f64) -> Row {
        Row {
            kernel,
            function: kernel.c_name::<f64>(),
            precision: "f64",
            block_size: 16,
            timing: Timing::gpu(vec![ms]),
            check: ProductCheck {
                error: 1e-15,
                worst: (0, 0),
                method: "exact",
                tolerance: 1e-12,
            },
            flops: 2e9,
            bandwidth_bound: 4e12,
        }
    }

    #[test]
    fn table_shows_gflops_and_the_speedup_over_the_naive_kernel() {
        let table = format_table(&[row(MmmKernel::Naive, 10.0), row(MmmKernel::Tiled, 2.5)]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[2],
            "| mmm-ab | f64 | 16 | 10.000 | 200 | 1.00x | 4000 | 1.0e-15 | PASS |"
        );
        assert_eq!(
            lines[3],
            "| mmm | f64 | 16 | 2.500 | 800 | 4.00x | 4000 | 1.0e-15 | PASS |"
        );
    }
}

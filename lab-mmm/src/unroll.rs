//! `--unroll`: the German slides' lesson on `#pragma unroll`, measured. mmm.cu puts the pragma on the
//! tiled kernel's inner product (`for k < BLOCK_SIZE: sum += as[ty][k] * bs[k][tx]`) and the slides
//! say it makes the compiler write the BLOCK_SIZE multiply-adds out one after another, so the loop's
//! compares and conditional jumps are gone. This runs mmm.cu's tiled kernel as printed beside two
//! builds of the same file that kernels/build.rs makes with that one line replaced: `#pragma unroll 1`
//! (the loop stays) and no pragma at all (the compiler's own choice; with a trip count it knows, nvcc
//! unrolls anyway, and its report shows the same registers as the kernel as printed). Each C is
//! checked against the CPU as the lab's own run checks it ([`Checker`]), each kernel timed as the lab
//! times it ([`time_on_gpu`]: CUDA events, a warm-up, the median of the repetitions).

use anyhow::{ensure, Context as _, Result};
use common::gpu::Gpu;
use common::timing::Timing;
use common::verify::Random;
use kernels::{Code, KernelImage};
use matrix::mmm::{MmmKernel, ProductCheck};
use matrix::{Element, Matrix};

use crate::background::Checker;
use crate::{time_on_gpu, Precision};

/// One build of the tiled kernel: mmm.cu as printed, or a variant of it.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// What stands on the inner product's loop: `#pragma unroll` (as printed), `#pragma unroll 1`, or
    /// `no pragma`.
    pub name: &'static str,
    pub block_size: u32,
    pub image: &'static KernelImage,
}

impl Variant {
    /// mmm.cu as printed, the one the others are compared with.
    pub fn as_printed(&self) -> bool {
        self.name == kernels::pragma::UNROLL_PRAGMA
    }
}

/// The name of the line a variant has in the pragma's place: a pragma as written, or `no pragma`
/// where build.rs left a comment.
fn name_of(line: &'static str) -> &'static str {
    if line.starts_with("#pragma") {
        line
    } else {
        "no pragma"
    }
}

/// For each BLOCK_SIZE asked for, mmm.cu as printed and then its variants (kernels'
/// `MMM_UNROLL_VARIANTS`); an error for a BLOCK_SIZE mmm.cu is not compiled for.
pub fn variants(block_sizes: &[u32]) -> Result<Vec<Variant>> {
    let mut variants = Vec::new();
    for &block_size in block_sizes {
        let image = kernels::mmm_for_block_size(block_size).with_context(|| {
            format!(
                "--block-size {block_size}: mmm.cu is compiled for BLOCK_SIZE {:?} only",
                kernels::MMM_BLOCK_SIZES
            )
        })?;
        variants.push(Variant {
            name: kernels::pragma::UNROLL_PRAGMA,
            block_size,
            image,
        });
        for (size, line, image) in kernels::MMM_UNROLL_VARIANTS.iter() {
            if *size == block_size {
                variants.push(Variant {
                    name: name_of(line),
                    block_size,
                    image,
                });
            }
        }
    }
    Ok(variants)
}

/// One variant at one precision: its registers, time and check.
#[derive(Debug, Clone)]
pub struct UnrollRow {
    pub variant: &'static str,
    pub precision: &'static str,
    pub block_size: u32,
    /// From the ptxas report of the build this GPU runs, and that build's architecture (`sm_90`). The
    /// build's own report, so the register column is what nvcc decided for each line in the pragma's
    /// place.
    pub registers: Option<(u32, String)>,
    pub timing: Timing,
    /// Multiply-adds times two.
    pub flops: f64,
    pub check: ProductCheck,
}

impl UnrollRow {
    pub fn gflops(&self) -> f64 {
        self.flops / (self.timing.median_ms() * 1e6)
    }
}

/// The registers ptxas gave `function` in the build a GPU of architecture `arch` runs, with that
/// build's architecture; marked where the GPU compiles that build's PTX instead (its own count may
/// differ). None where the report lacks the function.
fn registers(image: &KernelImage, function: &str, arch: u32) -> Option<(u32, String)> {
    let (code, report) = image.report_for(arch).ok()?;
    let registers = report.function(function)?.registers;
    let built_for = kernels::arch_name(code.build().arch);
    Some(match code {
        Code::Machine(_) => (registers, built_for),
        Code::Ptx(_) => (registers, format!("{built_for} PTX")),
    })
}

/// Multiplies `a` by `b` (on the host, in f64) with every variant in every precision, each C checked
/// against the CPU; the rows in that order.
pub fn run(
    gpu: &Gpu,
    (a, b): (&mut Matrix<f64>, &mut Matrix<f64>),
    precisions: &[Precision],
    variants: &[Variant],
    repetitions: usize,
    random: &mut Random,
) -> Result<Vec<UnrollRow>> {
    let mut rows = Vec::new();
    for &precision in precisions {
        // The slides' kernels come in f64 and f32 only (`of_slides`).
        if precision == Precision::F64 {
            rows.extend(run_in(gpu, (&mut *a, &mut *b), variants, repetitions, random)?);
        } else {
            let (mut a, mut b) = (a.convert::<f32, _>()?, b.convert::<f32, _>()?);
            rows.extend(run_in(gpu, (&mut a, &mut b), variants, repetitions, random)?);
        }
    }
    Ok(rows)
}

/// [`run`] in element type T: A and B to the GPU, each variant timed, each C handed to the check; A
/// and B leave the GPU at the end, for the next precision.
fn run_in<T: Element>(
    gpu: &Gpu,
    (a, b): (&mut Matrix<T>, &mut Matrix<T>),
    variants: &[Variant],
    repetitions: usize,
    random: &mut Random,
) -> Result<Vec<UnrollRow>> {
    a.copy_to_gpu()?;
    b.copy_to_gpu()?;
    let mut c = Matrix::<T>::new(a.rows(), b.cols())?;
    let function = MmmKernel::Tiled.c_name::<T>();
    let (inputs_a, inputs_b) = (&*a, &*b);
    let (runs, checks) = std::thread::scope(|scope| -> Result<_> {
        let mut checker = Checker::start(scope, inputs_a, inputs_b, random);
        let mut runs = Vec::new();
        for variant in variants {
            let module = gpu.load(variant.image)?;
            let timing = time_on_gpu(
                &module,
                MmmKernel::Tiled,
                variant.block_size,
                inputs_a,
                inputs_b,
                &mut c,
                repetitions,
            )?;
            c.copy_from_gpu()?;
            checker.hand_over(&mut c)?;
            runs.push((variant, timing));
        }
        Ok((runs, checker.finish(&mut c)?))
    })?;
    ensure!(
        runs.len() == checks.len(),
        "{} products, {} checks",
        runs.len(),
        checks.len()
    );
    let flops = 2.0 * (a.rows() * a.cols() * b.cols()) as f64;
    a.free_gpu_copy();
    b.free_gpu_copy();
    Ok(runs
        .into_iter()
        .zip(checks)
        .map(|((variant, timing), check)| UnrollRow {
            variant: variant.name,
            precision: T::NAME,
            block_size: variant.block_size,
            registers: registers(variant.image, &function, gpu.info.arch()),
            timing,
            flops,
            check,
        })
        .collect())
}

/// The table `--unroll` prints; each time is also given against mmm.cu as printed at the same
/// precision and BLOCK_SIZE (above 1.00x: slower than as printed).
pub fn format_table(rows: &[UnrollRow]) -> String {
    let mut table = String::from(
        "| line on the inner product | precision | BLOCK_SIZE | registers (ptxas) | GPU time in ms | GFLOP/s | time / as printed | max rel. error | check |\n\
         |---------------------------|-----------|------------|-------------------|----------------|---------|-------------------|----------------|-------|\n",
    );
    for row in rows {
        let printed = rows.iter().find(|other| {
            other.variant == kernels::pragma::UNROLL_PRAGMA
                && other.precision == row.precision
                && other.block_size == row.block_size
        });
        let ratio = printed.map_or("-".to_string(), |printed| {
            format!("{:.2}x", row.timing.median_ms() / printed.timing.median_ms())
        });
        let registers = row
            .registers
            .as_ref()
            .map_or("-".to_string(), |(count, arch)| format!("{count} ({arch})"));
        let name = if row.variant == kernels::pragma::UNROLL_PRAGMA {
            format!("{} (as printed)", row.variant)
        } else {
            row.variant.to_string()
        };
        table.push_str(&format!(
            "| {name} | {} | {} | {registers} | {:.3} | {:.0} | {ratio} | {:.1e} | {} |\n",
            row.precision,
            row.block_size,
            row.timing.median_ms(),
            row.gflops(),
            row.check.error,
            if row.check.passed() { "PASS" } else { "FAIL" },
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_block_size_has_the_kernel_as_printed_first_then_its_two_variants() {
        let variants = variants(&[32, 16]).unwrap();
        let shown: Vec<(u32, &str)> = variants.iter().map(|v| (v.block_size, v.name)).collect();
        assert_eq!(
            shown,
            [
                (32, "#pragma unroll"),
                (32, "#pragma unroll 1"),
                (32, "no pragma"),
                (16, "#pragma unroll"),
                (16, "#pragma unroll 1"),
                (16, "no pragma"),
            ]
        );
        assert!(variants[0].as_printed() && !variants[1].as_printed());
        assert!(std::ptr::eq(
            variants[3].image,
            kernels::mmm_for_block_size(16).unwrap()
        ));
        for variant in &variants[1..3] {
            assert_eq!(variant.image.flags, ["-DBLOCK_SIZE=32"]);
        }
        let error = super::variants(&[8]).unwrap_err().to_string();
        assert!(
            error.starts_with("--block-size 8: mmm.cu is compiled for BLOCK_SIZE"),
            "{error}"
        );
    }

    #[test]
    fn registers_come_from_the_build_the_gpu_runs() {
        let printed = kernels::mmm_for_block_size(16).unwrap();
        let newest = *kernels::BUILT_ARCHS.last().unwrap();
        let (count, arch) = registers(printed, "mmm_f64", newest).unwrap();
        assert_eq!(arch, kernels::arch_name(newest));
        assert!(count > 0);
        assert!(registers(printed, "no_such_kernel", newest).is_none());
    }

    fn row(variant: &'static str, ms: f64, passed: bool) -> UnrollRow {
        UnrollRow {
            variant,
            precision: "f64",
            block_size: 16,
            registers: Some((32, "sm_90".to_string())),
            timing: Timing::gpu(vec![ms]),
            flops: 2e9,
            check: ProductCheck {
                error: if passed { 1e-15 } else { 0.5 },
                worst: (0, 0),
                method: "exact",
                tolerance: 1e-12,
            },
        }
    }

    #[test]
    fn the_table_sets_each_variant_beside_the_kernel_as_printed() {
        let table = format_table(&[
            row("#pragma unroll", 2.0, true),
            row("#pragma unroll 1", 3.0, true),
            row("no pragma", 2.0, false),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[2],
            "| #pragma unroll (as printed) | f64 | 16 | 32 (sm_90) | 2.000 | 1000 | 1.00x | 1.0e-15 | PASS |"
        );
        assert_eq!(
            lines[3],
            "| #pragma unroll 1 | f64 | 16 | 32 (sm_90) | 3.000 | 667 | 1.50x | 1.0e-15 | PASS |"
        );
        assert_eq!(
            lines[4],
            "| no pragma | f64 | 16 | 32 (sm_90) | 2.000 | 1000 | 1.00x | 5.0e-1 | FAIL |"
        );
    }
}

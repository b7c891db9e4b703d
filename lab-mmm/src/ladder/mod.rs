//! `--ladder`: the steps from the slides' tiled kernel towards cuBLAS (`kernels/cuda/mmm_ladder.cu`, and
//! `kernels/cuda/mmm_wgmma.cu` for Hopper's steps 12 to 18, whose host side is [`crate::wgmma`]), each
//! timed like the slide's kernels and checked against the CPU.
//!
//! This file owns the ladder's table: a rung measured ([`Rung`]), a row ([`LadderRow`]), the table
//! ([`format_ladder`]) and the line on TF32's price ([`precision_cost`]). The submodules own the rest,
//! and what they make public is public here, at `ladder::`:
//! - `step`: the steps, their kernels' names, precisions and launch shapes ([`Step`]);
//! - `launch`: loading, preparing and launching them ([`Ladder`], [`StepLaunch`], [`run_step`]);
//! - `operands`: A, B and C on the GPU, and the CPU's product they are checked against ([`Operands`]);
//! - `library`: cuBLAS's rows, timed as a step is ([`run_library`]).
//!
//! The table depends on `step`; `launch` on `step`, `operands`, [`crate::split_k`] and [`crate::wgmma`];
//! `library` on `operands` and [`crate::cublas`]; no submodule on this file. Split-K's cut and slabs
//! are [`crate::split_k`]'s, shared with wgmma, which depends on it and not on the ladder.

mod launch;
mod library;
mod operands;
mod step;

use common::timing::Timing;
use matrix::mmm::ProductCheck;

pub use launch::{resources, run_step, Ladder, StepLaunch};
pub use library::{library_math, library_name, library_row, run_library, run_library_in};
pub use operands::Operands;
pub use step::{Step, TILED_BLOCK_SIZE};

use crate::Precision;

/// One rung, measured.
#[derive(Debug, Clone)]
pub struct Rung {
    pub step: Step,
    pub precision: Precision,
    pub timing: Timing,
    pub check: ProductCheck,
    /// Multiply-adds times two.
    pub flops: f64,
    pub registers: u32,
    pub shared_bytes: u32,
    /// Blocks a multiprocessor holds at once, and the share of its threads they are.
    pub blocks_per_sm: u32,
    pub occupancy: f64,
}

impl Rung {
    pub fn tflops(&self) -> f64 {
        self.flops / (self.timing.median_ms() * 1e9)
    }
}

/// A line of the ladder's table: a step measured, one this GPU or build cannot run (with the reason),
/// or cuBLAS on the same matrices.
#[derive(Debug, Clone)]
pub enum LadderRow {
    Ran(Rung),
    NotRun {
        step: Step,
        precision: Precision,
        why: String,
    },
    Library {
        name: &'static str,
        precision: Precision,
        timing: Timing,
        check: ProductCheck,
        flops: f64,
    },
}

impl LadderRow {
    /// cuBLAS's TFLOP/s in `precision`, where this row is its.
    fn library_tflops(&self, precision: Precision) -> Option<f64> {
        match self {
            LadderRow::Library {
                precision: p,
                timing,
                flops,
                ..
            } if *p == precision => Some(flops / (timing.median_ms() * 1e9)),
            _ => None,
        }
    }
}

/// The ladder's table: every rung's time, TFLOP/s, its share of cuBLAS's (same precision, where
/// cuBLAS ran), speedup over the rung before, its resources and its check; a step that cannot run
/// here says why in its row.
pub fn format_ladder(rows: &[LadderRow]) -> String {
    let mut table = String::from(
        "| step | precision | GPU time in ms | TFLOP/s | of cuBLAS | speedup over the step before | registers | shared memory | blocks per SM (occupancy) | max rel. error | check |\n\
         |------|-----------|----------------|---------|-----------|------------------------------|-----------|---------------|---------------------------|----------------|-------|\n",
    );
    let verdict = |check: &ProductCheck| if check.passed() { "PASS" } else { "FAIL" };
    for (index, row) in rows.iter().enumerate() {
        let rung = match row {
            LadderRow::Ran(rung) => rung,
            LadderRow::NotRun { step, precision, why } => {
                table.push_str(&format!(
                    "| {} | {precision} | not run: {why} | | | | | | | | - |\n",
                    step.name()
                ));
                continue;
            }
            LadderRow::Library {
                name,
                precision,
                timing,
                check,
                ..
            } => {
                let tflops = row.library_tflops(*precision).unwrap_or_default();
                table.push_str(&format!(
                    "| {name} | {precision} | {:.3} | {tflops:.2} | 100% | - | - | - | - | {:.1e} | {} |\n",
                    timing.median_ms(),
                    check.error,
                    verdict(check)
                ));
                continue;
            }
        };
        let share = rows
            .iter()
            .find_map(|other| other.library_tflops(rung.precision))
            .map_or("-".to_string(), |library| {
                format!("{:.0}%", 100.0 * rung.tflops() / library)
            });
        let before = rows[..index].iter().rev().find_map(|other| match other {
            LadderRow::Ran(other) if other.precision == rung.precision => Some(other),
            _ => None,
        });
        let speedup = before.map_or("-".to_string(), |b| {
            format!("{:.2}x", b.timing.median_ms() / rung.timing.median_ms())
        });
        table.push_str(&format!(
            "| {} | {} | {:.3} | {:.2} | {share} | {speedup} | {} | {} B | {} ({:.0}%) | {:.1e} | {} |\n",
            rung.step.name(),
            rung.precision,
            rung.timing.median_ms(),
            rung.tflops(),
            rung.registers,
            rung.shared_bytes,
            rung.blocks_per_sm,
            100.0 * rung.occupancy,
            rung.check.error,
            verdict(&rung.check),
        ));
    }
    table
}

/// What TF32 costs: the largest error of the fastest step that ran in tf32, bf16, f32 and f64, and
/// TF32's speed against f32's fastest; `None` without a TF32 step in the rows.
pub fn precision_cost(rows: &[LadderRow]) -> Option<String> {
    let fastest = |precision: Precision| {
        rows.iter()
            .filter_map(|row| match row {
                LadderRow::Ran(rung) if rung.precision == precision => Some(rung),
                _ => None,
            })
            .max_by(|x, y| x.tflops().total_cmp(&y.tflops()))
    };
    let tf32 = fastest(Precision::Tf32)?;
    let number = |step: Step| Step::ALL.iter().position(|&s| s == step).unwrap_or_default();
    let mut line = format!(
        "Max rel. error: {:.1e} in tf32 (step {})",
        tf32.check.error,
        number(tf32.step)
    );
    for precision in [Precision::Bf16, Precision::F32, Precision::F64] {
        if let Some(rung) = fastest(precision) {
            line.push_str(&format!(
                ", {:.1e} in {precision} (step {})",
                rung.check.error,
                number(rung.step)
            ));
        }
    }
    if let Some(f32) = fastest(Precision::F32) {
        line.push_str(&format!(
            ": TF32 gives up {:.0}x f32's accuracy for {:.1}x its speed.",
            tf32.check.error / f32.check.error.max(f64::MIN_POSITIVE),
            tf32.tflops() / f32.tflops()
        ));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rung(step: Step, precision: Precision, ms: f64) -> Rung {
        Rung {
            step,
            precision,
            timing: Timing::gpu(vec![ms]),
            check: ProductCheck {
                error: 1e-15,
                worst: (0, 0),
                method: "exact",
                tolerance: 1e-12,
            },
            flops: 2e9,
            registers: 96,
            shared_bytes: 37888,
            blocks_per_sm: 2,
            occupancy: 0.125,
        }
    }

    fn ran(step: Step, precision: Precision, ms: f64) -> LadderRow {
        LadderRow::Ran(rung(step, precision, ms))
    }

    /// The line under the table: each precision's last step's error, and TF32's price against f32.
    #[test]
    fn the_price_of_tf32_is_its_error_against_f32s_and_its_speed() {
        let with_error = |step, precision, ms, error| {
            let mut rung = rung(step, precision, ms);
            rung.check.error = error;
            LadderRow::Ran(rung)
        };
        let rows = [
            with_error(Step::MmaTiled, Precision::F64, 4.0, 1e-16),
            with_error(Step::AsyncCopies, Precision::F32, 4.0, 1e-6),
            with_error(Step::WarpTiled, Precision::F32, 3.0, 2e-7),
            with_error(Step::Tf32, Precision::Tf32, 1.0, 3e-4),
        ];
        assert_eq!(
            precision_cost(&rows).as_deref(),
            Some("Max rel. error: 3.0e-4 in tf32 (step 8), 2.0e-7 in f32 (step 6), 1.0e-16 in f64 (step 7): TF32 gives up 1500x f32's accuracy for 3.0x its speed.")
        );
        assert_eq!(precision_cost(&rows[..3]), None, "no TF32, no line");
        let with_bf16 = [
            with_error(Step::WgmmaTf32, Precision::Tf32, 1.0, 2e-4),
            with_error(Step::WgmmaBf16, Precision::Bf16, 0.5, 2e-3),
        ];
        assert_eq!(
            precision_cost(&with_bf16).as_deref(),
            Some("Max rel. error: 2.0e-4 in tf32 (step 12), 2.0e-3 in bf16 (step 13)")
        );
        assert_eq!(
            precision_cost(&rows[3..]).as_deref(),
            Some("Max rel. error: 3.0e-4 in tf32 (step 8)")
        );
    }

    #[test]
    fn table_compares_each_step_with_the_one_before_in_its_precision() {
        let table = format_ladder(&[
            ran(Step::Tiled, Precision::F64, 40.0),
            ran(Step::RegisterBlocked, Precision::F64, 10.0),
            ran(Step::Tiled, Precision::F32, 20.0),
            LadderRow::NotRun {
                step: Step::HopperTensorCores,
                precision: Precision::F64,
                why: "needs sm_90 (FP64 mma m16n8k4, new with Hopper), this GPU is sm_86".into(),
            },
            ran(Step::TensorCores, Precision::F64, 5.0),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[2].starts_with(
                "| 0. mmm, tiled (the slides, BLOCK_SIZE 32) | f64 | 40.000 | 0.05 | - | - | 96 | 37888 B | 2 (12%) |"
            ),
            "{}",
            lines[2]
        );
        assert!(lines[3].contains("| 10.000 | 0.20 | - | 4.00x |"), "{}", lines[3]);
        assert!(lines[4].contains("| f32 | 20.000 | 0.10 | - | - |"), "{}", lines[4]);
        assert_eq!(lines[5], "| 5. Hopper's mma m16n8k4 (DMMA.16) | f64 | not run: needs sm_90 (FP64 mma m16n8k4, new with Hopper), this GPU is sm_86 | | | | | | | | - |");
        assert!(lines[6].contains("| 5.000 | 0.40 | - | 2.00x |"), "{}", lines[6]);
    }

    /// Issue 24: cuBLAS's row, and each step's share of it in its own precision only.
    #[test]
    fn table_gives_each_step_its_share_of_cublas_in_its_precision() {
        let check = ProductCheck {
            error: 2e-16,
            worst: (0, 0),
            method: "exact",
            tolerance: 1e-12,
        };
        let library = LadderRow::Library {
            name: "cuBLAS DGEMM",
            precision: Precision::F64,
            timing: Timing::gpu(vec![4.0]),
            check,
            flops: 2e9,
        };
        let table = format_ladder(&[
            ran(Step::Tiled, Precision::F64, 40.0),
            ran(Step::Tiled, Precision::F32, 20.0),
            library,
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[2].contains("| 40.000 | 0.05 | 10% | - |"), "{}", lines[2]);
        assert!(lines[3].contains("| 20.000 | 0.10 | - | - |"), "{}", lines[3]);
        assert_eq!(
            lines[4],
            "| cuBLAS DGEMM | f64 | 4.000 | 0.50 | 100% | - | - | - | - | 2.0e-16 | PASS |"
        );
    }
}

//! `--ladder`: the steps from the slides' tiled kernel towards cuBLAS, climbed in each precision on
//! the same A and B, each step timed and checked, cuBLAS's row beside them (issue 24). The steps
//! themselves are in [`crate::ladder`].

use anyhow::Result;
use common::gpu::Gpu;
use common::progress::Progress;
use common::verify::{verdict, Random};
use matrix::Matrix;

use crate::cublas::{Cublas, Gemm};
use crate::ladder::{
    format_ladder, library_name, precision_cost, resources, run_step, Ladder, LadderRow, Operands, Rung, Step,
};
use crate::Precision;

/// `--ladder`: every step in each precision (f64, the slides' double, first), each checked, beside
/// cuBLAS; the table last.
pub fn climb(
    gpu: &Gpu,
    a64: &Matrix<f64>,
    b64: &Matrix<f64>,
    precisions: &[Precision],
    repetitions: usize,
    random: &mut Random,
) -> Result<()> {
    let ladder = Ladder::load(gpu)?;
    let cublas = load_cublas();
    let mut rows = Vec::new();
    for &precision in precisions {
        match precision {
            Precision::F64 => climb_in::<f64>(
                gpu,
                (&ladder, cublas.as_ref()),
                (a64, b64),
                precision,
                repetitions,
                random,
                &mut rows,
            )?,
            Precision::F32 | Precision::Tf32 | Precision::Bf16 => climb_in::<f32>(
                gpu,
                (&ladder, cublas.as_ref()),
                (a64, b64),
                precision,
                repetitions,
                random,
                &mut rows,
            )?,
        }
    }
    println!("\n{}", format_ladder(&rows));
    if let Some(cost) = precision_cost(&rows) {
        println!("{cost}");
    }
    let rungs: Vec<&Rung> = rows
        .iter()
        .filter_map(|row| {
            if let LadderRow::Ran(rung) = row {
                Some(rung)
            } else {
                None
            }
        })
        .collect();
    let failed = rungs.iter().filter(|rung| !rung.check.passed()).count();
    verdict(
        failed == 0,
        &format!("{failed} of {} products differ from the CPU", rungs.len()),
    )
}

/// cuBLAS on the same matrices, the speed limit every step is measured against (issue 24); without
/// it, one line says so and the ladder runs on.
pub fn load_cublas() -> Option<Cublas> {
    match Cublas::load() {
        Ok(cublas) => Some(cublas),
        Err(err) => {
            println!("{err:#}: the ladder runs without cuBLAS's rows.");
            None
        }
    }
}

/// The ladder in one precision, with matrices of T: A and B copied to the GPU once, each step run,
/// timed and checked (a step this GPU or build cannot run gets a row that says why), then cuBLAS
/// where it was found and a step ran.
fn climb_in<T: Gemm>(
    gpu: &Gpu,
    (ladder, cublas): (&Ladder, Option<&Cublas>),
    (a64, b64): (&Matrix<f64>, &Matrix<f64>),
    precision: Precision,
    repetitions: usize,
    random: &mut Random,
    rows: &mut Vec<LadderRow>,
) -> Result<()> {
    let mut operands = Operands::<T>::new(a64, b64, random)?;
    let flops = operands.flops();
    let steps = Step::of_precision::<T>(precision);
    let progress = Progress::new(
        steps.len() + usize::from(cublas.is_some()),
        &format!("lab-mmm --ladder ({precision})"),
    );
    for &step in &steps {
        progress.step(step.name());
        if let Some(why) = ladder.unavailable::<T>(step) {
            progress.done();
            rows.push(LadderRow::NotRun { step, precision, why });
            continue;
        }
        let Some(timing) = run_step(ladder, step, &operands.a, &operands.b, &mut operands.c, repetitions)? else {
            progress.done();
            continue;
        };
        let check = operands.check(precision, random);
        let sizes = (operands.a.rows(), operands.a.cols(), operands.b.cols());
        let split = ladder.split(step, sizes);
        // A split-K step with one slice ran the step it splits: that kernel's resources.
        let ran = step
            .split_of()
            .filter(|_| split.is_some_and(|split| split.slices == 1))
            .unwrap_or(step);
        let (registers, shared_bytes, blocks_per_sm, occupancy) = resources::<T>(gpu, ladder, ran)?;
        progress.done();
        let split = split.map_or(String::new(), |split| format!(" ({split})"));
        progress.println(format!("{} {precision}: {timing}{split}", step.name()));
        rows.push(LadderRow::Ran(Rung {
            step,
            precision,
            timing,
            check,
            flops,
            registers,
            shared_bytes,
            blocks_per_sm,
            occupancy,
        }));
    }
    // cuBLAS is what the steps are measured against: where none of them ran (bf16 before Hopper, TF32
    // before sm_80), its row would compare nothing, and cuBLAS may not have the GEMM there.
    let ran = rows
        .iter()
        .any(|row| matches!(row, LadderRow::Ran(rung) if rung.precision == precision));
    if let Some(cublas) = cublas.filter(|_| ran) {
        let name = library_name::<T>(precision);
        progress.step(name);
        let (timing, check) = operands.run_cublas(cublas, precision, repetitions, random)?;
        progress.done();
        progress.println(format!("{name} {precision}: {timing}"));
        rows.push(LadderRow::Library {
            name,
            precision,
            timing,
            check,
            flops,
        });
    }
    Ok(())
}

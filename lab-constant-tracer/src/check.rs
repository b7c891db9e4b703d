//! `--kernel-source` and `--check` for lab-constant-tracer (assignments/04-constant-tracer): the student
//! puts `sphere_storage` in `__constant__` memory and writes `trace_constant`. The check reads from the
//! compiler's report where `sphere_storage` lives, then renders random scenes of awkward sizes with the
//! student's `trace_constant` and compares every pixel with the CPU's render. The image has guard
//! zones on both sides; `trace_constant` gets no other global buffer (the spheres are in constant
//! memory, which a kernel cannot write).

use std::path::Path;

use anyhow::{Context as _, Result};
use common::gpu::Gpu;
use common::verify::{Poison, Random};
use grading::cases_file::{field, CaseFormat, CaseSet};
use grading::kernel_week::KernelWeek;
use grading::measure::{per_thread, rule_row, Bound, Measure, Whose};
use grading::{
    checked_runs, each_launch, first_mismatch, fresh_inputs, on_the_machine, written, written_once, CaseContext, Entry,
    FirstWrong, Outcome, Row,
};
use kernels::KernelImage;
use profiler::counters::Launch;

use crate::gpu::{DeviceScene, Variant};
use crate::render::{channel_difference, render_on_cpu, trace_pixel, CHANNEL_TOLERANCE};
use crate::scene::{random_scene, Sphere, View};
use rayon::prelude::*;

/// Threads per block of the render: 16 x 16 pixels (gpu.rs).
const TILE: usize = 16;

/// Week 4 (assignments/04-constant-tracer) in the lab: both tracers, the rule read from the
/// compiler's report, the constant cache measured.
pub struct Week4;

impl KernelWeek for Week4 {
    type Case = Case;
    const LAB: &'static str = "lab-constant-tracer";

    fn ours(&self) -> &'static KernelImage {
        &kernels::TRACER
    }

    fn entries(&self) -> &[Entry] {
        &ENTRIES
    }

    fn case_set(&self, file: Option<&Path>) -> Result<CaseSet<Case>> {
        case_set(file)
    }

    fn rules(&self, image: &KernelImage) -> Result<Vec<Row>> {
        Ok(vec![storage_rule(image)?])
    }

    fn measure(&self, _cases: &[Case]) -> Option<Measure<'static, Case>> {
        Some(measure())
    }

    fn run_case(&self, image: &KernelImage, case: &Case, context: CaseContext) -> Result<Outcome> {
        run_case(image, case, context)
    }
}

/// The kernels the lab calls with the student's file.
const ENTRIES: [Entry; 2] = [
    Entry { name: "trace_constant", declaration: "extern \"C\" __global__ void trace_constant(int count, unsigned int* image, View view)" },
    Entry { name: "trace_global", declaration: "extern \"C\" __global__ void trace_global(const Sphere* spheres, int count, unsigned int* image, View view)" },
];

/// One case: an image of width x height pixels and a random scene of `spheres` spheres from `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    pub width: u32,
    pub height: u32,
    pub spheres: usize,
    pub seed: u64,
}

/// One pixel, a few pixels, images that are no multiple of the 16 x 16 blocks, and the most spheres
/// constant memory holds.
pub fn cases() -> Vec<Case> {
    let sizes = [
        (1, 1, 1),
        (17, 13, 3),
        (640, 480, 64),
        (1000, 3, 100),
        (33, 1001, kernels::MAX_SPHERES),
        (1024, 768, 8),
    ];
    sizes
        .into_iter()
        .enumerate()
        .map(|(index, (width, height, spheres))| Case {
            width,
            height,
            spheres,
            seed: index as u64 + 1,
        })
        .collect()
}

/// The fields of a line of a `--cases` file.
pub const CASE_FIELDS: &str = "WIDTH HEIGHT SPHERES SEED";

/// The most sphere tests (pixels x spheres) a case may ask for: the CPU renders the case's reference
/// pixel for pixel, a second or two on 16 cores at this size, and a case's child that says nothing
/// for 30 s is stopped as hung (a teacher's 1165 x 1620 x 1934 was, before timed renders were
/// sampled: [`wrong_on_fresh`]).
pub const MAX_SPHERE_TESTS: u64 = 1 << 32;

/// Up to this many sphere tests a timed render of a fresh scene is checked pixel for pixel; above it,
/// at [`TIMED_SAMPLES`] random pixels ([`wrong_on_fresh`]).
const FULL_CHECK_TESTS: u64 = 1 << 26;

/// The pixels a timed render of a large scene is checked at, drawn after the render: a kernel that
/// gets 1 pixel in 1000 wrong is caught with a probability of 1 - e^-16.
const TIMED_SAMPLES: usize = 16384;

/// The week's cases, or those of a `--cases` file: `640 480 64 3` per line.
fn case_set(file: Option<&Path>) -> Result<CaseSet<Case>> {
    let parse = |fields: &[&str]| -> Result<Vec<Case>, String> {
        let (width, height) = (
            field(fields[0], "WIDTH", 1..=8192)?,
            field(fields[1], "HEIGHT", 1..=8192)?,
        );
        let spheres = field(fields[2], "SPHERES", 1..=kernels::MAX_SPHERES)?;
        let tests = u64::from(width) * u64::from(height) * spheres as u64;
        if tests > MAX_SPHERE_TESTS {
            return Err(format!(
                "WIDTH x HEIGHT x SPHERES is {width} x {height} x {spheres} = {tests} sphere tests, more than the \
                 CPU's reference render takes in a case (2^32 = {MAX_SPHERE_TESTS}): fewer pixels or spheres"
            ));
        }
        Ok(vec![Case {
            width,
            height,
            spheres,
            seed: field(fields[3], "SEED", 0..=u64::MAX)?,
        }])
    };
    let line = |c: &Case| format!("{} {} {} {}", c.width, c.height, c.spheres, c.seed);
    CaseFormat {
        fields: CASE_FIELDS,
        parse: &parse,
        line: &line,
        name: &name,
        shared_checks: None,
    }
    .load(file, cases())
}

/// A timed launch's fresh scene of `count` spheres (issue 61): [`random_scene`]'s from a new seed,
/// every colour drawn anew too, so that a scene of the floor alone, which the seed does not move,
/// differs as well.
fn fresh_scene(count: usize, random: &mut Random) -> Result<Vec<Sphere>> {
    let mut spheres = random_scene(count, random.next_u64())?;
    for sphere in &mut spheres {
        sphere.r = random.uniform(0.2, 1.0) as f32;
        sphere.g = random.uniform(0.2, 1.0) as f32;
        sphere.b = random.uniform(0.2, 1.0) as f32;
    }
    Ok(spheres)
}

pub fn name(case: &Case) -> String {
    format!("{} x {} pixels, {} spheres", case.width, case.height, case.spheres)
}

/// The rule read from the compiler's report: `sphere_storage` must not be in global memory.
fn storage_rule(image: &KernelImage) -> Result<Row> {
    let build = image
        .newest()
        .with_context(|| format!("{} was not compiled", image.source))?;
    let report = build
        .report()
        .with_context(|| format!("reading nvcc's report on {}", image.source))?;
    let storage = kernels::MAX_SPHERES * kernels::SPHERE_SIZE;
    let in_global = report.global_bytes as usize >= storage;
    let first = in_global.then(|| FirstWrong {
        position: "sphere_storage".to_string(),
        value: format!(
            "in global memory ({} bytes gmem in the ptxas report)",
            report.global_bytes
        ),
        expected: "__constant__".to_string(),
        computed_by: "-".to_string(),
    });
    Ok(Row::rule(
        "sphere_storage lives in constant memory (ptxas report)",
        1,
        first.into_iter().collect(),
    ))
}

/// The measured rule's name (week 4).
pub const MEASURED: [&str; 1] = ["constant memory, measured: loads per pixel not from the constant cache (ncu)"];

/// Loads that do not come from the constant cache (per warp instruction or L1 request): global
/// ones, as week 3 counts them (the instructions: L1's requests would count the loads `printf` makes
/// through generic pointers), and generic ones, because spheres kept in `__constant__` but read
/// through a generic pointer (`const Sphere *s = sphere_storage`, passed to a function that is not
/// inlined) are read by generic loads, not from the constant cache (issue 61: such a tracer passed);
/// shared and local ones, because spheres copied out of constant memory into shared memory or into an
/// array of the thread's own are read from there (issue 61); and atomics on global memory, which read
/// as loads do. A tracer that prints from every pixel counts its `printf`'s loads here too.
const METRICS: [&str; 5] = [
    "smsp__inst_executed_op_global_ld.sum",
    "smsp__inst_executed_op_generic_ld.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_local_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
];

/// Week 4's technique measured (issue 39): the student's `trace_constant` and then ours render the same
/// scene under ncu. Ours reads the spheres from constant memory and nothing from global memory; a
/// tracer that reads them from global memory, or copies them there first, loads from global memory
/// for every sphere it tests.
fn measure() -> Measure<'static, Case> {
    let case = Case {
        width: 256,
        height: 192,
        spheres: 64,
        seed: 11,
    };
    Measure {
        cases: vec![case],
        rules: &MEASURED,
        metrics: &METRICS,
        optional_metrics: &[],
        kernels: "regex:^trace_constant$",
        launches_per_case: 4,
        run: &measured_launches,
        judge: &judge,
    }
}

/// In the measured child: the student's tracer, then ours (each a warm-up and one render, alone on the
/// GPU), or only the side `whose` names.
fn measured_launches(student: &KernelImage, cases: &[Case], whose: Whose) -> Result<()> {
    let case = cases.first().context("no case to measure")?;
    let (view, spheres) = (
        View::new(case.width, case.height)?,
        random_scene(case.spheres, case.seed)?,
    );
    let (gpu, ours) = on_the_machine((|| {
        let gpu = Gpu::open(0)?;
        let ours = gpu.load(&kernels::TRACER)?;
        Ok((gpu, ours))
    })())?;
    for module in &whose.modules(&gpu, student, ours)? {
        let mut scene = DeviceScene::new(module, &spheres, view)?;
        scene.render(module, Variant::Constant, 1)?;
    }
    Ok(())
}

/// The four launches (the student's warm-up and render, ours; [`Measure::rows`] hands exactly
/// four) into the rule's row: loads per pixel not from the constant cache ([`METRICS`]), in loads
/// of one thread, at most ours plus one.
fn judge(case: &Case, launches: &[Launch]) -> Vec<Row> {
    let per_pixel = |launch: &Launch| per_thread(launch, &METRICS, f64::from(case.width * case.height));
    let (theirs, ours) = (per_pixel(&launches[1]), per_pixel(&launches[3]));
    let why = format!(
        "the spheres come from the constant cache; from global, shared or local memory, or through a generic pointer, a tracer loads for each of the {}",
        case.spheres
    );
    vec![rule_row(
        MEASURED[0],
        "trace_constant",
        theirs,
        Bound::AtMost(ours + 1.0),
        &why,
        ours,
    )]
}

/// What is wrong with `now`, a timed render of a fresh scene: the first pixel that is not the CPU's
/// (issue 61: every timed render is checked). Every pixel where the scene is small
/// ([`FULL_CHECK_TESTS`]); else [`TIMED_SAMPLES`] pixels drawn from `random` after the render, and
/// every pixel for the poison, so that the CPU's share stays a fraction of the case's time.
fn wrong_on_fresh(now: &[u32], spheres: &[Sphere], view: &View, random: &mut Random) -> Option<String> {
    let width = view.width as usize;
    let unwritten = now.iter().position(|pixel| pixel.is_poison());
    let indices = random.checked_indices(now.len(), spheres.len() as u64, FULL_CHECK_TESTS, TIMED_SAMPLES);
    let expected = |i: usize| trace_pixel(spheres, view, i % width, i / width);
    let wrong = indices
        .into_par_iter()
        .find_first(|&i| channel_difference(now[i], expected(i)).saturating_sub(CHANNEL_TOLERANCE) > 0);
    let first = match (unwritten, wrong) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    Some(format!(
        "on a fresh scene, pixel ({}, {}) is {}, expected {}",
        first % width,
        first / width,
        written_once(now[first], colour),
        colour(expected(first))
    ))
}

/// A pixel as the table shows it.
fn colour(pixel: u32) -> String {
    format!(
        "rgb({}, {}, {})",
        pixel & 0xFF,
        (pixel >> 8) & 0xFF,
        (pixel >> 16) & 0xFF
    )
}

/// Renders one case with the student's `trace_constant` (twice, with two poisons) and ours (for the
/// time).
fn run_case(student: &KernelImage, case: &Case, context: CaseContext) -> Result<Outcome> {
    let view = View::new(case.width, case.height)?;
    let spheres = random_scene(case.spheres, case.seed)?;
    // The machine's steps first ([`on_the_machine`]): the GPU, our kernels and our scene's buffers;
    // the student's module after them.
    let (gpu, ours, mut our_scene) = on_the_machine((|| {
        let gpu = Gpu::open(0)?;
        let ours = gpu.load(&kernels::TRACER)?;
        let our_scene = DeviceScene::new(&ours, &spheres, view)?;
        Ok((gpu, ours, our_scene))
    })())?;
    let theirs = gpu.load(student)?;
    let mut scene = DeviceScene::new(&theirs, &spheres, view)?;
    let (image, _) = scene.render_poisoned(&theirs, Variant::Constant, 1, u32::POISON_WORD)?;
    let (again, _) = scene.render_poisoned(&theirs, Variant::Constant, 1, u32::SECOND_POISON_WORD)?;
    let reference = render_on_cpu(&spheres, &view);
    let right = |g: u32, r: u32| !g.is_poison() && channel_difference(g, r).saturating_sub(CHANNEL_TOLERANCE) == 0;
    let width = view.width as usize;
    // Issue 61: every timed render, ours and the student's, is of a fresh scene of the case's size,
    // after a warm-up render of another.
    let fresh = fresh_inputs(|random| fresh_scene(case.spheres, random))?;
    let mut samples = Random::unpredictable();
    let (mut ours_at, mut theirs_at) = (fresh.iter(), fresh.iter());
    let timed = context.time(
        |launches| {
            let timing = each_launch(launches, &mut ours_at, |[warm_up, spheres]| {
                Ok(our_scene.render_after(&ours, warm_up, spheres, u32::POISON_WORD)?.1)
            })?;
            our_scene.clear()?; // issue 39: no image of ours left for the student's kernel
            Ok(timing)
        },
        |launches| {
            checked_runs(launches, || {
                let [warm_up, spheres] = theirs_at.next().context("no fresh scene left")?;
                let (now, timing) = scene.render_after(&theirs, warm_up, spheres, u32::POISON_WORD)?;
                Ok((timing, wrong_on_fresh(&now, spheres, &view, &mut samples)))
            })
        },
    )?;
    // The guard zones after every launch, the timed ones too.
    let outside = scene
        .trespass()?
        .map(|trespass| trespass.describe("image", "width*height"));
    // The image crosses the GPU's memory at least once.
    let bytes = (reference.len() * std::mem::size_of::<u32>()) as f64;
    let below_the_floor = timed.below_the_floor(bytes, gpu.info.peak_bandwidth());
    let (wrong, first) = first_mismatch(&image, &reference, right);
    let first = first.map(|i| {
        let (x, y) = (i % width, i / width);
        FirstWrong {
            position: format!("pixel ({x}, {y})"),
            value: written(image[i], again[i], colour),
            expected: colour(reference[i]),
            computed_by: format!(
                "block ({}, {}), thread ({}, {})",
                x / TILE,
                y / TILE,
                x % TILE,
                y % TILE
            ),
        }
    });
    Ok(Outcome {
        wrong,
        elements: reference.len(),
        first,
        times: timed.times,
        finding: None,
    }
    .with_findings([outside, timed.wrong, below_the_floor]))
}

//! `--kernel-source` and `--check` for lab-constant-tracer (assignments/04-constant-tracer): the student
//! puts `sphere_storage` in `__constant__` memory and writes `trace_constant`. The check reads from the
//! compiler's report where `sphere_storage` lives, then renders random scenes of awkward sizes with the
//! student's `trace_constant` and compares every pixel with the CPU's render.

use anyhow::{Context as _, Result};
use common::assignment::{first_mismatch, report_case, require_same_parameters, Entry, FirstWrong, Outcome, Row};
use common::check_cuda;
use common::gpu::Gpu;
use common::verify::Poison;
use kernels::KernelImage;

use crate::gpu::{DeviceScene, Variant};
use crate::render::{channel_difference, render_on_cpu, CHANNEL_TOLERANCE};
use crate::scene::{random_scene, View};

/// Threads per block of the render: 16 x 16 pixels (gpu.rs).
const TILE: usize = 16;

/// The kernels the lab calls with the student's file.
pub const ENTRIES: [Entry; 2] = [
    Entry { name: "trace_constant", declaration: "extern \"C\" __global__ void trace_constant(int count, unsigned int* image, View view)" },
    Entry { name: "trace_global", declaration: "extern \"C\" __global__ void trace_global(const Sphere* spheres, int count, unsigned int* image, View view)" },
];

/// One case: an image of width x height pixels and a random scene of `spheres` spheres.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    pub width: u32,
    pub height: u32,
    pub spheres: usize,
}

/// One pixel, a few pixels, images that are no multiple of the 16 x 16 blocks, and the most spheres
/// constant memory holds.
pub fn cases() -> Vec<Case> {
    let case = |width, height, spheres| Case { width, height, spheres };
    vec![case(1, 1, 1), case(17, 13, 3), case(640, 480, 64), case(1000, 3, 100), case(33, 1001, kernels::MAX_SPHERES), case(1024, 768, 8)]
}

pub fn name(case: &Case) -> String {
    format!("{} x {} pixels, {} spheres", case.width, case.height, case.spheres)
}

/// The rule read from the compiler's report: `sphere_storage` must not be in global memory.
pub fn storage_rule(image: &KernelImage) -> Result<Row> {
    let report = image.report().with_context(|| format!("reading nvcc's report on {}", image.source))?;
    let storage = kernels::MAX_SPHERES * kernels::SPHERE_SIZE;
    let in_global = report.global_bytes as usize >= storage;
    let first = in_global.then(|| FirstWrong {
        position: "sphere_storage".to_string(),
        value: format!("in global memory ({} bytes gmem in the ptxas report)", report.global_bytes),
        expected: "__constant__".to_string(),
        computed_by: "-".to_string(),
    });
    Ok(Row {
        case: "sphere_storage lives in constant memory (ptxas report)".to_string(),
        result: Ok(Outcome { wrong: usize::from(in_global), elements: 1, first, student_ms: None, ours_ms: None }),
    })
}

/// Renders case `index` with the student's `trace_constant` and ours, and prints its row.
pub fn run_case(student: &KernelImage, index: usize) -> Result<()> {
    let case = *cases().get(index).with_context(|| format!("there is no check case {index}"))?;
    let view = View::new(case.width, case.height)?;
    let spheres = random_scene(case.spheres, index as u64 + 1)?;
    let gpu = Gpu::open(0)?;
    let (theirs, ours) = (gpu.load(student)?, gpu.load(&kernels::TRACER)?);
    let entry = ENTRIES[0];
    require_same_parameters(&check_cuda!(theirs.get_function(entry.name))?, &check_cuda!(ours.get_function(entry.name))?, &entry, student.source)?;
    let (_, reference_time) = DeviceScene::new(&ours, &spheres, view)?.render(&ours, Variant::Constant, 3)?;
    let (image, timing) = DeviceScene::new(&theirs, &spheres, view)?.render(&theirs, Variant::Constant, 3)?;
    let reference = render_on_cpu(&spheres, &view);
    let (wrong, first) = first_mismatch(&image, &reference, |g: u32, r: u32| !g.is_poison() && channel_difference(g, r).saturating_sub(CHANNEL_TOLERANCE) == 0);
    let colour = |pixel: u32| {
        if pixel.is_poison() {
            "never written".to_string()
        } else {
            format!("rgb({}, {}, {})", pixel & 0xFF, (pixel >> 8) & 0xFF, (pixel >> 16) & 0xFF)
        }
    };
    let width = view.width as usize;
    let first = first.map(|i| {
        let (x, y) = (i % width, i / width);
        FirstWrong {
            position: format!("pixel ({x}, {y})"),
            value: colour(image[i]),
            expected: colour(reference[i]),
            computed_by: format!("block ({}, {}), thread ({}, {})", x / TILE, y / TILE, x % TILE, y % TILE),
        }
    });
    report_case(&name(&case), Outcome { wrong, elements: reference.len(), first, student_ms: Some(timing.median_ms()), ours_ms: Some(reference_time.median_ms()) });
    Ok(())
}

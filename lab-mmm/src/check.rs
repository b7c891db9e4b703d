//! `--kernel-source` and `--check` for lab-mmm (assignments/02-mmm-ab and 03-mmm-tiled): the student's
//! `mmm_ab` or `mmm` in mmm.cu, compiled with BLOCK_SIZE 16 for the check. Each case multiplies random
//! matrices of awkward sizes in one precision; every element of C is compared with the CPU's product.
//! C has guard zones on both sides, and A and B are compared with their host copies afterwards: a
//! write outside C or into A or B fails the case.

use std::path::Path;

use anyhow::{Context as _, Result};
use common::gpu::Gpu;
use common::verify::Random;
use cust::module::Module;
use grading::cases_file::{choice, field, CaseFormat, CaseSet, SharedChecks};
use grading::guard::{first_changed, Guarded, INPUT_GUARD_WORD};
use grading::measure::{rule_row, Bound, Measure};
use grading::ptx::{self, Barriers};
use grading::{
    checked_runs, first_mismatch, on_the_machine, shown, written, written_once, CaseContext, Check, Entry, FirstWrong,
    Outcome, Row, StudentArgs,
};
use kernels::KernelImage;
use matrix::bound::ErrorBound;
use matrix::mmm::{multiply_on_cpu, MmmKernel};
use matrix::{Element, Matrix, MatrixView};
use profiler::counters::Launch;

use crate::{multiply_into, multiply_once, time_on_gpu, KernelChoice};

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
/// gives right values a little slower and fails both. No load through a generic pointer (issue 39),
/// where the measured rules could not see it. None for the naive kernels (week 2).
pub fn technique_rules(image: &KernelImage, kernels: &[MmmKernel]) -> Result<Vec<Row>> {
    if !kernels.contains(&MmmKernel::Tiled) {
        return Ok(Vec::new());
    }
    let build = image
        .newest()
        .with_context(|| format!("{} was not compiled", image.source))?;
    let report = build
        .report()
        .with_context(|| format!("reading nvcc's report on {}", image.source))?;
    let tiled = [("mmm_f64", "double", 8), ("mmm_f32", "float", 4)];
    let tiles = tiled.iter().filter_map(|&(name, element, bytes)| {
        let (needed, shared) = (
            2 * BLOCK_SIZE * BLOCK_SIZE * bytes,
            report.function(name).map_or(0, |f| f.shared_bytes),
        );
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
            Some(FirstWrong {
                position: name.to_string(),
                value: value.to_string(),
                expected,
                computed_by: "the PTX".to_string(),
            })
        });
        (tiled.len(), wrong.collect())
    };
    let generic = |code: &ptx::Module| -> (usize, Vec<FirstWrong>) {
        let wrong = tiled.iter().filter_map(|&(name, _, _)| {
            let loads = code.entry(name).map_or(0, |kernel| code.generic_loads(kernel));
            (loads > 0).then(|| FirstWrong {
                position: name.to_string(),
                value: format!("{loads} load(s) through generic pointers"),
                expected: "loads from global or shared pointers, which the hardware counts as such".to_string(),
                computed_by: "the PTX".to_string(),
            })
        });
        (tiled.len(), wrong.collect())
    };
    Ok(vec![
        Row::rule(
            "tiles: mmm_f64 and mmm_f32 keep two BLOCK_SIZE x BLOCK_SIZE tiles in shared memory (ptxas report)",
            tiled.len(),
            tiles.collect(),
        ),
        Row::rule_on_ptx(
            "barrier: mmm_f64 and mmm_f32 wait at __syncthreads() inside the loop over the tiles (PTX)",
            build,
            barriers,
        ),
        Row::rule_on_ptx(
            "loads: mmm_f64 and mmm_f32 load through global or shared pointers, none generic (PTX)",
            build,
            generic,
        ),
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
    let sizes = [
        (1, 1, 1),
        (17, 33, 5),
        (64, 64, 64),
        (100, 7, 129),
        (255, 257, 256),
        (1000, 999, 1001),
    ];
    let all = kernels.iter().flat_map(|&kernel| {
        [true, false]
            .into_iter()
            .flat_map(move |f64| sizes.map(|(m, k, n)| (kernel, f64, m, k, n)))
    });
    all.enumerate()
        .map(|(index, (kernel, f64, m, k, n))| Case {
            kernel,
            f64,
            m,
            k,
            n,
            seed: index as u64 + 1,
        })
        .collect()
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

/// The most multiply-adds of a case that racecheck and synccheck run on under `--sanitize` (issue
/// 41): 2^25 takes in every case of the week but 1000 x 999 x 1001, whose check alone took 156.6 s
/// in f64 on an H100 (255 x 257 x 256, just under 2^24: 6.8 s; `results/h100/issue41/`). A long K
/// over few blocks costs more per multiply-add (64 x 4096 x 64: 20.8 s). Every case within it whose
/// K spans several tiles finds a missing barrier; memcheck still runs on every case.
const RACECHECK_WORK: u64 = 1 << 25;

/// The week's cases for `kernels`, or those of a `--cases` file: `1000 999 1001 f64 7` per line.
pub fn case_set(kernels: &[MmmKernel], file: Option<&Path>) -> Result<CaseSet<Case>> {
    let parse = |fields: &[&str]| -> Result<Vec<Case>, String> {
        let side = |index: usize, name: &str| field(fields[index], name, 1..=LARGEST_SIDE);
        let (m, k, n) = (side(0, "M")?, side(1, "K")?, side(2, "N")?);
        if m * k * n > LARGEST_PRODUCT {
            return Err(format!(
                "M x K x N = {} is over {LARGEST_PRODUCT} (2048 x 2048 x 2048), too long for the CPU's product",
                m * k * n
            ));
        }
        let f64 = choice(fields[3], "PRECISION", &[("f64", true), ("f32", false)])?;
        let seed = field(fields[4], "SEED", 0..=u64::MAX)?;
        Ok(kernels
            .iter()
            .map(|&kernel| Case {
                kernel,
                f64,
                m,
                k,
                n,
                seed,
            })
            .collect())
    };
    let line = |c: &Case| {
        format!(
            "{} {} {} {} {} {}",
            c.kernel.slide_name(),
            c.m,
            c.k,
            c.n,
            if c.f64 { "f64" } else { "f32" },
            c.seed
        )
    };
    let work = |c: &Case| (c.m * c.k * c.n) as u64;
    let group = |c: &Case| 2 * u64::from(c.kernel == MmmKernel::Tiled) + u64::from(c.f64);
    CaseFormat {
        fields: CASE_FIELDS,
        parse: &parse,
        line: &line,
        name: &name,
        shared_checks: Some(SharedChecks {
            work: &work,
            group: &group,
            most: RACECHECK_WORK,
            described: "2^25 multiply-adds",
        }),
    }
    .load(file, cases(kernels))
}

pub fn name(case: &Case) -> String {
    format!(
        "{} {}, {} x {} times {} x {}",
        case.kernel.slide_name(),
        if case.f64 { "f64" } else { "f32" },
        case.m,
        case.k,
        case.k,
        case.n
    )
}

/// Runs one case with the student's image (twice, with two poisons), then times it against ours. The
/// GPU and our kernels come first, the machine's steps ([`on_the_machine`]); `compare` loads the
/// student's module once the case's buffers are allocated.
pub fn run_case(student: &KernelImage, case: &Case, context: CaseContext) -> Result<Outcome> {
    let (gpu, ours) = on_the_machine((|| {
        let gpu = Gpu::open(0)?;
        let ours = gpu.load(&kernels::MMM_BS16)?;
        Ok((gpu, ours))
    })())?;
    if case.f64 {
        compare::<f64>(&gpu, student, &ours, case, context)
    } else {
        compare::<f32>(&gpu, student, &ours, case, context)
    }
}

/// A and B on the GPU inside guard zones of NaN (issue 39): a kernel that reads past either gets NaN
/// into C. The kernel's own A and B: ours reads the matrices' plain device copies.
struct Inputs<T: Element> {
    a: Guarded<T>,
    b: Guarded<T>,
    views: (MatrixView<T>, MatrixView<T>),
}

impl<T: Element> Inputs<T> {
    fn new(a: &Matrix<T>, b: &Matrix<T>) -> Result<Inputs<T>> {
        let guarded = |m: &Matrix<T>| -> Result<(Guarded<T>, MatrixView<T>)> {
            let mut dev = Guarded::with_guard(m.data().len(), INPUT_GUARD_WORD)?;
            dev.write(m.data())?;
            let view = MatrixView {
                rows: m.rows() as i32,
                cols: m.cols() as i32,
                data: dev.as_device_ptr(),
            };
            Ok((dev, view))
        };
        let ((a, a_view), (b, b_view)) = (guarded(a)?, guarded(b)?);
        Ok(Inputs {
            a,
            b,
            views: (a_view, b_view),
        })
    }

    /// Which input the student's kernel read outside of, for an element of C that came out NaN: the
    /// kernel runs again with one input's guard zones zero instead of NaN, and if the element is then
    /// a number, the NaN came from there. The zones are NaN again afterwards.
    fn read_outside(
        &mut self,
        theirs: &Module,
        case: &Case,
        c: &mut Guarded<T>,
        element: usize,
    ) -> Result<Option<String>> {
        let views = self.views;
        for (input, zones) in [("A", &mut self.a), ("B", &mut self.b)] {
            zones.fill_guards(0)?;
            multiply_into(theirs, case.kernel, BLOCK_SIZE, views, c, T::POISON_WORD, 1)?;
            zones.fill_guards(INPUT_GUARD_WORD)?;
            if !c.read()?[element].to_f64().is_nan() {
                let (row, col) = (element / case.n, element % case.n);
                return Ok(Some(format!("read outside {input}: C({row}, {col}) is NaN with NaN around {input} and a number with zeros there")));
            }
        }
        Ok(None)
    }
}

/// C from the student's kernel against the CPU's product, element by element; C's guard zones, A's
/// and B's, and A and B themselves checked; then both kernels timed, every timed launch of the
/// student's checked as well. Every device buffer is allocated before the student's module is loaded
/// (an allocation that fails then is the machine's); the module comes from `student`.
fn compare<T: Element>(
    gpu: &Gpu,
    student: &KernelImage,
    ours: &Module,
    case: &Case,
    context: CaseContext,
) -> Result<Outcome> {
    let mut random = Random::new(case.seed);
    let mut a: Matrix<T> = Matrix::<f64>::random(case.m, case.k, &mut random)?.convert()?;
    let mut b: Matrix<T> = Matrix::<f64>::random(case.k, case.n, &mut random)?.convert()?;
    let cpu = multiply_on_cpu(&a, &b);
    let bound = ErrorBound::new(&a, &b).absolute();
    let right = |g: T, e: f64| (g.to_f64() - e).abs() <= bound;
    let (mut inputs, mut c, mut our_c) = on_the_machine((|| {
        a.copy_to_gpu()?;
        b.copy_to_gpu()?;
        let mut our_c = Matrix::<T>::new(case.m, case.n)?;
        our_c.poison_on_gpu()?;
        Ok((Inputs::new(&a, &b)?, Guarded::<T>::new(case.m * case.n)?, our_c))
    })())?;
    let theirs = &gpu.load(student)?;
    multiply_into(theirs, case.kernel, BLOCK_SIZE, inputs.views, &mut c, T::POISON_WORD, 1)?;
    let gpu = c.read()?;
    multiply_into(
        theirs,
        case.kernel,
        BLOCK_SIZE,
        inputs.views,
        &mut c,
        T::SECOND_POISON_WORD,
        1,
    )?;
    let again = c.read()?;
    let (wrong, first) = first_mismatch(&gpu, &cpu, right);
    let outside = match first {
        Some(i) if gpu[i].to_f64().is_nan() && cpu[i].is_finite() => inputs.read_outside(theirs, case, &mut c, i)?,
        _ => None,
    };
    let findings = [
        c.trespass()?.map(|trespass| trespass.describe("C", "m*n")),
        inputs.a.trespass()?.map(|trespass| trespass.describe("A", "m*k")),
        inputs.b.trespass()?.map(|trespass| trespass.describe("B", "k*n")),
        changed("A", &a, &inputs.a)?,
        changed("B", &b, &inputs.b)?,
        outside,
    ];
    let timed = context.time(
        |launches| {
            let timing = time_on_gpu(ours, case.kernel, BLOCK_SIZE, &a, &b, &mut our_c, launches)?;
            our_c.copy_from_gpu()?;
            our_c.poison_on_gpu()?; // issue 39: no product of ours left on the GPU for the student's kernel
            Ok(timing)
        },
        |launches| {
            checked_runs(launches, || {
                let timing = multiply_into(theirs, case.kernel, BLOCK_SIZE, inputs.views, &mut c, T::POISON_WORD, 1)?;
                let now = c.read()?;
                let wrong = first_mismatch(&now, &cpu, right).1.map(|i| {
                    format!(
                        "C({}, {}) is {}, expected {}",
                        i / case.n,
                        i % case.n,
                        written_once(now[i], |v: T| shown(v.to_f64())),
                        shown(cpu[i])
                    )
                });
                Ok((timing, wrong))
            })
        },
    )?;
    let bs = BLOCK_SIZE as usize;
    let first = first.map(|i| {
        let (row, col) = (i / case.n, i % case.n);
        FirstWrong {
            position: format!("C({row}, {col})"),
            value: written(gpu[i], again[i], |v: T| shown(v.to_f64())),
            expected: shown(cpu[i]),
            computed_by: format!(
                "block ({}, {}), thread ({}, {})",
                col / bs,
                row / bs,
                col % bs,
                row % bs
            ),
        }
    });
    Ok(Outcome {
        wrong,
        elements: cpu.len(),
        first,
        times: timed.times,
        finding: None,
    }
    .with_findings(findings.into_iter().chain([timed.wrong])))
}

/// "A(3, 7) was changed" where the kernel wrote into an input, from the copy it was given.
fn changed<T: Element>(name: &str, matrix: &Matrix<T>, given: &Guarded<T>) -> Result<Option<String>> {
    let now = given.read()?;
    Ok(first_changed(matrix.data(), &now).map(|(i, count)| {
        let (row, col) = (i / matrix.cols(), i % matrix.cols());
        let more = if count > 1 {
            format!(" (and {} more elements of {name})", count - 1)
        } else {
            String::new()
        };
        format!(
            "{name}({row}, {col}) was changed: {} instead of {}{more}",
            shown(now[i].to_f64()),
            shown(matrix.data()[i].to_f64())
        )
    }))
}

/// The measured rules' names (week 3).
pub const MEASURED: [&str; 3] = [
    "tiling, measured: global loads per element of C (ncu)",
    "tiling, measured: shared-memory loads per element of C (ncu)",
    "tiling, measured: shared memory per block of the kernel that ran (ncu)",
];

/// Global load instructions (per warp: LDG, `__ldg` included), shared-memory load instructions, and
/// the static shared memory of the function the driver launched (the loaded module's, not the
/// compiler's report). Loads through generic pointers are left out of the first: `printf` makes them
/// (a correct kernel that prints from every thread measured 260 requests per element where L1 counts
/// them as global), and the PTX rule on generic loads keeps a kernel from hiding its own there.
const METRICS: [&str; 3] = [
    "smsp__inst_executed_op_global_ld.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "launch__shared_mem_per_block_static",
];

/// The case the rules measure: whole tiles, large enough that the loop over the tiles dominates.
pub fn measured_case() -> Case {
    Case {
        kernel: MmmKernel::Tiled,
        f64: true,
        m: 256,
        k: 256,
        n: 256,
        seed: 7,
    }
}

/// Week 3's technique measured (issue 39): the tiled `mmm` in both precisions, the student's and then
/// ours, each launched once on [`measured_case`] under ncu. `None` where the tiled kernel is not
/// checked (week 2).
pub fn measure(kernels: &[MmmKernel]) -> Option<Measure<'static, Case>> {
    kernels.contains(&MmmKernel::Tiled).then(|| Measure {
        case: measured_case(),
        rules: &MEASURED,
        metrics: &METRICS,
        kernels: "regex:^mmm_f(32|64)$",
        run: &measured_launches,
        judge: &judge,
    })
}

/// The week a student's mmm.cu is for, where `--kernel` does not say (issue 45: a week 3 file was
/// checked as weeks 2 and 3 together, 26 cases, without a word): week 3 where its tiled kernels keep
/// shared memory (what the week's rules ask, from the ptxas report), else week 2. Weeks 2 and 3 hand
/// out the same mmm.cu, so the kernels' names cannot tell. With the line that says which and how to
/// choose the other.
pub fn week_of(image: &KernelImage) -> (MmmKernel, String) {
    let report = image.newest().and_then(|build| build.report().ok());
    let shared = |name: &str| {
        report
            .as_ref()
            .and_then(|report| report.function(name))
            .map_or(0, |f| f.shared_bytes)
    };
    if shared("mmm_f64") > 0 || shared("mmm_f32") > 0 {
        (MmmKernel::Tiled, format!("{}: its tiled mmm keeps tiles in shared memory: checking week 3 (03-mmm-tiled, as --kernel tiled); --kernel naive checks week 2's mmm_ab", image.source))
    } else {
        (MmmKernel::Naive, format!("{}: its tiled mmm uses no shared memory: checking week 2 (02-mmm-ab, as --kernel naive); --kernel tiled checks week 3's tiled mmm", image.source))
    }
}

/// In the measured child: each precision's tiled kernel, the student's then ours, once.
pub fn measured_launches(student: &KernelImage, case: &Case) -> Result<()> {
    let (gpu, ours) = on_the_machine((|| {
        let gpu = Gpu::open(0)?;
        let ours = gpu.load(&kernels::MMM_BS16)?;
        Ok((gpu, ours))
    })())?;
    let theirs = gpu.load(student)?;
    launch_both::<f64>(&theirs, &ours, case)?;
    launch_both::<f32>(&theirs, &ours, case)
}

fn launch_both<T: Element>(theirs: &Module, ours: &Module, case: &Case) -> Result<()> {
    let mut random = Random::new(case.seed);
    let mut a: Matrix<T> = Matrix::<f64>::random(case.m, case.k, &mut random)?.convert()?;
    let mut b: Matrix<T> = Matrix::<f64>::random(case.k, case.n, &mut random)?.convert()?;
    a.copy_to_gpu()?;
    b.copy_to_gpu()?;
    let mut c = Matrix::<T>::new(case.m, case.n)?;
    for module in [theirs, ours] {
        multiply_once(module, case.kernel, BLOCK_SIZE, &a, &b, &mut c)?;
    }
    Ok(())
}

/// The launches ncu measured (student f64, ours f64, student f32, ours f32) into the rows of [`MEASURED`]: per
/// element of C, in loads of one thread (warp instructions x 32 / elements). A tiled kernel loads 2 per
/// tile, 2 K / BLOCK_SIZE in all; the naive body 2 K. It reads its tiles 2 K times from shared memory,
/// fewer with wide loads; and it holds two BLOCK_SIZE x BLOCK_SIZE tiles. Each row shows the precision
/// that breaks its bound, else f64.
pub fn judge(case: &Case, [theirs_f64, ours_f64, theirs_f32, ours_f32]: &[Launch; 4]) -> Vec<Row> {
    let per_element = |launch: &Launch, metric: &str| launch.value(metric) * 32.0 / (case.m * case.n) as f64;
    let (tiles, k) = (case.k.div_ceil(BLOCK_SIZE as usize) as f64, case.k as f64);
    let precisions = [
        ("mmm_f64", theirs_f64, ours_f64, 8.0),
        ("mmm_f32", theirs_f32, ours_f32, 4.0),
    ];
    let row =
        |rule: &str, value: &dyn Fn(&Launch) -> f64, bound: &dyn Fn(f64) -> Bound, why: &dyn Fn(f64) -> String| {
            let rows: Vec<Row> = precisions
                .iter()
                .map(|&(kernel, theirs, ours, bytes)| {
                    rule_row(rule, kernel, value(theirs), bound(bytes), &why(bytes), value(ours))
                })
                .collect();
            rows.iter().find(|row| !row.passed()).unwrap_or(&rows[0]).clone()
        };
    let tile_bytes = |bytes: f64| 2.0 * f64::from(BLOCK_SIZE * BLOCK_SIZE) * bytes;
    vec![
        row(
            MEASURED[0],
            &|launch| per_element(launch, METRICS[0]),
            &|_| Bound::AtMost(3.0 * tiles),
            &|_| {
                format!(
                    "a tiled kernel loads 2 per tile, {:.0} here; the naive body {:.0}",
                    2.0 * tiles,
                    2.0 * k
                )
            },
        ),
        row(
            MEASURED[1],
            &|launch| per_element(launch, METRICS[1]),
            &|_| Bound::AtLeast(k / 4.0),
            &|_| {
                format!(
                    "a tiled kernel reads its tiles {:.0} times, fewer with wide loads",
                    2.0 * k
                )
            },
        ),
        row(
            MEASURED[2],
            &|launch| launch.value(METRICS[2]),
            &|bytes| Bound::AtLeast(tile_bytes(bytes)),
            &|bytes| format!("two {BLOCK_SIZE} x {BLOCK_SIZE} tiles of {bytes:.0}-byte elements"),
        ),
    ]
}

/// `--check`, `--list-cases` or a case's child: the week's kernels (`kernel`, from `--kernel`, or for
/// `--check` the file's week: [`week_of`]), their cases and rules.
pub fn run(kernel: Option<KernelChoice>, student: &StudentArgs) -> Result<()> {
    let ours = &kernels::MMM_BS16;
    let every: Vec<Entry> = [MmmKernel::Naive, MmmKernel::Tiled]
        .into_iter()
        .flat_map(entries)
        .collect();
    let (chosen, compiled, child_flags): (_, _, &[&str]) = match kernel {
        Some(choice) => {
            let chosen = choice.kernels();
            let entries: Vec<Entry> = chosen.iter().flat_map(|&kernel| entries(kernel)).collect();
            case_set(&chosen, student.cases.as_deref())?; // a bad --cases file first
            (chosen, student.image(ours, &entries), &[])
        }
        None if student.check_case.is_some() || student.list_cases => {
            (KernelChoice::Both.kernels(), student.image(ours, &every), &[])
        }
        None => {
            case_set(&[MmmKernel::Naive], student.cases.as_deref())?;
            match student.compile(ours, &every) {
                Ok(image) => {
                    let (week, line) = week_of(image);
                    eprintln!("{line}");
                    let entries = entries(week);
                    // The cases' children get the week the file chose, which the command line lacks.
                    let flags: &[&str] = if week == MmmKernel::Tiled {
                        &["--kernel", "tiled"]
                    } else {
                        &["--kernel", "naive"]
                    };
                    (vec![week], student.accept(image, ours, &entries).map(|()| image), flags)
                }
                Err(err) => (KernelChoice::Both.kernels(), Err(err), &[]),
            }
        }
    };
    let entries: Vec<Entry> = chosen.iter().flat_map(|&kernel| entries(kernel)).collect();
    let cases = Check {
        lab: "lab-mmm",
        entries: &entries,
        cases: case_set(&chosen, student.cases.as_deref())?,
        measure: measure(&chosen),
        child_flags,
    };
    let rules = |image: &KernelImage| technique_rules(image, &chosen);
    student
        .run_check_if_asked(&compiled, ours, &cases, rules, run_case)
        .unwrap_or(Ok(()))
}

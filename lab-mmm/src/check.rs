//! `--kernel-source` and `--check` for lab-mmm (assignments/02-mmm-ab and 03-mmm-tiled): the student's
//! `mmm_ab` or `mmm` in mmm.cu, compiled with BLOCK_SIZE 16 for the check. Each case multiplies random
//! matrices of awkward sizes in one precision; every element of C is compared with the CPU's product.
//! C has guard zones on both sides, and A and B are compared with their host copies afterwards: a
//! write outside C or into A or B fails the case.

use std::path::Path;

use anyhow::{Context as _, Result};
use common::gpu::Gpu;
use common::timing::Timing;
use common::verify::Random;
use cust::module::Module;
use grading::cases_file::{choice, field, CaseFormat, CaseSet, SharedChecks};
use grading::guard::{first_changed, Guarded};
use grading::kernel_week::{self, KernelWeek};
use grading::measure::{optional, per_thread, rule_row, Bound, Measure, OptionalMetric, Whose};
use grading::phases;
use grading::ptx::{self, Barriers};
use grading::{
    checked_runs, first_mismatch, on_the_machine, shown, written, written_once, CaseContext, Entry, FirstWrong,
    Outcome, Row, StudentArgs,
};
use kernels::KernelImage;
use matrix::bound::ErrorBound;
use matrix::mmm::{multiply_on_cpu, MmmKernel};
use matrix::{Element, Matrix};
use profiler::counters::Launch;

use crate::inputs::{Fresh, Inputs};
use crate::{multiply_into, multiply_once, KernelChoice};

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

/// The PTX rule on generic loads (issues 39 and 61): only where a kernel prints do the counters leave
/// them out ([`METRICS`]), for both precisions, so only there may neither have one.
pub const LOADS_WHERE_PRINTING: &str =
    "loads: where mmm_f64 or mmm_f32 prints, both load through global or shared pointers, none generic (PTX)";

/// The rules of week 3 (issue 29), where the tiled kernels are checked: what the week teaches, read
/// from the compiler's report and the PTX, for both precisions. Two BLOCK_SIZE x BLOCK_SIZE tiles in
/// shared memory, and a barrier inside the loop over the tiles: the naive body in the tiled kernel
/// gives right values a little slower and fails both. Where either kernel prints, no load through a
/// generic pointer in either ([`LOADS_WHERE_PRINTING`]). None for the naive kernels (week 2).
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
        // One kernel that prints makes both be measured by their load instructions alone.
        let printing = prints_in(code);
        let wrong = tiled.iter().filter_map(|&(name, _, _)| {
            let loads = code.entry(name).map_or(0, |kernel| code.generic_loads(kernel));
            (loads > 0 && printing).then(|| FirstWrong {
                position: name.to_string(),
                value: format!("{loads} load(s) through generic pointers, and printf in the file's mmm"),
                expected: "where mmm_f64 or mmm_f32 prints, loads from global or shared pointers: the counters cannot tell generic ones from printf's".to_string(),
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
        Row::rule_on_ptx(LOADS_WHERE_PRINTING, build, generic),
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
    let races = |c: &Case| c.kernel == MmmKernel::Tiled && c.k > BLOCK_SIZE as usize;
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
            races: &races,
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
    let peak_bandwidth = gpu.info.peak_bandwidth();
    let mut random = Random::new(case.seed);
    let a: Matrix<T> = Matrix::<f64>::random(case.m, case.k, &mut random)?.convert()?;
    let b: Matrix<T> = Matrix::<f64>::random(case.k, case.n, &mut random)?.convert()?;
    let cpu = multiply_on_cpu(&a, &b);
    let bound = ErrorBound::new(&a, &b).absolute();
    let right = |g: T, e: f64| (g.to_f64() - e).abs() <= bound;
    let (mut inputs, mut c, mut our_inputs, mut our_c) = on_the_machine((|| {
        let c = Guarded::<T>::new(case.m * case.n)?;
        let our_c = Guarded::<T>::new(case.m * case.n)?;
        Ok((Inputs::new(&a, &b)?, c, Inputs::new(&a, &b)?, our_c))
    })())?;
    let theirs = &gpu.load(student)?;
    let launch = (theirs, case.kernel, BLOCK_SIZE);
    multiply_into(theirs, case.kernel, BLOCK_SIZE, inputs.views(), &mut c, T::POISON_WORD)?;
    let gpu = c.read()?;
    multiply_into(
        theirs,
        case.kernel,
        BLOCK_SIZE,
        inputs.views(),
        &mut c,
        T::SECOND_POISON_WORD,
    )?;
    let again = c.read()?;
    let (wrong, first) = first_mismatch(&gpu, &cpu, right);
    let outside = match first {
        Some(i) if gpu[i].to_f64().is_nan() && cpu[i].is_finite() => inputs.read_outside(launch, &mut c, i)?,
        _ => None,
    };
    let changed = [changed("A", &a, inputs.a())?, changed("B", &b, inputs.b())?, outside];
    // Issue 61: every timed launch, ours and the student's, multiplies A and B drawn just before it.
    let (mut our_fresh, mut fresh) = (Fresh::new(), Fresh::new());
    let timed = context.time(
        |launches| {
            let mut samples = Vec::with_capacity(launches);
            for _ in 0..launches {
                let ours = (ours, case.kernel, BLOCK_SIZE);
                let (timing, _) = our_inputs.time_on_fresh(ours, &mut our_c, T::POISON_WORD, &mut our_fresh)?;
                samples.extend(timing.samples_ms);
            }
            our_c.fill(T::POISON_WORD)?; // issue 39: no product of ours left on the GPU for the student's kernel
            Ok(Timing::gpu(samples))
        },
        |launches| {
            checked_runs(launches, || {
                let (timing, drawn) = inputs.time_on_fresh(launch, &mut c, T::POISON_WORD, &mut fresh)?;
                let now = c.read()?;
                let check = fresh.check(&drawn, &now)?;
                let wrong = (!check.passed()).then(|| {
                    let (row, col) = check.worst;
                    format!(
                        "on fresh inputs ({}), C({row}, {col}) is {}, expected {}",
                        drawn.kind,
                        written_once(now[row * case.n + col], |v: T| shown(v.to_f64())),
                        shown(drawn.element(row, col))
                    )
                });
                Ok((timing, wrong))
            })
        },
    )?;
    // A, B and C each cross the GPU's memory at least once.
    let bytes = ((case.m * case.k + case.k * case.n + case.m * case.n) * std::mem::size_of::<T>()) as f64;
    let below_the_floor = timed.below_the_floor(bytes, peak_bandwidth);
    // The guard zones after every launch, the timed ones too.
    let findings = [
        c.trespass()?.map(|trespass| trespass.describe("C", "m*n")),
        inputs.a().trespass()?.map(|trespass| trespass.describe("A", "m*k")),
        inputs.b().trespass()?.map(|trespass| trespass.describe("B", "k*n")),
    ];
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
    .with_findings(
        findings
            .into_iter()
            .chain(changed)
            .chain([timed.wrong, below_the_floor]),
    ))
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

/// What the rules count, per warp: global loads, and the other ways a kernel reads global memory
/// (issue 61): atomics and reductions on it (`atomicOr(p, 0)` reads as a load does) and texture or
/// surface reads, as L1's requests; shared-memory load instructions; the static shared memory of the
/// function the driver launched (the loaded module's, not the compiler's report). Global loads are
/// the larger of the load instructions that name global memory (LDG, `__ldg` included) and L1's
/// requests for global loads, which also hold loads through generic pointers that reached global
/// memory (a tile loaded through a pointer that may point at a shared zero). A file whose `mmm_f64`
/// or `mmm_f32` prints is the exception: `printf`'s own generic loads reach global memory (a correct
/// kernel that prints from every thread measured 260 per element there), so for both the
/// instructions count, and the PTX rule against generic loads in both keeps them from hiding their
/// own behind `printf`'s. Every
/// metric is there from sm_75 to sm_120; the reads through the texture pipe and the copies that skip
/// the registers are [`OPTIONAL`].
pub(crate) const METRICS: [&str; 6] = [
    GLOBAL_LOADS[0],
    GLOBAL_LOADS[1],
    OTHER_GLOBAL_READS[0],
    OTHER_GLOBAL_READS[1],
    SHARED_LOADS,
    SHARED_PER_BLOCK,
];

/// Global loads: the instructions that name global memory, and L1's requests for global loads
/// (generic ones included).
const GLOBAL_LOADS: [&str; 2] = [
    "smsp__inst_executed_op_global_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
];
/// The other reads of global memory through L1's load and store pipe, added to the loads.
const OTHER_GLOBAL_READS: [&str; 2] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
];
/// Copies from global into shared memory that pass no register (issue 61: a naive body copying each
/// element it sums into shared memory first), read where the GPU has them ([`OPTIONAL`]: TMA's only
/// where the student's PTX has bulk copies). `cp.async` (LDGSTS, sm_80
/// on) counts as a load instruction: L1's requests for global loads hold it on an H200
/// (`cp-async-naive.cu` measured twice its loads when both were added), and on a GPU whose requests
/// may not, the instructions are the larger count. TMA and bulk copies (sm_90 on) count in the bytes
/// L1 reads for them from L2, as elements (32-byte sectors: a 16-byte copy of a double reads 4).
/// On an older GPU `cp.async` compiles to a load and a store, which the loads count.
pub(crate) const COPIES: [&str; 2] = [
    "smsp__inst_executed_op_ldgsts.sum",
    "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
];
/// Reads of global memory through the texture pipe, added to the loads: L1's requests for textures
/// and surfaces (which a kernel reads through objects the host makes: ours makes none).
const TEXTURE_READS: [&str; 2] = [
    "l1tex__t_requests_pipe_tex_mem_texture.sum",
    "l1tex__t_requests_pipe_tex_mem_surface.sum",
];
/// The PTX instructions that go through the texture pipe.
const TEXTURE_OPCODES: &[&str] = &["tex", "tld4", "txq", "suld", "sust", "sured", "suq"];

/// The metrics read only where they count something ([`OptionalMetric`]): the texture pipe's
/// requests and TMA's bytes where the student's PTX has such instructions (issue 65: with them
/// among the metrics, ncu took 120 ms a kernel on an H200, 10 ms without, so that they cost every
/// week-3 check about 0.7 s of the GPU alone), and `cp.async` from sm_80 on.
pub(crate) const OPTIONAL: [OptionalMetric<'static>; 4] = [
    OptionalMetric {
        metric: TEXTURE_READS[0],
        from_arch: 75,
        opcodes: TEXTURE_OPCODES,
    },
    OptionalMetric {
        metric: TEXTURE_READS[1],
        from_arch: 75,
        opcodes: TEXTURE_OPCODES,
    },
    OptionalMetric {
        metric: COPIES[0],
        from_arch: 80,
        opcodes: &[],
    },
    OptionalMetric {
        metric: COPIES[1],
        from_arch: 90,
        opcodes: &["cp.async.bulk", "cp.reduce.async.bulk"],
    },
];
/// Shared-memory load instructions.
const SHARED_LOADS: &str = "smsp__inst_executed_op_shared_ld.sum";
/// The static shared memory per block of the function the driver launched.
const SHARED_PER_BLOCK: &str = "launch__shared_mem_per_block_static";

/// The case the rules measure where no case of the check tells the technique from the naive body:
/// whole tiles, large enough that the loop over the tiles dominates.
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

/// Global reads per thread that a `printf` in every thread may add ([`tiled_bound`]): on an H200 a
/// kernel printing one line per thread read 7.0 per element of C at 100 x 7 x 129 where ours reads
/// 2.5, 3.6 more per thread launched
/// (`results/h200/issue61-every-case/run-1-direct-printf-every-thread-now.log`).
const PRINTF_READS: f64 = 8.0;

/// The bound on a tiled kernel's global reads per element of C (a thread's reads): 3 per tile where a
/// tiled kernel reads 2, and [`PRINTF_READS`] for a kernel that prints from every thread, times the
/// threads launched per element of C (whole blocks over C's edges).
fn tiled_bound(case: &Case) -> f64 {
    let bs = BLOCK_SIZE as usize;
    let tiles = case.k.div_ceil(bs) as f64;
    let threads = (case.m.div_ceil(bs) * bs * case.n.div_ceil(bs) * bs) as f64;
    (3.0 * tiles + PRINTF_READS) * threads / (case.m * case.n) as f64
}

/// The cases the rules measure (issue 61: a kernel tiled only at the size of the one case measured
/// passed): every distinct size and precision among `cases` (the week's, or a teacher's hidden ones)
/// at which the naive body's 2 K reads per element are at least twice the tiled bound, so that the
/// counts tell the two apart, smallest first; [`measured_case`] where there is none.
pub fn measured_cases(cases: &[Case]) -> Vec<Case> {
    let mut measured: Vec<Case> = Vec::new();
    for case in cases.iter().filter(|case| case.kernel == MmmKernel::Tiled) {
        let telling = case.k as f64 >= tiled_bound(case); // the naive body's 2 K is twice the bound or more
        let seen = measured
            .iter()
            .any(|other| (other.m, other.k, other.n, other.f64) == (case.m, case.k, case.n, case.f64));
        if telling && !seen {
            measured.push(*case);
        }
    }
    measured.sort_by_key(|case| case.m * case.k * case.n);
    if measured.is_empty() {
        measured.push(measured_case());
    }
    measured
}

/// Week 3's technique measured (issues 39 and 61): the tiled `mmm`, the student's and then ours, each
/// launched once on every case of [`measured_cases`] under ncu, judged as a kernel that `prints` or
/// not. `None` where the tiled kernel is not checked (week 2).
pub fn measure(kernels: &[MmmKernel], cases: &[Case], prints: bool) -> Option<Measure<'static, Case>> {
    kernels.contains(&MmmKernel::Tiled).then(|| Measure {
        cases: measured_cases(cases),
        rules: &MEASURED,
        metrics: &METRICS,
        optional_metrics: &OPTIONAL,
        kernels: "regex:^mmm_f(32|64)$",
        launches_per_case: 2,
        run: &measured_launches,
        judge: if prints { &judge_printing } else { &judge },
    })
}

/// Whether the student's tiled `mmm` prints, in either precision (the PTX of its newest build).
fn prints(image: &KernelImage) -> bool {
    let code = image.newest().and_then(|build| build.ptx).map(ptx::Module::parse);
    code.is_some_and(|code| prints_in(&code))
}

/// Whether `mmm_f64` or `mmm_f32` of `code` prints: both are then measured as kernels that print
/// ([`judge_printing`]), whichever precision a case multiplies in.
fn prints_in(code: &ptx::Module) -> bool {
    ["mmm_f64", "mmm_f32"]
        .iter()
        .any(|name| code.entry(name).is_some_and(|kernel| code.prints(kernel)))
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

/// In the measured child: on each case, the student's tiled kernel then ours, once, or only the
/// side `whose` names. With `LAB_PHASES` set, the child's line names the time its modules, its
/// inputs and its launches took (ncu's preparation of its counters went to a launch of ours before:
/// `grading::measure::first_launch`).
pub fn measured_launches(student: &KernelImage, cases: &[Case], whose: Whose) -> Result<()> {
    // Declared before them, the context outlives the modules.
    let (_gpu, modules) = phases::timed("modules", || {
        let (gpu, ours) = on_the_machine((|| {
            let gpu = Gpu::open(0)?;
            let ours = gpu.load(&kernels::MMM_BS16)?;
            Ok((gpu, ours))
        })())?;
        let modules = whose.modules(&gpu, student, ours)?;
        anyhow::Ok((gpu, modules))
    })?;
    for case in cases {
        if case.f64 {
            launch_each::<f64>(&modules, case)?;
        } else {
            launch_each::<f32>(&modules, case)?;
        }
    }
    Ok(())
}

/// The tiled `mmm` of each of `modules` launched once on `case`, each alone on the GPU, as the
/// phase `launches` (`LAB_PHASES`).
fn launch_each<T: Element>(modules: &[Module], case: &Case) -> Result<()> {
    let (a, b, mut c) = phases::timed("inputs", || -> Result<_> {
        let mut random = Random::new(case.seed);
        let mut a: Matrix<T> = Matrix::<f64>::random(case.m, case.k, &mut random)?.convert()?;
        let mut b: Matrix<T> = Matrix::<f64>::random(case.k, case.n, &mut random)?.convert()?;
        a.copy_to_gpu()?;
        b.copy_to_gpu()?;
        Ok((a, b, Matrix::<T>::new(case.m, case.n)?))
    })?;
    phases::timed("launches", || {
        for module in modules {
            multiply_once(module, case.kernel, BLOCK_SIZE, &a, &b, &mut c)?;
        }
        Ok(())
    })
}

/// One case's launches (the student's, ours; [`Measure::rows`] hands exactly two) into the rows of
/// [`MEASURED`]: per element of C, in reads of one thread (warp instructions or requests x 32 /
/// elements). A tiled kernel reads 2 per tile from global memory ([`tiled_bound`] allows 3, and
/// the threads of whole blocks); the naive body 2 K. It reads its tiles 2 K times from shared memory,
/// fewer with wide loads; and it holds two BLOCK_SIZE x BLOCK_SIZE tiles.
pub fn judge(case: &Case, launches: &[Launch]) -> Vec<Row> {
    judge_kernel(case, launches, false)
}

/// [`judge`] for a student's kernel that prints: its global loads are its load instructions alone
/// ([`METRICS`]).
pub fn judge_printing(case: &Case, launches: &[Launch]) -> Vec<Row> {
    judge_kernel(case, launches, true)
}

/// Global reads per element of C (a thread's): the loads (the larger of the instructions, `cp.async`
/// among them, and L1's requests: [`GLOBAL_LOADS`]; the instructions alone where the kernel
/// `prints`), the other reads (through the texture pipe too) and the bytes TMA read ([`COPIES`]), as
/// elements of `bytes` each.
pub(crate) fn global_reads(launch: &Launch, prints: bool, elements: f64, bytes: f64) -> f64 {
    let instructions = (launch.value(GLOBAL_LOADS[0]) + optional(launch, COPIES[0])) * 32.0 / elements;
    let requests = per_thread(launch, &GLOBAL_LOADS[1..], elements);
    let loads = if prints {
        instructions
    } else {
        instructions.max(requests)
    };
    let texture = TEXTURE_READS.iter().map(|metric| optional(launch, metric)).sum::<f64>() * 32.0 / elements;
    let tma = optional(launch, COPIES[1]) / bytes / elements;
    loads + per_thread(launch, &OTHER_GLOBAL_READS, elements) + texture + tma
}

fn judge_kernel(case: &Case, launches: &[Launch], prints: bool) -> Vec<Row> {
    let (theirs, ours) = (&launches[0], &launches[1]);
    let elements = (case.m * case.n) as f64;
    let per_element = |launch: &Launch, metrics: &[&str]| per_thread(launch, metrics, elements);
    let (kernel, bytes) = if case.f64 { ("mmm_f64", 8.0) } else { ("mmm_f32", 4.0) };
    let at = format!("{kernel} at {} x {} x {}", case.m, case.k, case.n);
    let (tiles, k) = (case.k.div_ceil(BLOCK_SIZE as usize) as f64, case.k as f64);
    let global = global_reads(theirs, prints, elements, bytes);
    let shared = per_element(theirs, &[SHARED_LOADS]);
    vec![
        rule_row(
            MEASURED[0],
            &at,
            global,
            Bound::AtMost(tiled_bound(case)),
            &format!(
                "a tiled kernel reads 2 per tile, {:.0} here, and printf {PRINTF_READS:.0}; the naive body {:.0}",
                2.0 * tiles,
                2.0 * k
            ),
            global_reads(ours, false, elements, bytes),
        ),
        rule_row(
            MEASURED[1],
            &at,
            shared,
            Bound::AtLeast(k / 4.0),
            &format!(
                "a tiled kernel reads its tiles {:.0} times, fewer with wide loads",
                2.0 * k
            ),
            per_element(ours, &[SHARED_LOADS]),
        ),
        rule_row(
            MEASURED[2],
            &at,
            theirs.value(SHARED_PER_BLOCK),
            Bound::AtLeast(2.0 * f64::from(BLOCK_SIZE * BLOCK_SIZE) * bytes),
            &format!("two {BLOCK_SIZE} x {BLOCK_SIZE} tiles of {bytes:.0}-byte elements"),
            ours.value(SHARED_PER_BLOCK),
        ),
    ]
}

/// Weeks 2 and 3 (assignments/02-mmm-ab, 03-mmm-tiled) in the lab: the kernels of the week chosen
/// (by `--kernel`, or by the file: [`week_of`]), and whether the student's tiled kernel prints.
struct Week2Or3 {
    kernels: Vec<MmmKernel>,
    entries: Vec<Entry>,
    /// The week the file chose, for the cases' children, whose command line lacks it.
    child_flags: &'static [&'static str],
    prints: bool,
}

impl Week2Or3 {
    /// The week of `kernels`, their entries in both precisions.
    fn new(kernels: Vec<MmmKernel>, child_flags: &'static [&'static str]) -> Week2Or3 {
        Week2Or3 {
            entries: kernels.iter().flat_map(|&kernel| entries(kernel)).collect(),
            kernels,
            child_flags,
            prints: false,
        }
    }
}

impl KernelWeek for Week2Or3 {
    type Case = Case;
    const LAB: &'static str = "lab-mmm";

    fn ours(&self) -> &'static KernelImage {
        &kernels::MMM_BS16
    }

    fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn case_set(&self, file: Option<&Path>) -> Result<CaseSet<Case>> {
        case_set(&self.kernels, file)
    }

    fn rules(&self, image: &KernelImage) -> Result<Vec<Row>> {
        technique_rules(image, &self.kernels)
    }

    fn measure(&self, cases: &[Case]) -> Option<Measure<'static, Case>> {
        measure(&self.kernels, cases, self.prints)
    }

    fn child_flags(&self) -> &[&'static str] {
        self.child_flags
    }

    /// The student's kernels launch only in `multiply_into` (untimed, held shared) and in the timed
    /// loops (`multiply_after`), ours only in the timed loops.
    fn holds_its_launches(&self) -> bool {
        true
    }

    fn run_case(&self, image: &KernelImage, case: &Case, context: CaseContext) -> Result<Outcome> {
        run_case(image, case, context)
    }
}

/// `--check`, `--list-cases` or a case's child: the week's kernels (`kernel`, from `--kernel`, or for
/// `--check` the file's week: [`week_of`]), their cases and rules.
pub fn run(kernel: Option<KernelChoice>, student: &StudentArgs) -> Result<()> {
    let ours = &kernels::MMM_BS16;
    let (week, compiled) = match kernel {
        Some(choice) => {
            let week = Week2Or3::new(choice.kernels(), &[]);
            week.case_set(student.cases.as_deref())?; // a bad --cases file first
            let compiled = student.image(ours, &week.entries);
            (week, compiled)
        }
        None if student.check_case.is_some() || student.list_cases => {
            let week = Week2Or3::new(KernelChoice::Both.kernels(), &[]);
            let compiled = student.image(ours, &week.entries);
            (week, compiled)
        }
        None => {
            case_set(&[MmmKernel::Naive], student.cases.as_deref())?;
            let every = Week2Or3::new(KernelChoice::Both.kernels(), &[]);
            match student.compile(ours, &every.entries) {
                Ok(image) => {
                    let (kernel, line) = week_of(image);
                    eprintln!("{line}");
                    let flags: &[&str] = if kernel == MmmKernel::Tiled {
                        &["--kernel", "tiled"]
                    } else {
                        &["--kernel", "naive"]
                    };
                    let week = Week2Or3::new(vec![kernel], flags);
                    let accepted = student.accept(image, ours, &week.entries).map(|()| image);
                    (week, accepted)
                }
                Err(err) => (every, Err(err)),
            }
        }
    };
    let week = Week2Or3 {
        prints: compiled.as_ref().is_ok_and(|image| prints(image)),
        ..week
    };
    let cases = week.case_set(student.cases.as_deref())?;
    kernel_week::run_compiled(student, &week, cases, compiled).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 61: every size of the check whose counts tell the tiled kernel from the naive body is
    /// measured, each precision once, smallest first; a set with none measures 256^3.
    #[test]
    fn the_measured_cases_are_every_size_that_tells_tiling_from_the_naive_body() {
        let measured = measured_cases(&cases(&[MmmKernel::Tiled]));
        let sizes: Vec<(usize, usize, usize, bool)> = measured.iter().map(|c| (c.m, c.k, c.n, c.f64)).collect();
        assert_eq!(
            sizes,
            [
                (64, 64, 64, true),
                (64, 64, 64, false),
                (255, 257, 256, true),
                (255, 257, 256, false),
                (1000, 999, 1001, true),
                (1000, 999, 1001, false)
            ]
        );
        assert!(measured_cases(&cases(&[MmmKernel::Naive])) == [measured_case()]);
        let tiny = Case {
            m: 17,
            k: 33,
            n: 5,
            ..measured_case()
        };
        assert_eq!(measured_cases(&[tiny, tiny]), [measured_case()]);
    }

    /// Issue 65: ncu reads TMA's bytes for the week's bulk-copy submission, whose PTX has bulk copies as
    /// the check compiles it, and neither TMA's nor the texture pipe's for an honest one or the starter,
    /// whose measured runs read the usual metrics (beside each other, `gpu_lock::metric_set`).
    #[test]
    fn tma_bytes_are_read_where_the_ptx_has_bulk_copies() {
        let ptx = |file: &str| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../assignments/03-mmm-tiled")
                .join(file);
            let image = kernels::runtime::compile(&path, &kernels::MMM_BS16, 90).unwrap().image;
            image.newest().and_then(|build| build.ptx).unwrap().to_string()
        };
        let (bulk, honest, starter) = (
            ptx("adversarial/bulk-copy-naive.cu"),
            ptx("honest/cp-async-tiles.cu"),
            ptx("mmm.cu"),
        );
        // What the check asks ncu for on an sm_90 GPU: the week's metrics, then the optional ones.
        let week = measure(&[MmmKernel::Tiled], &[], false).unwrap();
        let optional = |ptx: &str| week.metrics_for(Some(90), Some(ptx))[METRICS.len()..].to_vec();
        assert_eq!(optional(&bulk), COPIES);
        assert!(optional(&honest) == [COPIES[0]] && optional(&starter) == [COPIES[0]]);
        let usual = |ptx: &str| week.usual(Some(90), &week.metrics_for(Some(90), Some(ptx)));
        assert!(!usual(&bulk) && usual(&honest) && usual(&starter));
    }

    /// A tiled kernel's counts pass and the naive body's fail, atomics and generic loads included;
    /// tiles loaded through generic pointers pass. For a kernel that prints, L1's requests for global
    /// loads (printf's among them) do not count.
    #[test]
    fn global_reads_of_every_kind_count_against_the_tiled_bound() {
        let case = Case {
            m: 64,
            k: 64,
            n: 64,
            ..measured_case()
        };
        // 4 x 4 blocks of 8 warps: a tiled kernel's 2 loads per warp and tile, 4 tiles; the naive
        // body's 2 K per thread.
        let warps = 4.0 * 4.0 * 8.0;
        let launch = |values: &[(&str, f64)]| Launch {
            kernel: "mmm_f64".to_string(),
            values: METRICS
                .iter()
                .map(|metric| (metric.to_string(), 0.0))
                .chain(values.iter().map(|(metric, value)| (metric.to_string(), *value)))
                .collect(),
        };
        let with_tiles = |global: &[(&str, f64)]| {
            let mut values = global.to_vec();
            values.extend([(SHARED_LOADS, 128.0 * warps), (SHARED_PER_BLOCK, 4096.0)]);
            launch(&values)
        };
        let tiled = with_tiles(&[(GLOBAL_LOADS[0], 8.0 * warps), (GLOBAL_LOADS[1], 8.0 * warps)]);
        let tiles_through_generic_pointers = with_tiles(&[(GLOBAL_LOADS[1], 8.0 * warps)]);
        let naive_through_atomics = with_tiles(&[(OTHER_GLOBAL_READS[0], 128.0 * warps)]);
        let naive_through_generic_pointers = with_tiles(&[(GLOBAL_LOADS[1], 128.0 * warps)]);
        // Issue 61: copies into shared memory that pass no register. A TMA kernel's bytes: 2 tiles
        // of 16 x 16 doubles per block and step, 4 steps, 16 blocks.
        let tiles_through_cp_async = with_tiles(&[(COPIES[0], 8.0 * warps)]);
        // On an H200 L1's requests for global loads hold cp.async too: counted once.
        let tiles_through_cp_async_and_requests =
            with_tiles(&[(COPIES[0], 8.0 * warps), (GLOBAL_LOADS[1], 8.0 * warps)]);
        let tiles_through_tma = with_tiles(&[(COPIES[1], 16.0 * 4.0 * 2.0 * 256.0 * 8.0)]);
        let naive_through_cp_async = with_tiles(&[(COPIES[0], 128.0 * warps)]);
        let naive_through_tma = with_tiles(&[(COPIES[1], 64.0 * 64.0 * 128.0 * 8.0)]);
        let naive_through_surfaces = with_tiles(&[(TEXTURE_READS[1], 128.0 * warps)]);
        for passes in [
            &tiled,
            &tiles_through_generic_pointers,
            &tiles_through_cp_async,
            &tiles_through_cp_async_and_requests,
            &tiles_through_tma,
        ] {
            assert!(judge(&case, &[passes.clone(), tiled.clone()]).iter().all(Row::passed));
        }
        for fails in [
            naive_through_atomics,
            naive_through_generic_pointers.clone(),
            naive_through_cp_async,
            naive_through_tma,
            naive_through_surfaces,
        ] {
            let rows = judge(&case, &[fails, tiled.clone()]);
            assert!(!rows[0].passed() && rows[1].passed() && rows[2].passed(), "{rows:?}");
            let first = rows[0].result.as_ref().unwrap().first.as_ref().unwrap();
            assert_eq!(
                (first.position.as_str(), first.value.as_str()),
                ("mmm_f64 at 64 x 64 x 64", "128.0")
            );
        }
        let printing = judge_printing(&case, &[naive_through_generic_pointers, tiled]);
        assert!(
            printing[0].passed(),
            "the PTX rule judges a printing kernel's generic loads"
        );
    }
}

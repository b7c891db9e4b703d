//! `--kernel-source` and `--check` for lab-dynamic-parallel (assignments/07-dynamic-parallelism): the
//! student writes the child launch in `workers`. Each case integrates one function device-driven and
//! compares what the tree of grids reports (the integral, the intervals accepted, the splits, the
//! deepest level) with the CPU's run of the same decisions.

use std::f64::consts::{FRAC_PI_2, PI};
use std::path::Path;

use anyhow::{Context as _, Result};
use common::check_cuda;
use common::gpu::Gpu;
use common::integrand::{moved_interval, Integrand};
use common::verify::Random;
use grading::cases_file::{choice, field, CaseFormat, CaseSet};
use grading::guard::Guarded;
use grading::kernel_week::KernelWeek;
use grading::measure::{rule_row, Bound, Measure, Whose};
use grading::ptx;
use grading::{
    checked_runs, each_launch, first_mismatch, fresh_inputs, on_the_machine, shown, CaseContext, Entry, FirstWrong,
    Outcome, Row,
};
use kernels::KernelImage;
use profiler::counters::Launch;

use crate::{
    adaptive_on_cpu, device_driven_after, device_driven_into, set_pending_launch_limit, Problem, Tally,
    MAX_NESTING_DEPTH,
};

/// Week 7 (assignments/07-dynamic-parallelism) in the lab: the masters of the integrands this run
/// needs, the child launch read from the PTX, the child grids measured.
pub struct Week7 {
    entries: Vec<Entry>,
}

impl Week7 {
    /// The week with the masters of `integrands` (all four where the lab checks a file).
    pub fn new(integrands: &[Integrand]) -> Week7 {
        Week7 {
            entries: integrands.iter().map(|&integrand| entry(integrand)).collect(),
        }
    }
}

impl KernelWeek for Week7 {
    type Case = Problem;
    const LAB: &'static str = "lab-dynamic-parallel";

    fn ours(&self) -> &'static KernelImage {
        &kernels::ADAPTIVE_SIMPSON
    }

    fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn case_set(&self, file: Option<&Path>) -> Result<CaseSet<Problem>> {
        case_set(file)
    }

    fn rules(&self, image: &KernelImage) -> Result<Vec<Row>> {
        Ok(vec![child_launch_rule(image)?])
    }

    fn measure(&self, _cases: &[Problem]) -> Option<Measure<'static, Problem>> {
        Some(measure())
    }

    fn run_case(&self, image: &KernelImage, case: &Problem, context: CaseContext) -> Result<Outcome> {
        run_case(image, case, context)
    }
}

/// The masters the lab launches, by integrand.
fn entry(integrand: Integrand) -> Entry {
    let (name, declaration) = match integrand {
        Integrand::Pi => ("adaptive_master_pi", "extern \"C\" __global__ void adaptive_master_pi(double a, double b, double tolerance, int max_depth, Tally* tally)"),
        Integrand::Sin => ("adaptive_master_sin", "extern \"C\" __global__ void adaptive_master_sin(double a, double b, double tolerance, int max_depth, Tally* tally)"),
        Integrand::Exp => ("adaptive_master_exp", "extern \"C\" __global__ void adaptive_master_exp(double a, double b, double tolerance, int max_depth, Tally* tally)"),
        Integrand::Peak => ("adaptive_master_peak", "extern \"C\" __global__ void adaptive_master_peak(double a, double b, double tolerance, int max_depth, Tally* tally)"),
    };
    Entry { name, declaration }
}

/// The rule of week 7 (issue 29): the workers launch child grids, as their PTX shows (the device
/// runtime's launch call, in the kernel or a function it calls). Workers that refine their intervals
/// in a loop of their own get the same integral, intervals and splits, and fail here. (That the
/// grids launched at run time agree with the splits would need a count of launches from the
/// profiler's interface, CUPTI: issue 23.)
fn child_launch_rule(image: &KernelImage) -> Result<Row> {
    let build = image
        .newest()
        .with_context(|| format!("{} was not compiled", image.source))?;
    let read = |code: &ptx::Module| -> (usize, Vec<FirstWrong>) {
        let workers: Vec<&ptx::Function> = code
            .entries()
            .filter(|kernel| kernel.name.contains("workers"))
            .collect();
        let expected = "a child grid launched (<<<...>>> in device code)".to_string();
        if workers.is_empty() {
            return (
                1,
                vec![FirstWrong {
                    position: "workers".into(),
                    value: "no kernel named workers".into(),
                    expected,
                    computed_by: "the PTX".into(),
                }],
            );
        }
        let quiet = workers.iter().filter(|kernel| !code.launches_kernels(kernel));
        let failures = quiet.map(|kernel| FirstWrong {
            position: template_name(&kernel.name),
            value: "no device-side launch".into(),
            expected: expected.clone(),
            computed_by: "the PTX".into(),
        });
        (workers.len(), failures.collect())
    };
    Ok(Row::rule_on_ptx(
        "child grids: every workers<F> launches its children itself (PTX)",
        build,
        read,
    ))
}

/// `workers<Sine>` for the mangled `_Z7workersI4SineEvddddiiP5Tally`; other names as they are.
fn template_name(mangled: &str) -> String {
    let counted = |text: &str| -> Option<(String, usize)> {
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        let length: usize = text[..digits].parse().ok()?;
        Some((text.get(digits..digits + length)?.to_string(), digits + length))
    };
    let Some((name, used)) = mangled.strip_prefix("_Z").and_then(counted) else {
        return mangled.to_string();
    };
    let rest = &mangled[2 + used..];
    match rest.strip_prefix('I').and_then(counted) {
        Some((argument, _)) => format!("{name}<{argument}>"),
        None => name,
    }
}

/// Every integrand; tolerances from coarse to fine; a depth limit of 1, one that stops the splitting
/// early, and the default.
pub fn cases() -> Vec<Problem> {
    let case = |integrand, a, b, tolerance, max_depth| Problem {
        integrand,
        a,
        b,
        tolerance,
        max_depth,
    };
    vec![
        case(Integrand::Peak, 0.0, 1.0, 1e-6, 1),
        case(Integrand::Pi, 0.0, 1.0, 1e-10, 20),
        case(Integrand::Sin, 0.0, 3.0, 1e-12, 20),
        case(Integrand::Exp, -1.0, 2.0, 1e-12, 5),
        case(Integrand::Peak, 0.0, 1.0, 1e-10, 20),
        case(Integrand::Peak, -0.7, 0.35, 1e-8, 24),
    ]
}

/// The fields of a line of a `--cases` file.
pub const CASE_FIELDS: &str = "INTEGRAND A B TOLERANCE MAX_DEPTH";

/// A case's TOLERANCE must be below this fraction of the integral's magnitude scale, the integral of
/// |f| over [A, B] (issue 39): the integral check passes a GPU integral within TOLERANCE of the CPU's,
/// so a larger one would pass an integral off by more than 0.1 %.
pub const MAX_TOLERANCE_OF_MAGNITUDE: f64 = 1e-3;

/// A case's TOLERANCE must be at least this fraction of (B - A) times the largest |f| on [A, B]
/// (issue 39). An interval of width h splits when |left + right - whole| > 15 TOLERANCE h / (B - A);
/// the left side carries rounding errors of a few ulps of f times h (one ulp is 2.2e-16), so below
/// this bound rounding, not the integrand, decides which intervals split, and the GPU, whose sin and
/// exp differ from the CPU's by a rounding, could split others than the CPU and fail exact counts.
pub const MIN_TOLERANCE_OF_SCALE: f64 = 1e-15;

/// The week's cases, or those of a `--cases` file: `peak 0 1 1e-10 20` per line.
fn case_set(file: Option<&Path>) -> Result<CaseSet<Problem>> {
    case_format().load(file, cases())
}

/// How a `--cases` line is read, written out for the case set's hash, and named.
fn case_format() -> CaseFormat<'static, Problem> {
    CaseFormat {
        fields: CASE_FIELDS,
        parse: &parse_case,
        line: &case_line,
        name: &name,
        shared_checks: None,
    }
}

/// One line's fields as a case, or why not: each field's own range, then whether the tolerance
/// leaves the check something to check ([`meaningful`]).
fn parse_case(fields: &[&str]) -> Result<Vec<Problem>, String> {
    let integrand = choice(fields[0], "INTEGRAND", &Integrand::ALL.map(|i| (i.name(), i)))?;
    let (a, b) = (field(fields[1], "A", -1e6..=1e6)?, field(fields[2], "B", -1e6..=1e6)?);
    let tolerance = fields[3]
        .parse::<f64>()
        .ok()
        .filter(|t| t.is_finite() && *t > 0.0)
        .ok_or_else(|| format!("TOLERANCE {:?} is not a positive number", fields[3]))?;
    let max_depth = field(fields[4], "MAX_DEPTH", 1..=MAX_NESTING_DEPTH)?;
    let problem = Problem::new(integrand, a, b, tolerance, max_depth).map_err(|err| err.to_string())?;
    meaningful(&problem)?;
    Ok(vec![problem])
}

fn case_line(p: &Problem) -> String {
    format!(
        "{} {} {} {:e} {}",
        p.integrand.name(),
        p.a,
        p.b,
        p.tolerance,
        p.max_depth
    )
}

/// Whether a case's tolerance leaves its check meaningful (issue 39), or which bound it breaks and why:
/// below [`MAX_TOLERANCE_OF_MAGNITUDE`] times the integral of |f| (else the integral check passes
/// nearly anything), at least [`MIN_TOLERANCE_OF_SCALE`] times (B - A) max |f| (else rounding decides
/// the splits), and fine enough that at least one half of [A, B] splits (else no worker launches a
/// child grid, and the week's technique is not exercised). Every case of [`cases`] keeps them.
fn meaningful(problem: &Problem) -> Result<(), String> {
    let (f, a, b, tolerance) = (problem.integrand, problem.a, problem.b, problem.tolerance);
    let (magnitude, scale) = (magnitude(problem), (b - a) * largest_value(problem));
    if !(magnitude.is_finite() && scale.is_finite()) {
        return Err(format!(
            "{} overflows a double on [{a}, {b}]: no check can be made there",
            f.formula()
        ));
    }
    let most = MAX_TOLERANCE_OF_MAGNITUDE * magnitude;
    if tolerance >= most {
        return Err(format!(
            "TOLERANCE {tolerance:e} is not below {MAX_TOLERANCE_OF_MAGNITUDE:e} x the integral of |f| over [A, B] ({most:.3e}): the integral check passes a GPU integral within TOLERANCE of the CPU's, so it would pass one off by more than 0.1 %"
        ));
    }
    let least = MIN_TOLERANCE_OF_SCALE * scale;
    if tolerance < least {
        return Err(format!(
            "TOLERANCE {tolerance:e} is below {MIN_TOLERANCE_OF_SCALE:e} x (B - A) x the largest |f| on [A, B] ({least:.3e}): rounding errors of f, not f itself, would decide which intervals split, and the counts could not be asked to match exactly"
        ));
    }
    if adaptive_on_cpu(&Problem {
        max_depth: 2,
        ..*problem
    })
    .splits
        == 0
    {
        return Err(format!("TOLERANCE {tolerance:e} is so coarse that neither half of [{a}, {b}] splits, whatever MAX_DEPTH: no worker would launch a child grid"));
    }
    Ok(())
}

/// The integral of |f| over [a, b], the integral's magnitude scale.
fn magnitude(problem: &Problem) -> f64 {
    let (f, a, b) = (problem.integrand, problem.a, problem.b);
    match f {
        // Positive everywhere: the integral itself.
        Integrand::Pi | Integrand::Exp | Integrand::Peak => f.exact(a, b),
        // The integral of |sin| from 0 to x is 2k + 1 - cos(x - k pi), with k = floor(x / pi).
        Integrand::Sin => {
            let from_zero = |x: f64| {
                let k = (x / PI).floor();
                2.0 * k + 1.0 - (x - k * PI).cos()
            };
            from_zero(b) - from_zero(a)
        }
    }
}

/// The largest |f| on [a, b].
fn largest_value(problem: &Problem) -> f64 {
    let (f, a, b) = (problem.integrand, problem.a, problem.b);
    let at = |x: f64| f.f(x.clamp(a, b)).abs();
    match f {
        // Falling away from their peak at 0 and at 0.3; exp rising.
        Integrand::Pi => at(0.0),
        Integrand::Peak => at(0.3),
        Integrand::Exp => at(b),
        // |sin| is 1 at pi/2 + k pi; without one inside, its largest value is at an end.
        Integrand::Sin => {
            let first_peak = FRAC_PI_2 + ((a - FRAC_PI_2) / PI).ceil() * PI;
            if first_peak <= b {
                1.0
            } else {
                at(a).max(at(b))
            }
        }
    }
}

pub fn name(problem: &Problem) -> String {
    format!(
        "{} on [{}, {}], tolerance {:e}, depth limit {}",
        problem.integrand.formula(),
        problem.a,
        problem.b,
        problem.tolerance,
        problem.max_depth
    )
}

/// Each quantity a tree is judged by: its name, the GPU's value and the CPU's.
type Quantities = [(&'static str, f64, f64); 4];

/// What a run reports, in the table's words, with the CPU's value beside it.
fn quantities(gpu: &Tally, cpu: &Tally) -> Quantities {
    [
        ("intervals accepted", gpu.accepted as f64, cpu.accepted as f64),
        ("intervals split", gpu.splits as f64, cpu.splits as f64),
        ("deepest level", f64::from(gpu.deepest), f64::from(cpu.deepest)),
        ("integral", gpu.integral, cpu.integral),
    ]
}

/// The quantities of a tree of `problem` (the GPU's `tally` beside the CPU's `cpu`), how many
/// disagree by `agreement` ([`agrees`] or [`agrees_on_a_fresh_interval`]) and the first that does.
fn mismatch(
    problem: &Problem,
    tally: &Tally,
    cpu: &Tally,
    agreement: fn(&Problem, &str, f64, f64) -> bool,
) -> (Quantities, usize, Option<usize>) {
    let all = quantities(tally, cpu);
    let (gpu_values, cpu_values): (Vec<(&str, f64)>, Vec<f64>) =
        all.iter().map(|(quantity, g, c)| ((*quantity, *g), *c)).unzip();
    let (wrong, first) = first_mismatch(&gpu_values, &cpu_values, |(quantity, g), c| {
        agreement(problem, quantity, g, c)
    });
    (all, wrong, first)
}

/// Whether a timed launch's `quantity` agrees with the CPU's on its fresh interval. A tree nobody
/// chose may hold an interval whose error estimate sits on the tolerance, which the GPU's rounding
/// and the CPU's decide apart (issue 61: ours accepted 3684 intervals where the CPU accepted 3683,
/// on an H200, `results/h200/issue61-copies/run-2-check-adaptive.log`); the week's cases and a
/// teacher's are checked exactly ([`agrees`]). So the counts may differ by 2 and a thousandth, the
/// deepest level by 1 and the integral by 4 tolerances: an integral remembered from an earlier
/// interval is still far off.
fn agrees_on_a_fresh_interval(problem: &Problem, quantity: &str, gpu: f64, cpu: f64) -> bool {
    let off = (gpu - cpu).abs();
    match quantity {
        "integral" => off <= 4.0 * problem.tolerance.max(1e-12 * cpu.abs()),
        "deepest level" => off <= 1.0,
        _ => off <= 2.0 + cpu.abs() / 1000.0,
    }
}

/// `problem` on a timed launch's fresh interval ([`moved_interval`]): a tree of about the case's size.
fn moved(problem: &Problem, random: &mut Random) -> Result<Problem> {
    let (a, b) = moved_interval(problem.a, problem.b, random);
    Problem::new(problem.integrand, a, b, problem.tolerance, problem.max_depth)
}

/// Whether the GPU's value of a `quantity` agrees with the CPU's: the counts (intervals accepted and
/// split, the deepest level) exactly, whatever the case's tolerance, since the GPU makes the CPU's
/// decisions; only the integral, summed by atomic adds in any order, to within the tolerance (or
/// 1e-12 of itself).
fn agrees(problem: &Problem, quantity: &str, gpu: f64, cpu: f64) -> bool {
    match quantity {
        "integral" => (gpu - cpu).abs() <= problem.tolerance.max(1e-12 * cpu.abs()),
        _ => gpu == cpu,
    }
}

/// Runs one case device-driven with the student's image, then times it against ours.
fn run_case(student: &KernelImage, problem: &Problem, context: CaseContext) -> Result<Outcome> {
    let (gpu, ours, tally) = machine_first()?;
    let mut our_tally = on_the_machine(Guarded::<Tally>::new(1))?;
    let theirs = gpu.load(student)?;
    let counted = clear_evaluations(&theirs);
    let run = device_driven_into(&theirs, problem, &tally, 1)?;
    let cpu = adaptive_on_cpu(problem);
    let evaluations = evaluations_finding(&theirs, counted, &[cpu, run.tally])?;
    // Issue 61: every timed launch, ours and the student's, integrates over an interval of its own,
    // after a warm-up over another, each checked against the CPU's tree on it.
    let fresh = fresh_inputs(|random| moved(problem, random))?;
    let (mut ours_at, mut theirs_at) = (fresh.iter(), fresh.iter());
    let timed = context.time(
        |launches| {
            let timing = each_launch(launches, &mut ours_at, |[warm_up, moved]| {
                Ok(device_driven_after(&ours, warm_up, moved, &our_tally)?.timing)
            })?;
            our_tally.fill(0)?; // issue 39: no tally of ours left for the student's kernel
            Ok(timing)
        },
        |launches| {
            checked_runs(launches, || {
                let [warm_up, moved] = theirs_at.next().context("no fresh interval left")?;
                let run = device_driven_after(&theirs, warm_up, moved, &tally)?;
                let (all, _, first) = mismatch(moved, &run.tally, &adaptive_on_cpu(moved), agrees_on_a_fresh_interval);
                Ok((
                    run.timing,
                    first.map(|i| {
                        format!(
                            "on [{}, {}] (a fresh interval), {} is {}, expected {}",
                            moved.a, moved.b, all[i].0, all[i].1, all[i].2
                        )
                    }),
                ))
            })
        },
    )?;
    // The guard zones after every launch, the timed ones too.
    let outside = tally.trespass()?.map(|trespass| trespass.describe("tally", "1"));
    let (all, wrong, first) = mismatch(problem, &run.tally, &cpu, agrees);
    // Counts as whole numbers, the integral to 13 digits.
    let value = |i: usize, x: f64| {
        if all[i].0 == "integral" {
            shown(x)
        } else {
            format!("{x:.0}")
        }
    };
    let first = first.map(|i| FirstWrong {
        position: all[i].0.to_string(),
        value: value(i, all[i].1),
        expected: value(i, all[i].2),
        computed_by: "every worker grid (atomicAdd into the Tally)".to_string(),
    });
    Ok(Outcome {
        wrong,
        elements: all.len(),
        first,
        times: timed.times,
        finding: None,
    }
    .with_findings([outside, evaluations, timed.wrong]))
}

/// integrands.cuh's counts of integrand evaluations per grid (issue 61), in buckets by the grid's
/// launch number: `lab_evaluations` in the module (adaptive_simpson.cu is built with
/// `-DLAB_COUNT_EVALUATIONS`, and a student's file like it).
type Evaluations = [u32; 1 << 16];

/// The fewest evaluations any one grid may make whatever the tree's size: the master and a worker
/// grid make 6 and 12, and a few grids may share a bucket.
const EVALUATIONS_FLOOR: u64 = 64;

/// How often the checked call runs the tree into the counts: `device_driven_into(.., 1)` warms up
/// once, then runs once.
const RUNS_COUNTED: u64 = 2;

/// Zeroes `module`'s counts before the checked run; `Err` says why there are none to read.
fn clear_evaluations(module: &cust::module::Module) -> std::result::Result<(), String> {
    use cust::memory::CopyDestination as _;
    let mut symbol = module
        .get_global::<Evaluations>(c"lab_evaluations")
        .map_err(|_| "the module has no count of integrand evaluations (lab_evaluations of integrands.cuh, compiled with LAB_COUNT_EVALUATIONS)".to_string())?;
    check_cuda!(symbol.copy_from(&Box::new([0; 1 << 16]))).map_err(|err| format!("{err:#}"))
}

/// What the counts say after the checked call ([`RUNS_COUNTED`] trees): a finding where one grid
/// evaluated the integrand more than an eighth of one tree's evaluations (and more than
/// [`EVALUATIONS_FLOOR`]): the refinement was done in a loop of that grid's own, however many child
/// grids it launched beside it. A tree of child grids spreads them, 12 per worker grid. No count is a
/// finding (`counted`'s error), and so are counts far above what the decisions need: the CPU's or
/// the tree's own, whichever made more (`tallies`; a wrong tree fails on its counts, not here).
fn evaluations_finding(
    module: &cust::module::Module,
    counted: std::result::Result<(), String>,
    tallies: &[Tally],
) -> Result<Option<String>> {
    use cust::memory::CopyDestination as _;
    if let Err(why) = counted {
        return Ok(Some(why));
    }
    let symbol = check_cuda!(module.get_global::<Evaluations>(c"lab_evaluations"))?;
    let mut counts: Box<Evaluations> = Box::new([0; 1 << 16]);
    check_cuda!(symbol.copy_to(&mut *counts))?;
    let needed = tallies.iter().map(needed_evaluations).max().unwrap_or(0);
    Ok(evaluations_verdict(&counts[..], needed))
}

/// The evaluations one tree of ours makes for `tally`'s decisions: 6 (two Simpson estimates) for each
/// interval decided, accepted or split, and 6 in the master.
fn needed_evaluations(tally: &Tally) -> u64 {
    // Saturating: the tree's own tally is what the student's kernels wrote.
    tally
        .accepted
        .saturating_add(tally.splits)
        .saturating_add(1)
        .saturating_mul(6)
}

/// [`evaluations_finding`] on the counts read back, where one tree needs `needed`.
fn evaluations_verdict(counts: &[u32], needed: u64) -> Option<String> {
    let per_tree = counts.iter().map(|&count| u64::from(count)).sum::<u64>() / RUNS_COUNTED;
    let most = u64::from(counts.iter().copied().max().unwrap_or(0));
    let bound = (per_tree / 8).max(EVALUATIONS_FLOOR);
    if per_tree == 0 {
        Some("the tree evaluated no integrand of integrands.cuh".to_string())
    } else if per_tree > needed.saturating_mul(4) {
        // Counts added to other grids' buckets would hide a loop's; a tree needs `needed`.
        Some(format!(
            "the counts of integrand evaluations hold {per_tree} a tree, over 4 times the {needed} its decisions need: lab_evaluations was written to"
        ))
    } else if most > bound {
        Some(format!(
            "one grid evaluated the integrand {most} times where the tree evaluates it {per_tree} times in all (at most {bound}: a tree of child grids evaluates it 12 times per worker grid)"
        ))
    } else {
        None
    }
}

/// The measured rule's name (week 7).
pub const MEASURED: [&str; 1] = ["child grids, measured: thread blocks launched on the device (ncu)"];

/// Thread blocks launched while the master's grid ran: its own, and every child grid's.
const METRICS: [&str; 1] = ["sm__ctas_launched.sum"];

/// Week 7's technique measured (issue 39): the student's master and then ours run the same problem
/// under ncu, which counts the thread blocks launched while each ran, children included. A tree of
/// child grids launches one grid per split, as ours does; workers that refine in a loop of their own,
/// or launch only in a branch that never runs, launch none.
fn measure() -> Measure<'static, Problem> {
    let problem = Problem {
        integrand: Integrand::Peak,
        a: 0.0,
        b: 1.0,
        tolerance: 1e-8,
        max_depth: 20,
    };
    Measure {
        cases: vec![problem],
        rules: &MEASURED,
        metrics: &METRICS,
        optional_metrics: &[],
        kernels: "regex:^adaptive_master_",
        launches_per_case: 4,
        run: &measured_launches,
        judge: &judge,
    }
}

/// The machine's steps of a case, before the student's module is loaded ([`on_the_machine`]): the
/// GPU, our kernels, the device runtime's pending launches and the tally.
fn machine_first() -> Result<(Gpu, cust::module::Module, Guarded<Tally>)> {
    on_the_machine((|| {
        let gpu = Gpu::open(0)?;
        let ours = gpu.load(&kernels::ADAPTIVE_SIMPSON)?;
        set_pending_launch_limit(32768)?;
        Ok((gpu, ours, Guarded::<Tally>::new(1)?))
    })())
}

/// In the measured child: the student's tree, then ours (each a warm-up and one run, alone on the
/// GPU), or only the side `whose` names.
fn measured_launches(student: &KernelImage, problems: &[Problem], whose: Whose) -> Result<()> {
    let problem = problems.first().context("no problem to measure")?;
    let (gpu, ours, tally) = machine_first()?;
    for module in &whose.modules(&gpu, student, ours)? {
        device_driven_into(module, problem, &tally, 1)?;
    }
    Ok(())
}

/// The four master launches (the student's warm-up and run, ours; [`Measure::rows`] hands exactly
/// four) into the rule's row: the student's run must launch at least half as many thread blocks as ours. The count moves by about 1 %
/// from run to run of the same tree (seen on an H100: 1214 to 1227 for ours), and workers without
/// child grids launch none (4 where ours launched 1216).
fn judge(_: &Problem, launches: &[Launch]) -> Vec<Row> {
    let (theirs, ours) = (launches[1].value(METRICS[0]), launches[3].value(METRICS[0]));
    vec![rule_row(
        MEASURED[0],
        "workers<F>",
        theirs,
        Bound::AtLeast(ours / 2.0),
        "one child grid per split, as ours launches them",
        ours,
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 61: on a timed launch's fresh interval, a decision taken apart at the tolerance passes
    /// (the H200's 3684 accepted where the CPU accepted 3683); an integral off by more than 4
    /// tolerances, a count off by more than 2 and a thousandth, or a NaN fails. The case's own
    /// comparison stays exact.
    #[test]
    fn a_fresh_interval_allows_a_borderline_decision_and_nothing_more() {
        let problem = Problem::new(Integrand::Peak, 0.0, 1.0, 1e-10, 20).unwrap();
        let fresh = |quantity, gpu, cpu| agrees_on_a_fresh_interval(&problem, quantity, gpu, cpu);
        assert!(fresh("intervals accepted", 3684.0, 3683.0));
        assert!(!agrees(&problem, "intervals accepted", 3684.0, 3683.0));
        assert!(fresh("intervals split", 3688.0, 3683.0));
        assert!(!fresh("intervals split", 3700.0, 3683.0));
        assert!(fresh("deepest level", 13.0, 12.0) && !fresh("deepest level", 14.0, 12.0));
        assert!(fresh("integral", 3.0 + 3e-10, 3.0) && !fresh("integral", 3.0 + 5e-10, 3.0));
        assert!(!fresh("integral", f64::NAN, 3.0) && !fresh("intervals accepted", f64::NAN, 3683.0));
    }

    /// Issue 61: evaluations spread over the grids of two trees pass; one grid that evaluated over an
    /// eighth of a tree's (a loop of its own) fails, and so do no evaluations and counts padded to
    /// hide it; a small tree may put up to 64 in one grid. The numbers of the H200's run of
    /// empty-children.cu: 44316 in one grid, 88644 in two trees of 7386 intervals decided
    /// (results/h200/issue61-children/run-3-check-empty-children.log).
    #[test]
    fn a_grid_that_evaluates_most_of_the_tree_is_found() {
        let needed = needed_evaluations(&Tally {
            accepted: 3694,
            splits: 3692,
            ..Tally::default()
        });
        assert_eq!(needed, 44322);
        // Two trees of ours: the masters' 6, 3693 worker grids of 12 each.
        let mut counts = vec![0u32; 1 << 16];
        counts[..2].fill(6);
        counts[2..2 + 2 * 3693].fill(12);
        assert_eq!(evaluations_verdict(&counts, needed), None);
        let mut looping = vec![0u32; 1 << 16];
        looping[..4].copy_from_slice(&[6, 6, 44316, 44316]);
        let found = evaluations_verdict(&looping, needed).unwrap();
        assert!(
            found.starts_with("one grid evaluated the integrand 44316 times where the tree evaluates it 44322"),
            "{found}"
        );
        looping[100..100 + 16].fill(1 << 20);
        assert!(evaluations_verdict(&looping, needed)
            .unwrap()
            .ends_with("lab_evaluations was written to"));
        assert_eq!(evaluations_verdict(&[6, 6, 60, 60], 66), None);
        assert!(evaluations_verdict(&[6, 6, 66, 66], 72).is_some());
        assert_eq!(
            evaluations_verdict(&[0; 8], 66).as_deref(),
            Some("the tree evaluated no integrand of integrands.cuh")
        );
        // A tally of the student's kernels, however large, is no overflow.
        let forged = Tally {
            accepted: u64::MAX,
            splits: 3,
            ..Tally::default()
        };
        assert_eq!(needed_evaluations(&forged), u64::MAX);
        assert_eq!(evaluations_verdict(&counts, needed_evaluations(&forged)), None);
    }

    #[test]
    fn template_kernels_are_named_as_in_the_source() {
        assert_eq!(template_name("_Z7workersI4SineEvdddddiiP5Tally"), "workers<Sine>");
        assert_eq!(
            template_name("_Z7workersI23FourOverOnePlusXSquaredEvdddddiiP5Tally"),
            "workers<FourOverOnePlusXSquared>"
        );
        assert_eq!(template_name("_Z7workersdddd"), "workers");
        assert_eq!(template_name("adaptive_master_pi"), "adaptive_master_pi");
        assert_eq!(template_name("_Z99x"), "_Z99x");
    }

    /// The cases of a one-line `--cases` file, or its error.
    fn parsed(text: &str) -> Result<Vec<Problem>, String> {
        case_format()
            .parse_text("hidden.txt", text)
            .map_err(|err| err.to_string())
    }

    #[test]
    fn the_weeks_own_cases_keep_the_bounds() {
        for problem in cases() {
            assert_eq!(
                parsed(&case_line(&problem)),
                Ok(vec![problem]),
                "{}",
                case_line(&problem)
            );
        }
        assert_eq!(
            parsed("# hidden\npeak 0 1 1e-10 20\nsin -2 5 1e-9 12 # a comment\n")
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn a_bad_case_line_names_the_field_and_its_range() {
        let error = |line: &str| parsed(line).unwrap_err();
        assert_eq!(
            error("tan 0 1 1e-10 20"),
            "hidden.txt:1: INTEGRAND \"tan\" is not one of pi, sin, exp, peak"
        );
        assert_eq!(
            error("pi 0 1 1e-10"),
            "hidden.txt:1: 4 fields where a case has 5 (INTEGRAND A B TOLERANCE MAX_DEPTH)"
        );
        assert_eq!(
            error("pi 0 2e6 1e-10 20"),
            "hidden.txt:1: B \"2e6\" is not a number from -1000000 to 1000000"
        );
        for tolerance in ["0", "-1e-3", "x", "nan", "inf"] {
            assert_eq!(
                error(&format!("pi 0 1 {tolerance} 20")),
                format!("hidden.txt:1: TOLERANCE \"{tolerance}\" is not a positive number")
            );
        }
        assert_eq!(
            error("pi 0 1 1e-10 25"),
            "hidden.txt:1: MAX_DEPTH \"25\" is not a number from 1 to 24"
        );
        assert_eq!(
            error("pi 0 1 1e-10 0"),
            "hidden.txt:1: MAX_DEPTH \"0\" is not a number from 1 to 24"
        );
        assert_eq!(
            error("pi 1 0 1e-10 20"),
            "hidden.txt:1: --b 0 must be greater than --a 1"
        );
        assert_eq!(error("pi 0 1 1e-10 20\n\npeak 0 1 0.5e-20 20"), format!("hidden.txt:3: TOLERANCE 5e-21 is below 1e-15 x (B - A) x the largest |f| on [A, B] (1.000e-11): {ROUNDING}"));
    }

    const ROUNDING: &str = "rounding errors of f, not f itself, would decide which intervals split, and the counts could not be asked to match exactly";

    #[test]
    fn a_tolerance_that_makes_the_check_meaningless_says_which_bound_and_why() {
        let error = |line: &str| parsed(line).unwrap_err();
        // At or above a thousandth of the integral of |f|: the integral check would pass nearly anything.
        let coarse = "the integral check passes a GPU integral within TOLERANCE of the CPU's, so it would pass one off by more than 0.1 %";
        assert_eq!(
            error("pi 0 1 1e-2 20"),
            format!(
                "hidden.txt:1: TOLERANCE 1e-2 is not below 1e-3 x the integral of |f| over [A, B] (3.142e-3): {coarse}"
            )
        );
        assert_eq!(
            error("peak 0 1 1 20"),
            format!(
                "hidden.txt:1: TOLERANCE 1e0 is not below 1e-3 x the integral of |f| over [A, B] (3.094e-1): {coarse}"
            )
        );
        // |sin| counts, not sin: over a whole period the integral is 0 and the scale 4.
        assert_eq!(
            error("sin 0 6.283185307179586 4e-3 20"),
            format!(
                "hidden.txt:1: TOLERANCE 4e-3 is not below 1e-3 x the integral of |f| over [A, B] (4.000e-3): {coarse}"
            )
        );
        assert_eq!(parsed("sin 0 6.283185307179586 1e-9 20").unwrap().len(), 1);
        // Below 1e-15 of (B - A) max |f|: the peak is 10^4 high, so 1e-12 is too fine for it, not for pi.
        assert_eq!(error("peak 0 1 1e-12 20"), format!("hidden.txt:1: TOLERANCE 1e-12 is below 1e-15 x (B - A) x the largest |f| on [A, B] (1.000e-11): {ROUNDING}"));
        assert_eq!(parsed("pi 0 1 1e-12 20").unwrap().len(), 1);
        assert_eq!(error("pi 0 1 1e-15 20"), format!("hidden.txt:1: TOLERANCE 1e-15 is below 1e-15 x (B - A) x the largest |f| on [A, B] (4.000e-15): {ROUNDING}"));
        // So coarse that the tree is the master's two intervals: nothing for a worker to launch.
        assert_eq!(error("exp 0 0.001 1e-9 20"), "hidden.txt:1: TOLERANCE 1e-9 is so coarse that neither half of [0, 0.001] splits, whatever MAX_DEPTH: no worker would launch a child grid");
        // A depth limit of 1 still checks the depth limit: the tolerance alone would split.
        assert_eq!(parsed("peak 0 1 1e-6 1").unwrap().len(), 1);
        assert_eq!(
            error("exp 0 1000 1e-3 20"),
            "hidden.txt:1: exp(x) overflows a double on [0, 1000]: no check can be made there"
        );
    }

    #[test]
    fn scales_of_the_integrands() {
        let problem = |integrand, a, b| Problem {
            integrand,
            a,
            b,
            tolerance: 1e-10,
            max_depth: 20,
        };
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * y.abs();
        assert!(close(magnitude(&problem(Integrand::Sin, -PI, 3.0 * PI)), 8.0));
        assert!(close(
            magnitude(&problem(Integrand::Sin, -1.0, 1.0)),
            2.0 * (1.0 - 1f64.cos())
        ));
        assert!(close(
            magnitude(&problem(Integrand::Exp, -1.0, 2.0)),
            2f64.exp() - (-1f64).exp()
        ));
        assert_eq!(largest_value(&problem(Integrand::Sin, 0.0, 1.0)), 1f64.sin());
        assert_eq!(largest_value(&problem(Integrand::Sin, 0.0, 3.0)), 1.0);
        assert_eq!(
            largest_value(&problem(Integrand::Sin, -4.0, -3.0)),
            4f64.sin().abs().max(3f64.sin().abs())
        );
        assert_eq!(largest_value(&problem(Integrand::Peak, -0.7, 0.35)), 1e4);
        assert_eq!(
            largest_value(&problem(Integrand::Peak, 0.5, 1.0)),
            Integrand::Peak.f(0.5)
        );
        assert_eq!(largest_value(&problem(Integrand::Pi, 1.0, 2.0)), 2.0);
    }

    #[test]
    fn counts_are_exact_whatever_the_tolerance_and_only_the_integral_has_one() {
        let problem = Problem {
            integrand: Integrand::Peak,
            a: 0.0,
            b: 1.0,
            tolerance: 2.0,
            max_depth: 20,
        };
        let names: Vec<&str> = quantities(&Tally::default(), &Tally::default())
            .iter()
            .map(|quantity| quantity.0)
            .collect();
        assert_eq!(
            names,
            ["intervals accepted", "intervals split", "deepest level", "integral"]
        );
        for quantity in &names[..3] {
            assert!(agrees(&problem, quantity, 10.0, 10.0), "{quantity}");
            assert!(
                !agrees(&problem, quantity, 11.0, 10.0),
                "{quantity}: one off, within the tolerance of 2"
            );
            assert!(!agrees(&problem, quantity, 9.0, 10.0), "{quantity}");
        }
        assert!(agrees(&problem, "integral", 301.5, 300.0));
        assert!(!agrees(&problem, "integral", 302.5, 300.0));
        assert!(!agrees(&problem, "integral", f64::NAN, 300.0));
        let fine = Problem {
            tolerance: 1e-20,
            ..problem
        };
        assert!(
            agrees(&fine, "integral", 300.0 + 1e-10, 300.0),
            "to 1e-12 of itself, for the order of the atomic adds"
        );
    }
}

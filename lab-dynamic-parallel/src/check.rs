//! `--kernel-source` and `--check` for lab-dynamic-parallel (assignments/07-dynamic-parallelism): the
//! student writes the child launch in `workers`. Each case integrates one function device-driven and
//! compares what the tree of grids reports (the integral, the intervals accepted, the splits, the
//! deepest level) with the CPU's run of the same decisions.

use std::path::Path;

use anyhow::{Context as _, Result};
use common::assignment::cases_file::{choice, field, CaseFormat, CaseSet};
use common::assignment::{first_mismatch, shown, CaseContext, Entry, FirstWrong, Outcome, Row};
use common::gpu::Gpu;
use common::guard::Guarded;
use common::integrand::Integrand;
use kernels::{ptx, KernelImage};

use crate::{adaptive_on_cpu, device_driven, device_driven_into, set_pending_launch_limit, Problem, Tally, MAX_NESTING_DEPTH};

/// The masters the lab launches, by integrand.
pub fn entry(integrand: Integrand) -> Entry {
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
pub fn child_launch_rule(image: &KernelImage) -> Result<Row> {
    let build = image.newest().with_context(|| format!("{} was not compiled", image.source))?;
    let read = |code: &ptx::Module| -> (usize, Vec<FirstWrong>) {
        let workers: Vec<&ptx::Function> = code.entries().filter(|kernel| kernel.name.contains("workers")).collect();
        let expected = "a child grid launched (<<<...>>> in device code)".to_string();
        if workers.is_empty() {
            return (1, vec![FirstWrong { position: "workers".into(), value: "no kernel named workers".into(), expected, computed_by: "the PTX".into() }]);
        }
        let quiet = workers.iter().filter(|kernel| !code.launches_kernels(kernel));
        let failures = quiet.map(|kernel| FirstWrong { position: template_name(&kernel.name), value: "no device-side launch".into(), expected: expected.clone(), computed_by: "the PTX".into() });
        (workers.len(), failures.collect())
    };
    Ok(Row::rule_on_ptx("child grids: every workers<F> launches its children itself (PTX)", build, read))
}

/// `workers<Sine>` for the mangled `_Z7workersI4SineEvddddiiP5Tally`; other names as they are.
fn template_name(mangled: &str) -> String {
    let counted = |text: &str| -> Option<(String, usize)> {
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        let length: usize = text[..digits].parse().ok()?;
        Some((text.get(digits..digits + length)?.to_string(), digits + length))
    };
    let Some((name, used)) = mangled.strip_prefix("_Z").and_then(counted) else { return mangled.to_string() };
    let rest = &mangled[2 + used..];
    match rest.strip_prefix('I').and_then(counted) {
        Some((argument, _)) => format!("{name}<{argument}>"),
        None => name,
    }
}

/// Every integrand; tolerances from coarse to fine; a depth limit of 1, one that stops the splitting
/// early, and the default.
pub fn cases() -> Vec<Problem> {
    let case = |integrand, a, b, tolerance, max_depth| Problem { integrand, a, b, tolerance, max_depth };
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

/// The week's cases, or those of a `--cases` file: `peak 0 1 1e-10 20` per line.
pub fn case_set(file: Option<&Path>) -> Result<CaseSet<Problem>> {
    let parse = |fields: &[&str]| -> Result<Vec<Problem>, String> {
        let integrand = choice(fields[0], "INTEGRAND", &Integrand::ALL.map(|i| (i.name(), i)))?;
        let (a, b) = (field(fields[1], "A", -1e6..=1e6)?, field(fields[2], "B", -1e6..=1e6)?);
        let tolerance = field(fields[3], "TOLERANCE", 1e-15..=1.0)?;
        let max_depth = field(fields[4], "MAX_DEPTH", 1..=MAX_NESTING_DEPTH)?;
        Problem::new(integrand, a, b, tolerance, max_depth).map(|problem| vec![problem]).map_err(|err| err.to_string())
    };
    let line = |p: &Problem| format!("{} {} {} {:e} {}", p.integrand.name(), p.a, p.b, p.tolerance, p.max_depth);
    CaseFormat { fields: CASE_FIELDS, parse: &parse, line: &line, name: &name }.load(file, cases())
}

pub fn name(problem: &Problem) -> String {
    format!("{} on [{}, {}], tolerance {:e}, depth limit {}", problem.integrand.formula(), problem.a, problem.b, problem.tolerance, problem.max_depth)
}

/// What a run reports, in the table's words, with the CPU's value beside it.
fn quantities(gpu: &Tally, cpu: &Tally) -> [(&'static str, f64, f64); 4] {
    [
        ("intervals accepted", gpu.accepted as f64, cpu.accepted as f64),
        ("intervals split", gpu.splits as f64, cpu.splits as f64),
        ("deepest level", f64::from(gpu.deepest), f64::from(cpu.deepest)),
        ("integral", gpu.integral, cpu.integral),
    ]
}

/// Runs one case device-driven with the student's image, then times it against ours.
pub fn run_case(student: &KernelImage, problem: &Problem, context: CaseContext) -> Result<Outcome> {
    let gpu = Gpu::open(0)?;
    let theirs = gpu.load(student)?;
    set_pending_launch_limit(32768)?;
    let tally = Guarded::<Tally>::new(1)?;
    let run = device_driven_into(&theirs, problem, &tally, 1)?;
    let outside = tally.trespass()?.map(|trespass| trespass.describe("tally", "1"));
    let ours = gpu.load(&kernels::ADAPTIVE_SIMPSON)?;
    let times = context.time(
        |launches| Ok(device_driven(&ours, problem, launches)?.timing),
        |launches| Ok(device_driven_into(&theirs, problem, &tally, launches)?.timing),
    )?;
    let cpu = adaptive_on_cpu(problem);
    let all = quantities(&run.tally, &cpu);
    let (gpu_values, cpu_values): (Vec<f64>, Vec<f64>) = all.iter().map(|(_, g, c)| (*g, *c)).unzip();
    // Counts must match exactly; the integral (atomic adds in any order) to within the tolerance.
    let within = |g: f64, c: f64| (g - c).abs() <= problem.tolerance.max(1e-12 * c.abs());
    let (wrong, first) = first_mismatch(&gpu_values, &cpu_values, within);
    // Counts as whole numbers, the integral to 13 digits.
    let value = |i: usize, x: f64| if all[i].0 == "integral" { shown(x) } else { format!("{x:.0}") };
    let first = first.map(|i| FirstWrong {
        position: all[i].0.to_string(),
        value: value(i, all[i].1),
        expected: value(i, all[i].2),
        computed_by: "every worker grid (atomicAdd into the Tally)".to_string(),
    });
    Ok(Outcome { wrong, elements: all.len(), first, times, finding: None }.with_findings([outside]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_kernels_are_named_as_in_the_source() {
        assert_eq!(template_name("_Z7workersI4SineEvdddddiiP5Tally"), "workers<Sine>");
        assert_eq!(template_name("_Z7workersI23FourOverOnePlusXSquaredEvdddddiiP5Tally"), "workers<FourOverOnePlusXSquared>");
        assert_eq!(template_name("_Z7workersdddd"), "workers");
        assert_eq!(template_name("adaptive_master_pi"), "adaptive_master_pi");
        assert_eq!(template_name("_Z99x"), "_Z99x");
    }
}

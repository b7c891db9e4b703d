//! Where a lab's wall time goes: setup, GPU, verification, output. `scripts/time-labs.sh` sets
//! `LAB_PHASES=1`, and [`crate::cli::run_lab`] then ends with one line on stderr:
//!
//! ```text
//! phases: setup 412.1 ms, GPU 301.7 ms, verification 88.0 ms, output 2.3 ms, total 804.1 ms
//! ```
//!
//! The shared helpers mark their own phase ([`enter`]): the timed runs ([`crate::timing`]) are GPU, the
//! CPU references and checks are verification, files written are output. Whatever no helper claims
//! (driver start, context, module loading, allocations, random inputs, untimed copies) is setup.
//! A phase entered inside another pauses the outer one, so nothing is counted twice. The tally belongs
//! to the thread that runs the lab (its `main`); work the helpers hand to other threads is counted in
//! the phase that waits for it.
//!
//! Where a phase is large, its parts say why: [`enter_part`] names a stretch (`random inputs`,
//! `copies to the GPU`), and the summary adds one line per phase that has named parts:
//!
//! ```text
//!   setup: driver and context 180.2 ms, random inputs 95.0 ms, other 137.0 ms
//! ```

use std::cell::RefCell;
use std::time::{Duration, Instant};

/// The parts of a lab's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Setup,
    Gpu,
    Verify,
    Output,
}

const ALL: [Phase; 4] = [Phase::Setup, Phase::Gpu, Phase::Verify, Phase::Output];

impl Phase {
    fn label(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Gpu => "GPU",
            Phase::Verify => "verification",
            Phase::Output => "output",
        }
    }
}

/// What runs: a phase, and the part of it where one is named.
type Running = (Phase, Option<&'static str>);

/// The running tally: time spent per phase and per named part (in the order first met), what runs
/// now (the top of `stack`, setup when empty) and when it last changed.
struct Tally {
    started: Instant,
    last_switch: Instant,
    stack: Vec<Running>,
    spent: [Duration; 4],
    parts: Vec<(Phase, &'static str, Duration)>,
}

impl Tally {
    fn new() -> Tally {
        let now = Instant::now();
        Tally {
            started: now,
            last_switch: now,
            stack: Vec::new(),
            spent: [Duration::ZERO; 4],
            parts: Vec::new(),
        }
    }

    /// Charges the time since the last switch to the phase running now, and to its part.
    fn charge(&mut self) {
        let now = Instant::now();
        let (phase, part) = self.stack.last().copied().unwrap_or((Phase::Setup, None));
        let spent = now - self.last_switch;
        self.spent[phase as usize] += spent;
        if let Some(part) = part {
            match self.parts.iter_mut().find(|(p, name, _)| (*p, *name) == (phase, part)) {
                Some((_, _, time)) => *time += spent,
                None => self.parts.push((phase, part, spent)),
            }
        }
        self.last_switch = now;
    }

    /// `  setup: random inputs 95.0 ms, other 137.0 ms`: the named parts of `phase` and the rest of
    /// it; `None` where it has none.
    fn parts_line(&self, phase: Phase) -> Option<String> {
        let parts: Vec<(&str, Duration)> = self
            .parts
            .iter()
            .filter(|(p, _, _)| *p == phase)
            .map(|&(_, name, time)| (name, time))
            .collect();
        if parts.is_empty() {
            return None;
        }
        let named: Duration = parts.iter().map(|(_, time)| *time).sum();
        let other = self.spent[phase as usize].saturating_sub(named);
        let cells: Vec<String> = parts
            .into_iter()
            .chain([("other", other)])
            .map(|(name, time)| format!("{name} {:.1} ms", time.as_secs_f64() * 1e3))
            .collect();
        Some(format!("  {}: {}", phase.label(), cells.join(", ")))
    }
}

thread_local! {
    static TALLY: RefCell<Tally> = RefCell::new(Tally::new());
}

fn with_tally<R>(action: impl FnOnce(&mut Tally) -> R) -> R {
    TALLY.with(|tally| action(&mut tally.borrow_mut()))
}

/// Starts the clock (again); `run_lab` calls it before parsing the flags.
pub fn start() {
    with_tally(|tally| *tally = Tally::new());
}

/// Counts the time until the returned guard is dropped as `phase`.
#[must_use = "the phase ends when the guard is dropped"]
pub fn enter(phase: Phase) -> PhaseGuard {
    push((phase, None))
}

/// Counts the time until the returned guard is dropped as the part `part` of the phase running now
/// (setup where none runs): a copy is part of the setup where it prepares a run, part of the GPU phase
/// where it is what the run times. A part inside another pauses the outer one, as phases do.
#[must_use = "the part ends when the guard is dropped"]
pub fn enter_part(part: &'static str) -> PhaseGuard {
    let phase = with_tally(|tally| tally.stack.last().map_or(Phase::Setup, |&(phase, _)| phase));
    push((phase, Some(part)))
}

fn push(running: Running) -> PhaseGuard {
    with_tally(|tally| {
        tally.charge();
        tally.stack.push(running);
    });
    PhaseGuard { _private: () }
}

/// Ends its phase when dropped; the phase it interrupted runs on.
pub struct PhaseGuard {
    _private: (),
}

impl Drop for PhaseGuard {
    fn drop(&mut self) {
        with_tally(|tally| {
            tally.charge();
            tally.stack.pop();
        });
    }
}

/// The `phases: ...` line, for the time since [`start`], then one line for each phase with named
/// parts.
pub fn summary() -> String {
    with_tally(|tally| {
        tally.charge();
        let mut line = String::from("phases:");
        for phase in ALL {
            line.push_str(&format!(
                " {} {:.1} ms,",
                phase.label(),
                tally.spent[phase as usize].as_secs_f64() * 1e3
            ));
        }
        line += &format!(" total {:.1} ms", tally.started.elapsed().as_secs_f64() * 1e3);
        for parts in ALL.into_iter().filter_map(|phase| tally.parts_line(phase)) {
            line += &format!("\n{parts}");
        }
        line
    })
}

/// Whether the run was asked to report its phases (`LAB_PHASES` set and not empty).
pub fn requested() -> bool {
    std::env::var_os("LAB_PHASES").is_some_and(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spent(line: &str, label: &str) -> f64 {
        let after = line
            .split(&format!(" {label} "))
            .nth(1)
            .unwrap_or_else(|| panic!("{label} in {line}"));
        after
            .split(" ms")
            .next()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or_else(|| panic!("{label} in {line}"))
    }

    #[test]
    fn a_nested_phase_pauses_the_outer_one_and_the_rest_is_setup() {
        start();
        std::thread::sleep(Duration::from_millis(20)); // setup
        {
            let _gpu = enter(Phase::Gpu);
            std::thread::sleep(Duration::from_millis(30));
            let _verify = enter(Phase::Verify);
            std::thread::sleep(Duration::from_millis(40));
        }
        let line = summary();
        assert!(line.starts_with("phases: setup "), "{line}");
        let (setup, gpu, verify, output) = (
            spent(&line, "setup"),
            spent(&line, "GPU"),
            spent(&line, "verification"),
            spent(&line, "output"),
        );
        assert!(
            setup >= 20.0 && gpu >= 30.0 && verify >= 40.0 && output == 0.0,
            "{line}"
        );
        assert!(
            gpu < 30.0 + 40.0,
            "the verification inside the GPU phase is not counted twice: {line}"
        );
        let total = spent(&line, "total");
        assert!(
            (setup + gpu + verify + output - total).abs() < 1.0,
            "the phases add up to the total: {line}"
        );
    }

    #[test]
    fn named_parts_belong_to_the_phase_they_run_in_with_the_rest_as_other() {
        start();
        {
            let _random = enter_part("random inputs");
            std::thread::sleep(Duration::from_millis(20));
            let _copy = enter_part("copies");
            std::thread::sleep(Duration::from_millis(60));
        }
        std::thread::sleep(Duration::from_millis(5)); // setup, no part
        {
            let _verify = enter(Phase::Verify);
            let _reference = enter_part("CPU reference");
            std::thread::sleep(Duration::from_millis(10));
        }
        {
            let _gpu = enter(Phase::Gpu);
            let _timed = enter_part("copies"); // a copy that is the timed work: part of the GPU phase
            std::thread::sleep(Duration::from_millis(10));
        }
        let _again = enter_part("random inputs");
        std::thread::sleep(Duration::from_millis(10));
        drop(_again);
        let summary = summary();
        let lines: Vec<&str> = summary.lines().collect();
        assert_eq!(lines.len(), 4, "{summary}");
        let setup = lines[1];
        assert!(setup.starts_with("  setup: random inputs "), "{summary}");
        let random = spent(setup, "inputs");
        let copies = spent(setup, "copies");
        let other = spent(setup, "other");
        assert!(
            (30.0..90.0).contains(&random),
            "both stretches, not the nested copies: {summary}"
        );
        assert!(copies >= 60.0 && other >= 5.0, "{summary}");
        assert!(
            (random + copies + other - spent(lines[0], "setup")).abs() < 0.5,
            "the parts and the rest add up to the phase: {summary}"
        );
        assert!(lines[2].starts_with("  GPU: copies "), "{summary}");
        assert!(spent(lines[2], "other") < 5.0, "{summary}");
        assert!(lines[3].starts_with("  verification: CPU reference "), "{summary}");
    }
}

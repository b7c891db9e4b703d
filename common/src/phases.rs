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

/// The running tally: time spent per phase, the phase now running (the top of `stack`, setup when
/// empty) and when it last changed.
struct Tally {
    started: Instant,
    last_switch: Instant,
    stack: Vec<Phase>,
    spent: [Duration; 4],
}

impl Tally {
    fn new() -> Tally {
        let now = Instant::now();
        Tally {
            started: now,
            last_switch: now,
            stack: Vec::new(),
            spent: [Duration::ZERO; 4],
        }
    }

    /// Charges the time since the last switch to the phase running now.
    fn charge(&mut self) {
        let now = Instant::now();
        let running = self.stack.last().copied().unwrap_or(Phase::Setup);
        self.spent[running as usize] += now - self.last_switch;
        self.last_switch = now;
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
    with_tally(|tally| {
        tally.charge();
        tally.stack.push(phase);
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

/// The `phases: ...` line, for the time since [`start`].
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
        line + &format!(" total {:.1} ms", tally.started.elapsed().as_secs_f64() * 1e3)
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
}

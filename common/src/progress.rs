//! Progress on stderr for work that takes more than about a second (sweeps, large batches), so a
//! student sees the lab working. indicatif draws only when stderr is a terminal: logs, pipes and the
//! tests see nothing, and stdout (the lab's results) is never touched.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `steps` named steps: `lab-pinned: sweep [=====>     ] 12/30 pinned 16.0 MiB`.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub fn new(steps: usize, what: &str) -> Progress {
        let bar = ProgressBar::new(steps as u64);
        // The template is a constant; were it ever rejected, the default bar still shows progress.
        let style = ProgressStyle::with_template("{prefix}: [{bar:30}] {pos}/{len} {msg} ({elapsed})")
            .map(|style| style.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(what.to_string());
        Progress { bar }
    }

    /// Says what runs now; call before the step's work.
    pub fn step(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }

    /// One named step: `work`, with the bar saying what runs; with `--profile`, its timed windows
    /// carry the step's name (the slide program's, where it is one).
    pub fn run<T>(&self, message: &str, work: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
        let _program = crate::timing::observer::program(message);
        self.step(message);
        let result = work()?;
        self.done();
        Ok(result)
    }

    /// Prints a result line on stdout, with the bar out of its way.
    pub fn println(&self, line: impl std::fmt::Display) {
        self.bar.suspend(|| println!("{line}"));
    }

    /// The step just named is done.
    pub fn done(&self) {
        self.bar.inc(1);
    }
}

/// The bar disappears when the work ends (or fails), leaving the terminal as the results left it.
impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

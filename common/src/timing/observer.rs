//! What a profiler may watch of a lab's run, without `common` knowing the profiler (issue 42): the
//! timed loops of [`crate::timing`] (each a window, each repetition a run) and the slide programs
//! that [`crate::progress`] names. It lives with the timing it watches, and uses only its samples.
//! The `profiler` crate installs its [`Observer`] when `--profile`, `--trace` or `--counters` asks for
//! one; until then every hook here does nothing.

use std::sync::OnceLock;

use anyhow::Result;

use super::samples::Timing;

/// The profiler's side of the hooks. Window numbers are the observer's own.
pub trait Observer: Sync {
    /// A timed loop begins: its window number, or `None` when nothing is being recorded.
    fn open_window(&self) -> Option<usize>;
    /// The GPU calls made from now until [`Observer::leave_run`] belong to run `run` of `window`.
    fn enter_run(&self, window: usize, run: usize) -> Result<()>;
    /// The run entered last is over.
    fn leave_run(&self);
    /// The window's loop ended, and its clock measured `timing`.
    fn close_window(&self, window: usize, timing: &Timing);
    /// The windows opened from now until [`Observer::leave_program`] belong to the slide program
    /// `name`; false when nothing is being recorded (then `leave_program` is not called).
    fn enter_program(&self, name: &str) -> bool;
    /// The program entered last is over.
    fn leave_program(&self);
}

static OBSERVER: OnceLock<&'static dyn Observer> = OnceLock::new();

/// Makes `observer` see every timed loop from now on. A process has at most one: a second call is
/// ignored.
pub fn install(observer: &'static dyn Observer) {
    let _ = OBSERVER.set(observer);
}

fn observer() -> Option<&'static dyn Observer> {
    OBSERVER.get().copied()
}

/// One timed loop, as the observer knows it (nothing without one).
pub struct Window(Option<(&'static dyn Observer, usize)>);

/// Opens the window of a timed loop.
pub fn open_window() -> Window {
    Window(observer().and_then(|observer| Some((observer, observer.open_window()?))))
}

impl Window {
    /// The calls made while the guard lives belong to run `run` of this window.
    pub fn enter_run(&self, run: usize) -> Result<RunGuard> {
        let Some((observer, window)) = self.0 else {
            return Ok(RunGuard(None));
        };
        observer.enter_run(window, run)?;
        Ok(RunGuard(Some(observer)))
    }

    /// The loop is over; its clock measured `timing`.
    pub fn close(self, timing: &Timing) {
        if let Some((observer, window)) = self.0 {
            observer.close_window(window, timing);
        }
    }
}

/// Ends its run when dropped, on every way out of the run (an error included).
pub struct RunGuard(Option<&'static dyn Observer>);

impl Drop for RunGuard {
    fn drop(&mut self) {
        if let Some(observer) = self.0 {
            observer.leave_run();
        }
    }
}

/// Names the windows timed while the guard lives after a slide program (`mmm-streamed`), for the
/// profile's report and trace.
pub fn program(name: &str) -> ProgramGuard {
    ProgramGuard(observer().filter(|observer| observer.enter_program(name)))
}

/// Ends its program when dropped.
pub struct ProgramGuard(Option<&'static dyn Observer>);

impl Drop for ProgramGuard {
    fn drop(&mut self) {
        if let Some(observer) = self.0 {
            observer.leave_program();
        }
    }
}

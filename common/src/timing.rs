//! GPU timing with CUDA events, as the slides time: events recorded on the working stream around the
//! work, so the numbers are device time, not host time. Warm-up runs first (module load and first-touch
//! costs stay out), then every repetition gets its own pair of events and the median is reported;
//! or, with [`Runs::AS_PRINTED`] (`--as-printed`), one cold run as the slides' programs time.

pub mod alone;
pub mod observer;
mod samples;

pub use samples::{Clock, Timing};

use std::time::Duration;

use anyhow::{ensure, Result};
use cust::event::{Event, EventFlags};
use cust::stream::Stream;

use crate::check_cuda;
use crate::context::WaitForDevice;
use crate::phases::{self, Phase};

/// How often a lab runs what it times: its own way (one warm-up, then the median of `--repetitions`)
/// or the slide programs' way (`--as-printed`: one run, nothing before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runs {
    /// Untimed runs first: the kernel loaded, the host pages touched, the clocks up.
    pub warmup: usize,
    /// Timed runs; their median is reported.
    pub repetitions: usize,
}

impl Runs {
    /// The slide programs' timing: one cold run, whose first launch and first touches are inside it.
    pub const AS_PRINTED: Runs = Runs {
        warmup: 0,
        repetitions: 1,
    };

    /// The labs' timing: one warm-up, then `repetitions`.
    pub fn warm(repetitions: usize) -> Runs {
        Runs { warmup: 1, repetitions }
    }

    /// Whether this is [`Runs::AS_PRINTED`]: the first run is the timed one, and the only one.
    pub fn cold(&self) -> bool {
        *self == Runs::AS_PRINTED
    }

    /// How the runs were timed, for a lab's heading.
    pub fn describe(&self) -> String {
        if self.cold() {
            "one run, no warm-up, as the slides' programs time (--as-printed)".to_string()
        } else {
            format!("{} warm-up, then the median of {} runs", self.warmup, self.repetitions)
        }
    }
}

/// `--repetitions` and `--as-printed`, for the labs whose slides print a program's time.
#[derive(clap::Args, Debug, Clone)]
pub struct RunsArgs {
    /// Timed runs after one warm-up; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Time as the slides' programs do: one run and no warm-up, so that what a first run pays is in
    /// the time: the clocks' ramp; from pageable memory, the first write to each page of the results
    /// (the programs' new[]); in lab-streams --mode fifteen, the kernel's loading at its first launch.
    /// A lab's later programs run in the same process, after the first.
    #[arg(long, conflicts_with = "repetitions")]
    as_printed: bool,
}

impl RunsArgs {
    pub fn runs(&self) -> Runs {
        if self.as_printed {
            Runs::AS_PRINTED
        } else {
            Runs::warm(self.repetitions as usize)
        }
    }
}

/// Runs `work` `warmup` times, then `repetitions` times between events recorded on `stream`, and
/// returns the device time of each repetition. `work` must enqueue on `stream` (or on the NULL stream,
/// which `stream` waits for); it must not synchronize, or host time leaks into the numbers.
///
/// Returns only once the device has finished everything enqueued, on every path out (errors and panics
/// included), so `work` may enqueue asynchronous copies on memory the caller owns.
pub fn time_on_stream(
    stream: &Stream,
    warmup: usize,
    repetitions: usize,
    work: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    time_on_stream_after(stream, warmup, repetitions, || Ok(()), work)
}

/// [`time_on_stream`] with `before` enqueued ahead of every run of `work`, outside its events: what
/// must happen before each run but is not part of what is timed (emptying the L2 cache, say).
pub fn time_on_stream_after(
    stream: &Stream,
    warmup: usize,
    repetitions: usize,
    before: impl FnMut() -> Result<()>,
    work: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    time_runs(stream, warmup, repetitions, before, work, || {
        Ok(check_cuda!(stream.synchronize())?)
    })
}

/// [`time_on_stream`] for work that may never end (a device runtime that stalls): the one wait for
/// all runs gives up after `limit` and ends the lab with `what` in its error
/// ([`crate::gpu::wait_or_give_up`]). The runs are still enqueued back to back, as there.
pub fn time_on_stream_or_give_up(
    stream: &Stream,
    warmup: usize,
    repetitions: usize,
    limit: Duration,
    what: &str,
    work: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    time_runs(
        stream,
        warmup,
        repetitions,
        || Ok(()),
        work,
        || crate::gpu::wait_or_give_up(stream, limit, what),
    )
}

/// The runs of [`time_on_stream_after`], then `wait` for all of them.
fn time_runs(
    stream: &Stream,
    warmup: usize,
    repetitions: usize,
    mut before: impl FnMut() -> Result<()>,
    mut work: impl FnMut() -> Result<()>,
    wait: impl FnOnce() -> Result<()>,
) -> Result<Timing> {
    ensure!(repetitions > 0, "--repetitions must be at least 1");
    let _phase = phases::enter(Phase::Gpu);
    // Held until the device has done it all (`_wait`, declared after it, is dropped first).
    let _alone = alone::hold()?;
    // All events exist before the first is recorded: creating one inside the loop costs host time.
    let mut events = Vec::with_capacity(2 * repetitions);
    for _ in 0..2 * repetitions {
        events.push(check_cuda!(Event::new(EventFlags::DEFAULT))?);
    }
    // What is enqueued may read or write memory the caller frees once this returns: every way out
    // waits for all of it, on every stream (work may fork).
    let _wait = WaitForDevice;
    for _ in 0..warmup {
        before()?;
        work()?;
    }
    // With --profile, each timed run's calls are tagged so CUPTI's records of its work can be set
    // against the events (the profiler crate, through crate::timing::observer); otherwise these are no-ops.
    let window = observer::open_window();
    for (run, pair) in events.chunks(2).enumerate() {
        before()?;
        let _tagged = window.enter_run(run)?;
        check_cuda!(pair[0].record(stream))?;
        work()?;
        check_cuda!(pair[1].record(stream))?;
    }
    wait()?;
    let mut samples_ms = Vec::with_capacity(repetitions);
    for pair in events.chunks(2) {
        samples_ms.push(f64::from(check_cuda!(pair[1].elapsed_time_f32(&pair[0]))?));
    }
    let timing = Timing::gpu(samples_ms);
    window.close(&timing);
    Ok(timing)
}

/// Runs `work` `warmup` times, then `repetitions` times on the host clock. For work that ends by
/// synchronizing (per stream or for the device), where what the host waits for is the lesson.
/// Like [`time_on_stream`], it returns only once the current context's device is idle, on every path.
pub fn time_on_host(warmup: usize, repetitions: usize, mut work: impl FnMut() -> Result<()>) -> Result<Timing> {
    ensure!(repetitions > 0, "--repetitions must be at least 1");
    let _phase = phases::enter(Phase::Gpu);
    let _alone = alone::hold()?;
    let _wait = WaitForDevice;
    for _ in 0..warmup {
        work()?;
    }
    let window = observer::open_window();
    let mut samples_ms = Vec::with_capacity(repetitions);
    for run in 0..repetitions {
        let _tagged = window.enter_run(run)?;
        let start = std::time::Instant::now();
        work()?;
        samples_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let timing = Timing {
        samples_ms,
        clock: Clock::Host,
    };
    window.close(&timing);
    Ok(timing)
}

/// The CPU time, user and system, that getrusage(2) gives for `who`: `libc::RUSAGE_SELF` this
/// process, `libc::RUSAGE_CHILDREN` its children that ended and were waited for (with theirs). Zero
/// where the call fails. What host work costs the cores, beside the clocks above.
pub fn cpu_used(who: libc::c_int) -> Duration {
    let seconds = |time: libc::timeval| {
        let micros = u64::try_from(time.tv_sec).unwrap_or(0) * 1_000_000 + u64::try_from(time.tv_usec).unwrap_or(0);
        Duration::from_micros(micros)
    };
    // SAFETY: rusage is plain integers, for which all zeros is a value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage(2) writes one rusage into `usage`, which lives for the whole call, and keeps no
    // pointer to it.
    match unsafe { libc::getrusage(who, &mut usage) } {
        0 => seconds(usage.ru_utime) + seconds(usage.ru_stime),
        _ => Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_spread_is_the_interquartile_range_over_the_median_and_ignores_one_outlier() {
        let steady = Timing::gpu(vec![1.0, 1.0, 1.02, 0.98, 1.0, 100.0, 1.01, 0.99, 1.0]);
        assert!(
            (steady.relative_spread() - 0.01).abs() < 1e-9,
            "{}",
            steady.relative_spread()
        );
        assert_eq!(Timing::gpu(vec![1.0, 2.0, 3.0, 4.0, 5.0]).relative_spread(), 2.0 / 3.0);
    }

    #[test]
    fn as_printed_is_one_cold_run_and_conflicts_with_repetitions() {
        use clap::Parser;
        #[derive(Parser)]
        struct Lab {
            #[command(flatten)]
            runs: RunsArgs,
        }
        let runs = |args: &[&str]| Lab::try_parse_from([&["lab"], args].concat()).map(|lab| lab.runs.runs());
        assert_eq!(runs(&[]).unwrap(), Runs::warm(3));
        assert_eq!(runs(&["--repetitions", "7"]).unwrap(), Runs::warm(7));
        let cold = runs(&["--as-printed"]).unwrap();
        assert!(cold.cold() && cold.repetitions == 1 && cold.describe().contains("no warm-up"));
        assert!(runs(&["--as-printed", "--repetitions", "3"]).is_err());
        assert!(runs(&["--repetitions", "0"]).is_err());
    }

    #[test]
    fn median_of_an_odd_and_an_even_count() {
        assert_eq!(Timing::gpu(vec![3.0, 1.0, 2.0]).median_ms(), 2.0);
        assert_eq!(Timing::gpu(vec![4.0, 1.0, 3.0, 2.0]).median_ms(), 2.5);
    }

    #[test]
    fn prints_the_slides_line_with_the_spread() {
        let timing = Timing::gpu(vec![2.0, 1.0, 3.0]);
        assert_eq!(
            timing.to_string(),
            "GPU time in ms: 2.0000 (median of 3, min 1.0000, max 3.0000)"
        );
        let host = time_on_host(1, 2, || Ok(())).unwrap();
        assert!(host.to_string().starts_with("host time in ms: ") && host.samples_ms.len() == 2);
    }
}

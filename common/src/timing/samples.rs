//! What a timed loop measured: the samples of [`Timing`] and the [`Clock`] that took them. A module of
//! its own, which uses no other of `common`, so that both the timing loops and their observer can use it.

use std::fmt;

/// Times of the repetitions of one piece of GPU work, in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    pub samples_ms: Vec<f64>,
    pub clock: Clock,
}

/// Which clock took a [`Timing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// CUDA events on a stream: device time.
    Gpu,
    /// The host's monotonic clock around work that ends in a synchronize: what the program waits.
    Host,
}

impl Timing {
    pub fn gpu(samples_ms: Vec<f64>) -> Timing {
        Timing {
            samples_ms,
            clock: Clock::Gpu,
        }
    }

    pub fn median_ms(&self) -> f64 {
        let mut sorted = self.samples_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let middle = sorted.len() / 2;
        if sorted.len().is_multiple_of(2) {
            (sorted[middle - 1] + sorted[middle]) / 2.0
        } else {
            sorted[middle]
        }
    }

    pub fn min_ms(&self) -> f64 {
        self.samples_ms.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn max_ms(&self) -> f64 {
        self.samples_ms.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    /// How widely the samples spread: the interquartile range over the median (0.05: the middle half
    /// lies within 5 % of the median's size). Robust to one slow launch, unlike max - min.
    pub fn relative_spread(&self) -> f64 {
        let mut sorted = self.samples_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let quartile = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        (quartile(0.75) - quartile(0.25)) / self.median_ms()
    }
}

/// `GPU time in ms: 1.234 (median of 10, min 1.200, max 1.300)`, the slides' line plus the spread
/// (`host time in ms: ...` for the host clock).
impl fmt::Display for Timing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clock = match self.clock {
            Clock::Gpu => "GPU",
            Clock::Host => "host",
        };
        write!(
            f,
            "{clock} time in ms: {:.4} (median of {}, min {:.4}, max {:.4})",
            self.median_ms(),
            self.samples_ms.len(),
            self.min_ms(),
            self.max_ms()
        )
    }
}

//! The functions lab-simpson and lab-dynamic-parallel integrate, on the CPU: the same as the functors
//! of `kernels/cuda/integrands.cuh`, with their exact integrals so a lab can print its true error.

use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Integrand {
    /// 4/(1+x^2), the slide's: its integral over [0, 1] is pi.
    Pi,
    /// sin(x).
    Sin,
    /// exp(x).
    Exp,
    /// 1/((x-0.3)^2 + 10^-4): a peak of height 10^4 and width about 0.01 at x = 0.3.
    Peak,
}

/// Half-width of [`Integrand::Peak`]: the peak is 1/((x-0.3)^2 + PEAK_WIDTH^2).
const PEAK_WIDTH: f64 = 0.01;

impl Integrand {
    pub const ALL: [Integrand; 4] = [Integrand::Pi, Integrand::Sin, Integrand::Exp, Integrand::Peak];

    pub fn f(self, x: f64) -> f64 {
        match self {
            Integrand::Pi => 4.0 / (1.0 + x * x),
            Integrand::Sin => x.sin(),
            Integrand::Exp => x.exp(),
            Integrand::Peak => 1.0 / ((x - 0.3) * (x - 0.3) + PEAK_WIDTH * PEAK_WIDTH),
        }
    }

    /// The exact integral over [a, b], from the antiderivative.
    pub fn exact(self, a: f64, b: f64) -> f64 {
        let antiderivative = |x: f64| match self {
            Integrand::Pi => 4.0 * x.atan(),
            Integrand::Sin => -x.cos(),
            Integrand::Exp => x.exp(),
            Integrand::Peak => ((x - 0.3) / PEAK_WIDTH).atan() / PEAK_WIDTH,
        };
        antiderivative(b) - antiderivative(a)
    }

    /// The name on the command line, and the suffix of the kernels' C names (`adaptive_master_pi`).
    pub fn name(self) -> &'static str {
        match self {
            Integrand::Pi => "pi",
            Integrand::Sin => "sin",
            Integrand::Exp => "exp",
            Integrand::Peak => "peak",
        }
    }

    /// The formula, for printing.
    pub fn formula(self) -> &'static str {
        match self {
            Integrand::Pi => "4/(1+x^2)",
            Integrand::Sin => "sin(x)",
            Integrand::Exp => "exp(x)",
            Integrand::Peak => "1/((x-0.3)^2+1e-4)",
        }
    }

    /// Simpson's rule on [x, x+h]: h/6 * (f(x) + 4 f(x+h/2) + f(x+h)), term for term as the kernels
    /// write it, so CPU and GPU differ by rounding only.
    pub fn simpson(self, x: f64, h: f64) -> f64 {
        h / 6.0 * (self.f(x) + 4.0 * self.f(x + h / 2.0) + self.f(x + h))
    }

    /// f'(x), for [`Integrand::simpson_bound`]: how much an error in x moves f(x).
    pub fn derivative(self, x: f64) -> f64 {
        match self {
            Integrand::Pi => -8.0 * x / ((1.0 + x * x) * (1.0 + x * x)),
            Integrand::Sin => x.cos(),
            Integrand::Exp => x.exp(),
            Integrand::Peak => {
                let d = (x - 0.3) * (x - 0.3) + PEAK_WIDTH * PEAK_WIDTH;
                -2.0 * (x - 0.3) / (d * d)
            }
        }
    }

    /// The most a right double-precision kernel's sum of the sub-interval [x, x + h] of [a, b] may
    /// differ from [`Integrand::simpson`]'s, from the rounding the computation allows (issue 66):
    ///
    /// - each point x_k (x, x + h/2, x + h) may be off by `ARGUMENT_ULPS` half-ulps of |a| + |x_k| + h:
    ///   `a + i * h` rounds twice on the CPU, once where nvcc contracts it into an fma, and a kernel
    ///   may write it as `a + (b - a) * i / N`; f then moves by |f'(x_k)| times that;
    /// - each f(x_k) may be off by `FUNCTION_ULPS` half-ulps (CUDA's `sin` is within 2 ulps, glibc's
    ///   within 1, `4/(1+x*x)` rounds three times on either side);
    /// - h / 6 and the weighted sum round a few times more: `SUM_ULPS` half-ulps of the terms' size;
    /// - below the smallest normal double (about 2.2e-308), rounding is absolute: 8 of it, times 1 + h.
    ///
    /// All of it times `MARGIN`. A kernel with a wrong weight, point or sub-interval is off by a share
    /// of the sum itself, far beyond; one in single precision by 1e-7 of it, beyond too.
    ///
    /// Near the largest double there is no bound (infinity): where 6 max|f| max(1, h), with each point
    /// moved by its rounding, reaches half of it (exp beyond x of about 700), one correct order of the
    /// operations overflows and another does not (`(f0 + 4 f1 + f2) * h / 6` against ours, `h / 6 *
    /// (...)`), so the sum may be finite or infinite there; only a NaN is wrong.
    pub fn simpson_bound(self, a: f64, x: f64, h: f64) -> f64 {
        const HALF_ULP: f64 = f64::EPSILON / 2.0;
        const ARGUMENT_ULPS: f64 = 8.0;
        const FUNCTION_ULPS: f64 = 8.0;
        const SUM_ULPS: f64 = 8.0;
        const MARGIN: f64 = 4.0;
        let points = [(x, 1.0), (x + h / 2.0, 4.0), (x + h, 1.0)];
        if self.near_overflow(
            &points.map(|(p, _)| (p, ARGUMENT_ULPS * HALF_ULP * (a.abs() + p.abs() + h.abs()))),
            h,
        ) {
            return f64::INFINITY;
        }
        // Each term scaled by h / 6 at once, so that values near the largest double do not overflow.
        let sixth = h.abs() / 6.0;
        let terms = points.iter().map(|&(p, weight)| {
            let argument = ARGUMENT_ULPS * HALF_ULP * (a.abs() + p.abs() + h.abs());
            let value = sixth * weight * self.f(p).abs();
            let moved = sixth * weight * self.derivative(p).abs() * argument;
            moved + (FUNCTION_ULPS + SUM_ULPS) * HALF_ULP * value
        });
        // Below the smallest normal double, rounding is absolute, and a library may flush to zero:
        // each f, and each step after it, may be off by that much (exp at x = -719 is 1e-313).
        let underflow = 8.0 * f64::MIN_POSITIVE * (1.0 + h.abs());
        MARGIN * (terms.sum::<f64>() + underflow)
    }

    /// Whether some correct order of Simpson's operations on `points` (each with how far rounding may
    /// move it) could overflow: 6 |f| max(1, h) at any of them, moved either way, reaches half the
    /// largest double, or f is infinite there.
    fn near_overflow(self, points: &[(f64, f64); 3], h: f64) -> bool {
        let scale = 6.0 * h.abs().max(1.0);
        points.iter().any(|&(p, moved)| {
            [p - moved, p, p + moved].iter().any(|&q| {
                let size = scale * self.f(q).abs();
                size.is_nan() || size >= f64::MAX / 2.0
            })
        })
    }
}

/// The checks both Simpson labs make of `--a` and `--b`.
pub fn check_interval(a: f64, b: f64) -> anyhow::Result<()> {
    anyhow::ensure!(
        a.is_finite() && b.is_finite(),
        "--a {a} and --b {b} must be finite numbers"
    );
    anyhow::ensure!(b > a, "--b {b} must be greater than --a {a}");
    Ok(())
}

/// [a, b] with each end moved inwards by its own random 64th to 16th of the width (issue 61): a
/// timed launch's fresh interval, of about the case's width, so that the work and the time stay the
/// case's while every sum and the integral change (moving both ends by one amount would keep the
/// integral over whole periods of a periodic integrand). Inside [a, b], an integrand finite on the
/// case's interval stays finite on it, and no larger.
pub fn moved_interval(a: f64, b: f64, random: &mut crate::verify::Random) -> (f64, f64) {
    let mut inwards = || (b - a) * random.uniform(1.0 / 64.0, 1.0 / 16.0);
    (a + inwards(), b - inwards())
}

/// Adds many terms with Neumaier's compensated summation: a million partial sums added naively lose
/// about 1e-13 to rounding, which would hide Simpson's own error.
pub fn compensated_sum(values: &[f64]) -> f64 {
    let mut sum = 0.0;
    let mut compensation = 0.0;
    for &value in values {
        let t = sum + value;
        compensation += if sum.abs() >= value.abs() {
            (sum - t) + value
        } else {
            (value - t) + sum
        };
        sum = t;
    }
    sum + compensation
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// Issue 66, found by week 1's honest corpus on an H200: exp on [-376122.8, 615330.6] in 265665
    /// sub-intervals (h about 3.7) has a sub-interval near x = 705 whose sum, about 8.2e307, is finite
    /// in our order (h / 6 first) and infinite in `(f0 + 4 f1 + f2) * h / 6`. There the bound is
    /// infinite (finite or infinite, only a NaN is wrong); a sub-interval well below keeps its bound.
    #[test]
    fn near_the_largest_double_either_order_of_the_rule_is_right() {
        let (a, h) = (-376122.81647561875, (615330.6062774408 + 376122.81647561875) / 265665.0);
        let edge = a + 100973.0 * h;
        let ours = Integrand::Exp.simpson(edge, h);
        assert!(ours.is_finite() && ours > 1e307, "{ours}");
        let theirs =
            (Integrand::Exp.f(edge) + 4.0 * Integrand::Exp.f(edge + h / 2.0) + Integrand::Exp.f(edge + h)) * h / 6.0;
        assert!(theirs.is_infinite());
        assert_eq!(Integrand::Exp.simpson_bound(a, edge, h), f64::INFINITY);
        let below = a + 100900.0 * h;
        let bound = Integrand::Exp.simpson_bound(a, below, h);
        assert!(
            bound.is_finite() && bound < 1e-6 * Integrand::Exp.simpson(below, h),
            "{bound}"
        );
    }

    #[test]
    fn exact_integrals_are_right() {
        assert_relative_eq!(
            Integrand::Pi.exact(0.0, 1.0),
            std::f64::consts::PI,
            max_relative = 1e-15
        );
        assert_relative_eq!(
            Integrand::Sin.exact(0.0, std::f64::consts::PI),
            2.0,
            max_relative = 1e-15
        );
        assert_relative_eq!(
            Integrand::Exp.exact(0.0, 1.0),
            std::f64::consts::E - 1.0,
            max_relative = 1e-15
        );
        // Nearly all of the peak's area over the whole line, pi/0.01, lies inside [0, 1].
        let peak = Integrand::Peak.exact(0.0, 1.0);
        let whole_line = std::f64::consts::PI / PEAK_WIDTH;
        assert!(peak < whole_line && peak > 0.98 * whole_line, "{peak}");
    }

    #[test]
    fn simpson_on_many_intervals_converges_to_the_exact_value() {
        for integrand in Integrand::ALL {
            let n = 20_000;
            let h = 1.0 / n as f64;
            let sums: Vec<f64> = (0..n).map(|i| integrand.simpson(i as f64 * h, h)).collect();
            let exact = integrand.exact(0.0, 1.0);
            assert_relative_eq!(compensated_sum(&sums), exact, max_relative = 1e-12);
        }
    }

    #[test]
    fn names_are_the_command_line_values() {
        for integrand in Integrand::ALL {
            let value = integrand.to_possible_value().expect("every integrand is a value");
            assert_eq!(value.get_name(), integrand.name());
        }
    }

    #[test]
    fn compensated_sum_keeps_what_naive_summation_loses() {
        let values = [1.0, 1e100, 1.0, -1e100];
        assert_eq!(compensated_sum(&values), 2.0);
        assert_eq!(values.iter().sum::<f64>(), 0.0);
    }
}

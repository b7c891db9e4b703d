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

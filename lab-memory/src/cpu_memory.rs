//! The Chinese notes' CPU half of the bandwidth arithmetic (part (一), "Importance of Locality"):
//! memory to L3 at 20 GB/s in 64-byte lines is 300M lines/s, 2.4G doubles/s; a flop that loads three
//! lines runs at 100 Mflops, 800 Mflops when all 8 doubles of each line are used, against a
//! workstation's 10 Gflops, so data must be reused. Redone for the machine the lab runs on: a read of
//! a large buffer measures the bandwidth (one core, then all), a loop of independent multiply-adds
//! the floating-point rate. `--mode device-query` prints it after the GPU half.

use std::time::Instant;

use anyhow::{ensure, Result};
use common::host_memory::read_rate;
use rayon::prelude::*;

/// The CPU's cache line in the notes (and on today's x86 and Arm servers): 8 doubles.
pub const LINE_BYTES: f64 = 64.0;
/// Size of the buffer the bandwidth read goes through: far more than any CPU's caches.
pub const READ_BYTES: usize = 512 << 20;
/// Independent multiply-add chains per thread in the flops loop: enough to fill the pipelines.
const CHAINS: usize = 32;

/// The machine's figures: bandwidth (B/s) and double-precision flop rate (FLOP/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    pub bandwidth: f64,
    pub flops: f64,
}

/// One line of the notes' arithmetic: what they computed, their figure, and the same for a machine.
pub struct NotesLine {
    pub notes: &'static str,
    pub their_figure: &'static str,
    pub unit: &'static str,
    pub value: fn(Machine) -> f64,
}

/// Part (一) of the notes, line by line.
pub const NOTES_LINES: [NotesLine; 7] = [
    NotesLine {
        notes: "memory to L3 bandwidth",
        their_figure: "20 GB/s",
        unit: "GB/s",
        value: |m| m.bandwidth / 1e9,
    },
    NotesLine {
        notes: "/ 64 bytes a line",
        their_figure: "300M lines/s",
        unit: "M lines/s",
        value: |m| m.bandwidth / LINE_BYTES / 1e6,
    },
    NotesLine {
        notes: "x 8 doubles a line",
        their_figure: "2.4G doubles/s",
        unit: "G doubles/s",
        value: |m| m.bandwidth / 8.0 / 1e9,
    },
    NotesLine {
        notes: "a flop loads 3 lines (two inputs, one output)",
        their_figure: "100 Mflops",
        unit: "Mflops",
        value: |m| m.bandwidth / LINE_BYTES / 3.0 / 1e6,
    },
    NotesLine {
        notes: "all 8 doubles of every line used",
        their_figure: "800 Mflops",
        unit: "Mflops",
        value: |m| m.bandwidth / 8.0 / 3.0 / 1e6,
    },
    NotesLine {
        notes: "the CPU's own rate (ours: measured multiply-adds)",
        their_figure: "10 Gflops (a workstation)",
        unit: "Gflops",
        value: |m| m.flops / 1e9,
    },
    NotesLine {
        notes: "flops per double loaded to keep it busy (its rate / the rate with all 8 doubles used)",
        their_figure: "(not computed: \"reuse the data\")",
        unit: "flops",
        value: |m| m.flops / (m.bandwidth / 8.0 / 3.0),
    },
];

/// `steps` rounds of `x = x * m + c` on [`CHAINS`] independent chains per thread, on `threads` threads:
/// two flops each. Returns flops per second, after checking every chain against the closed form
/// m^steps * x + c * (1 - m^steps) / (1 - m).
pub fn multiply_add_rate(threads: usize, steps: usize) -> Result<f64> {
    let (m, c) = (0.999_999_f64, 1e-6_f64);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let start = Instant::now();
    let chains: Vec<[f64; CHAINS]> = pool.install(|| {
        (0..threads)
            .into_par_iter()
            .map(|t| {
                let mut x: [f64; CHAINS] = std::array::from_fn(|k| 1.0 + (t * CHAINS + k) as f64 * 1e-3);
                for _ in 0..steps {
                    for value in &mut x {
                        *value = *value * m + c;
                    }
                }
                x
            })
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let power = m.powi(steps as i32);
    for (t, chain) in chains.iter().enumerate() {
        for (k, &value) in chain.iter().enumerate() {
            let x0 = 1.0 + (t * CHAINS + k) as f64 * 1e-3;
            let expected = power * x0 + c * (1.0 - power) / (1.0 - m);
            ensure!(
                (value - expected).abs() <= 1e-6 * expected.abs(),
                "multiply-add chain {t}.{k} ended at {value}, not {expected}"
            );
        }
    }
    Ok(2.0 * (threads * CHAINS * steps) as f64 / seconds)
}

/// Measures this machine on one core and on all of them: (one core, all cores).
pub fn measure(repetitions: usize) -> Result<(Machine, Machine)> {
    let words: Vec<u64> = (0..(READ_BYTES / 8) as u64).collect();
    let all = rayon::current_num_threads();
    let steps = 4_000_000;
    let one = Machine {
        bandwidth: read_rate(&words, 1, repetitions)?,
        flops: multiply_add_rate(1, steps)?,
    };
    let every = Machine {
        bandwidth: read_rate(&words, all, repetitions)?,
        flops: multiply_add_rate(all, steps)?,
    };
    Ok((one, every))
}

/// The notes' CPU arithmetic beside this machine's, one core and all.
pub fn report(repetitions: usize) -> Result<()> {
    let (one, every) = measure(repetitions)?;
    println!(
        "\nThe Chinese notes' CPU half for this machine ({} cores; a read of {} MiB, the fastest of {repetitions}; multiply-adds as this build compiles them):\n",
        rayon::current_num_threads(),
        READ_BYTES >> 20
    );
    println!("| the notes' arithmetic | their figure | this CPU, one core | this CPU, all cores |");
    println!("|-----------------------|--------------|--------------------|---------------------|");
    for line in &NOTES_LINES {
        println!(
            "| {} | {} | {:.1} {} | {:.1} {} |",
            line.notes,
            line.their_figure,
            (line.value)(one),
            line.unit,
            (line.value)(every),
            line.unit
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notes_figures_come_back_from_the_notes_own_inputs() {
        // 20 GB/s and 10 Gflops: the notes round 312.5M lines/s to 300M, 104 Mflops to 100 and 833 to 800.
        let notes = Machine {
            bandwidth: 20e9,
            flops: 10e9,
        };
        let values: Vec<f64> = NOTES_LINES.iter().map(|line| (line.value)(notes)).collect();
        assert_eq!(values[0], 20.0);
        assert_eq!(values[1], 312.5);
        assert_eq!(values[2], 2.5);
        assert!((values[3] - 104.17).abs() < 0.01);
        assert!((values[4] - 833.33).abs() < 0.01);
        assert_eq!(values[5], 10.0);
        assert!((values[6] - 12.0).abs() < 1e-9);
    }

    #[test]
    fn the_chains_end_at_their_closed_form() {
        assert!(multiply_add_rate(2, 1000).unwrap() > 0.0);
        assert!(multiply_add_rate(1, 100_000).unwrap() > 0.0);
    }
}

//! The German slides' stream experiment: COUNT independent products of random N x N double matrices,
//! run the ways of their table. lab-streams runs it from pageable memory, lab-pinned from pinned
//! memory; the host storage is the batch's type parameter, the programs are the same.
//!
//! | program (slide)          | here                     |
//! |--------------------------|--------------------------|
//! | `mmm`                    | [`Batch::serial`]        |
//! | `mmm-without-transfers`  | [`Batch::kernels_only`]  |
//! | `mmm-streamed`           | [`Batch::streamed`]      |

use anyhow::{ensure, Result};
use cust::function::Function;
use cust::stream::Stream;
use rayon::prelude::*;

use crate::mmm::{launch_mmm, launch_mmm_maybe_stamped, CpuProduct, ProductCheck};
use crate::{HostStorage, Matrix};
use common::check_cuda;
use common::context::{fork, join, Streams};
use common::host_memory::fresh_pages;
use common::timing::{time_on_stream, Runs, Timing};
use common::verify::{Poison, Random};
use profiler::timeline::{kernel_step, record, step, stream_lanes, Kernel, Kind, Recorder, Span};

/// The slides' nvprof totals on their Fermi GPU in ms, written once for every table that sets ours
/// beside them. Their ratios are taken against `MMM_WITHOUT_TRANSFERS`.
pub mod slide_ms {
    pub const MMM: f64 = 2034.15;
    pub const MMM_WITHOUT_TRANSFERS: f64 = 1641.09;
    pub const MMM_STREAMED: f64 = 1850.16;
    pub const MMM_STREAMED_AND_PINNED: f64 = 1712.28;
    pub const MMM_MAPPED: f64 = 3047.22;
}

/// One program of the table, timed and checked.
#[derive(Debug, Clone)]
pub struct Measured {
    pub timing: Timing,
    /// The worst product of the batch against the CPU.
    pub check: ProductCheck,
}

/// COUNT products C_i = A_i * B_i, each matrix with a host and a device copy.
pub struct Batch<H: HostStorage<f64>> {
    pub a: Vec<Matrix<f64, H>>,
    pub b: Vec<Matrix<f64, H>>,
    pub c: Vec<Matrix<f64, H>>,
    pub block_size: u32,
    /// The CPU's A_i * B_i, made at the first check and reused by every later program's check.
    references: Vec<CpuProduct>,
}

impl<H: HostStorage<f64>> Batch<H> {
    /// Random A_i and B_i, already copied to the GPU (so `kernels_only` finds them there), and C's
    /// device copy allocated: cuMemAlloc during the timed programs would serialize the streams.
    pub fn random(count: usize, n: usize, block_size: u32, seed: u64) -> Result<Self> {
        let mut batch = Self::random_on_host(count, n, block_size, seed)?;
        batch.upload()?;
        Ok(batch)
    }

    /// The same matrices (for the same seed) with no device copies: for mapped memory, which kernels
    /// read where it is.
    pub fn random_on_host(count: usize, n: usize, block_size: u32, seed: u64) -> Result<Self> {
        ensure!(count > 0, "the batch needs at least one product");
        let mut random = Random::new(seed);
        let mut batch = Batch {
            a: Vec::new(),
            b: Vec::new(),
            c: Vec::new(),
            block_size,
            references: Vec::new(),
        };
        for _ in 0..count {
            batch.a.push(Matrix::random(n, n, &mut random)?);
            batch.b.push(Matrix::random(n, n, &mut random)?);
            batch.c.push(Matrix::new(n, n)?);
        }
        Ok(batch)
    }

    /// The same A_i and B_i as `other`, in this batch's host memory, copied to the GPU like
    /// [`Batch::random`] does: lab-pinned's pinned batch is its pageable batch, copied.
    pub fn copy_of<G: HostStorage<f64>>(other: &Batch<G>) -> Result<Self> {
        let copy = |matrices: &[Matrix<f64, G>]| matrices.iter().map(Matrix::convert).collect::<Result<Vec<_>>>();
        let mut batch = Batch {
            a: copy(&other.a)?,
            b: copy(&other.b)?,
            c: copy(&other.c)?,
            block_size: other.block_size,
            references: Vec::new(),
        };
        batch.upload()?;
        Ok(batch)
    }

    /// A and B copied to the GPU (so `kernels_only` finds them there) and C's device copy allocated:
    /// cuMemAlloc during the timed programs would serialize the streams.
    fn upload(&mut self) -> Result<()> {
        for matrix in self.a.iter_mut().chain(&mut self.b) {
            matrix.copy_to_gpu()?;
        }
        for c in &mut self.c {
            c.allocate_on_gpu()?;
        }
        Ok(())
    }

    pub fn count(&self) -> usize {
        self.a.len()
    }

    /// Device bytes the batch needs, for the check against free GPU memory. Saturates at u64::MAX
    /// (any user's --size and --count), so a batch no machine holds is refused, not wrapped around.
    pub fn bytes(count: usize, n: usize) -> u64 {
        let bytes = 3 * count as u128 * n as u128 * n as u128 * std::mem::size_of::<f64>() as u128;
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }

    /// NaN into every C, host and (where there is one) device copy, so a product a program skipped
    /// cannot pass.
    pub fn poison_results(&mut self) -> Result<()> {
        for c in &mut self.c {
            if c.is_on_gpu() {
                c.poison_on_gpu()?;
            }
            c.data_mut().par_iter_mut().for_each(|x| *x = f64::POISON);
        }
        Ok(())
    }

    /// `mmm`: per product, copy A and B in, run the kernel, copy C out, all in order on the default
    /// stream (synchronous copies; the kernel on `stream`, which syncs with the NULL stream).
    pub fn serial(&mut self, mmm: &Function, stream: &Stream) -> Result<()> {
        for i in 0..self.count() {
            let (a, b, c) = (&mut self.a[i], &mut self.b[i], &mut self.c[i]);
            a.copy_to_gpu()?;
            b.copy_to_gpu()?;
            launch_mmm(mmm, a.view()?, b.view()?, c.view()?, self.block_size, stream)?;
            c.copy_from_gpu()?;
        }
        Ok(())
    }

    /// `mmm-without-transfers`: the kernels alone, on matrices already on the GPU.
    pub fn kernels_only(&mut self, mmm: &Function, stream: &Stream) -> Result<()> {
        for i in 0..self.count() {
            launch_mmm(
                mmm,
                self.a[i].view()?,
                self.b[i].view()?,
                self.c[i].view()?,
                self.block_size,
                stream,
            )?;
        }
        Ok(())
    }

    /// `mmm-streamed`: product i on stream i, its copies with cudaMemcpyAsync and its kernel with
    /// `<<<..., stream>>>`; forked from `main` and joined back into it, so events on `main` time it.
    /// With a recorder, the copies lie between events and the kernels are the stamped twins.
    ///
    /// # Safety
    /// The copies run after this returns, also when it returns an error: until the device has finished
    /// them (synchronize `main` after an `Ok`, the device after an error), the batch must not be read,
    /// written or dropped. [`time_on_stream`] and [`record`] wait so on every path.
    pub unsafe fn streamed(
        &mut self,
        mmm: &Kernel,
        main: &Stream,
        streams: &Streams,
        mut recorder: Option<&mut Recorder>,
    ) -> Result<()> {
        ensure!(streams.len() == self.count(), "one stream per product");
        fork(main, streams)?;
        let block_size = self.block_size;
        for (i, stream) in streams.iter().enumerate() {
            let (a, b, c) = (&mut self.a[i], &mut self.b[i], &mut self.c[i]);
            step(&mut recorder, stream, i, Kind::CopyIn, &format!("A{i}, B{i}"), || {
                // SAFETY: this function's own contract: the batch stays untouched until the copies ran.
                unsafe {
                    a.copy_to_gpu_async(stream)?;
                    b.copy_to_gpu_async(stream)
                }
            })?;
            kernel_step(&mut recorder, i, &format!("mmm {i}"), |stamp| {
                launch_mmm_maybe_stamped(mmm, (a.view()?, b.view()?, c.view()?), block_size, stream, stamp)
            })?;
            // SAFETY: as for the copies in.
            step(&mut recorder, stream, i, Kind::CopyOut, &format!("C{i}"), || unsafe {
                c.copy_from_gpu_async(stream)
            })?;
        }
        join(main, streams)
    }

    /// Copies every C back (for `kernels_only`, whose products stay on the GPU).
    pub fn copy_results_from_gpu(&mut self) -> Result<()> {
        for c in &mut self.c {
            c.copy_from_gpu()?;
        }
        Ok(())
    }

    /// Before a program's runs: C poisoned ([`Batch::poison_results`]); for a cold run from pageable
    /// memory, C's host pages then given back ([`fresh_pages`]), as the slide's C from `new[]` that
    /// nothing touched before its copy back. A product left uncopied still fails: its C reads 0.
    fn before_runs(&mut self, runs: Runs) -> Result<()> {
        self.poison_results()?;
        if runs.cold() && H::PAGEABLE {
            for c in &mut self.c {
                // SAFETY: H::PAGEABLE: a Vec's memory from the allocator, never registered.
                unsafe { fresh_pages(c.data_mut()) };
            }
        }
        Ok(())
    }

    /// `serial`, timed on `main` as `runs` says, then checked.
    pub fn time_serial(&mut self, mmm: &Function, main: &Stream, runs: Runs, random: &mut Random) -> Result<Measured> {
        self.before_runs(runs)?;
        let timing = time_on_stream(main, runs.warmup, runs.repetitions, || self.serial(mmm, main))?;
        self.finish(main, timing, random)
    }

    /// `kernels_only`, timed on `main` as `runs` says, then C copied back and checked.
    pub fn time_kernels_only(
        &mut self,
        mmm: &Function,
        main: &Stream,
        runs: Runs,
        random: &mut Random,
    ) -> Result<Measured> {
        self.before_runs(runs)?;
        let timing = time_on_stream(main, runs.warmup, runs.repetitions, || self.kernels_only(mmm, main))?;
        check_cuda!(main.synchronize())?; // faults of any kernel show up here
        self.copy_results_from_gpu()?;
        Ok(Measured {
            timing,
            check: self.check(random),
        })
    }

    /// `streamed`, timed on `main` (fork and join) as `runs` says, then checked.
    pub fn time_streamed(
        &mut self,
        mmm: &Kernel,
        main: &Stream,
        streams: &Streams,
        runs: Runs,
        random: &mut Random,
    ) -> Result<Measured> {
        self.before_runs(runs)?;
        // SAFETY: time_on_stream returns only once the device has finished, on every path; `self` is
        // borrowed until then.
        let timing = time_on_stream(main, runs.warmup, runs.repetitions, || unsafe {
            self.streamed(mmm, main, streams, None)
        })?;
        self.finish(main, timing, random)
    }

    /// One more `streamed` run, recorded for the chronogram.
    pub fn record_streamed(&mut self, mmm: &Kernel, main: &Stream, streams: &Streams) -> Result<Vec<Span>> {
        // SAFETY: as in time_streamed: record returns only once the device has finished.
        record(main, |recorder| unsafe {
            self.streamed(mmm, main, streams, Some(recorder))
        })
    }

    fn finish(&mut self, main: &Stream, timing: Timing, random: &mut Random) -> Result<Measured> {
        check_cuda!(main.synchronize())?; // faults of any kernel show up here
        Ok(Measured {
            timing,
            check: self.check(random),
        })
    }

    /// Lanes for the chronogram: one per stream.
    pub fn lanes(&self) -> Vec<String> {
        stream_lanes(self.count())
    }

    /// Checks every C against its A * B on the CPU (computed at the first check, then reused); the
    /// worst check comes first.
    pub fn check(&mut self, random: &mut Random) -> ProductCheck {
        while self.references.len() < self.count() {
            let i = self.references.len();
            self.references.push(CpuProduct::new(&self.a[i], &self.b[i], random));
        }
        let mut checks: Vec<ProductCheck> = (0..self.count())
            .map(|i| self.references[i].check(&self.a[i], &self.b[i], &self.c[i], random))
            .collect();
        checks.sort_by(|x, y| y.error.total_cmp(&x.error));
        checks.swap_remove(0)
    }
}

/// The table of the streams labs: each program's GPU time, its ratio to the kernels alone
/// (`kernels_ms`), and the slides' Fermi time and ratio where the slides have one.
pub fn slide_table(rows: &[(&str, &Measured, Option<f64>)], kernels_ms: f64) -> String {
    let mut table = String::from(
        "| program | GPU time in ms | ratio to kernels only | slide (Fermi) ms | slide ratio | check |\n\
         |---------|----------------|-----------------------|------------------|-------------|-------|\n",
    );
    for (name, measured, slide_ms) in rows {
        let (slide_ms, slide_ratio) = match slide_ms {
            Some(ms) => (
                format!("{ms:.2}"),
                format!("{:.3}", ms / slide_ms::MMM_WITHOUT_TRANSFERS),
            ),
            None => ("-".to_string(), "-".to_string()),
        };
        table.push_str(&format!(
            "| {name} | {:.2} | {:.3} | {slide_ms} | {slide_ratio} | {} (max rel. error {:.1e}) |\n",
            measured.timing.median_ms(),
            measured.timing.median_ms() / kernels_ms,
            if measured.check.passed() { "PASS" } else { "FAIL" },
            measured.check.error
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slide_table_puts_our_ratio_beside_the_slides() {
        let measured = |ms| Measured {
            timing: Timing::gpu(vec![ms]),
            check: ProductCheck {
                error: 1e-16,
                worst: (0, 0),
                method: "exact",
                tolerance: 1e-12,
            },
        };
        let (kernels, streamed) = (measured(100.0), measured(125.0));
        let table = slide_table(
            &[
                ("mmm-without-transfers", &kernels, Some(slide_ms::MMM_WITHOUT_TRANSFERS)),
                ("x", &streamed, None),
            ],
            100.0,
        );
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[2],
            "| mmm-without-transfers | 100.00 | 1.000 | 1641.09 | 1.000 | PASS (max rel. error 1.0e-16) |"
        );
        assert_eq!(
            lines[3],
            "| x | 125.00 | 1.250 | - | - | PASS (max rel. error 1.0e-16) |"
        );
    }

    /// A cold run from pageable memory leaves C's pages fresh (zeros) instead of NaN: a product no
    /// program copied back must still fail.
    #[test]
    fn an_uncopied_product_fails_after_fresh_pages_too() {
        let mut batch = Batch::<Vec<f64>>::random_on_host(2, 300, 16, 3).unwrap();
        batch.before_runs(Runs::AS_PRINTED).unwrap();
        let c = batch.c[0].data();
        assert!(c.iter().all(|x| *x == 0.0 || x.is_nan()) && c.iter().filter(|x| **x == 0.0).count() > c.len() / 2);
        let check = batch.check(&mut Random::new(4));
        assert!(!check.passed(), "{check:?}");
    }
}

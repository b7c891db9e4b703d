//! `--mode registers`: the Korean notes' `-maxrregcount` ("registers beyond the cap go to local memory,
//! in DRAM"). `register_pressure` (`kernels/cuda/registers.cu`) keeps [`LIVE`] floats live through its
//! loop; build.rs compiles it once per cap in `kernels::REGISTER_CAPS` and once without. Each variant's
//! ptxas report gives its registers and spills, the driver its blocks per multiprocessor, events its time.

use anyhow::{Context as _, Result};
use common::check_cuda;
use common::device_info::DeviceInfo;
use common::gpu::Gpu;
use common::phases::{self, Phase};
use common::ptxas_view::print_ptxas;
use common::timing::{time_on_stream, Timing};
use common::verify::{check_cell, poisoned_device_buffer, Random};
use cust::function::{BlockSize, FunctionAttribute};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use kernels::ptxas::FunctionResources;
use kernels::KernelImage;
use rayon::prelude::*;

use crate::{blocks_for, new_stream};

/// `LIVE` in registers.cu: the floats each thread keeps.
pub const LIVE: usize = 32;
/// Threads per block.
pub const BLOCK: u32 = 256;
/// The kernel in every variant.
pub const KERNEL: &str = "register_pressure";

/// One round of the loop on one thread's values, in the kernel's order (each update sees the ones
/// before it): `acc[j] = fma(fma(acc[j], acc[j+1], acc[j+5]), 0.25, 0.5)`, indices wrapping.
fn round(acc: &mut [f32; LIVE]) {
    for j in 0..LIVE {
        acc[j] = acc[j]
            .mul_add(acc[(j + 1) % LIVE], acc[(j + 5) % LIVE])
            .mul_add(0.25, 0.5);
    }
}

/// What thread `i` of `n` writes: its LIVE inputs `input[j * n + i]` through `rounds` rounds, summed.
pub fn thread_result(input: &[f32], n: usize, i: usize, rounds: usize) -> f32 {
    let mut acc: [f32; LIVE] = std::array::from_fn(|j| input[j * n + i]);
    for _ in 0..rounds {
        round(&mut acc);
    }
    acc.iter().fold(0.0f32, |sum, x| sum + x)
}

/// A variant: its cap, its ptxas resources, its occupancy.
pub struct Variant {
    pub cap: Option<u32>,
    pub image: &'static KernelImage,
    pub resources: FunctionResources,
}

impl Variant {
    /// Every cap, tightest first, then the uncapped build; resources as ptxas gave them for the code a
    /// GPU of architecture `arch` runs.
    pub fn all(arch: u32) -> Result<Vec<Variant>> {
        kernels::REGISTER_CAPS
            .iter()
            .map(|(cap, image)| {
                let (_, report) = image.report_for(arch).map_err(anyhow::Error::msg)?;
                let resources = report
                    .function(KERNEL)
                    .with_context(|| format!("{KERNEL} is not in the report of {:?}", image.flags))?
                    .clone();
                Ok(Variant {
                    cap: *cap,
                    image,
                    resources,
                })
            })
            .collect()
    }

    pub fn label(&self) -> String {
        self.cap
            .map_or("none".to_string(), |cap| format!("-maxrregcount={cap}"))
    }
}

/// Random inputs for `n` threads and the rounds; [`run`] checks against [`thread_result`].
pub struct Work {
    pub n: usize,
    pub rounds: usize,
    pub input: Vec<f32>,
    /// Threads the check recomputes on the CPU: every one, or every `step`-th for big runs.
    pub step: usize,
}

impl Work {
    pub fn new(n: usize, rounds: usize, step: usize, seed: u64) -> Work {
        let mut input = vec![0.0f32; LIVE * n];
        Random::new(seed).fill(&mut input, |random| random.uniform(-1.0, 1.0) as f32);
        Work {
            n,
            rounds,
            input,
            step: step.max(1),
        }
    }

    /// The threads the check covers: every `step`-th from 0, and the last.
    pub fn checked(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.n)
            .step_by(self.step)
            .chain((!(self.n - 1).is_multiple_of(self.step)).then_some(self.n - 1))
    }
}

/// The measured side of a variant.
pub struct Measured {
    pub timing: Timing,
    /// Registers per thread of the loaded kernel (the driver's: the code that runs, also where the
    /// driver compiled it from PTX and ptxas's report is an older architecture's).
    pub registers: u32,
    pub blocks_per_multiprocessor: u32,
    pub checked: usize,
    pub wrong: usize,
}

impl Measured {
    pub fn occupancy(&self, info: &DeviceInfo) -> f64 {
        f64::from(self.blocks_per_multiprocessor * BLOCK) / f64::from(info.max_threads_per_multiprocessor)
    }
}

/// Loads the variant, asks the driver its occupancy, times it on `work` and checks it.
pub fn run(variant: &Variant, work: &Work, repetitions: usize) -> Result<Measured> {
    let module = common::gpu::load_image(variant.image)?;
    let function = check_cuda!(module.get_function(KERNEL))?;
    let registers = check_cuda!(function.get_attribute(FunctionAttribute::NumRegisters))? as u32;
    let blocks_per_multiprocessor = check_cuda!(function.max_active_blocks_per_multiprocessor(BlockSize::x(BLOCK), 0))?;
    let input = check_cuda!(DeviceBuffer::from_slice(&work.input))?;
    let out = poisoned_device_buffer::<f32>(work.n)?;
    let stream = new_stream()?;
    let grid = blocks_for(work.n, BLOCK);
    let _named = common::timing::observer::program(&variant.cap.map_or("registers: no cap".to_string(), |cap| {
        format!("registers: -maxrregcount {cap}")
    }));
    let timing = time_on_stream(&stream, 1, repetitions, || {
        // __global__ void register_pressure(const float* in, float* out, int n, int rounds)
        // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and
        // point into live device buffers as large as the kernel indexes.
        check_cuda!(unsafe {
            launch!(function<<<grid, BLOCK, 0, stream>>>(input.as_device_ptr(), out.as_device_ptr(), work.n as i32, work.rounds as i32))
        })?;
        Ok(())
    })?;
    let mut back = vec![0.0f32; work.n];
    check_cuda!(out.copy_to(&mut back[..]))?;
    let _phase = phases::enter(Phase::Verify);
    let checked: Vec<usize> = work.checked().collect();
    let wrong = checked
        .par_iter()
        .filter(|&&i| back[i].to_bits() != thread_result(&work.input, work.n, i, work.rounds).to_bits())
        .count();
    Ok(Measured {
        timing,
        registers,
        blocks_per_multiprocessor,
        checked: checked.len(),
        wrong,
    })
}

/// `--mode registers`: the register-pressure kernel, `rounds` rounds a thread, under every cap:
/// registers, spills, occupancy, time; with `ptxas`, each variant's ptxas report too. Returns whether
/// every variant computed what the CPU computes.
pub fn report(gpu: &Gpu, rounds: usize, ptxas: bool, repetitions: usize, seed: u64) -> Result<bool> {
    // Eight blocks of 256 per multiprocessor, twice over: every variant fills the GPU at least twice.
    let n = 2 * 2048 * gpu.info.multiprocessors as usize;
    let work = Work::new(n, rounds, 61, seed);
    let variants = Variant::all(gpu.info.arch())?;
    let (code, _) = kernels::REGISTERS
        .report_for(gpu.info.arch())
        .map_err(anyhow::Error::msg)?;
    println!(
        "\nRegister caps: {} threads keep {} floats live through {} rounds (the CPU recomputes one thread in {})",
        n, LIVE, rounds, work.step
    );
    println!(
        "Registers are the loaded kernel's (the driver's); spills and stack frame are ptxas's for {} (this GPU runs {}); ptxas's floor and choices differ by architecture.\n",
        kernels::arch_name(code.build().arch),
        code.describe()
    );
    let mut rows = Vec::new();
    let mut passed = true;
    for variant in &variants {
        let measured = run(variant, &work, repetitions)?;
        passed &= measured.wrong == 0;
        rows.push(measured);
    }
    let uncapped = rows.last().map_or(1.0, |m| m.timing.median_ms());
    println!("| -maxrregcount | registers | spill stores | spill loads | stack frame | blocks of {} per SM (occupancy) | GPU time in ms | vs no cap | check |", BLOCK);
    println!("|---------------|-----------|--------------|-------------|-------------|-------------------------------|----------------|-----------|-------|");
    for (variant, m) in variants.iter().zip(&rows) {
        let r = &variant.resources;
        println!(
            "| {} | {} | {} B | {} B | {} B | {} ({:.0}%) | {:.4} | {:.2}x | {} |",
            variant.cap.map_or("none".to_string(), |cap| cap.to_string()),
            m.registers,
            r.spill_stores,
            r.spill_loads,
            r.stack_frame_bytes,
            m.blocks_per_multiprocessor,
            100.0 * m.occupancy(&gpu.info),
            m.timing.median_ms(),
            m.timing.median_ms() / uncapped,
            check_cell(m.wrong)
        );
    }
    if ptxas {
        for variant in &variants {
            println!("\n{}:", variant.label());
            let module = common::gpu::load_image(variant.image)?;
            let function = check_cuda!(module.get_function(KERNEL))?;
            print_ptxas(variant.image, KERNEL, &function, &gpu.info, BLOCK)?;
        }
    }
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_keep_values_in_range_and_change_them() {
        let work = Work::new(3, 0, 1, 2);
        let start = thread_result(&work.input, 3, 1, 0);
        let expected: f32 = (0..LIVE).fold(0.0, |s, j| s + work.input[j * 3 + 1]);
        assert_eq!(start, expected);
        let mut acc: [f32; LIVE] = std::array::from_fn(|j| work.input[j * 3]);
        for _ in 0..1000 {
            round(&mut acc);
            assert!(acc.iter().all(|x| x.abs() <= 1.0));
        }
        assert_ne!(thread_result(&work.input, 3, 0, 5), thread_result(&work.input, 3, 0, 6));
        assert!(include_str!("../../kernels/cuda/registers.cu").contains(&format!("#define LIVE {LIVE}")));
    }

    #[test]
    fn the_check_covers_every_step_th_thread_and_the_last() {
        let at = |n, step| {
            Work {
                n,
                rounds: 1,
                input: vec![],
                step,
            }
            .checked()
            .collect::<Vec<_>>()
        };
        assert_eq!(at(10, 1), (0..10).collect::<Vec<_>>());
        assert_eq!(at(10, 4), [0, 4, 8, 9]);
        assert_eq!(at(9, 4), [0, 4, 8]);
        assert_eq!(at(1, 7), [0]);
    }

    #[test]
    fn every_variant_is_there_uncapped_last() {
        let variants = Variant::all(kernels::BUILT_ARCHS[0]).unwrap();
        assert_eq!(variants.len(), kernels::REGISTER_CAPS.len());
        assert_eq!(variants.last().unwrap().label(), "none");
        assert_eq!(variants[0].label(), "-maxrregcount=16");
    }
}

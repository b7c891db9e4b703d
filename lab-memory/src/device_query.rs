//! `--mode device-query`: what `cudaGetDeviceProperties` tells (the Greek slides loop over the devices
//! and read `maxThreadsPerBlock`, `sharedMemoryPerBlock`, ...), like the toolkit's deviceQuery, plus the
//! figures that follow from it: peak memory bandwidth, resident threads, FP32 and FP64 throughput. The
//! bandwidth is then measured with a device-to-device copy, checked element by element.

use anyhow::Result;
use common::check_cuda;
use common::device_info::DeviceInfo;
use common::format_bytes;
use common::gpu::Gpu;
use common::phases::{self, Phase};
use common::timing::{time_on_stream, Timing};
use common::verify::Random;
use cust::device::{Device, DeviceAttribute};
use cust::memory::{CopyDestination, DeviceBuffer};
use rayon::prelude::*;

/// FP32 lanes and FP64 units per multiprocessor by compute capability (the CUDA programming guide's
/// throughput table); `None` for one this table does not know.
pub fn units_per_multiprocessor((major, minor): (i32, i32)) -> Option<(u32, u32)> {
    match (major, minor) {
        (12, 0) | (12, 1) => Some((128, 2)),
        (10, 0) => Some((128, 64)),
        (9, 0) => Some((128, 64)),
        (8, 0) => Some((64, 32)),
        (8, 6) | (8, 7) | (8, 9) => Some((128, 2)),
        (7, 0) => Some((64, 32)),
        (7, 5) => Some((64, 2)),
        (6, 0) => Some((64, 32)),
        _ => None,
    }
}

/// The properties and the figures derived from them.
#[derive(Debug, Clone)]
pub struct Query {
    pub info: DeviceInfo,
    /// The multiprocessors' clock (kHz), the highest the driver reports.
    pub clock_khz: u32,
    pub max_grid_z: u32,
    pub max_block: (u32, u32, u32),
}

impl Query {
    pub fn read(device: Device, info: DeviceInfo) -> Result<Query> {
        let get = |attribute| -> Result<u32> { Ok(check_cuda!(device.get_attribute(attribute))? as u32) };
        Ok(Query {
            clock_khz: get(DeviceAttribute::ClockRate)?,
            max_grid_z: get(DeviceAttribute::MaxGridDimZ)?,
            max_block: (
                get(DeviceAttribute::MaxBlockDimX)?,
                get(DeviceAttribute::MaxBlockDimY)?,
                get(DeviceAttribute::MaxBlockDimZ)?,
            ),
            info,
        })
    }

    /// Threads the GPU holds at once.
    pub fn resident_threads(&self) -> u64 {
        u64::from(self.info.multiprocessors) * u64::from(self.info.max_threads_per_multiprocessor)
    }

    /// Peak FP32 and FP64 FLOP/s without tensor cores: units x 2 (a fused multiply-add) x clock.
    pub fn peak_flops(&self) -> Option<(f64, f64)> {
        let (fp32, fp64) = units_per_multiprocessor(self.info.compute_capability)?;
        let per_unit = 2.0 * f64::from(self.info.multiprocessors) * f64::from(self.clock_khz) * 1e3;
        Some((per_unit * f64::from(fp32), per_unit * f64::from(fp64)))
    }

    /// The listing, one property per line.
    pub fn lines(&self) -> Vec<(String, String)> {
        let i = &self.info;
        let (major, minor) = i.compute_capability;
        let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
        let mut lines = vec![
            ("name".to_string(), i.name.clone()),
            ("compute capability".into(), format!("{major}.{minor}")),
            ("multiprocessors".into(), i.multiprocessors.to_string()),
            ("clock (highest)".into(), format!("{} MHz", self.clock_khz / 1000)),
            ("global memory".into(), format_bytes(i.total_memory)),
            ("memory clock".into(), format!("{} MHz", i.memory_clock_khz / 1000)),
            ("memory bus width".into(), format!("{} bits", i.memory_bus_width_bits)),
            ("L2 cache".into(), format_bytes(i.l2_bytes.into())),
            ("constant memory".into(), format_bytes(i.total_constant_memory.into())),
            (
                "shared memory per block".into(),
                format!(
                    "{} ({} opt-in)",
                    format_bytes(i.shared_per_block.into()),
                    format_bytes(i.shared_per_block_optin.into())
                ),
            ),
            (
                "shared memory per multiprocessor".into(),
                format_bytes(i.shared_per_multiprocessor.into()),
            ),
            ("registers per block".into(), i.registers_per_block.to_string()),
            (
                "registers per multiprocessor".into(),
                i.registers_per_multiprocessor.to_string(),
            ),
            ("warp size".into(), i.warp_size.to_string()),
            ("max threads per block".into(), i.max_threads_per_block.to_string()),
            (
                "max block dimensions".into(),
                format!("{} x {} x {}", self.max_block.0, self.max_block.1, self.max_block.2),
            ),
            (
                "max grid dimensions".into(),
                format!("{} x {} x {}", i.max_grid_x, i.max_grid_y, self.max_grid_z),
            ),
            (
                "max threads per multiprocessor".into(),
                i.max_threads_per_multiprocessor.to_string(),
            ),
            (
                "max blocks per multiprocessor".into(),
                i.max_blocks_per_multiprocessor.to_string(),
            ),
            ("copy engines".into(), i.async_engines.to_string()),
            ("concurrent kernels".into(), yes(i.concurrent_kernels)),
            ("unified addressing".into(), yes(i.unified_addressing)),
            ("can map host memory".into(), yes(i.can_map_host_memory)),
            ("integrated".into(), yes(i.integrated)),
            (
                "-> peak memory bandwidth".into(),
                format!("{:.0} GB/s (2 x memory clock x bus width)", i.peak_bandwidth() / 1e9),
            ),
            (
                "-> resident threads".into(),
                format!("{} (multiprocessors x threads each)", self.resident_threads()),
            ),
        ];
        lines.push(match self.peak_flops() {
            Some((fp32, fp64)) => (
                "-> FP32 / FP64 (no tensor cores)".into(),
                format!(
                    "{:.1} / {:.1} TFLOP/s (units x 2 x clock x multiprocessors)",
                    fp32 / 1e12,
                    fp64 / 1e12
                ),
            ),
            None => (
                "-> FP32 / FP64".into(),
                format!("unknown for compute capability {major}.{minor}"),
            ),
        });
        lines
    }
}

/// Copies `bytes` of random words device to device (cudaMemcpy, events, one warm-up), checks the copy
/// word by word, and returns the timing and the words that differ.
pub fn measure_copy(bytes: usize, repetitions: usize, seed: u64) -> Result<(Timing, usize)> {
    let mut words = vec![0u32; bytes / 4];
    Random::new(seed).fill(&mut words, |random| random.next_u64() as u32);
    let source = check_cuda!(DeviceBuffer::from_slice(&words))?;
    let mut destination = common::verify::poisoned_device_buffer::<u32>(words.len())?;
    let stream = crate::new_stream()?;
    let timing = time_on_stream(&stream, 1, repetitions, || {
        Ok(check_cuda!(destination.copy_from(&source))?)
    })?;
    let mut back = vec![0u32; words.len()];
    check_cuda!(destination.copy_to(&mut back[..]))?;
    let _phase = phases::enter(Phase::Verify);
    Ok((timing, back.par_iter().zip(&words).filter(|(x, y)| x != y).count()))
}

/// One line of the notes' bandwidth arithmetic: what they computed, their figure, and the same
/// arithmetic for a GPU's bandwidth (bytes/s) and peaks, as a number in the figure's unit.
pub struct NotesFigure {
    pub notes: &'static str,
    pub their_figure: &'static str,
    pub unit: &'static str,
    /// From (bandwidth in B/s, FP32 peak FLOP/s, FP64 peak FLOP/s).
    pub value: fn(f64, f64, f64) -> f64,
}

/// The Greek slides (lecture 9: 8 bytes per multiply-add, 150 and 86.4 GB/s) and the Chinese notes
/// (250 GB/s in 128-byte lines of 16 doubles, three lines per flop, 45 flops per transfer).
pub const NOTES_FIGURES: [NotesFigure; 9] = [
    NotesFigure {
        notes: "Greek: at 4 B per FLOP the FP32 peak needs 4 x peak of bandwidth: so many times the bandwidth there is",
        their_figure: "4,000 GB/s for 1,000 GFLOPS: 27 times their 150 GB/s",
        unit: "times",
        value: |bandwidth, fp32, _| 4.0 * fp32 / bandwidth,
    },
    NotesFigure {
        notes: "Greek: the bandwidth / 4 B per FLOP limits the naive product",
        their_figure: "37.5 GFLOPS from 150 GB/s",
        unit: "GFLOPS",
        value: |bandwidth, _, _| bandwidth / 4.0 / 1e9,
    },
    NotesFigure {
        notes: "Greek: TILE_WIDTH 16, 16 times fewer loads: (bandwidth / 4) x 16",
        their_figure: "347.6 GFLOPS from 86.4 GB/s (the product is 345.6)",
        unit: "GFLOPS",
        value: |bandwidth, _, _| bandwidth / 4.0 * 16.0 / 1e9,
    },
    NotesFigure {
        notes: "Greek: TILE_WIDTH 32, 32 operations per transfer: (bandwidth / 4) x 32",
        their_figure: "(not computed)",
        unit: "GFLOPS",
        value: |bandwidth, _, _| bandwidth / 4.0 * 32.0 / 1e9,
    },
    NotesFigure {
        notes: "Chinese: the bandwidth / 128 bytes per line",
        their_figure: "about 2G lines/s from 250 GB/s",
        unit: "G lines/s",
        value: |bandwidth, _, _| bandwidth / 128.0 / 1e9,
    },
    NotesFigure {
        notes: "Chinese: 16 doubles a line",
        their_figure: "32G doubles/s",
        unit: "G doubles/s",
        value: |bandwidth, _, _| bandwidth / 8.0 / 1e9,
    },
    NotesFigure {
        notes: "Chinese: a flop loads 3 lines (two inputs, one output), one double of each used",
        their_figure: "670 Mflops",
        unit: "GFLOPS",
        value: |bandwidth, _, _| bandwidth / 128.0 / 3.0 / 1e9,
    },
    NotesFigure {
        notes: "Chinese: all 16 doubles of every line used",
        their_figure: "11 Gflops",
        unit: "GFLOPS",
        value: |bandwidth, _, _| bandwidth / 8.0 / 3.0 / 1e9,
    },
    NotesFigure {
        notes: "Chinese: flops per double transferred to reach the FP64 peak (peak / the line above)",
        their_figure: "45 flops for 500 Gflops",
        unit: "flops",
        value: |bandwidth, _, fp64| fp64 / (bandwidth / 8.0 / 3.0),
    },
];

/// The notes' arithmetic redone for this GPU: from its peak bandwidth and from `measured` (B/s).
fn print_notes_figures(query: &Query, measured: f64) {
    let Some((fp32, fp64)) = query.peak_flops() else {
        println!("\n(The notes' arithmetic needs this GPU's FP32 and FP64 units, which the table of compute capabilities does not know.)");
        return;
    };
    let peak = query.info.peak_bandwidth();
    println!(
        "\nThe notes' arithmetic for this GPU (peak {:.0} GB/s, measured {:.0} GB/s; FP32 {:.1} TFLOPS, FP64 {:.1} TFLOPS without tensor cores):\n",
        peak / 1e9,
        measured / 1e9,
        fp32 / 1e12,
        fp64 / 1e12
    );
    println!("| the notes' arithmetic | their figure | this GPU, peak bandwidth | this GPU, measured bandwidth |");
    println!("|-----------------------|--------------|--------------------------|------------------------------|");
    for figure in &NOTES_FIGURES {
        println!(
            "| {} | {} | {:.1} {} | {:.1} {} |",
            figure.notes,
            figure.their_figure,
            (figure.value)(peak, fp32, fp64),
            figure.unit,
            (figure.value)(measured, fp32, fp64),
            figure.unit
        );
    }
}

/// `--mode device-query`: the property listing, then a copy of `copy_bytes` (`--copy-bytes`, rounded
/// down to whole words) that checks the bandwidth figure against the hardware, then the notes' bandwidth
/// arithmetic for this GPU. Returns whether the copy was right.
pub fn report(gpu: &Gpu, copy_bytes: usize, repetitions: usize, seed: u64) -> Result<bool> {
    let query = Query::read(gpu.device, gpu.info.clone())?;
    let count = common::gpu::count()?;
    // As the Greek slide does: cudaGetDeviceCount, then cudaGetDeviceProperties for every device.
    println!(
        "\nDevice query: {count} GPU{} on this machine",
        if count == 1 { "" } else { "s" }
    );
    for ordinal in 0..count {
        let listed = if ordinal == gpu.info.ordinal {
            query.clone()
        } else {
            let device = check_cuda!(Device::get_device(ordinal))?;
            Query::read(device, DeviceInfo::query(device, ordinal)?)?
        };
        println!("\nDevice {ordinal}:\n");
        for (name, value) in listed.lines() {
            println!("  {name:<34} {value}");
        }
    }
    println!("\nThe measurements below run on device {}.", gpu.info.ordinal);
    let bytes = copy_bytes / 4 * 4;
    gpu.ensure_fits(2 * bytes as u64, &format!("--copy-bytes {bytes}"))?;
    let (timing, wrong) = measure_copy(bytes, repetitions, seed)?;
    // A device-to-device copy reads and writes every byte.
    let measured = 2.0 * bytes as f64 / (timing.median_ms() * 1e-3);
    println!(
        "\nDevice-to-device copy of {}: {timing}; {:.0} GB/s read + written = {:.0}% of the peak; {wrong} words differ: {}",
        format_bytes(bytes as u64),
        measured / 1e9,
        100.0 * measured / gpu.info.peak_bandwidth(),
        if wrong == 0 { "PASS" } else { "FAIL" }
    );
    print_notes_figures(&query, measured);
    crate::cpu_memory::report(repetitions)?;
    Ok(wrong == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notes_figures_come_back_from_the_notes_own_inputs() {
        let at = |i: usize, bandwidth: f64, fp32: f64, fp64: f64| {
            (NOTES_FIGURES[i].value)(bandwidth * 1e9, fp32 * 1e9, fp64 * 1e9)
        };
        assert!((at(0, 150.0, 1000.0, 0.0) - 26.67).abs() < 1e-2, "4,000 GB/s over 150");
        assert_eq!(at(1, 150.0, 0.0, 0.0), 37.5);
        assert!(
            (at(2, 86.4, 0.0, 0.0) - 345.6).abs() < 1e-9,
            "(86.4 / 4) x 16 is 345.6, not 347.6"
        );
        assert!((at(4, 250.0, 0.0, 0.0) - 1.953125).abs() < 1e-9, "about 2G lines/s");
        assert!((at(5, 250.0, 0.0, 0.0) - 31.25).abs() < 1e-9, "about 32G doubles/s");
        assert!((at(6, 250.0, 0.0, 0.0) - 0.651).abs() < 1e-3, "about 670 Mflops");
        assert!((at(7, 250.0, 0.0, 0.0) - 10.42).abs() < 1e-2, "about 11 Gflops");
        assert!((at(8, 250.0, 0.0, 500.0) - 48.0).abs() < 1e-9, "about 45 flops");
    }

    #[test]
    fn hopper_has_128_fp32_lanes_and_64_fp64_units_per_multiprocessor() {
        assert_eq!(units_per_multiprocessor((9, 0)), Some((128, 64)));
        assert_eq!(units_per_multiprocessor((2, 0)), None);
    }

    #[test]
    fn every_gpu_of_the_course_is_in_the_table_and_only_data_centre_ones_have_fast_fp64() {
        // T4 and RTX 20, A100, RTX 30, RTX 40 and L4, H100 and H200, B200, RTX 50.
        for (capability, fp64) in [
            ((7, 5), 2),
            ((8, 0), 32),
            ((8, 6), 2),
            ((8, 9), 2),
            ((9, 0), 64),
            ((10, 0), 64),
            ((12, 0), 2),
        ] {
            assert_eq!(
                units_per_multiprocessor(capability).map(|(_, units)| units),
                Some(fp64),
                "{capability:?}"
            );
        }
    }
}

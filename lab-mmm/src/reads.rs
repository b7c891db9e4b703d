//! `--reads`: the notes' read counts of the naive and the tiled product, counted by the GPU. The
//! Chinese notes say that without shared memory each element of A is read n times and each of B m
//! times: 2 K reads per element of C for `mmm-ab`. The Greek slides count a TILE_WIDTH 16 block's
//! 2 x 256 loads for its 8192 operations and conclude that tiling cuts global memory accesses by
//! TILE_WIDTH: 2 K / BLOCK_SIZE per element of C for `mmm`. Nsight Compute (ncu) counts both, per
//! launch, and also what reached L2 and device memory: the count matches the notes', and the caches
//! absorb most of the naive kernel's repeats, which is why tiling gains far less than the count
//! promises on a GPU with Hopper's caches (lab-mmm's README).
//!
//! The lab runs itself under ncu (`--reads-child`, hidden: each kernel launched once, in the order of
//! [`launches`]), reads ncu's file and sets each launch's counts beside the notes'. Global loads per
//! element of C are computed as week 3's check computes them ([`check::global_reads`]), so the numbers
//! here are the ones `--check` grades. ncu flushes the caches before each kernel it measures (its
//! default `--cache-control all`): the device-memory bytes are what one launch from cold caches reads.
//! `--counters` (every lab's flag) cannot carry this table: its counters stay inside the profiler,
//! which reports them per timed window, not per kernel.

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use common::gpu::Gpu;
use common::verify::Random;
use matrix::mmm::MmmKernel;
use matrix::{Element, Matrix};
use profiler::counters::{self, Launch};

use crate::check::{self, global_reads};
use crate::{multiply_once, Precision};

/// Bytes read from device memory (DRAM, HBM on an H200).
pub const DRAM_READ: &str = "dram__bytes_read.sum";
/// 32-byte sectors L2 served for reads, from any unit.
pub const L2_READ_SECTORS: &str = "lts__t_sectors_op_read.sum";
/// 32-byte sectors the global loads asked L1 for (what `--counters` shows per request).
pub const L1_GLOBAL_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";

/// ncu's filter: the slides' two kernels in both precisions, nothing else the lab may launch.
const KERNELS: &str = "regex:^mmm(_ab)?_f(32|64)$";

/// What ncu reads on a GPU of architecture `arch`: week 3's metrics for global loads (with every
/// optional one its GPU has: the lab's own kernels, measured for the lesson, not for time), and where
/// the loads were served.
pub fn metrics(arch: Option<u32>) -> Vec<&'static str> {
    let newer = check::OPTIONAL
        .iter()
        .filter(|optional| arch.is_some_and(|arch| arch >= optional.from_arch))
        .map(|optional| optional.metric);
    check::METRICS
        .iter()
        .copied()
        .chain(newer)
        .chain([L1_GLOBAL_SECTORS, L2_READ_SECTORS, DRAM_READ])
        .collect()
}

/// One launch of the measured run: which kernel, precision and BLOCK_SIZE.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Launched {
    pub kernel: MmmKernel,
    pub precision: Precision,
    pub block_size: u32,
}

impl Launched {
    /// The kernel's name in the module, as ncu reports it (`mmm_ab_f64`).
    pub fn function(&self) -> String {
        match self.precision {
            Precision::F64 => self.kernel.c_name::<f64>(),
            _ => self.kernel.c_name::<f32>(),
        }
    }

    fn element_bytes(&self) -> f64 {
        if self.precision == Precision::F64 {
            8.0
        } else {
            4.0
        }
    }
}

/// The launches the measured run makes, in order: for each precision and BLOCK_SIZE, `mmm-ab` then
/// `mmm`. The child launches them, the parent reads ncu's launches in the same order.
pub fn launches(precisions: &[Precision], block_sizes: &[u32]) -> Vec<Launched> {
    let mut launched = Vec::new();
    for &precision in precisions {
        for &block_size in block_sizes {
            for kernel in [MmmKernel::Naive, MmmKernel::Tiled] {
                launched.push(Launched {
                    kernel,
                    precision,
                    block_size,
                });
            }
        }
    }
    launched
}

/// In the child under ncu: each launch of [`launches`] once, on random m x k and k x n matrices.
pub fn launch_all(
    gpu: &Gpu,
    (m, k, n): (usize, usize, usize),
    precisions: &[Precision],
    block_sizes: &[u32],
    random: &mut Random,
) -> Result<()> {
    let a = Matrix::<f64>::random(m, k, random)?;
    let b = Matrix::<f64>::random(k, n, random)?;
    for &precision in precisions {
        if precision == Precision::F64 {
            launch_in::<f64>(gpu, &a, &b, block_sizes)?;
        } else {
            launch_in::<f32>(gpu, &a, &b, block_sizes)?;
        }
    }
    Ok(())
}

fn launch_in<T: Element>(gpu: &Gpu, a: &Matrix<f64>, b: &Matrix<f64>, block_sizes: &[u32]) -> Result<()> {
    let (mut a, mut b) = (a.convert::<T, _>()?, b.convert::<T, _>()?);
    a.copy_to_gpu()?;
    b.copy_to_gpu()?;
    let mut c = Matrix::<T>::new(a.rows(), b.cols())?;
    for &block_size in block_sizes {
        let image = kernels::mmm_for_block_size(block_size)
            .with_context(|| format!("mmm.cu is not compiled for BLOCK_SIZE {block_size}"))?;
        let module = gpu.load(image)?;
        for kernel in [MmmKernel::Naive, MmmKernel::Tiled] {
            multiply_once(&module, kernel, block_size, &a, &b, &mut c)?;
        }
    }
    Ok(())
}

/// One launch's counts beside the notes'.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRow {
    pub launched: Launched,
    /// (m, k, n): A is m x k, B k x n.
    pub sizes: (usize, usize, usize),
    /// Global loads per element of C, in loads of one thread, as week 3's check counts them.
    pub loads_per_element: f64,
    /// Bytes L1 was asked for by the global loads, L2 served for reads, device memory gave.
    pub l1_bytes: f64,
    pub l2_bytes: f64,
    pub dram_bytes: f64,
}

impl ReadRow {
    /// The notes' count per element of C: each thread of `mmm-ab` reads a row of A and a column of B,
    /// 2 K; each thread of `mmm` loads one element of A and one of B per tile, 2 K / BLOCK_SIZE (the
    /// last tile counted whole where BLOCK_SIZE does not divide K).
    pub fn slides_per_element(&self) -> f64 {
        let k = self.sizes.1;
        match self.launched.kernel {
            MmmKernel::Naive => 2.0 * k as f64,
            MmmKernel::Tiled => 2.0 * k.div_ceil(self.launched.block_size as usize) as f64,
        }
    }

    /// Whether the notes' count is the whole count: BLOCK_SIZE divides m, k and n, as the slides
    /// require. Elsewhere warps over C's edges and the padded last tile load more than the count, and
    /// ncu counts a warp's load once for all its 32 threads, however many of them are inside C.
    pub fn judged(&self) -> bool {
        let (m, k, n) = self.sizes;
        let bs = self.launched.block_size as usize;
        [m, k, n].iter().all(|size| size % bs == 0)
    }

    /// The bytes the notes' count reads: every load from device memory, as on the slides' GPU
    /// without caches for global memory.
    pub fn slides_bytes(&self) -> f64 {
        let (m, _, n) = self.sizes;
        self.slides_per_element() * (m * n) as f64 * self.launched.element_bytes()
    }

    /// A and B read once each: the least any product reads from device memory.
    pub fn once_bytes(&self) -> f64 {
        let (m, k, n) = self.sizes;
        ((m * k + k * n) as f64) * self.launched.element_bytes()
    }
}

/// ncu's launches (in the order of `launched`, which the child made) as rows; an error where they do
/// not match, rather than counts set beside the wrong kernel.
pub fn rows(launched: &[Launched], sizes: (usize, usize, usize), measured: &[Launch]) -> Result<Vec<ReadRow>> {
    ensure!(
        measured.len() == launched.len(),
        "ncu measured {} launches of the slides' kernels, the run made {}",
        measured.len(),
        launched.len()
    );
    let elements = (sizes.0 * sizes.2) as f64;
    launched
        .iter()
        .zip(measured)
        .map(|(launched, launch)| {
            ensure!(
                launch.kernel == launched.function(),
                "ncu's launch of {} where the run launched {}",
                launch.kernel,
                launched.function()
            );
            Ok(ReadRow {
                launched: *launched,
                sizes,
                loads_per_element: global_reads(launch, false, elements, launched.element_bytes()),
                l1_bytes: 32.0 * launch.value(L1_GLOBAL_SECTORS),
                l2_bytes: 32.0 * launch.value(L2_READ_SECTORS),
                dram_bytes: launch.value(DRAM_READ),
            })
        })
        .collect()
}

/// The table `--reads` prints, and what to read in it.
pub fn format_table(rows: &[ReadRow]) -> String {
    let mb = |bytes: f64| {
        if bytes.is_finite() {
            format!("{:.1}", bytes / 1e6)
        } else {
            "-".to_string()
        }
    };
    let mut table = String::from(
        "| kernel | precision | BLOCK_SIZE | global loads per element of C (ncu) | the notes' count | ncu / notes | MB the notes' count reads | MB L1 was asked for | MB L2 read | MB device memory read | MB of A and B, once |\n\
         |--------|-----------|------------|-------------------------------------|------------------|-------------|---------------------------|---------------------|------------|-----------------------|---------------------|\n",
    );
    for row in rows {
        let slides = row.slides_per_element();
        table.push_str(&format!(
            "| {} | {} | {} | {:.1} | {:.0} | {:.2}{} | {} | {} | {} | {} | {} |\n",
            row.launched.kernel.slide_name(),
            row.launched.precision,
            row.launched.block_size,
            row.loads_per_element,
            slides,
            row.loads_per_element / slides,
            if row.judged() { "" } else { " *" },
            mb(row.slides_bytes()),
            mb(row.l1_bytes),
            mb(row.l2_bytes),
            mb(row.dram_bytes),
            mb(row.once_bytes()),
        ));
    }
    if rows.iter().any(|row| !row.judged()) {
        table.push_str(
            "\n* BLOCK_SIZE does not divide the sizes, as the slides require: warps over C's edges and the padded \
             last tile load more than the notes count (ncu counts each warp's load for 32 threads).\n",
        );
    }
    table.push_str(
        "\nThe notes' count is 2 K for mmm-ab (a row of A and a column of B per element of C) and 2 K / BLOCK_SIZE \
         for mmm (one element of A and one of B per thread and tile). Every load would come from device memory on \
         the notes' GPU; here L1 and L2 serve the repeats, and device memory gives little more than A and B once.\n",
    );
    table
}

/// The child's command line: this lab with `--reads-child` and the sizes, precisions, block sizes and
/// seed of this run.
pub fn child_arguments(
    (m, k, n): (usize, usize, usize),
    precisions: &[Precision],
    block_sizes: &[u32],
    seed: u64,
) -> Vec<String> {
    let precision = match precisions {
        [one] => one.name().to_string(),
        _ => "both".to_string(),
    };
    let block_sizes: Vec<String> = block_sizes.iter().map(u32::to_string).collect();
    vec![
        "--reads-child".to_string(),
        "--size".to_string(),
        m.to_string(),
        k.to_string(),
        n.to_string(),
        "--precision".to_string(),
        precision,
        "--block-size".to_string(),
        block_sizes.join(","),
        "--seed".to_string(),
        seed.to_string(),
    ]
}

/// ncu's options: the slides' kernels only, clocks left alone (counts need no locked clocks) and
/// every cache flushed before each kernel it measures, so the device-memory bytes are those of one
/// launch from cold caches.
const NCU_OPTIONS: [&str; 6] = [
    "--clock-control",
    "none",
    "--cache-control",
    "all",
    "--kernel-name",
    KERNELS,
];

/// Runs this lab under ncu with `child` (from [`child_arguments`]) and returns ncu's launches and
/// where ncu was found.
pub fn measure(child: &[String]) -> Result<(Vec<Launch>, String)> {
    // No GPU is the error to show, not what ncu makes of it.
    common::gpu::count()?;
    let ncu = counters::ncu().map_err(|_| {
        anyhow!(
            "--reads needs Nsight Compute (ncu): not in $NCU, on the PATH, or in $CUDA_PATH/bin or /usr/local/cuda/bin"
        )
    })?;
    let folder = common::private_dir::PrivateDir::new("lab-mmm-reads")?;
    let (csv, log) = (folder.path().join("reads.csv"), folder.path().join("lab-under-ncu.log"));
    eprintln!(
        "--reads: the slides' kernels under {}, each replayed for its counters",
        ncu.display()
    );
    let said = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    let metrics = metrics(common::gpu::first_gpu_arch()).join(",");
    let mut command = counters::under_ncu(&ncu, &NCU_OPTIONS, &metrics, &csv);
    command
        .arg(std::env::current_exe().context("finding this lab's executable")?)
        .args(child)
        .stdout(said.try_clone()?)
        .stderr(said);
    let status = command.status().with_context(|| format!("running {}", ncu.display()))?;
    let text = std::fs::read_to_string(&csv).unwrap_or_default();
    if let Some(line) = text.lines().find(|line| line.contains("ERR_NVGPUCTRPERM")) {
        bail!(
            "ncu may not read this GPU's counters here ({}); an administrator can allow it",
            line.trim()
        );
    }
    ensure!(
        status.success(),
        "the lab under ncu failed ({status}): {}",
        counters::last_said(&log, &text)
    );
    Ok((counters::parse_csv(&text)?, ncu.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ncu's file from a run at 1024 in f64, BLOCK_SIZE 16 and 32, as `--csv --page raw` writes it
    /// (the counts are the notes' arithmetic with caches that hold A and B: a fixture, not a saved
    /// run).
    const FIXTURE: &str = include_str!("../tests/reads-1024-f64.csv");

    #[test]
    fn ncus_launches_become_reads_per_element_beside_the_notes_count() {
        let launched = launches(&[Precision::F64], &[16, 32]);
        let measured = counters::parse_csv(FIXTURE).unwrap();
        let rows = rows(&launched, (1024, 1024, 1024), &measured).unwrap();
        let per_element: Vec<(f64, f64)> = rows
            .iter()
            .map(|row| (row.loads_per_element, row.slides_per_element()))
            .collect();
        assert_eq!(
            per_element,
            [(2048.0, 2048.0), (128.0, 128.0), (2048.0, 2048.0), (64.0, 64.0)]
        );
        // 2 K loads of 8 bytes per element of C: 17.2 GB for mmm-ab, a sixteenth for mmm at 16.
        assert_eq!(rows[0].slides_bytes(), 2048.0 * 1024.0 * 1024.0 * 8.0);
        assert_eq!(rows[1].slides_bytes() * 16.0, rows[0].slides_bytes());
        assert_eq!(rows[0].once_bytes(), 2.0 * 1024.0 * 1024.0 * 8.0);
        let table = format_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[2],
            "| mmm-ab | f64 | 16 | 2048.0 | 2048 | 1.00 | 17179.9 | 9663.7 | 268.4 | 16.9 | 16.8 |"
        );
        assert_eq!(
            lines[5],
            "| mmm | f64 | 32 | 64.0 | 64 | 1.00 | 536.9 | 536.9 | 134.2 | 16.8 | 16.8 |"
        );
    }

    #[test]
    fn launches_that_do_not_match_the_run_are_an_error() {
        let measured = counters::parse_csv(FIXTURE).unwrap();
        let two = launches(&[Precision::F64], &[16]);
        let error = rows(&two, (1024, 1024, 1024), &measured).unwrap_err().to_string();
        assert_eq!(error, "ncu measured 4 launches of the slides' kernels, the run made 2");
        let f32s = launches(&[Precision::F32], &[16, 32]);
        let error = rows(&f32s, (1024, 1024, 1024), &measured).unwrap_err().to_string();
        assert_eq!(error, "ncu's launch of mmm_ab_f64 where the run launched mmm_ab_f32");
    }

    #[test]
    fn the_tiled_count_takes_a_last_tile_that_is_not_full_as_a_whole() {
        let row = |kernel, k| ReadRow {
            launched: Launched {
                kernel,
                precision: Precision::F32,
                block_size: 32,
            },
            sizes: (100, k, 53),
            loads_per_element: 0.0,
            l1_bytes: 0.0,
            l2_bytes: 0.0,
            dram_bytes: 0.0,
        };
        assert_eq!(row(MmmKernel::Tiled, 37).slides_per_element(), 4.0);
        assert!(!row(MmmKernel::Tiled, 64).judged(), "100 and 53 are no multiples of 32");
        let whole = ReadRow {
            sizes: (64, 96, 32),
            ..row(MmmKernel::Tiled, 96)
        };
        assert!(whole.judged());
        let table = format_table(&[row(MmmKernel::Naive, 37), whole]);
        assert!(table.contains("| mmm-ab | f32 | 32 | 0.0 | 74 | 0.00 * |"), "{table}");
        assert!(table.contains("| mmm | f32 | 32 | 0.0 | 6 | 0.00 |"), "{table}");
        assert!(table.contains("\n* BLOCK_SIZE does not divide the sizes"), "{table}");
        assert_eq!(row(MmmKernel::Tiled, 64).slides_per_element(), 4.0);
        assert_eq!(row(MmmKernel::Naive, 37).slides_per_element(), 74.0);
        assert_eq!(
            row(MmmKernel::Naive, 37).once_bytes(),
            ((100 * 37 + 37 * 53) * 4) as f64
        );
    }

    #[test]
    fn the_child_runs_the_same_sizes_precisions_and_block_sizes() {
        let args = child_arguments((100, 37, 53), &[Precision::F64, Precision::F32], &[16, 32], 7);
        assert_eq!(
            args.join(" "),
            "--reads-child --size 100 37 53 --precision both --block-size 16,32 --seed 7"
        );
        let one = child_arguments((8, 8, 8), &[Precision::F32], &[32], 1);
        assert!(one.join(" ").contains("--precision f32 --block-size 32"));
        let asked = metrics(Some(90));
        for metric in [DRAM_READ, L2_READ_SECTORS, "smsp__inst_executed_op_global_ld.sum"] {
            assert!(asked.contains(&metric), "{metric}");
        }
        assert_eq!(metrics(Some(75)).len() + 2, asked.len());
    }
}

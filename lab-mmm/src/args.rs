//! lab-mmm's command line: the flags (`--help` prints their doc comments) and what they ask for.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Parser;
use grading::StudentArgs;
use lab_mmm::{KernelChoice, PrecisionFlag};
use matrix::mmm::parse_block_size;
use matrix::{file, Matrix};

/// C = A * B on the GPU with the slides' Matrix class (slide: mmm.cu).
#[derive(Parser, Debug)]
#[command(name = "lab-mmm", version, about)]
#[command(group(clap::ArgGroup::new("written").args(["output", "plot"]).multiple(true)))]
pub struct Args {
    /// Matrix files A and B, as on the slide: one row per line, numbers separated by spaces, '#' starts a
    /// comment line. A's columns must equal B's rows. Without files: random 1024 x 1024 matrices.
    #[arg(value_names = ["A", "B"], num_args = 2, conflicts_with_all = ["random", "size"])]
    pub files: Vec<PathBuf>,
    /// Random N x N matrices A and B instead of files: the same as --size N, spelled as in the
    /// reference program (reference/mmm).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "size")]
    pub random: Option<u32>,
    /// Random matrices instead of files, sized as in the other labs: --size N for N x N A and B, or
    /// --size M K N for an M x K A and a K x N B.
    #[arg(long, num_args = 1..=3, value_names = ["N|M", "K", "N"], value_parser = clap::value_parser!(u32).range(1..))]
    pub size: Vec<u32>,
    /// Which kernel: naive (the slides' mmm-ab), tiled (mmm), or both (the default). With --check:
    /// naive checks week 2, tiled week 3; without it, the file says which week (week 3 where its tiled
    /// kernel keeps shared memory), and a line says what is checked.
    #[arg(long, value_enum)]
    pub kernel: Option<KernelChoice>,
    /// BLOCK_SIZE: threads per block are BLOCK_SIZE x BLOCK_SIZE, tiles are BLOCK_SIZE x BLOCK_SIZE.
    /// The kernels are compiled for 16 and 32; give one or both, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,32", value_parser = parse_block_size)]
    pub block_size: Vec<u32>,
    /// Element type: f64 (the slides' double), f32, both, or all (with --ladder also tf32 and bf16: the
    /// TF32 and bf16 tensor cores on f32 matrices). Default: both; all with --ladder.
    #[arg(long, value_enum)]
    pub precision: Option<PrecisionFlag>,
    /// Timed launches per kernel after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub repetitions: u32,
    /// Seed of the random matrices and of the verification's random vectors and samples.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print A, B and C (done anyway when A and B come from files).
    #[arg(long)]
    pub print: bool,
    /// Write C (of the first precision run) to this file, in the input format.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Let --output and --plot replace existing files.
    #[arg(long, requires = "written")]
    pub force: bool,
    /// Also print the ptxas report of each kernel run, the driver's view of it and the register arithmetic.
    #[arg(long)]
    pub ptxas: bool,
    /// Beyond the slides: the tiled kernel, then register blocking, 16-byte loads, cp.async stages,
    /// warp tiling, the tensor cores (FP64 and TF32) and split-K (k in slices where C has too few tiles
    /// for the GPU), each timed, checked and set beside cuBLAS (random 4096 x 4096 unless sizes are
    /// given; --kernel and --block-size do not apply).
    #[arg(long, conflicts_with_all = ["files", "output", "print", "kernel_source"])]
    pub ladder: bool,
    /// With --ladder: the best step of each precision and cuBLAS at sizes 256 to 8192 and a few thin
    /// shapes (8192 x 256 x 8192, ...), as a table.
    #[arg(long, requires = "ladder", conflicts_with_all = ["size", "random"])]
    pub sweep: bool,
    /// With --sweep: also draw TFLOP/s and the share of cuBLAS by size into this SVG file.
    #[arg(long, value_name = "FILE.svg", requires = "sweep")]
    pub plot: Option<PathBuf>,
    /// The Greek slides' worked example, "processing block (0, 0) for TILE_WIDTH = 2": the tiled mmm with
    /// BLOCK_SIZE 2 on random 4 x 4 Md and Nd, a 2 x 2 grid of 2 x 2 blocks. Prints, as the GPU recorded
    /// it, which elements of Md and Nd each thread of block (0, 0) copied into shared memory in each
    /// phase and which it multiplied from there, then Pd; passes when every block's record is the
    /// slide's and Pd is the CPU's product.
    #[arg(long, conflicts_with_all = [
        "files", "random", "size", "kernel", "block_size", "precision", "repetitions", "print", "output",
        "ptxas", "ladder", "kernel_source", "unroll", "reads",
    ])]
    pub tile_example: bool,
    /// The German slides' `#pragma unroll`, measured: the tiled mmm as printed beside the same file
    /// with `#pragma unroll 1` (the loop kept) and without the pragma (the compiler's choice), at each
    /// BLOCK_SIZE and precision: registers from ptxas's report, GPU time, GFLOP/s, time against the
    /// kernel as printed, and each C checked against the CPU (random 1024 x 1024 unless sizes are given).
    #[arg(long, conflicts_with_all = ["output", "print", "kernel", "ladder", "kernel_source", "reads", "ptxas"])]
    pub unroll: bool,
    /// The notes' read counts, counted by the GPU: runs mmm-ab and mmm once each under Nsight Compute
    /// (ncu) and prints, per kernel, the global loads per element of C beside the notes' 2 K (mmm-ab)
    /// and 2 K / BLOCK_SIZE (mmm), and the bytes L1, L2 and device memory served beside the bytes that
    /// count would read (random 1024 x 1024 unless --size or --random is given).
    #[arg(long, conflicts_with_all = [
        "files", "output", "print", "kernel", "ladder", "kernel_source", "ptxas", "counters",
    ])]
    pub reads: bool,
    /// What --reads runs under ncu: each kernel launched once, nothing checked or printed.
    #[arg(long, hide = true, conflicts_with_all = ["files", "reads", "unroll", "ladder", "kernel_source"])]
    pub reads_child: bool,
    #[command(flatten)]
    pub student: StudentArgs,
    #[command(flatten)]
    pub profile: profiler::ProfileArgs,
}

impl Args {
    /// A and B from the two files, if given.
    pub fn read_files(&self) -> Result<Option<(Matrix<f64>, Matrix<f64>)>> {
        match &self.files[..] {
            [a, b] => Ok(Some((file::read(a)?, file::read(b)?))),
            _ => Ok(None),
        }
    }

    /// (M, K, N) of the random A (M x K) and B (K x N): --random N, --size N, --size M K N, or 1024 x 1024
    /// (4096 x 4096 for the ladder, where the small size would hide what each step gains).
    pub fn random_sizes(&self) -> Result<(usize, usize, usize)> {
        Ok(match (self.random, &self.size[..]) {
            (Some(n), _) | (None, &[n]) => (n as usize, n as usize, n as usize),
            (None, &[m, k, n]) => (m as usize, k as usize, n as usize),
            (None, []) => {
                let n = if self.ladder { 4096 } else { 1024 };
                println!("No matrix files given: multiplying random {n} x {n} matrices (see --help).");
                (n, n, n)
            }
            (None, two) => bail!(
                "--size takes N (N x N matrices) or M K N, not the {} numbers {two:?}",
                two.len()
            ),
        })
    }
}

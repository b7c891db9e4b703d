//! `--tile-example`: the Greek slides' worked example, "processing block (0, 0) for TILE_WIDTH = 2",
//! done by the GPU. Md and Nd are 4 x 4 and the grid is 2 x 2 blocks of 2 x 2 threads; the kernel is
//! mmm.cu's tiled `mmm` itself, compiled with BLOCK_SIZE 2 (`kernels/cuda/tile_example.cu`), on
//! elements that know which element of Md or Nd they are and write down every store into a shared tile
//! and every product of two tile elements. So the table printed is what the threads did, not what the
//! slide says they do: [`Trace::differences`] holds the one against the other, for every block.

use std::fmt::{self, Write as _};

use anyhow::{Context as _, Result};
use common::check_cuda;
use common::gpu::Gpu;
use common::verify::{verdict, Random};
use cust::function::{BlockSize, GridSize};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DevicePointer};
use cust::stream::{Stream, StreamFlags};
use matrix::mmm::{check_product, multiply_on_cpu, ProductCheck};
use matrix::{Matrix, MatrixView};

/// Md and Nd are WIDTH x WIDTH, as on the slide.
pub const WIDTH: usize = 4;
/// The slide's TILE_WIDTH: the BLOCK_SIZE tile_example.cu is compiled with (kernels/build.rs).
pub const TILE_WIDTH: usize = kernels::TILE_EXAMPLE_WIDTH as usize;
/// Blocks along each side of the grid, one per TILE_WIDTH x TILE_WIDTH tile of Pd.
pub const GRID: usize = WIDTH / TILE_WIDTH;
/// Phases of every thread: one per tile of Md's row band and Nd's column band.
pub const PHASES: usize = WIDTH / TILE_WIDTH;
const THREADS: usize = TILE_WIDTH * TILE_WIDTH;
const BLOCKS: usize = GRID * GRID;
// The slide's tiles cover Md and Nd exactly: no thread loads mmm's zero padding.
const _: () = assert!(WIDTH.is_multiple_of(TILE_WIDTH));

/// tile_example.cu's `enum Origin`: which matrix an element comes from.
pub const MD: i32 = 0;
pub const ND: i32 = 1;
/// A product, a sum, or mmm's zero padding.
pub const COMPUTED: i32 = 2;

/// tile_example.cu's `struct Source`: Md(row, col), Nd(row, col), or computed.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    pub matrix: i32,
    pub row: i32,
    pub col: i32,
}

// SAFETY: three ints, the layout of the CUDA struct.
unsafe impl DeviceCopy for Source {}

impl Source {
    /// What a slot of the trace holds before the kernel writes it: no matrix the kernel names.
    pub const UNWRITTEN: Source = Source {
        matrix: -1,
        row: -1,
        col: -1,
    };

    pub fn md(row: usize, col: usize) -> Source {
        Source {
            matrix: MD,
            row: row as i32,
            col: col as i32,
        }
    }

    pub fn nd(row: usize, col: usize) -> Source {
        Source {
            matrix: ND,
            row: row as i32,
            col: col as i32,
        }
    }
}

/// The slide's M<sub>row,col</sub> and N<sub>row,col</sub>: `M0,1`, `N2,0`.
impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.matrix {
            MD => write!(f, "M{},{}", self.row, self.col),
            ND => write!(f, "N{},{}", self.row, self.col),
            COMPUTED => f.write_str("(computed)"),
            _ => f.write_str("(nothing)"),
        }
    }
}

/// tile_example.cu's `struct Traced`: the kernel's element, a double and where it comes from.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Traced {
    pub value: f64,
    pub source: Source,
}

// SAFETY: a double and three ints, the layout of the CUDA struct (24 bytes with its padding; a test
// checks that against the kernel's shared tiles).
unsafe impl DeviceCopy for Traced {}

impl Traced {
    /// What Pd holds before the launch: NaN from no matrix, so an element no thread writes fails the
    /// check.
    const POISON: Traced = Traced {
        value: f64::NAN,
        source: Source::UNWRITTEN,
    };
}

/// tile_example.cu's `struct Load`: one store into a shared tile, `as[ty][tx] = ...` or
/// `bs[ty][tx] = ...`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Load {
    /// How many times the thread stored an element of this matrix in this phase: once, on the slide.
    pub written: i32,
    pub source: Source,
    /// Where it went in the block's shared memory, in bytes.
    pub shared_address: u32,
}

// SAFETY: five 32-bit numbers, the layout of the CUDA struct.
unsafe impl DeviceCopy for Load {}

impl Load {
    const UNWRITTEN: Load = Load {
        written: 0,
        source: Source::UNWRITTEN,
        shared_address: u32::MAX,
    };
}

/// tile_example.cu's `struct Product`: one `as[ty][k] * bs[k][tx]`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Product {
    pub written: i32,
    /// 1 when both factors were read from shared memory.
    pub from_shared: i32,
    pub m: Source,
    pub n: Source,
}

// SAFETY: eight ints, the layout of the CUDA struct.
unsafe impl DeviceCopy for Product {}

impl Product {
    const UNWRITTEN: Product = Product {
        written: 0,
        from_shared: 0,
        m: Source::UNWRITTEN,
        n: Source::UNWRITTEN,
    };
}

/// tile_example.cu's `__constant__ Trace trace`: where the kernel writes its records. cust's
/// `get_global` refuses a symbol of another size.
#[repr(C)]
#[derive(Clone, Copy)]
struct TraceBuffers {
    loads: DevicePointer<Load>,
    products: DevicePointer<Product>,
    unplaced: DevicePointer<u32>,
    phases: i32,
}

// SAFETY: three device pointers and an int, the layout of the CUDA struct.
unsafe impl DeviceCopy for TraceBuffers {}

/// The index of block (bx, by), thread (tx, ty) and a phase in the records: tile_example.cu's
/// `thread_slot`, blocks and threads in row-major order.
fn slot((bx, by): (usize, usize), (tx, ty): (usize, usize), phase: usize) -> usize {
    ((by * GRID + bx) * THREADS + ty * TILE_WIDTH + tx) * PHASES + phase
}

/// Every (block, thread, phase) of the run, blocks and threads as (x, y), in the records' order.
fn every_step() -> impl Iterator<Item = ((usize, usize), (usize, usize), usize)> {
    let pairs = |side: usize| (0..side * side).map(move |i| (i % side, i / side));
    pairs(GRID).flat_map(move |block| {
        pairs(TILE_WIDTH).flat_map(move |thread| (0..PHASES).map(move |phase| (block, thread, phase)))
    })
}

/// The slide's thread (tx, ty) of block (bx, by) in `phase`: it copies Md(row, phase * TILE_WIDTH + tx)
/// into `as[ty][tx]` and Nd(phase * TILE_WIDTH + ty, col) into `bs[ty][tx]`, row and col being its element
/// of Pd.
pub fn expected_loads((bx, by): (usize, usize), (tx, ty): (usize, usize), phase: usize) -> [Source; 2] {
    let (row, col) = (by * TILE_WIDTH + ty, bx * TILE_WIDTH + tx);
    [
        Source::md(row, phase * TILE_WIDTH + tx),
        Source::nd(phase * TILE_WIDTH + ty, col),
    ]
}

/// ... then, the block's tiles complete, multiplies `as[ty][k]` = Md(row, phase * TILE_WIDTH + k) by
/// `bs[k][tx]` = Nd(phase * TILE_WIDTH + k, col), for k = 0 .. TILE_WIDTH - 1.
pub fn expected_product(
    (bx, by): (usize, usize),
    (tx, ty): (usize, usize),
    phase: usize,
    k: usize,
) -> (Source, Source) {
    let (row, col) = (by * TILE_WIDTH + ty, bx * TILE_WIDTH + tx);
    let k = phase * TILE_WIDTH + k;
    (Source::md(row, k), Source::nd(k, col))
}

/// What the kernel recorded, or ([`Trace::expected`]) what the slide says it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// By [`slot`], then Md's store and Nd's.
    pub loads: Vec<Load>,
    /// By [`slot`], then k.
    pub products: Vec<Product>,
    /// Stores and products the kernel found no slot for: padding, or elements beyond the phases.
    pub unplaced: u32,
}

impl Trace {
    /// The slide's trace: every thread of every block, each phase, as [`expected_loads`] and
    /// [`expected_product`] say; as before bs in shared memory.
    pub fn expected() -> Trace {
        let mut trace = Trace {
            loads: vec![Load::UNWRITTEN; BLOCKS * THREADS * PHASES * 2],
            products: vec![Product::UNWRITTEN; BLOCKS * THREADS * PHASES * TILE_WIDTH],
            unplaced: 0,
        };
        for (block, thread, phase) in every_step() {
            let at = slot(block, thread, phase);
            let (tx, ty) = thread;
            for (which, source) in expected_loads(block, thread, phase).into_iter().enumerate() {
                let element = which * THREADS + ty * TILE_WIDTH + tx;
                trace.loads[at * 2 + which] = Load {
                    written: 1,
                    source,
                    shared_address: (element * size_of::<Traced>()) as u32,
                };
            }
            for k in 0..TILE_WIDTH {
                let (m, n) = expected_product(block, thread, phase, k);
                trace.products[at * TILE_WIDTH + k] = Product {
                    written: 1,
                    from_shared: 1,
                    m,
                    n,
                };
            }
        }
        trace
    }

    /// Where `load` went in its tile, `[row][col]`: counted from the lowest address that any store of
    /// an element of the same matrix went to, which is `as[0][0]` (or `bs[0][0]`) when every thread of
    /// the block stored one. Shared addresses are the block's own, the same in every block. None for
    /// an address between or past the tile's elements.
    pub fn position(&self, load: &Load) -> Option<(usize, usize)> {
        let base = self
            .loads
            .iter()
            .filter(|other| other.written > 0 && other.source.matrix == load.source.matrix)
            .map(|other| other.shared_address)
            .min()?;
        let offset = load.shared_address.checked_sub(base)? as usize;
        let element = offset / size_of::<Traced>();
        (offset.is_multiple_of(size_of::<Traced>()) && element < THREADS)
            .then_some((element / TILE_WIDTH, element % TILE_WIDTH))
    }

    /// Every way this trace differs from the slide's, one line each: none when every thread of every
    /// block stored the slide's elements once, each into its own place of the tiles, and multiplied
    /// the slide's pairs once, reading both from shared memory.
    pub fn differences(&self) -> Vec<String> {
        let mut differences = Vec::new();
        if self.unplaced > 0 {
            differences.push(format!(
                "{} stores or products of elements that belong to no phase (mmm's zero padding, or past Md and Nd)",
                self.unplaced
            ));
        }
        for (block, thread, phase) in every_step() {
            let at = slot(block, thread, phase);
            let (tx, ty) = thread;
            let who = format!("block {block:?}, thread {thread:?}, phase {phase}");
            for (which, expected) in expected_loads(block, thread, phase).into_iter().enumerate() {
                let load = &self.loads[at * 2 + which];
                let tile = ["as", "bs"][which];
                if load.written != 1 {
                    differences.push(format!(
                        "{who}: stored an element of {} into shared memory {} times, the slide once ({expected})",
                        ["Md", "Nd"][which],
                        load.written
                    ));
                } else if load.source != expected {
                    differences.push(format!(
                        "{who}: loaded {} where the slide loads {expected}",
                        load.source
                    ));
                } else if self.position(load) != Some((ty, tx)) {
                    differences.push(format!(
                        "{who}: put {expected} into {tile}{}, the slide into {tile}[{ty}][{tx}]",
                        place(self.position(load))
                    ));
                }
            }
            for k in 0..TILE_WIDTH {
                let product = &self.products[at * TILE_WIDTH + k];
                let (m, n) = expected_product(block, thread, phase, k);
                if product.written != 1 {
                    differences.push(format!(
                        "{who}: multiplied {m}*{n} {} times, the slide once",
                        product.written
                    ));
                } else if (product.m, product.n) != (m, n) {
                    differences.push(format!(
                        "{who}: multiplied {}*{} where the slide multiplies {m}*{n}",
                        product.m, product.n
                    ));
                } else if product.from_shared != 1 {
                    differences.push(format!("{who}: read {m}*{n} from outside shared memory"));
                }
            }
        }
        differences
    }
}

/// `[row][col]` of a tile, or where the address fits none.
fn place(position: Option<(usize, usize)>) -> String {
    position.map_or(" (outside the tile)".to_string(), |(row, col)| {
        format!("[{row}][{col}]")
    })
}

/// The slide's table for block (0, 0): for each phase and thread (tx, ty), the elements it stored
/// into the tiles, where, and the products it added to its element of Pd, read from the tiles.
pub fn format_phases(trace: &Trace) -> String {
    let mut table = String::from(
        "| phase | thread (tx, ty) | Md -> as[ty][tx] | Nd -> bs[ty][tx] | `Pd += as[ty][k]*bs[k][tx]`, each k |\n\
         |-------|-----------------|------------------|------------------|-------------------------------------|\n",
    );
    for phase in 0..PHASES {
        for (tx, ty) in (0..THREADS).map(|i| (i % TILE_WIDTH, i / TILE_WIDTH)) {
            let at = slot((0, 0), (tx, ty), phase);
            let stored = |which: usize| {
                let load = &trace.loads[at * 2 + which];
                let times = if load.written == 1 {
                    String::new()
                } else {
                    format!(" ({} times)", load.written)
                };
                format!(
                    "{} -> {}{}{times}",
                    load.source,
                    ["as", "bs"][which],
                    place(trace.position(load))
                )
            };
            let products: Vec<String> = trace.products[at * TILE_WIDTH..(at + 1) * TILE_WIDTH]
                .iter()
                .map(|product| match (product.written, product.from_shared) {
                    (0, _) => "?".to_string(),
                    (_, 0) => format!("{}*{} (not from shared memory)", product.m, product.n),
                    _ => format!("{}*{}", product.m, product.n),
                })
                .collect();
            let _ = writeln!(
                table,
                "| {phase} | ({tx}, {ty}) | {} | {} | `P{ty},{tx} += {}` |",
                stored(0),
                stored(1),
                products.join(" + ")
            );
        }
    }
    table
}

/// The slides' example as run: its inputs, the Pd the GPU computed and what it recorded.
pub struct Example {
    pub md: Matrix<f64>,
    pub nd: Matrix<f64>,
    pub pd: Matrix<f64>,
    pub trace: Trace,
}

impl Example {
    /// Pd against the CPU's product, element by element ([`check_product`]).
    pub fn check(&self, random: &mut Random) -> ProductCheck {
        check_product(&self.md, &self.nd, &self.pd, random)
    }
}

/// The values of Md and Nd: random, never zero nor close to it. A zero factor would add nothing, so a
/// product left out or read from the wrong place could go unseen by the check of Pd.
fn random_input(random: &mut Random) -> Result<Matrix<f64>> {
    let values: Vec<f64> = (0..WIDTH * WIDTH)
        .map(|_| {
            let magnitude = random.uniform(0.5, 1.0);
            if random.below(2) == 0 {
                -magnitude
            } else {
                magnitude
            }
        })
        .collect();
    Matrix::from_row_major(WIDTH, WIDTH, &values)
}

/// Each element with its name: `Traced { value, source: Md(row, col) }` for Md.
fn traced(matrix: &Matrix<f64>, source: fn(usize, usize) -> Source) -> Vec<Traced> {
    matrix
        .data()
        .iter()
        .enumerate()
        .map(|(i, &value)| Traced {
            value,
            source: source(i / WIDTH, i % WIDTH),
        })
        .collect()
}

/// The slide's program on the example: Md and Nd to the GPU, the trace's buffers and Pd poisoned, one
/// launch of mmm on a GRID x GRID grid of TILE_WIDTH x TILE_WIDTH blocks, everything back.
pub fn run(gpu: &Gpu, seed: u64) -> Result<Example> {
    let mut random = Random::new(seed);
    let md = random_input(&mut random)?;
    let nd = random_input(&mut random)?;
    let module = gpu.load(&kernels::TILE_EXAMPLE).context("loading tile_example.cu")?;
    let mmm = check_cuda!(module.get_function("mmm_traced"))?;

    let d_md = check_cuda!(DeviceBuffer::from_slice(&traced(&md, Source::md)))?;
    let d_nd = check_cuda!(DeviceBuffer::from_slice(&traced(&nd, Source::nd)))?;
    let d_pd = check_cuda!(DeviceBuffer::from_slice(&[Traced::POISON; WIDTH * WIDTH]))?;
    let unwritten = Trace {
        loads: vec![Load::UNWRITTEN; BLOCKS * THREADS * PHASES * 2],
        products: vec![Product::UNWRITTEN; BLOCKS * THREADS * PHASES * TILE_WIDTH],
        unplaced: 0,
    };
    let d_loads = check_cuda!(DeviceBuffer::from_slice(&unwritten.loads))?;
    let d_products = check_cuda!(DeviceBuffer::from_slice(&unwritten.products))?;
    let d_unplaced = check_cuda!(DeviceBuffer::from_slice(&[0u32]))?;
    let mut symbol = check_cuda!(module.get_global::<TraceBuffers>(c"trace"))?;
    check_cuda!(symbol.copy_from(&TraceBuffers {
        loads: d_loads.as_device_ptr(),
        products: d_products.as_device_ptr(),
        unplaced: d_unplaced.as_device_ptr(),
        phases: PHASES as i32,
    }))?;

    let view = |buffer: &DeviceBuffer<Traced>| MatrixView {
        rows: WIDTH as i32,
        cols: WIDTH as i32,
        data: buffer.as_device_ptr(),
    };
    let (a, b, c) = (view(&d_md), view(&d_nd), view(&d_pd));
    let grid = GridSize::xy(GRID as u32, GRID as u32);
    let block = BlockSize::xy(TILE_WIDTH as u32, TILE_WIDTH as u32);
    let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    // __global__ void mmm_traced(MatrixView<Traced> a, MatrixView<Traced> b, MatrixView<Traced> c)
    // SAFETY: a, b and c match the kernel's MatrixView<Traced> parameters, WIDTH x WIDTH views of
    // buffers of WIDTH^2 Traced each; the grid covers Pd exactly, and the records' buffers, named in
    // the kernel's `trace` above, hold a slot for every thread, phase and k of this grid.
    check_cuda!(unsafe { launch!(mmm<<<grid, block, 0, stream>>>(a, b, c)) })?;
    check_cuda!(stream.synchronize())?; // kernel faults show up here

    let mut pd = vec![Traced::POISON; WIDTH * WIDTH];
    check_cuda!(d_pd.copy_to(&mut pd[..]))?;
    let mut trace = unwritten;
    check_cuda!(d_loads.copy_to(&mut trace.loads[..]))?;
    check_cuda!(d_products.copy_to(&mut trace.products[..]))?;
    let mut unplaced = [0u32];
    check_cuda!(d_unplaced.copy_to(&mut unplaced[..]))?;
    trace.unplaced = unplaced[0];
    let values: Vec<f64> = pd.iter().map(|element| element.value).collect();
    Ok(Example {
        md,
        nd,
        pd: Matrix::from_row_major(WIDTH, WIDTH, &values)?,
        trace,
    })
}

/// A WIDTH x WIDTH matrix as a table, rows down, columns across.
fn format_matrix(name: &str, matrix: &Matrix<f64>) -> String {
    let columns: Vec<String> = (0..WIDTH).map(|col| format!("col {col}")).collect();
    let mut table = format!("| {name} | {} |\n|---|{}\n", columns.join(" | "), "---|".repeat(WIDTH));
    for (row, values) in matrix.data().chunks(WIDTH).enumerate() {
        let cells: Vec<String> = values.iter().map(|value| format!("{value:.3}")).collect();
        let _ = writeln!(table, "| row {row} | {} |", cells.join(" | "));
    }
    table
}

/// What each thread of block (0, 0) computed, beside the CPU's value of the same element.
pub fn format_values(pd: &Matrix<f64>, cpu: &[f64]) -> String {
    let mut table = String::from(
        "| thread (tx, ty) | Pd element | GPU | CPU |\n\
         |-----------------|------------|-----|-----|\n",
    );
    for (tx, ty) in (0..THREADS).map(|i| (i % TILE_WIDTH, i / TILE_WIDTH)) {
        let index = ty * WIDTH + tx;
        let _ = writeln!(
            table,
            "| ({tx}, {ty}) | P{ty},{tx} | {:.6} | {:.6} |",
            pd.data()[index],
            cpu[index]
        );
    }
    table
}

/// `--tile-example`: runs the example, prints block (0, 0)'s phases as the GPU recorded them and Pd,
/// and passes when every block's trace is the slide's and Pd is the CPU's product.
pub fn show(gpu: &Gpu, seed: u64) -> Result<()> {
    let example = run(gpu, seed)?;
    println!(
        "The slides' example, block (0, 0) for TILE_WIDTH = {TILE_WIDTH}: Md and Nd {WIDTH} x {WIDTH}, random \
         (seed {seed}, none near 0), on a {GRID} x {GRID} grid of {TILE_WIDTH} x {TILE_WIDTH} blocks running \
         mmm.cu's tiled mmm with BLOCK_SIZE {TILE_WIDTH} (kernels/cuda/tile_example.cu).\n"
    );
    println!(
        "{}\n{}",
        format_matrix("Md", &example.md),
        format_matrix("Nd", &example.nd)
    );
    println!(
        "What each thread of block (0, 0) copied into the shared tiles as and bs, and multiplied from \
         them, phase by phase, as the GPU recorded it:\n\n{}",
        format_phases(&example.trace)
    );
    let cpu = multiply_on_cpu(&example.md, &example.nd);
    println!(
        "What each thread of block (0, 0) wrote to Pd:\n\n{}",
        format_values(&example.pd, &cpu)
    );
    let differences = example.trace.differences();
    let (loads, products) = (example.trace.loads.len(), example.trace.products.len());
    if differences.is_empty() {
        println!("Trace of all {BLOCKS} blocks: {loads} stores and {products} products, each where the slide puts it.");
    } else {
        println!(
            "Trace of all {BLOCKS} blocks: {} differences from the slide:",
            differences.len()
        );
        for difference in differences.iter().take(10) {
            println!("  {difference}");
        }
    }
    let check = example.check(&mut Random::new(seed));
    println!(
        "Pd against the CPU ({}): max rel. error {:.1e}, tolerance {:.1e}.",
        check.method, check.error, check.tolerance
    );
    verdict(
        differences.is_empty() && check.passed(),
        &format!(
            "{} differences from the slide's trace; Pd {} the CPU's product",
            differences.len(),
            if check.passed() { "matches" } else { "differs from" }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_named_as_on_the_slide() {
        assert_eq!(Source::md(0, 1).to_string(), "M0,1");
        assert_eq!(Source::nd(2, 0).to_string(), "N2,0");
        assert_eq!(Source::UNWRITTEN.to_string(), "(nothing)");
        assert_eq!(
            (TILE_WIDTH, GRID, PHASES),
            (2, 2, 2),
            "the slide's example: TILE_WIDTH = 2 on 4 x 4 matrices"
        );
    }

    /// The slide's example, worked by the CPU: what `--tile-example` prints when the GPU does it.
    #[test]
    fn the_expected_trace_of_block_0_0_is_the_slides_table() {
        let expected = "\
| phase | thread (tx, ty) | Md -> as[ty][tx] | Nd -> bs[ty][tx] | `Pd += as[ty][k]*bs[k][tx]`, each k |
|-------|-----------------|------------------|------------------|-------------------------------------|
| 0 | (0, 0) | M0,0 -> as[0][0] | N0,0 -> bs[0][0] | `P0,0 += M0,0*N0,0 + M0,1*N1,0` |
| 0 | (1, 0) | M0,1 -> as[0][1] | N0,1 -> bs[0][1] | `P0,1 += M0,0*N0,1 + M0,1*N1,1` |
| 0 | (0, 1) | M1,0 -> as[1][0] | N1,0 -> bs[1][0] | `P1,0 += M1,0*N0,0 + M1,1*N1,0` |
| 0 | (1, 1) | M1,1 -> as[1][1] | N1,1 -> bs[1][1] | `P1,1 += M1,0*N0,1 + M1,1*N1,1` |
| 1 | (0, 0) | M0,2 -> as[0][0] | N2,0 -> bs[0][0] | `P0,0 += M0,2*N2,0 + M0,3*N3,0` |
| 1 | (1, 0) | M0,3 -> as[0][1] | N2,1 -> bs[0][1] | `P0,1 += M0,2*N2,1 + M0,3*N3,1` |
| 1 | (0, 1) | M1,2 -> as[1][0] | N3,0 -> bs[1][0] | `P1,0 += M1,2*N2,0 + M1,3*N3,0` |
| 1 | (1, 1) | M1,3 -> as[1][1] | N3,1 -> bs[1][1] | `P1,1 += M1,2*N2,1 + M1,3*N3,1` |
";
        assert_eq!(format_phases(&Trace::expected()), expected);
    }

    #[test]
    fn the_expected_trace_covers_every_block_and_differs_from_nothing() {
        let trace = Trace::expected();
        assert!(trace.differences().is_empty(), "{:?}", trace.differences());
        // Block (1, 0), thread (0, 1), phase 1: Pd(1, 2) needs Md(1, 2 + 0) and Nd(2 + 1, 2).
        assert_eq!(expected_loads((1, 0), (0, 1), 1), [Source::md(1, 2), Source::nd(3, 2)]);
        assert_eq!(
            expected_product((1, 1), (1, 1), 1, 1),
            (Source::md(3, 3), Source::nd(3, 3))
        );
        let (loads, products): (Vec<Source>, Vec<(Source, Source)>) = (
            trace.loads.iter().map(|load| load.source).collect(),
            trace.products.iter().map(|product| (product.m, product.n)).collect(),
        );
        // Every element of Md and Nd is loaded GRID times (once by each block of its band), and every
        // pair of the product Md(row, k) * Nd(k, col) is made once.
        for row in 0..WIDTH {
            for col in 0..WIDTH {
                for source in [Source::md(row, col), Source::nd(row, col)] {
                    assert_eq!(loads.iter().filter(|&&s| s == source).count(), GRID, "{source}");
                }
                for k in 0..WIDTH {
                    let pair = (Source::md(row, k), Source::nd(k, col));
                    assert_eq!(products.iter().filter(|&&p| p == pair).count(), 1);
                }
            }
        }
    }

    #[test]
    fn a_wrong_load_or_product_is_named_by_block_thread_and_phase() {
        let mut trace = Trace::expected();
        // Block (1, 1), thread (1, 0), phase 1 loads the transposed element of Md.
        let at = slot((1, 1), (1, 0), 1);
        trace.loads[at * 2].source = Source::md(3, 2);
        // Block (0, 0), thread (0, 0), phase 0 multiplies twice by the same k.
        trace.products[slot((0, 0), (0, 0), 0) * TILE_WIDTH + 1] = trace.products[0];
        // Block (0, 1), thread (1, 1), phase 0 stores Nd's element twice.
        trace.loads[slot((0, 1), (1, 1), 0) * 2 + 1].written = 2;
        trace.unplaced = 3;
        assert_eq!(
            trace.differences(),
            [
                "3 stores or products of elements that belong to no phase (mmm's zero padding, or past Md and Nd)",
                "block (0, 0), thread (0, 0), phase 0: multiplied M0,0*N0,0 where the slide multiplies M0,1*N1,0",
                "block (0, 1), thread (1, 1), phase 0: stored an element of Nd into shared memory 2 times, the slide once (N1,1)",
                "block (1, 1), thread (1, 0), phase 1: loaded M3,2 where the slide loads M2,3",
            ]
        );
        let table = format_phases(&trace);
        assert!(
            table.contains("| N1,1 -> bs[1][1] |"),
            "block (0, 0) is as expected:\n{table}"
        );
        assert!(table.contains("`P0,0 += M0,0*N0,0 + M0,0*N0,0`"), "{table}");
    }

    #[test]
    fn positions_come_from_each_tiles_own_addresses_wherever_the_compiler_puts_it() {
        let mut trace = Trace::expected();
        // bs first, as at 1000: the positions are the same.
        let size = size_of::<Traced>() as u32;
        for load in trace.loads.iter_mut() {
            let element = load.shared_address / size % THREADS as u32;
            load.shared_address = if load.source.matrix == MD { 1000 } else { 0 } + element * size;
        }
        assert_eq!(format_phases(&trace), format_phases(&Trace::expected()));
        assert!(trace.differences().is_empty());
        // Thread (1, 0) of block (0, 0) stores into as[1][0], as though it used as[tx][ty].
        let at = slot((0, 0), (1, 0), 0);
        trace.loads[at * 2].shared_address = 1000 + 2 * size;
        assert_eq!(
            trace.differences(),
            ["block (0, 0), thread (1, 0), phase 0: put M0,1 into as[1][0], the slide into as[0][1]"]
        );
        trace.loads[at * 2].shared_address = 1000 + 5 * size;
        assert!(trace.differences()[0].ends_with("put M0,1 into as (outside the tile), the slide into as[0][1]"));
    }

    #[test]
    fn values_are_shown_for_block_0_0_beside_the_cpu() {
        let values: Vec<f64> = (0..WIDTH * WIDTH).map(|i| i as f64 + 0.5).collect();
        let pd = Matrix::from_row_major(WIDTH, WIDTH, &values).unwrap();
        let table = format_values(&pd, &values);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2 + THREADS);
        assert_eq!(lines[3], "| (1, 0) | P0,1 | 1.500000 | 1.500000 |");
        assert_eq!(lines[4], "| (0, 1) | P1,0 | 4.500000 | 4.500000 |");
    }

    #[test]
    fn inputs_are_random_and_never_near_zero() {
        let mut random = Random::new(5);
        let (md, nd) = (random_input(&mut random).unwrap(), random_input(&mut random).unwrap());
        assert_ne!(md.data(), nd.data());
        for value in md.data().iter().chain(nd.data()) {
            assert!((0.5..1.0).contains(&value.abs()), "{value}");
        }
        assert!(md.data().iter().any(|v| *v < 0.0) && md.data().iter().any(|v| *v > 0.0));
    }

    /// The Rust twin of `struct Traced` has the CUDA one's size: mmm's two tiles are all the shared
    /// memory the kernel has, in every build.
    #[test]
    fn the_kernels_tiles_hold_rust_sized_traced_elements_in_every_build() {
        assert_eq!(kernels::TILE_EXAMPLE.flags, [format!("-DBLOCK_SIZE={TILE_WIDTH}")]);
        for build in kernels::TILE_EXAMPLE.builds {
            let report = build.report().unwrap();
            let kernel = report.function("mmm_traced").expect("mmm_traced in every build");
            assert_eq!(
                kernel.shared_bytes as usize,
                2 * THREADS * size_of::<Traced>(),
                "sm_{}",
                build.arch
            );
            assert_eq!(kernel.barriers, Some(1), "mmm's __syncthreads, sm_{}", build.arch);
        }
    }
}

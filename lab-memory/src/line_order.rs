//! The German slides on coalescing since Fermi: the order of a warp's accesses within a 128-byte line
//! no longer matters, only that they all fall into it. `line_order_copy` (`kernels/cuda/memory.cu`)
//! copies the same floats as `strided_copy` at stride 1, but each warp's 32 threads take the 32 floats
//! of their line in order, reversed or shuffled; every line is still read and written whole. Part of
//! `--mode coalescing`, after the alignment table.

use anyhow::{ensure, Result};
use common::check_cuda;
use common::verify::check_cell;
use cust::launch;
use cust::module::Module;

use crate::blocks_for;
use crate::coalescing::{measure_rows, Access, Measured, Sweep, BLOCK, COPIES_PER_THREAD};

/// How a warp's threads map onto the floats of their line (`order` in `within_line`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    InOrder,
    Reversed,
    Shuffled,
}

impl Order {
    pub const ALL: [Order; 3] = [Order::InOrder, Order::Reversed, Order::Shuffled];

    /// The kernel's `order` argument.
    fn code(self) -> i32 {
        self as i32
    }

    /// The row's name: which float of the line lane `lane` takes.
    pub fn label(self) -> &'static str {
        match self {
            Order::InOrder => "lane",
            Order::Reversed => "31 - lane",
            Order::Shuffled => "(13 * lane + 7) % 32",
        }
    }

    /// Memory.cu's `within_line`: the float element `i` of the copy goes to.
    pub fn within_line(self, i: usize) -> usize {
        let (line, lane) = (i & !31, i & 31);
        match self {
            Order::InOrder => i,
            Order::Reversed => line | (31 - lane),
            Order::Shuffled => line | ((lane * 13 + 7) & 31),
        }
    }
}

/// Times and checks the copy of `access` (stride 1, offset 0, whole lines) in `order`.
pub fn measure(
    module: &Module,
    sweep: &mut Sweep,
    order: Order,
    access: Access,
    repetitions: usize,
) -> Result<Measured> {
    ensure!(
        access.stride == 1 && access.offset == 0 && access.elements.is_multiple_of(32),
        "{access:?}: the order within a line needs whole lines from the start, at stride 1"
    );
    let copy = check_cuda!(module.get_function("line_order_copy"))?;
    let grid = blocks_for(access.elements.div_ceil(COPIES_PER_THREAD), BLOCK);
    sweep.measure_other(access, repetitions, |stream, input, output| {
        // __global__ void line_order_copy(const float* in, float* out, int order, int n)
        // SAFETY: the arguments match the kernel's C signature, in type and order; `n` is a multiple
        // of 32 (ensured above), so every index `within_line` gives is below `n`, inside both buffers
        // (the sweep checks the span fits before any launch).
        check_cuda!(unsafe {
            launch!(copy<<<grid, BLOCK, 0, stream>>>(input, output, order.code(), access.elements as i32))
        })?;
        Ok(())
    })
}

/// The copy of every order over the floats of `floats`-float buffers, whole lines only (the
/// permutation stays inside each line), checked like the stride sweep and printed beside the in-order
/// time.
pub fn table(module: &Module, sweep: &mut Sweep, floats: usize, repetitions: usize) -> Result<Vec<Measured>> {
    let fitting = Access::fitting(1, 0, floats);
    let access = Access {
        elements: fitting.elements & !31,
        ..fitting
    };
    let measured = measure_rows(&Order::ALL, "order within a line", Order::label, |order| {
        measure(module, sweep, order, access, repetitions)
    })?;
    println!("\nThe German slides: within a 128-byte line the order of a warp's accesses does not matter. out[j] = in[j] + 1, lane l of each warp taking float j of its line:\n");
    println!("| float of the line | sectors per warp | GPU time in ms | effective GB/s | vs in order | check |");
    println!("|-------------------|------------------|----------------|----------------|-------------|-------|");
    let in_order = measured[0].bandwidth();
    for (order, m) in Order::ALL.iter().zip(&measured) {
        println!(
            "| {} | {} | {:.4} | {:.0} | {:.2} | {} |",
            order.label(),
            m.access.sectors_per_warp(),
            m.timing.median_ms(),
            m.bandwidth() / 1e9,
            m.bandwidth() / in_order,
            check_cell(m.wrong)
        );
    }
    Ok(measured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_is_a_permutation_of_each_line() {
        for order in Order::ALL {
            for line in [0usize, 32, 4096] {
                let mut places: Vec<usize> = (line..line + 32).map(|i| order.within_line(i)).collect();
                places.sort_unstable();
                assert_eq!(places, (line..line + 32).collect::<Vec<_>>(), "{order:?}");
            }
        }
        assert_eq!(Order::Reversed.within_line(33), 62);
        assert_eq!(Order::Shuffled.within_line(1), 20);
        assert_ne!(Order::Shuffled.within_line(2), 2, "the shuffle moves floats");
    }
}

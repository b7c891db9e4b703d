//! Split-K, shared by the ladder's steps 9 to 11 and Hopper's steps 12 to 18 ([`crate::wgmma`]): how
//! k is cut into slices for one product ([`Split`]), and the slices' partial products with the kernel
//! that adds them into C (`sum_slices` in `kernels/cuda/mmm_ladder.cu`: [`Slabs`]). It depends on
//! `common`, `cust` and `matrix` only: the ladder and wgmma both depend on it, it on neither.

use anyhow::Result;
use common::check_cuda;
use common::verify::poisoned_device_buffer;
use cust::function::Function;
use cust::launch;
use cust::memory::DeviceBuffer;
use cust::module::Module;
use cust::stream::Stream;
use matrix::{Element, MatrixView};

/// The fewest tiles of k a split-K slice gets: each block fills its pipeline's stages first, and a
/// slice must run long after that for the split to pay.
const MIN_SLICE_TILES: u32 = 8;

/// How a split-K step cuts k for one product: `slices` slabs of C's size, each the partial product
/// over `tiles_per_slice` tiles of k (the last may have fewer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    pub slices: u32,
    pub tiles_per_slice: u32,
}

impl std::fmt::Display for Split {
    /// As the ladder's progress lines say it: "k in 32 slices of 32 tiles".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.slices {
            1 => write!(
                f,
                "one slice (C's tiles fill more than half the GPU, or k is too short to split): the step it splits runs as it is"
            ),
            slices => write!(f, "k in {slices} slices of {} tiles", self.tiles_per_slice),
        }
    }
}

impl Split {
    /// For a C of `blocks` block tiles and a k of `k_tiles` tiles, on `multiprocessors` that each hold
    /// `per_multiprocessor` blocks of the kernel at once (one of steps 9 and 11, two of step 10 on
    /// Hopper): as many slices as fill every multiprocessor's blocks once, none shallower than
    /// [`MIN_SLICE_TILES`]. One slice where C's tiles alone give more than half the multiprocessors a
    /// block (a second slice would find none idle: step 10 at 1024, 128 tiles, cut into 2 slices to
    /// fill the second block of each multiprocessor, ran 0.89x step 7 on an H100), or where k has fewer
    /// than two slices' worth of tiles.
    pub fn choose(blocks: u32, k_tiles: u32, multiprocessors: u32, per_multiprocessor: u32) -> Split {
        let blocks = blocks.max(1);
        let wanted = if 2 * blocks > multiprocessors {
            1
        } else {
            (multiprocessors * per_multiprocessor / blocks).max(1)
        };
        let deepest = (k_tiles / MIN_SLICE_TILES).max(1);
        let tiles_per_slice = k_tiles.div_ceil(wanted.min(deepest)).max(1);
        Split {
            slices: k_tiles.div_ceil(tiles_per_slice).max(1),
            tiles_per_slice,
        }
    }
}

/// Split-K's partial products: `slices` slabs of C's size, one per slice of k, and sum_slices, the
/// kernel that adds them into C in slice order (steps 9 to 11, and 12 to 18 where they cut k).
pub struct Slabs<'a, T: Element> {
    slices: u32,
    sum: Function<'a>,
    partial: DeviceBuffer<T>,
}

impl<'a, T: Element> Slabs<'a, T> {
    /// The slabs for `split` of a C of `elements` elements, where it has more than one slice (`None`
    /// for one: the kernel writes C itself), with sum_slices from `module`: mmm_ladder.cu's, which the
    /// ladder loads, for steps 12 to 18 too (mmm_wgmma.cu has no sum of its own).
    pub fn new(module: &'a Module, split: Split, elements: usize) -> Result<Option<Slabs<'a, T>>> {
        if split.slices == 1 {
            return Ok(None);
        }
        let sum = check_cuda!(module.get_function(format!("sum_slices_{}", T::NAME)))?;
        // Poisoned, so that a slab a slice leaves unwritten turns C into NaN, not into old numbers.
        let partial = poisoned_device_buffer::<T>(split.slices as usize * elements)?;
        Ok(Some(Slabs {
            slices: split.slices,
            sum,
            partial,
        }))
    }

    /// The slabs as the split kernels take them: a view of C's size whose slab z starts z x rows x
    /// cols elements on.
    pub fn view(&self, rows: i32, cols: i32) -> MatrixView<T> {
        MatrixView {
            rows,
            cols,
            data: self.partial.as_device_ptr(),
        }
    }

    /// Whether these are `slices` slabs of `count` elements each.
    pub fn holds(&self, slices: u32, count: u64) -> bool {
        self.slices == slices && self.partial.len() as u64 == u64::from(slices) * count
    }

    /// Enqueues C = the sum of the slabs on `stream`, one element per thread, in a grid of at most 16
    /// blocks per multiprocessor that strides over C. `c` must be the C the slabs were made for.
    pub fn add_into(&self, c: MatrixView<T>, multiprocessors: u32, stream: &Stream) -> Result<()> {
        let sum = &self.sum;
        let count = c.rows as u64 * c.cols as u64;
        anyhow::ensure!(
            self.holds(self.slices, count),
            "{} slabs of {} elements in all do not make a C of {} x {}",
            self.slices,
            self.partial.len(),
            c.rows,
            c.cols
        );
        let blocks = count.div_ceil(256).min(u64::from(16 * multiprocessors)) as u32;
        let (partial, slices) = (self.partial.as_device_ptr(), self.slices as i32);
        // __global__ void sum_slices_f64(const double* partial, int slices, MatrixView<double> c), and _f32
        // SAFETY: the signature's types in order; `partial` holds `slices` slabs of C's size (checked
        // above), owned by this struct, which its owner frees only after a synchronize.
        check_cuda!(unsafe { launch!(sum<<<blocks, 256, 0, stream>>>(partial, slices, c)) })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Enough slices to fill every multiprocessor's blocks once, none shallower than MIN_SLICE_TILES
    /// tiles, none empty; one slice where C's tiles give more than half the multiprocessors a block, or
    /// k is short.
    #[test]
    fn split_k_fills_the_multiprocessors_once_with_slices_deep_enough() {
        let split = |slices, tiles_per_slice| Split {
            slices,
            tiles_per_slice,
        };
        // 256 x 8192 x 256 on 132 multiprocessors: in steps 6's and 8's 128 x 256 x 16 tiles, one block
        // per multiprocessor, 2 blocks and 512 tiles of k; in step 7's 128 x 64 x 16, two blocks per
        // multiprocessor, 8 blocks.
        assert_eq!(Split::choose(2, 512, 132, 1), split(64, 8));
        assert_eq!(Split::choose(8, 512, 132, 2), split(32, 16));
        // 1024 cubed: 128 blocks of step 7, one on each multiprocessor already; 32 of tf32's.
        assert_eq!(Split::choose(128, 64, 132, 2), split(1, 64));
        assert_eq!(Split::choose(32, 64, 132, 1), split(4, 16));
        // 64 blocks leave half the multiprocessors idle: slices for both blocks of each.
        assert_eq!(Split::choose(64, 128, 132, 1), split(2, 64));
        assert_eq!(Split::choose(64, 128, 132, 2), split(4, 32));
        // C fills the GPU: one slice, the whole of k.
        assert_eq!(Split::choose(1024, 512, 132, 2), split(1, 512));
        assert_eq!(Split::choose(132, 7, 132, 1), split(1, 7));
        // k too short to split (fewer than two slices of MIN_SLICE_TILES).
        assert_eq!(Split::choose(1, 15, 132, 2), split(1, 15));
        assert_eq!(Split::choose(1, 16, 132, 1), split(2, 8));
        for per_multiprocessor in [1, 2] {
            for blocks in [1, 3, 4, 64, 66, 67, 131, 200] {
                for k_tiles in [1, 2, 9, 17, 100, 1000, 1025] {
                    let Split {
                        slices,
                        tiles_per_slice,
                    } = Split::choose(blocks, k_tiles, 132, per_multiprocessor);
                    assert!(slices * tiles_per_slice >= k_tiles, "k covered");
                    assert!((slices - 1) * tiles_per_slice < k_tiles, "no slice empty");
                    assert!(slices == 1 || tiles_per_slice >= MIN_SLICE_TILES);
                    assert!(slices == 1 || slices * blocks <= 132 * per_multiprocessor, "one wave");
                    assert!(slices == 1 || 2 * blocks <= 132, "only where multiprocessors are idle");
                }
            }
        }
    }
}

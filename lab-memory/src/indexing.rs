//! `--mode indexing`: the Korean notes' helpers, `getGlobalIdx_1D_1D` to `getGlobalIdx_3D_3D`, for 1D, 2D and 3D grids of
//! 1D, 2D and 3D blocks (`kernels/cuda/memory.cu`). Every thread writes where it sits (block and thread
//! coordinates) at its global index; the host checks that each index holds the thread its own
//! arithmetic puts there and that no index was left unwritten: the helper numbers the threads 0 to N-1,
//! each once.

use anyhow::{ensure, Result};
use common::check_cuda;
use cust::function::{BlockSize, GridSize};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy};
use cust::module::Module;

/// How many dimensions a grid or a block has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dims {
    One,
    Two,
    Three,
}

impl Dims {
    pub const ALL: [Dims; 3] = [Dims::One, Dims::Two, Dims::Three];

    fn digit(self) -> u32 {
        match self {
            Dims::One => 1,
            Dims::Two => 2,
            Dims::Three => 3,
        }
    }

    /// `(x, y, z)` from `sizes`, the unused ones 1.
    pub fn shape(self, sizes: (u32, u32, u32)) -> (u32, u32, u32) {
        match self {
            Dims::One => (sizes.0, 1, 1),
            Dims::Two => (sizes.0, sizes.1, 1),
            Dims::Three => sizes,
        }
    }
}

/// One helper: the grid's and the block's dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Helper {
    pub grid: Dims,
    pub block: Dims,
}

impl Helper {
    /// All nine, in the notes' order.
    pub fn all() -> Vec<Helper> {
        Dims::ALL
            .iter()
            .flat_map(|&grid| Dims::ALL.iter().map(move |&block| Helper { grid, block }))
            .collect()
    }

    /// The name in the notes, `getGlobalIdx_2D_3D`.
    pub fn name(self) -> String {
        format!("getGlobalIdx_{}D_{}D", self.grid.digit(), self.block.digit())
    }

    /// The kernel that calls it, `index_2d_3d`.
    pub fn kernel(self) -> String {
        format!("index_{}d_{}d", self.grid.digit(), self.block.digit())
    }
}

/// Where a thread sits, laid out like `struct Placement` in `kernels/cuda/memory.cu`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub block: [i32; 3],
    pub thread: [i32; 3],
}

// SAFETY: six ints, copied as they are.
unsafe impl DeviceCopy for Placement {}

impl Placement {
    /// What no thread writes: the poison every slot starts with.
    pub const NEVER_WRITTEN: Placement = Placement {
        block: [-1; 3],
        thread: [-1; 3],
    };
}

/// The global index of the thread at `placement` in a grid of `grid` blocks of `block` threads:
/// blocks counted x first, then y, then z, and the threads within a block the same way. Every helper
/// computes this for its shapes.
pub fn global_index(grid: (u32, u32, u32), block: (u32, u32, u32), placement: &Placement) -> i64 {
    let [bx, by, bz] = placement.block.map(i64::from);
    let [tx, ty, tz] = placement.thread.map(i64::from);
    let (gx, gy) = (i64::from(grid.0), i64::from(grid.1));
    let (dx, dy, dz) = (i64::from(block.0), i64::from(block.1), i64::from(block.2));
    let block_id = bx + by * gx + bz * gx * gy;
    block_id * dx * dy * dz + tz * dx * dy + ty * dx + tx
}

/// One helper's run: every slot's placement.
pub struct Mapping {
    pub helper: Helper,
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub placements: Vec<Placement>,
}

impl Mapping {
    pub fn threads(&self) -> usize {
        self.placements.len()
    }

    /// Slots never written, and slots whose thread the CPU places elsewhere; both 0 when the helper
    /// numbers the threads 0 to N-1, each once.
    pub fn wrong(&self) -> (usize, usize) {
        let unwritten = self
            .placements
            .iter()
            .filter(|p| **p == Placement::NEVER_WRITTEN)
            .count();
        let misplaced = self
            .placements
            .iter()
            .enumerate()
            .filter(|(index, p)| {
                **p != Placement::NEVER_WRITTEN && global_index(self.grid, self.block, p) != *index as i64
            })
            .count();
        (unwritten, misplaced)
    }
}

/// Launches `helper`'s kernel on a grid of `grid` blocks of `block` threads (each cut to the helper's
/// dimensions) over poisoned slots, and reads the slots back.
pub fn run(module: &Module, helper: Helper, grid: (u32, u32, u32), block: (u32, u32, u32)) -> Result<Mapping> {
    let (grid, block) = (helper.grid.shape(grid), helper.block.shape(block));
    let threads = u64::from(grid.0 * grid.1 * grid.2) * u64::from(block.0 * block.1 * block.2);
    ensure!(
        threads <= i32::MAX as u64,
        "{threads} threads do not fit the kernels' int index"
    );
    let kernel = check_cuda!(module.get_function(helper.kernel()))?;
    let stream = crate::new_stream()?;
    let mut placements = vec![Placement::NEVER_WRITTEN; threads as usize];
    let out = check_cuda!(DeviceBuffer::from_slice(&placements))?;
    let (grid_size, block_size) = (
        GridSize::xyz(grid.0, grid.1, grid.2),
        BlockSize::xyz(block.0, block.1, block.2),
    );
    // __global__ void index_2d_3d(Placement* out, int n), ...
    // SAFETY: the arguments match the kernel's C signature beside the launch, in type and order, and point
    // into live device buffers as large as the kernel indexes.
    check_cuda!(unsafe { launch!(kernel<<<grid_size, block_size, 0, stream>>>(out.as_device_ptr(), threads as i32)) })?;
    check_cuda!(stream.synchronize())?;
    check_cuda!(out.copy_to(&mut placements[..]))?;
    Ok(Mapping {
        helper,
        grid,
        block,
        placements,
    })
}

/// The global indices of a 2D grid of 2D blocks drawn as the threads lie: one row per thread row,
/// blocks separated by `|` and lines of dashes.
pub fn picture(mapping: &Mapping) -> String {
    let (grid, block) = (mapping.grid, mapping.block);
    let (width, height) = (grid.0 * block.0, grid.1 * block.1);
    let cell = (mapping.threads().saturating_sub(1)).to_string().len();
    let mut at = vec![vec![String::from("?"); width as usize]; height as usize];
    for (index, p) in mapping.placements.iter().enumerate() {
        if *p != Placement::NEVER_WRITTEN && p.block[2] == 0 && p.thread[2] == 0 {
            let x = p.block[0] as u32 * block.0 + p.thread[0] as u32;
            let y = p.block[1] as u32 * block.1 + p.thread[1] as u32;
            at[y as usize][x as usize] = index.to_string();
        }
    }
    let mut out = String::new();
    for (y, row) in at.iter().enumerate() {
        if y > 0 && (y as u32).is_multiple_of(block.1) {
            out.push_str(&"-".repeat(row.len() * (cell + 1) + 2 * (grid.0 as usize - 1)));
            out.push('\n');
        }
        for (x, index) in row.iter().enumerate() {
            if x > 0 && (x as u32).is_multiple_of(block.0) {
                out.push_str(" |");
            }
            out.push_str(&format!(" {index:>cell$}"));
        }
        out.push('\n');
    }
    out
}

/// `--mode indexing`: every helper on the `grid` and `block` sizes (`--grid`, `--block`), checked; then
/// the picture of a small 2D grid. Returns whether every thread landed where its helper says.
pub fn report(module: &Module, grid: (u32, u32, u32), block: (u32, u32, u32)) -> Result<bool> {
    println!("\nThread indexing: every thread writes its block and thread at getGlobalIdx_*(); the CPU checks each\n");
    println!("| helper | grid | block | threads | never written | misplaced | check |");
    println!("|--------|------|-------|---------|---------------|-----------|-------|");
    let mut passed = true;
    for helper in Helper::all() {
        let mapping = run(module, helper, grid, block)?;
        let (unwritten, misplaced) = mapping.wrong();
        passed &= unwritten + misplaced == 0;
        let dims = |(x, y, z): (u32, u32, u32)| format!("{x} x {y} x {z}");
        println!(
            "| {} | {} | {} | {} | {unwritten} | {misplaced} | {} |",
            helper.name(),
            dims(mapping.grid),
            dims(mapping.block),
            mapping.threads(),
            if unwritten + misplaced == 0 { "PASS" } else { "FAIL" }
        );
    }
    let small = run(
        module,
        Helper {
            grid: Dims::Two,
            block: Dims::Two,
        },
        (3, 2, 1),
        (4, 2, 1),
    )?;
    println!("\ngetGlobalIdx_2D_2D on a grid of 3 x 2 blocks of 4 x 2 threads, each thread's index where it lies:\n");
    print!("{}", picture(&small));
    let (unwritten, misplaced) = small.wrong();
    Ok(passed && unwritten + misplaced == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_notes() {
        let helpers = Helper::all();
        assert_eq!(helpers.len(), 9);
        assert_eq!(helpers[0].name(), "getGlobalIdx_1D_1D");
        assert_eq!(helpers[5].name(), "getGlobalIdx_2D_3D");
        assert_eq!(helpers[5].kernel(), "index_2d_3d");
        for helper in helpers {
            assert!(kernels::MEMORY.in_every_build(&helper.kernel()), "{}", helper.kernel());
        }
    }

    #[test]
    fn the_global_index_counts_x_then_y_then_z() {
        let at = |block, thread| Placement { block, thread };
        // Grid 2 x 3 x 2 of blocks 4 x 2 x 3 (24 threads each).
        let (grid, block) = ((2, 3, 2), (4, 2, 3));
        assert_eq!(global_index(grid, block, &at([0, 0, 0], [0, 0, 0])), 0);
        assert_eq!(global_index(grid, block, &at([0, 0, 0], [3, 1, 2])), 3 + 4 + 2 * 8);
        assert_eq!(global_index(grid, block, &at([1, 0, 0], [0, 0, 0])), 24);
        assert_eq!(global_index(grid, block, &at([0, 1, 0], [0, 0, 0])), 2 * 24);
        assert_eq!(global_index(grid, block, &at([1, 2, 1], [3, 1, 2])), 12 * 24 - 1);
    }

    #[test]
    fn a_mapping_with_a_hole_or_a_misplaced_thread_is_wrong() {
        let (grid, block) = ((2, 1, 1), (2, 1, 1));
        let at = |b, t| Placement {
            block: [b, 0, 0],
            thread: [t, 0, 0],
        };
        let good = vec![at(0, 0), at(0, 1), at(1, 0), at(1, 1)];
        let mapping = |placements| Mapping {
            helper: Helper {
                grid: Dims::One,
                block: Dims::One,
            },
            grid,
            block,
            placements,
        };
        assert_eq!(mapping(good.clone()).wrong(), (0, 0));
        let mut swapped = good.clone();
        swapped.swap(1, 2);
        assert_eq!(mapping(swapped).wrong(), (0, 2));
        let mut hole = good;
        hole[3] = Placement::NEVER_WRITTEN;
        assert_eq!(mapping(hole).wrong(), (1, 0));
    }

    #[test]
    fn the_picture_shows_indices_where_the_threads_lie() {
        let (grid, block) = ((2, 2, 1), (2, 1, 1));
        let placements: Vec<Placement> = (0..8)
            .map(|i: i32| {
                let (block_id, t) = (i / 2, i % 2);
                Placement {
                    block: [block_id % 2, block_id / 2, 0],
                    thread: [t, 0, 0],
                }
            })
            .collect();
        let mapping = Mapping {
            helper: Helper {
                grid: Dims::Two,
                block: Dims::Two,
            },
            grid,
            block,
            placements,
        };
        assert_eq!(picture(&mapping), " 0 1 | 2 3\n----------\n 4 5 | 6 7\n");
    }
}

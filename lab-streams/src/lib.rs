//! lab-streams' vector jobs, called by the modes in `main.rs` and by the GPU tests. The matrix batch
//! of the German slides lives in `common::matrix::batch`, because lab-pinned runs it too.

pub mod small_kernels;
pub mod vector;

//! lab-pinned's bandwidth sweep, called by `main.rs` and the GPU tests.

pub mod sweep;

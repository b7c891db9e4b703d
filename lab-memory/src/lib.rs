//! lab-memory's experiments, called by `main.rs` and by the GPU tests.

pub mod device_query;
pub mod indexing;
pub mod symbols;

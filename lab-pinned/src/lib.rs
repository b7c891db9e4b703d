//! lab-pinned's bandwidth sweep and its host-memory flags seen from a second context, called by
//! `main.rs` and the GPU tests.

pub mod flags;
pub mod sweep;

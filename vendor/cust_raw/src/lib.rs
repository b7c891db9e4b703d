#![allow(warnings)]

mod cuda;
pub use cuda::*;

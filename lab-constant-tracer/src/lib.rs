//! lab-constant-tracer's parts: the scene ([`scene`]), the CPU reference and images ([`render`]), and
//! the GPU side ([`gpu`]). `main.rs` calls them in the slide's order; the GPU tests one by one.

pub mod check;
pub mod gpu;
pub mod render;
pub mod scene;

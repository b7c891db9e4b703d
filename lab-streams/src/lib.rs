//! lab-streams' vector jobs, called by the modes in `main.rs` and by the GPU tests. The matrix batch
//! of the German slides lives in `matrix::batch`, because lab-pinned runs it too.

pub mod small_kernels;
pub mod vector;

/// In which order work is issued to the streams. The host issues it in that order; whether the GPU
/// then runs it at once depends on how the streams map to its hardware queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// Breadth first, one piece per stream in turn. concurrent: kernel k on stream k % streams.
    /// fifteen: every stream's copy in, then every stream's kernel, then every stream's copy out, in
    /// three loops over the streams, as the Korean notes issue them.
    RoundRobin,
    /// Depth first, a stream's work before the next stream's. concurrent: the first kernels all on
    /// stream 0, the next ones on stream 1, ... fifteen: each stream's copy in, kernel and copy out,
    /// then the next stream's (what reference/ and this lab did before they followed the notes).
    StreamByStream,
}

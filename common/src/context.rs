//! Context-wide calls the labs make.

use anyhow::Result;
use cust::context::CurrentContext;
use cust::stream::{Stream, StreamFlags};

use crate::check_cuda;

/// cudaDeviceSynchronize: the host waits for everything enqueued on every stream.
pub fn synchronize_device() -> Result<()> {
    Ok(check_cuda!(CurrentContext::synchronize())?)
}

/// `count` new streams. cust 0.3.2 drops `StreamFlags::NON_BLOCKING`, so these synchronize with the
/// NULL stream exactly like the slides' `cudaStreamCreate`.
pub fn new_streams(count: usize) -> Result<Vec<Stream>> {
    (0..count).map(|_| Ok(check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?)).collect()
}

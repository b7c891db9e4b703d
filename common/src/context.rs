//! Context-wide calls the labs make.

use anyhow::Result;
use cust::context::CurrentContext;

use crate::check_cuda;

/// cudaDeviceSynchronize: the host waits for everything enqueued on every stream.
pub fn synchronize_device() -> Result<()> {
    Ok(check_cuda!(CurrentContext::synchronize())?)
}

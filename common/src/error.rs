//! CHECK_CUDA for Rust: [`check_cuda!`](crate::check_cuda) turns a failing CUDA call into an error that
//! names the call, the file and line, and CUDA's own error name and text, like cuda-samples'
//! `checkCudaErrors`.

use std::ffi::{c_char, c_int, CStr};
use std::fmt;

/// Checks a CUDA call where it is made:
///
/// ```ignore
/// let module = check_cuda!(Module::from_ptx(PTX, &[]))?;
/// check_cuda!(stream.synchronize())?; // kernel faults show up here
/// ```
///
/// Takes a `cust` call (`CudaResult<T>`, giving `T`) or a raw driver call returning a `CUresult` code
/// as `i32` (see [`crate::raw`]).
#[macro_export]
macro_rules! check_cuda {
    ($call:expr) => {
        $crate::error::CudaStatus::into_code_result($call).map_err(|code| $crate::error::CudaCallError {
            call: stringify!($call),
            file: file!(),
            line: line!(),
            code,
        })
    };
}

/// A CUDA call that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct CudaCallError {
    /// The call as written in the source.
    pub call: &'static str,
    pub file: &'static str,
    pub line: u32,
    /// The driver's `CUresult` (cust's own errors have codes above 999).
    pub code: u32,
}

impl CudaCallError {
    /// `CUDA_ERROR_OUT_OF_MEMORY` and the like, from the driver itself, so codes newer than cust's
    /// bindings are named too.
    pub fn name(&self) -> String {
        driver_text(cuGetErrorName, self.code).unwrap_or_else(|| "unknown CUDA error".to_string())
    }

    /// The driver's sentence for the code.
    pub fn text(&self) -> String {
        driver_text(cuGetErrorString, self.code).unwrap_or_else(|| "no description".to_string())
    }
}

impl fmt::Display for CudaCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let call: String = self.call.split_whitespace().collect::<Vec<_>>().join(" ");
        write!(
            f,
            "{call} failed at {}:{}: {} ({}): {}",
            self.file,
            self.line,
            self.name(),
            self.code,
            self.text()
        )
    }
}

impl std::error::Error for CudaCallError {}

/// What [`check_cuda!`](crate::check_cuda) accepts: a result that carries a CUDA error code.
pub trait CudaStatus {
    type Value;
    fn into_code_result(self) -> Result<Self::Value, u32>;
}

impl<T> CudaStatus for cust::error::CudaResult<T> {
    type Value = T;
    fn into_code_result(self) -> Result<T, u32> {
        self.map_err(|err| match err {
            // cust names only part of the driver's codes; our patched copy keeps the code behind its
            // `UnknownError` (vendor/cust/PATCHED.md), so the driver's own name can be printed.
            cust::error::CudaError::UnknownError => cust::error::last_unknown_code() as u32,
            err => err as u32,
        })
    }
}

/// A raw `CUresult` from our own `extern "C"` declarations: 0 is success.
impl CudaStatus for c_int {
    type Value = ();
    fn into_code_result(self) -> Result<(), u32> {
        match self {
            0 => Ok(()),
            code => Err(code as u32),
        }
    }
}

type ErrorTextFn = unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int;

// Declared here with plain ints, like the calls in `raw`, so any code goes in and out as the driver has
// it, whatever the bindings' CUresult knows.
extern "C" {
    fn cuGetErrorName(error: c_int, text: *mut *const c_char) -> c_int;
    fn cuGetErrorString(error: c_int, text: *mut *const c_char) -> c_int;
}

fn driver_text(lookup: ErrorTextFn, code: u32) -> Option<String> {
    let code = c_int::try_from(code).ok()?;
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: the driver writes a pointer to a static, NUL-terminated string or leaves it null.
    let status = unsafe { lookup(code, &mut text) };
    if status != 0 || text.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated, as checked above.
    Some(unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use cust::error::{CudaError, CudaResult};

    fn failing_call() -> CudaResult<u32> {
        Err(CudaError::OutOfMemory)
    }

    #[test]
    fn names_the_call_the_place_and_the_cuda_error() {
        let err = check_cuda!(failing_call()).unwrap_err();
        assert_eq!(err.code, 2);
        assert_eq!(err.name(), "CUDA_ERROR_OUT_OF_MEMORY");
        let message = err.to_string();
        assert!(
            message.starts_with("failing_call() failed at common/src/error.rs:"),
            "{message}"
        );
        assert!(
            message.ends_with("CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"),
            "{message}"
        );
    }

    #[test]
    fn names_codes_newer_than_custs_bindings() {
        // 225 came with CUDA 12, after cust's bindings; the driver still names it.
        let raw_status: i32 = 225;
        let err = check_cuda!(raw_status).unwrap_err();
        assert_eq!(err.name(), "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC");
    }

    #[test]
    fn names_codes_that_cust_reports_as_unknown() {
        use cust::error::ToResult;
        use cust::sys::cudaError_enum;
        // 222 (a driver older than the PTX) is not among cust's CudaError variants.
        let err = check_cuda!(cudaError_enum(222).to_result()).unwrap_err();
        assert_eq!(
            (err.code, err.name().as_str()),
            (222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
        );
        // A code the driver itself does not know keeps its number.
        let err = check_cuda!(cudaError_enum(12_345).to_result()).unwrap_err();
        assert_eq!((err.code, err.name().as_str()), (12_345, "unknown CUDA error"));
        assert!(err.to_string().contains("(12345)"), "{err}");
        // A code cust knows is unchanged.
        assert_eq!(check_cuda!(cudaError_enum(2).to_result()).unwrap_err().code, 2);
    }

    #[test]
    fn passes_success_through() {
        assert_eq!(check_cuda!(Ok::<u32, CudaError>(7)), Ok(7));
        assert_eq!(check_cuda!(0i32), Ok(()));
    }
}

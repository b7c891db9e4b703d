//! cuBLAS beside the ladder (issue 24): the library's DGEMM and SGEMM on the same matrices in the same
//! run, the speed limit each step is measured against. cuBLAS is loaded when the lab runs
//! (`libloading`), not linked: the labs build on machines without a CUDA toolkit, and a GPU machine
//! without cuBLAS still climbs the ladder, with one line saying what is missing.

use std::ffi::{c_void, OsString};
use std::path::Path;

use anyhow::{bail, Context as _, Result};
use common::matrix::{Element, MatrixView};
use cust::stream::Stream;
use libloading::Library;

/// `cublasHandle_t`.
type Handle = *mut c_void;
/// `cublasStatus_t`: 0 is success.
type Status = i32;
/// `CUBLAS_OP_N`: the operand as it is stored.
const OP_N: i32 = 0;

/// `cublasDgemm_v2` and `cublasSgemm_v2`: (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
/// beta, C, ldc), column-major.
type GemmFn<T> = unsafe extern "C" fn(Handle, i32, i32, i32, i32, i32, *const T, *const T, i32, *const T, i32, *const T, *mut T, i32) -> Status;

/// The element types cuBLAS multiplies here, with the name of their GEMM.
pub trait Gemm: Element {
    const SYMBOL: &'static [u8];
    /// How the ladder's table names the library's row.
    const ROW: &'static str;
    fn one() -> Self;
    fn zero() -> Self;
}

impl Gemm for f64 {
    const SYMBOL: &'static [u8] = b"cublasDgemm_v2\0";
    const ROW: &'static str = "cuBLAS DGEMM (the library: the speed limit)";
    fn one() -> f64 {
        1.0
    }
    fn zero() -> f64 {
        0.0
    }
}

impl Gemm for f32 {
    const SYMBOL: &'static [u8] = b"cublasSgemm_v2\0";
    const ROW: &'static str = "cuBLAS SGEMM (the library: the speed limit, no TF32)";
    fn one() -> f32 {
        1.0
    }
    fn zero() -> f32 {
        0.0
    }
}

/// A cuBLAS handle in the current context, with the library it came from.
pub struct Cublas {
    handle: Handle,
    library: Library,
}

/// Where cuBLAS 13 is looked for, in order: the dynamic loader's own path, then `$CUDA_PATH/lib64`
/// and `/usr/local/cuda/lib64`.
fn candidates() -> Vec<OsString> {
    let mut names: Vec<OsString> = vec!["libcublas.so.13".into()];
    let roots = std::env::var_os("CUDA_PATH").into_iter().chain([OsString::from("/usr/local/cuda")]);
    names.extend(roots.map(|root| Path::new(&root).join("lib64/libcublas.so.13").into_os_string()));
    names.push("libcublas.so".into());
    names
}

impl Cublas {
    /// Loads cuBLAS and makes a handle in the current context; an error that says where it looked.
    pub fn load() -> Result<Cublas> {
        let mut last = String::new();
        for name in candidates() {
            // SAFETY: loading a library runs its initialisers; cuBLAS's need nothing from the caller.
            match unsafe { Library::new(&name) } {
                Ok(library) => return Cublas::with(library),
                Err(err) => last = err.to_string(),
            }
        }
        bail!("no cuBLAS found (looked for libcublas.so.13 on the loader's path, in $CUDA_PATH/lib64 and /usr/local/cuda/lib64; last: {last})")
    }

    fn with(library: Library) -> Result<Cublas> {
        let mut handle: Handle = std::ptr::null_mut();
        // SAFETY: the symbol's type is cublasCreate_v2's, `cublasStatus_t cublasCreate_v2(cublasHandle_t*)`,
        // and it writes one handle into `handle`.
        let status = unsafe {
            let create = library.get::<unsafe extern "C" fn(*mut Handle) -> Status>(b"cublasCreate_v2\0").context("cuBLAS has no cublasCreate_v2")?;
            create(&mut handle)
        };
        check(status, "cublasCreate_v2")?;
        Ok(Cublas { handle, library })
    }

    /// Enqueues C = A * B on `stream` for row-major A (m x k), B (k x n) and C (m x n). cuBLAS is
    /// column-major, and a row-major matrix read column-major is its transpose: C^T = B^T A^T is one
    /// GEMM with the operands swapped and the leading dimensions the row lengths.
    ///
    /// # Safety
    ///
    /// The views must point at live device buffers of their sizes, in the current context, that stay
    /// alive and are not written by anything else until `stream` has passed this work.
    pub unsafe fn gemm<T: Gemm>(&self, (a, b, c): (MatrixView<T>, MatrixView<T>, MatrixView<T>), stream: &Stream) -> Result<()> {
        let (m, k, n) = (a.rows, a.cols, b.cols);
        let (one, zero) = (T::one(), T::zero());
        // SAFETY: the symbols' types are cuBLAS's own declarations (cublas_api.h); the stream is a live
        // CUstream, which cudaStream_t is; the pointers are device buffers of the sizes passed (the
        // caller's contract), alpha and beta live host values read during the call.
        unsafe {
            let set_stream = self.library.get::<unsafe extern "C" fn(Handle, *mut c_void) -> Status>(b"cublasSetStream_v2\0").context("cuBLAS has no cublasSetStream_v2")?;
            check(set_stream(self.handle, stream.as_inner().cast()), "cublasSetStream_v2")?;
            let gemm = self.library.get::<GemmFn<T>>(T::SYMBOL).with_context(|| format!("cuBLAS has no {}", String::from_utf8_lossy(T::SYMBOL)))?;
            let (a, b, c) = (a.data.as_raw() as *const T, b.data.as_raw() as *const T, c.data.as_raw() as *mut T);
            check(gemm(self.handle, OP_N, OP_N, n, m, k, &one, b, n, a, k, &zero, c, n), "cublas?gemm_v2")
        }
    }
}

impl Drop for Cublas {
    fn drop(&mut self) {
        // SAFETY: the handle came from cublasCreate_v2 of this library and is destroyed once; a
        // missing symbol leaves it to the process's end.
        unsafe {
            if let Ok(destroy) = self.library.get::<unsafe extern "C" fn(Handle) -> Status>(b"cublasDestroy_v2\0") {
                destroy(self.handle);
            }
        }
    }
}

fn check(status: Status, call: &str) -> Result<()> {
    if status != 0 {
        bail!("{call} failed with cuBLAS status {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_for_cublas_13_on_the_loaders_path_first_then_in_the_toolkits() {
        let names = candidates();
        assert_eq!(names.first().map(|name| name.to_str()), Some(Some("libcublas.so.13")));
        assert!(names.iter().any(|name| name == "/usr/local/cuda/lib64/libcublas.so.13"));
    }

    #[test]
    fn without_cublas_the_error_says_where_it_looked() {
        // CI has no cuBLAS (the toolchain is nvcc only); a GPU machine has one and skips this.
        if let Err(err) = Cublas::load() {
            assert!(err.to_string().starts_with("no cuBLAS found (looked for libcublas.so.13"), "{err}");
        }
    }
}

//! cuBLAS beside the ladder (issue 24): the library's DGEMM and SGEMM on the same matrices in the same
//! run, the speed limit each step is measured against. cuBLAS is loaded when the lab runs
//! (`libloading`), not linked: the labs build on machines without a CUDA toolkit, and a GPU machine
//! without cuBLAS still climbs the ladder, with one line saying what is missing.

use std::ffi::{c_void, OsString};
use std::path::Path;

use anyhow::{bail, ensure, Context as _, Result};
use cust::memory::DeviceBuffer;
use cust::stream::Stream;
use libloading::Library;
use matrix::{Element, Matrix, MatrixView};
use rayon::prelude::*;

/// `cublasHandle_t`.
type Handle = *mut c_void;
/// `cublasStatus_t`: 0 is success.
type Status = i32;
/// `CUBLAS_OP_N`: the operand as it is stored.
const OP_N: i32 = 0;

/// `cublasMath_t`: how cuBLAS may compute. `Default` keeps f32 GEMMs in f32 (cuBLAS's own default);
/// `Tf32` lets SGEMM round its inputs to TF32 and use the tensor cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Math {
    Default = 0,
    Tf32 = 3,
}

/// `cublasDgemm_v2` and `cublasSgemm_v2`: (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
/// beta, C, ldc), column-major.
type GemmFn<T> = unsafe extern "C" fn(
    Handle,
    i32,
    i32,
    i32,
    i32,
    i32,
    *const T,
    *const T,
    i32,
    *const T,
    i32,
    *const T,
    *mut T,
    i32,
) -> Status;

/// `cublasGemmEx`: (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,
/// ldc, computeType, algo), column-major, each matrix's element type a `cudaDataType_t`.
type GemmExFn = unsafe extern "C" fn(
    Handle,
    i32,
    i32,
    i32,
    i32,
    i32,
    *const c_void,
    *const c_void,
    i32,
    i32,
    *const c_void,
    i32,
    i32,
    *const c_void,
    *mut c_void,
    i32,
    i32,
    i32,
    i32,
) -> Status;
/// `CUDA_R_16BF` and `CUDA_R_32F` (`cudaDataType_t`).
const CUDA_R_16BF: i32 = 14;
const CUDA_R_32F: i32 = 0;
/// `CUBLAS_COMPUTE_32F`: products summed in f32.
const CUBLAS_COMPUTE_32F: i32 = 68;
/// `CUBLAS_GEMM_DEFAULT`: cuBLAS picks the kernel.
const CUBLAS_GEMM_DEFAULT: i32 = -1;

/// How the ladder's table names cuBLAS's bf16 row.
pub const BF16_ROW: &str = "cuBLAS GemmEx, bf16 inputs, f32 sums (the library)";

/// The element types cuBLAS multiplies here, with their GEMM.
pub trait Gemm: Element {
    /// How the ladder's table names the library's row.
    const ROW: &'static str;
    /// Its GEMM among the functions `cublas` looked up.
    fn function(cublas: &Cublas) -> GemmFn<Self>;
}

impl Gemm for f64 {
    const ROW: &'static str = "cuBLAS DGEMM (the library: the speed limit)";
    fn function(cublas: &Cublas) -> GemmFn<f64> {
        cublas.dgemm
    }
}

impl Gemm for f32 {
    const ROW: &'static str = "cuBLAS SGEMM (the library: the speed limit, no TF32)";
    fn function(cublas: &Cublas) -> GemmFn<f32> {
        cublas.sgemm
    }
}

/// A cuBLAS handle in the current context, and the library's functions, looked up once when it is
/// loaded: nothing but the calls themselves happens while a GEMM is timed.
pub struct Cublas {
    handle: Handle,
    set_stream: unsafe extern "C" fn(Handle, *mut c_void) -> Status,
    set_math_mode: unsafe extern "C" fn(Handle, i32) -> Status,
    dgemm: GemmFn<f64>,
    sgemm: GemmFn<f32>,
    gemm_ex: GemmExFn,
    destroy: unsafe extern "C" fn(Handle) -> Status,
    /// Kept loaded while the function pointers above are in use.
    _library: Library,
}

/// Where cuBLAS 13 is looked for, in order: the dynamic loader's own path, then `$CUDA_PATH/lib64`
/// and `/usr/local/cuda/lib64`.
fn candidates() -> Vec<OsString> {
    let mut names: Vec<OsString> = vec!["libcublas.so.13".into()];
    let roots = std::env::var_os("CUDA_PATH")
        .into_iter()
        .chain([OsString::from("/usr/local/cuda")]);
    names.extend(roots.map(|root| Path::new(&root).join("lib64/libcublas.so.13").into_os_string()));
    names.push("libcublas.so".into());
    names
}

impl Cublas {
    /// Loads cuBLAS and makes a handle in the current context; an error that says where it looked.
    pub fn load() -> Result<Cublas> {
        // SAFETY: every candidate is cuBLAS, whose initialisers need nothing from the caller.
        match unsafe { common::library::load_first(candidates()) } {
            Ok((library, _)) => Cublas::with(library),
            Err(last) => bail!(
                "no cuBLAS found (looked for libcublas.so.13 on the loader's path, in $CUDA_PATH/lib64 and /usr/local/cuda/lib64; last: {last})"
            ),
        }
    }

    fn with(library: Library) -> Result<Cublas> {
        // SAFETY: each symbol is given the type of its declaration in cuBLAS's cublas_api.h; the
        // pointers stay valid while `_library` keeps the library loaded, as long as the Cublas lives.
        let (create, set_stream, set_math_mode, dgemm, sgemm, gemm_ex, destroy) = unsafe {
            (
                *symbol::<unsafe extern "C" fn(*mut Handle) -> Status>(&library, "cublasCreate_v2")?,
                *symbol::<unsafe extern "C" fn(Handle, *mut c_void) -> Status>(&library, "cublasSetStream_v2")?,
                *symbol::<unsafe extern "C" fn(Handle, i32) -> Status>(&library, "cublasSetMathMode")?,
                *symbol::<GemmFn<f64>>(&library, "cublasDgemm_v2")?,
                *symbol::<GemmFn<f32>>(&library, "cublasSgemm_v2")?,
                *symbol::<GemmExFn>(&library, "cublasGemmEx")?,
                *symbol::<unsafe extern "C" fn(Handle) -> Status>(&library, "cublasDestroy_v2")?,
            )
        };
        let mut handle: Handle = std::ptr::null_mut();
        // SAFETY: cublasCreate_v2 writes one handle into `handle`.
        check(unsafe { create(&mut handle) }, "cublasCreate_v2")?;
        Ok(Cublas {
            handle,
            set_stream,
            set_math_mode,
            dgemm,
            sgemm,
            gemm_ex,
            destroy,
            _library: library,
        })
    }

    /// Sets how the GEMMs that follow may compute (cublasSetMathMode).
    pub fn use_math(&self, math: Math) -> Result<()> {
        // SAFETY: a live handle and one of cublasMath_t's values.
        check(
            unsafe { (self.set_math_mode)(self.handle, math as i32) },
            "cublasSetMathMode",
        )
    }

    /// Makes the GEMMs that follow run on `stream`.
    ///
    /// # Safety
    ///
    /// `stream` must outlive every GEMM enqueued on it through this handle.
    pub unsafe fn use_stream(&self, stream: &Stream) -> Result<()> {
        // SAFETY: a live handle and a live CUstream, which is what cudaStream_t is.
        check(
            unsafe { (self.set_stream)(self.handle, stream.as_inner().cast()) },
            "cublasSetStream_v2",
        )
    }

    /// Enqueues C = A * B for row-major A (m x k), B (k x n) and C (m x n) on the stream of
    /// [`Cublas::use_stream`]. cuBLAS is column-major, and a row-major matrix read column-major is its
    /// transpose: C^T = B^T A^T is one GEMM with the operands swapped and the row lengths as leading
    /// dimensions.
    ///
    /// # Safety
    ///
    /// The views must point at live device buffers of their sizes, in the current context, that stay
    /// alive and are not written by anything else until the stream has passed this work.
    pub unsafe fn gemm<T: Gemm>(&self, (a, b, c): (MatrixView<T>, MatrixView<T>, MatrixView<T>)) -> Result<()> {
        let (m, k, n) = (a.rows, a.cols, b.cols);
        let (one, zero) = (T::from_f64(1.0), T::from_f64(0.0));
        let (a, b, c) = (
            a.data.as_raw() as *const T,
            b.data.as_raw() as *const T,
            c.data.as_raw() as *mut T,
        );
        // SAFETY: the pointers are device buffers of the sizes passed (the caller's contract); alpha
        // and beta are host values that live through the call, which reads them before it returns.
        check(
            unsafe { T::function(self)(self.handle, OP_N, OP_N, n, m, k, &one, b, n, a, k, &zero, c, n) },
            "cuBLAS GEMM",
        )
    }
}

impl Cublas {
    /// Enqueues C = A * B for row-major bf16 A (m x k) and B (k x n) and f32 C (m x n), the products
    /// summed in f32 (cublasGemmEx, CUBLAS_COMPUTE_32F), on the stream of [`Cublas::use_stream`]; the
    /// operands swapped as in [`Cublas::gemm`].
    ///
    /// # Safety
    ///
    /// `c` must point at a live device buffer of its sizes, in the current context, that stays alive
    /// and is not written by anything else until the stream has passed this work; A and B must stay
    /// alive as long.
    pub unsafe fn gemm_bf16<T: Element>(&self, a: &Bf16Matrix, b: &Bf16Matrix, c: MatrixView<T>) -> Result<()> {
        ensure!(
            T::NAME == "f32" && a.cols == b.rows && (c.rows as usize, c.cols as usize) == (a.rows, b.cols),
            "cublasGemmEx needs bf16 A m x k, B k x n and f32 C m x n"
        );
        let (m, k, n) = (a.rows as i32, a.cols as i32, b.cols as i32);
        let (one, zero) = (1.0f32, 0.0f32);
        let (a, b) = (a.data.as_device_ptr().as_raw(), b.data.as_device_ptr().as_raw());
        // SAFETY: A and B are bf16 device buffers of the sizes passed (Bf16Matrix keeps them so), C is
        // the caller's contract, checked to be f32 of m x n; alpha and beta are host floats (f32
        // compute) that live through the call, which reads them before it returns.
        check(
            unsafe {
                (self.gemm_ex)(
                    self.handle,
                    OP_N,
                    OP_N,
                    n,
                    m,
                    k,
                    (&one as *const f32).cast(),
                    b as *const c_void,
                    CUDA_R_16BF,
                    n,
                    a as *const c_void,
                    CUDA_R_16BF,
                    k,
                    (&zero as *const f32).cast(),
                    c.data.as_raw() as *mut c_void,
                    CUDA_R_32F,
                    n,
                    CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT,
                )
            },
            "cublasGemmEx",
        )
    }
}

/// Rounds to the nearest bf16, ties to even, as the GPU's conversion does (`to_bf16` in
/// kernels/cuda/mmm_wgmma.cu): the upper 16 bits of the f32 after adding half of what they drop.
pub fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    // Wrapping, as the GPU's unsigned arithmetic: a NaN's high bits may carry out of the 32.
    (bits.wrapping_add(0x7FFF + ((bits >> 16) & 1)) >> 16) as u16
}

/// A row-major matrix's bf16 copy on the GPU, for cuBLAS's bf16 row.
pub struct Bf16Matrix {
    rows: usize,
    cols: usize,
    data: DeviceBuffer<u16>,
}

impl Bf16Matrix {
    /// `matrix`'s host copy rounded to bf16 ([`to_bf16`]) and copied to the GPU.
    pub fn new<T: Element>(matrix: &Matrix<T>) -> Result<Bf16Matrix> {
        let bits: Vec<u16> = matrix
            .data()
            .par_iter()
            .map(|&x| to_bf16(Into::<f64>::into(x) as f32))
            .collect();
        Ok(Bf16Matrix {
            rows: matrix.rows(),
            cols: matrix.cols(),
            data: common::check_cuda!(DeviceBuffer::from_slice(&bits))?,
        })
    }
}

/// The library's function `name`, of type `F`.
///
/// # Safety
///
/// `F` must be the function's true type.
unsafe fn symbol<'lib, F>(library: &'lib Library, name: &str) -> Result<libloading::Symbol<'lib, F>> {
    let mut bytes = name.as_bytes().to_vec();
    bytes.push(0);
    // SAFETY: the caller's contract on F; the name ends in a NUL.
    unsafe { library.get::<F>(&bytes) }.with_context(|| format!("cuBLAS has no {name}"))
}

impl Drop for Cublas {
    fn drop(&mut self) {
        // SAFETY: the handle came from cublasCreate_v2 and is destroyed once; the library is still
        // loaded (`_library` drops after this).
        unsafe { (self.destroy)(self.handle) };
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

    /// Nearest, ties to even: 1 + 2^-8 lies halfway between bf16's 1 and 1 + 2^-7, and goes to 1.
    #[test]
    fn bf16_rounds_to_nearest_ties_to_even() {
        assert_eq!(to_bf16(1.0), 0x3F80);
        assert_eq!(to_bf16(-2.0), 0xC000);
        assert_eq!(to_bf16(1.0 + 1.0 / 256.0), 0x3F80);
        assert_eq!(to_bf16(1.0 + 3.0 / 256.0), 0x3F82);
        assert_eq!(to_bf16(1.0 + 1.0 / 128.0), 0x3F81);
        assert_eq!(to_bf16(1.0 + 1.1 / 256.0), 0x3F81);
        assert_eq!(f32::from_bits(u32::from(to_bf16(std::f32::consts::PI)) << 16), 3.140625);
        // The poison word (a NaN) wraps as on the GPU instead of overflowing.
        assert_eq!(to_bf16(f32::from_bits(u32::MAX)), 0x0000);
    }

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
            assert!(
                err.to_string()
                    .starts_with("no cuBLAS found (looked for libcublas.so.13"),
                "{err}"
            );
        }
    }
}

//! The slides' `Matrix` class: a row-major matrix that owns a host copy (`data`) and, once copied, a
//! device copy (`cuda_data`), moved between them with `copy_to_gpu` / `copy_from_gpu`, and handed to
//! kernels as a non-owning [`MatrixView`] (the slides' "clone" made by the copy constructor).
//!
//! The host copy's memory is a type parameter, so the later labs swap it without copying this type:
//! `Matrix<f64>` keeps it in pageable memory (`Vec`, where the slides call `new T[N * N]`), `Matrix<f64, Pinned<f64>>`
//! in page-locked memory (`cudaMallocHost`, cust's `LockedBuffer`); `common::host_memory` adds mapped
//! and registered memory.
//!
//! The crate holds the matrix and what is built on it, each file above the one it uses: [`file`](mod@file), the
//! slides' matrix files; [`bound`], how far a product may be from the exact one; [`mmm`], C = A * B
//! launched and checked against that bound; [`batch`], the COUNT products of the streams lectures
//! (serially, kernels only, or streamed). It depends on `common` and the profiler (the chronogram's
//! kernel steps), never on a lab or the grading engine.
//!
//! Invariants: `data.len() == rows * cols`; the device copy, when present, has the same length; sizes
//! are at least 1 x 1 and fit the kernels' `int`. Allocate before timing: `cuMemAlloc` and synchronous
//! copies serialize every stream of the device.

pub mod batch;
pub mod bound;
pub mod file;
pub mod mmm;
pub mod staging;

use std::fmt;
use std::ops::{Index, IndexMut};
use std::str::FromStr;

use anyhow::{ensure, Context as _, Result};
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceCopy, DevicePointer};
use cust::stream::Stream;
use rayon::prelude::*;

use common::check_cuda;
use common::host_memory::Mapped;
pub use common::host_memory::{HostStorage, Pinned};
use common::phases;
use common::verify::{Poison, Random};
use staging::Staging;

/// What a matrix element may be: `f32` or `f64`, the precisions the kernels are compiled for. Plain
/// numbers (`Pod`): any bytes are one, so a staging area can carry either ([`staging`]).
pub trait Element:
    DeviceCopy
    + bytemuck::Pod
    + Poison
    + Copy
    + Default
    + PartialEq
    + PartialOrd
    + fmt::Debug
    + FromStr
    + Into<f64>
    + Send
    + Sync
    + 'static
{
    /// `f32` or `f64`: the suffix of the kernels' C names (`mmm_f64`).
    const NAME: &'static str;
    /// Half the distance from 1 to the next number: the largest relative error of one rounding, which
    /// the error bound of a product ([`bound`]) is made of.
    const UNIT_ROUNDOFF: f64;
    fn from_f64(value: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Element for f32 {
    const NAME: &'static str = "f32";
    const UNIT_ROUNDOFF: f64 = f32::EPSILON as f64 / 2.0;
    fn from_f64(value: f64) -> f32 {
        value as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Element for f64 {
    const NAME: &'static str = "f64";
    const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;
    fn from_f64(value: f64) -> f64 {
        value
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// What a kernel receives for a matrix: the sizes and the device pointer, laid out like
/// `template <typename T> struct MatrixView { int rows; int cols; T* data; }` in `kernels/cuda/mmm.cu`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MatrixView<T: DeviceCopy> {
    pub rows: i32,
    pub cols: i32,
    pub data: DevicePointer<T>,
}

// SAFETY: two ints and a device pointer, all plain data the kernel reads by value.
unsafe impl<T: DeviceCopy> DeviceCopy for MatrixView<T> {}

/// A row-major `rows x cols` matrix with a host copy and an optional device copy.
pub struct Matrix<T: Element, H: HostStorage<T> = Vec<T>> {
    rows: usize,
    cols: usize,
    data: H,
    cuda_data: Option<DeviceBuffer<T>>,
}

impl<T: Element> Matrix<T, Mapped<T>> {
    /// The kernel argument for a mapped matrix: no device copy, the kernel reads the host memory.
    pub fn mapped_view(&self) -> Result<MatrixView<T>> {
        Ok(MatrixView {
            rows: self.rows() as i32,
            cols: self.cols() as i32,
            data: self.host().device_pointer()?,
        })
    }
}

impl<T: Element, H: HostStorage<T>> Matrix<T, H> {
    /// A `rows x cols` matrix of zeros on the host; nothing on the GPU yet.
    pub fn new(rows: usize, cols: usize) -> Result<Self> {
        let _part = phases::enter_part("host allocation");
        check_size(rows, cols)?;
        Ok(Matrix {
            rows,
            cols,
            data: H::filled(rows * cols, T::default())?,
            cuda_data: None,
        })
    }

    /// A matrix holding `values`, row by row.
    pub fn from_row_major(rows: usize, cols: usize, values: &[T]) -> Result<Self> {
        ensure!(
            values.len() == rows * cols,
            "{} values do not make a {rows} x {cols} matrix",
            values.len()
        );
        let mut matrix = Self::new(rows, cols)?;
        matrix.data.copy_from_slice(values);
        Ok(matrix)
    }

    /// Random elements, uniform in [-1, 1) and never all zero: zeros would hide unwritten outputs.
    /// Filled on all cores ([`Random::fill`]).
    pub fn random(rows: usize, cols: usize, random: &mut Random) -> Result<Self> {
        let _part = phases::enter_part("random inputs");
        let mut matrix = Self::new(rows, cols)?;
        random.fill(&mut matrix.data, |random| T::from_f64(random.uniform(-1.0, 1.0)));
        Ok(matrix)
    }

    /// Random elements of a second kind, for inputs a shortcut tuned to uniform [-1, 1) gets wrong
    /// (issue 61): exact zeros and ones (an eighth each, ones of both signs), the rest
    /// ±(1 + u) 2^e with u uniform in [0, 1) and e from -12 to 12. Products stay far inside f32's
    /// range at every size a check allows.
    pub fn random_wide(rows: usize, cols: usize, random: &mut Random) -> Result<Self> {
        let _part = phases::enter_part("random inputs");
        let mut matrix = Self::new(rows, cols)?;
        random.fill(&mut matrix.data, |random| {
            let sign = if random.below(2) == 0 { -1.0 } else { 1.0 };
            let value = match random.below(8) {
                0 => 0.0,
                1 => sign,
                _ => sign * (1.0 + random.next_f64()) * 2f64.powi(random.below(25) as i32 - 12),
            };
            T::from_f64(value)
        });
        Ok(matrix)
    }

    /// The same values in another precision or host memory (no device copy), converted on all cores.
    pub fn convert<U: Element, G: HostStorage<U>>(&self) -> Result<Matrix<U, G>> {
        let _part = phases::enter_part("conversions");
        let mut converted = Matrix::<U, G>::new(self.rows, self.cols)?;
        converted
            .data
            .par_iter_mut()
            .zip(self.data.par_iter())
            .for_each(|(to, from)| *to = U::from_f64(from.to_f64()));
        Ok(converted)
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The host copy's storage itself (pinned, mapped, ...), for what only that kind of memory offers.
    pub fn host(&self) -> &H {
        &self.data
    }

    /// The host copy, row-major.
    pub fn data(&self) -> &[T] {
        &self.data
    }

    pub fn data_mut(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// Bytes of one copy (host or device).
    pub fn bytes(&self) -> u64 {
        (self.rows * self.cols * std::mem::size_of::<T>()) as u64
    }

    /// Changes the size, zeroing the host copy and dropping the device copy, as the slide's `resize`.
    pub fn resize(&mut self, rows: usize, cols: usize) -> Result<()> {
        *self = Self::new(rows, cols)?;
        Ok(())
    }

    /// Copies the host copy to the GPU, allocating the device copy on first use (`cudaMalloc` +
    /// `cudaMemcpy`).
    pub fn copy_to_gpu(&mut self) -> Result<()> {
        let _part = phases::enter_part("copies to the GPU");
        self.allocate_on_gpu()?;
        let device = self.cuda_data.as_mut().context("device copy was just allocated")?;
        check_cuda!(device.copy_from(self.data.as_ref()))?;
        Ok(())
    }

    /// Copies the device copy back into the host copy.
    pub fn copy_from_gpu(&mut self) -> Result<()> {
        let _part = phases::enter_part("copies from the GPU");
        let device = self
            .cuda_data
            .as_ref()
            .context("copy_from_gpu before the matrix was on the GPU")?;
        check_cuda!(device.copy_to(self.data.as_mut()))?;
        Ok(())
    }

    /// [`Matrix::copy_to_gpu`] through page-locked pieces filled on all cores ([`staging`]): the same
    /// result at the link's rate, for runs that do not measure the copy.
    pub fn copy_to_gpu_staged(&mut self, staging: &mut Staging) -> Result<()> {
        let _part = phases::enter_part("copies to the GPU");
        self.allocate_on_gpu()?;
        let device = self.cuda_data.as_mut().context("device copy was just allocated")?;
        staging.to_device(&self.data, device)
    }

    /// [`Matrix::copy_from_gpu`] through page-locked pieces emptied on all cores ([`staging`]).
    pub fn copy_from_gpu_staged(&mut self, staging: &mut Staging) -> Result<()> {
        let _part = phases::enter_part("copies from the GPU");
        let device = self
            .cuda_data
            .as_ref()
            .context("copy_from_gpu before the matrix was on the GPU")?;
        staging.to_host(device, &mut self.data)
    }

    /// Exchanges the host copies of two matrices of one size, without copying an element: the device
    /// copies stay where they are. lab-mmm hands C's host copy to the CPU's check this way and copies
    /// the next kernel's C into the other one.
    pub fn swap_host(&mut self, other: &mut Matrix<T, H>) -> Result<()> {
        ensure!(
            (self.rows, self.cols) == (other.rows, other.cols),
            "cannot exchange the host copies of a {} x {} and a {} x {} matrix",
            self.rows,
            self.cols,
            other.rows,
            other.cols
        );
        std::mem::swap(&mut self.data, &mut other.data);
        Ok(())
    }

    /// Frees the device copy (the slides' destructor does it with `cudaFree`), for the memory a later
    /// product needs; the host copy stays.
    pub fn free_gpu_copy(&mut self) {
        self.cuda_data = None;
    }

    /// `cudaMemcpyAsync` host to device on `stream` (from pageable memory the call returns only once
    /// the data is staged).
    ///
    /// # Safety
    /// The copy reads the host copy and writes the device copy after this returns: until `stream` has
    /// passed it (synchronize, or wait for an event recorded after it), the matrix must not be
    /// written, resized or dropped, nor its device copy read or written by other work.
    pub unsafe fn copy_to_gpu_async(&mut self, stream: &Stream) -> Result<()> {
        let device = self
            .cuda_data
            .as_mut()
            .context("allocate_on_gpu before an asynchronous copy")?;
        // SAFETY: the lengths are equal (the matrix's invariant); the caller keeps both sides alive and
        // untouched until the stream has passed the copy (this function's contract).
        check_cuda!(unsafe { device.async_copy_from(self.data.as_ref(), stream) })?;
        Ok(())
    }

    /// `cudaMemcpyAsync` device to host on `stream`.
    ///
    /// # Safety
    /// The copy writes the host copy after this returns: until `stream` has passed it, the matrix must
    /// not be read, written, resized or dropped, nor its device copy written by other work.
    pub unsafe fn copy_from_gpu_async(&mut self, stream: &Stream) -> Result<()> {
        let device = self
            .cuda_data
            .as_ref()
            .context("copy_from_gpu_async before the matrix was on the GPU")?;
        // SAFETY: as in copy_to_gpu_async: equal lengths, and the caller's contract keeps the host copy
        // alive and unread until the copy is done.
        check_cuda!(unsafe { device.async_copy_to(self.data.as_mut(), stream) })?;
        Ok(())
    }

    /// Whether the matrix has a device copy.
    pub fn is_on_gpu(&self) -> bool {
        self.cuda_data.is_some()
    }

    /// Allocates the device copy if there is none (contents undefined until written).
    pub fn allocate_on_gpu(&mut self) -> Result<()> {
        if self.cuda_data.is_none() {
            // SAFETY: the buffer is written (copy or kernel) before anything reads it.
            self.cuda_data = Some(check_cuda!(unsafe {
                DeviceBuffer::uninitialized(self.rows * self.cols)
            })?);
        }
        Ok(())
    }

    /// Fills the device copy with NaN, so elements a kernel leaves unwritten show up.
    pub fn poison_on_gpu(&mut self) -> Result<()> {
        let _part = phases::enter_part("poisoning");
        self.allocate_on_gpu()?;
        let device = self.cuda_data.as_mut().context("device copy was just allocated")?;
        common::verify::poison(device)
    }

    /// The device copy as it is now, leaving the host copy alone: to see whether a kernel wrote into
    /// an input it was to read only.
    pub fn read_gpu_copy(&self) -> Result<Vec<T>> {
        let device = self
            .cuda_data
            .as_ref()
            .context("the matrix has no device copy: copy_to_gpu first")?;
        let mut now =
            common::host_memory::try_filled_vec(self.rows * self.cols, T::default(), "a matrix's device copy")?;
        check_cuda!(device.copy_to(&mut now))?;
        Ok(now)
    }

    /// The kernel argument for this matrix (the slides' shallow "clone").
    pub fn view(&self) -> Result<MatrixView<T>> {
        let device = self
            .cuda_data
            .as_ref()
            .context("the matrix has no device copy: copy_to_gpu first")?;
        Ok(MatrixView {
            rows: self.rows as i32,
            cols: self.cols as i32,
            data: device.as_device_ptr(),
        })
    }
}

/// Sizes and where the copies are; the elements are what `Display` prints.
impl<T: Element, H: HostStorage<T>> fmt::Debug for Matrix<T, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Matrix<{}> {} x {} ({} host", T::NAME, self.rows, self.cols, H::KIND)?;
        write!(f, "{})", if self.cuda_data.is_some() { ", on the GPU" } else { "" })
    }
}

impl<T: Element, H: HostStorage<T>> Index<(usize, usize)> for Matrix<T, H> {
    type Output = T;
    fn index(&self, (i, j): (usize, usize)) -> &T {
        &self.data[i * self.cols + j]
    }
}

impl<T: Element, H: HostStorage<T>> IndexMut<(usize, usize)> for Matrix<T, H> {
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut T {
        &mut self.data[i * self.cols + j]
    }
}

/// Prints like the slide program: one row per line, 14 significant digits (`%.14g`).
impl<T: Element, H: HostStorage<T>> fmt::Display for Matrix<T, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in self.data.chunks(self.cols) {
            let cells: Vec<String> = row.iter().map(|v| format_significant(v.to_f64(), 14)).collect();
            writeln!(f, "{}", cells.join(" "))?;
        }
        Ok(())
    }
}

/// C's `%.{digits}g`: `digits` significant digits, trailing zeros dropped, exponent form for very large or
/// small magnitudes.
pub fn format_significant(value: f64, digits: usize) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let scientific = format!("{:.*e}", digits - 1, value);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= digits as i32 {
        let mantissa = trim_fraction(mantissa);
        format!(
            "{mantissa}e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        )
    } else {
        let decimals = (digits as i32 - 1 - exponent).max(0) as usize;
        trim_fraction(&format!("{value:.decimals$}")).to_string()
    }
}

fn trim_fraction(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

fn check_size(rows: usize, cols: usize) -> Result<()> {
    ensure!(
        rows > 0 && cols > 0,
        "a {rows} x {cols} matrix is empty: both sizes must be at least 1"
    );
    let limit = i32::MAX as usize;
    ensure!(
        rows <= limit && cols <= limit,
        "a {rows} x {cols} matrix is too large for the kernels' int sizes"
    );
    rows.checked_mul(cols).context("the number of elements overflows")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_printf_g_with_14_digits() {
        assert_eq!(format_significant(1.0, 14), "1");
        assert_eq!(format_significant(-2.5, 14), "-2.5");
        assert_eq!(format_significant(1.0 / 3.0, 14), "0.33333333333333");
        assert_eq!(format_significant(123456.789, 14), "123456.789");
        assert_eq!(format_significant(1.5e-7, 14), "1.5e-07");
        assert_eq!(format_significant(6.02214076e23, 14), "6.02214076e+23");
        assert_eq!(format_significant(0.0, 14), "0");
    }

    #[test]
    fn indexes_row_major_and_prints_one_row_per_line() {
        let m = Matrix::<f64>::from_row_major(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.5]).unwrap();
        assert_eq!(m[(1, 2)], 6.5);
        assert_eq!(m[(0, 1)], 2.0);
        assert_eq!(m.to_string(), "1 2 3\n4 5 6.5\n");
    }

    #[test]
    fn swap_host_exchanges_the_host_copies_of_matrices_of_one_size_only() {
        let mut a = Matrix::<f32>::from_row_major(1, 2, &[1.0, 2.0]).unwrap();
        let mut b = Matrix::<f32>::from_row_major(1, 2, &[3.0, 4.0]).unwrap();
        a.swap_host(&mut b).unwrap();
        assert_eq!((a.data(), b.data()), (&[3.0, 4.0][..], &[1.0, 2.0][..]));
        let mut c = Matrix::<f32>::new(2, 1).unwrap();
        let error = a.swap_host(&mut c).unwrap_err().to_string();
        assert_eq!(error, "cannot exchange the host copies of a 1 x 2 and a 2 x 1 matrix");
        assert_eq!(a.data(), &[3.0, 4.0]);
    }

    #[test]
    fn refuses_empty_sizes_and_wrong_value_counts() {
        assert!(Matrix::<f32>::new(0, 3)
            .unwrap_err()
            .to_string()
            .contains("0 x 3 matrix is empty"));
        assert!(Matrix::<f32>::from_row_major(2, 2, &[1.0; 3]).is_err());
    }

    #[test]
    fn random_matrices_are_never_zero_and_repeat_with_the_seed() {
        let a = Matrix::<f64>::random(4, 5, &mut Random::new(1)).unwrap();
        let b = Matrix::<f64>::random(4, 5, &mut Random::new(1)).unwrap();
        assert_eq!(a.data(), b.data());
        assert!(a.data().iter().all(|v| *v != 0.0 && (-1.0..1.0).contains(v)));
    }

    #[test]
    fn resize_gives_a_zero_matrix_of_the_new_size() {
        let mut m = Matrix::<f64>::from_row_major(1, 2, &[1.0, 2.0]).unwrap();
        m.resize(3, 1).unwrap();
        assert_eq!((m.rows(), m.cols(), m.data()), (3, 1, &[0.0, 0.0, 0.0][..]));
    }

    #[test]
    fn a_view_needs_a_device_copy() {
        let m = Matrix::<f64>::new(2, 2).unwrap();
        assert!(m.view().unwrap_err().to_string().contains("copy_to_gpu first"));
    }

    #[test]
    fn matrix_view_has_the_layout_of_the_cuda_struct() {
        // struct { int rows; int cols; T* data; } on x86-64: 4 + 4 + 8 bytes.
        assert_eq!(std::mem::size_of::<MatrixView<f64>>(), 16);
        assert_eq!(std::mem::align_of::<MatrixView<f32>>(), 8);
        assert_eq!(std::mem::offset_of!(MatrixView<f64>, cols), 4);
        assert_eq!(std::mem::offset_of!(MatrixView<f64>, data), 8);
    }
}

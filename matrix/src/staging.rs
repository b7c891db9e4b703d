//! Copies of large pageable matrices through page-locked memory of our own, for runs where the copy is
//! not the lesson (lab-mmm's large random products: issue 41).
//!
//! A copy from pageable memory (`cudaMemcpy` from a `Vec`) goes through the driver's staging buffer:
//! one CPU thread copies each piece into page-locked memory, then the GPU fetches it; on an H100 that
//! gives 7 to 15 GB/s against the link's 55 (lab-pinned). [`Staging`] does the same with two pieces
//! in turn, the host side on all cores: while the GPU fetches one piece, the cores fill the other.

use anyhow::{Context as _, Result};
use bytemuck::Pod;
use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, DeviceCopy, DeviceSlice, LockedBuffer};
use cust::stream::{Stream, StreamFlags};
use rayon::prelude::*;

use common::check_cuda;

/// Bytes in each of the two page-locked pieces. Pinning costs about 0.8 ms per MiB on an H100's host
/// (two pieces of 64 MiB for each precision took 200 ms of a 8192 run: issue 41), and a copy from
/// 16 MiB of pinned memory runs at 52 GB/s against 55 from 64 MiB on (lab-pinned).
pub const PIECE_BYTES: usize = 16 << 20;
/// Elements one core copies between pageable and page-locked memory at a time.
const STRETCH: usize = 1 << 14;

/// Two page-locked pieces, a stream for their copies, and an event per piece that says when the GPU
/// is done with it. The pieces are words of 8 bytes, seen as whatever plain numbers a copy carries:
/// one staging serves every precision of a run.
pub struct Staging {
    /// Always two, but for [`Drop`], which frees them inside its named part.
    pieces: Vec<LockedBuffer<u64>>,
    done: [Event; 2],
    stream: Stream,
}

impl Staging {
    /// Pieces for copies of up to the largest of `bytes`: [`PIECE_BYTES`] each, or less where every
    /// copy is smaller.
    pub fn for_copies_of(bytes: impl IntoIterator<Item = u64>) -> Result<Staging> {
        let _part = common::phases::enter_part("page-locked staging");
        let largest = bytes.into_iter().max().unwrap_or(0);
        let words = (PIECE_BYTES as u64).min(largest).div_ceil(8).max(1) as usize;
        let piece = || -> Result<LockedBuffer<u64>> {
            common::host_memory::check_pinnable(8 * words as u64, 0)?;
            Ok(check_cuda!(LockedBuffer::new(&0, words))?)
        };
        Ok(Staging {
            pieces: vec![piece()?, piece()?],
            done: [
                check_cuda!(Event::new(EventFlags::DISABLE_TIMING))?,
                check_cuda!(Event::new(EventFlags::DISABLE_TIMING))?,
            ],
            stream: check_cuda!(Stream::new(StreamFlags::NON_BLOCKING, None))?,
        })
    }

    /// Elements of `T` in one piece (at least one: a larger element than a piece is refused by
    /// [`elements`], not a zero-length chunk).
    fn piece_len<T>(&self) -> usize {
        (8 * self.pieces[0].len() / std::mem::size_of::<T>()).max(1)
    }

    /// `host` into `device` (of the same length), piece by piece; returns once all of it is there.
    pub fn to_device<T: DeviceCopy + Pod + Send + Sync>(
        &mut self,
        host: &[T],
        device: &mut DeviceSlice<T>,
    ) -> Result<()> {
        ensure_same_length(host, device)?;
        let result = self.enqueue_to_device(host, device);
        // The stream is drained whatever happened, so no copy outlives the borrows of this call.
        let drained = check_cuda!(self.stream.synchronize());
        result?;
        Ok(drained?)
    }

    fn enqueue_to_device<T: DeviceCopy + Pod + Send + Sync>(
        &mut self,
        host: &[T],
        device: &mut DeviceSlice<T>,
    ) -> Result<()> {
        let piece_len = self.piece_len::<T>();
        for (index, part) in host.chunks(piece_len).enumerate() {
            let which = index % 2;
            if index >= 2 {
                // The copy enqueued from this piece two turns ago must be done before it is refilled.
                check_cuda!(self.done[which].synchronize())?;
            }
            let piece = elements(&mut self.pieces[which], part.len())?;
            copy_on_all_cores(part, piece);
            let mut target = device.index(index * piece_len..index * piece_len + part.len());
            // SAFETY: the piece is page-locked memory this struct owns; it is not written again until
            // `done[which]` (recorded right after) has passed, nor dropped before the stream is drained
            // (`to_device` and `Drop`). `target` lies inside `device`, which the caller's borrow keeps
            // alive until `to_device` has drained the stream.
            check_cuda!(unsafe { target.async_copy_from(&*piece, &self.stream) })?;
            check_cuda!(self.done[which].record(&self.stream))?;
        }
        Ok(())
    }

    /// `device` into `host` (of the same length), piece by piece: the GPU fills one piece while the
    /// cores empty the other.
    pub fn to_host<T: DeviceCopy + Pod + Send + Sync>(
        &mut self,
        device: &DeviceSlice<T>,
        host: &mut [T],
    ) -> Result<()> {
        ensure_same_length(host, device)?;
        let result = self.copy_to_host(device, host);
        let drained = check_cuda!(self.stream.synchronize());
        result?;
        Ok(drained?)
    }

    fn copy_to_host<T: DeviceCopy + Pod + Send + Sync>(
        &mut self,
        device: &DeviceSlice<T>,
        host: &mut [T],
    ) -> Result<()> {
        let piece_len = self.piece_len::<T>();
        let parts: Vec<&mut [T]> = host.chunks_mut(piece_len).collect();
        let count = parts.len();
        if let Some(first) = parts.first() {
            self.enqueue_to_host(device, 0, first.len())?;
        }
        for (index, part) in parts.into_iter().enumerate() {
            if index + 1 < count {
                // The next piece's copy starts before this one is emptied: the other piece is free (its
                // last part was emptied in the previous turn).
                let next_len = piece_len.min(device.len() - (index + 1) * piece_len);
                self.enqueue_to_host(device, index + 1, next_len)?;
            }
            let which = index % 2;
            check_cuda!(self.done[which].synchronize())?;
            copy_on_all_cores(elements(&mut self.pieces[which], part.len())?, part);
        }
        Ok(())
    }

    /// Enqueues the copy of part `index` (`len` elements) of `device` into piece `index % 2`.
    fn enqueue_to_host<T: DeviceCopy + Pod + Send + Sync>(
        &mut self,
        device: &DeviceSlice<T>,
        index: usize,
        len: usize,
    ) -> Result<()> {
        let piece_len = self.piece_len::<T>();
        let which = index % 2;
        let source = device.index(index * piece_len..index * piece_len + len);
        let piece = elements(&mut self.pieces[which], len)?;
        // SAFETY: the piece is page-locked memory this struct owns; the host reads it only after
        // `done[which]` (recorded right after) has passed, and it is not dropped before the stream is
        // drained (`to_host` and `Drop`). `source` lies inside `device`, borrowed until `to_host` has
        // drained the stream.
        check_cuda!(unsafe { source.async_copy_to(piece, &self.stream) })?;
        check_cuda!(self.done[which].record(&self.stream))?;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _part = common::phases::enter_part("page-locked staging");
        // No copy may still use the pieces when they are freed (each call drains the stream; this is
        // for a panic between an enqueue and the drain). Nothing to do about an error here.
        let _ = self.stream.synchronize();
        self.pieces.clear();
    }
}

/// The first `len` elements of a piece, as `T`s.
fn elements<T: Pod>(piece: &mut LockedBuffer<u64>, len: usize) -> Result<&mut [T]> {
    let elements: &mut [T] = bytemuck::try_cast_slice_mut(piece.as_mut_slice())
        .map_err(|err| anyhow::anyhow!("a staging piece as {}: {err}", std::any::type_name::<T>()))?;
    elements.get_mut(..len).context("a part longer than a staging piece")
}

fn ensure_same_length<T: DeviceCopy>(host: &[T], device: &DeviceSlice<T>) -> Result<()> {
    anyhow::ensure!(
        host.len() == device.len(),
        "{} host elements for a device copy of {}",
        host.len(),
        device.len()
    );
    Ok(())
}

/// `to.copy_from_slice(from)` on all cores.
fn copy_on_all_cores<T: Copy + Send + Sync>(from: &[T], to: &mut [T]) {
    to.par_chunks_mut(STRETCH)
        .zip(from.par_chunks(STRETCH))
        .for_each(|(to, from)| to.copy_from_slice(from));
}

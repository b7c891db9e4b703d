//! Context-wide calls the labs make, and the streams they fork and join.

use std::ops::Deref;

use anyhow::Result;
use cust::context::CurrentContext;
use cust::stream::{Stream, StreamFlags};

use crate::check_cuda;
use crate::raw::OrderEvent;

/// cudaDeviceSynchronize: the host waits for everything enqueued on every stream.
pub fn synchronize_device() -> Result<()> {
    Ok(check_cuda!(CurrentContext::synchronize())?)
}

/// Waits for the whole device when dropped: on every way out of the scope that holds it, an early `?`
/// or a panic included. A safe function that enqueues asynchronous work on memory its caller owns
/// holds one, so that the memory cannot be read, changed or freed while the GPU still uses it.
pub struct WaitForDevice;

impl WaitForDevice {
    /// No wait on the way out: for the path where the caller has just waited for the work itself,
    /// when a second wait would be counted in what is timed.
    pub fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for WaitForDevice {
    fn drop(&mut self) {
        // A failed wait (a fault in the work) is reported by the caller's own synchronize, or was the
        // error already on its way out: nothing to add here.
        let _ = CurrentContext::synchronize();
    }
}

/// The worker streams of fork-and-join, with the events that fork and join them, all made before any
/// work is enqueued: creating them in a timed window would count host time as GPU time (issue 30).
/// Reads as the slice of its streams.
pub struct Streams {
    streams: Vec<Stream>,
    /// Recorded on the main stream at the fork; every worker waits for it.
    forked: OrderEvent,
    /// One per worker, recorded on it at the join; the main stream waits for each.
    done: Vec<OrderEvent>,
}

/// `count` new streams (`cudaStreamCreate`). cust 0.3.2 drops `StreamFlags::NON_BLOCKING` (its
/// patched `Stream::new_non_blocking` is `unsafe`), so these synchronize with the NULL stream exactly
/// like the slides' streams.
pub fn new_streams(count: usize) -> Result<Streams> {
    Streams::from_streams(
        (0..count)
            .map(|_| Ok(check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?))
            .collect::<Result<Vec<_>>>()?,
    )
}

impl Streams {
    /// `streams`, made some other way (lab-streams' non-blocking ones), with their events.
    pub fn from_streams(streams: Vec<Stream>) -> Result<Streams> {
        let done = (0..streams.len())
            .map(|_| OrderEvent::new())
            .collect::<Result<Vec<_>>>()?;
        Ok(Streams {
            streams,
            forked: OrderEvent::new()?,
            done,
        })
    }
}

impl Deref for Streams {
    type Target = [Stream];

    fn deref(&self) -> &[Stream] {
        &self.streams
    }
}

/// Makes each of `streams` wait for what `main` has enqueued so far: the fork of fork-and-join.
pub fn fork(main: &Stream, streams: &Streams) -> Result<()> {
    streams.forked.record(main)?;
    streams.iter().try_for_each(|stream| streams.forked.wait(stream))
}

/// Makes `main` wait for everything enqueued on `streams` so far: the join, done with events instead
/// of the slides' cudaDeviceSynchronize so the host need not wait and an event on `main` can time it.
pub fn join(main: &Stream, streams: &Streams) -> Result<()> {
    streams.iter().zip(&streams.done).try_for_each(|(stream, done)| {
        done.record(stream)?;
        done.wait(main)
    })
}

//! The chronogram the slides draw by hand: every copy and kernel of every stream, one lane per stream,
//! copies in, kernels and copies out in distinct colours on a time axis in ms, written as a small SVG
//! of rectangles.
//!
//! Bars show execution, not queueing. An event recorded before an operation fires when its stream
//! reaches it, which may be long before the hardware starts it (behind other streams' work), so:
//! - a kernel's bar is its twin `<name>_stamped` timing itself: from the first block's start to the last
//!   block's end on the GPU's global timer (`kernels/cuda/stamps.cuh`);
//! - a copy's bar ends at the event after it (the copy is done) and starts no earlier than the copy
//!   before it on the same copy engine ended: with two or more engines, a direction's copies run one
//!   at a time; with one, all copies do (see [`place_copies`]). The start is inferred, and the legend
//!   says so, with the engine count of the GPU.
//!
//! With `--profile` or `--trace` (CUPTI recording, [`crate`]) the bars are CUPTI's records of
//! the same operations instead, copies' true starts included; the stamps' and events' times ride
//! along, and the line under the chronogram says how far the two disagree.
//!
//! Its rooms: `recorder.rs` records a run (events, stamps) and gives its spans; `placing.rs` places
//! copies by copy engine, swaps in CUPTI's records and sums up the overlap; `svg.rs` draws it.

mod placing;
mod recorder;
mod svg;

use std::cell::OnceCell;

use anyhow::Result;
use cust::function::Function;
use cust::memory::DeviceCopy;
use cust::module::Module;

use common::check_cuda;

pub use placing::{disagreement_us, overlap, place_copies, use_cupti_records};
pub use recorder::{kernel_step, record, step, stream_lanes, Recorder};
pub use svg::{bars, svg, write_svg};

/// What a span on the timeline is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    CopyIn,
    Kernel,
    CopyOut,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::CopyIn, Kind::Kernel, Kind::CopyOut];

    fn colour(self) -> &'static str {
        match self {
            Kind::CopyIn => "#4e79a7",
            Kind::Kernel => "#59a14f",
            Kind::CopyOut => "#e15759",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::CopyIn => "copy host to device",
            Kind::Kernel => "kernel",
            Kind::CopyOut => "copy device to host",
        }
    }
}

/// One operation of one stream, in ms from the start of the recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub lane: usize,
    pub kind: Kind,
    pub label: String,
    pub start_ms: f64,
    pub end_ms: f64,
    pub source: Source,
}

/// Where a span's times come from.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Source {
    /// The kernel's stamps, or the events around the copy and the copy-engine inference.
    #[default]
    StampsAndEvents,
    /// CUPTI's record of the operation; the stamps' or events' times of the same bar for comparison.
    Cupti { stamps_start_ms: f64, stamps_end_ms: f64 },
}

/// What a stamped kernel writes, laid out like `struct Stamp` in `kernels/cuda/stamps.cuh`: the
/// global timer in ns at its first block's start and its last block's end.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub start: u64,
    pub end: u64,
}

// SAFETY: two integers, copied to and from the device as they are.
unsafe impl DeviceCopy for Stamp {}

impl Stamp {
    /// Before the launch: any block's start is earlier, any block's end later.
    pub const UNWRITTEN: Stamp = Stamp {
        start: u64::MAX,
        end: 0,
    };
}

/// A kernel with its stamped twin: `name` for the timed runs, `name_stamped` (the same body between
/// `stamp_start` and `stamp_end`, one more parameter: the `Stamp*`) for the recorded run.
pub struct Kernel<'m> {
    pub plain: Function<'m>,
    pub stamped: Function<'m>,
}

impl<'m> Kernel<'m> {
    pub fn get(module: &'m Module, name: &str) -> Result<Kernel<'m>> {
        Ok(Kernel {
            plain: check_cuda!(module.get_function(name))?,
            stamped: check_cuda!(module.get_function(format!("{name}_stamped")))?,
        })
    }
}

/// A [`Kernel`] asked for from its module at its first launch, as the CUDA runtime loads a program's
/// kernel at its first launch (lazy loading, the default since CUDA 12.2; the Driver API loads it at
/// `cuModuleGetFunction`). Loading a kernel waits for the work already queued on the GPU, so a cold
/// run can lose the overlap its streams were made for: the Korean notes' one run does
/// (`lab-streams --mode fifteen --as-printed`). Its stamped twin is asked for at the same time.
pub struct LazyKernel<'m> {
    module: &'m Module,
    name: &'static str,
    kernel: OnceCell<Kernel<'m>>,
}

impl<'m> LazyKernel<'m> {
    pub fn new(module: &'m Module, name: &'static str) -> LazyKernel<'m> {
        LazyKernel {
            module,
            name,
            kernel: OnceCell::new(),
        }
    }

    /// The kernel, asked for from the module the first time.
    pub fn get(&self) -> Result<&Kernel<'m>> {
        match self.kernel.get() {
            Some(kernel) => Ok(kernel),
            None => {
                let kernel = Kernel::get(self.module, self.name)?;
                Ok(self.kernel.get_or_init(|| kernel))
            }
        }
    }
}

/// Kernels one recording can hold (16 bytes of GPU memory each).
pub const MAX_KERNELS: usize = 4096;

/// Copies one recording can hold: their events are made when the recorder starts, so that making
/// them does not hold up the recorded run.
pub const MAX_COPIES: usize = 512;

/// The copy engines of the current context's GPU (`asyncEngineCount`).
fn copy_engines() -> Result<u32> {
    let device = check_cuda!(cust::context::CurrentContext::get_device())?;
    Ok(check_cuda!(device.get_attribute(cust::device::DeviceAttribute::AsyncEngineCount))?.max(0) as u32)
}

#[cfg(test)]
pub(crate) fn test_span(lane: usize, kind: Kind, start_ms: f64, end_ms: f64) -> Span {
    Span {
        lane,
        kind,
        label: format!("{kind:?}"),
        start_ms,
        end_ms,
        source: Source::StampsAndEvents,
    }
}

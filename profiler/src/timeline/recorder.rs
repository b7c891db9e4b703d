//! Recording a run: events around copies, a stamp slot per stamped kernel, read back as spans.

use std::time::Instant;

use anyhow::{anyhow, ensure, Result};
use cust::event::{Event, EventFlags};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer, DevicePointer};
use cust::module::Module;
use cust::stream::Stream;

use super::{copy_engines, place_copies, use_cupti_records, Kind, Source, Span, Stamp, MAX_COPIES, MAX_KERNELS};
use common::check_cuda;
use common::context::WaitForDevice;

/// How a recorded operation is timed.
enum Times {
    /// The pair of events at this index, recorded on its stream before and after it (copies).
    Events(usize),
    /// The stamp it wrote at this index (kernels).
    Stamp(usize),
}

struct Mark {
    lane: usize,
    kind: Kind,
    label: String,
    times: Times,
}

/// Records the operations of one run as they are enqueued: events around copies, a stamp slot per
/// kernel; [`Recorder::spans`] reads them once the device is done.
pub struct Recorder {
    origin: Event,
    after_clock: Event,
    /// The global timer at the origin, read by `read_global_timer` (kernels/cuda/timeline.cu).
    clock: DeviceBuffer<u64>,
    stamps: DeviceBuffer<Stamp>,
    /// `MAX_COPIES` pairs of events, start and end, used in order.
    copy_events: Vec<(Event, Event)>,
    marks: Vec<Mark>,
    kernels: usize,
    copies: usize,
    /// The GPU's copy engines, which decide how copies are placed.
    copy_engines: u32,
    /// The host's clock when the origin was enqueued (on an idle GPU, when it fired, to within µs):
    /// lines up the recorders of several GPUs.
    pub started: Instant,
    /// With a profile: the first CUPTI external id of this recording's operations.
    tags: Option<u64>,
    _clock_module: Module,
}

/// An event that can time (the recorder reads its times).
fn new_event() -> Result<Event> {
    Ok(check_cuda!(Event::new(EventFlags::DEFAULT))?)
}

impl Recorder {
    /// Starts the clock on `stream` (record before forking the other streams from it): an event, the
    /// global timer read by a one-thread kernel, another event. Kernel stamps are placed on the events'
    /// axis through that reading, taken as the time of the second event: the kernel reads the timer as
    /// its last act and the event fires as it ends (on an H200 the two clocks then agree to a few µs).
    pub fn start(stream: &Stream) -> Result<Recorder> {
        let module = common::gpu::load_image(&kernels::TIMELINE)?;
        let read_global_timer = check_cuda!(module.get_function("read_global_timer"))?;
        let clock = check_cuda!(DeviceBuffer::from_slice(&[0u64]))?;
        let stamps = check_cuda!(DeviceBuffer::from_slice(&vec![Stamp::UNWRITTEN; MAX_KERNELS]))?;
        let (origin, after_clock) = (new_event()?, new_event()?);
        let copy_events = (0..MAX_COPIES)
            .map(|_| Ok((new_event()?, new_event()?)))
            .collect::<Result<Vec<_>>>()?;
        let started = Instant::now();
        check_cuda!(origin.record(stream))?;
        // __global__ void read_global_timer(unsigned long long* now)
        // SAFETY: one pointer to the recorder's own one-element buffer, as the kernel above takes.
        check_cuda!(unsafe { launch!(read_global_timer<<<1, 1, 0, stream>>>(clock.as_device_ptr())) })?;
        check_cuda!(after_clock.record(stream))?;
        let copy_engines = copy_engines()?;
        let tags = crate::chronogram_tags();
        Ok(Recorder {
            origin,
            after_clock,
            clock,
            stamps,
            copy_events,
            marks: Vec::new(),
            kernels: 0,
            copies: 0,
            copy_engines,
            started,
            tags,
            _clock_module: module,
        })
    }

    /// Enqueues the copy (or copies) `operation` on `stream` between two events, as `kind` in `lane`.
    pub fn around(
        &mut self,
        stream: &Stream,
        lane: usize,
        kind: Kind,
        label: &str,
        operation: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        ensure!(
            self.copies < MAX_COPIES,
            "a chronogram holds at most {MAX_COPIES} copies"
        );
        let (start, end) = &self.copy_events[self.copies];
        let _tagged = crate::tag(self.tags, self.marks.len())?;
        check_cuda!(start.record(stream))?;
        operation()?;
        check_cuda!(end.record(stream))?;
        self.marks.push(Mark {
            lane,
            kind,
            label: label.to_string(),
            times: Times::Events(self.copies),
        });
        self.copies += 1;
        Ok(())
    }

    /// Launches a stamped kernel: `launch` gets the `Stamp*` to pass as its last argument.
    pub fn kernel(
        &mut self,
        lane: usize,
        label: &str,
        launch: impl FnOnce(DevicePointer<Stamp>) -> Result<()>,
    ) -> Result<()> {
        ensure!(
            self.kernels < MAX_KERNELS,
            "a chronogram holds at most {MAX_KERNELS} kernels"
        );
        // SAFETY: the index is within the buffer (checked above).
        let stamp = unsafe { self.stamps.as_device_ptr().add(self.kernels) };
        let _tagged = crate::tag(self.tags, self.marks.len())?;
        launch(stamp)?;
        self.marks.push(Mark {
            lane,
            kind: Kind::Kernel,
            label: label.to_string(),
            times: Times::Stamp(self.kernels),
        });
        self.kernels += 1;
        Ok(())
    }

    /// The spans, once everything recorded has finished (synchronize first).
    pub fn spans(&self) -> Result<Vec<Span>> {
        let ms_since_origin =
            |event: &Event| -> Result<f64> { Ok(f64::from(check_cuda!(event.elapsed_time_f32(&self.origin))?)) };
        let mut clock = [0u64];
        check_cuda!(self.clock.copy_to(&mut clock[..]))?;
        let mut stamps = vec![Stamp::UNWRITTEN; MAX_KERNELS];
        check_cuda!(self.stamps.copy_to(&mut stamps[..]))?;
        let clock_ms = ms_since_origin(&self.after_clock)?;
        let on_axis = |ns: u64| clock_ms + (ns as f64 - clock[0] as f64) / 1e6;
        let mut spans = self
            .marks
            .iter()
            .map(|mark| {
                let (start_ms, end_ms) = match &mark.times {
                    Times::Events(index) => {
                        let (start, end) = &self.copy_events[*index];
                        (ms_since_origin(start)?, ms_since_origin(end)?)
                    }
                    Times::Stamp(index) => {
                        let stamp = stamps[*index];
                        if stamp.start == u64::MAX || stamp.end == 0 {
                            return Err(anyhow!(
                                "kernel \"{}\" of lane {} left no stamp: did it run?",
                                mark.label,
                                mark.lane
                            ));
                        }
                        (on_axis(stamp.start), on_axis(stamp.end))
                    }
                };
                Ok(Span {
                    lane: mark.lane,
                    kind: mark.kind,
                    label: mark.label.clone(),
                    start_ms,
                    end_ms,
                    source: Source::StampsAndEvents,
                })
            })
            .collect::<Result<Vec<Span>>>()?;
        place_copies(&mut spans, self.copy_engines);
        if let Some(first) = self.tags {
            use_cupti_records(&mut spans, &crate::tagged(first, self.marks.len())?);
        }
        Ok(spans)
    }
}

/// Runs `work` once with a recorder started on `main` (the work forks its streams from `main`), waits
/// for `main`, and returns the spans: the one recorded run behind every chronogram.
///
/// Returns only once the device has finished everything enqueued, on every path out (errors and
/// panics included): `work` may enqueue asynchronous copies on memory the caller owns.
pub fn record(main: &Stream, work: impl FnOnce(&mut Recorder) -> Result<()>) -> Result<Vec<Span>> {
    let mut recorder = Recorder::start(main)?;
    let _wait = WaitForDevice; // dropped before the recorder, whose buffers the stamped kernels write
    work(&mut recorder)?;
    check_cuda!(main.synchronize())?;
    recorder.spans()
}

/// The chronogram's lanes, one per stream: "stream 0", "stream 1", ...
pub fn stream_lanes(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("stream {i}")).collect()
}

/// Optionally records a copy: `step(recorder, ...)` runs `operation` between events when there is a
/// recorder, and plainly otherwise, so timed runs and the recorded run enqueue the same work.
pub fn step(
    recorder: &mut Option<&mut Recorder>,
    stream: &Stream,
    lane: usize,
    kind: Kind,
    label: &str,
    operation: impl FnOnce() -> Result<()>,
) -> Result<()> {
    match recorder {
        Some(recorder) => recorder.around(stream, lane, kind, label, operation),
        None => operation(),
    }
}

/// Optionally records a kernel: `launch` gets `Some(stamp)` when there is a recorder (launch the
/// stamped twin with it) and `None` otherwise (launch the kernel itself).
pub fn kernel_step(
    recorder: &mut Option<&mut Recorder>,
    lane: usize,
    label: &str,
    launch: impl FnOnce(Option<DevicePointer<Stamp>>) -> Result<()>,
) -> Result<()> {
    match recorder {
        Some(recorder) => recorder.kernel(lane, label, |stamp| launch(Some(stamp))),
        None => launch(None),
    }
}

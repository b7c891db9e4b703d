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
//! With `--profile` or `--trace` (CUPTI recording, [`crate::profile`]) the bars are CUPTI's records of
//! the same operations instead, copies' true starts included; the stamps' and events' times ride
//! along, and the line under the chronogram says how far the two disagree.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{anyhow, ensure, Result};
use cust::event::{Event, EventFlags};
use cust::function::Function;
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DevicePointer};
use cust::module::Module;
use cust::stream::Stream;

use crate::check_cuda;
use crate::context::WaitForDevice;

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
    pub const UNWRITTEN: Stamp = Stamp { start: u64::MAX, end: 0 };
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

/// Kernels one recording can hold (16 bytes of GPU memory each).
pub const MAX_KERNELS: usize = 4096;

/// Copies one recording can hold: their events are made when the recorder starts, so that making
/// them does not hold up the recorded run.
pub const MAX_COPIES: usize = 512;

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
        let module = crate::gpu::load_image(&kernels::TIMELINE)?;
        let read_global_timer = check_cuda!(module.get_function("read_global_timer"))?;
        let clock = check_cuda!(DeviceBuffer::from_slice(&[0u64]))?;
        let stamps = check_cuda!(DeviceBuffer::from_slice(&vec![Stamp::UNWRITTEN; MAX_KERNELS]))?;
        let (origin, after_clock) = (new_event()?, new_event()?);
        let copy_events = (0..MAX_COPIES).map(|_| Ok((new_event()?, new_event()?))).collect::<Result<Vec<_>>>()?;
        let started = Instant::now();
        check_cuda!(origin.record(stream))?;
        // __global__ void read_global_timer(unsigned long long* now)
        // SAFETY: one pointer to the recorder's own one-element buffer, as the kernel above takes.
        check_cuda!(unsafe { launch!(read_global_timer<<<1, 1, 0, stream>>>(clock.as_device_ptr())) })?;
        check_cuda!(after_clock.record(stream))?;
        let copy_engines = copy_engines()?;
        let tags = crate::profile::chronogram_tags();
        Ok(Recorder { origin, after_clock, clock, stamps, copy_events, marks: Vec::new(), kernels: 0, copies: 0, copy_engines, started, tags, _clock_module: module })
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
        ensure!(self.copies < MAX_COPIES, "a chronogram holds at most {MAX_COPIES} copies");
        let (start, end) = &self.copy_events[self.copies];
        let _tagged = crate::profile::tag(self.tags, self.marks.len())?;
        check_cuda!(start.record(stream))?;
        operation()?;
        check_cuda!(end.record(stream))?;
        self.marks.push(Mark { lane, kind, label: label.to_string(), times: Times::Events(self.copies) });
        self.copies += 1;
        Ok(())
    }

    /// Launches a stamped kernel: `launch` gets the `Stamp*` to pass as its last argument.
    pub fn kernel(&mut self, lane: usize, label: &str, launch: impl FnOnce(DevicePointer<Stamp>) -> Result<()>) -> Result<()> {
        ensure!(self.kernels < MAX_KERNELS, "a chronogram holds at most {MAX_KERNELS} kernels");
        // SAFETY: the index is within the buffer (checked above).
        let stamp = unsafe { self.stamps.as_device_ptr().add(self.kernels) };
        let _tagged = crate::profile::tag(self.tags, self.marks.len())?;
        launch(stamp)?;
        self.marks.push(Mark { lane, kind: Kind::Kernel, label: label.to_string(), times: Times::Stamp(self.kernels) });
        self.kernels += 1;
        Ok(())
    }

    /// The spans, once everything recorded has finished (synchronize first).
    pub fn spans(&self) -> Result<Vec<Span>> {
        let ms_since_origin = |event: &Event| -> Result<f64> { Ok(f64::from(check_cuda!(event.elapsed_time_f32(&self.origin))?)) };
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
                            return Err(anyhow!("kernel \"{}\" of lane {} left no stamp: did it run?", mark.label, mark.lane));
                        }
                        (on_axis(stamp.start), on_axis(stamp.end))
                    }
                };
                Ok(Span { lane: mark.lane, kind: mark.kind, label: mark.label.clone(), start_ms, end_ms, source: Source::StampsAndEvents })
            })
            .collect::<Result<Vec<Span>>>()?;
        place_copies(&mut spans, self.copy_engines);
        if let Some(first) = self.tags {
            use_cupti_records(&mut spans, &crate::profile::tagged(first, self.marks.len())?);
        }
        Ok(spans)
    }
}

/// Puts CUPTI's record of each operation (`records`: first start and last end in ns, in the order
/// of `spans`) in place of the stamps' and events' times, if CUPTI recorded every one. The two
/// clocks are lined up on the operations' ends, which both measure exactly (a kernel's last block, the
/// event after a copy): the median difference of the ends is the offset.
pub fn use_cupti_records(spans: &mut [Span], records: &[Option<(u64, u64)>]) {
    let Some(records) = records.iter().copied().collect::<Option<Vec<(u64, u64)>>>() else { return };
    if records.len() != spans.len() || spans.is_empty() {
        return;
    }
    let mut offsets: Vec<f64> = spans.iter().zip(&records).map(|(span, (_, end))| span.end_ms - *end as f64 / 1e6).collect();
    offsets.sort_by(f64::total_cmp);
    let offset_ms = offsets[offsets.len() / 2];
    for (span, (start, end)) in spans.iter_mut().zip(records) {
        span.source = Source::Cupti { stamps_start_ms: span.start_ms, stamps_end_ms: span.end_ms };
        span.start_ms = start as f64 / 1e6 + offset_ms;
        span.end_ms = end as f64 / 1e6 + offset_ms;
    }
}

/// How far CUPTI's bars and the stamps' and events' differ, in µs: the largest difference of a
/// kernel's start or end, of a copy's end, and of a copy's (inferred) start. `None` for bars that
/// are not CUPTI's.
pub fn disagreement_us(spans: &[Span]) -> Option<(f64, f64, f64)> {
    let mut worst = (0.0_f64, 0.0_f64, 0.0_f64);
    for span in spans {
        let Source::Cupti { stamps_start_ms, stamps_end_ms } = span.source else { return None };
        let (start, end) = ((span.start_ms - stamps_start_ms).abs() * 1e3, (span.end_ms - stamps_end_ms).abs() * 1e3);
        if span.kind == Kind::Kernel {
            worst.0 = worst.0.max(start).max(end);
        } else {
            worst.1 = worst.1.max(end);
            worst.2 = worst.2.max(start);
        }
    }
    (!spans.is_empty()).then_some(worst)
}

/// Starts each copy when its copy engine was free: no earlier than the end of the copy on the same
/// engine that finished before it. Events give a copy's end exactly (the event after it fires when it
/// is done) but its start only as the moment its stream reached it. With two or more copy engines
/// (`copy_engines`, the device's `asyncEngineCount`) each direction has its own and runs its copies
/// one at a time; with one (or none), every copy waits for the one before it, in either direction.
pub fn place_copies(spans: &mut [Span], copy_engines: u32) {
    let queues: &[&[Kind]] = if copy_engines >= 2 { &[&[Kind::CopyIn], &[Kind::CopyOut]] } else { &[&[Kind::CopyIn, Kind::CopyOut]] };
    for kinds in queues {
        let mut order: Vec<usize> = (0..spans.len()).filter(|&i| kinds.contains(&spans[i].kind)).collect();
        order.sort_by(|&x, &y| spans[x].end_ms.total_cmp(&spans[y].end_ms));
        let mut engine_free_ms = f64::NEG_INFINITY;
        for i in order {
            spans[i].start_ms = spans[i].start_ms.max(engine_free_ms);
            engine_free_ms = spans[i].end_ms;
        }
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

/// How long kernels ran, how long copies ran, and how long both ran at once (on any streams), in ms:
/// what the chronogram shows, as numbers.
pub fn overlap(spans: &[Span]) -> (f64, f64, f64) {
    let busy = |keep: &dyn Fn(Kind) -> bool| union(spans.iter().filter(|s| keep(s.kind)).map(|s| (s.start_ms, s.end_ms)).collect());
    let kernels = busy(&|kind| kind == Kind::Kernel);
    let copies = busy(&|kind| kind != Kind::Kernel);
    let both: f64 = kernels
        .iter()
        .flat_map(|k| copies.iter().map(move |c| (k.1.min(c.1) - k.0.max(c.0)).max(0.0)))
        .sum();
    let length = |set: &[(f64, f64)]| set.iter().map(|(a, b)| b - a).sum::<f64>();
    // `+ 0.0`: an empty sum is -0.0, which would print as "-0.0 ms".
    (length(&kernels) + 0.0, length(&copies) + 0.0, both + 0.0)
}

/// Merges intervals into disjoint ones, sorted.
fn union(mut intervals: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    intervals.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    for (start, end) in intervals {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Writes the chronogram to `path` (never over an existing file unless `overwrite`) and returns the
/// line that says what it shows.
pub fn write_svg(path: &std::path::Path, overwrite: bool, title: &str, lanes: &[String], spans: &[Span]) -> Result<String> {
    let _phase = crate::phases::enter(crate::phases::Phase::Output);
    let mut file = crate::output::create_output_file(path, overwrite)?;
    let disagreement = disagreement_us(spans);
    let legend = match disagreement {
        Some(_) => CUPTI_BARS.to_string(),
        None => bars(copy_engines()?),
    };
    std::io::Write::write_all(&mut file, svg(title, lanes, spans, &legend).as_bytes())
        .map_err(|err| anyhow::anyhow!("writing {}: {err}", path.display()))?;
    let (kernel_ms, copy_ms, both_ms) = overlap(spans);
    let mut line = format!(
        "Timeline written to {}: kernels busy {kernel_ms:.1} ms, copies busy {copy_ms:.1} ms, both at once {both_ms:.1} ms",
        path.display()
    );
    if let Some((kernels_us, copy_ends_us, copy_starts_us)) = disagreement {
        line.push_str(&format!(
            "\nIts bars are CUPTI's records. The global-timer stamps and events of the same run differ from them by up to \
             {kernels_us:.1} us for kernels and {copy_ends_us:.1} us for copies' ends; the copies' inferred starts by up to {copy_starts_us:.1} us"
        ));
    }
    Ok(line)
}

/// The legend of a chronogram drawn from CUPTI's records.
const CUPTI_BARS: &str = "Kernels and copies: start and end from CUPTI's activity records (what the GPU did, copies' starts included).";

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 110.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 50.0;
const LANE: f64 = 28.0;
const BOTTOM: f64 = 80.0;

/// The copy engines of the current context's GPU (`asyncEngineCount`).
fn copy_engines() -> Result<u32> {
    let device = check_cuda!(cust::context::CurrentContext::get_device())?;
    Ok(check_cuda!(device.get_attribute(cust::device::DeviceAttribute::AsyncEngineCount))?.max(0) as u32)
}

/// What the bars mean, written under every chronogram: which times were measured, and how the copies'
/// starts were inferred for a GPU with `copy_engines` copy engines.
pub fn bars(copy_engines: u32) -> String {
    let copies = if copy_engines >= 2 {
        format!("start inferred as no earlier than the previous copy in the same direction ended ({copy_engines} copy engines: one direction at a time on each)")
    } else {
        format!("start inferred as no earlier than the previous copy in either direction ended ({copy_engines} copy engine)")
    };
    format!("Kernels: first block's start to last block's end (GPU global timer). Copies: end at the event after them; {copies}.")
}

/// The SVG chronogram: a lane per name in `lanes`, a rectangle per span, a time axis in ms, and
/// `bars`, what the bars mean.
pub fn svg(title: &str, lanes: &[String], spans: &[Span], bars: &str) -> String {
    let end = spans.iter().fold(0.0_f64, |m, s| m.max(s.end_ms)).max(1e-3);
    let step = tick_step(end);
    let plot = WIDTH - LEFT - RIGHT;
    let x = |ms: f64| LEFT + plot * ms / end;
    let height = TOP + LANE * lanes.len() as f64 + BOTTOM;
    let mut out = String::new();
    let _ = writeln!(out, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="12">"#);
    let _ = writeln!(out, r#"<rect width="{WIDTH}" height="{height}" fill="white"/>"#);
    let _ = writeln!(out, r#"<text x="{LEFT}" y="20" font-size="14">{}</text>"#, escape(title));
    for (index, kind) in Kind::ALL.iter().enumerate() {
        let lx = LEFT + 190.0 * index as f64;
        let _ = writeln!(out, r#"<rect x="{lx}" y="30" width="12" height="12" fill="{}"/><text x="{}" y="40">{}</text>"#, kind.colour(), lx + 16.0, kind.name());
    }
    for (index, name) in lanes.iter().enumerate() {
        let y = TOP + LANE * index as f64;
        let _ = writeln!(out, r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#, LEFT - 8.0, y + LANE * 0.65, escape(name));
        let _ = writeln!(out, r##"<line x1="{LEFT}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/>"##, WIDTH - RIGHT);
    }
    for span in spans {
        let y = TOP + LANE * span.lane as f64 + 4.0;
        let (left, right) = (x(span.start_ms), x(span.end_ms));
        let _ = writeln!(
            out,
            r#"<rect x="{left:.2}" y="{y}" width="{:.2}" height="{}" fill="{}"><title>{}: {} {:.3} to {:.3} ms</title></rect>"#,
            (right - left).max(0.5),
            LANE - 8.0,
            span.kind.colour(),
            escape(lanes.get(span.lane).map_or("?", String::as_str)),
            escape(&span.label),
            span.start_ms,
            span.end_ms
        );
    }
    let axis_y = TOP + LANE * lanes.len() as f64 + 6.0;
    let _ = writeln!(out, r#"<line x1="{LEFT}" y1="{axis_y}" x2="{}" y2="{axis_y}" stroke="black"/>"#, WIDTH - RIGHT);
    let mut tick = 0.0;
    while tick <= end * (1.0 + 1e-9) {
        let tx = x(tick);
        let _ = writeln!(out, r#"<line x1="{tx:.2}" y1="{axis_y}" x2="{tx:.2}" y2="{}" stroke="black"/><text x="{tx:.2}" y="{}" text-anchor="middle">{}</text>"#, axis_y + 5.0, axis_y + 18.0, format_tick(tick, step));
        tick += step;
    }
    let _ = writeln!(out, r#"<text x="{}" y="{}" text-anchor="middle">time in ms</text>"#, LEFT + plot / 2.0, axis_y + 38.0);
    let _ = writeln!(out, r#"<text x="{LEFT}" y="{}" font-size="10">{}</text>"#, axis_y + 60.0, escape(bars));
    out.push_str("</svg>\n");
    out
}

/// 1, 2 or 5 times a power of ten, giving 5 to 10 ticks over `end`.
fn tick_step(end: f64) -> f64 {
    let rough = end / 8.0;
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * power).find(|step| end / step <= 10.0).unwrap_or(10.0 * power)
}

fn format_tick(value: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{value:.decimals$}")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(lane: usize, kind: Kind, start_ms: f64, end_ms: f64) -> Span {
        Span { lane, kind, label: format!("{kind:?}"), start_ms, end_ms, source: Source::StampsAndEvents }
    }

    #[test]
    fn cuptis_records_replace_the_bars_lined_up_on_the_ends_and_the_differences_are_reported() {
        // Stamps and events: a copy in (start inferred at 0), the kernel, a copy out.
        let mut spans = vec![span(0, Kind::CopyIn, 0.0, 1.0), span(0, Kind::Kernel, 1.010, 3.0), span(0, Kind::CopyOut, 3.0, 3.5)];
        // CUPTI, on its own clock: the copy really started 0.2 ms in; ends agree but for 2 us.
        let records = [Some((5_200_000, 6_000_000)), Some((6_012_000, 8_002_000)), Some((8_010_000, 8_500_000))];
        use_cupti_records(&mut spans, &records);
        let offset = 1.0 - 6.0; // the median of the ends' differences: 1 - 6, 3 - 8.002, 3.5 - 8.5
        assert!((spans[0].start_ms - (5.2 + offset)).abs() < 1e-9, "{spans:?}");
        assert_eq!(spans[1].source, Source::Cupti { stamps_start_ms: 1.010, stamps_end_ms: 3.0 });
        let (kernels, copy_ends, copy_starts) = disagreement_us(&spans).unwrap();
        assert!((kernels - 2.0).abs() < 1e-6 && copy_ends.abs() < 1e-6 && (copy_starts - 200.0).abs() < 1e-6, "{kernels} {copy_ends} {copy_starts}");
    }

    #[test]
    fn without_a_record_for_every_operation_the_stamps_stay() {
        let mut spans = vec![span(0, Kind::CopyIn, 0.0, 1.0), span(0, Kind::Kernel, 1.0, 2.0)];
        let before = spans.clone();
        use_cupti_records(&mut spans, &[Some((0, 10)), None]);
        assert_eq!(spans, before);
        assert_eq!(disagreement_us(&spans), None);
    }

    #[test]
    fn draws_one_rectangle_per_span_in_its_lane_and_colour() {
        let lanes = vec!["stream 0".to_string(), "stream 1".to_string()];
        let spans = vec![span(0, Kind::CopyIn, 0.0, 2.0), span(0, Kind::Kernel, 2.0, 7.0), span(1, Kind::CopyOut, 7.0, 8.0)];
        let svg = svg("mmm-streamed", &lanes, &spans, &bars(2));
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        // Three spans plus the background and three legend squares.
        assert_eq!(svg.matches("<rect").count(), 3 + 1 + 3);
        // Plot spans x from 110 to 980 over 8 ms: the kernel starts at 2 ms, 217.5 px, and is 543.75 px wide.
        assert!(svg.contains(r##"<rect x="327.50" y="54" width="543.75" height="20" fill="#59a14f">"##), "{svg}");
        // The copy out sits in the second lane, 28 px lower.
        assert!(svg.contains(r##"y="82" width="108.75" height="20" fill="#e15759""##), "{svg}");
        assert!(svg.contains(">stream 1<") && svg.contains(">time in ms<") && svg.contains(">mmm-streamed<"));
    }

    #[test]
    fn the_time_axis_has_round_ticks_up_to_the_end() {
        let svg = svg("t", &["s".to_string()], &[span(0, Kind::Kernel, 0.0, 8.0)], &bars(2));
        for tick in ["0", "1", "2", "4", "8"] {
            assert!(svg.contains(&format!(r#"text-anchor="middle">{tick}</text>"#)), "tick {tick} missing");
        }
        assert!(!svg.contains(r#"text-anchor="middle">9</text>"#));
        assert_eq!(tick_step(8.0), 1.0);
        assert_eq!(tick_step(1850.0), 200.0);
        assert_eq!(tick_step(0.03), 0.005);
        assert_eq!(format_tick(0.015, 0.005), "0.015");
    }

    #[test]
    fn overlap_counts_time_when_copies_and_kernels_run_together() {
        let spans = vec![
            span(0, Kind::CopyIn, 0.0, 2.0),
            span(0, Kind::Kernel, 2.0, 7.0),
            span(1, Kind::CopyIn, 2.0, 4.0),
            span(1, Kind::Kernel, 7.0, 9.0),
            span(0, Kind::CopyOut, 7.0, 8.0),
        ];
        // Kernels 2-9 (7 ms), copies 0-4 and 7-8 (5 ms), both at 2-4 and 7-8 (3 ms).
        assert_eq!(overlap(&spans), (7.0, 5.0, 3.0));
        let none = overlap(&[]);
        assert_eq!(none, (0.0, 0.0, 0.0));
        assert!(!format!("{:.1} {:.1} {:.1}", none.0, none.1, none.2).contains('-'), "{none:?}");
    }

    #[test]
    fn says_what_the_bars_mean() {
        assert!(svg("t", &["s".to_string()], &[], &bars(2)).contains(">Kernels: first block's start to last block's end (GPU global timer)."));
        assert!(bars(7).contains("same direction ended (7 copy engines"), "{}", bars(7));
        assert!(bars(1).contains("either direction ended (1 copy engine)"), "{}", bars(1));
    }

    #[test]
    fn copies_of_one_direction_start_when_the_one_before_them_ended() {
        // Four streams reach their copies in at 0 ms; the engine runs them one after another, 5 ms each.
        let mut spans: Vec<Span> = (0..4).map(|lane| span(lane, Kind::CopyIn, 0.0, 5.0 * (lane + 1) as f64)).collect();
        // Copies out are placed on their own engine; a kernel is left alone.
        spans.push(span(0, Kind::CopyOut, 6.0, 8.0));
        spans.push(span(1, Kind::CopyOut, 5.5, 9.0));
        spans.push(span(2, Kind::Kernel, 1.0, 30.0));
        // A copy its stream reached after the engine was free keeps its own start.
        spans.push(span(3, Kind::CopyIn, 40.0, 41.0));
        let mut one_engine = spans.clone();
        place_copies(&mut spans, 2);
        let starts: Vec<f64> = spans.iter().map(|s| s.start_ms).collect();
        assert_eq!(starts, vec![0.0, 5.0, 10.0, 15.0, 6.0, 8.0, 1.0, 40.0]);
        assert!(spans.iter().all(|s| s.start_ms <= s.end_ms));
        // One engine: a copy out waits for every copy that ended before it, in either direction.
        place_copies(&mut one_engine, 1);
        let starts: Vec<f64> = one_engine.iter().map(|s| s.start_ms).collect();
        assert_eq!(starts, vec![0.0, 9.0, 10.0, 15.0, 6.0, 8.0, 1.0, 40.0]);
    }

    #[test]
    fn labels_are_escaped() {
        let svg = svg("a < b & c", &["<lane>".to_string()], &[], &bars(2));
        assert!(svg.contains("a &lt; b &amp; c") && svg.contains("&lt;lane&gt;"));
    }
}

//! The chronogram the slides draw by hand: events recorded around every copy and kernel of every
//! stream, turned into one lane per stream with copies in, kernels and copies out in distinct colours
//! on a time axis in ms, written as a small SVG of rectangles.

use std::fmt::Write as _;

use anyhow::Result;
use cust::event::{Event, EventFlags};
use cust::stream::{Stream, StreamWaitEventFlags};

use crate::check_cuda;

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
}

/// Records CUDA events around operations as they are enqueued; [`Recorder::spans`] reads them once
/// the device is done.
pub struct Recorder {
    origin: Event,
    marks: Vec<(usize, Kind, String, Event, Event)>,
}

impl Recorder {
    /// Starts the clock with an event on `stream` (record before forking the other streams from it).
    pub fn start(stream: &Stream) -> Result<Recorder> {
        let origin = check_cuda!(Event::new(EventFlags::DEFAULT))?;
        check_cuda!(origin.record(stream))?;
        Ok(Recorder { origin, marks: Vec::new() })
    }

    /// Enqueues `operation` on `stream` between two events, as `kind` in lane `lane`.
    pub fn around(
        &mut self,
        stream: &Stream,
        lane: usize,
        kind: Kind,
        label: &str,
        operation: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let (start, end) = (check_cuda!(Event::new(EventFlags::DEFAULT))?, check_cuda!(Event::new(EventFlags::DEFAULT))?);
        check_cuda!(start.record(stream))?;
        operation()?;
        check_cuda!(end.record(stream))?;
        self.marks.push((lane, kind, label.to_string(), start, end));
        Ok(())
    }

    /// The spans, once everything recorded has finished (synchronize first).
    pub fn spans(&self) -> Result<Vec<Span>> {
        let since_origin = |event: &Event| -> Result<f64> { Ok(f64::from(check_cuda!(event.elapsed_time_f32(&self.origin))?)) };
        self.marks
            .iter()
            .map(|(lane, kind, label, start, end)| {
                Ok(Span { lane: *lane, kind: *kind, label: label.clone(), start_ms: since_origin(start)?, end_ms: since_origin(end)? })
            })
            .collect()
    }
}

/// Runs `work` once with a recorder started on `main` (the work forks its streams from `main`), waits
/// for `main`, and returns the spans: the one recorded run behind every chronogram.
pub fn record(main: &Stream, work: impl FnOnce(&mut Recorder) -> Result<()>) -> Result<Vec<Span>> {
    let mut recorder = Recorder::start(main)?;
    work(&mut recorder)?;
    check_cuda!(main.synchronize())?;
    recorder.spans()
}

/// The chronogram's lanes, one per stream: "stream 0", "stream 1", ...
pub fn stream_lanes(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("stream {i}")).collect()
}

/// Optionally records: `step(recorder, ...)` runs `operation` between events when there is a
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

/// Makes each of `streams` wait for what `main` has enqueued so far: the fork of fork-and-join.
pub fn fork(main: &Stream, streams: &[Stream]) -> Result<()> {
    streams.iter().try_for_each(|stream| wait_for(stream, main))
}

/// Makes `main` wait for everything enqueued on `streams` so far: the join, done with events instead
/// of the slides' cudaDeviceSynchronize so the host need not wait and an event on `main` can time it.
pub fn join(main: &Stream, streams: &[Stream]) -> Result<()> {
    streams.iter().try_for_each(|stream| wait_for(main, stream))
}

/// cudaEventRecord on `other`, cudaStreamWaitEvent on `waiter`.
fn wait_for(waiter: &Stream, other: &Stream) -> Result<()> {
    let event = check_cuda!(Event::new(EventFlags::DISABLE_TIMING))?;
    check_cuda!(event.record(other))?;
    check_cuda!(waiter.wait_event(event, StreamWaitEventFlags::DEFAULT))?;
    Ok(())
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
    (length(&kernels), length(&copies), both)
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
    std::io::Write::write_all(&mut file, svg(title, lanes, spans).as_bytes())
        .map_err(|err| anyhow::anyhow!("writing {}: {err}", path.display()))?;
    let (kernel_ms, copy_ms, both_ms) = overlap(spans);
    Ok(format!(
        "Timeline written to {}: kernels busy {kernel_ms:.1} ms, copies busy {copy_ms:.1} ms, both at once {both_ms:.1} ms",
        path.display()
    ))
}

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 110.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 50.0;
const LANE: f64 = 28.0;
const BOTTOM: f64 = 60.0;

/// The SVG chronogram: a lane per name in `lanes`, a rectangle per span, a time axis in ms, a legend.
pub fn svg(title: &str, lanes: &[String], spans: &[Span]) -> String {
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
        Span { lane, kind, label: format!("{kind:?}"), start_ms, end_ms }
    }

    #[test]
    fn draws_one_rectangle_per_span_in_its_lane_and_colour() {
        let lanes = vec!["stream 0".to_string(), "stream 1".to_string()];
        let spans = vec![span(0, Kind::CopyIn, 0.0, 2.0), span(0, Kind::Kernel, 2.0, 7.0), span(1, Kind::CopyOut, 7.0, 8.0)];
        let svg = svg("mmm-streamed", &lanes, &spans);
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
        let svg = svg("t", &["s".to_string()], &[span(0, Kind::Kernel, 0.0, 8.0)]);
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
        assert_eq!(overlap(&[]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn labels_are_escaped() {
        let svg = svg("a < b & c", &["<lane>".to_string()], &[]);
        assert!(svg.contains("a &lt; b &amp; c") && svg.contains("&lt;lane&gt;"));
    }
}

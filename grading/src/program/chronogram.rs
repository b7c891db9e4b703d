//! A case's chronogram, drawn from the program's trace as the labs draw theirs (`--timeline`): a lane
//! per stream, in the order the streams first got work, copies in, kernels and copies out in their
//! colours. Idle time longer than a millisecond is cut short: a program's first CUDA calls set up
//! the context for milliseconds in which nothing runs, which would squeeze the pipeline into a corner.

use std::path::Path;

use anyhow::Result;
use profiler::records::{Activity, Direction, What};
use profiler::timeline::{svg, Kind, Source, Span};

use super::trace::Trace;
use crate::exit::Usage;

/// Idle time longer than this is cut out of a chronogram...
const LONGEST_GAP_NS: u64 = 1_000_000;
/// ...down to this, so that the cut still shows.
const CUT_GAP_NS: u64 = 50_000;

/// What a chronogram draws.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub lanes: Vec<String>,
    pub spans: Vec<Span>,
    /// The idle time cut out, in ms.
    pub cut_ms: f64,
}

/// `DIR/case-N.svg`: the case's trace as a chronogram.
pub fn write(dir: &Path, index: usize, label: &str, trace: &Trace) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|err| Usage(format!("cannot create {}: {err}", dir.display())))?;
    let chart = chart(&trace.activities);
    let mut legend = "Kernels and copies as CUPTI recorded them in your program (the recorder's trace).".to_string();
    if chart.cut_ms > 0.0 {
        legend.push_str(&format!(
            " Idle gaps over {} ms are cut short ({:.1} ms in all).",
            LONGEST_GAP_NS / 1_000_000,
            chart.cut_ms
        ));
    }
    let path = dir.join(format!("case-{}.svg", index + 1));
    std::fs::write(
        &path,
        svg(&format!("case {label}"), &chart.lanes, &chart.spans, &legend),
    )
    .map_err(|err| anyhow::anyhow!("cannot write {}: {err}", path.display()))
}

/// The lanes and bars of a trace's copies and kernels, in ms from its first one, long idle gaps cut.
pub fn chart(activities: &[Activity]) -> Chart {
    let mut drawn: Vec<(&Activity, Kind)> = activities.iter().filter_map(|a| Some((a, kind(a)?))).collect();
    drawn.sort_by_key(|(a, _)| a.start_ns);
    let origin = drawn.first().map_or(0, |(a, _)| a.start_ns);
    let (mut busy_until, mut cut_ns) = (origin, 0);
    let mut streams: Vec<(u32, u32)> = Vec::new();
    let mut spans = Vec::new();
    for (activity, kind) in drawn {
        if activity.start_ns > busy_until + LONGEST_GAP_NS {
            cut_ns += activity.start_ns - busy_until - CUT_GAP_NS;
        }
        busy_until = busy_until.max(activity.end_ns);
        let ms = |ns: u64| ns.saturating_sub(origin + cut_ns) as f64 / 1e6;
        let key = (activity.device, activity.stream);
        let lane = streams.iter().position(|s| *s == key).unwrap_or_else(|| {
            streams.push(key);
            streams.len() - 1
        });
        spans.push(Span {
            lane,
            kind,
            label: activity.name.clone(),
            start_ms: ms(activity.start_ns),
            end_ms: ms(activity.end_ns),
            source: Source::StampsAndEvents,
        });
    }
    Chart {
        lanes: streams.iter().map(|(_, stream)| format!("stream {stream}")).collect(),
        spans,
        cut_ms: cut_ns as f64 / 1e6,
    }
}

fn kind(activity: &Activity) -> Option<Kind> {
    match activity.what {
        What::Kernel { .. } => Some(Kind::Kernel),
        What::Copy {
            direction: Direction::HtoD,
            ..
        } => Some(Kind::CopyIn),
        What::Copy {
            direction: Direction::DtoH,
            ..
        } => Some(Kind::CopyOut),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::rules::tests::{copy, kernel};
    use super::*;

    #[test]
    fn a_lane_per_stream_in_order_of_first_work() {
        let work = [
            kernel(9, 2_000_000, 2_500_000),
            copy(Direction::HtoD, 4, 1_500_000, 2_000_000),
        ];
        let chart = chart(&work);
        assert_eq!(chart.lanes, ["stream 4", "stream 9"]);
        assert_eq!(
            (chart.spans[0].lane, chart.spans[0].kind, chart.spans[0].start_ms),
            (0, Kind::CopyIn, 0.0)
        );
        assert_eq!(
            (chart.spans[1].lane, chart.spans[1].kind, chart.spans[1].end_ms),
            (1, Kind::Kernel, 1.0)
        );
        assert_eq!(chart.cut_ms, 0.0);
    }

    #[test]
    fn a_long_idle_gap_is_cut_short_and_said() {
        // A first copy, 5.5 ms of setting up, then the pipeline.
        let work = [
            copy(Direction::HtoD, 1, 0, 100_000),
            copy(Direction::HtoD, 2, 5_600_000, 5_700_000),
            kernel(2, 5_700_000, 5_800_000),
        ];
        let chart = chart(&work);
        assert!((chart.cut_ms - 5.45).abs() < 1e-9, "{}", chart.cut_ms);
        let times: Vec<(f64, f64)> = chart.spans.iter().map(|s| (s.start_ms, s.end_ms)).collect();
        assert_eq!(times, [(0.0, 0.1), (0.15, 0.25), (0.25, 0.35)]);
    }
}

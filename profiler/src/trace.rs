//! `--trace FILE.json`: CUPTI's records as a Chrome / Perfetto trace (the Trace Event Format's JSON
//! object form), to open in ui.perfetto.dev or chrome://tracing. One process per GPU; in it a track
//! per CUDA stream, a track per copy channel (the copy engines' queues), and a track of the lab's
//! timed windows, named after the slide programs. The records' own fields ride along in `args`, so a
//! saved trace can be read back into records ([`read`]): the CI tests rebuild the summary from
//! traces taken on a GPU.

use std::collections::BTreeSet;

use anyhow::{anyhow, Context as _, Result};
use serde_json::{json, Value};

use super::records::{Activity, Direction, What};
use super::Window;

/// Track ids: streams keep CUPTI's stream id; these sit above any stream id CUPTI hands out.
const WINDOWS_TRACK: u64 = 1 << 40;
const CHANNEL_TRACKS: u64 = 1 << 41;

/// The trace of `activities` and `windows`; times are microseconds from the first activity.
pub fn trace(activities: &[Activity], windows: &[Window], title: &str) -> Value {
    let origin = activities
        .iter()
        .map(|a| a.start_ns)
        .chain(windows.iter().filter_map(|w| w.start_ns))
        .min()
        .unwrap_or(0);
    let micros = |ns: u64| ns.saturating_sub(origin) as f64 / 1e3;
    let mut events = Vec::new();
    let mut tracks = BTreeSet::new();
    for activity in activities {
        let event = |tid: u64| {
            json!({
                "name": activity.name,
                "cat": category(&activity.what),
                "ph": "X",
                "ts": micros(activity.start_ns),
                "dur": activity.duration_ns() as f64 / 1e3,
                "pid": activity.device,
                "tid": tid,
                "args": args(activity),
            })
        };
        events.push(event(u64::from(activity.stream)));
        tracks.insert((activity.device, u64::from(activity.stream)));
        if let What::Copy { .. } = activity.what {
            events.push(event(CHANNEL_TRACKS + u64::from(activity.channel)));
            tracks.insert((activity.device, CHANNEL_TRACKS + u64::from(activity.channel)));
        }
    }
    for window in windows {
        let (Some(start), Some(end)) = (window.start_ns, window.end_ns) else {
            continue;
        };
        events.push(json!({
            "name": window.label,
            "cat": "window",
            "ph": "X",
            "ts": micros(start),
            "dur": end.saturating_sub(start) as f64 / 1e3,
            "pid": window.device,
            "tid": WINDOWS_TRACK,
            "args": { "event_ms": window.event_ms, "cupti_ms": window.cupti_ms, "runs": window.runs, "work_per_run": window.activities_per_run },
        }));
        tracks.insert((window.device, WINDOWS_TRACK));
    }
    let devices: BTreeSet<u32> = tracks.iter().map(|(device, _)| *device).collect();
    for device in devices {
        events.push(json!({ "name": "process_name", "ph": "M", "pid": device, "args": { "name": format!("GPU {device}: {title}") } }));
    }
    for (device, tid) in tracks {
        events.push(
            json!({ "name": "thread_name", "ph": "M", "pid": device, "tid": tid, "args": { "name": track_name(tid) } }),
        );
        events.push(
            json!({ "name": "thread_sort_index", "ph": "M", "pid": device, "tid": tid, "args": { "sort_index": tid } }),
        );
    }
    json!({ "traceEvents": events, "displayTimeUnit": "ms", "otherData": { "source": "CUPTI activity records", "program": title } })
}

fn track_name(tid: u64) -> String {
    if tid == WINDOWS_TRACK {
        "timed windows (CUDA events)".into()
    } else if tid >= CHANNEL_TRACKS {
        format!("copy channel {}", tid - CHANNEL_TRACKS)
    } else {
        format!("stream {tid}")
    }
}

fn category(what: &What) -> &'static str {
    match what {
        What::Kernel { .. } => "kernel",
        What::Copy { .. } => "memcpy",
        What::Memset { .. } => "memset",
    }
}

fn args(activity: &Activity) -> Value {
    let mut args = json!({
        "start_ns": activity.start_ns,
        "end_ns": activity.end_ns,
        "stream": activity.stream,
        "correlation": activity.correlation,
        "channel": activity.channel,
    });
    let extra = match &activity.what {
        What::Kernel { grid, block } => json!({ "grid": grid, "block": block }),
        What::Copy {
            direction,
            bytes,
            pageable,
        } => json!({ "direction": direction.label(), "bytes": bytes, "pageable": pageable }),
        What::Memset { bytes } => json!({ "bytes": bytes }),
    };
    if let (Some(args), Value::Object(extra)) = (args.as_object_mut(), extra) {
        args.extend(extra);
    }
    args
}

/// The activities of a trace [`trace`] wrote (each once: the copy channel tracks repeat the copies).
pub fn read(trace: &Value) -> Result<Vec<Activity>> {
    let events = trace["traceEvents"]
        .as_array()
        .ok_or_else(|| anyhow!("no traceEvents array"))?;
    let mut activities = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let category = event["cat"].as_str().unwrap_or_default();
        let on_stream = event["tid"].as_u64().is_some_and(|tid| tid < WINDOWS_TRACK);
        if event["ph"] != "X" || !on_stream || !matches!(category, "kernel" | "memcpy" | "memset") {
            continue;
        }
        activities.push(activity(event, category).with_context(|| format!("traceEvents[{i}]"))?);
    }
    Ok(activities)
}

fn activity(event: &Value, category: &str) -> Result<Activity> {
    let args = &event["args"];
    let number = |value: &Value, name: &str| value[name].as_u64().ok_or_else(|| anyhow!("no whole number {name}"));
    let three = |name: &str| -> Result<[i32; 3]> {
        let values: Vec<i32> = args[name]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_i64())
            .map(|v| v as i32)
            .collect();
        values.try_into().map_err(|_| anyhow!("{name} is not three numbers"))
    };
    let what = match category {
        "kernel" => What::Kernel {
            grid: three("grid")?,
            block: three("block")?,
        },
        "memcpy" => {
            let label = args["direction"].as_str().unwrap_or_default();
            let direction = Direction::from_label(label).ok_or_else(|| anyhow!("unknown copy direction {label:?}"))?;
            What::Copy {
                direction,
                bytes: number(args, "bytes")?,
                pageable: args["pageable"].as_bool().unwrap_or(false),
            }
        }
        _ => What::Memset {
            bytes: number(args, "bytes")?,
        },
    };
    Ok(Activity {
        what,
        name: event["name"].as_str().ok_or_else(|| anyhow!("no name"))?.to_string(),
        start_ns: number(args, "start_ns")?,
        end_ns: number(args, "end_ns")?,
        device: u32::try_from(number(event, "pid")?)?,
        stream: u32::try_from(number(args, "stream")?)?,
        correlation: u32::try_from(number(args, "correlation")?)?,
        channel: u32::try_from(number(args, "channel")?)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activities() -> Vec<Activity> {
        let kernel = Activity {
            what: What::Kernel {
                grid: [128, 128, 1],
                block: [16, 16, 1],
            },
            name: "mmm(double const*, double const*, double*, int)".into(),
            start_ns: 5_000,
            end_ns: 9_000,
            device: 0,
            stream: 13,
            correlation: 40,
            channel: 2,
        };
        let copy = Activity {
            what: What::Copy {
                direction: Direction::HtoD,
                bytes: 1 << 20,
                pageable: true,
            },
            name: "[CUDA memcpy HtoD]".into(),
            start_ns: 1_000,
            end_ns: 4_000,
            stream: 14,
            channel: 7,
            correlation: 39,
            ..kernel.clone()
        };
        let memset = Activity {
            what: What::Memset { bytes: 64 },
            name: "[CUDA memset]".into(),
            start_ns: 9_500,
            end_ns: 9_600,
            correlation: 41,
            ..kernel.clone()
        };
        vec![copy, kernel, memset]
    }

    #[test]
    fn writes_complete_events_with_the_required_fields_and_named_tracks() {
        let window = Window {
            label: "mmm-streamed".into(),
            device: 0,
            runs: 1,
            event_ms: 0.0085,
            start_ns: Some(900),
            end_ns: Some(9_700),
            ..Window::default()
        };
        let trace = trace(&activities(), &[window], "lab-streams --mode mmm");
        let text = serde_json::to_string(&trace).unwrap();
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let events = parsed["traceEvents"].as_array().unwrap();
        for event in events {
            assert!(
                event["name"].is_string() && event["ph"].is_string() && event["pid"].is_u64(),
                "{event}"
            );
            if event["ph"] == "X" {
                assert!(
                    event["ts"].is_f64() && event["dur"].is_f64() && event["tid"].is_u64(),
                    "{event}"
                );
            }
        }
        let complete: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(
            complete.len(),
            5,
            "three activities, the copy again on its channel, one window"
        );
        let copy = complete.iter().find(|e| e["cat"] == "memcpy").unwrap();
        assert_eq!(
            (copy["ts"].as_f64(), copy["dur"].as_f64()),
            (Some(0.1), Some(3.0)),
            "microseconds from the window's start"
        );
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "stream 13",
                "stream 14",
                "timed windows (CUDA events)",
                "copy channel 7"
            ]
        );
    }

    #[test]
    fn reads_back_what_it_wrote() {
        let written = trace(&activities(), &[], "x");
        assert_eq!(read(&written).unwrap(), activities());
    }

    #[test]
    fn a_damaged_event_is_an_error_that_names_it() {
        let mut written = trace(&activities(), &[], "x");
        written["traceEvents"][0]["args"]["start_ns"] = json!("soon");
        let err = read(&written).unwrap_err();
        assert_eq!(format!("{err:#}"), "traceEvents[0]: no whole number start_ns");
    }
}

//! Drawing the chronogram: a small SVG of rectangles, one lane per stream, a time axis in ms.

use std::fmt::Write as _;

use anyhow::Result;

use super::{copy_engines, disagreement_us, overlap, Kind, Span};

/// Writes the chronogram to `path` (never over an existing file unless `overwrite`) and returns the
/// line that says what it shows.
pub fn write_svg(
    path: &std::path::Path,
    overwrite: bool,
    title: &str,
    lanes: &[String],
    spans: &[Span],
) -> Result<String> {
    let _phase = common::phases::enter(common::phases::Phase::Output);
    let mut file = common::output::create_output_file(path, overwrite)?;
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
const CUPTI_BARS: &str =
    "Kernels and copies: start and end from CUPTI's activity records (what the GPU did, copies' starts included).";

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 110.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 50.0;
const LANE: f64 = 28.0;
const BOTTOM: f64 = 80.0;

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
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="{WIDTH}" height="{height}" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="20" font-size="14">{}</text>"#,
        escape(title)
    );
    for (index, kind) in Kind::ALL.iter().enumerate() {
        let lx = LEFT + 190.0 * index as f64;
        let _ = writeln!(
            out,
            r#"<rect x="{lx}" y="30" width="12" height="12" fill="{}"/><text x="{}" y="40">{}</text>"#,
            kind.colour(),
            lx + 16.0,
            kind.name()
        );
    }
    for (index, name) in lanes.iter().enumerate() {
        let y = TOP + LANE * index as f64;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            LEFT - 8.0,
            y + LANE * 0.65,
            escape(name)
        );
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/>"##,
            WIDTH - RIGHT
        );
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
    let _ = writeln!(
        out,
        r#"<line x1="{LEFT}" y1="{axis_y}" x2="{}" y2="{axis_y}" stroke="black"/>"#,
        WIDTH - RIGHT
    );
    let mut tick = 0.0;
    while tick <= end * (1.0 + 1e-9) {
        let tx = x(tick);
        let _ = writeln!(
            out,
            r#"<line x1="{tx:.2}" y1="{axis_y}" x2="{tx:.2}" y2="{}" stroke="black"/><text x="{tx:.2}" y="{}" text-anchor="middle">{}</text>"#,
            axis_y + 5.0,
            axis_y + 18.0,
            format_tick(tick, step)
        );
        tick += step;
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">time in ms</text>"#,
        LEFT + plot / 2.0,
        axis_y + 38.0
    );
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="{}" font-size="10">{}</text>"#,
        axis_y + 60.0,
        escape(bars)
    );
    out.push_str("</svg>\n");
    out
}

/// 1, 2 or 5 times a power of ten, giving 5 to 10 ticks over `end`.
fn tick_step(end: f64) -> f64 {
    let rough = end / 8.0;
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|step| end / step <= 10.0)
        .unwrap_or(10.0 * power)
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
    use crate::timeline::test_span as span;

    #[test]
    fn draws_one_rectangle_per_span_in_its_lane_and_colour() {
        let lanes = vec!["stream 0".to_string(), "stream 1".to_string()];
        let spans = vec![
            span(0, Kind::CopyIn, 0.0, 2.0),
            span(0, Kind::Kernel, 2.0, 7.0),
            span(1, Kind::CopyOut, 7.0, 8.0),
        ];
        let svg = svg("mmm-streamed", &lanes, &spans, &bars(2));
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        // Three spans plus the background and three legend squares.
        assert_eq!(svg.matches("<rect").count(), 3 + 1 + 3);
        // Plot spans x from 110 to 980 over 8 ms: the kernel starts at 2 ms, 217.5 px, and is 543.75 px wide.
        assert!(
            svg.contains(r##"<rect x="327.50" y="54" width="543.75" height="20" fill="#59a14f">"##),
            "{svg}"
        );
        // The copy out sits in the second lane, 28 px lower.
        assert!(
            svg.contains(r##"y="82" width="108.75" height="20" fill="#e15759""##),
            "{svg}"
        );
        assert!(svg.contains(">stream 1<") && svg.contains(">time in ms<") && svg.contains(">mmm-streamed<"));
    }

    #[test]
    fn the_time_axis_has_round_ticks_up_to_the_end() {
        let svg = svg("t", &["s".to_string()], &[span(0, Kind::Kernel, 0.0, 8.0)], &bars(2));
        for tick in ["0", "1", "2", "4", "8"] {
            assert!(
                svg.contains(&format!(r#"text-anchor="middle">{tick}</text>"#)),
                "tick {tick} missing"
            );
        }
        assert!(!svg.contains(r#"text-anchor="middle">9</text>"#));
        assert_eq!(tick_step(8.0), 1.0);
        assert_eq!(tick_step(1850.0), 200.0);
        assert_eq!(tick_step(0.03), 0.005);
        assert_eq!(format_tick(0.015, 0.005), "0.015");
    }

    #[test]
    fn says_what_the_bars_mean() {
        assert!(svg("t", &["s".to_string()], &[], &bars(2))
            .contains(">Kernels: first block's start to last block's end (GPU global timer)."));
        assert!(bars(7).contains("same direction ended (7 copy engines"), "{}", bars(7));
        assert!(
            bars(1).contains("either direction ended (1 copy engine)"),
            "{}",
            bars(1)
        );
    }

    #[test]
    fn labels_are_escaped() {
        let svg = svg("a < b & c", &["<lane>".to_string()], &[], &bars(2));
        assert!(svg.contains("a &lt; b &amp; c") && svg.contains("&lt;lane&gt;"));
    }
}

//! Host-to-device and device-to-host bandwidth of pageable, pinned (`cudaMallocHost`) and registered
//! (`malloc` + `cudaHostRegister`) memory, from 4 KiB to 1 GiB, as a table and a plotters SVG plot.

use std::path::Path;

use anyhow::{ensure, Context as _, Result};
use common::check_cuda;
use common::host_memory::{check_pinnable, try_filled_vec, Registered};
use common::output::create_output_file;
use common::phases::{self, Phase};
use common::progress::Progress;
use common::timing::time_on_stream;
use common::verify::Random;
use cust::memory::{CopyDestination, DeviceBuffer, LockedBuffer};
use cust::stream::Stream;

/// Copy sizes: 4 KiB, 16 KiB, ... up to `max` (powers of four).
pub fn sizes(max: usize) -> Vec<usize> {
    std::iter::successors(Some(4096usize), |size| Some(size * 4))
        .take_while(|size| *size <= max)
        .collect()
}

/// Host memory kinds of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pageable,
    Pinned,
    Registered,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Pageable, Kind::Pinned, Kind::Registered];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Pageable => "pageable",
            Kind::Pinned => "pinned",
            Kind::Registered => "registered",
        }
    }
}

/// A host buffer of one kind.
enum HostBuffer {
    Pageable(Vec<u8>),
    Pinned(LockedBuffer<u8>),
    Registered(Registered<u8>),
}

impl HostBuffer {
    fn new(kind: Kind, bytes: usize) -> Result<HostBuffer> {
        Ok(match kind {
            Kind::Pageable => HostBuffer::Pageable(try_filled_vec(bytes, 0, "a pageable buffer")?),
            Kind::Pinned => {
                check_pinnable(bytes as u64, 0)?;
                HostBuffer::Pinned(check_cuda!(LockedBuffer::new(&0u8, bytes))?)
            }
            // cudaHostRegister on memory malloc gave; unregistered when dropped.
            Kind::Registered => HostBuffer::Registered(Registered::register(
                try_filled_vec(bytes, 0, "a registered buffer")?,
                0,
            )?),
        })
    }

    fn bytes(&mut self) -> &mut [u8] {
        match self {
            HostBuffer::Pageable(data) => data,
            HostBuffer::Pinned(data) => data,
            HostBuffer::Registered(data) => data,
        }
    }
}

/// One measured point: GB/s (10^9 bytes per second) each way.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub kind: Kind,
    pub bytes: usize,
    pub host_to_device: f64,
    pub device_to_host: f64,
}

/// Times synchronous copies (cudaMemcpy) of every size for `kind`, after checking that the data makes
/// the round trip unchanged at every size.
pub fn measure(
    kind: Kind,
    sizes: &[usize],
    stream: &Stream,
    random: &mut Random,
    progress: &Progress,
) -> Result<Vec<Point>> {
    let max = *sizes.iter().max().context("no sizes to sweep")?;
    let mut host = HostBuffer::new(kind, max)?;
    // SAFETY: every byte read back is first written by a copy.
    let mut device: DeviceBuffer<u8> = check_cuda!(unsafe { DeviceBuffer::uninitialized(max) })?;
    let mut points = Vec::new();
    for &bytes in sizes {
        progress.step(format!("{} {}", kind.name(), common::format_bytes(bytes as u64)));
        round_trip(host.bytes(), &mut device, bytes, random)?;
        let repetitions = (256 << 20) / bytes;
        let repetitions = repetitions.clamp(3, 50);
        let mut device_part = device.index(0..bytes);
        let to_device = time_on_stream(stream, 2, repetitions, || {
            Ok(check_cuda!(device_part.copy_from(&host.bytes()[..bytes]))?)
        })?;
        let to_host = time_on_stream(stream, 2, repetitions, || {
            Ok(check_cuda!(device_part.copy_to(&mut host.bytes()[..bytes]))?)
        })?;
        let gbs = |ms: f64| bytes as f64 / (ms * 1e6);
        points.push(Point {
            kind,
            bytes,
            host_to_device: gbs(to_device.median_ms()),
            device_to_host: gbs(to_host.median_ms()),
        });
        progress.done();
    }
    Ok(points)
}

/// Random bytes to the GPU and back into a poisoned buffer: they must come back unchanged.
fn round_trip(host: &mut [u8], device: &mut DeviceBuffer<u8>, bytes: usize, random: &mut Random) -> Result<()> {
    let original: Vec<u8> = (0..bytes.div_ceil(8))
        .flat_map(|_| random.next_u64().to_le_bytes())
        .take(bytes)
        .collect();
    host[..bytes].copy_from_slice(&original);
    let mut part = device.index(0..bytes);
    check_cuda!(part.copy_from(&host[..bytes]))?;
    host[..bytes].fill(0xA5);
    check_cuda!(part.copy_to(&mut host[..bytes]))?;
    let wrong = host[..bytes].iter().zip(&original).filter(|(a, b)| a != b).count();
    ensure!(
        wrong == 0,
        "{wrong} of {bytes} bytes changed on the round trip through the GPU"
    );
    Ok(())
}

/// The table: one row per size, both directions for every kind.
pub fn table(points: &[Point]) -> String {
    let mut table = String::from("| size |");
    for kind in Kind::ALL {
        table.push_str(&format!(" {} H2D GB/s | {} D2H GB/s |", kind.name(), kind.name()));
    }
    table.push_str("\n|------|");
    table.push_str(&"---|---|".repeat(Kind::ALL.len()));
    let mut sizes: Vec<usize> = points.iter().map(|p| p.bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for bytes in sizes {
        table.push_str(&format!("\n| {} |", common::format_bytes(bytes as u64)));
        for kind in Kind::ALL {
            match points.iter().find(|p| p.bytes == bytes && p.kind == kind) {
                Some(p) => table.push_str(&format!(" {:.2} | {:.2} |", p.host_to_device, p.device_to_host)),
                None => table.push_str(" - | - |"),
            }
        }
    }
    table.push('\n');
    table
}

/// The plot: GB/s over copy size (log scale), a line per kind and direction.
pub fn plot(points: &[Point], title: &str, path: &Path, overwrite: bool) -> Result<()> {
    use plotters::prelude::*;
    let _phase = phases::enter(Phase::Output);
    drop(create_output_file(path, overwrite)?); // the same refusal as every output; plotters rewrites it
    let top = points
        .iter()
        .flat_map(|p| [p.host_to_device, p.device_to_host])
        .fold(1.0_f64, f64::max)
        * 1.1;
    let (min, max) = points.iter().fold((f64::MAX, 0.0_f64), |(lo, hi), p| {
        (lo.min(p.bytes as f64), hi.max(p.bytes as f64))
    });
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    let draw = |err: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {err}", path.display());
    root.fill(&WHITE).map_err(|e| draw(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((min..max * 1.01).log_scale(), 0.0..top)
        .map_err(|e| draw(&e))?;
    chart
        .configure_mesh()
        .x_desc("bytes per copy")
        .y_desc("GB/s")
        .x_label_formatter(&|bytes| decimal_bytes(*bytes))
        .draw()
        .map_err(|e| draw(&e))?;
    let colours = [RGBColor(225, 87, 89), RGBColor(78, 121, 167), RGBColor(89, 161, 79)];
    for (kind, colour) in Kind::ALL.iter().zip(colours) {
        for (direction, dashed) in [("host to device", false), ("device to host", true)] {
            let line: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.kind == *kind)
                .map(|p| (p.bytes as f64, if dashed { p.device_to_host } else { p.host_to_device }))
                .collect();
            let style = if dashed {
                colour.stroke_width(1)
            } else {
                colour.stroke_width(3)
            };
            chart
                .draw_series(LineSeries::new(line, style))
                .map_err(|e| draw(&e))?
                .label(format!("{}, {direction}", kind.name()))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()
        .map_err(|e| draw(&e))?;
    root.present().map_err(|e| draw(&e))
}

/// The log axis ticks at powers of ten: 10 kB, 1 MB, 1 GB.
fn decimal_bytes(bytes: f64) -> String {
    let (value, unit) = [(1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
        .into_iter()
        .find(|(scale, _)| bytes >= *scale)
        .map_or((bytes, "B"), |(scale, unit)| (bytes / scale, unit));
    format!("{value:.0} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(kind: Kind, bytes: usize, up: f64, down: f64) -> Point {
        Point {
            kind,
            bytes,
            host_to_device: up,
            device_to_host: down,
        }
    }

    #[test]
    fn sizes_go_from_4_kib_to_1_gib_in_powers_of_four() {
        let sizes = sizes(1 << 30);
        assert_eq!((sizes.len(), sizes[0], sizes[9]), (10, 4096, 1 << 30));
        assert_eq!(super::sizes(100_000), vec![4096, 16384, 65536]);
    }

    #[test]
    fn table_has_one_row_per_size_and_two_columns_per_kind() {
        let points: Vec<Point> = Kind::ALL
            .iter()
            .enumerate()
            .flat_map(|(k, &kind)| {
                [4096, 16384].map(|bytes| point(kind, bytes, 2.0 * k as f64 + 1.0, 2.0 * k as f64 + 2.0))
            })
            .collect();
        let table = table(&points);
        assert_eq!(table.lines().count(), 2 + 2, "{table}");
        assert!(
            table.contains("| 4.0 KiB | 1.00 | 2.00 | 3.00 | 4.00 | 5.00 | 6.00 |"),
            "{table}"
        );
        assert!(table.contains("| 16.0 KiB | 1.00 | 2.00 |"), "{table}");
    }

    #[test]
    fn axis_labels_are_decimal_units() {
        assert_eq!(decimal_bytes(1e4), "10 kB");
        assert_eq!(decimal_bytes(1e9), "1 GB");
        assert_eq!(decimal_bytes(500.0), "500 B");
    }

    #[test]
    fn plot_is_an_svg_with_axes_and_a_line_per_kind_and_direction() {
        let dir = std::env::temp_dir().join(format!("pinned-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bandwidth.svg");
        let points: Vec<Point> = Kind::ALL
            .iter()
            .flat_map(|&kind| {
                sizes(1 << 20)
                    .into_iter()
                    .map(move |bytes| point(kind, bytes, bytes as f64 / 1e5, 2.0))
            })
            .collect();
        plot(&points, "made-up numbers", &path, false).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("GB/s") && svg.contains("bytes per copy"));
        assert!(svg.contains("pinned, host to device") && svg.contains("registered, device to host"));
        let coloured = svg
            .lines()
            .filter(|l| l.starts_with("<polyline") && !l.contains(r##"stroke="#000000""##))
            .count();
        assert_eq!(coloured, 6 + 6, "a line per kind and direction, and its legend sample");
        assert!(
            plot(&points, "again", &path, false).is_err(),
            "never over an existing file"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

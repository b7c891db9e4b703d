//! `--ladder --sweep`: the best step of each precision beside cuBLAS at sizes from 256 to 8192 and a
//! few thin shapes, as a table and a plotters SVG plot (issue 24).

use std::path::Path;

use anyhow::Result;
use common::gpu::Gpu;
use common::host_memory::ensure_host_fits;
use common::output::create_output_file;
use common::phases::{self, Phase};
use common::progress::Progress;
use common::verify::{verdict, Random};
use matrix::mmm::check_product_fits;
use matrix::Matrix;

use crate::climb::load_cublas;
use crate::cublas::{Cublas, Gemm};
use crate::ladder::{run_step, Ladder, Operands, Step, TILED_BLOCK_SIZE};
use crate::{host_bytes, Precision};

/// (M, K, N) of A (M x K) and B (K x N): squares from 256 to 8192, then thin shapes where the tiles
/// fit C badly: a short k (8192 x 256 x 8192, a rank-256 update), a long k with a small C
/// (256 x 8192 x 256: 2 to 4 tiles of C for 132 multiprocessors) and a C of few rows.
pub const SHAPES: [(usize, usize, usize); 9] = [
    (256, 256, 256),
    (512, 512, 512),
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (8192, 256, 8192),
    (256, 8192, 256),
    (256, 8192, 8192),
];

/// How the table and the plot name a shape: "4096" for a square, "8192 x 256 x 8192" otherwise.
pub fn shape_name((m, k, n): (usize, usize, usize)) -> String {
    if m == k && k == n {
        m.to_string()
    } else {
        format!("{m} x {k} x {n}")
    }
}

/// One shape in one precision: the best step that runs here and cuBLAS, both checked.
#[derive(Debug, Clone)]
pub struct Point {
    pub shape: (usize, usize, usize),
    pub precision: Precision,
    pub step: Step,
    pub step_tflops: f64,
    /// cuBLAS's TFLOP/s, where it was found.
    pub library_tflops: Option<f64>,
    /// Both products within their tolerance of the CPU's.
    pub passed: bool,
}

impl Point {
    /// The step's share of cuBLAS.
    pub fn share(&self) -> Option<f64> {
        self.library_tflops.map(|library| self.step_tflops / library)
    }
}

/// The last (fastest at 4096) step of `precision` that this GPU and build can run.
pub fn best_step<T: Gemm>(ladder: &Ladder, precision: Precision) -> Option<Step> {
    Step::of_precision::<T>(precision)
        .into_iter()
        .rev()
        .find(|&step| ladder.unavailable::<T>(step).is_none())
}

/// Runs `precision`'s best step and cuBLAS on A and B (f64 on the host, converted to `T`), each timed
/// and checked against the CPU; `None` where no step of the precision runs here.
pub fn measure<T: Gemm>(
    (ladder, cublas): (&Ladder, Option<&Cublas>),
    precision: Precision,
    (a64, b64): (&Matrix<f64>, &Matrix<f64>),
    repetitions: usize,
    random: &mut Random,
) -> Result<Option<Point>> {
    let Some(step) = best_step::<T>(ladder, precision) else {
        return Ok(None);
    };
    let mut operands = Operands::<T>::new(a64, b64, random)?;
    let flops = operands.flops();
    let tflops = |ms: f64| flops / (ms * 1e9);
    let Some(timing) = run_step(ladder, step, &operands.a, &operands.b, &mut operands.c, repetitions)? else {
        return Ok(None);
    };
    let step_tflops = tflops(timing.median_ms());
    let mut passed = operands.check(precision, random).passed();
    let library_tflops = match cublas {
        Some(cublas) => {
            let (library, check) = operands.run_cublas(cublas, precision, repetitions, random)?;
            passed &= check.passed();
            Some(tflops(library.median_ms()))
        }
        None => None,
    };
    Ok(Some(Point {
        shape: (a64.rows(), a64.cols(), b64.cols()),
        precision,
        step,
        step_tflops,
        library_tflops,
        passed,
    }))
}

/// The table: a row per shape and precision.
pub fn table(points: &[Point]) -> String {
    let mut table = String::from(
        "| M x K x N | precision | best step here | TFLOP/s | cuBLAS TFLOP/s | of cuBLAS | check |\n\
         |-----------|-----------|---------------|---------|----------------|-----------|-------|\n",
    );
    for point in points {
        let library = point
            .library_tflops
            .map_or("-".to_string(), |tflops| format!("{tflops:.2}"));
        let share = point
            .share()
            .map_or("-".to_string(), |share| format!("{:.0}%", 100.0 * share));
        table.push_str(&format!(
            "| {} | {} | {} | {:.2} | {library} | {share} | {} |\n",
            shape_name(point.shape),
            point.precision,
            point.step.name(),
            point.step_tflops,
            if point.passed { "PASS" } else { "FAIL" }
        ));
    }
    table
}

/// A function that turns a drawing error into the plot's error (naming the file).
type Failed<'f> = &'f dyn Fn(&dyn std::fmt::Display) -> anyhow::Error;

/// The plot: TFLOP/s by shape (above) and the share of cuBLAS (below), a colour per precision, the
/// best step's line thick and cuBLAS's thin.
pub fn plot(points: &[Point], title: &str, path: &Path, overwrite: bool) -> Result<()> {
    use plotters::prelude::*;
    let _phase = phases::enter(Phase::Output);
    drop(create_output_file(path, overwrite)?); // the same refusal as every output; plotters rewrites it
    let draw = |err: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {err}", path.display());
    let mut shapes: Vec<(usize, usize, usize)> = Vec::new();
    for point in points {
        if !shapes.contains(&point.shape) {
            shapes.push(point.shape);
        }
    }
    let x_of = |shape| shapes.iter().position(|&s| s == shape).unwrap_or_default() as f64;
    let labels: Vec<String> = shapes.iter().map(|&shape| shape_name(shape)).collect();
    let precisions: Vec<Precision> = Precision::ALL
        .into_iter()
        .filter(|p| points.iter().any(|point| point.precision == *p))
        .collect();
    // The legend (two rows a precision) sits in the upper left corner, above the lines: the y axis
    // goes that much higher than the fastest point.
    let legend_share = LEGEND_ROW_SHARE * (2 * precisions.len()) as f64;
    let top = points
        .iter()
        .flat_map(|p| [Some(p.step_tflops), p.library_tflops])
        .flatten()
        .fold(1.0_f64, f64::max)
        * 1.1
        / (1.0 - legend_share);
    let top_share = points.iter().filter_map(Point::share).fold(1.0_f64, f64::max) * 110.0;
    let colours = [
        RGBColor(225, 87, 89),
        RGBColor(78, 121, 167),
        RGBColor(89, 161, 79),
        RGBColor(176, 122, 161),
    ];

    let root = SVGBackend::new(path, (1000, 800)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw(&e))?;
    let root = root.titled(title, ("sans-serif", 18)).map_err(|e| draw(&e))?;
    let (upper, lower) = root.split_vertically(480);

    let mut chart = panel(&upper, &labels, top, "TFLOP/s", &draw)?;
    for (precision, colour) in precisions.iter().zip(colours) {
        let mine: Vec<&Point> = points.iter().filter(|p| p.precision == *precision).collect();
        let step_name = mine.first().map_or("", |p| p.step.name());
        let step_line: Vec<(f64, f64)> = mine.iter().map(|p| (x_of(p.shape), p.step_tflops)).collect();
        let library_line: Vec<(f64, f64)> = mine
            .iter()
            .filter_map(|p| Some((x_of(p.shape), p.library_tflops?)))
            .collect();
        for (name, style, line) in [
            (format!("{precision}: {step_name}"), colour.stroke_width(3), step_line),
            (format!("{precision}: cuBLAS"), colour.stroke_width(1), library_line),
        ] {
            if !line.is_empty() {
                draw_line(&mut chart, &line, style, &draw)?
                    .label(name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            }
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()
        .map_err(|e| draw(&e))?;

    let mut shares = panel(&lower, &labels, top_share, "best step's share of cuBLAS, %", &draw)?;
    for (precision, colour) in precisions.iter().zip(colours) {
        let line: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.precision == *precision)
            .filter_map(|p| Some((x_of(p.shape), 100.0 * p.share()?)))
            .collect();
        draw_line(&mut shares, &line, colour.stroke_width(3), &draw)?;
    }
    let hundred = [(-0.3, 100.0), (shapes.len() as f64 - 0.7, 100.0)];
    shares
        .draw_series(LineSeries::new(hundred, BLACK.stroke_width(1)))
        .map_err(|e| draw(&e))?;
    root.present().map_err(|e| draw(&e))
}

type Panel<'a, 'b> = plotters::chart::ChartContext<
    'a,
    plotters::backend::SVGBackend<'b>,
    plotters::coord::cartesian::Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::types::RangedCoordf64,
    >,
>;

/// One panel of the plot, drawn with its grid: the shapes along x, each at its index and labelled
/// with its name, and 0 to `top` along y.
fn panel<'a, 'b>(
    area: &'a plotters::drawing::DrawingArea<plotters::backend::SVGBackend<'b>, plotters::coord::Shift>,
    labels: &[String],
    top: f64,
    y_desc: &str,
    draw: Failed,
) -> Result<Panel<'a, 'b>> {
    use plotters::prelude::*;
    let label = |x: &f64| {
        labels
            .get(x.round() as usize)
            .filter(|_| (x - x.round()).abs() < 1e-9)
            .cloned()
            .unwrap_or_default()
    };
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.3..(labels.len().max(1) as f64 - 0.7), 0.0..top)
        .map_err(|e| draw(&e))?;
    chart
        .configure_mesh()
        .x_labels(labels.len())
        .x_label_formatter(&label)
        .x_desc("M x K x N")
        .y_desc(y_desc)
        .draw()
        .map_err(|e| draw(&e))?;
    Ok(chart)
}

/// The share of the upper panel's height one legend row takes: plotters' rows of about 17 pixels in
/// its plotting area of about 400 (the panel's 480 less margins and the x labels), with room for the
/// legend's border.
const LEGEND_ROW_SHARE: f64 = 0.045;

/// A line through `points` with a dot at each; the line's series, for a legend entry.
fn draw_line<'c, 'a, 'b>(
    chart: &'c mut Panel<'a, 'b>,
    points: &[(f64, f64)],
    style: plotters::style::ShapeStyle,
    draw: Failed,
) -> Result<&'c mut plotters::chart::SeriesAnno<'a, plotters::backend::SVGBackend<'b>>> {
    use plotters::prelude::*;
    chart
        .draw_series(points.iter().map(|&point| Circle::new(point, 3, style.color.filled())))
        .map_err(|e| draw(&e))?;
    chart
        .draw_series(LineSeries::new(points.to_vec(), style))
        .map_err(|e| draw(&e))
}

/// `--ladder --sweep`: for each shape, random A and B, then each precision's best step and cuBLAS,
/// timed and checked; the table, and the plot where asked (`plot_path`, replaced only with `force`).
pub fn run(
    gpu: &Gpu,
    precisions: &[Precision],
    repetitions: usize,
    plot_path: Option<&Path>,
    force: bool,
    random: &mut Random,
) -> Result<()> {
    let ladder = Ladder::load(gpu)?;
    let cublas = load_cublas();
    let progress = Progress::new(SHAPES.len() * precisions.len(), "lab-mmm --ladder --sweep");
    let mut points = Vec::new();
    for (m, k, n) in SHAPES {
        ensure_host_fits(host_bytes((m, k, n)), &format!("the sweep's {m} x {k} by {k} x {n}"))?;
        check_product_fits::<f64>(gpu, (m, k, n), TILED_BLOCK_SIZE)?;
        let (a, b) = (Matrix::random(m, k, random)?, Matrix::random(k, n, random)?);
        for &precision in precisions {
            progress.step(format!("{} {precision}", shape_name((m, k, n))));
            let tools = (&ladder, cublas.as_ref());
            let point = match precision {
                Precision::F64 => measure::<f64>(tools, precision, (&a, &b), repetitions, random)?,
                Precision::F32 | Precision::Tf32 | Precision::Bf16 => {
                    measure::<f32>(tools, precision, (&a, &b), repetitions, random)?
                }
            };
            progress.done();
            points.extend(point);
        }
    }
    drop(progress);
    println!("\n{}", table(&points));
    if let Some(path) = plot_path {
        let title = format!("lab-mmm --ladder --sweep on {}", gpu.info.name);
        plot(&points, &title, path, force)?;
        println!("Plot written to {}", path.display());
    }
    let failed = points.iter().filter(|point| !point.passed).count();
    verdict(
        failed == 0,
        &format!("{failed} of {} shapes and precisions differ from the CPU", points.len()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(
        shape: (usize, usize, usize),
        precision: Precision,
        step: Step,
        step_tflops: f64,
        library: Option<f64>,
    ) -> Point {
        Point {
            shape,
            precision,
            step,
            step_tflops,
            library_tflops: library,
            passed: true,
        }
    }

    fn points() -> Vec<Point> {
        SHAPES
            .iter()
            .enumerate()
            .flat_map(|(i, &shape)| {
                let x = i as f64 + 1.0;
                [
                    point(shape, Precision::F64, Step::MmaTiled, 5.0 * x, Some(6.0 * x)),
                    point(shape, Precision::F32, Step::WarpTiled, 4.0 * x, Some(4.0 * x)),
                    point(shape, Precision::Tf32, Step::Tf32, 10.0 * x, Some(40.0 * x)),
                ]
            })
            .collect()
    }

    #[test]
    fn shapes_go_from_256_to_8192_and_then_thin_ones() {
        assert_eq!(SHAPES[0], (256, 256, 256));
        assert_eq!(SHAPES[5], (8192, 8192, 8192));
        assert!(
            SHAPES.contains(&(8192, 256, 8192)),
            "the issue's example of a thin shape"
        );
        assert_eq!(shape_name((4096, 4096, 4096)), "4096");
        assert_eq!(shape_name((8192, 256, 8192)), "8192 x 256 x 8192");
    }

    #[test]
    fn table_has_a_row_per_shape_and_precision_with_the_share_of_cublas() {
        let mut points = points();
        points.push(point((100, 100, 100), Precision::F32, Step::AsyncCopies, 1.0, None));
        points.last_mut().unwrap().passed = false;
        let table = table(&points);
        assert_eq!(table.lines().count(), 2 + 3 * SHAPES.len() + 1, "{table}");
        assert!(
            table.contains(
                "| 256 | f64 | 7. DMMA m16n8k8 in warp tiles, 128 x 64, 3 stages (f64) | 5.00 | 6.00 | 83% | PASS |"
            ),
            "{table}"
        );
        assert!(
            table.contains(
                "| 8192 x 256 x 8192 | tf32 | 8. TF32 tensor cores, mma m16n8k8 (tf32) | 70.00 | 280.00 | 25% | PASS |"
            ),
            "{table}"
        );
        assert!(
            table.ends_with("| 100 | f32 | 3. cp.async into two stages | 1.00 | - | - | FAIL |\n"),
            "{table}"
        );
    }

    #[test]
    fn plot_is_an_svg_with_a_line_per_precision_and_kernel_and_the_shapes_as_labels() {
        let dir = std::env::temp_dir().join(format!("mmm-sweep-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sweep.svg");
        plot(&points(), "made-up numbers", &path, false).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("TFLOP/s") && svg.contains("share of cuBLAS"));
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(
            texts.contains(&"8192 x 256 x 8192") && texts.contains(&"256"),
            "the shapes label the x axis"
        );
        assert!(svg.contains("tf32: cuBLAS") && svg.contains("f64: 7. DMMA m16n8k8 in warp tiles"));
        let coloured = svg
            .lines()
            .filter(|l| l.starts_with("<polyline") && !l.contains(r##"stroke="#000000""##))
            .count();
        assert_eq!(
            coloured,
            6 + 6 + 3,
            "a line per precision and kernel with its legend sample, and a share line per precision"
        );
        assert!(
            plot(&points(), "again", &path, false).is_err(),
            "never over an existing file"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

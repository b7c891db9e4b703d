//! The class page's plot: how many submissions fall in each band of time over ours, as SVG text to
//! put inline in the page (plotters' SVG backend, as the labs draw theirs).

use anyhow::Result;

/// The bands of time over ours: halves and doubles around 1 (ours), with 0.8 to 1.25 as "like ours".
pub const BANDS: [(f64, f64, &str); 7] = [
    (0.0, 0.5, "< 0.5"),
    (0.5, 0.8, "0.5-0.8"),
    (0.8, 1.25, "0.8-1.25"),
    (1.25, 2.0, "1.25-2"),
    (2.0, 4.0, "2-4"),
    (4.0, 8.0, "4-8"),
    (8.0, f64::INFINITY, ">= 8"),
];

/// How many of `ratios` fall in each of [`BANDS`].
pub fn counts(ratios: &[f64]) -> [usize; BANDS.len()] {
    let mut counts = [0; BANDS.len()];
    for ratio in ratios {
        if let Some(band) = BANDS.iter().position(|&(low, high, _)| *ratio >= low && *ratio < high) {
            counts[band] += 1;
        }
    }
    counts
}

/// A bar chart of [`counts`] of `ratios`, as an SVG document.
pub fn time_ratios(ratios: &[f64]) -> Result<String> {
    use plotters::prelude::*;
    let counts = counts(ratios);
    let top = counts.iter().copied().max().unwrap_or(0).max(1) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
        let draw = |err: &dyn std::fmt::Display| anyhow::anyhow!("drawing the time ratios: {err}");
        root.fill(&WHITE).map_err(|e| draw(&e))?;
        // Band b is the bar from b - 0.4 to b + 0.4, so that each label sits under its bar.
        let bands = BANDS.len() as f64;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(40)
            .build_cartesian_2d(-0.5..bands - 0.5, 0u32..top + 1)
            .map_err(|e| draw(&e))?;
        let name = |x: &f64| {
            BANDS
                .get(x.round() as usize)
                .filter(|_| (x - x.round()).abs() < 0.01)
                .map_or(String::new(), |(_, _, name)| name.to_string())
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(BANDS.len())
            .x_label_formatter(&name)
            .x_desc("your time over ours (cases that passed, geometric mean)")
            .y_desc("submissions")
            .draw()
            .map_err(|e| draw(&e))?;
        let bars = counts.iter().enumerate().map(|(band, &count)| {
            Rectangle::new(
                [(band as f64 - 0.4, 0), (band as f64 + 0.4, count as u32)],
                RGBColor(74, 170, 119).filled(),
            )
        });
        chart.draw_series(bars).map_err(|e| draw(&e))?;
        root.present().map_err(|e| draw(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ratio_falls_in_one_band_and_the_plot_draws_a_bar_per_band() {
        assert_eq!(counts(&[0.1, 0.5, 1.0, 1.0, 1.3, 3.0, 9.0, 1e9]), [1, 1, 2, 1, 1, 0, 2]);
        let svg = time_ratios(&[1.0, 1.1, 2.5]).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.matches("<rect").count() >= BANDS.len(),
            "{svg}"
        );
        assert!(svg.contains("0.8-1.25"), "{svg}");
        assert!(time_ratios(&[]).is_ok());
    }
}

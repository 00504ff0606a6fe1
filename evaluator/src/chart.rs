//! PNG charts (plotters): a rating list with intervals, and Elo over time.
//!
//! Text needs a TrueType font.  plotters is built without system font
//! discovery (which needs fontconfig at build time), so a font file is looked
//! up in the usual places (DejaVu Sans, Liberation Sans, Arial) or taken from
//! `TAMMI_FONT`; without one the chart is drawn without text and the caller
//! is told.

use crate::rating::RatingList;
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Registers a font for plotters once; whether text can be drawn.
fn font_available() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| {
        let env = std::env::var("TAMMI_FONT").ok();
        let paths = env
            .iter()
            .map(String::as_str)
            .chain(FONT_CANDIDATES.iter().copied());
        for p in paths {
            if let Ok(bytes) = std::fs::read(p) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

/// Why a chart could not be written: the drawing library's error, kept as
/// the source.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChartError(#[source] Box<dyn std::error::Error + Send + Sync>);

fn err<E: Into<Box<dyn std::error::Error + Send + Sync>>>(e: E) -> ChartError {
    ChartError(e.into())
}

/// Draws the rating list as points with 95% error bars, best at the top.
/// Returns whether labels were drawn (false: no font found).
pub fn rating_chart(list: &RatingList, path: &Path) -> Result<bool, ChartError> {
    let text = font_available();
    let n = list.ratings.len().max(1);
    let height = 120 + 40 * n as u32;
    let root = BitMapBackend::new(path, (900, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let lo = list
        .ratings
        .iter()
        .map(|r| r.elo - r.interval)
        .fold(f64::INFINITY, f64::min);
    let hi = list
        .ratings
        .iter()
        .map(|r| r.elo + r.interval)
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.08).max(20.0);
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder
            .caption(
                format!("Elo (anchor: {} = 0), 95% intervals", list.anchor),
                ("sans-serif", 22),
            )
            .x_label_area_size(40)
            .y_label_area_size(260);
    }
    let mut chart = builder
        .build_cartesian_2d((lo - pad)..(hi + pad), -0.5..(n as f64 - 0.5))
        .map_err(err)?;
    if text {
        let names: Vec<String> = list.ratings.iter().map(|r| r.player.clone()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|y: &f64| {
                let i = y.round() as isize;
                let idx = n as isize - 1 - i;
                if (y - y.round()).abs() < 1e-6 && idx >= 0 && (idx as usize) < names.len() {
                    names[idx as usize].clone()
                } else {
                    String::new()
                }
            })
            .x_desc("Elo")
            .draw()
            .map_err(err)?;
    }
    chart
        .draw_series(list.ratings.iter().enumerate().map(|(i, r)| {
            let y = (n - 1 - i) as f64;
            ErrorBar::new_horizontal(
                y,
                r.elo - r.interval,
                r.elo,
                r.elo + r.interval,
                BLUE.filled(),
                10,
            )
        }))
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(text)
}

/// One curve of a line chart: a label and (x, y) points.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A line chart, e.g. Elo against alpha-beta depths over training hours.
pub fn line_chart(
    series: &[Series],
    title: &str,
    x_desc: &str,
    y_desc: &str,
    path: &Path,
) -> Result<bool, ChartError> {
    let text = font_available();
    let root = BitMapBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    let (xp, yp) = (((x1 - x0) * 0.05).max(0.01), ((y1 - y0) * 0.08).max(10.0));
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder
            .caption(title, ("sans-serif", 22))
            .x_label_area_size(40)
            .y_label_area_size(60);
    }
    let mut chart = builder
        .build_cartesian_2d((x0 - xp)..(x1 + xp), (y0 - yp)..(y1 + yp))
        .map_err(err)?;
    if text {
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
    }
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let drawn = chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(err)?;
        if text {
            drawn.label(s.label.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        }
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(text)
}

//! A line chart in SVG for the scale runs: x on a log scale (log size, segment count), y linear
//! from 0 (a throughput, a time, a memory size), one line per series with a dot per point.

#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "tick counts and chart coordinates"
)]

use std::fmt::Write as _;

/// One line: its name in the legend and its points (x, y); a non-finite y is left out.
#[derive(Debug, Clone)]
pub(super) struct Series {
    pub(super) name: String,
    pub(super) points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub(super) struct Chart {
    pub(super) title: String,
    pub(super) x_label: String,
    pub(super) y_label: String,
    /// How an x tick reads (1024 MiB as "1 GiB", 10000 segments as "10k").
    pub(super) x_tick: fn(f64) -> String,
    pub(super) series: Vec<Series>,
}

const COLORS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#7f7f7f"];
const LEFT: f64 = 70.0;
const TOP: f64 = 50.0;
const WIDTH: f64 = 460.0;
const HEIGHT: f64 = 240.0;

/// A round step for about five ticks up to `max`.
fn y_step(max: f64) -> f64 {
    let raw = max / 5.0;
    let pow = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * pow)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * pow)
}

fn fmt_y(v: f64) -> String {
    if v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The points that can be drawn: finite, x above 0 (log scale).
fn drawable(points: &[(f64, f64)]) -> impl Iterator<Item = (f64, f64)> + '_ {
    points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && *x > 0.0 && y.is_finite())
}

pub(super) fn render_line_chart(chart: &Chart) -> String {
    // Every size on the axis, also those without a figure (skipped, failed: marked as such).
    let xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|(x, _)| *x))
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    let measured = |x: f64| {
        chart
            .series
            .iter()
            .any(|s| drawable(&s.points).any(|(px, _)| px.total_cmp(&x).is_eq()))
    };
    let y_max = chart
        .series
        .iter()
        .flat_map(|s| drawable(&s.points).map(|(_, y)| y))
        .fold(0.0_f64, f64::max);
    let (x_min, x_max) = xs.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), x| {
        (lo.min(*x), hi.max(*x))
    });
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        LEFT + WIDTH + 240.0,
        TOP + HEIGHT + 56.0
    );
    let _ = writeln!(
        s,
        "<text x=\"10\" y=\"20\" font-size=\"13\">{}</text>",
        escape(&chart.title)
    );
    let bottom = TOP + HEIGHT;
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\" stroke=\"#000\"/><line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{bottom}\" stroke=\"#000\"/>",
        LEFT + WIDTH
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\">{}</text><text x=\"10\" y=\"{}\">{}</text>",
        LEFT + WIDTH / 2.0 - 40.0,
        bottom + 44.0,
        escape(&chart.x_label),
        TOP - 10.0,
        escape(&chart.y_label)
    );
    if xs.is_empty() {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\">no size was measured</text>",
            LEFT + 20.0,
            TOP + HEIGHT / 2.0
        );
        s.push_str("</svg>\n");
        return s;
    }
    // log10 across the sizes measured, half a decade of room when there is only one.
    let (lo, hi) = if x_max > x_min {
        (x_min.log10(), x_max.log10())
    } else {
        (x_min.log10() - 0.5, x_min.log10() + 0.5)
    };
    let x_of = |x: f64| LEFT + 20.0 + (x.log10() - lo) / (hi - lo) * (WIDTH - 40.0);
    let step = if y_max > 0.0 { y_step(y_max) } else { 1.0 };
    let top_value = (y_max / step).ceil().max(1.0) * step;
    let y_of = |y: f64| bottom - y / top_value * HEIGHT;
    let ticks = (top_value / step).round() as u32;
    for i in 0..=ticks {
        let v = f64::from(i) * step;
        let ty = y_of(v);
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{ty:.1}\" x2=\"{}\" y2=\"{ty:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT + WIDTH,
            LEFT - 4.0,
            ty + 4.0,
            fmt_y(v)
        );
    }
    let mut tick_xs = xs.clone();
    tick_xs.sort_by(f64::total_cmp);
    tick_xs.dedup();
    for x in tick_xs {
        let tx = x_of(x);
        let _ = writeln!(
            s,
            "<line x1=\"{tx:.1}\" y1=\"{bottom}\" x2=\"{tx:.1}\" y2=\"{}\" stroke=\"#000\"/><text x=\"{tx:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            bottom + 4.0,
            bottom + 16.0,
            escape(&(chart.x_tick)(x))
        );
        if !measured(x) {
            let _ = writeln!(
                s,
                "<text x=\"{tx:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#d62728\">not measured</text>",
                bottom + 28.0
            );
        }
    }
    draw_series(&mut s, chart, &x_of, &y_of);
    s.push_str("</svg>\n");
    s
}

/// Each series' line, dots (with their value as a tooltip) and legend entry.
fn draw_series(
    s: &mut String,
    chart: &Chart,
    x_of: &dyn Fn(f64) -> f64,
    y_of: &dyn Fn(f64) -> f64,
) {
    for (i, series) in chart.series.iter().enumerate() {
        let color = COLORS.get(i % COLORS.len()).copied().unwrap_or("#000");
        let mut points: Vec<(f64, f64)> = drawable(&series.points).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", x_of(*x), y_of(*y)))
            .collect();
        if path.len() > 1 {
            let _ = writeln!(
                s,
                "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
                path.join(" ")
            );
        }
        for (x, y) in &points {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{}: {}</title></circle>",
                x_of(*x),
                y_of(*y),
                escape(&series.name),
                fmt_y(*y)
            );
        }
        let ly = TOP + 10.0 + i as f64 * 16.0;
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            LEFT + WIDTH + 10.0,
            ly - 9.0,
            LEFT + WIDTH + 24.0,
            ly,
            escape(&series.name)
        );
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(series: Vec<Series>) -> Chart {
        Chart {
            title: "t <&>".to_owned(),
            x_label: "size".to_owned(),
            y_label: "MiB/s".to_owned(),
            x_tick: |x| format!("{x:.0}"),
            series,
        }
    }

    /// The x of each dot, in drawing order.
    fn dots(svg: &str) -> Vec<(f64, f64)> {
        svg.lines()
            .filter_map(|l| l.strip_prefix("<circle cx=\""))
            .filter_map(|l| {
                let (cx, rest) = l.split_once("\" cy=\"")?;
                let (cy, _) = rest.split_once('"')?;
                Some((cx.parse().ok()?, cy.parse().ok()?))
            })
            .collect()
    }

    /// 1, 10 and 100 are equally far apart (log x); a larger y is higher up (smaller svg y).
    #[test]
    fn x_is_logarithmic_and_y_grows_upwards() {
        let svg = render_line_chart(&chart(vec![Series {
            name: "append".to_owned(),
            points: vec![(100.0, 30.0), (1.0, 10.0), (10.0, 20.0)],
        }]));
        let d = dots(&svg);
        assert_eq!(d.len(), 3);
        // Drawn sorted by x.
        let (a, b, c) = (d[0], d[1], d[2]);
        assert!(((b.0 - a.0) - (c.0 - b.0)).abs() < 0.2, "{d:?}");
        assert!(a.1 > b.1 && b.1 > c.1, "{d:?}");
        assert!(svg.contains("<polyline") && svg.contains("t &lt;&amp;&gt;"));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    }

    /// A size that was skipped (no figure: NaN) is left out of the line, not drawn at 0.
    #[test]
    fn missing_points_are_left_out() {
        let svg = render_line_chart(&chart(vec![
            Series {
                name: "a".to_owned(),
                points: vec![(1.0, 5.0), (10.0, f64::NAN)],
            },
            Series {
                name: "b".to_owned(),
                points: vec![],
            },
        ]));
        assert_eq!(dots(&svg).len(), 1);
        assert!(!svg.contains("<polyline"));
        // The skipped size is still on the axis, marked.
        assert_eq!(svg.matches("not measured").count(), 1);
        let empty = render_line_chart(&chart(vec![]));
        assert!(empty.contains("no size was measured"));
    }

    #[test]
    fn y_ticks_are_round() {
        assert!((y_step(1700.0) - 500.0).abs() < 1e-9);
        assert!((y_step(9.0) - 2.0).abs() < 1e-9);
        assert!((y_step(0.3) - 0.1).abs() < 1e-9);
    }
}

//! The report's chart: each system's speed relative to seglog, per workload.

#![allow(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value by key yields Null when the key is missing; it never panics"
)]
#![allow(
    clippy::cast_precision_loss,
    reason = "counts of a few systems and workloads become chart coordinates"
)]

use std::fmt::Write as _;

use serde_json::Value;

use super::summary::present_systems;
use super::workloads::WORKLOADS;

/// A grouped horizontal bar chart: for each workload, each system's speed relative to seglog's
/// (seglog = 1; longer is faster), on a log scale so that 0.1x and 10x are as far from 1x.
pub(super) fn render_svg(summary: &Value) -> String {
    let systems = present_systems(summary);
    let colors = ["#1f77b4", "#d62728", "#2ca02c", "#7f7f7f"];
    let bar_h = 14.0;
    let group_h = bar_h * systems.len() as f64 + 14.0;
    let left = 250.0;
    let width = 560.0;
    let top = 40.0;
    let height = top + group_h * WORKLOADS.len() as f64 + 30.0;
    // log10 scale from 1/30x to 30x
    let span = 30f64.log10();
    let x_of = |rel: f64| left + width / 2.0 + (rel.log10() / span).clamp(-1.0, 1.0) * width / 2.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        left + width + 90.0
    );
    let _ = writeln!(
        s,
        "<text x=\"10\" y=\"18\" font-size=\"13\">Speed relative to seglog (log scale; seglog = 1x, right of the line is faster than seglog)</text>"
    );
    for (i, sys) in systems.iter().enumerate() {
        let lx = left + i as f64 * 110.0;
        let color = colors.get(i).copied().unwrap_or("#000");
        let _ = writeln!(
            s,
            "<rect x=\"{lx}\" y=\"26\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{}\" y=\"35\">{sys}</text>",
            lx + 14.0
        );
    }
    let axis_y = top + group_h * WORKLOADS.len() as f64;
    for tick in [1.0 / 30.0, 0.1, 1.0 / 3.0, 1.0, 3.0, 10.0, 30.0] {
        let tx = x_of(tick);
        let label = if tick < 1.0 {
            format!("1/{:.0}", 1.0 / tick)
        } else {
            format!("{tick:.0}")
        };
        let _ = writeln!(
            s,
            "<line x1=\"{tx:.1}\" y1=\"{top}\" x2=\"{tx:.1}\" y2=\"{axis_y}\" stroke=\"{}\"/><text x=\"{:.1}\" y=\"{}\">{label}x</text>",
            if (tick - 1.0).abs() < 1e-9 {
                "#000"
            } else {
                "#ddd"
            },
            tx - 8.0,
            axis_y + 14.0
        );
    }
    for (g, (id, title)) in WORKLOADS.iter().enumerate() {
        let y0 = top + g as f64 * group_h;
        let _ = writeln!(
            s,
            "<text x=\"10\" y=\"{}\">{title}</text>",
            y0 + group_h / 2.0
        );
        for (i, sys) in systems.iter().enumerate() {
            let entry = &summary["workloads"][*id]["systems"][*sys];
            let Some(speedup) = entry["seglog_speedup"].as_f64() else {
                continue;
            };
            let rel = 1.0 / speedup;
            let bar_y = y0 + 6.0 + i as f64 * bar_h;
            let (one, end) = (x_of(1.0), x_of(rel));
            let color = colors.get(i).copied().unwrap_or("#000");
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{bar_y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\">{rel:.2}x</text>",
                one.min(end),
                (one - end).abs().max(1.0),
                bar_h - 3.0,
                one.max(end) + 4.0,
                bar_y + bar_h - 4.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

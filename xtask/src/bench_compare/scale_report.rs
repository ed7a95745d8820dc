//! The "Scale" section of `benchmarks.md` and its line charts, from `scale.json`: tables of the
//! medians by size (skipped and failed sizes with their reasons) and one SVG per chart. The section
//! sits between the generated results and the hand-written analysis; a bench-compare run keeps it
//! (`kept_section`), a scale run replaces it (`splice`).

#![allow(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value by key yields Null when the key is missing; it never panics"
)]
#![allow(clippy::cast_precision_loss, reason = "sizes become chart coordinates")]

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::line_chart::{Chart, Series, render_line_chart};

const HEADING: &str = "\n## Scale\n";
const ANALYSIS: &str = "\n## Analysis";

fn median(samples: &[f64]) -> f64 {
    let mut v: Vec<f64> = samples.iter().copied().filter(|s| s.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v.get(n / 2).copied().unwrap_or(f64::NAN),
        n => f64::midpoint(
            v.get(n / 2 - 1).copied().unwrap_or(f64::NAN),
            v.get(n / 2).copied().unwrap_or(f64::NAN),
        ),
    }
}

/// The runs of one kind, ascending by size.
fn runs_of<'a>(scale: &'a Value, kind: &str) -> Vec<&'a Value> {
    let mut runs: Vec<&Value> = scale["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["kind"] == kind)
        .collect();
    runs.sort_by_key(|r| r["x"].as_u64().unwrap_or(0));
    runs
}

/// The median of `workload` in `run`, NaN when it has none.
fn median_of(run: &Value, workload: &str) -> f64 {
    let samples: Vec<f64> = run["figures"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["workload"] == workload)
        .and_then(|f| f["samples"].as_array())
        .into_iter()
        .flatten()
        .filter_map(Value::as_f64)
        .collect();
    median(&samples)
}

fn size_label(mib: f64) -> String {
    if mib >= 1024.0 {
        format!("{} GiB", trim(mib / 1024.0))
    } else {
        format!("{} MiB", trim(mib))
    }
}

fn count_label(n: f64) -> String {
    if n >= 1000.0 {
        format!("{}k", trim(n / 1000.0))
    } else {
        trim(n)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn cell(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return "-".to_owned();
    }
    match unit {
        "MiB/s" => format!("{v:.0} MiB/s"),
        "MiB" => format!("{v:.0} MiB"),
        "ms" if v >= 1000.0 => format!("{:.2} s", v / 1000.0),
        "ms" => format!("{v:.1} ms"),
        _ if v >= 1000.0 => format!("{:.2} us", v / 1000.0),
        _ => format!("{v:.0} ns"),
    }
}

/// A table column: (workload, title, unit).
type Column = (&'static str, &'static str, &'static str);

/// The columns of each kind's table.
const COLUMNS: &[(&str, &[Column])] = &[
    (
        "log",
        &[
            ("scale_append", "append as leader, 1 KiB x 16", "MiB/s"),
            (
                "scale_consume_sequential",
                "consume whole, 1 MiB fetches, sendfile",
                "MiB/s",
            ),
            (
                "scale_read_random",
                "read by offset (17 KiB), random, wall time",
                "ns/op",
            ),
        ],
    ),
    (
        "open",
        &[
            ("scale_open_clean", "open, clean shutdown", "ms"),
            (
                "scale_open_unclean",
                "open, unclean, recovery point halfway",
                "ms",
            ),
        ],
    ),
    (
        "compact",
        &[
            ("scale_compact", "compaction time", "ms"),
            ("scale_compact_peak_memory", "peak memory", "MiB"),
        ],
    ),
];

fn table(s: &mut String, scale: &Value, kind: &str, first: &str, label: fn(f64) -> String) {
    let columns = COLUMNS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[][..], |(_, c)| *c);
    let _ = write!(s, "| {first} |");
    for (_, title, _) in columns {
        let _ = write!(s, " {title} |");
    }
    s.push_str("\n|---|");
    s.push_str(&"---:|".repeat(columns.len()));
    s.push('\n');
    for run in runs_of(scale, kind) {
        let x = label(run["x"].as_f64().unwrap_or(f64::NAN));
        if run["status"] == "ok" {
            let _ = write!(s, "| {x} |");
            for (id, _, unit) in columns {
                let _ = write!(s, " {} |", cell(median_of(run, id), unit));
            }
            s.push('\n');
        } else {
            let _ = writeln!(
                s,
                "| {x} | **{}**: {} |{}",
                run["status"].as_str().unwrap_or("?"),
                run["reason"].as_str().unwrap_or("").replace('|', "/"),
                " |".repeat(columns.len().saturating_sub(1))
            );
        }
    }
}

/// A line of a chart: (workload, legend, factor to the axis's unit).
type Line = (&'static str, &'static str, f64);

/// The charts: (file, title, y axis, kind, lines).
const CHARTS: &[(&str, &str, &str, &str, &[Line])] = &[
    (
        "scale-throughput.svg",
        "seglog: append and sequential consume throughput by log size",
        "MiB/s",
        "log",
        &[
            ("scale_append", "append as leader", 1.0),
            ("scale_consume_sequential", "consume, 1 MiB fetches", 1.0),
        ],
    ),
    (
        "scale-read-random.svg",
        "seglog: random read by offset (17 KiB) by log size",
        "us per read (wall time)",
        "log",
        &[("scale_read_random", "read by offset", 1e-3)],
    ),
    (
        "scale-open.svg",
        "seglog: PartitionLog::open by segment count",
        "seconds",
        "open",
        &[
            ("scale_open_clean", "clean shutdown", 1e-3),
            (
                "scale_open_unclean",
                "unclean, recovery point halfway",
                1e-3,
            ),
        ],
    ),
    (
        "scale-compact.svg",
        "seglog: compaction time by log size (dedupe buffer fixed)",
        "seconds",
        "compact",
        &[("scale_compact", "PartitionLog::clean", 1e-3)],
    ),
    (
        "scale-compact-memory.svg",
        "seglog: peak memory of the cleaning process by log size",
        "MiB",
        "compact",
        &[("scale_compact_peak_memory", "peak memory (VmHWM)", 1.0)],
    ),
];

/// The charts, each with its file name; the memory chart also draws the map budget + 32 MiB
/// (the bound). A size without a figure (skipped, failed) has a NaN point: left out.
pub(super) fn charts(scale: &Value) -> Vec<(&'static str, Chart)> {
    CHARTS
        .iter()
        .map(|(file, title, y_label, kind, lines)| {
            let runs = runs_of(scale, kind);
            let x_of = |r: &Value| r["x"].as_f64().unwrap_or(f64::NAN);
            let mut series: Vec<Series> = lines
                .iter()
                .map(|(id, name, factor)| Series {
                    name: (*name).to_owned(),
                    points: runs
                        .iter()
                        .map(|r| (x_of(r), median_of(r, id) * factor))
                        .collect(),
                })
                .collect();
            if file.ends_with("memory.svg") {
                let budget = scale["dedupe_mib"].as_f64().unwrap_or(128.0) + 32.0;
                series.push(Series {
                    name: format!("map budget + 32 MiB ({budget:.0} MiB)"),
                    points: runs.iter().map(|r| (x_of(r), budget)).collect(),
                });
            }
            let (x_label, x_tick): (&str, fn(f64) -> String) = if *kind == "open" {
                ("segments (log scale)", count_label)
            } else {
                ("log size (log scale)", size_label)
            };
            let chart = Chart {
                title: (*title).to_owned(),
                x_label: x_label.to_owned(),
                y_label: (*y_label).to_owned(),
                x_tick,
                series,
            };
            (*file, chart)
        })
        .collect()
}

/// The section, from its heading to the end of its last line.
pub(super) fn render_section(scale: &Value) -> String {
    let m = &scale["machine"];
    let mut s = String::from(HEADING);
    let _ = writeln!(
        s,
        "\nGenerated by `{}` on {} (`target/bench/scale.json` holds the samples). How the costs grow with the size of the log, **seglog only**: Kafka is not run at scale (its side-by-side figures are the workloads above, at 1 GiB and 10,000 segments).",
        scale["command"].as_str().unwrap_or(""),
        m["date"].as_str().unwrap_or("")
    );
    let _ = writeln!(
        s,
        "Each size ran in a process of its own, one after the other, its data deleted before the next. A size runs only when the bench directory's file system has room for it and a margin (statvfs, checked before each size); one that does not fit is listed as skipped with the space it needed, and one that fails (such as more segments than the open-file limit) as failed with its error. Method: [perf/scale.md](perf/scale.md).\n"
    );
    let _ = writeln!(
        s,
        "- Load average before the run: `{}`; after: `{}`. {} cores, {} RAM, file system {}; open-file limit (`ulimit -n`, soft and hard): {}.",
        m["loadavg_before"].as_str().unwrap_or("?"),
        m["loadavg_after"].as_str().unwrap_or("?"),
        m["cores"],
        m["memory"].as_str().unwrap_or("?"),
        m["filesystem"].as_str().unwrap_or("?"),
        scale["open_files_limit"].as_str().unwrap_or("?")
    );
    let _ = writeln!(
        s,
        "- Medians of {} sample(s) for the reads and opens ({} random reads a sample); one pass for the append and one cleaning per size.\n",
        scale["samples"], scale["reads"]
    );
    s.push_str("### Append and read, by log size\n\n");
    table(&mut s, scale, "log", "log size", size_label);
    s.push_str("\n![append and consume throughput by log size](scale-throughput.svg)\n![random read by log size](scale-read-random.svg)\n\n");
    s.push_str("### Open, by segment count\n\n");
    table(&mut s, scale, "open", "segments", count_label);
    s.push_str("\n![open time by segment count](scale-open.svg)\n\n");
    let _ = writeln!(
        s,
        "### Compaction, by log size (dedupe buffer {} MiB at every size)\n",
        scale["dedupe_mib"]
    );
    table(&mut s, scale, "compact", "log size", size_label);
    s.push_str("\n![compaction time by log size](scale-compact.svg)\n![peak memory of compaction by log size](scale-compact-memory.svg)\n");
    s
}

/// The Scale section of an existing `benchmarks.md` (empty if it has none), so that a
/// bench-compare run that rewrites the file keeps it.
pub(super) fn kept_section(old: &str) -> String {
    let Some(start) = old.find(HEADING) else {
        return String::new();
    };
    let rest = &old[start..];
    let end = rest.find(ANALYSIS).unwrap_or(rest.len());
    rest[..end].to_owned()
}

/// `old` with its Scale section replaced by `section`, or `section` put before the analysis (or
/// at the end) when it has none.
pub(super) fn splice(old: &str, section: &str) -> String {
    let (start, end) = if let Some(start) = old.find(HEADING) {
        let end = old[start..].find(ANALYSIS).map_or(old.len(), |e| start + e);
        (start, end)
    } else {
        let at = old.find(ANALYSIS).unwrap_or(old.len());
        (at, at)
    };
    let (head, tail) = (&old[..start], &old[end..]);
    format!(
        "{}{section}{tail}",
        head.trim_end_matches('\n').to_owned() + "\n"
    )
}

/// Writes the charts into `dir` and splices the section into its `benchmarks.md` (when there is
/// one: a scale run alone does not make the rest of the report).
pub(super) fn write_scale_report(scale: &Value, dir: &Path) -> Result<()> {
    for (file, chart) in charts(scale) {
        std::fs::write(dir.join(file), render_line_chart(&chart))?;
    }
    let section = render_section(scale);
    let md = dir.join("benchmarks.md");
    if let Ok(old) = std::fs::read_to_string(&md) {
        std::fs::write(&md, splice(&old, &section))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scale() -> Value {
        json!({
            "command": "cargo xtask bench-compare --scale",
            "machine": { "date": "today", "cores": 2 },
            "dedupe_mib": 128,
            "samples": 3,
            "reads": 10,
            "runs": [
                { "kind": "log", "x": 10240, "status": "skipped", "reason": "needs 10.50 GiB plus a 1.05 GiB margin, 9.00 GiB free" },
                { "kind": "log", "x": 1024, "status": "ok", "figures": [
                    { "workload": "scale_append", "samples": [900.0, 1000.0, 1100.0] },
                    { "workload": "scale_consume_sequential", "samples": [3000.0] },
                    { "workload": "scale_read_random", "samples": [1500.0] },
                ]},
                { "kind": "open", "x": 100_000, "status": "failed", "reason": "Error: Too many open files" },
                { "kind": "compact", "x": 1024, "status": "ok", "figures": [
                    { "workload": "scale_compact", "samples": [2500.0] },
                    { "workload": "scale_compact_peak_memory", "samples": [150.0] },
                ]},
            ],
        })
    }

    /// The tables give the medians by size, ascending, and every skip and failure with its reason.
    #[test]
    fn the_section_shows_medians_skips_and_failures() {
        let s = render_section(&scale());
        assert!(s.starts_with(HEADING), "{s}");
        let one = s.find("| 1 GiB | 1000 MiB/s | 3000 MiB/s | 1.50 us |");
        let ten = s.find("| 10 GiB | **skipped**: needs 10.50 GiB");
        assert!(one.is_some() && ten.is_some() && one < ten, "{s}");
        assert!(
            s.contains("| 100k | **failed**: Error: Too many open files | |"),
            "{s}"
        );
        assert!(s.contains("| 1 GiB | 2.50 s | 150 MiB |"), "{s}");
        assert!(s.contains("seglog only"));
    }

    /// The memory chart carries the budget line; a skipped size has no point.
    #[test]
    fn the_charts_leave_skipped_sizes_out() {
        let charts = charts(&scale());
        let (_, throughput) = &charts[0];
        let append = &throughput.series[0].points;
        assert_eq!(append.len(), 2);
        assert!(
            append
                .iter()
                .any(|(x, y)| (*x - 1024.0).abs() < 1e-9 && (*y - 1000.0).abs() < 1e-9)
        );
        assert!(
            append
                .iter()
                .any(|(x, y)| (*x - 10240.0).abs() < 1e-9 && y.is_nan())
        );
        let (file, memory) = &charts[4];
        assert_eq!(*file, "scale-compact-memory.svg");
        assert_eq!(memory.series[1].points, [(1024.0, 160.0)]);
        assert_eq!(
            (size_label(16384.0), count_label(100_000.0)),
            ("16 GiB".to_owned(), "100k".to_owned())
        );
    }

    /// A scale run replaces the old section and keeps the hand-written analysis; a full run
    /// keeps the section it finds.
    #[test]
    fn the_section_is_spliced_before_the_analysis() {
        let doc = "# Benchmarks\n\nresults\n\n## Analysis\n\nby hand\n";
        let first = splice(doc, "\n## Scale\n\nA\n");
        assert_eq!(
            first,
            "# Benchmarks\n\nresults\n\n## Scale\n\nA\n\n## Analysis\n\nby hand\n"
        );
        let second = splice(&first, "\n## Scale\n\nB\n");
        assert_eq!(second, first.replace("\nA\n", "\nB\n"));
        assert_eq!(kept_section(&second), "\n## Scale\n\nB\n");
        assert_eq!(kept_section(doc), "");
        // No analysis: the section goes at the end.
        assert_eq!(
            splice("# B\n", "\n## Scale\n\nC\n"),
            "# B\n\n## Scale\n\nC\n"
        );
    }
}

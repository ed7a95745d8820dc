//! The human table of `seglog log-dirs`: per log directory a header line with its totals, then one
//! row per partition with sizes and times readable (comfy-table, no borders, numbers right-aligned).

use std::io::Write;

use anyhow::Result;
use comfy_table::{CellAlignment, Table, presets};

use super::Described;
use crate::human;

const HEADER: [&str; 8] = [
    "PARTITION",
    "REPLICA",
    "SIZE",
    "SEGMENTS",
    "LOG START",
    "LOG END",
    "OFFSET LAG",
    "LAST MODIFIED",
];

pub(super) fn write(
    out: &mut impl Write,
    broker: i32,
    source: &str,
    described: &[Described],
) -> Result<()> {
    writeln!(out, "broker {broker} ({source})")?;
    for d in described {
        writeln!(out)?;
        if let Some(e) = &d.error {
            writeln!(out, "{}: error: {e}", d.path.display())?;
            continue;
        }
        let size: u64 = d.replicas.iter().map(|r| r.size).sum();
        writeln!(
            out,
            "{}: {} partition{}, {}",
            d.path.display(),
            d.replicas.len(),
            if d.replicas.len() == 1 { "" } else { "s" },
            human::size(size)
        )?;
        if !d.replicas.is_empty() {
            let mut table = Table::new();
            table.load_preset(presets::NOTHING).set_header(HEADER);
            for r in &d.replicas {
                table.add_row([
                    r.tp.to_string(),
                    if r.future { "future" } else { "current" }.to_owned(),
                    human::size(r.size),
                    r.segments.to_string(),
                    r.log_start.to_string(),
                    r.log_end
                        .as_ref()
                        .map_or_else(|_| "damaged".to_owned(), ToString::to_string),
                    if r.offset_lag < 0 {
                        "unknown".to_owned()
                    } else {
                        r.offset_lag.to_string()
                    },
                    human::timestamp(r.modified),
                ]);
            }
            for i in [2, 3, 4, 5, 6] {
                if let Some(column) = table.column_mut(i) {
                    column.set_cell_alignment(CellAlignment::Right);
                }
            }
            for line in table.lines() {
                // The preset pads each cell by one space: the first column's is dropped.
                let line = line.strip_prefix(' ').unwrap_or(&line);
                writeln!(out, "{}", line.trim_end())?;
            }
        }
        for (path, why) in &d.skipped {
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            writeln!(out, "  not described: {name}: {why}; Kafka leaves it out")?;
        }
    }
    Ok(())
}

//! The checks `seglog check` makes, on a partition directory of a `SimFs` after a clean close.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use seglog_fs::sim::SimFs;
use seglog_fs::{FileSystem, OpenMode};
use seglog_mmap_index::{OffsetIndex, Problem, TimeIndex};
use seglog_segment::naming;
use seglog_segment::scan::{Scan, ScanEnd, scan_batches};

/// The checks of `seglog check`, on a partition directory of `fs` after a clean close.
pub(super) fn check_partition(fs: &SimFs, dir: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let Ok(files) = fs.read_dir(dir) else {
        return problems;
    };
    let backing = fs.index_backing();
    let logs: Vec<(i64, PathBuf)> = files
        .iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            if name.ends_with(naming::CLEANED_FILE_SUFFIX)
                || name.ends_with(naming::SWAP_FILE_SUFFIX)
            {
                problems.push(format!("{}: leftover file", p.display()));
            }
            let base = naming::offset_from_file_name(name.strip_suffix(naming::LOG_FILE_SUFFIX)?)?;
            Some((base, p.clone()))
        })
        .collect();
    let mut previous = i64::MIN;
    for (i, (base, path)) in logs.iter().enumerate() {
        let active = i + 1 == logs.len();
        let file = fs.open(path, OpenMode::ReadOnly).unwrap();
        let len = seglog_fs::File::len(&file).unwrap();
        let mut batches: Vec<(u64, i64, i64)> = Vec::new();
        let mut last = base - 1;
        let scan = scan_batches(&file, path, 0, len, 1 << 20, |position, framed| {
            let decoded = match framed.decode() {
                Ok(d) => d,
                Err(e) => return Ok(ControlFlow::Break(format!("at {position}: {e}"))),
            };
            if let Err(e) = decoded.validate() {
                return Ok(ControlFlow::Break(format!("at {position}: {e}")));
            }
            let first = match &decoded {
                seglog_record_format::Batch::V2(b) => b.base_offset(),
                seglog_record_format::Batch::Legacy(b) => b.last_offset(),
            };
            if first <= last {
                return Ok(ControlFlow::Break(format!(
                    "at {position}: offsets go back to {first}"
                )));
            }
            last = decoded.last_offset();
            batches.push((position, decoded.last_offset(), decoded.max_timestamp()));
            Ok(ControlFlow::Continue(()))
        });
        match scan {
            Ok(Scan::Ended(ScanEnd::Clean { position })) if position == len => {}
            other => problems.push(format!(
                "{}: the .log does not scan clean: {other:?}",
                path.display()
            )),
        }
        if *base <= previous {
            problems.push(format!("{}: overlaps the previous segment", path.display()));
        }
        if let Some((_, l, _)) = batches.last() {
            previous = *l;
        }
        let by_position: BTreeMap<u64, i64> = batches.iter().map(|(p, o, _)| (*p, *o)).collect();
        let index_path = naming::offset_index_file(dir, *base, "");
        match OffsetIndex::options(&index_path, *base)
            .read_only()
            .backing(backing.clone())
            .open()
        {
            Ok(index) => {
                let report = index.verify().unwrap();
                let mut end = report.entries;
                for problem in &report.problems {
                    match problem {
                        Problem::ZeroTail { first_slot, .. } => {
                            end = *first_slot;
                            if !active {
                                problems.push(format!("{}: {problem:?}", index_path.display()));
                            }
                        }
                        other => problems.push(format!("{}: {other:?}", index_path.display())),
                    }
                }
                for slot in 0..end {
                    let e = index.entry(slot).unwrap();
                    if by_position.get(&u64::from(e.position)) != Some(&e.offset) {
                        problems.push(format!(
                            "{}: entry {slot} ({}, {}) is not a batch of the log",
                            index_path.display(),
                            e.offset,
                            e.position
                        ));
                    }
                }
            }
            Err(_) if batches.is_empty() => {}
            Err(e) => problems.push(format!("{}: {e}", index_path.display())),
        }
        let time_path = naming::time_index_file(dir, *base, "");
        if let Ok(index) = TimeIndex::options(&time_path, *base)
            .read_only()
            .backing(backing.clone())
            .open()
        {
            let report = index.verify().unwrap();
            let mut end = report.entries;
            for problem in &report.problems {
                match problem {
                    Problem::ZeroTail { first_slot, .. } => {
                        end = *first_slot;
                        if !active {
                            problems.push(format!("{}: {problem:?}", time_path.display()));
                        }
                    }
                    Problem::LastTimestampZero if active => {}
                    other => problems.push(format!("{}: {other:?}", time_path.display())),
                }
            }
            let mut running = -1_i64;
            let maxima: BTreeMap<i64, i64> = batches
                .iter()
                .map(|(_, last, ts)| {
                    running = running.max(*ts);
                    (*last, running)
                })
                .collect();
            for slot in 0..end {
                let e = index.entry(slot).unwrap();
                if maxima.get(&e.offset) != Some(&e.timestamp) {
                    problems.push(format!(
                        "{}: entry {slot} ({}, {}) disagrees with the log",
                        time_path.display(),
                        e.timestamp,
                        e.offset
                    ));
                }
            }
        }
    }
    problems
}

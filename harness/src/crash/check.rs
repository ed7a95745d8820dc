//! Reopening a crash image and checking every invariant on it.

use std::collections::BTreeMap;
use std::path::Path;

use seglog_fs::FileSystem as _;
use seglog_fs::sim::SimFs;
use seglog_log::{LogDir, MockClock, PartitionLog};
use seglog_record_format::Compression;

use super::epoch_check::check_epochs;
use super::model::{Expect, Model, Presence, Rec, batch};
use super::partition_check::check_partition;
use super::txn_check::check_txns;
use super::{ROOT, clock_now, options, tp};

/// Reads every record from `from` to the log end, as (offset, record). A read that returns
/// nothing ends the walk (a batch-granular truncation can leave the log end past the last batch).
fn read_all(log: &PartitionLog<SimFs>, from: i64) -> Result<Vec<(i64, Rec)>, String> {
    let mut out = Vec::new();
    let mut next = from;
    let mut buf = Vec::new();
    while next < log.log_end_offset() {
        let fetch = log
            .read(next, 1 << 20, seglog_log::Isolation::LogEnd, true)
            .map_err(|e| format!("read at {next}: {e}"))?;
        buf.clear();
        fetch
            .read_into(&mut buf)
            .map_err(|e| format!("read at {next}: {e}"))?;
        if buf.is_empty() {
            break;
        }
        let mut advanced = next;
        for framed in seglog_record_format::batches(&buf) {
            let framed = framed.map_err(|e| format!("batch near {next}: {e}"))?;
            let decoded = framed
                .decode()
                .map_err(|e| format!("batch near {next}: {e}"))?;
            advanced = advanced.max(decoded.last_offset() + 1);
            for r in decoded
                .to_records()
                .map_err(|e| format!("records near {next}: {e}"))?
            {
                if r.offset >= next {
                    out.push((
                        r.offset,
                        Rec {
                            key: r.key.unwrap_or_default(),
                            value: r.value.unwrap_or_default(),
                            timestamp: r.timestamp,
                        },
                    ));
                }
            }
        }
        if advanced <= next {
            return Err(format!(
                "a read at {next} returns only batches that end before it"
            ));
        }
        next = advanced;
    }
    Ok(out)
}

/// Reopens a crash image and checks every invariant.
pub(super) fn check_image(
    image: &SimFs,
    segment_bytes: u64,
    clock: &MockClock,
    model: &Model,
    expect: &Expect,
    transactional: bool,
) -> Result<(), String> {
    let root = Path::new(ROOT);
    let (dir, _report) = LogDir::open(image.clone(), root, options(clock, segment_bytes))
        .map_err(|e| format!("open: {e}"))?;
    if let Some(left) = image
        .read_dir(root)
        .map_err(|e| format!("list: {e}"))?
        .iter()
        .find(|p| p.to_string_lossy().ends_with("-delete"))
    {
        return Err(format!("the open left {} behind", left.display()));
    }
    let Some(log) = dir.log(&tp()) else {
        if expect.required.is_empty() || expect.partition != Presence::Kept {
            return Ok(());
        }
        return Err("the partition log is gone".into());
    };
    if expect.partition == Presence::Deleted {
        return Err("the deleted partition log is back".into());
    }
    log.set_roll_flush_inline(true);
    let read = read_all(&log, log.log_start_offset())?;
    let mut previous = i64::MIN;
    let mut present = BTreeMap::new();
    for (offset, rec) in read {
        if offset <= previous {
            return Err(format!("offset {offset} follows {previous}"));
        }
        previous = offset;
        match model.appended.get(&offset) {
            Some(versions) if versions.contains(&rec) => {}
            _ => {
                return Err(format!(
                    "offset {offset} holds data never appended there: {rec:?}"
                ));
            }
        }
        present.insert(offset, rec);
    }
    for (offset, rec) in &expect.required {
        if present.get(offset) != Some(rec) {
            return Err(format!(
                "durable offset {offset} is {} (log start {}, end {})",
                if present.contains_key(offset) {
                    "different"
                } else {
                    "missing"
                },
                log.log_start_offset(),
                log.log_end_offset()
            ));
        }
    }
    check_epochs(&log, model.log_start)?;
    // The high watermark read from replication-offset-checkpoint: one a checkpoint wrote, clamped
    // to the reopened log as Kafka clamps it; there once a checkpoint of one completed (a crash
    // may lose a checkpoint in progress, never invent one nor lose a completed one).
    let (start, end) = (log.log_start_offset(), log.log_end_offset());
    if !log.high_watermark_is_set() {
        if model.hw_durable {
            return Err("the checkpointed high watermark is gone".into());
        }
    } else if !model
        .hw_checkpointed
        .iter()
        .any(|v| (*v).clamp(start, end) == log.high_watermark())
    {
        return Err(format!(
            "the checkpointed high watermark {} is none of those written {:?}, clamped to [{start}, {end}]",
            log.high_watermark(),
            model.hw_checkpointed
        ));
    }
    if transactional {
        log.set_high_watermark(log.log_end_offset());
        let dir = root.join(tp().dir_name());
        check_txns(image, &dir, &log, model, &expect.required, &present)?;
    }
    let end = log.log_end_offset();
    let probe = Rec {
        key: b"probe".to_vec(),
        value: b"after the crash".to_vec(),
        timestamp: clock_now(clock),
    };
    let mut bytes = batch(0, std::slice::from_ref(&probe), Compression::None);
    log.append_as_leader(&mut bytes)
        .map_err(|e| format!("append after reopen: {e}"))?;
    let after = read_all(&log, end)?;
    if after.last().map(|(o, r)| (*o, r)) != Some((end, &probe)) {
        return Err(format!(
            "the append after reopen does not read back at {end}"
        ));
    }
    dir.close()
        .map_err(|e| format!("clean close after reopen: {e}"))?;
    drop(log);
    drop(dir);
    let problems = check_partition(image, &root.join(tp().dir_name()));
    if !problems.is_empty() {
        return Err(format!("check: {}", problems.join("; ")));
    }
    if !transactional {
        return Ok(());
    }
    // `seglog check`'s own findings after the clean close: among them a `.txnindex` that is not
    // what a replay of the markers gives (`txn_index_mismatch`) and a snapshot past the log end.
    let report = seglog_log::inspect::LogDirView::open(image.clone(), root)
        .and_then(|view| view.check(|| {}))
        .map_err(|e| format!("seglog check: {e}"))?;
    let problems: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.is_problem())
        .map(|f| format!("{} {}: {}", f.kind, f.file.display(), f.detail))
        .collect();
    if !problems.is_empty() {
        return Err(format!("seglog check: {}", problems.join("; ")));
    }
    Ok(())
}

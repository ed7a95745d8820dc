//! Target `index`: opening a `.index` or `.timeindex` from arbitrary bytes and looking entries up
//! in it.
//!
//! Input: an 11-byte header, then the file's bytes. Header byte 0: bit 0 picks the time index,
//! bits 1-2 the open mode (`open` with a maximum size, `open_existing`, `open_read_only`), bit 3
//! adds writes after the lookups. Bytes 1-8: the base offset (big-endian, masked to a value a
//! 20-digit file name can hold). Bytes 9-10: the maximum index size in 8-byte units.

use std::path::Path;

use seglog_mmap_index::{
    Error, NO_TIMESTAMP, OffsetIndex, OffsetPosition, Problem, TimeIndex, TimestampOffset,
    VerifyReport,
};

use crate::with_scratch_dir;

/// The header's length.
pub(crate) const HEADER: usize = 11;

/// How many probe keys are derived from the file's entries (each gives three probes).
const PROBE_ENTRIES: usize = 64;

/// The parsed header.
#[derive(Debug, Clone, Copy)]
struct Header {
    time: bool,
    mode: u8,
    writes: bool,
    base: i64,
    max_index_size: u32,
}

fn header(data: &[u8]) -> (Header, &[u8]) {
    let mut h = [0_u8; HEADER];
    let n = data.len().min(HEADER);
    if let (Some(dst), Some(src)) = (h.get_mut(..n), data.get(..n)) {
        dst.copy_from_slice(src);
    }
    let [flags, b0, b1, b2, b3, b4, b5, b6, b7, s0, s1] = h;
    let base = i64::from_be_bytes([b0, b1, b2, b3, b4, b5, b6, b7]) & i64::MAX;
    let parsed = Header {
        time: flags & 1 == 1,
        mode: (flags >> 1) % 3,
        writes: flags & 8 == 8,
        base,
        max_index_size: u32::from(u16::from_be_bytes([s0, s1])) * 8,
    };
    (parsed, data.get(n..).unwrap_or_default())
}

/// Encodes a header for `file` (used by the seeds).
pub(crate) fn with_header(time: bool, base: i64, file: &[u8]) -> Vec<u8> {
    let mut out = vec![u8::from(time)];
    out.extend_from_slice(&base.to_be_bytes());
    out.extend_from_slice(&1024_u16.to_be_bytes());
    out.extend_from_slice(file);
    out
}

/// The `index` target.
pub fn index(data: &[u8]) {
    let (h, file) = header(data);
    with_scratch_dir(|dir| {
        if h.time {
            time_index(dir, h, file);
        } else {
            offset_index(dir, h, file);
        }
    });
}

/// Kafka's findings and `verify`'s report agree: `sanity_check` fails exactly when the report
/// holds one of Kafka's rules.
fn check_agreement(sane: &Result<(), Error>, report: &VerifyReport) {
    let kafka = report
        .problems
        .iter()
        .any(|p| matches!(p, Problem::Kafka(_)));
    assert_eq!(
        sane.is_err(),
        kafka,
        "sanity_check ({sane:?}) and verify ({report:?}) disagree"
    );
    if let Err(e) = sane {
        assert!(
            matches!(e, Error::CorruptIndex { .. }),
            "sanity_check failed with something other than corruption: {e}"
        );
    }
}

fn offset_index(dir: &Path, h: Header, file: &[u8]) {
    let path = dir.join(format!("{:020}.index", h.base));
    std::fs::write(&path, file).expect("writing the index file");
    let opened = match h.mode {
        0 => OffsetIndex::options(&path, h.base)
            .max_index_size(h.max_index_size)
            .open(),
        1 => OffsetIndex::options(&path, h.base).open(),
        _ => OffsetIndex::options(&path, h.base).read_only().open(),
    };
    let Ok(mut idx) = opened else { return };
    let entries = idx.entries();
    assert_eq!(
        entries,
        file.len() / 8,
        "entries are length / 8, as Kafka counts them"
    );
    let keys: Vec<OffsetPosition> = (0..entries)
        .map(|n| idx.entry(n).expect("an entry below the count"))
        .collect();
    assert!(idx.entry(entries).is_err(), "an entry past the count");
    let reader = idx.reader();
    let sane = idx.sanity_check();
    // Lookups compare relative offsets; decoded offsets saturate at i64::MAX, so an entry past
    // it (which the sanity check reports, as Kafka's does) is no key for the model.
    let strictly_increasing = sane.is_ok()
        && keys
            .windows(2)
            .all(|w| matches!(w, [a, b] if a.offset < b.offset));
    let positions_sorted = keys
        .windows(2)
        .all(|w| matches!(w, [a, b] if a.position <= b.position));
    for target in probes(h.base, keys.iter().map(|k| k.offset)) {
        let found = idx.lookup(target).expect("lookup");
        assert_eq!(
            reader.lookup(target).expect("reader lookup"),
            found,
            "reader and index disagree"
        );
        if strictly_increasing {
            let model = keys
                .iter()
                .rev()
                .find(|k| k.offset <= target)
                .copied()
                .unwrap_or(OffsetPosition {
                    offset: h.base,
                    position: 0,
                });
            assert_eq!(found, model, "lookup({target}) differs from a linear scan");
        }
        let start = OffsetPosition {
            offset: target,
            position: u32::try_from(target & 0xffff).unwrap_or(0),
        };
        let upper = idx
            .fetch_upper_bound_offset(start, 100)
            .expect("fetch_upper_bound_offset");
        if let (true, Some(upper)) = (positions_sorted, upper) {
            assert!(
                u64::from(upper.position) >= u64::from(start.position) + 100,
                "fetch_upper_bound_offset gave {upper:?} for {start:?} + 100"
            );
        }
    }
    let report = idx.verify().expect("verify");
    check_agreement(&sane, &report);
    if !file.len().is_multiple_of(8) {
        assert!(sane.is_err(), "a length that is not a multiple of 8 passes");
    }
    if h.writes && !idx.is_read_only() {
        let last = keys.last().map_or(h.base, |k| k.offset);
        let _ = idx.append(last.saturating_add(1), 1);
        let _ = idx.truncate_to(keys.first().map_or(h.base, |k| k.offset.saturating_add(1)));
        if idx.trim_to_valid_size().is_ok() {
            assert_eq!(
                idx.length(),
                idx.entries() as u64 * 8,
                "trim leaves whole entries"
            );
        }
        let _ = idx.resize(h.max_index_size);
        let _ = idx.append(last.saturating_add(2), 2);
        let _ = idx.flush();
    }
    let entries = idx.entries();
    if idx.close().is_ok() && !idx.is_read_only() {
        let len = std::fs::metadata(&path).map_or(0, |m| m.len());
        assert_eq!(
            len,
            entries as u64 * 8,
            "close trims the file to its entries"
        );
    }
    if let Ok(again) = OffsetIndex::options(&path, h.base).read_only().open() {
        let _ = again.sanity_check();
        let _ = again.verify();
    }
}

fn time_index(dir: &Path, h: Header, file: &[u8]) {
    let path = dir.join(format!("{:020}.timeindex", h.base));
    std::fs::write(&path, file).expect("writing the index file");
    let opened = match h.mode {
        0 => TimeIndex::options(&path, h.base)
            .max_index_size(h.max_index_size)
            .open(),
        1 => TimeIndex::options(&path, h.base).open(),
        _ => TimeIndex::options(&path, h.base).read_only().open(),
    };
    let Ok(mut idx) = opened else { return };
    let entries = idx.entries();
    assert_eq!(
        entries,
        file.len() / 12,
        "entries are length / 12, as Kafka counts them"
    );
    let keys: Vec<TimestampOffset> = (0..entries)
        .map(|n| idx.entry(n).expect("an entry below the count"))
        .collect();
    assert!(idx.entry(entries).is_err(), "an entry past the count");
    let reader = idx.reader();
    let strictly_increasing = keys
        .windows(2)
        .all(|w| matches!(w, [a, b] if a.timestamp < b.timestamp));
    for target in probes(h.base, keys.iter().map(|k| k.timestamp)) {
        let found = idx.lookup(target).expect("lookup");
        assert_eq!(
            reader.lookup(target).expect("reader lookup"),
            found,
            "reader and index disagree"
        );
        if strictly_increasing {
            let model = keys
                .iter()
                .rev()
                .find(|k| k.timestamp <= target)
                .copied()
                .unwrap_or(TimestampOffset {
                    timestamp: NO_TIMESTAMP,
                    offset: h.base,
                });
            assert_eq!(found, model, "lookup({target}) differs from a linear scan");
        }
    }
    let sane = idx.sanity_check();
    let report = idx.verify().expect("verify");
    check_agreement(&sane, &report);
    if !file.len().is_multiple_of(12) {
        assert!(
            sane.is_err(),
            "a length that is not a multiple of 12 passes"
        );
    }
    if h.writes && !idx.is_read_only() {
        let last = keys.last().copied().unwrap_or(TimestampOffset {
            timestamp: 0,
            offset: h.base,
        });
        let _ = idx.maybe_append(
            last.timestamp.saturating_add(1),
            last.offset.saturating_add(1),
            false,
        );
        let _ = idx.maybe_append(
            last.timestamp.saturating_add(2),
            last.offset.saturating_add(2),
            true,
        );
        let _ = idx.truncate_to(keys.first().map_or(h.base, |k| k.offset.saturating_add(1)));
        if idx.trim_to_valid_size().is_ok() {
            assert_eq!(
                idx.length(),
                idx.entries() as u64 * 12,
                "trim leaves whole entries"
            );
        }
        let _ = idx.resize(h.max_index_size);
        let _ = idx.flush();
    }
    let entries = idx.entries();
    if idx.close().is_ok() && !idx.is_read_only() {
        let len = std::fs::metadata(&path).map_or(0, |m| m.len());
        assert_eq!(
            len,
            entries as u64 * 12,
            "close trims the file to its entries"
        );
    }
    if let Ok(again) = TimeIndex::options(&path, h.base).read_only().open() {
        let _ = again.sanity_check();
        let _ = again.verify();
    }
}

/// Lookup targets: the extremes, the base, and each of the first entries' keys and their
/// neighbours.
fn probes(base: i64, keys: impl Iterator<Item = i64>) -> Vec<i64> {
    let mut out = vec![i64::MIN, -1, 0, base.saturating_sub(1), base, i64::MAX];
    for k in keys.take(PROBE_ENTRIES) {
        out.extend([k.saturating_sub(1), k, k.saturating_add(1)]);
    }
    out
}

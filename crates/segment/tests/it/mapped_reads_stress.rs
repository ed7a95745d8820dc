//! Reads of a `.log` through its memory mapping race appends (which grow the mapping) and
//! truncations (which shrink it before the file): no crash, and every byte a reader gets is one
//! the appender wrote at that position in a generation of the file that was live during the
//! read. Translation and fetches run at the same time and must not panic.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use seglog_fs::RealFs;
use seglog_mmap_index::MAP_AHEAD_BYTES;
use seglog_record_format::Compression;
use seglog_segment::{FileRegion, LogSegment, SegmentConfig};

/// The bytes of every generation of the file: a truncation starts a new one.
type Shadow = RwLock<Vec<Vec<u8>>>;

fn check(shadow: &Shadow, first_gen: usize, position: u64, bytes: &[u8]) {
    let gens = shadow.read().unwrap();
    let window = first_gen.saturating_sub(1)..gens.len();
    for (i, &b) in bytes.iter().enumerate() {
        let p = position as usize + i;
        assert!(
            gens[window.clone()]
                .iter()
                .any(|g| g.get(p).is_some_and(|&x| x == b)),
            "byte {p} = {b}: not written there by any live generation {window:?}"
        );
    }
}

/// One reader: raw regions and fetches by offset, every byte checked; returns the bytes checked.
fn read_and_check(
    segment: &LogSegment,
    shadow: &Shadow,
    next: &AtomicI64,
    stop: &AtomicBool,
    r: u64,
) -> u64 {
    let mut rng = 0x9E37_79B9_7F4A_7C15_u64 ^ r;
    let mut buf = Vec::new();
    let mut checked = 0_u64;
    while !stop.load(Ordering::Relaxed) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let first_gen = shadow.read().unwrap().len() - 1;
        let size = segment.size();
        if size == 0 {
            continue;
        }
        // A raw region: header-sized or batch-sized, anywhere below the size.
        let position = rng % size;
        let length = if rng & 1 == 0 {
            61
        } else {
            (rng >> 40) % 40_000
        };
        segment
            .read_region(FileRegion { position, length }, &mut buf)
            .unwrap();
        check(shadow, first_gen, position, &buf);
        checked += buf.len() as u64;
        // A fetch by offset: translation reads headers through the mapping.
        let end = next.load(Ordering::Acquire).max(1);
        let target = ((rng >> 20) % end as u64) as i64;
        if let Ok(Some(fetch)) = segment.read(target, 1, Some(segment.size()), true) {
            segment.read_region(fetch.region, &mut buf).unwrap();
            check(shadow, first_gen, fetch.region.position, &buf);
        }
    }
    checked
}

#[test]
fn reads_race_appends_growth_and_truncations() {
    // About 200 MiB appended, so the file passes the 64 MiB map-ahead and the mapping grows.
    const ROUNDS: i64 = 2_500;
    let dir = tempfile::tempdir().unwrap();
    let config = SegmentConfig::default().with_index_interval_bytes(4096);
    let segment = Arc::new(LogSegment::open(RealFs, dir.path(), 0, config, false, "", 0).unwrap());
    let shadow: Arc<Shadow> = Arc::new(RwLock::new(vec![Vec::new()]));
    let next_offset = Arc::new(AtomicI64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2_u64)
        .map(|r| {
            let (segment, shadow, next, stop) = (
                segment.clone(),
                shadow.clone(),
                next_offset.clone(),
                stop.clone(),
            );
            std::thread::spawn(move || read_and_check(&segment, &shadow, &next, &stop, r))
        })
        .collect();
    let mut next = 0_i64;
    let mut largest = 0_u64;
    for round in 0..ROUNDS {
        if round % 250 == 249 && next > 0 {
            // Truncate about a tenth off the end: the mapping shrinks before the file.
            let to = next * 9 / 10 + round % 7;
            segment.truncate_to(to.min(next - 1), 0).unwrap();
            let size = segment.size() as usize;
            let mut gens = shadow.write().unwrap();
            let kept = gens.last().unwrap()[..size].to_vec();
            gens.push(kept);
            drop(gens);
            next = segment.read_next_offset().unwrap();
            next_offset.store(next, Ordering::Release);
        }
        // Batches of 1..=8 records; values sized by round, so a re-append after a truncation
        // writes different bytes at the same positions.
        let count = 1 + (round % 8) as usize;
        let ts: Vec<i64> = (next..next + count as i64).collect();
        let value_len = 16 + (round as usize * 3_719) % 20_000;
        let batch = common::batch_with(next, &ts, value_len, Compression::None);
        shadow
            .write()
            .unwrap()
            .last_mut()
            .unwrap()
            .extend_from_slice(&batch);
        segment.append(next + count as i64 - 1, &batch).unwrap();
        next += count as i64;
        next_offset.store(next, Ordering::Release);
        largest = largest.max(segment.size());
    }
    assert!(
        largest > MAP_AHEAD_BYTES,
        "the mapping never had to grow: {largest}"
    );
    stop.store(true, Ordering::Relaxed);
    let checked: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(checked > 0);
    // The whole file, read back through the mapping, is the last generation.
    let mut all = Vec::new();
    segment
        .read_region(
            FileRegion {
                position: 0,
                length: segment.size(),
            },
            &mut all,
        )
        .unwrap();
    assert_eq!(&all, shadow.read().unwrap().last().unwrap());
    segment.close().unwrap();
}

/// The first read of a segment maps its `.log` under the writer's lock, while a rename takes the
/// writer's lock and then the path's: no lock order between them may invert (a deadlock found by
/// the log crate's retention stress test, fixed by never holding the path's lock across reads).
#[test]
fn first_reads_race_renames_without_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..200_i64 {
        let segment = Arc::new(common::create(dir.path(), round * 10, 4096));
        segment
            .append(round * 10, &common::single(round * 10))
            .unwrap();
        let reader = {
            let segment = segment.clone();
            std::thread::spawn(move || segment.read_next_offset().unwrap())
        };
        segment.change_file_suffixes("", ".deleted").unwrap();
        segment.change_file_suffixes(".deleted", "").unwrap();
        assert_eq!(reader.join().unwrap(), round * 10 + 1);
        segment.delete().unwrap();
    }
}

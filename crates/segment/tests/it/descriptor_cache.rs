//! `DescriptorCache`: the `.log` descriptors of segments sharing a cache stay within its cap;
//! a closed `.log` is opened again on use (also under a new suffix), a file that may hold
//! unsynced bytes is synced before the cache closes it, and a deleted one fails naming the file.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::ops::ControlFlow;
use std::path::Path;

use seglog_fs::sim::{SimFs, Tear};
use seglog_fs::{FileSystem, RealFs};
use seglog_segment::{DescriptorCache, LogSegment, SegmentConfig};

use crate::common::{create, single};

const SEGMENTS: i64 = 12;
const CAP: usize = 4;

/// `SEGMENTS` inactive one-batch segments (offsets `10 * i`), reopened against a cache of `CAP`.
fn segments(dir: &Path, cache: &DescriptorCache) -> Vec<LogSegment> {
    for i in 0..SEGMENTS {
        let s = create(dir, 10 * i, 4096);
        s.append(10 * i, &single(10 * i)).unwrap();
        s.on_become_inactive().unwrap();
        s.close().unwrap();
    }
    (0..SEGMENTS)
        .map(|i| {
            LogSegment::open(RealFs, dir, 10 * i, SegmentConfig::default(), true, "", 0)
                .unwrap()
                .with_descriptor_cache(Some(cache))
        })
        .collect()
}

fn open_count<F: FileSystem>(segments: &[LogSegment<F>]) -> usize {
    segments.iter().filter(|s| s.log_is_open()).count()
}

/// The base offsets of the batches a `pread` walk of the whole `.log` finds.
fn batches<F: FileSystem>(segment: &LogSegment<F>) -> seglog_segment::Result<Vec<i64>> {
    let mut found = Vec::new();
    segment.scan_batches(0, |_, b| {
        found.push(b.last_offset().unwrap());
        Ok(ControlFlow::<()>::Continue(()))
    })?;
    Ok(found)
}

#[test]
fn descriptors_stay_within_the_cap_and_reopen_on_use() {
    let dir = tempfile::tempdir().unwrap();
    let cache = DescriptorCache::new(CAP);
    let segs = segments(dir.path(), &cache);
    assert!(open_count(&segs) <= CAP, "{cache:?}");
    assert_eq!(cache.open(), open_count(&segs));
    for (s, base) in segs.iter().zip((0..).step_by(10)) {
        assert_eq!(batches(s).unwrap(), vec![base]);
        assert!(s.log_is_open());
        assert!(open_count(&segs) <= CAP, "{cache:?}");
    }
    assert!(
        cache.evictions() >= (SEGMENTS as u64) * 2 - CAP as u64,
        "{cache:?}"
    );
    // The first segment was closed by the later ones; renamed meanwhile, it reopens by its new
    // name.
    assert!(!segs[0].log_is_open());
    segs[0].change_file_suffixes("", ".deleted").unwrap();
    assert_eq!(batches(&segs[0]).unwrap(), vec![0]);
    // Deleted, it fails naming the file.
    segs[1].delete().unwrap();
    let err = batches(&segs[1]).unwrap_err().to_string();
    assert!(err.contains("00000000000000000010.log"), "{err}");
}

#[test]
fn a_file_that_may_hold_unsynced_bytes_is_synced_before_the_cache_closes_it() {
    let fs = SimFs::new();
    let dir = Path::new("/p/orders-0");
    fs.create_dir_all(dir).unwrap();
    let cache = DescriptorCache::new(CAP);
    let segs: Vec<LogSegment<SimFs>> = (0..SEGMENTS)
        .map(|i| {
            let s = LogSegment::open(
                fs.clone(),
                dir,
                10 * i,
                SegmentConfig::default(),
                false,
                "",
                0,
            )
            .unwrap()
            .with_descriptor_cache(Some(&cache));
            s.append(10 * i, &single(10 * i)).unwrap();
            // Inactive, counted, and never flushed by its owner.
            s.on_become_inactive().unwrap();
            s
        })
        .collect();
    fs.sync_dir(dir).unwrap();
    assert!(!segs[0].log_is_open(), "{cache:?}");
    assert!(open_count(&segs) <= CAP, "{cache:?}");
    // The cache synced what it closed: a crash that drops every unsynced byte keeps them.
    let crashed = fs.crash(Tear::DropAll);
    for (i, seg) in (0..SEGMENTS).zip(&segs) {
        let s = LogSegment::open(
            crashed.clone(),
            dir,
            10 * i,
            SegmentConfig::default(),
            true,
            "",
            0,
        )
        .unwrap();
        let closed = !seg.log_is_open();
        assert!(
            !closed || batches(&s).unwrap() == vec![10 * i],
            "segment {i}"
        );
    }
}

#[test]
fn the_active_segment_is_never_counted_nor_closed() {
    let dir = tempfile::tempdir().unwrap();
    let cache = DescriptorCache::new(CAP);
    let segs = segments(dir.path(), &cache);
    let active = create(dir.path(), 1_000, 4096).with_descriptor_cache(Some(&cache));
    active.append(1_000, &single(1_000)).unwrap();
    active.flush().unwrap();
    for s in &segs {
        batches(s).unwrap();
    }
    assert!(active.log_is_open());
    assert_eq!(cache.open(), open_count(&segs));
    // Inactive and synced, it counts and may go.
    active.on_become_inactive().unwrap();
    active.flush().unwrap();
    for s in &segs {
        batches(s).unwrap();
    }
    assert!(!active.log_is_open(), "{cache:?}");
    assert_eq!(batches(&active).unwrap(), vec![1_000]);
}

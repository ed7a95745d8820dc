//! On `SimFs` the `.index` and `.timeindex` are files of the simulated file system, not real
//! files: a crash drops index content that was never flushed, keeps what `flush` synced, and can
//! keep a written-back (trimmed) state; nothing is created on the real disk.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

mod common;

use std::path::Path;

use seglog_mmap_index::{IndexStore, OffsetIndex, TimeIndex};
use seglog_segment::io::{FileSystem, SimFs, Tear};
use seglog_segment::{LogSegment, SegmentConfig};

const CONFIG: SegmentConfig = SegmentConfig {
    index_interval_bytes: 1,
    max_index_size: 4096,
    preallocate: false,
    initial_file_size: 0,
    roll_jitter_ms: 0,
};

fn entries(fs: &SimFs, dir: &Path) -> (usize, usize) {
    let backing = fs.index_backing();
    let index =
        OffsetIndex::open_read_only_with(&backing, dir.join("00000000000000000000.index"), 0)
            .unwrap();
    let time =
        TimeIndex::open_read_only_with(&backing, dir.join("00000000000000000000.timeindex"), 0)
            .unwrap();
    let zero_free = |r: seglog_mmap_index::VerifyReport| {
        r.problems
            .iter()
            .find_map(|p| match p {
                seglog_mmap_index::Problem::ZeroTail { first_slot, .. } => Some(*first_slot),
                _ => None,
            })
            .unwrap_or(r.entries)
    };
    (
        zero_free(index.verify().unwrap()),
        zero_free(time.verify().unwrap()),
    )
}

#[test]
fn index_files_live_in_the_simulated_file_system_and_crash_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let seg = LogSegment::open(fs.clone(), dir.path(), 0, CONFIG, false, "", 0).unwrap();
    for offset in 0..5 {
        seg.append(offset, &common::single(offset)).unwrap();
    }
    fs.sync_dir(dir.path()).unwrap();
    assert!(!dir.path().join("00000000000000000000.index").exists());
    assert!(IndexStore::exists(
        &fs,
        &dir.path().join("00000000000000000000.index")
    ));
    seg.flush().unwrap();
    let flushed = seg.index_entries().unwrap();
    assert!(flushed.0 >= 4 && flushed.1 >= 4, "{flushed:?}");
    for offset in 5..9 {
        seg.append(offset, &common::single(offset)).unwrap();
    }

    // Never flushed: the four later entries are lost; the five flushed ones survive.
    let crashed = fs.crash(Tear::DropAll);
    assert_eq!(entries(&crashed, dir.path()), flushed);

    // Trimmed on roll (written back, not synced): lost by a plain crash, kept when the kernel
    // had written the file back.
    seg.on_become_inactive().unwrap();
    let trimmed = seg.index_entries().unwrap();
    assert!(
        trimmed.0 > flushed.0 && trimmed.1 > flushed.1,
        "{trimmed:?}"
    );
    assert_eq!(entries(&fs.crash(Tear::DropAll), dir.path()), flushed);
    let written_back = fs.crash_keeping(Tear::DropAll, |p| {
        p.extension()
            .is_some_and(|e| e == "index" || e == "timeindex")
    });
    assert_eq!(entries(&written_back, dir.path()), trimmed);
    let index = dir.path().join("00000000000000000000.index");
    assert_eq!(
        written_back.live_bytes(&index).unwrap().len(),
        trimmed.0 * 8
    );

    // After a flush the trimmed state is durable.
    seg.flush().unwrap();
    let crashed = fs.crash(Tear::DropAll);
    assert_eq!(crashed.live_bytes(&index).unwrap().len(), trimmed.0 * 8);
    let reopened = LogSegment::open(crashed, dir.path(), 0, CONFIG, true, "", 0).unwrap();
    assert_eq!(reopened.index_entries().unwrap(), trimmed);
    assert_eq!(reopened.translate_offset(7, 0).unwrap().unwrap().offset, 7);
}

#[test]
fn renames_and_deletes_of_indexes_go_through_the_simulated_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let seg = LogSegment::open(fs.clone(), dir.path(), 0, CONFIG, false, "", 0).unwrap();
    for offset in 0..3 {
        seg.append(offset, &common::single(offset)).unwrap();
    }
    assert_eq!(seg.indexes_loaded(), (true, true));
    seg.change_file_suffixes("", ".deleted").unwrap();
    let renamed = dir.path().join("00000000000000000000.index.deleted");
    assert!(FileSystem::exists(&fs, &renamed));
    assert!(!FileSystem::exists(
        &fs,
        &dir.path().join("00000000000000000000.index")
    ));
    seg.delete().unwrap();
    assert!(!FileSystem::exists(&fs, &renamed));
    assert_eq!(
        fs.read_dir(dir.path()).unwrap(),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn a_closed_segment_leaves_trimmed_indexes_that_a_clean_reopen_uses() {
    let dir = tempfile::tempdir().unwrap();
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let seg = LogSegment::open(fs.clone(), dir.path(), 0, CONFIG, false, "", 0).unwrap();
    for offset in 0..3 {
        seg.append(offset, &common::single(offset)).unwrap();
    }
    seg.close().unwrap();
    let index = dir.path().join("00000000000000000000.index");
    assert_eq!(fs.live_bytes(&index).unwrap().len(), 2 * 8);
    let reopened = LogSegment::open(fs.clone(), dir.path(), 0, CONFIG, true, "", 0).unwrap();
    assert_eq!(reopened.read_next_offset().unwrap(), 3);
    assert_eq!(reopened.index_entries().unwrap().0, 2);
}

/// Regression (found by `cargo xtask crash`): closing trimmed the indexes without syncing the
/// trim, so a power loss after a clean shutdown left the preallocated zero tail in an index that
/// the next (clean) load trusts.
#[test]
fn the_trim_on_close_survives_a_power_loss() {
    let dir = tempfile::tempdir().unwrap();
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let seg = LogSegment::open(fs.clone(), dir.path(), 0, CONFIG, false, "", 0).unwrap();
    for offset in 0..3 {
        seg.append(offset, &common::single(offset)).unwrap();
    }
    seg.flush().unwrap();
    fs.sync_dir(dir.path()).unwrap();
    let entries = seg.index_entries().unwrap();
    seg.close().unwrap();
    let crashed = fs.crash(Tear::DropAll);
    let index = dir.path().join("00000000000000000000.index");
    let time_index = dir.path().join("00000000000000000000.timeindex");
    assert_eq!(crashed.live_bytes(&index).unwrap().len(), entries.0 * 8);
    assert_eq!(
        crashed.live_bytes(&time_index).unwrap().len(),
        entries.1 * 12
    );
}

/// Regression (found by `cargo xtask crash`): `close` synced an index only when it had to trim
/// it. A recovery rebuilds and trims the indexes without syncing them, so closing the recovered
/// (active) segment right after found nothing to trim and synced nothing: a power loss after
/// the clean shutdown left indexes whose entries were never written, which the next, clean load
/// trusts (a `.timeindex` entry of zeros).
#[test]
fn closing_a_recovered_segment_makes_its_rebuilt_indexes_durable() {
    let dir = tempfile::tempdir().unwrap();
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let seg = LogSegment::open(fs.clone(), dir.path(), 0, CONFIG, false, "", 0).unwrap();
    for offset in 0..3 {
        seg.append(offset, &common::single(offset)).unwrap();
    }
    seg.flush_data().unwrap();
    drop(seg);
    fs.sync_dir(dir.path()).unwrap();

    let reopened = LogSegment::open(fs.clone(), dir.path(), 0, CONFIG, true, "", 0).unwrap();
    reopened.recover().unwrap();
    let rebuilt = reopened.index_entries().unwrap();
    assert!(rebuilt.0 >= 2 && rebuilt.1 >= 2, "{rebuilt:?}");
    reopened.close().unwrap();

    let crashed = fs.crash(Tear::DropAll);
    for name in [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
    ] {
        let path = dir.path().join(name);
        assert_eq!(
            crashed.live_bytes(&path),
            fs.live_bytes(&path),
            "{name} after a power loss"
        );
    }
    assert_eq!(entries(&crashed, dir.path()), rebuilt);
}

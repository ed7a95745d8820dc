//! On `SimFs` the `.index` and `.timeindex` are files of the simulated file system, not real
//! files: a crash drops index content that was never flushed, keeps what `flush` synced, and can
//! keep a written-back (trimmed) state; nothing is created on the real disk.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::path::Path;

use seglog_fs::FileSystem;
use seglog_fs::IndexStore;
use seglog_fs::sim::{SimFs, Tear};
use seglog_mmap_index::{OffsetIndex, TimeIndex};
use seglog_segment::{LogSegment, SegmentConfig};

fn config() -> SegmentConfig {
    SegmentConfig::default()
        .with_index_interval_bytes(1)
        .with_max_index_size(4096)
        .with_preallocate(false)
        .with_initial_file_size(0)
        .with_roll_jitter_ms(0)
}

fn entries(fs: &SimFs, dir: &Path) -> (usize, usize) {
    let backing = fs.index_backing();
    let index = OffsetIndex::options(dir.join("00000000000000000000.index"), 0)
        .read_only()
        .backing(backing.clone())
        .open()
        .unwrap();
    let time = TimeIndex::options(dir.join("00000000000000000000.timeindex"), 0)
        .read_only()
        .backing(backing.clone())
        .open()
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

/// A new segment at base 0 in a fresh directory of a fresh `SimFs`, holding one single-record
/// batch at each offset in `offsets` (nothing synced).
fn segment_with(offsets: std::ops::Range<i64>) -> (tempfile::TempDir, SimFs, LogSegment<SimFs>) {
    let dir = tempfile::tempdir().unwrap();
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let seg = LogSegment::open(fs.clone(), dir.path(), 0, config(), false, "", 0).unwrap();
    for offset in offsets {
        seg.append(offset, &common::single(offset)).unwrap();
    }
    (dir, fs, seg)
}

#[test]
fn index_files_live_in_the_simulated_file_system_and_crash_with_it() {
    let (dir, fs, seg) = segment_with(0..5);
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
    let reopened = LogSegment::open(crashed, dir.path(), 0, config(), true, "", 0).unwrap();
    assert_eq!(reopened.index_entries().unwrap(), trimmed);
    assert_eq!(reopened.translate_offset(7, 0).unwrap().unwrap().offset, 7);
}

#[test]
fn renames_and_deletes_of_indexes_go_through_the_simulated_file_system() {
    let (dir, fs, seg) = segment_with(0..3);
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
    let (dir, fs, seg) = segment_with(0..3);
    seg.close().unwrap();
    let index = dir.path().join("00000000000000000000.index");
    assert_eq!(fs.live_bytes(&index).unwrap().len(), 2 * 8);
    let reopened = LogSegment::open(fs.clone(), dir.path(), 0, config(), true, "", 0).unwrap();
    assert_eq!(reopened.read_next_offset().unwrap(), 3);
    assert_eq!(reopened.index_entries().unwrap().0, 2);
}

/// Regression (found by `cargo xtask crash`): closing trimmed the indexes without syncing the
/// trim, so a power loss after a clean shutdown left the preallocated zero tail in an index that
/// the next (clean) load trusts.
#[test]
fn the_trim_on_close_survives_a_power_loss() {
    let (dir, fs, seg) = segment_with(0..3);
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
    let (dir, fs, seg) = segment_with(0..3);
    seg.flush_data().unwrap();
    drop(seg);
    fs.sync_dir(dir.path()).unwrap();

    let reopened = LogSegment::open(fs.clone(), dir.path(), 0, config(), true, "", 0).unwrap();
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

/// The write-back of a stored index writes only the pages that changed, each on its own, inside
/// the file's length; and a crash in page mode keeps the synced or the live length and, for each
/// page, the synced or the live bytes, never anything else (no byte tear, no other length).
#[test]
fn index_write_back_is_page_writes_and_a_crash_tears_it_by_page() {
    use seglog_fs::WRITE_BACK_PAGE_SIZE as PAGE;
    use seglog_fs::sim::{CrashPoint, Pages};

    let fs = SimFs::new();
    let dir = Path::new("/sim/idx");
    fs.create_dir_all(dir).unwrap();
    let path = dir.join("00000000000000000000.index");
    IndexStore::create(&fs, &path, 3 * PAGE as u64).unwrap();
    let synced: Vec<u8> = (0..3 * PAGE)
        .map(|i| u8::try_from(i % 251).unwrap())
        .collect();
    IndexStore::write_pages(&fs, &path, &synced).unwrap();
    IndexStore::sync(&fs, &path).unwrap();
    fs.sync_dir(dir).unwrap();

    // Pages 0 and 2 change; page 1 does not: two writes, and the length is unchanged even when
    // the content handed over is longer than the file.
    let mut live = synced.clone();
    live[10] ^= 0xFF;
    live[2 * PAGE + 3] ^= 0xFF;
    live[2 * PAGE + 7] ^= 0xFF;
    let writes = fs.stats().writes;
    let mut longer = live.clone();
    longer.extend_from_slice(&[9; 100]);
    IndexStore::write_pages(&fs, &path, &longer).unwrap();
    assert_eq!(fs.stats().writes - writes, 2);
    assert_eq!(fs.live_bytes(&path).unwrap(), live);
    // Then a trim into the last page, not synced.
    IndexStore::set_len(&fs, &path, (2 * PAGE + 8) as u64).unwrap();
    let trimmed = fs.live_bytes(&path).unwrap();

    let page = |bytes: &[u8], i: usize, len: usize| -> Vec<u8> {
        let mut p = bytes
            .get(i * PAGE..((i + 1) * PAGE).min(bytes.len()))
            .unwrap_or_default()
            .to_vec();
        p.resize(((i + 1) * PAGE).min(len) - i * PAGE, 0);
        p
    };
    let mut lengths = std::collections::BTreeSet::new();
    let mut first_page = std::collections::BTreeSet::new();
    for seed in 0..64 {
        let image = fs.crash_at(CrashPoint {
            // The last write is page 2's: torn after 5 bytes it would keep byte 3 and lose
            // byte 7, which no page write-back leaves.
            tear: Tear::KeepPrefix(5),
            written_back: None,
            pages: Some(Pages {
                files: |p| p.extension().is_some_and(|e| e == "index"),
                seed,
            }),
        });
        let bytes = image.live_bytes(&path).unwrap();
        assert!(
            bytes.len() == synced.len() || bytes.len() == trimmed.len(),
            "{}",
            bytes.len()
        );
        lengths.insert(bytes.len());
        for i in 0..bytes.len().div_ceil(PAGE) {
            let got = page(&bytes, i, bytes.len());
            assert!(
                got == page(&synced, i, bytes.len()) || got == page(&trimmed, i, bytes.len()),
                "seed {seed}: page {i} is neither the synced nor the live one"
            );
        }
        first_page.insert(bytes[10]);
    }
    assert_eq!(lengths.len(), 2, "both lengths occur");
    assert_eq!(
        first_page.len(),
        2,
        "page 0 is kept in some images and lost in others"
    );
}

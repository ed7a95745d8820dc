//! Lazy open (Kafka's `LazyIndex`, KAFKA-7283 / KAFKA-9373): constructing 10,000 lazy index pairs
//! creates no file and no mapping; rename, delete and close work without opening; first use
//! creates and maps. The tests take a common lock, because `live_mappings` is process-wide.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::sync::{Mutex, MutexGuard};

use seglog_mmap_index::{
    LazyOffsetIndex, LazyTimeIndex, OffsetIndex, OffsetPosition, TimeIndex, live_mappings,
};

/// Serializes the tests of this file (each integration test file is its own process).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn lazy_indexes_touch_nothing_until_used() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // 10,000 existing pairs on disk, as after a clean shutdown.
    for i in 0..10_000_i64 {
        let name = format!("{:020}", i * 100);
        std::fs::write(
            dir.path().join(format!("{name}.index")),
            [0, 0, 0, 1, 0, 0, 0, 9],
        )
        .unwrap();
        std::fs::write(dir.path().join(format!("{name}.timeindex")), []).unwrap();
    }
    let before = live_mappings();
    let started = std::time::Instant::now();
    let pairs: Vec<(LazyOffsetIndex, LazyTimeIndex)> = (0..10_000_i64)
        .map(|i| {
            let name = format!("{:020}", i * 100);
            (
                OffsetIndex::options(dir.path().join(format!("{name}.index")), i * 100)
                    .max_index_size(10 << 20)
                    .lazy(),
                TimeIndex::options(dir.path().join(format!("{name}.timeindex")), i * 100)
                    .max_index_size(10 << 20)
                    .lazy(),
            )
        })
        .collect();
    let elapsed = started.elapsed();
    assert_eq!(live_mappings(), before, "no mapping may be created");
    assert!(pairs.iter().all(|(o, t)| !o.is_loaded() && !t.is_loaded()));
    // Generous for a debug build on a shared machine; the bench measures the release build.
    assert!(elapsed.as_millis() < 500, "{elapsed:?}");

    // First use maps exactly one file and reads what is on disk.
    let (first, _) = &pairs[3];
    assert_eq!(
        first.get().unwrap().lookup(301).unwrap(),
        OffsetPosition {
            offset: 301,
            position: 9
        }
    );
    assert_eq!(live_mappings(), before + 1);
    drop(pairs);
    assert_eq!(live_mappings(), before);
}

#[test]
fn rename_delete_and_close_do_not_open() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.index");
    let mut never = OffsetIndex::options(&path, 0).max_index_size(800).lazy();
    // Renaming a file that does not exist is tolerated, and creates nothing.
    never
        .rename(dir.path().join("00000000000000000000.index.deleted"))
        .unwrap();
    assert!(!never.is_loaded());
    assert!(!never.delete().unwrap());
    never.close().unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // An existing file is renamed and deleted without being opened.
    std::fs::write(&path, [0_u8; 8]).unwrap();
    let mut lazy = TimeIndex::options(&path, 0).max_index_size(1200).lazy();
    let swapped = dir.path().join("00000000000000000000.timeindex.swap");
    lazy.rename(&swapped).unwrap();
    assert!(!lazy.is_loaded() && swapped.exists() && !path.exists());
    assert_eq!(lazy.path(), swapped);
    assert!(lazy.delete().unwrap());
    assert!(!swapped.exists() && !lazy.is_loaded());
}

#[test]
fn first_use_creates_and_preallocates() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000042.index");
    let mut lazy = OffsetIndex::options(&path, 42)
        .max_index_size(8 * 100)
        .lazy();
    assert!(!path.exists());
    lazy.get_mut().unwrap().append(50, 7).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 800);
    let reader = lazy.get().unwrap().reader();
    // Rename of an opened index goes through the index; readers report the new name.
    let renamed = dir.path().join("00000000000000000042.index.deleted");
    lazy.rename(&renamed).unwrap();
    assert_eq!(reader.path(), renamed);
    lazy.close().unwrap();
    assert_eq!(std::fs::metadata(&renamed).unwrap().len(), 8);
    // Reopening from disk after close.
    let idx = OffsetIndex::options(&renamed, 42).open().unwrap();
    assert_eq!(idx.last_offset(), 50);
}

#[test]
fn concurrent_first_use_opens_once() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let lazy = std::sync::Arc::new(
        TimeIndex::options(dir.path().join("c.timeindex"), 0)
            .max_index_size(1200)
            .lazy(),
    );
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let lazy = std::sync::Arc::clone(&lazy);
            std::thread::spawn(move || lazy.get().unwrap().max_entries())
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), 100);
    }
}

#[test]
fn update_parent_dir_follows_a_directory_rename() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (
        dir.path().join("topic-0"),
        dir.path().join("topic-0.abc-delete"),
    );
    std::fs::create_dir(&old).unwrap();
    let mut lazy = TimeIndex::options(old.join("00000000000000000000.timeindex"), 0)
        .max_index_size(1200)
        .lazy();
    let mut opened = OffsetIndex::options(old.join("00000000000000000000.index"), 0)
        .max_index_size(800)
        .lazy();
    opened.get_mut().unwrap().append(1, 1).unwrap();
    std::fs::rename(&old, &new).unwrap();
    lazy.update_parent_dir(&new);
    opened.update_parent_dir(&new);
    assert_eq!(lazy.path(), new.join("00000000000000000000.timeindex"));
    assert_eq!(opened.path(), new.join("00000000000000000000.index"));
    // The opened index resizes through its new name.
    opened.close().unwrap();
    assert_eq!(
        std::fs::metadata(new.join("00000000000000000000.index"))
            .unwrap()
            .len(),
        8
    );
    assert!(!lazy.is_loaded());
}

//! Read-only open (Kafka's `writable = false`, used by `DumpLogSegments`): works on a file the
//! process cannot write, reads like a normal open, refuses every modification with `ReadOnly`
//! (never faulting on the `PROT_READ` mapping), and leaves the file's bytes untouched.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::os::unix::fs::PermissionsExt;

use seglog_mmap_index::{Error, OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset};

#[test]
fn read_only_offset_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.index");
    let mut idx = OffsetIndex::options(&path, 10)
        .max_index_size(80)
        .open()
        .unwrap();
    idx.append(12, 100).unwrap();
    idx.append(15, 200).unwrap();
    let untrimmed = std::fs::read(&path).unwrap();
    drop(idx);
    // Make the file unwritable: a read-write open would fail (unless running as root, which
    // ignores permission bits; the read-only open must work either way).
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();

    let mut ro = OffsetIndex::options(&path, 10).read_only().open().unwrap();
    assert!(ro.is_read_only());
    assert_eq!(
        ro.entries(),
        10,
        "an untrimmed file: every slot counts, as in Kafka"
    );
    assert_eq!(
        ro.entry(0).unwrap(),
        OffsetPosition {
            offset: 12,
            position: 100
        }
    );
    assert_eq!(
        ro.reader().entry(1).unwrap(),
        OffsetPosition {
            offset: 15,
            position: 200
        }
    );
    // The zero tail captures lookups past the real entries, as in Kafka (see crash_image_reopen).
    assert_eq!(
        ro.lookup(14).unwrap(),
        OffsetPosition {
            offset: 10,
            position: 0
        }
    );
    assert!(ro.verify().unwrap().has_zero_tail());
    ro.sanity_check().unwrap();
    for result in [
        ro.append(16, 300),
        ro.truncate_to(12),
        ro.truncate(),
        ro.reset(),
        ro.resize(160).map(|_| ()),
        ro.trim_to_valid_size().map(|_| ()),
    ] {
        assert!(matches!(result, Err(Error::ReadOnly { .. })), "{result:?}");
    }
    ro.flush().unwrap();
    ro.close().unwrap();
    assert!(ro.is_closed());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        untrimmed,
        "close of a read-only index trims nothing"
    );
}

#[test]
fn read_only_time_index_and_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.timeindex");
    let mut idx = TimeIndex::options(&path, 0)
        .max_index_size(120)
        .open()
        .unwrap();
    idx.maybe_append(100, 3, false).unwrap();
    idx.close().unwrap();
    let mut ro = TimeIndex::options(&path, 0).read_only().open().unwrap();
    assert_eq!(
        ro.lookup(150).unwrap(),
        TimestampOffset {
            timestamp: 100,
            offset: 3
        }
    );
    assert!(matches!(
        ro.maybe_append(200, 4, true),
        Err(Error::ReadOnly { .. })
    ));
    assert!(matches!(
        ro.maybe_append(200, 4, false),
        Err(Error::ReadOnly { .. })
    ));
    assert_eq!(ro.entries(), 1);
    let err = TimeIndex::options(dir.path().join("missing.timeindex"), 0)
        .read_only()
        .open()
        .unwrap_err();
    assert!(
        matches!(&err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    );
    assert!(!dir.path().join("missing.timeindex").exists());
}

/// A read-only opener takes no lock, so a writer in another process may cut the file under it
/// (a trim to the valid entries, a truncation in recovery) or delete it. The read-only index is
/// a copy and reads on; through a shared mapping, the first touch of a page past the new end of
/// file was a `SIGBUS` that killed the process.
#[test]
fn read_only_index_reads_on_after_the_file_is_cut_or_deleted_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.index");
    let mut idx = OffsetIndex::options(&path, 0)
        .max_index_size(1 << 20)
        .open()
        .unwrap();
    for i in 0..4_000_u32 {
        idx.append(i64::from(i) * 10, i * 100).unwrap();
    }
    idx.close().unwrap();
    let ro = OffsetIndex::options(&path, 0).read_only().open().unwrap();
    let time_path = dir.path().join("00000000000000000000.timeindex");
    let mut time = TimeIndex::options(&time_path, 0)
        .max_index_size(1 << 20)
        .open()
        .unwrap();
    for i in 0..4_000_i64 {
        time.maybe_append(1_000 + i, i * 10, false).unwrap();
    }
    time.close().unwrap();
    let time_ro = TimeIndex::options(&time_path, 0)
        .read_only()
        .open()
        .unwrap();
    // Another process's trim: the pages past the first are gone from the file.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(8)
        .unwrap();
    std::fs::remove_file(&time_path).unwrap();
    assert_eq!(ro.entries(), 4_000);
    assert_eq!(
        ro.lookup(39_995).unwrap(),
        OffsetPosition {
            offset: 39_990,
            position: 399_900
        }
    );
    assert!(ro.verify().unwrap().is_clean());
    ro.sanity_check().unwrap();
    assert_eq!(time_ro.lookup(4_999).unwrap().offset, 39_990);
    assert!(time_ro.verify().unwrap().is_clean());
    // Opened again, it sees the file as it is now.
    let again = OffsetIndex::options(&path, 0).read_only().open().unwrap();
    assert_eq!(again.entries(), 1);
}

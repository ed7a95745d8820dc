//! A new index is preallocated sparse, as Kafka's is, and costs no disk; appends give it disk
//! blocks a chunk (64 KiB) ahead of the entries, never the whole preallocated size.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]
use std::os::unix::fs::MetadataExt as _;

use seglog_mmap_index::{OffsetIndex, TimeIndex};

fn allocated(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn a_new_index_holds_no_disk_and_appends_allocate_a_chunk_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.index");
    let mut index = OffsetIndex::options(&path, 0)
        .max_index_size(10 << 20)
        .open()
        .unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 10 << 20);
    assert_eq!(allocated(&path), 0, "preallocation is sparse");
    index.append(1, 0).unwrap();
    let one = allocated(&path);
    assert!(
        one > 0 && one <= 64 * 1024,
        "one entry: {one} bytes on disk"
    );
    for i in 2..20_000 {
        index.append(i, u32::try_from(i).unwrap() * 100).unwrap();
    }
    // 20,000 entries are 160,000 bytes: three chunks of 64 KiB.
    let many = allocated(&path);
    assert!(
        (160_000..=3 * 64 * 1024 + 4096).contains(&many),
        "{many} bytes on disk"
    );
    assert_eq!(index.lookup(12_345).unwrap().offset, 12_345);
}

#[test]
fn a_time_index_reserves_before_it_appends_and_reopens_with_its_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.timeindex");
    let mut index = TimeIndex::options(&path, 0)
        .max_index_size(10 << 20)
        .open()
        .unwrap();
    index.reserve(10_000).unwrap();
    let reserved = allocated(&path);
    assert!(
        (120_000..=2 * 64 * 1024 + 4096).contains(&reserved),
        "{reserved}"
    );
    for i in 0..10_000 {
        index.maybe_append(1_000 + i, i, false).unwrap();
    }
    assert_eq!(
        allocated(&path),
        reserved,
        "the appends needed no more blocks"
    );
    // Unmapped without trimming, as a crash leaves it: the sparse tail reads as zeros.
    index.unmap();
    drop(index);
    let read_only = TimeIndex::options(&path, 0).read_only().open().unwrap();
    assert_eq!(read_only.entries(), (10 << 20) / 12);
    assert_eq!(read_only.entry(9_999).unwrap().timestamp, 10_999);
    assert_eq!(
        read_only.entry(read_only.entries() - 1).unwrap().timestamp,
        0
    );
    let report = read_only.verify().unwrap();
    assert!(report.has_zero_tail(), "{report:?}");
    assert_eq!(
        allocated(&path),
        reserved,
        "reading the tail allocated nothing"
    );
}

#[test]
fn on_a_full_tmpfs_an_append_is_an_error_naming_the_file_and_a_read_only_open_reads_the_hole() {
    use std::io::Write as _;
    use std::process::Command;
    struct Unmount<'a>(&'a std::path::Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(mnt)
        .output();
    match mounted {
        Ok(out) if out.status.success() => {}
        other => {
            // Visible even when the harness captures output: the real stderr.
            let _ = writeln!(
                std::io::stderr().lock(),
                "full tmpfs index test: SKIPPED: mount refused: {other:?}"
            );
            return;
        }
    }
    let _unmount = Unmount(mnt);
    let path = mnt.join("00000000000000000000.index");
    let mut index = OffsetIndex::options(&path, 0)
        .max_index_size(10 << 20)
        .open()
        .unwrap();
    index.append(1, 0).unwrap();
    // Fill the rest of the file system.
    let filler = std::fs::File::create(mnt.join("filler")).unwrap();
    let mut filler = std::io::BufWriter::new(filler);
    while filler
        .write_all(&[1; 4096])
        .and_then(|()| filler.flush())
        .is_ok()
    {}
    let mut failed = None;
    for i in 2..100_000 {
        if let Err(e) = index.append(i, u32::try_from(i).unwrap()) {
            failed = Some((i, e.to_string()));
            break;
        }
    }
    let (at, message) = failed.expect("the disk filled");
    assert!(
        message.contains("No space left") && message.contains(".index"),
        "{message}"
    );
    // Every entry before the failure is there; the one that failed is not.
    assert_eq!(index.entries(), usize::try_from(at - 1).unwrap());
    assert_eq!(index.lookup(at - 1).unwrap().offset, at - 1);
    index.unmap();
    drop(index);
    // A read-only open of the untrimmed file reads its last slot (a hole) without faulting.
    let read_only = OffsetIndex::options(&path, 0).read_only().open().unwrap();
    assert_eq!(read_only.entry(read_only.entries() - 1).unwrap().offset, 0);
    assert!(read_only.verify().unwrap().has_zero_tail());
}

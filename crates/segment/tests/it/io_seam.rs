//! The I/O seam: `SimFs` crash images keep exactly what was synced, and `RealFs` copies ranges to files
//! and sockets without passing them through user space.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::io::Read;
use std::os::fd::AsFd;
use std::path::Path;

use seglog_fs::sim::{SimFs, Tear};
use seglog_fs::{File, FileSystem, OpenMode, RealFs};

fn sim_with_dir() -> SimFs {
    let fs = SimFs::new();
    fs.create_dir_all(Path::new("/data/t-0")).unwrap();
    fs
}

#[test]
fn unsynced_writes_are_lost_and_synced_ones_kept() {
    let fs = sim_with_dir();
    let path = Path::new("/data/t-0/a.log");
    let f = fs.open(path, OpenMode::CreateNew).unwrap();
    f.write_all_at(b"durable", 0).unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(Path::new("/data/t-0")).unwrap();
    f.write_all_at(b"-lost", 7).unwrap();
    assert_eq!(fs.live_bytes(path).unwrap(), b"durable-lost");

    let after = fs.crash(Tear::DropAll);
    assert_eq!(after.live_bytes(path).unwrap(), b"durable");
}

#[test]
fn the_last_write_can_tear_at_any_byte() {
    let fs = sim_with_dir();
    let path = Path::new("/data/t-0/a.log");
    let f = fs.open(path, OpenMode::CreateNew).unwrap();
    f.write_all_at(b"base", 0).unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(Path::new("/data/t-0")).unwrap();
    f.write_all_at(b"0123456789", 4).unwrap();
    for keep in 0..=10 {
        let after = fs.crash(Tear::KeepPrefix(keep));
        let mut expected = b"base".to_vec();
        expected.extend_from_slice(&b"0123456789"[..keep]);
        assert_eq!(after.live_bytes(path).unwrap(), expected, "keep {keep}");
    }
}

#[test]
fn a_created_file_needs_a_directory_sync_to_survive() {
    let fs = sim_with_dir();
    let path = Path::new("/data/t-0/new.log");
    let f = fs.open(path, OpenMode::CreateNew).unwrap();
    f.write_all_at(b"x", 0).unwrap();
    f.sync_data().unwrap();
    assert!(fs.crash(Tear::DropAll).live_bytes(path).is_none());
    fs.sync_dir(Path::new("/data/t-0")).unwrap();
    assert_eq!(fs.crash(Tear::DropAll).live_bytes(path).unwrap(), b"x");
}

#[test]
fn renames_and_removals_are_durable_only_after_a_directory_sync() {
    let fs = sim_with_dir();
    let dir = Path::new("/data/t-0");
    let a = dir.join("a.log");
    let b = dir.join("a.log.deleted");
    let f = fs.open(&a, OpenMode::CreateNew).unwrap();
    f.write_all_at(b"abc", 0).unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(dir).unwrap();
    fs.rename(&a, &b).unwrap();
    let crashed = fs.crash(Tear::DropAll);
    assert!(crashed.exists(&a) && !crashed.exists(&b));
    fs.sync_dir(dir).unwrap();
    let crashed = fs.crash(Tear::DropAll);
    assert!(!crashed.exists(&a) && crashed.exists(&b));
    fs.remove_file(&b).unwrap();
    assert!(fs.crash(Tear::DropAll).exists(&b));
    fs.sync_dir(dir).unwrap();
    assert!(!fs.crash(Tear::DropAll).exists(&b));
    // The handle outlives its name, as on Unix.
    let mut buf = [0; 3];
    f.read_exact_at(&mut buf, 0).unwrap();
    assert_eq!(&buf, b"abc");
}

#[test]
fn out_of_space_writes_what_fits_then_fails_with_enospc() {
    let fs = sim_with_dir();
    let f = fs
        .open(Path::new("/data/t-0/a.log"), OpenMode::CreateNew)
        .unwrap();
    fs.set_space_limit(Some(10));
    f.write_all_at(b"12345678", 0).unwrap();
    let err = f.write_all_at(b"abcdef", 8).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(28));
    assert_eq!(f.len().unwrap(), 10);
    assert!(f.set_len(11).is_err());
    fs.set_space_limit(None);
    f.write_all_at(b"cdef", 10).unwrap();
    assert_eq!(f.len().unwrap(), 14);
}

#[test]
fn too_many_open_files_fails_with_emfile() {
    let fs = sim_with_dir();
    fs.set_open_limit(Some(1));
    let first = fs
        .open(Path::new("/data/t-0/a"), OpenMode::CreateNew)
        .unwrap();
    let err = fs
        .open(Path::new("/data/t-0/b"), OpenMode::CreateNew)
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(24));
    drop(first);
    fs.open(Path::new("/data/t-0/b"), OpenMode::CreateNew)
        .unwrap();
}

#[test]
fn open_modes_follow_their_contract() {
    let fs = sim_with_dir();
    let p = Path::new("/data/t-0/a");
    assert!(fs.open(p, OpenMode::Existing).is_err());
    assert!(fs.open(Path::new("/nodir/a"), OpenMode::CreateNew).is_err());
    fs.open(p, OpenMode::CreateNew).unwrap();
    assert!(fs.open(p, OpenMode::CreateNew).is_err());
    let ro = fs.open(p, OpenMode::ReadOnly).unwrap();
    assert!(ro.write_all_at(b"x", 0).is_err());
    assert_eq!(
        fs.read_dir(Path::new("/data/t-0")).unwrap(),
        vec![p.to_path_buf()]
    );
}

#[test]
fn real_files_copy_ranges_to_files_and_sockets() {
    let dir = tempfile::tempdir().unwrap();
    let fs = RealFs;
    let src_path = dir.path().join("00000000000000000000.log");
    let src = fs.open(&src_path, OpenMode::CreateNew).unwrap();
    let data: Vec<u8> = (0..200_000_u32).map(|i| (i % 251) as u8).collect();
    src.write_all_at(&data, 0).unwrap();

    // File to file: sendfile.
    let dst_path = dir.path().join("copy");
    let dst = std::fs::File::create(&dst_path).unwrap();
    let copied = src.copy_range_to(1000, 150_000, dst.as_fd()).unwrap();
    assert_eq!(copied, 150_000);
    assert_eq!(std::fs::read(&dst_path).unwrap(), &data[1000..151_000]);

    // File to socket: sendfile. A range past the end is cut at the end of the file.
    let (mut rx, tx) = std::os::unix::net::UnixStream::pair().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        rx.read_to_end(&mut got).unwrap();
        got
    });
    let copied = src.copy_range_to(190_000, 50_000, tx.as_fd()).unwrap();
    drop(tx);
    assert_eq!(copied, 10_000);
    assert_eq!(reader.join().unwrap(), &data[190_000..]);
}

/// `sendfile` refuses an output opened with `O_APPEND` (EINVAL): the copy falls back to a buffer
/// and still appends exactly the range, cut at the end of the file.
#[test]
fn real_files_copy_to_an_append_only_output_through_a_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let src = RealFs
        .open(
            &dir.path().join("00000000000000000000.log"),
            OpenMode::CreateNew,
        )
        .unwrap();
    let data: Vec<u8> = (0..100_000_u32).map(|i| (i % 251) as u8).collect();
    src.write_all_at(&data, 0).unwrap();
    let out_path = dir.path().join("appended");
    std::fs::write(&out_path, b"head").unwrap();
    let out = std::fs::OpenOptions::new()
        .append(true)
        .open(&out_path)
        .unwrap();
    assert_eq!(
        src.copy_range_to(90_000, 50_000, out.as_fd()).unwrap(),
        10_000
    );
    let got = std::fs::read(&out_path).unwrap();
    assert_eq!(&got[..4], b"head");
    assert_eq!(&got[4..], &data[90_000..]);
}

#[test]
fn sim_files_copy_ranges_through_a_buffer() {
    let fs = sim_with_dir();
    let f = fs
        .open(Path::new("/data/t-0/a"), OpenMode::CreateNew)
        .unwrap();
    f.write_all_at(b"hello world", 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out");
    let out = std::fs::File::create(&out_path).unwrap();
    assert_eq!(f.copy_range_to(6, 100, out.as_fd()).unwrap(), 5);
    assert_eq!(std::fs::read(&out_path).unwrap(), b"world");
}

#[test]
fn locks_are_exclusive_until_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let lock_path = dir.path().join(".lock");
    let held = RealFs.try_lock(&lock_path).unwrap();
    let err = RealFs.try_lock(&lock_path).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
    drop(held);
    let _again = RealFs.try_lock(&lock_path).unwrap();

    let fs = sim_with_dir();
    let p = Path::new("/data/.lock");
    let held = fs.try_lock(p).unwrap();
    assert_eq!(
        fs.try_lock(p).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
    drop(held);
    fs.try_lock(p).unwrap();
}

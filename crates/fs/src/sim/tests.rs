//! The directory model: renames and removals of directories, live and durable.

use std::io;
use std::path::{Path, PathBuf};

use super::{SimFs, Tear};
use crate::{File, FileSystem, OpenMode};

/// `/d/p` holding `a` and `b`, every name and byte durable.
fn partition() -> SimFs {
    let fs = SimFs::new();
    fs.create_dir_all(Path::new("/d/p")).unwrap();
    for (name, bytes) in [("a", b"aaa"), ("b", b"bbb")] {
        let file = fs
            .open(&Path::new("/d/p").join(name), OpenMode::CreateNew)
            .unwrap();
        file.write_all_at(bytes, 0).unwrap();
        file.sync_data().unwrap();
    }
    fs.sync_dir(Path::new("/d/p")).unwrap();
    fs
}

fn list(fs: &SimFs, dir: &str) -> Vec<PathBuf> {
    fs.read_dir(Path::new(dir)).unwrap_or_default()
}

fn paths(names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(PathBuf::from).collect()
}

#[test]
fn a_renamed_directory_moves_with_its_files() {
    let fs = partition();
    fs.rename(Path::new("/d/p"), Path::new("/d/q")).unwrap();
    assert!(!fs.exists(Path::new("/d/p")));
    assert!(fs.is_dir(Path::new("/d/q")));
    assert_eq!(list(&fs, "/d/q"), paths(&["/d/q/a", "/d/q/b"]));
    assert_eq!(fs.live_bytes(Path::new("/d/q/a")).unwrap(), b"aaa");
}

#[test]
fn a_crash_before_the_parent_sync_brings_the_old_name_back_with_its_files() {
    let fs = partition();
    fs.rename(Path::new("/d/p"), Path::new("/d/q")).unwrap();
    let image = fs.crash(Tear::DropAll);
    assert_eq!(list(&image, "/d"), paths(&["/d/p"]));
    assert_eq!(list(&image, "/d/p"), paths(&["/d/p/a", "/d/p/b"]));
    assert_eq!(image.live_bytes(Path::new("/d/p/b")).unwrap(), b"bbb");
}

#[test]
fn after_the_parent_sync_the_new_name_survives_with_its_files() {
    let fs = partition();
    fs.rename(Path::new("/d/p"), Path::new("/d/q")).unwrap();
    fs.sync_dir(Path::new("/d")).unwrap();
    let image = fs.crash(Tear::DropAll);
    assert_eq!(list(&image, "/d"), paths(&["/d/q"]));
    assert_eq!(list(&image, "/d/q"), paths(&["/d/q/a", "/d/q/b"]));
    assert_eq!(image.live_bytes(Path::new("/d/q/a")).unwrap(), b"aaa");
    // The image is a file system of its own: its names are durable, and syncs work on them.
    image.remove_file(Path::new("/d/q/a")).unwrap();
    image.sync_dir(Path::new("/d/q")).unwrap();
    assert_eq!(
        list(&image.crash(Tear::DropAll), "/d/q"),
        paths(&["/d/q/b"])
    );
}

#[test]
fn entries_synced_under_the_new_name_belong_to_the_directory_under_either_name() {
    let fs = partition();
    fs.rename(Path::new("/d/p"), Path::new("/d/q")).unwrap();
    fs.remove_file(Path::new("/d/q/a")).unwrap();
    drop(fs.open(Path::new("/d/q/c"), OpenMode::CreateNew).unwrap());
    fs.sync_dir(Path::new("/d/q")).unwrap();
    // The parent was not synced: the old name, with the entries the directory's sync made durable.
    let image = fs.crash(Tear::DropAll);
    assert_eq!(list(&image, "/d/p"), paths(&["/d/p/b", "/d/p/c"]));
}

#[test]
fn unsynced_entries_of_a_renamed_directory_are_lost_either_way() {
    let fs = partition();
    drop(fs.open(Path::new("/d/p/c"), OpenMode::CreateNew).unwrap());
    fs.rename(Path::new("/d/p"), Path::new("/d/q")).unwrap();
    fs.sync_dir(Path::new("/d")).unwrap();
    let image = fs.crash(Tear::DropAll);
    assert_eq!(list(&image, "/d/q"), paths(&["/d/q/a", "/d/q/b"]));
}

#[test]
fn open_handles_keep_working_across_a_directory_rename() {
    let fs = partition();
    let file = fs.open(Path::new("/d/p/a"), OpenMode::Existing).unwrap();
    fs.rename(Path::new("/d/p"), Path::new("/d/q")).unwrap();
    file.write_all_at(b"AAAA", 0).unwrap();
    assert_eq!(fs.live_bytes(Path::new("/d/q/a")).unwrap(), b"AAAA");
}

#[test]
fn remove_dir_refuses_a_directory_that_holds_anything() {
    let fs = partition();
    let err = fs.remove_dir(Path::new("/d/p")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::DirectoryNotEmpty);
    assert!(fs.is_dir(Path::new("/d/p")));
    let err = fs.remove_dir(Path::new("/d/p/a")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotADirectory);
    let err = fs.remove_dir(Path::new("/d/nothing")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    let err = fs.remove_file(Path::new("/d/p")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
}

#[test]
fn a_removed_directory_is_gone_once_its_parent_is_synced() {
    let fs = partition();
    fs.remove_file(Path::new("/d/p/a")).unwrap();
    fs.remove_file(Path::new("/d/p/b")).unwrap();
    fs.remove_dir(Path::new("/d/p")).unwrap();
    assert!(!fs.exists(Path::new("/d/p")));
    assert!(!fs.is_dir(Path::new("/d/p")));
    // Not synced: the directory comes back, with the files whose removal was not synced either.
    let image = fs.crash(Tear::DropAll);
    assert_eq!(list(&image, "/d/p"), paths(&["/d/p/a", "/d/p/b"]));
    fs.sync_dir(Path::new("/d")).unwrap();
    let image = fs.crash(Tear::DropAll);
    assert!(list(&image, "/d").is_empty());
    assert!(!image.exists(Path::new("/d/p/a")));
}

#[test]
fn renames_of_directories_follow_rename_2() {
    let fs = partition();
    fs.create_dir_all(Path::new("/d/empty")).unwrap();
    fs.create_dir_all(Path::new("/d/full/x")).unwrap();
    let err = fs
        .rename(Path::new("/d/p"), Path::new("/d/p/inside"))
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    let err = fs
        .rename(Path::new("/d/p"), Path::new("/d/full"))
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::DirectoryNotEmpty);
    let err = fs
        .rename(Path::new("/d/p/a"), Path::new("/d/empty"))
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
    let err = fs
        .rename(Path::new("/d/empty"), Path::new("/d/p/a"))
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotADirectory);
    let err = fs
        .rename(Path::new("/d/p"), Path::new("/nowhere/q"))
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    // An empty directory is replaced.
    fs.rename(Path::new("/d/p"), Path::new("/d/empty")).unwrap();
    assert_eq!(list(&fs, "/d/empty"), paths(&["/d/empty/a", "/d/empty/b"]));
    assert_eq!(list(&fs, "/d"), paths(&["/d/empty", "/d/full"]));
}

#[test]
fn a_directory_created_inside_a_renamed_one_is_durable_under_the_name_that_survives() {
    let fs = partition();
    fs.rename(Path::new("/d/p"), Path::new("/d/q")).unwrap();
    fs.create_dir_all(Path::new("/d/q/sub")).unwrap();
    let image = fs.crash(Tear::DropAll);
    assert!(image.is_dir(Path::new("/d/p/sub")));
    fs.sync_dir(Path::new("/d")).unwrap();
    assert!(fs.crash(Tear::DropAll).is_dir(Path::new("/d/q/sub")));
}

#[test]
fn a_path_fault_fails_changes_under_its_path_only() {
    let fs = partition();
    fs.create_dir_all(Path::new("/d/other")).unwrap();
    let a = fs.open(Path::new("/d/p/a"), OpenMode::Existing).unwrap();
    fs.set_path_fault(Path::new("/d/p"), Some(super::EIO));
    let eio = |r: io::Result<()>| r.unwrap_err().raw_os_error() == Some(super::EIO);
    assert!(eio(a.write_all_at(b"x", 0)));
    assert!(eio(a.sync_data()));
    assert!(eio(a.set_len(1)));
    assert!(eio(fs.sync_dir(Path::new("/d/p"))));
    assert!(eio(fs.remove_file(Path::new("/d/p/b"))));
    assert!(eio(fs.rename(Path::new("/d/p/b"), Path::new("/d/other/b"))));
    assert!(eio(fs.rename(Path::new("/d/p"), Path::new("/d/q"))));
    assert!(eio(fs
        .open(Path::new("/d/p/c"), OpenMode::CreateNew)
        .map(drop)));
    // Nothing changed, reads still work, and the rest of the file system is untouched.
    assert_eq!(fs.live_bytes(Path::new("/d/p/a")).unwrap(), b"aaa");
    let mut buf = [0; 3];
    assert_eq!(a.read_at(&mut buf, 0).unwrap(), 3);
    assert_eq!(list(&fs, "/d/p"), paths(&["/d/p/a", "/d/p/b"]));
    let other = fs
        .open(Path::new("/d/other/x"), OpenMode::CreateNew)
        .unwrap();
    other.write_all_at(b"ok", 0).unwrap();
    other.sync_data().unwrap();
    fs.sync_dir(Path::new("/d/other")).unwrap();
    // Removed, the fault is gone.
    fs.set_path_fault(Path::new("/d/p"), None);
    a.write_all_at(b"x", 0).unwrap();
    a.sync_data().unwrap();
}

//! `MappedFile` on real files: reads below the published length, growth past the mapping,
//! shrinking before `set_len`, close, the mapping counter, loans (`with_published`), the
//! shrink that waits for another thread's loan and the shrink or close refused inside one's own
//! (`Error::LoanHeld`, where it used to deadlock), and a stress run of an appender that also truncates against
//! readers that check every byte they copy or borrow.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use seglog_mmap_index::{Error, MAP_AHEAD_BYTES, MappedFile, live_file_mappings};

/// The byte every writer puts at position `p` in generation `g`.
fn byte(p: u64, g: u64) -> u8 {
    (p.wrapping_mul(31).wrapping_add(g.wrapping_mul(101)) % 251) as u8
}

/// Held by every test here that maps: `live_file_mappings` counts the whole process, so a
/// test that reads it must not run while another maps or unmaps.
static FILE_MAPPINGS: Mutex<()> = Mutex::new(());

fn file_mappings() -> std::sync::MutexGuard<'static, ()> {
    FILE_MAPPINGS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn rw_file() -> (tempfile::TempDir, std::fs::File) {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.path().join("00000000000000000000.log"))
        .unwrap();
    (dir, file)
}

#[test]
fn reads_stop_at_the_published_length_and_grow_past_the_mapping() {
    let _serial = file_mappings();
    let (_dir, file) = rw_file();
    let data: Vec<u8> = (0..10_000).map(|p| byte(p, 0)).collect();
    file.write_all_at(&data, 0).unwrap();
    let map = MappedFile::open(file.as_fd(), 6_000).unwrap();
    assert!(map.mapped_len() >= 6_000);
    let mut buf = vec![0_u8; 8_000];
    assert_eq!(map.read_at(1, &mut buf), Some(5_999));
    assert_eq!(&buf[..5_999], &data[1..6_000]);
    assert_eq!(map.read_at(6_000, &mut buf), Some(0));
    map.publish(file.as_fd(), 10_000).unwrap();
    assert_eq!(map.read_at(3, &mut buf[..61]), Some(61));
    assert_eq!(&buf[..61], &data[3..64]);
    // Past the mapping: grow (the file is sparse-extended first, as an append would).
    let big = MAP_AHEAD_BYTES + 100;
    file.write_all_at(b"tail", big - 4).unwrap();
    map.publish(file.as_fd(), big).unwrap();
    assert!(map.mapped_len() > big);
    assert_eq!(map.read_at(big - 4, &mut buf), Some(4));
    assert_eq!(&buf[..4], b"tail");
}

#[test]
fn shrink_then_close_unmap_deterministically() {
    let _serial = file_mappings();
    let (_dir, file) = rw_file();
    let before = live_file_mappings();
    let data: Vec<u8> = (0..5_000).map(|p| byte(p, 1)).collect();
    file.write_all_at(&data, 0).unwrap();
    let map = MappedFile::open(file.as_fd(), 5_000).unwrap();
    assert!(live_file_mappings() > before);
    map.shrink_to(file.as_fd(), 1_234).unwrap();
    assert!(map.mapped_len() <= 1_234);
    file.set_len(1_234).unwrap();
    let mut buf = vec![0_u8; 5_000];
    let n = map.read_at(0, &mut buf).unwrap();
    assert!(n <= 1_234);
    assert_eq!(&buf[..n], &data[..n]);
    map.close().unwrap();
    assert!(map.is_closed());
    assert_eq!(map.read_at(0, &mut buf), None);
    drop(map);
    let empty = MappedFile::open(file.as_fd(), 0).unwrap();
    assert_eq!(empty.read_at(0, &mut buf), Some(0));
}

#[test]
fn loans_cover_only_published_mapped_bytes() {
    let _serial = file_mappings();
    let (_dir, file) = rw_file();
    let data: Vec<u8> = (0..10_000).map(|p| byte(p, 2)).collect();
    file.write_all_at(&data, 0).unwrap();
    let map = MappedFile::open(file.as_fd(), 6_000).unwrap();
    assert_eq!(
        map.with_published(1, 5_999, <[u8]>::to_vec),
        Some(data[1..6_000].to_vec())
    );
    assert_eq!(map.with_published(6_000, 0, <[u8]>::len), Some(0));
    // Past the published length: no loan, even of the bytes below it.
    assert_eq!(map.with_published(5_000, 1_001, <[u8]>::len), None);
    assert_eq!(map.with_published(u64::MAX, 1, <[u8]>::len), None);
    map.publish(file.as_fd(), 10_000).unwrap();
    assert_eq!(
        map.with_published(5_000, 5_000, <[u8]>::to_vec),
        Some(data[5_000..].to_vec())
    );
    map.close().unwrap();
    assert_eq!(map.with_published(0, 1, <[u8]>::len), None);
}

#[test]
fn a_shrink_waits_for_a_lending_reader() {
    let _serial = file_mappings();
    let (_dir, file) = rw_file();
    let data: Vec<u8> = (0..5_000).map(|p| byte(p, 3)).collect();
    file.write_all_at(&data, 0).unwrap();
    let file = Arc::new(file);
    let map = Arc::new(MappedFile::open(file.as_fd(), 5_000).unwrap());
    let shrunk = Arc::new(AtomicBool::new(false));
    let (entered_tx, entered_rx) = std::sync::mpsc::channel();
    let reader = {
        let (map, shrunk) = (map.clone(), shrunk.clone());
        std::thread::spawn(move || {
            map.with_published(0, 5_000, |bytes| {
                entered_tx.send(()).unwrap();
                // The shrink has begun once it lowered the published length; it cannot finish
                // (nor the file be cut and rewritten) until this loan returns.
                while map.len() != 1_234 {
                    std::thread::yield_now();
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
                assert!(!shrunk.load(Ordering::SeqCst), "the shrink did not wait");
                bytes.to_vec()
            })
        })
    };
    entered_rx.recv().unwrap();
    let shrinker = {
        let (map, file, shrunk) = (map.clone(), file.clone(), shrunk.clone());
        std::thread::spawn(move || {
            map.shrink_to(file.as_fd(), 1_234).unwrap();
            shrunk.store(true, Ordering::SeqCst);
            // Cut and append again over the lent range: only after the loan returned.
            file.set_len(1_234).unwrap();
            file.write_all_at(&vec![0xEE; 3_000], 1_234).unwrap();
            map.publish(file.as_fd(), 4_234).unwrap();
        })
    };
    assert_eq!(reader.join().unwrap().unwrap(), data);
    shrinker.join().unwrap();
    assert!(shrunk.load(Ordering::SeqCst));
    assert_eq!(map.with_published(1_230, 8, <[u8]>::to_vec), {
        let mut want = data[1_230..1_234].to_vec();
        want.extend([0xEE; 4]);
        Some(want)
    });
}

/// A mapped file of `len` bytes of generation 3.
fn mapped(len: u64) -> (tempfile::TempDir, std::fs::File, MappedFile) {
    let (dir, file) = rw_file();
    let data: Vec<u8> = (0..len).map(|p| byte(p, 3)).collect();
    file.write_all_at(&data, 0).unwrap();
    let map = MappedFile::open(file.as_fd(), len).unwrap();
    (dir, file, map)
}

#[test]
fn a_shrink_or_close_inside_its_own_loan_is_refused_and_changes_nothing() {
    let _serial = file_mappings();
    let (_dir, file, map) = mapped(5_000);
    assert!(!map.is_lent_by_this_thread());
    let inside = map.with_published(0, 5_000, |bytes| {
        assert!(map.is_lent_by_this_thread());
        // Each of these used to wait for this very closure: a deadlock.
        assert!(matches!(
            map.shrink_to(file.as_fd(), 1_234),
            Err(Error::LoanHeld)
        ));
        assert!(matches!(map.close(), Err(Error::LoanHeld)));
        // Nothing changed: the length, the mapping, the bytes, and a nested loan still works.
        assert_eq!(map.len(), 5_000);
        assert!(!map.is_closed());
        assert_eq!(
            map.with_published(4_990, 10, <[u8]>::to_vec),
            Some(bytes[4_990..].to_vec())
        );
        // A shrink that cuts nothing waits for nothing, and a remap is declined.
        map.shrink_to(file.as_fd(), 5_000).unwrap();
        assert!(!map.remap(file.as_fd()).unwrap());
        bytes.to_vec()
    });
    assert_eq!(
        inside.unwrap(),
        (0..5_000).map(|p| byte(p, 3)).collect::<Vec<_>>()
    );
    // The loan ended: the same calls go through.
    assert!(!map.is_lent_by_this_thread());
    map.shrink_to(file.as_fd(), 1_234).unwrap();
    assert_eq!(map.len(), 1_234);
    map.close().unwrap();
    assert!(map.is_closed());
}

#[test]
fn a_loan_of_another_file_refuses_nothing_of_this_one() {
    let _serial = file_mappings();
    let (_dir_a, file_a, a) = mapped(5_000);
    let (_dir_b, file_b, b) = mapped(5_000);
    a.with_published(0, 100, |_| {
        assert!(!b.is_lent_by_this_thread());
        b.shrink_to(file_b.as_fd(), 1_000).unwrap();
        assert_eq!(b.len(), 1_000);
        b.close().unwrap();
        assert!(matches!(
            a.shrink_to(file_a.as_fd(), 10),
            Err(Error::LoanHeld)
        ));
    })
    .unwrap();
    assert_eq!(a.len(), 5_000);
}

#[test]
fn a_loan_ended_by_a_panic_refuses_nothing_afterwards() {
    let _serial = file_mappings();
    let (_dir, file, map) = mapped(5_000);
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        map.with_published(0, 100, |_| panic!("the callback fails"))
    }));
    assert!(unwound.is_err());
    assert!(!map.is_lent_by_this_thread());
    map.shrink_to(file.as_fd(), 10).unwrap();
    assert_eq!(map.len(), 10);
}

/// How many loans of `map` nest, each inside the last, before one is declined.
fn nest(map: &MappedFile) -> usize {
    map.with_published(0, 1, |_| 1 + nest(map)).unwrap_or(0)
}

#[test]
fn eight_nested_loans_are_lent_and_a_ninth_is_declined() {
    let _serial = file_mappings();
    let (_dir, _file, map) = mapped(100);
    assert_eq!(nest(&map), 8);
    assert!(!map.is_lent_by_this_thread());
}

#[test]
fn stress_readers_against_appends_truncations_and_growth() {
    const ROUNDS: u64 = 400;
    let _serial = file_mappings();
    let (_dir, file) = rw_file();
    let file = Arc::new(file);
    let map = Arc::new(MappedFile::open(file.as_fd(), 0).unwrap());
    // Generation of every byte below the published length, updated before publication (and
    // after a truncation's shrink); readers accept a byte of the generation current when they
    // started or any later one, so they check against all generations seen so far.
    let generations = Arc::new(Mutex::new(Vec::<u64>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (map, gens, stop) = (map.clone(), generations.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0_u8; 20_000];
                let mut rng = 0x1234_5678_u64 + r;
                let mut reads = 0_u64;
                while !stop.load(Ordering::Relaxed) {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let len = map.len();
                    if len == 0 {
                        continue;
                    }
                    let pos = rng % len;
                    let want = (rng >> 32) as usize % buf.len();
                    let check = |bytes: &[u8]| {
                        let max_gen = gens.lock().unwrap().len() as u64;
                        for (i, &b) in bytes.iter().enumerate() {
                            let p = pos + i as u64;
                            assert!(
                                (0..=max_gen).any(|g| byte(p, g) == b),
                                "byte {p}: {b} was never written there"
                            );
                        }
                    };
                    if r == 1 {
                        // A loan: the bytes are checked, then compared with themselves after
                        // the check, which gave a truncation and re-append time to run.
                        let want = want.min(usize::try_from(len - pos).unwrap());
                        if map.is_closed() {
                            break;
                        }
                        map.with_published(pos, want, |bytes| {
                            let first = bytes.to_vec();
                            check(bytes);
                            assert_eq!(bytes, first, "lent bytes changed under the loan");
                        });
                    } else {
                        let Some(n) = map.read_at(pos, &mut buf[..want]) else {
                            break;
                        };
                        check(&buf[..n]);
                    }
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    let mut len = 0_u64;
    let mut generation = 0_u64;
    let mut chunk = Vec::new();
    for round in 0..ROUNDS {
        if round % 10 == 9 {
            // Truncate to a random point, shrinking the mapping first.
            let to = len / 3 + (round * 7919) % (len / 2 + 1);
            map.shrink_to(file.as_fd(), to).unwrap();
            file.set_len(to).unwrap();
            len = to;
            generation += 1;
            generations.lock().unwrap().push(generation);
        }
        let add = 1_000 + (round * 104_729) % 300_000;
        chunk.clear();
        chunk.extend((len..len + add).map(|p| byte(p, generation)));
        file.write_all_at(&chunk, len).unwrap();
        len += add;
        map.publish(file.as_fd(), len).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let reads: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(reads > 0);
    map.close().unwrap();
}

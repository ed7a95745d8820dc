//! Close, unmap and delete while reader threads hammer lookups on the real mapping (KAFKA-7442:
//! Kafka crashed with SIGSEGV here). Readers see correct results until the close and `Closed`
//! after it; the process must not fault, and the mapping must be gone when close returns.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use seglog_mmap_index::{Error, OffsetIndex, OffsetPosition};

fn run(finish: impl FnOnce(&mut OffsetIndex)) {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("c.index"), 0)
        .max_index_size(100_000 * 8)
        .open()
        .unwrap();
    for i in 1..=100_000_i64 {
        idx.append(i * 2, u32::try_from(i).unwrap()).unwrap();
    }
    let closed = Arc::new(AtomicBool::new(false));
    let ok = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..3_u64)
        .map(|seed| {
            let reader = idx.reader();
            let closed = Arc::clone(&closed);
            let ok = Arc::clone(&ok);
            std::thread::spawn(move || {
                let mut x = 0x1234_5678_9abc_def1 ^ seed;
                loop {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let target = i64::try_from(x % 200_010).unwrap();
                    let was_closed = closed.load(Ordering::SeqCst);
                    match reader.lookup(target) {
                        Ok(found) => {
                            assert!(!was_closed, "a lookup succeeded after close returned");
                            let expected = if target < 2 {
                                OffsetPosition {
                                    offset: 0,
                                    position: 0,
                                }
                            } else {
                                let i = (target / 2).min(100_000);
                                OffsetPosition {
                                    offset: i * 2,
                                    position: u32::try_from(i).unwrap(),
                                }
                            };
                            assert_eq!(found, expected);
                            ok.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(Error::Closed { .. }) => return,
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect();
    while ok.load(Ordering::Relaxed) < 10_000 {
        std::thread::sleep(Duration::from_millis(1));
    }
    finish(&mut idx);
    closed.store(true, Ordering::SeqCst);
    assert!(!idx.is_mapped());
    for r in readers {
        r.join().unwrap();
    }
}

#[test]
fn close_under_readers() {
    run(|idx| idx.close().unwrap());
}

#[test]
fn unmap_under_readers() {
    run(OffsetIndex::unmap);
}

#[test]
fn delete_under_readers() {
    run(|idx| assert!(idx.delete().unwrap()));
}

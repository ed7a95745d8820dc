//! Loom models of [`FileCore`], the growing-file mapping behind `MappedFile`: reads against
//! growth (a non-waiting swap), against a shrink followed by a re-append and growth (a copy,
//! and a loan that reads its bytes twice), and against close. A reader never reads a mapping after it is unmapped (loom's `UnsafeCell`
//! tracking), never reads a byte at or past the file's length at the time (such a byte holds
//! `GONE`, the model's stand-in for a page past end of file), and every byte it copies is one
//! the appender wrote there.
#![forbid(unsafe_code)]

use super::loom_memory::{LoomFile, LoomMemory};
use crate::loom::{Arc, Ordering};
use crate::mapped_file::FileCore;

/// What a word past the end of the "file" holds: reading it would be a `SIGBUS`.
const GONE: u32 = 0xDEAD_BEEF;

/// The first generation of the file's content, word `i`.
fn first(i: usize) -> u32 {
    0x0101_0101 * (u32::try_from(i).unwrap() + 1)
}

/// The file's content after truncating to 2 words and appending again, word `i`.
fn second(i: usize) -> u32 {
    if i < 2 {
        first(i)
    } else {
        0x1010_1010 * (u32::try_from(i).unwrap() + 1)
    }
}

fn write(file: &LoomFile, words: std::ops::Range<usize>, value: fn(usize) -> u32) {
    for i in words {
        file.word(i).store(value(i), Ordering::Relaxed);
    }
}

#[expect(clippy::host_endian_bytes, reason = "a word's memory order")]
fn bytes_of(value: fn(usize) -> u32, words: usize) -> Vec<u8> {
    (0..words).flat_map(|i| value(i).to_ne_bytes()).collect()
}

/// A file of 4 words whose first `written` words hold `first`, the rest `GONE`.
fn file_with(written: usize) -> Arc<LoomFile> {
    let file = LoomFile::new(4);
    write(&file, 0..written, first);
    write(&file, written..4, |_| GONE);
    file
}

#[test]
fn loom_file_read_vs_grow() {
    loom::model(|| {
        // 2 words written and published, mapped exactly; the appender adds 2 and grows.
        let file = file_with(2);
        let core = Arc::new(FileCore::new(LoomMemory::map(&file, 2), 8));
        let reader = Arc::clone(&core);
        let read = loom::thread::spawn(move || {
            let mut buf = [0_u8; 14];
            let n = reader.read_at(2, &mut buf).unwrap();
            // The old length (through either mapping) or the new one through the new mapping.
            assert!(n == 6 || n == 14, "read {n}");
            assert_eq!(&buf[..n], &bytes_of(first, 4)[2..2 + n]);
        });
        write(&file, 2..4, first);
        core.publish(16);
        assert!(core.grow(LoomMemory::map(&file, 4)));
        read.join().unwrap();
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_file_read_vs_shrink_and_regrow() {
    loom::model(|| {
        let file = file_with(4);
        let core = Arc::new(FileCore::new(LoomMemory::map(&file, 4), 16));
        let reader = Arc::clone(&core);
        let read = loom::thread::spawn(move || {
            let mut buf = [0_u8; 8];
            let n = reader.read_at(6, &mut buf).unwrap();
            let got = &buf[..n];
            assert!(
                n != 8 || got != &bytes_of(second, 4)[6..14],
                "read past the end"
            );
            // Bytes below the truncation point never change; past it, all from one generation.
            let old = &bytes_of(first, 4)[6..6 + n];
            let new = &bytes_of(second, 4)[6..6 + n];
            // 2 bytes through the small mapping or with the lowered length, 6 with the length
            // published after the re-append, or all 8 through the old mapping.
            assert!(n == 2 || n == 6 || n == 8, "read {n}");
            assert!(got == old || got == new, "torn or stale read {got:?}");
        });
        // Truncate to 2 words: lower, swap in a 2-word mapping and wait; then "set_len".
        core.lower(8);
        core.shrink(Some(LoomMemory::map(&file, 2)));
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        write(&file, 2..4, |_| GONE);
        // Append one word again past the truncation point, publish, and grow the mapping ahead
        // of the file (4 words mapped, 3 in the file): word 3 must never be read.
        write(&file, 2..3, second);
        core.publish(12);
        let _ = core.grow(LoomMemory::map(&file, 4));
        read.join().unwrap();
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_file_lend_vs_shrink_and_regrow() {
    loom::model(|| {
        let file = file_with(4);
        let core = Arc::new(FileCore::new(LoomMemory::map(&file, 4), 16));
        let reader = Arc::clone(&core);
        let lend = loom::thread::spawn(move || {
            // Bytes 8..16 (words 2 and 3) are published only before the truncation: a loan of
            // them is of the old file, whatever mapping it pinned (a length loaded before the
            // pin would lend word 3 of the new mapping, `GONE`).
            let late = reader.lend_at(8, 8, |cells, position, len| {
                let mut got = [0_u8; 8];
                let n = crate::map::copy_words(cells, position + len, position, &mut got);
                assert_eq!(n, 8);
                got
            });
            if let Some(got) = late {
                assert_eq!(&got[..], &bytes_of(first, 4)[8..16], "stale loan");
            }
            // A loan of bytes 4..12 (words 1 and 2), read twice inside it: the truncation to
            // 2 words (8 bytes) and the re-append of word 2 run meanwhile, so the second read
            // would see `GONE` or the new generation if the loan did not hold the shrink off.
            let lent = reader.lend_at(4, 8, |cells, position, len| {
                let mut once = [0_u8; 8];
                let mut twice = [0_u8; 8];
                let published = position + len;
                let n = crate::map::copy_words(cells, published, position, &mut once);
                assert_eq!(n, 8);
                loom::thread::yield_now();
                let n = crate::map::copy_words(cells, published, position, &mut twice);
                assert_eq!(n, 8);
                assert_eq!(once, twice, "lent bytes changed under the loan");
                once
            });
            // No loan once the length was lowered (or through the 2-word mapping); else all 8
            // bytes from one generation: the old file, or the new one after the re-append.
            if let Some(got) = lent {
                let old = &bytes_of(first, 4)[4..12];
                let new = &bytes_of(second, 4)[4..12];
                assert!(got == old || got == new, "torn or stale loan {got:?}");
            }
        });
        core.lower(8);
        core.shrink(Some(LoomMemory::map(&file, 2)));
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        write(&file, 2..4, |_| GONE);
        write(&file, 2..3, second);
        core.publish(12);
        let _ = core.grow(LoomMemory::map(&file, 4));
        lend.join().unwrap();
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_file_read_vs_close() {
    loom::model(|| {
        let file = file_with(3);
        let core = Arc::new(FileCore::new(LoomMemory::map(&file, 4), 12));
        let reader = Arc::clone(&core);
        let read = loom::thread::spawn(move || {
            let mut buf = [0_u8; 16];
            if let Some(n) = reader.read_at(0, &mut buf) {
                assert_eq!(n, 12);
                assert_eq!(&buf[..n], &bytes_of(first, 3)[..]);
            }
        });
        core.close();
        // Deterministic: nothing is mapped once close returns.
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
        read.join().unwrap();
        let mut buf = [0_u8; 4];
        assert!(core.read_at(0, &mut buf).is_none());
    });
}

#[test]
fn loom_file_read_vs_evict_and_remap() {
    loom::model(|| {
        let file = file_with(3);
        let core = Arc::new(FileCore::new(LoomMemory::map(&file, 4), 12));
        let reader = Arc::clone(&core);
        let remap_file = Arc::clone(&file);
        let read = loom::thread::spawn(move || {
            let mut buf = [0_u8; 16];
            // Evicted: no bytes from the mapping (the segment reads them with `pread`); the
            // owner's next read maps the file again, up to the published length.
            if let Some(n) = reader.read_at(0, &mut buf) {
                assert_eq!(n, 12);
                assert_eq!(&buf[..n], &bytes_of(first, 3)[..]);
            } else {
                assert!(
                    reader
                        .remap(|published| {
                            assert_eq!(published, 12);
                            Ok(LoomMemory::map(&remap_file, 4))
                        })
                        .unwrap()
                );
                let n = reader.read_at(0, &mut buf).unwrap();
                assert_eq!(&buf[..n], &bytes_of(first, 3)[..]);
            }
        });
        assert!(core.evict());
        read.join().unwrap();
        // One mapping at most: the reader's remap, or none if it read before the eviction.
        assert!(file.mapped.load(Ordering::SeqCst) <= 1);
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

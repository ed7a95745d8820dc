//! Loom models of the size publication: an appender growing (and cutting) the `.log` against
//! readers that load [`PublishedSize`] and then read the bytes below it, as `LogSegment`'s reads do.
//!
//! The "file" is words of loom atomics written and read relaxed, as `pwrite` and a mapped read
//! touch page-cache bytes with no ordering of their own; 0 is a word never written, or cut off
//! (a read stops there, as `pread` stops at the end of the file). Only the size's ordering can
//! make a written word visible to a reader, so a broken ordering shows as a 0 or a stale word.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, Ordering};
use loom::thread;

use super::PublishedSize;

/// A `.log` of `words.len()` words whose logical size is `size`.
struct Log {
    size: PublishedSize,
    words: Vec<AtomicU32>,
}

impl Log {
    /// A file holding `written`, of capacity `capacity` words.
    fn new(written: &[u32], capacity: usize) -> Arc<Self> {
        let words = (0..capacity)
            .map(|i| AtomicU32::new(written.get(i).copied().unwrap_or(0)))
            .collect();
        Arc::new(Self {
            size: PublishedSize::new(written.len() as u64),
            words,
        })
    }

    /// `LogSegment::append`'s steps: the position from the writer's own size, the write, then
    /// the publication of the new size.
    fn append(&self, data: &[u32]) {
        let at = usize::try_from(self.size.load_by_writer()).unwrap();
        for (i, word) in data.iter().enumerate() {
            self.words[at + i].store(*word, Ordering::Relaxed);
        }
        self.size.publish((at + data.len()) as u64);
    }

    /// `truncate_to`'s and `recover`'s steps: cut the file (`set_len`), then publish the size.
    fn cut(&self, len: usize) {
        for word in &self.words[len..] {
            word.store(0, Ordering::Relaxed);
        }
        self.size.publish(len as u64);
    }

    /// A reader's steps: load the size, then read the words below it, stopping at the end of
    /// the file. Returns the size seen and the words read.
    fn read(&self) -> (usize, Vec<u32>) {
        let size = usize::try_from(self.size.load()).unwrap();
        let words = self.words[..size]
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .take_while(|w| *w != 0)
            .collect();
        (size, words)
    }
}

/// Appends publish growth: a reader never sees a size that covers a word not yet written.
///
/// The appender runs on the model's own thread, after spawning the reader, so that loom's first
/// schedule has the reader load after the stores and its later schedules move the reader back
/// (loom's DPOR remembers one access per atomic, and the appender's own load of the size would
/// hide a reader that loaded it first).
#[test]
fn loom_size_append_vs_read() {
    loom::model(|| {
        let log = Log::new(&[], 3);
        let reader = thread::spawn({
            let log = Arc::clone(&log);
            move || {
                let (size, words) = log.read();
                assert_eq!(
                    words,
                    [1, 2, 3][..size],
                    "size {size} ran ahead of its bytes"
                );
            }
        });
        log.append(&[1, 2]);
        log.append(&[3]);
        reader.join().unwrap();
        assert_eq!(log.read(), (3, vec![1, 2, 3]));
    });
}

/// A cut then a regrowth over the cut bytes: a reader that sees the regrown size reads the new
/// bytes, never the cut ones or a hole; a reader that sees the cut size reads only the kept
/// prefix; one that loaded the size before the cut reads old or new words, and stops where the
/// file ends.
#[test]
fn loom_size_cut_and_regrow_vs_read() {
    loom::model(|| {
        let log = Log::new(&[1, 1, 1], 4);
        let reader = thread::spawn({
            let log = Arc::clone(&log);
            move || {
                let (size, words) = log.read();
                match size {
                    1 => assert_eq!(words, [1]),
                    3 => assert!(
                        words.first() == Some(&1) && words.iter().all(|w| matches!(w, 1 | 2)),
                        "a stale size read {words:?}"
                    ),
                    4 => assert_eq!(
                        words,
                        [1, 2, 2, 2],
                        "the regrown size ran ahead of its bytes"
                    ),
                    other => panic!("size {other} was never published"),
                }
            }
        });
        log.cut(1);
        log.append(&[2, 2, 2]);
        reader.join().unwrap();
        assert_eq!(log.read(), (4, vec![1, 2, 2, 2]));
    });
}

//! [`SnapshotCell`]: a value that readers load as a cheap `Arc` snapshot and a writer replaces
//! whole (copy, modify, swap). The partition log keeps its segment list in one, so a reader holds a
//! consistent list for as long as it likes while appends, rolls and retention swap in new ones.
//!
//! Removal is deferred the same way: a segment taken out of the list is deleted only once
//! [`is_unreferenced`] says no snapshot (and no reader) still holds it. The loom model at the end of
//! this file checks both properties under every interleaving.

use std::sync::PoisonError;

use crate::loom::sync::{Arc, RwLock};

/// A value shared by snapshot. See the module documentation.
#[derive(Debug)]
pub(crate) struct SnapshotCell<T> {
    current: RwLock<Arc<T>>,
}

impl<T: Clone> SnapshotCell<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            current: RwLock::new(Arc::new(value)),
        }
    }

    /// The current value. The read lock is held only to clone the `Arc`.
    pub(crate) fn load(&self) -> Arc<T> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the value with `f` applied to a copy of it. Readers that loaded the old value keep
    /// it unchanged.
    pub(crate) fn update(&self, f: impl FnOnce(&mut T)) {
        let mut guard = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let mut next = T::clone(&guard);
        f(&mut next);
        *guard = Arc::new(next);
    }

    /// Replaces the value.
    pub(crate) fn store(&self, value: T) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(value);
    }
}

/// Whether `item` is held by nobody but the caller's handle: no snapshot and no reader.
pub(crate) fn is_unreferenced<T>(item: &Arc<T>) -> bool {
    Arc::strong_count(item) == 1
}

#[cfg(all(test, loom))]
mod loom_tests {
    use loom::sync::atomic::{AtomicBool, Ordering};
    use loom::thread;

    use super::*;

    /// A stand-in for a segment: `deleted` is what a reader must never observe while it holds it.
    #[derive(Debug, Default)]
    struct Segment {
        deleted: AtomicBool,
    }

    #[test]
    fn loom_reader_never_sees_a_deleted_segment_or_a_torn_list() {
        loom::model(|| {
            let first = Arc::new(Segment::default());
            let second = Arc::new(Segment::default());
            let cell = Arc::new(SnapshotCell::new(vec![
                Arc::clone(&first),
                Arc::clone(&second),
            ]));
            drop(second);

            let reader = {
                let cell = Arc::clone(&cell);
                thread::spawn(move || {
                    let snapshot = cell.load();
                    // The list is either the old one or the new one, never a mix.
                    assert!(snapshot.len() == 2 || snapshot.len() == 1);
                    for segment in snapshot.iter() {
                        assert!(
                            !segment.deleted.load(Ordering::SeqCst),
                            "read a deleted segment"
                        );
                    }
                })
            };

            // Retention: take the first segment out of the list, then delete it once unreferenced.
            cell.update(|list| {
                list.remove(0);
            });
            let mut retired = Some(first);
            while let Some(segment) = retired.take() {
                if is_unreferenced(&segment) {
                    segment.deleted.store(true, Ordering::SeqCst);
                } else {
                    retired = Some(segment);
                    thread::yield_now();
                }
            }
            reader.join().unwrap();
        });
    }

    /// Retention versus a read, in the order `delete_segments` and `read` use: retention raises
    /// the log start offset *before* it swaps the removed segment out of the list, and a read
    /// loads the list *before* the log start. So a read either holds the old list (and reads
    /// the removed segment, which is deleted only once no snapshot holds it) or sees the new
    /// start and answers "out of range"; it never finds the offset missing from the list and
    /// returns later data instead. Swapping before raising the start makes this model fail.
    #[test]
    fn loom_read_vs_retention_start_offset_and_list_swap() {
        use loom::sync::atomic::AtomicI64;

        loom::model(|| {
            let first = Arc::new(Segment::default());
            let second = Arc::new(Segment::default());
            // Segments by base offset: [0, 10) and [10, ..).
            let cell = Arc::new(SnapshotCell::new(vec![
                (0_i64, Arc::clone(&first)),
                (10, Arc::clone(&second)),
            ]));
            let log_start = Arc::new(AtomicI64::new(0));
            drop(second);

            let reader = {
                let (cell, log_start) = (Arc::clone(&cell), Arc::clone(&log_start));
                thread::spawn(move || {
                    let target = 5;
                    let snapshot = cell.load();
                    if target < log_start.load(Ordering::Acquire) {
                        return; // OffsetOutOfRange: a correct answer.
                    }
                    let floor = snapshot.iter().rev().find(|(base, _)| *base <= target);
                    let (base, segment) = floor.expect("the segment holding the offset is gone");
                    assert_eq!(*base, 0, "read later data for offset {target}");
                    assert!(
                        !segment.deleted.load(Ordering::SeqCst),
                        "read a deleted segment"
                    );
                })
            };

            log_start.fetch_max(10, Ordering::AcqRel);
            cell.update(|list| list.retain(|(base, _)| *base >= 10));
            let mut retired = Some(first);
            while let Some(segment) = retired.take() {
                if is_unreferenced(&segment) {
                    segment.deleted.store(true, Ordering::SeqCst);
                } else {
                    retired = Some(segment);
                    thread::yield_now();
                }
            }
            reader.join().unwrap();
        });
    }

    #[test]
    fn loom_concurrent_updates_are_not_lost() {
        loom::model(|| {
            let cell = Arc::new(SnapshotCell::new(Vec::<u8>::new()));
            let handles: Vec<_> = (0..2_u8)
                .map(|i| {
                    let cell = Arc::clone(&cell);
                    thread::spawn(move || cell.update(|list| list.push(i)))
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            let mut list = (*cell.load()).clone();
            list.sort_unstable();
            assert_eq!(list, vec![0, 1]);
        });
    }
}

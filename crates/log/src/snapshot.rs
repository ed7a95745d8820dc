//! [`SnapshotCell`]: a value that readers load as a cheap `Arc` snapshot and a writer replaces
//! whole (copy, modify, swap). The partition log keeps its segment list in one, so a reader holds a
//! consistent list for as long as it likes while appends, rolls and retention swap in new ones.
//!
//! Removal is deferred the same way: a segment taken out of the list is deleted only once
//! [`is_unreferenced`] says no snapshot (and no reader) still holds it. The loom model at the end of
//! this file checks both properties under every interleaving.

use std::sync::PoisonError;

use crate::sync::{Arc, RwLock};

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

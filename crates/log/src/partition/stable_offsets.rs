//! The high watermark and the first unstable offset, published for readers that take no lock,
//! and the last stable offset read from them (Kafka's `lastStableOffset`).
//!
//! Writers change both under the producer state's lock: an append holds it from its new log end
//! offset to its new first unstable offset, and a high watermark update holds it from the new
//! high watermark to the first unstable offset that follows. So the first unstable offset that
//! counts an open transaction is published before any high watermark that covers its data, and a
//! reader that loads the high watermark first and the first unstable offset second never pairs a
//! high watermark past an open transaction with a first unstable offset from before it.

use crate::loom::sync::atomic::{AtomicI64, Ordering};

/// The two offsets a read_committed bound is made of.
#[derive(Debug)]
pub(crate) struct StableOffsets {
    high_watermark: AtomicI64,
    /// The first offset of the oldest undecided (or unreplicated) transaction; `i64::MAX`: none.
    first_unstable_offset: AtomicI64,
}

impl StableOffsets {
    /// A high watermark of 0 and no unstable transaction.
    pub(crate) fn new() -> Self {
        Self {
            high_watermark: AtomicI64::new(0),
            first_unstable_offset: AtomicI64::new(i64::MAX),
        }
    }

    pub(crate) fn high_watermark(&self) -> i64 {
        self.high_watermark.load(Ordering::Acquire)
    }

    /// Publishes a new high watermark. The caller holds the producer state's lock, or no
    /// transaction can be open (a load, a full truncation).
    pub(crate) fn set_high_watermark(&self, offset: i64) {
        self.high_watermark.store(offset, Ordering::Release);
    }

    /// Lowers the high watermark to `offset` if it is above (a truncation).
    pub(crate) fn lower_high_watermark(&self, offset: i64) {
        self.high_watermark.fetch_min(offset, Ordering::AcqRel);
    }

    /// The first unstable offset, `i64::MAX` for none.
    pub(crate) fn first_unstable_offset(&self) -> i64 {
        self.first_unstable_offset.load(Ordering::Acquire)
    }

    /// Publishes the first unstable offset (`i64::MAX`: none). The caller holds the producer
    /// state's lock.
    pub(crate) fn set_first_unstable_offset(&self, offset: i64) {
        self.first_unstable_offset.store(offset, Ordering::Release);
    }

    /// The first unstable offset or the high watermark, whichever is lower.
    pub(crate) fn last_stable_offset(&self) -> i64 {
        // The high watermark first: one read before a concurrent append and high watermark
        // update is low, never past an undecided transaction, whereas a first unstable offset
        // read before the append could pair with a high watermark read after it.
        let high_watermark = self.high_watermark();
        self.first_unstable_offset().min(high_watermark)
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use loom::sync::atomic::{AtomicBool, AtomicI64, Ordering};
    use loom::sync::{Arc, Mutex};
    use loom::thread;

    use super::StableOffsets;

    /// The producer state as far as the first unstable offset goes: the first offset of the open
    /// transaction, and a decided one's (first offset, marker offset) until the high watermark
    /// passes its marker.
    #[derive(Default)]
    struct State {
        ongoing: Option<i64>,
        unreplicated: Option<(i64, i64)>,
    }

    impl State {
        fn first_unstable(&self) -> i64 {
            let unreplicated = self.unreplicated.map(|(first, _)| first);
            self.ongoing
                .into_iter()
                .chain(unreplicated)
                .min()
                .unwrap_or(i64::MAX)
        }
    }

    /// A partition as `write`, `apply_producer_state` and `set_high_watermark` drive it:
    /// `decided` is the model's own flag, set when the marker is written.
    struct Partition {
        offsets: StableOffsets,
        state: Mutex<State>,
        log_end: AtomicI64,
        decided: AtomicBool,
    }

    impl Partition {
        /// An append of `[first, end)`: the log end, then the state and its first unstable
        /// offset, under the state's lock. `marker` ends the open transaction.
        fn append(&self, end: i64, open_at: Option<i64>, marker: bool) {
            let mut state = self.state.lock().unwrap();
            self.log_end.store(end, Ordering::Release);
            if let Some(first) = open_at {
                state.ongoing = Some(first);
            }
            if marker && let Some(first) = state.ongoing.take() {
                state.unreplicated = Some((first, end - 1));
                self.decided.store(true, Ordering::Release);
            }
            self.offsets
                .set_first_unstable_offset(state.first_unstable());
        }

        /// `set_high_watermark`: clamped to the log end, then the decided transactions whose
        /// markers it passes dropped and the first unstable offset refreshed, under the lock.
        fn set_high_watermark(&self, offset: i64) {
            let mut state = self.state.lock().unwrap();
            let hw = offset.min(self.log_end.load(Ordering::Acquire));
            self.offsets.set_high_watermark(hw);
            if state.unreplicated.is_some_and(|(_, marker)| marker < hw) {
                state.unreplicated = None;
            }
            self.offsets
                .set_first_unstable_offset(state.first_unstable());
        }
    }

    /// A transaction's data at 0..3 appended, the high watermark raised over it, its marker at
    /// 3 appended, the high watermark raised over the marker; a reader meanwhile computes the
    /// last stable offset with `read`. It must never be above the high watermark, nor past the
    /// transaction's first offset (0) before the marker is written.
    fn model(read: fn(&StableOffsets) -> i64) {
        loom::model(move || {
            let p = Arc::new(Partition {
                offsets: StableOffsets::new(),
                state: Mutex::new(State::default()),
                log_end: AtomicI64::new(0),
                decided: AtomicBool::new(false),
            });
            let reader = {
                let p = Arc::clone(&p);
                thread::spawn(move || {
                    let lso = read(&p.offsets);
                    let decided = p.decided.load(Ordering::Acquire);
                    let hw = p.offsets.high_watermark();
                    assert!(
                        lso <= hw,
                        "last stable offset {lso} above the high watermark {hw}"
                    );
                    assert!(
                        lso == 0 || decided,
                        "last stable offset {lso} past the open transaction at 0"
                    );
                })
            };
            p.append(3, Some(0), false);
            p.set_high_watermark(3);
            p.append(4, None, true);
            p.set_high_watermark(4);
            reader.join().unwrap();
        });
    }

    #[test]
    fn loom_last_stable_offset_never_passes_an_open_transaction_or_the_high_watermark() {
        model(StableOffsets::last_stable_offset);
    }

    /// The model is not vacuous: the first unstable offset read before the high watermark can
    /// pair the offset from before the transaction opened with a high watermark over its data.
    #[test]
    #[should_panic(expected = "past the open transaction")]
    fn loom_reading_the_first_unstable_offset_first_would_pass_an_open_transaction() {
        model(|o| {
            let first_unstable = o.first_unstable_offset();
            first_unstable.min(o.high_watermark())
        });
    }
}

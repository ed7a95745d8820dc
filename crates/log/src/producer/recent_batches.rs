//! A producer's last batches, kept inline: at most `N`, oldest first, in a fixed array, so that
//! a producer's state is copied without a heap allocation (the recovery replay and every
//! leader append copy it once a batch). Adding past `N` shifts the oldest out: `N - 1` slots of
//! 24 bytes moved, for a contiguous slice that iterates as the `VecDeque` it replaces did.

use std::fmt;

use super::batch_metadata::BatchMetadata;

/// What an unused slot holds; never read (only the first `len` slots are).
const UNUSED: BatchMetadata = BatchMetadata {
    last_seq: -1,
    last_offset: -1,
    offset_delta: 0,
    timestamp: -1,
};

/// Up to `N` batches, oldest first.
#[derive(Clone, Copy)]
pub(crate) struct RecentBatches<const N: usize> {
    slots: [BatchMetadata; N],
    /// How many of `slots`, from the first, hold batches: at most `N`.
    len: usize,
}

impl<const N: usize> RecentBatches<N> {
    /// None kept.
    pub(crate) const fn new() -> Self {
        const { assert!(N > 0, "a producer keeps at least its last batch") };
        Self {
            slots: [UNUSED; N],
            len: 0,
        }
    }

    /// The kept batches, oldest first.
    pub(crate) fn as_slice(&self) -> &[BatchMetadata] {
        debug_assert!(self.len <= N);
        self.slots.get(..self.len).unwrap_or_default()
    }

    /// Forgets every batch.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps `batch` as the newest; with `N` kept already, the oldest goes.
    pub(crate) fn push(&mut self, batch: BatchMetadata) {
        if self.len == N {
            self.slots.copy_within(1.., 0);
            self.len = N - 1;
        }
        if let Some(slot) = self.slots.get_mut(self.len) {
            *slot = batch;
            self.len += 1;
        }
        debug_assert!(self.len <= N && self.as_slice().last() == Some(&batch));
    }
}

impl<const N: usize> PartialEq for RecentBatches<N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> Eq for RecentBatches<N> {}

impl<const N: usize> fmt::Debug for RecentBatches<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(last_seq: i32) -> BatchMetadata {
        BatchMetadata {
            last_seq,
            last_offset: i64::from(last_seq) + 100,
            offset_delta: 0,
            timestamp: 7,
        }
    }

    fn last_seqs<const N: usize>(r: &RecentBatches<N>) -> Vec<i32> {
        r.as_slice().iter().map(|b| b.last_seq).collect()
    }

    #[test]
    fn keeps_the_newest_n_oldest_first() {
        let mut r = RecentBatches::<5>::new();
        assert!(r.as_slice().is_empty());
        for s in 0..3 {
            r.push(batch(s));
        }
        assert_eq!(last_seqs(&r), [0, 1, 2]);
        for s in 3..12 {
            r.push(batch(s));
            let first = (s - 4).max(0);
            assert_eq!(last_seqs(&r), (first..=s).collect::<Vec<_>>(), "after {s}");
        }
        r.clear();
        assert!(r.as_slice().is_empty());
        r.push(batch(40));
        assert_eq!(last_seqs(&r), [40]);
    }

    #[test]
    fn equality_ignores_the_slots_past_the_kept_ones() {
        // Same kept batches, different leftovers in the unused slots.
        let mut a = RecentBatches::<3>::new();
        let mut b = RecentBatches::<3>::new();
        for s in 0..3 {
            a.push(batch(s));
        }
        a.clear();
        a.push(batch(9));
        b.push(batch(9));
        assert_eq!(a, b);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        b.push(batch(10));
        assert_ne!(a, b);
    }

    #[test]
    fn a_single_slot_keeps_the_newest() {
        let mut r = RecentBatches::<1>::new();
        r.push(batch(1));
        r.push(batch(2));
        assert_eq!(last_seqs(&r), [2]);
    }
}

//! The cleaner's key map (Kafka's `SkimpyOffsetMap`): the latest offset of every key in the dirty
//! range, in a fixed-size open-addressing table sized from a memory budget.
//!
//! Kafka stores an MD5 of each key (16 bytes) and an 8-byte offset per slot. We store a 128-bit
//! XXH3 hash instead: as wide, and several times faster. Two different keys collide with
//! probability about n^2 / 2^129 for n keys, below 10^-20 for a billion keys; a collision would make
//! the cleaner drop the older key's latest record, the same risk Kafka accepts with MD5.

/// Bytes per slot: a 16-byte hash and an 8-byte offset, as in Kafka.
pub(crate) const SLOT_BYTES: usize = 24;

/// A bounded map from key hash to latest offset. It counts as full at 90% of its slots (Kafka's
/// `log.cleaner.io.buffer.load.factor`).
#[derive(Debug)]
pub(crate) struct OffsetMap {
    /// `(hash, offset)`; a hash of 0 marks an empty slot (a real hash of 0 is remapped to 1).
    slots: Vec<(u128, i64)>,
    entries: usize,
    max_entries: usize,
    /// The last offset put into the map (Kafka's `latestOffset`), or -1.
    latest_offset: i64,
}

/// A key's 128-bit hash, never 0.
pub(crate) fn key_hash(key: &[u8]) -> u128 {
    twox_hash::XxHash3_128::oneshot(key).max(1)
}

impl OffsetMap {
    /// A map using at most `budget_bytes` of memory (at least one slot).
    pub(crate) fn with_budget(budget_bytes: usize) -> Self {
        let slots = (budget_bytes / SLOT_BYTES).max(1);
        // 90% of the slots, in integer arithmetic.
        let max_entries = (slots / 10 * 9 + slots % 10 * 9 / 10).max(1);
        Self {
            slots: vec![(0, 0); slots],
            entries: 0,
            max_entries,
            latest_offset: -1,
        }
    }

    /// Makes room for `keys` new keys in an empty map, beyond the budget if need be: a single batch
    /// with more distinct keys than the budget holds must still be cleanable, or cleaning would
    /// stall on it (Redpanda #16952). The overshoot is bounded by one batch's record count.
    pub(crate) fn fit_first_batch(&mut self, keys: usize) {
        if self.entries == 0 && self.room() < keys {
            let slots = keys.saturating_mul(10) / 9 + 2;
            self.slots = vec![(0, 0); slots];
            self.max_entries = slots - 1;
        }
    }

    /// The number of keys.
    pub(crate) fn len(&self) -> usize {
        self.entries
    }

    /// How many more keys fit before the map counts as full.
    pub(crate) fn room(&self) -> usize {
        self.max_entries.saturating_sub(self.entries)
    }

    /// The last offset put into the map, or -1.
    pub(crate) fn latest_offset(&self) -> i64 {
        self.latest_offset
    }

    /// Marks everything up to `offset` as read (offsets without keys included).
    pub(crate) fn advance_to(&mut self, offset: i64) {
        self.latest_offset = self.latest_offset.max(offset);
    }

    fn slot_of(&self, hash: u128) -> usize {
        let len = self.slots.len();
        let mut i = usize::try_from(hash % (len as u128)).unwrap_or(0);
        loop {
            match self.slots.get(i) {
                Some((h, _)) if *h == 0 || *h == hash => return i,
                _ => i = (i + 1) % len,
            }
        }
    }

    /// Records `offset` as the latest offset of the key with `hash`. Returns false, changing
    /// nothing, when the key is new and the table has no free slot left.
    pub(crate) fn put(&mut self, hash: u128, offset: i64) -> bool {
        let i = self.slot_of(hash);
        let capacity = self.slots.len();
        let Some(slot) = self.slots.get_mut(i) else {
            return false;
        };
        if slot.0 == 0 {
            // One slot always stays empty, so that probing for an absent key ends.
            if self.entries + 1 >= capacity {
                return false;
            }
            self.entries += 1;
        }
        *slot = (hash, offset);
        self.latest_offset = self.latest_offset.max(offset);
        true
    }

    /// The latest offset of the key with `hash`, if it is in the map.
    pub(crate) fn get(&self, hash: u128) -> Option<i64> {
        let (h, offset) = self.slots.get(self.slot_of(hash)).copied()?;
        (h == hash).then_some(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_latest_offset_per_key_within_its_budget() {
        let mut map = OffsetMap::with_budget(100 * SLOT_BYTES);
        assert_eq!(map.room(), 90);
        for (i, key) in ["a", "b", "a", "c", "b"].iter().enumerate() {
            assert!(map.put(key_hash(key.as_bytes()), i64::try_from(i).unwrap()));
        }
        assert_eq!(map.len(), 3);
        assert_eq!(map.get(key_hash(b"a")), Some(2));
        assert_eq!(map.get(key_hash(b"b")), Some(4));
        assert_eq!(map.get(key_hash(b"zz")), None);
        assert_eq!(map.latest_offset(), 4);
        assert_eq!(map.slots.len() * SLOT_BYTES, 100 * SLOT_BYTES);
    }

    #[test]
    fn a_full_table_refuses_new_keys_but_updates_old_ones() {
        let mut map = OffsetMap::with_budget(4 * SLOT_BYTES);
        assert!(map.put(key_hash(b"a"), 0));
        assert!(map.put(key_hash(b"b"), 1));
        assert!(map.put(key_hash(b"c"), 2));
        assert!(!map.put(key_hash(b"d"), 3));
        assert!(map.put(key_hash(b"a"), 4));
        assert_eq!(map.get(key_hash(b"a")), Some(4));
    }
}

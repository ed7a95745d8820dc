//! The cleaner's key map (Kafka's `SkimpyOffsetMap`): the latest offset of every key in the dirty
//! range, in a fixed-size open-addressing table sized from a memory budget.
//!
//! Kafka stores an MD5 of each key (16 bytes) and an 8-byte offset per slot. We store a 128-bit
//! XXH3 hash instead: as wide, and several times faster. Two different keys collide with
//! probability about n^2 / 2^129 for n keys, below 10^-20 for a billion keys; a collision would make
//! the cleaner drop the older key's latest record, the same risk Kafka accepts with MD5.

/// Bytes per slot: a 16-byte hash and an 8-byte offset, as in Kafka.
pub(crate) const SLOT_BYTES: usize = 24;

/// One slot: the hash's high and low halves and the offset. Three `u64`s, not `(u128, i64)`,
/// whose 16-byte alignment would pad a slot to 32 bytes and the table to 4/3 of its budget.
type Slot = [u64; 3];

const _: () = assert!(size_of::<Slot>() == SLOT_BYTES);

/// The largest table that doubles: past it the next growth goes straight to the budget, so the
/// old and the new table together never take more than the budget and this much.
const DOUBLING_LIMIT_BYTES: usize = 8 << 20;

/// A bounded map from key hash to latest offset. It counts as full at 90% of the slots its budget
/// pays for (Kafka's `log.cleaner.io.buffer.load.factor`). Unlike Kafka's, the table starts small
/// and doubles as keys arrive, up to [`DOUBLING_LIMIT_BYTES`], then takes the whole budget: a few
/// keys in a large budget then stay in cache. The table is allocated zeroed, so the pages of a
/// large table that no key reached are never made resident.
#[derive(Debug)]
pub(crate) struct OffsetMap {
    /// A hash of 0 marks an empty slot (a real hash of 0 is remapped to 1).
    slots: Vec<Slot>,
    entries: usize,
    /// The slots the budget allows.
    budget_slots: usize,
    /// The keys the budget allows (90% of its slots).
    max_entries: usize,
    /// The last offset put into the map (Kafka's `latestOffset`), or -1.
    latest_offset: i64,
}

/// The table's first size.
const INITIAL_SLOTS: usize = 1 << 12;

/// A key's 128-bit hash, never 0.
pub(crate) fn key_hash(key: &[u8]) -> u128 {
    twox_hash::XxHash3_128::oneshot(key).max(1)
}

/// 90% of `slots`, in integer arithmetic.
fn ninety_percent(slots: usize) -> usize {
    (slots / 10 * 9 + slots % 10 * 9 / 10).max(1)
}

impl OffsetMap {
    /// A map using at most `budget_bytes` of memory (at least one slot).
    pub(crate) fn with_budget(budget_bytes: usize) -> Self {
        let budget_slots = (budget_bytes / SLOT_BYTES).max(2);
        Self {
            slots: vec![[0; 3]; budget_slots.min(INITIAL_SLOTS)],
            entries: 0,
            budget_slots,
            max_entries: ninety_percent(budget_slots),
            latest_offset: -1,
        }
    }

    /// Makes room for `keys` new keys in an empty map, beyond the budget if need be: a single batch
    /// with more distinct keys than the budget holds must still be cleanable, or cleaning would
    /// stall on it (Redpanda #16952). The overshoot is bounded by one batch's record count.
    pub(crate) fn fit_first_batch(&mut self, keys: usize) {
        if self.entries == 0 && self.room() < keys {
            self.budget_slots = keys.saturating_mul(10) / 9 + 2;
            self.max_entries = self.budget_slots - 1;
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

    /// The home slot of `hash` in a table of `len` slots (a multiply-shift on the top 64 bits).
    fn home(hash: u128, len: usize) -> usize {
        let top = u64::try_from(hash >> 64).unwrap_or(0);
        usize::try_from((u128::from(top) * len as u128) >> 64).unwrap_or(0)
    }

    fn slot_of(&self, hash: u128) -> usize {
        let len = self.slots.len();
        let (hi, lo) = split(hash);
        let mut i = Self::home(hash, len);
        loop {
            match self.slots.get(i) {
                Some([h, l, _]) if (*h == 0 && *l == 0) || (*h == hi && *l == lo) => return i,
                _ => i = if i + 1 == len { 0 } else { i + 1 },
            }
        }
    }

    /// Doubles the table (straight to the budget past [`DOUBLING_LIMIT_BYTES`]) and reinserts
    /// every key.
    fn grow(&mut self) {
        let doubled = self.slots.len() * 2;
        let size = if doubled * SLOT_BYTES <= DOUBLING_LIMIT_BYTES {
            doubled.min(self.budget_slots)
        } else {
            self.budget_slots
        };
        let old = std::mem::replace(&mut self.slots, vec![[0; 3]; size]);
        for slot in old.into_iter().filter(|s| !is_empty(s)) {
            let i = self.slot_of(join(slot));
            if let Some(new) = self.slots.get_mut(i) {
                *new = slot;
            }
        }
    }

    /// Records `offset` as the latest offset of the key with `hash`. Returns false, changing
    /// nothing, when the key is new and the map is full.
    pub(crate) fn put(&mut self, hash: u128, offset: i64) -> bool {
        let mut i = self.slot_of(hash);
        let is_new = self.slots.get(i).is_some_and(is_empty);
        if is_new {
            if self.entries >= self.max_entries {
                return false;
            }
            // Below the budget the table doubles at half load, which keeps linear probes short;
            // at the budget it fills to 90% as Kafka's does.
            if self.entries + 1 > self.slots.len() / 2 && self.slots.len() < self.budget_slots {
                self.grow();
                i = self.slot_of(hash);
            }
            // One slot always stays empty, so that probing for an absent key ends.
            if self.entries + 1 >= self.slots.len() {
                return false;
            }
            self.entries += 1;
        }
        if let Some(slot) = self.slots.get_mut(i) {
            let (hi, lo) = split(hash);
            *slot = [hi, lo, offset.cast_unsigned()];
        }
        self.latest_offset = self.latest_offset.max(offset);
        true
    }

    /// Loads the home slots of `hashes` together, so that their cache misses overlap instead of
    /// following one another through the probes that come next (a hint; it changes nothing).
    pub(crate) fn touch(&self, hashes: impl Iterator<Item = u128>) {
        let len = self.slots.len();
        let mut seen = 0_u128;
        for hash in hashes {
            if let Some([h, ..]) = self.slots.get(Self::home(hash, len)) {
                seen ^= u128::from(*h);
            }
        }
        std::hint::black_box(seen);
    }

    /// The latest offset of the key with `hash`, if it is in the map.
    pub(crate) fn get(&self, hash: u128) -> Option<i64> {
        let slot = self.slots.get(self.slot_of(hash)).copied()?;
        let [_, _, offset] = slot;
        (join(slot) == hash).then_some(offset.cast_signed())
    }
}

fn split(hash: u128) -> (u64, u64) {
    (
        u64::try_from(hash >> 64).unwrap_or(0),
        u64::try_from(hash & u128::from(u64::MAX)).unwrap_or(0),
    )
}

fn join([hi, lo, _]: Slot) -> u128 {
    u128::from(hi) << 64 | u128::from(lo)
}

fn is_empty(slot: &Slot) -> bool {
    matches!(slot, [0, 0, _])
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
        assert!(map.slots.len() * SLOT_BYTES <= 100 * SLOT_BYTES);
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

#[cfg(test)]
mod growth_tests {
    use super::*;

    #[test]
    fn grows_to_its_budget_and_no_further() {
        let budget_slots = 100_000;
        let mut map = OffsetMap::with_budget(budget_slots * SLOT_BYTES);
        assert_eq!(map.slots.len(), INITIAL_SLOTS);
        let mut n = 0_i64;
        while map.put(key_hash(&n.to_be_bytes()), n) {
            n += 1;
        }
        assert_eq!(map.len(), ninety_percent(budget_slots));
        assert_eq!(map.slots.len(), budget_slots);
        assert_eq!(
            map.slots.len() * size_of::<Slot>(),
            budget_slots * SLOT_BYTES
        );
        for k in (0..n).step_by(997) {
            assert_eq!(map.get(key_hash(&k.to_be_bytes())), Some(k));
        }
    }

    #[test]
    fn doubles_up_to_its_limit_then_takes_the_whole_budget() {
        let budget_slots = 1 << 20;
        let mut map = OffsetMap::with_budget(budget_slots * SLOT_BYTES);
        let mut sizes = vec![map.slots.len()];
        let mut n = 0_i64;
        while map.slots.len() < budget_slots {
            assert!(map.put(key_hash(&n.to_be_bytes()), n));
            n += 1;
            if sizes.last() != Some(&map.slots.len()) {
                sizes.push(map.slots.len());
            }
        }
        let largest_doubled = sizes.iter().rev().nth(1).copied().unwrap();
        assert!(largest_doubled * SLOT_BYTES <= DOUBLING_LIMIT_BYTES);
        assert!(largest_doubled * 2 * SLOT_BYTES > DOUBLING_LIMIT_BYTES);
        assert!(sizes.windows(2).rev().skip(1).all(|w| w[1] == w[0] * 2));
        for k in (0..n).step_by(101) {
            assert_eq!(map.get(key_hash(&k.to_be_bytes())), Some(k));
        }
    }
}

//! The index searches: Kafka's slot search (`indexSlotRangeFor`, for truncation and
//! `fetch_upper_bound_offset`) and the lookup's floor search, in two parts: the warm section's
//! (inline) and the cold range's, which prefetches (called out of line by the lookup path). They
//! work over slices and closures; the entry types bind them to their layouts.
#![forbid(unsafe_code)]

use std::hint::select_unpredictable;

use crate::map::prefetch;

/// Which bound a slot search returns (Kafka's `SearchResultType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// The largest slot whose field is at most the target.
    LargestLower,
    /// The smallest slot whose field is at least the target.
    SmallestUpper,
}

/// Which field a slot search compares (Kafka's `IndexSearchType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Offset (offset index) or timestamp (time index).
    Key,
    /// Position (offset index) or offset (time index).
    Value,
}

/// Kafka's `indexSlotRangeFor`, step for step, over `entries` slots whose field is `field_at`.
/// The probe sequence, the early return on equality and the warm-section split are Kafka's, so
/// results agree with Kafka even on files whose entries are not sorted.
#[inline]
pub(crate) fn slot_for(
    entries: usize,
    warm_entries: usize,
    target: i64,
    bound: Bound,
    field_at: impl Fn(usize) -> i64,
) -> Option<usize> {
    if entries == 0 {
        return None;
    }
    let last = entries - 1;
    let first_hot = last.saturating_sub(warm_entries);
    if field_at(first_hot) < target {
        return binary_search(first_hot, last, last, target, bound, &field_at);
    }
    if field_at(0) > target {
        return match bound {
            Bound::LargestLower => None,
            Bound::SmallestUpper => Some(0),
        };
    }
    binary_search(0, first_hot, last, target, bound, &field_at)
}

#[inline]
fn binary_search(
    begin: usize,
    end: usize,
    last: usize,
    target: i64,
    bound: Bound,
    field_at: &impl Fn(usize) -> i64,
) -> Option<usize> {
    let (mut lo, mut hi) = (begin, end);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let found = field_at(mid);
        if found == target {
            return Some(mid);
        }
        // Selects, not branches: the direction is a coin flip for the branch predictor.
        let above = found > target;
        hi = select_unpredictable(above, mid - 1, hi);
        lo = select_unpredictable(above, lo, mid);
    }
    match bound {
        Bound::LargestLower => Some(lo),
        Bound::SmallestUpper => (lo != last).then_some(lo + 1),
    }
}

/// The lookup search over `slots`, [`floor_warm`] then [`floor_cold`] as the lookup path runs
/// them (see `View::floor`): the tests' reference for the two together.
#[cfg(test)]
pub(crate) fn floor_in<C, K: Ord + Copy>(
    slots: &[C],
    warm_entries: usize,
    target: K,
    key: impl Fn(&C) -> K,
) -> Option<usize> {
    match floor_warm(slots, warm_entries, target, &key) {
        Floor::Slot(slot) => Some(slot),
        Floor::Below => None,
        Floor::Cold(last) => Some(floor_cold(slots.get(..=last)?, target, key)),
    }
}

/// Where [`floor_warm`] found a lookup's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Floor {
    /// In this slot.
    Slot(usize),
    /// Below the first entry (or the index is empty).
    Below,
    /// In the cold range, slots `0..=` this one, whose first key is at most the target:
    /// [`floor_cold`] finds it.
    Cold(usize),
}

/// The lookup search over `slots` (one item per entry), in two parts: Kafka's warm-section split
/// (probe the first warm entry, then entry 0) and the warm section's search here, and the cold
/// range's search in [`floor_cold`], which the lookup path calls out of line. Each is a floor
/// search inside its range, with `key` reading only the words it compares. Whenever keys strictly
/// increase (every index Kafka or this crate writes) the slot is exactly Kafka's
/// `largestLowerBoundSlotFor`, and the warm/cold
/// page-touch pattern is Kafka's; on a corrupt, unsorted file the slot may differ from the one
/// Kafka's probe order happens to return, but it is always one of `slots`.
///
/// The two ranges are searched differently, for speed:
/// - the warm section (cache-resident, the common case) branch-free, each probe's dependency
///   chain an address, one load, one compare and one conditional move: searching whole entries
///   rather than words (no stride arithmetic) and comparing in the stored width halved its cost;
/// - the cold range (up to 10 MiB, mostly cache and TLB misses) branch-free too, and, in a range
///   too large for a core's L2, while the window spans more than a few cache lines each probe
///   prefetches the four probes two levels down, so that three levels' misses are in flight at
///   once whatever the compares find (a branchy search overlaps misses only when the predictor
///   guesses the half; docs/benchmarks.md and docs/perf/index.md have the figures).
#[inline]
pub(crate) fn floor_warm<C, K: Ord + Copy>(
    slots: &[C],
    warm_entries: usize,
    target: K,
    key: impl Fn(&C) -> K,
) -> Floor {
    let Some(last) = slots.len().checked_sub(1) else {
        return Floor::Below;
    };
    let first_hot = last.saturating_sub(warm_entries);
    let Some(first) = slots.first() else {
        return Floor::Below;
    };
    if slots.get(first_hot).is_some_and(|hot| key(hot) < target) {
        // Invariant: key(slots[base]) <= target, and the answer is in `base..base + size`.
        // `size` shrinks the same way whatever a probe finds, so the next probe's address waits
        // only on `base`'s conditional move; a window whose length depended on the compare would
        // put two more steps in that chain.
        // `mid < base + size <= slots.len()` holds for any keys, so the `get` never fails.
        let (mut base, mut size) = (first_hot, slots.len() - first_hot);
        while size > 1 {
            let half = size / 2;
            let mid = base + half;
            let Some(probe) = slots.get(mid) else { break };
            base = select_unpredictable(key(probe) <= target, mid, base);
            size -= half;
        }
        return Floor::Slot(base);
    }
    if key(first) > target {
        return Floor::Below;
    }
    Floor::Cold(first_hot)
}

/// The second part of the lookup search (see [`floor_warm`]): the floor search of the cold range
/// `range`, given `key(range[0]) <= target`. A range larger than [`COLD_PREFETCH_RANGE_BYTES`]
/// prefetches; a smaller one is searched as the warm section is.
#[inline]
pub(crate) fn floor_cold<C, K: Ord + Copy>(range: &[C], target: K, key: impl Fn(&C) -> K) -> usize {
    if size_of_val(range) > COLD_PREFETCH_RANGE_BYTES {
        floor_cold_in::<true, C, K>(range, target, key)
    } else {
        floor_cold_in::<false, C, K>(range, target, key)
    }
}

/// [`floor_cold`]'s loop, with the prefetch of the probes two levels down (`PREFETCH`) or without.
#[inline]
fn floor_cold_in<const PREFETCH: bool, C, K: Ord + Copy>(
    range: &[C],
    target: K,
    key: impl Fn(&C) -> K,
) -> usize {
    let (mut base, mut size) = (0, range.len());
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        if PREFETCH && size > COLD_PREFETCH_ABOVE {
            // The four probes two levels down: `base` or `mid`, plus 0 or the next level's
            // half, plus the half after that.
            let next = size - half;
            let (h1, h2) = (next / 2, (next - next / 2) / 2);
            for probe in [base + h2, base + h1 + h2, mid + h2, mid + h1 + h2] {
                if let Some(slot) = range.get(probe) {
                    prefetch(slot);
                }
            }
        }
        let Some(probe) = range.get(mid) else { break };
        base = select_unpredictable(key(probe) <= target, mid, base);
        size -= half;
    }
    base
}

/// The cold search prefetches while its window holds more entries than this.
const COLD_PREFETCH_ABOVE: usize = 16;

/// The cold search prefetches only in a range larger than this: one that fits a core's L2 (1 MiB
/// on the project's machine) stays there between lookups, and prefetching it only adds work
/// (about 20 instructions per probe) that keeps successive lookups from overlapping
/// (docs/perf/index.md, 2026-12-06).
const COLD_PREFETCH_RANGE_BYTES: usize = 1 << 20;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn kafka_llb(keys: &[i64], target: i64) -> Option<usize> {
        slot_for(keys.len(), 2, target, Bound::LargestLower, |s| keys[s])
    }

    #[test]
    fn largest_lower_bound_matches_a_floor_search() {
        let keys: Vec<i64> = (0..40).map(|i| i * 10 + 5).collect();
        for target in -5..420 {
            let expected = keys.iter().rposition(|&k| k <= target);
            assert_eq!(kafka_llb(&keys, target), expected, "target {target}");
        }
    }

    #[test]
    fn smallest_upper_bound_matches_kafka_including_its_first_entry_quirk() {
        let keys = [0_i64, 10, 23, 37];
        let sub = |t| slot_for(keys.len(), 1024, t, Bound::SmallestUpper, |s| keys[s]);
        assert_eq!(sub(5), Some(1));
        assert_eq!(sub(10), Some(1));
        assert_eq!(sub(22), Some(2));
        assert_eq!(sub(23), Some(2));
        assert_eq!(sub(38), None);
        assert_eq!(sub(-1), Some(0));
        // Kafka's quirk (reference 3.2): an exact match on entry 0 through the cold path gives
        // slot 1, or no slot when there is only one entry.
        assert_eq!(sub(0), Some(1));
        let one = [7_i64];
        assert_eq!(slot_for(1, 1024, 7, Bound::SmallestUpper, |s| one[s]), None);
    }

    #[test]
    fn floor_search_matches_kafkas_search_on_increasing_keys() {
        for n in [0_usize, 1, 2, 3, 7, 8, 9, 40, 129] {
            let keys: Vec<i64> = (0..n).map(|i| i64::try_from(i).unwrap() * 5 + 3).collect();
            for warm in [0, 1, 2, 4, 1024] {
                for target in -2..i64::try_from(n).unwrap() * 5 + 8 {
                    let kafka = slot_for(n, warm, target, Bound::LargestLower, |s| keys[s]);
                    assert_eq!(
                        floor_in(&keys, warm, target, |&k| k),
                        kafka,
                        "n {n} warm {warm} t {target}"
                    );
                }
            }
        }
    }

    #[test]
    fn cold_search_with_prefetch_matches_a_sorted_oracle() {
        // Cold ranges far larger than `COLD_PREFETCH_ABOVE`, with uneven gaps, so that every
        // window size and both sides of each probe are taken.
        for n in [17_usize, 18, 33, 100, 1000, 4097] {
            let mut key = 0_i64;
            let keys: Vec<i64> = (0..n)
                .map(|i| {
                    key += 1 + i64::try_from(i * 7 % 13).unwrap();
                    key
                })
                .collect();
            for warm in [0, 3, 16] {
                for target in keys[0] - 2..=key + 2 {
                    let oracle = keys.partition_point(|&k| k <= target).checked_sub(1);
                    assert_eq!(
                        floor_in(&keys, warm, target, |&k| k),
                        oracle,
                        "n {n} t {target}"
                    );
                }
            }
            // Both loops, whatever the range's size picks (`COLD_PREFETCH_RANGE_BYTES`).
            for target in keys[0]..=key + 2 {
                let oracle = keys.partition_point(|&k| k <= target) - 1;
                assert_eq!(floor_cold_in::<true, _, _>(&keys, target, |&k| k), oracle);
                assert_eq!(floor_cold_in::<false, _, _>(&keys, target, |&k| k), oracle);
            }
        }
    }

    #[test]
    fn cold_search_of_a_range_past_the_prefetch_size_matches_a_sorted_oracle() {
        // Past `COLD_PREFETCH_RANGE_BYTES`, so `floor_cold` takes the prefetching loop.
        let n = COLD_PREFETCH_RANGE_BYTES / size_of::<i64>() + 3;
        let keys: Vec<i64> = (0..n)
            .map(|i| i64::try_from(i * 3 + i % 2).unwrap())
            .collect();
        let last = keys[n - 1];
        for target in (0..=last + 2).step_by(7).chain(last - 40..=last + 2) {
            let oracle = keys.partition_point(|&k| k <= target) - 1;
            assert_eq!(floor_cold(&keys, target, |&k| k), oracle, "t {target}");
        }
    }

    #[test]
    fn empty_index_has_no_slot() {
        assert_eq!(slot_for(0, 8, 3, Bound::LargestLower, |_| 0), None);
        assert_eq!(slot_for(0, 8, 3, Bound::SmallestUpper, |_| 0), None);
    }
}

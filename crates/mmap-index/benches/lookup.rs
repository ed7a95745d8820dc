//! Lookup benches over a full default-size offset index (10 MiB, 1,310,720 entries, resident in
//! the page cache): random targets, targets inside the warm section, and the in-memory baselines
//! (`partition_point` over the same entries in a `Vec`, decoded and as stored), all in the same
//! run, with the machine's memory latency floor (a pointer chase over 10 MiB and over 8 KiB).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::many_single_char_names,
    reason = "bench"
)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use seglog_mmap_index::{OffsetEntry, OffsetIndex, TimeIndex};

const BASE: i64 = 1_000_000;
const MAX_INDEX_SIZE: u32 = 10 * 1024 * 1024;
const TARGETS: usize = 1 << 16;

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// Benches `lookup` on one target per iteration, cycling through `targets` (`TARGETS` long).
fn over_targets<T>(
    g: &mut Group<'_>,
    name: &str,
    targets: &[i64],
    mut lookup: impl FnMut(i64) -> T,
) {
    let mut i = 0;
    g.bench_function(name, |b| {
        b.iter(|| {
            i = (i + 1) & (TARGETS - 1);
            black_box(lookup(black_box(targets[i])))
        });
    });
}

/// The decoded baseline: `partition_point` over `(offset, position)` tuples.
fn floor_decoded(entries: &[(i64, u32)], target: i64) -> (i64, u32) {
    let n = entries.partition_point(|&(o, _)| o <= target);
    n.checked_sub(1).map_or((BASE, 0), |s| entries[s])
}

fn bench_lookup(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut index = OffsetIndex::options(dir.path().join("bench.index"), BASE)
        .max_index_size(MAX_INDEX_SIZE)
        .open()
        .unwrap();
    let mut entries = Vec::with_capacity(index.max_entries());
    let mut seed = 0x2545_f491_4f6c_dd1d;
    let (mut offset, mut position) = (BASE, 0_u32);
    while !index.is_full() {
        offset += 1 + i64::try_from(xorshift(&mut seed) % 8).unwrap();
        position += 4096;
        index.append(offset, position).unwrap();
        entries.push((offset, position));
    }
    assert_eq!(entries.len(), 1_310_720);
    let last = offset;
    let random: Vec<i64> = (0..TARGETS)
        .map(|_| {
            BASE + i64::try_from(xorshift(&mut seed) % u64::try_from(last - BASE + 1).unwrap())
                .unwrap()
        })
        .collect();
    // The warm section: the last 1024 entries (8 KiB).
    let warm_from = entries[entries.len() - 1024].0;
    let warm: Vec<i64> = (0..TARGETS)
        .map(|_| {
            warm_from
                + i64::try_from(xorshift(&mut seed) % u64::try_from(last - warm_from + 1).unwrap())
                    .unwrap()
        })
        .collect();
    let reader = index.reader();
    // Fault every page in, so the numbers are page-cache-resident lookups.
    for &t in &random {
        black_box(reader.lookup(t).unwrap());
    }

    let mut g = c.benchmark_group("offset_index_lookup");
    over_targets(&mut g, "random_mapped_reader", &random, |t| {
        reader.lookup(t).unwrap()
    });
    over_targets(&mut g, "random_mapped_writer", &random, |t| {
        index.lookup(t).unwrap()
    });
    over_targets(
        &mut g,
        "random_vec_partition_point_baseline",
        &random,
        |t| floor_decoded(&entries, t),
    );
    over_targets(&mut g, "warm_mapped_reader", &warm, |t| {
        reader.lookup(t).unwrap()
    });
    over_targets(&mut g, "warm_mapped_writer", &warm, |t| {
        index.lookup(t).unwrap()
    });
    let tail = &entries[entries.len() - 1025..];
    over_targets(&mut g, "warm_vec_partition_point_baseline", &warm, |t| {
        floor_decoded(tail, t)
    });
    bench_stored_baseline(&mut g, &entries, &random, &warm);
    bench_one_entry(&mut g, &warm);
    g.finish();
    bench_time_lookup(c, dir.path(), &mut seed);
}

/// The `partition_point` baseline over the entries as stored: 8-byte big-endian entries,
/// compared as the mapped search compares them. The gap between it and the mapped lookups is the
/// mapping's own cost; the gap between it and the decoded baseline is the on-disk format's.
fn bench_stored_baseline(g: &mut Group<'_>, entries: &[(i64, u32)], random: &[i64], warm: &[i64]) {
    let stored: Vec<OffsetEntry> = entries
        .iter()
        .map(|&(o, p)| OffsetEntry::new(u32::try_from(o - BASE).unwrap(), p))
        .collect();
    let floor_stored = |slots: &[OffsetEntry], t: i64| {
        let relative = i32::try_from((t - BASE).clamp(0, i64::from(i32::MAX))).unwrap();
        let n = slots.partition_point(|e| e.relative_offset.get().cast_signed() <= relative);
        n.checked_sub(1).map_or((BASE, 0), |s| {
            let e = slots[s];
            (BASE + i64::from(e.relative_offset.get()), e.position.get())
        })
    };
    over_targets(g, "random_vec_stored_entries_baseline", random, |t| {
        floor_stored(&stored, t)
    });
    let tail = &stored[stored.len() - 1025..];
    over_targets(g, "warm_vec_stored_entries_baseline", warm, |t| {
        floor_stored(tail, t)
    });
}

/// Lookups in an index of one entry: almost no search, so the fixed cost of a lookup (reaching
/// the mapping, and the reader's pin), which the warm lookups above pay too.
fn bench_one_entry(g: &mut Group<'_>, targets: &[i64]) {
    let dir = tempfile::tempdir().unwrap();
    let mut index = OffsetIndex::options(dir.path().join("one.index"), BASE)
        .max_index_size(MAX_INDEX_SIZE)
        .open()
        .unwrap();
    index.append(BASE + 5, 4096).unwrap();
    let reader = index.reader();
    over_targets(g, "one_entry_mapped_reader", targets, |t| {
        reader.lookup(t).unwrap()
    });
    over_targets(g, "one_entry_mapped_writer", targets, |t| {
        index.lookup(t).unwrap()
    });
}

fn bench_time_lookup(c: &mut Criterion, dir: &std::path::Path, seed: &mut u64) {
    let mut time_index = TimeIndex::options(dir.join("bench.timeindex"), BASE)
        .max_index_size(MAX_INDEX_SIZE)
        .open()
        .unwrap();
    let mut ts = 1_700_000_000_000_i64;
    let mut off = BASE;
    while !time_index.is_full() {
        ts += 1 + i64::try_from(xorshift(seed) % 16).unwrap();
        off += 1;
        time_index.maybe_append(ts, off, false).unwrap();
    }
    let first = 1_700_000_000_000_i64;
    let ts_targets: Vec<i64> = (0..TARGETS)
        .map(|_| {
            first + i64::try_from(xorshift(seed) % u64::try_from(ts - first + 1).unwrap()).unwrap()
        })
        .collect();
    let treader = time_index.reader();
    for &t in &ts_targets {
        black_box(treader.lookup(t).unwrap());
    }
    let mut g = c.benchmark_group("time_index_lookup");
    over_targets(&mut g, "random_mapped_reader", &ts_targets, |t| {
        treader.lookup(t).unwrap()
    });
    g.finish();
}

/// A cycle through every 64-byte line of a `bytes`-long buffer in random order: each step's
/// load depends on the previous one, so one step costs one access latency of the level the
/// buffer lives in (for 10 MiB: an L3 or DRAM access plus, mostly, a TLB miss). It is the floor
/// under a lookup that must touch at least one random line of the index.
fn pointer_chase(bytes: usize, seed: &mut u64) -> Vec<u32> {
    const WORDS_PER_LINE: usize = 16;
    let lines = bytes / 64;
    let mut order: Vec<usize> = (0..lines).collect();
    for k in (1..lines).rev() {
        let j = usize::try_from(xorshift(seed) % u64::try_from(k + 1).unwrap()).unwrap();
        order.swap(k, j);
    }
    let mut next = vec![0_u32; lines * WORDS_PER_LINE];
    for k in 0..lines {
        let to = order[(k + 1) % lines] * WORDS_PER_LINE;
        next[order[k] * WORDS_PER_LINE] = u32::try_from(to).unwrap();
    }
    next
}

/// The memory latency floor of this machine, in the same run as the lookups: one dependent load
/// per iteration over 10 MiB (the full index's size) and over 8 KiB (the warm section's).
fn bench_latency_floor(c: &mut Criterion) {
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    let mut g = c.benchmark_group("memory_latency_floor");
    for (name, bytes) in [
        ("pointer_chase_10mib", 10 << 20),
        ("pointer_chase_8kib", 8 << 10),
    ] {
        let next = pointer_chase(bytes, &mut seed);
        let mut at = 0_u32;
        g.bench_function(name, |b| {
            b.iter(|| {
                at = next[at as usize];
                at
            });
        });
    }
    g.finish();
}

criterion_group!(benches, bench_lookup, bench_latency_floor);
criterion_main!(benches);

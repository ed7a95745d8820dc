#!/usr/bin/env python3
"""Writes the index fixtures under testdata/index/ independently of seglog's Rust code.

Uses only the Python standard library: every entry is packed with struct, big-endian,
exactly as Kafka's OffsetIndex (int32 relative offset, int32 position) and TimeIndex
(int64 timestamp, int32 relative offset) write them through a Java ByteBuffer.
Run from the repository root: python3 testdata/gen/index_files.py
The tests in crates/mmap-index/tests/fixtures_python.rs open these files and check them
against the values listed in testdata/index/manifest.txt, which this script also writes.
"""

import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "index")


def offset_entries(base, entries):
    """(absolute offset, position) pairs -> bytes."""
    return b"".join(struct.pack(">iI", off - base, pos) for off, pos in entries)


def time_entries(base, entries):
    """(timestamp, absolute offset) pairs -> bytes."""
    return b"".join(struct.pack(">qi", ts, off - base) for ts, off in entries)


def write(name, data, manifest, note):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    manifest.append("%s %d %s" % (name, len(data), note))


def main():
    os.makedirs(OUT, exist_ok=True)
    manifest = []

    # A trimmed offset index of a rolled segment: base 1000, 100 entries, offsets 1000+7i+3,
    # positions 4096i + 17.
    base = 1000
    entries = [(base + 7 * i + 3, 4096 * i + 17) for i in range(100)]
    write("00000000000000001000.index", offset_entries(base, entries), manifest,
          "offset base=1000 entries=100 offset=base+7i+3 position=4096i+17")

    # The matching time index: timestamps 1_700_000_000_000 + 250i at the same offsets.
    tentries = [(1_700_000_000_000 + 250 * i, base + 7 * i + 3) for i in range(100)]
    write("00000000000000001000.timeindex", time_entries(base, tentries), manifest,
          "time base=1000 entries=100 timestamp=1700000000000+250i offset=base+7i+3")

    # A crash image: a preallocated active offset index (80 slots) with 5 entries written
    # and the rest still zero (never trimmed). Base 0.
    data = offset_entries(0, [(10 * (i + 1), 1000 * (i + 1)) for i in range(5)])
    data += b"\x00" * (80 * 8 - len(data))
    write("00000000000000000000.index", data, manifest,
          "offset base=0 slots=80 written=5 offset=10(i+1) position=1000(i+1) zero-tail")

    # The matching crash image of the time index (80 slots, 4 written): Kafka's own sanity
    # check fails on it (last timestamp 0 < first timestamp).
    data = time_entries(0, [(5000 + i, 10 * (i + 1)) for i in range(4)])
    data += b"\x00" * (80 * 12 - len(data))
    write("00000000000000000000.timeindex", data, manifest,
          "time base=0 slots=80 written=4 timestamp=5000+i offset=10(i+1) zero-tail")

    # A large base offset (beyond 2^32) with relative offsets near i32::MAX.
    base = 5_000_000_000
    entries = [(base, 0), (base + 1, 61), (base + 2**31 - 2, 122), (base + 2**31 - 1, 183)]
    write("00000000005000000000.index", offset_entries(base, entries), manifest,
          "offset base=5000000000 entries=4 relative=0,1,2147483646,2147483647")

    # Garbage: 20 bytes of a fixed pseudo-random pattern (not a multiple of 8 or 12).
    garbage = bytes((i * 73 + 41) % 256 for i in range(20))
    write("garbage.index", garbage, manifest, "garbage length=20")
    write("garbage.timeindex", garbage, manifest, "garbage length=20")

    # An empty (zero-length) index: Kafka maps it with maxEntries 0 (KAFKA-6388).
    write("empty.index", b"", manifest, "empty length=0")

    with open(os.path.join(OUT, "manifest.txt"), "w") as f:
        f.write("# name length description; written by testdata/gen/index_files.py\n")
        f.write("\n".join(manifest) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds testdata/segment/00000000000000000000.log, the README's sample segment.

It concatenates the v2 batches that generate.py wrote with kafka-python (testdata/record-format/v2_*.bin,
in name order), rewriting each batch's base offset so that offsets follow on from 0 as a broker
would assign them. The base offset (bytes 0..8) is outside the CRC-32C, so every batch stays valid.
Only the Python standard library is used.
"""
import glob
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def batches(buf):
    pos = 0
    while pos + 17 <= len(buf):
        size = struct.unpack_from(">i", buf, pos + 8)[0]
        yield buf[pos:pos + 12 + size]
        pos += 12 + size


def main():
    out = bytearray()
    next_offset = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "record-format", "v2_*.bin"))):
        with open(path, "rb") as f:
            data = f.read()
        for batch in batches(data):
            batch = bytearray(batch)
            last_delta = struct.unpack_from(">i", batch, 23)[0]
            struct.pack_into(">q", batch, 0, next_offset)
            next_offset += last_delta + 1
            out += batch
    os.makedirs(os.path.join(ROOT, "segment"), exist_ok=True)
    with open(os.path.join(ROOT, "segment", "00000000000000000000.log"), "wb") as f:
        f.write(out)
    print(f"wrote segment/00000000000000000000.log: {len(out)} bytes, offsets 0..{next_offset - 1}")


if __name__ == "__main__":
    main()

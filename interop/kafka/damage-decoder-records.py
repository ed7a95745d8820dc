#!/usr/bin/env python3
"""Writes damaged copies of the records of a Kafka segment, for the dump decoders' error goldens.

    damage-decoder-records.py <input .log> <output .log> <count> <seed>
    damage-decoder-records.py --missing-key <input .log> <output .log>

Reads the uncompressed, non-control RecordBatch v2 batches of the input, and writes <count> records,
each in a batch of its own (offset i, a correct CRC), each a copy of a random input record with one
damage: a bit flipped in the key or the value, the key or the value cut short, bytes overwritten,
garbage appended, the value dropped (a tombstone), or the leading version/type changed.
Deterministic for a seed. With --missing-key: the input's first record, then a copy of it
without its key (which the coordinator decoders refuse). Python 3 standard library only.
"""
import random
import struct
import sys


def crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def read_varint(buf, pos):
    shift = value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7


def varint(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def records(data):
    pos = 0
    while pos + 61 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        attributes = struct.unpack_from(">h", data, pos + 21)[0]
        count = struct.unpack_from(">i", data, pos + 57)[0]
        if data[pos + 16] == 2 and attributes & 0x27 == 0:
            p = pos + 61
            for _ in range(count):
                _, p = read_varint(data, p)
                p += 1
                _, p = read_varint(data, p)
                _, p = read_varint(data, p)
                klen, p = read_varint(data, p)
                key = None if klen < 0 else data[p:p + klen]
                p += max(klen, 0)
                vlen, p = read_varint(data, p)
                value = None if vlen < 0 else data[p:p + vlen]
                p += max(vlen, 0)
                headers, p = read_varint(data, p)
                assert headers == 0
                yield key, value
        pos = end


def batch(offset, timestamp, key, value):
    body = b"\x00" + varint(0) + varint(0)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(0)
    record = varint(len(body)) + body
    after_crc = struct.pack(">hiqqqhii", 0, 0, timestamp, timestamp, -1, -1, -1, 1) + record
    head = struct.pack(">qiib", offset, 4 + 1 + 4 + len(after_crc), 0, 2)
    return head + struct.pack(">I", crc32c(after_crc)) + after_crc


def damage(rng, key, value):
    kind = rng.randrange(8)
    target = "key" if key is not None and (value is None or rng.random() < 0.3) else "value"
    data = bytearray(key if target == "key" else value)
    if kind == 0 and data:
        i = rng.randrange(len(data) * 8)
        data[i // 8] ^= 1 << (i % 8)
    elif kind == 1:
        del data[rng.randrange(len(data) + 1):]
    elif kind == 2 and data:
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 3:
        data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
    elif kind == 4 and key is not None:
        return key, None
    elif kind == 5 and len(data) >= 2:
        data[0:2] = struct.pack(">h", rng.choice([-1, 0, 1, 2, 3, 7, 99, 0x7FFF]))
    elif kind == 6 and data:
        i = rng.randrange(len(data))
        data[i] = rng.choice([0x00, 0x7F, 0x80, 0xFF])
    else:
        i = rng.randrange(len(data) * 8 + 1)
        if data:
            data[min(i // 8, len(data) - 1)] ^= 0x80
    data = bytes(data)
    return (data, value) if target == "key" else (key, data)


def main():
    if sys.argv[1] == "--missing-key":
        with open(sys.argv[2], "rb") as f:
            key, value = next(records(f.read()))
        with open(sys.argv[3], "wb") as f:
            f.write(batch(0, 1_700_000_000_000, key, value) + batch(1, 1_700_000_000_001, None, value))
        return
    source, target, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(source, "rb") as f:
        found = list(records(f.read()))
    rng = random.Random(seed)
    out = bytearray()
    for i in range(count):
        key, value = damage(rng, *rng.choice(found))
        out += batch(i, 1_700_000_000_000 + i, key, value)
    with open(target, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()

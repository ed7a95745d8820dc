#!/usr/bin/env python3
"""Generate the kafka-python golden fixtures under testdata/record-format/.

Run from the repository root, inside the venv that `cargo xtask fixtures` creates:

    cargo xtask fixtures

Each fixture is a pair:

* `<name>.bin`: one or more record batches (v2) or message-set entries (v0/v1), concatenated exactly
  as they would sit in a Kafka `.log` file;
* `<name>.json`: the records and batch facts the generator put in, written from the generator's own
  inputs (not from decoding the `.bin`), so a decoder can be checked against them.

The batches are built by kafka-python's `kafka.record` builders (`DefaultRecordBatchBuilder` for
magic 2, `LegacyRecordBatchBuilder` for magic 0 and 1). Where a fixture needs something the
producer-side builders cannot write (a base offset, a leader epoch, LogAppendTime, a control batch,
an empty batch, a v0/v1 wrapper offset), this script patches the built bytes the way a broker would
and recomputes the checksum with its own CRC-32C (`crc32c_castagnoli` below) or with `zlib.crc32`
for the legacy CRC-32. Each patch is described in the fixture's `description`.

Everything is deterministic: fixed timestamps, fixed producer ids, no randomness. The gzip member
header's mtime, which Python's `gzip` module would otherwise take from the clock, is pinned to 0.
The versions of every library used are written to testdata/record-format/generator-versions.txt.

After writing the record-format fixtures, this script runs testdata/gen/index_files.py with the
same interpreter when that file exists, so one command regenerates all of testdata/.
"""

import functools
import gzip
import importlib.metadata
import json
import os
import platform
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import kafka.codec
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords
from kafka.record.util import calc_crc32c as kafka_python_crc32c

ROOT = Path(__file__).resolve().parent.parent.parent
OUT_DIR = ROOT / "testdata" / "record-format"

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
CODEC_NAMES = {v: k for k, v in CODEC_IDS.items()}

# All timestamps are fixed. 1_700_000_000_000 ms is 2023-11-14T22:13:20Z.
T0 = 1_700_000_000_000
# What the "broker" stamps on LogAppendTime batches.
LOG_APPEND_TIME = 1_700_000_999_999

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
INT32_MAX = 2_147_483_647

V2_HEADER = struct.Struct(">qiibIhiqqqhii")
assert V2_HEADER.size == 61


# ---------------------------------------------------------------------------------------------
# Determinism: Python's gzip writes the current time into the gzip member header unless told
# otherwise. kafka.codec.gzip_encode does not pass mtime, so hand it a gzip module whose GzipFile
# pins mtime to 0 (which is also what Java's GZIPOutputStream writes). Nothing else changes.
# ---------------------------------------------------------------------------------------------
class _PinnedGzip:
    GzipFile = functools.partial(gzip.GzipFile, mtime=0)


kafka.codec.gzip = _PinnedGzip


# ---------------------------------------------------------------------------------------------
# CRC-32C (Castagnoli), written here rather than imported, so the LogAppendTime, control and
# empty batches are checksummed by code independent of the library that built them.
# Reflected polynomial 0x82F63B78, init 0xFFFFFFFF, final xor 0xFFFFFFFF.
# ---------------------------------------------------------------------------------------------
def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c_castagnoli(data):
    crc = 0xFFFFFFFF
    for byte in bytes(data):
        crc = _CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


# The standard check value of CRC-32C (RFC 3720 B.4 parameters).
assert crc32c_castagnoli(b"123456789") == 0xE3069283


def restamp_v2_crc(buf):
    crc = crc32c_castagnoli(buf[21:])
    # Cross-check against kafka-python's own CRC-32C on every batch we touch.
    assert crc == kafka_python_crc32c(bytes(buf[21:]))
    struct.pack_into(">I", buf, 17, crc)


def check_lz4_frame(frame, magic):
    """Pins what kafka-python writes, so a library update that changes it is noticed: for magic
    1 and 2, python-lz4's frame with a content size (FLG 0x68) and a correct header checksum; for
    magic 0, FLG 0x60 and Kafka 0.8's "broken" checksum, which also covers the 4 magic bytes."""
    import xxhash

    assert frame[:4] == b"\x04\x22\x4d\x18", "LZ4 frame magic"
    flg, bd = frame[4], frame[5]
    assert bd == 0x40, "LZ4 BD: 64 KiB blocks"
    descriptor_end = 6 + (8 if flg & 0x08 else 0)
    stored = frame[descriptor_end]
    correct = (xxhash.xxh32(bytes(frame[4:descriptor_end])).intdigest() >> 8) & 0xFF
    broken = (xxhash.xxh32(bytes(frame[0:descriptor_end])).intdigest() >> 8) & 0xFF
    if magic == 0:
        assert flg == 0x60 and stored == broken and stored != correct, "v0 LZ4 header"
    else:
        assert flg == 0x68 and stored == correct, "v1/v2 LZ4 header"
    assert frame[-4:] == b"\x00\x00\x00\x00", "LZ4 end mark"


def increment_sequence(base, delta):
    """Kafka's DefaultRecordBatch.incrementSequence: wraps past Int.MAX to 0."""
    if base > INT32_MAX - delta:
        return delta - (INT32_MAX - base) - 1
    return base + delta


def hexor(data):
    return None if data is None else bytes(data).hex()


# ---------------------------------------------------------------------------------------------
# Record inputs. A record is a dict: offset_delta, timestamp, key, value, headers.
# ---------------------------------------------------------------------------------------------
def rec(offset_delta, timestamp, key, value, headers=()):
    return {
        "offset_delta": offset_delta,
        "timestamp": timestamp,
        "key": key,
        "value": value,
        "headers": list(headers),
    }


def json_like_records(count, base_ts):
    """Compressible JSON-ish records, so every codec actually shrinks them.

    kafka-python silently falls back to an uncompressed batch (codec bits 0) when compression
    does not save space; build_v2 asserts that did not happen.
    """
    out = []
    for i in range(count):
        value = (
            '{"id":%d,"user":"user-%04d","event":"page_view","path":"/products/%d",'
            '"tags":["alpha","beta","gamma"],"note":"seglog fixture seglog fixture"}' % (i, i, i)
        ).encode()
        headers = [("content-type", b"application/json")] if i % 2 == 0 else []
        out.append(rec(i, base_ts + 10 * i, b"user-%04d" % i, value, headers))
    return out


# ---------------------------------------------------------------------------------------------
# v2 batches
# ---------------------------------------------------------------------------------------------
class V2Batch:
    """A built v2 batch plus the facts the generator intends it to carry."""

    def __init__(self, buf, records, **facts):
        self.buf = buf
        self.records = records
        self.facts = facts


def build_v2(
    records,
    codec="none",
    base_offset=0,
    leader_epoch=0,
    producer_id=NO_PRODUCER_ID,
    producer_epoch=NO_PRODUCER_EPOCH,
    base_sequence=NO_SEQUENCE,
    transactional=False,
):
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=CODEC_IDS[codec],
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 20,
    )
    for r in records:
        meta = builder.append(
            r["offset_delta"], timestamp=r["timestamp"], key=r["key"], value=r["value"],
            headers=r["headers"],
        )
        assert meta is not None
    buf = bytearray(builder.build())
    attributes = struct.unpack_from(">h", buf, 21)[0]
    assert attributes & 0x07 == CODEC_IDS[codec], (
        "kafka-python wrote codec %d instead of %s (it falls back to none when compression "
        "does not help)" % (attributes & 0x07, codec)
    )
    if codec == "lz4":
        check_lz4_frame(buf[61:], 2)
    # baseOffset (bytes 0..8) and partitionLeaderEpoch (12..16) are assigned by the broker and
    # are outside the CRC, exactly as the broker overwrites them on append.
    struct.pack_into(">q", buf, 0, base_offset)
    struct.pack_into(">i", buf, 12, leader_epoch)
    return V2Batch(buf, records, timestamp_type="CreateTime", control=False)


def set_log_append_time(batch, broker_time):
    """What the broker does for message.timestamp.type=LogAppendTime: set attribute bit 3, set
    maxTimestamp to its clock, recompute the CRC. Records keep their create-time deltas."""
    buf = batch.buf
    attributes = struct.unpack_from(">h", buf, 21)[0]
    struct.pack_into(">h", buf, 21, attributes | 0x08)
    struct.pack_into(">q", buf, 35, broker_time)
    restamp_v2_crc(buf)
    batch.facts["timestamp_type"] = "LogAppendTime"
    return batch


def set_control(batch):
    """Set attribute bit 5 (control batch), which kafka-python's producer-side builder never
    sets, and recompute the CRC."""
    buf = batch.buf
    attributes = struct.unpack_from(">h", buf, 21)[0]
    struct.pack_into(">h", buf, 21, attributes | 0x20)
    restamp_v2_crc(buf)
    batch.facts["control"] = True
    return batch


def empty_v2_batch(
    base_offset, last_offset_delta, max_timestamp, producer_id, producer_epoch, base_sequence,
    leader_epoch, transactional,
):
    """A count-0 batch as the log cleaner leaves it (MemoryRecords writeEmptyHeader): header only,
    baseTimestamp -1, maxTimestamp and lastOffsetDelta preserved. Written by hand: kafka-python's
    builder, asked for no records, writes baseTimestamp 0 and maxTimestamp 0."""
    attributes = 0x10 if transactional else 0
    buf = bytearray(
        V2_HEADER.pack(
            base_offset, 61 - 12, leader_epoch, 2, 0, attributes, last_offset_delta, -1,
            max_timestamp, producer_id, producer_epoch, base_sequence, 0,
        )
    )
    restamp_v2_crc(buf)
    return V2Batch(buf, [], timestamp_type="CreateTime", control=False)


def v2_batch_json(batch, position):
    buf = batch.buf
    (
        base_offset, length, leader_epoch, magic, crc, attributes, last_offset_delta, base_ts,
        max_ts, producer_id, producer_epoch, base_sequence, count,
    ) = V2_HEADER.unpack_from(buf, 0)
    assert magic == 2
    assert length == len(buf) - 12
    assert crc == crc32c_castagnoli(buf[21:]), "CRC-32C mismatch"
    assert count == len(batch.records)
    ts_type = batch.facts["timestamp_type"]
    assert bool(attributes & 0x08) == (ts_type == "LogAppendTime")
    assert bool(attributes & 0x20) == batch.facts["control"]
    if batch.records:
        # The facts the generator intends, independent of what the header says.
        assert base_ts == batch.records[0]["timestamp"]
        assert last_offset_delta == batch.records[-1]["offset_delta"]
        if ts_type == "CreateTime":
            assert max_ts == max(r["timestamp"] for r in batch.records)
    records = []
    for r in batch.records:
        timestamp = max_ts if ts_type == "LogAppendTime" else r["timestamp"]
        entry = {
            "offset": base_offset + r["offset_delta"],
            "offset_delta": r["offset_delta"],
            "timestamp": timestamp,
            "timestamp_delta": r["timestamp"] - base_ts,
            "timestamp_type": ts_type,
            "sequence": (
                increment_sequence(base_sequence, r["offset_delta"]) if base_sequence >= 0 else -1
            ),
            "key": hexor(r["key"]),
            "value": hexor(r["value"]),
            "headers": [[k, hexor(v)] for k, v in r["headers"]],
        }
        if batch.facts["control"]:
            version, ctype = struct.unpack(">hh", r["key"])
            value_version, coordinator_epoch = struct.unpack(">hi", r["value"])
            entry["control"] = {
                "version": version,
                "type": {0: "ABORT", 1: "COMMIT"}[ctype],
                "type_id": ctype,
                "value_version": value_version,
                "coordinator_epoch": coordinator_epoch,
            }
        records.append(entry)
    return {
        "position": position,
        "size_in_bytes": len(buf),
        "base_offset": base_offset,
        "last_offset": base_offset + last_offset_delta,
        "last_offset_delta": last_offset_delta,
        "partition_leader_epoch": leader_epoch,
        "magic": 2,
        "crc": crc,
        "attributes": attributes,
        "codec": CODEC_NAMES[attributes & 0x07],
        "timestamp_type": ts_type,
        "is_transactional": bool(attributes & 0x10),
        "is_control": bool(attributes & 0x20),
        "has_delete_horizon": bool(attributes & 0x40),
        "base_timestamp": base_ts,
        "max_timestamp": max_ts,
        "producer_id": producer_id,
        "producer_epoch": producer_epoch,
        "base_sequence": base_sequence,
        "last_sequence": (
            increment_sequence(base_sequence, last_offset_delta) if base_sequence >= 0 else -1
        ),
        "count": count,
        "records": records,
    }




# ---------------------------------------------------------------------------------------------
# v0 / v1 message sets
# ---------------------------------------------------------------------------------------------
class LegacyEntry:
    """One message-set entry: a plain message, or a compressed wrapper with its inner records.

    records hold absolute offsets and create timestamps as the generator intends them.
    """

    def __init__(self, buf, magic, records, timestamp_type):
        self.buf = buf
        self.magic = magic
        self.records = records
        self.timestamp_type = timestamp_type


def legacy_plain(magic, offset, timestamp, key, value):
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    assert builder.append(offset, timestamp=timestamp, key=key, value=value) is not None
    buf = bytearray(builder.build())
    ts = timestamp if magic == 1 else -1
    records = [{"offset": offset, "timestamp": ts, "key": key, "value": value}]
    return LegacyEntry(buf, magic, records, "CreateTime" if magic == 1 else "NoTimestampType")


def legacy_compressed(magic, codec, first_offset, inner, log_append_time=None):
    """A wrapper message holding `inner` = [(timestamp, key, value)], with absolute offsets
    first_offset.. . kafka-python writes inner offsets as given (v1: relative 0..n-1, as the Java
    producer does; v0: absolute) and the wrapper with offset 0 and, for v1, timestamp 0. The broker
    then sets the wrapper offset to the last absolute offset (outside the CRC) and, for v1, the
    wrapper timestamp to the max inner timestamp or its LogAppendTime (inside the CRC, so the
    CRC-32 is recomputed), which is what this function does too."""
    builder = LegacyRecordBatchBuilder(
        magic=magic, compression_type=CODEC_IDS[codec], batch_size=1 << 20,
    )
    for i, (ts, key, value) in enumerate(inner):
        inner_offset = i if magic == 1 else first_offset + i
        assert builder.append(inner_offset, timestamp=ts, key=key, value=value) is not None
    buf = bytearray(builder.build())
    if codec == "lz4":
        key_at = 18 if magic == 0 else 26
        assert struct.unpack_from(">i", buf, key_at)[0] == -1, "wrapper key is null"
        value_len = struct.unpack_from(">i", buf, key_at + 4)[0]
        check_lz4_frame(buf[key_at + 8:key_at + 8 + value_len], magic)
    last_offset = first_offset + len(inner) - 1
    struct.pack_into(">q", buf, 0, last_offset)
    ts_type = "NoTimestampType"
    if magic == 1:
        attributes = buf[17]
        if log_append_time is None:
            ts_type = "CreateTime"
            wrapper_ts = max(ts for ts, _, _ in inner)
        else:
            ts_type = "LogAppendTime"
            wrapper_ts = log_append_time
            buf[17] = attributes | 0x08
        struct.pack_into(">q", buf, 18, wrapper_ts)
        struct.pack_into(">I", buf, 12, zlib.crc32(bytes(buf[16:])))
    records = []
    for i, (ts, key, value) in enumerate(inner):
        if magic == 0:
            timestamp = -1
        elif log_append_time is not None:
            timestamp = log_append_time
        else:
            timestamp = ts
        records.append(
            {"offset": first_offset + i, "timestamp": timestamp, "key": key, "value": value}
        )
    return LegacyEntry(buf, magic, records, ts_type)


def legacy_entry_json(entry, position):
    buf = entry.buf
    offset, length, crc, magic, attributes = struct.unpack_from(">qiIbb", buf, 0)
    assert magic == entry.magic
    assert length == len(buf) - 12
    assert crc == zlib.crc32(bytes(buf[16:])), "CRC-32 mismatch"
    max_ts = struct.unpack_from(">q", buf, 18)[0] if magic == 1 else -1
    assert offset == entry.records[-1]["offset"]
    records = [
        {
            "offset": r["offset"],
            "offset_delta": None,
            "timestamp": r["timestamp"],
            "timestamp_delta": None,
            "timestamp_type": entry.timestamp_type,
            "sequence": -1,
            "key": hexor(r["key"]),
            "value": hexor(r["value"]),
            "headers": [],
        }
        for r in entry.records
    ]
    return {
        "position": position,
        "size_in_bytes": len(buf),
        "base_offset": entry.records[0]["offset"],
        "last_offset": offset,
        "last_offset_delta": None,
        "partition_leader_epoch": -1,
        "magic": magic,
        "crc": crc,
        "attributes": attributes & 0xFF,
        "codec": CODEC_NAMES[attributes & 0x07],
        "timestamp_type": entry.timestamp_type,
        "is_transactional": False,
        "is_control": False,
        "has_delete_horizon": False,
        "base_timestamp": None,
        "max_timestamp": max_ts,
        "producer_id": -1,
        "producer_epoch": -1,
        "base_sequence": -1,
        "last_sequence": -1,
        "count": len(records),
        "records": records,
    }


# ---------------------------------------------------------------------------------------------
# Cross-check with kafka-python's own reader. It has no notion of an empty batch's or of v0's
# timestamps in Java's terms, so those two differences are mapped explicitly.
# ---------------------------------------------------------------------------------------------
def cross_check_with_kafka_python(data, doc):
    records = MemoryRecords(bytes(data))
    seen = 0
    while records.has_next():
        batch = records.next_batch()
        expected = doc["batches"][seen]
        seen += 1
        assert batch.validate_crc(), "kafka-python says the CRC of batch %d is bad" % seen
        assert batch.magic == expected["magic"]
        if isinstance(batch, DefaultRecordBatch):
            assert batch.base_offset == expected["base_offset"]
            assert batch.last_offset == expected["last_offset"]
            assert batch.records_count == expected["count"]
        got = list(batch)
        assert len(got) == expected["count"]
        for record, want in zip(got, expected["records"]):
            timestamp = -1 if record.timestamp is None else record.timestamp
            assert record.offset == want["offset"], (record, want)
            assert timestamp == want["timestamp"], (record, want)
            assert hexor(record.key) == want["key"], (record, want)
            assert hexor(record.value) == want["value"], (record, want)
            assert [[k, hexor(v)] for k, v in record.headers] == want["headers"], (record, want)
    assert seen == len(doc["batches"])


# ---------------------------------------------------------------------------------------------
# The fixtures
# ---------------------------------------------------------------------------------------------
def fixtures():
    """Yield (name, description, [V2Batch | LegacyEntry])."""
    codec_records = json_like_records(6, T0)
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"]:
        yield (
            "v2_codec_%s" % codec,
            "v2, codec %s: six JSON-like records, headers on the even ones, timestamps T0+10*i, "
            "base offset 0, leader epoch 0 (as kafka-python writes it), no producer id." % codec,
            [build_v2(codec_records, codec=codec)],
        )

    yield (
        "v2_nulls",
        "v2, uncompressed: null key, null value (tombstone), both null, and empty (not null) "
        "key and value, which must stay distinct from null.",
        [
            build_v2(
                [
                    rec(0, T0, None, b"value-without-key"),
                    rec(1, T0 + 1, b"tombstone-key", None),
                    rec(2, T0 + 2, None, None),
                    rec(3, T0 + 3, b"", b""),
                    rec(4, T0 + 4, b"k", b"v"),
                ],
                base_offset=7,
            )
        ],
    )

    yield (
        "v2_headers",
        "v2, uncompressed: no headers; duplicate header keys kept in order; a null header value; "
        "an empty header value; an empty header key; a non-ASCII UTF-8 header key.",
        [
            build_v2(
                [
                    rec(0, T0, b"k0", b"no headers"),
                    rec(
                        1, T0 + 1, b"k1", b"duplicate keys",
                        [("trace", b"first"), ("trace", b"second"), ("other", b"x"),
                         ("trace", b"third")],
                    ),
                    rec(2, T0 + 2, b"k2", b"null header value",
                        [("nullable", None), ("empty", b"")]),
                    rec(3, T0 + 3, b"k3", b"odd keys",
                        [("", b"empty key"), ("cl\u00e9-\u00fc", b"\x00\xff\x01")]),
                ],
                base_offset=20,
            )
        ],
    )

    yield (
        "v2_out_of_order_timestamps",
        "v2, uncompressed: timestamps go down and up inside one batch, so deltas are negative and "
        "maxTimestamp is neither the first nor the last record's.",
        [
            build_v2(
                [
                    rec(0, T0 + 5000, b"a", b"1"),
                    rec(1, T0 + 1000, b"b", b"2"),
                    rec(2, T0 + 9000, b"c", b"3"),
                    rec(3, T0 + 7000, b"d", b"4"),
                    rec(4, T0 - 3000, b"e", b"5"),
                ],
                base_offset=40,
            )
        ],
    )

    yield (
        "v2_large_timestamp_delta",
        "v2, uncompressed: timestamp deltas of 2^31+7 ms, 2^40+3 ms and -(2^32) ms, which need "
        "varlong (more than 5 bytes or more than 31 bits).",
        [
            build_v2(
                [
                    rec(0, T0, b"a", b"base"),
                    rec(1, T0 + (1 << 31) + 7, b"b", b"2^31+7"),
                    rec(2, T0 + (1 << 40) + 3, b"c", b"2^40+3"),
                    rec(3, T0 - (1 << 32), b"d", b"-2^32"),
                ],
                base_offset=50,
            )
        ],
    )

    yield (
        "v2_log_append_time",
        "v2, uncompressed: built as CreateTime by kafka-python, then patched as a broker with "
        "LogAppendTime would: attribute bit 3 set, maxTimestamp = %d, CRC-32C recomputed by the "
        "generator. Every record's timestamp reads as maxTimestamp; the stored deltas are the "
        "original create-time ones." % LOG_APPEND_TIME,
        [
            set_log_append_time(
                build_v2(
                    [
                        rec(0, T0, b"a", b"1"),
                        rec(1, T0 + 20, b"b", b"2"),
                        rec(2, T0 + 10, b"c", b"3"),
                    ],
                    base_offset=60,
                ),
                LOG_APPEND_TIME,
            )
        ],
    )

    yield (
        "v2_transactional",
        "v2, uncompressed: a transactional batch (attribute bit 4) with producer id 4242, "
        "epoch 3, base sequence 17.",
        [
            build_v2(
                [rec(i, T0 + i, b"tx-%d" % i, b"in transaction %d" % i) for i in range(3)],
                base_offset=70,
                producer_id=4242,
                producer_epoch=3,
                base_sequence=17,
                transactional=True,
            )
        ],
    )

    yield (
        "v2_idempotent_sequence_wrap",
        "v2, uncompressed, idempotent (not transactional): producer id 99, epoch 0, base sequence "
        "2147483646 and three records, so the sequence wraps past Int.MAX to 0 "
        "(lastSequence = 0).",
        [
            build_v2(
                [rec(i, T0 + i, b"seq-%d" % i, b"v") for i in range(3)],
                base_offset=80,
                producer_id=99,
                producer_epoch=0,
                base_sequence=INT32_MAX - 1,
            )
        ],
    )

    commit = rec(0, T0 + 100, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 7))
    abort = rec(0, T0 + 200, struct.pack(">hh", 0, 0), struct.pack(">hi", 0, 8))
    yield (
        "v2_control_markers",
        "v2, two control batches (attributes bits 4 and 5): a COMMIT marker at offset 73 for "
        "producer 4242 epoch 3 (coordinator epoch 7), then an ABORT marker at offset 74 for "
        "producer 4243 epoch 1 (coordinator epoch 8). kafka-python's builder cannot set the "
        "control bit, so the generator sets it and recomputes the CRC-32C; base sequence is -1 "
        "as the broker writes markers.",
        [
            set_control(
                build_v2([commit], base_offset=73, producer_id=4242, producer_epoch=3,
                         transactional=True)
            ),
            set_control(
                build_v2([abort], base_offset=74, producer_id=4243, producer_epoch=1,
                         transactional=True)
            ),
        ],
    )

    yield (
        "v2_empty_batch",
        "v2, count 0, as the log cleaner leaves a batch whose records were all removed: header "
        "only (61 bytes), baseTimestamp -1, lastOffsetDelta 4 and maxTimestamp preserved, "
        "producer id 77 epoch 2 base sequence 10, transactional. Written by hand by the generator "
        "(kafka-python cannot produce this), CRC-32C by the generator.",
        [
            empty_v2_batch(
                base_offset=90, last_offset_delta=4, max_timestamp=T0 + 40, producer_id=77,
                producer_epoch=2, base_sequence=10, leader_epoch=3, transactional=True,
            )
        ],
    )

    yield (
        "v2_offset_gaps",
        "v2, uncompressed: offset deltas 0, 2, 5 inside one batch (as compaction leaves them), "
        "so lastOffsetDelta 5 with count 3.",
        [
            build_v2(
                [rec(0, T0, b"a", b"kept"), rec(2, T0 + 2, b"b", b"kept"),
                 rec(5, T0 + 5, b"c", b"kept")],
                base_offset=1000,
                leader_epoch=2,
            )
        ],
    )

    yield (
        "v2_multi_batch",
        "v2, three batches back to back as in a .log: base offsets 100 (3 records, none, leader "
        "epoch 5), 103 (2 records, none, epoch 5) and 110 (4 records, gzip, epoch 6), with an "
        "offset gap 105..109 between the second and third batch.",
        [
            build_v2([rec(i, T0 + i, b"m%d" % i, b"batch one") for i in range(3)],
                     base_offset=100, leader_epoch=5),
            build_v2([rec(i, T0 + 10 + i, b"n%d" % i, b"batch two") for i in range(2)],
                     base_offset=103, leader_epoch=5),
            build_v2(json_like_records(4, T0 + 20), codec="gzip", base_offset=110,
                     leader_epoch=6),
        ],
    )

    plain_inputs = [
        (T0, b"key-a", b"value-a"),
        (T0 + 5, None, b"no key"),
        (T0 + 3, b"key-c", None),
    ]
    for magic in (0, 1):
        first = 200 + 100 * magic
        yield (
            "v%d_none" % magic,
            "magic %d, uncompressed: three messages at offsets %d..%d, each its own entry; a null "
            "key and a null value.%s"
            % (magic, first, first + 2,
               " v0 has no timestamp field." if magic == 0 else " Timestamps out of order."),
            [legacy_plain(magic, first + i, ts, k, v) for i, (ts, k, v) in enumerate(plain_inputs)],
        )
        compressed_inputs = [
            (T0 + 10 * i, b"key-%d" % i,
             b"legacy compressed value number %d, legacy compressed value" % i)
            for i in range(4)
        ]
        compressed_inputs[1] = (T0 + 2, None, compressed_inputs[1][2])
        for codec_index, codec in enumerate(["gzip", "snappy", "lz4"]):
            first_c = first + 10 * (codec_index + 1)
            detail = (
                "inner offsets absolute (%d..%d), no timestamps" % (first_c, first_c + 3)
                if magic == 0
                else "inner offsets relative 0..3, wrapper timestamp patched to the max inner "
                "timestamp and CRC-32 recomputed"
            )
            if magic == 0 and codec == "lz4":
                detail += "; LZ4 frame with the broken (v0) header checksum over magic+FLG+BD"
            yield (
                "v%d_%s" % (magic, codec),
                "magic %d, %s wrapper holding four messages at absolute offsets %d..%d; wrapper "
                "offset patched to the last one (%d); %s; one null key."
                % (magic, codec, first_c, first_c + 3, first_c + 3, detail),
                [legacy_compressed(magic, codec, first_c, compressed_inputs)],
            )
    yield (
        "v1_gzip_log_append_time",
        "magic 1, gzip wrapper with LogAppendTime (attribute bit 3 on the wrapper, wrapper "
        "timestamp %d, CRC-32 recomputed): every inner record reads the wrapper's timestamp; "
        "inner offsets relative 0..2, absolute 400..402." % LOG_APPEND_TIME,
        [
            legacy_compressed(
                1, "gzip", 400,
                [(T0 + 1, b"a", b"log append time " * 4), (T0 + 3, b"b", b"log append time " * 4),
                 (T0 + 2, b"c", b"log append time " * 4)],
                log_append_time=LOG_APPEND_TIME,
            )
        ],
    )


def to_json(doc):
    """JSON with one line per field and one line per record, so diffs stay readable."""

    def dump(value):
        return json.dumps(value, ensure_ascii=False)

    lines = ["{"]
    top = list(doc.items())
    for i, (key, value) in enumerate(top):
        comma = "," if i + 1 < len(top) else ""
        if key != "batches":
            lines.append(" %s: %s%s" % (dump(key), dump(value), comma))
            continue
        lines.append(' "batches": [')
        for j, batch in enumerate(value):
            lines.append("  {")
            fields = list(batch.items())
            for k, (bkey, bvalue) in enumerate(fields):
                bcomma = "," if k + 1 < len(fields) else ""
                if bkey != "records":
                    lines.append("   %s: %s%s" % (dump(bkey), dump(bvalue), bcomma))
                    continue
                if not bvalue:
                    lines.append('   "records": []%s' % bcomma)
                    continue
                lines.append('   "records": [')
                for m, record in enumerate(bvalue):
                    rcomma = "," if m + 1 < len(bvalue) else ""
                    lines.append("    %s%s" % (dump(record), rcomma))
                lines.append("   ]%s" % bcomma)
            lines.append("  }%s" % ("," if j + 1 < len(value) else ""))
        lines.append(" ]%s" % comma)
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == doc
    return text


def library_versions():
    names = ["kafka-python", "python-snappy", "cramjam", "lz4", "zstandard", "xxhash"]
    lines = ["python %s (%s)" % (platform.python_version(), platform.python_implementation())]
    lines += ["%s %s" % (n, importlib.metadata.version(n)) for n in names]
    lines.append("zlib %s" % zlib.ZLIB_RUNTIME_VERSION)
    return lines


def main():
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    # Fixtures this script no longer makes must not linger and keep being tested.
    for stale in list(OUT_DIR.glob("*.bin")) + list(OUT_DIR.glob("*.json")):
        stale.unlink()
    generator = "kafka-python %s" % importlib.metadata.version("kafka-python")
    total = 0
    names = []
    for name, description, entries in fixtures():
        assert name not in names, name
        names.append(name)
        data = bytearray()
        batches = []
        for entry in entries:
            if isinstance(entry, V2Batch):
                batches.append(v2_batch_json(entry, len(data)))
            else:
                batches.append(legacy_entry_json(entry, len(data)))
            data += entry.buf
        doc = {
            "name": name,
            "description": description,
            "generator": generator,
            "size_in_bytes": len(data),
            "batches": batches,
        }
        cross_check_with_kafka_python(data, doc)
        (OUT_DIR / (name + ".bin")).write_bytes(bytes(data))
        with open(OUT_DIR / (name + ".json"), "w", encoding="utf-8", newline="\n") as f:
            f.write(to_json(doc))
        total += len(data)
    with open(OUT_DIR / "generator-versions.txt", "w", encoding="utf-8", newline="\n") as f:
        f.write("# Written by testdata/gen/generate.py; the libraries that made these fixtures.\n")
        for line in library_versions():
            f.write(line + "\n")
    print("wrote %d fixtures (%d bytes of batches) to %s" % (len(names), total,
                                                          OUT_DIR.relative_to(ROOT)))

    index_script = ROOT / "testdata" / "gen" / "index_files.py"
    if index_script.exists():
        subprocess.run([sys.executable, str(index_script)], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()

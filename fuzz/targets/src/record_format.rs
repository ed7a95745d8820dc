//! Target `record_format`: batch and record decoding for every codec and the legacy v0/v1
//! message sets, on a byte buffer.

use seglog_record_format::{
    self as rf, Batch, Compression, LegacyBatch, RecordBatch, TimestampType, batches,
};

/// The decompression limit used here: large enough for every seed, small enough that a
/// decompression bomb costs milliseconds.
const LIMIT: usize = 1 << 20;

/// Round trips are checked on decompressed payloads up to this size.
const ROUND_TRIP_MAX: usize = 64 << 10;

/// The `record_format` target: reads `data` as a buffer of concatenated batches (framing,
/// validation, records, headers, control records, lookups, in-place edits), as one batch, and,
/// with its first byte choosing codec and magic, the rest as one compressed payload.
pub fn record_format(data: &[u8]) {
    walk(data);
    if let Ok(b) = RecordBatch::parse(data) {
        v2(&b);
    }
    if let Ok(l) = LegacyBatch::parse(data) {
        legacy(&l);
    }
    lookups(data);
    edits(data);
    if let Some((&selector, payload)) = data.split_first() {
        codec(selector, payload);
    }
}

fn walk(data: &[u8]) {
    let mut previous_end = 0_usize;
    for framed in batches(data) {
        let Ok(framed) = framed else { break };
        // Framing hands out whole batches, in order, inside the buffer.
        assert!(framed.position() >= previous_end, "batches overlap");
        previous_end = framed.position() + framed.size_in_bytes();
        assert!(
            previous_end <= data.len(),
            "a framed batch runs past the buffer"
        );
        let _ = framed.validate();
        let _ = framed.last_offset();
        match framed.decode() {
            Ok(Batch::V2(b)) => v2(&b),
            Ok(Batch::Legacy(l)) => legacy(&l),
            Err(_) => {}
        }
    }
}

fn v2(b: &RecordBatch<'_>) {
    let _ = b.validate();
    let _ = (
        b.base_offset(),
        b.last_offset(),
        b.last_sequence(),
        b.next_offset(),
        b.compression(),
        b.max_timestamp(),
    );
    let mut scratch = Vec::new();
    if let Ok(records) = b.records_with_limit(&mut scratch, LIMIT) {
        for r in records.flatten() {
            let _ = r.headers().count();
            let _ = r.to_record();
            let _ = r.control();
            let _ = rf::parse_control(r.key(), r.value());
        }
    }
    assert!(scratch.len() <= LIMIT, "decompressed past the limit");
}

fn legacy(l: &LegacyBatch<'_>) {
    let _ = l.validate();
    let _ = (l.compression(), l.last_offset());
    let mut scratch = Vec::new();
    if let Ok(records) = l.records_with_limit(&mut scratch, LIMIT) {
        for r in records.flatten() {
            let _ = r.to_record();
        }
    }
    assert!(scratch.len() <= LIMIT, "decompressed past the limit");
}

/// Kafka's `FileRecords` searches, with targets taken from the buffer's own batches.
fn lookups(data: &[u8]) {
    let mut targets = vec![i64::MIN, -1, 0, i64::MAX];
    for framed in batches(data).flatten().take(8) {
        if let Ok(last) = framed.last_offset() {
            targets.extend([last.saturating_sub(1), last, last.saturating_add(1)]);
        }
        if let Ok(Batch::V2(b)) = framed.decode() {
            targets.push(b.max_timestamp());
        }
    }
    let mut scratch = Vec::new();
    for &t in &targets {
        if let Ok(Some(found)) = rf::find_batch_with_offset(data, 0, t) {
            // The batch found holds an offset at or past the target.
            if let Ok(last) = found.last_offset() {
                assert!(
                    last >= t,
                    "find_batch_with_offset({t}) gave a batch ending at {last}"
                );
            }
        }
        if let Ok(Some(found)) = rf::search_for_timestamp(data, 0, t, 0, &mut scratch) {
            assert!(
                found.timestamp >= t,
                "search_for_timestamp({t}) gave timestamp {}",
                found.timestamp
            );
        }
    }
}

/// In-place edits of the first batch. The CRC does not cover the base offset or the leader
/// epoch, and the edits that change covered fields recompute it: a batch that validated before
/// an edit validates after it.
fn edits(data: &[u8]) {
    let valid_before = RecordBatch::parse(data).is_ok_and(|b| b.validate().is_ok());
    let mut copy = data.to_vec();
    let edited = [
        rf::set_base_offset(&mut copy, 1).is_ok(),
        rf::set_last_offset(&mut copy, 1 << 40).is_ok(),
        rf::set_partition_leader_epoch(&mut copy, 7).is_ok(),
        rf::set_max_timestamp(&mut copy, TimestampType::LogAppendTime, 5).is_ok(),
        rf::set_delete_horizon(&mut copy, 5).is_ok(),
    ];
    if valid_before && edited.iter().all(|&ok| ok) {
        let after = RecordBatch::parse(&copy).expect("an edited batch still parses");
        if let Err(e) = after.validate() {
            panic!("a batch that validated no longer does after in-place edits: {e}");
        }
        assert_eq!(after.last_offset(), 1 << 40, "set_last_offset");
    }
}

/// Decompresses `payload` with the codec and magic `selector` picks; whatever comes out must
/// compress and decompress back to itself.
fn codec(selector: u8, payload: &[u8]) {
    let codec = Compression::ALL
        .get(usize::from(selector) % Compression::ALL.len())
        .copied()
        .unwrap_or(Compression::None);
    let magic = i8::try_from(selector / 5 % 3).unwrap_or(2);
    let mut out = Vec::new();
    let result = rf::decompress(codec, payload, magic, &mut out, LIMIT);
    assert!(out.len() <= LIMIT, "{codec}: decompressed past the limit");
    if result.is_ok() && out.len() <= ROUND_TRIP_MAX {
        let mut z = Vec::new();
        rf::compress(codec, &out, &mut z).expect("compressing decompressed bytes");
        let mut back = Vec::new();
        rf::decompress(codec, &z, 2, &mut back, LIMIT).expect("decompressing our own output");
        assert!(back == out, "{codec}: a round trip changed the bytes");
    }
}

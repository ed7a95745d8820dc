//! The in-place edits the log layer makes on a v2 batch: offset assignment and leader-epoch
//! stamping leave the CRC alone (the fields lie before byte 21); LogAppendTime stamping and
//! delete-horizon marking rewrite it; nothing else in the batch moves.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{
    BatchOptions, Compression, NewRecord, RecordBatch, TimestampType, batches, build_batch,
    set_base_offset, set_delete_horizon, set_max_timestamp, set_partition_leader_epoch,
};

fn log_of_three(codec: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..3 {
        let r = [
            NewRecord::new(0, 100, Some(b"k"), Some(b"v")),
            NewRecord::new(1, 120, None, Some(b"w")),
        ];
        build_batch(&BatchOptions::new(0, codec), r, &mut out).unwrap();
    }
    out
}

#[test]
fn offset_assignment_and_epoch_stamping_keep_the_crc() {
    for codec in Compression::ALL {
        let mut log = log_of_three(codec);
        let spans: Vec<_> = batches(&log)
            .map(|b| b.unwrap())
            .map(|b| (b.position(), b.size_in_bytes()))
            .collect();
        let before = log.clone();
        let mut next = 1000;
        for (pos, size) in &spans {
            let batch = &mut log[*pos..pos + size];
            set_base_offset(batch, next).unwrap();
            set_partition_leader_epoch(batch, 9).unwrap();
            next = RecordBatch::parse(batch).unwrap().next_offset();
        }
        for (pos, size) in &spans {
            let (p, end) = (*pos, pos + size);
            assert_eq!(
                log[p + 8..p + 12],
                before[p + 8..p + 12],
                "length unchanged"
            );
            assert_eq!(
                log[p + 16..end],
                before[p + 16..end],
                "only offset and epoch change"
            );
        }
        let offsets: Vec<i64> = batches(&log)
            .flat_map(|b| b.unwrap().decode().unwrap().to_records().unwrap())
            .map(|r| r.offset)
            .collect();
        assert_eq!(offsets, vec![1000, 1001, 1002, 1003, 1004, 1005], "{codec}");
        assert!(batches(&log).all(|b| b.unwrap().is_valid()));
    }
}

#[test]
fn log_append_time_stamping_rewrites_the_crc() {
    let mut log = log_of_three(Compression::Lz4);
    let first = batches(&log).next().unwrap().unwrap().size_in_bytes();
    let old_crc = RecordBatch::parse(&log).unwrap().crc();
    set_max_timestamp(&mut log[..first], TimestampType::LogAppendTime, 55_555).unwrap();
    let b = RecordBatch::parse(&log).unwrap();
    assert_ne!(b.crc(), old_crc);
    b.validate().unwrap();
    assert_eq!(b.attributes().0, 0x0B);
    assert!(
        b.to_records()
            .unwrap()
            .iter()
            .all(|r| r.timestamp == 55_555)
    );
    // Back to CreateTime with the original max: the original bytes return.
    let fresh = log_of_three(Compression::Lz4);
    set_max_timestamp(&mut log[..first], TimestampType::CreateTime, 120).unwrap();
    assert_eq!(log, fresh);
}

#[test]
fn delete_horizon_marking_sets_bit_six_and_the_base_timestamp() {
    let mut log = log_of_three(Compression::None);
    let size = batches(&log).next().unwrap().unwrap().size_in_bytes();
    set_delete_horizon(&mut log[..size], 86_400_000).unwrap();
    let b = RecordBatch::parse(&log).unwrap();
    b.validate().unwrap();
    assert!(b.has_delete_horizon());
    assert_eq!(b.base_timestamp(), 86_400_000);
    assert!(
        batches(&log)
            .skip(1)
            .all(|b| b.unwrap().v2().unwrap().delete_horizon_ms().is_none())
    );
}

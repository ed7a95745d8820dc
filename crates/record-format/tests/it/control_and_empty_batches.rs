//! Control batches (ABORT/COMMIT markers and KRaft types) decode to a typed form, and empty
//! batches (count 0, baseTimestamp -1) as compaction leaves them read as headers only.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{
    BatchOptions, ControlRecordType, ControlValue, EndTransactionMarker, NewRecord, RecordBatch,
    TimestampType, batches, build_batch, write_empty_batch,
};

fn txn_opts(base_offset: i64, control: bool) -> BatchOptions {
    BatchOptions::default()
        .with_base_offset(base_offset)
        .with_producer_id(4242)
        .with_producer_epoch(3)
        .with_base_sequence(if control { -1 } else { 0 })
        .with_transactional(true)
        .with_control(control)
}

#[test]
fn commit_and_abort_markers_decode() {
    let mut buf = Vec::new();
    build_batch(
        &txn_opts(0, false),
        [NewRecord::new(0, 10, None, Some(b"data"))],
        &mut buf,
    )
    .unwrap();
    for (i, kind) in [ControlRecordType::Commit, ControlRecordType::Abort]
        .into_iter()
        .enumerate()
    {
        let key = kind.key_bytes();
        let value = EndTransactionMarker {
            version: 0,
            coordinator_epoch: 17,
        }
        .value_bytes();
        let r = [NewRecord::new(0, 20, Some(&key), Some(&value))];
        build_batch(&txn_opts(1 + i64::try_from(i).unwrap(), true), r, &mut buf).unwrap();
    }
    let framed: Vec<_> = batches(&buf).map(Result::unwrap).collect();
    assert_eq!(framed.len(), 3);
    for (f, kind) in framed[1..]
        .iter()
        .zip([ControlRecordType::Commit, ControlRecordType::Abort])
    {
        let b = f.v2().unwrap();
        b.validate().unwrap();
        assert!(b.is_control() && b.is_transactional());
        assert_eq!(b.producer_id(), 4242);
        let rec = b.records().unwrap().next().unwrap().unwrap();
        let c = rec.control().unwrap();
        assert_eq!((c.version, c.kind), (0, kind));
        assert_eq!(
            c.value,
            ControlValue::EndTransaction(EndTransactionMarker {
                version: 0,
                coordinator_epoch: 17
            })
        );
    }
}

#[test]
fn kraft_control_records_decode_to_typed_values() {
    // Values as Kafka's flexible message encoding writes them at version 0 (no tagged fields).
    let leader_change: &[u8] = &[
        0, 0, 0, 0, 0, 1, 3, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 2, 0, 0, 0, 1, 0, 0,
    ];
    let cases: [(i16, &[u8]); 7] = [
        (2, leader_change),
        (3, &[0, 0, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0]),
        (4, &[0, 0, 0]),
        (5, &[0, 0, 0, 1, 0]),
        // VotersRecord: no voters, no tagged fields (kraft_voters.rs decodes real ones).
        (6, &[0, 0, 1, 0]),
        (-1, b"anything"),
        (7, b"anything"),
    ];
    let keys: Vec<[u8; 4]> = cases
        .iter()
        .map(|(id, _)| ControlRecordType::from_id(*id).key_bytes())
        .collect();
    let records: Vec<_> = keys
        .iter()
        .zip(&cases)
        .enumerate()
        .map(|(i, (k, (_, v)))| {
            NewRecord::new(i32::try_from(i).unwrap(), 5, Some(&k[..]), Some(*v))
        })
        .collect();
    let opts = BatchOptions::default().with_control(true);
    let mut buf = Vec::new();
    build_batch(&opts, records, &mut buf).unwrap();
    let b = RecordBatch::parse(&buf).unwrap();
    let got: Vec<_> = b
        .records()
        .unwrap()
        .map(|r| r.unwrap().control().unwrap())
        .collect();
    let ids: Vec<i16> = got.iter().map(|c| c.kind.id()).collect();
    assert_eq!(ids, cases.iter().map(|c| c.0).collect::<Vec<_>>());
    let ControlValue::LeaderChange(lc) = got[0].value else {
        panic!("{:?}", got[0])
    };
    assert_eq!(
        (lc.leader_id, lc.voters.iter().collect::<Vec<_>>()),
        (1, vec![1, 2])
    );
    assert_eq!(lc.granting_voters.iter().collect::<Vec<_>>(), vec![1]);
    assert_eq!(got[1].kind, ControlRecordType::SnapshotHeader);
    assert_eq!(
        got[1].value,
        ControlValue::SnapshotHeader {
            version: 0,
            last_contained_log_timestamp: 1_700_000_000_000
        }
    );
    assert_eq!(got[2].value, ControlValue::SnapshotFooter { version: 0 });
    assert_eq!(
        got[3].value,
        ControlValue::KraftVersion {
            version: 0,
            kraft_version: 1
        }
    );
    assert_eq!(
        got[4].value,
        ControlValue::KraftVoters {
            version: 0,
            rest: &[1, 0]
        }
    );
    assert_eq!(got[5].kind, ControlRecordType::Unknown(-1));
    assert_eq!(got[6].value, ControlValue::Raw(Some(&b"anything"[..])));
}

#[test]
fn a_malformed_kraft_value_is_corruption_at_the_record() {
    let key = ControlRecordType::SnapshotHeader.key_bytes();
    let opts = BatchOptions::default().with_control(true);
    let mut buf = Vec::new();
    build_batch(
        &opts,
        [NewRecord::new(0, 5, Some(&key), Some(&[0, 0, 1]))],
        &mut buf,
    )
    .unwrap();
    let rec = RecordBatch::parse(&buf)
        .unwrap()
        .records()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let err = rec.control().unwrap_err();
    assert_eq!(
        err.position(),
        Some(61),
        "the record's position in the buffer"
    );
}

#[test]
fn empty_batches_read_as_headers_only() {
    let mut buf = Vec::new();
    let opts = txn_opts(100, false).with_timestamp_type(TimestampType::CreateTime);
    write_empty_batch(&opts, 4, 1_700_000_000_000, &mut buf).unwrap();
    build_batch(
        &BatchOptions::new(105, seglog_record_format::Compression::None),
        [NewRecord::new(0, 1, None, None)],
        &mut buf,
    )
    .unwrap();
    let framed: Vec<_> = batches(&buf).map(Result::unwrap).collect();
    assert_eq!(framed.len(), 2);
    assert_eq!(framed[0].size_in_bytes(), 61);
    let b = framed[0].v2().unwrap();
    b.validate().unwrap();
    assert_eq!(
        (b.records_count(), b.base_timestamp(), b.max_timestamp()),
        (0, -1, 1_700_000_000_000)
    );
    assert_eq!(
        (b.base_offset(), b.last_offset(), b.next_offset()),
        (100, 104, 105)
    );
    assert_eq!((b.base_sequence(), b.last_sequence()), (0, 4));
    assert_eq!(b.records().unwrap().count(), 0);
    let mut scratch = Vec::new();
    assert_eq!(b.records_with(&mut scratch).unwrap().count(), 0);
}

#[test]
fn log_append_time_and_delete_horizon_bits() {
    let opts = BatchOptions::default()
        .with_timestamp_type(TimestampType::LogAppendTime)
        .with_log_append_time(5_000)
        .with_delete_horizon_ms(Some(9_000));
    let mut buf = Vec::new();
    build_batch(
        &opts,
        [
            NewRecord::new(0, 100, None, None),
            NewRecord::new(1, 300, None, None),
        ],
        &mut buf,
    )
    .unwrap();
    let b = RecordBatch::parse(&buf).unwrap();
    assert_eq!(b.attributes().0, 0x48);
    assert_eq!(
        (b.base_timestamp(), b.delete_horizon_ms(), b.max_timestamp()),
        (9_000, Some(9_000), 5_000)
    );
    let recs: Vec<_> = b.records().unwrap().map(Result::unwrap).collect();
    assert!(recs.iter().all(|r| r.timestamp() == 5_000));
    assert_eq!(
        recs[1].timestamp_delta(),
        300 - 9_000,
        "deltas are relative to the horizon"
    );

    let opts = BatchOptions::default().with_delete_horizon_ms(Some(9_000));
    let mut buf = Vec::new();
    build_batch(
        &opts,
        [
            NewRecord::new(0, 100, None, None),
            NewRecord::new(1, 300, None, None),
        ],
        &mut buf,
    )
    .unwrap();
    let ts: Vec<_> = RecordBatch::parse(&buf)
        .unwrap()
        .to_records()
        .unwrap()
        .iter()
        .map(|r| r.timestamp)
        .collect();
    assert_eq!(ts, vec![100, 300]);
}

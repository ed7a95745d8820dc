//! Leader appends of idempotent producers against a simple model of Kafka's rules: an older
//! epoch is fenced; a newer epoch (or a new producer) starts at sequence 0, unless the producer
//! had no epoch; within an epoch each batch continues the last sequence (0 after i32::MAX).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::HashMap;

use proptest::prelude::*;
use seglog_log::RealFs;
use seglog_log::producer::{
    AppendOrigin, LogOffsetMetadata, ProducerError, ProducerStateManager,
    ProducerStateManagerConfig,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Fenced,
    OutOfOrder,
}

fn model(state: Option<(i16, i32)>, epoch: i16, first_seq: i32) -> Verdict {
    match state {
        None => Verdict::Ok,
        Some((current, _)) if epoch < current => Verdict::Fenced,
        Some((current, _)) if epoch > current => {
            if first_seq == 0 {
                Verdict::Ok
            } else {
                Verdict::OutOfOrder
            }
        }
        Some((_, last)) => {
            let next = if last == i32::MAX { 0 } else { last + 1 };
            if first_seq == next {
                Verdict::Ok
            } else {
                Verdict::OutOfOrder
            }
        }
    }
}

proptest! {
    #[test]
    fn leader_append_validation_follows_the_model(
        steps in prop::collection::vec(
            (0i64..3, 0i16..3, prop_oneof![0i32..6, Just(i32::MAX - 1), Just(i32::MAX)], 0i32..3),
            1..60,
        )
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut m = ProducerStateManager::new(
            RealFs, dir.path(), "t-0", 60_000, ProducerStateManagerConfig::default(),
        ).unwrap();
        let mut states: HashMap<i64, (i16, i32)> = HashMap::new();
        let mut offset = 0i64;
        for (pid, epoch, first_seq, extra) in steps {
            let last_seq = if first_seq > i32::MAX - extra { extra - (i32::MAX - first_seq) - 1 } else { first_seq + extra };
            let expected = model(states.get(&pid).copied(), epoch, first_seq);
            let mut info = m.prepare_update(pid, AppendOrigin::Client);
            let got = info.append_data_batch(
                epoch, first_seq, last_seq, 1_000 + offset,
                LogOffsetMetadata::offset(offset), offset + i64::from(extra), false,
            );
            let verdict = match got {
                Ok(()) => Verdict::Ok,
                Err(ProducerError::InvalidProducerEpoch { .. }) => Verdict::Fenced,
                Err(ProducerError::OutOfOrderSequence { .. }) => Verdict::OutOfOrder,
                Err(e) => panic!("unexpected {e}"),
            };
            prop_assert_eq!(verdict, expected, "pid {} epoch {} seq {}", pid, epoch, first_seq);
            if verdict == Verdict::Ok {
                m.update(&info);
                states.insert(pid, (epoch, last_seq));
                offset += i64::from(extra) + 1;
                m.update_map_end_offset(offset);
                let e = m.last_entry(pid).unwrap();
                prop_assert_eq!((e.producer_epoch(), e.last_seq()), (epoch, last_seq));
                prop_assert!(e.batch_metadata().len() <= 5);
            }
        }
    }
}

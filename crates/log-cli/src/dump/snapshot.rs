//! `dump` of a producer state `.snapshot` file, as Kafka's `DumpLogSegments.dumpProducerIdSnapshot`
//! prints it: one line per producer, with its batch if the snapshot holds one; a corrupt snapshot
//! prints Kafka's `CorruptSnapshotException` message on stderr and nothing on stdout.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use seglog_log::producer::read_snapshot;
use seglog_log::{Error, RealFs};

use crate::common::Outcome;

pub(super) fn dump_snapshot(
    file: &Path,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Result<Outcome> {
    let entries = match read_snapshot(&RealFs, file) {
        Ok(entries) => entries,
        Err(Error::CorruptSnapshot { message, .. }) => {
            out.flush()?;
            writeln!(err, "{message}")?;
            return Ok(Outcome::Problems);
        }
        Err(e) => return Err(e.into()),
    };
    for e in entries {
        let txn = e.current_txn_first_offset().map_or_else(
            || "OptionalLong.empty".to_owned(),
            |o| format!("OptionalLong[{o}]"),
        );
        write!(
            out,
            "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {txn} lastTimestamp: {}",
            e.producer_id(),
            e.producer_epoch(),
            e.coordinator_epoch(),
            e.last_timestamp()
        )?;
        if let Some(b) = e.batch_metadata().next() {
            write!(
                out,
                " firstSequence: {} lastSequence: {} lastOffset: {} offsetDelta: {} timestamp: {}",
                b.first_seq(),
                b.last_seq,
                b.last_offset,
                b.offset_delta,
                b.timestamp
            )?;
        }
        writeln!(out)?;
    }
    Ok(Outcome::Clean)
}

//! Records and record batches in Kafka's format: building a producer batch, the batch and
//! record types a read or a dump decodes, and [`records`], an iterator of the records in a
//! read's bytes.

use seglog_record_format::Batches;

pub use seglog_record_format::{
    Batch, BatchBuilder, BatchOptions, Compression, ControlRecord, ControlRecordType, ControlValue,
    DEFAULT_MAX_DECOMPRESSED_BYTES, EndTransactionMarker, Error, FramedBatch, Header,
    KraftEndpoint, KraftVoter, LeaderChange, LegacyBatch, NewRecord, OwnedHeader, Record,
    RecordBatch, TimestampType, VoterIds, batches, kraft_voters,
};

/// The records in `bytes` (whole batches, as [`FetchDataInfo::read_into`] copies them; a
/// partial batch at the end, which a read may include, ends the iteration), in offset order,
/// decompressed and decoded: offset, timestamp, key, value and headers. A batch that fails to
/// decode yields one error and ends the iteration.
///
/// [`FetchDataInfo::read_into`]: crate::FetchDataInfo::read_into
pub fn records(bytes: &[u8]) -> Records<'_> {
    Records {
        batches: batches(bytes),
        pending: Vec::new().into_iter(),
        failed: false,
    }
}

/// The iterator [`records`] returns.
#[derive(Debug)]
pub struct Records<'a> {
    batches: Batches<'a>,
    pending: std::vec::IntoIter<Record>,
    failed: bool,
}

impl Iterator for Records<'_> {
    type Item = Result<Record, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(record) = self.pending.next() {
                return Some(Ok(record));
            }
            if self.failed {
                return None;
            }
            let decoded = self
                .batches
                .next()?
                .and_then(|framed| framed.decode())
                .and_then(|batch| batch.to_records());
            match decoded {
                Ok(records) => self.pending = records.into_iter(),
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

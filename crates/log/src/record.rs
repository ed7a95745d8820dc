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
/// decompressed and decoded: offset, timestamp, key, value and headers. Every batch's CRC is
/// checked first, as a Kafka consumer does (`check.crcs`, on by default). A batch that fails its
/// CRC or its framing yields one error and ends the iteration; so does a record that fails to
/// decode, after the records of its batch before it (an uncompressed batch is decoded as it is
/// iterated, with no list of its records built; a compressed one is decoded whole).
///
/// [`FetchDataInfo::read_into`]: crate::FetchDataInfo::read_into
pub fn records(bytes: &[u8]) -> Records<'_> {
    Records {
        batches: batches(bytes),
        current: Current::None,
        failed: false,
    }
}

/// The iterator [`records`] returns.
#[derive(Debug)]
pub struct Records<'a> {
    batches: Batches<'a>,
    current: Current<'a>,
    failed: bool,
}

/// The batch being iterated.
#[derive(Debug)]
enum Current<'a> {
    None,
    /// An uncompressed v2 batch, its records decoded in place one by one.
    Borrowed(seglog_record_format::Records<'a>),
    /// A compressed or legacy batch, decoded whole.
    Owned(std::vec::IntoIter<Record>),
}

impl<'a> Records<'a> {
    /// The next batch, CRC checked, as an iteration of its records.
    fn open(framed: FramedBatch<'a>) -> Result<Current<'a>, Error> {
        framed.validate()?;
        let batch = framed.decode()?;
        if let Batch::V2(v2) = &batch
            && !v2.is_compressed()
        {
            return Ok(Current::Borrowed(v2.records()?));
        }
        Ok(Current::Owned(batch.to_records()?.into_iter()))
    }

    fn fail(&mut self) {
        self.failed = true;
        self.current = Current::None;
    }
}

impl Iterator for Records<'_> {
    type Item = Result<Record, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let next = match &mut self.current {
                Current::Borrowed(records) => records.next().map(|r| r.map(|v| v.to_record())),
                Current::Owned(records) => records.next().map(Ok),
                Current::None => None,
            };
            match next {
                Some(Ok(record)) => return Some(Ok(record)),
                Some(Err(e)) => {
                    self.fail();
                    return Some(Err(e));
                }
                None => {}
            }
            if self.failed {
                return None;
            }
            match self.batches.next()?.and_then(Self::open) {
                Ok(current) => self.current = current,
                Err(e) => {
                    self.fail();
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(base: i64, compression: Compression) -> Vec<u8> {
        let records = (0..3)
            .map(|i| NewRecord::new(i, 1_700_000_000_000, Some(b"k".as_slice()), Some(b"value")));
        let mut out = Vec::new();
        BatchBuilder::new()
            .build(&BatchOptions::new(base, compression), records, &mut out)
            .expect("a batch");
        out
    }

    #[test]
    #[cfg(feature = "gzip")]
    fn streams_uncompressed_and_compressed_batches_and_stops_at_a_bad_crc() {
        let mut bytes = batch(0, Compression::None);
        bytes.extend(batch(3, Compression::Gzip));
        let offsets: Vec<i64> = records(&bytes)
            .map(|r| r.expect("a record").offset)
            .collect();
        assert_eq!(offsets, [0, 1, 2, 3, 4, 5]);
        let all: Vec<Record> = records(&bytes).map(|r| r.expect("a record")).collect();
        assert!(all.iter().all(|r| r.key.as_deref() == Some(b"k".as_slice())
            && r.value.as_deref() == Some(b"value".as_slice())));

        // A flipped byte in the first batch's last value: its CRC fails before any record of it.
        let mut damaged = bytes.clone();
        let first_len = batch(0, Compression::None).len();
        if let Some(b) = damaged.get_mut(first_len - 2) {
            *b ^= 1;
        }
        let mut it = records(&damaged);
        assert!(matches!(
            it.next(),
            Some(Err(Error::ChecksumMismatch { .. }))
        ));
        assert!(it.next().is_none());
    }
}

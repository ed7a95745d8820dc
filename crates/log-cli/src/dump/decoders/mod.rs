//! `seglog dump`'s decoders for Kafka's internal topics, as Kafka 4.4's `DumpLogSegments` prints
//! them: `--offsets-decoder` (`__consumer_offsets`, `OffsetsMessageParser`),
//! `--transaction-log-decoder` (`__transaction_state`, `TransactionLogMessageParser`),
//! `--cluster-metadata-decoder` (`__cluster_metadata`, `ClusterMetadataLogMessageParser`) and
//! `--share-group-state-decoder` (`__share_group_state`, `ShareGroupStateMessageParser`).
//!
//! Nothing here is written per record type: the records are Kafka's schema files (`schemas/`,
//! embedded), read by one interpreter (`schema`, `reader`) and printed as the generated JSON
//! converters and Jackson print them (`jackson`). They live in the CLI, not in a library, because
//! they are a presentation of `dump` only: the storage layers never look inside a record.

mod coordinator;
mod jackson;
mod metadata;
mod reader;
mod registry;
mod schema;

/// Which of Kafka's message parsers a dump uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoder {
    Offsets,
    TransactionLog,
    ClusterMetadata,
    ShareGroupState,
}

/// What Kafka's `printRecordContents` prints for one record with this decoder: ` key: ...` and
/// ` payload: ...` after `prefix`. An error is what Kafka throws out of the dump (a coordinator
/// record without a key), with Kafka's message.
pub(crate) fn contents(
    decoder: Decoder,
    prefix: &str,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<String, String> {
    let (key, payload) = match decoder {
        Decoder::Offsets => coordinator::parse(coordinator::Family::Group, offset, key, value)?,
        Decoder::TransactionLog => {
            coordinator::parse(coordinator::Family::Transaction, offset, key, value)?
        }
        Decoder::ClusterMetadata => (None, Some(metadata::parse(offset, value))),
        Decoder::ShareGroupState => {
            coordinator::parse(coordinator::Family::ShareGroupState, offset, key, value)?
        }
    };
    let mut s = String::new();
    let mut prefix = prefix;
    if let Some(k) = key {
        s.push_str(prefix);
        s.push_str("key: ");
        s.push_str(&k);
        prefix = " ";
    }
    if let Some(p) = payload {
        s.push_str(prefix);
        s.push_str("payload: ");
        s.push_str(&p);
    }
    Ok(s)
}

//! Kafka's `TxnMetadata`, `CompletedTxn` and `LastRecord`: a transaction as the producer state
//! tracks it, one that a marker ended, and what the cleaner keeps of a producer.

/// Where an offset is in the log, as far as known (Kafka's `LogOffsetMetadata`; -1 for unknown
/// segment and position).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsetMetadata {
    /// The offset.
    pub message_offset: i64,
    /// The base offset of the segment holding it, or -1.
    pub segment_base_offset: i64,
    /// Its byte position in that segment, or -1.
    pub relative_position: i32,
}

impl LogOffsetMetadata {
    /// An offset whose segment and position are not known.
    #[must_use]
    pub fn offset(message_offset: i64) -> Self {
        Self {
            message_offset,
            segment_base_offset: -1,
            relative_position: -1,
        }
    }
}

impl std::fmt::Display for LogOffsetMetadata {
    /// Kafka's `LogOffsetMetadata.toString`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "(offset={}, segment=[{}:{}])",
            self.message_offset, self.segment_base_offset, self.relative_position
        )
    }
}

/// A transaction seen in the log: who, where it starts, and where its marker is once known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnMetadata {
    /// The producer id.
    pub producer_id: i64,
    /// The offset of the transaction's first batch.
    pub first_offset: LogOffsetMetadata,
    /// The offset of its marker, once a marker completed it.
    pub last_offset: Option<i64>,
}

/// A transaction a marker completed (Kafka's `CompletedTxn`): the partition appends an entry to
/// the `.txnindex` for an aborted one, then calls `complete_txn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedTxn {
    /// The producer id.
    pub producer_id: i64,
    /// The offset of the transaction's first batch.
    pub first_offset: i64,
    /// The offset of the marker.
    pub last_offset: i64,
    /// Whether the marker is an ABORT.
    pub is_aborted: bool,
}

/// What the cleaner keeps of a producer (Kafka's `LastRecord`): the offset of its last data
/// batch, if any is kept, and its epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastRecord {
    /// The last offset of the producer's newest kept batch.
    pub last_data_offset: Option<i64>,
    /// The producer's epoch.
    pub producer_epoch: i16,
}

//! Producer state, as Kafka's `ProducerStateManager` keeps it (`storage/.../internals/log/`):
//! per producer id its epoch, its last five batches (duplicate detection), the coordinator
//! epoch and its ongoing transaction; the validation of idempotent and transactional appends;
//! the first unstable offset; and the `<offset>.snapshot` files, in Kafka's format.
//!
//! One Kafka class per file: `batch_metadata` (`BatchMetadata`), `entry` (`ProducerStateEntry`,
//! its last batches in `recent_batches`, inline where Kafka has a `Deque`),
//! `txn` (`TxnMetadata`, `CompletedTxn`, `LastRecord`, `LogOffsetMetadata`), `append_info`
//! (`ProducerAppendInfo`, `AppendOrigin`), `error` (its exceptions), `config`
//! (`ProducerStateManagerConfig`), `snapshot_format` (the bytes), `snapshot_file` (the files),
//! `manager` (`ProducerStateManager`; `manager/apply` takes an append's state into it),
//! `replay` (batches read into the state: an append, a recovered segment, the log after a
//! snapshot) and `read_only` (the state at an offset, read back without changing a byte).
//! Kafka's `VerificationStateEntry` is not modelled: it exists for the transaction
//! coordinator's verification, which seglog does not have.

mod append_info;
mod batch_metadata;
mod config;
mod deferred_syncs;
mod entry;
mod error;
mod manager;
mod read_only;
mod recent_batches;
mod replay;
mod snapshot_file;
mod snapshot_format;
mod txn;

pub use append_info::{AppendOrigin, EndTxnMarker, ProducerAppendInfo, TV_UNKNOWN};
pub use batch_metadata::BatchMetadata;
pub use config::{
    DEFAULT_MAX_TRANSACTION_TIMEOUT_MS, DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS,
    DEFAULT_PRODUCER_ID_EXPIRATION_MS, ProducerStateManagerConfig,
};
pub(crate) use deferred_syncs::DeferredSyncs;
pub use entry::{
    NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP, NUM_BATCHES_TO_RETAIN,
    ProducerStateEntry,
};
pub use error::ProducerError;
pub use manager::{LATE_TRANSACTION_BUFFER_MS, ProducerStateManager};
pub use read_only::{producer_state_at, replay_batch};
pub use replay::{append_batch, has_producer_id, load_producers_from_batches, recover_batch};
pub(crate) use replay::{append_data_header, recover_data_header};
pub use snapshot_file::{
    SNAPSHOT_SUFFIX, SnapshotFile, delete_if_exists, flush_snapshot, list_snapshot_files,
    read_snapshot, snapshot_path, write_snapshot,
};
pub use snapshot_format::{ENTRY_SIZE, SNAPSHOT_VERSION, SnapshotCorruption, decode, encode};
pub use txn::{CompletedTxn, LastRecord, LogOffsetMetadata, TxnMetadata};

//! The flags of `seglog dump`, named and spelled as `kafka-dump-log.sh`'s.

use std::path::PathBuf;

use super::decoders::Decoder;

/// The flags of `kafka-dump-log.sh`.
#[derive(Debug, Clone, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per kafka-dump-log.sh flag"
)]
pub(crate) struct DumpOptions {
    /// Comma-separated files to dump: .log, .index, .timeindex, .snapshot, .txnindex.
    #[arg(long, value_delimiter = ',', required = true, num_args = 1..)]
    pub(super) files: Vec<PathBuf>,
    /// Print the records' keys and values (implies --deep-iteration).
    #[arg(long, default_value_ifs = DECODER_FLAGS)]
    pub(super) print_data_log: bool,
    /// Print every record inside each batch, not only the batch.
    #[arg(long)]
    pub(super) deep_iteration: bool,
    /// For index files: check the entries against the log without printing them.
    #[arg(long, alias = "verify-index")]
    pub(super) verify_index_only: bool,
    /// For index files: run Kafka's sanity check and print whether it passed.
    #[arg(long)]
    pub(super) index_sanity_check: bool,
    /// How many bytes of the log to read when checking one offset index entry.
    #[arg(long, default_value_t = 5 * 1024 * 1024)]
    pub(super) max_message_size: u32,
    /// Read only the first N bytes of each .log (whole batches only). A negative N stops the
    /// run at the first .log with Kafka's IllegalArgumentException text, exit status 1.
    #[arg(long, default_value_t = i32::MAX, allow_negative_numbers = true)]
    pub(super) max_bytes: i32,
    /// Omit each record's metadata (offset, timestamp, sizes); a control record's line is then
    /// empty, as Kafka's.
    /// `--skip-batch-metadata` is KIP-631's name for it, which Kafka renamed before release.
    #[arg(long, alias = "skip-batch-metadata")]
    pub(super) skip_record_metadata: bool,
    /// Print JSON Lines instead of Kafka's text: one object per batch, record (with
    /// --deep-iteration or --print-data-log), index entry, time index entry and problem.
    #[arg(long)]
    pub(super) json: bool,
    /// Decode records as __consumer_offsets' (Kafka's JSON per key and value).
    #[arg(long)]
    pub(super) offsets_decoder: bool,
    /// Decode records as __transaction_state's.
    #[arg(long)]
    pub(super) transaction_log_decoder: bool,
    /// Decode records as __cluster_metadata's.
    #[arg(long)]
    pub(super) cluster_metadata_decoder: bool,
    /// Decode records as __share_group_state's (share groups, KIP-932).
    #[arg(long)]
    pub(super) share_group_state_decoder: bool,
}

/// Any decoder flag implies --print-data-log, as in Kafka.
const DECODER_FLAGS: [(&str, clap::builder::ArgPredicate, Option<&str>); 4] = [
    (
        "offsets_decoder",
        clap::builder::ArgPredicate::IsPresent,
        Some("true"),
    ),
    (
        "transaction_log_decoder",
        clap::builder::ArgPredicate::IsPresent,
        Some("true"),
    ),
    (
        "cluster_metadata_decoder",
        clap::builder::ArgPredicate::IsPresent,
        Some("true"),
    ),
    (
        "share_group_state_decoder",
        clap::builder::ArgPredicate::IsPresent,
        Some("true"),
    ),
];

impl DumpOptions {
    /// Kafka's `messageParser()`: with several decoder flags, offsets beats transaction log beats
    /// cluster metadata beats share group state.
    pub(super) fn decoder(&self) -> Option<Decoder> {
        if self.offsets_decoder {
            Some(Decoder::Offsets)
        } else if self.transaction_log_decoder {
            Some(Decoder::TransactionLog)
        } else if self.cluster_metadata_decoder {
            Some(Decoder::ClusterMetadata)
        } else if self.share_group_state_decoder {
            Some(Decoder::ShareGroupState)
        } else {
            None
        }
    }

    /// Plain dump options (no flags) for `files`.
    pub(crate) fn for_files(files: Vec<PathBuf>) -> Self {
        Self {
            files,
            print_data_log: false,
            deep_iteration: false,
            verify_index_only: false,
            index_sanity_check: false,
            max_message_size: 5 * 1024 * 1024,
            max_bytes: i32::MAX,
            skip_record_metadata: false,
            json: false,
            offsets_decoder: false,
            transaction_log_decoder: false,
            cluster_metadata_decoder: false,
            share_group_state_decoder: false,
        }
    }
}

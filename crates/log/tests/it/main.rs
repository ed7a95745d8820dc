//! seglog-log's integration tests, one binary with a module per subject. Five tests run in
//! processes of their own: `tests/open_maps_no_index.rs` and `tests/mapping_budget.rs` assert
//! exact counts of the process-wide live mappings (and the kernel's `/proc/self/maps`), which any
//! other test here reading a log would change; `tests/group_commit.rs`,
//! `tests/stress_readers_retention.rs` and `tests/stress_roll_retention_compaction.rs` have
//! timing guards (work done in a fixed time, sleeps inside a slow fsync, a watchdog that aborts
//! the process) that other tests running beside them would disturb.

#[path = "../common/mod.rs"]
mod common;

mod background_failures;
mod cleaner_behaviours;
mod cleaner_matches_kafka;
mod cleaner_transactions;
mod compaction_crash;
mod compaction_model;
mod consumer_records;
mod deleted_name_reuse;
mod disk_full;
mod fetch_records_in_place;
mod high_watermark_checkpoint;
mod leader_epoch_cache;
mod leader_epoch_log;
mod log_config_kafka;
mod log_dir;
mod log_dir_isolation;
mod log_dir_kinds;
mod log_dir_scope;
mod offset_overflow_split;
mod offset_overflow_split_crash;
mod open_damaged_active_segment;
mod open_snapshot_syncs;
mod partition_lock;
mod partition_log;
mod producer_append;
mod producer_append_model;
mod producer_replay;
mod producer_state_load;
mod producer_state_log;
mod producer_state_log_concurrent;
mod producer_state_log_recovery;
mod producer_state_manager;
mod producer_state_manager_snapshots;
mod producer_state_matches_kafka;
mod read_committed;
mod read_committed_unclean;
mod recompression;
mod recover_crash_idempotent;
mod recover_overlapping_segment;
mod recovery_without_producer_ids;
mod recreated_segment_name_durable;
mod roll_flushes_indexes;
mod time_lookup_view;
mod tiny_indexes;
mod topic_id;
mod truncate_inside_read_callback;
mod truncation_checkpoint;
mod truncation_durable;
mod txn_log;

//! seglog-cli's integration tests, one binary with a module per subject: each runs the built
//! `seglog` (`CARGO_BIN_EXE_seglog`) in processes of its own, so none needs a test process alone.

mod check_recover_txn;
mod commands;
mod completions_man;
mod consume_isolation;
mod consume_kcat;
mod corruption_matrix;
mod dump_decoders_match_kafka;
mod dump_java_compat;
mod dump_matches_kafka;
mod dump_snapshot_matches_kafka;
mod dump_txn_index;
mod flags;
mod follow_under_writers;
mod follow_wakes;
mod kafka_leftovers;
mod kafka_lock;
mod log_dirs;
mod messages;
mod offsets_get_offsets;
mod partition_isolation;
mod produce_acks_interactive_lines;
mod produce_input_formats;
mod produce_transactions;
mod pty;
mod read_only;
mod reader_offsets;
mod reasoned_recovery;
mod recover_plan;
mod refusals;
mod run;
mod snapshot;
mod stray_entries;
mod swap_files;
mod terminal;
mod tiny_indexes;

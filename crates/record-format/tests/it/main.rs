//! record-format's integration tests, one binary: one module per concern.

mod batch_offset_rules;
mod control_and_empty_batches;
mod fixtures_kafka_python;
mod golden_bytes;
mod in_place_edits;
mod kafka_protocol_crosscheck;
mod legacy_message_sets;
mod lz4_broken_checksum;
mod proptest_malformed_input;
mod proptest_round_trip;
mod record_parser_rules;
mod search_offsets_and_timestamps;
mod snappy_unframed;
mod stop_rules;

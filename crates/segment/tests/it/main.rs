//! seglog-segment's integration tests, one binary with a module per subject. One test runs in a
//! process of its own (`tests/mapped_reads_lifecycle.rs`): it asserts exact counts of the
//! process-wide live `.log` and index mappings, which any other test here reading a segment
//! would change.

#[path = "../common/mod.rs"]
mod common;

mod append_equals_recover;
mod crash_sim;
mod descriptor_cache;
mod foreign_writer;
mod full_index;
mod io_seam;
mod kafka_recovered_indexes;
mod log_segment_kafka;
mod mapped_loans;
mod mapped_reads_stress;
mod model;
mod read_region_reuse;
mod rebuild_from_image;
mod recovery_reasons;
mod scan_header_fields;
mod sim_indexes;
mod split_plan;
mod txn_index_kafka;
mod txn_index_lifecycle;
mod txn_index_model;

//! mmap-index's integration tests, one binary with a module per subject. Two tests run in
//! processes of their own (`tests/lazy_open.rs`, `tests/mapping_budget_100k.rs`): they assert
//! exact counts of the process-wide live index mappings (`live_mappings`, and the kernel's
//! `/proc/self/maps`), which any other test of the binary mapping an index would change.

mod base_offset_from_name;
mod close_rename_delete;
mod close_under_readers;
mod corrupt_files_never_panic;
mod crash_image_reopen;
mod fixtures_kafka_written;
mod fixtures_python;
mod golden_bytes;
mod hazard_fallback;
mod mapped_file;
mod model_oracle;
mod offset_index_append;
mod offset_index_fetch_upper_bound;
mod offset_index_lookup;
mod offset_index_reopen;
mod offset_index_truncate;
mod offset_index_unmap;
mod read_only_open;
mod sanity_check;
mod sparse_allocation;
mod stress_concurrent_lookups;
mod time_index_append;
mod time_index_lookup;
mod time_index_resize;
mod time_index_truncate;
mod verify_zero_tail;

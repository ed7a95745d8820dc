//! What bench-compare measures: the systems, the workloads in report order, and the targets.

/// The systems in the order they appear.
pub(super) const SYSTEMS: &[&str] = &["seglog", "kafka", "commitlog", "limit"];

/// The workload groups (each system's `--part`) in run order, each with the systems that have it
/// in their first round's order. A round runs each group on its systems back to back, in a process
/// each, so that the figures a ratio compares are seconds apart (docs/perf/method.md).
pub(super) const GROUPS: &[(&str, &[&str])] = &[
    ("append", &["limit", "seglog", "kafka", "commitlog"]),
    ("segment", &["limit", "seglog", "kafka", "commitlog"]),
    ("consume", &["limit", "seglog", "kafka"]),
    ("log_append", &["limit", "seglog", "kafka"]),
    ("open", &["seglog", "kafka"]),
    ("logdir", &["limit", "seglog", "kafka"]),
    // In a process of its own on each system, so that the process's peak memory is the cleaner's.
    ("compact", &["seglog", "kafka"]),
];

/// The workloads in report order: (id, what it is).
pub(super) const WORKLOADS: &[(&str, &str)] = &[
    ("append_1k_x16", "append, 1 KiB records x 16, page cache"),
    (
        "append_100b_x100",
        "append, 100 B records x 100, page cache",
    ),
    (
        "append_1k_x16_fsync_1m",
        "append, 1 KiB x 16, fsync every MiB",
    ),
    (
        "append_100b_x100_fsync_1m",
        "append, 100 B x 100, fsync every MiB",
    ),
    ("recovery", "recovery of the dataset segment"),
    ("index_lookup", "offset index lookup, random offset"),
    ("read_by_offset", "read by offset (17 KiB), random offset"),
    (
        "lookup_by_timestamp",
        "lookup by timestamp, random timestamp",
    ),
    (
        "consume_sequential",
        "consume the partition, 1 MiB fetches sent zero-copy into a pipe",
    ),
    (
        "consume_records",
        "consume the partition, 1 MiB fetches, every record decoded",
    ),
    (
        "log_append",
        "partition log append as leader, idempotent 1 KiB x 16",
    ),
    (
        "open_10k_clean",
        "open a partition of many segments, clean shutdown",
    ),
    (
        "open_10k_unclean",
        "open it after an unclean shutdown, recovery point halfway",
    ),
    (
        "compact_1g",
        "compact the dataset, 90% of the keys overwritten",
    ),
    (
        "compact_1g_peak_memory",
        "peak memory of a fresh process cleaning the dataset",
    ),
    (
        "compact_1g_peak_anon",
        "its largest anonymous resident set (heap)",
    ),
    (
        "compact_1g_peak_file",
        "its largest file-backed resident set (mapped files)",
    ),
    (
        "recover_logdir",
        "open a log directory of 20 partitions after an unclean shutdown",
    ),
    (
        "recover_logdir_idempotent",
        "the same, each partition written by an idempotent producer",
    ),
    (
        "cli_dump_deep",
        "whole process: dump --deep-iteration --print-data-log",
    ),
    ("cli_recover", "whole process: recover one segment"),
];

/// (workloads, against, seglog at least this many times faster, label).
pub(super) const TARGETS: &[(&[&str], &str, f64, &str)] = &[
    // The mmap-index issue's 1.5x stays for the fsync shapes; for the page-cache shapes issue 20
    // restated it as "ahead", because Kafka's appends run at about 0.83x of `write_all` there, so 1.5x
    // Kafka would be above the limit itself (docs/benchmarks.md, Analysis).
    (
        &["append_1k_x16_fsync_1m", "append_100b_x100_fsync_1m"],
        "kafka",
        1.5,
        "append >= 1.5x Kafka",
    ),
    (
        &["append_1k_x16", "append_100b_x100"],
        "kafka",
        1.0,
        "append (page cache) ahead of Kafka",
    ),
    (&["index_lookup"], "kafka", 2.0, "index lookup >= 2x Kafka"),
    (&["recovery"], "kafka", 1.5, "recovery >= 1.5x Kafka"),
    (
        &["read_by_offset"],
        "commitlog",
        2.0,
        "random read >= 2x commitlog",
    ),
    (
        &[
            "append_1k_x16",
            "append_100b_x100",
            "append_1k_x16_fsync_1m",
            "append_100b_x100_fsync_1m",
        ],
        "limit",
        0.8,
        "append within 80% of write_all",
    ),
    // Issue 20's targets: a ratio to the same run's limit, and to Kafka.
    (
        &["append_1k_x16", "append_100b_x100"],
        "limit",
        0.95,
        "append (page cache) >= 0.95x its limit",
    ),
    (
        &["log_append"],
        "limit",
        0.85,
        "log_append >= 0.85x its limit",
    ),
    (&["log_append"], "kafka", 1.3, "log_append >= 1.3x Kafka"),
    (&["recovery"], "limit", 0.85, "recovery >= 0.85x its limit"),
    (&["recovery"], "kafka", 3.0, "recovery >= 3x Kafka"),
    (
        &["index_lookup"],
        "limit",
        0.8,
        "index lookup >= 0.8x its limit",
    ),
    (&["index_lookup"], "kafka", 4.0, "index lookup >= 4x Kafka"),
    (
        &["lookup_by_timestamp"],
        "limit",
        0.5,
        "timestamp lookup >= 0.5x its limit",
    ),
    (
        &["lookup_by_timestamp"],
        "kafka",
        4.0,
        "timestamp lookup >= 4x Kafka",
    ),
    (
        &["consume_sequential"],
        "limit",
        0.9,
        "consume_sequential >= 0.9x its limit",
    ),
    (
        &["consume_sequential"],
        "kafka",
        1.2,
        "consume_sequential >= 1.2x Kafka",
    ),
    (
        &["consume_records"],
        "limit",
        0.7,
        "consume_records >= 0.7x its limit",
    ),
    (
        &["consume_records"],
        "kafka",
        2.0,
        "consume_records >= 2x Kafka",
    ),
    (
        &["open_10k_clean", "open_10k_unclean"],
        "kafka",
        3.0,
        "open >= 3x Kafka",
    ),
    (
        &["cli_dump_deep"],
        "kafka",
        8.0,
        "cli_dump_deep >= 8x Kafka",
    ),
    (&["cli_recover"], "kafka", 6.0, "cli_recover >= 6x Kafka"),
    // The idempotent variant is held to the target too: it is the data operators have.
    (
        &["recover_logdir", "recover_logdir_idempotent"],
        "kafka",
        3.0,
        "recover_logdir >= 3x Kafka (2 threads, its default)",
    ),
    (&["compact_1g"], "kafka", 2.0, "compact_1g >= 2x Kafka"),
];

/// The cleaner's map budget in the `compact_1g` workload (its dedupe buffer), in MiB.
pub(super) const COMPACT_BUDGET_MIB: f64 = 128.0;

/// (workload, seglog's median at most this, label): ceilings in the workload's own unit.
pub(super) const CEILINGS: &[(&str, f64, &str)] = &[(
    "compact_1g_peak_memory",
    COMPACT_BUDGET_MIB + 32.0,
    "compaction peak memory <= map budget + 32 MiB",
)];

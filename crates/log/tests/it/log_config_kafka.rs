//! `LogConfig` against Kafka 4.4's topic `LogConfig`: every key Kafka's `ConfigDef` defines is
//! accepted with Kafka's default, and the validation cases of Kafka's `LogConfigTest` (each test
//! names its Kafka case) are refused as Kafka refuses them. Then a changed configuration on an
//! open log (Kafka's `UnifiedLog.updateConfig`, `LogManager.updateTopicConfig`).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

use std::path::Path;

use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{
    Error, INERT_KEYS, Isolation, KEYS, LoadOptions, LogConfig, LogDir, LogDirOptions, MockClock,
    PartitionLog, RealFs, TopicPartition,
};
use seglog_record_format::{Batch, batches};

use crate::common;

/// Kafka 4.4's `LogConfig.configDefCopy()`, every key with its default as Kafka prints it
/// (printed from the 4.4 jars: name, default), `internal.segment.bytes` (no default) left out.
const KAFKA_DEFAULTS: &[(&str, &str)] = &[
    ("segment.bytes", "1073741824"),
    ("segment.ms", "604800000"),
    ("segment.jitter.ms", "0"),
    ("segment.index.bytes", "10485760"),
    ("flush.messages", "9223372036854775807"),
    ("flush.ms", "9223372036854775807"),
    ("retention.bytes", "-1"),
    ("retention.ms", "604800000"),
    ("max.message.bytes", "1048588"),
    ("max.decompressed.message.bytes", "2147483639"),
    ("index.interval.bytes", "4096"),
    ("delete.retention.ms", "86400000"),
    ("min.compaction.lag.ms", "0"),
    ("max.compaction.lag.ms", "9223372036854775807"),
    ("file.delete.delay.ms", "60000"),
    ("min.cleanable.dirty.ratio", "0.5"),
    ("cleanup.policy", "delete"),
    ("unclean.leader.election.enable", "false"),
    ("min.insync.replicas", "1"),
    ("compression.type", "producer"),
    ("compression.gzip.level", "-1"),
    ("compression.lz4.level", "9"),
    ("compression.zstd.level", "3"),
    ("preallocate", "false"),
    ("message.timestamp.type", "CreateTime"),
    ("message.timestamp.before.max.ms", "9223372036854775807"),
    ("message.timestamp.after.max.ms", "3600000"),
    ("leader.replication.throttled.replicas", ""),
    ("follower.replication.throttled.replicas", ""),
    ("remote.storage.enable", "false"),
    ("local.retention.ms", "-2"),
    ("local.retention.bytes", "-2"),
    ("remote.log.copy.disable", "false"),
    ("remote.copy.lag.ms", "0"),
    ("remote.copy.lag.bytes", "-1"),
    ("remote.log.delete.on.disable", "false"),
    ("errors.deadletterqueue.group.enable", "false"),
];

/// Every key of Kafka 4.4's `LogConfig` is accepted, and at Kafka's default value gives
/// seglog's default: a topic's configs as `kafka-configs --describe` prints them pass whole.
#[test]
fn every_kafka_key_is_accepted_with_kafkas_default() {
    let config = LogConfig::from_pairs(KAFKA_DEFAULTS.iter().copied()).unwrap();
    assert_eq!(config, LogConfig::default());
    for (key, _) in KAFKA_DEFAULTS {
        assert!(KEYS.contains(key), "{key} not in KEYS");
    }
    for key in INERT_KEYS {
        assert!(KAFKA_DEFAULTS.iter().any(|(k, _)| k == key), "{key}");
    }
    // A 4.4 broker refuses what 4.x removed (`TopicConfig` still names it).
    assert!(matches!(
        LogConfig::from_pairs([("message.downconversion.enable", "true")]),
        Err(Error::UnknownConfig { .. })
    ));
    // Values other than the defaults are kept and written back.
    let changed = LogConfig::parse(
        "min.insync.replicas=2\nunclean.leader.election.enable=true\n\
         leader.replication.throttled.replicas=0:1,1:2\nremote.copy.lag.ms=-1\n\
         compression.zstd.level=-5\n",
    )
    .unwrap();
    assert_eq!(changed.inert.min_insync_replicas, 2);
    assert_eq!(
        changed.inert.leader_replication_throttled_replicas,
        "0:1,1:2"
    );
    assert_eq!(changed.compression_zstd_level, -5);
    assert_eq!(LogConfig::parse(&changed.to_properties()).unwrap(), changed);
}

/// Kafka's `LogConfigTest.testFromPropsInvalid`, for every key of 4.4's `LogConfig`.
#[test]
fn from_props_invalid() {
    let cases: &[(&str, &[&str])] = &[
        ("unclean.leader.election.enable", &["not a boolean"]),
        ("retention.bytes", &["not_a_number"]),
        ("retention.ms", &["not_a_number"]),
        ("cleanup.policy", &["true", "foobar"]),
        (
            "min.cleanable.dirty.ratio",
            &["not_a_number", "-0.1", "1.2"],
        ),
        ("min.insync.replicas", &["not_a_number", "0", "-1"]),
        ("remote.storage.enable", &["not_a_boolean"]),
        ("local.retention.ms", &["not_a_number", "-3"]),
        ("local.retention.bytes", &["not_a_number", "-3"]),
        ("compression.gzip.level", &["not_a_number", "-2"]),
        ("compression.lz4.level", &["not_a_number", "-1"]),
        ("compression.zstd.level", &["not_a_number", "-0.1"]),
        ("remote.log.copy.disable", &["not_a_number", "remove", "0"]),
        (
            "remote.log.delete.on.disable",
            &["not_a_number", "remove", "0"],
        ),
        // 4.4's keys past the Kafka test's list: -1 is valid for these two, -2 is not.
        ("remote.copy.lag.ms", &["not_a_number", "-2"]),
        ("remote.copy.lag.bytes", &["not_a_number", "-2"]),
    ];
    let mut seen = 0;
    for key in KEYS.iter().filter(|k| !k.starts_with("seglog.")) {
        let invalid: &[&str] = cases
            .iter()
            .find(|(k, _)| k == key)
            .map_or(&["not_a_number", "-1"], |(_, v)| v);
        for value in invalid {
            let err = LogConfig::from_pairs([(*key, *value)]).unwrap_err();
            assert!(
                matches!(&err, Error::InvalidConfig { key: k, .. } if k == key),
                "{key}={value}: {err}"
            );
            seen += 1;
        }
    }
    assert!(seen > 70, "{seen}");
    // Out of Kafka's ranges.
    for (key, value) in [
        ("compression.gzip.level", "10"),
        ("compression.gzip.level", "0"),
        ("compression.lz4.level", "18"),
        ("compression.zstd.level", "23"),
        ("compression.zstd.level", "-131073"),
        ("max.decompressed.message.bytes", "2147483640"),
    ] {
        assert!(
            LogConfig::from_pairs([(key, value)]).is_err(),
            "{key}={value}"
        );
    }
    for (key, value) in [
        ("compression.gzip.level", "9"),
        ("compression.gzip.level", "1"),
        ("compression.lz4.level", "17"),
        ("compression.zstd.level", "-131072"),
        ("compression.zstd.level", "22"),
    ] {
        assert!(
            LogConfig::from_pairs([(key, value)]).is_ok(),
            "{key}={value}"
        );
    }
}

/// Kafka's `LogConfigTest.testInvalidCompactionLagConfig`.
#[test]
fn invalid_compaction_lag_config() {
    let err = LogConfig::from_pairs([
        ("max.compaction.lag.ms", "100"),
        ("min.compaction.lag.ms", "200"),
    ])
    .unwrap_err();
    assert!(matches!(err, Error::InvalidConfig { .. }), "{err}");
}

/// Kafka's `LogConfigTest.shouldValidateThrottledReplicasConfig`.
#[test]
fn should_validate_throttled_replicas_config() {
    let valid = |v: &str| {
        [
            "leader.replication.throttled.replicas",
            "follower.replication.throttled.replicas",
        ]
        .iter()
        .all(|key| LogConfig::from_pairs([(*key, v)]).is_ok())
    };
    for v in [
        "*",
        "* ",
        "",
        " ",
        "100:10",
        "100:10,12:10",
        "100:10,12:10,15:1",
        "100:10,12:10,15:1  ",
        "100:0,",
    ] {
        assert!(valid(v), "{v:?}");
    }
    for v in [
        "100",
        "100:",
        "100:0,10",
        "100:0,10:",
        "100:0,10:   ",
        "100 :0,10:   ",
        "100: 0,10:   ",
        "100:0,10 :   ",
        "*,100:10",
        "* ,100:10",
    ] {
        assert!(!valid(v), "{v:?}");
    }
}

/// Kafka's `LogConfigTest.testInvalidLocalLogRetentionProps` and
/// `testEnableRemoteLogStorageOnCompactedTopic` (with remote storage enabled on the topic).
#[test]
fn invalid_local_log_retention_props() {
    let remote = |local_ms: &str, local_bytes: &str, bytes: &str, ms: &str| {
        LogConfig::from_pairs([
            ("remote.storage.enable", "true"),
            ("retention.bytes", bytes),
            ("retention.ms", ms),
            ("local.retention.ms", local_ms),
            ("local.retention.bytes", local_bytes),
        ])
    };
    for (local_ms, local_bytes, bytes, ms) in [
        ("-3", "10", "2", "500"),
        ("500", "-3", "2", "1000"),
        ("2000", "2", "100", "1000"),
        ("500", "200", "100", "1000"),
        ("-1", "200", "100", "1000"),
        ("2000", "-1", "100", "1000"),
    ] {
        assert!(
            remote(local_ms, local_bytes, bytes, ms).is_err(),
            "{local_ms} {local_bytes} {bytes} {ms}"
        );
    }
    // `testLocalLogRetentionProps`: within the totals.
    assert!(remote("500", "100", "1000", "1000").is_ok());
    // Without remote storage the same values pass (Kafka checks them only when it is on).
    assert!(
        LogConfig::from_pairs([("retention.ms", "1000"), ("local.retention.ms", "2000")]).is_ok()
    );
    let compacted = |policy: &str| {
        LogConfig::from_pairs([
            ("cleanup.policy", policy),
            ("remote.storage.enable", "true"),
        ])
    };
    assert!(compacted("delete").is_ok());
    for policy in ["compact", "delete,compact", "compact,delete"] {
        assert!(compacted(policy).is_err(), "{policy}");
    }
}

fn batch(n: usize, value: &[u8]) -> Vec<u8> {
    let records = (0..n).map(|i| NewRecord::new(i as i32, 1_700_000_000_000, None, Some(value)));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&BatchOptions::new(0, Compression::None), records, &mut out)
        .unwrap();
    out
}

/// The codec of every batch, segment by segment (a read stays in one segment).
fn codecs(log: &PartitionLog) -> Vec<Compression> {
    let mut out = Vec::new();
    for base in log.segments().keys() {
        let mut buf = Vec::new();
        log.read(*base, 1 << 20, Isolation::LogEnd, true)
            .unwrap()
            .read_into(&mut buf)
            .unwrap();
        out.extend(batches(&buf).map(|b| match b.unwrap().decode().unwrap() {
            Batch::V2(v2) => v2.compression().unwrap(),
            Batch::Legacy(_) => unreachable!(),
        }));
    }
    out
}

fn open(dir: &Path, config: LogConfig, clock: &MockClock) -> PartitionLog {
    common::open(dir, config, LoadOptions::default(), clock).0
}

/// Kafka's `UnifiedLog.updateConfig`: a new `segment.bytes` rolls at the next append, a new
/// `compression.type` applies to the next batch, new index settings to the next segment, and an
/// invalid configuration changes nothing.
#[test]
fn update_config_applies_to_an_open_log() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_700_000_000_000);
    let log = open(&root.path().join("t-0"), LogConfig::default(), &clock);
    let value = vec![b'x'; 200];
    log.append_as_leader(&mut batch(4, &value)).unwrap();
    assert_eq!(log.segments().len(), 1);
    let small = LogConfig::from_pairs([
        ("internal.segment.bytes", "1000"),
        ("compression.type", "gzip"),
        ("segment.index.bytes", "4096"),
    ])
    .unwrap();
    let old = log.update_config(small.clone()).unwrap();
    assert_eq!(*old, LogConfig::default());
    assert_eq!(*log.config(), small);
    // The active segment is already past 1000 bytes: the next append rolls, in gzip.
    log.append_as_leader(&mut batch(4, &value)).unwrap();
    assert_eq!(log.segments().len(), 2);
    assert_eq!(codecs(&log), [Compression::None, Compression::Gzip]);
    // The new segment's index preallocated at the new `segment.index.bytes`.
    let active = log.active_segment();
    active.index_entries().unwrap();
    let len = std::fs::metadata(active.offset_index_path()).unwrap().len();
    assert_eq!(len, 4096);
    // Refused whole, the configuration unchanged.
    let bad = LogConfig::default()
        .with_min_compaction_lag_ms(10)
        .with_max_compaction_lag_ms(5);
    assert!(log.update_config(bad).is_err());
    assert_eq!(*log.config(), small);
}

/// Kafka's `LogManager.updateTopicConfig`: every open partition of the topic takes the new
/// configuration, kept for the next open; other topics keep theirs.
#[test]
fn log_dir_updates_a_topics_partitions() {
    let root = tempfile::tempdir().unwrap();
    let (dir, _) = LogDir::open(RealFs, root.path(), LogDirOptions::default()).unwrap();
    for p in 0..3 {
        dir.create_log(&TopicPartition::new("orders", p), None)
            .unwrap();
    }
    dir.create_log(&TopicPartition::new("users", 0), None)
        .unwrap();
    let zstd = LogConfig::parse("compression.type=zstd\nretention.ms=1000\n").unwrap();
    assert_eq!(dir.update_topic_config("orders", &zstd).unwrap(), 3);
    assert_eq!(dir.update_topic_config("none", &zstd).unwrap(), 0);
    let users = dir.log(&TopicPartition::new("users", 0)).unwrap();
    assert_eq!(*users.config(), LogConfig::default());
    let orders = dir.log(&TopicPartition::new("orders", 2)).unwrap();
    orders.append_as_leader(&mut batch(2, b"v")).unwrap();
    assert_eq!(codecs(&orders), [Compression::Zstd]);
    drop((users, orders));
    dir.close().unwrap();
    drop(dir);
    let (dir, _) = LogDir::open(RealFs, root.path(), LogDirOptions::default()).unwrap();
    for p in 0..3 {
        let log = dir.log(&TopicPartition::new("orders", p)).unwrap();
        assert_eq!(*log.config(), zstd, "orders-{p}");
    }
    assert_eq!(
        *dir.log(&TopicPartition::new("users", 0)).unwrap().config(),
        LogConfig::default()
    );
}

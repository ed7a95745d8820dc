//! Topic ids as Kafka's `UnifiedLog` keeps them (`initializeTopicId`, `assignTopicId`) in
//! `partition.metadata` (`PartitionMetadataFile`).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use seglog_fs::RealFs;
use seglog_log::{
    Error, LoadOptions, LogConfig, LogDir, LogDirOptions, PartitionLog, SystemClock, TopicId,
    TopicPartition,
};

const ID: &str = "vvO5N3IYR1ezBKXzHaP3xg";
const OTHER: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

fn open(dir: &Path, topic_id: Option<TopicId>) -> seglog_log::Result<PartitionLog> {
    let options = LoadOptions::default().with_topic_id(topic_id);
    PartitionLog::open(
        RealFs,
        dir,
        LogConfig::default(),
        options,
        Arc::new(SystemClock),
    )
    .map(|(log, _)| log)
}

#[test]
fn a_log_created_with_a_topic_id_writes_kafkas_file_and_keeps_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let id: TopicId = ID.parse().unwrap();
    let log = open(&dir, Some(id)).unwrap();
    assert_eq!(log.topic_id(), Some(id));
    let text = std::fs::read_to_string(dir.join("partition.metadata")).unwrap();
    assert_eq!(text, format!("version: 0\ntopic_id: {ID}"));
    log.close().unwrap();
    drop(log);
    // Reopened without an id: the file's.
    let log = open(&dir, None).unwrap();
    assert_eq!(log.topic_id(), Some(id));
    log.close().unwrap();
    drop(log);
    // Reopened with another: refused, as Kafka's InconsistentTopicIdException.
    let other: TopicId = OTHER.parse().unwrap();
    match open(&dir, Some(other)) {
        Err(Error::InconsistentTopicId {
            assigned, found, ..
        }) => assert_eq!((assigned, found), (other, id)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn assign_topic_id_writes_once_and_refuses_another() {
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let log = open(&dir, None).unwrap();
    assert_eq!(log.topic_id(), None);
    assert!(!dir.join("partition.metadata").exists());
    assert!(log.assign_topic_id(TopicId::ZERO).is_err());
    assert!(!dir.join("partition.metadata").exists());
    let id: TopicId = ID.parse().unwrap();
    log.assign_topic_id(id).unwrap();
    log.assign_topic_id(id).unwrap();
    assert!(matches!(
        log.assign_topic_id(OTHER.parse().unwrap()),
        Err(Error::InconsistentTopicId { .. })
    ));
    assert_eq!(log.topic_id(), Some(id));
    let text = std::fs::read_to_string(dir.join("partition.metadata")).unwrap();
    assert_eq!(text, format!("version: 0\ntopic_id: {ID}"));
}

#[test]
fn a_malformed_file_fails_the_load_naming_its_line() {
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("partition.metadata"),
        "version: 0\ntopic_id: nope\n",
    )
    .unwrap();
    match open(&dir, None) {
        Err(Error::Checkpoint {
            path,
            line,
            problem,
        }) => {
            assert_eq!(path, dir.join("partition.metadata"));
            assert_eq!(line, 2);
            assert!(
                problem.starts_with("Malformed line in partition metadata file"),
                "{problem}"
            );
        }
        other => panic!("{other:?}"),
    }
    // In a log directory the partition is reported failed; the others open.
    let (logs, report) = LogDir::open(RealFs, root.path(), LogDirOptions::default()).unwrap();
    assert_eq!(report.failed.len(), 1);
    assert!(logs.log(&TopicPartition::new("orders", 0)).is_none());
}

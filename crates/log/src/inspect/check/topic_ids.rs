//! The topic ids of a log directory's partitions (`partition.metadata`): a file Kafka's reader
//! refuses (Kafka then takes the whole log directory offline), and two partitions of one topic
//! naming different ids (at most one can be the cluster's; Kafka sets the others aside as stray
//! replicas when the metadata reaches them).

use std::collections::BTreeMap;
use std::path::PathBuf;

use seglog_fs::FileSystem;

use super::Finding;
use crate::error::Error;
use crate::inspect::partition::PartitionView;
use crate::partition_metadata::{PARTITION_METADATA_FILE, PartitionMetadataFile};
use crate::topic_id::TopicId;
use crate::topic_partition::TopicPartition;

/// The topic id each partition's `partition.metadata` names, with the file.
pub(super) type TopicIds = BTreeMap<TopicPartition, (PathBuf, TopicId)>;

/// Reads the partition's `partition.metadata`: its id goes into `ids`; a file Kafka refuses is a
/// problem naming the line.
pub(super) fn check_partition_metadata<F: FileSystem>(
    partition: &PartitionView<F>,
    ids: &mut TopicIds,
    findings: &mut Vec<Finding>,
) {
    let file = PartitionMetadataFile::in_dir(partition.fs().clone(), partition.dir());
    match file.read() {
        Ok(None) => {}
        Ok(Some(metadata)) => {
            ids.insert(
                partition.topic_partition().clone(),
                (file.path().to_path_buf(), metadata.topic_id),
            );
        }
        Err(Error::Checkpoint { path, line, problem }) => findings.push(Finding::new(
            &path,
            None,
            "bad_partition_metadata",
            format!(
                "line {line}: {problem}; Kafka refuses to load it and takes the log directory offline"
            ),
        )),
        Err(e) => findings.push(Finding::new(
            &partition.dir().join(PARTITION_METADATA_FILE),
            None,
            "bad_partition_metadata",
            e.to_string(),
        )),
    }
}

/// One problem per topic whose partitions name more than one id, on the file of each
/// partition whose id differs from its topic's lowest partition's.
pub(super) fn check_topic_ids(ids: &TopicIds, findings: &mut Vec<Finding>) {
    let mut first: BTreeMap<&str, (&TopicPartition, TopicId)> = BTreeMap::new();
    for (tp, (path, id)) in ids {
        match first.get(tp.topic.as_str()) {
            None => {
                first.insert(&tp.topic, (tp, *id));
            }
            Some((other, other_id)) if other_id != id => findings.push(Finding::new(
                path,
                None,
                "topic_id_conflict",
                format!(
                    "{tp} has topic id {id}, but {other} has {other_id}: one topic has one id, so one of them belongs to another (deleted or recreated) topic, and a broker sets it aside as a stray replica"
                ),
            )),
            Some(_) => {}
        }
    }
}

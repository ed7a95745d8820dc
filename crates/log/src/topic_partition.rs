//! Topic-partition names and the partition directory naming rules of Kafka's `LocalLog`.

use std::fmt;
use std::path::Path;

use crate::error::{Error, Result};

/// A topic and a partition number, the name of one partition log.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicPartition {
    /// The topic name.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
}

/// What a partition directory's suffix says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirKind {
    /// `topic-N`: a live partition.
    Live,
    /// `topic-N.<uuid>-delete`: pending deletion.
    Delete,
    /// `topic-N.<uuid>-future`: the target of a log-dir move.
    Future,
    /// `topic-N.<uuid>-stray`: not assigned to this broker (KRaft).
    Stray,
}

impl TopicPartition {
    /// A topic-partition.
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        Self {
            topic: topic.into(),
            partition,
        }
    }

    /// Parses a partition directory's name (`LocalLog.parseTopicPartitionName`): strip a
    /// `.<uuid>-delete`, `-future` or `-stray` suffix, then split at the last `-`.
    pub fn parse_dir(dir: &Path) -> Result<(Self, DirKind)> {
        let not_partition = || Error::NotAPartitionDir {
            path: dir.to_path_buf(),
        };
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(not_partition)?;
        let (base, kind) = [
            ("-delete", DirKind::Delete),
            ("-future", DirKind::Future),
            ("-stray", DirKind::Stray),
        ]
        .iter()
        .find_map(|(suffix, kind)| {
            let stem = name.strip_suffix(suffix)?;
            let dot = stem.rfind('.')?;
            let uuid = stem.get(dot + 1..)?;
            (!uuid.is_empty() && !uuid.contains(char::is_whitespace))
                .then(|| (stem.get(..dot).unwrap_or_default(), *kind))
        })
        .unwrap_or((name, DirKind::Live));
        let dash = base.rfind('-').ok_or_else(not_partition)?;
        let topic = base.get(..dash).unwrap_or_default();
        let partition = base.get(dash + 1..).unwrap_or_default();
        if topic.is_empty() || topic.contains(char::is_whitespace) {
            return Err(not_partition());
        }
        let partition: i32 = partition.parse().map_err(|_| not_partition())?;
        if partition < 0 {
            return Err(not_partition());
        }
        Ok((Self::new(topic, partition), kind))
    }

    /// The directory name of the live partition: `topic-N`.
    pub fn dir_name(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str) -> Result<(TopicPartition, DirKind)> {
        TopicPartition::parse_dir(Path::new("/logs").join(name).as_path())
    }

    #[test]
    fn parses_live_and_suffixed_directories() {
        assert_eq!(
            parse("orders-0").unwrap(),
            (TopicPartition::new("orders", 0), DirKind::Live)
        );
        assert_eq!(
            parse("my-topic-12").unwrap(),
            (TopicPartition::new("my-topic", 12), DirKind::Live)
        );
        assert_eq!(
            parse("orders-3.2b5c1f0e9d8a4b7c8d9e0f1a2b3c4d5e-delete").unwrap(),
            (TopicPartition::new("orders", 3), DirKind::Delete)
        );
        assert_eq!(parse("t-1.abc-future").unwrap().1, DirKind::Future);
        assert_eq!(parse("t-1.abc-stray").unwrap().1, DirKind::Stray);
        assert_eq!(TopicPartition::new("a-b", 7).dir_name(), "a-b-7");
    }

    #[test]
    fn rejects_what_kafka_rejects() {
        for bad in [
            "orders",
            "orders-",
            "-1",
            "orders-x",
            "orders-1x",
            "orders-1.5a",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}

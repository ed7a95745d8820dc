//! Which partitions a read-only command (`consume`, `offsets`) reads: the partition directory it
//! was given, or the live `topic-N` directories of a log directory, of one topic or of all.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use seglog_log::inspect::LogDirView;
use seglog_log::{DirKind, RealFs, TopicPartition};

use crate::common::{lib, named};

/// A partition to read: its directory and its name (from the directory's, `topic-N`).
#[derive(Debug, Clone)]
pub(crate) struct Partition {
    pub(crate) dir: PathBuf,
    pub(crate) tp: TopicPartition,
}

/// The partitions at `path`, sorted by topic then partition number: `path` itself when it is a
/// partition directory (of `topic`, if given), else the live partition directories of the log
/// directory `path`, those of `topic` only when given. `needs_topic` refuses a log directory
/// without `topic` (consume reads one topic, as kcat does). None matching is an error.
pub(crate) fn select(
    path: &Path,
    topic: Option<&str>,
    needs_topic: bool,
) -> Result<Vec<Partition>> {
    let shown = named(path)?;
    if let Ok((tp, _)) = TopicPartition::parse_dir(&shown) {
        if let Some(topic) = topic.filter(|t| *t != tp.topic) {
            bail!(
                "{}: a partition of topic {:?}, not of --topic {topic:?}",
                path.display(),
                tp.topic
            );
        }
        return Ok(vec![Partition {
            dir: path.to_path_buf(),
            tp,
        }]);
    }
    let view = LogDirView::open(RealFs, path).map_err(lib).with_context(|| {
        format!(
            "{}: not a partition directory (its name must be topic-N), nor a log directory holding partitions",
            path.display()
        )
    })?;
    let mut all: Vec<Partition> = view
        .partitions()
        .iter()
        .filter_map(|dir| match TopicPartition::parse_dir(dir) {
            Ok((tp, DirKind::Live)) => Some(Partition {
                dir: dir.clone(),
                tp,
            }),
            _ => None,
        })
        .collect();
    all.sort_by(|a, b| (&a.tp.topic, a.tp.partition).cmp(&(&b.tp.topic, b.tp.partition)));
    let mut topics: Vec<&str> = all.iter().map(|p| p.tp.topic.as_str()).collect();
    topics.dedup();
    let here = if topics.is_empty() {
        "it holds no partition directory".to_owned()
    } else {
        format!("its topics: {}", topics.join(", "))
    };
    let Some(topic) = topic else {
        if needs_topic {
            bail!(
                "{}: a log directory: name a topic with --topic, or give one partition directory (topic-N) ({here})",
                path.display()
            );
        }
        if all.is_empty() {
            bail!("{}: no partition to read ({here})", path.display());
        }
        return Ok(all);
    };
    let chosen: Vec<Partition> = all
        .iter()
        .filter(|p| p.tp.topic == topic)
        .cloned()
        .collect();
    if chosen.is_empty() {
        bail!(
            "{}: no partition of topic {topic:?} ({here})",
            path.display()
        );
    }
    Ok(chosen)
}

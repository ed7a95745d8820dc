//! What the commands share: how a command ended, opening a partition directory through its log directory, JSON lines,
//! and progress bars that appear only on a terminal.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use seglog_log::inspect::PartitionView;
use seglog_log::{
    FileSystem as _, LogConfig, LogDir, LogDirOptions, PartitionLog, RealFs, SystemClock,
    TopicPartition,
};

/// A partition directory's log directory, its topic-partition, and the opened pair.
pub(crate) struct Opened {
    pub(crate) dir: Arc<LogDir<RealFs>>,
    pub(crate) log: PartitionLog<RealFs>,
}

/// Splits a partition directory path into its log directory and topic-partition.
pub(crate) fn partition_of(path: &Path) -> Result<(PathBuf, TopicPartition)> {
    let path =
        std::path::absolute(path).with_context(|| format!("{}: bad path", path.display()))?;
    let (tp, _) = TopicPartition::parse_dir(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let parent = path.parent().with_context(|| {
        format!(
            "{}: a partition directory needs a parent log directory",
            path.display()
        )
    })?;
    Ok((parent.to_path_buf(), tp))
}

/// Opens the log directory holding the partition directory `path` (taking its lock, reading its
/// checkpoints and clean-shutdown marker) and returns the partition's log. With `create`, a missing
/// partition is created with `config`.
pub(crate) fn open_partition(path: &Path, create: Option<LogConfig>) -> Result<Opened> {
    let (parent, tp) = partition_of(path)?;
    if create.is_none() && !RealFs.is_dir(path) {
        bail!(
            "{}: no such partition directory (use --create to make one)",
            path.display()
        );
    }
    let options = LogDirOptions {
        default_config: LogConfig::default(),
        recovery_threads: 2,
        time: Arc::new(SystemClock),
        progress: None,
        recover_all: false,
    };
    let (dir, _) = LogDir::open(RealFs, &parent, options).map_err(|e| anyhow::anyhow!("{e}"))?;
    let log = match dir.log(&tp) {
        Some(log) => log,
        None => dir
            .create_log(&tp, create)
            .map_err(|e| anyhow::anyhow!("{e}"))?,
    };
    Ok(Opened { dir, log })
}

/// A library error as one line: its message, which already names its cause.
#[expect(
    clippy::needless_pass_by_value,
    reason = "used as map_err(lib), which passes the error by value"
)]
pub(crate) fn lib(e: seglog_log::Error) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// A read-only view of the partition directory `dir` (no lock, nothing written), for
/// `consume`, `offsets` and `stats`.
pub(crate) fn partition_view(dir: &Path) -> Result<PartitionView<RealFs>> {
    if TopicPartition::parse_dir(dir).is_err() {
        bail!(
            "{}: not a partition directory (its name must be topic-N)",
            dir.display()
        );
    }
    PartitionView::open(RealFs, dir).map_err(lib)
}

/// Bytes as a base64 string, or JSON null.
pub(crate) fn b64(bytes: Option<&[u8]>) -> serde_json::Value {
    bytes.map_or(serde_json::Value::Null, |b| {
        serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(b))
    })
}

/// Writes one JSON object as one line.
pub(crate) fn json_line(out: &mut impl Write, value: &serde_json::Value) -> Result<()> {
    writeln!(out, "{value}")?;
    Ok(())
}

/// A progress bar on stderr when the binary runs at a terminal, hidden otherwise
/// ([`crate::term`]).
pub(crate) fn progress(len: u64, what: &str) -> crate::term::Progress {
    crate::term::Progress::new(len, what)
}

/// How a command ended when it did not fail outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Everything was fine.
    Clean,
    /// The command ran to its end but found problems in the data.
    Problems,
}

impl Outcome {
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Outcome::Clean => 0,
            Outcome::Problems => 1,
        }
    }
}

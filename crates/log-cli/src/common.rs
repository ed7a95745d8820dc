//! What the commands share: how a command ended, what a writing command may be pointed at (and
//! the refusal of anything else), opening a partition directory through its log directory, JSON
//! lines, and progress bars (see `term`).

use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use seglog_log::inspect::PartitionView;
use seglog_log::{
    CLEAN_SHUTDOWN_FILE, CLEANER_OFFSET_CHECKPOINT, DirKind, File as _, FileSystem as _,
    LOG_START_OFFSET_CHECKPOINT, LogConfig, LogDir, LogDirOptions, OpenMode, PARTITION_CONFIG_FILE,
    PartitionLog, RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT, RealFs, TopicPartition,
};

/// A partition directory's log directory, its topic-partition, and the opened pair.
pub(crate) struct Opened {
    pub(crate) dir: Arc<LogDir<RealFs>>,
    pub(crate) log: PartitionLog<RealFs>,
}

/// `path` made absolute, with `.` and `..` taken out by name (not by following links), so that
/// `.` or `../orders-0` given inside a partition directory names it as `topic-N`.
pub(crate) fn resolve(path: &Path) -> Result<PathBuf> {
    let absolute =
        std::path::absolute(path).with_context(|| format!("{}: bad path", path.display()))?;
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `path` itself, or [resolved](resolve) where it has no name of its own (`.`, `..`, `/`), so
/// that a directory given as `.` still has its `topic-N` name; messages keep naming paths as
/// they were given wherever they can.
pub(crate) fn named(path: &Path) -> Result<std::borrow::Cow<'_, Path>> {
    if path.file_name().is_some() {
        Ok(std::borrow::Cow::Borrowed(path))
    } else {
        resolve(path).map(std::borrow::Cow::Owned)
    }
}

/// Splits a partition directory path into its log directory and topic-partition.
pub(crate) fn partition_of(path: &Path) -> Result<(PathBuf, TopicPartition)> {
    let path = resolve(path)?;
    let (tp, _) = TopicPartition::parse_dir(&path).map_err(lib)?;
    let parent = path.parent().with_context(|| {
        format!(
            "{}: a partition directory needs a parent log directory",
            path.display()
        )
    })?;
    Ok((parent.to_path_buf(), tp))
}

/// The command a target is checked for, and what it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// `produce`: one partition; with `create`, one that may not exist yet, in a log directory
    /// that may not exist yet or be empty (the first partition).
    Produce { create: bool },
    /// `compact`: one existing partition.
    Compact,
    /// `recover`: one existing partition, or a log directory.
    Recover,
}

impl Use {
    fn verb(self) -> &'static str {
        match self {
            Use::Produce { .. } => "produce into",
            Use::Compact => "compact",
            Use::Recover => "recover",
        }
    }
}

/// What a writing command's target is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A live partition directory (`topic-N`): the log directory above it and its name.
    Partition {
        log_dir: PathBuf,
        tp: TopicPartition,
    },
    /// A log directory holding partition directories or Kafka's own files.
    LogDir(PathBuf),
}

/// The files only a log directory holds (Kafka's and ours): one of them makes a directory
/// without partitions a log directory still.
const LOG_DIR_FILES: &[&str] = &[
    ".lock",
    "meta.properties",
    CLEAN_SHUTDOWN_FILE,
    RECOVERY_POINT_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    CLEANER_OFFSET_CHECKPOINT,
];

/// What a directory holds, as far as telling a log directory from anything else goes.
struct Contents {
    /// Its `topic-N` subdirectories (live or not).
    partitions: Vec<PathBuf>,
    /// Whether it holds one of [`LOG_DIR_FILES`].
    log_dir_files: bool,
    /// Whether it holds files named like a segment's (`<offset>.log`, `.index`, ...).
    segment_files: bool,
    /// Whether it is empty.
    empty: bool,
}

fn contents(dir: &Path) -> Result<Contents> {
    let entries = RealFs
        .read_dir(dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?;
    let name = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned()
    };
    let mut partitions: Vec<PathBuf> = entries
        .iter()
        .filter(|e| RealFs.is_dir(e) && TopicPartition::parse_dir(e).is_ok())
        .cloned()
        .collect();
    partitions.sort();
    Ok(Contents {
        partitions,
        log_dir_files: entries
            .iter()
            .any(|e| LOG_DIR_FILES.contains(&name(e).as_str())),
        segment_files: entries
            .iter()
            .any(|e| seglog_log::naming::offset_from_file_name(&name(e)).is_some()),
        empty: entries.is_empty(),
    })
}

/// Classifies the path a writing command was given, and refuses (an error, so exit 2, before
/// anything is written) what is neither a live partition directory (`topic-N`) nor, where the
/// command takes one, a log directory: a plain file, a directory of unrelated files, a log
/// directory where one partition is wanted, `logs/orders` with the `-0` forgotten, a partition
/// directory marked for deletion. The error names the path and says why.
pub(crate) fn target(path: &Path, command: Use) -> Result<Target> {
    let resolved = resolve(path)?;
    let shown = path.display();
    let verb = command.verb();
    let refuse =
        |why: String| -> anyhow::Error { anyhow::anyhow!("{shown}: refusing to {verb} it: {why}") };
    let exists = RealFs.exists(&resolved);
    if exists && !RealFs.is_dir(&resolved) {
        return Err(refuse(
            "it is a file, not a partition directory (topic-N) or a log directory".to_owned(),
        ));
    }
    if let Ok((tp, kind)) = TopicPartition::parse_dir(&resolved) {
        let log_dir = resolved.parent().map(Path::to_path_buf).ok_or_else(|| {
            refuse("a partition directory needs a log directory above it".to_owned())
        })?;
        let pending = match kind {
            DirKind::Delete => {
                Some("marked for deletion (-delete): Kafka deletes it at its next start")
            }
            DirKind::Future => {
                Some("a future replica (-future), which Kafka moves into place once it caught up")
            }
            DirKind::Stray => Some("a stray partition (-stray) the cluster no longer assigns here"),
            DirKind::Live => None,
        };
        if let Some(pending) = pending {
            return Err(refuse(format!(
                "{tp} is {pending}, not a live partition directory"
            )));
        }
        if !exists {
            if command != (Use::Produce { create: true }) {
                let hint = if matches!(command, Use::Produce { .. }) {
                    " (use --create to make one)"
                } else {
                    ""
                };
                bail!("{shown}: no such partition directory{hint}");
            }
            // A new partition: its log directory is made if missing, used if empty or a log
            // directory, and refused if it holds anything else.
            if RealFs.exists(&log_dir) {
                if !RealFs.is_dir(&log_dir) {
                    return Err(refuse(format!(
                        "{} is a file, not a log directory",
                        log_dir.display()
                    )));
                }
                let above = contents(&log_dir)?;
                if !above.empty && above.partitions.is_empty() && !above.log_dir_files {
                    return Err(refuse(format!(
                        "{} is not a log directory: it holds neither partition directories (topic-N) nor a log directory's files",
                        log_dir.display()
                    )));
                }
            }
        }
        return Ok(Target::Partition { log_dir, tp });
    }
    if !exists {
        bail!("{shown}: no such directory");
    }
    let inside = contents(&resolved)?;
    if !inside.partitions.is_empty() || inside.log_dir_files {
        if command == Use::Recover {
            return Ok(Target::LogDir(resolved));
        }
        let example = inside
            .partitions
            .first()
            .and_then(|p| p.file_name())
            .map(|name| format!(" (e.g. {})", path.join(name).display()))
            .unwrap_or_default();
        return Err(refuse(format!(
            "it is a log directory, not a partition directory: name one of its partitions{example}"
        )));
    }
    let why = if inside.segment_files {
        "its name is not topic-N (a topic, a dash, a partition number) but it holds segment files: is the partition number missing (orders-0, not orders)?"
    } else if inside.empty {
        "it is an empty directory, neither a partition directory (topic-N) nor a log directory"
    } else {
        "it is neither a partition directory (topic-N) nor a log directory holding partition directories"
    };
    Err(refuse(why.to_owned()))
}

/// The configuration a partition directory's log uses: its `seglog.properties`, else Kafka's
/// defaults; with where it came from, for messages.
pub(crate) fn partition_config(dir: &Path) -> Result<(LogConfig, String)> {
    let path = dir.join(PARTITION_CONFIG_FILE);
    let file = match RealFs.open(&path, OpenMode::ReadOnly) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((
                LogConfig::default(),
                format!(
                    "Kafka's default: {} has no {PARTITION_CONFIG_FILE}",
                    dir.display()
                ),
            ));
        }
        Err(e) => return Err(e).with_context(|| format!("{}: cannot open", path.display())),
    };
    let len = file
        .len()
        .with_context(|| format!("{}: cannot stat", path.display()))?;
    let mut buf = vec![0; usize::try_from(len.min(1 << 20)).unwrap_or(0)];
    file.read_exact_at(&mut buf, 0)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let config = LogConfig::parse(&String::from_utf8_lossy(&buf))
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((config, format!("from {}", path.display())))
}

/// Opens the partition directory `path` alone within its log directory (symlinks resolved,
/// the log directory's `.lock` and the partition's own lock taken; no other partition loaded or
/// touched) and returns the partition's log. With `create`, a missing partition is created with
/// `config`.
pub(crate) fn open_partition(path: &Path, create: Option<LogConfig>) -> Result<Opened> {
    if create.is_none() && !RealFs.is_dir(path) {
        bail!("{}: no such partition directory", path.display());
    }
    let options = LogDirOptions::default();
    let (dir, tp, _) = LogDir::open_partition(RealFs, path, options).map_err(lib)?;
    let log = match dir.log(&tp) {
        Some(log) => log,
        None => dir.create_log(&tp, create).map_err(lib)?,
    };
    Ok(Opened { dir, log })
}

/// A library error as an `anyhow` error that keeps its causes (so an I/O failure can be told
/// from corrupt bytes); [`message`] prints it without repeating them.
pub(crate) fn lib(e: seglog_log::Error) -> anyhow::Error {
    anyhow::Error::new(e)
}

/// An error as the one line the user sees: each cause once. A library error's text already
/// names its cause (`... : No such file or directory (os error 2)`), so a cause already in the
/// line is not printed again.
pub(crate) fn message(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Whether `e` is a failure to read or write (an I/O error anywhere in its causes), as opposed to
/// bytes that are there but corrupt: exit 2, not 1.
pub(crate) fn is_io_failure(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.downcast_ref::<std::io::Error>().is_some())
}

/// Whether `e` is damage found in the data (corrupt bytes at a position of a file, impossible
/// offsets), not an I/O failure or bad usage: a read-only command exits 1 on it, not 2.
pub(crate) fn is_damage(e: &anyhow::Error) -> bool {
    !is_io_failure(e)
        && e.chain().any(|c| {
            c.downcast_ref::<seglog_log::Error>()
                .is_some_and(seglog_log::Error::is_damaged_data)
        })
}

/// A read-only view of the partition directory `dir` (no lock, nothing written), for
/// `consume`, `offsets` and `stats`.
pub(crate) fn partition_view(dir: &Path) -> Result<PartitionView<RealFs>> {
    let dir = &*named(dir)?;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Outcome {
    /// Everything was fine.
    Clean,
    /// The command ran to its end but found problems in the data.
    Problems,
    /// The command ran to its end, but some input could not be read (an I/O failure, a file
    /// missing or misnamed), each already reported.
    Failed,
}

impl Outcome {
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Outcome::Clean => 0,
            Outcome::Problems => 1,
            Outcome::Failed => 2,
        }
    }
}

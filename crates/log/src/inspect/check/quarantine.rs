//! The note for a partition's quarantine (`seglog-quarantine/<n>/`): ours, never a problem. It
//! says what each recovery set aside there and how to put it back.

use std::path::Path;

use seglog_fs::{File, FileSystem, OpenMode};
use seglog_segment::naming;

use super::Finding;
use crate::listing::PartitionFile;
use crate::partition::RESTORE_HINT;

/// What one recovery's directory holds, from its file names.
#[derive(Default)]
struct Run {
    segments: Vec<i64>,
    swaps: Vec<i64>,
    cut_tails: Vec<String>,
    strays: Vec<String>,
    index_files: usize,
    other_files: Vec<String>,
    bytes: u64,
    done: bool,
}

impl Run {
    fn read<F: FileSystem>(fs: &F, dir: &Path) -> Self {
        let mut run = Self::default();
        for entry in fs.read_dir_kinds(dir).unwrap_or_default() {
            let path = entry.path;
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if PartitionFile::with_kind(path.clone(), entry.is_dir).is_set_aside() {
                if !entry.is_dir {
                    run.bytes += fs
                        .open(&path, OpenMode::ReadOnly)
                        .and_then(|f| f.len())
                        .unwrap_or(0);
                }
                run.strays.push(name.to_owned());
                continue;
            }
            match name {
                "done" => {
                    run.done = true;
                    continue;
                }
                "plan.txt" => continue,
                _ => {}
            }
            run.bytes += fs
                .open(&path, OpenMode::ReadOnly)
                .and_then(|f| f.len())
                .unwrap_or(0);
            let base = naming::offset_from_file_name(name);
            let log_swap = format!("{}{}", naming::LOG_FILE_SUFFIX, naming::SWAP_FILE_SUFFIX);
            if name.contains(".log.cut-at-") {
                run.cut_tails.push(name.to_owned());
            } else if let (Some(base), true) = (base, name.ends_with(naming::LOG_FILE_SUFFIX)) {
                run.segments.push(base);
            } else if let (Some(base), true) = (base, name.ends_with(&log_swap)) {
                run.swaps.push(base);
            } else if base.is_some() && Path::new(name).extension().is_none_or(|e| e != "tmp") {
                run.index_files += 1;
            } else {
                run.other_files.push(name.to_owned());
            }
        }
        run
    }

    fn describe(&self, n: &str) -> String {
        let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        let mut parts = Vec::new();
        if !self.segments.is_empty() {
            parts.push(format!(
                "{} dropped segments (base offsets {})",
                self.segments.len(),
                list(&self.segments)
            ));
        }
        if !self.cut_tails.is_empty() {
            parts.push(format!("cut tails {}", self.cut_tails.join(", ")));
        }
        if !self.strays.is_empty() {
            parts.push(format!("stray entries {}", self.strays.join(", ")));
        }
        if !self.swaps.is_empty() {
            parts.push(format!(
                "damaged swaps (base offsets {})",
                list(&self.swaps)
            ));
        }
        if self.index_files > 0 {
            parts.push(format!("{} index files", self.index_files));
        }
        if !self.other_files.is_empty() {
            parts.push(format!("other files {}", self.other_files.join(", ")));
        }
        let what = if parts.is_empty() {
            "nothing".to_owned()
        } else {
            parts.join(", ")
        };
        let state = if self.done {
            ""
        } else {
            " (unfinished: a recover was stopped; the next recover carries on in it)"
        };
        format!("{n}/ holds {what} ({} bytes){state}", self.bytes)
    }
}

/// The note for the quarantine directory `dir` of a partition.
pub(super) fn quarantine_note<F: FileSystem>(fs: &F, dir: &Path) -> Finding {
    let mut runs: Vec<(u64, String)> = fs
        .read_dir(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| fs.is_dir(p))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_owned();
            Some((name.parse::<u64>().unwrap_or(u64::MAX), name))
        })
        .collect();
    runs.sort();
    let described: Vec<String> = runs
        .iter()
        .map(|(_, name)| Run::read(fs, &dir.join(name)).describe(name))
        .collect();
    let contents = if described.is_empty() {
        "empty".to_owned()
    } else {
        described.join("; ")
    };
    Finding::note(
        dir,
        "quarantine",
        format!(
            "what seglog recover set aside instead of deleting (Kafka does not read this directory; \
             each run's plan.txt says what its files are): {contents}. {RESTORE_HINT}"
        ),
    )
    .with_count(runs.len() as u64)
}

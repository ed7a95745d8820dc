//! Segment file names (`LogFileUtils`): the base offset zero-padded to 20 digits, then the suffix.

use std::path::{Path, PathBuf};

/// Record batches.
pub const LOG_FILE_SUFFIX: &str = ".log";
/// The offset index.
pub const INDEX_FILE_SUFFIX: &str = ".index";
/// The time index.
pub const TIME_INDEX_FILE_SUFFIX: &str = ".timeindex";
/// The aborted-transaction index (`crate::txn_index`), created by the first aborted transaction.
pub const TXN_INDEX_FILE_SUFFIX: &str = ".txnindex";
/// A segment scheduled for asynchronous deletion.
pub const DELETED_FILE_SUFFIX: &str = ".deleted";
/// The output of the cleaner or a split, not yet committed.
pub const CLEANED_FILE_SUFFIX: &str = ".cleaned";
/// A committed replacement, not yet renamed into place.
pub const SWAP_FILE_SUFFIX: &str = ".swap";

/// A path's file name, or `""`. The bytes after the last `/` when they are a plain name (every
/// path a directory listing makes), without `Path::file_name`'s walk over all components: a listing of
/// 40,000 entries asks for names several times each.
pub fn file_name(path: &Path) -> &str {
    let bytes = path.as_os_str().as_encoded_bytes();
    let start = bytes.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    match std::str::from_utf8(bytes.get(start..).unwrap_or_default()) {
        Ok(name) if !matches!(name, "" | "." | "..") => name,
        _ => path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default(),
    }
}

/// `00000000000000001234` for 1234.
pub fn file_prefix(base_offset: i64) -> String {
    format!("{base_offset:020}")
}

/// `<dir>/<prefix>.log<suffix>`.
pub fn log_file(dir: &Path, base_offset: i64, suffix: &str) -> PathBuf {
    dir.join(format!(
        "{}{LOG_FILE_SUFFIX}{suffix}",
        file_prefix(base_offset)
    ))
}

/// `<dir>/<prefix>.index<suffix>`.
pub fn offset_index_file(dir: &Path, base_offset: i64, suffix: &str) -> PathBuf {
    dir.join(format!(
        "{}{INDEX_FILE_SUFFIX}{suffix}",
        file_prefix(base_offset)
    ))
}

/// `<dir>/<prefix>.timeindex<suffix>`.
pub fn time_index_file(dir: &Path, base_offset: i64, suffix: &str) -> PathBuf {
    dir.join(format!(
        "{}{TIME_INDEX_FILE_SUFFIX}{suffix}",
        file_prefix(base_offset)
    ))
}

/// `<dir>/<prefix>.txnindex<suffix>`.
pub fn txn_index_file(dir: &Path, base_offset: i64, suffix: &str) -> PathBuf {
    dir.join(format!(
        "{}{TXN_INDEX_FILE_SUFFIX}{suffix}",
        file_prefix(base_offset)
    ))
}

/// Kafka's `offsetFromFileName`: the digits before the first `.`, if they parse.
pub fn offset_from_file_name(name: &str) -> Option<i64> {
    let prefix = name.split('.').next()?;
    if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    prefix.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_match_paths_file_name() {
        for path in [
            "t-0/00000000000000000000.log",
            "/a/b/00000000000000000016.snapshot",
            "x.index",
            "a/b/",
            "a/b/.",
            "a/..",
            "/",
            "",
            "a//b",
        ] {
            let path = Path::new(path);
            let expected = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            assert_eq!(file_name(path), expected, "{}", path.display());
        }
    }

    #[test]
    fn names_are_kafkas() {
        let dir = Path::new("/d");
        assert_eq!(
            log_file(dir, 0, ""),
            Path::new("/d/00000000000000000000.log")
        );
        assert_eq!(
            offset_index_file(dir, 1234, ".swap"),
            Path::new("/d/00000000000000001234.index.swap")
        );
        assert_eq!(
            time_index_file(dir, i64::from(i32::MAX) + 1, ""),
            Path::new("/d/00000000002147483648.timeindex")
        );
        assert_eq!(
            offset_from_file_name("00000000000000001234.log.deleted"),
            Some(1234)
        );
        assert_eq!(offset_from_file_name("leader-epoch-checkpoint"), None);
        assert_eq!(offset_from_file_name(".log"), None);
    }
}

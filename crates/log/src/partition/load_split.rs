//! Carrying out the plan's splits of segments whose offsets overflow their indexes (Kafka's
//! `LocalLog.splitOverflowedSegment`, KAFKA-6264), with the compaction's crash-safe protocol
//! (Kafka's `replaceSegments`): each piece is written and flushed as a `.cleaned` segment; the
//! pieces become `.swap`, highest base offset first; the old segment's files are removed; the
//! pieces lose their `.swap` suffix, lowest first. The next load aborts a split interrupted
//! before every piece is a `.swap` (and plans it again), and completes one interrupted after.

use std::ops::ControlFlow;
use std::path::PathBuf;

use seglog_fs::{FileSystem, OpenMode};
use seglog_segment::scan::{Scan, ScanEnd, scan_batches};
use seglog_segment::{LogSegment, naming};

use super::quarantine::Quarantine;
use super::recovery_plan::Split;
use super::{Inner, LoadReport};
use crate::error::{Error, Result};

/// The source `.log` is read in chunks of this size.
const COPY_CHUNK: usize = 1 << 20;

impl<F: FileSystem> Inner<F> {
    /// The plan's splits, each after its cut tail (damage after the pieces) was copied to the
    /// quarantine; the segments after such a cut were dropped before.
    pub(super) fn split_segments(
        &self,
        splits: &[Split],
        quarantine: Option<&Quarantine<F>>,
        report: &mut LoadReport,
    ) -> Result<()> {
        for split in splits {
            if let Some(cut) = &split.cut {
                self.keep_what_is_cut(cut, quarantine, report)?;
            }
            self.split_segment(split)?;
            let pieces = split.pieces.iter().map(|p| p.base_offset).collect();
            report.splits.push((split.base_offset, pieces));
        }
        Ok(())
    }

    fn split_segment(&self, split: &Split) -> Result<()> {
        let log = naming::log_file(&self.dir, split.base_offset, "");
        let mtime = self.fs.modified_ms(&log).map_err(|e| Error::io(&log, e))?;
        let mut pieces = Vec::with_capacity(split.pieces.len());
        for piece in &split.pieces {
            match self.write_piece(split, piece, mtime) {
                Ok(segment) => pieces.push(segment),
                Err(e) => {
                    // Void: not left for the next load to find (it would abort them anyway).
                    for segment in &pieces {
                        let _ = segment.delete();
                    }
                    return Err(e);
                }
            }
        }
        for piece in pieces.iter().rev() {
            piece.change_file_suffixes(naming::CLEANED_FILE_SUFFIX, naming::SWAP_FILE_SUFFIX)?;
        }
        self.sync_dir()?;
        for path in old_files(&self.dir, split.base_offset) {
            self.remove(&path)?;
        }
        self.sync_dir()?;
        for piece in &pieces {
            piece.change_file_suffixes(naming::SWAP_FILE_SUFFIX, "")?;
        }
        self.sync_dir()?;
        for piece in &pieces {
            piece.close()?;
        }
        Ok(())
    }

    /// One piece as a flushed `.cleaned` segment: its batches appended one by one (their index
    /// entries written as an append writes them), its modification time the old segment's.
    fn write_piece(
        &self,
        split: &Split,
        piece: &seglog_segment::split::SplitPiece,
        mtime: i64,
    ) -> Result<LogSegment<F>> {
        let base = piece.base_offset;
        for path in [
            naming::log_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
            naming::offset_index_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
            naming::time_index_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
            naming::txn_index_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
        ] {
            // A leftover of an earlier, interrupted split.
            self.remove(&path)?;
        }
        let segment = self.open_segment(base, naming::CLEANED_FILE_SUFFIX, false)?;
        let file = self
            .fs
            .open(&split.log, OpenMode::ReadOnly)
            .map_err(|e| Error::io(&split.log, e))?;
        let end = piece.position + piece.bytes;
        let scan = scan_batches(
            &file,
            &split.log,
            piece.position,
            end,
            COPY_CHUNK,
            |at, b| {
                let last = b
                    .decode()
                    .map_err(|source| seglog_segment::Error::Corrupt {
                        path: split.log.clone(),
                        position: at,
                        source,
                    })?
                    .last_offset();
                segment.append(last, b.bytes())?;
                Ok(ControlFlow::<()>::Continue(()))
            },
        );
        let copied = match scan {
            Ok(Scan::Ended(ScanEnd::Clean { position })) => position == end,
            Ok(_) => false,
            Err(e) => {
                let _ = segment.delete();
                return Err(e.into());
            }
        };
        // Kafka's check that the pieces hold every byte of the segment.
        if !copied || segment.size() != piece.bytes {
            let _ = segment.delete();
            return Err(Error::Changed {
                path: split.log.clone(),
                reason: format!(
                    "splitting it copied {} of the {} bytes at byte {} its plan gave the piece \
                     at base offset {base}: the file changed while recovery ran",
                    segment.size(),
                    piece.bytes,
                    piece.position
                ),
            });
        }
        segment.on_become_inactive()?;
        segment.flush()?;
        segment.set_last_modified_ms(mtime)?;
        Ok(segment)
    }
}

/// The old segment's files, the `.log` last: a removal interrupted before it leaves a segment
/// with fewer indexes, which the completed swaps replace all the same.
fn old_files(dir: &std::path::Path, base: i64) -> [PathBuf; 4] {
    [
        naming::offset_index_file(dir, base, ""),
        naming::time_index_file(dir, base, ""),
        naming::txn_index_file(dir, base, ""),
        naming::log_file(dir, base, ""),
    ]
}

//! Recovery written from the image a scan with recovery's rules built of a segment
//! ([`IndexImage`]): the indexes rebuilt, and the `.log` cut where the scan found its valid
//! prefix ends, without reading the `.log` again.

use seglog_fs::{File, FileSystem};
use seglog_mmap_index::TimestampOffset;

use super::index_image::IndexImage;
use super::recover::{RecoveryReport, finish_indexes};
use super::{LogSegment, Writer};
use crate::error::{Error, Result};

impl<F: FileSystem> LogSegment<F> {
    /// The indexes [`LogSegment::recover_before`] writes, written from `image`, which a scan
    /// with recovery's rules ([`scan_segment`](crate::scan_segment), with the same next base
    /// offset) built of this segment's valid prefix: nothing of the `.log` is read, and it is not
    /// changed. The entries go through the indexes' own checks, so an entry they refuse fails
    /// as the walk's would. An image built for other index settings or another segment is
    /// ignored, and the headers are walked ([`LogSegment::rebuild_indexes`]).
    ///
    /// The report's `valid_bytes` is the image's: when the `.log` no longer has that size (it
    /// changed since the scan), nothing is written, and the caller must stop.
    pub fn rebuild_indexes_from(&self, image: &IndexImage) -> Result<RecoveryReport> {
        if !self.image_applies(image) {
            return self.rebuild_indexes();
        }
        let mut w = self.writer.lock();
        let mut report = RecoveryReport {
            valid_bytes: image.valid_bytes,
            bytes_truncated: 0,
            batches: image.batches,
            index_entries: (0, 0),
            stop: None,
        };
        if self.size() != image.valid_bytes {
            return Ok(report);
        }
        self.write_image(&mut w, image)?;
        report.index_entries = finish_indexes(&mut w)?;
        Ok(report)
    }

    /// [`LogSegment::recover_before`] done from `image`, which a scan with recovery's rules
    /// ([`scan_segment`](crate::scan_segment), with the same next base offset) built of this
    /// segment: the indexes written from it, then the `.log` cut to the image's valid prefix, in
    /// the walk's order, with the walk's report, and nothing of the `.log` read.
    ///
    /// `None`, changing nothing, when the image does not apply: built for other index
    /// settings or another segment, or the `.log` no longer the size the scan read (it changed
    /// since). The caller then recovers by the walk, which checks every batch again.
    ///
    /// Refused, changing nothing, when this thread holds a loan of the `.log`'s bytes and the
    /// image cuts ([`Error::LoanHeld`]), as `recover_before` is.
    pub fn recover_from(&self, image: &IndexImage) -> Result<Option<RecoveryReport>> {
        if !self.image_applies(image) {
            return Ok(None);
        }
        let path = self.log_path();
        let mut w = self.writer.lock();
        let size = self.size();
        if size != image.scanned_size || image.valid_bytes > size {
            return Ok(None);
        }
        let bytes_truncated = size - image.valid_bytes;
        if bytes_truncated > 0 {
            self.check_not_lent("recover")?;
        }
        self.write_image(&mut w, image)?;
        if bytes_truncated > 0 {
            let log = self.log_for_write()?;
            self.shrink_mapping(&log, image.valid_bytes, "recover")?;
            log.set_len(image.valid_bytes)
                .map_err(|e| Error::io(&path, "truncate", e))?;
            self.size.publish(image.valid_bytes);
        }
        let index_entries = finish_indexes(&mut w)?;
        Ok(Some(RecoveryReport {
            valid_bytes: image.valid_bytes,
            bytes_truncated,
            batches: image.batches,
            index_entries,
            stop: image.stop.clone(),
        }))
    }

    /// Whether `image` was built for this segment at its index settings.
    fn image_applies(&self, image: &IndexImage) -> bool {
        image.base_offset == self.base_offset
            && image.interval == self.config.index_interval_bytes
            && image.max_index_size == self.config.max_index_size
    }

    /// Recovery's reset, then the image's entries appended through the indexes' own checks and
    /// its largest timestamp set; recovery's end (`finish_indexes`) is the caller's.
    fn write_image(&self, w: &mut Writer, image: &IndexImage) -> Result<()> {
        self.reset_indexes(w)?;
        let base = self.base_offset;
        let offset_index = w.offset_index.get_mut()?;
        for entry in image.offset_index.chunks_exact(8) {
            let (relative, position) = split_be(entry);
            offset_index.append(base + i64::from(relative), position)?;
        }
        let time_index = w.time_index.get_mut()?;
        for entry in image.time_entries_before_final().chunks_exact(12) {
            let (timestamp, relative) = entry.split_at(8);
            let timestamp = i64::from_be_bytes(timestamp.try_into().unwrap_or_default());
            let relative = u32::from_be_bytes(relative.try_into().unwrap_or_default());
            time_index.maybe_append(timestamp, base + i64::from(relative), false)?;
        }
        let (timestamp, offset) = image.max;
        w.set_max(TimestampOffset { timestamp, offset });
        Ok(())
    }
}

/// An offset index entry's two big-endian halves.
fn split_be(entry: &[u8]) -> (u32, u32) {
    let (a, b) = entry.split_at(4);
    (
        u32::from_be_bytes(a.try_into().unwrap_or_default()),
        u32::from_be_bytes(b.try_into().unwrap_or_default()),
    )
}

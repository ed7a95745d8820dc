//! Where the template's batches and their v2 header fields lie, read by hand from the bytes (the
//! generator only needs positions; the oracle, not this, judges what a case's bytes mean).

use std::path::Path;

use anyhow::{Context, Result, bail};

/// A v2 header field: name, byte offset in the batch, width in bytes.
pub(crate) const FIELDS: [(&str, usize, usize); 13] = [
    ("baseOffset", 0, 8),
    ("batchLength", 8, 4),
    ("partitionLeaderEpoch", 12, 4),
    ("magic", 16, 1),
    ("crc", 17, 4),
    ("attributes", 21, 2),
    ("lastOffsetDelta", 23, 4),
    ("baseTimestamp", 27, 8),
    ("maxTimestamp", 35, 8),
    ("producerId", 43, 8),
    ("producerEpoch", 51, 2),
    ("baseSequence", 53, 4),
    ("recordsCount", 57, 4),
];
/// Bytes of a v2 batch header; the records start here. The CRC covers `attributes..end`.
pub(crate) const HEADER: usize = 61;
pub(crate) const CRC_FROM: usize = 21;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Batch {
    pub(crate) position: usize,
    pub(crate) size: usize,
    pub(crate) codec: u8,
}

#[derive(Debug, Clone)]
pub(crate) struct Segment {
    pub(crate) base: u64,
    pub(crate) stem: String,
    pub(crate) batches: Vec<Batch>,
    pub(crate) len: usize,
    /// Lengths of the `.index` and `.timeindex`.
    pub(crate) index_len: usize,
    pub(crate) time_index_len: usize,
}

/// The segments of a partition directory, by base offset.
pub(crate) fn segments(partition: &Path) -> Result<Vec<Segment>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(partition)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".log") else {
            continue;
        };
        let base: u64 = stem
            .parse()
            .with_context(|| format!("segment name {name}"))?;
        let bytes = std::fs::read(partition.join(&name))?;
        let mut batches = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let len = u32::from_be_bytes(field::<4>(&bytes, at + 8)?);
            let size = 12 + usize::try_from(len)?;
            let attributes = u16::from_be_bytes(field::<2>(&bytes, at + 21)?);
            let codec = u8::try_from(attributes & 7)?;
            batches.push(Batch {
                position: at,
                size,
                codec,
            });
            at += size;
        }
        if at != bytes.len() {
            bail!("{name}: the template does not end on a batch");
        }
        let index_len =
            usize::try_from(std::fs::metadata(partition.join(format!("{stem}.index")))?.len())?;
        let time_index_len =
            usize::try_from(std::fs::metadata(partition.join(format!("{stem}.timeindex")))?.len())?;
        out.push(Segment {
            base,
            stem: stem.to_owned(),
            batches,
            len: bytes.len(),
            index_len,
            time_index_len,
        });
    }
    out.sort_by_key(|s| s.base);
    Ok(out)
}

fn field<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N]> {
    let slice = bytes.get(at..at + N).context("short batch header")?;
    Ok(slice.try_into()?)
}

/// Recomputes the CRC of the batch at `position` after a change inside it.
pub(crate) fn fix_crc(bytes: &mut [u8], position: usize, size: usize) {
    if let Some(covered) = bytes.get(position + CRC_FROM..position + size) {
        let crc = seglog_record_format::crc32c(covered).to_be_bytes();
        if let Some(slot) = bytes.get_mut(position + 17..position + 21) {
            slot.copy_from_slice(&crc);
        }
    }
}

//! The mutation families. Each returns its cases; `all` lists them in a fixed order, so the case
//! numbers follow from the seed alone.

mod bytes;
mod files;
mod header;
mod index;
mod records;

use crate::case::Case;
use crate::layout::{Batch, Segment};
use crate::rng::Rng;
use crate::template::CODEC_NAMES;

pub(crate) fn all(segments: &[Segment], rng: &mut Rng) -> Vec<Case> {
    let mut out = Vec::new();
    header::cases(segments, rng, &mut out);
    records::cases(segments, rng, &mut out);
    bytes::cases(segments, rng, &mut out);
    index::cases(segments, rng, &mut out);
    files::cases(segments, &mut out);
    out
}

pub(crate) fn codec_name(codec: u8) -> &'static str {
    CODEC_NAMES
        .get(usize::from(codec))
        .copied()
        .unwrap_or("unknown")
}

/// One batch of each codec in `segment`, chosen by `rng` among that codec's batches (the first
/// and last batch of a segment excluded where another exists, so neighbours are there).
pub(crate) fn one_per_codec(segment: &Segment, rng: &mut Rng) -> Vec<Batch> {
    let mut out = Vec::new();
    for codec in 0..5 {
        let n = segment.batches.len();
        let inner: Vec<Batch> = segment
            .batches
            .iter()
            .enumerate()
            .filter(|(i, b)| b.codec == codec && *i > 0 && i + 1 < n)
            .map(|(_, b)| *b)
            .collect();
        let pool = if inner.is_empty() {
            segment
                .batches
                .iter()
                .filter(|b| b.codec == codec)
                .copied()
                .collect()
        } else {
            inner
        };
        let pick = usize::try_from(rng.below(pool.len() as u64)).unwrap_or(0);
        if let Some(b) = pool.get(pick) {
            out.push(*b);
        }
    }
    out
}

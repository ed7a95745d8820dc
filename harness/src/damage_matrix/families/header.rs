//! Bit flips in every v2 header field (CRC left as it is), batch lengths off by a few bytes, and
//! header fields inside the CRC changed with the CRC recomputed.

use crate::case::{Case, Expect, edit, flip};
use crate::layout::{FIELDS, Segment, fix_crc};
use crate::rng::Rng;

use super::{codec_name, one_per_codec};

pub(super) fn cases(segments: &[Segment], rng: &mut Rng, out: &mut Vec<Case>) {
    let Some(middle) = segments.get(1) else {
        return;
    };
    let Some(last) = segments.last() else { return };
    for (field, at, width) in FIELDS {
        let family = Box::leak(format!("flip.{field}").into_boxed_str());
        let bits = width * 8;
        // the lowest bit, the highest (the sign), and three more drawn from the seed
        let mut chosen = vec![0, bits - 1];
        for _ in 0..3 {
            chosen.push(usize::try_from(rng.below(bits as u64)).unwrap_or(0));
        }
        let mut targets: Vec<(&Segment, crate::layout::Batch)> = one_per_codec(middle, rng)
            .into_iter()
            .map(|b| (middle, b))
            .collect();
        if field == "baseOffset" {
            // the base offset is outside the CRC: also in the last segment, where no later
            // segment's name bounds it
            targets.extend(one_per_codec(last, rng).into_iter().map(|b| (last, b)));
            chosen.extend([4, 20, 30]);
        }
        for (segment, batch) in targets {
            for &bit in &chosen {
                let name = format!("{}.log", segment.stem);
                let pos = batch.position + at;
                out.push(Case::new(
                    family,
                    codec_name(batch.codec),
                    format!(
                        "{name}: bit {bit} of {field} of the batch at byte {}",
                        batch.position
                    ),
                    Expect::Oracle,
                    move |_, part| edit(part, &name, |b| flip(b, pos, width, bit)),
                ));
            }
        }
    }
    for batch in one_per_codec(middle, rng) {
        for delta in [-1_i64, 1, -61, 1000] {
            let name = format!("{}.log", middle.stem);
            let pos = batch.position + 8;
            out.push(Case::new(
                "len.batchLength",
                codec_name(batch.codec),
                format!(
                    "{name}: batchLength {delta:+} of the batch at byte {}",
                    batch.position
                ),
                Expect::Oracle,
                move |_, part| edit(part, &name, |b| add_be(b, pos, 4, delta)),
            ));
        }
    }
    // inside the CRC, so recomputed: the count, the last offset delta, the timestamps
    let crc_fields: [(&'static str, usize, usize, &[i64]); 4] = [
        ("crc.recordsCount", 57, 4, &[1, -1, -4, 1000, -5]),
        ("crc.lastOffsetDelta", 23, 4, &[1, -1, -3, 100]),
        ("crc.maxTimestamp", 35, 8, &[-1_000_000, 1]),
        ("crc.baseTimestamp", 27, 8, &[-1_000_000, 1_000_000]),
    ];
    for (family, at, width, deltas) in crc_fields {
        for batch in one_per_codec(middle, rng) {
            for &delta in deltas {
                let name = format!("{}.log", middle.stem);
                let (pos, size) = (batch.position, batch.size);
                out.push(Case::new(
                    family,
                    codec_name(batch.codec),
                    format!(
                        "{name}: field at +{at} {delta:+}, CRC recomputed, batch at byte {pos}"
                    ),
                    Expect::Oracle,
                    move |_, part| {
                        edit(part, &name, |b| {
                            add_be(b, pos + at, width, delta);
                            fix_crc(b, pos, size);
                        })
                    },
                ));
            }
        }
    }
}

/// Adds `delta` to the big-endian signed field at `at..at+width` (wrapping).
pub(super) fn add_be(bytes: &mut [u8], at: usize, width: usize, delta: i64) {
    let Some(slot) = bytes.get_mut(at..at + width) else {
        return;
    };
    let mut v: i64 = 0;
    for b in slot.iter() {
        v = (v << 8) | i64::from(*b);
    }
    let shift = 64 - 8 * width;
    let v = ((v << shift) >> shift).wrapping_add(delta);
    for (i, b) in slot.iter_mut().enumerate() {
        *b = (v >> (8 * (width - 1 - i))).to_be_bytes()[7];
    }
}

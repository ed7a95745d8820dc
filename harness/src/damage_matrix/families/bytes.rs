//! Damage to the bytes of a `.log` as a disk or a crash makes it: truncation at every byte of a
//! batch, zeroed sectors and pages, zeros and garbage appended, garbage written over a range.

use crate::case::{Case, Expect, edit};
use crate::layout::Segment;
use crate::rng::Rng;

use super::codec_name;

pub(super) fn cases(segments: &[Segment], rng: &mut Rng, out: &mut Vec<Case>) {
    let (Some(middle), Some(last)) = (segments.get(1), segments.last()) else {
        return;
    };
    // every byte of the last batch of the log (uncompressed), and of a compressed batch that
    // ends a middle segment (the cut file is then a non-last segment's torn tail)
    let mut cuts = Vec::new();
    if let Some(b) = last.batches.last() {
        cuts.push((last, *b));
    }
    if let Some(b) = middle.batches.iter().rev().find(|b| b.codec != 0) {
        cuts.push((middle, *b));
    }
    for (segment, batch) in cuts {
        for k in 0..batch.size {
            let name = format!("{}.log", segment.stem);
            let at = batch.position + k;
            out.push(Case::new(
                "cut.batch",
                codec_name(batch.codec),
                format!(
                    "{name} cut at byte {at} (byte {k} of the batch at {})",
                    batch.position
                ),
                Expect::Oracle,
                move |_, part| edit(part, &name, |b| b.truncate(at)),
            ));
        }
    }
    for segment in [segments.first(), Some(middle), Some(last)]
        .into_iter()
        .flatten()
    {
        let name = format!("{}.log", segment.stem);
        for page in 0..segment.len.div_ceil(4096) {
            let name = name.clone();
            let at = page * 4096;
            out.push(Case::new(
                "zero.page",
                "mixed",
                format!("{name}: page {page} (4096 bytes at {at}) zeroed"),
                Expect::Oracle,
                move |_, part| edit(part, &name, |b| zero(b, at, 4096)),
            ));
        }
        for _ in 0..3 {
            let name = name.clone();
            let sectors = u64::try_from(segment.len / 512).unwrap_or(1);
            let at = usize::try_from(rng.below(sectors)).unwrap_or(0) * 512;
            out.push(Case::new(
                "zero.sector",
                "mixed",
                format!("{name}: 512 bytes at {at} zeroed"),
                Expect::Oracle,
                move |_, part| edit(part, &name, |b| zero(b, at, 512)),
            ));
        }
    }
    for segment in [middle, last] {
        for n in [1, 12, 17, 61, 512, 4096] {
            let name = format!("{}.log", segment.stem);
            out.push(Case::new(
                "tail.zeros",
                "-",
                format!("{name}: {n} zero bytes appended (a preallocated tail)"),
                Expect::Oracle,
                move |_, part| edit(part, &name, |b| b.resize(b.len() + n, 0)),
            ));
        }
        for n in [1, 12, 61, 300, 4096] {
            let name = format!("{}.log", segment.stem);
            let garbage = rng.bytes(n);
            out.push(Case::new(
                "tail.garbage",
                "-",
                format!("{name}: {n} random bytes appended"),
                Expect::Oracle,
                move |_, part| edit(part, &name, |b| b.extend_from_slice(&garbage)),
            ));
        }
        for _ in 0..5 {
            let name = format!("{}.log", segment.stem);
            let n = 1 + usize::try_from(rng.below(200)).unwrap_or(0);
            let at = usize::try_from(rng.below(segment.len as u64)).unwrap_or(0);
            let garbage = rng.bytes(n);
            out.push(Case::new(
                "overwrite.garbage",
                "mixed",
                format!("{name}: {n} random bytes written at {at}"),
                Expect::Oracle,
                move |_, part| {
                    edit(part, &name, |b| {
                        for (i, g) in garbage.iter().enumerate() {
                            if let Some(x) = b.get_mut(at + i) {
                                *x = *g;
                            }
                        }
                    })
                },
            ));
        }
    }
}

fn zero(b: &mut [u8], at: usize, n: usize) {
    let end = (at + n).min(b.len());
    if let Some(s) = b.get_mut(at..end) {
        s.fill(0);
    }
}

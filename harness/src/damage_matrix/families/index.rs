//! Damage to `.index` (8-byte entries) and `.timeindex` (12-byte entries): bit flips, truncation
//! at every byte of the last two entries, zeroing, deletion, and files made longer (zeros, a
//! preallocated 10 MiB, garbage).

use crate::case::{Case, Expect, edit, flip};
use crate::layout::Segment;
use crate::rng::Rng;

pub(super) fn cases(segments: &[Segment], rng: &mut Rng, out: &mut Vec<Case>) {
    for (ext, entry, prefix) in [("index", 8_usize, "idx"), ("timeindex", 12, "tidx")] {
        let fam =
            |what: &str| -> &'static str { Box::leak(format!("{prefix}.{what}").into_boxed_str()) };
        for (i, segment) in segments.iter().enumerate() {
            let name = format!("{}.{ext}", segment.stem);
            let len = if ext == "index" {
                segment.index_len
            } else {
                segment.time_index_len
            };
            let entries = len / entry;
            // bit flips: two per segment, one in each half of an entry
            for half in 0..2 {
                let e = usize::try_from(rng.below(entries as u64)).unwrap_or(0);
                let width = if half == 0 { entry - 4 } else { 4 };
                let at = e * entry + if half == 0 { 0 } else { entry - 4 };
                let bit = usize::try_from(rng.below(8 * width as u64)).unwrap_or(0);
                let name = name.clone();
                out.push(Case::new(
                    fam("flip"),
                    "-",
                    format!("{name}: bit {bit} of the field at byte {at} (entry {e})"),
                    Expect::Oracle,
                    move |_, part| edit(part, &name, |b| flip(b, at, width, bit)),
                ));
            }
            let name2 = name.clone();
            out.push(Case::new(
                fam("missing"),
                "-",
                format!("{name} deleted"),
                Expect::Note,
                move |_, part| Ok(std::fs::remove_file(part.join(&name2))?),
            ));
            let name2 = name.clone();
            out.push(Case::new(
                fam("zero"),
                "-",
                format!("{name}: every byte zeroed"),
                Expect::Oracle,
                move |_, part| edit(part, &name2, |b| b.fill(0)),
            ));
            let name2 = name.clone();
            let at = len.saturating_sub(2 * entry);
            out.push(Case::new(
                fam("zero"),
                "-",
                format!("{name}: the last two entries zeroed"),
                Expect::Oracle,
                move |_, part| {
                    edit(part, &name2, |b| {
                        b.get_mut(at..).into_iter().for_each(|s| s.fill(0));
                    })
                },
            ));
            for (what, extra) in [
                ("zeros", entry),
                ("zeros", 4096 * entry),
                ("garbage", entry),
            ] {
                let name2 = name.clone();
                let garbage = rng.bytes(extra);
                let zeros = what == "zeros";
                out.push(Case::new(
                    fam("oversized"),
                    "-",
                    format!("{name}: {extra} {what} bytes appended"),
                    Expect::Oracle,
                    move |_, part| {
                        edit(part, &name2, |b| {
                            if zeros {
                                b.resize(b.len() + extra, 0);
                            } else {
                                b.extend_from_slice(&garbage);
                            }
                        })
                    },
                ));
            }
            // truncation at every byte of the last two entries, in the second segment; at an
            // entry boundary (a sparser index) and half way in the others
            let cuts: Vec<usize> = if i == 1 {
                (len.saturating_sub(2 * entry)..len).collect()
            } else {
                vec![len.saturating_sub(entry), len.saturating_sub(entry / 2), 0]
            };
            for at in cuts {
                let name2 = name.clone();
                out.push(Case::new(
                    fam("cut"),
                    "-",
                    format!("{name} cut at byte {at}"),
                    Expect::Oracle,
                    move |_, part| edit(part, &name2, |b| b.truncate(at)),
                ));
            }
        }
    }
}

//! Damage to the directory rather than to bytes: stray and misnamed files, Kafka's `.deleted`,
//! `.cleaned` and `.swap` leftovers (and bad swaps), segments overlapping their predecessor, and
//! bad checkpoints.

use std::fs;
use std::path::Path;

use anyhow::Result;

use crate::case::{Case, Expect};
use crate::layout::Segment;

/// Makes a stray entry in the partition directory.
type Make = fn(&Path) -> Result<()>;

pub(super) fn cases(segments: &[Segment], out: &mut Vec<Case>) {
    let (Some(first), Some(middle), Some(last)) =
        (segments.first(), segments.get(1), segments.last())
    else {
        return;
    };
    let (m, l) = (middle.stem.clone(), last.stem.clone());
    let stray: [(&str, Expect, Make); 6] = [
        ("a file `notes.txt`", Expect::Note, |p| {
            Ok(fs::write(p.join("notes.txt"), b"hello")?)
        }),
        (
            "a file `123.log` (not a segment name)",
            Expect::Problem,
            |p| Ok(fs::write(p.join("123.log"), b"garbage")?),
        ),
        ("a directory named like a segment", Expect::Problem, |p| {
            Ok(fs::create_dir(p.join("00000000000000099999.log"))?)
        }),
        // Kafka's loader lists files only, and takes an empty segment as the active one
        ("a directory `lost+found`", Expect::Note, |p| {
            Ok(fs::create_dir(p.join("lost+found"))?)
        }),
        ("an empty `.log` past the end", Expect::Note, |p| {
            Ok(fs::write(p.join("00000000000000099999.log"), b"")?)
        }),
        ("an orphan `.timeindex` (no `.log`)", Expect::Note, |p| {
            Ok(fs::write(
                p.join("00000000000000099999.timeindex"),
                [0u8; 12],
            )?)
        }),
    ];
    for (what, expect, f) in stray {
        out.push(Case::new(
            "stray",
            "-",
            what.to_owned(),
            expect,
            move |_, p| f(p),
        ));
    }
    // the middle segment's three files renamed one offset up (its first batch then lies below
    // its name) and the last segment's one offset down (its name inside its predecessor)
    for (stem, delta) in [(m.clone(), 1_i64), (l.clone(), -1), (l.clone(), 1)] {
        out.push(Case::new(
            "misnamed",
            "-",
            format!("segment {stem}'s files renamed to base {delta:+}"),
            Expect::Oracle,
            move |_, p| {
                let base: i64 = stem.parse()?;
                for ext in ["log", "index", "timeindex"] {
                    fs::rename(
                        p.join(format!("{stem}.{ext}")),
                        p.join(format!("{:020}.{ext}", base + delta)),
                    )?;
                }
                Ok(())
            },
        ));
    }
    // copies of a segment's .log named inside the range of the segment it copies
    for (stem, delta) in [(l.clone(), 1_i64), (m.clone(), 1), (first.stem.clone(), 5)] {
        out.push(Case::new(
            "overlap",
            "-",
            format!("a copy of {stem}.log named {delta:+}"),
            Expect::Oracle,
            move |_, p| {
                let base: i64 = stem.parse()?;
                fs::copy(
                    p.join(format!("{stem}.log")),
                    p.join(format!("{:020}.log", base + delta)),
                )?;
                Ok(())
            },
        ));
    }
    leftovers(&m, &l, out);
    checkpoints(out);
}

fn leftovers(m: &str, l: &str, out: &mut Vec<Case>) {
    for stem in [m, l] {
        for mask in 1..8_u8 {
            for all_three in [false, true] {
                let kinds: Vec<&str> = [(1, "deleted"), (2, "cleaned"), (4, "swap")]
                    .iter()
                    .filter(|(bit, _)| mask & bit != 0)
                    .map(|(_, k)| *k)
                    .collect();
                let expect = if mask & 4 != 0 {
                    Expect::Problem
                } else {
                    Expect::Note
                };
                let stem = stem.to_owned();
                out.push(Case::new(
                    "leftover",
                    "-",
                    format!(
                        "{stem}: .{} next to {}",
                        kinds.join(", ."),
                        if all_three {
                            "all three files"
                        } else {
                            "the .log"
                        }
                    ),
                    expect,
                    move |_, p| {
                        let exts: &[&str] = if all_three {
                            &["log", "index", "timeindex"]
                        } else {
                            &["log"]
                        };
                        for ext in exts {
                            let live = p.join(format!("{stem}.{ext}"));
                            for kind in &kinds {
                                let to = p.join(format!("{stem}.{ext}.{kind}"));
                                // a swap is a finished cleaning's copy of the live file; the others garbage
                                if *kind == "swap" {
                                    fs::copy(&live, &to)?;
                                } else {
                                    fs::write(&to, b"left over")?;
                                }
                            }
                        }
                        Ok(())
                    },
                ));
            }
        }
        for (what, fill) in [("zero-filled", 0_u8), ("garbage", 0x5a)] {
            let stem = stem.to_owned();
            out.push(Case::new(
                "swap.bad",
                "-",
                format!("a {what} {stem}.log.swap of 4096 bytes"),
                Expect::Problem,
                move |_, p| {
                    Ok(fs::write(
                        p.join(format!("{stem}.log.swap")),
                        vec![fill; 4096],
                    )?)
                },
            ));
        }
    }
}

fn checkpoints(out: &mut Vec<Case>) {
    let rp = "recovery-point-offset-checkpoint";
    let ls = "log-start-offset-checkpoint";
    let bad: [(&str, &str, &str, Expect); 9] = [
        (rp, "garbage", "\u{1}\u{2}garbage\n", Expect::Problem),
        (rp, "version 7", "7\n1\nt 0 0\n", Expect::Problem),
        (
            rp,
            "a count of 3 with 1 entry",
            "0\n3\nt 0 0\n",
            Expect::Problem,
        ),
        (rp, "a non-numeric offset", "0\n1\nt 0 x\n", Expect::Problem),
        (rp, "empty", "", Expect::Note),
        (
            rp,
            "at 100000, beyond the log end",
            "0\n1\nt 0 100000\n",
            Expect::Problem,
        ),
        (
            rp,
            "at 0 (everything to recover)",
            "0\n1\nt 0 0\n",
            Expect::Note,
        ),
        (ls, "garbage", "zz\n", Expect::Problem),
        (
            ls,
            "a count of 2 with 1 entry",
            "0\n2\nt 0 0\n",
            Expect::Problem,
        ),
    ];
    for (file, what, text, expect) in bad {
        out.push(Case::new(
            "checkpoint",
            "-",
            format!("{file}: {what}"),
            expect,
            move |dir, _| Ok(fs::write(dir.join(file), text)?),
        ));
    }
}

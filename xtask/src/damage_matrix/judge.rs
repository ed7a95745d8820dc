//! One case judged: the real `seglog` binary on the damaged directory, each command under a time
//! limit, against the oracle's facts and the documented rules.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;

use super::facts::{Facts, Rec, rec_of};
use super::proc::{Ran, seglog, short};
use super::rules::{Expected, expected};

#[derive(Debug, Clone)]
pub(super) struct Meta {
    pub(super) id: u64,
    pub(super) family: String,
    pub(super) codec: String,
    pub(super) what: String,
    pub(super) expect: String,
    pub(super) dir: PathBuf,
}

pub(super) struct Verdict {
    pub(super) outcome: &'static str,
    pub(super) rule: String,
    pub(super) kinds: String,
    pub(super) failure: Option<String>,
    /// How the plain recover of the contract ended (`plain.rs`).
    pub(super) plain: &'static str,
}

pub(super) fn judge(bin: &Path, meta: &Meta, facts: &Facts) -> Verdict {
    let mut exp = expected(facts);
    match meta.expect.as_str() {
        "problem" => {
            exp.damaged = true;
            exp.rule = format!("documented problem ({}); {}", meta.family, exp.rule);
        }
        "note" => exp.rule = format!("Kafka accepts it: a note ({}); {}", meta.family, exp.rule),
        _ => {}
    }
    let outcome = match (exp.damaged, exp.kept.len() == all_records(facts)) {
        (false, _) => "check 0, all kept",
        (true, true) => "check 1, all kept",
        (true, false) => "check 1, records dropped",
    };
    let (failure, plain) = match run(bin, meta, &exp) {
        Ok(plain) => (None, plain),
        Err(e) => (Some(format!("{e:#}")), "failed"),
    };
    let kinds = match (meta.expect.as_str(), exp.kinds.is_empty()) {
        ("problem", _) => "a documented problem (the family's)".to_owned(),
        ("note", _) => "Kafka accepts it: a note or nothing (the family's)".to_owned(),
        (_, true) => "kafka: nothing to cut".to_owned(),
        _ => exp.kinds.join(" + "),
    };
    Verdict {
        outcome,
        rule: exp.rule,
        kinds,
        failure,
        plain,
    }
}

fn all_records(facts: &Facts) -> usize {
    facts
        .segments
        .iter()
        .flat_map(|s| &s.batches)
        .map(|b| b.records.len())
        .sum()
}

type Tree = BTreeMap<PathBuf, Option<Vec<u8>>>;

fn tree(dir: &Path) -> Result<Tree> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            let rel = path.strip_prefix(dir)?.to_path_buf();
            if path.is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path)?));
            }
        }
    }
    Ok(out)
}

fn unchanged(before: &Tree, dir: &Path, after_what: &str) -> Result<()> {
    let now = tree(dir)?;
    if &now != before {
        let changed: Vec<String> = before
            .keys()
            .chain(now.keys())
            .filter(|k| before.get(*k) != now.get(*k))
            .map(|k| k.display().to_string())
            .collect();
        bail!("{after_what} changed the directory: {}", changed.join(", "));
    }
    Ok(())
}

/// A failure must say what and where: on exit 2 (usage, I/O) one `seglog:` line naming the
/// partition's path; on exit 1 (damage found) a line naming it, on stderr or, for `stats`, a
/// `damage:` line on stdout.
fn named(ran: &Ran, what: &str, part: &str) -> Result<()> {
    if ran.code == 2 {
        ensure!(
            ran.stderr.starts_with("seglog: ") && ran.stderr.contains(part),
            "{what} failed without naming the partition's file: {}",
            short(&ran.stderr)
        );
    }
    if ran.code == 1 {
        let on_stdout = ran
            .stdout
            .lines()
            .any(|l| l.starts_with("damage: ") && l.contains(part));
        ensure!(
            ran.stderr.contains(part) || on_stdout,
            "{what} reported damage without naming the partition's file: {}",
            short(&ran.stderr)
        );
    }
    Ok(())
}

pub(super) fn consumed(out: &str) -> Result<Vec<Rec>> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value =
                serde_json::from_str(l).with_context(|| format!("consume printed {l}"))?;
            // kcat's -J shape, bytes in base64 (--json-bytes base64).
            rec_of(&v, "offset", "ts", "key", "payload")
        })
        .collect()
}

fn run(bin: &Path, meta: &Meta, exp: &Expected) -> Result<&'static str> {
    let part = meta.dir.to_str().context("a case path that is not UTF-8")?;
    let log_dir = meta.dir.parent().context("the case's log directory")?;
    let before = tree(log_dir)?;

    // read-only commands: no signal, no panic, no hang, no byte changed
    let check = seglog(bin, &["check", "--json", part], &[0, 1])?;
    let want = i32::from(exp.damaged);
    ensure!(
        check.code == want,
        "check exited {} where the oracle says {} ({}); check said: {}",
        check.code,
        if exp.damaged {
            "damaged"
        } else {
            "not damaged"
        },
        exp.rule,
        short(&check.stdout)
    );
    let mut files: Vec<String> = before
        .keys()
        .filter_map(|k| {
            k.strip_prefix(meta.dir.file_name().unwrap_or_default())
                .ok()
        })
        .filter(|k| k.components().count() == 1)
        .map(|k| k.display().to_string())
        .filter(|n| n.len() > 20 && matches!(ext(n), Some("log" | "index" | "timeindex")))
        .map(|n| meta.dir.join(n).display().to_string())
        .collect();
    files.sort();
    if !files.is_empty() {
        // 2 where a file cannot be dumped at all (a directory, an index without its .log)
        let dump = seglog(
            bin,
            &["dump", "--deep-iteration", "--files", &files.join(",")],
            &[0, 1, 2],
        )?;
        named(&dump, "dump", part)?;
    }
    // a reader that stops at damage fails (exit 1) with a message naming the file
    let read = seglog(
        bin,
        &["consume", "--json", "--json-bytes", "base64", part],
        &[0, 1, 2],
    )?;
    named(&read, "consume", part)?;
    for r in consumed(&read.stdout)? {
        ensure!(
            exp.readable.contains(&r),
            "consume (before recover) returned a record no valid batch holds: {r:?}"
        );
    }
    for how in ["--earliest", "--latest", "--max-timestamp"] {
        named(
            &seglog(bin, &["offsets", how, "--json", part], &[0, 1, 2])?,
            "offsets",
            part,
        )?;
    }
    named(
        &seglog(
            bin,
            &["offsets", "--timestamp", "1700000001000", part],
            &[0, 1, 2],
        )?,
        "offsets",
        part,
    )?;
    named(&seglog(bin, &["stats", part], &[0, 1, 2])?, "stats", part)?;
    unchanged(&before, log_dir, "a read-only command")?;
    seglog(bin, &["recover", "--full", "--dry-run", part], &[0, 1])?;
    unchanged(&before, log_dir, "recover --dry-run")?;
    // check, a plain recover, check: on a copy, before the directory is recovered below
    let plain = super::plain::contract(bin, meta, exp, check.code == 1)?;
    full_recover(bin, meta, exp, &before)?;
    Ok(plain)
}

/// `recover --full`: exactly the rules' prefix, every dropped byte set aside, the report true.
fn full_recover(bin: &Path, meta: &Meta, exp: &Expected, before: &Tree) -> Result<()> {
    let part = meta.dir.to_str().context("a case path that is not UTF-8")?;
    let rec = seglog(bin, &["recover", "--full", "--json", part], &[0])?;
    let after = seglog(bin, &["check", part], &[0, 1])?;
    ensure!(
        after.code == 0,
        "check after recover exited 1: {}",
        short(&after.stdout)
    );
    let got = consumed(
        &seglog(
            bin,
            &["consume", "--json", "--json-bytes", "base64", part],
            &[0],
        )?
        .stdout,
    )?;
    if got != exp.kept {
        let first_diff = got
            .iter()
            .zip(&exp.kept)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(exp.kept.len()));
        bail!(
            "after recover consume returned {} records, the rules keep {} ({}); first difference at record {first_diff}: got {:?}, expected {:?}",
            got.len(),
            exp.kept.len(),
            exp.rule,
            got.get(first_diff).map(|r| r.offset),
            exp.kept.get(first_diff).map(|r| r.offset)
        );
    }
    quarantine(before, meta, exp, &rec.stdout)
}

/// Every byte of every original `.log` is either still in the partition or in its quarantine, the
/// kept part is what the rules keep, and the report's figures add up.
fn quarantine(before: &Tree, meta: &Meta, exp: &Expected, report: &str) -> Result<()> {
    let part_name = PathBuf::from(meta.dir.file_name().unwrap_or_default());
    let mut set_aside: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let q = meta.dir.join("seglog-quarantine");
    if q.is_dir() {
        for (rel, bytes) in tree(&q)? {
            if let (Some(bytes), Some(name)) = (bytes, rel.file_name()) {
                set_aside.insert(name.to_string_lossy().into_owned(), bytes);
            }
        }
    }
    let mut bytes_dropped = 0_u64;
    for (rel, bytes) in before {
        let Some(original) = bytes else { continue };
        let Ok(name) = rel.strip_prefix(&part_name) else {
            continue;
        };
        let name = name.display().to_string();
        if name.len() != 24 || ext(&name) != Some("log") {
            continue;
        }
        let path = meta.dir.join(&name);
        let kept = path.is_file().then(|| std::fs::read(&path)).transpose()?;
        let want_len = if exp.dropped.contains(&name) {
            None
        } else if let Some((_, at)) = exp.cut.as_ref().filter(|c| c.0 == name) {
            Some(usize::try_from(*at)?)
        } else {
            Some(original.len())
        };
        match (&kept, want_len) {
            (None, None) => {
                ensure!(
                    set_aside.get(&name) == Some(original),
                    "{name} was dropped but its bytes are not in the quarantine"
                );
                bytes_dropped += u64::try_from(original.len())?;
            }
            (Some(k), Some(len)) => {
                ensure!(
                    k.len() == len,
                    "{name} kept {} bytes, the rules keep {len} ({})",
                    k.len(),
                    exp.rule
                );
                ensure!(
                    original.starts_with(k),
                    "{name}: what recover kept is not a prefix of the original"
                );
                if len < original.len() {
                    let tail = set_aside.get(&format!("{name}.cut-at-{len}"));
                    ensure!(
                        tail.map(Vec::as_slice) == original.get(len..),
                        "{name} was cut at {len} but the tail is not in the quarantine"
                    );
                    bytes_dropped += u64::try_from(original.len() - len)?;
                }
            }
            (None, Some(_)) => bail!("{name} was removed; the rules keep it ({})", exp.rule),
            (Some(k), None) => bail!(
                "{name} was kept ({} bytes); the rules drop it ({})",
                k.len(),
                exp.rule
            ),
        }
    }
    bytes_dropped += swaps(before, meta, &part_name, &set_aside)?;
    strays(before, meta, &part_name, &set_aside)?;
    let line = report
        .lines()
        .find(|l| l.contains("\"type\":\"recovered\""))
        .unwrap_or("{}");
    let v: Value = serde_json::from_str(line).unwrap_or(Value::Null);
    let reported = v.get("bytes_dropped").and_then(Value::as_u64).unwrap_or(0);
    ensure!(
        reported == bytes_dropped,
        "recover reported {reported} bytes dropped; {bytes_dropped} bytes of .log data left the partition"
    );
    let records = exp.dropped_records;
    let reported = v
        .get("records_dropped")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    ensure!(
        reported == records,
        "recover reported {reported} records dropped with the segments it set aside; they hold {records}"
    );
    Ok(())
}

/// A `.swap` that recovery did not complete into its segment is set aside whole; its bytes.
fn swaps(
    before: &Tree,
    meta: &Meta,
    part_name: &Path,
    set_aside: &BTreeMap<String, Vec<u8>>,
) -> Result<u64> {
    let mut bytes_dropped = 0;
    for (rel, bytes) in before {
        let (Some(original), Ok(name)) = (bytes, rel.strip_prefix(part_name)) else {
            continue;
        };
        let name = name.display().to_string();
        let Some(live) = name.strip_suffix(".swap") else {
            continue;
        };
        if meta.dir.join(&name).exists() {
            bail!("{name} is still there after recover");
        }
        let completed = std::fs::read(meta.dir.join(live)).ok().as_ref() == Some(original);
        if !completed {
            ensure!(
                set_aside.get(&name) == Some(original),
                "{name} was neither completed nor set aside whole"
            );
            bytes_dropped += u64::try_from(original.len())?;
        }
    }
    Ok(bytes_dropped)
}

/// Any other entry recover took out of the partition (a stray `123.log`, a directory named like a
/// segment) is in the quarantine, whole: only segment files (20-digit names, judged above), swaps
/// and Kafka's own `.deleted` and `.cleaned` leftovers may leave otherwise.
fn strays(
    before: &Tree,
    meta: &Meta,
    part_name: &Path,
    set_aside: &BTreeMap<String, Vec<u8>>,
) -> Result<()> {
    let runs: Vec<PathBuf> = match std::fs::read_dir(meta.dir.join("seglog-quarantine")) {
        Ok(entries) => entries.map(|e| Ok(e?.path())).collect::<Result<_>>()?,
        Err(_) => Vec::new(),
    };
    for (rel, bytes) in before {
        let Ok(name) = rel.strip_prefix(part_name) else {
            continue;
        };
        let name = name.display().to_string();
        let kafkas = name.len() >= 20 && name.bytes().take(20).all(|b| b.is_ascii_digit());
        if name.contains('/')
            || name.is_empty()
            || (kafkas && bytes.is_some())
            || [".swap", ".deleted", ".cleaned"]
                .iter()
                .any(|s| name.ends_with(s))
            || meta.dir.join(&name).exists()
        {
            continue;
        }
        match bytes {
            Some(original) => ensure!(
                set_aside.get(&name) == Some(original),
                "{name} left the partition but is not in the quarantine whole"
            ),
            None => ensure!(
                runs.iter().any(|r| r.join(&name).is_dir()),
                "the directory {name} left the partition but is not in the quarantine"
            ),
        }
    }
    Ok(())
}

/// A file name's extension, case as it is (Kafka's names are case-sensitive).
fn ext(name: &str) -> Option<&str> {
    Path::new(name).extension().and_then(|e| e.to_str())
}

//! What the documented rules say a case's bytes are worth: docs/reliability.md, section 3
//! ("Recovery that reasons", the problems-and-notes table), applied to the oracle's facts.
//! Kafka's own verdict (`LogSegment.recover`) is carried along, so each case says whether the
//! rule that decided it is Kafka's or one of seglog's documented additions.

use super::facts::{Batch, Facts, Index, Rec, Segment};

/// The expected outcome of a case.
#[derive(Debug, Clone)]
pub(super) struct Expected {
    /// `check` must exit 1.
    pub(super) damaged: bool,
    /// What `consume` returns after `recover`, in order.
    pub(super) kept: Vec<Rec>,
    /// The `.log` files recovery drops whole, and (file, byte) of the one it cuts.
    pub(super) dropped: Vec<String>,
    /// The records recovery must report for the segments it drops whole: each segment's valid
    /// prefix judged alone under its own name (a copy named inside its source holds none).
    pub(super) dropped_records: u64,
    pub(super) cut: Option<(String, u64)>,
    /// Which rule decided, and where Kafka's `LogSegment.recover` differs from it.
    pub(super) rule: String,
    /// The same, without positions: the labels the report counts.
    pub(super) kinds: Vec<&'static str>,
    /// Records of valid batches anywhere (what a reader may return before recovery).
    pub(super) readable: Vec<Rec>,
}

/// Why a batch ends a segment's valid prefix.
fn batch_fault(
    b: &Batch,
    prev_last: Option<i64>,
    seg_base: i64,
    next_base: Option<i64>,
    after: Option<&Batch>,
) -> Option<&'static str> {
    if b.invalid.is_some() {
        return Some("kafka: ensureValid");
    }
    // rule 1: every record decodes, as a consumer decodes it
    if b.records_error.is_some() {
        return Some("seglog rule 1: records do not decode");
    }
    let count = b.count.unwrap_or(-1);
    let n = i64::try_from(b.records.len()).unwrap_or(i64::MAX);
    if count != n || count > b.last - b.base + 1 || (count == 0 && b.size > 61) {
        return Some("seglog rule 1: recordsCount");
    }
    let mut last_seen = b.base - 1;
    for r in &b.records {
        if r.offset <= last_seen || r.offset > b.last {
            return Some("seglog rule 1: offset deltas");
        }
        last_seen = r.offset;
    }
    // rule 2: the offsets lie in the segment
    if prev_last.is_some_and(|p| b.base <= p) || b.base < seg_base {
        return Some("seglog rule 2: offsets not above the previous batch's");
    }
    if b.last - b.base > i64::from(i32::MAX) {
        return Some("seglog rule 2: beyond i32::MAX of the base offset");
    }
    let pinned = b.base == prev_last.map_or(seg_base, |p| p + 1);
    if next_base.is_some_and(|n| b.last >= n) && !pinned {
        return Some("seglog rule 2: reaches the next segment's base offset");
    }
    // rule 3: one batch of look-ahead
    if let Some(next) = after {
        let overlap = next.invalid.is_none()
            && next.base <= b.last
            && prev_last.is_none_or(|p| next.base > p);
        let past_records = b.records.last().is_some_and(|r| next.base > r.offset);
        if overlap && (!pinned || past_records) {
            return Some(
                "seglog rule 3: the next batch overlaps this one, whose base offset is not pinned",
            );
        }
    }
    None
}

/// The valid prefix of one segment: (batches kept, byte where it ends, the rule that cut).
fn prefix(
    s: &Segment,
    prev_last: Option<i64>,
    next_base: Option<i64>,
) -> (&[Batch], u64, Option<&'static str>) {
    let mut last = prev_last;
    let mut end = 0;
    for (i, b) in s.batches.iter().enumerate() {
        if let Some(why) = batch_fault(b, last, s.base, next_base, s.batches.get(i + 1)) {
            return (s.batches.get(..i).unwrap_or_default(), b.pos, Some(why));
        }
        last = Some(b.last);
        end = b.pos + b.size;
    }
    if s.stop.is_some() {
        return (
            &s.batches,
            end,
            Some("kafka: a batch header that cannot be read"),
        );
    }
    if end < s.size {
        return (&s.batches, end, Some("kafka: a torn tail"));
    }
    (&s.batches, end, None)
}

pub(super) fn expected(facts: &Facts) -> Expected {
    let mut out = Expected {
        damaged: false,
        kept: Vec::new(),
        dropped: Vec::new(),
        dropped_records: 0,
        cut: None,
        rule: "kafka".to_owned(),
        kinds: Vec::new(),
        readable: facts
            .segments
            .iter()
            .flat_map(|s| &s.batches)
            .filter(|b| b.invalid.is_none() && b.records_error.is_none())
            .flat_map(|b| b.records.iter().cloned())
            .collect(),
    };
    let mut rules = Vec::new();
    logs(facts, &mut out, &mut rules);
    indexes(facts, &mut out, &mut rules);
    if !rules.is_empty() {
        out.rule = rules.join("; ");
    }
    out
}

/// The `.log` files in order: the valid prefix, the cut, the segments dropped after it.
fn logs(facts: &Facts, out: &mut Expected, rules: &mut Vec<String>) {
    let mut prev_last: Option<i64> = None;
    let segs = &facts.segments;
    let mut cut_done = false;
    for (i, s) in segs.iter().enumerate() {
        if cut_done {
            out.dropped.push(s.file.clone());
            continue;
        }
        // the loader's overlap rule: a .log named at or below the end of the one before it is
        // dropped alone
        if prev_last.is_some_and(|p| s.base <= p) {
            out.damaged = true;
            out.dropped.push(s.file.clone());
            rules.push(format!("seglog overlap rule: {} dropped alone", s.file));
            out.kinds.push(
                "seglog overlap rule: a segment named inside its predecessor is dropped alone",
            );
            continue;
        }
        let next_base = segs.get(i + 1).map(|n| n.base);
        let (kept, end, why) = prefix(s, prev_last, next_base);
        out.kept
            .extend(kept.iter().flat_map(|b| b.records.iter().cloned()));
        if let Some(b) = kept.last() {
            prev_last = Some(b.last);
        }
        let kafka = s.kafka_keeps.clone();
        if let Some(why) = why {
            out.damaged = true;
            cut_done = true;
            out.cut = Some((s.file.clone(), end));
            let agrees = kafka.as_ref().is_ok_and(|k| *k == end);
            out.kinds.push(why);
            if !agrees {
                out.kinds.push(if why.starts_with("kafka") {
                    "DIFFERS from Kafka's LogSegment.recover"
                } else {
                    "(Kafka's LogSegment.recover keeps more: a documented seglog rule)"
                });
            }
            rules.push(if agrees && why.starts_with("kafka") {
                format!("kafka ({why}, {} at byte {end})", s.file)
            } else {
                format!(
                    "{why} ({} cut at byte {end}; Kafka's LogSegment.recover: {})",
                    s.file,
                    describe(&kafka)
                )
            });
        } else if kafka.as_ref().is_ok_and(|k| *k != s.size) || kafka.is_err() {
            rules.push(format!(
                "rules keep all of {}; Kafka's LogSegment.recover: {}",
                s.file,
                describe(&kafka)
            ));
            out.kinds
                .push("DIFFERS: the rules keep a segment Kafka's LogSegment.recover cuts");
        }
    }
}

/// The segments' dropped records, and the indexes of the kept, uncut segments: each entry must
/// be one the log supports.
fn indexes(facts: &Facts, out: &mut Expected, rules: &mut Vec<String>) {
    let segs = &facts.segments;
    for (i, s) in segs
        .iter()
        .enumerate()
        .filter(|(_, s)| out.dropped.contains(&s.file))
    {
        let (alone, _, _) = prefix(s, None, segs.get(i + 1).map(|n| n.base));
        out.dropped_records += alone
            .iter()
            .map(|b| u64::try_from(b.records.len()).unwrap_or(0))
            .sum::<u64>();
    }
    // indexes of the kept, uncut segments: each entry must be one the log supports
    for s in segs.iter().filter(|s| {
        !out.dropped.contains(&s.file) && out.cut.as_ref().is_none_or(|c| c.0 != s.file)
    }) {
        let active = segs.last().is_some_and(|l| l.base == s.base);
        if let Some(why) = facts
            .indexes
            .iter()
            .find(|i| i.base == s.base)
            .and_then(|i| offset_index_fault(i, s, active))
        {
            {
                out.damaged = true;
                out.kinds.push(if why.starts_with("Kafka") {
                    "index: Kafka's sanity check"
                } else {
                    "index: an entry the log does not support"
                });
                rules.push(format!("index: {why}"));
            }
        }
        if let Some(i) = facts.time_indexes.iter().find(|i| i.base == s.base) {
            if active && i.sanity.is_some() && i.entries.last() == Some(&(0, i.base)) {
                out.kinds.push("DIFFERENCE (documented): an active segment's zero time index tail is preallocation; Kafka's TimeIndex.sanityCheck rejects it");
            }
            if let Some(why) = time_index_fault(i, s, active) {
                out.damaged = true;
                out.kinds.push(if why.starts_with("Kafka") {
                    "time index: Kafka's sanity check"
                } else {
                    "time index: an entry the log does not support"
                });
                rules.push(format!("time index: {why}"));
            }
        }
    }
}

fn describe(k: &Result<u64, String>) -> String {
    match k {
        Ok(b) => format!("keeps {b} bytes"),
        Err(e) => format!("throws {e}"),
    }
}

/// Entries past an all-zero tail of the active segment's index are its preallocation (Kafka
/// trims them at roll); elsewhere every entry is checked.
fn strip_zero_tail(entries: &[(i64, i64)], zero: (i64, i64), active: bool) -> &[(i64, i64)] {
    if !active {
        return entries;
    }
    let keep = entries
        .iter()
        .rposition(|e| *e != zero)
        .map_or(0, |p| p + 1);
    entries.get(..keep).unwrap_or_default()
}

fn offset_index_fault(i: &Index, s: &Segment, active: bool) -> Option<String> {
    if let Some(e) = &i.sanity {
        return Some(format!("Kafka's sanity check: {e}"));
    }
    let mut last = None;
    for &(offset, pos) in strip_zero_tail(&i.entries, (i.base, 0), active) {
        if last.is_some_and(|l| offset <= l) {
            return Some(format!("entry ({offset}, {pos}) out of order"));
        }
        last = Some(offset);
        let ok = s
            .batches
            .iter()
            .any(|b| i64::try_from(b.pos).ok() == Some(pos) && b.last == offset);
        if !ok {
            return Some(format!(
                "entry ({offset}, {pos}) names no batch ending at that offset"
            ));
        }
    }
    None
}

fn time_index_fault(i: &Index, s: &Segment, active: bool) -> Option<String> {
    // Kafka's sanity check rejects a zero last timestamp; seglog takes an active segment's zero
    // tail as its preallocation (the notes table), judged below without it
    let zero_tail = active && i.entries.last() == Some(&(0, i.base));
    if let Some(e) = i.sanity.as_ref().filter(|_| !zero_tail) {
        return Some(format!("Kafka's sanity check: {e}"));
    }
    let mut max = Vec::new();
    let mut so_far = i64::MIN;
    for b in &s.batches {
        so_far = so_far.max(b.max_ts);
        max.push((so_far, b.last));
    }
    let mut last: Option<(i64, i64)> = None;
    for &(ts, offset) in strip_zero_tail(&i.entries, (0, i.base), active) {
        if last.is_some_and(|(lt, lo)| ts <= lt || offset < lo) {
            return Some(format!("entry ({ts}, {offset}) out of order"));
        }
        last = Some((ts, offset));
        if !max.contains(&(ts, offset)) {
            return Some(format!(
                "entry ({ts}, {offset}) is not the largest timestamp up to a batch's last offset"
            ));
        }
    }
    None
}

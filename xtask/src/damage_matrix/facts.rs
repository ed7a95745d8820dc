//! The oracle's facts about one case, parsed from its JSON line (see
//! `interop/kafka/src/main/java/dev/seglog/oracle/DamageMatrix.java`).

use anyhow::{Context, Result};
use serde_json::Value;

/// A record as a reader returns it: offset, timestamp, key and value (base64, `None` for null).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Rec {
    pub(super) offset: i64,
    pub(super) timestamp: i64,
    pub(super) key: Option<String>,
    pub(super) value: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) struct Batch {
    pub(super) pos: u64,
    pub(super) size: u64,
    pub(super) base: i64,
    pub(super) last: i64,
    pub(super) count: Option<i64>,
    pub(super) max_ts: i64,
    /// `ensureValid`'s error, or an error reading the header fields.
    pub(super) invalid: Option<String>,
    pub(super) records: Vec<Rec>,
    pub(super) records_error: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) struct Segment {
    pub(super) file: String,
    pub(super) base: i64,
    pub(super) size: u64,
    pub(super) batches: Vec<Batch>,
    /// Why Kafka's batch iteration stopped early, if it threw.
    pub(super) stop: Option<String>,
    /// The bytes Kafka's `LogSegment.recover` keeps, or its error.
    pub(super) kafka_keeps: Result<u64, String>,
}

#[derive(Debug, Clone)]
pub(super) struct Index {
    pub(super) base: i64,
    pub(super) sanity: Option<String>,
    /// (offset, position) for `.index`, (timestamp, offset) for `.timeindex`.
    pub(super) entries: Vec<(i64, i64)>,
}

#[derive(Debug, Clone)]
pub(super) struct Facts {
    pub(super) segments: Vec<Segment>,
    pub(super) indexes: Vec<Index>,
    pub(super) time_indexes: Vec<Index>,
}

fn int(v: &Value, key: &str) -> Result<i64> {
    v.get(key)
        .and_then(Value::as_i64)
        .with_context(|| format!("oracle: no `{key}` in {v}"))
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn list<'v>(v: &'v Value, key: &str) -> &'v [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

pub(super) fn rec_of(v: &Value, offset: &str, ts: &str, key: &str, value: &str) -> Result<Rec> {
    Ok(Rec {
        offset: int(v, offset)?,
        timestamp: int(v, ts)?,
        key: text(v, key),
        value: text(v, value),
    })
}

impl Facts {
    pub(super) fn parse(v: &Value) -> Result<Self> {
        let mut segments = Vec::new();
        for s in list(v, "segments") {
            let mut batches = Vec::new();
            for b in list(s, "batches") {
                let header = text(b, "headerError");
                batches.push(Batch {
                    pos: u64::try_from(int(b, "pos")?)?,
                    size: u64::try_from(int(b, "size")?)?,
                    base: int(b, "base").unwrap_or(i64::MIN),
                    last: int(b, "last").unwrap_or(i64::MIN),
                    count: b.get("count").and_then(Value::as_i64),
                    max_ts: int(b, "maxTs").unwrap_or(-1),
                    invalid: text(b, "valid").or(header),
                    records: list(b, "records")
                        .iter()
                        .map(|r| rec_of(r, "o", "t", "k", "v"))
                        .collect::<Result<_>>()?,
                    records_error: text(b, "recordsError"),
                });
            }
            let recover = s.get("kafkaRecover").context("oracle: no kafkaRecover")?;
            let size = u64::try_from(int(s, "size")?)?;
            let kafka_keeps = match recover.get("truncated").and_then(Value::as_u64) {
                Some(t) => Ok(size.saturating_sub(t)),
                None => Err(text(recover, "error").unwrap_or_default()),
            };
            segments.push(Segment {
                file: text(s, "file").unwrap_or_default(),
                base: int(s, "base")?,
                size,
                batches,
                stop: text(s, "stop"),
                kafka_keeps,
            });
        }
        let index = |key: &str| -> Result<Vec<Index>> {
            list(v, key)
                .iter()
                .map(|i| {
                    let entries = list(i, "entries")
                        .iter()
                        .map(|e| {
                            let pair = e.as_array().context("oracle: an index entry")?;
                            let at = |n: usize| {
                                pair.get(n)
                                    .and_then(Value::as_i64)
                                    .context("oracle: an index entry")
                            };
                            Ok((at(0)?, at(1)?))
                        })
                        .collect::<Result<_>>()?;
                    Ok(Index {
                        base: int(i, "base")?,
                        sanity: text(i, "sanity"),
                        entries,
                    })
                })
                .collect()
        };
        let mut facts = Self {
            segments,
            indexes: index("indexes")?,
            time_indexes: index("timeIndexes")?,
        };
        facts.segments.sort_by_key(|s| s.base);
        Ok(facts)
    }
}

//! The template: a log directory holding one partition, `t-0`, of several segments written by
//! the library with every codec, closed cleanly (so its indexes are trimmed and the checkpoints
//! and the clean-shutdown marker are written, as after a broker's clean stop).

use std::path::Path;

use anyhow::{Context, Result};
use seglog_log::RealFs;
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{LogConfig, LogDir, LogDirOptions, TopicPartition};

use crate::rng::Rng;

pub(crate) const PARTITION: &str = "t-0";
/// Batches in the template; the codec of batch `b` is `CODECS[b % 5]`, the last batch is
/// uncompressed with short values (the truncation family cuts at each of its bytes).
pub(crate) const BATCHES: usize = 70;
pub(crate) const RECORDS_PER_BATCH: i32 = 4;
pub(crate) const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];
pub(crate) const CODEC_NAMES: [&str; 5] = ["none", "gzip", "snappy", "lz4", "zstd"];
/// The segment size: about 15 batches a segment, so four segments.
const SEGMENT_BYTES: &str = "6000";

fn options() -> LogDirOptions {
    LogDirOptions::default().with_recovery_threads(1)
}

/// Writes the template into `dir` (a fresh log directory); values and keys follow from `rng`.
pub(crate) fn write(dir: &Path, rng: &mut Rng) -> Result<()> {
    let (log_dir, _) = LogDir::open(RealFs, dir, options()).context("opening the template")?;
    let config = LogConfig::from_pairs([
        ("internal.segment.bytes", SEGMENT_BYTES),
        ("index.interval.bytes", "1"),
    ])?;
    let log = log_dir.create_log(&TopicPartition::new("t", 0), Some(config))?;
    let mut builder = BatchBuilder::new();
    let mut offset = 0_i64;
    for b in 0..BATCHES {
        let last = b + 1 == BATCHES;
        let codec = if last {
            Compression::None
        } else {
            CODECS
                .get(b % CODECS.len())
                .copied()
                .unwrap_or(Compression::None)
        };
        let mut keys = Vec::new();
        let mut values = Vec::new();
        for i in 0..RECORDS_PER_BATCH {
            let n = offset + i64::from(i);
            // every third record has a null key; values are compressible but not uniform
            keys.push((n % 3 != 0).then(|| format!("key-{n}").into_bytes()));
            let len = if last { 4 } else { 40 + rng.below(120) };
            let len = usize::try_from(len).unwrap_or(40);
            let mut v = format!("value-{n:06}-").into_bytes();
            v.extend(std::iter::repeat_n(
                b'a' + u8::try_from(n % 26).unwrap_or(0),
                len,
            ));
            v.extend(rng.bytes(8));
            values.push(v);
        }
        let records = keys.iter().zip(&values).zip(0..).map(|((k, v), i)| {
            NewRecord::new(
                i,
                1_700_000_000_000 + offset * 10 + i64::from(i),
                k.as_deref(),
                Some(&v[..]),
            )
        });
        let mut batch = Vec::new();
        builder.build(&BatchOptions::new(0, codec), records, &mut batch)?;
        log.append_as_leader(&mut batch)?;
        offset += i64::from(RECORDS_PER_BATCH);
    }
    drop(log);
    log_dir.close()?;
    Ok(())
}

//! `seglog demo`: builds a sample log of about a million records, then shows what seglog does with
//! it: lookups by offset and by time (with their latencies), per-segment stats and a dump excerpt.

use crate::common::Outcome;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{
    File as _, FileSystem as _, Isolation, ListOffset, LogConfig, LogDir, LogDirOptions, OpenMode,
    RealFs, SystemClock, Time, TopicPartition,
};

/// A file that marks a directory as made by `seglog demo`, so a rerun may replace it.
const MARKER: &str = ".seglog-demo";

const RECORDS: i64 = 1_000_000;
const PER_BATCH: i64 = 500;

#[expect(
    clippy::too_many_lines,
    reason = "a linear script of five numbered steps, read top to bottom"
)]
pub(crate) fn demo(root: &Path, out: &mut impl Write) -> Result<Outcome> {
    let replace = RealFs.exists(root);
    if replace && !RealFs.exists(&root.join(MARKER)) {
        bail!(
            "{}: exists and was not made by seglog demo; choose another directory",
            root.display()
        );
    }
    RealFs.create_dir_all(root)?;
    let marker = RealFs.open(&root.join(MARKER), OpenMode::CreateOrOpen)?;
    marker.set_len(0)?;
    marker.write_all_at(b"made by seglog demo\n", 0)?;
    drop(marker);
    // A replaced demo's partitions have no reader: their `-delete` directories go at once.
    let options = LogDirOptions::default()
        .with_default_config(LogConfig::default().with_file_delete_delay_ms(0));
    let (dir, _) = LogDir::open(RealFs, root, options).map_err(|e| anyhow::anyhow!("{e}"))?;
    if replace {
        // A previous demo's partitions go, through the log directory that owns them.
        let partitions: Vec<TopicPartition> = dir
            .logs()
            .iter()
            .map(|log| log.topic_partition().clone())
            .collect();
        for tp in &partitions {
            dir.delete_log(tp)
                .map_err(|e| anyhow::anyhow!("{e}"))
                .with_context(|| format!("{}: cannot replace", root.display()))?;
        }
    }
    // Small segments, so that a demo-sized log rolls several times.
    let config = LogConfig::from_pairs([
        ("internal.segment.bytes", "4194304"),
        ("index.interval.bytes", "4096"),
    ])
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let tp = TopicPartition::new("clicks", 0);
    let log = dir
        .create_log(&tp, Some(config))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    writeln!(
        out,
        "seglog demo: a Kafka-format partition log in {}",
        root.join(tp.dir_name()).display()
    )?;
    writeln!(
        out,
        "\n1. Appending {RECORDS} click events (keys user-N, JSON values, timestamps 1 ms apart) in lz4 batches of {PER_BATCH}..."
    )?;
    let start_ts = SystemClock.now_ms() - RECORDS;
    let started = Instant::now();
    let mut builder = BatchBuilder::new();
    let mut batch = Vec::new();
    let mut values: Vec<(Vec<u8>, Vec<u8>)> =
        Vec::with_capacity(PER_BATCH.unsigned_abs().try_into().unwrap_or(0));
    let mut offset = 0_i64;
    let bar = crate::common::progress(RECORDS.unsigned_abs(), "appending");
    while offset < RECORDS {
        bar.set_position(offset.unsigned_abs());
        values.clear();
        for i in offset..offset + PER_BATCH {
            let key = format!("user-{}", i * 7919 % 10_000).into_bytes();
            let value = format!(
                r#"{{"event":"click","page":"/products/{}","session":{},"n":{i}}}"#,
                i % 977,
                i / 250
            )
            .into_bytes();
            values.push((key, value));
        }
        let records = values.iter().zip(0_i32..).map(|((k, v), d)| {
            NewRecord::new(
                d,
                start_ts + offset + i64::from(d),
                Some(&k[..]),
                Some(&v[..]),
            )
        });
        batch.clear();
        builder.build(&BatchOptions::new(0, Compression::Lz4), records, &mut batch)?;
        log.append_as_leader(&mut batch)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        offset += PER_BATCH;
    }
    bar.finish_and_clear();
    log.flush().map_err(|e| anyhow::anyhow!("{e}"))?;
    let elapsed = started.elapsed();
    writeln!(
        out,
        "   appended and fsynced {} bytes in {:.2?} ({:.0} records/s); the log rolled into {} segments",
        log.size(),
        elapsed,
        f64::from(u32::try_from(RECORDS).unwrap_or(u32::MAX)) / elapsed.as_secs_f64(),
        log.segment_count()
    )?;

    writeln!(
        out,
        "\n2. Reading by offset: each read finds the segment, binary-searches its mapped .index, then scans a few batches."
    )?;
    let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
    let mut buf = Vec::new();
    let lookups = 10_000;
    let started = Instant::now();
    for _ in 0..lookups {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let target = i64::try_from(rng % RECORDS.unsigned_abs()).unwrap_or(0);
        let fetch = log
            .read(target, 1, Isolation::LogEnd, true)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        fetch
            .read_into(&mut buf)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    writeln!(
        out,
        "   {lookups} random one-record reads: {:.2?} each on average",
        started.elapsed() / lookups
    )?;
    let fetch = log
        .read(123_456, 1, Isolation::LogEnd, true)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    writeln!(
        out,
        "   offset 123456 lives in the batch that starts at offset {} in segment {} at byte {}",
        fetch.offset_metadata.message_offset,
        fetch.offset_metadata.segment_base_offset,
        fetch.offset_metadata.relative_position
    )?;

    writeln!(
        out,
        "\n3. Looking up by time (Kafka's ListOffsets): the .timeindex narrows the search, then the batch is scanned."
    )?;
    let started = Instant::now();
    let target = start_ts + 654_321;
    let found = log
        .offset_for_timestamp(ListOffset::Timestamp(target))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    writeln!(
        out,
        "   first record at or after timestamp {target}: offset {} ({:.2?})",
        found.map_or_else(|| "none".to_owned(), |f| f.offset.to_string()),
        started.elapsed()
    )?;
    let max = log
        .offset_for_timestamp(ListOffset::MaxTimestamp)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    writeln!(
        out,
        "   the record with the largest timestamp: offset {}",
        max.map_or_else(|| "none".to_owned(), |f| f.offset.to_string())
    )?;

    let partition_dir = log.dir().to_path_buf();
    drop(log);
    dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    drop(dir);

    writeln!(
        out,
        "\n4. seglog stats {}: one line per segment (index entries, average index interval, timestamps)",
        partition_dir.display()
    )?;
    crate::stats::stats(&partition_dir, &[], false, out)?;

    writeln!(
        out,
        "\n5. seglog dump: the first lines of the first segment and its index, as kafka-dump-log.sh prints them"
    )?;
    let first = partition_dir.join("00000000000000000000.log");
    let index = partition_dir.join("00000000000000000000.index");
    for file in [first, index] {
        let mut dumped = Vec::new();
        let mut errors = Vec::new();
        crate::dump::run(
            &crate::dump::DumpOptions::for_files(vec![file]),
            &mut dumped,
            &mut errors,
        )?;
        for line in String::from_utf8_lossy(&dumped).lines().take(5) {
            let shown: String = line.chars().take(160).collect();
            writeln!(out, "   {shown}")?;
        }
    }
    writeln!(
        out,
        "\nThe directory is a Kafka partition directory: kafka-dump-log.sh and a broker read it as is."
    )?;
    writeln!(
        out,
        "Try: seglog consume {} --from-offset 999990 --print-key",
        partition_dir.display()
    )?;
    Ok(Outcome::Clean)
}

/// The flags of `seglog demo`.
#[derive(Debug, clap::Args)]
pub(crate) struct DemoArgs {
    /// Where to build it (replaced if a previous demo made it).
    #[arg(default_value = "seglog-demo")]
    dir: std::path::PathBuf,
}

impl DemoArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> Result<Outcome> {
        demo(&self.dir, out)
    }
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog demo
  seglog demo /tmp/my-demo";

//! An embedded writer for the process-kill harness (`cargo xtask kills`): several threads append
//! batches to one partition with `append_durable` (so their fsyncs are group-committed) and print
//! one line per acknowledged batch, `acked <first> <last> <tag>`, where record `i` of the batch
//! has the value `<tag>-<i>`. It runs until it is killed (or `--batches` batches were appended).
//!
//! `cargo run -p seglog-harness --bin seglog-durable-writer -- DIR [--threads N] [--codec C]
//! [--batch-records N] [--segment-bytes N] [--batches N] [--topic T] [--run ID]`, where `DIR` is the
//! log directory, the partition is `T-0` (default `embedded-0`) and `ID` (unique per run) starts
//! every tag. `--batches 0` only opens (recovering what a killed writer left) and closes cleanly.

use std::io::Write;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use seglog_fs::RealFs;
use seglog_log::{LogConfig, LogDir, LogDirOptions, SystemClock, Time, TopicPartition};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

struct Args {
    root: std::path::PathBuf,
    threads: usize,
    codec: Compression,
    batch_records: usize,
    segment_bytes: u64,
    batches: u64,
    topic: String,
    run: String,
}

fn parse() -> Result<Args> {
    let mut argv = std::env::args().skip(1);
    let root = argv
        .next()
        .context("usage: seglog-durable-writer DIR [options]")?;
    let mut args = Args {
        root: root.into(),
        threads: 2,
        codec: Compression::None,
        batch_records: 5,
        segment_bytes: 16 * 1024,
        batches: u64::MAX,
        topic: "embedded".to_owned(),
        run: "r".to_owned(),
    };
    while let Some(flag) = argv.next() {
        let value = argv
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--threads" => args.threads = value.parse()?,
            "--batch-records" => args.batch_records = value.parse()?,
            "--segment-bytes" => args.segment_bytes = value.parse()?,
            "--batches" => args.batches = value.parse()?,
            "--topic" => args.topic = value,
            "--run" => args.run = value,
            "--codec" => {
                args.codec = match value.as_str() {
                    "none" => Compression::None,
                    "gzip" => Compression::Gzip,
                    "snappy" => Compression::Snappy,
                    "lz4" => Compression::Lz4,
                    "zstd" => Compression::Zstd,
                    other => bail!("unknown codec {other}"),
                }
            }
            other => bail!("unknown flag {other}"),
        }
    }
    Ok(args)
}

fn main() -> Result<()> {
    let args = parse()?;
    let options = LogDirOptions::default();
    // Opening recovers whatever the previous (killed) writer left.
    let (dir, _) = LogDir::open(RealFs, &args.root, options).context("opening the log dir")?;
    let segment_bytes = args.segment_bytes.to_string();
    let config = LogConfig::from_pairs([("internal.segment.bytes", segment_bytes.as_str())])?;
    let log = dir.create_log(&TopicPartition::new(args.topic.as_str(), 0), Some(config))?;
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let per_thread = args.batches.div_ceil(args.threads as u64);
    std::thread::scope(|s| -> Result<()> {
        let handles: Vec<_> = (0..args.threads)
            .map(|t| {
                let log = log.clone();
                let out = Arc::clone(&out);
                let args = &args;
                s.spawn(move || -> Result<()> {
                    let mut builder = BatchBuilder::new();
                    let mut batch = Vec::new();
                    for n in 0..per_thread {
                        let tag = format!("{}-t{t}-b{n}", args.run);
                        let values: Vec<String> = (0..args.batch_records)
                            .map(|i| format!("{tag}-{i}"))
                            .collect();
                        let now = SystemClock.now_ms();
                        let records = values
                            .iter()
                            .zip(0..)
                            .map(|(v, i)| NewRecord::new(i, now, None, Some(v.as_bytes())));
                        batch.clear();
                        builder.build(&BatchOptions::new(0, args.codec), records, &mut batch)?;
                        let ack = log.append_durable(&mut batch)?;
                        // Printed only after the fsync returned: this line is the promise.
                        let mut out = out.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
                        writeln!(out, "acked {} {} {tag}", ack.first_offset, ack.last_offset)?;
                        out.flush()?;
                    }
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("a writer thread panicked"))??;
        }
        Ok(())
    })?;
    dir.close()?;
    Ok(())
}

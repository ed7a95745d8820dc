//! The seglog side of `cargo xtask kafka-interop`'s step 13: producer batches appended by
//! seglog's leader append under a topic's `compression.type`, and the stored batches compared
//! with those Kafka's `UnifiedLog.appendAsLeader` stored from the same input.
//!
//! ```text
//! seglog-leader-append batches <codec> <time-ms> <out-file>
//!     Writes the step's producer requests, one v2 batch each, in <codec> (none, gzip, snappy,
//!     lz4, zstd): plain, keyed, with headers and null values, idempotent and transactional
//!     batches, timestamps around <time-ms>, partition leader epoch 0 (the leader's).
//! seglog-leader-append append <batches-file> <config-file> <partition-dir> <time-ms>
//!     Appends each batch as seglog's leader (`PartitionLog::append_as_leader`) to a new partition
//!     directory with the topic config of a properties file, the clock at <time-ms>; prints one
//!     line per append (first offset, last offset, max timestamp), as the oracle does.
//! seglog-leader-append compare <kafka.log> <seglog.log>
//!     Compares two `.log` files batch by batch: byte for byte, or else every header field but
//!     the CRC and the length, and the records decompressed. Prints what it found; fails on any
//!     other difference.
//! ```

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail, ensure};
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, Header, NewRecord};
use seglog_log::{LoadOptions, LogConfig, MockClock, PartitionLog, RealFs};
use seglog_record_format::{Batch, RecordBatch, batches};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["batches", codec, time, out] => write_batches(codec, time.parse()?, Path::new(out)),
        ["append", input, config, dir, time] => append(
            Path::new(input),
            Path::new(config),
            Path::new(dir),
            time.parse()?,
        ),
        ["compare", kafka, seglog] => compare(Path::new(kafka), Path::new(seglog)),
        _ => bail!(
            "usage: seglog-leader-append batches <codec> <time-ms> <out> | append <batches> <config> <dir> <time-ms> | compare <kafka.log> <seglog.log>"
        ),
    }
}

fn parse_codec(name: &str) -> Result<Compression> {
    Ok(match name {
        "none" => Compression::None,
        "gzip" => Compression::Gzip,
        "snappy" => Compression::Snappy,
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        _ => bail!("no codec {name}"),
    })
}

/// Text that compresses as real payloads do, different per record.
#[expect(clippy::format_collect, reason = "test data, built once")]
fn payload(n: usize) -> Vec<u8> {
    (0..4 + n % 9)
        .map(|j| {
            format!(
                "{{\"order\":{n},\"line\":{j},\"sku\":\"sku-{}\"}}",
                (n * 31 + j) % 97
            )
        })
        .collect::<String>()
        .into_bytes()
}

fn write_batches(codec: &str, now: i64, out: &Path) -> Result<()> {
    let codec = parse_codec(codec)?;
    let mut builder = BatchBuilder::new();
    let mut file = Vec::new();
    let headers = [
        Header::new(b"trace", b"abc"),
        Header {
            key: b"empty",
            value: None,
        },
    ];
    let mut sequence = 0;
    for request in 0..12_usize {
        let count = 1 + request * 5 % 17;
        let values: Vec<Vec<u8>> = (0..count).map(|i| payload(request * 100 + i)).collect();
        let keys: Vec<Vec<u8>> = (0..count)
            .map(|i| format!("k{}", i % 5).into_bytes())
            .collect();
        let records = (0..count).map(|i| {
            let delta = i32::try_from(i).unwrap_or(i32::MAX);
            // Out of order within a batch, all within Kafka's timestamp bounds.
            let ts = now - 5_000 + i64::try_from((i * 7919) % 3000).unwrap_or(0);
            let key = keys.get(i).filter(|_| request % 3 != 0).map(Vec::as_slice);
            let value = values.get(i).filter(|_| i % 11 != 10).map(Vec::as_slice);
            let record = NewRecord::new(delta, ts, key, value);
            if request % 4 == 1 {
                record.with_headers(&headers)
            } else {
                record
            }
        });
        let mut options = BatchOptions::new(0, codec).with_partition_leader_epoch(0);
        // Requests 6 and up come from one idempotent producer, 9 and up transactional ones are
        // left out (they need a coordinator's marker to end): sequences continue.
        if request >= 6 {
            options = options.with_producer(4242, 3, sequence);
            sequence += i32::try_from(count).unwrap_or(0);
        }
        builder.build(&options, records, &mut file)?;
    }
    std::fs::write(out, file).with_context(|| out.display().to_string())
}

fn append(input: &Path, config: &Path, dir: &Path, now: i64) -> Result<()> {
    let bytes = std::fs::read(input).with_context(|| input.display().to_string())?;
    let text = std::fs::read_to_string(config).with_context(|| config.display().to_string())?;
    let config = LogConfig::parse(&text)?;
    let clock = Arc::new(MockClock::new(now));
    let (log, _) = PartitionLog::open(RealFs, dir, config, LoadOptions::default(), clock)?;
    for framed in batches(&bytes) {
        let framed = framed?;
        let mut one = framed.bytes().to_vec();
        let info = log.append_as_leader(&mut one)?;
        println!(
            "{} {} {}",
            info.first_offset, info.last_offset, info.max_timestamp
        );
    }
    log.flush()?;
    log.close()?;
    Ok(())
}

/// Every header field but the CRC and the length (which cover the compressed bytes).
fn header_fields(b: &RecordBatch<'_>) -> Result<String> {
    Ok(format!(
        "base offset {}, last offset delta {}, leader epoch {}, magic {}, codec {}, timestamp type {:?}, transactional {}, control {}, base timestamp {}, max timestamp {}, producer {} epoch {} sequence {}, records {}",
        b.base_offset(),
        b.last_offset_delta(),
        b.partition_leader_epoch(),
        b.magic(),
        b.compression()?,
        b.timestamp_type(),
        b.is_transactional(),
        b.is_control(),
        b.base_timestamp(),
        b.max_timestamp(),
        b.producer_id(),
        b.producer_epoch(),
        b.base_sequence(),
        b.records_count()
    ))
}

fn compare(kafka: &Path, seglog: &Path) -> Result<()> {
    let k = std::fs::read(kafka).with_context(|| kafka.display().to_string())?;
    let s = std::fs::read(seglog).with_context(|| seglog.display().to_string())?;
    let (kb, sb): (Vec<_>, Vec<_>) = (batches(&k).collect(), batches(&s).collect());
    ensure!(
        kb.len() == sb.len(),
        "Kafka stored {} batches, seglog {}",
        kb.len(),
        sb.len()
    );
    let (mut same, mut differ) = (0, 0);
    for (i, (kf, sf)) in kb.into_iter().zip(sb).enumerate() {
        let (kf, sf) = (kf?, sf?);
        if kf.bytes() == sf.bytes() {
            same += 1;
            continue;
        }
        differ += 1;
        let (Batch::V2(kv), Batch::V2(sv)) = (kf.decode()?, sf.decode()?) else {
            bail!("batch {i}: not v2");
        };
        kv.validate()?;
        sv.validate()?;
        let (kh, sh) = (header_fields(&kv)?, header_fields(&sv)?);
        ensure!(kh == sh, "batch {i}: Kafka's header {kh}\nseglog's {sh}");
        ensure!(
            kv.to_records()? == sv.to_records()?,
            "batch {i} ({kh}): the records differ"
        );
    }
    println!(
        "{same} batches byte for byte, {differ} with the same header fields and records and other compressed bytes"
    );
    Ok(())
}

//! Step 8: seglog writes idempotent and transactional data, markers and producer snapshots into a
//! partition the broker created; the broker takes the producer state over. `seglog produce`
//! writes, the broker stopped: an idempotent producer (two runs, its sequences continuing), and a
//! transactional one that commits, aborts and commits (each marker bumping its epoch, transaction
//! version 2). Then a broker started on the directory must report the producers as seglog left
//! them (Kafka's `Admin.describeProducers`), and Kafka's consumer must read exactly the committed
//! and idempotent records under read_committed and every record under read_uncommitted. The
//! broker must take seglog's snapshot over as it is (loaded, no segment replayed, no file
//! rewritten), and the idempotent producer must go on where seglog left it: a resend of seglog's
//! last batch is a duplicate answered with seglog's offset, a gap is out of order, and the next
//! sequence is appended (KafkaProducer takes its producer id from the broker, so these are the
//! Produce requests it would send, built by Kafka's own classes: `Oracle raw-produce`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::Value;

use super::ctx::{Ctx, seglog_cmd};
use super::kraft::KafkaNode;
use super::records::json_lines;

const TOPIC: &str = "seglog_txn";
const IDEMPOTENT: &str = "7001";
const TRANSACTIONAL: &str = "7002";

/// One `seglog produce` run: its name (the values' prefix), its flags, how many records, and
/// whether a read_committed consumer sees them.
struct Run {
    name: &'static str,
    flags: &'static [&'static str],
    records: usize,
    committed: bool,
}

const RUNS: [Run; 5] = [
    Run {
        name: "idempotent-1",
        flags: &["--producer-id", IDEMPOTENT, "--producer-epoch", "0"],
        records: 500,
        committed: true,
    },
    Run {
        name: "commit-1",
        flags: &[
            "--producer-id",
            TRANSACTIONAL,
            "--producer-epoch",
            "0",
            "--transactional",
            "--commit",
        ],
        records: 300,
        committed: true,
    },
    Run {
        name: "abort-1",
        flags: &[
            "--producer-id",
            TRANSACTIONAL,
            "--producer-epoch",
            "1",
            "--transactional",
            "--abort",
        ],
        records: 200,
        committed: false,
    },
    Run {
        name: "commit-2",
        flags: &[
            "--producer-id",
            TRANSACTIONAL,
            "--producer-epoch",
            "2",
            "--transactional",
            "--commit",
        ],
        records: 300,
        committed: true,
    },
    Run {
        name: "idempotent-2",
        flags: &["--producer-id", IDEMPOTENT, "--producer-epoch", "0"],
        records: 200,
        committed: true,
    },
];

pub(super) fn step8(ctx: &Ctx, kafka: &KafkaNode) -> Result<()> {
    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "create-topic",
        &kafka.bootstrap,
        TOPIC,
        "1",
        "segment.bytes=1048576",
    ]);
    ctx.run_ok(cmd, "step8-create-topic", Duration::from_mins(2))?;
    broker.stop()?;

    let partition = kafka.log_dir.join(format!("{TOPIC}-0"));
    // The topic's segment.bytes lives in the broker's metadata; seglog reads a partition's
    // settings from seglog.properties, which Kafka ignores.
    fs::write(
        partition.join("seglog.properties"),
        "segment.bytes=1048576\n",
    )?;
    let (all, visible) = seglog_writes(ctx, &partition)?;
    let logs = super::segment_files::files_with(&partition, &["log"])?;
    let snapshots = super::segment_files::files_with(&partition, &["snapshot"])?;
    ensure!(logs.len() >= 3, "seglog wrote only {} segments", logs.len());
    ensure!(!snapshots.is_empty(), "seglog left no producer snapshot");
    ctx.run_ok(
        seglog_cmd(ctx, &["check"], &partition),
        "step8-seglog-check",
        Duration::from_mins(1),
    )?;

    let snapshot_bytes = file_bytes(&snapshots)?;
    let broker = kafka.start(ctx)?;
    let described = ctx.run_ok(
        ctx.oracle(&["describe-producers", &kafka.bootstrap, TOPIC, "0"]),
        "step8-kafka-describe-producers",
        Duration::from_mins(2),
    )?;
    let described = json_lines(&described, "describe-producers")?;
    let producer = |id: &str| -> Result<&Value> {
        described
            .iter()
            .find(|p| p["producer_id"].as_i64() == id.parse().ok())
            .with_context(|| format!("the broker knows no producer {id}: {described:?}"))
    };
    // The idempotent producer: epoch 0, sequences 0..=699 over its two runs.
    let idempotent = producer(IDEMPOTENT)?;
    ensure!(
        idempotent["epoch"] == 0
            && idempotent["last_sequence"] == 699
            && idempotent["txn_start"] == -1,
        "the broker's state of producer {IDEMPOTENT}: {idempotent}"
    );
    // The transactional one: three markers of transaction version 2 took its epoch to 3, and no
    // transaction is open.
    let transactional = producer(TRANSACTIONAL)?;
    ensure!(
        transactional["epoch"] == 3 && transactional["txn_start"] == -1,
        "the broker's state of producer {TRANSACTIONAL}: {transactional}"
    );
    kafka_reads(ctx, kafka, "read_committed", &visible)?;
    let offsets = kafka_reads(ctx, kafka, "read_uncommitted", &all)?;
    let loaded = snapshot_taken_over(&broker, &partition, &snapshot_bytes)?;
    broker.errors_about(&format!("{TOPIC}-0"))?;
    let continued = idempotent_continues(ctx, kafka, &partition, &all, &offsets)?;
    // The one error since: the out-of-order append asked for, with Kafka's message.
    let log = fs::read_to_string(broker.log()).unwrap_or_default();
    ensure!(
        log.lines()
            .filter(|l| l.contains(" ERROR ") && l.contains(&format!("{TOPIC}-0")))
            .count()
            == 1
            && log.contains(&format!("OutOfOrderSequenceException: Out of order sequence number for producer {IDEMPOTENT} at offset")),
        "the broker logged other errors than the out-of-order append; see {}",
        broker.log().display()
    );
    let log = fs::read_to_string(broker.log()).unwrap_or_default();
    ensure!(
        !log.contains("CorruptSnapshotException"),
        "the broker found a corrupt producer snapshot"
    );
    broker.stop()?;
    eprintln!("kafka-interop: {loaded}; {continued}");
    eprintln!(
        "kafka-interop: seglog wrote {} records in {} segments with {} producer snapshots (an idempotent producer over two runs, a transactional one committing, aborting and committing); the broker's describeProducers: {}; Kafka's consumer read the {} committed and idempotent records under read_committed and all {} under read_uncommitted",
        all.len(),
        logs.len(),
        snapshots.len(),
        described
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        visible.len(),
        all.len()
    );
    Ok(())
}

/// The runs of [`RUNS`], one `seglog produce` each, the broker stopped. Returns every value
/// written and those a read_committed consumer sees, in offset order.
fn seglog_writes(ctx: &Ctx, partition: &std::path::Path) -> Result<(Vec<String>, Vec<String>)> {
    let (mut all, mut visible) = (Vec::new(), Vec::new());
    for run in &RUNS {
        let mut input = String::new();
        let mut values = Vec::new();
        for i in 0..run.records {
            // About 2 KiB a record, so that the 1,500 records take several 1 MiB segments.
            let value = format!("{}-{i} {}", run.name, "x".repeat(2000 + i % 97));
            let _ = writeln!(input, "{value}");
            values.push(value);
        }
        let file = ctx.work.join(format!("step8-{}.txt", run.name));
        fs::write(&file, input)?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(r#"f="$1"; shift; exec "$@" < "$f""#)
            .arg("sh")
            .arg(&file)
            .arg(&ctx.seglog)
            .arg("produce")
            .arg(partition)
            .args(run.flags);
        ctx.run_ok(
            cmd,
            &format!("step8-seglog-produce-{}", run.name),
            Duration::from_mins(1),
        )?;
        if run.committed {
            visible.extend(values.iter().cloned());
        }
        all.extend(values);
    }
    Ok((all, visible))
}

/// The bytes of each file.
fn file_bytes(files: &[std::path::PathBuf]) -> Result<BTreeMap<std::path::PathBuf, Vec<u8>>> {
    files
        .iter()
        .map(|f| {
            Ok((
                f.clone(),
                fs::read(f).with_context(|| f.display().to_string())?,
            ))
        })
        .collect()
}

/// Fails unless the broker loaded producer state from seglog's latest snapshot and rebuilt
/// nothing: it logged loading that file, replayed no segment (no snapshot written, as
/// `UnifiedLog.rebuildProducerState` takes one at the log end only when it read past the
/// snapshot), and kept every snapshot seglog wrote byte for byte, but the strays Kafka's
/// `ProducerStateManager.removeStraySnapshots` deletes on every load: those at no segment's base
/// offset but the largest (seglog's loader deletes the same; each `seglog produce` run leaves one
/// at its log end).
fn snapshot_taken_over(
    broker: &super::kraft::Broker,
    partition: &Path,
    before: &BTreeMap<std::path::PathBuf, Vec<u8>>,
) -> Result<String> {
    let latest = before.keys().last().context("no snapshot")?;
    let name = latest
        .file_name()
        .context("a snapshot's name")?
        .to_string_lossy()
        .into_owned();
    let log = fs::read_to_string(broker.log()).unwrap_or_default();
    let about: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!("partition={TOPIC}-0")))
        .collect();
    ensure!(
        about
            .iter()
            .any(|l| l.contains("Loading producer state from snapshot file") && l.contains(&name)),
        "the broker did not load seglog's snapshot {name}; its lines about the partition:\n{}",
        about.join("\n")
    );
    let rewritten: Vec<&&str> = about
        .iter()
        .filter(|l| {
            l.contains("Wrote producer snapshot") || l.contains("Failed to load producer snapshot")
        })
        .collect();
    ensure!(
        rewritten.is_empty(),
        "the broker rebuilt producer state over seglog's snapshot: {rewritten:?}"
    );
    let bases: Vec<String> = super::segment_files::files_with(partition, &["log"])?
        .iter()
        .filter_map(|f| f.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    let kept: BTreeMap<_, _> = before
        .iter()
        .filter(|(f, _)| {
            *f == latest
                || f.file_stem()
                    .is_some_and(|s| bases.contains(&s.to_string_lossy().into_owned()))
        })
        .map(|(f, b)| (f.clone(), b.clone()))
        .collect();
    let now = file_bytes(&super::segment_files::files_with(partition, &["snapshot"])?)?;
    ensure!(
        now == kept,
        "the broker changed the snapshot files seglog wrote: seglog's {:?}, Kafka's rule keeps {:?}, the broker left {:?}",
        before.keys().collect::<Vec<_>>(),
        kept.keys().collect::<Vec<_>>(),
        now.keys().collect::<Vec<_>>()
    );
    Ok(format!(
        "the broker loaded seglog's snapshot {name} and replayed no segment; of seglog's {} snapshot files it kept the {} at segment bases and the log end byte for byte and deleted the {} strays, as its removeStraySnapshots does",
        before.len(),
        kept.len(),
        before.len() - kept.len()
    ))
}

/// One `Oracle raw-produce` of the idempotent producer: (error name, base offset).
fn raw_produce(
    ctx: &Ctx,
    kafka: &KafkaNode,
    sequence: usize,
    count: usize,
    prefix: &str,
) -> Result<(String, i64)> {
    let (sequence, count) = (sequence.to_string(), count.to_string());
    let cmd = ctx.oracle(&[
        "raw-produce",
        &kafka.bootstrap,
        TOPIC,
        "0",
        IDEMPOTENT,
        "0",
        &sequence,
        &count,
        prefix,
    ]);
    let out = ctx.run_ok(
        cmd,
        &format!("step8-kafka-raw-produce-{sequence}"),
        Duration::from_mins(1),
    )?;
    let answer = json_lines(&out, "raw-produce")?;
    let first = answer.first().context("raw-produce printed nothing")?;
    Ok((
        first["error"].as_str().unwrap_or_default().to_owned(),
        first["base_offset"].as_i64().unwrap_or(-1),
    ))
}

/// The last batch of the idempotent producer in the partition, from `seglog dump`'s batch lines:
/// (base offset, base sequence, last sequence). `seglog produce` cuts batches where a read of
/// stdin ends, so their sizes vary from run to run.
fn last_idempotent_batch(ctx: &Ctx, partition: &Path) -> Result<(i64, usize, usize)> {
    let logs = super::segment_files::files_with(partition, &["log"])?;
    let last = logs.last().context("no .log")?;
    let mut cmd = Command::new(&ctx.seglog);
    cmd.arg("dump").arg("--files").arg(last);
    let dumped = ctx.run_ok(cmd, "step8-seglog-dump-last", Duration::from_mins(1))?;
    let line = dumped
        .lines()
        .rfind(|l| l.contains(&format!(" producerId: {IDEMPOTENT} ")))
        .with_context(|| format!("no batch of producer {IDEMPOTENT} in {}", last.display()))?;
    let field = |name: &str| -> Result<i64> {
        line.split(&format!("{name}: "))
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("no {name} in {line}"))
    };
    Ok((
        field("baseOffset")?,
        usize::try_from(field("baseSequence")?)?,
        usize::try_from(field("lastSequence")?)?,
    ))
}

/// The idempotent producer goes on from seglog's state: seglog's last batch sent again is a
/// duplicate the broker answers with seglog's offset (a Kafka snapshot keeps one batch per
/// producer, the last); a sequence past a gap is out of order; the 50 sequences after 699 are
/// appended at the log end, and the broker's state says so.
fn idempotent_continues(
    ctx: &Ctx,
    kafka: &KafkaNode,
    partition: &Path,
    all: &[String],
    offsets: &[i64],
) -> Result<String> {
    let (first_of_last_batch, first_seq, last_seq) = last_idempotent_batch(ctx, partition)?;
    ensure!(
        last_seq == 699,
        "seglog's idempotent producer ended at sequence {last_seq}"
    );
    let end = offsets.last().context("no records")? + 1;
    let duplicate = raw_produce(ctx, kafka, first_seq, last_seq - first_seq + 1, "resent")?;
    ensure!(
        duplicate == ("NONE".to_owned(), first_of_last_batch),
        "a resend of seglog's last batch (sequences {first_seq}..={last_seq}, at offset {first_of_last_batch}) got {duplicate:?}"
    );
    let gap = raw_produce(ctx, kafka, 800, 1, "gap")?;
    ensure!(
        gap.0 == "OUT_OF_ORDER_SEQUENCE_NUMBER",
        "sequence 800 after 699 got {gap:?}"
    );
    let next = raw_produce(ctx, kafka, 700, 50, "continued")?;
    ensure!(
        next == ("NONE".to_owned(), end),
        "sequences 700..=749 got {next:?}, not appended at the log end {end}"
    );
    let described = ctx.run_ok(
        ctx.oracle(&["describe-producers", &kafka.bootstrap, TOPIC, "0"]),
        "step8-kafka-describe-producers-after",
        Duration::from_mins(2),
    )?;
    let described = json_lines(&described, "describe-producers")?;
    ensure!(
        described
            .iter()
            .any(|p| p["producer_id"].as_i64() == IDEMPOTENT.parse().ok()
                && p["epoch"] == 0
                && p["last_sequence"] == 749),
        "after sequences 700..=749 the broker's producers are {described:?}"
    );
    let mut want = all.to_vec();
    want.extend((0..50).map(|i| format!("continued-{i}")));
    kafka_reads(ctx, kafka, "read_uncommitted", &want)?;
    Ok(format!(
        "producer {IDEMPOTENT} went on from seglog's state: its last batch (sequences {first_seq}..={last_seq}) resent was a duplicate at seglog's offset {first_of_last_batch}, sequence 800 was OUT_OF_ORDER_SEQUENCE_NUMBER, sequences 700..=749 were appended at {end}"
    ))
}

/// Fails unless Kafka's consumer at `level` reads exactly `want`; returns the records' offsets.
fn kafka_reads(ctx: &Ctx, kafka: &KafkaNode, level: &str, want: &[String]) -> Result<Vec<i64>> {
    let cmd = ctx.oracle(&[
        "consume",
        &kafka.bootstrap,
        TOPIC,
        "0",
        &want.len().to_string(),
        "90000",
        level,
    ]);
    let got = ctx.run_ok(
        cmd,
        &format!("step8-kafka-consume-{level}"),
        Duration::from_secs(150),
    )?;
    let records = json_lines(&got, "Kafka's consumer")?;
    let got: Vec<String> = records
        .iter()
        .map(|v| {
            let b64 = v["value"].as_str().context("a value")?;
            Ok(String::from_utf8(super::records::b64_decode(b64)?)?)
        })
        .collect::<Result<_>>()?;
    ensure!(
        got == want,
        "Kafka's {level} consumer read {} records where seglog wrote {} visible at that level",
        got.len(),
        want.len()
    );
    records
        .iter()
        .map(|v| v["offset"].as_i64().context("an offset"))
        .collect()
}

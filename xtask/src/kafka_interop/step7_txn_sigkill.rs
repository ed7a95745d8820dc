//! Step 7: a broker SIGKILLed mid-transaction. Two transactional producers (commits and aborts
//! interleaved) and an idempotent one produce across segment rolls; once both producers' last
//! transactions are open with acknowledged records, the broker is killed. Of two copies of its
//! log directory, `seglog recover` recovers one and Kafka's own start-up the other: the segments
//! each recovers, the partition's `.log`, `.txnindex`, `.index`, `.timeindex` and `.snapshot`
//! bytes, and the records of a read_committed and a read_uncommitted read must be the same, and
//! every acknowledged committed record must be there.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde_json::Value;

use super::ctx::{Ctx, seglog_cmd};
use super::guard::Guard;
use super::kraft::KafkaNode;
use super::records::{json_lines, same_records, seglog_consumed};
use super::segment_files::{copy_tree, files_with};

pub(super) const TOPIC: &str = "txn_killed";
pub(super) const PARTITION: &str = "txn_killed-0";
const ROUNDS: &str = "30";
/// Acknowledged records of each open transaction to wait for before the SIGKILL.
const OPEN_ACKED_BEFORE_KILL: usize = 40;
/// The node's own settings: one transaction state partition (a log directory small enough to
/// copy twice), and recovery points checkpointed every second (the first 30 s after start-up, a
/// delay Kafka fixes), so that the kill finds one past the first segments and each recovery
/// starts there.
pub(super) const NODE_SETTINGS: &str =
    "transaction.state.log.num.partitions=1\nlog.flush.offset.checkpoint.interval.ms=1000\n";
const ISOLATION_LEVELS: [&str; 2] = ["read_committed", "read_uncommitted"];

pub(super) fn step7(ctx: &Ctx) -> Result<()> {
    let node = KafkaNode::format_named(ctx, "kafka7", NODE_SETTINGS)?;
    let acked = kill_mid_transaction(ctx, &node)?;
    let dir = ctx.work.join("step7");
    let (copy_a, copy_b) = (dir.join("a"), dir.join("b"));
    copy_tree(&node.log_dir, &copy_a)?;
    copy_tree(&node.log_dir, &copy_b)?;
    let recovery_point = recovery_point(&copy_a)?.context("no recovery point")?;

    // Copy A: seglog recover, with the topic's one setting that is not a default.
    let part_a = copy_a.join(PARTITION);
    let out = ctx.run_ok(
        seglog_cmd(
            ctx,
            &["recover", "--json", "--config", "segment.bytes=1048576"],
            &part_a,
        ),
        "step7-seglog-recover",
        Duration::from_mins(2),
    )?;
    let report: Value = serde_json::from_str(out.trim()).context("seglog recover --json")?;
    let seglog_scanned: Vec<i64> = serde_json::from_value(
        report
            .get("scanned")
            .cloned()
            .context("seglog recover --json: no \"scanned\"")?,
    )?;
    ctx.run_ok(
        seglog_cmd(ctx, &["check"], &part_a),
        "step7-seglog-check",
        Duration::from_mins(1),
    )?;

    // Copy B: Kafka's recovery at start-up, its consumers, then a clean stop.
    let node_b = node.on_copy(ctx, "kafka7-b", copy_b.clone())?;
    let broker = node_b.start(ctx)?;
    let mut kafka_reads = BTreeMap::new();
    for level in ISOLATION_LEVELS {
        let cmd = ctx.oracle(&[
            "consume",
            &node_b.bootstrap,
            TOPIC,
            "0",
            "end",
            "90000",
            level,
        ]);
        let got = ctx.run_ok(
            cmd,
            &format!("step7-kafka-consume-{level}"),
            Duration::from_secs(150),
        )?;
        kafka_reads.insert(level, json_lines(&got, "Kafka's consumer")?);
    }
    let kafka_scanned = recovered_segments(&fs::read_to_string(broker.log())?);
    broker.errors_about(PARTITION)?;
    broker.stop()?;
    ensure!(
        seglog_scanned == kafka_scanned,
        "from the recovery point {recovery_point}, seglog recover scanned the segments {seglog_scanned:?}, Kafka recovered {kafka_scanned:?}"
    );

    let part_b = copy_b.join(PARTITION);
    let same = same_files(&part_a, &part_b)?;
    for (level, kafka_read) in &kafka_reads {
        let consumed = ctx.run_ok(
            seglog_cmd(
                ctx,
                &[
                    "consume",
                    "--json",
                    "--json-bytes",
                    "base64",
                    "--isolation-level",
                    level,
                    // Kafka's restarted single-replica leader moves its high watermark to the
                    // log end at once; the killed broker's checkpoint holds an older one.
                    "--to-log-end",
                ],
                &part_a,
            ),
            &format!("step7-seglog-consume-{level}"),
            Duration::from_mins(1),
        )?;
        same_records(
            &format!(
                "seglog consume after seglog recover vs Kafka's {level} consumer after Kafka's recovery"
            ),
            kafka_read,
            &seglog_consumed(&consumed)?,
        )?;
    }
    let committed = kafka_reads
        .get("read_committed")
        .context("no read_committed read")?;
    let figures = acked_committed_kept(&acked, committed)?;
    eprintln!(
        "kafka-interop: SIGKILL mid-transaction after {figures}; recovery point {recovery_point}, both recovered the segments {seglog_scanned:?}; the {same} .log, .txnindex, .index, .timeindex and .snapshot files identical; seglog and Kafka read the same {} read_committed and {} read_uncommitted records",
        committed.len(),
        kafka_reads.get("read_uncommitted").map_or(0, Vec::len),
    );
    Ok(())
}

/// Starts the node's broker, creates the topic, runs the producers until both transactional
/// producers have [`OPEN_ACKED_BEFORE_KILL`] acknowledged records in their open transactions, and
/// SIGKILLs the broker. Returns every record acknowledged.
pub(super) fn kill_mid_transaction(ctx: &Ctx, node: &KafkaNode) -> Result<Vec<Value>> {
    let broker = node.start(ctx)?;
    let cmd = ctx.oracle(&[
        "create-topic",
        &node.bootstrap,
        TOPIC,
        "1",
        "segment.bytes=1048576",
    ]);
    ctx.run_ok(cmd, "step7-create-topic", Duration::from_mins(2))?;
    // The producers start once the broker checkpointed the partition's recovery point, so that
    // they roll segments the broker flushes and checkpoints before the kill.
    let deadline = Instant::now() + Duration::from_mins(2);
    while recovery_point(&node.log_dir)?.is_none() {
        ensure!(
            Instant::now() < deadline,
            "the broker did not checkpoint a recovery point for {PARTITION} in time"
        );
        sleep(Duration::from_millis(200));
    }
    let (stdout, stderr) = ctx.log_paths("step7-produce");
    let producer = Guard::spawn(
        ctx.oracle(&[
            "txn-produce-until-killed",
            &node.bootstrap,
            TOPIC,
            ROUNDS,
            "23",
        ]),
        "step7-produce",
        &stdout,
        &stderr,
        false,
    )?;
    let deadline = Instant::now() + Duration::from_mins(4);
    loop {
        let open = |producer: &str| {
            let f = fs::File::open(&stdout);
            f.map_or(0, |f| {
                BufReader::new(f)
                    .lines()
                    .map_while(Result::ok)
                    .filter(|l| {
                        l.contains(r#""txn":"open""#)
                            && l.contains(&format!(r#""producer":"{producer}""#))
                    })
                    .count()
            })
        };
        let flushed = recovery_point(&node.log_dir)?.is_some_and(|p| p > 0);
        if flushed && open("a") >= OPEN_ACKED_BEFORE_KILL && open("b") >= OPEN_ACKED_BEFORE_KILL {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "the open transactions did not get {OPEN_ACKED_BEFORE_KILL} acknowledged records each and a recovery point past 0 in time; see {}",
            stderr.display()
        );
        sleep(Duration::from_millis(20));
    }
    broker.kill();
    drop(producer);
    // The last line may be torn if the producer died while printing it.
    let text = fs::read_to_string(&stdout)?;
    let complete = text.rsplit_once('\n').map_or("", |(done, _)| done);
    json_lines(complete, "acknowledged")
}

/// The partition's recovery point in the log directory's `recovery-point-offset-checkpoint`, if
/// it has one (the broker writes the file through a temporary file and a rename).
pub(super) fn recovery_point(log_dir: &Path) -> Result<Option<i64>> {
    let text = fs::read_to_string(log_dir.join("recovery-point-offset-checkpoint"))?;
    let (topic, partition) = PARTITION.rsplit_once('-').context("partition name")?;
    for line in text.lines().skip(2) {
        let fields: Vec<&str> = line.split(' ').collect();
        if let [t, p, offset] = fields[..]
            && t == topic
            && p == partition
        {
            return Ok(Some(offset.parse()?));
        }
    }
    Ok(None)
}

/// The segments Kafka's `LogLoader` logged as recovered for the partition ("Recovering
/// unflushed segment <base>"), in order.
fn recovered_segments(broker_log: &str) -> Vec<i64> {
    let marker = "Recovering unflushed segment ";
    broker_log
        .lines()
        .filter(|l| l.contains(PARTITION))
        .filter_map(|l| {
            let rest = l.split_once(marker)?.1;
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// Compares the segment files and producer snapshots of the two recovered partition directories
/// byte for byte: the same names and the same bytes. (A snapshot holds only what the log says, so
/// the moment it is written, during recovery or at Kafka's clean stop, does not change it.)
/// Returns how many files are identical.
fn same_files(a: &Path, b: &Path) -> Result<usize> {
    let compared = ["log", "txnindex", "index", "timeindex", "snapshot"];
    let names = |dir: &Path, exts: &[&str]| -> Result<BTreeSet<String>> {
        Ok(files_with(dir, exts)?
            .iter()
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect())
    };
    let (in_a, in_b) = (names(a, &compared)?, names(b, &compared)?);
    ensure!(
        in_a == in_b,
        "seglog's recovery left the files {in_a:?}, Kafka's {in_b:?}"
    );
    let mut differ = Vec::new();
    for name in &in_a {
        let (x, y) = (fs::read(a.join(name))?, fs::read(b.join(name))?);
        if x != y {
            let at = x.iter().zip(&y).position(|(p, q)| p != q);
            differ.push(format!(
                "{name} ({} bytes after seglog recover, {} after Kafka's; first difference at byte {})",
                x.len(),
                y.len(),
                at.map_or_else(|| "the shorter's end".to_owned(), |i| i.to_string())
            ));
        }
    }
    ensure!(
        differ.is_empty(),
        "after the SIGKILL, seglog recover and Kafka's recovery wrote different files:\n  {}",
        differ.join("\n  ")
    );
    Ok(in_a.len())
}

/// Every acknowledged committed record, and every acknowledged idempotent record below the last
/// stable offset (the first offset of the open transactions), is in Kafka's read_committed read as
/// it was acknowledged; no record of an aborted or open transaction is. Returns the figures.
fn acked_committed_kept(acked: &[Value], committed: &[Value]) -> Result<String> {
    let by_offset: BTreeMap<i64, &Value> = committed
        .iter()
        .filter_map(|v| Some((v["offset"].as_i64()?, v)))
        .collect();
    let offset = |v: &Value| {
        v["offset"]
            .as_i64()
            .context("an acknowledged record's offset")
    };
    let fate = |txn: &'static str| acked.iter().filter(move |v| v["txn"] == txn);
    let last_stable = fate("open")
        .map(offset)
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .min()
        .context("no acknowledged record of an open transaction")?;
    let kept = |v: &Value| -> Result<bool> {
        Ok(match by_offset.get(&offset(v)?) {
            Some(got) => {
                same_records(
                    "an acknowledged record",
                    std::slice::from_ref(v),
                    &[(*got).clone()],
                )?;
                true
            }
            None => false,
        })
    };
    let mut plain_visible = 0;
    for v in fate("committed") {
        ensure!(kept(v)?, "the acknowledged committed record {v} is missing");
    }
    for v in fate("none") {
        if offset(v)? < last_stable {
            ensure!(
                kept(v)?,
                "the acknowledged idempotent record {v} is missing"
            );
            plain_visible += 1;
        }
    }
    for v in fate("aborted").chain(fate("open")) {
        ensure!(
            !by_offset.contains_key(&offset(v)?),
            "read_committed returned a record of an aborted or open transaction: {v}"
        );
    }
    if let Some((&last, _)) = by_offset.last_key_value() {
        ensure!(
            last < last_stable,
            "read_committed returned offset {last}, past the open transactions' first offset {last_stable}"
        );
    }
    let count = |txn: &'static str| fate(txn).count();
    Ok(format!(
        "{} committed, {} aborted and {} open-transaction records and {} idempotent ones ({plain_visible} of them below the last stable offset {last_stable}) acknowledged",
        count("committed"),
        count("aborted"),
        count("open"),
        count("none"),
    ))
}

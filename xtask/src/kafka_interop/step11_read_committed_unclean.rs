//! Step 11: read_committed offline on a log directory an unclean stop left. A broker of its own,
//! fed as in step 7 (two transactional producers, commits and aborts interleaved, and an
//! idempotent one, across segment rolls), is SIGKILLed while two transactions are open. On one
//! copy of its log directory every `.txnindex` is removed; on another, one `.txnindex` of a
//! segment Kafka recovers (at or past the recovery point) is made stale (its last entry cut, as an
//! unflushed write loses it, or, without one, an entry the markers do not give). `seglog consume
//! --isolation-level read_committed` on each copy, with nothing recovered, must return exactly
//! what Kafka's read_committed consumer returns once the broker restarted on the original
//! directory and recovered it.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, ensure};

use super::ctx::{Ctx, seglog_cmd};
use super::kraft::KafkaNode;
use super::records::{json_lines, same_records, seglog_consumed};
use super::segment_files::{base_offset, copy_tree, files_with};
use super::step7_txn_sigkill::{
    NODE_SETTINGS, PARTITION, TOPIC, kill_mid_transaction, recovery_point,
};

/// The bytes of one `.txnindex` entry.
const TXN_ENTRY: usize = 34;

pub(super) fn step11(ctx: &Ctx) -> Result<()> {
    let node = KafkaNode::format_named(ctx, "kafka11", NODE_SETTINGS)?;
    let acked = kill_mid_transaction(ctx, &node)?;
    let dir = ctx.work.join("step11");
    let (missing, stale) = (dir.join("missing"), dir.join("stale"));
    copy_tree(&node.log_dir, &missing)?;
    copy_tree(&node.log_dir, &stale)?;
    let recovery_point = recovery_point(&missing)?.context("no recovery point")?;

    let removed = files_with(&missing.join(PARTITION), &["txnindex"])?;
    for path in &removed {
        fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    }
    let staled = make_stale(&stale.join(PARTITION), recovery_point)?;

    // Kafka's answer: the broker restarted on the original directory recovers it first.
    let broker = node.start(ctx)?;
    let cmd = ctx.oracle(&[
        "consume",
        &node.bootstrap,
        TOPIC,
        "0",
        "end",
        "90000",
        "read_committed",
    ]);
    let got = ctx.run_ok(
        cmd,
        "step11-kafka-consume-read_committed",
        Duration::from_secs(150),
    )?;
    let kafka_read = json_lines(&got, "Kafka's consumer")?;
    broker.errors_about(PARTITION)?;
    broker.stop()?;
    ensure!(
        !kafka_read.is_empty(),
        "Kafka's read_committed consumer read nothing"
    );

    for (copy, what) in [
        (
            &missing,
            format!("{} .txnindex files removed", removed.len()),
        ),
        (&stale, format!("{} made stale", staled.display())),
    ] {
        let consumed = ctx.run_ok(
            seglog_cmd(
                ctx,
                &[
                    "consume",
                    "--json",
                    "--json-bytes",
                    "base64",
                    "--isolation-level",
                    "read_committed",
                    // Kafka's restarted single-replica leader moves its high watermark to the
                    // log end at once; the killed broker's checkpoint holds an older one.
                    "--to-log-end",
                ],
                &copy.join(PARTITION),
            ),
            "step11-seglog-consume-read_committed",
            Duration::from_mins(1),
        )?;
        same_records(
            &format!(
                "seglog consume --isolation-level read_committed on the unclean copy ({what}) vs Kafka's read_committed consumer after Kafka's recovery"
            ),
            &kafka_read,
            &seglog_consumed(&consumed)?,
        )?;
    }
    let aborted = acked.iter().filter(|v| v["txn"] == "aborted").count();
    ensure!(
        aborted > 0,
        "no acknowledged record of an aborted transaction"
    );
    eprintln!(
        "kafka-interop: SIGKILL with transactions open ({} records acknowledged, {aborted} of aborted transactions), recovery point {recovery_point}; seglog read_committed with {} .txnindex files removed, and with {} stale, equals Kafka's {} read_committed records after its recovery",
        acked.len(),
        removed.len(),
        staled.display(),
        kafka_read.len(),
    );
    Ok(())
}

/// Makes one `.txnindex` of `partition` stale, of a segment at or past the one holding the
/// recovery point (Kafka rebuilds those): the newest with an entry loses its last entry; if none
/// has one, the last segment's gets an entry the markers do not give. Returns its path.
fn make_stale(partition: &Path, recovery_point: i64) -> Result<PathBuf> {
    let mut logs: Vec<(i64, PathBuf)> = files_with(partition, &["log"])?
        .into_iter()
        .map(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            Ok((base_offset(name)?, p))
        })
        .collect::<Result<_>>()?;
    logs.sort();
    let first_recovered = logs
        .iter()
        .rposition(|(base, _)| *base <= recovery_point)
        .unwrap_or(0);
    let recovered = logs.get(first_recovered..).unwrap_or_default();
    for (_, log) in recovered.iter().rev() {
        let index = log.with_extension("txnindex");
        let bytes = fs::read(&index).unwrap_or_default();
        if bytes.len() >= TXN_ENTRY {
            let keep = (bytes.len() / TXN_ENTRY - 1) * TXN_ENTRY;
            fs::write(&index, bytes.get(..keep).unwrap_or_default())?;
            return Ok(index);
        }
    }
    let (base, log) = recovered.last().context("no segment")?;
    let index = log.with_extension("txnindex");
    // version 0, producer id, first offset, last offset, last stable offset, as Kafka lays it out.
    let mut entry = Vec::with_capacity(TXN_ENTRY);
    entry.extend(0_i16.to_be_bytes());
    entry.extend(987_654_i64.to_be_bytes());
    for offset in [*base, *base, *base] {
        entry.extend(offset.to_be_bytes());
    }
    fs::write(&index, entry)?;
    Ok(index)
}

//! Step 12: leader epochs, Kafka as the judge. A broker of its own leads a partition through
//! several leader epochs (each clean restart of the one-node cluster elects it again, with the
//! next epoch) and is SIGKILLed after the last round. Of copies of its log directory, `seglog
//! recover` recovers one and Kafka's own load (`UnifiedLog.create` after an unclean shutdown, run
//! offline, so that no election adds an epoch) the other, in three cases: as the kill left it; with
//! the checkpoint's entries lost and recovery from offset 0 (both rebuild the cache from the
//! batches); and with the log cut inside the last epoch's first batch (both truncate the cache to
//! the new log end). The `leader-epoch-checkpoint` files must be the same bytes.

use std::fs;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};

use super::ctx::{Ctx, seglog_cmd};
use super::kraft::KafkaNode;
use super::segment_files::{copy_tree, segment_files};

const TOPIC: &str = "epochs";
const PARTITION: &str = "epochs-0";
const CHECKPOINT: &str = "leader-epoch-checkpoint";
/// Produce rounds, one per leader epoch; the broker restarts cleanly between them.
const ROUNDS: usize = 3;
const PER_ROUND: usize = 400;

pub(super) fn step12(ctx: &Ctx) -> Result<()> {
    let node = KafkaNode::format_named(ctx, "kafka12", "")?;
    for round in 0..ROUNDS {
        let broker = node.start(ctx)?;
        if round == 0 {
            let cmd = ctx.oracle(&[
                "create-topic",
                &node.bootstrap,
                TOPIC,
                "1",
                "segment.bytes=1048576",
            ]);
            ctx.run_ok(cmd, "step12-create-topic", Duration::from_mins(2))?;
        }
        let cmd = ctx.oracle(&[
            "produce",
            &node.bootstrap,
            TOPIC,
            "none",
            &PER_ROUND.to_string(),
            &(12 + round).to_string(),
        ]);
        ctx.run_ok(
            cmd,
            &format!("step12-produce-{round}"),
            Duration::from_mins(3),
        )?;
        if round + 1 < ROUNDS {
            broker.stop()?;
        } else {
            broker.kill();
        }
    }
    let left = fs::read_to_string(node.log_dir.join(PARTITION).join(CHECKPOINT))?;
    let epochs = entries(&left)?;
    ensure!(
        epochs.len() >= 2,
        "the broker's restarts left one leader epoch only: {left:?}"
    );
    let work = ctx.work.join("step12");
    let mut figures = Vec::new();
    for case in ["as-killed", "entries-lost", "tail-cut"] {
        let (seglog_dir, kafka_dir) = (
            work.join(case).join("seglog"),
            work.join(case).join("kafka"),
        );
        for dir in [&seglog_dir, &kafka_dir] {
            copy_tree(&node.log_dir, dir)?;
            damage(case, &dir.join(PARTITION), &epochs)?;
        }
        let recovery_point = recovery_point(&kafka_dir)?;
        ctx.run_ok(
            seglog_cmd(ctx, &["recover"], &seglog_dir),
            &format!("step12-seglog-recover-{case}"),
            Duration::from_mins(2),
        )?;
        let kafka = ctx.run_ok(
            ctx.oracle(&[
                "unified-recover",
                &kafka_dir.join(PARTITION).display().to_string(),
                &recovery_point.to_string(),
                "0",
            ]),
            &format!("step12-kafka-recover-{case}"),
            Duration::from_mins(2),
        )?;
        let ours = fs::read(seglog_dir.join(PARTITION).join(CHECKPOINT))?;
        let theirs = fs::read(kafka_dir.join(PARTITION).join(CHECKPOINT))?;
        ensure!(
            ours == theirs,
            "{case}: seglog recover left the leader-epoch-checkpoint {:?}, Kafka's load {:?} ({})",
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs),
            kafka.trim()
        );
        figures.push(format!(
            "{case}: {} entries",
            entries(&String::from_utf8_lossy(&ours))?.len()
        ));
    }
    eprintln!(
        "kafka-interop: a partition led through {} leader epochs ({}) and SIGKILLed; seglog recover and Kafka's own load leave the same leader-epoch-checkpoint bytes: {}",
        epochs.len(),
        left.lines().skip(2).collect::<Vec<_>>().join(", "),
        figures.join("; ")
    );
    Ok(())
}

/// The `(epoch, start offset)` entries of a checkpoint's text.
fn entries(text: &str) -> Result<Vec<(i32, i64)>> {
    text.lines()
        .skip(2)
        .map(|line| {
            let (epoch, offset) = line.split_once(' ').context("an epoch entry")?;
            Ok((epoch.parse()?, offset.parse()?))
        })
        .collect()
}

/// Damages a copy of the partition as `case` says (both copies alike).
fn damage(case: &str, partition: &Path, epochs: &[(i32, i64)]) -> Result<()> {
    match case {
        "entries-lost" => {
            fs::write(partition.join(CHECKPOINT), "0\n0\n")?;
            // Recovery from offset 0: the log directory checkpoints no recovery point.
            let root = partition.parent().context("the log directory")?;
            fs::remove_file(root.join("recovery-point-offset-checkpoint"))?;
        }
        "tail-cut" => {
            let (_, start) = *epochs.last().context("no epoch")?;
            cut_inside_batch(partition, start)?;
        }
        _ => {}
    }
    Ok(())
}

/// Cuts the `.log` holding `offset` seven bytes into the batch that holds it (a torn write), and
/// removes the segments after it (their `.log`, `.index` and `.timeindex`), as a crash that lost the tail would leave them.
fn cut_inside_batch(partition: &Path, offset: i64) -> Result<()> {
    let logs: Vec<_> = segment_files(partition)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    for log in &logs {
        let bytes = fs::read(log)?;
        let mut pos = 0;
        while let Some(header) = bytes.get(pos..pos + 27) {
            let word = |at: usize, n: usize| header.get(at..at + n).context("batch header");
            let base = i64::from_be_bytes(word(0, 8)?.try_into()?);
            let len = usize::try_from(i32::from_be_bytes(word(8, 4)?.try_into()?))?;
            let delta = i64::from(i32::from_be_bytes(word(23, 4)?.try_into()?));
            if (base..=base + delta).contains(&offset) {
                fs::OpenOptions::new()
                    .write(true)
                    .open(log)?
                    .set_len(u64::try_from(pos + 7)?)?;
                for later in logs.iter().filter(|l| *l > log) {
                    for ext in ["log", "index", "timeindex"] {
                        let file = later.with_extension(ext);
                        if file.exists() {
                            fs::remove_file(file)?;
                        }
                    }
                }
                return Ok(());
            }
            pos += 12 + len;
        }
    }
    anyhow::bail!("no batch of {} holds offset {offset}", partition.display())
}

/// The partition's entry in the log directory's `recovery-point-offset-checkpoint` (0 without one).
fn recovery_point(log_dir: &Path) -> Result<i64> {
    let Ok(text) = fs::read_to_string(log_dir.join("recovery-point-offset-checkpoint")) else {
        return Ok(0);
    };
    let (topic, partition) = PARTITION.rsplit_once('-').context("partition name")?;
    for line in text.lines().skip(2) {
        if let [t, p, offset] = line.split(' ').collect::<Vec<_>>()[..]
            && t == topic
            && p == partition
        {
            return Ok(offset.parse()?);
        }
    }
    Ok(0)
}

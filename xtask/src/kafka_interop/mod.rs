//! `cargo xtask kafka-interop`: Kafka itself judges seglog's format, both ways.
//!
//! 1. Kafka reads what we write: seglog builds two partitions (every codec, rolled segments,
//!    out-of-order timestamps, headers, null keys and values; and a compacted one), Kafka's own
//!    `DumpLogSegments --deep-iteration --print-data-log` reads every `.log`, `.index` and
//!    `.timeindex`, and the records it prints must be exactly the ones written.
//! 2. The same indexes as Kafka: Kafka's `LogSegment.recover` on copies of our `.log` files must
//!    rebuild byte-identical `.index` and `.timeindex` files.
//! 3. Kafka writes, we read: a single-node KRaft broker, one producer per codec; after a clean stop
//!    `seglog check` passes on its log directory and `seglog consume --json` returns exactly the
//!    acknowledged records. Then a broker is SIGKILLed mid-produce, and `seglog recover` and
//!    `seglog check` must handle the unclean directory, keeping every acknowledged record; a broker
//!    restarted on the recovered directory must serve the same records.
//! 4. We write, Kafka serves: seglog appends to a partition directory the broker created and writes
//!    the checkpoints the broker reads; after a restart a real consumer reads every record.
//! 5. The quarantine: a partition seglog wrote is damaged and `seglog recover` sets the dropped data
//!    aside in `<partition>/seglog-quarantine/`; a broker started on it serves every kept record,
//!    logs no error or warning about it, and leaves the quarantine as it was.
//! 6. Transactions: a broker fed by two transactional producers (commits and aborts interleaved)
//!    and an idempotent one, across segment rolls; `seglog check` passes, `seglog consume` returns
//!    what Kafka's consumer returns, and `seglog dump` prints what `DumpLogSegments` prints for
//!    the partition's files and the KRaft metadata log's.
//! 7. Transactions and SIGKILL: a broker of its own, fed as in step 6, is SIGKILLed while two
//!    transactions are open; `seglog recover` on one copy of its log directory and the broker's
//!    own recovery on another recover the same segments (from the recovery point), leave the same
//!    `.log`, `.txnindex`, `.index`, `.timeindex` and `.snapshot` bytes, and read the same records
//!    at each isolation level, every acknowledged committed record among them.
//! 8. seglog's producer state, Kafka's broker: `seglog produce` writes idempotent and
//!    transactional runs (commit, abort, commit) into a partition the broker created; a broker
//!    started on it reports those producers (`describeProducers`) and Kafka's consumer reads
//!    exactly the committed and idempotent records under read_committed. It loads seglog's
//!    snapshot as it is (no segment replayed, the files kept but Kafka's strays), and the
//!    idempotent producer goes on from seglog's state: its last batch resent is a duplicate at
//!    seglog's offset, a gap is out of order, the next sequence is appended.
//! 9. Kafka's cleaner, run now on the committed compaction inputs (`testdata/cleaner/`), writes
//!    the committed outputs byte for byte (seglog's cleaner is held to them by a test).
//! 10. An operator's session on the broker's log directory: `produce` with headers and
//!     timestamps read back by kcat; `consume --format`/`--json` equal to kcat's `-f`/`-J` at both
//!     isolation levels, `offsets --time` to `kafka-get-offsets.sh`, `log-dirs --json` to
//!     `kafka-log-dirs.sh --describe`, dump's decoders to DumpLogSegments' (needs kcat).
//! 11. read_committed after an unclean stop: a broker fed as in step 7 is SIGKILLed; on one copy
//!     of its log directory every `.txnindex` is removed, on another one is made stale, and
//!     `seglog consume --isolation-level read_committed` on each (nothing recovered) returns what
//!     Kafka's read_committed consumer returns after the broker recovered the original.
//! 12. Leader epochs: a broker of its own leads a partition through several epochs (clean
//!     restarts) and is SIGKILLed; `seglog recover` and Kafka's own load (`UnifiedLog.create`
//!     offline, no election) leave the same `leader-epoch-checkpoint` bytes: as killed, with the
//!     entries lost and recovery from 0, and with the log cut inside the last epoch's first batch.
//! 13. A topic's `compression.type` on a leader append: the same producer requests through
//!     Kafka's `UnifiedLog.appendAsLeader` offline and seglog's, with the same topic config, store
//!     the same batches (byte for byte, or the same header fields and records where the Java and
//!     Rust codecs write other compressed bytes), for zstd, gzip, lz4, snappy, uncompressed and
//!     producer topics.
//! 14. Topic ids and high watermarks, on a broker of its own: seglog reads the broker's
//!     `partition.metadata` and `replication-offset-checkpoint` (`offsets --time -1` equals
//!     `kafka-get-offsets.sh`), writes a `partition.metadata` byte for byte as the broker did and
//!     the broker serves the partition, stops reading at a crafted high watermark, and reports a
//!     partition holding another topic's id, which the broker sets aside as a stray replica.
//!
//! Everything runs on 127.0.0.1 with free ports, under `target/kafka-interop/`. Every process it
//! starts is in its own process group, held by a [`Guard`](guard::Guard) that kills the group
//! when dropped, so no exit path (an error, a panic, a timeout) leaves one running; the broker
//! also exits when its stdin (a pipe from us) closes, which covers this process being killed.
//!
//! Needs java 17+ and mvn (the Kafka jars come from Maven Central into `$SEGLOG_M2`, default
//! `target/m2`); without them the check says it was skipped and succeeds.
//!
//! One module per step, run in the order 1, 2, 3a, 4, 3b, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 (step 3b reuses step 4's broker;
//! `--step 6,7` runs some of them); without kcat, step 10 is skipped with a notice at the start;
//! `kraft` holds the broker, `guard` the process groups, `ctx` the paths and the build.

mod ctx;
mod dump_output;
mod guard;
mod kraft;
mod records;
mod segment_files;
mod step10_operator_session;
mod step11_read_committed_unclean;
mod step12_leader_epochs;
mod step13_recompression;
mod step14_topic_id_hw;
mod step1_dump;
mod step2_recover;
mod step3a_kafka_writes;
mod step3b_sigkill;
mod step4_seglog_appends;
mod step5_quarantine;
mod step6_transactions;
mod step7_txn_sigkill;
mod step8_seglog_txn;
mod step9_cleaner;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use ctx::Ctx;
use kraft::{Broker, KafkaNode};
use step1_dump::step1;
use step2_recover::step2;
use step3a_kafka_writes::step3a;
use step3b_sigkill::step3b;
use step4_seglog_appends::step4;
use step5_quarantine::step5;
use step6_transactions::step6;
use step7_txn_sigkill::step7;
use step8_seglog_txn::step8;
use step9_cleaner::step9;
use step10_operator_session::step10;
use step11_read_committed_unclean::step11;
use step12_leader_epochs::step12;
use step13_recompression::step13;
use step14_topic_id_hw::step14;

/// Records per codec in step 3, and records seglog appends in step 4.
const PRODUCED_PER_CODEC: usize = 1000;
const APPENDED: usize = 1500;
/// Acknowledged records to wait for before the SIGKILL in step 3.
const ACKED_BEFORE_KILL: usize = 3000;
const CODECS: [&str; 5] = ["none", "gzip", "snappy", "lz4", "zstd"];
/// The `index.interval.bytes` of the partitions `seglog-kafka-interop-writer` builds.
const INDEX_INTERVALS: [(&str, u32); 2] = [("interop-0", 300), ("interop_compacted-0", 200)];
const SEGMENT_INDEX_BYTES: u32 = 10 * 1024 * 1024;
/// JVM options: the clients and tools are short-lived (fast start); the broker gets a bounded heap.
const TOOL_JAVA_OPTS: &str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m";
const BROKER_JAVA_OPTS: &str = "-XX:+UseSerialGC -Xmx512m";

/// What the steps share: the node once formatted, step 4's running broker (step 3b kills it), and
/// step 1's output (step 2 reads it).
struct State {
    node: Option<KafkaNode>,
    running: Option<Broker>,
    built: PathBuf,
    expected: PathBuf,
}

impl State {
    fn node(&self) -> Result<&KafkaNode> {
        self.node.as_ref().context("no KRaft node")
    }
}

/// One step: its name for `--step`, its title, whether it needs the formatted KRaft node, and the
/// step itself.
struct Step {
    id: &'static str,
    title: &'static str,
    needs_node: bool,
    run: fn(&Ctx, &mut State) -> Result<()>,
}

/// The steps in the order they run; `--step` picks some of them (the build, the KRaft node's
/// format, step 1 under step 2, step 4 under step 3b, whose broker it reuses, and steps 3a and 6
/// under step 10, whose topics it reads, run when a picked step needs them).
const STEPS: [Step; 15] = [
    Step {
        id: "1",
        title: "step 1: Kafka's DumpLogSegments reads what seglog wrote",
        needs_node: false,
        run: |ctx, st| step1(ctx, &st.built, &st.expected),
    },
    Step {
        id: "2",
        title: "step 2: Kafka's LogSegment.recover rebuilds our indexes byte for byte",
        needs_node: false,
        run: |ctx, st| step2(ctx, &st.built),
    },
    Step {
        id: "3a",
        title: "step 3a: a KRaft broker writes with a producer per codec, seglog reads",
        needs_node: true,
        run: |ctx, st| step3a(ctx, st.node()?),
    },
    Step {
        id: "4",
        title: "step 4: seglog appends to the broker's partition, Kafka serves it",
        needs_node: true,
        run: |ctx, st| {
            st.running = Some(step4(ctx, st.node()?)?);
            Ok(())
        },
    },
    Step {
        id: "3b",
        title: "step 3b: SIGKILL mid-produce, seglog recover and check",
        needs_node: true,
        run: |ctx, st| {
            let broker = st.running.take().context("no running broker")?;
            step3b(ctx, st.node()?, broker)
        },
    },
    Step {
        id: "5",
        title: "step 5: seglog recover's quarantine in a partition, a broker serves it",
        needs_node: true,
        run: |ctx, st| step5(ctx, st.node()?),
    },
    Step {
        id: "6",
        title: "step 6: transactional and idempotent producers, seglog reads and dumps as Kafka",
        needs_node: true,
        run: |ctx, st| step6(ctx, st.node()?),
    },
    Step {
        id: "7",
        title: "step 7: SIGKILL mid-transaction, seglog recover and Kafka's recovery agree",
        needs_node: false,
        run: |ctx, _| step7(ctx),
    },
    Step {
        id: "8",
        title: "step 8: seglog writes transactions and producer snapshots, a broker takes them over",
        needs_node: true,
        run: |ctx, st| step8(ctx, st.node()?),
    },
    Step {
        id: "9",
        title: "step 9: Kafka's cleaner gives the committed compaction goldens",
        needs_node: false,
        run: |ctx, _| step9(ctx),
    },
    Step {
        id: "10",
        title: "step 10: an operator's session, each command judged by kcat or Kafka's own tool",
        needs_node: true,
        run: |ctx, st| step10(ctx, st.node()?),
    },
    Step {
        id: "11",
        title: "step 11: read_committed on an unclean stop's copies (.txnindex removed, stale) equals Kafka's after its recovery",
        needs_node: false,
        run: |ctx, _| step11(ctx),
    },
    Step {
        id: "12",
        title: "step 12: leader epochs, seglog recover and Kafka's own load leave the same checkpoint",
        needs_node: false,
        run: |ctx, _| step12(ctx),
    },
    Step {
        id: "13",
        title: "step 13: compression.type on a leader append, seglog's against Kafka's UnifiedLog",
        needs_node: false,
        run: |ctx, _| step13(ctx),
    },
    Step {
        id: "14",
        title: "step 14: topic ids and high watermarks, a broker of its own as the judge",
        needs_node: false,
        run: |ctx, _| step14(ctx),
    },
];

pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
    let mut picked = picked_steps(args)?;
    if let Some(missing) = missing_tool() {
        println!(
            "kafka-interop: skipped: {missing} is not installed (the check needs java 17+ and mvn)"
        );
        return Ok(());
    }
    if picked.contains(&"10") && !has_kcat() {
        println!(
            "kafka-interop: step 10 skipped: kcat is not installed (Debian's package kcat; .ci/run installs it)"
        );
        picked.retain(|s| *s != "10");
    }
    // Step 10 reads the topics steps 3a and 6 wrote on the shared node.
    for (step, under) in [("2", "1"), ("3b", "4"), ("10", "3a"), ("10", "6")] {
        if picked.contains(&step) && !picked.contains(&under) {
            picked.push(under);
        }
    }
    let started = Instant::now();
    let ctx = Ctx::new(root)?;
    let mut timings = Vec::new();
    let mut timed = |name: &str, f: &mut dyn FnMut() -> Result<()>| -> Result<()> {
        let t = Instant::now();
        eprintln!("kafka-interop: {name}");
        f().with_context(|| format!("kafka-interop: {name}"))?;
        let took = t.elapsed();
        eprintln!("kafka-interop: {name}: ok in {took:.1?}");
        timings.push((name.to_owned(), took));
        Ok(())
    };
    timed("build (seglog, the Kafka harness)", &mut || ctx.build())?;
    let mut state = State {
        node: None,
        running: None,
        built: ctx.work.join("seglog-written"),
        expected: ctx.work.join("seglog-written.jsonl"),
    };
    for step in STEPS.iter().filter(|s| picked.contains(&s.id)) {
        if step.id != "3b" {
            // Step 4's broker is step 3b's alone: stopped before any other step uses the node.
            state.running = None;
        }
        if step.needs_node && state.node.is_none() {
            timed("format a KRaft node (kafka-storage format)", &mut || {
                state.node = Some(KafkaNode::format(&ctx)?);
                Ok(())
            })?;
        }
        timed(step.title, &mut || (step.run)(&ctx, &mut state))?;
    }
    for (name, took) in &timings {
        println!("kafka-interop: {took:>8.1?}  {name}");
    }
    println!(
        "kafka-interop: all steps passed in {:.1?}",
        started.elapsed()
    );
    Ok(())
}

/// `--step 6,7` (or `--step 6 --step 7`): the steps to run, every one without the flag.
fn picked_steps(args: &[String]) -> Result<Vec<&'static str>> {
    let mut picked = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let list = match arg.strip_prefix("--step=") {
            Some(list) => list,
            None if arg == "--step" => args.next().context("--step needs a list such as 6,7")?,
            None => bail!("kafka-interop: unknown argument `{arg}` (only --step LIST)"),
        };
        for name in list.split(',').map(str::trim) {
            let step = STEPS.iter().find(|s| s.id == name).with_context(|| {
                let ids: Vec<&str> = STEPS.iter().map(|s| s.id).collect();
                format!(
                    "kafka-interop: no step `{name}` (steps: {})",
                    ids.join(", ")
                )
            })?;
            picked.push(step.id);
        }
    }
    if picked.is_empty() {
        picked.extend(STEPS.iter().map(|s| s.id));
    }
    Ok(picked)
}

/// kcat from the system: step 10's judge (the CI script installs Debian's package).
fn has_kcat() -> bool {
    Command::new("kcat")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn missing_tool() -> Option<&'static str> {
    for (tool, arg) in [("java", "-version"), ("mvn", "-v")] {
        let ok = Command::new(tool)
            .arg(arg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Some(tool);
        }
    }
    None
}

//! `seglog produce`: records from stdin or a file, one per line or per `--delimiter`, parsed as
//! Kafka's console producer parses lines (`line`), appended as a leader would; with a producer
//! id, as an idempotent or transactional Kafka producer writes them (`producer`).

mod args;
mod input;
mod line;
mod producer;

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use seglog_log::LogConfig;
use seglog_log::record::{BatchBuilder, Compression, Header, NewRecord};

use crate::common::{Outcome, open_partition};
pub(crate) use args::{EXAMPLES, ProduceArgs, run};
use line::{LineFormat, ParsedRecord};
use producer::{Producer, Sequencer, describe};

/// `produce`'s options.
pub(crate) struct ProduceOptions {
    pub(crate) compression: Compression,
    pub(crate) batch_records: usize,
    /// Where one record ends in the input; with `crlf`, a `\r` before it goes too.
    pub(crate) delimiter: Vec<u8>,
    pub(crate) crlf: bool,
    pub(crate) format: LineFormat,
    /// `--timestamp`: every record's CreateTime; else a line's own, else the append time.
    pub(crate) timestamp: Option<i64>,
    /// `--header`: added to every record, before a line's own.
    pub(crate) headers: line::OwnedHeaders,
    pub(crate) create: Option<LogConfig>,
    /// `--topic-id`: assigned before anything is appended.
    pub(crate) topic_id: Option<seglog_log::TopicId>,
    pub(crate) sync: bool,
    pub(crate) print_acks: bool,
    pub(crate) producer: Option<Producer>,
}

pub(crate) fn produce(
    dir: &Path,
    o: &ProduceOptions,
    input: std::io::BufReader<impl std::io::Read + Send + 'static>,
    out: &mut impl Write,
) -> Result<Outcome> {
    let opened = open_partition(dir, o.create.clone())?;
    let log = &opened.log;
    if let Some(id) = o.topic_id
        && let Err(e) = log.assign_topic_id(id)
    {
        opened.dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
        return Err(anyhow::Error::new(e).context("--topic-id: nothing was appended"));
    }
    // Into a broker's partition: stamped with the epoch its leader-epoch-checkpoint says leads,
    // as that broker's leader would stamp them (none: the producer's -1, as before).
    if let Some(epoch) = log.latest_epoch() {
        log.set_leader_epoch(epoch)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let mut sequencer = Sequencer::new(log, o.producer);
    let written = append_lines(dir, o, log, &mut sequencer, input, out);
    // A transactional run ends with its marker; one that failed halfway aborts what it wrote,
    // as a Kafka producer does, so that no open transaction holds read_committed readers back.
    let ended = sequencer.end(log, written.is_err());
    let marker = match ended {
        None => None,
        Some((marker, Ok(info))) => {
            let synced = if o.sync {
                log.sync_up_to(info.last_offset + 1)
            } else {
                Ok(())
            };
            if o.print_acks && synced.is_ok() {
                writeln!(out, "marker {} {}", info.last_offset, marker.kind())?;
                out.flush()?;
            }
            synced.map_err(|e| {
                anyhow::anyhow!(
                    "{e}; the {} marker at offset {} was appended but is not known to be durable",
                    marker.kind(),
                    info.last_offset
                )
            })?;
            Some((marker, info.last_offset))
        }
        Some((marker, Err(e))) => {
            let why = describe(&e);
            return Err(match written {
                Err(first) => first.context(format!(
                    "the run's transaction stays open: its ABORT marker was refused: {why}"
                )),
                Ok(()) => anyhow::anyhow!(
                    "{why}; no {} marker was appended: the records of this run stay in an open transaction",
                    marker.kind()
                ),
            });
        }
    };
    if let Err(e) = written {
        return Err(match marker {
            Some((_, offset)) => e.context(format!(
                "the run's transaction was aborted (ABORT marker at offset {offset})"
            )),
            None => e,
        });
    }
    // A partition of one replica, its own in-sync set: what it appended is committed, and a
    // high watermark kept for it (a broker's replication-offset-checkpoint) moves to its log
    // end, the marker included, and is written on close. A partition without one keeps none,
    // and is read to its log end.
    if log.high_watermark_is_set() {
        log.set_high_watermark(log.log_end_offset());
    }
    opened.dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    let who = match (o.producer, sequencer.sequences()) {
        (Some(p), Some((first, last))) => format!(
            " as producer {} epoch {}, sequences {first}..={last}",
            p.id, p.epoch
        ),
        _ => String::new(),
    };
    let end = match marker {
        Some((m, offset)) => format!(
            ", then its {} marker at offset {offset} (epoch {})",
            m.kind(),
            m.epoch
        ),
        None if o.producer.is_some_and(|p| p.txn.is_some()) => {
            "; no transaction, so no marker".to_owned()
        }
        None => String::new(),
    };
    eprintln!(
        "appended {} records to {}{who}{end}",
        sequencer.appended_records(),
        dir.display()
    );
    Ok(Outcome::Clean)
}

/// Appends stdin's lines in batches until its end.
fn append_lines(
    dir: &Path,
    o: &ProduceOptions,
    log: &seglog_log::PartitionLog<seglog_log::RealFs>,
    sequencer: &mut Sequencer,
    input: std::io::BufReader<impl std::io::Read + Send + 'static>,
    out: &mut impl Write,
) -> Result<()> {
    let mut builder = BatchBuilder::new();
    let mut pending: Vec<ParsedRecord> = Vec::new();
    let mut batch = Vec::new();
    let mut flush = |pending: &mut Vec<ParsedRecord>, out: &mut dyn Write| -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let now = seglog_log::Time::now_ms(&seglog_log::SystemClock);
        let headers: Vec<Vec<Header<'_>>> = pending
            .iter()
            .map(|r| {
                o.headers
                    .iter()
                    .chain(&r.headers)
                    .map(|(key, value)| Header {
                        key,
                        value: value.as_deref(),
                    })
                    .collect()
            })
            .collect();
        let records = pending
            .iter()
            .zip(&headers)
            .zip(0_i32..)
            .map(|((r, h), i)| {
                let timestamp = o.timestamp.or(r.timestamp).unwrap_or(now);
                NewRecord::new(i, timestamp, r.key.as_deref(), r.value.as_deref()).with_headers(h)
            });
        batch.clear();
        // Refused here, before anything of this batch is appended or acknowledged: a batch
        // no reader could read back (see `DEFAULT_MAX_DECOMPRESSED_BYTES`).
        builder
            .build(&sequencer.options(o.compression), records, &mut batch)
            .with_context(|| {
                format!(
                    "refused to append {} records to {}; nothing of them was appended or acknowledged",
                    pending.len(),
                    dir.display()
                )
            })?;
        let info = if o.sync {
            log.append_durable(&mut batch)
        } else {
            log.append_as_leader(&mut batch)
        }
        .map_err(|e| {
            // A producer-state refusal comes before anything is written.
            let what = if matches!(e, seglog_log::Error::Producer(_)) {
                "appended"
            } else {
                "acknowledged"
            };
            anyhow::anyhow!(
                "{}; nothing of these {} records was {what}",
                describe(&e),
                pending.len()
            )
        })?;
        sequencer.appended(pending.len());
        pending.clear();
        // Committed once appended (see `produce`).
        if log.high_watermark_is_set() {
            log.set_high_watermark(info.last_offset + 1);
        }
        if o.print_acks {
            writeln!(out, "acked {}", info.last_offset)?;
            out.flush()?;
        }
        Ok(())
    };
    let rx = input::spawn(input, o.delimiter.clone(), o.crlf);
    let mut line_number = 0_u64;
    let mut waiting = rx.recv().ok();
    while let Some(run) = waiting {
        for line in run.context("reading the input")? {
            line_number += 1;
            match o.format.parse(&line, line_number) {
                Ok(record) => pending.push(record),
                Err(e) => {
                    // What came before the bad record goes, as Kafka's console producer sends it.
                    flush(&mut pending, out)?;
                    bail!(
                        "{e:#}; the records before it were appended, it and the rest of the input were not"
                    );
                }
            }
            if pending.len() >= o.batch_records {
                flush(&mut pending, out)?;
            }
        }
        waiting = match rx.try_recv() {
            Ok(run) => Some(run),
            Err(std::sync::mpsc::TryRecvError::Empty) => {
                // No more input is waiting: what is pending goes now.
                flush(&mut pending, out)?;
                rx.recv().ok()
            }
            Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
        };
    }
    flush(&mut pending, out)
}

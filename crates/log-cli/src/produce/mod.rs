//! `seglog produce`: records from stdin, one per line, appended as a leader would; with a
//! producer id, as an idempotent or transactional Kafka producer writes them (`producer`).

mod args;
mod producer;

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::{Context, Result};
use seglog_log::LogConfig;
use seglog_log::record::{BatchBuilder, Compression, NewRecord};

use crate::common::{Outcome, open_partition};
pub(crate) use args::{EXAMPLES, ProduceArgs, run};
use producer::{Producer, Sequencer, describe};

/// `produce`'s options.
pub(crate) struct ProduceOptions<'a> {
    pub(crate) compression: Compression,
    pub(crate) batch_records: usize,
    pub(crate) key_separator: Option<&'a str>,
    pub(crate) create: Option<LogConfig>,
    pub(crate) sync: bool,
    pub(crate) print_acks: bool,
    pub(crate) producer: Option<Producer>,
}

pub(crate) fn produce(
    dir: &Path,
    o: &ProduceOptions<'_>,
    input: std::io::BufReader<impl std::io::Read + Send + 'static>,
    out: &mut impl Write,
) -> Result<Outcome> {
    let opened = open_partition(dir, o.create.clone())?;
    let log = &opened.log;
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
    o: &ProduceOptions<'_>,
    log: &seglog_log::PartitionLog<seglog_log::RealFs>,
    sequencer: &mut Sequencer,
    input: std::io::BufReader<impl std::io::Read + Send + 'static>,
    out: &mut impl Write,
) -> Result<()> {
    let mut builder = BatchBuilder::new();
    let mut pending: Vec<(Option<Vec<u8>>, Vec<u8>)> = Vec::new();
    let mut batch = Vec::new();
    let mut flush = |pending: &mut Vec<(Option<Vec<u8>>, Vec<u8>)>,
                     out: &mut dyn Write|
     -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let now = seglog_log::Time::now_ms(&seglog_log::SystemClock);
        let records = pending
            .iter()
            .zip(0_i32..)
            .map(|((k, v), i)| NewRecord::new(i, now, k.as_deref(), Some(&v[..])));
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
        if o.print_acks {
            writeln!(out, "acked {}", info.last_offset)?;
            out.flush()?;
        }
        Ok(())
    };
    // Lines are read on their own thread, in runs of the lines already buffered, so that a
    // partial batch goes as soon as no more input is waiting. Asking the pipe itself
    // (`fill_buf`) blocks until the next line arrives, which would acknowledge an interactive
    // line only when the one after it came. The reader is not joined: when an append
    // fails, the command ends without waiting for input that may never come.
    let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<Vec<Vec<u8>>>>(64);
    std::thread::spawn(move || {
        let mut input = input;
        loop {
            let mut lines = Vec::new();
            loop {
                let mut line = Vec::new();
                match input.read_until(b'\n', &mut line) {
                    Ok(0) => break,
                    Ok(_) => lines.push(line),
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
                // Go on only while a whole line is already buffered: the next read won't block.
                if !input.buffer().contains(&b'\n') {
                    break;
                }
            }
            if lines.is_empty() || tx.send(Ok(lines)).is_err() {
                return;
            }
        }
    });
    let mut waiting = rx.recv().ok();
    while let Some(run) = waiting {
        for mut line in run.context("reading stdin")? {
            if line.last() == Some(&b'\n') {
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
            }
            pending.push(split(&line, o.key_separator));
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

/// A line as a record: split at the first key separator into key and value, or all value.
fn split(line: &[u8], key_separator: Option<&str>) -> (Option<Vec<u8>>, Vec<u8>) {
    match key_separator.map(str::as_bytes) {
        Some(sep) if !sep.is_empty() => match line.windows(sep.len()).position(|w| w == sep) {
            Some(at) => {
                let (key, rest) = line.split_at(at);
                (
                    Some(key.to_vec()),
                    rest.get(sep.len()..).unwrap_or_default().to_vec(),
                )
            }
            None => (None, line.to_vec()),
        },
        _ => (None, line.to_vec()),
    }
}

//! `seglog produce`: records from stdin, one per line, appended as a leader would.

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::{Context, Result};
use seglog_log::LogConfig;
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

use crate::cli::Outcome;
use crate::common::open_partition;

/// `produce`'s options.
pub(crate) struct ProduceOptions<'a> {
    pub(crate) compression: Compression,
    pub(crate) batch_records: usize,
    pub(crate) key_separator: Option<&'a str>,
    pub(crate) create: Option<LogConfig>,
    pub(crate) sync: bool,
    pub(crate) print_acks: bool,
}

pub(crate) fn produce(
    dir: &Path,
    o: &ProduceOptions<'_>,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<Outcome> {
    let opened = open_partition(dir, o.create.clone())?;
    let log = &opened.log;
    let mut builder = BatchBuilder::new();
    let mut pending: Vec<(Option<Vec<u8>>, Vec<u8>)> = Vec::new();
    let mut batch = Vec::new();
    let mut appended = 0_u64;
    let mut line = Vec::new();
    let mut flush =
        |pending: &mut Vec<(Option<Vec<u8>>, Vec<u8>)>, out: &mut dyn Write| -> Result<()> {
            if pending.is_empty() {
                return Ok(());
            }
            let now = seglog_log::Time::now_ms(&seglog_log::SystemClock);
            let records = pending
                .iter()
                .zip(0_i32..)
                .map(|((k, v), i)| NewRecord::new(i, now, k.as_deref(), Some(&v[..])));
            batch.clear();
            builder.build(&BatchOptions::new(0, o.compression), records, &mut batch)?;
            let info = if o.sync {
                log.append_durable(&mut batch)
            } else {
                log.append_as_leader(&mut batch)
            }
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            appended += pending.len() as u64;
            pending.clear();
            if o.print_acks {
                writeln!(out, "acked {}", info.last_offset)?;
                out.flush()?;
            }
            Ok(())
        };
    loop {
        line.clear();
        let n = input
            .read_until(b'\n', &mut line)
            .context("reading stdin")?;
        if n == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        let record = match o.key_separator.map(str::as_bytes) {
            Some(sep) if !sep.is_empty() => match line.windows(sep.len()).position(|w| w == sep) {
                Some(at) => {
                    let (key, rest) = line.split_at(at);
                    (
                        Some(key.to_vec()),
                        rest.get(sep.len()..).unwrap_or_default().to_vec(),
                    )
                }
                None => (None, line.clone()),
            },
            _ => (None, line.clone()),
        };
        pending.push(record);
        // A full batch goes at once; so does a partial one when no more input is waiting, so
        // that interactive lines are acknowledged as they come.
        if pending.len() >= o.batch_records || input.fill_buf().map_or(true, <[u8]>::is_empty) {
            flush(&mut pending, out)?;
        }
    }
    flush(&mut pending, out)?;
    opened.dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    eprintln!("appended {appended} records to {}", dir.display());
    Ok(Outcome::Clean)
}

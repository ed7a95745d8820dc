//! The batches of one `.log` decoded and formatted in parallel and written in file order: the
//! scan (framing, CRC, offset judging) runs on one thread and hands over chunks of about 1 MiB of
//! batches; one worker per core turns each chunk into its text; the caller's thread writes the
//! chunks as they are ready, in order, and gathers their reports. The first error in file order
//! stops the output exactly where a one-thread dump stops: the text before it is written, with
//! what Kafka prints of the failing record, and nothing after it.

use std::collections::BTreeMap;
use std::io::Write;
use std::num::NonZero;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};

use anyhow::{Result, anyhow};
use seglog_log::record::{self as rf, FramedBatch};

use super::batch_line::batch_line;
use super::records::{self, Gaps};
use super::{DumpOptions, Reports};

/// The batch bytes of one chunk: large enough that a chunk's text is one big write.
const CHUNK_BYTES: usize = 1 << 20;

/// One chunk of consecutive batches and, once formatted, its text. Slots are reused, so a dump
/// allocates a few of them, not one buffer per batch or per record.
#[derive(Default)]
struct Slot {
    /// The chunk's place in file order.
    seq: u64,
    /// The batches' bytes, back to back.
    bytes: Vec<u8>,
    /// Each batch's file position and size.
    batches: Vec<(u64, usize)>,
    text: Vec<u8>,
    gaps: Gaps,
    /// Where the last batch formatted whole ends in the file.
    valid_end: Option<u64>,
    /// The error that stopped the chunk after `text`.
    error: Option<anyhow::Error>,
}

/// How the batches of one file are printed.
pub(super) struct Format<'a> {
    pub(super) file: &'a Path,
    pub(super) options: &'a DumpOptions,
    /// Whether each record is printed too (`--deep-iteration` or `--print-data-log`).
    pub(super) deep: bool,
    /// The file's absolute path, as the reports name it.
    pub(super) abs: &'a str,
}

impl Format<'_> {
    fn chunk(&self, slot: &mut Slot, scratch: &mut Vec<u8>) {
        slot.text.clear();
        slot.gaps.clear();
        slot.valid_end = None;
        slot.error = None;
        let mut at = 0_usize;
        for &(position, size) in &slot.batches {
            let bytes = slot.bytes.get(at..at + size).unwrap_or_default();
            at += size;
            if let Err(e) = self.batch(position, bytes, &mut slot.gaps, scratch, &mut slot.text) {
                slot.error = Some(e);
                return;
            }
            slot.valid_end = Some(position + size as u64);
        }
    }

    /// Kafka's lines for the batch `bytes` at `position`.
    fn batch(
        &self,
        position: u64,
        bytes: &[u8],
        gaps: &mut Gaps,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let file = self.file.display();
        let framed = match rf::batches(bytes).next() {
            Some(Ok(framed)) => framed,
            Some(Err(e)) => bail_decode(self.file, position, &e)?,
            None => bail_decode(self.file, position, &"no whole batch")?,
        };
        let batch = match framed.decode() {
            Ok(b) => b,
            Err(e) => bail_decode(self.file, position, &e)?,
        };
        out.extend_from_slice(batch_line(&batch, position).as_bytes());
        out.push(b'\n');
        if self.deep {
            records::print_records(&batch, self.options, gaps, scratch, out).map_err(|e| {
                anyhow!("{file}: cannot read the records of the batch at byte {position}: {e:#}")
            })?;
        }
        Ok(())
    }
}

fn bail_decode<T>(file: &Path, position: u64, e: &dyn std::fmt::Display) -> Result<T> {
    Err(anyhow!(
        "{}: cannot decode the batch at byte {position}: {e}",
        file.display()
    ))
}

/// What [`print`] hands the scan: each batch, in file order.
pub(super) type Each<'s> = dyn FnMut(u64, FramedBatch<'_>) -> ControlFlow<()> + 's;

/// Prints the batches `scan` walks (it calls its argument with each batch in file order) to
/// `out` as `format` says, and returns the scan's own result and where the last batch printed
/// whole ends. An error is the first one in file order: a batch that does not decode or a write
/// that fails; the text before it has been written.
pub(super) fn print<E: Send>(
    format: &Format<'_>,
    scan: impl FnOnce(&mut Each<'_>) -> E + Send,
    out: &mut impl Write,
    reports: &mut Reports,
) -> Result<(E, u64)> {
    let workers = std::thread::available_parallelism().map_or(1, NonZero::get);
    let (free_tx, free_rx) = mpsc::channel::<Slot>();
    for _ in 0..2 * workers + 2 {
        let _ = free_tx.send(Slot::default());
    }
    let (work_tx, work_rx) = mpsc::channel::<Slot>();
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<Slot>();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let stop = &stop;
        let scanner = s.spawn(move || {
            let mut seq = 0;
            let mut slot = free_rx.recv().ok();
            let result = scan(&mut |position, framed| {
                if stop.load(Ordering::Relaxed) {
                    return ControlFlow::Break(());
                }
                let Some(current) = slot.as_mut() else {
                    return ControlFlow::Break(());
                };
                current.bytes.extend_from_slice(framed.bytes());
                current.batches.push((position, framed.bytes().len()));
                if current.bytes.len() >= CHUNK_BYTES {
                    if let Some(mut full) = slot.take() {
                        full.seq = seq;
                        seq += 1;
                        if work_tx.send(full).is_err() {
                            return ControlFlow::Break(());
                        }
                    }
                    // None once the writer has stopped.
                    slot = free_rx.recv().ok();
                    if slot.is_none() {
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            });
            if let Some(mut last) = slot.filter(|s| !s.batches.is_empty()) {
                last.seq = seq;
                let _ = work_tx.send(last);
            }
            result
        });
        for _ in 0..workers {
            let (done_tx, work_rx) = (done_tx.clone(), &work_rx);
            s.spawn(move || {
                let mut scratch = Vec::new();
                loop {
                    let next = match work_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => break,
                    };
                    let Ok(mut slot) = next else { break };
                    if !stop.load(Ordering::Relaxed) {
                        format.chunk(&mut slot, &mut scratch);
                    }
                    if done_tx.send(slot).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        let written = write_in_order(format, done_rx, &free_tx, out, reports);
        if written.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        // The scanner waits for a free slot only while the writer holds this sender.
        drop(free_tx);
        let scanned = scanner
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        written.map(|valid| (scanned, valid))
    })
}

/// Writes each formatted chunk in file order and returns the slot for reuse; returns where the
/// last batch written whole ends. `done` is dropped on return, so the workers stop.
fn write_in_order(
    format: &Format<'_>,
    done: mpsc::Receiver<Slot>,
    free: &mpsc::Sender<Slot>,
    out: &mut impl Write,
    reports: &mut Reports,
) -> Result<u64> {
    let mut pending = BTreeMap::new();
    let mut next = 0_u64;
    let mut valid = 0_u64;
    let mut last_offset = -1_i64;
    for slot in done {
        pending.insert(slot.seq, slot);
        while let Some(mut slot) = pending.remove(&next) {
            next += 1;
            if let Err(e) = out.write_all(&slot.text) {
                let file = format.file.display();
                return Err(anyhow::Error::new(e)
                    .context(format!("writing the dump of {file} to stdout"))
                    .context(format!("{file}: read failed")));
            }
            join_gaps(reports, format.abs, &mut last_offset, &slot.gaps);
            if let Some(end) = slot.valid_end {
                valid = end;
            }
            if let Some(e) = slot.error.take() {
                return Err(e);
            }
            slot.bytes.clear();
            slot.batches.clear();
            let _ = free.send(slot);
        }
    }
    Ok(valid)
}

/// Adds one chunk's non-consecutive offsets to the file's report, joined to the chunk before it
/// (whose last record offset is `last_offset`).
fn join_gaps(reports: &mut Reports, abs: &str, last_offset: &mut i64, gaps: &Gaps) {
    let Some(first) = gaps.first else {
        return;
    };
    let joint = (first != last_offset.wrapping_add(1)).then_some((*last_offset, first));
    for (offset, next) in joint.into_iter().chain(gaps.pairs.iter().copied()) {
        reports
            .non_consecutive
            .entry(abs.to_owned())
            .or_default()
            .insert(offset, next);
    }
    *last_offset = gaps.last;
}

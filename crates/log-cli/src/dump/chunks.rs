//! The batches of one `.log` decoded and formatted in parallel and written in file order: the
//! scan (framing, CRC, offset judging) runs on one thread and hands over chunks of about 1 MiB of
//! batches; one worker per core turns each chunk into its text; the caller's thread writes the
//! chunks as they are ready, in order, and gathers their reports. The first error in file order
//! stops the output exactly where a one-thread dump stops: the text before it is written, with
//! what Kafka prints of the failing record, and nothing after it. With one core, the caller's
//! thread does it all, chunk by chunk.

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
    /// Each batch's file position, size, and whether the scan found its CRC valid.
    batches: Vec<(u64, usize, bool)>,
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

impl Slot {
    fn push(&mut self, position: u64, framed: &FramedBatch<'_>, checked: bool) {
        self.bytes.extend_from_slice(framed.bytes());
        self.batches.push((position, framed.bytes().len(), checked));
    }

    fn full(&self) -> bool {
        self.bytes.len() >= CHUNK_BYTES
    }

    fn reset(&mut self) {
        self.bytes.clear();
        self.batches.clear();
    }
}

impl Format<'_> {
    fn chunk(&self, slot: &mut Slot, scratch: &mut Vec<u8>) {
        slot.text.clear();
        slot.gaps.clear();
        slot.valid_end = None;
        slot.error = None;
        let mut at = 0_usize;
        for &(position, size, checked) in &slot.batches {
            let bytes = slot.bytes.get(at..at + size).unwrap_or_default();
            at += size;
            let text = &mut slot.text;
            if let Err(e) = self.batch(position, bytes, checked, &mut slot.gaps, scratch, text) {
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
        checked: bool,
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
        out.extend_from_slice(batch_line(&batch, position, checked).as_bytes());
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

/// What [`print`] hands the scan: each batch, in file order, and whether the scan has found its
/// CRC valid (`false`: not checked, or not valid).
pub(super) type Each<'s> = dyn FnMut(u64, FramedBatch<'_>, bool) -> ControlFlow<()> + 's;

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
    // One worker per core, whatever stdout is: measured against fewer workers and the one-thread
    // dump into a pipe, a file and /dev/null (docs/perf/dump.md). With one core, threads would
    // only add their hand-offs (about a third more CPU), so the caller's thread does it all.
    match std::thread::available_parallelism().map_or(1, NonZero::get) {
        1 => print_inline(format, scan, out, reports),
        workers => print_parallel(format, scan, out, reports, workers),
    }
}

/// [`print`] on the caller's thread alone: each chunk is formatted, then written.
fn print_inline<E>(
    format: &Format<'_>,
    scan: impl FnOnce(&mut Each<'_>) -> E,
    out: &mut impl Write,
    reports: &mut Reports,
) -> Result<(E, u64)> {
    let mut sink = Sink::new(format, out, reports);
    let mut slot = Slot::default();
    let mut scratch = Vec::new();
    let mut failed = None;
    let mut flush = |slot: &mut Slot, sink: &mut Sink<'_, '_, _>| {
        format.chunk(slot, &mut scratch);
        let written = sink.put(slot);
        slot.reset();
        written
    };
    let scanned = scan(&mut |position, framed, checked| {
        slot.push(position, &framed, checked);
        if slot.full()
            && let Err(e) = flush(&mut slot, &mut sink)
        {
            failed = Some(e);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if !slot.batches.is_empty() {
        flush(&mut slot, &mut sink)?;
    }
    Ok((scanned, sink.valid))
}

/// [`print`] with the scan on its own thread, `workers` threads formatting chunks, and the
/// caller's thread writing them in order.
fn print_parallel<E: Send>(
    format: &Format<'_>,
    scan: impl FnOnce(&mut Each<'_>) -> E + Send,
    out: &mut impl Write,
    reports: &mut Reports,
    workers: usize,
) -> Result<(E, u64)> {
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
            let result = scan(&mut |position, framed, checked| {
                if stop.load(Ordering::Relaxed) {
                    return ControlFlow::Break(());
                }
                let Some(current) = slot.as_mut() else {
                    return ControlFlow::Break(());
                };
                current.push(position, &framed, checked);
                if current.full() {
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

/// Where formatted chunks go, in file order: the output and the file's reports.
struct Sink<'a, 'r, W> {
    format: &'a Format<'a>,
    out: &'a mut W,
    reports: &'r mut Reports,
    /// Where the last batch written whole ends.
    valid: u64,
    /// The last record offset written.
    last_offset: i64,
}

impl<'a, 'r, W: Write> Sink<'a, 'r, W> {
    fn new(format: &'a Format<'a>, out: &'a mut W, reports: &'r mut Reports) -> Self {
        Self {
            format,
            out,
            reports,
            valid: 0,
            last_offset: -1,
        }
    }

    /// Writes the next chunk's text and joins its reports; the chunk's own error, after its
    /// text, or a failed write stops the output.
    fn put(&mut self, slot: &mut Slot) -> Result<()> {
        if let Err(e) = self.out.write_all(&slot.text) {
            let file = self.format.file.display();
            return Err(anyhow::Error::new(e)
                .context(format!("writing the dump of {file} to stdout"))
                .context(format!("{file}: read failed")));
        }
        join_gaps(
            self.reports,
            self.format.abs,
            &mut self.last_offset,
            &slot.gaps,
        );
        if let Some(end) = slot.valid_end {
            self.valid = end;
        }
        slot.error.take().map_or(Ok(()), Err)
    }
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
    let mut sink = Sink::new(format, out, reports);
    let mut pending = BTreeMap::new();
    let mut next = 0_u64;
    for slot in done {
        pending.insert(slot.seq, slot);
        while let Some(mut slot) = pending.remove(&next) {
            next += 1;
            sink.put(&mut slot)?;
            slot.reset();
            let _ = free.send(slot);
        }
    }
    Ok(sink.valid)
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

#[cfg(test)]
#[allow(clippy::expect_used, clippy::indexing_slicing, reason = "tests")]
mod tests {
    use clap::Parser;
    use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        dump: DumpOptions,
    }

    /// 40 batches of 16 records of 8 KiB (about 5 chunks), with an offset gap every 7 batches
    /// (some fall between chunks) and, if `damaged`, the first record of batch 30 overwritten.
    fn segment(damaged: bool) -> (Vec<u8>, Vec<(u64, usize)>) {
        let (mut bytes, mut batches) = (Vec::new(), Vec::new());
        let value = vec![b'v'; 8 << 10];
        let mut builder = BatchBuilder::new();
        for i in 0..40_i64 {
            let records = (0..16).map(|d| NewRecord::new(d, 1_000 + i, Some(b"k"), Some(&value)));
            let mut batch = Vec::new();
            let base = i * 16 + i / 7;
            builder
                .build(
                    &BatchOptions::new(base, Compression::None),
                    records,
                    &mut batch,
                )
                .expect("batch");
            if damaged && i == 30 {
                batch[61..80].fill(0xFF);
            }
            batches.push((bytes.len() as u64, batch.len()));
            bytes.extend_from_slice(&batch);
        }
        (bytes, batches)
    }

    /// What a dump of `bytes` gave: its text, the end of the last batch printed whole, its
    /// error and its non-consecutive offsets.
    type Dumped = (Vec<u8>, Option<u64>, Option<String>, Vec<(i64, i64)>);

    fn dump(bytes: &[u8], batches: &[(u64, usize)], workers: usize) -> Dumped {
        let flags = Flags::parse_from(["dump", "--print-data-log", "--files", "t.log"]);
        let format = Format {
            file: Path::new("t.log"),
            options: &flags.dump,
            deep: true,
            abs: "/t.log",
        };
        let scan = |each: &mut Each<'_>| {
            for &(position, size) in batches {
                let at = usize::try_from(position).expect("position");
                let framed = rf::batches(&bytes[at..at + size]).next();
                let framed = framed.expect("a batch").expect("framed");
                if each(position, framed, false).is_break() {
                    return;
                }
            }
        };
        let (mut out, mut reports) = (Vec::new(), Reports::default());
        let result = if workers == 0 {
            print_inline(&format, scan, &mut out, &mut reports)
        } else {
            print_parallel(&format, scan, &mut out, &mut reports, workers)
        };
        let gaps = reports
            .non_consecutive
            .get("/t.log")
            .map(|g| g.iter().map(|(&a, &b)| (a, b)).collect())
            .unwrap_or_default();
        match result {
            Ok(((), valid)) => (out, Some(valid), None, gaps),
            Err(e) => (out, None, Some(format!("{e:#}")), gaps),
        }
    }

    #[test]
    fn the_parallel_dump_prints_what_the_one_thread_dump_prints() {
        for damaged in [false, true] {
            let (bytes, batches) = segment(damaged);
            let inline = dump(&bytes, &batches, 0);
            let records = inline
                .0
                .split(|&b| b == b'\n')
                .filter(|l| l.starts_with(b"| offset: "));
            let gaps = 5;
            if damaged {
                assert_eq!(records.count(), 30 * 16, "the records before batch 30");
                let error = inline.2.as_deref().expect("an error");
                let at = batches[30].0;
                assert!(
                    error.contains(&format!("the batch at byte {at}")),
                    "{error}"
                );
                assert_eq!(
                    inline.3.len(),
                    4,
                    "the gaps before batch 30: {:?}",
                    inline.3
                );
            } else {
                assert_eq!(records.count(), 40 * 16);
                assert_eq!(inline.1, Some(bytes.len() as u64));
                assert_eq!(inline.3.len(), gaps, "{:?}", inline.3);
            }
            for workers in [1, 2, 3] {
                let parallel = dump(&bytes, &batches, workers);
                assert!(parallel == inline, "{workers} workers, damaged: {damaged}");
            }
        }
    }
}

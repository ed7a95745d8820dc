//! `cargo xtask kills [--kills N] [--seed S] [--release]`: real process kills (reliability issue,
//! part 2).
//!
//! Two writers run in child processes and are killed with SIGKILL at random moments:
//! `seglog produce --sync --print-acks` fed lines on stdin, and the `seglog-durable-writer` binary
//! of seglog-harness (threads calling `append_durable`). A writer prints a line only after the
//! fsync of the batch returned, so every printed ack is a promise.
//!
//! After a kill, usually: `seglog check` (it may report the torn tail the kill left), a reopen
//! through the library (`seglog-durable-writer --batches 0`: open, recover, close cleanly), `seglog
//! recover`, `seglog check` (it must now pass), and `seglog consume --json`, whose records must hold
//! every acked offset with its value, nothing that was never written, and everything an earlier
//! verification saw. Sometimes the next writer starts at once instead, so that kills also land
//! while a writer is opening (and recovering) a log that a kill left dirty.
//!
//! Then `seglog recover` itself is killed at random moments and run again, and must leave what
//! one uninterrupted recover leaves (`recover.rs`; `--recover-kills N`, default 50).
//!
//! Every run prints its seed; a failure prints it again with the command to reproduce it, and
//! keeps the log directories under `target/kills/`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

mod recover;

const CODECS: &[&str] = &["none", "gzip", "snappy", "lz4", "zstd"];
/// Kills on one log directory before the harness starts a fresh one (keeps every verification,
/// which reads the whole log, cheap).
const KILLS_PER_EPOCH: u64 = 20;

/// splitmix64: small, seedable, good enough to pick moments and options.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Options {
    kills: u64,
    recover_kills: u64,
    seed: u64,
    release: bool,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options {
        kills: 200,
        recover_kills: 50,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| u64::from(d.subsec_nanos()) ^ d.as_secs()),
        release: false,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--kills" => options.kills = it.next().context("--kills N")?.parse()?,
            "--recover-kills" => {
                options.recover_kills = it.next().context("--recover-kills N")?.parse()?;
            }
            "--seed" => options.seed = it.next().context("--seed S")?.parse()?,
            "--release" => options.release = true,
            other => bail!(
                "kills: unknown argument {other} (use --kills N, --recover-kills N, --seed S, --release)"
            ),
        }
    }
    Ok(options)
}

/// The binaries under test.
struct Bins {
    seglog: PathBuf,
    writer: PathBuf,
}

fn build(root: &Path, release: bool) -> Result<Bins> {
    let mut args = vec![
        "build",
        "--locked",
        "-p",
        "seglog-cli",
        "--bin",
        "seglog",
        "-p",
        "seglog-harness",
        "--bin",
        "seglog-durable-writer",
    ];
    if release {
        args.push("--release");
    }
    crate::cargo(root, &args, &[])?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let profile = target.join(if release { "release" } else { "debug" });
    Ok(Bins {
        seglog: profile.join("seglog"),
        writer: profile.join("seglog-durable-writer"),
    })
}

/// What the runs found, for the summary line and docs/reliability.md.
#[derive(Default)]
struct Tally {
    kills: u64,
    kills_cli: u64,
    kills_embedded: u64,
    kills_before_first_ack: u64,
    kills_chained: u64,
    dirty_after_kill: u64,
    acked_offsets_verified: u64,
    unacked_records_kept: u64,
    verifications: u64,
}

/// One log directory and what earlier verifications established about its partition.
struct Epoch {
    log_dir: PathBuf,
    partition: PathBuf,
    topic: &'static str,
    cli: bool,
    codec: &'static str,
    /// Every record seen by the last verification, by offset: it must stay.
    known: Vec<Vec<u8>>,
    /// Acks not yet verified.
    acks: Vec<Ack>,
}

#[derive(Clone, Debug)]
struct Ack {
    /// The embedded writer names the batch's first offset; `produce` only the last.
    first: Option<i64>,
    last: i64,
    /// The run (`k<kill>`) for `produce`, the batch tag for the embedded writer.
    tag: String,
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let root = crate::project_root();
    let reproduce = format!(
        "cargo xtask kills --kills {} --recover-kills {} --seed {}",
        options.kills, options.recover_kills, options.seed
    );
    eprintln!(
        "kills: seed {} ({} writer kills, {} recover kills); reproduce with `{reproduce}`",
        options.seed, options.kills, options.recover_kills
    );
    let bins = build(&root, options.release)?;
    let work = root.join("target").join("kills");
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("removing {}", work.display()))?;
    }
    let started = Instant::now();
    let mut tally = Tally::default();
    let outcome = kill_loop(&bins, &work, &options, &mut tally).and_then(|()| {
        // Its own sequence, so that the writer kills of a seed stay what they were.
        let mut rng = Rng(options.seed ^ 0x5EED_0F4E_C07E_5500);
        let found = recover::run(
            &bins,
            &work.join("recover"),
            options.recover_kills,
            &mut rng,
        )
        .context("the recover kills")?;
        eprintln!("kills: {}", found.summary());
        Ok(())
    });
    match outcome {
        Ok(()) => {
            std::fs::remove_dir_all(&work).ok();
            eprintln!(
                "kills: {} kills ({} produce, {} embedded; {} before the first ack, {} while a \
                 writer reopened a killed log), {} left a problem for check before recovery; {} \
                 verifications, {} acked offsets verified, {} unacked records survived; all \
                 acked records present; {:.1?}",
                tally.kills,
                tally.kills_cli,
                tally.kills_embedded,
                tally.kills_before_first_ack,
                tally.kills_chained,
                tally.dirty_after_kill,
                tally.verifications,
                tally.acked_offsets_verified,
                tally.unacked_records_kept,
                started.elapsed()
            );
            Ok(())
        }
        Err(e) => Err(e.context(format!(
            "kills failed after {} writer kills; reproduce with `{reproduce}`; the logs are under {}",
            tally.kills,
            work.display()
        ))),
    }
}

fn kill_loop(bins: &Bins, work: &Path, options: &Options, tally: &mut Tally) -> Result<()> {
    let mut rng = Rng(options.seed);
    let mut epoch: Option<Epoch> = None;
    for kill in 0..options.kills {
        if kill % KILLS_PER_EPOCH == 0 {
            if let Some(e) = epoch.as_mut() {
                verify(bins, e, tally)?;
            }
            let cli = (kill / KILLS_PER_EPOCH).is_multiple_of(2);
            let log_dir = work.join(format!("epoch-{}", kill / KILLS_PER_EPOCH));
            std::fs::create_dir_all(&log_dir)?;
            let topic = if cli { "cli" } else { "embedded" };
            epoch = Some(Epoch {
                partition: log_dir.join(format!("{topic}-0")),
                log_dir,
                topic,
                cli,
                // Each writer meets every codec once in ten epochs.
                codec: CODECS
                    .get(usize::try_from(kill / KILLS_PER_EPOCH / 2).unwrap_or(0) % CODECS.len())
                    .copied()
                    .unwrap_or("none"),
                known: Vec::new(),
                acks: Vec::new(),
            });
        }
        let e = epoch.as_mut().context("no epoch")?;
        let acks = run_and_kill(bins, e, kill, &mut rng)
            .with_context(|| format!("kill {kill} ({} writer)", e.topic))?;
        tally.kills += 1;
        if e.cli {
            tally.kills_cli += 1;
        } else {
            tally.kills_embedded += 1;
        }
        if acks.is_empty() {
            tally.kills_before_first_ack += 1;
        }
        e.acks.extend(acks);
        // One kill in four is followed at once by the next writer, which reopens the dirty log.
        let next_is_last_of_epoch = (kill + 1) % KILLS_PER_EPOCH == 0;
        if rng.below(4) == 0 && !next_is_last_of_epoch && kill + 1 < options.kills {
            tally.kills_chained += 1;
            continue;
        }
        // A writer killed while it was still creating the partition may leave no directory.
        if e.partition.exists() {
            let pre = seglog(bins, &["check", path_str(&e.partition)?])?;
            match pre.status.code() {
                Some(0) => {}
                Some(1) => tally.dirty_after_kill += 1,
                _ => bail!(
                    "kill {kill}: check before recovery failed: {}",
                    describe(&pre)
                ),
            }
        }
        verify(bins, e, tally).with_context(|| format!("verifying after kill {kill}"))?;
    }
    if let Some(e) = epoch.as_mut() {
        verify(bins, e, tally)?;
    }
    Ok(())
}

fn path_str(path: &Path) -> Result<&str> {
    path.to_str().context("non-UTF-8 path")
}

fn seglog(bins: &Bins, args: &[&str]) -> Result<Output> {
    Command::new(&bins.seglog)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running seglog {args:?}"))
}

fn describe(out: &Output) -> String {
    format!(
        "{}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Starts a writer, kills it after a random delay, and returns the acks it printed.
fn run_and_kill(bins: &Bins, e: &Epoch, kill: u64, rng: &mut Rng) -> Result<Vec<Ack>> {
    let batch_records = 1 + rng.below(20);
    let segment_bytes = 2048 + rng.below(30_000);
    let run = format!("k{kill}");
    let child = if e.cli {
        Command::new(&bins.seglog)
            .args([
                "produce",
                path_str(&e.partition)?,
                "--create",
                "--sync",
                "--print-acks",
            ])
            .args(["--compression", e.codec])
            .args(["--batch-records", &batch_records.to_string()])
            .args([
                "--config",
                &format!("internal.segment.bytes={segment_bytes}"),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?
    } else {
        Command::new(&bins.writer)
            .arg(&e.log_dir)
            .args(["--topic", e.topic, "--run", &run, "--codec", e.codec])
            .args(["--threads", &(1 + rng.below(3)).to_string()])
            .args(["--batch-records", &batch_records.to_string()])
            .args(["--segment-bytes", &segment_bytes.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?
    };
    // Killed on every path out of here, an early error included.
    let mut child = KillOnDrop(child);
    let feeder = child.0.stdin.take().map(|mut stdin| {
        let run = run.clone();
        std::thread::spawn(move || {
            // Lines until the child dies (the write then fails) or a bound is reached.
            for i in 0..2_000_000_u64 {
                if writeln!(stdin, "{run}-{i}").is_err() {
                    break;
                }
            }
        })
    });
    let acks = Arc::new(Mutex::new(Vec::new()));
    let stdout = child.0.stdout.take().context("no stdout")?;
    let reader = {
        let acks = Arc::clone(&acks);
        let cli = e.cli;
        let run = run.clone();
        std::thread::spawn(move || -> Result<()> {
            let mut stdout = BufReader::new(stdout);
            let mut line = String::new();
            loop {
                line.clear();
                if stdout.read_line(&mut line)? == 0 || !line.ends_with('\n') {
                    // A line cut by the kill promised nothing yet.
                    return Ok(());
                }
                let ack = parse_ack(line.trim_end(), cli, &run)?;
                acks.lock()
                    .map_err(|_| anyhow::anyhow!("poisoned"))?
                    .push(ack);
            }
        })
    };
    // Moments from "still opening the log" to "hundreds of batches in".
    let delay_ms = match rng.below(4) {
        0 => rng.below(40),
        1 => 40 + rng.below(100),
        _ => 100 + rng.below(200),
    };
    std::thread::sleep(Duration::from_millis(delay_ms));
    if let Some(status) = child.0.try_wait()? {
        let mut stderr = String::new();
        if let Some(mut e) = child.0.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut stderr)?;
        }
        bail!("the writer exited by itself before the kill: {status}\n{stderr}");
    }
    kill_now(&mut child.0)?;
    reader
        .join()
        .map_err(|_| anyhow::anyhow!("ack reader panicked"))??;
    if let Some(f) = feeder {
        f.join().map_err(|_| anyhow::anyhow!("feeder panicked"))?;
    }
    let acks = acks
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .clone();
    Ok(acks)
}

/// A child process that is killed (SIGKILL) and reaped when dropped.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn kill_now(child: &mut Child) -> Result<()> {
    // `Child::kill` sends SIGKILL on Unix.
    child.kill().context("SIGKILL")?;
    let status = child.wait()?;
    ensure!(
        status.code().is_none(),
        "the writer was not killed by the signal: {status}"
    );
    Ok(())
}

fn parse_ack(line: &str, cli: bool, run: &str) -> Result<Ack> {
    let mut words = line.split(' ');
    ensure!(
        words.next() == Some("acked"),
        "unexpected writer output {line:?}"
    );
    if cli {
        let last = words.next().context("acked without offset")?.parse()?;
        Ok(Ack {
            first: None,
            last,
            tag: run.to_owned(),
        })
    } else {
        let first = words.next().context("acked without offset")?.parse()?;
        let last = words.next().context("acked without offset")?.parse()?;
        let tag = words.next().context("acked without tag")?.to_owned();
        Ok(Ack {
            first: Some(first),
            last,
            tag,
        })
    }
}

/// Reopen, recover, check, then read every record back and hold it against the acks.
fn verify(bins: &Bins, e: &mut Epoch, tally: &mut Tally) -> Result<()> {
    let partition = path_str(&e.partition)?.to_owned();
    // Reopen through the library: recovery runs on open; the close is clean.
    let out = Command::new(&bins.writer)
        .arg(&e.log_dir)
        .args(["--topic", e.topic, "--batches", "0"])
        .output()?;
    ensure!(out.status.success(), "reopen failed: {}", describe(&out));
    let out = seglog(bins, &["recover", &partition])?;
    ensure!(out.status.success(), "recover failed: {}", describe(&out));
    let out = seglog(bins, &["check", &partition])?;
    ensure!(
        out.status.success(),
        "check after recover found problems: {}",
        describe(&out)
    );
    let out = seglog(
        bins,
        &[
            "consume",
            &partition,
            "--from-beginning",
            "--json",
            "--json-bytes",
            "base64",
        ],
    )?;
    ensure!(out.status.success(), "consume failed: {}", describe(&out));
    let mut records: Vec<Vec<u8>> = Vec::new();
    for line in String::from_utf8(out.stdout)?.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let offset = v
            .get("offset")
            .and_then(serde_json::Value::as_i64)
            .context("offset")?;
        ensure!(
            offset == to_i64(records.len()),
            "offset {offset} where {} was expected: a gap or a reordering",
            records.len()
        );
        records.push(base64(
            v.get("payload")
                .and_then(serde_json::Value::as_str)
                .context("payload")?,
        )?);
    }
    ensure!(
        records.len() >= e.known.len(),
        "the log lost records that an earlier verification saw: {} now, {} before",
        records.len(),
        e.known.len()
    );
    for (offset, (before, now)) in e.known.iter().zip(&records).enumerate() {
        ensure!(
            before == now,
            "offset {offset} changed since the last verification"
        );
    }
    let acked = if e.cli {
        check_cli(&records, e.known.len(), &e.acks)?
    } else {
        check_embedded(&records, e.known.len(), &e.acks)?
    };
    tally.acked_offsets_verified += acked;
    tally.unacked_records_kept += (records.len() - e.known.len()) as u64 - acked;
    tally.verifications += 1;
    e.known = records;
    e.acks.clear();
    Ok(())
}

/// `produce` runs: the line `k<kill>-<i>` is the i-th line a run sent, so within one run the
/// offsets minus `i` are constant, the `i` run from 0 without a gap, and every acked offset holds
/// its run's line.
fn check_cli(records: &[Vec<u8>], from: usize, acks: &[Ack]) -> Result<u64> {
    // run -> (offset of line 0, last offset seen)
    let mut runs: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let mut previous_run: Option<String> = None;
    for (offset, value) in records.iter().enumerate().skip(from) {
        let offset = to_i64(offset);
        let text = std::str::from_utf8(value).context("a value that was never written")?;
        let (run, i) = text
            .rsplit_once('-')
            .and_then(|(r, i)| Some((r, i.parse::<i64>().ok()?)))
            .with_context(|| format!("offset {offset}: {text:?} was never written"))?;
        if let Some((zero, last)) = runs.get_mut(run) {
            ensure!(
                previous_run.as_deref() == Some(run) && offset - i == *zero,
                "offset {offset}: {text:?} is out of place (line 0 of {run} is at {zero})"
            );
            *last = offset;
        } else {
            ensure!(
                i == 0,
                "offset {offset}: {run} starts at its line {i}, not 0"
            );
            runs.insert(run.to_owned(), (offset, offset));
        }
        previous_run = Some(run.to_owned());
    }
    // run -> the highest acked offset: every offset of the run up to it was promised.
    let mut promised: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for ack in acks {
        let (zero, last) = runs.get(&ack.tag).with_context(|| {
            format!(
                "{} acked offset {} but none of its records survived",
                ack.tag, ack.last
            )
        })?;
        ensure!(
            *zero <= ack.last && ack.last <= *last,
            "{} acked offset {} but its records end at {last}",
            ack.tag,
            ack.last
        );
        let want = format!("{}-{}", ack.tag, ack.last - zero);
        let got = usize::try_from(ack.last)
            .ok()
            .and_then(|o| records.get(o))
            .context("acked offset missing")?;
        ensure!(
            got == want.as_bytes(),
            "acked offset {} holds {:?}, not {want:?}",
            ack.last,
            String::from_utf8_lossy(got)
        );
        let entry = promised.entry(&ack.tag).or_insert((*zero, ack.last));
        entry.1 = entry.1.max(ack.last);
    }
    // Every line of a run before an acked one is on a consecutive offset, checked above.
    Ok(promised
        .values()
        .map(|(zero, last)| u64::try_from(last - zero + 1).unwrap_or(0))
        .sum())
}

/// Embedded runs: each batch is `<tag>-0..<tag>-<n-1>` on consecutive offsets, whole or absent,
/// never twice; every acked batch is at the offsets its ack named.
fn check_embedded(records: &[Vec<u8>], from: usize, acks: &[Ack]) -> Result<u64> {
    let mut batches: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let mut offset = from;
    while let Some(value) = records.get(offset) {
        let text = std::str::from_utf8(value).context("a value that was never written")?;
        let (tag, i) = text
            .rsplit_once('-')
            .with_context(|| format!("offset {offset}: {text:?} was never written"))?;
        ensure!(
            i == "0",
            "offset {offset}: batch {tag} starts at its record {i}"
        );
        let first = offset;
        while records
            .get(offset)
            .is_some_and(|v| v.starts_with(tag.as_bytes()) && v.get(tag.len()) == Some(&b'-'))
        {
            let want = format!("{tag}-{}", offset - first);
            ensure!(
                records.get(offset).is_some_and(|v| v == want.as_bytes()),
                "offset {offset}: expected {want:?}"
            );
            offset += 1;
        }
        let previous = batches.insert(tag.to_owned(), (to_i64(first), to_i64(offset) - 1));
        ensure!(previous.is_none(), "batch {tag} appears twice");
    }
    let mut verified = 0;
    for ack in acks {
        let at = batches.get(&ack.tag).with_context(|| {
            format!(
                "acked batch {} ({:?}..={}) is missing",
                ack.tag, ack.first, ack.last
            )
        })?;
        ensure!(
            Some(at.0) == ack.first && at.1 == ack.last,
            "acked batch {} was at {:?}..={}, the log has it at {}..={}",
            ack.tag,
            ack.first,
            ack.last,
            at.0,
            at.1
        );
        verified += u64::try_from(ack.last - at.0 + 1).unwrap_or(0);
    }
    Ok(verified)
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn base64(text: &str) -> Result<Vec<u8>> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut bits = 0_u32;
    let mut count = 0;
    for c in text.bytes().filter(|c| *c != b'=') {
        let v = ALPHABET
            .iter()
            .position(|a| *a == c)
            .with_context(|| format!("bad base64 {text:?}"))?;
        bits = (bits << 6) | u32::try_from(v)?;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push(u8::try_from((bits >> count) & 0xFF)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{Ack, base64, check_cli, check_embedded};

    fn values(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    fn cli_ack(run: &str, last: i64) -> Ack {
        Ack {
            first: None,
            last,
            tag: run.to_owned(),
        }
    }

    #[test]
    fn cli_checker_accepts_acked_prefixes_and_counts_them() {
        let log = values(&["k0-0", "k0-1", "k0-2", "k1-0", "k1-1"]);
        let acks = [cli_ack("k0", 1), cli_ack("k1", 3)];
        assert_eq!(check_cli(&log, 0, &acks).ok(), Some(3));
    }

    #[test]
    fn cli_checker_rejects_lost_invented_and_shifted_records() {
        // The acked offset 3 was lost.
        let log = values(&["k0-0", "k0-1"]);
        assert!(check_cli(&log, 0, &[cli_ack("k0", 3)]).is_err());
        // A run whose records are all gone although one was acked.
        assert!(check_cli(&log, 0, &[cli_ack("k9", 0)]).is_err());
        // An ack before the run's first record.
        assert!(check_cli(&values(&["k0-0", "k1-0"]), 0, &[cli_ack("k1", 0)]).is_err());
        // A gap inside a run, a record never written, a run that does not start at line 0.
        assert!(check_cli(&values(&["k0-0", "k0-2"]), 0, &[]).is_err());
        assert!(check_cli(&values(&["k0-0", "garbage"]), 0, &[]).is_err());
        assert!(check_cli(&values(&["k0-1"]), 0, &[]).is_err());
        // A run that comes back after another one started.
        assert!(check_cli(&values(&["k0-0", "k1-0", "k0-1"]), 0, &[]).is_err());
    }

    #[test]
    fn embedded_checker_wants_whole_batches_where_acked() {
        let log = values(&["a-0", "a-1", "b-0", "b-1", "b-2"]);
        let ack = |tag: &str, first, last| Ack {
            first: Some(first),
            last,
            tag: tag.to_owned(),
        };
        assert_eq!(
            check_embedded(&log, 0, &[ack("a", 0, 1), ack("b", 2, 4)]).ok(),
            Some(5)
        );
        assert!(check_embedded(&log, 0, &[ack("b", 1, 3)]).is_err());
        assert!(check_embedded(&log, 0, &[ack("c", 5, 6)]).is_err());
        assert!(check_embedded(&values(&["a-1"]), 0, &[]).is_err());
        assert!(check_embedded(&values(&["a-0", "a-0"]), 0, &[]).is_err());
        assert!(check_embedded(&values(&["a-0", "b-0", "a-0"]), 0, &[]).is_err());
    }

    #[test]
    fn base64_decodes_padding() {
        assert_eq!(base64("azAtMTI=").ok(), Some(b"k0-12".to_vec()));
        assert_eq!(base64("").ok(), Some(Vec::new()));
    }
}

//! The kills harness's recover case (issue 17, point 4): `seglog recover` killed with SIGKILL at
//! random moments, then run again to the end, must leave exactly what one uninterrupted recover
//! leaves: the same files, byte for byte, the same records by `seglog consume`, and a quarantine
//! holding the same data (its run directory's number aside).
//!
//! The partition, written once per run by `seglog produce`: two segments of 2 MiB, then (after
//! `segment.bytes` was lowered to 128 KiB in its `seglog.properties`, as an operator's config
//! change) about 40 of 128 KiB. The second segment gets a flipped byte at a seeded place between
//! a tenth and a half of it, so recovery cuts it there and drops every later segment (Kafka's
//! rule); the active segment also loses a seeded number of its last bytes (a torn tail). The
//! clean-shutdown marker and the recovery-point checkpoint are removed, as after a crash.
//!
//! Three uninterrupted recovers of copies come first: the first is the reference, all three must
//! agree, and they are watched to time the phases (what a recover has changed so far tells its
//! phase: see [`PHASES`]). Then each kill: a fresh copy, a recover killed at a random moment
//! (see `pick_moment`), the same recover run again to the end, and the result held against the
//! reference. What each killed run left says in which phase the kill landed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use super::{Bins, KillOnDrop, Rng, describe, path_str, seglog};

const PARTITION: &str = "logs/t-0";
const QUARANTINE: &str = "seglog-quarantine";
const FIRST_SEGMENT_BYTES: usize = 2 << 20;
const LATER_SEGMENT_BYTES: usize = 128 << 10;
const VALUE_BYTES: usize = 900;

/// The phases of one recovery, in order, as the files a kill left show them.
const PHASES: [&str; 7] = [
    "planning (nothing changed yet)",
    "plan written, no segment moved yet",
    "moving the later segments",
    "copying the cut tail",
    "tail copied, segment not yet cut",
    "cut, quarantine not yet marked done",
    "done, closing (checkpoints, clean-shutdown marker)",
];

/// The phases the watched kills aim at, the changes (moves, copy, cut) more often.
const PICKS: [usize; 10] = [0, 1, 2, 2, 2, 3, 3, 4, 5, 6];

/// What the recover kills found, for the summary line and docs/reliability.md.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) kills: u64,
    pub(super) finished_before_the_kill: u64,
    pub(super) phases: [u64; PHASES.len()],
    pub(super) reference_ms: f64,
    pub(super) phase_starts_ms: Vec<f64>,
    pub(super) elapsed: Duration,
}

impl Tally {
    pub(super) fn summary(&self) -> String {
        let phases: Vec<String> = PHASES
            .iter()
            .zip(self.phases)
            .zip(&self.phase_starts_ms)
            .map(|((p, n), at)| format!("{n} {p} (from {at:.1} ms)"))
            .collect();
        format!(
            "{} kills of seglog recover (an uninterrupted one took {:.0} ms): {}; {} runs \
             finished before their kill; every killed recover, run again, left what the \
             uninterrupted one left; {:.1?}",
            self.kills,
            self.reference_ms,
            phases.join(", "),
            self.finished_before_the_kill,
            self.elapsed
        )
    }
}

/// What the reference recovery did, from its `--json` report: the phases are told by these files.
struct Expected {
    /// The names of the dropped segments' files, in the order they are moved.
    dropped: Vec<String>,
    /// The `.log` cut, the position it is cut at, and the length of its tail.
    cut_log: String,
    cut_position: u64,
    cut_bytes: u64,
}

/// Every entry under a log directory: files with their bytes, directories as `None`. The
/// quarantine's run directories (`seglog-quarantine/<n>/...`) are kept apart, by contents only.
#[derive(PartialEq, Eq, Debug)]
struct Tree {
    files: BTreeMap<PathBuf, Option<Vec<u8>>>,
    quarantine_runs: Vec<BTreeMap<String, Vec<u8>>>,
}

fn read_tree(root: &Path) -> Result<Tree> {
    let mut files = BTreeMap::new();
    let mut runs = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))?
        {
            let path = entry?.path();
            let rel = path.strip_prefix(root)?.to_path_buf();
            let in_quarantine = rel
                .parent()
                .and_then(Path::parent)
                .is_some_and(|p| p.ends_with(QUARANTINE));
            if path.is_dir() {
                if !rel.ends_with(QUARANTINE)
                    && !rel.parent().is_some_and(|p| p.ends_with(QUARANTINE))
                {
                    files.insert(rel, None);
                }
                stack.push(path);
            } else if in_quarantine {
                let run = rel.parent().context("run")?.to_path_buf();
                let name = rel
                    .file_name()
                    .context("name")?
                    .to_string_lossy()
                    .into_owned();
                runs.entry(run)
                    .or_insert_with(BTreeMap::new)
                    .insert(name, std::fs::read(&path)?);
            } else {
                files.insert(rel, Some(std::fs::read(&path)?));
            }
        }
    }
    let mut quarantine_runs: Vec<_> = runs.into_values().collect();
    quarantine_runs.sort();
    Ok(Tree {
        files,
        quarantine_runs,
    })
}

/// The first difference between two trees, in words.
fn difference(reference: &Tree, got: &Tree) -> Option<String> {
    for (path, want) in &reference.files {
        match got.files.get(path) {
            None => return Some(format!("{} is missing", path.display())),
            Some(have) if have != want => {
                let len = |v: &Option<Vec<u8>>| v.as_ref().map_or(0, Vec::len);
                return Some(format!(
                    "{} differs ({} bytes, the reference has {})",
                    path.display(),
                    len(have),
                    len(want)
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(extra) = got.files.keys().find(|p| !reference.files.contains_key(*p)) {
        return Some(format!("{} is not in the reference", extra.display()));
    }
    if got.quarantine_runs != reference.quarantine_runs {
        let (want, have) = (&reference.quarantine_runs, &got.quarantine_runs);
        if want.len() != have.len() {
            return Some(format!(
                "the quarantine has {} run directories, the reference {}",
                have.len(),
                want.len()
            ));
        }
        let mut notes = Vec::new();
        for (w, h) in want.iter().zip(have) {
            for (name, bytes) in w {
                match h.get(name) {
                    None => notes.push(format!("{name} missing")),
                    Some(b) if b != bytes => notes.push(format!(
                        "{name} differs ({} bytes, the reference has {})",
                        b.len(),
                        bytes.len()
                    )),
                    Some(_) => {}
                }
            }
            notes.extend(
                h.keys()
                    .filter(|n| !w.contains_key(*n))
                    .map(|n| format!("{n} not in the reference")),
            );
        }
        return Some(format!("the quarantine differs: {}", notes.join(", ")));
    }
    None
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn remove(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    Ok(())
}

fn produce(bins: &Bins, root: &Path, first: u64, count: u64, create: bool) -> Result<()> {
    let pad = "x".repeat(VALUE_BYTES);
    let mut lines = String::new();
    for i in first..first + count {
        let _ = writeln!(lines, "r{i}-{pad}");
    }
    let mut cmd = Command::new(&bins.seglog);
    // Batches of 18 KiB, below the later segments' size.
    cmd.args(["produce", PARTITION, "--batch-records", "20"])
        .current_dir(root);
    if create {
        cmd.args(["--create", "--config"])
            .arg(format!("segment.bytes={FIRST_SEGMENT_BYTES}"));
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let feeder =
        std::thread::spawn(move || std::io::Write::write_all(&mut stdin, lines.as_bytes()));
    let out = child.wait_with_output()?;
    ensure!(out.status.success(), "produce failed: {}", describe(&out));
    feeder
        .join()
        .map_err(|_| anyhow::anyhow!("feeder panicked"))??;
    Ok(())
}

fn segment_logs(partition: &Path) -> Result<Vec<PathBuf>> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(partition)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    logs.retain(|p| p.extension().is_some_and(|e| e == "log"));
    logs.sort();
    Ok(logs)
}

/// Writes and damages the partition under `root` (see the module's comment).
fn build_source(bins: &Bins, root: &Path, rng: &mut Rng) -> Result<()> {
    let per_record = (VALUE_BYTES + 80) as u64;
    let big = (2 * FIRST_SEGMENT_BYTES) as u64 / per_record;
    std::fs::create_dir_all(root)?;
    produce(bins, root, 0, big - 50, true)?;
    let properties = root.join(PARTITION).join("seglog.properties");
    // Kafka's `segment.bytes` is at least 1 MiB; seglog's `internal.segment.bytes` goes lower.
    let text = std::fs::read_to_string(&properties)?;
    let from = format!("segment.bytes={FIRST_SEGMENT_BYTES}");
    ensure!(
        text.lines().any(|l| l == from),
        "no {from} in {}",
        properties.display()
    );
    let lowered: String = text
        .lines()
        .map(|l| {
            if l == from {
                format!("internal.segment.bytes={LATER_SEGMENT_BYTES}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&properties, lowered)?;
    produce(
        bins,
        root,
        big,
        40 * LATER_SEGMENT_BYTES as u64 / per_record,
        false,
    )?;
    let partition = root.join(PARTITION);
    let logs = segment_logs(&partition)?;
    ensure!(logs.len() > 30, "only {} segments", logs.len());
    let (middle, active) = (
        logs.get(1).context("no second segment")?,
        logs.last().context("no segment")?,
    );
    let mut bytes = std::fs::read(middle)?;
    let len = bytes.len() as u64;
    let at = usize::try_from(len / 10 + rng.below(len * 4 / 10))?;
    *bytes.get_mut(at).context("flip")? ^= 0x5a;
    std::fs::write(middle, bytes)?;
    let tail = std::fs::metadata(active)?.len();
    let torn = 1 + rng.below(500.min(tail - 1));
    std::fs::OpenOptions::new()
        .write(true)
        .open(active)?
        .set_len(tail - torn)?;
    for leftover in [
        ".kafka_cleanshutdown",
        "recovery-point-offset-checkpoint",
        ".lock",
    ] {
        let path = root.join("logs").join(leftover);
        if path.exists() {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

fn name_of(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

fn expected_from(report: &str) -> Result<Expected> {
    let v: serde_json::Value = serde_json::from_str(
        report
            .lines()
            .find(|l| l.contains("\"type\":\"plan\""))
            .context("no plan in the dry run's report")?,
    )?;
    let field = |name: &str| v.get(name).cloned().unwrap_or_default();
    let cuts = field("cuts").as_array().cloned().context("cuts")?;
    ensure!(cuts.len() == 1, "the reference cut {} segments", cuts.len());
    let cut = cuts.first().context("cut")?;
    let dropped: Vec<String> = field("dropped")
        .as_array()
        .context("dropped")?
        .iter()
        .flat_map(|d| {
            d.get("files")
                .and_then(serde_json::Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|f| f.as_str().map(name_of))
        .collect();
    ensure!(
        dropped.len() > 100,
        "the reference dropped only {} files",
        dropped.len()
    );
    Ok(Expected {
        dropped,
        cut_log: name_of(
            cut.get("file")
                .and_then(serde_json::Value::as_str)
                .context("cut file")?,
        ),
        cut_position: cut
            .get("position")
            .and_then(serde_json::Value::as_u64)
            .context("position")?,
        cut_bytes: cut
            .get("bytes")
            .and_then(serde_json::Value::as_u64)
            .context("bytes")?,
    })
}

/// One uninterrupted recover, watched: when each phase was first seen, and the exit, from its
/// start. A phase too short to be seen starts where the next one does.
struct Timing {
    starts: [Duration; PHASES.len()],
    exit: Duration,
}

/// Runs an uninterrupted `seglog recover` on `run`, watching what it has changed.
fn timed_recover(bins: &Bins, run: &Path, e: &Expected) -> Result<Timing> {
    let partition = run.join(PARTITION);
    let start = Instant::now();
    let child = Command::new(&bins.seglog)
        .args(["recover", path_str(&partition)?])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut seen: [Option<Duration>; PHASES.len()] = [None; PHASES.len()];
    let waiter = std::thread::spawn(move || child.wait_with_output());
    while !waiter.is_finished() {
        let at = start.elapsed();
        // Files can vanish under the look (moved); a failed look is no phase.
        if let Ok(p) = phase(&partition, e)
            && let Some(slot) = seen.get_mut(p)
        {
            slot.get_or_insert(at);
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    let out = waiter
        .join()
        .map_err(|_| anyhow::anyhow!("waiter panicked"))??;
    let exit = start.elapsed();
    ensure!(out.status.success(), "recover failed: {}", describe(&out));
    let mut starts = [exit; PHASES.len()];
    let mut next = exit;
    for (p, s) in seen.iter().enumerate().rev() {
        next = s.map_or(next, |s| s.min(next));
        if let Some(slot) = starts.get_mut(p) {
            *slot = next;
        }
    }
    if let Some(first) = starts.first_mut() {
        *first = Duration::ZERO;
    }
    Ok(Timing { starts, exit })
}

/// The phase a killed recover was in, from what it left in `partition`.
fn phase(partition: &Path, e: &Expected) -> Result<usize> {
    let run_dir = partition.join(QUARANTINE).join("1");
    if !run_dir.join("plan.txt").exists() {
        return Ok(0);
    }
    // The files leave in the plan's order: the first and the last tell how far the moves got
    // (two looks, cheap enough to watch a run with).
    let (first, last) = (e.dropped.first(), e.dropped.last());
    if first.is_some_and(|n| partition.join(n).exists()) {
        return Ok(1);
    }
    if last.is_some_and(|n| partition.join(n).exists()) {
        return Ok(2);
    }
    let copy = run_dir.join(format!("{}.cut-at-{}", e.cut_log, e.cut_position));
    let copied = std::fs::metadata(&copy).map_or(0, |m| m.len());
    if copied < e.cut_bytes {
        return Ok(3);
    }
    let log = std::fs::metadata(partition.join(&e.cut_log))?.len();
    if log > e.cut_position {
        return Ok(4);
    }
    if !run_dir.join("done").exists() {
        return Ok(5);
    }
    Ok(6)
}

fn consume(bins: &Bins, partition: &Path) -> Result<Vec<u8>> {
    let out = seglog(
        bins,
        &[
            "consume",
            path_str(partition)?,
            "--from-beginning",
            "--json",
        ],
    )?;
    ensure!(out.status.success(), "consume failed: {}", describe(&out));
    Ok(out.stdout)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What every killed run is held against: one uninterrupted recover's result and timing.
struct Reference {
    tree: Tree,
    records: Vec<u8>,
    expected: Expected,
    /// When each phase starts, and the exit (medians of the uninterrupted runs).
    starts: Vec<Duration>,
    exit: Duration,
}

/// The reference, and two more uninterrupted runs that must agree with it, all three at `run`
/// (the quarantine's plan.txt names the partition).
fn reference(bins: &Bins, source: &Path, run: &Path) -> Result<Reference> {
    let plan = seglog(
        bins,
        &[
            "recover",
            "--dry-run",
            "--json",
            path_str(&source.join(PARTITION))?,
        ],
    )?;
    ensure!(
        plan.status.code() == Some(1),
        "the dry run: {}",
        describe(&plan)
    );
    let expected = expected_from(&String::from_utf8(plan.stdout)?)?;
    let mut timings = Vec::new();
    let mut first: Option<(Tree, Vec<u8>)> = None;
    for probe in 0..3 {
        remove(run)?;
        copy_tree(source, run)?;
        timings.push(timed_recover(bins, run, &expected)?);
        let tree = read_tree(&run.join("logs"))?;
        let records = consume(bins, &run.join(PARTITION))?;
        if let Some((reference, reference_records)) = &first {
            if let Some(d) = difference(reference, &tree) {
                bail!("uninterrupted recover {probe} left another result than the first: {d}");
            }
            ensure!(
                &records == reference_records,
                "uninterrupted recover {probe}: other records"
            );
        } else {
            let out = seglog(bins, &["check", path_str(&run.join(PARTITION))?])?;
            let text = String::from_utf8_lossy(&out.stdout);
            ensure!(
                out.status.success() && text.contains("note: quarantine:"),
                "check after the reference recover: {}",
                describe(&out)
            );
            first = Some((tree, records));
        }
    }
    let (tree, records) = first.context("no reference")?;
    let exit = median(timings.iter().map(|t| t.exit).collect());
    let starts = (0..PHASES.len())
        .map(|p| {
            median(
                timings
                    .iter()
                    .map(|t| t.starts.get(p).copied().unwrap_or(exit))
                    .collect(),
            )
        })
        .collect();
    Ok(Reference {
        tree,
        records,
        expected,
        starts,
        exit,
    })
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// When to kill: one kill in four at a moment anywhere in the run. The others in a phase picked
/// at random (the changes more often): the run is watched until it is seen in that phase (or a
/// later one), then killed at a random moment of the phase's length in the uninterrupted runs;
/// so a loaded machine, which stretches every phase, still spreads them over the phases.
/// Returns the phase to wait for (0: none), the delay after it, and the moment in words.
fn pick_moment(r: &Reference, rng: &mut Rng) -> Result<(usize, u64, String)> {
    if rng.below(4) == 0 {
        let delay = rng.below(us(r.exit).max(1));
        return Ok((0, delay, format!("{delay} us after its start")));
    }
    let target = *PICKS
        .get(usize::try_from(rng.below(PICKS.len() as u64))?)
        .context("pick")?;
    let from = r.starts.get(target).copied().map_or(0, us);
    let to = r.starts.get(target + 1).copied().map_or(us(r.exit), us);
    let delay = rng.below(to.saturating_sub(from).max(1));
    let name = PHASES.get(target).copied().unwrap_or_default();
    Ok((
        target,
        delay,
        format!("{delay} us into phase {target} ({name})"),
    ))
}

/// One recover of a fresh copy killed (or finished first), then run again and compared.
fn kill_once(
    bins: &Bins,
    source: &Path,
    run: &Path,
    r: &Reference,
    rng: &mut Rng,
    tally: &mut Tally,
) -> Result<()> {
    remove(run)?;
    copy_tree(source, run)?;
    let (wait_for, delay_us, moment) = pick_moment(r, rng)?;
    let partition = run.join(PARTITION);
    let child = Command::new(&bins.seglog)
        .args(["recover", path_str(&partition)?])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let mut child = KillOnDrop(child);
    let deadline = Instant::now() + Duration::from_mins(1);
    while wait_for > 0
        && child.0.try_wait()?.is_none()
        && phase(&partition, &r.expected).unwrap_or(0) < wait_for
    {
        ensure!(
            Instant::now() < deadline,
            "recover did not reach phase {wait_for} in a minute"
        );
        std::thread::sleep(Duration::from_micros(100));
    }
    std::thread::sleep(Duration::from_micros(delay_us));
    if let Some(status) = child.0.try_wait()? {
        ensure!(
            status.success(),
            "recover exited with {status} before its kill"
        );
        tally.finished_before_the_kill += 1;
    } else {
        child.0.kill().context("SIGKILL")?;
        let status = child.0.wait()?;
        if status.code().is_some() {
            // It ended between the last look and the signal (a finished, unreaped child still
            // takes a SIGKILL without dying of it): as if it ended before the kill.
            ensure!(
                status.success(),
                "recover exited with {status} before its kill"
            );
            tally.finished_before_the_kill += 1;
        } else {
            tally.kills += 1;
            let p = phase(&partition, &r.expected)?;
            if let Some(n) = tally.phases.get_mut(p) {
                *n += 1;
            }
        }
    }
    let out = seglog(bins, &["recover", path_str(&partition)?])?;
    ensure!(
        out.status.success(),
        "recover after a kill {moment} failed: {}",
        describe(&out)
    );
    if let Some(d) = difference(&r.tree, &read_tree(&run.join("logs"))?) {
        bail!(
            "recover killed {moment} and run again left another result than an uninterrupted \
             one: {d} (kept under {})",
            run.display()
        );
    }
    ensure!(
        consume(bins, &partition)? == r.records,
        "recover killed {moment} and run again: consume returns other records"
    );
    Ok(())
}

/// Runs the case under `work` until `kills` recovers were killed.
pub(super) fn run(bins: &Bins, work: &Path, kills: u64, rng: &mut Rng) -> Result<Tally> {
    let started = Instant::now();
    let mut tally = Tally::default();
    let (source, run) = (work.join("source"), work.join("run"));
    build_source(bins, &source, rng)?;
    let r = reference(bins, &source, &run)?;
    tally.reference_ms = ms(r.exit);
    tally.phase_starts_ms = r.starts.iter().map(|d| ms(*d)).collect();
    let mut attempts = 0;
    while tally.kills < kills {
        attempts += 1;
        ensure!(
            attempts <= 3 * kills,
            "{attempts} attempts for {} kills: the recovers finished before their kill",
            tally.kills
        );
        kill_once(bins, &source, &run, &r, rng, &mut tally)?;
    }
    remove(&run)?;
    tally.elapsed = started.elapsed();
    Ok(tally)
}

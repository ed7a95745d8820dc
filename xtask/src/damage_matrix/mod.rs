//! `cargo xtask damage-matrix`: seglog's own damage matrix (issue 17, point 15).
//!
//! 1. `seglog-damage-matrix` (harness) writes a partition with every codec and one damaged copy
//!    per case, over more than 30 mutation families, deterministically from the seed;
//! 2. Kafka's own classes (`Oracle matrix`, one JVM for all cases) read every copy and say which
//!    batches are valid, what `LogSegment.recover` keeps, the records and the index entries;
//! 3. each case is judged with the real `seglog` binary (`judge`) against those facts and the
//!    documented rules (`rules`): no signal, panic or hang; read-only commands change no byte;
//!    `check` exits 1 exactly on damage; `recover` keeps exactly the rules' prefix, sets aside
//!    every dropped byte and reports it; and on a copy, the recover contract (`plain`): check, a
//!    plain recover, check, which passes after a recover that exited 0.
//!
//! Counts per family, per outcome and per deciding rule are printed; the families and their counts
//! are in docs/reliability.md, section 3. The oracle is the kafka-interop harness (the same Maven
//! build and `$SEGLOG_M2`); without java and mvn the step says it was skipped.

mod facts;
mod judge;
mod plain;
mod proc;
mod rules;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use facts::Facts;
use judge::{Meta, Verdict, judge};

const DEFAULT_SEED: u64 = 17;
/// The template's `index.interval.bytes` (one index entry per batch), for the oracle's recover.
const INDEX_INTERVAL: &str = "1";
/// Cases that fail for a known cause, listed in docs/reliability.md: (family, description prefix,
/// cause). They are judged and printed like the others but do not fail the step.
const KNOWN: &[(&str, &str, &str)] = &[];

pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
    let mut seed = DEFAULT_SEED;
    let mut keep = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => seed = it.next().context("--seed needs a number")?.parse()?,
            "--keep" => keep = true,
            other => bail!("damage-matrix: unknown argument {other} (--seed N, --keep)"),
        }
    }
    for (tool, arg) in [("java", "-version"), ("mvn", "-v")] {
        if !Command::new(tool)
            .arg(arg)
            .output()
            .is_ok_and(|o| o.status.success())
        {
            println!(
                "damage-matrix: skipped: {tool} is not installed (the oracle needs java 17+ and mvn)"
            );
            return Ok(());
        }
    }
    let started = Instant::now();
    crate::cargo(
        root,
        &[
            "build",
            "--locked",
            "-p",
            "seglog-cli",
            "--bin",
            "seglog",
            "-p",
            "seglog-harness",
            "--bin",
            "seglog-damage-matrix",
        ],
        &[],
    )?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let bin = target.join("debug").join("seglog");
    let work = root.join("target").join("damage-matrix");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    println!(
        "damage-matrix: seed {seed} (rerun with `cargo xtask damage-matrix --seed {seed} --keep`)"
    );
    let status = Command::new(target.join("debug").join("seglog-damage-matrix"))
        .arg(seed.to_string())
        .arg(&work)
        .status()?;
    if !status.success() {
        bail!("the generator failed: {status}");
    }
    let metas = read_cases(&work)?;
    let oracle = run_oracle(root, &work, &metas)?;
    let generated = started.elapsed();

    let next = AtomicUsize::new(0);
    let verdicts: Mutex<Vec<(usize, Verdict)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(meta) = metas.get(i) else { break };
                    let verdict = match oracle.get(&meta.dir) {
                        Some(facts) => judge(&bin, meta, facts),
                        None => Verdict {
                            outcome: "no oracle",
                            rule: String::new(),
                            kinds: String::new(),
                            failure: Some("the oracle said nothing about this case".into()),
                            plain: "not run",
                        },
                    };
                    if verdict.failure.is_none() && !keep {
                        let _ = std::fs::remove_dir_all(meta.dir.parent().unwrap_or(&meta.dir));
                    }
                    verdicts.lock().map(|mut v| v.push((i, verdict))).ok();
                }
            });
        }
    });
    let mut verdicts = verdicts
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a judge thread panicked"))?;
    verdicts.sort_by_key(|(i, _)| *i);
    report(&metas, &verdicts, seed, generated, started.elapsed())
}

fn read_cases(work: &Path) -> Result<Vec<Meta>> {
    let text = std::fs::read_to_string(work.join("cases.jsonl"))?;
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l)?;
            let s = |k: &str| {
                v.get(k)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .with_context(|| format!("case line without {k}: {l}"))
            };
            let dir = PathBuf::from(s("dir")?);
            Ok(Meta {
                id: v.get("id").and_then(Value::as_u64).context("case id")?,
                family: s("family")?,
                codec: s("codec")?,
                what: s("what")?,
                expect: s("expect")?,
                dir: if dir.is_absolute() {
                    dir
                } else {
                    std::env::current_dir()?.join(dir)
                },
            })
        })
        .collect()
}

/// One JVM for every case: the facts, by partition directory.
fn run_oracle(root: &Path, work: &Path, metas: &[Meta]) -> Result<HashMap<PathBuf, Facts>> {
    let list = work.join("oracle-cases.txt");
    let dirs: Vec<String> = metas.iter().map(|m| m.dir.display().to_string()).collect();
    std::fs::write(&list, dirs.join("\n"))?;
    let mut cmd = Command::new(root.join("interop").join("kafka").join("run.sh"));
    cmd.arg("matrix")
        .arg(&list)
        .arg(INDEX_INTERVAL)
        .env("SEGLOG_JAVA_OPTS", "-XX:+UseSerialGC -Xmx512m");
    if std::env::var_os("SEGLOG_M2").is_none() {
        cmd.env("SEGLOG_M2", root.join("target").join("m2"));
    }
    let t = Instant::now();
    let out = cmd
        .output()
        .context("running the Kafka oracle (interop/kafka/run.sh matrix)")?;
    if !out.status.success() {
        bail!(
            "the Kafka oracle failed ({}): {}",
            out.status,
            proc::short(&String::from_utf8_lossy(&out.stderr))
        );
    }
    let mut facts = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).context("an oracle line")?;
        let dir = PathBuf::from(
            v.get("dir")
                .and_then(Value::as_str)
                .context("oracle line without dir")?,
        );
        facts.insert(dir, Facts::parse(&v)?);
    }
    println!(
        "damage-matrix: the Kafka oracle read {} cases in {:.1?}",
        facts.len(),
        t.elapsed()
    );
    Ok(facts)
}

fn report(
    metas: &[Meta],
    verdicts: &[(usize, Verdict)],
    seed: u64,
    generated: std::time::Duration,
    total: std::time::Duration,
) -> Result<()> {
    let mut families: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut plain: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rules: BTreeMap<String, usize> = BTreeMap::new();
    let mut codecs: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failed = Vec::new();
    let mut known = Vec::new();
    for (i, v) in verdicts {
        let Some(m) = metas.get(*i) else { continue };
        let f = families.entry(m.family.as_str()).or_default();
        f.0 += 1;
        *outcomes.entry(v.outcome).or_default() += 1;
        *plain.entry(v.plain).or_default() += 1;
        *codecs.entry(m.codec.as_str()).or_default() += 1;
        // the rule's kind, without the case's byte positions
        *rules.entry(v.kinds.clone()).or_default() += 1;
        match &v.failure {
            None => f.1 += 1,
            Some(why) => {
                let k = KNOWN
                    .iter()
                    .find(|(fam, what, _)| *fam == m.family && m.what.starts_with(what));
                if let Some((_, _, cause)) = k {
                    f.2 += 1;
                    known.push(format!(
                        "case {} [{} {}] {}: {why} (known: {cause}; rule: {})",
                        m.id, m.family, m.codec, m.what, v.rule
                    ));
                } else {
                    failed.push(format!(
                        "case {} [{} {}] {}: {why} (rule: {})",
                        m.id, m.family, m.codec, m.what, v.rule
                    ));
                }
            }
        }
    }
    println!(
        "damage-matrix: {:<28} {:>6} {:>6} {:>6} {:>6}",
        "family", "cases", "pass", "known", "fail"
    );
    for (fam, (n, pass, k)) in &families {
        println!(
            "damage-matrix: {fam:<28} {n:>6} {pass:>6} {k:>6} {:>6}",
            n - pass - k
        );
    }
    println!("damage-matrix: per outcome:");
    for (o, n) in &outcomes {
        println!("damage-matrix:   {n:>5}  {o}");
    }
    println!("damage-matrix: the recover contract (check, plain recover, check):");
    for (o, n) in &plain {
        println!("damage-matrix:   {n:>5}  {o}");
    }
    println!("damage-matrix: per codec of the damaged batch:");
    for (c, n) in &codecs {
        println!("damage-matrix:   {n:>5}  {c}");
    }
    println!("damage-matrix: per deciding rule:");
    for (r, n) in &rules {
        println!("damage-matrix:   {n:>5}  {r}");
    }
    for k in &known {
        println!("damage-matrix: known failure: {k}");
    }
    for f in &failed {
        println!("damage-matrix: FAIL {f}");
    }
    let passed = verdicts.len() - failed.len() - known.len();
    println!(
        "damage-matrix: {} families, {} cases: {passed} passed, {} known failures, {} failed (seed {seed}; generated and read by the oracle in {generated:.1?}, all in {total:.1?})",
        families.len(),
        verdicts.len(),
        known.len(),
        failed.len()
    );
    if !failed.is_empty() {
        bail!(
            "damage-matrix: {} cases failed (seed {seed}; the case directories are kept under target/damage-matrix/cases)",
            failed.len()
        );
    }
    Ok(())
}

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
//!
//! Everything runs on 127.0.0.1 with free ports, under `target/kafka-interop/`. Every process it
//! starts is in its own process group, held by a [`Guard`] that kills the group when dropped, so
//! no exit path (an error, a panic, a timeout) leaves one running; the broker also exits when its
//! stdin (a pipe from us) closes, which covers this process being killed.
//!
//! Needs java 17+ and mvn (the Kafka jars come from Maven Central into `$SEGLOG_M2`, default
//! `target/m2`); without them the check says it was skipped and succeeds.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;

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

pub(crate) fn run(root: &Path) -> Result<()> {
    if let Some(missing) = missing_tool() {
        println!(
            "kafka-interop: skipped: {missing} is not installed (the check needs java 17+ and mvn)"
        );
        return Ok(());
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
    let built = ctx.work.join("seglog-written");
    let expected = ctx.work.join("seglog-written.jsonl");
    timed(
        "step 1: Kafka's DumpLogSegments reads what seglog wrote",
        &mut || step1(&ctx, &built, &expected),
    )?;
    timed(
        "step 2: Kafka's LogSegment.recover rebuilds our indexes byte for byte",
        &mut || step2(&ctx, &built),
    )?;
    let mut kafka = None;
    timed("format a KRaft node (kafka-storage format)", &mut || {
        kafka = Some(KafkaNode::format(&ctx)?);
        Ok(())
    })?;
    let kafka = kafka.context("no KRaft node")?;
    timed(
        "step 3a: a KRaft broker writes with a producer per codec, seglog reads",
        &mut || step3a(&ctx, &kafka),
    )?;
    let mut running = None;
    timed(
        "step 4: seglog appends to the broker's partition, Kafka serves it",
        &mut || {
            running = Some(step4(&ctx, &kafka)?);
            Ok(())
        },
    )?;
    timed(
        "step 3b: SIGKILL mid-produce, seglog recover and check",
        &mut || step3b(&ctx, &kafka, running.take().context("no running broker")?),
    )?;
    for (name, took) in &timings {
        println!("kafka-interop: {took:>8.1?}  {name}");
    }
    println!(
        "kafka-interop: all steps passed in {:.1?}",
        started.elapsed()
    );
    Ok(())
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

/// Paths and tools of one run.
struct Ctx {
    root: PathBuf,
    work: PathBuf,
    run_sh: PathBuf,
    seglog: PathBuf,
    writer: PathBuf,
}

impl Ctx {
    fn new(root: &Path) -> Result<Self> {
        let work = root.join("target").join("kafka-interop");
        if work.exists() {
            fs::remove_dir_all(&work).with_context(|| format!("removing {}", work.display()))?;
        }
        fs::create_dir_all(&work)?;
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
        Ok(Self {
            root: root.to_path_buf(),
            work,
            run_sh: root.join("interop").join("kafka").join("run.sh"),
            seglog: target.join("debug").join("seglog"),
            writer: target.join("debug").join("seglog-kafka-interop-writer"),
        })
    }

    fn build(&self) -> Result<()> {
        crate::cargo(
            &self.root,
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
                "seglog-kafka-interop-writer",
            ],
            &[],
        )?;
        // The harness and its Kafka jars (Maven downloads them into $SEGLOG_M2 the first time).
        let m2 = std::env::var_os("SEGLOG_M2")
            .map_or_else(|| self.root.join("target").join("m2"), PathBuf::from);
        let mut cmd = Command::new(&self.run_sh);
        cmd.arg("build").env("SEGLOG_M2", m2);
        self.run_to_files(cmd, "harness-build", Duration::from_mins(8))?;
        Ok(())
    }

    /// A harness command (`run.sh <args>`) with the short-lived JVM options.
    fn oracle(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.run_sh);
        cmd.args(args).env("SEGLOG_JAVA_OPTS", TOOL_JAVA_OPTS);
        if std::env::var_os("SEGLOG_M2").is_none() {
            cmd.env("SEGLOG_M2", self.root.join("target").join("m2"));
        }
        cmd
    }

    /// Runs `cmd` with stdout and stderr in `<work>/<name>.stdout|.stderr`, killing it at the
    /// deadline. Returns the exit status and stdout.
    fn run_to_files(
        &self,
        cmd: Command,
        name: &str,
        timeout: Duration,
    ) -> Result<(ExitStatus, String)> {
        let (stdout, stderr) = self.log_paths(name);
        let mut guard = Guard::spawn(cmd, name, &stdout, &stderr, false)?;
        let status = guard.wait_until(Instant::now() + timeout)?;
        let out = fs::read_to_string(&stdout).unwrap_or_default();
        Ok((status, out))
    }

    /// As [`Ctx::run_to_files`], failing unless the command exits 0.
    fn run_ok(&self, cmd: Command, name: &str, timeout: Duration) -> Result<String> {
        let (status, out) = self.run_to_files(cmd, name, timeout)?;
        if !status.success() {
            let (_, stderr) = self.log_paths(name);
            bail!(
                "{name} exited with {status}; stderr ({}):\n{}",
                stderr.display(),
                tail(&fs::read_to_string(&stderr).unwrap_or_default(), 30)
            );
        }
        Ok(out)
    }

    fn log_paths(&self, name: &str) -> (PathBuf, PathBuf) {
        (
            self.work.join(format!("{name}.stdout")),
            self.work.join(format!("{name}.stderr")),
        )
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all.get(all.len().saturating_sub(lines)..)
        .unwrap_or_default()
        .join("\n")
}

/// A child process in its own process group; dropping the guard kills the whole group.
struct Guard {
    child: Child,
    name: String,
    done: bool,
}

impl Guard {
    /// Starts `cmd` with stdout and stderr going to files. With `stdin_pipe`, its stdin is a pipe
    /// we hold (the broker exits when it closes); otherwise it is /dev/null.
    fn spawn(
        mut cmd: Command,
        name: &str,
        stdout: &Path,
        stderr: &Path,
        stdin_pipe: bool,
    ) -> Result<Self> {
        let out = fs::File::create(stdout)?;
        let err = fs::File::create(stderr)?;
        cmd.stdout(out)
            .stderr(err)
            .stdin(if stdin_pipe {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .process_group(0);
        let child = cmd
            .spawn()
            .with_context(|| format!("could not start {name}: {cmd:?}"))?;
        Ok(Self {
            child,
            name: name.to_owned(),
            done: false,
        })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (a `kill` name such as TERM or KILL) to the process group, while the child is
    /// not reaped (so the group id is still ours).
    fn signal_group(&self, signal: &str) {
        if self.done {
            return;
        }
        let _ = Command::new("kill")
            .args([&format!("-{signal}"), "--", &format!("-{}", self.pid())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    fn try_wait(&mut self) -> Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        if status.is_some() {
            self.done = true;
        }
        Ok(status)
    }

    /// Waits for the exit; at the deadline, kills the group and fails.
    fn wait_until(&mut self, deadline: Instant) -> Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                self.kill();
                bail!("{} did not finish in time and was killed", self.name);
            }
            sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILLs the group and reaps the child. Once the child is reaped its process group id can
    /// be reused by an unrelated process, so a reaped child's group is never signalled.
    fn kill(&mut self) {
        if self.done {
            return;
        }
        self.signal_group("KILL");
        // In case `kill` could not run: at least the child itself.
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.done = true;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// One JSON Lines file or output, parsed.
fn json_lines(text: &str, what: &str) -> Result<Vec<Value>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{what}: line {}: {l}", i + 1))
        })
        .collect()
}

/// The fields every reader must agree on.
fn record_view(v: &Value) -> Value {
    serde_json::json!({
        "offset": v["offset"],
        "timestamp": v["timestamp"],
        "key": v["key"],
        "value": v["value"],
        "headers": v["headers"],
    })
}

/// Fails with the first difference if the two record lists are not the same.
fn same_records(what: &str, expected: &[Value], actual: &[Value]) -> Result<()> {
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        let (e, a) = (record_view(e), record_view(a));
        ensure!(
            e == a,
            "{what}: record #{i} differs:\n  expected {e}\n  actual   {a}"
        );
    }
    ensure!(
        expected.len() == actual.len(),
        "{what}: expected {} records, got {}",
        expected.len(),
        actual.len()
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Step 1

/// A record line of Kafka's deep dump.
#[derive(Debug, PartialEq, Eq)]
struct DumpedRecord {
    offset: i64,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    header_keys: Vec<String>,
    codec: String,
}

/// What one dump of many files said.
#[derive(Default)]
struct Dump {
    /// Per partition directory name: the records, in file order.
    records: BTreeMap<String, Vec<DumpedRecord>>,
    /// Per `.log` path: the (last offset, record count) of each batch.
    batches: BTreeMap<String, Vec<(i64, i64)>>,
    /// Per `.timeindex` path: its (timestamp, offset) entries.
    time_entries: BTreeMap<String, Vec<(i64, i64)>>,
    problems: Vec<String>,
}

fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let at = line.find(&format!("{name}: "))? + name.len() + 2;
    line[at..].split(' ').next()
}

fn num(line: &str, name: &str) -> Result<i64> {
    field(line, name)
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("no number `{name}` in dump line: {line}"))
}

fn partition_of(file: &str) -> String {
    Path::new(file)
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Parses a record line: `| offset: O CreateTime: T keySize: K valueSize: V sequence: S
/// headerKeys: [a,b] key: <K bytes> payload: <V bytes>` (key and payload only when not null).
/// The written keys and values are printable ASCII, so sizes in bytes are sizes in characters.
fn parse_record(line: &str, codec: &str) -> Result<DumpedRecord> {
    let key_size = num(line, "keySize")?;
    let value_size = num(line, "valueSize")?;
    let mut rest = line;
    let value = if value_size >= 0 {
        let n = usize::try_from(value_size)?;
        let cut = rest
            .len()
            .checked_sub(n)
            .context("payload shorter than valueSize")?;
        let v = rest.as_bytes().get(cut..).unwrap_or_default().to_vec();
        rest = rest[..cut]
            .strip_suffix(" payload: ")
            .or_else(|| rest[..cut].strip_suffix("| payload: "))
            .with_context(|| format!("no payload before {value_size} bytes: {line}"))?;
        Some(v)
    } else {
        None
    };
    let key = if key_size >= 0 {
        let n = usize::try_from(key_size)?;
        let cut = rest
            .len()
            .checked_sub(n)
            .context("key shorter than keySize")?;
        let k = rest.as_bytes().get(cut..).unwrap_or_default().to_vec();
        rest = rest[..cut]
            .strip_suffix(" key: ")
            .with_context(|| format!("no key before {key_size} bytes: {line}"))?;
        Some(k)
    } else {
        None
    };
    let headers = rest
        .rsplit_once("headerKeys: [")
        .and_then(|(_, h)| h.strip_suffix(']'))
        .with_context(|| format!("no headerKeys: {line}"))?;
    Ok(DumpedRecord {
        offset: num(line, "offset")?,
        timestamp: num(line, "CreateTime")?,
        key,
        value,
        header_keys: if headers.is_empty() {
            Vec::new()
        } else {
            headers.split(',').map(str::to_owned).collect()
        },
        codec: codec.to_owned(),
    })
}

fn parse_dump(stdout: &str, stderr: &str) -> Result<Dump> {
    let mut dump = Dump::default();
    let mut file = String::new();
    let mut codec = String::new();
    for line in stdout.lines() {
        if let Some(f) = line.strip_prefix("Dumping ") {
            f.clone_into(&mut file);
        } else if line.starts_with("baseOffset: ") {
            if !line.ends_with("isvalid: true") {
                dump.problems.push(format!("{file}: invalid batch: {line}"));
            }
            field(line, "compresscodec")
                .unwrap_or_default()
                .clone_into(&mut codec);
            dump.batches
                .entry(file.clone())
                .or_default()
                .push((num(line, "lastOffset")?, num(line, "count")?));
        } else if line.starts_with("| offset: ") {
            let record = parse_record(line, &codec).with_context(|| file.clone())?;
            dump.records
                .entry(partition_of(&file))
                .or_default()
                .push(record);
        } else if line.starts_with("timestamp: ") && file.ends_with(".timeindex") {
            dump.time_entries
                .entry(file.clone())
                .or_default()
                .push((num(line, "timestamp")?, num(line, "offset")?));
        } else if line.starts_with("Found ") || line.contains("invalid bytes") {
            dump.problems.push(format!("{file}: {line}"));
        }
    }
    // stderr: sections of "<what> :<file>" or "<what> in <file>" followed by indented lines.
    let mut section: Option<(String, String)> = None;
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line
            .strip_prefix("  ")
            .or_else(|| line.strip_prefix("Indexed offset: ").map(|_| line))
        {
            let Some((kind, f)) = &section else {
                dump.problems.push(format!("stderr: {line}"));
                continue;
            };
            match kind.as_str() {
                "non-consecutive" => {
                    // Kafka lists each gap in offsets; a compacted log has them, a fresh one must
                    // not, except where a file starts (Kafka's dump starts each file at -1).
                    let (a, b) = rest
                        .trim()
                        .split_once(" is followed by ")
                        .context("non-consecutive line")?;
                    dump.problems.push(format!("gap {f} {a} {b}"));
                }
                "timestamp-mismatch" => {
                    dump.problems
                        .push(format!("tsmismatch {f} {}", rest.trim()));
                }
                _ => dump
                    .problems
                    .push(format!("{kind} in {f}: {}", rest.trim())),
            }
        } else if let Some(f) = line.strip_prefix("Non-consecutive offsets in ") {
            section = Some(("non-consecutive".to_owned(), f.to_owned()));
        } else if let Some(f) = line.strip_prefix("Found timestamp mismatch in :") {
            section = Some(("timestamp-mismatch".to_owned(), f.to_owned()));
        } else if let Some((what, f)) = line.split_once(" :") {
            section = Some((what.to_owned(), f.to_owned()));
            dump.problems.push(format!("{what} {f}"));
        } else {
            dump.problems.push(format!("stderr: {line}"));
        }
    }
    Ok(dump)
}

fn b64_decode(s: &str) -> Result<Vec<u8>> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits) = (0_u32, 0_u32);
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET
            .iter()
            .position(|&a| a == c)
            .with_context(|| format!("bad base64: {s}"))?;
        acc = (acc << 6) | u32::try_from(v)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xFF)?);
        }
    }
    Ok(out)
}

fn bytes_field(v: &Value) -> Result<Option<Vec<u8>>> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(b64_decode(s)?)),
        other => bail!("expected base64 or null, got {other}"),
    }
}

fn expected_dump_record(v: &Value) -> Result<DumpedRecord> {
    let headers = v["headers"]
        .as_array()
        .context("headers")?
        .iter()
        .map(|h| h["key"].as_str().unwrap_or_default().to_owned())
        .collect();
    Ok(DumpedRecord {
        offset: v["offset"].as_i64().context("offset")?,
        timestamp: v["timestamp"].as_i64().context("timestamp")?,
        key: bytes_field(&v["key"])?,
        value: bytes_field(&v["value"])?,
        header_keys: headers,
        codec: v["codec"].as_str().context("codec")?.to_owned(),
    })
}

fn segment_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    files.retain(|p| {
        p.extension()
            .is_some_and(|e| e == "log" || e == "index" || e == "timeindex")
    });
    files.sort();
    Ok(files)
}

fn base_offset(file: &str) -> Result<i64> {
    let stem = Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .context("segment file name")?;
    Ok(stem.parse()?)
}

fn step1(ctx: &Ctx, built: &Path, expected_path: &Path) -> Result<()> {
    let mut writer = Command::new(&ctx.writer);
    writer.arg("build").arg(built).arg(expected_path);
    ctx.run_ok(writer, "step1-seglog-build", Duration::from_mins(2))?;
    let expected = json_lines(&fs::read_to_string(expected_path)?, "expected records")?;
    let mut files = Vec::new();
    for (partition, _) in INDEX_INTERVALS {
        files.extend(segment_files(&built.join(partition))?);
    }
    let list = files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let cmd = ctx.oracle(&[
        "dump",
        "--deep-iteration",
        "--print-data-log",
        "--files",
        &list,
    ]);
    let stdout = ctx.run_ok(cmd, "step1-kafka-dump", Duration::from_mins(3))?;
    let stderr = fs::read_to_string(ctx.log_paths("step1-kafka-dump").1)?;
    let dump = parse_dump(&stdout, &stderr)?;

    // The records Kafka printed are exactly the ones written, partition by partition.
    let mut by_partition: BTreeMap<String, Vec<DumpedRecord>> = BTreeMap::new();
    for v in &expected {
        by_partition
            .entry(v["partition"].as_str().context("partition")?.to_owned())
            .or_default()
            .push(expected_dump_record(v)?);
    }
    let mut total = 0;
    for (partition, want) in &by_partition {
        let got = dump.records.get(partition).map_or(&[][..], Vec::as_slice);
        for (w, g) in want.iter().zip(got) {
            ensure!(
                w == g,
                "{partition}: Kafka printed\n  {g:?}\nwhere seglog wrote\n  {w:?}"
            );
        }
        ensure!(
            want.len() == got.len(),
            "{partition}: seglog wrote {} records, Kafka printed {}",
            want.len(),
            got.len()
        );
        total += got.len();
    }
    ensure!(
        dump.records.keys().all(|p| by_partition.contains_key(p)),
        "Kafka printed records of an unexpected partition"
    );
    let codecs: BTreeSet<&str> = dump
        .records
        .values()
        .flatten()
        .map(|r| r.codec.as_str())
        .collect();
    ensure!(
        CODECS.iter().all(|c| codecs.contains(c)),
        "not every codec was dumped: {codecs:?}"
    );

    // Kafka's complaints: none, except what its dump says about every compacted log.
    let offsets: BTreeMap<String, BTreeSet<i64>> = by_partition
        .iter()
        .map(|(p, rs)| (p.clone(), rs.iter().map(|r| r.offset).collect()))
        .collect();
    let tolerated = check_notes(&dump, &offsets)?;
    eprintln!(
        "kafka-interop: Kafka dumped {} files: {total} records, all as written; {tolerated} notes on the compacted log's gaps and emptied batches checked",
        files.len()
    );
    Ok(())
}

/// Fails on any complaint of Kafka's dump, except two it makes about any compacted log, each
/// checked: a gap in offsets where no written record lies, and a time index entry pointing at a
/// batch the cleaner emptied. Returns how many of those it checked.
fn check_notes(dump: &Dump, offsets: &BTreeMap<String, BTreeSet<i64>>) -> Result<usize> {
    let mut tolerated = 0;
    for problem in &dump.problems {
        if let Some(rest) = problem.strip_prefix("gap ") {
            // "<file> <a> <b>": no written record lies strictly between a and b.
            let mut parts = rest.rsplitn(3, ' ');
            let (b, a, file) = (parts.next(), parts.next(), parts.next());
            let (Some(b), Some(a), Some(file)) = (b, a, file) else {
                bail!("Kafka: {problem}");
            };
            let (a, b): (i64, i64) = (a.parse()?, b.parse()?);
            let written = offsets.get(&partition_of(file)).context(problem.clone())?;
            let start = if a == -1 { base_offset(file)? } else { a + 1 };
            ensure!(
                b >= start && written.range(start..b).next().is_none(),
                "Kafka found offsets {a} -> {b} in {file}, which skips written records"
            );
            tolerated += 1;
        } else if let Some(rest) = problem.strip_prefix("tsmismatch ") {
            // Kafka's dump takes a batch's max record timestamp, -1 for a batch the cleaner
            // emptied (kept for its last offset): allowed only when the time index entry points
            // at such a batch.
            let (file, detail) = rest.split_once(' ').context(problem.clone())?;
            let index_ts: i64 = field(detail, "Index timestamp")
                .map(|s| s.trim_end_matches(','))
                .and_then(|s| s.parse().ok())
                .context(problem.clone())?;
            ensure!(detail.ends_with("log timestamp: -1"), "Kafka: {problem}");
            let entry_file = Path::new(file).display().to_string();
            let entries = dump
                .time_entries
                .iter()
                .find(|(f, _)| {
                    Path::new(f).file_name() == Path::new(&entry_file).file_name()
                        && partition_of(f) == partition_of(&entry_file)
                })
                .map(|(_, e)| e)
                .context(problem.clone())?;
            let (_, offset) = entries
                .iter()
                .find(|(t, _)| *t == index_ts)
                .context(problem.clone())?;
            let log = Path::new(file).with_extension("log").display().to_string();
            let batches = dump
                .batches
                .iter()
                .find(|(f, _)| {
                    Path::new(f).file_name() == Path::new(&log).file_name()
                        && partition_of(f) == partition_of(&log)
                })
                .map(|(_, b)| b)
                .context(problem.clone())?;
            ensure!(
                batches
                    .iter()
                    .any(|(last, count)| last == offset && *count == 0),
                "Kafka: {problem} (offset {offset} is not an emptied batch)"
            );
            tolerated += 1;
        } else {
            bail!("Kafka reported: {problem}");
        }
    }
    Ok(tolerated)
}

// ---------------------------------------------------------------------------------------------
// Step 2

fn step2(ctx: &Ctx, built: &Path) -> Result<()> {
    let mut compared = 0;
    for (partition, interval) in INDEX_INTERVALS {
        let ours = built.join(partition);
        let theirs = ctx.work.join("step2").join(partition);
        fs::create_dir_all(&theirs)?;
        let mut bases = Vec::new();
        for file in segment_files(&ours)? {
            if file.extension().is_some_and(|e| e == "log") {
                let name = file.file_name().context("file name")?;
                fs::copy(&file, theirs.join(name))?;
                bases.push(base_offset(&file.display().to_string())?.to_string());
            }
        }
        let dir = theirs.display().to_string();
        let cmd = ctx.oracle(&[
            "recover",
            &dir,
            &bases.join(","),
            &interval.to_string(),
            &SEGMENT_INDEX_BYTES.to_string(),
        ]);
        let out = ctx.run_ok(
            cmd,
            &format!("step2-kafka-recover-{partition}"),
            Duration::from_mins(3),
        )?;
        let truncated: Vec<&str> = out.lines().collect();
        ensure!(
            truncated.len() == bases.len() && truncated.iter().all(|t| *t == "0"),
            "{partition}: Kafka's recovery truncated bytes: {truncated:?}"
        );
        for base in &bases {
            for ext in ["index", "timeindex"] {
                let name = format!("{:020}.{ext}", base.parse::<i64>()?);
                let a =
                    fs::read(ours.join(&name)).with_context(|| format!("{partition}/{name}"))?;
                let b = fs::read(theirs.join(&name))
                    .with_context(|| format!("Kafka's {partition}/{name}"))?;
                if a != b {
                    let at = a
                        .iter()
                        .zip(&b)
                        .position(|(x, y)| x != y)
                        .unwrap_or(a.len().min(b.len()));
                    bail!(
                        "{partition}/{name}: seglog's ({} bytes) and Kafka's ({} bytes) differ from byte {at}",
                        a.len(),
                        b.len()
                    );
                }
                compared += 1;
            }
        }
    }
    eprintln!("kafka-interop: {compared} index files byte-identical to Kafka's");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Steps 3 and 4: a KRaft broker

/// A formatted single-node KRaft log directory and its configuration.
struct KafkaNode {
    config: PathBuf,
    log_dir: PathBuf,
    bootstrap: String,
    port: u16,
    starts: std::cell::Cell<u32>,
}

impl KafkaNode {
    fn format(ctx: &Ctx) -> Result<Self> {
        let dir = ctx.work.join("kafka");
        let log_dir = dir.join("logs");
        fs::create_dir_all(&dir)?;
        let (port, controller) = (free_port()?, free_port()?);
        ensure!(port != controller, "the same free port twice");
        let config = dir.join("server.properties");
        let text = format!(
            "process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{controller}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs={}
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
background.threads=2
log.cleaner.enable=false
",
            log_dir.display()
        );
        fs::write(&config, text)?;
        let cfg = config.display().to_string();
        let cmd = ctx.oracle(&[
            "storage",
            "format",
            "-t",
            "c2VnbG9nLWludGVyb3AtMQ",
            "-c",
            &cfg,
        ]);
        ctx.run_ok(cmd, "kafka-storage-format", Duration::from_mins(2))?;
        Ok(Self {
            config,
            log_dir,
            bootstrap: format!("127.0.0.1:{port}"),
            port,
            starts: std::cell::Cell::new(0),
        })
    }

    /// Starts the broker and waits until it accepts connections.
    fn start(&self, ctx: &Ctx) -> Result<Broker> {
        let n = self.starts.get() + 1;
        self.starts.set(n);
        let name = format!("broker-{n}");
        let log = ctx.work.join(format!("{name}.log"));
        let mut cmd = Command::new(&ctx.run_sh);
        cmd.args(["broker".as_ref(), self.config.as_os_str(), log.as_os_str()])
            .env("SEGLOG_JAVA_OPTS", BROKER_JAVA_OPTS);
        if std::env::var_os("SEGLOG_M2").is_none() {
            cmd.env("SEGLOG_M2", ctx.root.join("target").join("m2"));
        }
        let (stdout, stderr) = ctx.log_paths(&name);
        let mut guard = Guard::spawn(cmd, &name, &stdout, &stderr, true)?;
        let deadline = Instant::now() + Duration::from_mins(2);
        loop {
            if let Some(status) = guard.try_wait()? {
                bail!(
                    "{name} exited with {status} while starting; see {}",
                    log.display()
                );
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                break;
            }
            ensure!(
                Instant::now() < deadline,
                "{name} did not listen on {} in time; see {}",
                self.bootstrap,
                log.display()
            );
            sleep(Duration::from_millis(200));
        }
        Ok(Broker { guard, log })
    }
}

/// A running broker.
struct Broker {
    guard: Guard,
    log: PathBuf,
}

impl Broker {
    /// SIGTERM (Kafka's controlled shutdown), waiting for the exit.
    fn stop(mut self) -> Result<()> {
        self.guard.signal_group("TERM");
        let status = self
            .guard
            .wait_until(Instant::now() + Duration::from_secs(90))?;
        ensure!(
            status.success() || status.code() == Some(143),
            "the broker exited with {status} on SIGTERM; see {}",
            self.log.display()
        );
        Ok(())
    }

    /// SIGKILL, no shutdown at all.
    fn kill(mut self) {
        self.guard.kill();
    }

    /// Fails on any ERROR line of the broker's log that names `partition`.
    fn errors_about(&self, partition: &str) -> Result<()> {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let bad: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(partition) && (l.contains(" ERROR ") || l.contains(" FATAL ")))
            .collect();
        ensure!(
            bad.is_empty(),
            "the broker logged errors about {partition}:\n{}",
            bad.join("\n")
        );
        Ok(())
    }
}

fn step3a(ctx: &Ctx, kafka: &KafkaNode) -> Result<()> {
    let broker = kafka.start(ctx)?;
    let topic = "kafka_written";
    let cmd = ctx.oracle(&[
        "create-topic",
        &kafka.bootstrap,
        topic,
        "1",
        "segment.bytes=1048576",
    ]);
    ctx.run_ok(cmd, "step3a-create-topic", Duration::from_mins(2))?;
    let cmd = ctx.oracle(&[
        "produce",
        &kafka.bootstrap,
        topic,
        &CODECS.join(","),
        &PRODUCED_PER_CODEC.to_string(),
        "42",
    ]);
    let produced = ctx.run_ok(cmd, "step3a-produce", Duration::from_mins(3))?;
    let mut produced = json_lines(&produced, "produced")?;
    produced.sort_by_key(|v| v["offset"].as_i64());
    ensure!(
        produced.len() == CODECS.len() * PRODUCED_PER_CODEC,
        "the producers acknowledged {} records",
        produced.len()
    );
    broker.errors_about(&format!("{topic}-0"))?;
    broker.stop()?;
    ensure!(
        kafka.log_dir.join(".kafka_cleanshutdown").exists(),
        "the broker left no clean-shutdown marker"
    );
    fs::write(ctx.work.join("step3a-produced.jsonl"), lines_of(&produced))?;

    // seglog check on the broker's whole log directory (the metadata log included).
    let out = ctx.run_ok(
        seglog_cmd(ctx, &["check"], &kafka.log_dir),
        "step3a-seglog-check",
        Duration::from_mins(1),
    )?;
    eprintln!("kafka-interop: seglog check: {}", out.trim());
    // seglog consume returns exactly the acknowledged records.
    let partition = kafka.log_dir.join(format!("{topic}-0"));
    let consumed = ctx.run_ok(
        seglog_cmd(ctx, &["consume", "--json"], &partition),
        "step3a-seglog-consume",
        Duration::from_mins(1),
    )?;
    same_records(
        "seglog consume vs the producers' acknowledgements",
        &produced,
        &json_lines(&consumed, "seglog consume")?,
    )?;
    // Every codec made it to disk.
    let logs = segment_files(&partition)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let dumped = ctx.run_ok(
        {
            let mut c = Command::new(&ctx.seglog);
            c.args(["dump", "--files", &logs]);
            c
        },
        "step3a-seglog-dump",
        Duration::from_mins(1),
    )?;
    for codec in CODECS {
        ensure!(
            dumped.contains(&format!("compresscodec: {codec} ")),
            "no {codec} batch in the broker's log"
        );
    }
    eprintln!(
        "kafka-interop: seglog read the broker's {} records exactly",
        produced.len()
    );
    Ok(())
}

fn seglog_cmd(ctx: &Ctx, args: &[&str], path: &Path) -> Command {
    let mut cmd = Command::new(&ctx.seglog);
    cmd.args(args).arg(path);
    cmd
}

fn lines_of(values: &[Value]) -> String {
    values.iter().fold(String::new(), |mut text, v| {
        text.push_str(&v.to_string());
        text.push('\n');
        text
    })
}

fn step4(ctx: &Ctx, kafka: &KafkaNode) -> Result<Broker> {
    let topic = "kafka_written";
    let partition = kafka.log_dir.join(format!("{topic}-0"));
    let expected_path = ctx.work.join("step4-appended.jsonl");
    let mut writer = Command::new(&ctx.writer);
    writer
        .arg("append")
        .arg(&partition)
        .arg(APPENDED.to_string())
        .arg(&expected_path)
        .arg("segment.bytes=1048576");
    ctx.run_ok(writer, "step4-seglog-append", Duration::from_mins(2))?;
    let produced = json_lines(
        &fs::read_to_string(ctx.work.join("step3a-produced.jsonl"))?,
        "produced",
    )?;
    let appended = json_lines(&fs::read_to_string(&expected_path)?, "appended")?;
    ensure!(
        appended.len() == APPENDED,
        "the writer appended {} records",
        appended.len()
    );
    let mut all = produced;
    all.extend(appended);

    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "consume",
        &kafka.bootstrap,
        topic,
        "0",
        &all.len().to_string(),
        "90000",
    ]);
    let consumed = ctx.run_ok(cmd, "step4-kafka-consume", Duration::from_secs(150))?;
    let consumed = json_lines(&consumed, "Kafka's consumer")?;
    same_records("Kafka's consumer vs what was written", &all, &consumed)?;
    ensure!(
        consumed.iter().all(|v| v["timestamp_type"] == "CreateTime"),
        "a record came back without CreateTime"
    );
    broker.errors_about(&format!("{topic}-0"))?;
    eprintln!(
        "kafka-interop: the broker served all {} records, {APPENDED} of them written by seglog",
        all.len()
    );
    // Step 3b kills a broker mid-produce; this one is reused for it.
    Ok(broker)
}

/// After the SIGKILL and `seglog recover`: every acknowledged record is there, as acknowledged, at
/// its offset; and what lies beyond is what the producer sent next, in order, nothing invented.
fn check_after_kill(acked: Vec<Value>, consumed: &[Value]) -> Result<Vec<Value>> {
    // Every acknowledged record is there, as acknowledged, at its offset.
    let mut acked = acked;
    acked.sort_by_key(|v| v["offset"].as_i64());
    ensure!(
        consumed.len() >= acked.len(),
        "seglog found {} records after recovery, {} were acknowledged",
        consumed.len(),
        acked.len()
    );
    same_records(
        "after SIGKILL and seglog recover, the acknowledged records",
        &acked,
        consumed.get(..acked.len()).unwrap_or_default(),
    )?;
    // What lies beyond is what the producer sent next, in order: nothing invented.
    for (i, v) in consumed.iter().enumerate() {
        ensure!(
            v["offset"].as_i64() == i64::try_from(i).ok(),
            "offset {} at position {i}",
            v["offset"]
        );
        if let Some(value) = v["value"].as_str() {
            let value = b64_decode(value)?;
            let prefix = format!("gzip-{i} ");
            ensure!(
                value.starts_with(prefix.as_bytes()),
                "record {i} after recovery is not the producer's record {i}"
            );
        }
    }
    Ok(acked)
}

fn step3b(ctx: &Ctx, kafka: &KafkaNode, broker: Broker) -> Result<()> {
    let topic = "kafka_killed";
    let cmd = ctx.oracle(&[
        "create-topic",
        &kafka.bootstrap,
        topic,
        "1",
        "segment.bytes=1048576",
    ]);
    ctx.run_ok(cmd, "step3b-create-topic", Duration::from_mins(2))?;
    let (stdout, stderr) = ctx.log_paths("step3b-produce");
    let producer = Guard::spawn(
        ctx.oracle(&["produce", &kafka.bootstrap, topic, "gzip", "forever", "7"]),
        "step3b-produce",
        &stdout,
        &stderr,
        false,
    )?;
    let deadline = Instant::now() + Duration::from_mins(2);
    loop {
        let acked = fs::File::open(&stdout).map_or(0, |f| BufReader::new(f).lines().count());
        if acked >= ACKED_BEFORE_KILL {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "only {acked} records acknowledged before the deadline; see {}",
            stderr.display()
        );
        sleep(Duration::from_millis(20));
    }
    broker.kill();
    // The producer keeps retrying against a dead broker: stop it too.
    drop(producer);
    // The last line may be torn if the producer died while printing it.
    let text = fs::read_to_string(&stdout)?;
    let complete = text.rsplit_once('\n').map_or("", |(done, _)| done);
    let acked = json_lines(complete, "acknowledged")?;
    ensure!(
        acked.len() >= ACKED_BEFORE_KILL,
        "acknowledged {}",
        acked.len()
    );

    let partition = kafka.log_dir.join(format!("{topic}-0"));
    let (before, report) = ctx.run_to_files(
        seglog_cmd(ctx, &["check", "--json"], &kafka.log_dir),
        "step3b-seglog-check-before",
        Duration::from_mins(1),
    )?;
    ensure!(
        before.code() == Some(0) || before.code() == Some(1),
        "seglog check on the killed broker's directory failed ({before}): {report}"
    );
    let recovered = ctx.run_ok(
        seglog_cmd(ctx, &["recover"], &kafka.log_dir),
        "step3b-seglog-recover",
        Duration::from_mins(2),
    )?;
    let checked = ctx.run_ok(
        seglog_cmd(ctx, &["check"], &kafka.log_dir),
        "step3b-seglog-check-after",
        Duration::from_mins(1),
    )?;
    let consumed = ctx.run_ok(
        seglog_cmd(ctx, &["consume", "--json"], &partition),
        "step3b-seglog-consume",
        Duration::from_mins(1),
    )?;
    let consumed = json_lines(&consumed, "seglog consume")?;
    let acked = check_after_kill(acked, &consumed)?;
    let unacked = consumed.len() - acked.len();
    eprintln!(
        "kafka-interop: SIGKILL after {} acknowledged records: check before recovery: {}; recover: {}; check after: {}; {} records recovered, {unacked} beyond the last acknowledgement, all the producer's own",
        acked.len(),
        report.lines().last().unwrap_or_default(),
        recovered
            .lines()
            .filter(|l| l.contains(topic))
            .collect::<Vec<_>>()
            .join("; "),
        checked.trim(),
        consumed.len()
    );
    kafka_serves_recovered(ctx, kafka, topic, &consumed)
}

/// Kafka takes back the directory seglog recovered, and serves exactly what seglog found there.
fn kafka_serves_recovered(
    ctx: &Ctx,
    kafka: &KafkaNode,
    topic: &str,
    consumed: &[Value],
) -> Result<()> {
    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "consume",
        &kafka.bootstrap,
        topic,
        "0",
        &consumed.len().to_string(),
        "90000",
    ]);
    let served = ctx.run_ok(cmd, "step3b-kafka-consume", Duration::from_secs(150))?;
    same_records(
        "Kafka's consumer after seglog recover vs seglog consume",
        consumed,
        &json_lines(&served, "Kafka's consumer")?,
    )?;
    broker.errors_about(&format!("{topic}-0"))?;
    broker.stop()?;
    eprintln!(
        "kafka-interop: a broker restarted on the recovered directory served the same {} records",
        consumed.len()
    );
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn record_lines_are_cut_by_their_sizes() {
        // A value holding " payload: " and trailing spaces, a key, headers.
        let line = "| offset: 7 CreateTime: 1700 keySize: 5 valueSize: 14 sequence: -1 headerKeys: [h0,h1] key: k y z payload: a payload:  b ";
        let r = parse_record(line, "zstd").unwrap();
        assert_eq!(r.offset, 7);
        assert_eq!(r.timestamp, 1700);
        assert_eq!(r.key.as_deref(), Some(&b"k y z"[..]));
        assert_eq!(r.value.as_deref(), Some(&b"a payload:  b "[..]));
        assert_eq!(r.header_keys, ["h0", "h1"]);
        assert_eq!(r.codec, "zstd");
        let line =
            "| offset: 1 CreateTime: -1 keySize: -1 valueSize: -1 sequence: -1 headerKeys: []";
        let r = parse_record(line, "none").unwrap();
        assert_eq!((r.key, r.value, r.header_keys.len()), (None, None, 0));
        let line = "| offset: 1 CreateTime: 5 keySize: -1 valueSize: 2 sequence: -1 headerKeys: [] payload: ab";
        assert_eq!(
            parse_record(line, "none").unwrap().value.as_deref(),
            Some(&b"ab"[..])
        );
        // Sizes that do not fit the line are an error, not a guess.
        let line = "| offset: 1 CreateTime: 5 keySize: 3 valueSize: 2 sequence: -1 headerKeys: [] payload: ab";
        assert!(parse_record(line, "none").is_err());
    }

    #[test]
    fn every_kafka_complaint_is_collected() {
        let stdout = "Dumping /d/t-0/00000000000000000000.log\n\
            baseOffset: 0 lastOffset: 0 count: 1 position: 0 CreateTime: 1 size: 70 magic: 2 compresscodec: none crc: 1 isvalid: false\n\
            | offset: 0 CreateTime: 1 keySize: -1 valueSize: -1 sequence: -1 headerKeys: []\n\
            Found 3 invalid bytes at the end of 00000000000000000000.log\n";
        let stderr = "Mismatches in :/d/t-0/00000000000000000000.index\n  Index offset: 5, log offset: 6\n\
            Non-consecutive offsets in /d/t-0/00000000000000000000.log\n  3 is followed by 5\n\
            Found timestamp mismatch in :/d/t-0/00000000000000000000.timeindex\n  Index timestamp: 9, log timestamp: -1\n\
            something unexpected\n";
        let dump = parse_dump(stdout, stderr).unwrap();
        assert_eq!(dump.records["t-0"].len(), 1);
        assert_eq!(dump.batches["/d/t-0/00000000000000000000.log"], [(0, 1)]);
        let problems = dump.problems.join("\n");
        for expected in [
            "invalid batch",
            "Found 3 invalid bytes",
            "Mismatches in /d/t-0/00000000000000000000.index",
            "Index offset: 5, log offset: 6",
            "gap /d/t-0/00000000000000000000.log 3 5",
            "tsmismatch /d/t-0/00000000000000000000.timeindex Index timestamp: 9, log timestamp: -1",
            "stderr: something unexpected",
        ] {
            assert!(
                problems.contains(expected),
                "{expected} not in:\n{problems}"
            );
        }
    }

    #[test]
    fn records_compare_on_every_field() {
        let a = json_lines(
            r#"{"offset":0,"timestamp":5,"key":null,"value":"YQ==","headers":[{"key":"h","value":null}],"codec":"none"}"#,
            "a",
        )
        .unwrap();
        let same = json_lines(
            r#"{"headers":[{"value":null,"key":"h"}],"value":"YQ==","key":null,"timestamp":5,"offset":0,"timestamp_type":"CreateTime"}"#,
            "b",
        )
        .unwrap();
        same_records("t", &a, &same).unwrap();
        for changed in [
            r#"{"offset":1,"timestamp":5,"key":null,"value":"YQ==","headers":[{"key":"h","value":null}]}"#,
            r#"{"offset":0,"timestamp":6,"key":null,"value":"YQ==","headers":[{"key":"h","value":null}]}"#,
            r#"{"offset":0,"timestamp":5,"key":"YQ==","value":"YQ==","headers":[{"key":"h","value":null}]}"#,
            r#"{"offset":0,"timestamp":5,"key":null,"value":"Yg==","headers":[{"key":"h","value":null}]}"#,
            r#"{"offset":0,"timestamp":5,"key":null,"value":"YQ==","headers":[{"key":"h","value":""}]}"#,
            r#"{"offset":0,"timestamp":5,"key":null,"value":"YQ==","headers":[]}"#,
        ] {
            let b = json_lines(changed, "b").unwrap();
            assert!(same_records("t", &a, &b).is_err(), "{changed}");
        }
        assert!(same_records("t", &a, &[]).is_err());
    }

    #[test]
    fn base64_decodes() {
        assert_eq!(b64_decode("").unwrap(), b"");
        assert_eq!(b64_decode("YQ==").unwrap(), b"a");
        assert_eq!(b64_decode("aGVsbG8gd29ybGQ=").unwrap(), b"hello world");
        assert_eq!(b64_decode("+/8=").unwrap(), [0xfb, 0xff]);
        assert!(b64_decode("a*").is_err());
    }
}

//! Step 10: an operator's session on the broker's log directory, each command judged by the tool
//! it stands in for, on the same data at the same time:
//! - `seglog produce` (`--file`, `--timestamp-field`, `--parse-headers`, `--key-separator`, `-H`)
//!   writes a partition the broker created; the broker serves it to kcat;
//! - `seglog consume --format` and `--json` print what kcat 1.7 (`-f`, `-J`) prints from the
//!   running broker, byte for byte (kcat's `broker` field aside: seglog reads no broker), at both
//!   isolation levels on the transactional topic;
//! - `seglog offsets --time` prints what `kafka-get-offsets.sh` (GetOffsetShell) prints;
//! - `seglog log-dirs --json` prints what `kafka-log-dirs.sh --describe` (LogDirsCommand) prints;
//! - `seglog dump --cluster-metadata-decoder` and `--transaction-log-decoder` print what
//!   DumpLogSegments prints on the broker's `__cluster_metadata` and `__transaction_state`.
//!
//! The whole session (commands and the head of each output) is written to
//! `target/kafka-interop/step10-session.txt`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};

use super::ctx::Ctx;
use super::kraft::KafkaNode;

/// The topic seglog produces into.
const SESSION: &str = "operator_session";
/// Topics earlier steps left in the broker's log directory: one partition each.
const TOPICS: [&str; 3] = ["kafka_written", "transactional", SESSION];
/// Every kcat token (`%R` is the value's length as a big-endian int32).
const FORMAT: &str = r"%t|%p|%o|%T|%K|%k|%S|%s|%h|%R\n";

/// The commands run and the head of what each printed, for the closing report.
struct Session {
    text: String,
}

impl Session {
    fn record(&mut self, command: &str, output: &[u8]) {
        let text = String::from_utf8_lossy(output);
        let lines: Vec<&str> = text.lines().collect();
        let _ = writeln!(self.text, "$ {command}");
        for line in lines.iter().take(6) {
            let _ = writeln!(self.text, "{}", line.chars().take(200).collect::<String>());
        }
        if lines.len() > 6 {
            let _ = writeln!(self.text, "... ({} lines)", lines.len());
        }
        self.text.push('\n');
    }
}

pub(super) fn step10(ctx: &Ctx, kafka: &KafkaNode) -> Result<()> {
    let kcat = kcat()?;
    let mut session = Session {
        text: String::new(),
    };
    let broker = kafka.start(ctx)?;
    ctx.run_ok(
        ctx.oracle(&["create-topic", &kafka.bootstrap, SESSION, "1"]),
        "step10-create-topic",
        Duration::from_mins(2),
    )?;
    broker.stop()?;
    let produced = seglog_produces(ctx, kafka, &mut session)?;

    let broker = kafka.start(ctx)?;
    let mut compared = 0;
    for topic in TOPICS {
        let levels: &[&str] = if topic == "transactional" {
            &["read_uncommitted", "read_committed"]
        } else {
            &["read_uncommitted"]
        };
        for level in levels {
            compared += consume_as_kcat(ctx, kafka, &kcat, topic, level, &mut session)?;
        }
        offsets_as_get_offsets(ctx, kafka, topic, &mut session)?;
    }
    log_dirs_as_kafka(ctx, kafka, &mut session)?;
    broker.errors_about(SESSION)?;
    broker.stop()?;
    let dumped = dumps_as_kafka(ctx, kafka, &mut session)?;
    for (name, args) in [
        ("stats", &["stats", "--topic", "kafka_written"][..]),
        ("log-dirs", &["log-dirs"][..]),
    ] {
        let mut cmd = Command::new(&ctx.seglog);
        cmd.args(args).arg(&kafka.log_dir);
        let out = bytes(ctx, cmd, &format!("step10-seglog-{name}"))?;
        session.record(&format!("seglog {} LOGDIR", args.join(" ")), &out);
    }
    let file = ctx.work.join("step10-session.txt");
    fs::write(&file, &session.text)?;
    eprintln!(
        "kafka-interop: seglog produce wrote {produced} records kcat read back; seglog consume --format and --json equal kcat's {compared} lines on {} topics (both isolation levels on the transactional one), offsets --time equals kafka-get-offsets.sh, log-dirs --json equals kafka-log-dirs.sh --describe, dump's decoders equal DumpLogSegments on {dumped} files; the session: {}",
        TOPICS.len(),
        file.display()
    );
    Ok(())
}

/// kcat from the system (the CI script installs Debian's package).
fn kcat() -> Result<PathBuf> {
    let ok = Command::new("kcat")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        bail!("kcat is missing: install it (Debian's package kcat; .ci/run does)");
    }
    Ok(PathBuf::from("kcat"))
}

/// Runs `cmd` (exit 0 required) and returns its stdout's bytes, which may not be UTF-8.
fn bytes(ctx: &Ctx, cmd: Command, name: &str) -> Result<Vec<u8>> {
    ctx.run_ok(cmd, name, Duration::from_mins(2))?;
    let (stdout, _) = ctx.log_paths(name);
    fs::read(&stdout).with_context(|| stdout.display().to_string())
}

/// Fails, keeping both outputs beside each other, unless they are equal.
fn same(ctx: &Ctx, what: &str, kafka: &[u8], seglog: &[u8]) -> Result<()> {
    if kafka == seglog {
        return Ok(());
    }
    let name = what.replace([' ', '/'], "_");
    let (k, s) = (
        ctx.work.join(format!("{name}.kafka")),
        ctx.work.join(format!("{name}.seglog")),
    );
    fs::write(&k, kafka)?;
    fs::write(&s, seglog)?;
    let (kl, sl) = (
        String::from_utf8_lossy(kafka).into_owned(),
        String::from_utf8_lossy(seglog).into_owned(),
    );
    let first = kl
        .lines()
        .zip(sl.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(kl.lines().count().min(sl.lines().count()));
    bail!(
        "{what}: seglog's output differs from Kafka's at line {} ({} and {})",
        first + 1,
        k.display(),
        s.display()
    )
}

/// `seglog produce` into the session topic, the broker stopped: each line a CreateTime, headers,
/// a key and a value, plus a header for every record. Returns how many records.
fn seglog_produces(ctx: &Ctx, kafka: &KafkaNode, session: &mut Session) -> Result<usize> {
    let mut input = String::new();
    let records = 40;
    for i in 0..records {
        let headers = match i % 3 {
            0 => String::from("trace:t-1,span:s-2"),
            1 => format!("n:{i}"),
            _ => String::from("empty:"),
        };
        let value = if i % 5 == 0 {
            format!("caf\u{e9}-{i} \u{65e5}\u{672c}")
        } else {
            format!("value-{i}")
        };
        let _ = writeln!(
            input,
            "{}\t{headers}\tkey-{}:{value}",
            1_700_000_000_000_i64 + i * 1000,
            i % 7
        );
    }
    let file = ctx.work.join("step10-input.txt");
    fs::write(&file, input)?;
    let partition = kafka.log_dir.join(format!("{SESSION}-0"));
    let args = [
        "--file",
        &file.display().to_string(),
        "--timestamp-field",
        "--parse-headers",
        "--key-separator",
        ":",
        "-H",
        "source=seglog",
        "--batch-records",
        "16",
    ]
    .map(str::to_owned);
    let mut cmd = Command::new(&ctx.seglog);
    cmd.arg("produce").arg(&partition).args(&args);
    let out = bytes(ctx, cmd, "step10-seglog-produce")?;
    session.record(
        &format!("seglog produce LOGDIR/{SESSION}-0 {}", args.join(" ")),
        &out,
    );
    Ok(usize::try_from(records)?)
}

/// kcat `-f` and `-J` from the broker against `seglog consume --format` and `--json` on its
/// directory. Returns the lines compared.
fn consume_as_kcat(
    ctx: &Ctx,
    kafka: &KafkaNode,
    kcat: &Path,
    topic: &str,
    level: &str,
    session: &mut Session,
) -> Result<usize> {
    let kcat_cmd = |extra: &[&str]| {
        let mut cmd = Command::new(kcat);
        cmd.args(["-C", "-b", &kafka.bootstrap, "-t", topic, "-p", "0"])
            .args(["-o", "beginning", "-e", "-q"])
            .args(["-X", &format!("isolation.level={level}")])
            .args(extra);
        cmd
    };
    let seglog_cmd = |extra: &[&str]| {
        let mut cmd = Command::new(&ctx.seglog);
        cmd.arg("consume")
            .arg(&kafka.log_dir)
            .args(["--topic", topic, "--isolation-level", level])
            .args(extra);
        cmd
    };
    let name = format!("step10-{topic}-{level}");
    let k = bytes(ctx, kcat_cmd(&["-f", FORMAT]), &format!("{name}-kcat-f"))?;
    let s = bytes(
        ctx,
        seglog_cmd(&["--format", FORMAT]),
        &format!("{name}-seglog-f"),
    )?;
    same(ctx, &format!("{name} --format"), &k, &s)?;
    session.record(
        &format!(
            "seglog consume LOGDIR --topic {topic} --isolation-level {level} --format '{FORMAT}'"
        ),
        &s,
    );
    let k = bytes(ctx, kcat_cmd(&["-J"]), &format!("{name}-kcat-J"))?;
    // The broker that served each record; seglog reads files, and says -1.
    let k = String::from_utf8(k)
        .context("kcat -J printed bytes that are not UTF-8")?
        .replace(",\"broker\":1,", ",\"broker\":-1,");
    let s = bytes(ctx, seglog_cmd(&["--json"]), &format!("{name}-seglog-J"))?;
    same(ctx, &format!("{name} --json"), k.as_bytes(), &s)?;
    session.record(
        &format!("seglog consume LOGDIR --topic {topic} --isolation-level {level} --json"),
        &s,
    );
    let lines = k.lines().count();
    ensure!(lines > 0, "kcat read nothing of {topic} at {level}");
    Ok(lines * 2)
}

/// GetOffsetShell `--time` -1, -2, -3 and a time within the topic against `seglog offsets`.
fn offsets_as_get_offsets(
    ctx: &Ctx,
    kafka: &KafkaNode,
    topic: &str,
    session: &mut Session,
) -> Result<()> {
    for time in ["-1", "-2", "-3", "1700000020000"] {
        let kafka_out = bytes(
            ctx,
            ctx.oracle(&[
                "tool",
                "org.apache.kafka.tools.GetOffsetShell",
                "--bootstrap-server",
                &kafka.bootstrap,
                "--topic",
                topic,
                "--time",
                time,
            ]),
            &format!("step10-get-offsets-{topic}{time}"),
        )?;
        let mut cmd = Command::new(&ctx.seglog);
        cmd.arg("offsets")
            .arg(&kafka.log_dir)
            .args(["--topic", topic, "--time", time]);
        let ours = bytes(ctx, cmd, &format!("step10-seglog-offsets-{topic}{time}"))?;
        same(
            ctx,
            &format!("offsets {topic} --time {time}"),
            &kafka_out,
            &ours,
        )?;
        session.record(
            &format!("seglog offsets LOGDIR --topic {topic} --time {time}"),
            &ours,
        );
    }
    Ok(())
}

/// LogDirsCommand `--describe` against `seglog log-dirs --json` (its JSON line; Kafka's two lines
/// before it say whom it asked).
fn log_dirs_as_kafka(ctx: &Ctx, kafka: &KafkaNode, session: &mut Session) -> Result<()> {
    let topics = TOPICS.join(",");
    let kafka_out = bytes(
        ctx,
        ctx.oracle(&[
            "tool",
            "org.apache.kafka.tools.LogDirsCommand",
            "--bootstrap-server",
            &kafka.bootstrap,
            "--describe",
            "--topic-list",
            &topics,
        ]),
        "step10-kafka-log-dirs",
    )?;
    let kafka_json = String::from_utf8_lossy(&kafka_out)
        .lines()
        .rfind(|l| l.starts_with('{'))
        .context("kafka-log-dirs.sh printed no JSON")?
        .to_owned();
    let mut cmd = Command::new(&ctx.seglog);
    cmd.arg("log-dirs")
        .arg(&kafka.log_dir)
        .args(["--topic", &topics, "--json"]);
    let ours = bytes(ctx, cmd, "step10-seglog-log-dirs")?;
    same(
        ctx,
        "log-dirs --json",
        format!("{kafka_json}\n").as_bytes(),
        &ours,
    )?;
    session.record(
        &format!("seglog log-dirs LOGDIR --topic {topics} --json"),
        &ours,
    );
    Ok(())
}

/// DumpLogSegments with `--cluster-metadata-decoder` on the metadata log and
/// `--transaction-log-decoder` on every non-empty `__transaction_state` segment, against
/// `seglog dump` with the same flags. Returns how many files.
fn dumps_as_kafka(ctx: &Ctx, kafka: &KafkaNode, session: &mut Session) -> Result<usize> {
    let mut files = 0;
    let mut entries: Vec<PathBuf> = fs::read_dir(&kafka.log_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for dir in entries {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let flag = if name.starts_with("__cluster_metadata-") {
            "--cluster-metadata-decoder"
        } else if name.starts_with("__transaction_state-") {
            "--transaction-log-decoder"
        } else {
            continue;
        };
        for log in super::segment_files::files_with(&dir, &["log"])? {
            if fs::metadata(&log)?.len() == 0 {
                continue;
            }
            let path = log.display().to_string();
            let label = format!("step10-dump-{name}");
            let kafka_out = bytes(
                ctx,
                ctx.oracle(&["dump", flag, "--files", &path]),
                &format!("{label}-kafka"),
            )?;
            let mut cmd = Command::new(&ctx.seglog);
            cmd.args(["dump", flag, "--files", &path]);
            let ours = bytes(ctx, cmd, &format!("{label}-seglog"))?;
            same(ctx, &format!("dump {flag} {name}"), &kafka_out, &ours)?;
            if files < 2 {
                session.record(&format!("seglog dump {flag} --files {name}/..."), &ours);
            }
            files += 1;
        }
    }
    ensure!(files > 0, "no metadata or transaction log segment to dump");
    Ok(files)
}

//! A single-node KRaft broker for steps 3 and 4: its formatted log directory, starting it, and
//! stopping or killing it.

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Result, bail, ensure};

use super::BROKER_JAVA_OPTS;
use super::ctx::Ctx;
use super::guard::Guard;

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A formatted single-node KRaft log directory and its configuration.
pub(super) struct KafkaNode {
    /// Prefixes its brokers' log names (none for the node of steps 3 to 6).
    name: String,
    /// `server.properties` but `log.dirs`.
    properties: String,
    config: PathBuf,
    pub(super) log_dir: PathBuf,
    pub(super) bootstrap: String,
    port: u16,
    starts: std::cell::Cell<u32>,
}

impl KafkaNode {
    /// The node of steps 3 to 6, in `<work>/kafka`.
    pub(super) fn format(ctx: &Ctx) -> Result<Self> {
        Self::format_named(ctx, "kafka", "")
    }

    /// A node of its own in `<work>/<name>`, with `extra` lines of `server.properties`.
    pub(super) fn format_named(ctx: &Ctx, name: &str, extra: &str) -> Result<Self> {
        let dir = ctx.work.join(name);
        let log_dir = dir.join("logs");
        fs::create_dir_all(&dir)?;
        let (port, controller) = (free_port()?, free_port()?);
        ensure!(port != controller, "the same free port twice");
        let config = dir.join("server.properties");
        let properties = format!(
            "process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{controller}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
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
{extra}"
        );
        fs::write(
            &config,
            format!("{properties}log.dirs={}\n", log_dir.display()),
        )?;
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
            name: if name == "kafka" {
                String::new()
            } else {
                format!("{name}-")
            },
            properties,
            config,
            log_dir,
            bootstrap: format!("127.0.0.1:{port}"),
            port,
            starts: std::cell::Cell::new(0),
        })
    }

    /// The same node (configuration, ports, identity) on `log_dir`, a copy of this node's log
    /// directory; its configuration goes to `<work>/<name>/`. Only one of the two may run at a time.
    pub(super) fn on_copy(&self, ctx: &Ctx, name: &str, log_dir: PathBuf) -> Result<Self> {
        let dir = ctx.work.join(name);
        fs::create_dir_all(&dir)?;
        let config = dir.join("server.properties");
        fs::write(
            &config,
            format!("{}log.dirs={}\n", self.properties, log_dir.display()),
        )?;
        Ok(Self {
            name: format!("{name}-"),
            properties: self.properties.clone(),
            config,
            log_dir,
            bootstrap: self.bootstrap.clone(),
            port: self.port,
            starts: std::cell::Cell::new(0),
        })
    }

    /// Starts the broker and waits until it accepts connections.
    pub(super) fn start(&self, ctx: &Ctx) -> Result<Broker> {
        let n = self.starts.get() + 1;
        self.starts.set(n);
        let name = format!("{}broker-{n}", self.name);
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
pub(super) struct Broker {
    guard: Guard,
    log: PathBuf,
}

impl Broker {
    /// SIGTERM (Kafka's controlled shutdown), waiting for the exit.
    pub(super) fn stop(mut self) -> Result<()> {
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

    /// The broker's log4j2 log file.
    pub(super) fn log(&self) -> &std::path::Path {
        &self.log
    }

    /// SIGKILL, no shutdown at all.
    pub(super) fn kill(mut self) {
        self.guard.kill();
    }

    /// Fails on any WARN, ERROR or FATAL line of the broker's log that names `what`.
    pub(super) fn warnings_about(&self, what: &str) -> Result<()> {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let bad: Vec<&str> = text
            .lines()
            .filter(|l| {
                l.contains(what)
                    && (l.contains(" WARN ") || l.contains(" ERROR ") || l.contains(" FATAL "))
            })
            .collect();
        ensure!(
            bad.is_empty(),
            "the broker logged warnings about {what}:\n{}",
            bad.join("\n")
        );
        Ok(())
    }

    /// Fails on any ERROR line of the broker's log that names `partition`.
    pub(super) fn errors_about(&self, partition: &str) -> Result<()> {
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

//! The recover contract (issue 35, item 2), on a copy of each case: `check`, a plain `recover`
//! (no `--full`: Kafka's trust of a clean shutdown, plus what `check` finds), `check` again.
//! A recover that exits 0 must leave nothing for `check` to report and keep exactly the records
//! the rules keep; it never answers "nothing needed recovery" when the first `check` found a
//! problem. A recover that exits 1 must say what it left.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

use super::judge::{Meta, consumed};
use super::proc::{seglog, short};
use super::rules::Expected;

/// Runs the contract on a copy of the case's log directory, removed afterwards; `damaged` is
/// the first `check`'s verdict. Returns how the plain recover ended.
pub(super) fn contract(
    bin: &Path,
    meta: &Meta,
    exp: &Expected,
    damaged: bool,
) -> Result<&'static str> {
    let log_dir = meta.dir.parent().context("the case's log directory")?;
    let copy = log_dir.with_file_name(format!(
        "{}-plain",
        log_dir.file_name().unwrap_or_default().to_string_lossy()
    ));
    if copy.exists() {
        std::fs::remove_dir_all(&copy)?;
    }
    let status = Command::new("cp")
        .arg("-a")
        .arg(log_dir)
        .arg(&copy)
        .status()?;
    ensure!(
        status.success(),
        "copying the case for the plain recover failed"
    );
    let part = copy.join(meta.dir.file_name().unwrap_or_default());
    let part = part.to_str().context("a case path that is not UTF-8")?;
    let ended = judge_plain(bin, part, exp, damaged);
    if ended.is_ok() {
        std::fs::remove_dir_all(&copy)?;
    }
    ended
}

fn judge_plain(bin: &Path, part: &str, exp: &Expected, damaged: bool) -> Result<&'static str> {
    let rec = seglog(bin, &["recover", part], &[0, 1])?;
    if rec.code == 1 {
        ensure!(
            rec.stdout.contains("left as it is"),
            "a plain recover exited 1 without naming what it left: {}",
            short(&rec.stdout)
        );
        return Ok("plain recover: exit 1, a problem left to the operator");
    }
    let nothing = rec.stdout.contains("nothing needed recovery");
    ensure!(
        !(damaged && nothing),
        "a plain recover answered \"nothing needed recovery\" where check found a problem: {}",
        short(&rec.stdout)
    );
    let after = seglog(bin, &["check", part], &[0, 1])?;
    if after.code != 0 {
        bail!(
            "check after a plain recover that exited 0 exited 1: {} (recover said: {})",
            short(&after.stdout),
            short(&rec.stdout)
        );
    }
    let got = consumed(
        &seglog(
            bin,
            &["consume", "--json", "--json-bytes", "base64", part],
            &[0],
        )?
        .stdout,
    )?;
    ensure!(
        got == exp.kept,
        "after a plain recover consume returned {} records, the rules keep {} ({})",
        got.len(),
        exp.kept.len(),
        exp.rule
    );
    Ok(match (damaged, nothing) {
        (true, _) => "plain recover: exit 0, repaired what check found",
        (false, true) => "plain recover: exit 0, nothing needed",
        (false, false) => "plain recover: exit 0, tidied what Kafka's loader tidies",
    })
}

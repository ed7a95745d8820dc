//! The machine and the versions a run records: CPU, memory, kernel, load, tool versions.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

pub(super) fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            let text = if o.stdout.is_empty() {
                o.stderr
            } else {
                o.stdout
            };
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

pub(super) fn machine(root: &Path, load_before: &str, load_after: &str) -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .map(|l| l.trim().to_owned())
        .unwrap_or_default();
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    json!({
        "cpu": cpu,
        "cores": cores,
        "memory": memory,
        "kernel": command_line("uname", &["-sr"]),
        "filesystem": command_line("sh", &["-c", "df -T target | tail -1 | awk '{print $2}'"]),
        "rustc": command_line("rustc", &["-V"]),
        "java": command_line("java", &["-version"]),
        "date": command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        "loadavg_before": load_before,
        "loadavg_after": load_after,
        "commitlog": locked_version(&lock, "commitlog"),
    })
}

/// The version Cargo.lock pins for `name`.
fn locked_version(lock: &str, name: &str) -> String {
    let needle = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == needle
            && let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
        {
            return v.trim_matches('"').to_owned();
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locked_version_reads_the_package_entry() {
        let lock = "[[package]]\nname = \"commitlog\"\nversion = \"0.2.0\"\n";
        assert_eq!(locked_version(lock, "commitlog"), "0.2.0");
        assert_eq!(locked_version(lock, "other"), "");
    }
}

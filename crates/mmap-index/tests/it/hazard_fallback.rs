//! The pin-free lookups where `membarrier` is unavailable: both sides of the hazard handshake
//! then fence (docs/unsafe.md, "Hazard readers"). The choice is made once per process, so the
//! concurrent-lookups stress runs again in a child process of this binary with
//! `SEGLOG_NO_MEMBARRIER=1`, which forces that path.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::process::Command;

const STRESS: &str = "stress_concurrent_lookups::appender_and_readers_agree_with_the_oracle";

#[test]
fn stress_without_membarrier() {
    if std::env::var_os("SEGLOG_NO_MEMBARRIER").is_some() {
        // The child: only the stress runs there.
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", STRESS, "--test-threads=1"])
        .env("SEGLOG_NO_MEMBARRIER", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the stress failed without membarrier: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the stress did not run:\n{stdout}"
    );
}

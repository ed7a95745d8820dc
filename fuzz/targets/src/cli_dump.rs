//! Target `cli_dump`: `seglog dump` on arbitrary files, in-process through the CLI's own entry
//! point ([`seglog_cli::run_with`]), so argument handling is the binary's.
//!
//! Input: a 6-byte header, then the files. Header byte 0: flags (bit 0 `--deep-iteration`, 1
//! `--print-data-log`, 2 `--json`, 3 `--verify-index-only`, 4 `--index-sanity-check`, 5
//! `--skip-record-metadata`, 6 a small `--max-message-size`, 7 a small `--max-bytes`). Byte 1:
//! which files are named (0 the `.log`, 1 the `.index`, 2 the `.timeindex`, 3 all three; the
//! `.log` is always written, since index dumps read it). Bytes 2-3 and 4-5: the lengths of the
//! `.log` and `.index` parts (big-endian); the `.timeindex` is the rest.

use std::path::Path;

use crate::with_scratch_dir;

/// The header's length.
pub(crate) const HEADER: usize = 6;

/// Encodes an input (used by the seeds).
pub(crate) fn with_header(flags: u8, files: u8, log: &[u8], index: &[u8], time: &[u8]) -> Vec<u8> {
    let len16 = |b: &[u8]| u16::try_from(b.len()).unwrap_or(u16::MAX).to_be_bytes();
    let mut out = vec![flags, files];
    out.extend_from_slice(&len16(log));
    out.extend_from_slice(&len16(index));
    out.extend_from_slice(log);
    out.extend_from_slice(index);
    out.extend_from_slice(time);
    out
}

/// The `cli_dump` target.
pub fn cli_dump(data: &[u8]) {
    let mut h = [0_u8; HEADER];
    let n = data.len().min(HEADER);
    if let (Some(dst), Some(src)) = (h.get_mut(..n), data.get(..n)) {
        dst.copy_from_slice(src);
    }
    let [flags, files, l0, l1, i0, i1] = h;
    let rest = data.get(n..).unwrap_or_default();
    let (log, rest) = rest.split_at(usize::from(u16::from_be_bytes([l0, l1])).min(rest.len()));
    let (index, time) = rest.split_at(usize::from(u16::from_be_bytes([i0, i1])).min(rest.len()));
    with_scratch_dir(|dir| dump(dir, flags, files, log, index, time));
}

fn dump(dir: &Path, flags: u8, files: u8, log: &[u8], index: &[u8], time: &[u8]) {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("writing a file to dump");
        path.to_string_lossy().into_owned()
    };
    let log = write("00000000000000000000.log", log);
    let index = write("00000000000000000000.index", index);
    let time = write("00000000000000000000.timeindex", time);
    let named = match files % 4 {
        0 => log,
        1 => index,
        2 => time,
        _ => format!("{log},{index},{time}"),
    };
    let mut args = vec!["seglog".to_owned(), "dump".to_owned()];
    let flag_names = [
        "--deep-iteration",
        "--print-data-log",
        "--json",
        "--verify-index-only",
        "--index-sanity-check",
        "--skip-record-metadata",
    ];
    for (bit, name) in flag_names.iter().enumerate() {
        if flags & (1 << bit) != 0 {
            args.push((*name).to_owned());
        }
    }
    if flags & 0x40 != 0 {
        args.extend(["--max-message-size".to_owned(), "100".to_owned()]);
    }
    if flags & 0x80 != 0 {
        args.extend(["--max-bytes".to_owned(), "200".to_owned()]);
    }
    args.extend(["--files".to_owned(), named]);
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = seglog_cli::run_with(&args, &mut out, &mut err);
    // 0: dumped; 1: a file's bytes are corrupt. 2 is bad usage or an I/O failure, which a file's
    // contents must not cause.
    assert!(
        status <= 1,
        "seglog dump exited with {status}: {}",
        String::from_utf8_lossy(&err)
    );
    if flags & 0x04 != 0 {
        for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(line) {
                panic!(
                    "--json printed a line that is not JSON ({e}): {}",
                    String::from_utf8_lossy(line)
                );
            }
        }
    }
}

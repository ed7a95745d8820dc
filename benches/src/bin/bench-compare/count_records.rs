//! The reader of the whole-process dumps (`cli_dump_deep`): `seglog-bench-compare count-records`
//! reads its stdin (the dump's stdout, through a pipe) to the end and prints how many lines start
//! with `| offset: ` (one per record in a deep dump). It is the same reader for every tool, and as
//! cheap as a reader can be, so that it bounds the fastest dump as little as possible
//! (docs/perf/dump.md). It lives in this release binary, not in the xtask that times the dump,
//! because `cargo xtask` is built without optimizations: a reader there took about 3 s for the
//! 605 MB of a 512 MiB segment's dump, slower than either tool.

use std::io::Read;

use anyhow::Result;

/// Counts stdin's record lines and prints the count.
pub(crate) fn run() -> Result<()> {
    let records = count_record_lines(std::io::stdin().lock())?;
    println!("{records}");
    Ok(())
}

/// The lines of `input` that start with `| offset: `, read in 1 MiB pieces and searched with
/// memchr's `memmem` without copying lines out.
fn count_record_lines(mut input: impl Read) -> Result<u64> {
    const NEEDLE: &[u8] = b"\n| offset: ";
    let finder = memchr::memmem::Finder::new(NEEDLE);
    // The last bytes of the previous piece come first, so a needle cut in two is found once; the
    // stream starts as if after a newline.
    let keep = NEEDLE.len() - 1;
    let mut buf = vec![0_u8; (1 << 20) + keep];
    if let Some(first) = buf.get_mut(keep - 1) {
        *first = b'\n';
    }
    let mut start = keep - 1;
    let mut records = 0_u64;
    loop {
        let n = match input.read(buf.get_mut(keep..).unwrap_or_default()) {
            Ok(0) => return Ok(records),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        let end = keep + n;
        records += finder
            .find_iter(buf.get(start..end).unwrap_or_default())
            .count() as u64;
        // A needle found ends at or after `end - keep + 1`, so the carried bytes hold no whole needle.
        buf.copy_within(end - keep..end, 0);
        start = 0;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, reason = "tests")]
    use super::*;

    /// Reads at most `step` bytes at a time, so that needles are cut at every position.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn record_lines_are_counted_once_wherever_reads_cut_them() -> Result<()> {
        let text = b"| offset: 0 first line\nbaseOffset: 0\n| offset: 1 k\n  | offset: 2 not a record\n| offset: 3\n| offset:";
        for step in 1..=text.len() {
            let counted = count_record_lines(Trickle { data: text, step })?;
            assert_eq!(counted, 3, "reads of {step} bytes");
        }
        assert_eq!(count_record_lines(&b""[..])?, 0);
        Ok(())
    }
}

//! `seglog-bench-compare scale <log|open|compact> --dir D ...`: one size of issue 20's scale runs
//! (seglog only), run by `cargo xtask bench-compare --scale` once per size. Before building anything
//! it checks the free space of `--dir` (statvfs) against what the size needs plus a margin; a size
//! that does not fit prints `{"skipped": reason}` and exits 0, so that the xtask records the skip.
//!
//! ```text
//! scale log     --dir D --mib N --reads N --samples N      append, consume, random read
//! scale open    --dir D --segments N --samples N           open clean and unclean
//! scale compact --dir D --mib N --dedupe-mib N             clean once, in a child process
//! scale clean-child --dir D --mib N --dedupe-mib N         (that child)
//! ```

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::Figure;
use crate::scale_params::ScaleParams;

/// Space kept free beyond a size's own need: 512 MiB or a tenth of the need, whichever is more.
pub(crate) fn margin(need: u64) -> u64 {
    (need / 10).max(512 << 20)
}

/// The bytes a size needs on disk (its data, with the format's overhead and the cleaner's output).
fn need_bytes(kind: &str, p: &ScaleParams) -> u64 {
    let mib = p.mib << 20;
    match kind {
        // 1 KiB x 16 batches: 61 bytes of batch header and 8 per record over 16 KiB of values.
        "log" => mib + mib / 32 + (64 << 20),
        // One batch per segment: its .log, .index, .timeindex and producer snapshot, in 4 KiB blocks.
        "open" => p.segments * (32 << 10) + (64 << 20),
        // The source (keys add 12 bytes a record) and the cleaned copy (a tenth) side by side.
        "compact" => mib + mib / 4 + (64 << 20),
        _ => 0,
    }
}

/// The bytes free to an unprivileged writer on the file system that holds `dir`.
fn free_bytes(dir: &Path) -> Result<u64> {
    let st = rustix::fs::statvfs(dir).with_context(|| format!("statvfs {}", dir.display()))?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// `None` when the size fits, else why not.
pub(crate) fn does_not_fit(need: u64, free: u64, dir: &Path) -> Option<String> {
    let want = need + margin(need);
    (free < want).then(|| {
        format!(
            "needs {:.2} GiB plus a {:.2} GiB margin, {:.2} GiB free (statvfs of {})",
            need as f64 / f64::from(1 << 30),
            margin(need) as f64 / f64::from(1 << 30),
            free as f64 / f64::from(1 << 30),
            dir.display()
        )
    })
}

fn parse(args: impl Iterator<Item = String>) -> Result<ScaleParams> {
    let crate::flags::Flags {
        dir, mut numbers, ..
    } = crate::flags::parse(args, &[])?;
    let mut get = |name: &str, default: u64| numbers.remove(name).unwrap_or(default);
    let params = ScaleParams {
        dir: dir.context("missing --dir")?,
        mib: get("--mib", 0),
        segments: get("--segments", 0),
        reads: get("--reads", 10_000) as usize,
        samples: get("--samples", 3).max(1) as usize,
        dedupe_mib: get("--dedupe-mib", 128),
    };
    if let Some(flag) = numbers.keys().next() {
        bail!("scale: unknown flag {flag}");
    }
    Ok(params)
}

pub(crate) fn run(mut args: impl Iterator<Item = String>) -> Result<()> {
    let kind = args
        .next()
        .context("usage: seglog-bench-compare scale <log|open|compact> --dir D ...")?;
    let params = parse(args)?;
    std::fs::create_dir_all(&params.dir)
        .with_context(|| format!("creating {}", params.dir.display()))?;
    if kind == "clean-child" {
        return crate::scale_compact::child(&params);
    }
    let need = need_bytes(&kind, &params);
    if let Some(reason) = does_not_fit(need, free_bytes(&params.dir)?, &params.dir) {
        println!("{}", json!({ "kind": kind, "skipped": reason }));
        return Ok(());
    }
    let figures: Vec<Figure> = match kind.as_str() {
        "log" => crate::scale_log::run(&params)?,
        "open" => crate::scale_open::run(&params)?,
        "compact" => crate::scale_compact::run(&params)?,
        other => bail!("scale: unknown kind `{other}` (log, open or compact)"),
    };
    let doc = json!({
        "kind": kind,
        "figures": figures.iter().map(Figure::to_json).collect::<Vec<_>>(),
    });
    println!("{doc}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_fits_only_with_its_margin() {
        let dir = Path::new("d");
        let gib = 1_u64 << 30;
        // 10 GiB need a 1 GiB margin; 512 MiB is the least margin.
        assert!(does_not_fit(10 * gib, 11 * gib, dir).is_none());
        let reason = does_not_fit(10 * gib, 11 * gib - 1, dir).unwrap_or_default();
        assert!(reason.contains("needs 10.00 GiB") && reason.contains("statvfs of d"));
        assert_eq!(margin(1 << 20), 512 << 20);
    }
}

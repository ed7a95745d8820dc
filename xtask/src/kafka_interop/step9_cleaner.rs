//! Step 9: Kafka's cleaner, run now on the committed compaction inputs (`testdata/cleaner/`), gives
//! the committed outputs byte for byte. `cleaner_matches_kafka` (crates/log/tests) holds seglog's
//! cleaner to those same outputs, so together they judge seglog's compaction by Kafka's as it is
//! today, not as it was when the goldens were made.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, ensure};

use super::ctx::Ctx;

pub(super) fn step9(ctx: &Ctx) -> Result<()> {
    let goldens = ctx.root.join("testdata").join("cleaner");
    let mut cases: Vec<PathBuf> = fs::read_dir(&goldens)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("passes.txt").is_file())
        .collect();
    cases.sort();
    ensure!(!cases.is_empty(), "no cases under {}", goldens.display());
    let mut files = 0;
    for case in &cases {
        let name = case
            .file_name()
            .context("a case's name")?
            .to_string_lossy()
            .into_owned();
        let out = ctx.work.join(format!("step9-{name}"));
        let _ = fs::remove_dir_all(&out);
        fs::create_dir_all(&out)?;
        let passes = fs::read_to_string(case.join("passes.txt"))?;
        let input = case.join("input").join("cleaner-0");
        let config = case.join("config.properties");
        let mut args: Vec<String> = vec![
            "clean".into(),
            input.display().to_string(),
            config.display().to_string(),
            out.display().to_string(),
        ];
        args.extend(passes.split_whitespace().map(str::to_owned));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let printed = ctx.run_ok(
            ctx.oracle(&args),
            &format!("step9-kafka-clean-{name}"),
            Duration::from_mins(2),
        )?;
        fs::write(out.join("passes.out"), printed)?;
        files += same_tree(&case.join("kafka"), &out)?;
    }
    eprintln!(
        "kafka-interop: Kafka's cleaner on the {} committed inputs gave the committed outputs, {files} files byte for byte",
        cases.len()
    );
    Ok(())
}

/// Fails unless the two trees hold the same files with the same bytes; returns how many.
fn same_tree(want: &Path, got: &Path) -> Result<usize> {
    let (w, g) = (listing(want, want)?, listing(got, got)?);
    ensure!(
        w == g,
        "Kafka's cleaner wrote {g:?} where the goldens in {} hold {w:?}",
        want.display()
    );
    for rel in &w {
        ensure!(
            fs::read(want.join(rel))? == fs::read(got.join(rel))?,
            "{}: Kafka's cleaner now writes other bytes than the golden",
            want.join(rel).display()
        );
    }
    Ok(w.len())
}

fn listing(root: &Path, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(listing(root, &path)?);
        } else {
            out.push(path.strip_prefix(root)?.to_path_buf());
        }
    }
    out.sort();
    Ok(out)
}

//! The generator of `cargo xtask damage-matrix`: a partition written by seglog with every codec,
//! then one copy per case, each damaged by one mutation. Deterministic from the seed.
//!
//! ```text
//! seglog-damage-matrix <seed> <out-dir>
//!     <out-dir>/template/            the undamaged log directory (partition t-0)
//!     <out-dir>/cases/<n>/           case n: a log directory holding t-0, damaged
//!     <out-dir>/cases.jsonl          one line per case: {"id","family","codec","what","expect","dir"}
//! ```
//! A case whose mutation changes no byte is a generator bug and fails the run.

mod case;
mod families;
mod layout;
mod rng;
mod template;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [seed, out] = args.as_slice() else {
        bail!("usage: seglog-damage-matrix <seed> <out-dir>");
    };
    let seed: u64 = seed.parse().context("the seed must be a number")?;
    let out = PathBuf::from(out);
    let mut rng = rng::Rng::new(seed);
    let template_dir = out.join("template");
    std::fs::create_dir_all(&template_dir)?;
    template::write(&template_dir, &mut rng)?;
    let partition = template_dir.join(template::PARTITION);
    let segments = layout::segments(&partition)?;
    let before = tree(&template_dir)?;
    let cases = families::all(&segments, &mut rng);
    let mut list = std::fs::File::create(out.join("cases.jsonl"))?;
    for (id, case) in cases.iter().enumerate() {
        let dir = out.join("cases").join(format!("{id:04}"));
        copy_tree(&template_dir, &dir)?;
        let part = dir.join(template::PARTITION);
        (case.mutate)(&dir, &part).with_context(|| format!("case {id}: {}", case.what))?;
        if tree(&dir)? == before {
            bail!("case {id} ({}: {}) changed nothing", case.family, case.what);
        }
        let line = serde_json::json!({
            "id": id,
            "family": case.family,
            "codec": case.codec,
            "what": case.what,
            "expect": case.expect.name(),
            "dir": part,
        });
        writeln!(list, "{line}")?;
    }
    println!(
        "{} cases from seed {seed}, {} segments",
        cases.len(),
        segments.len()
    );
    Ok(())
}

/// Every file under `dir` (relative path -> bytes), directories as `None`.
pub(crate) fn tree(dir: &Path) -> Result<BTreeMap<PathBuf, Option<Vec<u8>>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            let rel = path.strip_prefix(dir)?.to_path_buf();
            if path.is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path)?));
            }
        }
    }
    Ok(out)
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

//! Every input a fuzzer found a bug with, replayed through its target: the files under
//! `fuzz/regressions/<target>/` (libFuzzer's crash files, or the stable driver's saved inputs,
//! kept as they were found). Each failed before its fix; each fix also has a focused test in the
//! crate it changed.

use std::path::Path;

use seglog_fuzz_targets::Target;

fn replay(target: Target) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../regressions")
        .join(target.name());
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let mut files: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    files.sort();
    for file in &files {
        let data = std::fs::read(file).expect("reading a regression input");
        eprintln!("{}: {}", target.name(), file.display());
        target.run(&data);
    }
    files.len()
}

#[test]
fn record_format() {
    replay(Target::RecordFormat);
}

#[test]
fn index() {
    replay(Target::Index);
}

#[test]
fn segment_recover() {
    replay(Target::SegmentRecover);
}

#[test]
fn cli_dump() {
    replay(Target::CliDump);
}

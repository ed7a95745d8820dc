//! The CI smoke of every fuzz target: each seed as it is, then a fixed number of generated inputs
//! (arbitrary bytes and mutated seeds) through the stable driver, from a fixed random seed so a
//! failure reproduces. `cargo xtask fuzz` runs the same driver (or cargo-fuzz) for longer.

use seglog_fuzz_targets::stable::{self, Budget};
use seglog_fuzz_targets::{Target, seeds};

/// Generated inputs per target: a few seconds each in a debug build.
const CASES: u64 = 256;

fn smoke(target: Target) {
    let seeds = seeds::seeds(target);
    assert!(
        seeds.len() >= 8,
        "{}: only {} seeds",
        target.name(),
        seeds.len()
    );
    for seed in &seeds {
        target.run(seed);
    }
    match stable::run(target, Budget::Cases(CASES), 0x5e6_106) {
        Ok(report) => assert_eq!(report.executions, CASES),
        Err(failure) => panic!("{failure}\ninput: {:02x?}", failure.input),
    }
}

#[test]
fn record_format() {
    smoke(Target::RecordFormat);
}

#[test]
fn index() {
    smoke(Target::Index);
}

#[test]
fn segment_recover() {
    smoke(Target::SegmentRecover);
}

#[test]
fn cli_dump() {
    smoke(Target::CliDump);
}

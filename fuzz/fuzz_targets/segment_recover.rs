//! cargo-fuzz driver of the `segment_recover` target; the body is `seglog_fuzz_targets::segment_recover`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    seglog_fuzz_targets::Target::SegmentRecover.run(data);
});

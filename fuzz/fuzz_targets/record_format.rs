//! cargo-fuzz driver of the `record_format` target; the body is `seglog_fuzz_targets::record_format`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    seglog_fuzz_targets::Target::RecordFormat.run(data);
});

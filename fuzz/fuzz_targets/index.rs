//! cargo-fuzz driver of the `index` target; the body is `seglog_fuzz_targets::index`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    seglog_fuzz_targets::Target::Index.run(data);
});

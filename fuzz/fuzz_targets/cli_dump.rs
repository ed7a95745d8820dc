//! cargo-fuzz driver of the `cli_dump` target; the body is `seglog_fuzz_targets::cli_dump`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    seglog_fuzz_targets::Target::CliDump.run(data);
});

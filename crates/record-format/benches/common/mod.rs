//! Shared data for the benches: JSON-like records and batches built from them.
#![allow(
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::expect_used,
    reason = "bench setup on fixed, known sizes"
)]
#![allow(dead_code, reason = "each bench uses a different part")]

use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

/// Vocabulary of the JSON-like payloads.
const WORDS: [&str; 16] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa",
];

/// A deterministic JSON-like document of about `len` bytes.
pub(crate) fn json_record(i: usize, len: usize) -> Vec<u8> {
    let mut s = format!(
        r#"{{"id":{i},"user":"user-{:05}","event":"{}","ts":{},"tags":["{}","{}"],"payload":""#,
        (i * 7919) % 100_000,
        ["click", "view", "purchase", "scroll"][i % 4],
        1_700_000_000_000u64 + i as u64 * 13,
        ["red", "green", "blue"][i % 3],
        ["eu", "us", "ap"][(i / 3) % 3],
    );
    // Words from a small vocabulary with numbers between them: compressible like real JSON,
    // not like random bytes.
    let mut x = i as u64 ^ 0x9E37_79B9_7F4A_7C15;
    while s.len() + 12 < len {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        s.push_str(WORDS[(x >> 60) as usize]);
        s.push(' ');
        s.push_str(&((x >> 40) % 1000).to_string());
        s.push(' ');
    }
    while s.len() + 2 < len {
        s.push('.');
    }
    s.push_str("\"}");
    s.into_bytes()
}

/// `batches` concatenated batches of `per_batch` records with values of `value_len` bytes.
pub(crate) fn batches(
    batches: usize,
    per_batch: usize,
    value_len: usize,
    codec: Compression,
) -> Vec<u8> {
    let values: Vec<Vec<u8>> = (0..per_batch).map(|i| json_record(i, value_len)).collect();
    let mut builder = BatchBuilder::new();
    let mut out = Vec::new();
    for b in 0..batches {
        let recs = values.iter().enumerate().map(|(i, v)| {
            NewRecord::new(
                i as i32,
                1_700_000_000_000 + i as i64,
                None,
                Some(v.as_slice()),
            )
        });
        let opts = BatchOptions::new((b * per_batch) as i64, codec);
        builder.build(&opts, recs, &mut out).expect("valid batch");
    }
    out
}

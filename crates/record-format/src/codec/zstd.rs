//! zstd (codec 4): standard zstd frames, level 3 (Kafka's default). Reading accepts
//! concatenated and skippable frames; the decoder's window is capped by the output limit so a
//! frame header cannot make it allocate more than the limit allows.

use std::cell::RefCell;

use ::zstd::stream::raw::{DParameter, Decoder, Operation};

use super::CodecError;
use crate::Compression;
use crate::error::{Error, Position, Result};

/// Kafka's default zstd level.
pub const DEFAULT_LEVEL: i32 = 3;

/// Largest window log any zstd frame may use (`ZSTD_WINDOWLOG_MAX_64`).
const WINDOW_LOG_MAX: u32 = 31;
/// Window log always allowed: 8 MiB covers the Java client's streaming frames up to level 19
/// (level 3, Kafka's default, uses 2 MiB), whatever the output limit.
const WINDOW_LOG_FLOOR: u32 = 23;

/// The zstd level for a Kafka level (`None`: the default, 3), or an error out of Kafka's
/// range (-131072 to 22).
pub(crate) fn level(level: Option<i32>) -> Result<i32> {
    let level = level.unwrap_or(DEFAULT_LEVEL);
    if (-131_072..=22).contains(&level) {
        Ok(level)
    } else {
        Err(Error::InvalidInput {
            reason: "zstd level must be -131072 to 22",
        })
    }
}

pub(crate) fn new_compressor_at(level: i32) -> Result<::zstd::bulk::Compressor<'static>> {
    ::zstd::bulk::Compressor::new(level).map_err(|_| Error::InvalidInput {
        reason: "zstd context",
    })
}

/// Appends `input` as one zstd frame to `out`.
pub fn compress(input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    compress_with(&mut new_compressor_at(DEFAULT_LEVEL)?, input, out)
}

pub(crate) fn compress_with(
    c: &mut ::zstd::bulk::Compressor<'static>,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    out.reserve(::zstd::zstd_safe::compress_bound(input.len()));
    let mut cursor = std::io::Cursor::new(&mut *out);
    cursor.set_position(u64::try_from(start).unwrap_or(u64::MAX));
    c.compress_to_buffer(input, &mut cursor)
        .map_err(|_| Error::InvalidInput {
            reason: "zstd compression failed",
        })?;
    Ok(())
}

/// Appends the decompression of `input` to `out`, producing at most `limit` bytes.
pub fn decompress(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<()> {
    decompress_raw(input, out, limit)
        .map_err(|e| e.into_error(Position::Buffer(0), Compression::Zstd))
}

/// Output is produced in steps of at most this many bytes.
const STEP: usize = 64 * 1024;

thread_local! {
    /// One decompression context per thread, reset for every stream: a context and its window
    /// (2 MiB for the Java client's level-3 streaming frames) are not rebuilt per batch.
    static DECODER: RefCell<Option<Decoder<'static>>> = const { RefCell::new(None) };
}

pub(crate) fn decompress_raw(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<(), CodecError> {
    if input.is_empty() {
        return Err(CodecError::Invalid("empty zstd stream"));
    }
    // A window larger than the limit is never needed, so the decoder allocates at most
    // max(limit, 8 MiB) of window whatever the frame header claims.
    let needed = usize::BITS - limit.max(1).leading_zeros();
    let window_log = needed.clamp(WINDOW_LOG_FLOOR, WINDOW_LOG_MAX);
    let start = out.len();
    let result = DECODER.with(|cell| {
        let mut slot = cell
            .try_borrow_mut()
            .map_err(|_| CodecError::Invalid("zstd context busy"))?;
        if slot.is_none() {
            *slot = Some(Decoder::new().map_err(|_| CodecError::Invalid("zstd context"))?);
        }
        let dec = slot.as_mut().ok_or(CodecError::Invalid("zstd context"))?;
        dec.reinit()
            .map_err(|_| CodecError::Invalid("zstd context"))?;
        dec.set_parameter(DParameter::WindowLogMax(window_log))
            .map_err(|_| CodecError::Invalid("zstd window limit"))?;
        run(dec, input, out, start, limit)
    });
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Drives the streaming decoder over `input`, never holding more than `limit + 1` output bytes.
fn run(
    dec: &mut Decoder<'static>,
    input: &[u8],
    out: &mut Vec<u8>,
    start: usize,
    limit: usize,
) -> Result<(), CodecError> {
    let mut pos = 0;
    loop {
        let produced = out.len() - start;
        if produced > limit {
            return Err(CodecError::Limit(limit));
        }
        let window = STEP.min(limit - produced + 1);
        let at = out.len();
        out.resize(at + window, 0);
        let rest = input.get(pos..).unwrap_or_default();
        let dst = out.get_mut(at..).unwrap_or_default();
        let status = dec
            .run_on_buffers(rest, dst)
            .map_err(|_| CodecError::Invalid("corrupt zstd stream"))?;
        out.truncate(at + status.bytes_written);
        pos += status.bytes_read;
        if out.len() - start > limit {
            return Err(CodecError::Limit(limit));
        }
        // `remaining == 0`: the current frame is decoded and flushed.
        if pos == input.len() && status.remaining == 0 {
            return Ok(());
        }
        if status.bytes_read == 0 && status.bytes_written == 0 {
            return Err(CodecError::Invalid("truncated zstd stream"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenated_frames_are_read() {
        let mut z = Vec::new();
        compress(b"abc", &mut z).unwrap();
        compress(b"def", &mut z).unwrap();
        let mut out = Vec::new();
        decompress(&z, &mut out, 100).unwrap();
        assert_eq!(out, b"abcdef");
    }

    #[test]
    fn truncated_frames_are_errors_and_the_context_recovers() {
        let input: Vec<u8> = (0..100_000u32).map(|i| (i % 13).to_be_bytes()[3]).collect();
        let mut z = Vec::new();
        compress(&input, &mut z).unwrap();
        let mut out = Vec::new();
        for cut in [1, z.len() / 2, z.len() - 1] {
            assert!(
                decompress(&z[..cut], &mut out, 1 << 20).is_err(),
                "cut at {cut}"
            );
            assert!(out.is_empty());
        }
        decompress(&z, &mut out, 1 << 20).unwrap();
        assert_eq!(out, input);
    }

    #[test]
    fn skippable_frames_are_skipped() {
        let mut z = vec![0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9];
        compress(b"after", &mut z).unwrap();
        let mut out = Vec::new();
        decompress(&z, &mut out, 100).unwrap();
        assert_eq!(out, b"after");
    }

    #[test]
    fn garbage_is_an_error() {
        let mut out = Vec::new();
        assert!(decompress(b"\x28\xb5\x2f\xfdgarbage", &mut out, 100).is_err());
    }
}

//! zstd (codec 4): standard zstd frames, level 3 (Kafka's default). Reading accepts
//! concatenated and skippable frames; the decoder's window is capped by the output limit so a
//! frame header cannot make it allocate more than the limit allows.

use super::{CodecError, read_bounded};
use crate::Compression;
use crate::error::{Error, Position, Result};

/// Kafka's default zstd level.
pub const DEFAULT_LEVEL: i32 = 3;

/// Largest window log any zstd frame may use (`ZSTD_WINDOWLOG_MAX_64`).
const WINDOW_LOG_MAX: u32 = 31;
/// Window log always allowed: 8 MiB covers the Java client's streaming frames up to level 19
/// (level 3, Kafka's default, uses 2 MiB), whatever the output limit.
const WINDOW_LOG_FLOOR: u32 = 23;

pub(crate) fn new_compressor() -> Result<::zstd::bulk::Compressor<'static>> {
    ::zstd::bulk::Compressor::new(DEFAULT_LEVEL).map_err(|_| Error::InvalidInput {
        reason: "zstd context",
    })
}

/// Appends `input` as one zstd frame to `out`.
pub fn compress(input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    compress_with(&mut new_compressor()?, input, out)
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

pub(crate) fn decompress_raw(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<(), CodecError> {
    if input.is_empty() {
        return Err(CodecError::Invalid("empty zstd stream"));
    }
    let mut dec = ::zstd::stream::read::Decoder::with_buffer(input)
        .map_err(|_| CodecError::Invalid("zstd context"))?;
    // A window larger than the limit is never needed, so the decoder allocates at most
    // max(limit, 8 MiB) of window whatever the frame header claims.
    let needed = usize::BITS - limit.max(1).leading_zeros();
    let window_log = needed.clamp(WINDOW_LOG_FLOOR, WINDOW_LOG_MAX);
    dec.window_log_max(window_log)
        .map_err(|_| CodecError::Invalid("zstd window limit"))?;
    read_bounded(dec, out, limit, "corrupt zstd stream")
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
    fn garbage_is_an_error() {
        let mut out = Vec::new();
        assert!(decompress(b"\x28\xb5\x2f\xfdgarbage", &mut out, 100).is_err());
    }
}

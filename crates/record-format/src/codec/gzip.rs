//! gzip (codec 1): RFC 1952 members, as the JDK's `GZIPOutputStream` writes them. Reading
//! accepts concatenated members, like `GZIPInputStream`.

use flate2::Compression as Level;

use super::{CodecError, read_bounded};
use crate::Compression;
use crate::error::{Error, Position, Result};

/// The 10-byte member header: magic, deflate, no flags, mtime 0, no extra flags, OS unknown
/// (255, as the JDK writes since 16).
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// Kafka's default gzip level, -1: zlib's default (6), as the JDK's `Deflater`.
pub const DEFAULT_LEVEL: i32 = -1;

/// A fresh raw-deflate compressor at the default level (zlib's 6, the JDK's default).
pub(crate) fn new_deflate() -> flate2::Compress {
    flate2::Compress::new(Level::default(), false)
}

/// The zlib level for a Kafka gzip level (`None` or -1: the default, 6), or an error out of
/// Kafka's range (1 to 9, or -1).
pub(crate) fn level(level: Option<i32>) -> Result<i32> {
    match level.unwrap_or(DEFAULT_LEVEL) {
        DEFAULT_LEVEL => Ok(6),
        l @ 1..=9 => Ok(l),
        _ => Err(Error::InvalidInput {
            reason: "gzip level must be 1 to 9, or -1",
        }),
    }
}

/// A fresh raw-deflate compressor at zlib `level` (1 to 9).
pub(crate) fn new_deflate_at(level: i32) -> flate2::Compress {
    flate2::Compress::new(Level::new(level.unsigned_abs()), false)
}

/// Appends `input` as one gzip member at the default level to `out`.
pub fn compress(input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    compress_with(&mut new_deflate(), input, out)
}

/// Appends one gzip member to `out`, reusing `deflate`'s state (reset first).
pub(crate) fn compress_with(
    deflate: &mut flate2::Compress,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    deflate.reset();
    out.extend_from_slice(&HEADER);
    let fail = || Error::InvalidInput {
        reason: "gzip compression failed",
    };
    let mut consumed = 0usize;
    loop {
        // Deflate's worst case is a few bytes per 16 KiB block over the input size.
        out.reserve((input.len() - consumed) + (input.len() >> 12) + 64);
        let rest = input.get(consumed..).unwrap_or_default();
        let before = deflate.total_in();
        let status = deflate
            .compress_vec(rest, out, flate2::FlushCompress::Finish)
            .map_err(|_| fail())?;
        consumed += usize::try_from(deflate.total_in() - before).map_err(|_| fail())?;
        if status == flate2::Status::StreamEnd {
            break;
        }
    }
    write_trailer(out, crc32fast::hash(input), input.len());
    Ok(())
}

#[expect(
    clippy::little_endian_bytes,
    reason = "the gzip trailer (RFC 1952) is little-endian"
)]
fn write_trailer(out: &mut Vec<u8>, crc: u32, len: usize) {
    out.extend_from_slice(&crc.to_le_bytes());
    // ISIZE is the input size modulo 2^32 (truncation intended).
    let isize = u32::try_from(len & 0xffff_ffff).unwrap_or(u32::MAX);
    out.extend_from_slice(&isize.to_le_bytes());
}

/// Appends the decompression of `input` to `out`, producing at most `limit` bytes.
pub fn decompress(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<()> {
    decompress_raw(input, out, limit)
        .map_err(|e| e.into_error(Position::Buffer(0), Compression::Gzip))
}

pub(crate) fn decompress_raw(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<(), CodecError> {
    if input.is_empty() {
        return Err(CodecError::Invalid("empty gzip stream"));
    }
    read_bounded(
        flate2::read::MultiGzDecoder::new(input),
        out,
        limit,
        "corrupt gzip stream",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenated_members_are_read() {
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
        assert!(decompress(b"\x1f\x8bnot gzip at all", &mut out, 100).is_err());
        assert!(decompress(b"", &mut out, 100).is_err());
    }
}

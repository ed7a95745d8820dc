//! snappy (codec 2) in xerial snappy-java's stream framing, which Kafka's Java client writes:
//!
//! ```text
//! 82 53 4E 41 50 50 59 00   magic "\x82SNAPPY\0"
//! 00 00 00 01               int32 BE version = 1
//! 00 00 00 01               int32 BE min compatible version = 1
//! { int32 BE length | raw snappy block }*   one block per 32 KiB of input
//! ```
//!
//! Reading follows `SnappyInputStream`: input that does not start with the magic is one raw
//! (unframed) snappy block; a repeated header between blocks (concatenated streams) is skipped;
//! fewer than 4 trailing bytes end the stream.

use snap::raw::{Decoder, Encoder, decompress_len, max_compress_len};

use super::CodecError;
use crate::Compression;
use crate::error::{Error, Position, Result};

/// The 8-byte xerial magic.
pub const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
/// Full xerial header: magic, version 1, min compatible version 1.
pub const XERIAL_HEADER: [u8; 16] = [
    0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
];
/// xerial's default block size: input is compressed in chunks of this many bytes.
pub const XERIAL_BLOCK_SIZE: usize = 32 * 1024;

/// Appends `input` in xerial framing to `out`.
pub fn compress(input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    compress_with(&mut Encoder::new(), input, out)
}

pub(crate) fn compress_with(enc: &mut Encoder, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    out.extend_from_slice(&XERIAL_HEADER);
    for chunk in input.chunks(XERIAL_BLOCK_SIZE) {
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        let start = out.len();
        out.resize(start + max_compress_len(chunk.len()), 0);
        let dst = out.get_mut(start..).unwrap_or_default();
        let n = enc.compress(chunk, dst).map_err(|_| Error::InvalidInput {
            reason: "snappy block too large",
        })?;
        out.truncate(start + n);
        let n = u32::try_from(n).map_err(|_| Error::InvalidInput {
            reason: "snappy block too large",
        })?;
        if let Some(slot) = out.get_mut(len_at..len_at + 4) {
            slot.copy_from_slice(&n.to_be_bytes());
        }
    }
    Ok(())
}

/// Appends one raw (unframed) snappy block of `input` to `out`.
pub fn compress_raw(input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    out.resize(start + max_compress_len(input.len()), 0);
    let dst = out.get_mut(start..).unwrap_or_default();
    let n = Encoder::new()
        .compress(input, dst)
        .map_err(|_| Error::InvalidInput {
            reason: "snappy input too large",
        })?;
    out.truncate(start + n);
    Ok(())
}

/// Appends the decompression of `input` (xerial-framed or one raw block) to `out`, producing at
/// most `limit` bytes.
pub fn decompress(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<()> {
    decompress_raw(input, out, limit)
        .map_err(|e| e.into_error(Position::Buffer(0), Compression::Snappy))
}

pub(crate) fn decompress_raw(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<(), CodecError> {
    let start = out.len();
    let result = decompress_inner(input, out, limit);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

fn decompress_inner(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), CodecError> {
    if input.is_empty() {
        return Err(CodecError::Invalid("empty snappy stream"));
    }
    let mut dec = Decoder::new();
    let budget = limit;
    let mut produced = 0usize;
    if !is_xerial_header(input) {
        return block(&mut dec, input, out, &mut produced, budget);
    }
    check_version(input)?;
    let mut p = XERIAL_HEADER.len();
    loop {
        let Some(len_bytes) = input.get(p..p + 4) else {
            // End of stream; like xerial, 1-3 stray bytes are not a chunk.
            return Ok(());
        };
        if len_bytes == XERIAL_MAGIC.get(..4).unwrap_or_default() {
            // A concatenated stream: skip its header.
            let rest = input.get(p..).unwrap_or_default();
            if !is_xerial_header(rest) {
                return Err(CodecError::Invalid(
                    "truncated xerial header in concatenated stream",
                ));
            }
            check_version(rest)?;
            p += XERIAL_HEADER.len();
            continue;
        }
        let len = i32::from_be_bytes(be4(len_bytes));
        let len = usize::try_from(len)
            .map_err(|_| CodecError::Invalid("negative xerial chunk length"))?;
        p += 4;
        let chunk = input
            .get(p..p + len)
            .ok_or(CodecError::Invalid("xerial chunk runs past the end"))?;
        block(&mut dec, chunk, out, &mut produced, budget)?;
        p += len;
    }
}

fn is_xerial_header(input: &[u8]) -> bool {
    input.len() >= XERIAL_HEADER.len() && input.get(..8) == Some(&XERIAL_MAGIC[..])
}

fn check_version(header: &[u8]) -> Result<(), CodecError> {
    let version = i32::from_be_bytes(be4(header.get(8..12).unwrap_or_default()));
    // xerial accepts any version >= MINIMUM_COMPATIBLE_VERSION (1).
    if version < 1 {
        return Err(CodecError::Invalid("incompatible xerial snappy version"));
    }
    Ok(())
}

fn be4(b: &[u8]) -> [u8; 4] {
    let mut a = [0u8; 4];
    if let Some(src) = b.get(..4) {
        a.copy_from_slice(src);
    }
    a
}

/// Decompresses one raw block, checking its declared length against the budget first.
fn block(
    dec: &mut Decoder,
    chunk: &[u8],
    out: &mut Vec<u8>,
    produced: &mut usize,
    limit: usize,
) -> Result<(), CodecError> {
    let n =
        decompress_len(chunk).map_err(|_| CodecError::Invalid("corrupt snappy block preamble"))?;
    if n > limit - *produced {
        return Err(CodecError::Limit(limit));
    }
    // Snappy cannot expand a byte into more than a few dozen, so a preamble far beyond what the
    // block could produce is corrupt; refuse it before allocating.
    if n / 64 > chunk.len() {
        return Err(CodecError::Invalid(
            "snappy block declares an impossible length",
        ));
    }
    let start = out.len();
    out.resize(start + n, 0);
    let dst = out.get_mut(start..).unwrap_or_default();
    let got = dec
        .decompress(chunk, dst)
        .map_err(|_| CodecError::Invalid("corrupt snappy block"))?;
    if got != n {
        return Err(CodecError::Invalid("snappy block length mismatch"));
    }
    *produced += n;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xerial_header_and_blocks() {
        let input = vec![7u8; 70_000];
        let mut z = Vec::new();
        compress(&input, &mut z).unwrap();
        assert_eq!(&z[..16], &XERIAL_HEADER);
        // Three chunks: 32 KiB, 32 KiB, 4464 bytes.
        let mut out = Vec::new();
        decompress(&z, &mut out, 70_000).unwrap();
        assert_eq!(out, input);
    }

    #[test]
    fn unframed_raw_block_is_accepted() {
        let mut z = Vec::new();
        compress_raw(b"hello hello hello", &mut z).unwrap();
        let mut out = Vec::new();
        decompress(&z, &mut out, 100).unwrap();
        assert_eq!(out, b"hello hello hello");
    }

    #[test]
    fn concatenated_streams_are_read() {
        let mut z = Vec::new();
        compress(b"abc", &mut z).unwrap();
        compress(b"def", &mut z).unwrap();
        let mut out = Vec::new();
        decompress(&z, &mut out, 100).unwrap();
        assert_eq!(out, b"abcdef");
    }

    #[test]
    fn huge_preamble_is_refused_before_allocating() {
        // Preamble varint claims ~4 GiB.
        let z = [0xff, 0xff, 0xff, 0xff, 0x0f, 0x00];
        let mut out = Vec::new();
        assert!(decompress(&z, &mut out, usize::MAX).is_err());
        assert_eq!(out.capacity(), 0);
    }
}

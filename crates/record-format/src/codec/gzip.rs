//! gzip (codec 1): RFC 1952 members, as the JDK's `GZIPOutputStream` writes them. Reading
//! accepts concatenated members, like `GZIPInputStream`.

use flate2::Compression as Level;

use super::{CodecError, read_bounded};
use crate::Compression;
use crate::error::{Error, Position, Result};

/// Appends `input` as one gzip member at the default level to `out`.
pub fn compress(input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let mut enc = flate2::write::GzEncoder::new(out, Level::default());
    std::io::Write::write_all(&mut enc, input).map_err(|_| Error::InvalidInput {
        reason: "gzip write failed",
    })?;
    enc.finish().map_err(|_| Error::InvalidInput {
        reason: "gzip finish failed",
    })?;
    Ok(())
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

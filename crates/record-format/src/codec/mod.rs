//! The four codecs of a compressed records section, each bounded on the way out.
//!
//! Every decompressor takes a `limit` and fails with [`Error::DecompressLimit`] instead of
//! producing more than `limit` bytes, so a zip bomb costs at most `limit` bytes of memory. Lengths
//! declared inside a stream (snappy's preamble, LZ4 block sizes) are checked against the bytes
//! present and against the limit before anything is allocated. Errors carry positions relative to
//! the compressed input.

#[cfg(feature = "gzip")]
pub mod gzip;
#[cfg(feature = "lz4")]
pub mod lz4;
#[cfg(feature = "snappy")]
pub mod snappy;
#[cfg(feature = "zstd")]
pub mod zstd;

use crate::Compression;
use crate::error::{Error, Position, Result};

/// The cap on one batch's decompressed records section: 64 MiB. One number for writer and
/// reader: every reader decompresses at most this much, and [`crate::BatchBuilder`] (so
/// `seglog produce`) and a leader's append refuse a compressed batch whose records pass it,
/// since it could never be read back.
///
/// Kafka's default `max.message.bytes` is about 1 MiB of *compressed* batch; 64 MiB leaves room
/// for a 64:1 ratio on the largest default batch while keeping a hostile batch's cost bounded.
pub const DEFAULT_MAX_DECOMPRESSED_BYTES: usize = 64 << 20;

/// Why a stream could not be decompressed, before a batch position is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    not(any(
        feature = "gzip",
        feature = "snappy",
        feature = "lz4",
        feature = "zstd"
    )),
    allow(
        dead_code,
        reason = "no codec in this build reports a malformed stream"
    )
)]
pub(crate) enum CodecError {
    /// The stream is malformed.
    Invalid(&'static str),
    /// The output would exceed the limit.
    Limit(usize),
    /// The codec's cargo feature is off in this build.
    Disabled,
}

impl CodecError {
    pub(crate) fn into_error(self, position: Position, codec: Compression) -> Error {
        match self {
            CodecError::Invalid(reason) => Error::Decompress {
                position,
                codec,
                reason,
            },
            CodecError::Limit(limit) => Error::DecompressLimit { position, limit },
            CodecError::Disabled => Error::CodecDisabled {
                codec,
                position: Some(position),
            },
        }
    }
}

/// Reusable compressor state (hash tables, contexts), so building batches does not allocate per batch.
#[derive(Default)]
pub struct Compressor {
    #[cfg(feature = "gzip")]
    deflate: Option<(i32, flate2::Compress)>,
    #[cfg(feature = "lz4")]
    lz4_table: Option<lz4_flex::block::CompressTable>,
    #[cfg(feature = "snappy")]
    snappy: Option<snap::raw::Encoder>,
    #[cfg(feature = "zstd")]
    zstd: Option<(i32, ::zstd::bulk::Compressor<'static>)>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor").finish_non_exhaustive()
    }
}

impl Compressor {
    /// A compressor with no state yet; each codec's state is made on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `input` compressed with `codec` to `out` (`None` copies it), in the framing Kafka
    /// writes for magic 2. A codec whose cargo feature is off is [`Error::CodecDisabled`].
    pub fn compress(&mut self, codec: Compression, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        self.compress_at(codec, None, input, out)
    }

    /// [`Compressor::compress`] at a Kafka compression level (KIP-390), `None` for the codec's
    /// default: gzip 1 to 9 (-1, zlib's default 6), zstd -131072 to 22 (3); snappy has none,
    /// and lz4 is always written with the fast compressor (Kafka's level 9, its default; its
    /// other levels use lz4's high compressor, which this crate does not have). A level out of
    /// range is [`Error::InvalidInput`].
    pub fn compress_at(
        &mut self,
        codec: Compression,
        level: Option<i32>,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        #[cfg(not(all(feature = "gzip", feature = "zstd")))]
        let _ = level;
        match codec {
            Compression::None => {
                out.extend_from_slice(input);
                Ok(())
            }
            #[cfg(feature = "gzip")]
            Compression::Gzip => {
                let level = gzip::level(level)?;
                if self.deflate.as_ref().is_none_or(|(l, _)| *l != level) {
                    self.deflate = Some((level, gzip::new_deflate_at(level)));
                }
                match self.deflate.as_mut() {
                    Some((_, d)) => gzip::compress_with(d, input, out),
                    None => Err(Error::InvalidInput {
                        reason: "gzip compressor unavailable",
                    }),
                }
            }
            #[cfg(feature = "snappy")]
            Compression::Snappy => snappy::compress_with(
                self.snappy.get_or_insert_with(snap::raw::Encoder::new),
                input,
                out,
            ),
            #[cfg(feature = "lz4")]
            Compression::Lz4 => lz4::compress_with(
                self.lz4_table
                    .get_or_insert_with(lz4_flex::block::CompressTable::large),
                input,
                out,
                false,
            ),
            #[cfg(feature = "zstd")]
            Compression::Zstd => {
                let level = zstd::level(level)?;
                if self.zstd.as_ref().is_none_or(|(l, _)| *l != level) {
                    self.zstd = Some((level, zstd::new_compressor_at(level)?));
                }
                match self.zstd.as_mut() {
                    Some((_, c)) => zstd::compress_with(c, input, out),
                    None => Err(Error::InvalidInput {
                        reason: "zstd compressor unavailable",
                    }),
                }
            }
            #[allow(
                unreachable_patterns,
                reason = "reached only when a codec's feature is off"
            )]
            codec => Err(Error::CodecDisabled {
                codec,
                position: None,
            }),
        }
    }
}

/// Appends `input` compressed with `codec` to `out` (a one-off [`Compressor`]).
pub fn compress(codec: Compression, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    Compressor::new().compress(codec, input, out)
}

/// Appends the decompression of `input` to `out`, producing at most `limit` bytes.
///
/// `magic` selects the LZ4 header-checksum rule (magic 0 ignores Kafka's old broken HC byte).
pub fn decompress(
    codec: Compression,
    input: &[u8],
    magic: i8,
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<()> {
    decompress_raw(codec, input, magic, out, limit)
        .map_err(|e| e.into_error(Position::Buffer(0), codec))
}

pub(crate) fn decompress_raw(
    codec: Compression,
    input: &[u8],
    magic: i8,
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<(), CodecError> {
    #[cfg(not(feature = "lz4"))]
    let _ = magic; // only the lz4 frame reads it
    match codec {
        Compression::None => {
            if input.len() > limit {
                return Err(CodecError::Limit(limit));
            }
            out.extend_from_slice(input);
            Ok(())
        }
        #[cfg(feature = "gzip")]
        Compression::Gzip => gzip::decompress_raw(input, out, limit),
        #[cfg(feature = "snappy")]
        Compression::Snappy => snappy::decompress_raw(input, out, limit),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::decompress_raw(input, out, limit, magic == 0),
        #[cfg(feature = "zstd")]
        Compression::Zstd => zstd::decompress_raw(input, out, limit),
        #[allow(
            unreachable_patterns,
            reason = "reached only when a codec's feature is off"
        )]
        _ => Err(CodecError::Disabled),
    }
}

/// Reads everything from `reader` into `out`, failing once more than `limit` bytes came out.
#[cfg(feature = "gzip")]
pub(crate) fn read_bounded(
    mut reader: impl std::io::Read,
    out: &mut Vec<u8>,
    limit: usize,
    invalid: &'static str,
) -> Result<(), CodecError> {
    let start = out.len();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let mut take = std::io::Read::take(&mut reader, cap);
    std::io::Read::read_to_end(&mut take, out).map_err(|_| CodecError::Invalid(invalid))?;
    if out.len() - start > limit {
        out.truncate(start);
        return Err(CodecError::Limit(limit));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips_and_respects_the_limit() {
        let input: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut c = Compressor::new();
        for codec in Compression::ALL {
            let mut z = Vec::new();
            c.compress(codec, &input, &mut z).unwrap();
            let mut out = Vec::new();
            decompress(codec, &z, 2, &mut out, input.len()).unwrap();
            assert_eq!(out, input, "{codec}");
            let mut small = Vec::new();
            let err = decompress(codec, &z, 2, &mut small, input.len() - 1).unwrap_err();
            assert!(
                matches!(err, Error::DecompressLimit { .. }),
                "{codec}: {err}"
            );
        }
    }

    #[test]
    fn empty_input_round_trips() {
        for codec in Compression::ALL {
            let mut z = Vec::new();
            compress(codec, &[], &mut z).unwrap();
            let mut out = Vec::new();
            decompress(codec, &z, 2, &mut out, 10).unwrap();
            assert!(out.is_empty(), "{codec}");
        }
    }
}

//! LZ4 (codec 3) in Kafka's own frame format (`KafkaLZ4BlockOutputStream`), a subset of LZ4
//! frame v1.5.1. The frame's integers are little-endian by the LZ4 specification:
//!
//! ```text
//! 04 22 4D 18        magic 0x184D2204 (u32 LE)
//! 60                 FLG: version 01, independent blocks, no checksums, no content size
//! 40                 BD: 64 KiB maximum block
//! HC                 (xxhash32(FLG..BD, seed 0) >> 8) & 0xFF
//! { u32 LE size (bit 31 = stored uncompressed) | data [| u32 LE block checksum] }*
//! 00 00 00 00        end mark [| u32 LE content checksum]
//! ```
//!
//! Kafka clients before KIP-57 (magic 0) computed HC over the magic too; Java ignores HC for
//! magic 0 and so do we (and we write the broken HC for magic 0). Reading rejects dependent
//! blocks, versions other than 01, reserved bits and block sizes below 64 KiB, as Java does,
//! and accepts the content-size and block/content checksum flags, verifying the checksums.
#![expect(
    clippy::little_endian_bytes,
    reason = "LZ4 frame fields are little-endian by the LZ4 spec"
)]

use lz4_flex::block::{
    CompressTable, compress_into_with_table, decompress_into, get_maximum_output_size,
};
use twox_hash::XxHash32;

use super::CodecError;
use crate::Compression;
use crate::error::{Error, Position, Result};

/// The frame magic, 0x184D2204, as stored (little-endian).
pub const MAGIC: [u8; 4] = [0x04, 0x22, 0x4D, 0x18];
/// FLG written by Kafka: version 01, block independence.
pub const FLG: u8 = 0x60;
/// BD written by Kafka: 64 KiB blocks.
pub const BD: u8 = 0x40;
/// Kafka's block size.
pub const BLOCK_SIZE: usize = 64 * 1024;
/// Bit 31 of a block size: the block is stored uncompressed.
const INCOMPRESSIBLE: u32 = 0x8000_0000;

const FLG_VERSION_MASK: u8 = 0xC0;
const FLG_VERSION_01: u8 = 0x40;
const FLG_INDEPENDENT: u8 = 0x20;
const FLG_BLOCK_CHECKSUM: u8 = 0x10;
const FLG_CONTENT_SIZE: u8 = 0x08;
const FLG_CONTENT_CHECKSUM: u8 = 0x04;
const FLG_RESERVED: u8 = 0x03;

/// The correct header checksum byte for a descriptor.
pub fn header_checksum(descriptor: &[u8]) -> u8 {
    (XxHash32::oneshot(0, descriptor) >> 8).to_le_bytes()[0]
}

/// Appends `input` as a Kafka LZ4 frame to `out`; `broken_hc` writes the magic-0 header checksum.
pub fn compress(input: &[u8], out: &mut Vec<u8>, broken_hc: bool) -> Result<()> {
    compress_with(&mut CompressTable::large(), input, out, broken_hc)
}

pub(crate) fn compress_with(
    table: &mut CompressTable,
    input: &[u8],
    out: &mut Vec<u8>,
    broken_hc: bool,
) -> Result<()> {
    let header_at = out.len();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[FLG, BD]);
    let hc_input = if broken_hc {
        out.get(header_at..)
    } else {
        out.get(header_at + 4..)
    };
    let hc = header_checksum(hc_input.unwrap_or_default());
    out.push(hc);
    for chunk in input.chunks(BLOCK_SIZE) {
        let size_at = out.len();
        out.extend_from_slice(&[0; 4]);
        let start = out.len();
        out.resize(start + get_maximum_output_size(chunk.len()), 0);
        let dst = out.get_mut(start..).unwrap_or_default();
        let n = compress_into_with_table(chunk, dst, table).map_err(|_| Error::InvalidInput {
            reason: "lz4 output buffer too small",
        })?;
        // Kafka stores a block raw when compression does not make it smaller.
        let word = if n >= chunk.len() {
            out.truncate(start);
            out.extend_from_slice(chunk);
            len_u32(chunk.len()) | INCOMPRESSIBLE
        } else {
            out.truncate(start + n);
            len_u32(n)
        };
        if let Some(slot) = out.get_mut(size_at..size_at + 4) {
            slot.copy_from_slice(&word.to_le_bytes());
        }
    }
    out.extend_from_slice(&[0; 4]);
    Ok(())
}

fn len_u32(n: usize) -> u32 {
    // Blocks are at most 64 KiB.
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Appends the decompression of a Kafka LZ4 frame to `out`, producing at most `limit` bytes.
/// `ignore_hc` skips the header checksum (Java does this for magic 0).
pub fn decompress(input: &[u8], out: &mut Vec<u8>, limit: usize, ignore_hc: bool) -> Result<()> {
    decompress_raw(input, out, limit, ignore_hc)
        .map_err(|e| e.into_error(Position::Buffer(0), Compression::Lz4))
}

pub(crate) fn decompress_raw(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
    ignore_hc: bool,
) -> Result<(), CodecError> {
    let start = out.len();
    let r = decompress_inner(input, out, limit, ignore_hc);
    if r.is_err() {
        out.truncate(start);
    }
    r
}

fn le32(input: &[u8], at: usize) -> Result<u32, CodecError> {
    let b = input
        .get(at..at + 4)
        .ok_or(CodecError::Invalid("lz4 stream ended prematurely"))?;
    let mut a = [0u8; 4];
    a.copy_from_slice(b);
    Ok(u32::from_le_bytes(a))
}

/// Parses the frame header; returns (FLG, max block size, position of the first block).
fn read_header(input: &[u8], ignore_hc: bool) -> Result<(u8, usize, usize), CodecError> {
    if input.len() < 6 {
        return Err(CodecError::Invalid("lz4 stream ended prematurely"));
    }
    if input.get(..4) != Some(&MAGIC[..]) {
        return Err(CodecError::Invalid(
            "lz4 stream unsupported (invalid magic bytes)",
        ));
    }
    let flg = input.get(4).copied().unwrap_or(0);
    let bd = input.get(5).copied().unwrap_or(0);
    if flg & FLG_RESERVED != 0 {
        return Err(CodecError::Invalid("lz4 FLG reserved bits must be 0"));
    }
    if flg & FLG_INDEPENDENT == 0 {
        return Err(CodecError::Invalid(
            "lz4 dependent block stream is unsupported",
        ));
    }
    if flg & FLG_VERSION_MASK != FLG_VERSION_01 {
        return Err(CodecError::Invalid("lz4 frame version is unsupported"));
    }
    if bd & 0x8F != 0 {
        return Err(CodecError::Invalid("lz4 BD reserved bits must be 0"));
    }
    let size_code = (bd >> 4) & 0x07;
    if size_code < 4 {
        return Err(CodecError::Invalid(
            "lz4 block size value must be between 4 and 7",
        ));
    }
    let max_block = 1usize << (2 * u32::from(size_code) + 8);
    let mut p = 6;
    if flg & FLG_CONTENT_SIZE != 0 {
        p += 8;
    }
    let hc = *input
        .get(p)
        .ok_or(CodecError::Invalid("lz4 stream ended prematurely"))?;
    if !ignore_hc {
        let expected = header_checksum(input.get(4..p).unwrap_or_default());
        if hc != expected {
            return Err(CodecError::Invalid("lz4 stream frame descriptor corrupted"));
        }
    }
    Ok((flg, max_block, p + 1))
}

fn decompress_inner(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
    ignore_hc: bool,
) -> Result<(), CodecError> {
    let (flg, max_block, mut p) = read_header(input, ignore_hc)?;
    let content_start = out.len();
    loop {
        let word = le32(input, p)?;
        p += 4;
        let stored = word & INCOMPRESSIBLE != 0;
        let size = usize::try_from(word & !INCOMPRESSIBLE).unwrap_or(usize::MAX);
        if size == 0 {
            break;
        }
        if size > max_block {
            return Err(CodecError::Invalid(
                "lz4 block size exceeds the frame maximum",
            ));
        }
        let data = input
            .get(p..p + size)
            .ok_or(CodecError::Invalid("lz4 stream ended prematurely"))?;
        p += size;
        if flg & FLG_BLOCK_CHECKSUM != 0 {
            if le32(input, p)? != XxHash32::oneshot(0, data) {
                return Err(CodecError::Invalid("lz4 block checksum mismatch"));
            }
            p += 4;
        }
        let produced = out.len() - content_start;
        let room = limit - produced;
        if stored {
            if data.len() > room {
                return Err(CodecError::Limit(limit));
            }
            out.extend_from_slice(data);
        } else {
            // A block decompresses to at most max_block bytes; never make room for more than
            // the limit allows (one extra byte tells "exactly full" from "too much").
            let window = max_block.min(room.saturating_add(1));
            let at = out.len();
            out.resize(at + window, 0);
            let dst = out.get_mut(at..).unwrap_or_default();
            let n = decompress_into(data, dst);
            match n {
                Ok(n) if n <= room => out.truncate(at + n),
                Err(_) if window <= room => return Err(CodecError::Invalid("corrupt lz4 block")),
                _ => return Err(CodecError::Limit(limit)),
            }
        }
    }
    if flg & FLG_CONTENT_CHECKSUM != 0 {
        let content = out.get(content_start..).unwrap_or_default();
        if le32(input, p)? != XxHash32::oneshot(0, content) {
            return Err(CodecError::Invalid("lz4 content checksum mismatch"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_bytes_match_kafka() {
        // From Kafka's MessageCompressionTest: v1 HC is 0x82, v0 (broken) HC is 0x1A.
        let mut z = Vec::new();
        compress(b"", &mut z, false).unwrap();
        assert_eq!(z, [0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82, 0, 0, 0, 0]);
        let mut z = Vec::new();
        compress(b"", &mut z, true).unwrap();
        assert_eq!(z, [0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x1A, 0, 0, 0, 0]);
    }

    #[test]
    fn broken_hc_is_rejected_unless_ignored() {
        let mut z = Vec::new();
        compress(b"payload payload payload", &mut z, true).unwrap();
        let mut out = Vec::new();
        assert!(decompress(&z, &mut out, 100, false).is_err());
        decompress(&z, &mut out, 100, true).unwrap();
        assert_eq!(out, b"payload payload payload");
    }

    #[test]
    fn incompressible_blocks_are_stored() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let input: Vec<u8> = (0..100_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                x.to_be_bytes()[0]
            })
            .collect();
        let mut z = Vec::new();
        compress(&input, &mut z, false).unwrap();
        let first = u32::from_le_bytes([z[7], z[8], z[9], z[10]]);
        assert_eq!(first, 0x8000_0000 | 65536);
        let mut out = Vec::new();
        decompress(&z, &mut out, input.len(), false).unwrap();
        assert_eq!(out, input);
    }

    #[test]
    fn dependent_blocks_and_bad_versions_are_rejected() {
        let mut out = Vec::new();
        for (flg, bd) in [
            (0x40u8, 0x40u8),
            (0xA0, 0x40),
            (0x61, 0x40),
            (0x60, 0x30),
            (0x60, 0x41),
        ] {
            let hc = header_checksum(&[flg, bd]);
            let z = [0x04, 0x22, 0x4D, 0x18, flg, bd, hc, 0, 0, 0, 0];
            assert!(
                decompress(&z, &mut out, 100, false).is_err(),
                "{flg:#x} {bd:#x}"
            );
        }
    }

    #[test]
    fn missing_end_mark_is_an_error() {
        let mut z = Vec::new();
        compress(b"abc", &mut z, false).unwrap();
        z.truncate(z.len() - 4);
        let mut out = Vec::new();
        assert!(decompress(&z, &mut out, 100, false).is_err());
    }
}

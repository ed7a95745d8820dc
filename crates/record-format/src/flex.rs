//! A cursor over Kafka's "flexible" message encoding (big-endian integers, unsigned varints,
//! compact arrays and strings, tagged fields), for the KRaft control records. Every read is
//! checked: `None` means the bytes end early or are malformed.

/// A cursor over a flexible-version Kafka message.
pub(crate) struct Flex<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Flex<'a> {
    pub(crate) fn i16(&mut self) -> Option<i16> {
        let v = be16(self.buf, self.pos)?;
        self.pos += 2;
        Some(v)
    }
    pub(crate) fn i32(&mut self) -> Option<i32> {
        let v = be32(self.buf, self.pos)?;
        self.pos += 4;
        Some(v)
    }
    pub(crate) fn i64(&mut self) -> Option<i64> {
        let v = i64::from_be_bytes(self.buf.get(self.pos..self.pos + 8)?.try_into().ok()?);
        self.pos += 8;
        Some(v)
    }
    pub(crate) fn u16(&mut self) -> Option<u16> {
        let v = u16::from_be_bytes(self.buf.get(self.pos..self.pos + 2)?.try_into().ok()?);
        self.pos += 2;
        Some(v)
    }
    pub(crate) fn uuid(&mut self) -> Option<[u8; 16]> {
        let v: [u8; 16] = self.buf.get(self.pos..self.pos + 16)?.try_into().ok()?;
        self.pos += 16;
        Some(v)
    }
    /// A compact array's length (its count plus one as an unsigned varint; 0, null, is refused).
    pub(crate) fn array_len(&mut self) -> Option<u32> {
        self.uvarint()?.checked_sub(1)
    }
    /// A non-null compact string's bytes.
    pub(crate) fn string(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.uvarint()?.checked_sub(1)?).ok()?;
        let v = self.buf.get(self.pos..self.pos.checked_add(len)?)?;
        self.pos += len;
        Some(v)
    }
    /// Unsigned LEB128, at most 5 bytes (Kafka's `readUnsignedVarint`).
    pub(crate) fn uvarint(&mut self) -> Option<u32> {
        let mut v = 0u32;
        for i in 0..5 {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            v |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    /// Skips a tagged-fields section.
    pub(crate) fn tagged_fields(&mut self) -> Option<()> {
        for _ in 0..self.uvarint()? {
            self.uvarint()?;
            let size = usize::try_from(self.uvarint()?).ok()?;
            self.buf.get(self.pos..self.pos.checked_add(size)?)?;
            self.pos += size;
        }
        Some(())
    }
    /// A compact array of `Voter { VoterId int32 }` structs, validated by walking it: its bytes
    /// and count.
    pub(crate) fn voters(&mut self) -> Option<(&'a [u8], u32)> {
        let count = self.uvarint()?.checked_sub(1)?;
        let start = self.pos;
        for _ in 0..count {
            self.i32()?;
            self.tagged_fields()?;
        }
        Some((self.buf.get(start..self.pos)?, count))
    }
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }
}

pub(crate) fn be16(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub(crate) fn be32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

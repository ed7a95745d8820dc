//! Reads a message with its schema as Kafka's generated `read(Readable, short)` does, over a
//! `ByteBufferAccessor`, and builds the tree its generated `JsonConverter.write` would: the fields
//! present at the version in schema order, a tagged field only when it differs from its default.
//! Failures carry the message Kafka's exception has (`getMessage()`; "null" for a buffer underflow).

use super::jackson::Node;
use super::schema::{Field, Type};

/// Java's `getMessage()` of what the read threw.
pub(super) type Failure = String;

/// `BufferUnderflowException`, whose message is null.
fn underflow() -> Failure {
    "null".to_owned()
}

const MAX_COLLECTION: i32 = 1_000_000;
const MAX_TAGGED_FIELDS: i32 = 10_000;

pub(super) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    pub(super) fn remaining(&self) -> i32 {
        i32::try_from(self.buf.len().saturating_sub(self.pos)).unwrap_or(i32::MAX)
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], Failure> {
        let end = self.pos.checked_add(N).ok_or_else(underflow)?;
        let bytes = self.buf.get(self.pos..end).ok_or_else(underflow)?;
        self.pos = end;
        bytes.try_into().map_err(|_| underflow())
    }

    pub(super) fn i8(&mut self) -> Result<i8, Failure> {
        Ok(i8::from_be_bytes(self.take()?))
    }

    pub(super) fn i16(&mut self) -> Result<i16, Failure> {
        Ok(i16::from_be_bytes(self.take()?))
    }

    fn i32(&mut self) -> Result<i32, Failure> {
        Ok(i32::from_be_bytes(self.take()?))
    }

    /// Kafka's `ByteUtils.readUnsignedVarint`, as a Java int.
    pub(super) fn varint(&mut self) -> Result<i32, Failure> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let b = self.take::<1>()?[0];
            value |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value.cast_signed());
            }
        }
        Err(format!(
            "Varint is too long, the most significant bit in the 5th byte is set, converted value: {value:x}"
        ))
    }

    /// `Readable.readArray`.
    fn array(&mut self, len: i32) -> Result<&'a [u8], Failure> {
        let n = usize::try_from(len).map_err(|_| underflow())?;
        if len > self.remaining() {
            return Err(format!(
                "Error reading byte array of {len} byte(s): only {} byte(s) available",
                self.remaining()
            ));
        }
        let bytes = self.buf.get(self.pos..self.pos + n).ok_or_else(underflow)?;
        self.pos += n;
        Ok(bytes)
    }
}

/// One message: the struct at the top of a schema.
pub(super) fn read_message(
    r: &mut Reader<'_>,
    fields: &[Field],
    version: i16,
    flexible: bool,
) -> Result<Node, Failure> {
    read_struct(r, fields, version, flexible)
}

fn read_struct(
    r: &mut Reader<'_>,
    fields: &[Field],
    version: i16,
    flexible: bool,
) -> Result<Node, Failure> {
    let mut values: Vec<Option<Node>> = Vec::with_capacity(fields.len());
    for f in fields {
        values.push(if f.regular_in(version) {
            Some(read_field(r, f, &f.ty, &f.json_name, version, flexible)?)
        } else {
            None
        });
    }
    if flexible {
        let count = r.varint()?;
        if count < 0 {
            return Err(format!("Invalid negative number of tagged fields {count}"));
        }
        if count > r.remaining() {
            return Err(format!(
                "Tried to read {count} tagged fields, but there are only {} bytes remaining.",
                r.remaining()
            ));
        }
        if count > MAX_TAGGED_FIELDS {
            return Err(format!(
                "Tried to read {count} tagged fields, which exceeds the maximum allowed count of {MAX_TAGGED_FIELDS}."
            ));
        }
        for _ in 0..count {
            let tag = r.varint()?;
            let size = r.varint()?;
            let known = fields.iter().position(|f| {
                f.tagged_in(version) && f.tag.and_then(|t| i32::try_from(t).ok()) == Some(tag)
            });
            match known {
                Some(i) => {
                    let f = fields.get(i).ok_or_else(underflow)?;
                    let v = read_field(r, f, &f.ty, &f.json_name, version, flexible)?;
                    if let Some(slot) = values.get_mut(i) {
                        *slot = Some(v);
                    }
                }
                // readUnknownTaggedField: the bytes are kept, and never printed.
                None => {
                    r.array(size)?;
                }
            }
        }
    }
    let mut out = Vec::new();
    for (f, v) in fields.iter().zip(values) {
        if !f.versions.contains(version) {
            continue;
        }
        match v {
            Some(v) if f.regular_in(version) || !is_default(f, &v) => {
                out.push((f.json_name.clone(), v));
            }
            _ => {}
        }
    }
    Ok(Node::Object(out))
}

/// A length as the version encodes it: a compact (varint, plus one) length when flexible.
fn length(r: &mut Reader<'_>, flexible: bool, short: bool) -> Result<i32, Failure> {
    if flexible {
        Ok(r.varint()?.wrapping_sub(1))
    } else if short {
        Ok(i32::from(r.i16()?))
    } else {
        r.i32()
    }
}

fn read_field(
    r: &mut Reader<'_>,
    f: &Field,
    ty: &Type,
    name: &str,
    version: i16,
    flexible: bool,
) -> Result<Node, Failure> {
    // An array's elements are never null: only the field itself is nullable.
    let element = !std::ptr::eq(ty, &raw const f.ty);
    let nullable = !element && f.nullable.contains(version);
    let null_or = |what: &str| {
        if nullable {
            Ok(Node::Null)
        } else {
            Err(format!("non-nullable field {what} was serialized as null"))
        }
    };
    Ok(match ty {
        Type::Bool => Node::Bool(r.i8()? != 0),
        Type::Int8 => Node::Int(r.i8()?.into()),
        Type::Int16 => Node::Int(r.i16()?.into()),
        Type::Uint16 => Node::Int(u16::from_be_bytes(r.take()?).into()),
        Type::Int32 => Node::Int(r.i32()?.into()),
        Type::Uint32 => Node::Int(u32::from_be_bytes(r.take()?).into()),
        Type::Int64 => Node::Int(i64::from_be_bytes(r.take()?)),
        Type::Float64 => Node::Double(f64::from_be_bytes(r.take()?)),
        Type::Uuid => Node::uuid(r.take()?),
        Type::String => {
            let len = length(r, flexible, true)?;
            if len < 0 {
                return null_or(name);
            }
            if len > i32::from(i16::MAX) {
                return Err(format!("string field {name} had invalid length {len}"));
            }
            Node::Text(crate::dump::java_utf8::decode(r.array(len)?))
        }
        Type::Bytes => {
            let len = length(r, flexible, false)?;
            if len < 0 {
                return null_or(name);
            }
            Node::Binary(r.array(len)?.to_vec())
        }
        Type::Array(element) => {
            let len = length(r, flexible, false)?;
            if len < 0 {
                return null_or(name);
            }
            if len > r.remaining() {
                return Err(format!(
                    "Tried to allocate a collection of size {len}, but there are only {} bytes remaining.",
                    r.remaining()
                ));
            }
            if len > MAX_COLLECTION {
                return Err(format!(
                    "Tried to read a collection of size {len}, which exceeds the maximum allowed size of {MAX_COLLECTION}."
                ));
            }
            let element_name = format!("{name} element");
            let mut items = Vec::new();
            for _ in 0..len {
                items.push(read_field(r, f, element, &element_name, version, flexible)?);
            }
            Node::Array(items)
        }
        Type::Struct(fields) => {
            if nullable {
                // A tagged struct says whether it is there with a varint, an untagged one with a byte.
                let present = if f.tagged_in(version) {
                    r.varint()? > 0
                } else {
                    r.i8()? >= 0
                };
                if !present {
                    return Ok(Node::Null);
                }
            }
            read_struct(r, fields, version, flexible)?
        }
    })
}

/// Whether a tagged field's value is its default, which the JSON converter leaves out.
fn is_default(f: &Field, v: &Node) -> bool {
    let d = f.default.as_deref();
    if d == Some("null") {
        return *v == Node::Null;
    }
    match (&f.ty, v) {
        (Type::Bool, Node::Bool(b)) => *b == (d == Some("true")),
        (Type::String, Node::Text(s)) => d.unwrap_or_default() == s,
        (Type::Uuid, Node::Text(s)) => s == "AAAAAAAAAAAAAAAAAAAAAA",
        (Type::Float64, Node::Double(x)) => {
            d.and_then(|d| d.parse::<f64>().ok())
                .unwrap_or(0.0)
                .to_bits()
                == x.to_bits()
        }
        (_, Node::Int(i)) => parse_int(d) == Some(*i),
        (Type::Bytes, Node::Binary(b)) => b.is_empty(),
        (Type::Array(_), Node::Array(items)) => items.is_empty(),
        (Type::Struct(fields), Node::Object(values)) => values.iter().all(|(name, value)| {
            fields
                .iter()
                .find(|g| &g.json_name == name)
                .is_some_and(|g| is_default(g, value))
        }),
        _ => false,
    }
}

fn parse_int(d: Option<&str>) -> Option<i64> {
    match d {
        None => Some(0),
        Some(s) => s
            .strip_prefix("0x")
            .map_or_else(|| s.parse().ok(), |hex| i64::from_str_radix(hex, 16).ok()),
    }
}

//! `ClusterMetadataLogMessageParser`: a `__cluster_metadata` record's value through Kafka's
//! `MetadataRecordSerde` (`AbstractApiMessageSerde.read`: frame version, type, version as unsigned
//! varints, the message, no bytes after it), printed as `{"type":...,"version":...,"data":...}`.

use super::jackson::Node;
use super::reader::{Reader, read_message};
use super::registry;

/// Kafka's `unsignedIntToShort`.
fn small(r: &mut Reader<'_>, entity: &str) -> Result<i16, String> {
    let v = r
        .varint()
        .map_err(|_| format!("Error while reading {entity}"))?;
    if v > i32::from(i16::MAX) {
        return Err(format!("Value for {entity} was too large."));
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "Java's (short) cast of a negative int"
    )]
    Ok(v as i16)
}

/// `MetadataRecordType`'s name: the schema's name in upper snake case.
fn type_name(schema_name: &str) -> String {
    let mut out = String::new();
    for (i, c) in schema_name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn decode(value: Option<&[u8]>) -> Result<String, String> {
    let mut r = Reader::new(value.unwrap_or_default());
    let frame = small(&mut r, "frame version")?;
    if frame == 0 {
        return Err("Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.".to_owned());
    }
    if frame != 1 {
        return Err(format!(
            "Could not deserialize metadata record due to unknown frame version {frame}(only frame version 1 is supported)"
        ));
    }
    let api_key = small(&mut r, "type")?;
    let version = small(&mut r, "version")?;
    let schema = registry::cluster_metadata().find("metadata", api_key).ok_or_else(|| {
        format!("org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}")
    })?;
    let data = read_message(
        &mut r,
        &schema.fields,
        version,
        schema.flexible.contains(version),
    )
    .map_err(|_| format!("Failed to deserialize record with type {api_key}"))?;
    if r.remaining() > 0 {
        return Err(format!(
            "Found {} byte(s) of garbage after {api_key}",
            r.remaining()
        ));
    }
    let json = Node::Object(vec![
        ("type".to_owned(), Node::Text(type_name(&schema.name))),
        ("version".to_owned(), Node::Int(version.into())),
        ("data".to_owned(), data),
    ]);
    Ok(json.to_json())
}

/// The payload Kafka prints (metadata records have no key).
pub(super) fn parse(offset: i64, value: Option<&[u8]>) -> String {
    decode(value).unwrap_or_else(|e| format!("Error at {offset}, skipping. {e}"))
}

#[cfg(test)]
mod tests {
    use super::{parse, type_name};

    #[test]
    fn names_types_as_kafka_does() {
        assert_eq!(type_name("RegisterBrokerRecord"), "REGISTER_BROKER_RECORD");
        assert_eq!(type_name("NoOpRecord"), "NO_OP_RECORD");
    }

    #[test]
    fn prints_kafka_errors() {
        assert_eq!(
            parse(3, None),
            "Error at 3, skipping. Error while reading frame version"
        );
        assert_eq!(
            parse(3, Some(&[1, 99, 0])),
            "Error at 3, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 99"
        );
        // A NoOpRecord (type 20: no fields, no tagged fields), then with one byte too many.
        assert_eq!(
            parse(4, Some(&[1, 20, 0, 0])),
            r#"{"type":"NO_OP_RECORD","version":0,"data":{}}"#
        );
        assert_eq!(
            parse(4, Some(&[1, 20, 0, 0, 7])),
            "Error at 4, skipping. Found 1 byte(s) of garbage after 20"
        );
    }
}

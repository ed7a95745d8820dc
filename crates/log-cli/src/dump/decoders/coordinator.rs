//! `CoordinatorRecordMessageParser` with `GroupCoordinatorRecordSerde` (`--offsets-decoder`),
//! `TransactionCoordinatorRecordSerde` (`--transaction-log-decoder`) or
//! `ShareCoordinatorRecordSerde` (`--share-group-state-decoder`): the key is a record type (int16)
//! and a key message, the value a version (int16) and a value message, a null value a tombstone.
//! The key prints as `{"type":"<type>","data":...}`, the value as `{"version":"<v>","data":...}` or
//! `<DELETE>`. `GroupMetadataValue`'s consumer subscriptions and assignments and the transaction
//! state get the readable forms Kafka's tool gives them.

use super::jackson::Node;
use super::reader::{Reader, read_message};
use super::registry;
use super::schema::Schema;

#[derive(Debug, Clone, Copy)]
pub(super) enum Family {
    Group,
    Transaction,
    ShareGroupState,
}

/// How one record fails, as `parse` tells it apart.
enum Failure {
    UnknownType(i16),
    Other(String),
}

fn read_version(r: &mut Reader<'_>, name: &str) -> Result<i16, Failure> {
    r.i16()
        .map_err(|_| Failure::Other(format!("Could not read version from {name}'s buffer.")))
}

fn read(
    schema: &Schema,
    bytes: &[u8],
    version: i16,
    read_as: i16,
    name: &str,
) -> Result<Node, Failure> {
    let mut r = Reader::new(bytes);
    r.i16()
        .map_err(|_| Failure::Other(format!("Could not read version from {name}'s buffer.")))?;
    read_message(
        &mut r,
        &schema.fields,
        read_as,
        schema.flexible.contains(read_as),
    )
    .map_err(|e| {
        Failure::Other(format!(
            "Could not read record with version {version} from {name}'s buffer due to: {e}."
        ))
    })
}

fn decode(family: Family, key: &[u8], value: Option<&[u8]>) -> Result<(String, String), Failure> {
    let schemas = match family {
        Family::Group => registry::group(),
        Family::Transaction => registry::transaction(),
        Family::ShareGroupState => registry::share_group_state(),
    };
    let record_type = read_version(&mut Reader::new(key), "key")?;
    let key_schema = schemas
        .find("coordinator-key", record_type)
        .ok_or(Failure::UnknownType(record_type))?;
    // A key message has one version, 0, whatever the record type says: its fields are read as they are.
    let key_json = read(key_schema, key, record_type, 0, "key")?;
    let key_out = Node::Object(vec![
        ("type".to_owned(), Node::Text(record_type.to_string())),
        ("data".to_owned(), key_json),
    ]);
    let Some(value) = value else {
        return Ok((key_out.to_json(), "<DELETE>".to_owned()));
    };
    let value_schema = schemas
        .find("coordinator-value", record_type)
        .ok_or(Failure::UnknownType(record_type))?;
    let version = read_version(&mut Reader::new(value), "value")?;
    if i32::from(version) < value_schema.valid.lowest()
        || i32::from(version) > value_schema.valid.highest()
    {
        return Err(Failure::Other(format!(
            "Found an unknown record version {version} for {record_type} type"
        )));
    }
    let mut data = read(value_schema, value, version, version, "value")?;
    match (family, value_schema.name.as_str()) {
        (Family::Group, "GroupMetadataValue") => consumer_members(&mut data),
        (Family::Transaction, "TransactionLogValue") => transaction_state(&mut data),
        _ => {}
    }
    let value_out = Node::Object(vec![
        ("version".to_owned(), Node::Text(version.to_string())),
        ("data".to_owned(), data),
    ]);
    Ok((key_out.to_json(), value_out.to_json()))
}

/// Kafka's `prepareGroupMetadataValue`: in a group of protocol type "consumer", each member's
/// `subscription` and `assignment` bytes are a versioned `ConsumerProtocolSubscription` /
/// `ConsumerProtocolAssignment`, printed as JSON when they decode and left as base64 when not.
fn consumer_members(data: &mut Node) {
    if data.get("protocolType") != Some(&Node::Text("consumer".to_owned())) {
        return;
    }
    let Node::Object(fields) = data else { return };
    let Some((_, Node::Array(members))) = fields.iter_mut().find(|(k, _)| k == "members") else {
        return;
    };
    for member in members {
        for (field, schema) in [
            ("subscription", "ConsumerProtocolSubscription"),
            ("assignment", "ConsumerProtocolAssignment"),
        ] {
            let Some(Node::Binary(bytes)) = member.get(field) else {
                continue;
            };
            let Some(schema) = registry::clients().named(schema) else {
                continue;
            };
            let mut r = Reader::new(bytes);
            let Ok(version) = r.i16() else { continue };
            if let Ok(json) = read_message(
                &mut r,
                &schema.fields,
                version,
                schema.flexible.contains(version),
            ) {
                member.set(field, json);
            }
        }
    }
}

/// `TransactionState.fromId(...).stateName()`, or the number when it names no state.
fn transaction_state(data: &mut Node) {
    let Some(Node::Int(id)) = data.get("transactionStatus") else {
        return;
    };
    let name = match id {
        0 => "Empty",
        1 => "Ongoing",
        2 => "PrepareCommit",
        3 => "PrepareAbort",
        4 => "CompleteCommit",
        5 => "CompleteAbort",
        6 => "Dead",
        7 => "PrepareEpochFence",
        other => {
            let s = other.to_string();
            data.set("transactionStatus", Node::Text(s));
            return;
        }
    };
    data.set("transactionStatus", Node::Text(name.to_owned()));
}

/// Kafka's `parse`: the key and the payload to print. A record without a key makes Kafka's tool
/// throw; that is the error.
pub(super) fn parse(
    family: Family,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<(Option<String>, Option<String>), String> {
    let Some(key) = key else {
        return Err(format!(
            "Failed to decode message at offset {offset} using the specified decoder (message had a missing key)"
        ));
    };
    Ok(match decode(family, key, value) {
        Ok((k, v)) => (Some(k), Some(v)),
        Err(Failure::UnknownType(t)) => (
            Some(format!(
                "Unknown record type {t} at offset {offset}, skipping."
            )),
            None,
        ),
        Err(Failure::Other(e)) => (
            Some(format!("Error at offset {offset}, skipping. {e}")),
            None,
        ),
    })
}

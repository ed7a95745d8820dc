//! A control record as Kafka's `DumpLogSegments.printControlRecord` prints it: transaction
//! markers as `endTxnMarker: COMMIT coordinatorEpoch: N`, the KRaft records as the JSON of
//! Kafka's generated `*JsonConverter.write` (fields in schema order, camelCase names, Jackson's
//! compact form), any other type as `controlType: NAME(id)`.

use std::fmt::Write;

use seglog_log::record::{
    ControlRecord, ControlRecordType, ControlValue, KraftVoter, LeaderChange, kraft_voters,
};

pub(super) fn control_text(c: &ControlRecord<'_>) -> String {
    match (&c.kind, &c.value) {
        (ControlRecordType::Abort | ControlRecordType::Commit, ControlValue::EndTransaction(m)) => {
            let name = if c.kind == ControlRecordType::Abort {
                "ABORT"
            } else {
                "COMMIT"
            };
            format!(
                " endTxnMarker: {name} coordinatorEpoch: {}",
                m.coordinator_epoch
            )
        }
        (_, ControlValue::LeaderChange(l)) => format!(" LeaderChange: {}", leader_change(l)),
        (
            _,
            ControlValue::SnapshotHeader {
                version,
                last_contained_log_timestamp,
            },
        ) => format!(
            " SnapshotHeader {{\"version\":{version},\"lastContainedLogTimestamp\":{last_contained_log_timestamp}}}"
        ),
        (_, ControlValue::SnapshotFooter { version }) => {
            format!(" SnapshotFooter {{\"version\":{version}}}")
        }
        (
            _,
            ControlValue::KraftVersion {
                version,
                kraft_version,
            },
        ) => format!(" KRaftVersion {{\"version\":{version},\"kRaftVersion\":{kraft_version}}}"),
        (_, ControlValue::KraftVoters { version, rest }) => match kraft_voters(rest) {
            Some(voters) => format!(
                " KRaftVoters {{\"version\":{version},\"voters\":[{}]}}",
                voters.iter().map(voter).collect::<Vec<_>>().join(",")
            ),
            // parse_control checked the voters; this is not reached.
            None => " KRaftVoters (malformed)".to_owned(),
        },
        (t, _) => format!(" controlType: {}({})", type_name(*t), t.id()),
    }
}

fn type_name(t: ControlRecordType) -> &'static str {
    match t {
        ControlRecordType::Abort => "ABORT",
        ControlRecordType::Commit => "COMMIT",
        ControlRecordType::LeaderChange => "LEADER_CHANGE",
        ControlRecordType::SnapshotHeader => "SNAPSHOT_HEADER",
        ControlRecordType::SnapshotFooter => "SNAPSHOT_FOOTER",
        ControlRecordType::KraftVersion => "KRAFT_VERSION",
        ControlRecordType::KraftVoters => "KRAFT_VOTERS",
        ControlRecordType::Unknown(_) => "UNKNOWN",
    }
}

fn leader_change(l: &LeaderChange<'_>) -> String {
    let ids = |ids: &mut dyn Iterator<Item = i32>| {
        ids.map(|id| format!("{{\"voterId\":{id}}}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "{{\"version\":{},\"leaderId\":{},\"voters\":[{}],\"grantingVoters\":[{}]}}",
        l.version,
        l.leader_id,
        ids(&mut l.voters.iter()),
        ids(&mut l.granting_voters.iter())
    )
}

fn voter(v: &KraftVoter<'_>) -> String {
    let endpoints: Vec<String> = v
        .endpoints
        .iter()
        .map(|e| {
            format!(
                "{{\"name\":{},\"host\":{},\"port\":{}}}",
                json_string(&e.name),
                json_string(&e.host),
                e.port
            )
        })
        .collect();
    format!(
        "{{\"voterId\":{},\"voterDirectoryId\":\"{}\",\"endpoints\":[{}],\"kRaftVersionFeature\":{{\"minSupportedVersion\":{},\"maxSupportedVersion\":{}}}}}",
        v.voter_id,
        uuid(&v.directory_id),
        endpoints.join(","),
        v.min_supported_version,
        v.max_supported_version
    )
}

/// Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, without padding.
fn uuid(bytes: &[u8; 16]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let digit = |v: u32| char::from(ALPHABET.get((v & 63) as usize).copied().unwrap_or(b'A'));
    let mut out = String::with_capacity(22);
    let (mut acc, mut bits) = (0_u32, 0_u32);
    for &b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(digit(acc >> bits));
        }
    }
    if bits > 0 {
        out.push(digit(acc << (6 - bits)));
    }
    out
}

/// A JSON string as Jackson writes it: `"` and `\` escaped, control characters as the short
/// escapes where JSON has one and `\u00XX` otherwise, everything else as it is.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_print_as_kafkas_base64() {
        assert_eq!(uuid(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(uuid(&[0xff; 16]), "_____________________w");
    }

    #[test]
    fn strings_escape_as_jackson() {
        assert_eq!(json_string("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }
}

//! Control records (records of a control batch, attribute bit 5), decoded into a typed form.
//!
//! ```text
//! key   = int16 version (0) | int16 type
//! value = int16 version | int32 coordinatorEpoch     (ABORT / COMMIT: EndTransactionMarker)
//! ```
//!
//! KRaft types (LEADER_CHANGE, SNAPSHOT_HEADER/FOOTER, KRAFT_VERSION, KRAFT_VOTERS) keep their
//! value bytes as they are; Kafka's own `ControlRecordType.parse` and
//! `EndTransactionMarker.deserializeValue` rules decide what is corrupt.

use crate::error::{CorruptKind, Error, Field, Position, Result};
use crate::record::RecordView;

/// The control record type (key bytes 2..4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// 0: transaction aborted.
    Abort,
    /// 1: transaction committed.
    Commit,
    /// 2: KRaft leader change.
    LeaderChange,
    /// 3: KRaft snapshot header.
    SnapshotHeader,
    /// 4: KRaft snapshot footer.
    SnapshotFooter,
    /// 5: KRaft version.
    KraftVersion,
    /// 6: KRaft voters.
    KraftVoters,
    /// Any other type id (Kafka's UNKNOWN).
    Unknown(i16),
}

impl ControlRecordType {
    /// The type for an id.
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            2 => ControlRecordType::LeaderChange,
            3 => ControlRecordType::SnapshotHeader,
            4 => ControlRecordType::SnapshotFooter,
            5 => ControlRecordType::KraftVersion,
            6 => ControlRecordType::KraftVoters,
            other => ControlRecordType::Unknown(other),
        }
    }

    /// The id written in the key.
    pub fn id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::LeaderChange => 2,
            ControlRecordType::SnapshotHeader => 3,
            ControlRecordType::SnapshotFooter => 4,
            ControlRecordType::KraftVersion => 5,
            ControlRecordType::KraftVoters => 6,
            ControlRecordType::Unknown(id) => id,
        }
    }

    /// The 4-byte key Kafka writes for this type (version 0).
    pub fn key_bytes(self) -> [u8; 4] {
        let t = self.id().to_be_bytes();
        [0, 0, t[0], t[1]]
    }
}

/// The value of an ABORT or COMMIT record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EndTransactionMarker {
    /// Value version (0 today).
    pub version: i16,
    /// The transaction coordinator's epoch.
    pub coordinator_epoch: i32,
}

impl EndTransactionMarker {
    /// The 6-byte value Kafka writes (version 0).
    pub fn value_bytes(&self) -> [u8; 6] {
        let v = self.version.to_be_bytes();
        let e = self.coordinator_epoch.to_be_bytes();
        [v[0], v[1], e[0], e[1], e[2], e[3]]
    }
}

/// A decoded control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlRecord<'a> {
    /// Key version.
    pub version: i16,
    /// Record type.
    pub kind: ControlRecordType,
    /// Typed value.
    pub value: ControlValue<'a>,
}

/// A control record's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlValue<'a> {
    /// ABORT / COMMIT.
    EndTransaction(EndTransactionMarker),
    /// Any other type: the raw value bytes (`None` for a null value).
    Raw(Option<&'a [u8]>),
}

/// Decodes a control record from its key and value (error positions are 0: the caller knows
/// where the record lies; [`RecordView::control`] reports the record's position).
pub fn parse_control<'a>(key: Option<&[u8]>, value: Option<&'a [u8]>) -> Result<ControlRecord<'a>> {
    parse_control_at(key, value, Position::Buffer(0))
}

fn parse_control_at<'a>(
    key: Option<&[u8]>,
    value: Option<&'a [u8]>,
    at: Position,
) -> Result<ControlRecord<'a>> {
    let key = key.unwrap_or_default();
    let (Some(version), Some(type_id)) = (be16(key, 0), be16(key, 2)) else {
        let kind = CorruptKind::TooSmall {
            size: len_i64(key.len()),
            minimum: 4,
        };
        return Err(Error::corrupt(at, Field::ControlKey, kind));
    };
    if version < 0 {
        let kind = CorruptKind::Negative {
            value: i64::from(version),
        };
        return Err(Error::corrupt(at, Field::ControlKey, kind));
    }
    let kind = ControlRecordType::from_id(type_id);
    let value = match kind {
        ControlRecordType::Abort | ControlRecordType::Commit => {
            ControlValue::EndTransaction(parse_end_txn(value.unwrap_or_default(), at)?)
        }
        _ => ControlValue::Raw(value),
    };
    Ok(ControlRecord {
        version,
        kind,
        value,
    })
}

fn parse_end_txn(value: &[u8], at: Position) -> Result<EndTransactionMarker> {
    let (Some(version), Some(coordinator_epoch)) = (be16(value, 0), be32(value, 2)) else {
        let kind = CorruptKind::TooSmall {
            size: len_i64(value.len()),
            minimum: 6,
        };
        return Err(Error::corrupt(at, Field::ControlValue, kind));
    };
    if version < 0 {
        let kind = CorruptKind::Negative {
            value: i64::from(version),
        };
        return Err(Error::corrupt(at, Field::ControlValue, kind));
    }
    Ok(EndTransactionMarker {
        version,
        coordinator_epoch,
    })
}

fn be16(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl<'a> RecordView<'a> {
    /// Decodes this record as a control record (meaningful in a control batch).
    pub fn control(&self) -> Result<ControlRecord<'a>> {
        parse_control_at(self.key(), self.value(), self.position())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_marker_round_trips() {
        let key = ControlRecordType::Commit.key_bytes();
        let value = EndTransactionMarker {
            version: 0,
            coordinator_epoch: 7,
        }
        .value_bytes();
        let c = parse_control(Some(&key), Some(&value)).unwrap();
        assert_eq!(c.kind, ControlRecordType::Commit);
        assert_eq!(
            c.value,
            ControlValue::EndTransaction(EndTransactionMarker {
                version: 0,
                coordinator_epoch: 7
            })
        );
    }

    #[test]
    fn kraft_and_unknown_types_keep_raw_values() {
        for (id, kind) in [
            (2, ControlRecordType::LeaderChange),
            (6, ControlRecordType::KraftVoters),
            (99, ControlRecordType::Unknown(99)),
        ] {
            let key = ControlRecordType::from_id(id).key_bytes();
            let c = parse_control(Some(&key), Some(b"xyz")).unwrap();
            assert_eq!(c.kind, kind);
            assert_eq!(c.value, ControlValue::Raw(Some(b"xyz")));
        }
    }

    #[test]
    fn short_keys_and_values_are_corrupt() {
        assert!(parse_control(Some(&[0, 0, 0]), None).is_err());
        assert!(parse_control(None, None).is_err());
        assert!(parse_control(Some(&[0xff, 0xff, 0, 1]), Some(&[0; 6])).is_err());
        assert!(parse_control(Some(&[0, 0, 0, 0]), Some(&[0; 5])).is_err());
    }
}

//! Control records (records of a control batch, attribute bit 5), decoded into a typed form.
//!
//! ```text
//! key   = int16 version (0) | int16 type
//! value = int16 version | int32 coordinatorEpoch     (ABORT / COMMIT: EndTransactionMarker)
//! ```
//!
//! KRaft values are Kafka "flexible" messages (compact arrays, tagged fields), each starting
//! with an int16 version: LEADER_CHANGE (`LeaderChangeMessage`: leader id, voters, granting
//! voters), SNAPSHOT_HEADER (`SnapshotHeaderRecord`: last contained log timestamp),
//! SNAPSHOT_FOOTER, KRAFT_VERSION (`KRaftVersionRecord`) are decoded; KRAFT_VOTERS keeps its
//! bytes after the version. Kafka's `ControlRecordType.parse` and
//! `EndTransactionMarker.deserializeValue` rules decide what is corrupt.

use crate::error::{CorruptKind, Error, Field, Position, Result};
use crate::flex::{Flex, be16, be32};
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
#[non_exhaustive]
pub enum ControlValue<'a> {
    /// ABORT / COMMIT.
    EndTransaction(EndTransactionMarker),
    /// LEADER_CHANGE (`LeaderChangeMessage`).
    LeaderChange(LeaderChange<'a>),
    /// SNAPSHOT_HEADER (`SnapshotHeaderRecord`).
    SnapshotHeader {
        /// Record version.
        version: i16,
        /// Append time of the last record the snapshot contains.
        last_contained_log_timestamp: i64,
    },
    /// SNAPSHOT_FOOTER (`SnapshotFooterRecord`).
    SnapshotFooter {
        /// Record version.
        version: i16,
    },
    /// KRAFT_VERSION (`KRaftVersionRecord`).
    KraftVersion {
        /// Record version.
        version: i16,
        /// The KRaft protocol version.
        kraft_version: i16,
    },
    /// KRAFT_VOTERS (`VotersRecord`): its version and the value bytes after it, checked to
    /// decode with [`kraft_voters`](crate::kraft_voters).
    KraftVoters {
        /// Record version.
        version: i16,
        /// The rest of the value (voter ids, directory ids, endpoints, features).
        rest: &'a [u8],
    },
    /// An unknown type: the raw value bytes (`None` for a null value).
    Raw(Option<&'a [u8]>),
}

/// A KRaft leader change (`LeaderChangeMessage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaderChange<'a> {
    /// Record version.
    pub version: i16,
    /// The newly elected leader.
    pub leader_id: i32,
    /// The voters of the quorum for this epoch.
    pub voters: VoterIds<'a>,
    /// The voters who voted for the leader.
    pub granting_voters: VoterIds<'a>,
}

/// A validated compact array of `Voter { VoterId }` structs, read without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VoterIds<'a> {
    buf: &'a [u8],
    count: u32,
}

impl<'a> VoterIds<'a> {
    /// Number of voters.
    pub fn len(&self) -> usize {
        self.count as usize
    }
    /// No voters.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// The voter ids in order.
    pub fn iter(&self) -> impl Iterator<Item = i32> + 'a {
        let mut f = Flex {
            buf: self.buf,
            pos: 0,
        };
        (0..self.count).map_while(move |_| {
            let id = f.i32()?;
            f.tagged_fields()?;
            Some(id)
        })
    }
}

/// Decodes a control record from its key and value (error positions are 0: the caller knows
/// where the record lies; [`RecordView::control`] reports the record's position).
pub fn parse_control<'a>(key: Option<&[u8]>, value: Option<&'a [u8]>) -> Result<ControlRecord<'a>> {
    parse_control_at(key, value, Position::Buffer(0))
}

/// The key's version and type alone (Kafka's `ControlRecordType.parse`, which a consumer uses to
/// spot an ABORT marker without reading the value).
pub fn parse_control_key(key: Option<&[u8]>) -> Result<(i16, ControlRecordType)> {
    parse_key_at(key, Position::Buffer(0))
}

fn parse_key_at(key: Option<&[u8]>, at: Position) -> Result<(i16, ControlRecordType)> {
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
    Ok((version, ControlRecordType::from_id(type_id)))
}

fn parse_control_at<'a>(
    key: Option<&[u8]>,
    value: Option<&'a [u8]>,
    at: Position,
) -> Result<ControlRecord<'a>> {
    let (version, kind) = parse_key_at(key, at)?;
    let value = match kind {
        ControlRecordType::Abort | ControlRecordType::Commit => {
            ControlValue::EndTransaction(parse_end_txn(value.unwrap_or_default(), at)?)
        }
        ControlRecordType::Unknown(_) => ControlValue::Raw(value),
        kraft => parse_kraft(kraft, value.unwrap_or_default()).ok_or_else(|| {
            Error::corrupt(
                at,
                Field::ControlValue,
                CorruptKind::Invalid {
                    reason: "malformed KRaft control record value",
                },
            )
        })?,
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

/// Decodes a KRaft control value; `None` when it is malformed.
fn parse_kraft(kind: ControlRecordType, value: &[u8]) -> Option<ControlValue<'_>> {
    let mut f = Flex { buf: value, pos: 0 };
    let version = f.i16()?;
    let v = match kind {
        ControlRecordType::LeaderChange => {
            let leader_id = f.i32()?;
            let (buf, count) = f.voters()?;
            let voters = VoterIds { buf, count };
            let (buf, count) = f.voters()?;
            let granting_voters = VoterIds { buf, count };
            f.tagged_fields()?;
            ControlValue::LeaderChange(LeaderChange {
                version,
                leader_id,
                voters,
                granting_voters,
            })
        }
        ControlRecordType::SnapshotHeader => {
            let last_contained_log_timestamp = f.i64()?;
            f.tagged_fields()?;
            ControlValue::SnapshotHeader {
                version,
                last_contained_log_timestamp,
            }
        }
        ControlRecordType::SnapshotFooter => {
            f.tagged_fields()?;
            ControlValue::SnapshotFooter { version }
        }
        ControlRecordType::KraftVersion => {
            let kraft_version = f.i16()?;
            f.tagged_fields()?;
            ControlValue::KraftVersion {
                version,
                kraft_version,
            }
        }
        ControlRecordType::KraftVoters => {
            let rest = f.rest();
            crate::kraft_voters::kraft_voters(rest)?;
            ControlValue::KraftVoters { version, rest }
        }
        ControlRecordType::Abort | ControlRecordType::Commit | ControlRecordType::Unknown(_) => {
            return None;
        }
    };
    Some(v)
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
    fn kraft_values_decode() {
        let key = |t: ControlRecordType| t.key_bytes();
        // LeaderChangeMessage v0: version 0, leader 3, voters [1, 2, 3], granting [3], no tags.
        let lc = [
            0, 0, 0, 0, 0, 3, 4, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 2, 0, 0, 0, 3, 0, 0,
        ];
        let c = parse_control(Some(&key(ControlRecordType::LeaderChange)), Some(&lc)).unwrap();
        let ControlValue::LeaderChange(l) = c.value else {
            panic!("{c:?}")
        };
        assert_eq!((l.version, l.leader_id), (0, 3));
        assert_eq!(l.voters.iter().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(l.granting_voters.iter().collect::<Vec<_>>(), vec![3]);
        assert_eq!((l.voters.len(), l.granting_voters.is_empty()), (3, false));
        let sh = [0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0];
        let c = parse_control(Some(&key(ControlRecordType::SnapshotHeader)), Some(&sh)).unwrap();
        assert_eq!(
            c.value,
            ControlValue::SnapshotHeader {
                version: 0,
                last_contained_log_timestamp: 0x1234
            }
        );
        let c = parse_control(
            Some(&key(ControlRecordType::SnapshotFooter)),
            Some(&[0, 0, 0]),
        )
        .unwrap();
        assert_eq!(c.value, ControlValue::SnapshotFooter { version: 0 });
        let kv = [0, 0, 0, 1, 1, 0, 2, b'a', b'b'];
        let c = parse_control(Some(&key(ControlRecordType::KraftVersion)), Some(&kv)).unwrap();
        assert_eq!(
            c.value,
            ControlValue::KraftVersion {
                version: 0,
                kraft_version: 1
            },
            "tagged field skipped"
        );
        let c = parse_control(
            Some(&key(ControlRecordType::KraftVoters)),
            Some(&[0, 0, 1, 0]),
        )
        .unwrap();
        assert_eq!(
            c.value,
            ControlValue::KraftVoters {
                version: 0,
                rest: &[1, 0]
            },
            "no voters, no tagged fields"
        );
        let garbage = parse_control(
            Some(&key(ControlRecordType::KraftVoters)),
            Some(&[0, 0, 9, 9]),
        );
        assert!(garbage.is_err(), "voters that do not decode are corrupt");
        let c = parse_control(
            Some(&ControlRecordType::Unknown(99).key_bytes()),
            Some(b"xyz"),
        )
        .unwrap();
        assert_eq!(
            (c.kind, c.value),
            (
                ControlRecordType::Unknown(99),
                ControlValue::Raw(Some(b"xyz"))
            )
        );
    }

    #[test]
    fn malformed_kraft_values_are_corrupt() {
        let key = ControlRecordType::LeaderChange.key_bytes();
        // A voter count of 2^28 with no bytes behind it fails when the bytes run out.
        let lc = [0, 0, 0, 0, 0, 3, 0x80, 0x80, 0x80, 0x80, 0x01];
        let e = parse_control(Some(&key), Some(&lc)).unwrap_err();
        assert_eq!(e.field(), Some(Field::ControlValue));
        assert!(
            parse_control(
                Some(&ControlRecordType::SnapshotHeader.key_bytes()),
                Some(&[0, 0, 1])
            )
            .is_err()
        );
        assert!(parse_control(Some(&ControlRecordType::KraftVersion.key_bytes()), None).is_err());
    }

    #[test]
    fn short_keys_and_values_are_corrupt() {
        assert!(parse_control(Some(&[0, 0, 0]), None).is_err());
        assert!(parse_control(None, None).is_err());
        assert!(parse_control(Some(&[0xff, 0xff, 0, 1]), Some(&[0; 6])).is_err());
        assert!(parse_control(Some(&[0, 0, 0, 0]), Some(&[0; 5])).is_err());
    }
}

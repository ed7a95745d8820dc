//! The voters of a KRAFT_VOTERS control record (Kafka's `VotersRecord`, version 0, a flexible
//! message):
//!
//! ```text
//! Voters: compact array of
//!   VoterId int32 | VoterDirectoryId uuid (16 bytes)
//!   Endpoints: compact array of { Name compact string | Host compact string | Port uint16 | tags }
//!   KRaftVersionFeature { MinSupportedVersion int16 | MaxSupportedVersion int16 | tags }
//!   tags
//! tags
//! ```

use std::borrow::Cow;

use crate::flex::Flex;

/// One voter of the quorum.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KraftVoter<'a> {
    /// The voter's replica (node) id.
    pub voter_id: i32,
    /// The voter's log directory id (a Kafka `Uuid`).
    pub directory_id: [u8; 16],
    /// Where the voter listens.
    pub endpoints: Vec<KraftEndpoint<'a>>,
    /// The lowest KRaft protocol version the voter supports.
    pub min_supported_version: i16,
    /// The highest KRaft protocol version the voter supports.
    pub max_supported_version: i16,
}

/// A listener of a voter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KraftEndpoint<'a> {
    /// The listener name.
    pub name: Cow<'a, str>,
    /// The host name.
    pub host: Cow<'a, str>,
    /// The port.
    pub port: u16,
}

/// Decodes the voters from the value bytes after the record's version (the `rest` of
/// [`ControlValue::KraftVoters`](crate::ControlValue::KraftVoters)); `None` when they are
/// malformed. Strings are UTF-8, invalid sequences replaced, as Java's decoder does.
pub fn kraft_voters(rest: &[u8]) -> Option<Vec<KraftVoter<'_>>> {
    let mut f = Flex { buf: rest, pos: 0 };
    let count = f.array_len()?;
    // Each voter takes at least 26 bytes: no count can claim more than the bytes hold.
    let mut voters = Vec::with_capacity(usize::try_from(count).ok()?.min(rest.len() / 26));
    for _ in 0..count {
        let voter_id = f.i32()?;
        let directory_id = f.uuid()?;
        let endpoint_count = f.array_len()?;
        let mut endpoints = Vec::with_capacity(usize::try_from(endpoint_count).ok()?.min(16));
        for _ in 0..endpoint_count {
            let name = String::from_utf8_lossy(f.string()?);
            let host = String::from_utf8_lossy(f.string()?);
            let port = f.u16()?;
            f.tagged_fields()?;
            endpoints.push(KraftEndpoint { name, host, port });
        }
        let min_supported_version = f.i16()?;
        let max_supported_version = f.i16()?;
        f.tagged_fields()?;
        f.tagged_fields()?;
        voters.push(KraftVoter {
            voter_id,
            directory_id,
            endpoints,
            min_supported_version,
            max_supported_version,
        });
    }
    f.tagged_fields()?;
    (f.pos == rest.len()).then_some(voters)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One voter, id 1, one endpoint CONTROLLER 127.0.0.1:9093, versions 0..=1.
    fn one_voter() -> Vec<u8> {
        let mut v = vec![2];
        v.extend(1_i32.to_be_bytes());
        v.extend([7u8; 16]);
        v.push(2);
        v.push(11);
        v.extend(b"CONTROLLER");
        v.push(10);
        v.extend(b"127.0.0.1");
        v.extend(9093_u16.to_be_bytes());
        v.push(0);
        v.extend(0_i16.to_be_bytes());
        v.extend(1_i16.to_be_bytes());
        v.push(0);
        v.push(0);
        v.push(0);
        v
    }

    #[test]
    fn decodes_a_voter() {
        let bytes = one_voter();
        let voters = kraft_voters(&bytes).unwrap();
        assert_eq!(voters.len(), 1);
        let v = &voters[0];
        assert_eq!((v.voter_id, v.directory_id), (1, [7u8; 16]));
        assert_eq!(v.endpoints[0].name, "CONTROLLER");
        assert_eq!(v.endpoints[0].host, "127.0.0.1");
        assert_eq!(v.endpoints[0].port, 9093);
        assert_eq!((v.min_supported_version, v.max_supported_version), (0, 1));
    }

    #[test]
    fn every_truncation_and_a_trailing_byte_are_malformed() {
        let bytes = one_voter();
        for len in 0..bytes.len() {
            assert_eq!(kraft_voters(&bytes[..len]), None, "{len}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(kraft_voters(&longer), None);
    }

    #[test]
    fn a_huge_count_allocates_nothing_and_fails() {
        assert_eq!(kraft_voters(&[0xff, 0xff, 0xff, 0xff, 0x0f]), None);
    }
}

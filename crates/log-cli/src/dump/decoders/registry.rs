//! The embedded schema files (see `schemas/README.md`), parsed once, and found by api key.

use std::sync::OnceLock;

use super::schema::Schema;

const GROUP: &[&str] = &[
    include_str!("schemas/group/ConsumerGroupCurrentMemberAssignmentKey.json"),
    include_str!("schemas/group/ConsumerGroupCurrentMemberAssignmentValue.json"),
    include_str!("schemas/group/ConsumerGroupMemberMetadataKey.json"),
    include_str!("schemas/group/ConsumerGroupMemberMetadataValue.json"),
    include_str!("schemas/group/ConsumerGroupMetadataKey.json"),
    include_str!("schemas/group/ConsumerGroupMetadataValue.json"),
    include_str!("schemas/group/ConsumerGroupPartitionMetadataKey.json"),
    include_str!("schemas/group/ConsumerGroupPartitionMetadataValue.json"),
    include_str!("schemas/group/ConsumerGroupRegularExpressionKey.json"),
    include_str!("schemas/group/ConsumerGroupRegularExpressionValue.json"),
    include_str!("schemas/group/ConsumerGroupTargetAssignmentMemberKey.json"),
    include_str!("schemas/group/ConsumerGroupTargetAssignmentMemberValue.json"),
    include_str!("schemas/group/ConsumerGroupTargetAssignmentMetadataKey.json"),
    include_str!("schemas/group/ConsumerGroupTargetAssignmentMetadataValue.json"),
    include_str!("schemas/group/GroupMetadataKey.json"),
    include_str!("schemas/group/GroupMetadataValue.json"),
    include_str!("schemas/group/LegacyOffsetCommitKey.json"),
    include_str!("schemas/group/LegacyOffsetCommitValue.json"),
    include_str!("schemas/group/OffsetCommitKey.json"),
    include_str!("schemas/group/OffsetCommitValue.json"),
    include_str!("schemas/group/ShareGroupCurrentMemberAssignmentKey.json"),
    include_str!("schemas/group/ShareGroupCurrentMemberAssignmentValue.json"),
    include_str!("schemas/group/ShareGroupMemberMetadataKey.json"),
    include_str!("schemas/group/ShareGroupMemberMetadataValue.json"),
    include_str!("schemas/group/ShareGroupMetadataKey.json"),
    include_str!("schemas/group/ShareGroupMetadataValue.json"),
    include_str!("schemas/group/ShareGroupStatePartitionMetadataKey.json"),
    include_str!("schemas/group/ShareGroupStatePartitionMetadataValue.json"),
    include_str!("schemas/group/ShareGroupTargetAssignmentMemberKey.json"),
    include_str!("schemas/group/ShareGroupTargetAssignmentMemberValue.json"),
    include_str!("schemas/group/ShareGroupTargetAssignmentMetadataKey.json"),
    include_str!("schemas/group/ShareGroupTargetAssignmentMetadataValue.json"),
    include_str!("schemas/group/StreamsGroupCurrentMemberAssignmentKey.json"),
    include_str!("schemas/group/StreamsGroupCurrentMemberAssignmentValue.json"),
    include_str!("schemas/group/StreamsGroupMemberMetadataKey.json"),
    include_str!("schemas/group/StreamsGroupMemberMetadataValue.json"),
    include_str!("schemas/group/StreamsGroupMetadataKey.json"),
    include_str!("schemas/group/StreamsGroupMetadataValue.json"),
    include_str!("schemas/group/StreamsGroupTargetAssignmentMemberKey.json"),
    include_str!("schemas/group/StreamsGroupTargetAssignmentMemberValue.json"),
    include_str!("schemas/group/StreamsGroupTargetAssignmentMetadataKey.json"),
    include_str!("schemas/group/StreamsGroupTargetAssignmentMetadataValue.json"),
    include_str!("schemas/group/StreamsGroupTopologyKey.json"),
    include_str!("schemas/group/StreamsGroupTopologyValue.json"),
];

const TRANSACTION: &[&str] = &[
    include_str!("schemas/transaction/TransactionLogKey.json"),
    include_str!("schemas/transaction/TransactionLogValue.json"),
];

const SHARE_GROUP_STATE: &[&str] = &[
    include_str!("schemas/share/ShareSnapshotKey.json"),
    include_str!("schemas/share/ShareSnapshotValue.json"),
    include_str!("schemas/share/ShareUpdateKey.json"),
    include_str!("schemas/share/ShareUpdateValue.json"),
];

const METADATA: &[&str] = &[
    include_str!("schemas/metadata/AbortTransactionRecord.json"),
    include_str!("schemas/metadata/AccessControlEntryRecord.json"),
    include_str!("schemas/metadata/BeginTransactionRecord.json"),
    include_str!("schemas/metadata/BrokerRegistrationChangeRecord.json"),
    include_str!("schemas/metadata/ClearElrRecord.json"),
    include_str!("schemas/metadata/ClientQuotaRecord.json"),
    include_str!("schemas/metadata/ConfigRecord.json"),
    include_str!("schemas/metadata/DelegationTokenRecord.json"),
    include_str!("schemas/metadata/EndTransactionRecord.json"),
    include_str!("schemas/metadata/FeatureLevelRecord.json"),
    include_str!("schemas/metadata/FenceBrokerRecord.json"),
    include_str!("schemas/metadata/NoOpRecord.json"),
    include_str!("schemas/metadata/PartitionChangeRecord.json"),
    include_str!("schemas/metadata/PartitionRecord.json"),
    include_str!("schemas/metadata/ProducerIdsRecord.json"),
    include_str!("schemas/metadata/RegisterBrokerRecord.json"),
    include_str!("schemas/metadata/RegisterControllerRecord.json"),
    include_str!("schemas/metadata/RemoveAccessControlEntryRecord.json"),
    include_str!("schemas/metadata/RemoveDelegationTokenRecord.json"),
    include_str!("schemas/metadata/RemoveTopicRecord.json"),
    include_str!("schemas/metadata/RemoveUserScramCredentialRecord.json"),
    include_str!("schemas/metadata/TopicRecord.json"),
    include_str!("schemas/metadata/UnfenceBrokerRecord.json"),
    include_str!("schemas/metadata/UnregisterBrokerRecord.json"),
    include_str!("schemas/metadata/UnregisterControllerRecord.json"),
    include_str!("schemas/metadata/UserScramCredentialRecord.json"),
    include_str!("schemas/metadata/ZkMigrationRecord.json"),
];

const CLIENTS: &[&str] = &[
    include_str!("schemas/clients/ConsumerProtocolAssignment.json"),
    include_str!("schemas/clients/ConsumerProtocolSubscription.json"),
];

/// One family of schemas, parsed.
pub(super) struct Family(Vec<Schema>);

impl Family {
    fn parse(texts: &[&str]) -> Self {
        // The files are ours, embedded at build time and parsed by a unit test: a failure is a bug.
        Self(
            texts
                .iter()
                .map(|t| {
                    Schema::parse(t)
                        .unwrap_or_else(|e| panic!("an embedded schema does not parse: {e:#}"))
                })
                .collect(),
        )
    }

    /// The schema of this kind (`coordinator-key`, `coordinator-value`, `metadata`) with this api key.
    pub(super) fn find(&self, kind: &str, api_key: i16) -> Option<&Schema> {
        self.0
            .iter()
            .find(|s| s.kind == kind && s.api_key == Some(api_key))
    }

    pub(super) fn named(&self, name: &str) -> Option<&Schema> {
        self.0.iter().find(|s| s.name == name)
    }
}

macro_rules! family {
    ($name:ident, $texts:ident) => {
        pub(super) fn $name() -> &'static Family {
            static CELL: OnceLock<Family> = OnceLock::new();
            CELL.get_or_init(|| Family::parse($texts))
        }
    };
}

family!(group, GROUP);
family!(transaction, TRANSACTION);
family!(share_group_state, SHARE_GROUP_STATE);
family!(cluster_metadata, METADATA);
family!(clients, CLIENTS);

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    #[test]
    fn every_embedded_schema_parses() {
        for texts in [
            super::GROUP,
            super::TRANSACTION,
            super::SHARE_GROUP_STATE,
            super::METADATA,
            super::CLIENTS,
        ] {
            for t in texts {
                super::Schema::parse(t).unwrap();
            }
        }
        assert!(super::group().find("coordinator-key", 1).is_some());
        assert!(super::cluster_metadata().find("metadata", 2).is_some());
        assert!(
            super::share_group_state()
                .find("coordinator-value", 1)
                .is_some()
        );
    }
}

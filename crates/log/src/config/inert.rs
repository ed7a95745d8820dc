//! The topic configs of Kafka 4.4's `LogConfig` that only a broker's replication, tiered storage
//! or group coordinator reads: accepted with Kafka's validators and defaults, kept, written back
//! by [`LogConfig::to_properties`], and without effect on a seglog log. So a topic's configs as
//! `kafka-configs --describe` prints them can be passed whole.

use super::parse::{boolean, number};
use super::{LogConfig, invalid};
use crate::error::Result;

/// Kafka 4.4's keys that seglog accepts and keeps but does not act on, in Kafka's order.
pub const INERT_KEYS: &[&str] = &[
    "max.decompressed.message.bytes",
    "unclean.leader.election.enable",
    "min.insync.replicas",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
    "remote.storage.enable",
    "local.retention.ms",
    "local.retention.bytes",
    "remote.log.copy.disable",
    "remote.copy.lag.ms",
    "remote.copy.lag.bytes",
    "remote.log.delete.on.disable",
    "errors.deadletterqueue.group.enable",
];

/// The values of [`INERT_KEYS`], each with Kafka's default. None of them changes what a seglog
/// log does; they are kept so that a configuration read from a broker is written back whole.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per Kafka key, as Kafka's LogConfig has them"
)]
pub struct InertConfig {
    /// `max.decompressed.message.bytes` (Kafka 4.4, default 2147483639). seglog's own cap on
    /// one batch's decompressed records, 64 MiB, applies whatever this says.
    pub max_decompressed_message_bytes: i32,
    /// `unclean.leader.election.enable` (controller).
    pub unclean_leader_election_enable: bool,
    /// `min.insync.replicas` (a leader's acks=all check).
    pub min_insync_replicas: i32,
    /// `leader.replication.throttled.replicas`: `*` or `partition:broker,...` (replication quota).
    pub leader_replication_throttled_replicas: String,
    /// `follower.replication.throttled.replicas` (replication quota).
    pub follower_replication_throttled_replicas: String,
    /// `remote.storage.enable` (tiered storage).
    pub remote_storage_enable: bool,
    /// `local.retention.ms`: -2 (follow `retention.ms`) or more (tiered storage).
    pub local_retention_ms: i64,
    /// `local.retention.bytes`: -2 (follow `retention.bytes`) or more (tiered storage).
    pub local_retention_bytes: i64,
    /// `remote.log.copy.disable` (tiered storage).
    pub remote_log_copy_disable: bool,
    /// `remote.copy.lag.ms` (tiered storage).
    pub remote_copy_lag_ms: i64,
    /// `remote.copy.lag.bytes` (tiered storage).
    pub remote_copy_lag_bytes: i64,
    /// `remote.log.delete.on.disable` (tiered storage).
    pub remote_log_delete_on_disable: bool,
    /// `errors.deadletterqueue.group.enable` (share groups' dead letter queue).
    pub errors_deadletterqueue_group_enable: bool,
}

impl Default for InertConfig {
    fn default() -> Self {
        Self {
            max_decompressed_message_bytes: 2_147_483_639,
            unclean_leader_election_enable: false,
            min_insync_replicas: 1,
            leader_replication_throttled_replicas: String::new(),
            follower_replication_throttled_replicas: String::new(),
            remote_storage_enable: false,
            local_retention_ms: -2,
            local_retention_bytes: -2,
            remote_log_copy_disable: false,
            remote_copy_lag_ms: 0,
            remote_copy_lag_bytes: -1,
            remote_log_delete_on_disable: false,
            errors_deadletterqueue_group_enable: false,
        }
    }
}

/// Kafka's `ThrottledReplicaListValidator`: the literal `*`, or a list whose every trimmed item
/// is empty or `partitionId:brokerId`.
fn throttled_replicas(key: &str, value: &str) -> Result<String> {
    let items: Vec<&str> = value.split(',').map(str::trim).collect();
    let pair = |s: &str| {
        s.is_empty()
            || s.split_once(':').is_some_and(|(p, b)| {
                !p.is_empty()
                    && !b.is_empty()
                    && p.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            })
    };
    if items.iter().all(|s| pair(s)) || items.concat() == "*" {
        Ok(value.trim().to_owned())
    } else {
        Err(invalid(
            key,
            value,
            "the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ))
    }
}

impl LogConfig {
    /// Sets one of [`INERT_KEYS`]; `Ok(false)` when `key` is not one of them.
    pub(super) fn set_inert(&mut self, key: &str, value: &str) -> Result<bool> {
        let c = &mut self.inert;
        match key {
            "max.decompressed.message.bytes" => {
                c.max_decompressed_message_bytes = number(key, value, 1, 2_147_483_639)?;
            }
            "unclean.leader.election.enable" => {
                c.unclean_leader_election_enable = boolean(key, value)?;
            }
            "min.insync.replicas" => c.min_insync_replicas = number(key, value, 1, i32::MAX)?,
            "leader.replication.throttled.replicas" => {
                c.leader_replication_throttled_replicas = throttled_replicas(key, value)?;
            }
            "follower.replication.throttled.replicas" => {
                c.follower_replication_throttled_replicas = throttled_replicas(key, value)?;
            }
            "remote.storage.enable" => c.remote_storage_enable = boolean(key, value)?,
            "local.retention.ms" => c.local_retention_ms = number(key, value, -2, i64::MAX)?,
            "local.retention.bytes" => c.local_retention_bytes = number(key, value, -2, i64::MAX)?,
            "remote.log.copy.disable" => c.remote_log_copy_disable = boolean(key, value)?,
            "remote.copy.lag.ms" => c.remote_copy_lag_ms = number(key, value, -1, i64::MAX)?,
            "remote.copy.lag.bytes" => c.remote_copy_lag_bytes = number(key, value, -1, i64::MAX)?,
            "remote.log.delete.on.disable" => {
                c.remote_log_delete_on_disable = boolean(key, value)?;
            }
            "errors.deadletterqueue.group.enable" => {
                c.errors_deadletterqueue_group_enable = boolean(key, value)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The `(key, value)` pairs of [`INERT_KEYS`], in that order.
    pub(super) fn inert_pairs(&self) -> [(&'static str, String); 13] {
        let c = &self.inert;
        [
            (
                "max.decompressed.message.bytes",
                c.max_decompressed_message_bytes.to_string(),
            ),
            (
                "unclean.leader.election.enable",
                c.unclean_leader_election_enable.to_string(),
            ),
            ("min.insync.replicas", c.min_insync_replicas.to_string()),
            (
                "leader.replication.throttled.replicas",
                c.leader_replication_throttled_replicas.clone(),
            ),
            (
                "follower.replication.throttled.replicas",
                c.follower_replication_throttled_replicas.clone(),
            ),
            ("remote.storage.enable", c.remote_storage_enable.to_string()),
            ("local.retention.ms", c.local_retention_ms.to_string()),
            ("local.retention.bytes", c.local_retention_bytes.to_string()),
            (
                "remote.log.copy.disable",
                c.remote_log_copy_disable.to_string(),
            ),
            ("remote.copy.lag.ms", c.remote_copy_lag_ms.to_string()),
            ("remote.copy.lag.bytes", c.remote_copy_lag_bytes.to_string()),
            (
                "remote.log.delete.on.disable",
                c.remote_log_delete_on_disable.to_string(),
            ),
            (
                "errors.deadletterqueue.group.enable",
                c.errors_deadletterqueue_group_enable.to_string(),
            ),
        ]
    }

    /// Kafka's `validateTopicLogConfigValues` for a topic with remote storage enabled: not
    /// compacted, and local retention within the total (`validateRemoteStorageRetentionSize`,
    /// `validateRemoteStorageRetentionTime`).
    pub(super) fn validate_inert(&self) -> Result<()> {
        let c = &self.inert;
        if !c.remote_storage_enable {
            return Ok(());
        }
        if self.cleanup_policy.compact {
            return Err(invalid(
                "cleanup.policy",
                "compact",
                "delete alone: remote log storage is not supported for compacted topics",
            ));
        }
        let pairs = [
            (
                "local.retention.bytes",
                c.local_retention_bytes,
                "retention.bytes",
                self.retention_bytes,
                self.retention_bytes > -1,
            ),
            (
                "local.retention.ms",
                c.local_retention_ms,
                "retention.ms",
                self.retention_ms,
                self.retention_ms != -1,
            ),
        ];
        for (key, local, total_key, total, bounded) in pairs {
            if !bounded || local == -2 {
                continue;
            }
            if local == -1 {
                return Err(invalid(
                    key,
                    &local.to_string(),
                    format!("not -1, as {total_key} is set as {total}"),
                ));
            }
            if local > total {
                return Err(invalid(
                    key,
                    &local.to_string(),
                    format!("at most {total_key} ({total})"),
                ));
            }
        }
        Ok(())
    }
}

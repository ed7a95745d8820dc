//! Kafka's `ProducerStateManagerConfig`.

/// Kafka's default `producer.id.expiration.ms` (one day).
pub const DEFAULT_PRODUCER_ID_EXPIRATION_MS: i32 = 86_400_000;
/// Kafka's default `producer.id.expiration.check.interval.ms` (ten minutes), how often the
/// broker calls `remove_expired_producers`.
pub const DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS: i32 = 600_000;
/// Kafka's default `transaction.max.timeout.ms` (fifteen minutes): a transaction open longer
/// than this plus [`LATE_TRANSACTION_BUFFER_MS`](crate::producer::LATE_TRANSACTION_BUFFER_MS)
/// is late.
pub const DEFAULT_MAX_TRANSACTION_TIMEOUT_MS: i32 = 900_000;

/// The producer state's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerStateManagerConfig {
    /// How long a producer with no ongoing transaction is kept after its last write.
    pub producer_id_expiration_ms: i32,
    /// Kafka's `transaction.partition.verification.enable` (default true). seglog has no
    /// transaction coordinator to verify against; kept so the setting round-trips.
    pub transaction_verification_enabled: bool,
}

impl Default for ProducerStateManagerConfig {
    fn default() -> Self {
        Self {
            producer_id_expiration_ms: DEFAULT_PRODUCER_ID_EXPIRATION_MS,
            transaction_verification_enabled: true,
        }
    }
}

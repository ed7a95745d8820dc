//! The errors of producer-state validation, one per Kafka exception, with Kafka's messages, so a
//! client sees what a broker would have said.

/// An append that producer-state validation refuses (Kafka's exceptions from
/// `ProducerAppendInfo`); the partition appends nothing of the request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProducerError {
    /// Kafka's `InvalidProducerEpochException`: an epoch older than the producer's (or, for a
    /// transaction version 2 marker, not newer).
    #[error("{message}")]
    InvalidProducerEpoch {
        /// Kafka's message.
        message: String,
    },
    /// Kafka's `OutOfOrderSequenceException`: a sequence that does not continue the last one.
    #[error("{message}")]
    OutOfOrderSequence {
        /// Kafka's message.
        message: String,
    },
    /// Kafka's `InvalidTxnStateException`: a non-transactional batch inside a transaction.
    #[error("{message}")]
    InvalidTxnState {
        /// Kafka's message.
        message: String,
    },
    /// Kafka's `TransactionCoordinatorFencedException`: a marker from an older coordinator.
    #[error("{message}")]
    TransactionCoordinatorFenced {
        /// Kafka's message.
        message: String,
    },
    /// Kafka's `IllegalArgumentException` for a marker whose transaction version is unknown
    /// although it does not come from replication.
    #[error("{message}")]
    IllegalArgument {
        /// Kafka's message.
        message: String,
    },
}

impl ProducerError {
    /// The name of Kafka's exception class, as a client sees the error code.
    #[must_use]
    pub fn kafka_name(&self) -> &'static str {
        match self {
            Self::InvalidProducerEpoch { .. } => "InvalidProducerEpochException",
            Self::OutOfOrderSequence { .. } => "OutOfOrderSequenceException",
            Self::InvalidTxnState { .. } => "InvalidTxnStateException",
            Self::TransactionCoordinatorFenced { .. } => "TransactionCoordinatorFencedException",
            Self::IllegalArgument { .. } => "IllegalArgumentException",
        }
    }
}

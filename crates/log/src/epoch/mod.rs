//! Leader epochs (Kafka's `storage/internals/epoch`): the [`LeaderEpochCache`] a partition log
//! keeps in its `leader-epoch-checkpoint`, and the check of a checkpoint against its log.

mod cache;
mod consistency;

pub use cache::{LeaderEpochCache, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET};
pub use consistency::{EpochProblem, check_epochs};

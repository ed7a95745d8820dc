//! An append's validated state taken into the manager (the core of Kafka's `update`, shared by
//! [`update`](ProducerStateManager::update)), and the replay of one batch, which looks its
//! producer up once ([`append_and_update`](ProducerStateManager::append_and_update)).

use std::collections::hash_map::Entry;
use std::sync::Arc;

use seglog_fs::FileSystem;

use super::ProducerStateManager;
use crate::error::Result;
use crate::producer::append_info::{AppendOrigin, ProducerAppendInfo};
use crate::producer::entry::{NO_PRODUCER_ID, ProducerStateEntry};

impl<F: FileSystem> ProducerStateManager<F> {
    /// [`prepare_update`](Self::prepare_update), `append` on the info it returns, and, if that
    /// succeeds, [`update`](Self::update), with one lookup of the producer's state: the replay
    /// of one batch. On an error nothing changed.
    ///
    /// # Panics
    ///
    /// As [`update`](Self::update).
    pub(crate) fn append_and_update<T>(
        &mut self,
        producer_id: i64,
        origin: AppendOrigin,
        append: impl FnOnce(&mut ProducerAppendInfo) -> Result<T>,
    ) -> Result<T> {
        let partition = Arc::clone(&self.partition);
        let slot = self.producers.entry(producer_id);
        let current = match &slot {
            Entry::Occupied(current) => Some(current.get()),
            Entry::Vacant(_) => None,
        };
        let mut info = ProducerAppendInfo::from_state(partition, producer_id, current, origin);
        let appended = append(&mut info)?;
        let last_timestamp = take_over(slot, &info, &self.partition);
        self.start_transactions(&info, last_timestamp);
        Ok(appended)
    }

    /// The rest of [`update`](Self::update) once the producer's state took over `info`, which left
    /// it at `last_timestamp`: the transactions started, and the oldest one's last timestamp.
    pub(super) fn start_transactions(&mut self, info: &ProducerAppendInfo, last_timestamp: i64) {
        let producer_id = info.producer_id();
        for txn in info.started_transactions() {
            self.ongoing.insert(txn.first_offset.message_offset, *txn);
        }
        // `update_oldest_txn_timestamp`, without a lookup when the oldest transaction is this
        // producer's (its state is the one just updated).
        self.oldest_txn_last_timestamp = match self.ongoing.values().next() {
            None => -1,
            Some(t) if t.producer_id == producer_id => last_timestamp,
            Some(t) => self
                .producers
                .get(&t.producer_id)
                .map_or(-1, ProducerStateEntry::last_timestamp),
        };
    }
}

/// The producer state in `slot` takes over `info`'s (the core of Kafka's `update`); returns its
/// last timestamp.
pub(super) fn take_over(
    slot: Entry<'_, i64, ProducerStateEntry>,
    info: &ProducerAppendInfo,
    partition: &str,
) -> i64 {
    assert!(
        info.producer_id() != NO_PRODUCER_ID,
        "Invalid producer id {} passed to update for partition{partition}",
        info.producer_id(),
    );
    let next = info.to_entry();
    match slot {
        Entry::Occupied(current) => {
            let current = current.into_mut();
            current.update(next);
            current.last_timestamp()
        }
        Entry::Vacant(vacant) => vacant.insert(next.clone()).last_timestamp(),
    }
}

//! Kafka's `BatchMetadata`: what a producer's state keeps of one of its recent batches, enough to
//! recognise a retried duplicate and answer it with the original offsets.

/// One appended batch of a producer: its last sequence and offset, how many records before
/// those it spans (`offset_delta`), and its max timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchMetadata {
    /// The batch's last sequence number.
    pub last_seq: i32,
    /// The batch's last offset.
    pub last_offset: i64,
    /// `last_offset - base offset` (and `last_seq - base sequence`).
    pub offset_delta: i32,
    /// The batch's max timestamp.
    pub timestamp: i64,
}

impl BatchMetadata {
    /// The batch's base sequence, wrapping below 0 as Kafka's `DefaultRecordBatch.decrementSequence`.
    #[must_use]
    pub fn first_seq(&self) -> i32 {
        decrement_sequence(self.last_seq, self.offset_delta)
    }

    /// The batch's base offset.
    #[must_use]
    pub fn first_offset(&self) -> i64 {
        self.last_offset - i64::from(self.offset_delta)
    }
}

/// Kafka's `DefaultRecordBatch.decrementSequence`: sequences wrap from `i32::MAX` to 0.
pub(crate) fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    if sequence < decrement {
        // i64 so that no intermediate overflows; the result fits in an i32 as in Kafka's
        // int arithmetic (which wraps the same way).
        let v = i64::from(i32::MAX) - (i64::from(decrement) - i64::from(sequence)) + 1;
        i32::try_from(v).unwrap_or_else(|_| wrap_i32(v))
    } else {
        sequence - decrement
    }
}

/// Java's int narrowing of a long.
fn wrap_i32(v: i64) -> i32 {
    #[expect(
        clippy::cast_possible_truncation,
        reason = "Java's (int) cast, on purpose"
    )]
    let w = v as i32;
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sequence_and_offset_follow_kafka_including_the_wrap() {
        let b = BatchMetadata {
            last_seq: 9,
            last_offset: 109,
            offset_delta: 9,
            timestamp: 5,
        };
        assert_eq!((b.first_seq(), b.first_offset()), (0, 100));
        // A batch whose sequences wrapped past i32::MAX: 2147483646, 2147483647, 0, 1.
        let w = BatchMetadata {
            last_seq: 1,
            last_offset: 3,
            offset_delta: 3,
            timestamp: 5,
        };
        assert_eq!(w.first_seq(), i32::MAX - 1);
        // No sequence (-1) with a delta: Kafka prints i32::MAX - delta.
        let n = BatchMetadata {
            last_seq: -1,
            last_offset: 4,
            offset_delta: 2,
            timestamp: 5,
        };
        assert_eq!(n.first_seq(), i32::MAX - 2);
    }
}

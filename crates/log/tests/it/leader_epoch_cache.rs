//! Kafka's `LeaderEpochFileCacheTest` (storage `internals/epoch`) and
//! `LeaderEpochCheckpointFileWithFailureHandlerTest`, pinned as ours: each test names the Kafka
//! test it ports. The cache is backed by a `leader-epoch-checkpoint` in a temporary directory.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;

use seglog_fs::RealFs;
use seglog_log::epoch::{UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET};
use seglog_log::{EpochEntry, LEADER_EPOCH_CHECKPOINT, LeaderEpochCache, LeaderEpochCheckpoint};

fn e(epoch: i32, start_offset: i64) -> EpochEntry {
    EpochEntry {
        epoch,
        start_offset,
    }
}

fn cache(dir: &Path) -> LeaderEpochCache<RealFs> {
    LeaderEpochCache::load(RealFs, dir).unwrap()
}

const UNDEFINED: (i32, i64) = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);

/// Runs `f` on a fresh cache in a temporary directory.
fn with_cache(f: impl FnOnce(&mut LeaderEpochCache<RealFs>, &Path)) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = cache(dir.path());
    f(&mut c, dir.path());
}

fn assign(c: &mut LeaderEpochCache<RealFs>, entries: &[(i32, i64)]) {
    for (epoch, offset) in entries {
        c.assign(*epoch, *offset).unwrap();
    }
}

#[test]
fn previous_epoch() {
    // testPreviousEpoch
    with_cache(|c, _| {
        assert_eq!(c.previous_epoch(), None);
        assign(c, &[(2, 10)]);
        assert_eq!(c.previous_epoch(), None);
        assign(c, &[(4, 15)]);
        assert_eq!(c.previous_epoch(), Some(2));
        assign(c, &[(10, 20)]);
        assert_eq!(c.previous_epoch(), Some(4));
        c.truncate_from_end(18).unwrap();
        assert_eq!(c.previous_epoch(), Some(2));
    });
}

#[test]
fn adds_epoch_and_offset() {
    // shouldAddEpochAndMessageOffsetToCache, shouldSupportEpochsThatDoNotStartFromZero
    with_cache(|c, _| {
        assign(c, &[(2, 10)]);
        assert_eq!(c.latest_epoch(), Some(2));
        assert_eq!(c.entries(), [e(2, 10)]);
        assert_eq!(c.end_offset_for(2, 11), (2, 11));
    });
}

#[test]
fn latest_epoch_answers_the_log_end_offset() {
    // shouldReturnLogEndOffsetIfLatestEpochRequested
    with_cache(|c, _| {
        assign(c, &[(2, 11), (2, 12)]);
        assert_eq!(c.end_offset_for(2, 14), (2, 14));
    });
}

#[test]
fn undefined_epoch_answers_undefined() {
    // shouldReturnUndefinedOffsetIfUndefinedEpochRequested,
    // shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested,
    // shouldReturnUnsupportedIfNoEpochRecorded, shouldFetchEndOffsetOfEmptyCache
    with_cache(|c, _| {
        assert_eq!(c.end_offset_for(UNDEFINED_EPOCH, 73), UNDEFINED);
        assert_eq!(c.end_offset_for(0, 0), UNDEFINED);
        assert_eq!(c.end_offset_for(7, 0), UNDEFINED);
        assign(c, &[(2, 11), (3, 12)]);
        assert_eq!(c.end_offset_for(UNDEFINED_EPOCH, 0), UNDEFINED);
    });
}

#[test]
fn an_assigned_epoch_keeps_its_start_offset() {
    // shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned,
    // shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned,
    // shouldNotUpdateEpochAndStartOffsetIfItDidNotChange
    with_cache(|c, _| {
        assign(c, &[(2, 9)]);
        assert!(!c.assign(2, 10).unwrap());
        assert_eq!(c.entries(), [e(2, 9)]);
    });
}

#[test]
fn start_offsets_increase() {
    // shouldEnforceMonotonicallyIncreasingStartOffsets, shouldEnforceOffsetsIncreaseMonotonically
    with_cache(|c, _| {
        assign(c, &[(2, 9), (3, 9)]);
        assert_eq!(c.entries(), [e(3, 9)]);
    });
    with_cache(|c, _| {
        assign(c, &[(2, 6), (3, 5)]);
        assert_eq!(c.entries(), [e(3, 5)]);
    });
}

#[test]
fn an_epoch_below_the_first_answers_the_first_start() {
    // shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch
    with_cache(|c, _| {
        assign(c, &[(5, 11), (6, 12), (7, 13)]);
        assert_eq!(c.end_offset_for(4, 0), (4, 11));
    });
}

#[test]
fn same_epoch_at_an_earlier_offset_truncates() {
    // shouldTruncateIfMatchingEpochButEarlierStartingOffset
    with_cache(|c, _| {
        assign(c, &[(5, 11), (6, 12), (7, 13), (7, 12)]);
        assert_eq!(c.end_offset_for(5, 0), (5, 12));
        assert_eq!(c.end_offset_for(6, 0), (5, 12));
    });
}

#[test]
fn previous_epoch_ends_where_the_next_starts() {
    // shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch
    with_cache(|c, _| {
        assign(c, &[(1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)]);
        assert_eq!(c.end_offset_for(2, 17), (2, 15));
    });
}

#[test]
fn a_missing_epoch_answers_the_one_below() {
    // shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested
    with_cache(|c, _| {
        assign(c, &[(0, 10), (2, 13), (4, 17)]);
        assert_eq!(c.end_offset_for(1, 0), (0, 13));
        assert_eq!(c.end_offset_for(2, 0), (2, 17));
        assert_eq!(c.end_offset_for(3, 0), (2, 17));
    });
}

#[test]
fn an_epoch_above_every_cached_one_is_undefined() {
    // shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked
    with_cache(|c, _| {
        assign(c, &[(2, 100)]);
        assert_eq!(c.end_offset_for(3, 100), UNDEFINED);
    });
}

#[test]
fn epochs_persist_between_instances() {
    // shouldPersistEpochsBetweenInstances
    with_cache(|c, dir| {
        assign(c, &[(2, 6)]);
        assert_eq!(cache(dir).entries(), [e(2, 6)]);
        let text = std::fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap();
        assert_eq!(text, "0\n1\n2 6\n");
    });
}

#[test]
fn epochs_increase() {
    // shouldEnforceMonotonicallyIncreasingEpochs
    with_cache(|c, _| {
        assign(c, &[(1, 5), (2, 6), (1, 7)]);
        assert_eq!(c.latest_epoch(), Some(1));
        assert_eq!(c.end_offset_for(1, 8), (1, 8));
        assert_eq!(c.end_offset_for(2, 8), UNDEFINED);
        assert_eq!(c.entries(), [e(1, 7)]);
    });
}

#[test]
fn tracks_epochs_as_leaders_change() {
    // shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes
    with_cache(|c, _| {
        assign(c, &[(0, 0), (1, 0)]);
        assert_eq!(c.latest_epoch(), Some(1));
        assert_eq!(c.end_offset_for(1, 0), (1, 0));
        assert_eq!(c.end_offset_for(0, 0), (0, 0));
        assert_eq!(c.end_offset_for(1, 5), (1, 5));
        assert_eq!(c.end_offset_for(0, 5), (0, 0));
        assign(c, &[(2, 5)]);
        assert_eq!(c.end_offset_for(2, 10), (2, 10));
        assert_eq!(c.end_offset_for(1, 10), (1, 5));
        assert_eq!(c.end_offset_for(0, 10), (0, 0));
    });
}

#[test]
fn tracks_epochs_as_a_follower_receives_messages() {
    // shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages
    with_cache(|c, _| {
        assign(c, &[(0, 0), (0, 1), (0, 2)]);
        assert_eq!(c.latest_epoch(), Some(0));
        assert_eq!(c.end_offset_for(0, 3), (0, 3));
        assign(c, &[(1, 3), (1, 4), (1, 5)]);
        assert_eq!(c.end_offset_for(1, 6), (1, 6));
        assign(c, &[(2, 6), (2, 7), (2, 8)]);
        assert_eq!(c.latest_epoch(), Some(2));
        assert_eq!(c.end_offset_for(2, 9), (2, 9));
        assert_eq!(c.end_offset_for(0, 9), (0, 3));
        assert_eq!(c.end_offset_for(1, 9), (1, 6));
    });
}

fn three(c: &mut LeaderEpochCache<RealFs>) {
    assign(c, &[(2, 6), (3, 8), (4, 11)]);
}

#[test]
fn truncation_from_the_end() {
    // shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries,
    // shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest,
    // shouldNotResetEpochHistoryTailIfUndefinedPassed, shouldClearLatestOnEmptyCache
    with_cache(|c, _| {
        three(c);
        c.truncate_from_end(8).unwrap();
        assert_eq!(c.entries(), [e(2, 6)]);
    });
    with_cache(|c, _| {
        three(c);
        c.truncate_from_end(9).unwrap();
        assert_eq!(c.latest_epoch(), Some(3));
        assert_eq!(c.entries(), [e(2, 6), e(3, 8)]);
    });
    with_cache(|c, _| {
        three(c);
        c.truncate_from_end(UNDEFINED_EPOCH_OFFSET).unwrap();
        assert_eq!(c.entries().len(), 3);
    });
    with_cache(|c, _| assert!(c.truncate_from_end(7).unwrap().is_empty()));
}

#[test]
fn truncation_from_the_start() {
    // shouldPreserveResetOffsetOnClearEarliestIfOneExists, shouldNotClearAnythingIfOffsetTooEarly,
    // shouldNotClearAnythingIfOffsetIsFirstOffset, shouldRetainLatestEpochOnClearAllEarliest,
    // shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest,
    // shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset,
    // shouldNotResetEpochHistoryHeadIfUndefinedPassed, shouldClearEarliestOnEmptyCache
    let cases: [(i64, &[EpochEntry]); 7] = [
        (8, &[e(3, 8), e(4, 11)]),
        (1, &[e(2, 6), e(3, 8), e(4, 11)]),
        (6, &[e(2, 6), e(3, 8), e(4, 11)]),
        (11, &[e(4, 11)]),
        (9, &[e(3, 9), e(4, 11)]),
        (15, &[e(4, 15)]),
        (UNDEFINED_EPOCH_OFFSET, &[e(2, 6), e(3, 8), e(4, 11)]),
    ];
    for (start, expected) in cases {
        with_cache(|c, dir| {
            three(c);
            c.truncate_from_start(start).unwrap();
            assert_eq!(c.entries(), expected, "truncated from {start}");
            // Written (Kafka flushes it on its scheduler; seglog at once).
            assert_eq!(cache(dir).entries(), expected, "checkpoint after {start}");
        });
    }
    with_cache(|c, _| {
        // shouldUpdateOffsetBetweenFirstTwoEpochBoundariesOnClearEarliest
        assign(c, &[(0, 0), (1, 7), (2, 10)]);
        c.truncate_from_start(5).unwrap();
        assert_eq!(c.entries(), [e(0, 5), e(1, 7), e(2, 10)]);
    });
    with_cache(|c, _| assert!(c.truncate_from_start(7).unwrap().is_empty()));
}

#[test]
fn clears_every_entry() {
    // shouldClearAllEntries
    with_cache(|c, dir| {
        three(c);
        c.clear_and_flush().unwrap();
        assert!(c.entries().is_empty());
        assert!(cache(dir).is_empty());
    });
}

#[test]
fn latest_epoch_of_an_empty_cache() {
    // shouldFetchLatestEpochOfEmptyCache
    with_cache(|c, _| assert_eq!(c.latest_epoch(), None));
}

#[test]
fn find_previous_and_next_epochs_and_entries() {
    // testFindPreviousEpoch, testFindPreviousEntry, testFindNextEpoch, testGetEpochEntry
    with_cache(|c, _| {
        assert_eq!(c.previous_epoch_of(2), None);
        assert_eq!(c.previous_entry(2), None);
        assign(c, &[(2, 10)]);
        assert_eq!(c.previous_epoch_of(2), None);
        assign(c, &[(4, 15)]);
        assert_eq!(c.previous_epoch_of(4), Some(2));
        assert_eq!(c.previous_entry(4), Some(e(2, 10)));
        assign(c, &[(10, 20)]);
        assert_eq!(c.previous_epoch_of(10), Some(4));
        assert_eq!(c.previous_entry(10), Some(e(4, 15)));
        c.truncate_from_end(18).unwrap();
        let latest = c.latest_epoch().unwrap();
        assert_eq!(c.previous_epoch_of(latest), Some(2));
        assert_eq!(c.previous_entry(latest), Some(e(2, 10)));
    });
    with_cache(|c, _| {
        assign(c, &[(0, 0), (1, 100), (2, 200)]);
        assert_eq!(c.next_epoch(-1), Some(0));
        assert_eq!(c.next_epoch(0), Some(1));
        assert_eq!(c.next_epoch(1), Some(2));
        assert_eq!(c.next_epoch(2), None);
        assert_eq!(c.next_epoch(100), None);
        assert_eq!(c.next_epoch(i32::MAX), None);
        assert_eq!(c.epoch_entry(1), Some(e(1, 100)));
        assert_eq!(c.epoch_entry(3), None);
    });
}

#[test]
fn epoch_for_offset() {
    // shouldFetchEpochForGivenOffset
    with_cache(|c, _| {
        assign(c, &[(0, 10), (1, 20), (5, 30)]);
        assert_eq!(c.epoch_for_offset(25), Some(1));
        assert_eq!(c.epoch_for_offset(20), Some(1));
        assert_eq!(c.epoch_for_offset(30), Some(5));
        assert_eq!(c.epoch_for_offset(50), Some(5));
        assert_eq!(c.epoch_for_offset(5), None);
    });
}

#[test]
fn writes_the_checkpoint_on_truncation() {
    // shouldWriteCheckpointOnTruncation
    with_cache(|c, dir| {
        three(c);
        c.truncate_from_end(11).unwrap();
        c.truncate_from_start(8).unwrap();
        let checkpoint = LeaderEpochCheckpoint::in_dir(RealFs, dir);
        assert_eq!(checkpoint.read().unwrap(), [e(3, 8)]);
    });
}

#[test]
fn entries_in_range() {
    // epochEntriesInRange (LeaderEpochFileCache; used by remote storage)
    with_cache(|c, _| {
        three(c);
        assert_eq!(c.epoch_entries_in_range(7, 11), [e(2, 7), e(3, 8)]);
        assert_eq!(c.epoch_entries_in_range(-1, 100), c.entries());
        assert_eq!(c.entries(), [e(2, 6), e(3, 8), e(4, 11)]); // unchanged
    });
}

#[test]
fn refuses_negative_entries() {
    // LeaderEpochFileCache.assign: IllegalArgumentException for a negative epoch or offset
    with_cache(|c, dir| {
        assert!(c.assign(-1, 0).is_err());
        assert!(c.assign(0, -1).is_err());
        assert!(c.is_empty());
        assert!(!dir.join(LEADER_EPOCH_CHECKPOINT).exists());
    });
}

#[test]
fn loading_drops_entries_that_do_not_increase_and_writes_nothing() {
    // LeaderEpochFileCache's constructor: checkpoint.read().forEach(this::assign)
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(LEADER_EPOCH_CHECKPOINT);
    std::fs::write(&path, "0\n3\n1 5\n3 9\n2 12\n").unwrap();
    let c = cache(dir.path());
    assert_eq!(c.entries(), [e(1, 5), e(2, 12)]); // epoch 3 is above 2: dropped
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "0\n3\n1 5\n3 9\n2 12\n"
    );
    std::fs::write(&path, "0\n2\n1 5\n").unwrap();
    let err = LeaderEpochCache::load(RealFs, dir.path()).unwrap_err();
    assert!(err.to_string().contains("Expected [2] entries"), "{err}");
}

#[test]
fn checkpoint_persists_overwrites_and_reloads() {
    // LeaderEpochCheckpointFileWithFailureHandlerTest: shouldPersistAndOverwriteAndReloadFile,
    // shouldRetainValuesEvenIfCheckpointIsRecreated
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = LeaderEpochCheckpoint::in_dir(RealFs, dir.path());
    let epochs = [e(0, 1), e(1, 2), e(2, 3)];
    checkpoint.write(&epochs).unwrap();
    assert_eq!(checkpoint.read().unwrap(), epochs);
    let again = LeaderEpochCheckpoint::in_dir(RealFs, dir.path());
    assert_eq!(again.read().unwrap(), epochs);
    let epochs2 = [e(3, 4), e(4, 5)];
    checkpoint.write(&epochs2).unwrap();
    assert_eq!(checkpoint.read().unwrap(), epochs2);
    assert_eq!(again.read_as_written().unwrap(), epochs2);
}

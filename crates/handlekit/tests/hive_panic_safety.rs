//! Drop counting and panic safety for `Hive`.
//!
//! Hives here have blocks of 4 slots (smallest and largest), so the values
//! of one test span several blocks, ids `0..n` sit at key indices `0..n`,
//! and a panic in one block must not stop the drops in the next. Every test
//! ends by asserting the exact drop count of every value.

use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use handlekit::{Hive, Id, Key};

mod common;
use common::tracker::{assert_panicked, Tracker, Val, BOOM};

/// A hive of `n` tracked values with ids `0..n` at indices `0..n`, four
/// slots per block.
fn filled(tracker: &Rc<Tracker>, n: usize) -> (Hive<Val>, Vec<Id>) {
    let mut hive = Hive::with_block_sizes(4, 4);
    let keys = (0..n).map(|_| hive.insert(tracker.make())).collect();
    (hive, keys)
}

/// The ids of the values in the hive, in key-index order.
fn ids(hive: &Hive<Val>) -> Vec<usize> {
    hive.values().map(|v| v.id).collect()
}

/// Asserts the values in `first` were dropped, then drops the hive and
/// asserts every value was dropped once.
fn assert_dropped_then_rest(tracker: &Tracker, hive: Hive<Val>, first: &[usize]) {
    tracker.assert_dropped_exactly(first);
    hive.check_invariants();
    drop(hive);
    tracker.assert_all_dropped_once();
}

#[test]
fn dropping_the_hive_drops_every_value_once() {
    let tracker = Tracker::new();
    let (mut hive, keys) = filled(&tracker, 30);
    for key in keys.iter().step_by(3) {
        drop(hive.remove(*key));
    }
    // Empty two whole blocks: one is kept, one freed.
    for key in &keys[4..12] {
        drop(hive.remove(*key));
    }
    for _ in 0..12 {
        hive.insert(tracker.make());
    }
    hive.check_invariants();
    assert_eq!(tracker.total_drops(), 16);
    drop(hive);
    assert_eq!(tracker.created(), 42);
    tracker.assert_all_dropped_once();
}

#[test]
fn remove_hands_the_value_over() {
    let tracker = Tracker::new();
    let (mut hive, keys) = filled(&tracker, 6);
    let value = hive.remove(keys[5]).unwrap();
    assert_eq!(value.id, 5);
    assert_eq!(tracker.total_drops(), 0);
    drop(value);
    assert_dropped_then_rest(&tracker, hive, &[5]);
}

#[test]
fn into_iter_partially_consumed_drops_the_rest() {
    let tracker = Tracker::new();
    let (mut hive, keys) = filled(&tracker, 10);
    drop(hive.remove(keys[0]));
    let mut iter = hive.into_iter();
    assert_eq!(iter.len(), 9);
    let (key, value) = iter.next().unwrap();
    assert_eq!((key, value.id), (keys[1], 1));
    assert_eq!(iter.len(), 8);
    drop(iter);
    tracker.assert_dropped_exactly(&[0, 2, 3, 4, 5, 6, 7, 8, 9]);
    drop(value);
    tracker.assert_all_dropped_once();
}

#[test]
fn drain_partially_consumed_drops_the_rest_and_empties_the_hive() {
    let tracker = Tracker::new();
    let (mut hive, keys) = filled(&tracker, 10);
    let mut drain = hive.drain();
    let taken: Vec<_> = drain.by_ref().take(5).collect();
    assert_eq!(drain.len(), 5);
    drop(drain);
    tracker.assert_dropped_exactly(&[5, 6, 7, 8, 9]);
    assert!(hive.is_empty());
    assert!(hive.block_count() <= 1);
    hive.check_invariants();
    assert!(keys.iter().all(|&k| hive.get(k).is_none()));
    drop(taken);
    let key = hive.insert(tracker.make());
    assert!(!keys.contains(&key));
    drop(hive);
    tracker.assert_all_dropped_once();
}

#[test]
fn forgotten_drain_leaves_the_rest_in_the_hive() {
    let tracker = Tracker::new();
    let (mut hive, keys) = filled(&tracker, 6);
    let mut drain = hive.drain();
    let first = drain.next().unwrap();
    let second = drain.next().unwrap();
    std::mem::forget(drain);
    hive.check_invariants();
    assert_eq!(ids(&hive), [2, 3, 4, 5]);
    assert!(hive.get(keys[0]).is_none());
    assert_eq!(hive[keys[4]].id, 4);
    drop((first, second));
    assert_dropped_then_rest(&tracker, hive, &[0, 1]);
}

#[test]
fn clear_and_retain_drop_each_removed_value_once() {
    let tracker = Tracker::new();
    let (mut hive, _) = filled(&tracker, 10);
    hive.retain(|_, v| v.id % 3 != 0);
    tracker.assert_dropped_exactly(&[0, 3, 6, 9]);
    assert_eq!(ids(&hive), [1, 2, 4, 5, 7, 8]);
    hive.clear();
    tracker.assert_all_dropped_once();
    hive.insert(tracker.make());
    assert_dropped_then_rest(&tracker, hive, &(0..10).collect::<Vec<_>>());
}

#[test]
fn clone_drop_counts() {
    let tracker = Tracker::new();
    let (source, _) = filled(&tracker, 5);
    let copy = source.clone();
    assert_eq!(tracker.created(), 10);
    assert_eq!(ids(&copy), [5, 6, 7, 8, 9]);
    drop((source, copy));
    tracker.assert_all_dropped_once();
}

// ---------------------------------------------------------------------------
// A panicking `Drop`.

#[test]
fn panicking_drop_during_clear() {
    let tracker = Tracker::new();
    let (mut hive, keys) = filled(&tracker, 10);
    drop(hive.remove(keys[2]));
    // In the second block: the first block is done, the third not started.
    tracker.panic_on_drop.set(Some(5));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| hive.clear())));
    tracker.assert_all_dropped_once();
    assert!(hive.is_empty());
    hive.check_invariants();
    assert!(keys.iter().all(|&k| hive.get(k).is_none()));
    let key = hive.insert(tracker.make());
    assert!(!keys.contains(&key));
    drop(hive);
    tracker.assert_all_dropped_once();
}

#[test]
fn panicking_drop_during_retain() {
    let tracker = Tracker::new();
    let (mut hive, keys) = filled(&tracker, 10);
    tracker.panic_on_drop.set(Some(4));
    let mut visited = Vec::new();
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        hive.retain(|_, v| {
            visited.push(v.id);
            v.id % 2 == 1
        });
    })));
    // 0, 2 and 4 were removed (4's Drop panicked after it was detached);
    // 5..10 were never visited and stay.
    assert_eq!(visited, [0, 1, 2, 3, 4]);
    hive.check_invariants();
    assert_eq!(ids(&hive), [1, 3, 5, 6, 7, 8, 9]);
    assert!(hive.get(keys[4]).is_none());
    assert_eq!(hive[keys[6]].id, 6);
    // The freed slot is reusable: the second block is the last to get one.
    let key = hive.insert(tracker.make());
    assert_eq!(key.index(), 4);
    assert_dropped_then_rest(&tracker, hive, &[0, 2, 4]);
}

#[test]
fn panicking_drop_during_retain_that_empties_blocks() {
    let tracker = Tracker::new();
    let (mut hive, keys) = filled(&tracker, 16);
    // Blocks 1 and 2 lose every value; the drop of 9 panics, after block 1
    // was emptied (and kept) and in the middle of block 2.
    tracker.panic_on_drop.set(Some(9));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        hive.retain(|_, v| !(4..12).contains(&v.id));
    })));
    hive.check_invariants();
    assert_eq!(ids(&hive), [0, 1, 2, 3, 10, 11, 12, 13, 14, 15]);
    assert_eq!(hive.block_count(), 4);
    for key in &keys[4..10] {
        assert!(hive.get(*key).is_none());
    }
    // Finishing the job empties block 2 as well, which is then freed.
    hive.retain(|_, v| !(4..12).contains(&v.id));
    hive.check_invariants();
    assert_eq!(hive.block_count(), 3);
    assert_dropped_then_rest(&tracker, hive, &(4..12).collect::<Vec<_>>());
}

#[test]
fn panicking_drop_while_dropping_a_drain() {
    let tracker = Tracker::new();
    let (mut hive, keys) = filled(&tracker, 10);
    tracker.panic_on_drop.set(Some(6));
    let mut taken = Vec::new();
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        let mut drain = hive.drain();
        taken.extend(drain.by_ref().take(3));
        drop(drain);
    })));
    tracker.assert_dropped_exactly(&[3, 4, 5, 6, 7, 8, 9]);
    assert!(hive.is_empty());
    hive.check_invariants();
    assert!(keys.iter().all(|&k| hive.get(k).is_none()));
    let taken: Vec<usize> = taken.into_iter().map(|(_, v)| v.id).collect();
    assert_eq!(taken, [0, 1, 2]);
    tracker.assert_all_dropped_once();
}

#[test]
fn panicking_drop_while_dropping_the_hive() {
    // The panicking value in the first, a middle and the last block.
    for panicking in [0, 6, 9] {
        let tracker = Tracker::new();
        let (mut hive, keys) = filled(&tracker, 10);
        drop(hive.remove(keys[7]));
        tracker.panic_on_drop.set(Some(panicking));
        assert_panicked(catch_unwind(AssertUnwindSafe(|| drop(hive))));
        tracker.assert_all_dropped_once();
    }
}

#[test]
fn panicking_drop_while_dropping_into_iter() {
    let tracker = Tracker::new();
    let (hive, _) = filled(&tracker, 10);
    tracker.panic_on_drop.set(Some(5));
    let mut iter = hive.into_iter();
    let first = iter.next().unwrap();
    assert_panicked(catch_unwind(AssertUnwindSafe(|| drop(iter))));
    tracker.assert_dropped_exactly(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    drop(first);
    tracker.assert_all_dropped_once();
}

// ---------------------------------------------------------------------------
// A panicking closure, iterator or `Clone`.

#[test]
fn panicking_retain_closure() {
    let tracker = Tracker::new();
    let (mut hive, _) = filled(&tracker, 10);
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        hive.retain(|_, v| {
            if v.id == 5 {
                panic::panic_any(BOOM);
            }
            v.id % 2 == 1
        });
    })));
    hive.check_invariants();
    assert_eq!(ids(&hive), [1, 3, 5, 6, 7, 8, 9]);
    assert_dropped_then_rest(&tracker, hive, &[0, 2, 4]);
}

#[test]
fn panicking_extend_keeps_what_was_inserted() {
    let tracker = Tracker::new();
    let (mut hive, _) = filled(&tracker, 3);
    let source = Rc::clone(&tracker);
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        hive.extend((0..10).map(|n| {
            if n == 6 {
                panic::panic_any(BOOM);
            }
            source.make()
        }));
    })));
    hive.check_invariants();
    // 3 before, then 6 from the iterator (ids 3..9), over three blocks.
    assert_eq!(ids(&hive), (0..9).collect::<Vec<_>>());
    assert_eq!(hive.block_count(), 3);
    assert_dropped_then_rest(&tracker, hive, &[]);
}

#[test]
fn panicking_extend_with_a_panicking_value_drop() {
    // The iterator drops a value it made (its `Drop` panics) before it
    // yields the next: the hive keeps what it has.
    let tracker = Tracker::new();
    let (mut hive, _) = filled(&tracker, 2);
    let source = Rc::clone(&tracker);
    tracker.panic_on_drop.set(Some(4));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        hive.extend((0..5).map(|_| {
            let value = source.make();
            if value.id == 4 {
                drop(value);
                return source.make();
            }
            value
        }));
    })));
    hive.check_invariants();
    assert_eq!(ids(&hive), [0, 1, 2, 3]);
    assert_dropped_then_rest(&tracker, hive, &[4]);
}

#[test]
fn panicking_insert_with_key_closure_leaves_the_hive_unchanged() {
    let tracker = Tracker::new();
    // 8 values: two full blocks, so the append case must make a block.
    let (mut hive, keys) = filled(&tracker, 8);
    for remove_first in [true, false] {
        if remove_first {
            drop(hive.remove(keys[1]));
        }
        let before = hive.len();
        let snapshot: Vec<(Id, usize)> = hive.iter().map(|(k, v)| (k, v.id)).collect();
        let mut seen = None;
        assert_panicked(catch_unwind(AssertUnwindSafe(|| {
            hive.insert_with_key(|key| {
                seen = Some(key);
                panic::panic_any(BOOM)
            })
        })));
        hive.check_invariants();
        assert_eq!(hive.len(), before);
        let after: Vec<(Id, usize)> = hive.iter().map(|(k, v)| (k, v.id)).collect();
        assert_eq!(after, snapshot);
        let offered = seen.unwrap();
        assert!(hive.get(offered).is_none());
        let key = hive.insert(tracker.make());
        assert_eq!(key, offered);
        assert_eq!(key.index(), if remove_first { 1 } else { 8 });
    }
    assert_dropped_then_rest(&tracker, hive, &[1]);
}

#[test]
fn panicking_clone_during_clone() {
    let tracker = Tracker::new();
    let (mut source, keys) = filled(&tracker, 8); // ids 0..8
    drop(source.remove(keys[2]));
    // In the second block.
    tracker.panic_on_clone.set(Some(5));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| source.clone())));
    // Clones of 0, 1, 3 and 4 (ids 8..12) were made and dropped; the
    // source is untouched.
    assert_eq!(tracker.created(), 12);
    tracker.assert_dropped_exactly(&[2, 8, 9, 10, 11]);
    source.check_invariants();
    assert_eq!(ids(&source), [0, 1, 3, 4, 5, 6, 7]);
    drop(source);
    tracker.assert_all_dropped_once();
}

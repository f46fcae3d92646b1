//! Drop counting and panic safety.
//!
//! Every value is a [`Val`] registered with a per-test [`Tracker`], which
//! counts the drops of each value separately, so a double drop and a leak
//! are both visible. A tracker can arm one value's `Drop` or `Clone` to
//! panic. Each test ends by asserting the exact drop count of every value.

use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use handlekit::{Id, IdTable, Key, Reuse};

mod common;
use common::tracker::{assert_panicked, Tracker, Val, BOOM};

/// A table of `n` tracked values with ids `0..n` in slots `0..n`.
fn filled(tracker: &Rc<Tracker>, n: usize) -> (IdTable<Val>, Vec<Id>) {
    let mut table = IdTable::new();
    let keys = (0..n).map(|_| table.insert(tracker.make())).collect();
    (table, keys)
}

/// The ids of the values in the table, in slot order.
fn ids(table: &IdTable<Val>) -> Vec<usize> {
    table.values().map(|v| v.id).collect()
}

// ---------------------------------------------------------------------------
// Plain drop counting.

#[test]
fn dropping_the_table_drops_every_value_once() {
    let tracker = Tracker::new();
    let (mut table, keys) = filled(&tracker, 100);
    // Some holes, some reuse, so not every slot is occupied.
    for key in keys.iter().step_by(3) {
        drop(table.remove(*key));
    }
    for _ in 0..10 {
        table.insert(tracker.make());
    }
    assert_eq!(tracker.total_drops(), 34);
    drop(table);
    assert_eq!(tracker.created(), 110);
    tracker.assert_all_dropped_once();
}

#[test]
fn remove_hands_the_value_over() {
    let tracker = Tracker::new();
    let (mut table, keys) = filled(&tracker, 3);
    let value = table.remove(keys[1]).unwrap();
    assert_eq!(value.id, 1);
    assert_eq!(tracker.total_drops(), 0);
    drop(value);
    assert_dropped_then_rest(&tracker, table, &[1]);
}

/// Asserts the values in `first` were dropped, then drops the table and
/// asserts every value was dropped once.
fn assert_dropped_then_rest(tracker: &Tracker, table: IdTable<Val>, first: &[usize]) {
    tracker.assert_dropped_exactly(first);
    table.check_invariants();
    drop(table);
    tracker.assert_all_dropped_once();
}

#[test]
fn into_iter_partially_consumed_drops_the_rest() {
    let tracker = Tracker::new();
    let (mut table, keys) = filled(&tracker, 10);
    drop(table.remove(keys[0]));
    let mut iter = table.into_iter();
    assert_eq!(iter.len(), 9);
    let (key, value) = iter.next().unwrap();
    assert_eq!((key, value.id), (keys[1], 1));
    let (_, second) = iter.next().unwrap();
    assert_eq!(iter.len(), 7);
    tracker.assert_dropped_exactly(&[0]);
    drop(iter);
    tracker.assert_dropped_exactly(&[0, 3, 4, 5, 6, 7, 8, 9]);
    drop((value, second));
    tracker.assert_all_dropped_once();
}

#[test]
fn drain_partially_consumed_drops_the_rest_and_empties_the_table() {
    let tracker = Tracker::new();
    let (mut table, keys) = filled(&tracker, 10);
    let mut drain = table.drain();
    let taken: Vec<_> = drain.by_ref().take(3).collect();
    assert_eq!(drain.len(), 7);
    drop(drain);
    tracker.assert_dropped_exactly(&[3, 4, 5, 6, 7, 8, 9]);
    assert!(table.is_empty());
    table.check_invariants();
    assert!(keys.iter().all(|&k| table.get(k).is_none()));
    drop(taken);
    tracker.assert_all_dropped_once();
    // The table is still usable, and its slots are reused with new keys.
    let key = table.insert(tracker.make());
    assert!(!keys.contains(&key));
    drop(table);
    tracker.assert_all_dropped_once();
}

#[test]
fn forgotten_drain_leaves_the_rest_in_the_table() {
    let tracker = Tracker::new();
    let (mut table, keys) = filled(&tracker, 6);
    let mut drain = table.drain();
    let first = drain.next().unwrap();
    let second = drain.next().unwrap();
    // Leaking the drain is safe: the values it did not yield stay put.
    std::mem::forget(drain);
    table.check_invariants();
    assert_eq!(ids(&table), [2, 3, 4, 5]);
    assert!(table.get(keys[0]).is_none());
    assert_eq!(table[keys[4]].id, 4);
    drop((first, second));
    assert_dropped_then_rest(&tracker, table, &[0, 1]);
}

#[test]
fn clear_and_retain_drop_each_removed_value_once() {
    let tracker = Tracker::new();
    let (mut table, _) = filled(&tracker, 10);
    table.retain(|_, v| v.id % 3 != 0);
    tracker.assert_dropped_exactly(&[0, 3, 6, 9]);
    assert_eq!(ids(&table), [1, 2, 4, 5, 7, 8]);
    table.clear();
    tracker.assert_all_dropped_once();
    table.insert(tracker.make());
    assert_dropped_then_rest(&tracker, table, &(0..10).collect::<Vec<_>>());
}

#[test]
fn clone_and_clone_from_drop_counts() {
    let tracker = Tracker::new();
    let (source, _) = filled(&tracker, 5);
    let copy = source.clone();
    assert_eq!(tracker.created(), 10);
    assert_eq!(ids(&copy), [5, 6, 7, 8, 9]);
    let (mut target, _) = filled(&tracker, 3); // ids 10, 11, 12
    target.clone_from(&source); // drops 10..13, clones into 13..18
    tracker.assert_dropped_exactly(&[10, 11, 12]);
    assert_eq!(ids(&target), [13, 14, 15, 16, 17]);
    drop((source, copy, target));
    tracker.assert_all_dropped_once();
}

// ---------------------------------------------------------------------------
// A panicking `Drop`.

#[test]
fn panicking_drop_during_clear() {
    let tracker = Tracker::new();
    let (mut table, keys) = filled(&tracker, 10);
    drop(table.remove(keys[2]));
    tracker.panic_on_drop.set(Some(4));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| table.clear())));
    // The others were still dropped, and the table is empty and sound.
    tracker.assert_all_dropped_once();
    assert!(table.is_empty());
    table.check_invariants();
    assert!(keys.iter().all(|&k| table.get(k).is_none()));
    // Usable afterwards: old keys stay stale.
    let key = table.insert(tracker.make());
    assert!(!keys.contains(&key));
    drop(table);
    tracker.assert_all_dropped_once();
}

#[test]
fn panicking_drop_during_retain() {
    let tracker = Tracker::new();
    let (mut table, keys) = filled(&tracker, 10);
    tracker.panic_on_drop.set(Some(4));
    let mut visited = Vec::new();
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        table.retain(|_, v| {
            visited.push(v.id);
            v.id % 2 == 1
        });
    })));
    // 0, 2 and 4 were removed (4's Drop panicked after it was detached);
    // 5..10 were never visited and stay.
    assert_eq!(visited, [0, 1, 2, 3, 4]);
    table.check_invariants();
    assert_eq!(ids(&table), [1, 3, 5, 6, 7, 8, 9]);
    assert!(table.get(keys[4]).is_none());
    assert_eq!(table[keys[6]].id, 6);
    assert_dropped_then_rest(&tracker, table, &[0, 2, 4]);
}

#[test]
fn panicking_drop_while_dropping_a_drain() {
    let tracker = Tracker::new();
    let (mut table, keys) = filled(&tracker, 10);
    tracker.panic_on_drop.set(Some(6));
    let mut taken = Vec::new();
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        let mut drain = table.drain();
        taken.extend(drain.by_ref().take(3));
        drop(drain); // drops 3..10; 6 panics
    })));
    // Every value the drain did not yield was dropped once, and the table
    // is empty and sound.
    tracker.assert_dropped_exactly(&[3, 4, 5, 6, 7, 8, 9]);
    assert!(table.is_empty());
    table.check_invariants();
    assert!(keys.iter().all(|&k| table.get(k).is_none()));
    let taken: Vec<usize> = taken.into_iter().map(|(_, v)| v.id).collect();
    assert_eq!(taken, [0, 1, 2]);
    tracker.assert_all_dropped_once();
}

#[test]
fn panicking_drop_while_dropping_the_table() {
    let tracker = Tracker::new();
    let (mut table, keys) = filled(&tracker, 10);
    drop(table.remove(keys[7]));
    tracker.panic_on_drop.set(Some(0));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| drop(table))));
    tracker.assert_all_dropped_once();
}

#[test]
fn panicking_drop_while_dropping_into_iter() {
    let tracker = Tracker::new();
    let (table, _) = filled(&tracker, 10);
    tracker.panic_on_drop.set(Some(5));
    let mut iter = table.into_iter();
    let first = iter.next().unwrap();
    assert_panicked(catch_unwind(AssertUnwindSafe(|| drop(iter))));
    tracker.assert_dropped_exactly(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    drop(first);
    tracker.assert_all_dropped_once();
}

#[test]
fn panicking_drop_of_the_target_during_clone_from() {
    let tracker = Tracker::new();
    let (source, _) = filled(&tracker, 3); // ids 0..3
    let (mut target, old_keys) = filled(&tracker, 4); // ids 3..7
    tracker.panic_on_drop.set(Some(4));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        target.clone_from(&source);
    })));
    // The target's old values were all dropped; nothing was cloned yet.
    tracker.assert_dropped_exactly(&[3, 4, 5, 6]);
    assert_eq!(tracker.created(), 7);
    target.check_invariants();
    assert!(target.is_empty());
    assert!(old_keys.iter().all(|&k| target.get(k).is_none()));
    // The target still works.
    target.clone_from(&source);
    target.check_invariants();
    assert!(target.keys().eq(source.keys()));
    drop((source, target));
    tracker.assert_all_dropped_once();
}

// ---------------------------------------------------------------------------
// A panicking closure or `Clone`.

#[test]
fn panicking_retain_closure() {
    let tracker = Tracker::new();
    let (mut table, _) = filled(&tracker, 10);
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        table.retain(|_, v| {
            if v.id == 5 {
                panic::panic_any(BOOM);
            }
            v.id % 2 == 1
        });
    })));
    table.check_invariants();
    // 0, 2 and 4 were removed before the panic; 5 and later stay.
    assert_eq!(ids(&table), [1, 3, 5, 6, 7, 8, 9]);
    assert_dropped_then_rest(&tracker, table, &[0, 2, 4]);
}

#[test]
fn panicking_insert_with_key_closure_leaves_the_table_unchanged() {
    for reuse in [Reuse::Lifo, Reuse::Fifo { min_free: 0 }] {
        let tracker = Tracker::new();
        let (mut table, keys) = filled(&tracker, 4);
        table.set_reuse(reuse);
        // Once with a free slot to reuse, once with none (append).
        for remove_first in [true, false] {
            if remove_first {
                drop(table.remove(keys[1]));
            }
            let before = table.len();
            let snapshot: Vec<(Id, usize)> = table.iter().map(|(k, v)| (k, v.id)).collect();
            let mut seen = None;
            assert_panicked(catch_unwind(AssertUnwindSafe(|| {
                table.insert_with_key(|key| {
                    seen = Some(key);
                    panic::panic_any(BOOM)
                })
            })));
            table.check_invariants();
            assert_eq!(table.len(), before);
            let after: Vec<(Id, usize)> = table.iter().map(|(k, v)| (k, v.id)).collect();
            assert_eq!(after, snapshot);
            // The key the closure was offered is not live, and the next
            // insertion gets it after all.
            let offered = seen.unwrap();
            assert!(table.get(offered).is_none());
            let key = table.insert(tracker.make());
            assert_eq!(key, offered);
            assert_eq!(key.index(), if remove_first { 1 } else { 4 });
        }
        assert_dropped_then_rest(&tracker, table, &[1]);
    }
}

#[test]
fn panicking_clone_during_clone() {
    let tracker = Tracker::new();
    let (mut source, keys) = filled(&tracker, 8); // ids 0..8
    drop(source.remove(keys[2]));
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

#[test]
fn panicking_clone_during_clone_from() {
    let tracker = Tracker::new();
    let (source, _) = filled(&tracker, 6); // ids 0..6
    let (mut target, _) = filled(&tracker, 3); // ids 6..9
    tracker.panic_on_clone.set(Some(4));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        target.clone_from(&source);
    })));
    // The target's old values were dropped; the clones made so far (of 0..4,
    // ids 9..13) are in the target and are dropped with it, once.
    assert_eq!(tracker.created(), 13);
    tracker.assert_dropped_exactly(&[6, 7, 8]);
    assert_eq!(ids(&target), [9, 10, 11, 12]);
    drop(target);
    tracker.assert_dropped_exactly(&[6, 7, 8, 9, 10, 11, 12]);
    drop(source);
    tracker.assert_all_dropped_once();
}

/// After a `clone` panics in `clone_from`, the target is still a sound
/// table: its own invariants hold, and every slot it holds is usable.
///
/// The source has a vacant slot and a retired slot before the value whose
/// clone panics, so the partially cloned target holds those too.
#[test]
fn table_is_consistent_after_panicking_clone_in_clone_from() {
    handlekit::define_key! {
        /// 1 generation bit: a slot retires when its first value leaves.
        struct OneShot(u32; index_bits = 31);
    }
    let tracker = Tracker::new();
    let mut source: IdTable<Val, OneShot> = IdTable::default();
    let keys: Vec<OneShot> = (0..4).map(|_| source.insert(tracker.make())).collect();
    drop(source.remove(keys[1])); // slot 1 retires
    let mut target: IdTable<Val, OneShot> = IdTable::default();
    target.insert(tracker.make()); // id 4
    tracker.panic_on_clone.set(Some(3));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        target.clone_from(&source);
    })));
    // Drop counts are right: the old value is gone, the two clones made
    // (of slots 0 and 2) are in the target.
    assert_eq!(target.len(), 2);
    assert_eq!(tracker.drops(4), 1);
    assert_eq!(tracker.created(), 7);
    // The target's bookkeeping must agree with its slots: slot 1 is retired
    // and must be counted as such, and the invariants must hold.
    assert_eq!(target.retired_count(), 1, "retired slot 1 not counted");
    target.check_invariants();
    drop((source, target));
    tracker.assert_all_dropped_once();
}

/// The same situation seen through the public API only: after a `clone`
/// panics in `clone_from`, a fixed-capacity target must still be able to
/// hold `capacity()` values, reusing the vacant slot it copied.
#[test]
fn vacant_slot_is_reusable_after_panicking_clone_in_clone_from() {
    let tracker = Tracker::new();
    let mut source: IdTable<Val> = IdTable::with_fixed_capacity(3);
    let keys: Vec<Id> = (0..3).map(|_| source.insert(tracker.make())).collect();
    drop(source.remove(keys[1])); // slot 1 is free
    let mut target: IdTable<Val> = IdTable::new();
    tracker.panic_on_clone.set(Some(2));
    assert_panicked(catch_unwind(AssertUnwindSafe(|| {
        target.clone_from(&source);
    })));
    // The target holds the clone of slot 0 and a copy of vacant slot 1.
    assert_eq!(target.len(), 1);
    assert_eq!(target.capacity(), 3);
    let mut added = 0;
    while target.len() < target.capacity() {
        assert!(
            target.try_insert(tracker.make()).is_ok(),
            "refused a value with len {} < capacity {}",
            target.len(),
            target.capacity()
        );
        added += 1;
    }
    assert_eq!(added, 2);
    drop((source, target));
    tracker.assert_all_dropped_once();
}

panicking_loop_bodies_test!();

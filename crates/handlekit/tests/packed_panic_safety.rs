//! Drop counting and panic safety for `PackedTable`, `SecondaryMap` and
//! `SparseSecondaryMap`.
//!
//! Every value is a [`Val`] registered with a per-test [`Tracker`], which
//! counts the drops of each value separately, so a double drop and a leak
//! are both visible. A tracker can arm one value's `Drop` or `Clone` to
//! panic. Each test asserts the exact drop count of every value and that
//! the container's invariant checker passes afterwards.

use std::cell::RefCell;
use std::panic;
use std::rc::Rc;

use handlekit::secondary::Entry;
use handlekit::{Id, IdTable, Key, PackedTable, SecondaryMap, SparseSecondaryMap};

mod common;
use common::tracker::{
    assert_panicked, assert_panics, remove_every, sort_panicking_at, take_then_drop, Tracker, Val,
    BOOM,
};

/// A value that counts its drops in a borrowed array and owns no heap
/// memory, for tests that leak values on purpose (Miri reports leaked heap
/// memory, such as a leaked [`Val`]'s tracker).
struct Counted<'a> {
    id: usize,
    drops: &'a RefCell<Vec<usize>>,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops.borrow_mut()[self.id] += 1;
    }
}

// ---------------------------------------------------------------------------
// PackedTable: the shared suite (`common/panic_suite.rs`), then what only a
// packed table does: sorting and swapping positions.

mod packed_table {
    use super::*;

    panic_suite_tests!(PackedTable::new());

    #[test]
    fn panicking_drop_of_the_target_during_clone_from() {
        common::panic_suite::panicking_drop_of_the_target_during_clone_from(PackedTable::new);
    }
}

/// A table of `n` tracked values with ids `0..n`, in that dense order, with
/// its tracker.
fn packed(n: usize) -> (Rc<Tracker>, PackedTable<Val>, Vec<Id>) {
    let tracker = Tracker::new();
    let (table, keys) = common::panic_suite::filled(PackedTable::new, &tracker, n);
    (tracker, table, keys)
}

/// The ids of the values in the table, in dense order.
fn ids<K: Key>(table: &PackedTable<Val, K>) -> Vec<usize> {
    table.values().map(|v| v.id).collect()
}

/// Every key in `keys` names (through `get`) the value with the id of its
/// position in `keys` if that id is in `live`, and nothing else.
fn assert_resolves<'a>(keys: &[Id], live: &[usize], get: impl Fn(Id) -> Option<&'a Val>) {
    for (id, &key) in keys.iter().enumerate() {
        if live.contains(&id) {
            assert_eq!(get(key).map(|v| v.id), Some(id), "{key:?}");
        } else {
            assert!(get(key).is_none(), "removed {key:?} resolves");
        }
    }
}

/// The table is consistent and its keys resolve as [`assert_resolves`]
/// says.
fn assert_keys(table: &PackedTable<Val>, keys: &[Id], live: &[usize]) {
    table.check_invariants();
    assert_resolves(keys, live, |key| table.get(key));
}

/// Sorting and swapping move values around; none may be duplicated or
/// lost.
#[test]
fn sorting_and_swapping_neither_drop_nor_duplicate() {
    let (tracker, mut table, keys) = packed(100);
    let removed = remove_every(&keys, 3, |key| table.remove(key));
    for _ in 0..10 {
        table.insert(tracker.make());
    }
    table.sort_by(|a, b| b.id.cmp(&a.id));
    table.swap_positions(0, 5);
    table.sort_unstable_by(|a, b| a.id.cmp(&b.id));
    table.sort_by_key(|v| v.id % 7);
    assert_eq!(tracker.created(), 110);
    assert_eq!(table.len(), 76);
    common::panic_suite::assert_dropped_then_rest(&tracker, table, &removed);
}

/// A panicking comparator moves nothing and drops nothing, for each sort.
#[test]
fn packed_panicking_comparator() {
    let (tracker, mut table, keys) = packed(12);
    drop(table.remove(keys[4]));
    table.swap_positions(0, 3);
    let before: Vec<(Id, usize)> = table.iter().map(|(k, v)| (k, v.id)).collect();
    for method in 0..3 {
        for panic_at in [0, 5, 20] {
            // Descending ids.
            assert_panicked(sort_panicking_at(&mut table, method, panic_at, |v| {
                usize::MAX - v.id
            }));
            table.check_invariants();
            let after: Vec<(Id, usize)> = table.iter().map(|(k, v)| (k, v.id)).collect();
            assert_eq!(after, before, "method {method}, panic at {panic_at}");
            tracker.assert_dropped_exactly(&[4]);
        }
    }
    // A sort that completes still works afterwards.
    table.sort_by(|a, b| b.id.cmp(&a.id));
    assert_eq!(ids(&table), [11, 10, 9, 8, 7, 6, 5, 3, 2, 1, 0]);
    assert_keys(&table, &keys, &[0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11]);
    tracker.drop_all(table);
}

// ---------------------------------------------------------------------------
// The secondary maps. The same tests run for both; where their documented
// behaviour legitimately differs (when `retain` drops a removed value, what
// a forgotten drain leaves), each module states its expectation.

macro_rules! secondary_panic_tests {
    (
        $module:ident, $map:ident,
        // Ids left after `retain(odd)` whose Drop of value 4 panics, and the
        // ids dropped.
        retain_drop_panic: $kept:expr, $dropped:expr,
        // Whether a forgotten drain leaves the values it did not yield in
        // the map (else it leaks them).
        forgotten_drain_keeps: $keeps:expr
    ) => {
        mod $module {
            use super::*;

            type Map = $map<Id, Val>;

            /// A primary with `n` live keys and a map holding value `i`
            /// (id `i`) for key `i`, with its tracker.
            fn filled(n: usize) -> (Rc<Tracker>, Map, Vec<Id>) {
                let tracker = Tracker::new();
                let mut primary: IdTable<()> = IdTable::new();
                let keys: Vec<Id> = (0..n).map(|_| primary.insert(())).collect();
                let mut map = Map::new();
                for &key in &keys {
                    assert!(map.insert(key, tracker.make()).is_none());
                }
                (tracker, map, keys)
            }

            fn map_ids(map: &Map) -> Vec<usize> {
                let mut ids: Vec<usize> = map.values().map(|v| v.id).collect();
                ids.sort_unstable();
                ids
            }

            fn assert_keys(map: &Map, keys: &[Id], live: &[usize]) {
                map.check_invariants();
                assert_eq!(map.len(), live.len());
                assert_resolves(keys, live, |key| map.get(key));
            }

            #[test]
            fn dropping_the_map_drops_every_value_once() {
                let (tracker, mut map, keys) = filled(50);
                let removed = remove_every(&keys, 4, |key| map.remove(key));
                tracker.assert_dropped_exactly(&removed);
                map.check_invariants();
                tracker.drop_all(map);
            }

            #[test]
            fn panicking_drop_during_clear() {
                let (tracker, mut map, keys) = filled(10);
                drop(map.remove(keys[2]));
                tracker.drop_panics_in(4, || map.clear());
                tracker.assert_all_dropped_once();
                assert!(map.is_empty());
                assert_keys(&map, &keys, &[]);
                // Usable afterwards.
                assert!(map.insert(keys[3], tracker.make()).is_none());
                assert_eq!(map[keys[3]].id, 10);
                tracker.drop_all(map);
            }

            #[test]
            fn panicking_drop_during_retain() {
                let (tracker, mut map, keys) = filled(10);
                tracker.drop_panics_in(4, || {
                    map.retain(|_, v| v.id % 2 == 1);
                });
                let kept: &[usize] = &$kept;
                let dropped: &[usize] = &$dropped;
                assert_eq!(map_ids(&map), kept);
                tracker.assert_dropped_exactly(dropped);
                assert_keys(&map, &keys, kept);
                tracker.drop_all(map);
            }

            #[test]
            fn panicking_retain_closure() {
                let (tracker, mut map, keys) = filled(10);
                let mut visited = Vec::new();
                assert_panics(|| {
                    map.retain(|_, v| {
                        visited.push(v.id);
                        if v.id == 5 {
                            panic::panic_any(BOOM);
                        }
                        v.id % 2 == 1
                    });
                });
                // Both maps visit in insertion order here (index order is
                // insertion order, and the sparse map has no holes).
                assert_eq!(visited, [0, 1, 2, 3, 4, 5]);
                tracker.assert_dropped_exactly(&[0, 2, 4]);
                assert_keys(&map, &keys, &[1, 3, 5, 6, 7, 8, 9]);
                tracker.drop_all(map);
            }

            #[test]
            fn panicking_drop_while_dropping_a_drain() {
                let (tracker, mut map, keys) = filled(10);
                let mut taken = Vec::new();
                // The drain yields 0..3, then drops 3..10; 6 panics.
                tracker.drop_panics_in(6, || take_then_drop(map.drain(), 3, &mut taken));
                tracker.assert_dropped_exactly(&[3, 4, 5, 6, 7, 8, 9]);
                assert!(map.is_empty());
                assert_keys(&map, &keys, &[]);
                let taken: Vec<(Id, usize)> = taken.into_iter().map(|(k, v)| (k, v.id)).collect();
                assert_eq!(taken, [(keys[0], 0), (keys[1], 1), (keys[2], 2)]);
                tracker.assert_all_dropped_once();
            }

            #[test]
            fn forgotten_drain_stays_sound() {
                let drops = RefCell::new(vec![0; 6]);
                let mut primary: IdTable<()> = IdTable::new();
                let keys: Vec<Id> = (0..6).map(|_| primary.insert(())).collect();
                let mut map: $map<Id, Counted<'_>> = $map::new();
                for (id, &key) in keys.iter().enumerate() {
                    assert!(map.insert(key, Counted { id, drops: &drops }).is_none());
                }
                let mut drain = map.drain();
                let first = drain.next().unwrap();
                let second = drain.next().unwrap();
                std::mem::forget(drain);
                assert_eq!((first.1.id, second.1.id), (0, 1));
                drop((first, second));
                map.check_invariants();
                if $keeps {
                    // The values not yielded stay put.
                    assert_eq!(map.len(), 4);
                    for (id, &key) in keys.iter().enumerate() {
                        assert_eq!(map.get(key).map(|v| v.id), (id >= 2).then_some(id));
                    }
                    drop(map);
                    assert_eq!(*drops.borrow(), [1; 6]);
                } else {
                    // The keys were forgotten when the drain started; the
                    // rest leak, and are never dropped twice.
                    assert!(map.is_empty());
                    assert!(keys.iter().all(|&k| map.get(k).is_none()));
                    drop(map);
                    assert_eq!(*drops.borrow(), [1, 1, 0, 0, 0, 0]);
                }
            }

            #[test]
            fn panicking_drop_while_dropping_the_map() {
                let (tracker, mut map, keys) = filled(10);
                drop(map.remove(keys[7]));
                tracker.drop_panics_in(0, || drop(map));
                tracker.assert_all_dropped_once();
            }

            #[test]
            fn into_iter_partially_consumed_drops_the_rest() {
                let (tracker, map, _) = filled(5);
                let mut iter = map.into_iter();
                let (_, first) = iter.next().unwrap();
                assert_eq!(first.id, 0);
                drop(iter);
                tracker.assert_dropped_exactly(&[1, 2, 3, 4]);
                tracker.drop_all(first);
            }

            #[test]
            fn panicking_clone_during_clone() {
                let (tracker, mut source, keys) = filled(8); // ids 0..8
                                                             // Remove the last value: the order of the rest is insertion
                                                             // order in both maps.
                drop(source.remove(keys[7]));
                tracker.clone_panics_in(5, || source.clone());
                // Clones of 0..5 (ids 8..13) were made first and were
                // dropped.
                assert_eq!(tracker.created(), 13);
                tracker.assert_dropped_exactly(&[7, 8, 9, 10, 11, 12]);
                assert_keys(&source, &keys, &[0, 1, 2, 3, 4, 5, 6]);
                tracker.drop_all(source);
            }

            /// `clone_from` is `Clone`'s default: the copy is made first, so
            /// a panicking `clone` leaves the target as it was.
            #[test]
            fn panicking_clone_during_clone_from() {
                let (tracker, source, keys) = filled(6); // ids 0..6
                let mut target = Map::new();
                assert!(target.insert(keys[0], tracker.make()).is_none()); // id 6
                tracker.clone_panics_in(3, || {
                    target.clone_from(&source);
                });
                // Clones of 0, 1 and 2 (ids 7..10) were made and dropped.
                tracker.assert_dropped_exactly(&[7, 8, 9]);
                target.check_invariants();
                assert_eq!(target.len(), 1);
                assert_eq!(target[keys[0]].id, 6);
                target.clone_from(&source);
                tracker.assert_dropped_exactly(&[6, 7, 8, 9]);
                target.check_invariants();
                assert_eq!(target.len(), 6);
                for &key in &keys {
                    assert_eq!(target[key].id, 10 + source[key].id);
                }
                tracker.drop_all((source, target));
            }

            /// A panicking `or_insert_with` closure inserts nothing and drops
            /// nothing, also when the slot holds an older key's value.
            #[test]
            fn panicking_or_insert_with_leaves_the_map_unchanged() {
                let tracker = Tracker::new();
                let (mut primary, a, b) = common::reused_slot();
                let c = primary.insert(());
                let mut map = Map::new();
                assert!(map.insert(a, tracker.make()).is_none()); // id 0
                for key in [b, c] {
                    assert!(matches!(map.entry(key), Some(Entry::Vacant(_))));
                    assert_panics(|| {
                        map.entry(key)
                            .unwrap()
                            .or_insert_with(|| panic::panic_any(BOOM));
                    });
                    map.check_invariants();
                    assert_eq!(map.len(), 1);
                    assert_eq!(map[a].id, 0);
                    assert!(map.get(key).is_none());
                    tracker.assert_dropped_exactly(&[]);
                }
                tracker.drop_all(map);
            }

            /// Inserting with a newer key drops the older value; if that
            /// `Drop` panics, the map stays sound, the old value is dropped
            /// once, and the new one is either in the map or dropped once.
            #[test]
            fn panicking_drop_of_a_replaced_older_value() {
                let tracker = Tracker::new();
                let mut primary: IdTable<()> = IdTable::new();
                let other = primary.insert(());
                let a = primary.insert(());
                primary.remove(a);
                let b = primary.insert(());
                assert_eq!(a.index(), b.index());
                let mut map = Map::new();
                assert!(map.insert(other, tracker.make()).is_none()); // id 0
                assert!(map.insert(a, tracker.make()).is_none()); // id 1
                tracker.panic_on_drop.set(Some(1));
                let new = tracker.make(); // id 2
                assert_panics(|| map.insert(b, new));
                map.check_invariants();
                assert_eq!(tracker.drops(1), 1);
                assert!(map.get(a).is_none(), "the replaced value still reads");
                match map.get(b) {
                    Some(v) => {
                        assert_eq!(v.id, 2);
                        assert_eq!(tracker.drops(2), 0);
                        assert_eq!(map.len(), 2);
                    }
                    None => {
                        assert_eq!(tracker.drops(2), 1);
                        assert_eq!(map.len(), 1);
                    }
                }
                assert_eq!(map[other].id, 0);
                tracker.drop_all(map);
            }
        }
    };
}

secondary_panic_tests!(
    dense, SecondaryMap,
    // Values are dropped as they are removed: 4's panic stops the pass, and
    // the values not visited yet stay.
    retain_drop_panic: [1, 3, 5, 6, 7, 8, 9], [0, 2, 4],
    // The drain takes values out one at a time, as it yields them.
    forgotten_drain_keeps: true
);

secondary_panic_tests!(
    sparse, SparseSecondaryMap,
    // The removed values are dropped after the pass (as in `PackedTable`):
    // every value was visited.
    retain_drop_panic: [1, 3, 5, 7, 9], [0, 2, 4, 6, 8],
    // Like `Vec::drain`.
    forgotten_drain_keeps: false
);

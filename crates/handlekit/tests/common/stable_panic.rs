//! The drop-counting and panic-safety tests that `Pool` and `Hive` share
//! (`pool_panic_safety`, `hive_panic_safety`): a macro, so that each binary
//! runs them on its own container. The container holds tracked values in
//! blocks of 4 slots, so ids `0..n` sit at key indices `0..n`, the values
//! of one test span several blocks, and a panic in one block must not stop
//! the drops in the next. Every test ends by asserting the exact drop count
//! of every value.

/// `stable_panic_tests!(Container, Key, constructor with 4-slot blocks)`.
#[macro_export]
macro_rules! stable_panic_tests {
    ($ty:ident, $key:ident, $new:expr) => {
        /// A container of `n` tracked values with ids `0..n` in slots `0..n`, four slots
        /// per block.
        fn filled(tracker: &Rc<Tracker>, n: usize) -> ($ty<Val>, Vec<$key>) {
            let mut c = $new;
            let keys = (0..n).map(|_| c.insert(tracker.make())).collect();
            (c, keys)
        }

        /// The ids of the values in the container, in key-index order.
        fn ids(c: &$ty<Val>) -> Vec<usize> {
            c.values().map(|v| v.id).collect()
        }

        /// Asserts the values in `first` were dropped, then drops the container and
        /// asserts every value was dropped once.
        fn assert_dropped_then_rest(tracker: &Tracker, c: $ty<Val>, first: &[usize]) {
            tracker.assert_dropped_exactly(first);
            c.check_invariants();
            drop(c);
            tracker.assert_all_dropped_once();
        }

        #[test]
        fn dropping_the_container_drops_every_value_once() {
            let tracker = Tracker::new();
            let (mut c, keys) = filled(&tracker, 30);
            for key in keys.iter().step_by(3) {
                drop(c.remove(*key));
            }
            for _ in 0..12 {
                c.insert(tracker.make());
            }
            assert_eq!(tracker.total_drops(), 10);
            drop(c);
            assert_eq!(tracker.created(), 42);
            tracker.assert_all_dropped_once();
        }

        #[test]
        fn remove_hands_the_value_over() {
            let tracker = Tracker::new();
            let (mut c, keys) = filled(&tracker, 6);
            let value = c.remove(keys[5]).unwrap();
            assert_eq!(value.id, 5);
            assert_eq!(tracker.total_drops(), 0);
            drop(value);
            assert_dropped_then_rest(&tracker, c, &[5]);
        }

        #[test]
        fn into_iter_partially_consumed_drops_the_rest() {
            let tracker = Tracker::new();
            let (mut c, keys) = filled(&tracker, 10);
            drop(c.remove(keys[0]));
            let mut iter = c.into_iter();
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
        fn drain_partially_consumed_drops_the_rest_and_empties_the_container() {
            let tracker = Tracker::new();
            let (mut c, keys) = filled(&tracker, 10);
            let mut drain = c.drain();
            let taken: Vec<_> = drain.by_ref().take(3).collect();
            assert_eq!(drain.len(), 7);
            drop(drain);
            tracker.assert_dropped_exactly(&[3, 4, 5, 6, 7, 8, 9]);
            assert!(c.is_empty());
            c.check_invariants();
            assert!(keys.iter().all(|&k| c.get(k).is_none()));
            drop(taken);
            let key = c.insert(tracker.make());
            assert!(!keys.contains(&key));
            drop(c);
            tracker.assert_all_dropped_once();
        }

        #[test]
        fn forgotten_drain_leaves_the_rest_in_the_container() {
            let tracker = Tracker::new();
            let (mut c, keys) = filled(&tracker, 6);
            let mut drain = c.drain();
            let first = drain.next().unwrap();
            let second = drain.next().unwrap();
            std::mem::forget(drain);
            c.check_invariants();
            assert_eq!(ids(&c), [2, 3, 4, 5]);
            assert!(c.get(keys[0]).is_none());
            assert_eq!(c[keys[4]].id, 4);
            drop((first, second));
            assert_dropped_then_rest(&tracker, c, &[0, 1]);
        }

        #[test]
        fn clear_and_retain_drop_each_removed_value_once() {
            let tracker = Tracker::new();
            let (mut c, _) = filled(&tracker, 10);
            c.retain(|_, v| v.id % 3 != 0);
            tracker.assert_dropped_exactly(&[0, 3, 6, 9]);
            assert_eq!(ids(&c), [1, 2, 4, 5, 7, 8]);
            c.clear();
            tracker.assert_all_dropped_once();
            c.insert(tracker.make());
            assert_dropped_then_rest(&tracker, c, &(0..10).collect::<Vec<_>>());
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
            let (mut c, keys) = filled(&tracker, 10);
            drop(c.remove(keys[2]));
            // In the second block: the first block is done, the third not started.
            tracker.panic_on_drop.set(Some(5));
            assert_panicked(catch_unwind(AssertUnwindSafe(|| c.clear())));
            tracker.assert_all_dropped_once();
            assert!(c.is_empty());
            c.check_invariants();
            assert!(keys.iter().all(|&k| c.get(k).is_none()));
            let key = c.insert(tracker.make());
            assert!(!keys.contains(&key));
            drop(c);
            tracker.assert_all_dropped_once();
        }

        #[test]
        fn panicking_drop_during_retain() {
            let tracker = Tracker::new();
            let (mut c, keys) = filled(&tracker, 10);
            tracker.panic_on_drop.set(Some(4));
            let mut visited = Vec::new();
            assert_panicked(catch_unwind(AssertUnwindSafe(|| {
                c.retain(|_, v| {
                    visited.push(v.id);
                    v.id % 2 == 1
                });
            })));
            // 0, 2 and 4 were removed (4's Drop panicked after it was detached);
            // 5..10 were never visited and stay.
            assert_eq!(visited, [0, 1, 2, 3, 4]);
            c.check_invariants();
            assert_eq!(ids(&c), [1, 3, 5, 6, 7, 8, 9]);
            assert!(c.get(keys[4]).is_none());
            assert_eq!(c[keys[6]].id, 6);
            // The freed slots are reusable.
            let key = c.insert(tracker.make());
            assert_eq!(key.index(), 4);
            assert_dropped_then_rest(&tracker, c, &[0, 2, 4]);
        }

        #[test]
        fn panicking_drop_while_dropping_a_drain() {
            let tracker = Tracker::new();
            let (mut c, keys) = filled(&tracker, 10);
            tracker.panic_on_drop.set(Some(6));
            let mut taken = Vec::new();
            assert_panicked(catch_unwind(AssertUnwindSafe(|| {
                let mut drain = c.drain();
                taken.extend(drain.by_ref().take(3));
                drop(drain);
            })));
            tracker.assert_dropped_exactly(&[3, 4, 5, 6, 7, 8, 9]);
            assert!(c.is_empty());
            c.check_invariants();
            assert!(keys.iter().all(|&k| c.get(k).is_none()));
            let taken: Vec<usize> = taken.into_iter().map(|(_, v)| v.id).collect();
            assert_eq!(taken, [0, 1, 2]);
            tracker.assert_all_dropped_once();
        }

        #[test]
        fn panicking_drop_while_dropping_the_container() {
            // The panicking value in the first, a middle and the last block.
            for panicking in [0, 6, 9] {
                let tracker = Tracker::new();
                let (mut c, keys) = filled(&tracker, 10);
                drop(c.remove(keys[7]));
                tracker.panic_on_drop.set(Some(panicking));
                assert_panicked(catch_unwind(AssertUnwindSafe(|| drop(c))));
                tracker.assert_all_dropped_once();
            }
        }

        #[test]
        fn panicking_drop_while_dropping_into_iter() {
            let tracker = Tracker::new();
            let (c, _) = filled(&tracker, 10);
            tracker.panic_on_drop.set(Some(5));
            let mut iter = c.into_iter();
            let first = iter.next().unwrap();
            assert_panicked(catch_unwind(AssertUnwindSafe(|| drop(iter))));
            tracker.assert_dropped_exactly(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
            drop(first);
            tracker.assert_all_dropped_once();
        }

        // ---------------------------------------------------------------------------
        // A panicking closure or `Clone`.

        #[test]
        fn panicking_retain_closure() {
            let tracker = Tracker::new();
            let (mut c, _) = filled(&tracker, 10);
            assert_panicked(catch_unwind(AssertUnwindSafe(|| {
                c.retain(|_, v| {
                    if v.id == 5 {
                        panic::panic_any(BOOM);
                    }
                    v.id % 2 == 1
                });
            })));
            c.check_invariants();
            assert_eq!(ids(&c), [1, 3, 5, 6, 7, 8, 9]);
            assert_dropped_then_rest(&tracker, c, &[0, 2, 4]);
        }

        #[test]
        fn panicking_insert_with_key_closure_leaves_the_container_unchanged() {
            let tracker = Tracker::new();
            // 8 values: two full blocks, so the append case must carve a block.
            let (mut c, keys) = filled(&tracker, 8);
            for remove_first in [true, false] {
                if remove_first {
                    drop(c.remove(keys[1]));
                }
                let before = c.len();
                let snapshot: Vec<($key, usize)> = c.iter().map(|(k, v)| (k, v.id)).collect();
                let mut seen = None;
                assert_panicked(catch_unwind(AssertUnwindSafe(|| {
                    c.insert_with_key(|key| {
                        seen = Some(key);
                        panic::panic_any(BOOM)
                    })
                })));
                c.check_invariants();
                assert_eq!(c.len(), before);
                let after: Vec<($key, usize)> = c.iter().map(|(k, v)| (k, v.id)).collect();
                assert_eq!(after, snapshot);
                let offered = seen.unwrap();
                assert!(c.get(offered).is_none());
                let key = c.insert(tracker.make());
                assert_eq!(key, offered);
                assert_eq!(key.index(), if remove_first { 1 } else { 8 });
            }
            assert_dropped_then_rest(&tracker, c, &[1]);
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

        $crate::panicking_loop_bodies_test!();
    };
}

//! Drop counting and panic safety for `Hive`: the shared suite
//! (`common/panic_suite.rs`), with blocks of 4 slots (smallest and
//! largest), then what only a hive does: blocks emptied (kept or freed) by
//! `remove` and by a `retain` that panics, and a panicking `extend`.

use std::panic;
use std::rc::Rc;

use handlekit::{Hive, Id};

mod common;
use common::panic_suite::{self, assert_dropped_then_rest, ids};
use common::tracker::{assert_panics, Tracker, Val, BOOM};

/// Every test sits in `mod hive`, so that its name (`hive::...`) matches the
/// filter of `scripts/miri.sh hive`.
mod hive {
    use super::*;

    panic_suite_tests!(Hive::<_, Id>::with_block_sizes(4, 4));

    /// A hive of 4-slot blocks holding `n` tracked values, ids `0..n`, with
    /// its tracker.
    fn filled(n: usize) -> (Rc<Tracker>, Hive<Val>, Vec<Id>) {
        let tracker = Tracker::new();
        let (hive, keys) = panic_suite::filled(|| Hive::with_block_sizes(4, 4), &tracker, n);
        (tracker, hive, keys)
    }

    #[test]
    fn emptied_blocks_are_kept_then_freed_and_their_values_dropped_once() {
        let (tracker, mut hive, keys) = filled(30);
        // Empty blocks 1 and 2: both stay until `shrink_to_fit`.
        for key in &keys[4..12] {
            drop(hive.remove(*key));
        }
        assert_eq!(hive.block_count(), 8);
        hive.shrink_to_fit();
        assert_eq!(hive.block_count(), 6);
        for _ in 0..12 {
            hive.insert(tracker.make());
        }
        hive.check_invariants();
        assert_eq!(tracker.total_drops(), 8);
        assert_eq!(tracker.created(), 42);
        tracker.drop_all(hive);
    }

    #[test]
    fn panicking_drop_during_retain_that_empties_blocks() {
        let (tracker, mut hive, keys) = filled(16);
        // Blocks 1 and 2 lose every value; the drop of 9 panics, after block 1
        // was emptied and in the middle of block 2.
        tracker.drop_panics_in(9, || {
            hive.retain(|_, v| !(4..12).contains(&v.id));
        });
        hive.check_invariants();
        assert_eq!(ids(&hive), [0, 1, 2, 3, 10, 11, 12, 13, 14, 15]);
        assert_eq!(hive.block_count(), 4);
        for key in &keys[4..10] {
            assert!(hive.get(*key).is_none());
        }
        // Finishing the job empties block 2 as well; both stay until
        // `shrink_to_fit`.
        hive.retain(|_, v| !(4..12).contains(&v.id));
        hive.check_invariants();
        assert_eq!(hive.block_count(), 4);
        hive.shrink_to_fit();
        assert_eq!(hive.block_count(), 2);
        assert_dropped_then_rest(&tracker, hive, &(4..12).collect::<Vec<_>>());
    }

    #[test]
    fn panicking_extend_keeps_what_was_inserted() {
        let (tracker, mut hive, _) = filled(3);
        let source = Rc::clone(&tracker);
        assert_panics(|| {
            hive.extend((0..10).map(|n| {
                if n == 6 {
                    panic::panic_any(BOOM);
                }
                source.make()
            }));
        });
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
        let (tracker, mut hive, _) = filled(2);
        let source = Rc::clone(&tracker);
        tracker.drop_panics_in(4, || {
            hive.extend((0..5).map(|_| {
                let value = source.make();
                if value.id == 4 {
                    drop(value);
                    return source.make();
                }
                value
            }));
        });
        hive.check_invariants();
        assert_eq!(ids(&hive), [0, 1, 2, 3]);
        assert_dropped_then_rest(&tracker, hive, &[4]);
    }
}

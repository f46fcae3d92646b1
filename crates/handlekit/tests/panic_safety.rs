//! Drop counting and panic safety for `IdTable` and `LookupTable` (a
//! `SlotTable` in each layout): the shared suite (`common/panic_suite.rs`)
//! for each, then what only a `SlotTable` has: retired slots and a fixed
//! capacity after a panicking `clone_from`.

use handlekit::{Id, IdTable, LookupTable};

mod common;
use common::panic_suite;
use common::tracker::{Tracker, Val};

mod id_table {
    use super::*;

    panic_suite_tests!(IdTable::new());

    #[test]
    fn panicking_drop_of_the_target_during_clone_from() {
        panic_suite::panicking_drop_of_the_target_during_clone_from(IdTable::new);
    }
}

mod lookup_table {
    use super::*;

    panic_suite_tests!(<LookupTable<_>>::default());

    #[test]
    fn panicking_drop_of_the_target_during_clone_from() {
        panic_suite::panicking_drop_of_the_target_during_clone_from(<LookupTable<_>>::default);
    }
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
    tracker.clone_panics_in(3, || {
        target.clone_from(&source);
    });
    // Drop counts are right: the old value is gone, the two clones made
    // (of slots 0 and 2) are in the target.
    assert_eq!(target.len(), 2);
    assert_eq!(tracker.drops(4), 1);
    assert_eq!(tracker.created(), 7);
    // The target's bookkeeping must agree with its slots: slot 1 is retired
    // and must be counted as such, and the invariants must hold.
    assert_eq!(target.retired_count(), 1, "retired slot 1 not counted");
    target.check_invariants();
    tracker.drop_all((source, target));
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
    tracker.clone_panics_in(2, || {
        target.clone_from(&source);
    });
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
    tracker.drop_all((source, target));
}

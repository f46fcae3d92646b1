//! Regression tests for library bugs found while writing the packed and
//! secondary-map tests, each a minimal reproduction of the documented
//! behaviour it checks.
//!
//! All fixed (1–3 in 24f10a5, 4 after it):
//!
//! 1. `PackedTable::try_insert` on a full fixed-capacity table reallocated
//!    the dense arrays before finding out the table was full
//!    (`dense.reserve_one()` ran before `sparse.try_insert_with`), although
//!    a fixed-capacity table "never reallocates".
//! 2. A clone (or `clone_from` target) of a fixed-capacity `PackedTable`
//!    kept the fixed capacity on its sparse side but not the dense arrays'
//!    allocation (`Vec::clone` has room for the length only): `capacity()`
//!    dropped to `len()`, `try_reserve` returned `Ok` without reserving, and
//!    later insertions reallocated. An `IdTable` clone keeps its capacity.
//! 3. `SparseSecondaryMap` forgot a slot's generation when its value left,
//!    so a stale key older than one it had held was accepted again;
//!    `SecondaryMap` refuses it.
//!
//! 4. `SparseSecondaryMap`'s serde form was its `(key, value)` pairs, so a
//!    round trip forgot the generations remembered for slots without a
//!    value (bug 3's fix). It now also lists the keys that last left its
//!    empty entries (`vacated`).

mod common;

use handlekit::secondary::Entry;
use handlekit::{Id, IdTable, Key, PackedTable, SecondaryMap, SparseSecondaryMap};

/// 1: a refused insertion must not move the values.
#[test]
fn failed_try_insert_into_full_fixed_table_does_not_reallocate() {
    let mut table: PackedTable<u64> = PackedTable::with_fixed_capacity(4);
    let values = table.as_slice().as_ptr();
    let keys = table.key_slice().as_ptr();
    for n in 0..4 {
        table.insert(n);
        // Insertions up to the capacity never reallocate.
        assert_eq!(table.as_slice().as_ptr(), values);
        assert_eq!(table.key_slice().as_ptr(), keys);
    }
    assert!(table.try_insert(4).is_err());
    table.check_invariants();
    assert_eq!(
        table.as_slice().as_ptr(),
        values,
        "a refused try_insert reallocated the values of a fixed-capacity table"
    );
    assert_eq!(table.key_slice().as_ptr(), keys);
}

/// 2: a clone of a fixed-capacity table reports (and has) the capacity
/// of its original, as an `IdTable` clone does.
#[test]
fn clone_of_fixed_capacity_table_keeps_its_capacity() {
    let mut ids: IdTable<u64> = IdTable::with_fixed_capacity(16);
    ids.insert(1);
    assert_eq!(ids.clone().capacity(), 16, "IdTable, for comparison");

    let mut table: PackedTable<u64> = PackedTable::with_fixed_capacity(16);
    table.insert(1);
    assert_eq!(table.capacity(), 16);
    let copy = table.clone();
    copy.check_invariants();
    assert_eq!(copy.capacity(), 16, "clone of a fixed-capacity PackedTable");
}

/// 2, through `try_reserve`: `Ok` promises room without reallocating.
#[test]
fn try_reserve_on_a_clone_of_a_fixed_table_reserves() {
    let mut table: PackedTable<u64> = PackedTable::with_fixed_capacity(16);
    table.insert(1);
    let mut copy = table.clone();
    assert!(copy.try_reserve(15).is_ok());
    assert!(
        copy.capacity() >= copy.len() + 15,
        "try_reserve(15) returned Ok, capacity() is {}",
        copy.capacity()
    );
    let values = copy.as_slice().as_ptr();
    for n in 0..15 {
        copy.insert(n);
    }
    assert_eq!(copy.as_slice().as_ptr(), values, "reallocated after Ok");
}

/// 2, through `clone_from`.
#[test]
fn clone_from_of_fixed_capacity_table_keeps_its_capacity() {
    let mut table: PackedTable<u64> = PackedTable::with_fixed_capacity(100);
    table.extend(0..10);
    let mut target: PackedTable<u64> = PackedTable::new();
    target.clone_from(&table);
    target.check_invariants();
    assert_eq!(
        target.capacity(),
        100,
        "clone_from of a fixed-capacity table"
    );
}

/// 3: after `b` (a newer key of `a`'s slot) had a value, `a` is stale
/// for the dense map even once `b`'s value is gone; the sparse map takes
/// `a`'s value again, so the two maps disagree.
#[test]
fn sparse_map_compares_generations_like_the_dense_map() {
    let (_, a, b) = common::reused_slot();
    assert_eq!(a.index(), b.index());

    let mut dense: SecondaryMap<Id, u8> = SecondaryMap::new();
    let mut sparse: SparseSecondaryMap<Id, u8> = SparseSecondaryMap::new();
    dense.insert(b, 2);
    sparse.insert(b, 2);
    // While `b` holds the slot, both refuse `a`.
    assert_eq!(dense.insert(a, 1), None);
    assert_eq!(sparse.insert(a, 1), None);
    assert_eq!((dense.get(a), sparse.get(a)), (None, None));
    assert!(dense.entry(a).is_none() && sparse.entry(a).is_none());

    assert_eq!(dense.remove(b), Some(2));
    assert_eq!(sparse.remove(b), Some(2));
    // The dense map still knows `a` is stale.
    assert_eq!(dense.insert(a, 1), None);
    assert_eq!(dense.get(a), None);
    assert!(dense.entry(a).is_none());
    // The sparse map must agree.
    assert!(
        !matches!(sparse.entry(a), Some(Entry::Vacant(_))),
        "sparse map offers a vacant entry for a stale key"
    );
    assert_eq!(sparse.insert(a, 1), None);
    assert_eq!(
        sparse.get(a),
        None,
        "sparse map took a value for a key older than one it already held"
    );
}

/// 4: a serde round trip keeps the sparse map refusing the older key, as it
/// keeps the dense map refusing it.
#[cfg(feature = "serde")]
#[test]
fn sparse_map_serde_round_trip_keeps_older_keys_stale() {
    let (_, a, b) = common::reused_slot();

    let mut dense: SecondaryMap<Id, u8> = SecondaryMap::new();
    dense.insert(b, 2);
    dense.remove(b);
    let mut dense = common::json_round_trip(&dense);
    assert!(dense.entry(a).is_none(), "dense map, for comparison");
    assert_eq!(dense.insert(a, 1), None);
    assert_eq!(dense.get(a), None);

    let mut sparse: SparseSecondaryMap<Id, u8> = SparseSecondaryMap::new();
    sparse.insert(b, 2);
    sparse.remove(b);
    assert!(sparse.entry(a).is_none(), "before the round trip");
    let mut sparse = common::json_round_trip(&sparse);
    sparse.check_invariants();
    assert!(
        sparse.entry(a).is_none(),
        "after a serde round trip the sparse map offers an entry for a stale key"
    );
    assert_eq!(sparse.insert(a, 1), None);
    assert_eq!(sparse.get(a), None);
}

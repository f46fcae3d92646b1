//! `detach` / `reattach` edge cases beyond the model tests (`model`,
//! `packed_model`): retirement, fixed capacity, the panic message, and
//! `try_insert_with_key` on the stable-address containers. (Detached slots
//! in the serde form, hostile detached lists and data written before the
//! `detached` field existed are checked in `free_order.rs`.)

mod common;

use common::stale_suite::G2;
use common::table::ReuseTable;
use handlekit::{Hive, IdTable, Key, PackedTable, Pool, Reuse};

#[test]
fn a_detached_slot_is_never_reused() {
    let mut table = IdTable::new();
    let key = table.insert(0u32);
    table.detach(key).unwrap();
    for round in 0..50 {
        let other = table.insert(round);
        assert_ne!(other.index(), key.index());
        table.remove(other);
    }
    table.clear();
    assert!(table.is_detached(key));
    let fresh = table.insert(1);
    assert_ne!(fresh.index(), key.index());
    table.reattach(key, 7);
    assert_eq!(table[key], 7);
    table.check_invariants();
}

#[test]
fn a_detached_key_at_the_last_generation_retires_when_removed() {
    let mut table: IdTable<u8, G2> = IdTable::with_key();
    let mut key = table.insert(0);
    while key.generation() < G2::MAX_GENERATION {
        table.remove(key);
        key = table.insert(0);
    }
    assert_eq!(table.detach(key), Some(0));
    assert_eq!(table.retired_count(), 0, "detached is not retired");
    table.reattach(key, 1);
    assert_eq!(table.remove(key), Some(1));
    assert_eq!(table.retired_count(), 1);
    table.check_invariants();
}

#[test]
fn a_detached_slot_counts_against_a_fixed_capacity() {
    let mut table: IdTable<u8> = IdTable::with_fixed_capacity(2);
    let a = table.insert(1);
    table.detach(a);
    assert_eq!(table.capacity(), 1);
    table.insert(2);
    assert!(table.try_insert(3).unwrap_err().is_fixed_capacity());
    table.reattach(a, 1);
    assert_eq!(table.len(), 2);
    table.check_invariants();
}

/// `reattach` of a key that is not detached: a live one, or (with
/// `reattached`) one detached and reattached already. It must panic (the
/// callers' `should_panic`).
fn reattach_a_key_not_detached<C: ReuseTable<u32>>(reattached: bool) {
    let mut table = C::with_reuse(Reuse::default());
    let key = table.insert(1);
    if reattached {
        table.detach(key);
        table.reattach(key, 2);
    }
    table.reattach(key, 3);
}

#[test]
#[should_panic(expected = "is not detached")]
fn reattach_of_a_live_key_panics() {
    reattach_a_key_not_detached::<PackedTable<u32>>(false);
}

#[test]
#[should_panic(expected = "is not detached")]
fn reattach_twice_panics() {
    reattach_a_key_not_detached::<IdTable<u32>>(true);
}

#[test]
fn try_insert_with_key_on_pool_and_hive() {
    let mut pool = Pool::new();
    let a = pool.insert(1u8);
    pool.remove(a);
    let mut seen = None;
    let err = pool.try_insert_with_key(|key| {
        seen = Some(key);
        Err::<u8, _>("no")
    });
    assert_eq!(err, Err("no"));
    assert_eq!(pool.len(), 0);
    assert_eq!(Some(pool.insert(2)), seen, "the failed insertion's key");

    let mut hive: Hive<u8> = Hive::new();
    let mut seen = None;
    let err = hive.try_insert_with_key(|key| {
        seen = Some(key);
        Err::<u8, _>(())
    });
    assert!(err.is_err());
    assert!(hive.is_empty());
    let key = hive.try_insert_with_key(|key| Ok::<_, ()>(key.index() as u8));
    assert_eq!(key.ok(), seen);
    hive.check_invariants();
}

#[test]
#[should_panic(expected = "fixed capacity")]
fn try_insert_with_key_into_a_full_pool_panics() {
    let mut pool: Pool<u8> = Pool::with_fixed_capacity(1);
    pool.insert(1);
    let _ = pool.try_insert_with_key(|_| Ok::<_, ()>(2));
}

#[test]
#[should_panic(expected = "fixed capacity")]
fn try_insert_with_key_into_a_full_table_panics() {
    let mut table: IdTable<u8> = IdTable::with_fixed_capacity(1);
    let key = table.insert(1);
    // A detached slot is not free.
    table.detach(key);
    let _ = table.try_insert_with_key(|_| Ok::<_, ()>(2));
}

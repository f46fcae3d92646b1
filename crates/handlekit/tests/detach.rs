//! `detach` / `reattach` edge cases beyond the model tests (`model`,
//! `packed_model`): hostile serialized detached lists, data written before
//! the `detached` field existed, the panic message, and `try_insert_with_key`
//! on the stable-address containers.

mod common;

use common::table::ReuseTable;
use handlekit::{define_key, Hive, IdTable, Key, PackedTable, Pool, Reuse};

define_key! {
    /// 2 generation bits: slots retire after 3 occupants.
    pub struct Gen2(u32; index_bits = 30);
}

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
    let mut table: IdTable<u8, Gen2> = IdTable::with_key();
    let mut key = table.insert(0);
    while key.generation() < Gen2::MAX_GENERATION {
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

#[cfg(feature = "serde")]
mod serde {
    use super::*;
    use handlekit::Id;

    #[test]
    fn detached_slots_survive_a_round_trip() {
        let mut table = IdTable::new();
        let keys: Vec<Id> = (0..5).map(|v| table.insert(v)).collect();
        table.detach(keys[1]);
        table.detach(keys[3]);
        let mut back = common::json_round_trip(&table);
        back.check_invariants();
        assert!(back.is_detached(keys[1]) && back.is_detached(keys[3]));
        let fresh = back.insert(9);
        assert!(fresh.index() != keys[1].index() && fresh.index() != keys[3].index());
        back.reattach(keys[3], 30);
        assert_eq!(back[keys[3]], 30);

        let mut packed = PackedTable::new();
        let keys: Vec<Id> = (0..3).map(|v| packed.insert(v)).collect();
        packed.detach(keys[0]);
        let mut back = common::json_round_trip(&packed);
        back.check_invariants();
        back.reattach(keys[0], 10);
        assert_eq!(back.as_slice(), [2, 1, 10]);
    }

    #[test]
    fn data_without_the_detached_field_reads_as_none_detached() {
        let table: IdTable<u8> =
            serde_json::from_str(r#"{"reuse":"Lifo","slots":[[1,5],[1,null]]}"#).unwrap();
        table.check_invariants();
        assert_eq!(table.len(), 1);
        let packed: PackedTable<u8> =
            serde_json::from_str(r#"{"reuse":"Lifo","slots":[[1,0]],"values":[4]}"#).unwrap();
        packed.check_invariants();
        assert_eq!(packed.as_slice(), [4]);
    }

    #[test]
    fn hostile_detached_lists_are_refused() {
        // Slot 0 live, slot 1 vacant at generation 1, slot 2 parked (vacant
        // at the last generation of `Id`, 2^31 - 1).
        let slots = r#"[[1,5],[1,null],[2147483647,null]]"#;
        let parse = |detached: &str| {
            serde_json::from_str::<IdTable<u8>>(&format!(
                r#"{{"reuse":"Lifo","slots":{slots},"detached":{detached}}}"#
            ))
        };
        let table = parse("[[2,7]]").expect("a parked slot may be detached");
        table.check_invariants();
        assert!(table.is_detached(Id::from_parts(2, 7).unwrap()));
        assert_eq!(table.retired_count(), 0);
        for bad in [
            "[[0,1]]",          // live
            "[[1,1]]",          // free, not parked
            "[[3,1]]",          // no such slot
            "[[2,0]]",          // generation 0
            "[[2,1],[2,1]]",    // twice
            "[[4294967295,1]]", // far past the slots
        ] {
            assert!(parse(bad).is_err(), "{bad} was accepted");
        }
    }
}

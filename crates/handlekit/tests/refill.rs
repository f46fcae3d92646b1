//! The refill of an emptied table: a LIFO table whose last value is
//! removed takes its slots again in index order, without a rebuild pass,
//! and everything that meets a refill under way (removals, retired slots,
//! a switch to FIFO, clone, serde, `clear`) keeps the table consistent.
//! `check_invariants` checks the refill's own invariants (every slot from
//! the refill's cursor on is vacant and unlisted).

mod common;

use common::stale_suite::G2;
use handlekit::{Id, IdTable, Key, Reuse};

fn indices<K: Key>(keys: &[K]) -> Vec<usize> {
    keys.iter().map(|key| key.index()).collect()
}

#[test]
fn an_emptied_table_refills_in_index_order() {
    let mut table: IdTable<u32> = IdTable::new();
    let mut keys: Vec<Id> = (0..10).map(|i| table.insert(i)).collect();
    // Remove in a scrambled order, so the free list alone would refill
    // the slots in that order.
    for &i in &[3, 7, 0, 9, 1, 5, 8, 2, 6, 4] {
        assert_eq!(table.remove(keys[i]), Some(i as u32));
        table.check_invariants();
    }
    let refilled: Vec<Id> = (0..4).map(|i| table.insert(100 + i)).collect();
    assert_eq!(indices(&refilled), [0, 1, 2, 3]);
    // Every slot got its next generation, so the old keys stay stale.
    for (old, new) in keys.iter().zip(&refilled) {
        assert_eq!(new.generation(), old.generation() + 1);
        assert_eq!(table.get(*old), None);
    }
    table.check_invariants();
    // A removal during the refill is reused first (LIFO), then the refill
    // goes on where it stopped.
    assert_eq!(table.remove(refilled[1]), Some(101));
    table.check_invariants();
    let next: Vec<Id> = (0..3).map(|i| table.insert(200 + i)).collect();
    assert_eq!(indices(&next), [1, 4, 5]);
    table.check_invariants();
    // Past the old slots the table appends.
    keys = (0..6).map(|i| table.insert(300 + i)).collect();
    assert_eq!(indices(&keys), [6, 7, 8, 9, 10, 11]);
    assert_eq!(table.len(), 3 + 3 + 6);
    table.check_invariants();
}

#[test]
fn the_refill_skips_retired_slots() {
    let mut table: IdTable<u32, G2> = IdTable::default();
    let keys: Vec<G2> = (0..6).map(|i| table.insert(i)).collect();
    // Slots 1 and 4 reach the last generation (3) and retire when they
    // are emptied below.
    for round in 0..2 {
        for &slot in &[1usize, 4] {
            let key = table.keys().find(|key| key.index() == slot).unwrap();
            table.remove(key);
            let again = table.insert(10 + round);
            assert_eq!(again.index(), slot, "LIFO reuses the slot just freed");
        }
    }
    assert!(table.keys().all(|key| key.generation() <= 3));
    for key in table.keys().collect::<Vec<_>>() {
        table.remove(key);
        table.check_invariants();
    }
    assert_eq!(table.retired_count(), 2);
    let refilled: Vec<G2> = (0..4).map(|i| table.insert(20 + i)).collect();
    assert_eq!(indices(&refilled), [0, 2, 3, 5]);
    table.check_invariants();
    // Every free slot is taken, so the next insertion appends.
    assert_eq!(table.insert(99).index(), 6);
    table.check_invariants();
    assert_eq!(table.get(keys[0]), None);
}

#[test]
fn a_switch_to_fifo_during_a_refill_lists_every_free_slot() {
    let (mut table, _) = common::emptied_id_table(8);
    let first = table.insert(50);
    assert_eq!(first.index(), 0);
    table.set_reuse(Reuse::Fifo { min_free: 0 });
    table.check_invariants();
    // FIFO takes the free slots in the order of the rebuilt list: index
    // order.
    let next: Vec<Id> = (0..7).map(|i| table.insert(60 + i)).collect();
    assert_eq!(indices(&next), [1, 2, 3, 4, 5, 6, 7]);
    table.check_invariants();
    table.set_reuse(Reuse::Lifo);
    table.check_invariants();
}

/// A table of 20 strings, all removed (first first), then `live` new ones
/// inserted: the refill is under way. Also the old keys, and the new.
fn refilling(live: usize) -> (IdTable<String>, Vec<Id>, Vec<Id>) {
    let mut table: IdTable<String> = IdTable::new();
    let keys: Vec<Id> = (0..20).map(|i| table.insert(i.to_string())).collect();
    for &key in &keys {
        table.remove(key);
    }
    let live = (0..live)
        .map(|i| table.insert(format!("new {i}")))
        .collect();
    (table, keys, live)
}

#[test]
fn clone_and_clear_during_a_refill() {
    let (mut table, _, live) = refilling(5);
    assert_eq!(indices(&live), [0, 1, 2, 3, 4]);

    let mut copy = table.clone();
    copy.check_invariants();
    // The copy goes on with the same refill.
    assert_eq!(copy.insert("copy".into()).index(), 5);
    assert_eq!(table.insert("original".into()).index(), 5);
    copy.check_invariants();

    let mut target: IdTable<String> = IdTable::new();
    target.insert("old".into());
    target.clone_from(&table);
    target.check_invariants();
    assert_eq!(target.insert("target".into()).index(), 6);

    table.clear();
    table.check_invariants();
    assert_eq!(table.insert("after clear".into()).index(), 0);
    for key in live {
        assert_eq!(table.get(key), None);
    }
}

#[cfg(feature = "serde")]
#[test]
fn serde_during_a_refill() {
    let (mut table, keys, live) = refilling(6);
    let json = serde_json::to_string(&table).unwrap();
    let mut loaded: IdTable<String> = serde_json::from_str(&json).unwrap();
    loaded.check_invariants();
    assert_eq!(loaded.len(), table.len());
    for key in &live {
        assert_eq!(loaded.get(*key), table.get(*key));
    }
    for key in &keys[6..] {
        assert_eq!(loaded.get(*key), None);
    }
    // Deserialization lists the free slots in index order, as the refill
    // would have taken them.
    assert_eq!(loaded.insert("loaded".into()).index(), 6);
    assert_eq!(table.insert("original".into()).index(), 6);
}

#[test]
fn a_detached_slot_is_skipped_by_the_refill_and_can_come_back_during_it() {
    let mut table: IdTable<u32> = IdTable::new();
    let keys: Vec<Id> = (0..6).map(|i| table.insert(i)).collect();
    assert_eq!(table.detach(keys[2]), Some(2));
    for (i, &key) in keys.iter().enumerate() {
        if i != 2 {
            table.remove(key);
        }
    }
    // Emptied (the detached slot holds no value): the refill starts, and
    // passes over the detached slot, which no insertion may take.
    table.check_invariants();
    let refilled: Vec<Id> = (0..3).map(|i| table.insert(10 + i)).collect();
    assert_eq!(indices(&refilled), [0, 1, 3]);
    table.check_invariants();
    // Reattaching a slot the refill has passed keeps it going.
    table.reattach(keys[2], 2);
    assert_eq!(table.get(keys[2]), Some(&2));
    table.check_invariants();
    assert_eq!(table.insert(20).index(), 4);

    // A slot the refill has not reached yet: reattaching it ends the
    // refill (every slot past the refill's cursor must stay vacant).
    let mut table: IdTable<u32> = IdTable::new();
    let keys: Vec<Id> = (0..6).map(|i| table.insert(i)).collect();
    table.detach(keys[4]);
    for (i, &key) in keys.iter().enumerate() {
        if i != 4 {
            table.remove(key);
        }
    }
    assert_eq!(table.insert(30).index(), 0);
    table.reattach(keys[4], 4);
    table.check_invariants();
    assert_eq!(table.get(keys[4]), Some(&4));
    let rest: Vec<Id> = (0..5).map(|i| table.insert(40 + i)).collect();
    assert_eq!(indices(&rest), [1, 2, 3, 5, 6]);
    table.check_invariants();
}

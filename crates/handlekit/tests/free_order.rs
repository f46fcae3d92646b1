//! A serde round trip keeps the order of the free list (feature `serde`):
//! a loaded `IdTable`, `PackedTable` or `IndexLists` hands out exactly the
//! keys the original would have, under LIFO and FIFO reuse, after removals,
//! during the refill of an emptied table, with retired and detached slots.
//! And a saved order the table cannot have is refused. Detached slots stay
//! detached through a round trip; a detached list the table cannot have is
//! refused, and data written before the `detached` field existed loads.
#![cfg(feature = "serde")]

mod common;
use common::Lcg;

use common::stale_suite::G2;
use common::table::{insert_into_both, ReuseTable};
use common::{from_json, json_round_trip as round_trip};
use handlekit::{Head, Id, IdTable, IndexLists, Key, PackedTable, Reuse};

const POLICIES: &[Reuse] = &[
    Reuse::Lifo,
    Reuse::Fifo { min_free: 0 },
    Reuse::Fifo { min_free: 3 },
];

/// Steps of each random run (one round trip per step; under Miri, per
/// other step).
const STEPS: u64 = if cfg!(miri) { 6 } else { 400 };

fn postcard_round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T) -> T {
    postcard::from_bytes(&postcard::to_allocvec(value).unwrap()).unwrap()
}

/// A table under `reuse` that was given `0..8` and had the values at
/// `removed` (in that order) taken out again.
fn eight_less<C: ReuseTable<u32>>(reuse: Reuse, removed: [usize; 4]) -> C {
    let mut table = C::with_reuse(reuse);
    let keys: Vec<C::Key> = (0..8).map(|i| table.insert(i)).collect();
    for i in removed {
        table.remove(keys[i]);
    }
    table
}

/// Inserts `n` values into both tables and checks they get the same keys;
/// removes them again from both (so the caller's run goes on unchanged).
fn same_next_keys<K: Key + std::fmt::Debug>(
    a: &mut IdTable<u64, K>,
    b: &mut IdTable<u64, K>,
    n: u64,
) {
    let keys = insert_into_both(a, b, n);
    a.check_invariants();
    b.check_invariants();
    // The removals are made on both, in the same order, so the tables stay
    // alike (their free lists now hold these slots, in the same order).
    for key in keys.into_iter().rev() {
        assert_eq!(a.remove(key), b.remove(key));
    }
}

fn id_table_run<K: Key + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned>(
    reuse: Reuse,
    seed: u64,
) {
    let mut table: IdTable<u64, K> = IdTable::with_reuse(reuse);
    let mut live: Vec<K> = Vec::new();
    let mut rng = Lcg(seed);
    for step in 0..STEPS {
        match rng.next() % 8 {
            // Remove a random live key (so the free list is shuffled).
            0..=2 if !live.is_empty() => {
                let key = live.swap_remove(rng.next() as usize % live.len());
                table.remove(key).unwrap();
            }
            // Empty the table (a LIFO table then refills in index order).
            3 if rng.next() % 8 == 0 => {
                for key in live.drain(..) {
                    table.remove(key).unwrap();
                }
            }
            _ => {
                if let Ok(key) = table.try_insert(step) {
                    live.push(key);
                }
            }
        }
        // Under Miri, a round trip after every other step: the round
        // trips are the test's time there.
        if cfg!(miri) && step % 2 == 0 {
            continue;
        }
        let mut loaded = round_trip(&table);
        loaded.check_invariants();
        assert_eq!(loaded.reuse(), table.reuse());
        assert_eq!(loaded.retired_count(), table.retired_count());
        same_next_keys(&mut table, &mut loaded, 1 + rng.next() % 6);
        // Go on with the loaded table: a later round trip starts from a
        // restored order.
        table = loaded;
    }
}

#[test]
fn id_table_hands_out_the_same_keys_after_a_round_trip() {
    for (seed, &reuse) in POLICIES.iter().enumerate() {
        id_table_run::<Id>(reuse, seed as u64 + 1);
        // Narrow generations: slots retire along the way.
        id_table_run::<G2>(reuse, seed as u64 + 11);
    }
}

#[test]
fn a_format_without_field_names_keeps_the_order_too() {
    for &reuse in POLICIES {
        let mut table: IdTable<u32> = eight_less(reuse, [5, 1, 6, 3]);
        let mut loaded = postcard_round_trip(&table);
        loaded.check_invariants();
        same_next_keys_u32(&mut table, &mut loaded);
        let mut packed: PackedTable<u32> = eight_less(reuse, [5, 1, 6, 3]);
        let mut loaded = postcard_round_trip(&packed);
        assert_eq!(loaded.insert(9), packed.insert(9));
    }
    let mut lists: IndexLists<u32> = IndexLists::new();
    let mut head = Head::EMPTY;
    let nodes: Vec<Id> = (0..6).map(|i| lists.push_front(&mut head, i)).collect();
    lists.remove(&mut head, nodes[4]);
    lists.remove(&mut head, nodes[1]);
    let bytes = postcard::to_allocvec(&lists).unwrap();
    let mut loaded: IndexLists<u32> = postcard::from_bytes(&bytes).unwrap();
    let mut loaded_head = head;
    assert_eq!(
        loaded.push_front(&mut loaded_head, 0),
        lists.push_front(&mut head, 0)
    );
}

fn same_next_keys_u32(a: &mut IdTable<u32>, b: &mut IdTable<u32>) {
    for i in 0..6 {
        assert_eq!(a.insert(i), b.insert(i));
    }
}

/// The slots the next `n` insertions take in `loaded`, which must be the
/// ones they take in the `original` it was loaded from.
fn next_slots(loaded: &mut IdTable<u32>, original: &mut IdTable<u32>, n: u32) -> Vec<usize> {
    let order: Vec<usize> = (0..n).map(|i| loaded.insert(i).index()).collect();
    let expected: Vec<usize> = (0..n).map(|i| original.insert(i).index()).collect();
    assert_eq!(
        order, expected,
        "the loaded table takes the original's slots"
    );
    order
}

#[test]
fn lifo_order_after_removals_is_kept() {
    let mut table: IdTable<u32> = eight_less(Reuse::Lifo, [5, 1, 6, 3]);
    let mut loaded = round_trip(&table);
    // LIFO: the last removed first. Before the free-list order was kept,
    // the loaded table took them in index order (1, 3, 5, 6).
    assert_eq!(next_slots(&mut loaded, &mut table, 4), [3, 6, 1, 5]);
}

#[test]
fn fifo_order_and_reserve_are_kept() {
    let mut table: IdTable<u32> = eight_less(Reuse::Fifo { min_free: 2 }, [6, 2, 4, 0]);
    let mut loaded = round_trip(&table);
    assert_eq!(loaded.reuse(), Reuse::Fifo { min_free: 2 });
    // Oldest removal first, while more than `min_free` are free; then
    // appends.
    assert_eq!(next_slots(&mut loaded, &mut table, 4), [6, 2, 8, 9]);
}

#[test]
fn the_refill_of_an_emptied_table_is_kept() {
    let (mut table, _) = common::emptied_id_table(10);
    // Refilling: three taken, then one removed (it goes on the list, which
    // ends in the refill).
    let a = table.insert(0);
    table.insert(1);
    table.insert(2);
    table.remove(a);
    let json = serde_json::to_string(&table).unwrap();
    assert!(json.contains(r#""free":{"list":[0],"refill":3}"#), "{json}");
    let mut loaded: IdTable<u32> = from_json(&json).unwrap();
    loaded.check_invariants();
    assert_eq!(next_slots(&mut loaded, &mut table, 6), [0, 3, 4, 5, 6, 7]);
}

#[test]
fn detached_and_retired_slots_stay_out_of_the_list() {
    let mut table: IdTable<u32, G2> = IdTable::default();
    let keys: Vec<G2> = (0..6).map(|i| table.insert(i)).collect();
    assert_eq!(table.detach(keys[1]), Some(1));
    // Age slot 4 to its last generation and retire it.
    let mut key = keys[4];
    for i in 0..2 {
        table.remove(key);
        key = table.insert(10 + i);
        assert_eq!(key.index(), 4);
    }
    table.remove(key);
    assert_eq!(table.retired_count(), 1);
    table.remove(keys[3]);
    table.remove(keys[0]);
    let mut loaded = round_trip(&table);
    loaded.check_invariants();
    assert!(loaded.is_detached(keys[1]));
    assert_eq!(loaded.retired_count(), 1);
    let order: Vec<usize> = (0..3).map(|i| loaded.insert(i).index()).collect();
    assert_eq!(order, [0, 3, 6]);
    let original: Vec<usize> = (0..3).map(|i| table.insert(i).index()).collect();
    assert_eq!(order, original);
}

#[test]
fn packed_table_hands_out_the_same_keys() {
    for &reuse in POLICIES {
        let mut table: PackedTable<u64> = PackedTable::with_reuse(reuse);
        let mut live = Vec::new();
        let mut rng = Lcg(5);
        for step in 0..STEPS {
            if rng.next() % 3 == 0 && !live.is_empty() {
                let key = live.swap_remove(rng.next() as usize % live.len());
                table.remove(key).unwrap();
            } else {
                live.push(table.insert(step));
            }
            let mut loaded: PackedTable<u64> = round_trip(&table);
            loaded.check_invariants();
            let (a, b) = (table.insert(u64::MAX), loaded.insert(u64::MAX));
            assert_eq!(a, b);
            table.remove(a);
            loaded.remove(b);
            table = loaded;
        }
    }
}

#[test]
fn index_lists_hand_out_the_same_nodes() {
    let mut lists: IndexLists<u32> = IndexLists::new();
    let mut head = Head::EMPTY;
    let nodes: Vec<Id> = (0..10).map(|i| lists.push_front(&mut head, i)).collect();
    for i in [7, 2, 9, 4] {
        lists.remove(&mut head, nodes[i]);
    }
    let mut loaded: IndexLists<u32> = round_trip(&lists);
    loaded.check_invariants();
    let mut loaded_head = head;
    for i in 0..6 {
        assert_eq!(
            loaded.push_front(&mut loaded_head, i),
            lists.push_front(&mut head, i)
        );
    }
}

/// Hostile orders. `IdTable<u64, G2>`: generations 1..=3, so a vacant slot
/// at generation 3 is retired.
mod hostile {
    use super::*;

    type Table = IdTable<u64, G2>;

    /// A table of five slots: 0 and 2 occupied, 1 and 3 free, 4 retired.
    fn with_free(reuse: &str, free: &str) -> Result<Table, String> {
        from_json(&format!(
            r#"{{"reuse":{reuse},"slots":[[1,10],[1,null],[2,20],[2,null],[3,null]],"free":{free}}}"#
        ))
    }

    #[test]
    fn a_valid_order_is_taken() {
        let mut table = with_free(r#""Lifo""#, r#"{"list":[3,1],"refill":null}"#).unwrap();
        table.check_invariants();
        assert_eq!(table.insert(0).index(), 3);
        assert_eq!(table.insert(0).index(), 1);
        assert_eq!(table.insert(0).index(), 5);
        let mut fifo = with_free(
            r#"{"Fifo":{"min_free":0}}"#,
            r#"{"list":[1,3],"refill":null}"#,
        )
        .unwrap();
        fifo.check_invariants();
        assert_eq!(fifo.insert(0).index(), 1);
        fifo.check_invariants();
        // A refill from the end of the slots (every slot taken once).
        let mut refill = with_free(r#""Lifo""#, r#"{"list":[1,3],"refill":5}"#).unwrap();
        refill.check_invariants();
        assert_eq!(refill.insert(0).index(), 1);
        // A refill over a free and a retired slot: it takes the free one
        // after the list, skips the retired one, then appends.
        let mut refill = with_free(r#""Lifo""#, r#"{"list":[1],"refill":3}"#).unwrap();
        refill.check_invariants();
        let order: Vec<usize> = (0..3).map(|i| refill.insert(i).index()).collect();
        assert_eq!(order, [1, 3, 5]);
    }

    #[test]
    fn data_without_the_order_reads_in_index_order() {
        let mut table: Table =
            from_json(r#"{"reuse":"Lifo","slots":[[1,10],[1,null],[2,20],[2,null],[3,null]]}"#)
                .unwrap();
        table.check_invariants();
        assert_eq!(table.insert(0).index(), 1);
        assert_eq!(table.insert(0).index(), 3);
    }

    #[test]
    fn impossible_orders_are_refused() {
        let refused = |free: &str, why: &str| {
            assert!(
                with_free(r#""Lifo""#, free).is_err(),
                "accepted {why}: {free}"
            );
        };
        // Lists (with no refill) that are not the free slots 1 and 3.
        let lists: &[(&[u32], &str)] = &[
            (&[3, 1, 3], "a slot twice (a cycle)"),
            (&[1, 1], "a slot twice"),
            (&[3, 7], "an index past the slots"),
            (&[3, u32::MAX], "u32::MAX"),
            (&[3, 1, 0], "an occupied slot"),
            (&[3, 1, 4], "a retired slot"),
            (&[3], "a free slot missing"),
            (&[], "every free slot missing"),
            (&[1, 3, 2, 0, 4, 1], "longer than the slots"),
        ];
        for &(list, why) in lists {
            refused(&format!(r#"{{"list":{list:?},"refill":null}}"#), why);
        }
        // Refills after the list [1,3] that do not start at a slot never
        // taken.
        for (refill, why) in [
            (6, "a refill past the slots"),
            (3, "a listed slot in the refill"),
            (2, "a refill over an occupied slot"),
        ] {
            refused(&format!(r#"{{"list":[1,3],"refill":{refill}}}"#), why);
        }
        refused(r#"{"list":"x","refill":null}"#, "not a list");
        refused(r#"{"list":[1,3],"refill":null,"x":1}"#, "an unknown field");
        assert!(
            with_free(r#"{"Fifo":{"min_free":0}}"#, r#"{"list":[1,3],"refill":5}"#).is_err(),
            "accepted a FIFO list ending in a refill"
        );
    }

    #[test]
    fn a_detached_slot_cannot_be_listed() {
        // Slot 1 is detached (parked at generation 3), slot 3 is free.
        let json = |list: &str| {
            format!(
                r#"{{"reuse":"Lifo","slots":[[1,10],[3,null],[2,20],[2,null]],"detached":[[1,1]],"free":{{"list":{list},"refill":null}}}}"#
            )
        };
        let table: Table = from_json(&json("[3]")).unwrap();
        table.check_invariants();
        assert!(table.is_detached(G2::from_parts(1, 1).unwrap()));
        assert!(from_json::<Table>(&json("[3,1]")).is_err());
        assert!(from_json::<Table>(&json("[1]")).is_err());
    }

    #[test]
    fn packed_tables_and_lists_validate_the_order_too() {
        let packed = |free: &str| {
            from_json::<PackedTable<u8>>(&format!(
                r#"{{"reuse":"Lifo","slots":[[1,0],[1,null],[1,null]],"values":[7],"free":{free}}}"#
            ))
        };
        let mut ok = packed(r#"{"list":[2,1],"refill":null}"#).unwrap();
        assert_eq!(ok.insert(0).index(), 2);
        assert!(packed(r#"{"list":[2],"refill":null}"#).is_err());
        assert!(packed(r#"{"list":[2,0,1],"refill":null}"#).is_err());
        let lists = |free: &str| {
            from_json::<IndexLists<u8>>(&format!(
                r#"{{"slots":[[1,[null,7]],[1,null],[1,null]],"free":{free}}}"#
            ))
        };
        let mut ok = lists(r#"{"list":[2,1],"refill":null}"#).unwrap();
        let mut head = Head::EMPTY;
        assert_eq!(ok.push_front(&mut head, 0).index(), 2);
        assert!(lists(r#"{"list":[1,1],"refill":null}"#).is_err());
        assert!(lists(r#"{"list":[1],"refill":null}"#).is_err());
    }
}

/// Detached slots in the serde form (`detach.rs` has the rest of
/// `detach` / `reattach`).
mod detached {
    use super::*;

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

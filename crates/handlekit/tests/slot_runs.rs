//! `LookupTable`'s values-free serde form (feature `serde`): a table
//! written with `slot_runs` and built back with `from_slot_runs` and its
//! live values has the same keys and values and hands out the same keys
//! next, after removals, refills and retirements; and what a table cannot
//! have is refused. And its plain serde form is `IdTable`'s: each reads
//! what the other wrote.
#![cfg(feature = "serde")]

use handlekit::lookup_table::SlotRuns;
use handlekit::{Id, IdTable, Key, LookupTable};

mod common;
use common::stale_suite::G2;
use common::table::insert_into_both;
use common::Lcg;

/// Steps of each random run (a round trip in each format per step; under
/// Miri, in one of them).
const STEPS: u64 = if cfg!(miri) { 6 } else { 300 };

/// `table` through its slot runs (JSON, or postcard if `binary`) and its
/// live values.
fn round_trip<K: Key>(table: &LookupTable<u64, K>, binary: bool) -> LookupTable<u64, K> {
    let live = table.iter().map(|(key, &value)| (key.index(), value));
    if binary {
        let bytes = postcard::to_allocvec(&table.slot_runs()).unwrap();
        let runs: SlotRuns = postcard::from_bytes(&bytes).unwrap();
        LookupTable::from_slot_runs::<postcard::Error>(&runs, live).unwrap()
    } else {
        let json = serde_json::to_string(&table.slot_runs()).unwrap();
        let runs: SlotRuns = serde_json::from_str(&json).unwrap();
        LookupTable::from_slot_runs::<serde_json::Error>(&runs, live).unwrap()
    }
}

/// Checks that `loaded` holds what `table` holds and that both hand out
/// the same keys for `n` insertions (then removes them from both).
fn same<K: Key + std::fmt::Debug>(
    table: &mut LookupTable<u64, K>,
    loaded: &mut LookupTable<u64, K>,
    n: u64,
) {
    loaded.check_invariants();
    let entries = |t: &LookupTable<u64, K>| t.iter().map(|(k, &v)| (k, v)).collect::<Vec<_>>();
    assert_eq!(entries(table), entries(loaded));
    for key in insert_into_both(table, loaded, n) {
        assert_eq!(table.remove(key), loaded.remove(key));
    }
}

fn random_run<K: Key + std::fmt::Debug>(seed: u64) {
    let mut rng = Lcg(seed);
    let mut table: LookupTable<u64, K> = LookupTable::with_key();
    let mut keys: Vec<K> = Vec::new();
    for step in 0..STEPS {
        match rng.next() % 8 {
            0..=3 => {
                if let Ok(key) = table.try_insert(step) {
                    keys.push(key);
                }
            }
            4..=6 if !keys.is_empty() => {
                let at = (rng.next() as usize) % keys.len();
                table.remove(keys.swap_remove(at));
            }
            7 if rng.next() % 8 == 0 => {
                table.clear();
                keys.clear();
            }
            _ => {}
        }
        // `same` leaves the table as it found it, but for generations.
        for binary in [false, true] {
            // Under Miri, one format a step, JSON and postcard in turns:
            // the round trips are the test's time there.
            if cfg!(miri) && binary != (step % 2 == 1) {
                continue;
            }
            let mut loaded = round_trip(&table, binary);
            same(&mut table, &mut loaded, 3);
        }
    }
}

#[test]
fn a_round_trip_keeps_keys_values_and_the_next_keys() {
    for seed in 0..4 {
        random_run::<Id>(seed);
        // Slots retire after three generations.
        random_run::<G2>(seed);
    }
}

#[test]
fn equal_generations_take_one_run() {
    // Past the eight runs the serializer's first pass keeps (see
    // `serialize_runs`): 40 slots under Miri, where the thousand took 45 s
    // of its clock.
    let slots: u64 = common::scaled(40, 1000);
    let mut table: LookupTable<u64> = LookupTable::new();
    for i in 0..slots {
        table.insert(i);
    }
    let json = serde_json::to_string(&table.slot_runs()).unwrap();
    assert!(
        json.contains(&format!(r#""generations":[[1,{slots}]]"#)),
        "{json}"
    );
    // Every other slot a generation on: a run a slot.
    let keys: Vec<_> = table.keys().step_by(2).collect();
    for key in keys {
        table.remove(key);
        table.insert(0);
    }
    let runs: SlotRuns =
        serde_json::from_str(&serde_json::to_string(&table.slot_runs()).unwrap()).unwrap();
    assert_eq!(runs.generations().len() as u64, slots);
    for binary in [false, true] {
        let mut loaded = round_trip(&table, binary);
        same(&mut table, &mut loaded, 3);
    }
}

#[test]
fn what_a_table_cannot_have_is_refused() {
    let runs = |json: &str| serde_json::from_str::<SlotRuns>(json);
    let build = |json: &str, live: &[usize]| {
        LookupTable::<u64>::from_slot_runs::<serde_json::Error>(
            &runs(json).unwrap(),
            live.iter().map(|&i| (i, 0)),
        )
    };
    let two = r#"{"reuse":"Lifo","generations":[[1,2]]}"#;
    assert!(build(two, &[0, 1]).is_ok());
    assert!(build(two, &[1, 0]).is_err(), "live slots out of order");
    assert!(build(two, &[0, 0]).is_err(), "a live slot twice");
    assert!(build(two, &[2]).is_err(), "a live slot past the slots");
    assert!(
        build(r#"{"reuse":"Lifo","generations":[[0,1]]}"#, &[0]).is_err(),
        "a live slot at generation 0"
    );
    assert!(
        build(r#"{"reuse":"Lifo","generations":[[4294967295,1]]}"#, &[]).is_err(),
        "a generation out of range"
    );
    assert!(
        build(
            r#"{"reuse":"Lifo","generations":[[1,2]],"free":{"list":[0],"refill":null}}"#,
            &[0]
        )
        .is_err(),
        "a free list naming a live slot"
    );
    assert!(
        runs(r#"{"reuse":"Lifo","generations":[[1,0]]}"#).is_err(),
        "an empty run"
    );
    assert!(runs(r#"{"reuse":"Lifo"}"#).is_err(), "no generations");
    assert!(
        runs(r#"{"reuse":"Lifo","generations":[],"values":[]}"#).is_err(),
        "an unknown field"
    );
    // More slots than the key type can index, claimed in a few bytes, are
    // refused before anything is allocated for them.
    let huge = r#"{"reuse":"Lifo","generations":[[1,4294967295],[1,4294967295]]}"#;
    assert_eq!(runs(huge).unwrap().slot_count(), 2 * 4_294_967_295);
    assert!(build(huge, &[]).is_err());
}

/// `LookupTable` and `IdTable` write the same serde form, and each loads
/// what the other wrote, free-list order included.
#[test]
fn serializes_as_id_table_does() {
    let mut lookup: LookupTable<u32> = LookupTable::new();
    let mut table: IdTable<u32> = IdTable::new();
    let mut keys = Vec::new();
    for i in 0..50 {
        keys.push(lookup.insert(i));
        table.insert(i);
    }
    for key in keys.iter().step_by(3) {
        lookup.remove(*key);
        table.remove(*key);
    }
    let json = serde_json::to_string(&lookup).unwrap();
    assert_eq!(json, serde_json::to_string(&table).unwrap());
    let mut back: IdTable<u32> = serde_json::from_str(&json).unwrap();
    let mut again: LookupTable<u32> =
        serde_json::from_str(&serde_json::to_string(&table).unwrap()).unwrap();
    again.check_invariants();
    assert!(again.iter().eq(back.iter()));
    // The free-list order survives: both hand out the same next keys.
    for _ in 0..20 {
        assert_eq!(again.insert(0), back.insert(0));
    }
    let bytes = postcard::to_allocvec(&lookup).unwrap();
    let from_bytes: LookupTable<u32> = postcard::from_bytes(&bytes).unwrap();
    assert!(from_bytes.iter().eq(lookup.iter()));
    // Hostile data is refused as for IdTable.
    assert!(
        serde_json::from_str::<LookupTable<u32>>(r#"{"reuse":"Lifo","slots":[[0,5]]}"#).is_err()
    );
}

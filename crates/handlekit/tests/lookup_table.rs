//! `LookupTable` against `IdTable`: the same slot core in the other layout,
//! so the same operations give the same keys, values, stale keys and
//! iteration order. (That each reads what the other wrote with `serde` is
//! checked in `slot_runs.rs`, with `LookupTable`'s other serde form.)

use handlekit::{Id, IdTable, Key, LookupTable};

/// A small deterministic generator (no dependency needed).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

#[test]
fn same_operations_same_results_as_id_table() {
    let mut rng = Lcg(7);
    let mut lookup: LookupTable<String> = LookupTable::new();
    let mut table: IdTable<String> = IdTable::new();
    let mut keys: Vec<Id> = Vec::new();
    // Under Miri, 180 steps: the table still grows past a 64-slot word
    // (68 values), and the sweeps below, each over every key issued, read
    // a quarter of what they read in 300.
    let steps = if cfg!(miri) { 180 } else { 20_000 };
    for step in 0..steps {
        match rng.below(10) {
            0..=4 => {
                let value = step.to_string();
                let a = lookup.insert(value.clone());
                let b = table.insert(value);
                assert_eq!(a, b);
                keys.push(a);
            }
            5..=7 if !keys.is_empty() => {
                let key = keys.swap_remove(rng.below(keys.len()));
                assert_eq!(lookup.remove(key), table.remove(key));
                assert_eq!(lookup.remove(key), None);
                assert!(!lookup.contains_key(key));
                // Kept as a stale key for the lookups below.
                keys.push(key);
            }
            8 if !keys.is_empty() => {
                let key = keys[rng.below(keys.len())];
                if let (Some(a), Some(b)) = (lookup.get_mut(key), table.get_mut(key)) {
                    a.push('!');
                    b.push('!');
                }
            }
            _ => {
                for &key in &keys {
                    assert_eq!(lookup.get(key), table.get(key));
                    assert_eq!(lookup.contains_key(key), table.contains_key(key));
                }
            }
        }
        assert_eq!(lookup.len(), table.len());
    }
    lookup.check_invariants();
    assert!(lookup.iter().eq(table.iter()));
    assert!(lookup.keys().eq(table.keys()));
    assert!(lookup.values().eq(table.values()));
    lookup.values_mut().for_each(|v| v.push('?'));
    table.iter_mut().for_each(|(_, v)| v.push('?'));
    assert!((&lookup).into_iter().eq(&table));
    assert_eq!(format!("{lookup:?}"), format!("{table:?}"));

    // A copy hands out the keys the original would.
    let mut copy = lookup.clone();
    assert_eq!(copy.insert(String::new()), table.insert(String::new()));

    lookup.clear();
    table.clear();
    assert!(lookup.is_empty());
    for &key in &keys {
        assert_eq!(lookup.get(key), None);
    }
    assert_eq!(lookup.insert(String::new()), table.insert(String::new()));
}

#[test]
fn foreign_and_forged_keys_are_refused() {
    let mut lookup: LookupTable<u32> = LookupTable::new();
    let a = lookup.insert(1);
    let forged = Id::from_parts(a.index(), a.generation() + 1).unwrap();
    assert_eq!(lookup.get(forged), None);
    let out_of_range = Id::from_parts(1000, 1).unwrap();
    assert_eq!(lookup.get(out_of_range), None);
    assert_eq!(lookup.remove(out_of_range), None);
    assert_eq!(lookup.get(a), Some(&1));
}

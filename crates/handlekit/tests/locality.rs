//! `sort_keys` and `sort_indices` (radix sorts) against the standard
//! library's stable sort.
#![cfg(feature = "radsort")]

mod common;

use handlekit::{sort_indices, sort_keys, Id, Id32, IdTable, Key};
use proptest::prelude::*;

const CASES: u32 = if cfg!(miri) { 4 } else { 256 };
const MAX_LEN: usize = if cfg!(miri) { 40 } else { 2000 };

/// The keys made from `(index, generation)` pairs, in that order.
fn keys_of<K: Key>(parts: &[(u32, u32)]) -> Vec<K> {
    parts
        .iter()
        .map(|&(index, generation)| K::from_parts(index as usize, generation).unwrap())
        .collect()
}

/// The keys of `parts` through `sort_keys`.
fn sorted_by_sort_keys<K: Key>(parts: &[(u32, u32)]) -> Vec<K> {
    let mut keys = keys_of::<K>(parts);
    sort_keys(&mut keys);
    keys
}

/// The keys of `parts` through the standard library's stable sort by index.
fn sorted_stably<K: Key>(parts: &[(u32, u32)]) -> Vec<K> {
    let mut keys = keys_of::<K>(parts);
    keys.sort_by_key(|key| key.index());
    keys
}

proptest! {
    #![proptest_config(common::proptest_config(CASES))]

    #[test]
    fn indices_sort_like_std(mut indices in prop::collection::vec(any::<u32>(), 0..MAX_LEN)) {
        let mut expected = indices.clone();
        expected.sort_unstable();
        sort_indices(&mut indices);
        prop_assert_eq!(indices, expected);
    }

    #[test]
    fn keys_sort_by_index_stably(parts in prop::collection::vec((0u32..5000, 1u32..100), 0..MAX_LEN)) {
        prop_assert_eq!(sorted_by_sort_keys::<Id>(&parts), sorted_stably::<Id>(&parts));
        prop_assert_eq!(sorted_by_sort_keys::<Id32>(&parts), sorted_stably::<Id32>(&parts));
    }
}

#[test]
fn sorted_keys_visit_a_table_in_slot_order() {
    let n = if cfg!(miri) { 50 } else { 10_000 };
    let mut table = IdTable::new();
    let mut keys: Vec<Id> = (0..n).map(|i| table.insert(i)).collect();
    // Remove every third value, so some keys are stale.
    for key in keys.iter().step_by(3) {
        table.remove(*key);
    }
    // A scrambled visiting order.
    let mut state = 0x9E37_79B9u32;
    for i in (1..keys.len()).rev() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        keys.swap(i, state as usize % (i + 1));
    }
    sort_keys(&mut keys);
    assert!(keys.windows(2).all(|w| w[0].index() < w[1].index()));
    let live: Vec<i32> = keys
        .iter()
        .filter_map(|&key| table.get(key).copied())
        .collect();
    let in_order: Vec<i32> = table.values().copied().collect();
    assert_eq!(live, in_order);
}

//! `sort_keys` and `sort_indices` (radix sorts) against the standard
//! library's stable sort.
#![cfg(feature = "radsort")]

use handlekit::{sort_indices, sort_keys, Id, Id32, IdTable, Key};
use proptest::prelude::*;
use proptest::test_runner::Config;

const CASES: u32 = if cfg!(miri) { 4 } else { 256 };
const MAX_LEN: usize = if cfg!(miri) { 40 } else { 2000 };

fn config() -> Config {
    Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn indices_sort_like_std(mut indices in prop::collection::vec(any::<u32>(), 0..MAX_LEN)) {
        let mut expected = indices.clone();
        expected.sort_unstable();
        sort_indices(&mut indices);
        prop_assert_eq!(indices, expected);
    }

    #[test]
    fn keys_sort_by_index_stably(parts in prop::collection::vec((0u32..5000, 1u32..100), 0..MAX_LEN)) {
        let mut keys: Vec<Id> = parts
            .iter()
            .map(|&(index, generation)| Id::from_parts(index as usize, generation).unwrap())
            .collect();
        let mut expected = keys.clone();
        expected.sort_by_key(|key| key.index());
        sort_keys(&mut keys);
        prop_assert_eq!(&keys, &expected);
        let mut narrow: Vec<Id32> = parts
            .iter()
            .map(|&(index, generation)| Id32::from_parts(index as usize, generation).unwrap())
            .collect();
        let mut expected = narrow.clone();
        expected.sort_by_key(|key| key.index());
        sort_keys(&mut narrow);
        prop_assert_eq!(narrow, expected);
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

//! `LookupTable` against a `HashMap` model (proptest, with clone and serde
//! round trips among the operations), and its stale keys exhaustively at a
//! 2-bit generation. Its panic safety is the shared suite's, in
//! `panic_safety.rs`.

mod common;

use std::collections::HashMap;

use handlekit::{Key, LookupTable};
use proptest::prelude::*;
use proptest::test_runner::Config;

handlekit::define_key! {
    /// 30 index bits, 2 generation bits: a slot retires after 3 occupants.
    struct Tiny(u32; index_bits = 30);
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    /// Removes the issued key at this position (modulo their number).
    Remove(usize),
    Get(usize),
    GetMut(usize, u64),
    Clear,
    Clone,
    /// A serde round trip (a clone without the `serde` feature).
    Serde,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u64>().prop_map(Op::Insert),
        3 => any::<usize>().prop_map(Op::Remove),
        2 => any::<usize>().prop_map(Op::Get),
        1 => (any::<usize>(), any::<u64>()).prop_map(|(at, v)| Op::GetMut(at, v)),
        1 => Just(Op::Clear),
        1 => Just(Op::Clone),
        1 => Just(Op::Serde),
    ]
}

/// Checks every issued key against the model, and the pass against it.
fn check<K: Key>(table: &LookupTable<u64, K>, model: &HashMap<K, u64>, issued: &[K]) {
    table.check_invariants();
    assert_eq!(table.len(), model.len());
    for key in issued {
        assert_eq!(table.get(*key), model.get(key), "{key:?}");
        assert_eq!(table.contains_key(*key), model.contains_key(key));
    }
    let mut seen: Vec<(K, u64)> = table.iter().map(|(k, v)| (k, *v)).collect();
    assert!(
        seen.windows(2).all(|w| w[0].0.index() < w[1].0.index()),
        "index order"
    );
    seen.sort();
    let mut expected: Vec<(K, u64)> = model.iter().map(|(k, v)| (*k, *v)).collect();
    expected.sort();
    assert_eq!(seen, expected);
}

fn run<K: Key + serde_if::Serde>(ops: &[Op]) {
    let mut table: LookupTable<u64, K> = LookupTable::with_key();
    let mut model: HashMap<K, u64> = HashMap::new();
    let mut issued: Vec<K> = Vec::new();
    let pick = |issued: &[K], at: usize| issued.get(at % issued.len().max(1)).copied();
    for op in ops {
        match *op {
            Op::Insert(value) => {
                if let Ok(key) = table.try_insert(value) {
                    assert!(!issued.contains(&key), "a key was issued twice");
                    issued.push(key);
                    model.insert(key, value);
                }
            }
            Op::Remove(at) => {
                if let Some(key) = pick(&issued, at) {
                    assert_eq!(table.remove(key), model.remove(&key));
                }
            }
            Op::Get(at) => {
                if let Some(key) = pick(&issued, at) {
                    assert_eq!(table.get(key), model.get(&key));
                }
            }
            Op::GetMut(at, value) => {
                if let Some(key) = pick(&issued, at) {
                    match (table.get_mut(key), model.get_mut(&key)) {
                        (Some(a), Some(b)) => (*a, *b) = (value, value),
                        (None, None) => {}
                        _ => panic!("get_mut disagrees on {key:?}"),
                    }
                }
            }
            Op::Clear => {
                table.clear();
                model.clear();
            }
            Op::Clone => table = table.clone(),
            Op::Serde => table = K::round_trip(&table),
        }
        check(&table, &model, &issued);
    }
}

/// A serde round trip where the feature is on; nothing is asked otherwise.
mod serde_if {
    use handlekit::{Key, LookupTable};

    #[cfg(feature = "serde")]
    pub trait Serde: Key + serde::Serialize + serde::de::DeserializeOwned {
        fn round_trip(table: &LookupTable<u64, Self>) -> LookupTable<u64, Self> {
            let json = serde_json::to_string(table).expect("serialize");
            serde_json::from_str(&json).expect("read back")
        }
    }
    #[cfg(feature = "serde")]
    impl<K: Key + serde::Serialize + serde::de::DeserializeOwned> Serde for K {}

    #[cfg(not(feature = "serde"))]
    pub trait Serde: Key {
        fn round_trip(table: &LookupTable<u64, Self>) -> LookupTable<u64, Self> {
            table.clone()
        }
    }
    #[cfg(not(feature = "serde"))]
    impl<K: Key> Serde for K {}
}

const CASES: u32 = if cfg!(miri) { 4 } else { 256 };
const OPS: usize = if cfg!(miri) { 40 } else { 300 };

proptest! {
    #![proptest_config(Config { cases: CASES, failure_persistence: None, ..Config::default() })]

    #[test]
    fn matches_a_hash_map_with_id(ops in prop::collection::vec(op(), 0..OPS)) {
        run::<handlekit::Id>(&ops);
    }

    #[test]
    fn matches_a_hash_map_with_a_2_bit_generation(ops in prop::collection::vec(op(), 0..OPS)) {
        run::<Tiny>(&ops);
    }
}

/// Every key a slot ever had stays stale after its removal, through all
/// three generations of a 2-bit key and the slot's retirement; the next
/// insertion then takes a new slot.
#[test]
fn every_old_key_of_a_slot_stays_stale_through_retirement() {
    let mut table: LookupTable<u32, Tiny> = LookupTable::with_key();
    let mut old = Vec::new();
    for round in 0..Tiny::MAX_GENERATION {
        let key = table.insert(round);
        assert_eq!(key.index(), 0, "the one slot is reused until it retires");
        assert_eq!(key.generation(), round + 1);
        for &stale in &old {
            assert_eq!(table.get(stale), None);
        }
        assert_eq!(table.remove(key), Some(round));
        old.push(key);
    }
    let fresh = table.insert(99);
    assert_eq!(fresh.index(), 1, "a retired slot is never reused");
    for &stale in &old {
        assert_eq!(table.get(stale), None);
        assert_eq!(table.remove(stale), None);
    }
    // Every possible key of slot 0, forged: none resolves.
    for generation in 1..=Tiny::MAX_GENERATION {
        let forged = Tiny::from_parts(0, generation).expect("in range");
        assert_eq!(table.get(forged), None);
    }
    assert_eq!(table.get(fresh), Some(&99));
}

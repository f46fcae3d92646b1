//! Differential fuzzing of `LookupTable` against `IdTable`, which the
//! `id_table` target checks against a `HashMap` model.
//!
//! The two share their slot core and differ only in the slot layout, so
//! every operation must give the same answer on both: the same keys from
//! insertions (so the same free-list order and retirement), the same
//! values for live keys, `None` for stale and forged ones, the same
//! iteration order, and the same serialized form (each reads the other's).
//! Keys are the wide `Id` or a narrow 4-bit-generation key, so slots retire
//! within a short run. Any divergence panics.

#![no_main]

mod common;

use arbitrary::Arbitrary;
use common::{Input, Narrow};
use handlekit::{Id, IdTable, Key, LookupTable};
use libfuzzer_sys::fuzz_target;
#[path = "walk.rs"]
mod walk;
use walk::walk_both_ends;

#[derive(Arbitrary, Clone, Copy, Debug)]
enum Op {
    Insert(u32),
    /// Removes the key at this position of the issued keys.
    Remove(u16),
    Get(u16),
    GetMut(u16, u32),
    /// Looks up forged bits.
    Forged(u64),
    Reserve(u8),
    Clear,
    Clone,
    Serde,
    /// Walk both tables' `iter()` from both ends in the order `ends` picks.
    Walk(u64),
}

/// Every pair must agree; `issued` holds every key ever handed out.
fn run<K: Key + serde::Serialize + serde::de::DeserializeOwned>(ops: &[Op]) {
    let mut lookup: LookupTable<u32, K> = LookupTable::with_key();
    let mut table: IdTable<u32, K> = IdTable::with_key();
    let mut issued: Vec<K> = Vec::new();
    let pick = |issued: &[K], at: u16| issued.get(at as usize % issued.len().max(1)).copied();
    for &op in ops {
        match op {
            Op::Insert(value) => {
                let (a, b) = (lookup.try_insert(value), table.try_insert(value));
                assert_eq!(a.is_ok(), b.is_ok(), "insert: one table is full");
                if let (Ok(a), Ok(b)) = (a, b) {
                    assert_eq!(a, b, "insert gave different keys");
                    issued.push(a);
                }
            }
            Op::Remove(at) => {
                if let Some(key) = pick(&issued, at) {
                    assert_eq!(lookup.remove(key), table.remove(key), "remove {key:?}");
                }
            }
            Op::Get(at) => {
                if let Some(key) = pick(&issued, at) {
                    assert_eq!(lookup.get(key), table.get(key), "get {key:?}");
                    assert_eq!(lookup.contains_key(key), table.contains_key(key));
                }
            }
            Op::GetMut(at, value) => {
                if let Some(key) = pick(&issued, at) {
                    let (a, b) = (lookup.get_mut(key), table.get_mut(key));
                    assert_eq!(a.is_some(), b.is_some(), "get_mut {key:?}");
                    if let (Some(a), Some(b)) = (a, b) {
                        (*a, *b) = (value, value);
                    }
                }
            }
            Op::Forged(bits) => {
                if let Some(key) = K::from_bits(bits) {
                    assert_eq!(lookup.get(key), table.get(key), "forged {key:?}");
                }
            }
            Op::Reserve(additional) => {
                lookup.reserve(usize::from(additional));
                table.reserve(usize::from(additional));
                assert!(lookup.capacity() >= lookup.len() + usize::from(additional));
            }
            Op::Clear => {
                lookup.clear();
                table.clear();
            }
            Op::Clone => lookup = lookup.clone(),
            Op::Walk(ends) => {
                let a = walk_both_ends(lookup.iter(), ends);
                let b = walk_both_ends(table.iter(), ends);
                assert_eq!(a, b, "both ends, order {ends:#x}");
                let values = walk_both_ends(lookup.values(), ends.rotate_left(11));
                assert!(
                    values.into_iter().eq(table.values()),
                    "values from both ends"
                );
            }
            Op::Serde => {
                let text = serde_json::to_string(&lookup).expect("serialize");
                assert_eq!(
                    text,
                    serde_json::to_string(&table).expect("serialize"),
                    "the two serialize differently"
                );
                lookup = serde_json::from_str(&text).expect("read back");
                table = serde_json::from_str(&text).expect("IdTable reads LookupTable's data");
            }
        }
        lookup.check_invariants();
        assert_eq!(lookup.len(), table.len());
        assert!(
            lookup.iter().eq(table.iter()),
            "iteration differs after {op:?}"
        );
    }
    for &key in &issued {
        assert_eq!(lookup.get(key), table.get(key), "final get {key:?}");
    }
}

fuzz_target!(|input: Input<bool, Op>| {
    if input.head {
        run::<Narrow>(&input.ops);
    } else {
        run::<Id>(&input.ops);
    }
});

//! The unchecked accessors, within their contracts: every reference they
//! hand out is used while the others are alive, after removals have moved
//! values and reused slots, so Miri checks the aliasing of the references
//! (`get_disjoint_unchecked_mut` builds them from one pointer) and that
//! they point at the right, initialized values.

mod common;

use common::table::Table;
use handlekit::{Id, IdTable, PackedTable, SecondaryMap, SparseSecondaryMap};

/// Values per container: enough to reuse slots and move packed values.
const N: u64 = if cfg!(miri) { 24 } else { 200 };

/// Live keys after inserting `0..N`, removing every third and inserting
/// `N..N + N / 3` again (into the freed slots).
fn churn(target: &mut impl Table<u64, Key = Id>) -> Vec<(Id, u64)> {
    let mut live: Vec<(Id, u64)> = (0..N).map(|v| (target.insert(v), v)).collect();
    let mut n = 0;
    live.retain(|&(key, _)| {
        n += 1;
        if n % 3 == 0 {
            target.remove(key);
            false
        } else {
            true
        }
    });
    live.extend((N..N + N / 3).map(|v| (target.insert(v), v)));
    live
}

/// Checks one container through its accessors: reads every live key, then
/// takes three references at a time, writes through all of them while all
/// are alive, and reads the writes back.
macro_rules! check_unchecked {
    ($container:expr, $live:expr) => {{
        let container = &mut $container;
        let live: &[(Id, u64)] = &$live;
        for &(key, value) in live {
            // SAFETY: every key in `live` has a value.
            assert_eq!(unsafe { *container.get_unchecked(key) }, value);
            // SAFETY: as above.
            unsafe { *container.get_unchecked_mut(key) += 1 };
        }
        for chunk in live.chunks_exact(3) {
            let keys = [chunk[0].0, chunk[1].0, chunk[2].0];
            // SAFETY: three distinct keys with values.
            let [a, b, c] = unsafe { container.get_disjoint_unchecked_mut(keys) };
            let sum = *a + *b + *c;
            *a += 1000;
            *c += 1000;
            *b = sum;
            core::mem::swap(a, c);
            assert_eq!(*a - 1000, chunk[2].1 + 1);
        }
        for chunk in live.chunks_exact(3) {
            let sum = chunk.iter().map(|&(_, value)| value + 1).sum::<u64>();
            assert_eq!(container[chunk[0].0], chunk[2].1 + 1001);
            assert_eq!(container[chunk[1].0], sum);
            assert_eq!(container[chunk[2].0], chunk[0].1 + 1001);
        }
        // One key on its own, and none at all.
        if let Some(&(key, _)) = live.first() {
            // SAFETY: a live key.
            let [only] = unsafe { container.get_disjoint_unchecked_mut([key]) };
            *only = 7;
            assert_eq!(container[key], 7);
        }
        // SAFETY: no keys, nothing to check.
        let [] = unsafe { container.get_disjoint_unchecked_mut::<0>([]) };
    }};
}

/// One test per table type: churn a new table, then check its accessors.
macro_rules! table_tests {
    ($($name:ident: $table:ty;)*) => {$(
        #[test]
        fn $name() {
            let mut table = <$table>::new();
            let live = churn(&mut table);
            check_unchecked!(table, live);
            table.check_invariants();
        }
    )*};
}

table_tests! {
    id_table: IdTable<u64>;
    packed_table: PackedTable<u64>;
}

/// A primary table's keys, with the secondary map given a value for each
/// live one (the removed keys' slots are reused, so some indices have had
/// two keys).
fn secondary_keys() -> Vec<(Id, u64)> {
    churn(&mut IdTable::new())
}

#[test]
fn secondary_map() {
    let live = secondary_keys();
    let mut map = SecondaryMap::new();
    for &(key, value) in &live {
        map.insert(key, value);
    }
    check_unchecked!(map, live);
    map.check_invariants();
}

#[test]
fn sparse_secondary_map() {
    let live = secondary_keys();
    let mut map = SparseSecondaryMap::new();
    for &(key, value) in live.iter().rev() {
        map.insert(key, value);
    }
    // Removing and re-adding moves values in the dense array.
    for &(key, value) in live.iter().step_by(4) {
        assert_eq!(map.remove(key), Some(value));
        map.insert(key, value);
    }
    check_unchecked!(map, live);
    map.check_invariants();
}

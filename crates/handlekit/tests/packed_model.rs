//! Model test: `PackedTable` against a `HashMap<K, u64>` and a `Vec<K>` of
//! the dense order: the shared model suite (`common/model_suite.rs`, whose
//! doc says what is checked), with what only a packed table does among the
//! operations: the model predicts the dense order exactly (an insertion
//! appends, a removal moves the last key into the hole, `retain` keeps the
//! order of the survivors, a stable sort is a stable sort of the model's
//! keys by their values, `swap_positions` swaps), and after every operation
//! `key_slice()` must equal the model's order, `as_slice()` the model's
//! values in that order, and `position()` must agree with `key_slice()`.
//!
//! The same body runs for `Id`, `Id32` and a key with 4 generation bits
//! (where slots retire constantly), under `Reuse::Lifo` and
//! `Reuse::Fifo { min_free: 3 }`, on growable and (sometimes)
//! fixed-capacity tables.
//!
//! Below the model: dedicated tests that sorting keeps every key valid and
//! that a panicking comparator moves nothing.

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use handlekit::{Id, Id32, Key, PackedTable, Reuse};

mod common;
use common::keys::Gen4;
use common::model_suite::{MaybeSerde, ModelTable};
use common::tracker::{quiet_intentional_panics, sort_panicking_at};
use common::Lcg;
use proptest::strategy::Just;

/// The comparator of the sorts by value; `descending` reverses it.
fn by_value(descending: bool) -> impl Fn(&u64, &u64) -> Ordering {
    move |a, b| if descending { b.cmp(a) } else { a.cmp(b) }
}

impl<K> ModelTable for PackedTable<u64, K>
where
    K: Key + std::fmt::Debug + MaybeSerde,
    PackedTable<u64, K>: MaybeSerde,
{
    /// Sorts 2 + 2 + 2, `swap_positions` 3, `as_mut_slices` 1.
    const OWN_WEIGHT: u32 = 10;

    forward_model_table_methods!();

    fn check_own_iterators(&self, expected: &[(K, u64)]) {
        let values: Vec<u64> = expected.iter().map(|&(_, v)| v).collect();
        let rebuilt = PackedTable::<u64, K>::from_iter_values(values.iter().copied());
        assert_eq!(rebuilt.as_slice(), values.as_slice());
    }

    fn own_op(&mut self, r: u64, order: &mut Vec<K>, model: &HashMap<K, u64>) -> u64 {
        let (choice, r) = (r % 10, r / 10);
        match choice {
            0 | 1 => {
                let compare = by_value(r % 2 == 0);
                self.sort_by(&compare);
                // `sort_by` on a `Vec` is stable too: the exact order.
                order.sort_by(|a, b| compare(&model[a], &model[b]));
            }
            2 | 3 => {
                let modulus = 1 + r % 7;
                self.sort_by_key(|v| v % modulus);
                order.sort_by_key(|k| model[k] % modulus);
            }
            4 | 5 => {
                let compare = by_value(r % 2 == 0);
                self.sort_unstable_by(&compare);
                let values = self.as_slice();
                assert!(
                    values
                        .windows(2)
                        .all(|w| compare(&w[0], &w[1]) != Ordering::Greater),
                    "sorted"
                );
                // Any order of equal values will do; the keys must be the
                // same set, each still naming its value (checked next).
                let mut before = order.clone();
                let mut after = self.key_slice().to_vec();
                before.sort();
                after.sort();
                assert_eq!(before, after);
                *order = self.key_slice().to_vec();
            }
            6..=8 => {
                let n = order.len();
                if n > 0 {
                    let (a, b) = (r as usize % n, (r >> 20) as usize % n);
                    self.swap_positions(a, b);
                    order.swap(a, b);
                }
            }
            _ => {
                // Bump every value through `as_mut_slices`, checking its keys.
                let (keys, values) = self.as_mut_slices();
                assert_eq!(keys, order.as_slice());
                for (key, value) in keys.iter().zip(values) {
                    assert_eq!(*value, model[key]);
                    *value += 1;
                }
                return 1;
            }
        }
        0
    }

    fn write_another_way(&mut self, key: K, value: u64) -> bool {
        let position = self.position(key).unwrap();
        self.as_mut_slice()[position] = value;
        true
    }

    fn check_position(&self, key: K, order: &[K]) {
        let position = order.iter().position(|&k| k == key);
        assert_eq!(self.position(key), position, "position({key:?})");
        if let Some(position) = position {
            assert_eq!(self.key_slice()[position], key);
        }
    }

    fn check_slices(&self, order: &[K], model: &HashMap<K, u64>) {
        assert_eq!(self.key_slice(), order, "dense order");
        assert_eq!(self.as_slice().len(), order.len());
        for (position, key) in order.iter().enumerate() {
            assert_eq!(self.as_slice()[position], model[key]);
        }
    }

    fn buffers(&self) -> Vec<usize> {
        vec![
            self.as_slice().as_ptr().addr(),
            self.key_slice().as_ptr().addr(),
        ]
    }
}

model_suite_tests!(reuse_matrix PackedTable);

/// Swap-remove, exactly: removing the value at position `p` moves the last
/// value (and its key) to `p`.
#[test]
fn pair_iterators_keep_the_iterator_traits() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<handlekit::packed_table::Iter<'static, u64>>();
    send_sync::<handlekit::packed_table::IterMut<'static, u64>>();

    let table: PackedTable<u64> = (10..15).collect();
    let keys: Vec<_> = table.keys().collect();
    // A clone walks on its own; `Debug` lists the pairs left.
    let mut iter = table.iter();
    iter.next();
    let clone = iter.clone();
    assert_eq!(iter.nth(1), Some((keys[2], &12)));
    assert_eq!(clone.len(), 4);
    let mut rest = table.iter();
    rest.nth(2);
    assert_eq!(
        format!("{rest:?}"),
        format!("[({:?}, 13), ({:?}, 14)]", keys[3], keys[4])
    );
    // Steps past either end stop at it.
    let mut iter = table.iter();
    assert_eq!(iter.nth_back(1), Some((keys[3], &13)));
    assert_eq!(iter.nth(5), None);
    assert_eq!(iter.len(), 0);
    assert_eq!(iter.next_back(), None);
    assert_eq!(handlekit::packed_table::Iter::<u64>::default().len(), 0);
    // `fold` takes two pairs a step: every count, from both ends.
    let mut table = table;
    for skip in 0..=5 {
        let sum = table.iter_mut().skip(skip).fold(0, |sum, (_, v)| {
            *v += 1;
            sum + *v
        });
        let want: u64 = (10 + skip as u64..15).map(|v| v + 1).sum();
        assert_eq!(sum, want, "skip {skip}");
        for (i, v) in table.values_mut().enumerate() {
            // Put back the values this pass bumped.
            if i >= skip {
                *v -= 1;
            }
        }
    }
}

#[test]
fn remove_moves_the_last_value_into_the_hole() {
    let mut table: PackedTable<char> = PackedTable::new();
    let keys: Vec<Id> = "abcde".chars().map(|c| table.insert(c)).collect();
    assert_eq!(table.remove(keys[1]), Some('b'));
    assert_eq!(table.as_slice(), ['a', 'e', 'c', 'd']);
    assert_eq!(table.key_slice(), [keys[0], keys[4], keys[2], keys[3]]);
    assert_eq!(table.position(keys[4]), Some(1));
    // Removing the last value moves nothing.
    assert_eq!(table.remove(keys[3]), Some('d'));
    assert_eq!(table.as_slice(), ['a', 'e', 'c']);
    table.check_invariants();
}

// ---------------------------------------------------------------------------
// Sorting keeps every key valid.

/// A sort key with many ties and a serial number that tells equal keys
/// apart, so stability is visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct Item {
    rank: u32,
    serial: u32,
}

const SORT_LEN: usize = if cfg!(miri) { 24 } else { 1000 };

/// A table of `SORT_LEN` items in random order, built with removals and
/// slot reuse on the way, and the removed keys.
fn shuffled_table<K: Key>(seed: u64) -> (PackedTable<Item, K>, Vec<K>) {
    let mut rng = Lcg(seed);
    let mut table = PackedTable::default();
    let mut dead = Vec::new();
    let mut serial = 0;
    while table.len() < SORT_LEN {
        let rank = (rng.next() % 50) as u32;
        let key = table.insert(Item { rank, serial });
        serial += 1;
        if rng.next() % 4 == 0 {
            // Remove a random value: the last one moves into its place.
            let victim = table.key_slice()[rng.next() as usize % table.len()];
            assert!(table.remove(victim).is_some());
            dead.push(victim);
        }
        let _ = key;
    }
    table.check_invariants();
    (table, dead)
}

/// Checks that every key still names the value it named in `before`, that
/// stale keys stay stale, that `position` agrees with `key_slice`, and that
/// the values are sorted by `rank` (ascending or descending).
fn assert_sorted_and_keys_follow<K: Key>(
    table: &PackedTable<Item, K>,
    before: &[(K, Item)],
    dead: &[K],
    descending: bool,
) {
    table.check_invariants();
    assert_eq!(table.len(), before.len());
    for &(key, item) in before {
        assert_eq!(table.get(key), Some(&item), "{key:?} lost its value");
    }
    for &key in dead {
        assert_eq!(table.get(key), None, "stale {key:?} came back");
    }
    for (position, (&key, item)) in table.key_slice().iter().zip(table.as_slice()).enumerate() {
        assert_eq!(table.position(key), Some(position));
        assert_eq!(table[key], *item);
    }
    let ranks: Vec<u32> = table.values().map(|item| item.rank).collect();
    let mut sorted = ranks.clone();
    sorted.sort_unstable();
    if descending {
        sorted.reverse();
    }
    assert_eq!(ranks, sorted);
}

/// A stable sort keeps equal ranks in their previous dense order.
fn assert_stable<K: Key>(table: &PackedTable<Item, K>, before: &[(K, Item)]) {
    let previous: HashMap<u32, usize> = before
        .iter()
        .enumerate()
        .map(|(position, (_, item))| (item.serial, position))
        .collect();
    for pair in table.as_slice().windows(2) {
        if pair[0].rank == pair[1].rank {
            assert!(
                previous[&pair[0].serial] < previous[&pair[1].serial],
                "equal ranks changed order: {pair:?}"
            );
        }
    }
}

fn sort_keeps_keys<K: Key>(seed: u64) {
    // sort_by, ascending then descending.
    for descending in [false, true] {
        let (mut table, dead) = shuffled_table::<K>(seed);
        let before: Vec<(K, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
        table.sort_by(|a, b| {
            if descending {
                b.rank.cmp(&a.rank)
            } else {
                a.rank.cmp(&b.rank)
            }
        });
        assert_sorted_and_keys_follow(&table, &before, &dead, descending);
        assert_stable(&table, &before);
    }

    // sort_by_key.
    let (mut table, dead) = shuffled_table::<K>(seed + 1);
    let before: Vec<(K, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
    table.sort_by_key(|item| item.rank);
    assert_sorted_and_keys_follow(&table, &before, &dead, false);
    assert_stable(&table, &before);

    // sort_unstable_by.
    let (mut table, dead) = shuffled_table::<K>(seed + 2);
    let before: Vec<(K, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
    table.sort_unstable_by(|a, b| a.rank.cmp(&b.rank));
    assert_sorted_and_keys_follow(&table, &before, &dead, false);

    // After a sort the table works as before: removals repoint the moved
    // key, insertions append, and the stale keys stay stale.
    let mut rng = Lcg(seed);
    let mut live: Vec<(K, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
    for round in 0..SORT_LEN / 2 {
        let (key, item) = live.swap_remove(rng.next() as usize % live.len());
        assert_eq!(table.remove(key), Some(item));
        let item = Item {
            rank: round as u32,
            serial: u32::MAX - round as u32,
        };
        let fresh = table.insert(item);
        assert!(!dead.contains(&fresh) && !before.iter().any(|&(k, _)| k == fresh));
        assert_eq!(table.key_slice().last(), Some(&fresh));
        live.push((fresh, item));
    }
    table.check_invariants();
    for &(key, item) in &live {
        assert_eq!(table.get(key), Some(&item));
    }
    for &key in &dead {
        assert_eq!(table.get(key), None);
    }
}

#[test]
fn sort_keeps_every_key_pointing_at_its_value() {
    sort_keeps_keys::<Id>(1);
    sort_keeps_keys::<Id32>(2);
    sort_keeps_keys::<Gen4>(3);
}

#[test]
fn sorting_empty_and_single_tables() {
    let mut table: PackedTable<u8> = PackedTable::new();
    table.sort_by(|a, b| a.cmp(b));
    table.sort_unstable_by(|a, b| a.cmp(b));
    table.sort_by_key(|v| *v);
    table.check_invariants();
    let key = table.insert(5);
    table.sort_by(|_, _| unreachable!("one value needs no comparison"));
    table.sort_unstable_by(|_, _| unreachable!("one value needs no comparison"));
    assert_eq!(table[key], 5);
    assert_eq!(table.position(key), Some(0));
    table.check_invariants();
}

/// A comparator that panics on its `n`th call moves nothing: the dense
/// order, the values and every key are as before.
#[test]
fn panicking_comparator_leaves_the_table_unchanged() {
    quiet_intentional_panics();
    let (table, dead) = shuffled_table::<Id32>(9);
    let before: Vec<(Id32, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
    let calls: &[usize] = common::scaled(&[0, 7, 40], &[0, 1, 7, 100, 500, 2000, 5000]);
    for &n in calls {
        for method in 0..3 {
            let mut table = table.clone();
            let result = sort_panicking_at(&mut table, method, n, |item| item.rank);
            let panicked = result.is_err();
            table.check_invariants();
            if panicked {
                let after: Vec<(Id32, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
                assert_eq!(after, before, "method {method}, panic at call {n}");
            } else {
                // The sort finished before the nth call.
                assert_sorted_and_keys_follow(&table, &before, &dead, false);
            }
            for &key in &dead {
                assert_eq!(table.get(key), None);
            }
            // Panic at call 0 always happens (there are comparisons to make).
            if n == 0 {
                assert!(panicked, "method {method}");
            }
        }
    }
}

/// `swap_positions` swaps values and keys together, and panics on an
/// out-of-bounds position without changing anything.
#[test]
fn swap_positions_moves_keys_with_values() {
    quiet_intentional_panics();
    let mut table: PackedTable<u32, Id32> = PackedTable::default();
    let keys: Vec<Id32> = (0..5).map(|n| table.insert(n)).collect();
    table.swap_positions(0, 4);
    table.swap_positions(2, 2);
    assert_eq!(table.as_slice(), [4, 1, 2, 3, 0]);
    assert_eq!(
        table.key_slice(),
        [keys[4], keys[1], keys[2], keys[3], keys[0]]
    );
    assert_eq!(table.position(keys[0]), Some(4));
    assert_eq!(table[keys[0]], 0);
    let result = catch_unwind(AssertUnwindSafe(|| table.swap_positions(1, 5)));
    assert!(result.is_err());
    table.check_invariants();
    assert_eq!(table.as_slice(), [4, 1, 2, 3, 0]);
    for (n, &key) in keys.iter().enumerate() {
        assert_eq!(table[key], n as u32);
    }
}

/// A full fixed-capacity table refuses values with an error that names the
/// capacity, and changes nothing; after a removal it takes one again.
#[test]
fn try_insert_into_full_fixed_table() {
    for reuse in [Reuse::Lifo, Reuse::Fifo { min_free: 3 }] {
        let mut table: PackedTable<u32, Gen4> = PackedTable::with_fixed_capacity(3);
        table.set_reuse(reuse);
        let keys: Vec<Gen4> = (0..3).map(|n| table.try_insert(n).unwrap()).collect();
        let err = table.try_insert(3).unwrap_err();
        assert!(err.is_fixed_capacity() && !err.is_index_space());
        assert_eq!(err.limit(), Some(3));
        assert!(table.try_reserve(1).is_err());
        assert_eq!(table.as_slice(), [0, 1, 2]);
        assert_eq!(table.key_slice(), keys.as_slice());
        table.check_invariants();
        assert_eq!(table.remove(keys[0]), Some(0));
        // FIFO's reserve cannot be kept when the table cannot grow.
        let again = table.try_insert(4).unwrap();
        assert_eq!((again.index(), again.generation()), (0, 2));
        assert_eq!(table.as_slice(), [2, 1, 4]);
        assert_eq!(table.get(keys[0]), None);
        table.check_invariants();
    }
}

/// Serde keeps the dense order, every key, the stale keys' staleness and
/// the next key to be issued.
#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_keeps_dense_order_and_stale_keys() {
    for reuse in [Reuse::Lifo, Reuse::Fifo { min_free: 3 }] {
        let (mut table, dead) = shuffled_table::<Gen4>(4);
        table.set_reuse(reuse);
        // A dense order that is neither insertion nor slot order.
        table.sort_unstable_by(|a, b| b.serial.cmp(&a.serial));
        table.swap_positions(0, 1);
        let json = serde_json::to_string(&table).unwrap();
        let mut back: PackedTable<Item, Gen4> = serde_json::from_str(&json).unwrap();
        back.check_invariants();
        assert_eq!(back.key_slice(), table.key_slice());
        assert_eq!(back.as_slice(), table.as_slice());
        assert_eq!(back.reuse(), reuse);
        assert_eq!(back.retired_count(), table.retired_count());
        for (position, &key) in table.key_slice().iter().enumerate() {
            assert_eq!(back.position(key), Some(position));
        }
        for &key in &dead {
            assert_eq!(
                back.get(key),
                None,
                "stale {key:?} resolves after a round trip"
            );
        }
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        // The free list is rebuilt (in index order), so the copy may issue
        // keys in another order, but never a key issued before.
        let before: Vec<Gen4> = table.keys().chain(dead.iter().copied()).collect();
        for _ in 0..40 {
            let key = back.insert(Item { rank: 0, serial: 0 });
            assert!(
                !before.contains(&key),
                "{key:?} issued again after a round trip"
            );
        }
        back.check_invariants();
    }
}

/// A hand-written key that lies: every few calls `index()` names the next
/// slot and `generation()` a newer generation, so the keys the table keeps
/// beside its values do not always name their own slots. Such a key type
/// is not trusted (`Key::__PARTS_TRUST` keeps its default), so the table
/// checks every position and slot it takes from a key: whatever the key
/// says, operations give wrong answers or panic, never undefined behaviour
/// (Miri runs this).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct LyingKey(u64);

thread_local! {
    static LIES: Cell<u32> = const { Cell::new(0) };
}

/// Whether this call lies (one call in three).
fn lie_now() -> bool {
    LIES.with(|lies| {
        let n = lies.get().wrapping_add(1);
        lies.set(n);
        n % 3 == 0
    })
}

impl Key for LyingKey {
    const INDEX_BITS: u32 = 32;
    const GENERATION_BITS: u32 = 32;
    fn from_bits(bits: u64) -> Option<Self> {
        (bits >> 32 != 0).then_some(LyingKey(bits))
    }
    fn to_bits(self) -> u64 {
        self.0
    }
    fn index(self) -> usize {
        (self.0 & 0xffff_ffff) as usize + usize::from(lie_now())
    }
    fn generation(self) -> u32 {
        (self.0 >> 32) as u32 + u32::from(lie_now())
    }
}

#[test]
fn lying_keys_never_reach_past_the_values() {
    quiet_intentional_panics();
    let mut table: PackedTable<String, LyingKey> = PackedTable::default();
    let mut keys = Vec::new();
    let mut rng = Lcg(7);
    let steps = if cfg!(miri) { 120 } else { 4000 };
    for step in 0..steps {
        let roll = rng.next() % 8;
        let pick = |rng: &mut Lcg, keys: &[LyingKey]| {
            if keys.is_empty() {
                LyingKey(1 << 32)
            } else {
                keys[rng.next() as usize % keys.len()]
            }
        };
        let key = pick(&mut rng, &keys);
        // Any of these may panic on a lie (a position out of bounds); the
        // table stays memory-safe either way.
        let _ = catch_unwind(AssertUnwindSafe(|| match roll {
            0..=2 => keys.push(table.insert(step.to_string())),
            3 => drop(table.remove(key)),
            4 => drop(table.get(key).map(String::len)),
            5 => {
                if let Some(value) = table.get_mut(key) {
                    value.push('!');
                }
            }
            6 => table.retain(|_, value| value.len() % 3 != 0),
            _ => {
                if let Some(value) = table.detach(key) {
                    let _ = table.try_reattach_for_test(key, value);
                }
            }
        }));
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let total: usize = table.values().map(String::len).sum();
            let reached: usize = keys
                .iter()
                .filter_map(|&key| table.get(key))
                .map(String::len)
                .sum();
            std::hint::black_box((total, reached, table.len()));
        }));
    }
}

/// `reattach` panics on a key that is not detached (a lie can make it so).
trait TryReattach<K> {
    fn try_reattach_for_test(&mut self, key: K, value: String) -> Result<(), ()>;
}

impl<K: Key> TryReattach<K> for PackedTable<String, K> {
    fn try_reattach_for_test(&mut self, key: K, value: String) -> Result<(), ()> {
        catch_unwind(AssertUnwindSafe(|| self.reattach(key, value))).map_err(|_| ())
    }
}

//! Model test: `Pool` against a `HashMap<K, u64>`: the shared model suite
//! (`common/model_suite.rs`, whose doc says what is checked), with what
//! `Pool` and `Hive` check beside it (`common/stable_model.rs`: stable
//! addresses), and what only a pool does:
//!
//! - a reference free list (a stack of freed slots, then the next unused
//!   slot, then a new block; `clear` lists the free slots lowest first)
//!   predicts the exact key of every insertion, and the retired count;
//! - a fixed-capacity pool must never add a block, and a growable one has
//!   exactly as many blocks as the slots it has used need.
//!
//! The same body runs for `PoolKey`, `Id32` and a key with 4 generation bits
//! (where slots retire constantly), with block sizes 1, 4 and 64 and
//! (sometimes) a fixed capacity.

use std::collections::{HashMap, HashSet};

use handlekit::iter::PoolBlocks;
use handlekit::{define_key, Id32, Key, Pool, PoolKey};
use proptest::prelude::*;

mod common;

use common::keys::Gen4;
use common::model_suite::{Copied, MaybeSerde, Watch};
use common::stable_model::StableModel;
use common::stale_suite::G2;

impl<K: Key + std::fmt::Debug + MaybeSerde> StableModel<K> for PoolBlocks
where
    Pool<u64, K>: MaybeSerde,
{
    /// The block size.
    type Config = usize;
    type Own = Reference;
    const FIXED_BELOW: usize = 80;
    const SHRINKS: bool = false;

    fn make(block_size: usize, fixed: Option<usize>) -> Pool<u64, K> {
        match fixed {
            Some(capacity) => Pool::with_fixed_capacity(capacity),
            None => Pool::with_block_size(block_size),
        }
    }

    fn other() -> Pool<u64, K> {
        Pool::with_block_size(2)
    }
}

/// The documented allocation order, written plainly: reuse the most
/// recently freed slot, else the next never-used slot, else a new block.
pub struct Reference {
    /// Generation of every slot used so far (index = flat index).
    generations: Vec<u32>,
    /// Free slots; the last is reused first.
    free: Vec<usize>,
    retired: usize,
    /// Slots in the blocks allocated so far.
    slots: usize,
    block_size: usize,
    fixed: Option<usize>,
    max_generation: u32,
    /// The lowest number of vacant used slots since the free list was
    /// last rebuilt in index order.
    vacant_low: usize,
}

impl Reference {
    /// Vacant used slots: on the free list or retired.
    fn vacant(&self) -> usize {
        self.free.len() + self.retired
    }

    fn insert(&mut self) -> Option<(usize, u32)> {
        let used = self.generations.len();
        // Refilling an empty pool first puts the list back in index order,
        // lowest on top, if the vacant count rose by at least half the used
        // slots since the last rebuild.
        if !self.free.is_empty() && self.vacant() == used && used - self.vacant_low >= used / 2 {
            self.clear([]);
        }
        if let Some(index) = self.free.pop() {
            self.vacant_low = self.vacant_low.min(self.vacant());
            self.generations[index] += 1;
            return Some((index, self.generations[index]));
        }
        if self.generations.len() == self.slots {
            if self.fixed.is_some() {
                return None;
            }
            self.slots += self.block_size;
        }
        self.generations.push(1);
        Some((self.generations.len() - 1, 1))
    }

    fn remove(&mut self, index: usize) {
        if self.generations[index] >= self.max_generation {
            self.retired += 1;
        } else {
            self.free.push(index);
        }
    }

    /// `try_reserve(additional)`: blocks are added after the others (not
    /// used until the blocks before them are) until that many more values
    /// fit; a fixed pool refuses if they do not.
    fn reserve(&mut self, additional: usize) -> bool {
        let room = |r: &Self| r.free.len() + (r.slots - r.generations.len());
        if self.fixed.is_some() {
            return room(self) >= additional;
        }
        while room(self) < additional {
            self.slots += self.block_size;
        }
        true
    }

    /// `clear`: every live slot is freed, then the list is rebuilt with the
    /// lowest index on top.
    fn clear(&mut self, live: impl IntoIterator<Item = usize>) {
        for index in live {
            self.remove(index);
        }
        self.free = (0..self.generations.len())
            .rev()
            .filter(|&i| self.generations[i] < self.max_generation)
            .collect();
        self.vacant_low = self.vacant();
    }
}

impl<K: Key + std::fmt::Debug + MaybeSerde> Watch<Pool<u64, K>> for Reference
where
    Pool<u64, K>: MaybeSerde,
{
    fn new(pool: &Pool<u64, K>, fixed: Option<usize>) -> Self {
        let block_size = pool.block_size();
        if let Some(capacity) = fixed {
            assert_eq!(pool.fixed_capacity(), Some(capacity));
            assert_eq!(pool.block_count(), usize::from(capacity > 0));
            assert!(block_size >= capacity);
        }
        Reference {
            generations: Vec::new(),
            free: Vec::new(),
            retired: 0,
            slots: fixed.unwrap_or(0),
            block_size,
            fixed,
            max_generation: K::MAX_GENERATION,
            vacant_low: 0,
        }
    }

    /// The key is the one predicted.
    fn issued(&mut self, _pool: &Pool<u64, K>, key: K) {
        let predicted = self.insert();
        assert_eq!(
            Some((key.index(), key.generation())),
            predicted,
            "issued key {key:?}"
        );
    }

    /// The keys come in insertion order from the reference.
    fn extended(&mut self, pool: &Pool<u64, K>, values: &[u64], added: &[K]) {
        let added: HashSet<K> = added.iter().copied().collect();
        for &value in values {
            let (index, generation) = self.insert().expect("room");
            let key = K::from_parts(index, generation).expect("valid parts");
            assert!(added.contains(&key), "{key:?} was not predicted");
            assert_eq!(pool.get(key), Some(&value));
        }
    }

    fn refused(&mut self, _pool: &Pool<u64, K>) {
        assert_eq!(self.insert(), None);
    }

    fn freed(&mut self, _pool: &Pool<u64, K>, key: K) {
        self.remove(key.index());
    }

    fn cleared(&mut self, _pool: &Pool<u64, K>, rest: &[K]) {
        self.clear(rest.iter().map(|k| k.index()));
    }

    fn reserved(&mut self, _pool: &Pool<u64, K>, additional: usize, ok: bool) {
        assert_eq!(ok, self.reserve(additional), "try_reserve({additional})");
    }

    fn copied(&mut self, original: &Pool<u64, K>, copy: &Pool<u64, K>, how: Copied) {
        if how != Copied::Serde {
            // A copy: the same blocks, free list and fixed capacity.
            assert_eq!(copy.capacity(), original.capacity());
            assert_eq!(copy.block_size(), original.block_size());
            assert_eq!(copy.block_count(), original.block_count());
            assert_eq!(copy.fixed_capacity(), original.fixed_capacity());
            return;
        }
        // Loaded: the free list rebuilt in index order, the default block
        // size, no fixed capacity.
        assert_eq!(copy.fixed_capacity(), None);
        assert_eq!(copy.block_size(), Pool::<u64, K>::default().block_size());
        let live: HashSet<usize> = copy.keys().map(|k| k.index()).collect();
        self.free = (0..self.generations.len())
            .rev()
            .filter(|&i| !live.contains(&i) && self.generations[i] < self.max_generation)
            .collect();
        self.block_size = copy.block_size();
        self.slots = copy.block_count() * copy.block_size();
        self.fixed = None;
        self.vacant_low = self.vacant();
        assert!(self.slots >= self.generations.len());
        assert!(self.slots < self.generations.len() + copy.block_size());
    }

    fn check(&mut self, pool: &Pool<u64, K>, _model: &HashMap<K, u64>, _issued: &[K]) {
        assert_eq!(pool.retired_count(), self.retired, "retired");
        assert_eq!(pool.capacity(), self.slots - self.retired, "capacity");
        match self.fixed {
            Some(fixed) => assert_eq!(pool.block_count(), usize::from(fixed > 0)),
            None => assert_eq!(pool.block_count(), self.slots / self.block_size),
        }
    }
}

fn block_size() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), Just(4), Just(64)]
}

model_suite_tests! {
    pool_key: Pool<u64, PoolKey>, block_size();
    id32: Pool<u64, Id32>, block_size();
    gen4: Pool<u64, Gen4>, block_size();
}

impl_churn!(Pool, PoolKey;
    test: Pool::with_block_size,
    miri: (64, 400, 8), full: (2000, 40_000, 16), shrink_phase: false);

/// A fixed-capacity pool keeps its one block whatever happens, and its
/// addresses with it.
#[test]
fn fixed_capacity_never_adds_a_block() {
    let n = if cfg!(miri) { 40 } else { 1000 };
    let mut pool: Pool<u32> = Pool::with_fixed_capacity(n);
    let heap = pool.heap_bytes();
    let keys: Vec<PoolKey> = (0..n as u32).map(|v| pool.insert(v)).collect();
    assert!(pool.try_insert(0).unwrap_err().is_fixed_capacity());
    let first = pool.get_ptr(keys[0]).unwrap();
    assert_eq!(pool.keys().next(), Some(keys[0]));
    for round in 0..3 {
        let current: Vec<PoolKey> = pool.keys().skip(1).step_by(2).collect();
        assert!(current.len() >= n / 2 - 1);
        for key in current.into_iter().take(n / 2) {
            assert!(pool.remove(key).is_some());
        }
        pool.extend((0..n as u32 / 2).map(|v| v + round));
        assert!(pool.try_insert(0).is_err());
        pool.retain(|k, v| k == keys[0] || *v % 3 != 0);
        pool.extend(std::iter::repeat_n(7, n - pool.len()));
    }
    assert_eq!(pool.block_count(), 1);
    assert_eq!(pool.heap_bytes(), heap);
    assert_eq!(pool.get_ptr(keys[0]), Some(first));
    pool.check_invariants();
}

/// The state words of every block sit in one array that is copied when it
/// grows; the values never move. A pointer to a value taken before many
/// blocks are added still reads and writes that value (Miri checks that
/// the copy invalidates no value pointer), and `reserve` sizes the state
/// array for all the blocks it adds at once.
#[test]
fn values_stay_put_while_the_state_array_grows() {
    let (block, blocks) = if cfg!(miri) { (4, 12) } else { (64, 200) };
    let mut pool: Pool<u64> = Pool::with_block_size(block);
    let first = pool.insert(7);
    let pointer = pool.get_ptr(first).unwrap();
    let keys: Vec<PoolKey> = (0..(block * blocks) as u64)
        .map(|v| pool.insert(v))
        .collect();
    assert!(pool.block_count() > blocks);
    // SAFETY: the value of `first` is still in the pool, and no reference
    // to it is alive.
    unsafe {
        assert_eq!(pointer.read(), 7);
        pointer.write(8);
    }
    assert_eq!(pool[first], 8);
    assert_eq!(pool.get_ptr(first), Some(pointer));
    assert!(keys.iter().enumerate().all(|(v, &k)| pool[k] == v as u64));
    pool.check_invariants();

    let mut reserved: Pool<u64> = Pool::with_block_size(block);
    reserved.reserve(block * blocks);
    let heap = reserved.heap_bytes();
    reserved.extend(0..(block * blocks) as u64);
    assert_eq!(reserved.heap_bytes(), heap, "no block or state array added");
    // One directory entry per block, the state array and the payloads sized
    // exactly.
    let slots = block * blocks;
    assert_eq!(heap, slots * (4 + 8) + reserved.block_count() * 8);
}

/// A key naming a slot of the last block that was never used, or a slot
/// past every block, resolves to nothing through every lookup, and
/// removing by it changes nothing. (Lookups bound the index by the used
/// slots, not by the slots allocated.)
#[test]
fn keys_past_the_used_slots_name_nothing() {
    let mut pool: Pool<u64> = Pool::with_block_size(16);
    // Two blocks, 20 of their 32 slots used.
    let keys: Vec<PoolKey> = (0..20).map(|v| pool.insert(v)).collect();
    assert_eq!(pool.block_count(), 2);
    let mut resolved = 0;
    for key in common::forged_keys::<PoolKey>(0..40, 0..=3) {
        let live = keys.contains(&key);
        resolved += usize::from(live);
        assert_eq!(pool.get(key).is_some(), live, "get({key:?})");
        assert_eq!(pool.get_mut(key).is_some(), live, "get_mut({key:?})");
        assert_eq!(pool.get_ptr(key).is_some(), live, "get_ptr({key:?})");
        assert_eq!(pool.contains_key(key), live, "contains_key({key:?})");
        if !live {
            assert_eq!(pool.remove(key), None, "remove({key:?})");
        }
    }
    assert_eq!(resolved, keys.len());
    assert_eq!(pool.len(), 20);
    pool.check_invariants();
}

/// `Send` and `Sync` follow the value type, as for `Vec`.
#[test]
fn auto_traits() {
    assert_send_sync_with_iterators!(pool::Pool);
}

define_key! {
    /// 3 index bits: 8 slots in all.
    pub struct EightSlots(u32; index_bits = 3);
}

/// With 2 generation bits every slot retires after 3 occupants. A fixed pool
/// is churned until every slot has retired; after every step, every key ever
/// issued and every forged key over the slots resolves iff it is live.
#[test]
fn narrow_generations_retire_every_slot_and_no_key_comes_back() {
    let mut pool: Pool<u32, G2> = Pool::with_fixed_capacity(8);
    let mut issued: HashMap<G2, u32> = HashMap::new();
    let mut live: Vec<G2> = Vec::new();
    let mut n = 0u32;
    let mut steps = 0;
    loop {
        steps += 1;
        assert!(steps < 1000, "the pool never filled up with retired slots");
        match pool.try_insert(n) {
            Ok(key) => {
                assert!(issued.insert(key, n).is_none(), "{key:?} issued twice");
                live.push(key);
                n += 1;
            }
            Err(err) => {
                assert!(err.is_fixed_capacity());
                if live.is_empty() {
                    break;
                }
                let key = live.remove((n as usize * 7 + steps) % live.len());
                assert_eq!(pool.remove(key), Some(issued[&key]));
            }
        }
        pool.check_invariants();
        for key in common::forged_keys::<G2>(0..10, 0..=4) {
            let expected = live.contains(&key).then(|| &issued[&key]);
            assert_eq!(pool.get(key), expected, "{key:?}");
            assert_eq!(pool.get_ptr(key).is_some(), expected.is_some());
        }
    }
    assert_eq!(issued.len(), 24);
    assert_eq!(pool.retired_count(), 8);
    assert_eq!(pool.capacity(), 0);
    assert!(pool.is_empty());
}

/// A growable pool stops at the key's index space, with the error saying so,
/// and its last block is cut to fit.
#[test]
fn growable_pool_stops_at_the_index_space() {
    let mut pool: Pool<u8, EightSlots> = Pool::with_block_size(3); // rounds up to 4
    for n in 0..8 {
        pool.insert(n);
    }
    assert_eq!(pool.block_count(), 2);
    let err = pool.try_insert(8).unwrap_err();
    assert!(err.is_index_space());
    assert_eq!(err.limit(), Some(8));
    pool.check_invariants();
    // A block bigger than the index space is cut to its 8 slots.
    let mut cut: Pool<u8, EightSlots> = Pool::with_block_size(16);
    cut.insert(0);
    assert_eq!((cut.block_count(), cut.capacity()), (1, 8));
    cut.extend(1..8);
    assert!(cut.try_insert(0).unwrap_err().is_index_space());
    cut.check_invariants();
}

/// A block cut short by the index space is walked, emptied and refilled
/// like any other: iteration stops at its end, and the free-list rebuild
/// that an emptying `remove` runs hands its slots out lowest first.
#[test]
fn a_cut_block_iterates_empties_and_refills_in_order() {
    let mut pool: Pool<u8, EightSlots> = Pool::with_block_size(16);
    let keys: Vec<_> = (0..8).map(|n| pool.insert(n)).collect();
    for &key in keys.iter().step_by(3) {
        pool.remove(key);
    }
    let left: Vec<u8> = vec![1, 2, 4, 5, 7];
    assert_eq!(pool.values().copied().collect::<Vec<_>>(), left);
    let mut iter = pool.values();
    assert_eq!(iter.next(), Some(&1));
    assert_eq!(iter.fold(0u32, |sum, v| sum + u32::from(*v)), 2 + 4 + 5 + 7);
    for &key in &keys {
        pool.remove(key);
    }
    assert!(pool.is_empty());
    pool.check_invariants();
    let again: Vec<_> = (0..8).map(|n| pool.insert(n)).collect();
    let indices: Vec<usize> = again.iter().map(|key| key.index()).collect();
    assert_eq!(indices, (0..8).collect::<Vec<_>>());
    assert!(again
        .iter()
        .zip(&keys)
        .all(|(new, old)| pool.get(*old).is_none() && pool[*new] < 8));
    pool.check_invariants();
}

/// Deserializing a pool from untrusted input.
#[cfg(feature = "serde")]
mod pool_serde {
    use super::*;
    use common::stale_suite::FourSlots;

    fn parse<K: Key>(json: &str) -> Result<Pool<u64, K>, String> {
        common::from_json(json)
    }

    #[test]
    fn slots_are_loaded_and_validated() {
        // Gen4: generations 1..=15.
        let json = r#"{"slots":[[1,10],[15,null],[0,null],[2,null]]}"#;
        let mut pool = parse::<Gen4>(json).unwrap();
        common::table::assert_loaded_with_a_retired_slot(&pool, 15);
        assert_eq!(serde_json::to_string(&pool).unwrap(), json);
        // The free list is rebuilt lowest index first; then fresh slots.
        let keys: Vec<(usize, u32)> = (0..3)
            .map(|v| pool.insert(v))
            .map(|k| (k.index(), k.generation()))
            .collect();
        assert_eq!(keys, [(2, 1), (3, 3), (4, 1)]);
        pool.check_invariants();

        for (json, why) in [
            (
                r#"{"slots":[[16,10]]}"#,
                "occupied generation past the maximum",
            ),
            (
                r#"{"slots":[[16,null]]}"#,
                "vacant generation past the maximum",
            ),
            (r#"{"slots":[[0,10]]}"#, "occupied generation 0"),
            (r#"{"slots":[[4294967295,10]]}"#, "u32::MAX generation"),
            (
                r#"{"slots":[[2147483649,null]]}"#,
                "generation with the vacant bit",
            ),
            (r#"{}"#, "missing slots"),
            (r#"{"slots":[],"slots":[]}"#, "duplicate slots"),
            (r#"{"slots":[],"block_size":4}"#, "unknown field"),
            (r#"{"slots":[[1]]}"#, "slot without a value"),
        ] {
            assert!(parse::<Gen4>(json).is_err(), "accepted {why}: {json}");
        }
    }

    #[test]
    fn slot_count_is_bounded_by_the_key() {
        let slots = |n: usize| format!(r#"{{"slots":[{}]}}"#, vec!["[1,0]"; n].join(","));
        let four = parse::<FourSlots>(&slots(4)).unwrap();
        assert_eq!(four.len(), 4);
        four.check_invariants();
        let err = parse::<FourSlots>(&slots(5)).unwrap_err();
        assert!(err.contains("index"), "{err}");
    }

    /// A fixed pool loads as a growable one with the default block size.
    #[test]
    fn fixed_capacity_and_block_size_are_not_kept() {
        let mut fixed: Pool<u64> = Pool::with_fixed_capacity(3);
        let key = fixed.insert(1);
        let back: Pool<u64> = parse(&serde_json::to_string(&fixed).unwrap()).unwrap();
        assert_eq!(back.fixed_capacity(), None);
        assert_eq!(back.block_size(), Pool::<u64>::new().block_size());
        assert_eq!(back[key], 1);
    }
}

//! The model suite (`model_suite.rs`) for `Pool` and `Hive`, written once
//! over `StableTable<u64, K, S>`: what both check beside the model, and
//! the hook ([`StableModel`]) through which `pool_model.rs` and
//! `hive_model.rs` add what only their blocks do.
//!
//! Beside the model, for both: the address of every live value, recorded
//! when it was issued (again when the table is replaced by a copy), must
//! not change until the value is removed, and must read the right value
//! (the `get_ptr` guarantee); a removed or forged key has no address; a
//! value written through its recorded pointer reads back (an operation of
//! their own); and the iterators' `Debug`, `for_each`, `skip` and partial
//! mutable walks agree with the model.

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::ptr::NonNull;

use handlekit::iter::BlockStorage;
use handlekit::{Key, StableTable};

use super::model_suite::{Copied, Harness, MaybeSerde, ModelTable, NoReuse, Watch};
use super::table::Table;

/// The two block storages, named by a trait of this crate with no
/// parameter: no other crate can implement it for a slot layout, so the
/// `ModelTable` impl below does not overlap the slot layouts' own.
pub trait Blocks {}
impl Blocks for handlekit::iter::PoolBlocks {}
impl Blocks for handlekit::iter::HiveBlocks {}

/// What only one kind of blocks adds to the model suite: how its tables
/// are made, and its own checks (`Own`, told of every change as a
/// [`Watch`] is).
pub trait StableModel<K: Key + Debug + Hash>: BlockStorage + Blocks + Sized {
    /// How a growable table is made (its block sizes).
    type Config: Copy + Debug;
    /// The checks of these blocks beside the model (a
    /// [`Watch`] of the table).
    type Own;
    /// How often [`harness_op`](Self::harness_op) comes up.
    const OWN_WEIGHT: u32 = 0;
    /// The fixed capacities drawn are below this.
    const FIXED_BELOW: usize;
    /// The table has `shrink_to_fit`.
    const SHRINKS: bool;
    /// As [`ModelTable::RETIRED_SLOTS_CAN_GO`].
    const RETIRED_SLOTS_CAN_GO: bool = false;

    fn make(config: Self::Config, fixed: Option<usize>) -> StableTable<u64, K, Self>;
    /// A growable table made another way than the ones under test.
    fn other() -> StableTable<u64, K, Self>;
    fn shrink(_table: &mut StableTable<u64, K, Self>) {
        unreachable!("no shrink_to_fit")
    }
    /// An operation of these blocks only, chosen by `r`.
    fn harness_op(_harness: &mut Harness<StableTable<u64, K, Self>>, _r: u64)
    where
        StableTable<u64, K, Self>: ModelTable,
    {
    }
}

/// How often writes through a recorded pointer come up.
const WRITE_WEIGHT: u32 = 3;

impl<K, S> ModelTable for StableTable<u64, K, S>
where
    K: Key + Debug + Hash,
    S: StableModel<K>,
    S::Own: Watch<Self>,
    for<'a> S::Walk<'a, u64>: Clone,
    Self: Table<u64, Key = K> + Clone + MaybeSerde,
{
    type Config = S::Config;
    type Watch = StableWatch<K, S::Own>;
    type Reusing = NoReuse;
    const OWN_WEIGHT: u32 = WRITE_WEIGHT + S::OWN_WEIGHT;
    const FIXED_BELOW: usize = S::FIXED_BELOW;
    const SHRINKS: bool = S::SHRINKS;
    const RETIRED_SLOTS_CAN_GO: bool = S::RETIRED_SLOTS_CAN_GO;

    fn make(config: S::Config, fixed: Option<usize>) -> Self {
        S::make(config, fixed)
    }
    fn other() -> Self {
        S::other()
    }
    fn shrink(&mut self) {
        S::shrink(self)
    }

    crate::forward_model_iteration!();

    fn harness_op(harness: &mut Harness<Self>, r: u64) {
        let choice = (r % u64::from(Self::OWN_WEIGHT)) as u32;
        let r = r / u64::from(Self::OWN_WEIGHT);
        if choice >= WRITE_WEIGHT {
            return S::harness_op(harness, r);
        }
        // Write a live value through the pointer recorded at insertion.
        let live = harness.iteration_order();
        if live.is_empty() {
            return;
        }
        let key = live[r as usize % live.len()];
        let value = (r >> 32) % 1000;
        let ptr = harness.watch.addresses[&key];
        // SAFETY: the value is live (the model says so, and `check`
        // verified the pointer), and no reference into the table is.
        unsafe { *ptr.as_ptr() = value };
        harness.model.insert(key, value);
        assert_eq!(harness.table[key], value);
    }

    fn check_own_iterators(&self, expected: &[(K, u64)]) {
        let values: Vec<u64> = expected.iter().map(|&(_, v)| v).collect();
        assert_eq!(format!("{:?}", self.values()), format!("{values:?}"));
        let listed: Vec<(K, &u64)> = self.iter().collect();
        assert_eq!(format!("{:?}", self.iter()), format!("{listed:?}"));
        let mut sum = 0;
        self.values().for_each(|v| sum += v);
        assert_eq!(sum, values.iter().sum::<u64>());
        #[cfg(all(feature = "rayon", not(miri)))]
        {
            let remaining = format!("ParEntries {{ remaining: {} }}", expected.len());
            assert_eq!(format!("{:?}", self.par_iter()), remaining);
        }
        // Partial mutable walks, on a copy: every other value through
        // `iter_mut`, and those past a split through `values_mut().skip`.
        let split = values.len() / 3;
        let mut copy = self.clone();
        for (i, (_, v)) in copy.iter_mut().enumerate() {
            if i % 2 == 0 {
                *v += 1;
            }
        }
        for v in copy.values_mut().skip(split) {
            *v += 2;
        }
        let bumped: Vec<u64> = values
            .iter()
            .enumerate()
            .map(|(i, v)| v + u64::from(i % 2 == 0) + if i >= split { 2 } else { 0 })
            .collect();
        assert_eq!(copy.values().copied().collect::<Vec<_>>(), bumped);
    }
}

/// The address of every live value, and the checks of the blocks.
pub struct StableWatch<K, O> {
    pub addresses: HashMap<K, NonNull<u64>>,
    pub own: O,
}

impl<K, S, O> Watch<StableTable<u64, K, S>> for StableWatch<K, O>
where
    K: Key + Debug + Hash,
    S: StableModel<K, Own = O>,
    O: Watch<StableTable<u64, K, S>>,
    StableTable<u64, K, S>: ModelTable<Key = K>,
{
    fn new(table: &StableTable<u64, K, S>, fixed: Option<usize>) -> Self {
        StableWatch {
            addresses: HashMap::new(),
            own: O::new(table, fixed),
        }
    }
    fn issued(&mut self, table: &StableTable<u64, K, S>, key: K) {
        let ptr = table.get_ptr(key).expect("a new key is live");
        self.addresses.insert(key, ptr);
        self.own.issued(table, key);
    }
    fn extended(&mut self, table: &StableTable<u64, K, S>, values: &[u64], added: &[K]) {
        for &key in added {
            let ptr = table.get_ptr(key).expect("a new key is live");
            self.addresses.insert(key, ptr);
        }
        self.own.extended(table, values, added);
    }
    fn refused(&mut self, table: &StableTable<u64, K, S>) {
        self.own.refused(table);
    }
    fn freed(&mut self, table: &StableTable<u64, K, S>, key: K) {
        assert!(self.addresses.remove(&key).is_some());
        self.own.freed(table, key);
    }
    fn cleared(&mut self, table: &StableTable<u64, K, S>, rest: &[K]) {
        self.addresses.clear();
        self.own.cleared(table, rest);
    }
    fn reserved(&mut self, table: &StableTable<u64, K, S>, additional: usize, ok: bool) {
        self.own.reserved(table, additional, ok);
    }
    fn shrunk(&mut self, table: &StableTable<u64, K, S>) {
        self.own.shrunk(table);
    }
    fn copied(
        &mut self,
        original: &StableTable<u64, K, S>,
        copy: &StableTable<u64, K, S>,
        how: Copied,
    ) {
        // The values are at new addresses.
        self.addresses = super::addresses(copy.keys(), |k| copy.get_ptr(k));
        self.own.copied(original, copy, how);
    }
    fn looked_up(&self, table: &StableTable<u64, K, S>, key: K, value: Option<u64>) {
        assert_eq!(table.get_ptr(key), self.addresses.get(&key).copied());
        assert_eq!(table.get_ptr(key).is_some(), value.is_some());
        self.own.looked_up(table, key, value);
    }
    fn check(&mut self, table: &StableTable<u64, K, S>, model: &HashMap<K, u64>, issued: &[K]) {
        assert_eq!(self.addresses.len(), model.len());
        for &key in issued {
            match model.get(&key) {
                Some(&value) => {
                    let ptr = self.addresses[&key];
                    assert_eq!(table.get_ptr(key), Some(ptr), "address of {key:?} moved");
                    // SAFETY: the value is live and no reference into the
                    // table is.
                    assert_eq!(unsafe { *ptr.as_ptr() }, value);
                }
                None => assert_eq!(table.get_ptr(key), None, "{key:?} is not live"),
            }
        }
        self.own.check(table, model, issued);
    }
    fn stepped(&mut self, table: &StableTable<u64, K, S>) {
        self.own.stepped(table);
    }
}

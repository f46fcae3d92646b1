//! Exhaustive stale-key tests at tiny widths, written once over
//! [`StaleTable`] and run for `IdTable`, `LookupTable` and `PackedTable` by
//! `stale_suite_tests!` (one `#[test]` per function).
//!
//! Deterministic runs (a fixed-seed LCG picks the operations) drive tables
//! of keys with 1, 2 and 3 generation bits until every slot has retired and
//! the table refuses new values. Besides insertions and removals the runs
//! `clear`, `drain` and `retain` (and a container's own moves, through
//! [`StaleTable::stir`]), since all of them free slots. Every key ever
//! issued is kept, and after every operation each one must resolve iff it
//! is live, to its own serial number; iteration must follow the
//! container's documented order. A reference free list predicts every key
//! the table issues, so the reuse policies (and the free list rebuilt by
//! `clear`) are checked exactly, and the retired-slot count is checked
//! against it.
//!
//! `define_key!` keys are 32 or 64 bits wide, so a tiny generation width
//! comes with a huge index space; those are run on fixed-capacity tables.
//! A hand-written [`Tiny`] key has both a tiny index and a tiny generation,
//! so a growable table exhausts the key's whole space: then every valid key
//! of the type has been issued exactly once, and every possible bit pattern
//! can be tried against the table.

use std::collections::HashMap;
use std::num::NonZeroU16;

use handlekit::{define_key, Key, Reuse};

use super::reference::Reference;
use super::table::{ReuseTable, Table};
use super::Lcg;

define_key! {
    /// 1 generation bit: every slot holds one value, then retires.
    pub struct G1(u32; index_bits = 31);
    /// 2 generation bits: 3 occupants per slot (other test binaries' fast-retiring key too).
    pub struct G2(u32; index_bits = 30);
    /// 3 generation bits: 7 occupants per slot.
    pub struct G3(u32; index_bits = 29);
    /// 2 index bits: 4 slots, each reusable about 2^30 times.
    pub struct FourSlots(u32; index_bits = 2);
}

/// A hand-written key with `I` index bits and `G` generation bits, packed in
/// the low `I + G` bits of a `u16`. It keeps the `Key` contract.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Tiny<const I: u32, const G: u32>(NonZeroU16);

impl<const I: u32, const G: u32> Key for Tiny<I, G> {
    const INDEX_BITS: u32 = I;
    const GENERATION_BITS: u32 = G;

    fn from_bits(bits: u64) -> Option<Self> {
        if bits >> (I + G) != 0 {
            return None;
        }
        let generation = bits >> I;
        if generation == 0 || generation > u64::from(Self::MAX_GENERATION) {
            return None;
        }
        NonZeroU16::new(u16::try_from(bits).ok()?).map(Tiny)
    }

    fn to_bits(self) -> u64 {
        u64::from(self.0.get())
    }
}

/// What a stale-key run needs of a table of `u64` serials, beyond
/// [`ReuseTable`]: the moves only it makes, and the checks of its own
/// order. Both do nothing by default.
pub trait StaleTable: ReuseTable<u64> {
    /// Moves values around without freeing a slot (sorts, swaps), choosing
    /// with `r`, and applies the same move to `order`, the model of the
    /// iteration order (`serial` gives a key's value). Returns whether it
    /// did anything.
    fn stir(
        &mut self,
        _r: u64,
        _order: &mut Vec<Self::Key>,
        _serial: &dyn Fn(Self::Key) -> u64,
    ) -> bool {
        false
    }

    /// Checks what the container says of its order beyond iteration (its
    /// positions and slices) against `order` and the `issued` keys.
    fn check_order(&self, _order: &[Self::Key], _issued: &[Self::Key]) {}
}

/// The policies each run is repeated for (fewer under Miri, still both).
pub const POLICIES: &[Reuse] = if cfg!(miri) {
    &[Reuse::Lifo, Reuse::Fifo { min_free: 1 }]
} else {
    &[
        Reuse::Lifo,
        Reuse::Fifo { min_free: 0 },
        Reuse::Fifo { min_free: 1 },
        Reuse::Fifo { min_free: 3 },
    ]
};

/// Seeds per configuration.
pub const SEEDS: u64 = if cfg!(miri) { 1 } else { 4 };

/// What the run ends on when the table is full.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    /// A fixed capacity of this many slots.
    Fixed(usize),
    /// The key's index space.
    IndexSpace,
}

impl Limit {
    fn slots<K: Key>(self) -> usize {
        match self {
            Limit::Fixed(n) => n,
            Limit::IndexSpace => 1usize << K::INDEX_BITS,
        }
    }

    fn table<C: StaleTable>(self) -> C {
        match self {
            Limit::Fixed(n) => C::with_fixed_capacity(n),
            Limit::IndexSpace => C::with_reuse(Reuse::Lifo),
        }
    }
}

/// The keys in the order `C` iterates them: its dense order as the model
/// has it, or slot order.
fn iteration_order<C: Table<u64>>(order: &[C::Key]) -> Vec<C::Key> {
    let mut keys = order.to_vec();
    if !C::DENSE {
        keys.sort_by_key(|k| k.index());
    }
    keys
}

/// A run's state: the table, the reference and everything issued.
struct Run<C: StaleTable> {
    table: C,
    reference: Reference,
    issued: Vec<C::Key>,
    /// Key → serial of its value, for live keys only.
    live: HashMap<C::Key, u64>,
    /// The live keys; for a dense container, in its dense order.
    order: Vec<C::Key>,
}

impl<C: StaleTable> Run<C> {
    fn remove_at(&mut self, position: usize) {
        let key = self.order.swap_remove(position);
        let serial = self.live.remove(&key).unwrap();
        assert_eq!(self.table.remove(key), Some(serial));
        assert_eq!(self.table.remove(key), None);
        self.reference.remove_key(key.index());
    }

    fn forget_all(&mut self) {
        let indices: Vec<usize> = self.order.iter().map(|k| k.index()).collect();
        self.reference.clear(indices);
        self.live.clear();
        self.order.clear();
    }

    fn check(&self) {
        let table = &self.table;
        table.check_invariants();
        assert_eq!(table.len(), self.live.len());
        assert_eq!(table.retired_count(), self.reference.retired);
        let expected: Vec<(C::Key, u64)> = iteration_order::<C>(&self.order)
            .into_iter()
            .map(|k| (k, self.live[&k]))
            .collect();
        let got: Vec<(C::Key, u64)> = table.iter().map(|(k, v)| (k, *v)).collect();
        assert_eq!(got, expected, "{}: iteration order", C::NAME);
        table.check_order(&self.order, &self.issued);
        for &key in &self.issued {
            assert_eq!(table.get(key), self.live.get(&key), "{key:?}");
            assert_eq!(table.contains_key(key), self.live.contains_key(&key));
        }
    }
}

/// Runs operations until every slot is retired, checking every issued key
/// after every operation. Returns every key issued, in order.
pub fn exhaust<C: StaleTable>(reuse: Reuse, limit: Limit, seed: u64) -> Vec<C::Key> {
    let slot_limit = limit.slots::<C::Key>();
    let mut table: C = limit.table();
    table.set_reuse(reuse);
    let mut run = Run::<C> {
        table,
        reference: Reference::new(reuse, slot_limit, C::Key::MAX_GENERATION),
        issued: Vec::new(),
        live: HashMap::new(),
        order: Vec::new(),
    };
    let mut rng = Lcg(seed);
    let mut serial = 0u64;
    let mut refusals = 0;

    loop {
        let r = rng.next();
        let len = run.order.len();
        let stirred = (41..=46).contains(&(r % 100)) && {
            let live = &run.live;
            run.table.stir(r / 100, &mut run.order, &|k| live[&k])
        };
        match r % 100 {
            _ if stirred => {}
            0..=36 if len > 0 => run.remove_at((r / 100) as usize % len),
            37 if len > 0 => {
                run.table.clear();
                run.forget_all();
            }
            38 if len > 0 => {
                let take = (r / 100) as usize % 3;
                let expected: Vec<(C::Key, u64)> = iteration_order::<C>(&run.order)
                    .into_iter()
                    .map(|k| (k, run.live[&k]))
                    .collect();
                let taken: Vec<(C::Key, u64)> = run.table.drain().take(take).collect();
                assert_eq!(taken.as_slice(), &expected[..take.min(len)]);
                run.forget_all();
            }
            39 | 40 if len > 0 => {
                // Removals happen in iteration order, each freeing its slot.
                let drop_class = (r / 100) % 3;
                let mut visited = Vec::new();
                run.table.retain(|key, serial| {
                    visited.push(key);
                    *serial % 3 != drop_class
                });
                assert_eq!(visited, iteration_order::<C>(&run.order));
                for key in visited {
                    if run.live[&key] % 3 == drop_class {
                        run.live.remove(&key);
                        run.reference.remove(key.index());
                    }
                }
                let live = &run.live;
                run.order.retain(|k| live.contains_key(k));
            }
            _ => {
                let predicted = run.reference.insert();
                match run.table.try_insert(serial) {
                    Ok(key) => {
                        let (index, generation) = predicted.expect("the reference was full");
                        assert_eq!((key.index(), key.generation()), (index, generation));
                        assert!(!run.issued.contains(&key), "{key:?} issued twice");
                        run.issued.push(key);
                        run.live.insert(key, serial);
                        run.order.push(key);
                        serial += 1;
                    }
                    Err(err) => {
                        assert_eq!(predicted, None, "the table refused a value it had room for");
                        match limit {
                            Limit::Fixed(n) => {
                                assert!(err.is_fixed_capacity());
                                assert_eq!(err.limit(), Some(n));
                            }
                            Limit::IndexSpace => {
                                assert!(err.is_index_space());
                                assert_eq!(err.limit(), Some(slot_limit));
                            }
                        }
                        assert_eq!(run.table.len() + run.table.retired_count(), slot_limit);
                        assert_eq!(run.table.len(), run.table.capacity());
                        refusals += 1;
                        if run.order.is_empty() {
                            run.check();
                            break;
                        }
                        run.remove_at((r / 100) as usize % run.order.len());
                    }
                }
            }
        }
        run.check();
    }

    // Every slot is retired, and each held exactly MAX_GENERATION values,
    // with generations 1, 2, ..., MAX_GENERATION.
    let table = &mut run.table;
    assert!(refusals >= 1);
    assert!(table.is_empty());
    assert_eq!(table.retired_count(), slot_limit);
    assert_eq!(table.capacity(), 0);
    assert!(table.try_insert(0).is_err());
    table.check_invariants();
    let max = C::Key::MAX_GENERATION;
    assert_eq!(run.issued.len(), slot_limit * max as usize);
    let mut per_slot = vec![Vec::new(); slot_limit];
    for key in &run.issued {
        per_slot[key.index()].push(key.generation());
    }
    for generations in per_slot {
        assert_eq!(generations, (1..=max).collect::<Vec<_>>());
    }
    run.issued
}

fn exhaust_fixed<C: StaleTable>(capacities: &[usize]) {
    for &reuse in POLICIES {
        for &capacity in capacities {
            for seed in 0..SEEDS {
                exhaust::<C>(reuse, Limit::Fixed(capacity), seed);
            }
        }
    }
}

/// The table type `$ty` instantiated with value `u64` and key `K`.
pub trait Family {
    type With<K: Key + std::fmt::Debug>: StaleTable<Key = K>;
}

pub fn one_generation_bit_fixed<F: Family>() {
    assert_eq!(G1::MAX_GENERATION, 1);
    exhaust_fixed::<F::With<G1>>(if cfg!(miri) { &[1, 5] } else { &[1, 2, 5, 16] });
}

pub fn two_generation_bits_fixed<F: Family>() {
    assert_eq!(G2::MAX_GENERATION, 3);
    exhaust_fixed::<F::With<G2>>(if cfg!(miri) { &[3] } else { &[1, 3, 8] });
}

pub fn three_generation_bits_fixed<F: Family>() {
    assert_eq!(G3::MAX_GENERATION, 7);
    exhaust_fixed::<F::With<G3>>(if cfg!(miri) { &[2] } else { &[1, 4, 9] });
}

/// A `Tiny` table exhausts the key's whole space: every valid key of the
/// type is issued exactly once, and no other.
fn exhaust_tiny<F: Family, const I: u32, const G: u32>() {
    let all_valid: Vec<Tiny<I, G>> = (0..1u64 << (I + G))
        .filter_map(Tiny::<I, G>::from_bits)
        .collect();
    assert_eq!(
        all_valid.len(),
        (1 << I) * Tiny::<I, G>::MAX_GENERATION as usize
    );
    for &reuse in POLICIES {
        for seed in 0..SEEDS {
            let mut issued = exhaust::<F::With<Tiny<I, G>>>(reuse, Limit::IndexSpace, seed);
            issued.sort();
            assert_eq!(issued, all_valid, "{reuse:?}");
        }
    }
}

pub fn tiny_keys_exhaust_their_space<F: Family>() {
    exhaust_tiny::<F, 1, 1>();
    exhaust_tiny::<F, 2, 2>();
    if !cfg!(miri) {
        exhaust_tiny::<F, 3, 1>();
        exhaust_tiny::<F, 3, 2>();
        exhaust_tiny::<F, 2, 3>();
        exhaust_tiny::<F, 4, 3>();
    }
}

/// Every bit pattern in `bit_patterns` is tried against a table after every
/// operation (under Miri, after every other one and at the end): a pattern
/// resolves only if it is the bits of a live key, and then to that key's
/// value (and, through `check_order`, its position).
fn forged_bits_never_resolve_wrongly<C: StaleTable>(limit: Limit, bit_patterns: &[u64], seed: u64) {
    let slot_limit = limit.slots::<C::Key>();
    let mut table: C = limit.table();
    let mut rng = Lcg(seed);
    let mut live: HashMap<u64, u64> = HashMap::new();
    let mut order: Vec<C::Key> = Vec::new();
    let total = slot_limit * C::Key::MAX_GENERATION as usize;
    let pattern_keys: Vec<C::Key> = bit_patterns
        .iter()
        .filter_map(|&bits| C::Key::from_bits(bits))
        .collect();
    let check_patterns = |table: &C, live: &HashMap<u64, u64>| {
        for &bits in bit_patterns {
            let Some(key) = C::Key::from_bits(bits) else {
                assert!(!live.contains_key(&bits));
                continue;
            };
            assert_eq!(table.get(key), live.get(&bits), "{key:?}");
            assert_eq!(table.contains_key(key), live.contains_key(&bits));
        }
    };
    let mut serial = 0u64;
    let mut step = 0;
    while serial < total as u64 || !live.is_empty() {
        let r = rng.next();
        if live.is_empty() || (r % 2 == 0 && serial < total as u64) {
            if let Ok(key) = table.try_insert(serial) {
                live.insert(key.to_bits(), serial);
                order.push(key);
                serial += 1;
            }
        } else if r % 7 == 1 && table.stir(r / 7, &mut order, &|k| live[&k.to_bits()]) {
        } else {
            let mut bits: Vec<u64> = live.keys().copied().collect();
            bits.sort_unstable();
            let victim = bits[(r / 2) as usize % bits.len()];
            let key = C::Key::from_bits(victim).unwrap();
            assert_eq!(table.remove(key), live.remove(&victim));
            let at = order.iter().position(|&k| k == key).unwrap();
            order.swap_remove(at);
        }
        table.check_invariants();
        table.check_order(&order, &pattern_keys);
        // Under Miri, the patterns after every other step (and after the
        // last, below): they are most of the time there (nine tenths of
        // `tiny_keys_every_pattern`'s over a packed table).
        if !cfg!(miri) || step % 2 == 0 {
            check_patterns(&table, &live);
        }
        step += 1;
    }
    if cfg!(miri) {
        check_patterns(&table, &live);
    }
    assert_eq!(table.retired_count(), slot_limit);
}

pub fn one_generation_bit_every_pattern<F: Family>() {
    // G1: index in bits 0..31, the generation in bit 31. Patterns: every
    // index below 12 with every value of bit 31 and of a few bits above the
    // width, plus indices just past the table.
    let mut patterns = Vec::new();
    for index in 0..if cfg!(miri) { 6 } else { 12u64 } {
        for high in [0u64, 1, 2, 3, 1 << 31, u64::MAX >> 32] {
            patterns.push(index | high << 31);
        }
    }
    patterns.extend([u32::MAX.into(), 1 << 31 | 0x7fff_ffff, 1 << 32, u64::MAX]);
    for seed in 0..SEEDS {
        forged_bits_never_resolve_wrongly::<F::With<G1>>(Limit::Fixed(8), &patterns, seed);
    }
}

pub fn tiny_keys_every_pattern<F: Family>() {
    fn run<F: Family, const I: u32, const G: u32>() {
        // Every pattern of the key's width and of two bits more (under
        // Miri, one: a pattern past the width never reaches the table, and
        // each costs a lookup in the model).
        let extra = if cfg!(miri) { 1 } else { 2 };
        let patterns: Vec<u64> = (0..1u64 << (I + G + extra)).collect();
        for seed in 0..SEEDS {
            forged_bits_never_resolve_wrongly::<F::With<Tiny<I, G>>>(
                Limit::IndexSpace,
                &patterns,
                seed,
            );
        }
    }
    run::<F, 2, 2>();
    if !cfg!(miri) {
        run::<F, 3, 1>();
        run::<F, 2, 3>();
    }
}

/// With `g` generation bits, a LIFO slot that churns one value retires after
/// exactly `2^g - 1` occupants, and the next slot takes over; under
/// `Fifo { min_free: F }` churning cycles through `F + 1` slots, so a
/// slot's first retirement comes with insertion number
/// `1 + (2^g - 2)(F + 1)`. No key issued stays live.
pub fn churn_retires_on_schedule<F: Family>() {
    fn lifo<C: StaleTable>() {
        let max = C::Key::MAX_GENERATION as usize;
        let mut table = C::with_reuse(Reuse::Lifo);
        let mut issued = Vec::new();
        for round in 0..4 * max {
            let key = table.insert(round as u64);
            assert_eq!(
                (key.index(), key.generation() as usize),
                (round / max, 1 + round % max)
            );
            assert_eq!(table.remove(key), Some(round as u64));
            assert_eq!(table.retired_count(), (round + 1) / max);
            issued.push(key);
            assert!(issued.iter().all(|&k| table.get(k).is_none()));
        }
        table.check_invariants();
    }
    fn fifo<C: StaleTable>(min_free: u32) {
        let f = min_free as usize;
        let max = C::Key::MAX_GENERATION as usize;
        let mut table = C::with_reuse(Reuse::Fifo { min_free });
        let first_retirement = 1 + (max - 1) * (f + 1);
        let mut issued = Vec::new();
        for insertion in 1..=first_retirement + 3 * (f + 1) {
            let key = table.insert(0);
            issued.push(key);
            if insertion <= first_retirement {
                // Round robin over slots 0..=F.
                let round = insertion - 1;
                assert_eq!(key.index(), round % (f + 1));
                assert_eq!(key.generation() as usize, 1 + round / (f + 1));
            }
            assert_eq!(table.remove(key), Some(0));
            if insertion <= first_retirement {
                assert_eq!(
                    table.retired_count(),
                    usize::from(insertion == first_retirement),
                    "insertion {insertion}"
                );
            }
            table.check_invariants();
            assert!(issued.iter().all(|&k| table.get(k).is_none()));
        }
        assert!(table.retired_count() >= 1);
    }
    lifo::<F::With<G1>>();
    lifo::<F::With<G2>>();
    lifo::<F::With<G3>>();
    let min_frees: &[u32] = if cfg!(miri) {
        &[0, 4]
    } else {
        &[0, 1, 3, 4, 7]
    };
    for &min_free in min_frees {
        fifo::<F::With<G1>>(min_free);
        fifo::<F::With<G2>>(min_free);
        fifo::<F::With<G3>>(min_free);
    }
}

/// A key with a tiny index space and a wide generation: the table fills
/// its index space, refuses more, and under FIFO dips into its reserve of
/// free slots rather than failing.
pub fn index_space_fills_and_fifo_dips_into_reserve<F: Family>() {
    for &reuse in POLICIES {
        let mut table = F::With::<FourSlots>::with_reuse(reuse);
        let keys: Vec<FourSlots> = (0..4).map(|n| table.insert(n)).collect();
        let err = table.try_insert(4).unwrap_err();
        assert!(err.is_index_space() && !err.is_fixed_capacity());
        assert_eq!(err.limit(), Some(4));
        assert!(table.try_reserve(1).is_err());
        assert_eq!(table.capacity(), 4);

        assert_eq!(table.remove(keys[1]), Some(1));
        assert!(table.try_reserve(1).is_ok());
        assert!(table.try_reserve(2).is_err());
        // Only one slot is free, fewer than FIFO's reserve, but the table
        // cannot grow, so it reuses it.
        let again = table.insert(10);
        assert_eq!((again.index(), again.generation()), (1, 2));
        assert_eq!(table.get(keys[1]), None);
        assert_eq!(table.get(again), Some(&10));
        table.check_invariants();
    }
}

/// `clear` keeps every slot's generation: keys issued before stay stale, a
/// slot at its last generation retires, the free list is rebuilt and the
/// iteration order starts over.
pub fn clear_keeps_keys_stale_and_retires_exhausted_slots<F: Family>() {
    for &reuse in POLICIES {
        let mut table = F::With::<G2>::with_reuse(reuse);
        let mut issued = Vec::new();
        for round in 0..if cfg!(miri) { 6 } else { 20u64 } {
            let mut order = Vec::new();
            for n in 0..3 {
                let key = table.insert(round * 10 + n);
                issued.push(key);
                order.push(key);
            }
            let values: HashMap<G2, u64> = order
                .iter()
                .map(|&k| (k, table.get(k).copied().unwrap()))
                .collect();
            table.stir(round, &mut order, &|k| values[&k]);
            table.clear();
            table.check_invariants();
            assert_eq!(table.keys().next(), None);
            table.check_order(&[], &issued);
            assert!(issued.iter().all(|&k| table.get(k).is_none()));
            let retired = issued.iter().filter(|k| k.generation() == 3).count();
            assert_eq!(table.retired_count(), retired);
        }
        let mut sorted = issued.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), issued.len(), "no key issued twice");
    }
}

/// A stale key, past the retirement of its slot, resolves to nothing (the
/// `Index` panic is the caller's `#[should_panic]`).
pub fn index_with_stale_key_panics<F: Family>()
where
    F::With<G1>: std::ops::Index<G1, Output = u64>,
{
    let mut table = F::With::<G1>::with_reuse(Reuse::Lifo);
    let key = table.insert(1);
    table.remove(key); // slot 0 retires
    assert_eq!(table.retired_count(), 1);
    table.insert(2);
    assert_eq!(table.get(key), None);
    let _ = table[key];
}

/// A stale key of a vacant slot (not retired) resolves to nothing, and
/// `Index` with it panics (the caller's `#[should_panic]`).
pub fn index_with_key_of_vacant_slot_panics<F: Family>()
where
    F::With<G2>: std::ops::Index<G2, Output = u64>,
{
    let mut table = F::With::<G2>::with_reuse(Reuse::Lifo);
    let key = table.insert(1);
    table.remove(key);
    assert_eq!(table.retired_count(), 0);
    assert_eq!(table.get(key), None);
    let _ = table[key];
}

pub fn insert_into_full_fixed_table_panics<F: Family>() {
    let mut table = F::With::<G1>::with_fixed_capacity(1);
    let key = table.insert(1);
    table.remove(key); // slot 0 retires
    table.insert(2);
}

pub fn fixed_capacity_beyond_index_space_panics<F: Family>() {
    let _ = F::With::<FourSlots>::with_fixed_capacity(5);
}

/// An emptied LIFO table refills its slots in index order (whatever order
/// they were freed in); stale keys stay stale.
pub fn emptied_lifo_table_refills_in_index_order<F: Family>() {
    let mut table = F::With::<handlekit::Id>::with_reuse(Reuse::Lifo);
    let mut keys: Vec<_> = (0..100).map(|i| table.insert(i)).collect();
    // Remove in a scrambled order: the free list is now that order reversed.
    keys.sort_by_key(|key| (key.index() * 37) % 101);
    for key in &keys {
        table.remove(*key);
    }
    let refilled: Vec<usize> = (0..100).map(|i| table.insert(i).index()).collect();
    assert_eq!(refilled, (0..100).collect::<Vec<_>>());
    assert!(keys.iter().all(|key| table.get(*key).is_none()));
}

/// A LIFO table that is not empty hands out the most recently freed slot
/// first.
pub fn partly_emptied_lifo_table_keeps_stack_order<F: Family>() {
    let mut table = F::With::<handlekit::Id>::with_reuse(Reuse::Lifo);
    let keys: Vec<_> = (0..4).map(|i| table.insert(i)).collect();
    table.remove(keys[1]);
    table.remove(keys[3]);
    assert_eq!(table.insert(9).index(), 3);
    assert_eq!(table.insert(9).index(), 1);
}

/// Writes one `#[test]` per function of this suite for the family `$family`
/// (a type implementing [`Family`]).
#[macro_export]
macro_rules! stale_suite_tests {
    ($family:ty) => {
        use $crate::common::stale_suite as suite;
        $crate::suite_tests! {
            suite::<$family>;
            one_generation_bit_fixed,
            two_generation_bits_fixed,
            three_generation_bits_fixed,
            tiny_keys_exhaust_their_space,
            one_generation_bit_every_pattern,
            tiny_keys_every_pattern,
            churn_retires_on_schedule,
            index_space_fills_and_fifo_dips_into_reserve,
            clear_keeps_keys_stale_and_retires_exhausted_slots,
            #[should_panic(expected = "no live value for key")]
            index_with_stale_key_panics,
            #[should_panic(expected = "no live value for key")]
            index_with_key_of_vacant_slot_panics,
            #[should_panic(expected = "fixed capacity")]
            insert_into_full_fixed_table_panics,
            #[should_panic(expected = "exceeds")]
            fixed_capacity_beyond_index_space_panics,
            emptied_lifo_table_refills_in_index_order,
            partly_emptied_lifo_table_keeps_stack_order,
        }
    };
}

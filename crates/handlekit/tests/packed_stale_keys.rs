//! Exhaustive stale-key tests at tiny widths for `PackedTable`.
//!
//! Deterministic runs (a fixed-seed LCG picks the operations) drive packed
//! tables of keys with 1, 2 and 3 generation bits until every slot has
//! retired and the table refuses new values. Besides insertions and
//! removals the runs `clear`, `drain`, `retain`, sort and swap, since all of
//! them move values or free slots. Every key ever issued is kept, and after
//! every operation each one must resolve iff it is live, to its own serial
//! number, at the position `key_slice` gives it. A reference free list
//! predicts every key the table issues, so the reuse policies (and the free
//! list rebuilt by `clear`) are checked exactly, and the retired-slot count
//! is checked against it. A model of the dense order predicts `key_slice`.
//!
//! `define_key!` keys come with a huge index space, so those runs use
//! fixed-capacity tables. A hand-written [`Tiny`] key has a tiny index as
//! well, so a growable table exhausts the key's whole space: then every
//! valid key of the type has been issued exactly once, and every possible
//! bit pattern can be tried against the table.

use std::collections::HashMap;
use std::num::NonZeroU16;

use handlekit::{define_key, Key, PackedTable, Reuse};

mod common;
use common::reference::Reference;
use common::Lcg;

define_key! {
    /// 1 generation bit: every slot holds one value, then retires.
    pub struct G1(u32; index_bits = 31);
    /// 2 generation bits: 3 occupants per slot.
    pub struct G2(u32; index_bits = 30);
    /// 3 generation bits: 7 occupants per slot.
    pub struct G3(u32; index_bits = 29);
}

/// A hand-written key with `I` index bits and `G` generation bits, packed in
/// the low `I + G` bits of a `u16`. It keeps the `Key` contract.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct Tiny<const I: u32, const G: u32>(NonZeroU16);

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

/// What the run ends on when the table is full.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Limit {
    /// A fixed capacity of this many slots.
    Fixed(usize),
    /// The key's index space.
    IndexSpace,
}

/// A run's state: the table, the reference and everything issued.
struct Run<K: Key> {
    table: PackedTable<u64, K>,
    reference: Reference,
    issued: Vec<K>,
    /// Key → serial of its value, for live keys only.
    live: HashMap<K, u64>,
    /// The dense order the table must have.
    order: Vec<K>,
}

impl<K: Key> Run<K> {
    fn remove_at(&mut self, position: usize) {
        let key = self.order.swap_remove(position);
        let serial = self.live.remove(&key).unwrap();
        assert_eq!(self.table.position(key), Some(position));
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
        assert_eq!(table.key_slice(), self.order.as_slice(), "dense order");
        for (position, key) in self.order.iter().enumerate() {
            assert_eq!(table.as_slice()[position], self.live[key]);
        }
        for &key in &self.issued {
            assert_eq!(table.get(key), self.live.get(&key), "{key:?}");
            assert_eq!(table.contains_key(key), self.live.contains_key(&key));
            assert_eq!(
                table.position(key),
                self.order.iter().position(|&k| k == key),
                "position({key:?})"
            );
        }
    }
}

/// Runs operations until every slot is retired, checking every issued key
/// after every operation. Returns every key issued, in order.
fn exhaust<K: Key>(reuse: Reuse, limit: Limit, seed: u64) -> Vec<K> {
    let slot_limit = match limit {
        Limit::Fixed(n) => n,
        Limit::IndexSpace => 1usize << K::INDEX_BITS,
    };
    let mut table: PackedTable<u64, K> = match limit {
        Limit::Fixed(n) => PackedTable::with_fixed_capacity(n),
        Limit::IndexSpace => PackedTable::default(),
    };
    table.set_reuse(reuse);
    let mut run = Run {
        table,
        reference: Reference::new(reuse, slot_limit, K::MAX_GENERATION),
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
        match r % 100 {
            0..=36 if len > 0 => run.remove_at((r / 100) as usize % len),
            37 if len > 0 => {
                run.table.clear();
                run.forget_all();
            }
            38 if len > 0 => {
                let take = (r / 100) as usize % 3;
                let expected: Vec<(K, u64)> = run.order.iter().map(|k| (*k, run.live[k])).collect();
                let taken: Vec<(K, u64)> = run.table.drain().take(take).collect();
                assert_eq!(taken.as_slice(), &expected[..take.min(len)]);
                run.forget_all();
            }
            39 | 40 if len > 0 => {
                // Removals happen in dense order, each freeing its slot.
                let drop_class = (r / 100) % 3;
                let mut visited = Vec::new();
                run.table.retain(|key, serial| {
                    visited.push(key);
                    *serial % 3 != drop_class
                });
                assert_eq!(visited, run.order);
                for key in visited {
                    if run.live[&key] % 3 == drop_class {
                        run.live.remove(&key);
                        run.reference.remove(key.index());
                    }
                }
                let live = &run.live;
                run.order.retain(|k| live.contains_key(k));
            }
            41 => {
                run.table.sort_by(|a, b| b.cmp(a));
                let live = &run.live;
                run.order.sort_by(|a, b| live[b].cmp(&live[a]));
            }
            42 => {
                run.table.sort_by_key(|serial| serial % 5);
                let live = &run.live;
                run.order.sort_by_key(|k| live[k] % 5);
            }
            43 => {
                run.table.sort_unstable_by(|a, b| a.cmp(b));
                let live = &run.live;
                // Serials are distinct: the unstable order is determined.
                run.order.sort_by_key(|k| live[k]);
            }
            44..=46 if len > 0 => {
                let (a, b) = ((r / 100) as usize % len, (r / 10_000) as usize % len);
                run.table.swap_positions(a, b);
                run.order.swap(a, b);
            }
            _ => {
                let predicted = run.reference.insert();
                match run.table.try_insert(serial) {
                    Ok(key) => {
                        let (index, generation) = predicted.expect("the reference was full");
                        assert_eq!((key.index(), key.generation()), (index, generation));
                        assert!(!run.issued.contains(&key), "{key:?} issued twice");
                        assert_eq!(run.table.key_slice().last(), Some(&key));
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
    assert!(table.try_insert(0).is_err());
    table.check_invariants();
    let max = K::MAX_GENERATION as usize;
    assert_eq!(run.issued.len(), slot_limit * max);
    let mut per_slot = vec![Vec::new(); slot_limit];
    for key in &run.issued {
        per_slot[key.index()].push(key.generation());
    }
    for generations in per_slot {
        assert_eq!(generations, (1..=K::MAX_GENERATION).collect::<Vec<_>>());
    }
    run.issued
}

/// The policies each run is repeated for (fewer under Miri, still both).
const POLICIES: &[Reuse] = if cfg!(miri) {
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
const SEEDS: u64 = if cfg!(miri) { 1 } else { 4 };

fn exhaust_fixed<K: Key>(capacities: &[usize]) {
    for &reuse in POLICIES {
        for &capacity in capacities {
            for seed in 0..SEEDS {
                exhaust::<K>(reuse, Limit::Fixed(capacity), seed);
            }
        }
    }
}

#[test]
fn one_generation_bit_fixed() {
    assert_eq!(G1::MAX_GENERATION, 1);
    exhaust_fixed::<G1>(if cfg!(miri) { &[1, 5] } else { &[1, 2, 5, 16] });
}

#[test]
fn two_generation_bits_fixed() {
    assert_eq!(G2::MAX_GENERATION, 3);
    exhaust_fixed::<G2>(if cfg!(miri) { &[3] } else { &[1, 3, 8] });
}

#[test]
fn three_generation_bits_fixed() {
    assert_eq!(G3::MAX_GENERATION, 7);
    exhaust_fixed::<G3>(if cfg!(miri) { &[2] } else { &[1, 4, 9] });
}

/// A `Tiny` table exhausts the key's whole space: every valid key of the
/// type is issued exactly once, and no other.
fn exhaust_tiny<const I: u32, const G: u32>() {
    let all_valid: Vec<Tiny<I, G>> = (0..1u64 << (I + G))
        .filter_map(Tiny::<I, G>::from_bits)
        .collect();
    assert_eq!(
        all_valid.len(),
        (1 << I) * Tiny::<I, G>::MAX_GENERATION as usize
    );
    for &reuse in POLICIES {
        for seed in 0..SEEDS {
            let mut issued = exhaust::<Tiny<I, G>>(reuse, Limit::IndexSpace, seed);
            issued.sort();
            assert_eq!(issued, all_valid, "{reuse:?}");
        }
    }
}

#[test]
fn tiny_keys_exhaust_their_space() {
    exhaust_tiny::<1, 1>();
    exhaust_tiny::<2, 2>();
    if !cfg!(miri) {
        exhaust_tiny::<3, 1>();
        exhaust_tiny::<3, 2>();
        exhaust_tiny::<2, 3>();
        exhaust_tiny::<4, 3>();
    }
}

/// Every bit pattern (of the key's width and two bits more) is tried
/// against a table after every operation: a pattern resolves only if it is
/// the bits of a live key, and then to that key's value and position.
#[test]
fn tiny_keys_every_pattern() {
    fn run<const I: u32, const G: u32>(seed: u64) {
        type T<const I: u32, const G: u32> = Tiny<I, G>;
        let patterns: Vec<u64> = (0..1u64 << (I + G + 2)).collect();
        let mut table: PackedTable<u64, T<I, G>> = PackedTable::default();
        let mut rng = Lcg(seed);
        let mut live: HashMap<u64, u64> = HashMap::new();
        let total = (1u64 << I) * u64::from(T::<I, G>::MAX_GENERATION);
        let mut serial = 0u64;
        while serial < total || !live.is_empty() {
            let r = rng.next();
            if live.is_empty() || (r % 2 == 0 && serial < total) {
                if let Ok(key) = table.try_insert(serial) {
                    live.insert(key.to_bits(), serial);
                    serial += 1;
                }
            } else if r % 7 == 1 {
                table.sort_by(|a, b| b.cmp(a));
            } else {
                let victim = table.key_slice()[(r / 2) as usize % table.len()];
                assert_eq!(table.remove(victim), live.remove(&victim.to_bits()));
            }
            table.check_invariants();
            for &bits in &patterns {
                let Some(key) = T::<I, G>::from_bits(bits) else {
                    assert!(!live.contains_key(&bits));
                    continue;
                };
                assert_eq!(table.get(key), live.get(&bits), "{key:?}");
                assert_eq!(table.contains_key(key), live.contains_key(&bits));
                match table.position(key) {
                    Some(position) => assert_eq!(table.key_slice()[position], key),
                    None => assert!(!live.contains_key(&bits)),
                }
            }
        }
        assert_eq!(table.retired_count(), 1 << I);
    }
    for seed in 0..SEEDS {
        run::<2, 2>(seed);
        if !cfg!(miri) {
            run::<3, 1>(seed);
            run::<2, 3>(seed);
        }
    }
}

/// Under `Fifo { min_free: F }`, churning one value through a growable
/// packed table cycles through `F + 1` slots, so a slot's first retirement
/// comes with insertion number `1 + (2^g - 2)(F + 1)`; under LIFO, after
/// `2^g - 1`.
#[test]
fn churn_retires_on_schedule() {
    fn run<K: Key>(reuse: Reuse) {
        let slots = match reuse {
            Reuse::Lifo => 1,
            Reuse::Fifo { min_free } => min_free as usize + 1,
        };
        let max = K::MAX_GENERATION as usize;
        let mut table: PackedTable<u64, K> = PackedTable::with_reuse(reuse);
        let first_retirement = 1 + (max - 1) * slots;
        let mut issued = Vec::new();
        for insertion in 1..=first_retirement {
            let key = table.insert(0);
            let round = insertion - 1;
            assert_eq!(key.index(), round % slots);
            assert_eq!(key.generation() as usize, 1 + round / slots);
            issued.push(key);
            assert_eq!(table.remove(key), Some(0));
            assert_eq!(
                table.retired_count(),
                usize::from(insertion == first_retirement),
                "insertion {insertion}"
            );
            table.check_invariants();
            assert!(issued.iter().all(|&k| table.get(k).is_none()));
        }
    }
    let min_frees: &[u32] = if cfg!(miri) {
        &[0, 4]
    } else {
        &[0, 1, 3, 4, 7]
    };
    for &min_free in min_frees {
        run::<G1>(Reuse::Fifo { min_free });
        run::<G2>(Reuse::Fifo { min_free });
        run::<G3>(Reuse::Fifo { min_free });
    }
    run::<G1>(Reuse::Lifo);
    run::<G2>(Reuse::Lifo);
    run::<G3>(Reuse::Lifo);
}

/// `clear` keeps every slot's generation: keys issued before stay stale, a
/// slot at its last generation retires, and the values' dense order starts
/// over.
#[test]
fn clear_keeps_keys_stale_and_retires_exhausted_slots() {
    for &reuse in POLICIES {
        let mut table: PackedTable<u64, G2> = PackedTable::with_reuse(reuse);
        let mut issued = Vec::new();
        for round in 0..if cfg!(miri) { 6 } else { 20u64 } {
            for n in 0..3 {
                issued.push(table.insert(round * 10 + n));
            }
            table.sort_by(|a, b| b.cmp(a));
            table.clear();
            table.check_invariants();
            assert!(table.key_slice().is_empty());
            assert!(issued.iter().all(|&k| table.get(k).is_none()));
            assert!(issued.iter().all(|&k| table.position(k).is_none()));
            let retired = issued.iter().filter(|k| k.generation() == 3).count();
            assert_eq!(table.retired_count(), retired);
        }
        let mut sorted = issued.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), issued.len(), "no key issued twice");
    }
}

/// A stale key past the retirement of its slot still resolves to nothing,
/// and `Index` with it panics with a message naming the key.
#[test]
#[should_panic(expected = "no live value for key")]
fn index_with_stale_key_panics() {
    let mut table: PackedTable<u8, G1> = PackedTable::default();
    let key = table.insert(1);
    table.remove(key); // slot 0 retires
    assert_eq!(table.retired_count(), 1);
    table.insert(2);
    let _ = table[key];
}

//! Differential fuzzing of `Pool` against a `HashMap<Key, Value>` model.
//!
//! The first input byte picks the key type (`PoolKey`, `Id32`, or `Narrow`,
//! with 4 generation bits, so slots retire after 15 occupants); the rest is a
//! pool setup (a block size, or a fixed capacity) and a sequence of
//! operations. After every operation, every key ever issued must resolve as
//! the model says; every live value must still be at the address `get_ptr`
//! gave when it was inserted, and read right through it; the iterators must
//! yield the model in key-index order; and `Pool::check_invariants` must
//! pass. Any divergence panics.
//!
//! Values are boxed so that AddressSanitizer and LeakSanitizer see double
//! drops, use after free and leaks.

#![no_main]

use std::collections::{HashMap, HashSet};
use std::ptr::NonNull;

use arbitrary::{Arbitrary, Unstructured};
use handlekit::{Id32, Key, Pool, PoolKey};
use libfuzzer_sys::fuzz_target;

handlekit::define_key! {
    /// 28 index bits, 4 generation bits: a slot retires after 15 occupants.
    struct Narrow(u32; index_bits = 28);
}

type Value = Box<u32>;

#[derive(Debug)]
struct Input {
    key: u8,
    setup: Setup,
    ops: Vec<Op>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            key: u8::arbitrary(u)? % 3,
            setup: Setup::arbitrary(u)?,
            ops: Vec::arbitrary(u)?,
        })
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            key: u8::arbitrary(&mut u)? % 3,
            setup: Setup::arbitrary(&mut u)?,
            ops: Vec::arbitrary_take_rest(u)?,
        })
    }
}

#[derive(Arbitrary, Clone, Copy, Debug)]
enum Setup {
    Default,
    /// `with_block_size(1 + n % 64)`.
    BlockSize(u8),
    /// `with_fixed_capacity(n)`.
    Fixed(u8),
}

/// How an operation names a key.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum KeyRef {
    /// One of the keys issued so far (modulo their number).
    Issued(u16),
    /// Any bits, through `Key::from_bits`.
    Forged(u64),
    /// A small index with any generation, through `Key::from_parts`.
    Parts(u8, u32),
}

#[derive(Arbitrary, Clone, Debug)]
enum Op {
    Insert(u32),
    InsertWithKey,
    /// Insert this many values.
    Extend(u8),
    Remove(KeyRef),
    Get(KeyRef),
    GetMut(KeyRef, u32),
    /// Write through the pointer recorded at insertion.
    WriteThroughPtr(u16, u32),
    Clear,
    /// `retain(|_, v| **v % (modulus + 1) != rem)`.
    Retain {
        modulus: u8,
        rem: u8,
    },
    /// `drain()`, take `take` items, drop the rest.
    Drain {
        take: u8,
    },
    /// Clone; optionally continue with the clone.
    Clone {
        adopt: bool,
    },
    /// Remove every live value except one in `keep`, in a scrambled order.
    Thin {
        keep: u8,
        seed: u16,
    },
}

fuzz_target!(|input: Input| {
    match input.key {
        0 => run::<PoolKey>(&input),
        1 => run::<Id32>(&input),
        _ => run::<Narrow>(&input),
    }
});

struct Model<K: Key> {
    pool: Pool<Value, K>,
    live: HashMap<K, u32>,
    ptrs: HashMap<K, NonNull<Value>>,
    issued: Vec<K>,
    issued_set: HashSet<K>,
    fixed: Option<usize>,
}

impl<K: Key> Model<K> {
    fn resolve(&self, key: KeyRef) -> Option<K> {
        match key {
            KeyRef::Issued(n) => {
                (!self.issued.is_empty()).then(|| self.issued[usize::from(n) % self.issued.len()])
            }
            KeyRef::Forged(bits) => K::from_bits(bits),
            KeyRef::Parts(index, generation) => K::from_parts(usize::from(index), generation),
        }
    }

    fn full(&self) -> bool {
        self.fixed.is_some() && self.pool.len() == self.pool.capacity()
    }

    fn record(&mut self, key: K, value: u32) {
        assert!(self.issued_set.insert(key), "{key:?} issued twice");
        assert!((1..=K::MAX_GENERATION).contains(&key.generation()));
        self.issued.push(key);
        self.live.insert(key, value);
        let ptr = self.pool.get_ptr(key).expect("a new key is live");
        self.ptrs.insert(key, ptr);
    }

    fn insert(&mut self, value: u32) {
        if self.full() {
            let err = self.pool.try_insert(Box::new(value)).unwrap_err();
            assert!(err.is_fixed_capacity());
            assert_eq!(err.limit(), self.fixed);
            return;
        }
        let key = self.pool.insert(Box::new(value));
        self.record(key, value);
    }

    fn forget(&mut self, key: K) {
        self.live.remove(&key);
        self.ptrs.remove(&key);
    }

    fn check(&self) {
        self.pool.check_invariants();
        assert_eq!(self.pool.len(), self.live.len());
        for &key in &self.issued {
            let expected = self.live.get(&key);
            assert_eq!(self.pool.get(key).map(|v| **v), expected.copied());
            assert_eq!(self.pool.contains_key(key), expected.is_some());
            match expected {
                Some(&value) => {
                    let ptr = self.ptrs[&key];
                    assert_eq!(self.pool.get_ptr(key), Some(ptr), "{key:?} moved");
                    // SAFETY: the value is live and no reference to it is.
                    assert_eq!(unsafe { **ptr.as_ptr() }, value);
                }
                None => assert_eq!(self.pool.get_ptr(key), None),
            }
        }
        let mut expected: Vec<(K, u32)> = self.live.iter().map(|(&k, &v)| (k, v)).collect();
        expected.sort_by_key(|&(k, _)| k.index());
        let got: Vec<(K, u32)> = self.pool.iter().map(|(k, v)| (k, **v)).collect();
        assert_eq!(got, expected);
        let folded = self.pool.values().fold(0usize, |n, _| n + 1);
        assert_eq!(folded, expected.len());
        let retired = self
            .issued
            .iter()
            .filter(|k| k.generation() == K::MAX_GENERATION && !self.live.contains_key(k))
            .count();
        assert_eq!(self.pool.retired_count(), retired);
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Insert(value) => self.insert(value),
            Op::InsertWithKey => {
                if self.full() {
                    return self.insert(0);
                }
                let mut seen = None;
                let key = self.pool.insert_with_key(|key| {
                    seen = Some(key);
                    Box::new(key.index() as u32)
                });
                assert_eq!(seen, Some(key));
                self.record(key, key.index() as u32);
            }
            Op::Extend(n) => {
                for i in 0..u32::from(n) {
                    self.insert(i);
                }
            }
            Op::Remove(key) => {
                let Some(key) = self.resolve(key) else { return };
                let expected = self.live.get(&key).copied();
                assert_eq!(self.pool.remove(key).map(|v| *v), expected);
                self.forget(key);
            }
            Op::Get(key) => {
                let Some(key) = self.resolve(key) else { return };
                assert_eq!(
                    self.pool.get(key).map(|v| **v),
                    self.live.get(&key).copied()
                );
            }
            Op::GetMut(key, value) => {
                let Some(key) = self.resolve(key) else { return };
                match self.pool.get_mut(key) {
                    Some(slot) => {
                        assert!(self.live.contains_key(&key));
                        **slot = value;
                        self.live.insert(key, value);
                    }
                    None => assert!(!self.live.contains_key(&key)),
                }
            }
            Op::WriteThroughPtr(n, value) => {
                let mut keys: Vec<K> = self.live.keys().copied().collect();
                if keys.is_empty() {
                    return;
                }
                keys.sort();
                let key = keys[usize::from(n) % keys.len()];
                // SAFETY: the value is live (checked after the last step),
                // and no reference into the pool is.
                unsafe { **self.ptrs[&key].as_ptr() = value };
                self.live.insert(key, value);
            }
            Op::Clear => {
                self.pool.clear();
                self.live.clear();
                self.ptrs.clear();
            }
            Op::Retain { modulus, rem } => {
                let modulus = u32::from(modulus) + 1;
                let rem = u32::from(rem);
                let mut visited = 0;
                self.pool.retain(|key, value| {
                    visited += 1;
                    assert_eq!(Some(**value), self.live.get(&key).copied());
                    **value % modulus != rem
                });
                assert_eq!(visited, self.live.len());
                let gone: Vec<K> = self
                    .live
                    .iter()
                    .filter(|&(_, &v)| v % modulus == rem)
                    .map(|(&k, _)| k)
                    .collect();
                for key in gone {
                    self.forget(key);
                }
            }
            Op::Drain { take } => {
                let mut drain = self.pool.drain();
                for (key, value) in drain.by_ref().take(usize::from(take)) {
                    assert_eq!(self.live.get(&key), Some(&*value));
                }
                drop(drain);
                assert!(self.pool.is_empty());
                self.live.clear();
                self.ptrs.clear();
            }
            Op::Clone { adopt } => {
                let copy = self.pool.clone();
                copy.check_invariants();
                assert!(copy == self.pool);
                assert_eq!(copy.capacity(), self.pool.capacity());
                if !self.full() {
                    let mut a = copy.clone();
                    let mut b = self.pool.clone();
                    assert_eq!(a.insert(Box::new(0)), b.insert(Box::new(0)));
                }
                if adopt {
                    self.pool = copy;
                    self.ptrs = self
                        .live
                        .keys()
                        .map(|&k| (k, self.pool.get_ptr(k).unwrap()))
                        .collect();
                }
            }
            Op::Thin { keep, seed } => {
                let mut keys: Vec<K> = self.live.keys().copied().collect();
                keys.sort();
                let keep = usize::from(keep).max(1);
                let mut order: Vec<usize> = (0..keys.len()).collect();
                let mut state = u32::from(seed) | 1;
                for i in (1..order.len()).rev() {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    order.swap(i, state as usize % (i + 1));
                }
                for (n, &i) in order.iter().enumerate() {
                    if n % keep != 0 {
                        let key = keys[i];
                        assert!(self.pool.remove(key).is_some());
                        self.forget(key);
                    }
                }
            }
        }
    }
}

fn run<K: Key>(input: &Input) {
    let (pool, fixed) = match input.setup {
        Setup::Default => (Pool::default(), None),
        Setup::BlockSize(n) => (Pool::with_block_size(1 + usize::from(n) % 64), None),
        Setup::Fixed(n) => (
            Pool::with_fixed_capacity(usize::from(n)),
            Some(usize::from(n)),
        ),
    };
    let mut model = Model::<K> {
        pool,
        live: HashMap::new(),
        ptrs: HashMap::new(),
        issued: Vec::new(),
        issued_set: HashSet::new(),
        fixed,
    };
    model.check();
    for op in &input.ops {
        model.apply(op);
        model.check();
    }
}

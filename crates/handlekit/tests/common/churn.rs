//! The stable-address test of issue 5, shared by `pool_model` and
//! `hive_model`: record `get_ptr` for many elements, then insert and remove
//! heavily, growing by several blocks. Every live element's pointer must be
//! unchanged and must still read the right value.

use std::fmt::Debug;
use std::ptr::NonNull;

/// The value type: a number and a pattern derived from it.
pub type Value = (u64, [u8; 8]);

fn value(n: u64) -> Value {
    (n, [n as u8; 8])
}

/// What the churn needs of a container with stable addresses.
pub trait Churn {
    type Key: Copy + Debug;
    fn insert(&mut self, value: Value) -> Self::Key;
    fn remove(&mut self, key: Self::Key) -> Option<Value>;
    fn get_ptr(&self, key: Self::Key) -> Option<NonNull<Value>>;
    fn read(&self, key: Self::Key) -> Value;
    fn block_count(&self) -> usize;
    fn check_invariants(&self);
}

/// Fills `c` with `initial` values, then runs `rounds` random steps (5
/// inserts per 3 removals; with `shrink_phase`, removals only from a third
/// to half of the way, which empties blocks), and checks every live value's
/// address and contents, then writes through the pointers.
pub fn addresses_survive_heavy_churn<C: Churn>(
    mut c: C,
    initial: u64,
    rounds: usize,
    shrink_phase: bool,
) {
    let mut live: Vec<(C::Key, u64, NonNull<Value>)> = (0..initial)
        .map(|n| {
            let key = c.insert(value(n));
            (key, n, c.get_ptr(key).unwrap())
        })
        .collect();
    let blocks_before = c.block_count();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut rng = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut next = initial;
    for round in 0..rounds {
        let r = rng();
        let shrinking = shrink_phase && round > rounds / 3 && round < rounds / 2;
        if (!shrinking && r % 8 < 5) || live.is_empty() {
            let key = c.insert(value(next));
            live.push((key, next, c.get_ptr(key).unwrap()));
            next += 1;
        } else {
            let at = (r >> 8) as usize % live.len();
            let (key, n, _) = live.swap_remove(at);
            assert_eq!(c.remove(key), Some(value(n)));
        }
    }
    assert!(
        c.block_count() >= blocks_before + 4,
        "grew by several blocks ({blocks_before} -> {})",
        c.block_count()
    );
    for &(key, n, ptr) in &live {
        assert_eq!(c.get_ptr(key), Some(ptr), "value {n} moved");
        // SAFETY: the value is live, and no reference into the container is.
        assert_eq!(unsafe { *ptr.as_ptr() }, value(n));
    }
    for &(_, n, ptr) in &live {
        // SAFETY: as above; the container is not borrowed during the writes.
        unsafe { (*ptr.as_ptr()).0 = n * 2 };
    }
    for &(key, n, _) in &live {
        assert_eq!(c.read(key).0, n * 2);
    }
    c.check_invariants();
}

/// Implements `Churn` for a container type by forwarding, and writes its
/// test `addresses_survive_heavy_churn`: `$make` builds the container from
/// a block size; the sizes are `(initial values, rounds, block size)`, the
/// small ones under Miri.
#[macro_export]
macro_rules! impl_churn {
    (
        $ty:ident, $key:ty;
        test: $make:expr,
        miri: $small:expr, full: $full:expr, shrink_phase: $shrink:expr
    ) => {
        $crate::impl_churn!($ty, $key);

        /// The stable-address test of issue 5 (`common/churn.rs`): record
        /// `get_ptr` for many elements, then insert and remove heavily,
        /// growing by several blocks; every live element must keep its
        /// address and value.
        #[test]
        fn addresses_survive_heavy_churn() {
            let (initial, rounds, block) = common::scaled($small, $full);
            common::churn::addresses_survive_heavy_churn(($make)(block), initial, rounds, $shrink);
        }
    };
    ($ty:ident, $key:ty) => {
        impl common::churn::Churn for $ty<common::churn::Value> {
            type Key = $key;
            fn insert(&mut self, value: common::churn::Value) -> $key {
                $ty::insert(self, value)
            }
            fn remove(&mut self, key: $key) -> Option<common::churn::Value> {
                $ty::remove(self, key)
            }
            fn get_ptr(&self, key: $key) -> Option<std::ptr::NonNull<common::churn::Value>> {
                $ty::get_ptr(self, key)
            }
            fn read(&self, key: $key) -> common::churn::Value {
                self[key]
            }
            fn block_count(&self) -> usize {
                $ty::block_count(self)
            }
            fn check_invariants(&self) {
                $ty::check_invariants(self)
            }
        }
    };
}

//! Differential fuzzing of `Pool` against a `HashMap<Key, Value>` model
//! (the model is shared with the `hive` target: `stable_model.rs`).
//!
//! The first input byte picks the key type (`PoolKey`, `Id32`, or `Narrow`,
//! with 4 generation bits, so slots retire after 15 occupants); the rest is a
//! pool setup (a block size, or a fixed capacity) and a sequence of
//! operations.

#![no_main]

mod common;
mod stable_model;
#[path = "walk.rs"]
mod walk;

use arbitrary::Arbitrary;
use common::{Input, Narrow};
use handlekit::{Id32, Key, Pool, PoolKey};
use libfuzzer_sys::fuzz_target;
use stable_model::{Model, Op};

#[derive(Arbitrary, Clone, Copy, Debug)]
enum Setup {
    Default,
    /// `with_block_size(1 + n % 64)`.
    BlockSize(u8),
    /// `with_fixed_capacity(n)`.
    Fixed(u8),
}

fuzz_target!(|input: Input<(u8, Setup), Op>| {
    let (key, setup) = input.head;
    common::run_with_type_picked!(key, [PoolKey, Id32, Narrow], run(setup, &input.ops));
});

fn run<K: Key>(setup: Setup, ops: &[Op]) {
    let (pool, fixed) = match setup {
        Setup::Default => (Pool::default(), None),
        Setup::BlockSize(n) => (Pool::with_block_size(1 + usize::from(n) % 64), None),
        Setup::Fixed(n) => (
            Pool::with_fixed_capacity(usize::from(n)),
            Some(usize::from(n)),
        ),
    };
    let mut model = Model::<K, Pool<_, K>>::new(pool, fixed);
    model.check();
    for op in ops {
        model.apply(op);
        model.check();
    }
}

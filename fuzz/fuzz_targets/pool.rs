//! Differential fuzzing of `Pool` against a `HashMap<Key, Value>` model
//! (the model is shared with the `hive` target: `stable_model.rs`).
//!
//! The first input byte picks the key type (`PoolKey`, `Id32`, or `Narrow`,
//! with 4 generation bits, so slots retire after 15 occupants); the rest is a
//! pool setup (a block size, or a fixed capacity) and a sequence of
//! operations.

#![no_main]

mod stable_model;
#[path = "walk.rs"]
mod walk;

use arbitrary::{Arbitrary, Unstructured};
use handlekit::{Id32, Key, Pool, PoolKey};
use libfuzzer_sys::fuzz_target;
use stable_model::{Model, Op};

handlekit::define_key! {
    /// 28 index bits, 4 generation bits: a slot retires after 15 occupants.
    struct Narrow(u32; index_bits = 28);
}

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

fuzz_target!(|input: Input| {
    match input.key {
        0 => run::<PoolKey>(&input),
        1 => run::<Id32>(&input),
        _ => run::<Narrow>(&input),
    }
});

fn run<K: Key>(input: &Input) {
    let (pool, fixed) = match input.setup {
        Setup::Default => (Pool::default(), None),
        Setup::BlockSize(n) => (Pool::with_block_size(1 + usize::from(n) % 64), None),
        Setup::Fixed(n) => (
            Pool::with_fixed_capacity(usize::from(n)),
            Some(usize::from(n)),
        ),
    };
    let mut model = Model::<K, Pool<_, K>>::new(pool, fixed);
    model.check();
    for op in &input.ops {
        model.apply(op);
        model.check();
    }
}

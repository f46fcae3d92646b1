//! Differential fuzzing of `Hive` against a `HashMap<Key, Value>` model
//! (the model is shared with the `pool` target: `stable_model.rs`).
//!
//! The first input byte picks the key type (`Id`, `Id32`, or `Narrow`, with
//! 4 generation bits, so slots retire after 15 occupants and freed blocks'
//! ranges come back at a high floor or retire); the next two pick the
//! smallest and largest block sizes (1 to 64 slots, so blocks are made,
//! emptied and freed often), and the one after them, one time in four, a
//! fixed capacity (0 to 79, from the byte after it) instead; the rest is a
//! sequence of operations.

#![no_main]

mod stable_model;
#[path = "walk.rs"]
mod walk;

use arbitrary::{Arbitrary, Unstructured};
use handlekit::{Hive, Id, Id32, Key};
use libfuzzer_sys::fuzz_target;
use stable_model::{Model, Op};

handlekit::define_key! {
    /// 28 index bits, 4 generation bits: a slot retires after 15 occupants.
    struct Narrow(u32; index_bits = 28);
}

#[derive(Debug)]
struct Input {
    key: u8,
    /// `log2` of the smallest block, 0..=6.
    min_shift: u8,
    /// `log2` of the largest block over the smallest, 0..=6 in all.
    max_shift: u8,
    /// `with_fixed_capacity(n)` instead of the block sizes.
    fixed: Option<u8>,
    ops: Vec<Op>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Self::arbitrary_take_rest(Unstructured::new(u.bytes(u.len())?))
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> arbitrary::Result<Self> {
        let key = u8::arbitrary(&mut u)? % 3;
        let min_shift = u8::arbitrary(&mut u)? % 7;
        let max_shift = min_shift + u8::arbitrary(&mut u)? % (7 - min_shift);
        let fixed = if u8::arbitrary(&mut u)? % 4 == 0 {
            Some(u8::arbitrary(&mut u)? % 80)
        } else {
            None
        };
        Ok(Input {
            key,
            min_shift,
            max_shift,
            fixed,
            ops: Vec::arbitrary_take_rest(u)?,
        })
    }
}

fuzz_target!(|input: Input| {
    match input.key {
        0 => run::<Id>(&input),
        1 => run::<Id32>(&input),
        _ => run::<Narrow>(&input),
    }
});

fn run<K: Key>(input: &Input) {
    let (hive, fixed) = match input.fixed {
        Some(n) => (
            Hive::with_fixed_capacity(usize::from(n)),
            Some(usize::from(n)),
        ),
        None => (
            Hive::with_block_sizes(1 << input.min_shift, 1 << input.max_shift),
            None,
        ),
    };
    let mut model = Model::<K, Hive<_, K>>::new(hive, fixed);
    model.check();
    for op in &input.ops {
        model.apply(op);
        model.check();
        // Emptied blocks stay for reuse until `shrink_to_fit`, which frees
        // every empty block (a fixed hive keeps its one): each block left
        // holds a value.
        if matches!(op, Op::Shrink) && fixed.is_none() {
            assert!(model.pool.block_count() <= model.pool.len());
        }
    }
}

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

mod common;
mod stable_model;
#[path = "walk.rs"]
mod walk;

use arbitrary::{Arbitrary, Unstructured};
use common::{Input, Narrow};
use handlekit::{Hive, Id, Id32, Key};
use libfuzzer_sys::fuzz_target;
use stable_model::{Model, Op};

/// The hive's setup.
#[derive(Debug)]
struct Shape {
    /// `log2` of the smallest block, 0..=6.
    min_shift: u8,
    /// `log2` of the largest block over the smallest, 0..=6 in all.
    max_shift: u8,
    /// `with_fixed_capacity(n)` instead of the block sizes.
    fixed: Option<u8>,
}

impl<'a> Arbitrary<'a> for Shape {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let min_shift = u8::arbitrary(u)? % 7;
        let max_shift = min_shift + u8::arbitrary(u)? % (7 - min_shift);
        let fixed = if u8::arbitrary(u)? % 4 == 0 {
            Some(u8::arbitrary(u)? % 80)
        } else {
            None
        };
        Ok(Shape {
            min_shift,
            max_shift,
            fixed,
        })
    }
}

fuzz_target!(|input: Input<(u8, Shape), Op>| {
    let (key, shape) = &input.head;
    common::run_with_type_picked!(key, [Id, Id32, Narrow], run(shape, &input.ops));
});

fn run<K: Key>(shape: &Shape, ops: &[Op]) {
    let (hive, fixed) = match shape.fixed {
        Some(n) => (
            Hive::with_fixed_capacity(usize::from(n)),
            Some(usize::from(n)),
        ),
        None => (
            Hive::with_block_sizes(1 << shape.min_shift, 1 << shape.max_shift),
            None,
        ),
    };
    let mut model = Model::<K, Hive<_, K>>::new(hive, fixed);
    model.check();
    for op in ops {
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

//! `VmVec::zero_range` against a `VecDeque` model: zeroed ranges read as
//! zeros, everything else keeps its value, whatever the alignment of the
//! range to pages and of the element size to the page size.

mod common;

use std::collections::VecDeque;

use handlekit::vm_vec::ZeroBits;
use handlekit::VmVec;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Extend(usize),
    DrainFront(usize),
    /// A range as fractions of the length, in thousandths.
    Zero(u16, u16),
}

fn op() -> impl Strategy<Value = Op> {
    let max: usize = if cfg!(miri) { 40 } else { 3000 };
    prop_oneof![
        2 => (1..max).prop_map(Op::Extend),
        1 => (0..max).prop_map(Op::DrainFront),
        2 => (0..=1000u16, 0..=1000u16).prop_map(|(a, b)| Op::Zero(a.min(b), a.max(b))),
    ]
}

/// Runs `ops` on a vector of `T` made from counters by `make`, checking
/// every element after each step; `zero` is the value of all-zero bytes.
fn run<T: ZeroBits + PartialEq + std::fmt::Debug>(ops: &[Op], zero: T, make: impl Fn(u64) -> T) {
    let mut v = VmVec::with_max_capacity(if cfg!(miri) { 400 } else { 40_000 }).unwrap();
    let mut model = VecDeque::new();
    let mut next = 1u64;
    for op in ops {
        match *op {
            Op::Extend(n) => {
                let n = n.min(v.remaining_capacity());
                for _ in 0..n {
                    v.push(make(next));
                    model.push_back(make(next));
                    next += 1;
                }
            }
            Op::DrainFront(n) => {
                let n = n.min(v.len());
                v.drain_front(n);
                model.drain(..n);
            }
            Op::Zero(a, b) => {
                let (start, end) = (v.len() * a as usize / 1000, v.len() * b as usize / 1000);
                let released = v.zero_range(start..end);
                assert!(released <= (end - start) * size_of::<T>());
                for x in model.range_mut(start..end) {
                    *x = zero;
                }
            }
        }
        assert_eq!(v.len(), model.len());
        assert!(v.iter().eq(model.iter()), "contents differ after {op:?}");
    }
}

/// The operations of a case: fewer than 40 (under Miri, 20: drawing them
/// is most of a test's time there).
const MAX_OPS: usize = if cfg!(miri) { 20 } else { 40 };

proptest! {
    #![proptest_config(common::proptest_config(if cfg!(miri) { 4 } else { 64 }))]

    #[test]
    fn zero_range_u64(ops in proptest::collection::vec(op(), 0..MAX_OPS)) {
        run(&ops, 0, |i| i);
    }

    #[test]
    fn zero_range_odd_size(ops in proptest::collection::vec(op(), 0..MAX_OPS)) {
        // 12-byte elements straddle page boundaries.
        run(&ops, [0; 3], |i| [i as u32, (i >> 32) as u32 | 1, !(i as u32)]);
    }
}

#[test]
#[should_panic]
fn zero_range_out_of_bounds_panics() {
    let mut v = VmVec::<u32>::with_max_capacity(16).unwrap();
    v.extend([1, 2, 3]);
    v.zero_range(1..4);
}

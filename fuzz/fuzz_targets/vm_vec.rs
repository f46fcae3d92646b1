//! Differential fuzzing of `VmVec` against a `VecDeque` model (the harness
//! of `crates/handlekit/tests/common/vm_vec_model.rs`, shared with the
//! proptest model there; this target adds `zero_range` and arbitrary ids).
//!
//! The model keeps each element's id and position and predicts the window's
//! byte offset, so it knows when a push must fail and where the first
//! element must sit (the reservation's base never moves; `rebase` moves the
//! window by exactly the shift it reports). Compaction is checked through
//! the moves it reports. Elements own a `Box`, so sanitizers see double
//! drops and leaks.
//!
//! The first input byte picks the element: `Small` (a box, 8 bytes),
//! `Big` (2,400 bytes, so a few hundred span a 2 MiB chunk and chunk
//! boundaries fall inside elements) or `Plain` (24 bytes of numbers, so
//! page boundaries fall inside elements), the one that `zero_range` takes.

#![no_main]

mod common;
#[path = "../../crates/handlekit/tests/common/vm_vec_model.rs"]
mod vm_vec_model;

use std::mem::size_of;
use std::ops::Range;

use arbitrary::Arbitrary;
use common::Input;
use handlekit::VmVec;
use libfuzzer_sys::fuzz_target;
use vm_vec_model::{Elem, Harness};

/// Plain numbers: `zero_range` applies, and zero bytes read as id 0.
#[derive(Clone, Copy, Debug)]
struct Plain([u64; 3]);

// SAFETY: three integers; zero bytes make `Plain([0; 3])`.
unsafe impl handlekit::vm_vec::ZeroBits for Plain {}

impl Elem for Plain {
    fn new(id: u64) -> Self {
        Plain([id, id.wrapping_mul(3), id.rotate_left(7)])
    }
    fn id(&self) -> u64 {
        let id = self.0[0];
        assert_eq!(
            (self.0[1], self.0[2]),
            (id.wrapping_mul(3), id.rotate_left(7))
        );
        id
    }
    fn zero_range(v: &mut VmVec<Self>, range: Range<usize>) -> Option<usize> {
        Some(v.zero_range(range))
    }
}

#[derive(Clone, Debug)]
struct Small(Box<u64>);

impl Elem for Small {
    fn new(id: u64) -> Self {
        Small(Box::new(id))
    }
    fn id(&self) -> u64 {
        *self.0
    }
}

#[derive(Clone, Debug)]
struct Big {
    id: Box<u64>,
    pad: [u64; 299],
}

impl Elem for Big {
    fn new(id: u64) -> Self {
        let mut pad = [0; 299];
        pad[0] = !id;
        pad[298] = id.rotate_left(7);
        Big {
            id: Box::new(id),
            pad,
        }
    }
    fn id(&self) -> u64 {
        let id = *self.id;
        assert_eq!((self.pad[0], self.pad[298]), (!id, id.rotate_left(7)));
        id
    }
}

#[derive(Arbitrary, Clone, Debug)]
enum Op {
    Push,
    Extend(u16),
    PopFront,
    Pop,
    DrainFront {
        n: u16,
        take: u8,
        back: bool,
    },
    Truncate(u16),
    Clear,
    Compact {
        budget: u16,
        modulus: u8,
        ordered: bool,
    },
    Rebase,
    ShrinkToFit,
    SetByPosition(u16, u64),
    /// Clone, check the copy; with the flag, carry on with the copy.
    Clone(bool),
    /// Collect a clone of the elements through `FromIterator`, the flag
    /// picking an exact-size iterator or one without an upper bound.
    Collect(bool),
    /// `zero_range` over the elements between the two (mod the length).
    ZeroRange(u16, u16),
    /// Write this many (mod 4096) into the spare capacity and `set_len`,
    /// after `reserve` if the flag is set.
    WriteSpare(u16, bool),
}

fn run<T: Elem>(capacity: u16, ops: &[Op]) {
    let mut h = Harness::<T>::new(usize::from(capacity));
    for op in ops {
        let len = h.m.ids.len();
        match *op {
            Op::Push => h.push(),
            Op::Extend(n) => h.extend(usize::from(n % 4096)),
            Op::PopFront => h.pop_front(),
            Op::Pop => h.pop(),
            Op::DrainFront { n, take, back } => {
                h.drain_front(usize::from(n) % (len + 1), usize::from(take % 8), back)
            }
            Op::Truncate(n) => h.truncate(usize::from(n) % (len + 1)),
            Op::Clear => h.clear(),
            Op::Compact {
                budget,
                modulus,
                ordered,
            } => h.compact(usize::from(budget), u64::from(modulus) + 1, ordered),
            Op::Rebase => h.rebase(),
            Op::Clone(carry_on) => h.clone(carry_on),
            Op::Collect(exact) => h.collect(exact),
            Op::ShrinkToFit => h.shrink_to_fit(),
            Op::ZeroRange(a, b) => {
                let (a, b) = (usize::from(a) % (len + 1), usize::from(b) % (len + 1));
                let range = a.min(b)..a.max(b);
                if let Some(released) = T::zero_range(&mut h.v, range.clone()) {
                    assert!(released <= range.len() * size_of::<T>());
                    for id in h.m.ids.range_mut(range) {
                        *id = 0;
                    }
                }
            }
            Op::SetByPosition(i, id) => {
                if len != 0 {
                    h.set_by_position(usize::from(i) % len, id);
                }
            }
            Op::WriteSpare(n, reserve) => h.write_spare(usize::from(n % 4096), reserve),
        }
        h.check();
    }
    h.finish();
}

// The header: the element kind, then the capacity.
fuzz_target!(|input: Input<(u8, u16), Op>| {
    let (kind, capacity) = input.head;
    common::run_with_type_picked!(kind, [Small, Big, Plain], run(capacity, &input.ops));
});

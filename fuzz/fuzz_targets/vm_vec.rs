//! Differential fuzzing of `VmVec` against a `VecDeque` model.
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

use std::collections::VecDeque;
use std::mem::size_of;
use std::ops::Range;

use arbitrary::{Arbitrary, Unstructured};
use handlekit::vm_vec::VIRTUAL_MEMORY;
use handlekit::VmVec;
use libfuzzer_sys::fuzz_target;

trait Elem: Clone {
    fn new(id: u64) -> Self;
    /// The id; an element of zero bytes has id 0.
    fn id(&self) -> u64;
    /// `VmVec::zero_range` for the elements that allow it (the bytes given
    /// back); `None` for the others.
    fn zero_range(_v: &mut VmVec<Self>, _range: Range<usize>) -> Option<usize> {
        None
    }
}

/// Plain numbers: `zero_range` applies, and zero bytes read as id 0.
#[derive(Clone, Copy)]
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

#[derive(Clone)]
struct Small(Box<u64>);

impl Elem for Small {
    fn new(id: u64) -> Self {
        Small(Box::new(id))
    }
    fn id(&self) -> u64 {
        *self.0
    }
}

#[derive(Clone)]
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
}

#[derive(Debug)]
struct Input {
    kind: u8,
    capacity: u16,
    ops: Vec<Op>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            kind: u8::arbitrary(u)?,
            capacity: u16::arbitrary(u)?,
            ops: Vec::arbitrary(u)?,
        })
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            kind: u8::arbitrary(&mut u)?,
            capacity: u16::arbitrary(&mut u)?,
            ops: Vec::arbitrary_take_rest(u)?,
        })
    }
}

struct Model {
    ids: VecDeque<u64>,
    positions: VecDeque<usize>,
    front: usize,
    head: usize,
    next_id: u64,
    limit: usize,
    base: usize,
}

impl Model {
    fn tail<T>(&self) -> usize {
        self.head + self.ids.len() * size_of::<T>()
    }

    fn push<T>(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.positions
            .push_back(self.front.wrapping_add(self.ids.len()));
        self.ids.push_back(id);
        id
    }

    fn pop_front<T>(&mut self) -> Option<u64> {
        let id = self.ids.pop_front()?;
        self.positions.pop_front();
        self.front = self.front.wrapping_add(1);
        self.head += size_of::<T>();
        Some(id)
    }
}

fn check<T: Elem>(v: &VmVec<T>, m: &Model) {
    v.check_invariants();
    assert_eq!(v.len(), m.ids.len());
    assert!(v.iter().map(Elem::id).eq(m.ids.iter().copied()), "contents");
    assert_eq!(v.front_position(), m.front);
    assert_eq!(v.head_offset(), m.head);
    assert_eq!(v.as_ptr() as usize, m.base + m.head, "address");
    assert_eq!(
        v.remaining_capacity(),
        (m.limit - m.tail::<T>()) / size_of::<T>()
    );
    if let (Some(&p), Some(&id)) = (m.positions.back(), m.ids.back()) {
        assert_eq!(v.get_by_position(p).map(Elem::id), Some(id));
    }
    assert!(v.get_by_position(m.front.wrapping_sub(1)).is_none());
}

fn run<T: Elem>(input: &Input) {
    let capacity = usize::from(input.capacity);
    let mut v: VmVec<T> = VmVec::with_max_capacity(capacity).expect("reserve");
    let mut m = Model {
        ids: VecDeque::new(),
        positions: VecDeque::new(),
        front: 0,
        head: 0,
        next_id: 0,
        limit: capacity * size_of::<T>(),
        base: v.as_ptr() as usize,
    };
    for op in &input.ops {
        match *op {
            Op::Push => {
                if m.tail::<T>() + size_of::<T>() <= m.limit {
                    let id = m.push::<T>();
                    v.push(T::new(id));
                } else {
                    let err = v.try_push(T::new(u64::MAX)).expect_err("full");
                    assert!(err.is_full());
                    assert_eq!(err.into_inner().id(), u64::MAX);
                }
            }
            Op::Extend(n) => {
                let n = usize::from(n % 4096).min(v.remaining_capacity());
                let first = m.next_id;
                v.extend((first..first + n as u64).map(T::new));
                for _ in 0..n {
                    m.push::<T>();
                }
            }
            Op::PopFront => assert_eq!(v.pop_front().map(|x| x.id()), m.pop_front::<T>()),
            Op::Pop => {
                assert_eq!(v.pop().map(|x| x.id()), m.ids.pop_back());
                m.positions.pop_back();
            }
            Op::DrainFront { n, take, back } => {
                let n = usize::from(n) % (m.ids.len() + 1);
                let expected: Vec<u64> = (0..n)
                    .map(|_| m.pop_front::<T>().expect("n <= len"))
                    .collect();
                let mut drain = v.drain_front(n);
                let mut got = Vec::new();
                for _ in 0..take % 8 {
                    let next = if back {
                        drain.next_back()
                    } else {
                        drain.next()
                    };
                    got.extend(next.map(|x| x.id()));
                }
                drop(drain);
                let k = got.len();
                if back {
                    got.reverse();
                    assert_eq!(got, expected[n - k..]);
                } else {
                    assert_eq!(got, expected[..k]);
                }
            }
            Op::Truncate(len) => {
                let len = usize::from(len) % (m.ids.len() + 1);
                v.truncate(len);
                m.ids.truncate(len);
                m.positions.truncate(len);
            }
            Op::Clear => {
                v.clear();
                m.ids.clear();
                m.positions.clear();
            }
            Op::Compact {
                budget,
                modulus,
                ordered,
            } => compact(
                &mut v,
                &mut m,
                usize::from(budget),
                u64::from(modulus) + 1,
                ordered,
            ),
            Op::Rebase => {
                let old = m.head;
                let r = v.rebase();
                assert!(r.shift <= m.head);
                m.head -= r.shift;
                if m.ids.is_empty() || !VIRTUAL_MEMORY {
                    assert_eq!(m.head, 0);
                } else if r.remapped > 0 {
                    // Whole pages moved: the window keeps its offset in
                    // its page, inside the first page.
                    let page = rustix::param::page_size();
                    assert_eq!(m.head, old % page);
                    assert_eq!(r.copied, 0);
                } else {
                    assert_eq!(m.head, 0);
                }
                if r.shift > 0 && size_of::<T>() != 0 {
                    let chunk = v.chunk_size();
                    let tail = m.tail::<T>();
                    let expected = if VIRTUAL_MEMORY {
                        (tail.div_ceil(chunk) * chunk).min(v.reserved_bytes())
                    } else {
                        v.committed_bytes()
                    };
                    assert_eq!(v.committed_bytes(), expected, "committed after rebase");
                }
            }
            Op::Clone(carry_on) => {
                let copy = v.clone();
                copy.check_invariants();
                assert_eq!(copy.max_capacity(), capacity);
                assert_eq!(copy.front_position(), m.front);
                assert_eq!(copy.head_offset(), 0);
                assert!(copy.iter().map(Elem::id).eq(m.ids.iter().copied()));
                assert_eq!(copy.remaining_capacity(), capacity - m.ids.len());
                if carry_on {
                    v = copy;
                    m.head = 0;
                    m.base = v.as_ptr() as usize;
                }
            }
            Op::Collect(exact) => {
                let collected: VmVec<T> = if exact {
                    v.iter().cloned().collect()
                } else {
                    let mut it = v.iter();
                    std::iter::from_fn(|| it.next().cloned()).collect()
                };
                collected.check_invariants();
                assert_eq!(collected.max_capacity(), m.ids.len());
                assert!(collected.iter().map(Elem::id).eq(m.ids.iter().copied()));
            }
            Op::ShrinkToFit => v.shrink_to_fit(),
            Op::ZeroRange(a, b) => {
                let len = m.ids.len();
                let (a, b) = (usize::from(a) % (len + 1), usize::from(b) % (len + 1));
                let range = a.min(b)..a.max(b);
                if let Some(released) = T::zero_range(&mut v, range.clone()) {
                    assert!(released <= range.len() * size_of::<T>());
                    for id in m.ids.range_mut(range) {
                        *id = 0;
                    }
                }
            }
            Op::SetByPosition(i, id) => {
                if !m.ids.is_empty() {
                    let i = usize::from(i) % m.ids.len();
                    *v.get_by_position_mut(m.positions[i]).expect("live") = T::new(id);
                    m.ids[i] = id;
                }
            }
        }
        check(&v, &m);
    }
    assert!(v.into_iter().map(|x| x.id()).eq(m.ids.iter().copied()));
}

fn compact<T: Elem>(v: &mut VmVec<T>, m: &mut Model, budget: usize, modulus: u64, ordered: bool) {
    let examined = budget.min(m.ids.len());
    let keep = |id: u64| id % modulus != 0;
    let survivors: Vec<u64> = m
        .ids
        .iter()
        .take(examined)
        .copied()
        .filter(|&id| keep(id))
        .collect();
    let removed = examined - survivors.len();
    let mut moves = Vec::new();
    let report = |from: usize, to: usize, x: &T| moves.push((from, to, x.id()));
    let done = if ordered {
        v.compact_front(budget, |x| keep(x.id()), report)
    } else {
        v.compact_front_unordered(budget, |x| keep(x.id()), report)
    };
    assert_eq!(
        (done.examined, done.removed, done.moved),
        (examined, removed, moves.len())
    );
    let start = m.front;
    let mut slots: Vec<Option<u64>> = m.ids.iter().take(examined).map(|&id| Some(id)).collect();
    let mut landed: Vec<Option<u64>> = vec![None; examined];
    for &(from, to, id) in &moves {
        let (f, t) = (from.wrapping_sub(start), to.wrapping_sub(start));
        assert!(f < examined && t < examined && f != t);
        assert_eq!(slots[f].take(), Some(id));
        assert!(keep(id));
        assert!(landed[t].replace(id).is_none());
    }
    for i in 0..examined {
        if let Some(id) = slots[i] {
            if keep(id) {
                assert!(landed[i].replace(id).is_none());
            }
        }
    }
    assert!(landed[..removed].iter().all(Option::is_none));
    let after: Vec<u64> = landed[removed..]
        .iter()
        .map(|s| s.expect("filled"))
        .collect();
    if ordered {
        assert_eq!(after, survivors);
    } else {
        assert!(done.moved <= removed.min(survivors.len()));
    }
    for _ in 0..removed {
        m.pop_front::<T>();
    }
    for (i, id) in after.into_iter().enumerate() {
        m.ids[i] = id;
    }
}

fuzz_target!(|input: Input| match input.kind % 3 {
    0 => run::<Small>(&input),
    1 => run::<Big>(&input),
    _ => run::<Plain>(&input),
});

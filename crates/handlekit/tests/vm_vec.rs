//! `VmVec` against a `VecDeque` model, plus the edge cases of its API.
//!
//! The model holds each element's id and position. It also predicts the
//! window's byte offsets, so it knows when a push must fail (the window
//! reached the end of the reservation) and where every element must be:
//! the reservation's base never changes, the first element sits at
//! `head_offset`, which only front removals and `rebase` change, and
//! `rebase` moves it by exactly the `shift` it reports.
//!
//! Three element types: `u64`, `Block` (2 KiB, so a few ops cross 2 MiB
//! chunks) and `Odd` (2,400 bytes, so elements straddle chunk boundaries and
//! a remap shift is not a multiple of the element size). Under Miri (the
//! heap fallback) the runs are scaled down.

use std::collections::VecDeque;
use std::fmt::Debug;
use std::mem::size_of;

use handlekit::vm_vec::{ReserveErrorKind, VIRTUAL_MEMORY};
use handlekit::VmVec;
use proptest::prelude::*;
use proptest::test_runner::Config;

/// An element type for the model: built from an id, and able to say
/// which id it was built from (checking its whole payload).
trait Elem: Debug + Clone {
    fn new(id: u64) -> Self;
    fn id(&self) -> u64;
}

impl Elem for u64 {
    fn new(id: u64) -> Self {
        id
    }
    fn id(&self) -> u64 {
        *self
    }
}

/// 2 KiB: 1,024 per 2 MiB chunk.
#[derive(Clone, Debug)]
struct Block([u64; 256]);

impl Elem for Block {
    fn new(id: u64) -> Self {
        let mut words = [0; 256];
        words[0] = id;
        words[255] = !id;
        Block(words)
    }
    fn id(&self) -> u64 {
        assert_eq!(self.0[255], !self.0[0], "payload of {}", self.0[0]);
        self.0[0]
    }
}

/// 2,400 bytes: chunk boundaries fall inside elements.
#[derive(Clone, Debug)]
struct Odd([u64; 300]);

impl Elem for Odd {
    fn new(id: u64) -> Self {
        let mut words = [0; 300];
        words[0] = id;
        words[150] = id.rotate_left(17);
        words[299] = !id;
        Odd(words)
    }
    fn id(&self) -> u64 {
        let id = self.0[0];
        assert_eq!(
            (self.0[150], self.0[299]),
            (id.rotate_left(17), !id),
            "payload of {id}"
        );
        id
    }
}

#[derive(Clone, Debug)]
enum Op {
    Push,
    /// Push this many (through `extend`, or `try_push` past the end).
    Extend(usize),
    PopFront,
    Pop,
    /// Remove this fraction (‰) of the length from the front; take the first
    /// `taken` items from the drain (from the back if the flag is set).
    DrainFront(u16, usize, bool),
    /// Keep this fraction (‰) of the length.
    Truncate(u16),
    Clear,
    /// Budget (‰ of the length), keep elements whose id is not divisible by
    /// the modulus, ordered or not.
    Compact(u16, u64, bool),
    Rebase,
    ShrinkToFit,
    /// Overwrite the element at a position (‰ into the window).
    SetByPosition(u16),
    IntoIterCheck,
    /// Clone the vector and check the copy; with the flag, carry on with
    /// the copy (a fresh reservation, the window at its start).
    Clone(bool),
}

fn op(max_extend: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Push),
        4 => (0..=max_extend).prop_map(Op::Extend),
        2 => Just(Op::PopFront),
        1 => Just(Op::Pop),
        3 => (0u16..=1000, 0usize..4, any::<bool>()).prop_map(|(f, t, b)| Op::DrainFront(f, t, b)),
        1 => (0u16..=1000).prop_map(Op::Truncate),
        1 => Just(Op::Clear),
        3 => (0u16..=1000, 1u64..5, any::<bool>()).prop_map(|(b, m, o)| Op::Compact(b, m, o)),
        2 => Just(Op::Rebase),
        1 => Just(Op::ShrinkToFit),
        1 => (0u16..1000).prop_map(Op::SetByPosition),
        1 => Just(Op::IntoIterCheck),
        2 => any::<bool>().prop_map(Op::Clone),
    ]
}

struct Model {
    /// Ids, front first.
    ids: VecDeque<u64>,
    /// The position of each element, front first.
    positions: VecDeque<usize>,
    /// The position of the front element (or the next one, when empty).
    front: usize,
    /// Byte offset of the window in the reservation.
    head: usize,
    next_id: u64,
    max_capacity: usize,
    /// The base address of the reservation.
    base: usize,
}

impl Model {
    fn stride<T>() -> usize {
        size_of::<T>().max(1)
    }

    fn tail<T>(&self) -> usize {
        self.head + self.ids.len() * Self::stride::<T>()
    }

    fn fits<T>(&self) -> bool {
        self.tail::<T>() + Self::stride::<T>() <= self.max_capacity * Self::stride::<T>()
    }

    /// Pushes the next id (as the element type reads it back).
    fn push_back<T: Elem>(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let position = self.front.wrapping_add(self.ids.len());
        self.ids.push_back(T::new(id).id());
        self.positions.push_back(position);
        id
    }

    fn pop_front<T>(&mut self) -> Option<u64> {
        let id = self.ids.pop_front()?;
        self.positions.pop_front();
        self.front = self.front.wrapping_add(1);
        self.head += Self::stride::<T>();
        Some(id)
    }
}

fn check<T: Elem>(v: &VmVec<T>, m: &Model) {
    v.check_invariants();
    assert_eq!(v.len(), m.ids.len());
    assert_eq!(v.is_empty(), m.ids.is_empty());
    let ids: Vec<u64> = v.iter().map(Elem::id).collect();
    assert!(ids.iter().eq(m.ids.iter()), "contents");
    assert_eq!(v.front_position(), m.front, "front position");
    assert_eq!(v.next_position(), m.front.wrapping_add(m.ids.len()));
    assert_eq!(v.head_offset(), m.head, "head offset");
    let stride = Model::stride::<T>();
    assert_eq!(
        v.remaining_capacity(),
        (m.max_capacity * stride - m.tail::<T>()) / stride,
        "remaining capacity"
    );
    if size_of::<T>() != 0 {
        // Addresses: the first element is at base + head, every time.
        assert_eq!(
            v.as_ptr() as usize,
            m.base + m.head,
            "address of the window"
        );
    }
    // Positions resolve to the right elements; the ones around do not.
    for (i, &p) in m
        .positions
        .iter()
        .enumerate()
        .step_by(m.positions.len() / 16 + 1)
    {
        assert_eq!(v.index_of_position(p), Some(i));
        assert_eq!(v.get_by_position(p).map(Elem::id), Some(m.ids[i]));
    }
    assert!(v.get_by_position(m.front.wrapping_sub(1)).is_none());
    assert!(v
        .get_by_position(m.front.wrapping_add(m.ids.len()))
        .is_none());
}

/// The system page size, the unit `rebase` remaps in.
fn page_size() -> usize {
    #[cfg(unix)]
    {
        rustix::param::page_size()
    }
    #[cfg(not(unix))]
    {
        4096
    }
}

fn run<T: Elem>(max_capacity: usize, ops: &[Op]) {
    let mut v: VmVec<T> = VmVec::with_max_capacity(max_capacity).expect("reserve");
    let mut m = Model {
        ids: VecDeque::new(),
        positions: VecDeque::new(),
        front: 0,
        head: 0,
        next_id: 0,
        max_capacity,
        base: v.as_ptr() as usize,
    };
    assert_eq!(v.max_capacity(), max_capacity);
    check(&v, &m);
    for op in ops {
        match *op {
            Op::Push => {
                if m.fits::<T>() {
                    let id = m.push_back::<T>();
                    v.push(T::new(id));
                } else {
                    let err = v.try_push(T::new(u64::MAX)).expect_err("push past the end");
                    assert!(err.is_full());
                    assert_eq!(err.into_inner().id(), T::new(u64::MAX).id());
                }
            }
            Op::Extend(n) => {
                let room = v.remaining_capacity();
                let fit = n.min(room);
                let first = m.next_id;
                v.extend((first..first + fit as u64).map(T::new));
                for _ in 0..fit {
                    m.push_back::<T>();
                }
                if n > room {
                    assert!(v.try_push(T::new(u64::MAX)).is_err());
                }
            }
            Op::PopFront => assert_eq!(v.pop_front().map(|x| x.id()), m.pop_front::<T>()),
            Op::Pop => {
                assert_eq!(v.pop().map(|x| x.id()), m.ids.pop_back());
                m.positions.pop_back();
            }
            Op::DrainFront(f, taken, from_back) => {
                let n = m.ids.len() * usize::from(f) / 1000;
                let expected: Vec<u64> = (0..n)
                    .map(|_| m.pop_front::<T>().expect("n <= len"))
                    .collect();
                let mut drain = v.drain_front(n);
                assert_eq!(drain.len(), n);
                let mut got = Vec::new();
                for _ in 0..taken {
                    let next = if from_back {
                        drain.next_back()
                    } else {
                        drain.next()
                    };
                    got.extend(next.map(|x| x.id()));
                }
                let rest: Vec<u64> = drain.as_slice().iter().map(Elem::id).collect();
                drop(drain);
                let k = got.len();
                if from_back {
                    got.reverse();
                    assert_eq!(got, expected[n - k..]);
                    assert_eq!(rest, expected[..n - k]);
                } else {
                    assert_eq!(got, expected[..k]);
                    assert_eq!(rest, expected[k..]);
                }
            }
            Op::Truncate(f) => {
                let len = m.ids.len() * usize::from(f) / 1000;
                v.truncate(len);
                m.ids.truncate(len);
                m.positions.truncate(len);
            }
            Op::Clear => {
                v.clear();
                m.ids.clear();
                m.positions.clear();
            }
            Op::Compact(b, modulus, ordered) => {
                let budget = (m.ids.len() * usize::from(b)).div_ceil(1000);
                compact(&mut v, &mut m, budget, modulus, ordered);
            }
            Op::Rebase => {
                let before = v.committed_bytes();
                let old = m.head;
                let r = v.rebase();
                assert!(r.shift <= m.head, "shift past the start");
                assert_eq!(r.shift % std::mem::align_of::<T>(), 0);
                m.head -= r.shift;
                let live = m.ids.len() * size_of::<T>();
                if m.ids.is_empty() {
                    assert_eq!(m.head, 0, "an empty window rewinds to 0");
                } else if VIRTUAL_MEMORY && size_of::<T>() != 0 {
                    let page = page_size();
                    assert!(old == 0 || r.shift > 0, "a rebase that moves nothing");
                    if cfg!(target_os = "linux") {
                        // Remapping is chosen when whole pages are dead and
                        // one piece does it, or the pieces are whole chunks.
                        let dead = old / page * page;
                        let live_pages = (old + live).div_ceil(page) * page - dead;
                        let remap = dead > 0 && (dead >= live_pages || dead >= v.chunk_size());
                        assert_eq!(r.remapped > 0, remap, "remap or copy");
                    } else {
                        assert_eq!(r.remapped, 0, "only Linux remaps");
                    }
                    if r.remapped > 0 {
                        // Remapped by whole pages: the first element keeps
                        // its offset within its page.
                        assert_eq!(r.shift % page, 0);
                        assert_eq!(m.head, old % page, "inside the first page");
                        assert_eq!(r.copied, 0, "a remap copies nothing");
                        assert!(r.remapped >= live && r.remapped - live < 2 * page);
                    } else {
                        assert_eq!(m.head, 0, "a copy goes to the start");
                        assert_eq!(r.copied, if r.shift == 0 { 0 } else { live });
                    }
                    // Honest accounting: after a move, the chunks from the
                    // start of the reservation to the last element, no more.
                    let chunk = v.chunk_size();
                    assert!(v.committed_bytes() <= before, "rebase commits no more");
                    if r.shift > 0 {
                        assert_eq!(
                            v.committed_bytes(),
                            (m.tail::<T>().div_ceil(chunk) * chunk).min(v.reserved_bytes())
                        );
                    }
                } else {
                    assert_eq!(m.head, 0);
                    let live = if r.shift == 0 { 0 } else { live };
                    assert_eq!(r.copied, live);
                }
            }
            Op::ShrinkToFit => {
                v.shrink_to_fit();
                if VIRTUAL_MEMORY && size_of::<T>() != 0 {
                    // At most the chunks from the first to the last element.
                    let chunk = v.chunk_size();
                    let first = m.head / chunk * chunk;
                    let end = m.tail::<T>().div_ceil(chunk) * chunk;
                    assert!(v.committed_bytes() <= end - first);
                }
            }
            Op::SetByPosition(f) => {
                if !m.ids.is_empty() {
                    let i = m.ids.len() * usize::from(f) / 1000;
                    let id = m.next_id;
                    m.next_id += 1;
                    *v.get_by_position_mut(m.positions[i]).expect("live") = T::new(id);
                    m.ids[i] = T::new(id).id();
                }
            }
            Op::IntoIterCheck => {
                // Consume a copy-free view: iterate both ways over the slice.
                let back: Vec<u64> = v.iter().rev().map(Elem::id).collect();
                assert!(back.iter().eq(m.ids.iter().rev()));
                // Collecting reserves exactly the (exact) length.
                let collected: VmVec<T> = v.iter().cloned().collect();
                collected.check_invariants();
                assert_eq!(collected.max_capacity(), m.ids.len());
                assert!(collected.iter().map(Elem::id).eq(m.ids.iter().copied()));
            }
            Op::Clone(carry_on) => {
                let copy = v.clone();
                copy.check_invariants();
                assert_eq!(copy.max_capacity(), max_capacity);
                assert_eq!(copy.front_position(), m.front, "positions carry over");
                assert_eq!(copy.head_offset(), 0, "the copy starts at its start");
                assert!(copy.iter().map(Elem::id).eq(m.ids.iter().copied()));
                assert_eq!(
                    copy.remaining_capacity(),
                    max_capacity - m.ids.len(),
                    "the copy has all the room the reservation leaves"
                );
                if let Some(&p) = m.positions.back() {
                    assert_eq!(copy.index_of_position(p), Some(m.ids.len() - 1));
                }
                if size_of::<T>() != 0 && max_capacity != 0 {
                    assert_ne!(copy.as_ptr(), v.as_ptr(), "a separate reservation");
                }
                if carry_on {
                    v = copy;
                    m.head = 0;
                    m.base = v.as_ptr() as usize;
                }
            }
        }
        check(&v, &m);
    }
    // Finally consume it front first.
    let all: Vec<u64> = v.into_iter().map(|x| x.id()).collect();
    assert!(all.iter().eq(m.ids.iter()));
}

/// Runs a compaction and checks it against the model through the moves it
/// reports: each move takes a survivor from a position in the examined range
/// to another; afterwards the removed elements are gone, the survivors fill
/// the end of the range, and (ordered) keep their order.
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
    let range = m.front..m.front.wrapping_add(examined);
    let mut moves = Vec::new();
    let mut calls = 0;
    let report = |from: usize, to: usize, x: &T| moves.push((from, to, x.id()));
    let done = if ordered {
        v.compact_front(
            budget,
            |x| {
                calls += 1;
                keep(x.id())
            },
            report,
        )
    } else {
        v.compact_front_unordered(
            budget,
            |x| {
                calls += 1;
                keep(x.id())
            },
            report,
        )
    };
    assert_eq!(calls, examined, "keep runs once per examined element");
    assert_eq!(
        (done.examined, done.removed, done.moved),
        (examined, removed, moves.len())
    );
    // Replay the moves on the model's examined range.
    let mut slots: Vec<Option<u64>> = m.ids.iter().take(examined).map(|&id| Some(id)).collect();
    let index = |p: usize| p.wrapping_sub(range.start);
    let mut landed: Vec<Option<u64>> = vec![None; examined];
    for &(from, to, id) in &moves {
        assert!(
            index(from) < examined && index(to) < examined,
            "move outside the range"
        );
        assert_ne!(from, to);
        assert_eq!(slots[index(from)].take(), Some(id), "moved element");
        assert!(keep(id), "a removed element was reported");
        assert!(
            landed[index(to)].replace(id).is_none(),
            "two moves to one slot"
        );
    }
    // Survivors that did not move stay in their slot.
    for i in 0..examined {
        if let Some(id) = slots[i] {
            if keep(id) {
                assert!(
                    landed[i].replace(id).is_none(),
                    "moved onto a survivor that stayed"
                );
            }
        }
    }
    let after: Vec<u64> = landed[removed..]
        .iter()
        .map(|s| s.expect("survivors fill the end"))
        .collect();
    assert!(
        landed[..removed].iter().all(Option::is_none),
        "survivor left in the dead prefix"
    );
    if ordered {
        assert_eq!(after, survivors, "order preserved");
    } else {
        let mut sorted = after.clone();
        sorted.sort_unstable();
        let mut expected = survivors.clone();
        expected.sort_unstable();
        assert_eq!(sorted, expected);
        assert!(
            done.moved <= removed.min(survivors.len()),
            "unordered moves at most min(removed, survivors)"
        );
    }
    // Apply to the model: drop the dead prefix, write the survivors back.
    for _ in 0..removed {
        m.pop_front::<T>();
    }
    for (i, id) in after.into_iter().enumerate() {
        m.ids[i] = id;
    }
}

const CASES: u32 = if cfg!(miri) { 3 } else { 128 };
const MAX_OPS: usize = if cfg!(miri) { 12 } else { 60 };

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(CASES))]

    #[test]
    fn model_block(cap in 0usize..(if cfg!(miri) { 40 } else { 5000 }),
                   ops in proptest::collection::vec(op(if cfg!(miri) { 12 } else { 1500 }), 0..MAX_OPS)) {
        run::<Block>(cap, &ops);
    }

    #[test]
    fn model_odd(cap in 0usize..(if cfg!(miri) { 40 } else { 5000 }),
                 ops in proptest::collection::vec(op(if cfg!(miri) { 12 } else { 1500 }), 0..MAX_OPS)) {
        run::<Odd>(cap, &ops);
    }

    #[test]
    fn model_zst(cap in 0usize..100,
                 ops in proptest::collection::vec(op(30), 0..MAX_OPS)) {
        run::<Zst>(cap, &ops);
    }
}

proptest! {
    #![proptest_config(config(if cfg!(miri) { 2 } else { 12 }))]

    #[test]
    fn model_u64(cap in 0usize..(if cfg!(miri) { 64 } else { 1 << 20 }),
                 ops in proptest::collection::vec(op(if cfg!(miri) { 16 } else { 400_000 }), 0..MAX_OPS)) {
        run::<u64>(cap, &ops);
    }
}

/// A zero-sized element: the id is not stored, so the model only checks
/// counts (every id reads back as 0).
#[derive(Clone, Debug)]
struct Zst;

impl Elem for Zst {
    fn new(_: u64) -> Self {
        Zst
    }
    fn id(&self) -> u64 {
        0
    }
}

#[test]
fn capacity_overflow_is_an_error() {
    let err = VmVec::<u64>::with_max_capacity(usize::MAX / 4).expect_err("overflow");
    assert_eq!(err.kind(), ReserveErrorKind::CapacityOverflow);
    assert_eq!(err.requested_bytes(), None);
    // Exactly isize::MAX + 1 bytes.
    let err = VmVec::<u8>::with_max_capacity(isize::MAX as usize + 1).expect_err("overflow");
    assert_eq!(err.kind(), ReserveErrorKind::CapacityOverflow);
}

#[test]
fn push_past_the_reservation() {
    let mut v = VmVec::with_max_capacity(3).expect("reserve");
    v.extend([1u32, 2, 3]);
    let err = v.try_push(4).expect_err("full");
    assert!(err.is_full());
    assert_eq!(err.raw_os_error(), None);
    assert!(
        err.to_string().contains("reservation of 3 elements"),
        "{err}"
    );
    assert!(format!("{err:?}").starts_with("PushError"));
    assert_eq!(err.into_inner(), 4);
    // Removing from the front does not make room; rebasing does.
    assert_eq!(v.pop_front(), Some(1));
    assert!(v.try_push(4).is_err());
    let moved = v.rebase();
    assert_eq!(moved.shift, 4);
    v.push(4);
    assert_eq!(v, [2, 3, 4]);
    let message = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| v.push(5)))
        .expect_err("push panics")
        .downcast::<String>()
        .expect("a formatted message");
    assert!(message.contains("VmVec is full"), "{message}");
    assert_eq!(v.len(), 3);
}

#[test]
fn zero_capacity_and_zero_sized() {
    let mut empty: VmVec<u64> = VmVec::with_max_capacity(0).expect("reserve nothing");
    assert_eq!(empty.reserved_bytes(), 0);
    assert!(empty.try_push(1).is_err());
    assert_eq!(empty.as_slice(), &[] as &[u64]);
    assert_eq!(empty.rebase().shift, 0);

    let mut units: VmVec<()> = VmVec::with_max_capacity(usize::MAX).expect("no memory needed");
    assert_eq!(units.reserved_bytes(), 0);
    units.extend(std::iter::repeat_n((), 1000));
    units.drain_front(600);
    assert_eq!(units.len(), 400);
    assert_eq!(units.front_position(), 600);
    assert_eq!(units.committed_bytes(), 0);
    units.check_invariants();

    let mut two: VmVec<()> = VmVec::with_max_capacity(2).expect("reserve");
    two.push(());
    two.push(());
    two.pop_front();
    assert!(
        two.try_push(()).is_err(),
        "a ZST window walks like any other"
    );
    assert_eq!(two.rebase().shift, 1);
    two.push(());
}

#[test]
fn over_aligned_elements() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(align(4096))]
    struct Page(u8);
    let mut v = VmVec::with_max_capacity(2000).expect("reserve");
    v.extend((0..1500).map(|i| Page(i as u8)));
    v.drain_front(1000);
    v.rebase();
    v.check_invariants();
    assert!(v.iter().all(|p| (p as *const Page as usize) % 4096 == 0));
    assert_eq!(v[0], Page((1000 % 256) as u8));
}

#[test]
fn traits() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<VmVec<u64>>();
    send_sync::<handlekit::vm_vec::DrainFront<'_, u64>>();
    send_sync::<handlekit::vm_vec::IntoIter<u64>>();

    let mut v = VmVec::with_max_capacity(8).expect("reserve");
    v.extend(&[3, 1, 2]);
    assert_eq!(format!("{v:?}"), "[3, 1, 2]");
    v.sort_unstable(); // through DerefMut
    assert_eq!(v[..2], [1, 2]);
    v[2] = 9;
    assert_eq!((&v).into_iter().copied().max(), Some(9));
    for x in &mut v {
        *x += 1;
    }
    assert_eq!(v, [2, 3, 10]);
    let mut w = VmVec::with_max_capacity(3).expect("reserve");
    w.extend([2, 3, 10]);
    assert_eq!(v, w);
    assert_eq!(format!("{:?}", v.drain_front(1)), "DrainFront([2])");
    assert_eq!(format!("{:?}", w.into_iter()), "IntoIter([2, 3, 10])");
}

#[test]
fn sent_to_another_thread() {
    let len: u64 = if cfg!(miri) { 1 << 10 } else { 1 << 16 };
    let mut v = VmVec::with_max_capacity(len as usize).expect("reserve");
    v.extend(0..len);
    let sum = std::thread::spawn(move || {
        v.drain_front(len as usize / 2);
        v.iter().sum::<u64>()
    })
    .join()
    .expect("thread");
    assert_eq!(sum, (len / 2..len).sum());
}

/// On Linux, `rebase` moves whole pages: the first element lands inside the
/// first page of the reservation, at its old offset within its page, and
/// nothing is copied; committed memory is the chunks up to the last element.
#[cfg(all(target_os = "linux", feature = "vm", not(miri)))]
#[test]
fn rebase_lands_in_the_first_page() {
    let page = page_size();
    // (dead elements, live elements) of u64: a dead prefix of a few pages
    // before a smaller live part, one of several chunks before a larger
    // live part (pieces), and one that is not a multiple of the chunk.
    for (dead, live) in [
        (3 * page / 8 + 5, page / 8),
        ((5 << 20) / 8 + 3, (12 << 20) / 8),
        ((2 << 20) / 8 + page / 8 * 7 + 1, (1 << 20) / 8),
    ] {
        let mut v: VmVec<u64> = VmVec::with_max_capacity(dead + live).expect("reserve");
        let base = v.as_ptr() as usize;
        v.extend(0..(dead + live) as u64);
        v.drain_front(dead);
        let old = v.head_offset();
        assert_eq!(old, dead * 8);
        let r = v.rebase();
        v.check_invariants();
        let offset = v.as_ptr() as usize - base;
        assert!(offset < page, "first element {offset} bytes in");
        assert_eq!(offset, old % page);
        assert_eq!((r.shift, r.copied), (old - old % page, 0));
        assert!(r.remapped >= live * 8);
        assert!(v.iter().copied().eq(dead as u64..(dead + live) as u64));
        let chunk = v.chunk_size();
        assert_eq!(
            v.committed_bytes(),
            (offset + live * 8).div_ceil(chunk) * chunk,
            "committed: the chunks up to the last element"
        );
        // The room freed is usable: fill the reservation to its end.
        let room = v.remaining_capacity();
        assert_eq!(room, (v.max_capacity() * 8 - offset - live * 8) / 8);
        v.extend(std::iter::repeat_n(7, room));
        assert!(v.try_push(0).is_err());
        v.check_invariants();
    }
}

#[test]
fn clone_keeps_positions_and_capacity() {
    let mut v = VmVec::with_max_capacity(100).expect("reserve");
    v.extend((0..60).map(|i| i.to_string()));
    v.drain_front(50);
    let copy = v.clone();
    copy.check_invariants();
    assert_eq!(copy, v);
    assert_eq!(copy.max_capacity(), 100);
    assert_eq!(copy.front_position(), 50);
    assert_eq!(copy.get_by_position(55).map(String::as_str), Some("55"));
    assert_eq!(copy.remaining_capacity(), 90);
    assert_eq!(v.remaining_capacity(), 40);
    // Independent: changing one leaves the other.
    v[0].push('!');
    assert_eq!(copy[0], "50");
    let empty: VmVec<String> = VmVec::with_max_capacity(0).expect("reserve");
    assert!(empty.clone().is_empty());
}

#[test]
fn collect_reserves_the_upper_bound() {
    // Exact size: exactly full.
    let v: VmVec<u32> = (0..100).collect();
    assert_eq!((v.len(), v.max_capacity()), (100, 100));
    // A filter: room for what it removed.
    let v: VmVec<u32> = (0..100).filter(|x| x % 3 == 0).collect();
    assert_eq!((v.len(), v.max_capacity()), (34, 100));
    // No upper bound: collected first, exact count.
    let mut n = 0;
    let v: VmVec<u32> = std::iter::from_fn(|| {
        n += 1;
        (n <= 10).then_some(n)
    })
    .collect();
    assert_eq!(v, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert_eq!(v.max_capacity(), 10);
    // An upper bound too large to reserve: collected first.
    let v: VmVec<u64> = (0..usize::MAX)
        .take_while(|&i| i < 5)
        .map(|i| i as u64)
        .collect();
    assert_eq!(v, vec![0, 1, 2, 3, 4]);
    assert_eq!(v.max_capacity(), 5);

    /// Claims at most 3 items, yields 5.
    struct Liar(u32);
    impl Iterator for Liar {
        type Item = u32;
        fn next(&mut self) -> Option<u32> {
            self.0 += 1;
            (self.0 <= 5).then_some(self.0)
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            (0, Some(3))
        }
    }
    let v: VmVec<u32> = Liar(0).collect();
    v.check_invariants();
    assert_eq!(v, [1, 2, 3, 4, 5]);
    assert_eq!(v.max_capacity(), 5);
}

#[test]
fn comparisons_and_hash() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    fn hash<H: Hash + ?Sized>(x: &H) -> u64 {
        let mut h = DefaultHasher::new();
        x.hash(&mut h);
        h.finish()
    }
    let mut v = VmVec::with_max_capacity(8).expect("reserve");
    v.extend([0, 1, 2, 3]);
    v.pop_front();
    let w: VmVec<i32> = [1, 2, 3].into_iter().collect();
    assert_eq!(v, w);
    assert_eq!(v, vec![1, 2, 3]);
    assert_eq!(v, &[1, 2, 3][..]);
    assert_eq!(hash(&v), hash(&w));
    assert_eq!(hash(&v), hash(&vec![1, 2, 3]));
    assert_eq!(v.cmp(&w), std::cmp::Ordering::Equal);
    v.push(0);
    assert!(v > w);
    assert_ne!(v, w);
}

/// `with_max_capacity_recycled`: a dropped vector's reservation serves the
/// next one of the same size, with its committed memory (whose old
/// contents are never read as elements); one whose front was released goes
/// back to the system instead. The capacities are ones no other test of
/// this binary reserves, so that tests running alongside cannot take them.
#[test]
fn recycled_reservations() {
    // The heap fallback (Miri) allocates the whole capacity.
    let (cap, filled) = if cfg!(miri) {
        (4_099, 1_000)
    } else {
        (3_333_331, 100_000)
    };
    let mut first = VmVec::<u64>::with_max_capacity_recycled(cap).unwrap();
    first.extend(0..filled);
    let address = first.as_ptr() as usize;
    drop(first);
    let mut second = VmVec::<u64>::with_max_capacity_recycled(cap).unwrap();
    let paged = VIRTUAL_MEMORY && !cfg!(miri) && cfg!(unix) && cfg!(feature = "std");
    if paged {
        assert_eq!(second.as_ptr() as usize, address, "the same reservation");
        assert!(
            second.committed_bytes() >= filled as usize * 8,
            "its memory too"
        );
    }
    assert!(second.is_empty());
    assert_eq!(second.max_capacity(), cap);
    second.extend(7..12);
    second.check_invariants();
    assert_eq!(second, [7, 8, 9, 10, 11]);
    // Past a chunk, then the front drained: the first chunk is released, so
    // the reservation is not offered again.
    let chunk = second.chunk_size();
    second.extend(0..(2 * chunk / 8) as u64);
    let len = second.len();
    drop(second.drain_front(len - 1));
    second.check_invariants();
    drop(second);
    let third = VmVec::<u64>::with_max_capacity_recycled(cap).unwrap();
    if paged {
        assert_eq!(third.committed_bytes(), 0, "a fresh reservation");
    }
    third.check_invariants();
    // Another size never takes it.
    let other = VmVec::<u64>::with_max_capacity_recycled(2 * cap).unwrap();
    if paged {
        assert_eq!(other.committed_bytes(), 0);
    }
}

/// A pointer from `as_mut_ptr` keeps working (under Miri: for the aliasing
/// model) across pushes, slices and references made and dropped in
/// between, and across front removals, which do not move the elements; a
/// `rebase` moves them, and a new pointer then finds them.
#[test]
fn raw_pointers_survive_other_access() {
    let mut v: VmVec<u64> = VmVec::with_max_capacity(1 << 12).unwrap();
    v.extend(0..100);
    let p = v.as_mut_ptr();
    // Position `i`'s element, through `p`, while the window does not move.
    let at = |i: usize| p.wrapping_add(i);
    v.push(100);
    v.as_mut_slice()[5] += 1000;
    let r = &v[7];
    assert_eq!(*r, 7);
    // SAFETY: positions 5, 100 and 9 are live (front 0) and the window has
    // not moved; the references made above are no longer used.
    unsafe {
        assert_eq!(*at(5), 1005);
        assert_eq!(*at(100), 100);
        *at(9) = 9000;
    }
    assert_eq!(v[9], 9000);
    let q = v.as_ptr();
    // SAFETY: as above; `p` and `q` are both pointers of the reservation.
    unsafe {
        *at(10) += 1;
        assert_eq!(*q.add(10), 11);
    }
    drop(v.drain_front(50));
    assert_eq!(v.front_position(), 50);
    // SAFETY: position 60 is live and did not move with the drain.
    unsafe { assert_eq!(*at(60), 60) };
    assert_eq!(v.as_ptr(), at(50).cast_const());
    v.rebase();
    let moved = v.as_ptr();
    // SAFETY: position 60 is live at index 10 of the moved window.
    unsafe { assert_eq!(*moved.add(10), 60) };
}

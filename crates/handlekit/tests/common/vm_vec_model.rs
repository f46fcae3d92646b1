//! `VmVec` against a `VecDeque` model: shared by `tests/vm_vec.rs` (proptest)
//! and `fuzz/fuzz_targets/vm_vec.rs`, which both include this file by path,
//! so it needs nothing but `handlekit`, `std` and (on unix) `rustix`. Each
//! side decodes its own operations and runs them through [`Harness`].
//!
//! The model holds each element's id and position. It also predicts the
//! window's byte offsets, so it knows when a push must fail (the window
//! reached the end of the reservation) and where every element must be:
//! the reservation's base never changes, the first element sits at
//! `head_offset`, which only front removals and `rebase` change, and
//! `rebase` moves it by exactly the `shift` it reports. Compaction is
//! checked through the moves it reports.

// Each includer uses its own part.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::fmt::Debug;
use std::mem::size_of;
use std::ops::Range;

use handlekit::vm_vec::{Compacted, VIRTUAL_MEMORY};
use handlekit::VmVec;

/// An element type for the model: built from an id, and able to say
/// which id it was built from (checking its whole payload).
pub trait Elem: Debug + Clone {
    fn new(id: u64) -> Self;
    /// The id; an element of zero bytes reads back as the id it has.
    fn id(&self) -> u64;
    /// `VmVec::zero_range` for the elements that allow it (the bytes given
    /// back); `None` for the others.
    fn zero_range(_v: &mut VmVec<Self>, _range: Range<usize>) -> Option<usize> {
        None
    }
}

impl Elem for u64 {
    fn new(id: u64) -> Self {
        id
    }
    fn id(&self) -> u64 {
        *self
    }
}

pub struct Model {
    /// Ids, front first.
    pub ids: VecDeque<u64>,
    /// The position of each element, front first.
    pub positions: VecDeque<usize>,
    /// The position of the front element (or the next one, when empty).
    pub front: usize,
    /// Byte offset of the window in the reservation.
    pub head: usize,
    pub next_id: u64,
    pub max_capacity: usize,
    /// The base address of the reservation.
    pub base: usize,
}

impl Model {
    fn stride<T>() -> usize {
        size_of::<T>().max(1)
    }

    pub fn tail<T>(&self) -> usize {
        self.head + self.ids.len() * Self::stride::<T>()
    }

    fn fits<T>(&self) -> bool {
        self.tail::<T>() + Self::stride::<T>() <= self.max_capacity * Self::stride::<T>()
    }

    /// A fresh id.
    pub fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Pushes the next id (as the element type reads it back).
    fn push_back<T: Elem>(&mut self) -> u64 {
        let id = self.take_id();
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

/// `compact_front`, or `compact_front_unordered` when not `ordered`.
pub fn compact_front<T>(
    v: &mut VmVec<T>,
    ordered: bool,
    budget: usize,
    keep: impl FnMut(&T) -> bool,
    on_move: impl FnMut(usize, usize, &T),
) -> Compacted {
    if ordered {
        v.compact_front(budget, keep, on_move)
    } else {
        v.compact_front_unordered(budget, keep, on_move)
    }
}

/// The system page size, the unit `rebase` remaps in.
pub fn page_size() -> usize {
    #[cfg(unix)]
    {
        rustix::param::page_size()
    }
    #[cfg(not(unix))]
    {
        4096
    }
}

/// A `VmVec` and its model, run through the same operations; each one
/// checks what it returns, and [`Harness::check`] the whole state.
pub struct Harness<T: Elem> {
    pub v: VmVec<T>,
    pub m: Model,
}

impl<T: Elem> Harness<T> {
    pub fn new(max_capacity: usize) -> Self {
        let v: VmVec<T> = VmVec::with_max_capacity(max_capacity).expect("reserve");
        assert_eq!(v.max_capacity(), max_capacity);
        let m = Model {
            ids: VecDeque::new(),
            positions: VecDeque::new(),
            front: 0,
            head: 0,
            next_id: 0,
            max_capacity,
            base: v.as_ptr() as usize,
        };
        let h = Harness { v, m };
        h.check();
        h
    }

    pub fn check(&self) {
        let (v, m) = (&self.v, &self.m);
        v.check_invariants();
        assert_eq!(v.len(), m.ids.len());
        assert_eq!(v.is_empty(), m.ids.is_empty());
        assert!(v.iter().map(Elem::id).eq(m.ids.iter().copied()), "contents");
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
        // Positions resolve to the right elements (a sample, and the last);
        // the ones around do not.
        let sample = (0..m.positions.len()).step_by(m.positions.len() / 16 + 1);
        for i in sample.chain(m.positions.len().checked_sub(1)) {
            let p = m.positions[i];
            assert_eq!(v.index_of_position(p), Some(i));
            assert_eq!(v.get_by_position(p).map(Elem::id), Some(m.ids[i]));
        }
        assert!(v.get_by_position(m.front.wrapping_sub(1)).is_none());
        assert!(v
            .get_by_position(m.front.wrapping_add(m.ids.len()))
            .is_none());
    }

    /// Pushes the next id, or checks that a push past the end fails and
    /// hands the element back.
    pub fn push(&mut self) {
        if self.m.fits::<T>() {
            let id = self.m.push_back::<T>();
            self.v.push(T::new(id));
        } else {
            let err = self
                .v
                .try_push(T::new(u64::MAX))
                .expect_err("push past the end");
            assert!(err.is_full());
            assert_eq!(err.into_inner().id(), T::new(u64::MAX).id());
        }
    }

    /// Pushes `n` through `extend`, as many as fit; then a `try_push` past
    /// the end must fail.
    pub fn extend(&mut self, n: usize) {
        let room = self.v.remaining_capacity();
        let fit = n.min(room);
        let first = self.m.next_id;
        self.v.extend((first..first + fit as u64).map(T::new));
        for _ in 0..fit {
            self.m.push_back::<T>();
        }
        if n > room {
            assert!(self.v.try_push(T::new(u64::MAX)).is_err());
        }
    }

    /// Writes up to `n` elements into the spare capacity (the committed
    /// room, which `reserve(n)` first makes when `reserve` is set), then
    /// appends them with `set_len`.
    pub fn write_spare(&mut self, n: usize, reserve: bool) {
        if reserve {
            self.v.reserve(n);
        }
        let room = self.v.remaining_capacity();
        let spare = self.v.spare_capacity_mut();
        assert!(spare.len() <= room);
        let written = n.min(spare.len());
        let first = self.m.next_id;
        for (slot, id) in spare[..written].iter_mut().zip(first..) {
            slot.write(T::new(id));
        }
        let len = self.v.len();
        // SAFETY: the `written` slots past the length were just written,
        // within the spare capacity.
        unsafe { self.v.set_len(len + written) };
        for _ in 0..written {
            self.m.push_back::<T>();
        }
    }

    pub fn pop_front(&mut self) {
        assert_eq!(self.v.pop_front().map(|x| x.id()), self.m.pop_front::<T>());
    }

    pub fn pop(&mut self) {
        assert_eq!(self.v.pop().map(|x| x.id()), self.m.ids.pop_back());
        self.m.positions.pop_back();
    }

    /// `drain_front(n)`, taking `taken` items from it (from the back with
    /// the flag) before dropping it.
    pub fn drain_front(&mut self, n: usize, taken: usize, from_back: bool) {
        let expected: Vec<u64> = (0..n)
            .map(|_| self.m.pop_front::<T>().expect("n <= len"))
            .collect();
        let mut drain = self.v.drain_front(n);
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

    pub fn truncate(&mut self, len: usize) {
        self.v.truncate(len);
        self.m.ids.truncate(len);
        self.m.positions.truncate(len);
    }

    pub fn clear(&mut self) {
        self.v.clear();
        self.m.ids.clear();
        self.m.positions.clear();
    }

    /// `rebase`, checked against the model: how far the window moves,
    /// whether it remaps or copies, and what stays committed.
    pub fn rebase(&mut self) {
        let (v, m) = (&mut self.v, &mut self.m);
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

    pub fn shrink_to_fit(&mut self) {
        self.v.shrink_to_fit();
        if VIRTUAL_MEMORY && size_of::<T>() != 0 {
            // At most the chunks from the first to the last element.
            let chunk = self.v.chunk_size();
            let first = self.m.head / chunk * chunk;
            let end = self.m.tail::<T>().div_ceil(chunk) * chunk;
            assert!(self.v.committed_bytes() <= end - first);
        }
    }

    /// Overwrites the `i`th element (through its position) with `id`.
    pub fn set_by_position(&mut self, i: usize, id: u64) {
        *self
            .v
            .get_by_position_mut(self.m.positions[i])
            .expect("live") = T::new(id);
        self.m.ids[i] = T::new(id).id();
    }

    /// Collects a clone of the elements through `FromIterator`, from an
    /// exact-size iterator or (without the flag) one with no upper bound:
    /// it reserves exactly the length.
    pub fn collect(&self, exact: bool) {
        let collected: VmVec<T> = if exact {
            self.v.iter().cloned().collect()
        } else {
            let mut it = self.v.iter();
            std::iter::from_fn(|| it.next().cloned()).collect()
        };
        collected.check_invariants();
        assert_eq!(collected.max_capacity(), self.m.ids.len());
        assert!(collected
            .iter()
            .map(Elem::id)
            .eq(self.m.ids.iter().copied()));
    }

    /// Clones the vector and checks the copy; with the flag, carries on
    /// with the copy (a fresh reservation, the window at its start).
    pub fn clone(&mut self, carry_on: bool) {
        let (v, m) = (&self.v, &self.m);
        let copy = v.clone();
        copy.check_invariants();
        assert_eq!(copy.max_capacity(), m.max_capacity);
        assert_eq!(copy.front_position(), m.front, "positions carry over");
        assert_eq!(copy.head_offset(), 0, "the copy starts at its start");
        assert!(copy.iter().map(Elem::id).eq(m.ids.iter().copied()));
        assert_eq!(
            copy.remaining_capacity(),
            m.max_capacity - m.ids.len(),
            "the copy has all the room the reservation leaves"
        );
        if let Some(&p) = m.positions.back() {
            assert_eq!(copy.index_of_position(p), Some(m.ids.len() - 1));
        }
        if size_of::<T>() != 0 && m.max_capacity != 0 {
            assert_ne!(copy.as_ptr(), v.as_ptr(), "a separate reservation");
        }
        if carry_on {
            self.v = copy;
            self.m.head = 0;
            self.m.base = self.v.as_ptr() as usize;
        }
    }

    /// Consumes the vector front first.
    pub fn finish(self) {
        assert!(self
            .v
            .into_iter()
            .map(|x| x.id())
            .eq(self.m.ids.iter().copied()));
    }

    /// Runs a compaction and checks it against the model through the moves
    /// it reports: each move takes a survivor from a position in the
    /// examined range to another; afterwards the removed elements are gone,
    /// the survivors fill the end of the range, and (ordered) keep their
    /// order. Keeps the elements whose id `modulus` does not divide.
    pub fn compact(&mut self, budget: usize, modulus: u64, ordered: bool) {
        let (v, m) = (&mut self.v, &mut self.m);
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
        let keep_counted = |x: &T| {
            calls += 1;
            keep(x.id())
        };
        let done = compact_front(v, ordered, budget, keep_counted, report);
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
}

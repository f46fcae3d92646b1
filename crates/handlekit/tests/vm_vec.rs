//! `VmVec` against a `VecDeque` model (`common/vm_vec_model.rs`, shared with
//! the `vm_vec` fuzz target), plus the edge cases of its API.
//!
//! Four element types: `u64`, `Block` (2 KiB, so a few ops cross 2 MiB
//! chunks), `Odd` (2,400 bytes, so elements straddle chunk boundaries and
//! a remap shift is not a multiple of the element size) and a zero-sized
//! one. Under Miri (the heap fallback) the runs are scaled down.

#[path = "common/vm_vec_model.rs"]
mod vm_vec_model;

mod common;

use handlekit::vm_vec::{ReserveErrorKind, VIRTUAL_MEMORY};
use handlekit::VmVec;
use proptest::prelude::*;
use vm_vec_model::{Elem, Harness};

/// `N` words: the id in the first, and checks of it in the middle and the
/// last, so a torn or misplaced element shows.
#[derive(Clone, Debug)]
struct Words<const N: usize>([u64; N]);

impl<const N: usize> Elem for Words<N> {
    fn new(id: u64) -> Self {
        let mut words = [0; N];
        words[0] = id;
        words[N / 2] = id.rotate_left(17);
        words[N - 1] = !id;
        Words(words)
    }
    fn id(&self) -> u64 {
        let id = self.0[0];
        assert_eq!(
            (self.0[N / 2], self.0[N - 1]),
            (id.rotate_left(17), !id),
            "payload of {id}"
        );
        id
    }
}

/// 2 KiB: 1,024 per 2 MiB chunk.
type Block = Words<256>;

/// 2,400 bytes: chunk boundaries fall inside elements.
type Odd = Words<300>;

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
    /// Write this many into the spare capacity and `set_len` (after
    /// `reserve` if the flag is set).
    WriteSpare(usize, bool),
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
        2 => (0..=max_extend, any::<bool>()).prop_map(|(n, r)| Op::WriteSpare(n, r)),
    ]
}

fn run<T: Elem>(max_capacity: usize, ops: &[Op]) {
    let mut h = Harness::<T>::new(max_capacity);
    for (step, op) in ops.iter().enumerate() {
        // Fractions (‰) of the length become counts here.
        let len = h.m.ids.len();
        let part = |f: u16| len * usize::from(f) / 1000;
        match *op {
            Op::Push => h.push(),
            Op::Extend(n) => h.extend(n),
            Op::PopFront => h.pop_front(),
            Op::Pop => h.pop(),
            Op::DrainFront(f, taken, from_back) => h.drain_front(part(f), taken, from_back),
            Op::Truncate(f) => h.truncate(part(f)),
            Op::Clear => h.clear(),
            Op::Compact(b, modulus, ordered) => {
                let budget = (len * usize::from(b)).div_ceil(1000);
                h.compact(budget, modulus, ordered);
            }
            Op::Rebase => h.rebase(),
            Op::ShrinkToFit => h.shrink_to_fit(),
            Op::SetByPosition(f) => {
                if len != 0 {
                    let id = h.m.take_id();
                    h.set_by_position(part(f), id);
                }
            }
            Op::IntoIterCheck => {
                // Iterate backwards over the slice, then collect a copy.
                let back: Vec<u64> = h.v.iter().rev().map(Elem::id).collect();
                assert!(back.iter().eq(h.m.ids.iter().rev()));
                h.collect(true);
            }
            Op::Clone(carry_on) => h.clone(carry_on),
            Op::WriteSpare(n, reserve) => h.write_spare(n, reserve),
        }
        if common::check_after(step, ops.len()) {
            h.check();
        }
    }
    h.finish();
}

const CASES: u32 = if cfg!(miri) { 3 } else { 128 };
// Under Miri, fewer than 8 operations a case: drawing one (of 14 kinds,
// through `prop_oneof!`) costs more there than running it.
const MAX_OPS: usize = if cfg!(miri) { 8 } else { 60 };

proptest! {
    #![proptest_config(common::proptest_config(CASES))]

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
    #![proptest_config(common::proptest_config(if cfg!(miri) { 2 } else { 12 }))]

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
    assert_eq!(sum, (len / 2..len).sum::<u64>());
}

/// On Linux, `rebase` moves whole pages: the first element lands inside the
/// first page of the reservation, at its old offset within its page, and
/// nothing is copied; committed memory is the chunks up to the last element.
#[cfg(all(target_os = "linux", feature = "vm", not(miri)))]
#[test]
fn rebase_lands_in_the_first_page() {
    let page = vm_vec_model::page_size();
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
    let (cap, filled) = common::scaled((4_099, 1_000), (3_333_331, 100_000));
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

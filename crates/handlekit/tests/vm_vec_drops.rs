//! `VmVec` drop counting and panic safety.
//!
//! Every element is a [`Val`] registered with a per-test [`Tracker`], which
//! counts each value's drops, so a double drop and a leak are both visible.
//! A tracker can arm one value's `Drop` to panic. Values carry 4 KiB of
//! padding, so a few hundred of them span several 2 MiB chunks and the
//! release of dead chunks runs (with virtual memory) on the paths tested.

use std::cell::{Cell, RefCell};
use std::mem;
use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

use handlekit::vm_vec::VIRTUAL_MEMORY;
use handlekit::VmVec;
use vm_vec_model::compact_front;

#[path = "common/vm_vec_model.rs"]
mod vm_vec_model;

/// The payload of every panic the tests cause on purpose.
const BOOM: &str = "intentional test panic";

/// Elements per 2 MiB chunk is 2 MiB / 4104 ≈ 511; `N` spans three chunks
/// (scaled down under Miri, where there are no chunks).
const N: usize = if cfg!(miri) { 24 } else { 1600 };

fn quiet_intentional_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let message = info.payload().downcast_ref::<&str>();
            if message != Some(&BOOM) {
                default(info);
            }
        }));
    });
}

#[derive(Default)]
struct Tracker {
    drops: RefCell<Vec<usize>>,
    panic_on_drop: Cell<Option<usize>>,
    /// The id of the value whose next `clone` panics.
    panic_on_clone: Cell<Option<usize>>,
}

impl Tracker {
    fn new() -> Rc<Self> {
        quiet_intentional_panics();
        Rc::new(Tracker::default())
    }

    fn make(self: &Rc<Self>) -> Val {
        let mut drops = self.drops.borrow_mut();
        drops.push(0);
        Val {
            id: drops.len() - 1,
            tracker: Rc::clone(self),
            _pad: [0; 4096],
        }
    }

    fn fill(self: &Rc<Self>, v: &mut VmVec<Val>, n: usize) {
        for _ in 0..n {
            v.push(self.make());
        }
    }

    fn drops(&self, id: usize) -> usize {
        self.drops.borrow()[id]
    }

    /// Asserts that exactly the values in `ids` were dropped, once each.
    fn assert_dropped(&self, ids: impl IntoIterator<Item = usize>) {
        let drops = self.drops.borrow();
        let mut expected = vec![0; drops.len()];
        for id in ids {
            expected[id] = 1;
        }
        for (id, (&got, &want)) in drops.iter().zip(&expected).enumerate() {
            assert_eq!(got, want, "value {id} dropped {got} times, expected {want}");
        }
    }
}

struct Val {
    id: usize,
    tracker: Rc<Tracker>,
    _pad: [u8; 4096],
}

impl Drop for Val {
    fn drop(&mut self) {
        self.tracker.drops.borrow_mut()[self.id] += 1;
        if self.tracker.panic_on_drop.get() == Some(self.id) {
            self.tracker.panic_on_drop.set(None);
            panic!("{}", BOOM);
        }
    }
}

impl Clone for Val {
    fn clone(&self) -> Self {
        if self.tracker.panic_on_clone.get() == Some(self.id) {
            self.tracker.panic_on_clone.set(None);
            panic!("{}", BOOM);
        }
        self.tracker.make()
    }
}

fn ids(v: &VmVec<Val>) -> Vec<usize> {
    v.iter().map(|x| x.id).collect()
}

fn new_vec() -> VmVec<Val> {
    VmVec::with_max_capacity(2 * N).expect("reserve")
}

/// A vector of `n` tracked values (ids `0..n`), with its tracker.
fn filled(n: usize) -> (Rc<Tracker>, VmVec<Val>) {
    let t = Tracker::new();
    let mut v = new_vec();
    t.fill(&mut v, n);
    (t, v)
}

#[test]
fn every_path_drops_each_value_once() {
    let (t, mut v) = filled(N);
    // pop_front and pop hand the value out.
    let front = v.pop_front().expect("front");
    assert_eq!(t.drops(front.id), 0);
    drop(front);
    let back = v.pop().expect("back");
    drop(back);
    // A drain that yields some values and drops the rest.
    let mut drain = v.drain_front(N / 2);
    let yielded: Vec<Val> = drain.by_ref().take(3).collect();
    let last = drain.next_back().expect("last");
    drop(drain);
    assert_eq!(yielded.iter().map(|x| x.id).collect::<Vec<_>>(), [1, 2, 3]);
    t.assert_dropped(
        (0..=N / 2)
            .filter(|&id| !(1..=3).contains(&id) && id != N / 2)
            .chain([N - 1]),
    );
    drop(yielded);
    drop(last);
    // truncate, clear, and the vector's own drop.
    v.truncate(v.len() - 5);
    v.rebase();
    t.fill(&mut v, 10);
    let live = ids(&v);
    v.check_invariants();
    drop(v);
    assert!(live.iter().all(|&id| t.drops(id) == 1));
    t.assert_dropped(0..t.drops.borrow().len());
}

#[test]
fn into_iter_drops_what_it_does_not_yield() {
    let (t, v) = filled(N);
    let mut it = v.into_iter();
    let a = it.next().expect("first");
    let z = it.next_back().expect("last");
    assert_eq!((a.id, z.id), (0, N - 1));
    assert_eq!(it.len(), N - 2);
    drop(it);
    t.assert_dropped(1..N - 1);
    drop((a, z));
    t.assert_dropped(0..N);
}

#[test]
fn panicking_drop_during_drain_front() {
    let (t, mut v) = filled(N);
    let committed = v.committed_bytes();
    let n = N * 3 / 4;
    t.panic_on_drop.set(Some(n / 2));
    let result = catch_unwind(AssertUnwindSafe(|| {
        v.drain_front(n);
    }));
    assert!(result.is_err(), "the Drop panic propagates");
    // Every drained value was dropped once (the panicking one included),
    // the others are untouched, and the vector is consistent.
    t.assert_dropped(0..n);
    assert_eq!(ids(&v), (n..N).collect::<Vec<_>>());
    v.check_invariants();
    if VIRTUAL_MEMORY {
        assert!(
            v.committed_bytes() < committed,
            "dead chunks released despite the panic"
        );
    }
    drop(v);
    t.assert_dropped(0..N);
}

#[test]
fn panicking_drop_after_partial_drain() {
    let (t, mut v) = filled(20);
    t.panic_on_drop.set(Some(7));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut drain = v.drain_front(10);
        let first: Vec<Val> = drain.by_ref().take(2).collect();
        drop(first);
        drop(drain);
    }));
    assert!(result.is_err());
    t.assert_dropped(0..10);
    assert_eq!(ids(&v), (10..20).collect::<Vec<_>>());
    v.check_invariants();
}

#[test]
fn panicking_drop_during_truncate_and_drop() {
    let (t, mut v) = filled(30);
    t.panic_on_drop.set(Some(25));
    assert!(catch_unwind(AssertUnwindSafe(|| v.truncate(20))).is_err());
    t.assert_dropped(20..30);
    assert_eq!(v.len(), 20);
    v.check_invariants();
    t.panic_on_drop.set(Some(3));
    assert!(catch_unwind(AssertUnwindSafe(move || drop(v))).is_err());
    t.assert_dropped(0..30);
}

#[test]
fn forgotten_drain_leaks_but_stays_consistent() {
    // The leaked values own no heap memory (a leak checker such as Miri's
    // would flag a leaked `Rc`); their drops go to a counter of their own.
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Leaky {
        id: usize,
        _pad: [u8; 4096],
    }
    impl Drop for Leaky {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }

    let mut v: VmVec<Leaky> = VmVec::with_max_capacity(2 * N).expect("reserve");
    for id in 0..N {
        v.push(Leaky {
            id,
            _pad: [0; 4096],
        });
    }
    let committed = v.committed_bytes();
    mem::forget(v.drain_front(N - 10));
    // The drained values leaked (never dropped); the rest is intact.
    assert_eq!(DROPS.load(Ordering::Relaxed), 0);
    assert_eq!(
        v.iter().map(|x| x.id).collect::<Vec<_>>(),
        (N - 10..N).collect::<Vec<_>>()
    );
    v.check_invariants();
    // The next front removal releases the chunks the drain did not.
    drop(v.pop_front());
    v.check_invariants();
    if VIRTUAL_MEMORY {
        assert!(v.committed_bytes() < committed);
    }
    drop(v);
    assert_eq!(DROPS.load(Ordering::Relaxed), 10);
}

#[test]
fn compaction_with_panicking_keep_changes_nothing() {
    for ordered in [true, false] {
        let (t, mut v) = filled(40);
        let before = ids(&v);
        let mut seen = 0;
        let mut moves = 0;
        let result = catch_unwind(AssertUnwindSafe(|| {
            let keep = |x: &Val| {
                seen += 1;
                if x.id == 30 {
                    panic!("{}", BOOM);
                }
                x.id % 3 == 0
            };
            compact_front(&mut v, ordered, 35, keep, |_, _, _| moves += 1);
        }));
        assert!(result.is_err());
        assert_eq!((seen, moves), (31, 0));
        assert_eq!(ids(&v), before);
        t.assert_dropped([]);
        v.check_invariants();
    }
}

#[test]
fn compaction_with_panicking_on_move_drops_nothing() {
    for ordered in [true, false] {
        let (t, mut v) = filled(40);
        let mut reported = 0;
        let result = catch_unwind(AssertUnwindSafe(|| {
            let on_move = |_: usize, _: usize, _: &Val| {
                reported += 1;
                if reported == 2 {
                    panic!("{}", BOOM);
                }
            };
            compact_front(&mut v, ordered, 30, |x| x.id % 2 == 0, on_move);
        }));
        assert!(result.is_err());
        assert_eq!(reported, 2);
        // Nothing dropped: every value is still there, once.
        t.assert_dropped([]);
        let mut all = ids(&v);
        all.sort_unstable();
        assert_eq!(all, (0..40).collect::<Vec<_>>());
        v.check_invariants();
    }
}

#[test]
fn compaction_with_panicking_drop_finishes() {
    for ordered in [true, false] {
        let (t, mut v) = filled(N);
        let budget = N * 3 / 4;
        let committed = v.committed_bytes();
        let keep = |x: &Val| x.id % 5 == 0;
        let bad = (budget / 2..)
            .find(|id| id % 5 != 0)
            .expect("a removed value");
        t.panic_on_drop.set(Some(bad));
        let mut moves = Vec::new();
        let result = catch_unwind(AssertUnwindSafe(|| {
            compact_front(&mut v, ordered, budget, keep, |from, to, x| {
                moves.push((from, to, x.id))
            });
        }));
        assert!(result.is_err());
        let removed: Vec<usize> = (0..budget).filter(|&id| id % 5 != 0).collect();
        t.assert_dropped(removed.iter().copied());
        // The survivors fill the end of the examined range.
        let survivors = budget - removed.len();
        assert_eq!(v.len(), N - removed.len());
        assert_eq!(v.front_position(), removed.len());
        let mut head: Vec<usize> = ids(&v)[..survivors].to_vec();
        if !ordered {
            head.sort_unstable();
        }
        assert_eq!(head, (0..budget).step_by(5).collect::<Vec<_>>());
        assert_eq!(ids(&v)[survivors..], (budget..N).collect::<Vec<_>>());
        for &(_, to, id) in &moves {
            assert_eq!(
                v.get_by_position(to).map(|x| x.id),
                Some(id),
                "reported move"
            );
        }
        v.check_invariants();
        if VIRTUAL_MEMORY {
            assert!(v.committed_bytes() < committed, "dead chunks released");
        }
        drop(v);
        t.assert_dropped(0..N);
    }
}

#[test]
fn extend_past_the_reservation_panics_and_drops_the_rest() {
    let t = Tracker::new();
    let mut v: VmVec<Val> = VmVec::with_max_capacity(5).expect("reserve");
    let items: Vec<Val> = (0..8).map(|_| t.make()).collect();
    let result = catch_unwind(AssertUnwindSafe(|| v.extend(items)));
    assert!(result.is_err());
    assert_eq!(ids(&v), [0, 1, 2, 3, 4]);
    t.assert_dropped(5..8);
    drop(v);
    t.assert_dropped(0..8);
}

/// A `clone` that panics part way: the clones made so far are dropped once
/// each, and the original is untouched. Then a clone that succeeds.
#[test]
fn panicking_clone_drops_the_partial_copy() {
    let (t, mut v) = filled(N);
    v.drain_front(N / 4);
    let originals = ids(&v);
    let fail_at = originals[originals.len() / 2];
    t.panic_on_clone.set(Some(fail_at));
    let made = t.drops.borrow().len();
    let result = catch_unwind(AssertUnwindSafe(|| v.clone()));
    assert!(result.is_err(), "clone panicked");
    let clones = made..t.drops.borrow().len();
    assert_eq!(clones.len(), originals.len() / 2, "cloned up to the panic");
    t.assert_dropped((0..N / 4).chain(clones));
    assert_eq!(ids(&v), originals);
    v.check_invariants();

    let copy = v.clone();
    copy.check_invariants();
    assert_eq!(copy.len(), v.len());
    assert_eq!(copy.front_position(), v.front_position());
    let copies = ids(&copy);
    drop(copy);
    assert!(copies.iter().all(|&id| t.drops(id) == 1));
    drop(v);
    t.assert_dropped(0..t.drops.borrow().len());
}

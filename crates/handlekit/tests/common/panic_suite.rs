//! Drop counting and panic safety, written once over [`Table`] and run for
//! every container by `panic_suite_tests!` (one `#[test]` per function).
//!
//! Every value is a [`Val`] registered with a per-test [`Tracker`], which
//! counts the drops of each value separately, so a double drop and a leak
//! are both visible; a tracker can arm one value's `Drop` or `Clone` to
//! panic. Each test ends by asserting the exact drop count of every value.
//!
//! The expected orders are predicted by [`Order`], a model of the ids in
//! iteration order that knows the container's documented order (slot
//! order, or the dense order with its swap on removal), so the same test
//! holds for `IdTable` and `PackedTable`. The constructor a container is
//! run with decides its shape: `Pool` and `Hive` run with blocks of 4
//! slots, so a test's values span several blocks and a panic in one block
//! must not stop the drops in the next.

use std::cell::RefCell;
use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use handlekit::Reuse;

use super::table::{CloneFromPanic, Table};
use super::tracker::{assert_panicked, assert_panics, take_then_drop, Tracker, Val, BOOM};

/// The ids of a container's values in iteration order, as its documented
/// order predicts them.
struct Order<C> {
    ids: Vec<usize>,
    _container: std::marker::PhantomData<C>,
}

impl<C: Table<Val>> Order<C> {
    /// Ids `0..n`, inserted in that order.
    fn new(n: usize) -> Self {
        Order {
            ids: (0..n).collect(),
            _container: std::marker::PhantomData,
        }
    }

    /// The order after the value `id` was removed (by `remove`): a dense
    /// container moves its last value into the hole.
    fn remove(&mut self, id: usize) {
        let at = self.ids.iter().position(|&i| i == id).unwrap();
        if C::DENSE {
            self.ids.swap_remove(at);
        } else {
            self.ids.remove(at);
        }
    }

    /// The ids before `id`.
    fn before(&self, id: usize) -> &[usize] {
        let at = self.ids.iter().position(|&i| i == id).unwrap();
        &self.ids[..at]
    }
}

/// A container made by `new` holding `n` tracked values, ids `0..n`
/// inserted in that order, and their keys (key `i` for id `i`).
pub fn filled<C: Table<Val>>(
    new: impl Fn() -> C,
    tracker: &Rc<Tracker>,
    n: usize,
) -> (C, Vec<C::Key>) {
    let mut c = new();
    let keys = (0..n).map(|_| c.insert(tracker.make())).collect();
    (c, keys)
}

/// A tracker, and two containers with their keys.
type SourceAndTarget<C, K> = (Rc<Tracker>, (C, Vec<K>), (C, Vec<K>));

/// A `clone_from` source of `n` tracked values (ids `0..n`) and a target of
/// `m` (ids `n..n + m`), with their tracker.
fn source_and_target<C: Table<Val>>(
    new: impl Fn() -> C,
    n: usize,
    m: usize,
) -> SourceAndTarget<C, C::Key> {
    let tracker = Tracker::new();
    let source = filled(&new, &tracker, n);
    let target = filled(&new, &tracker, m);
    (tracker, source, target)
}

/// A container of `n` tracked values (ids `0..n`), with its tracker, its
/// keys and the order it holds them in.
fn filled_in_order<C: Table<Val>>(
    new: impl Fn() -> C,
    n: usize,
) -> (Rc<Tracker>, C, Vec<C::Key>, Order<C>) {
    let tracker = Tracker::new();
    let (c, keys) = filled(new, &tracker, n);
    (tracker, c, keys, Order::new(n))
}

/// The ids of the values in iteration order.
pub fn ids<C: Table<Val>>(c: &C) -> Vec<usize> {
    c.values().map(|v| v.id).collect()
}

/// The container is consistent, and every key in `keys` names the value of
/// its id (its position in `keys`) if that id is in `live`, else nothing.
fn assert_keys<C: Table<Val>>(c: &C, keys: &[C::Key], live: &[usize]) {
    c.check_invariants();
    assert_eq!(c.len(), live.len(), "{}: len", C::NAME);
    for (id, &key) in keys.iter().enumerate() {
        if live.contains(&id) {
            assert_eq!(c.get(key).map(|v| v.id), Some(id), "{key:?}");
        } else {
            assert!(c.get(key).is_none(), "removed {key:?} resolves");
        }
    }
}

/// Asserts the values in `first` were dropped, then drops the container
/// and asserts every value was dropped once.
pub fn assert_dropped_then_rest<C: Table<Val>>(tracker: &Tracker, c: C, first: &[usize]) {
    tracker.assert_dropped_exactly(first);
    c.check_invariants();
    tracker.drop_all(c);
}

/// After the container was emptied by a panicking operation: it is empty
/// and sound, no old key resolves, and an insertion gets a new key.
fn assert_emptied_and_usable<C: Table<Val>>(c: &mut C, keys: &[C::Key], tracker: &Rc<Tracker>) {
    assert!(c.is_empty());
    assert_keys(c, keys, &[]);
    let key = c.insert(tracker.make());
    assert!(!keys.contains(&key), "{key:?} issued again");
    assert_eq!(c.get(key).map(|v| v.id), Some(tracker.created() - 1));
}

// ---------------------------------------------------------------------------
// Plain drop counting.

pub fn dropping_the_container_drops_every_value_once<C: Table<Val>>(new: impl Fn() -> C) {
    let tracker = Tracker::new();
    let (mut c, keys) = filled(new, &tracker, 100);
    // Some holes, some reuse, so not every slot is occupied.
    for key in keys.iter().step_by(3) {
        drop(c.remove(*key));
    }
    for _ in 0..10 {
        c.insert(tracker.make());
    }
    assert_eq!(tracker.total_drops(), 34);
    assert_eq!(c.len(), 76);
    c.check_invariants();
    drop(c);
    assert_eq!(tracker.created(), 110);
    tracker.assert_all_dropped_once();
}

pub fn remove_hands_the_value_over<C: Table<Val>>(new: impl Fn() -> C) {
    let (tracker, mut c, keys, mut order) = filled_in_order(new, 6);
    let value = c.remove(keys[1]).unwrap();
    order.remove(1);
    assert_eq!(value.id, 1);
    assert_eq!(tracker.total_drops(), 0);
    assert_eq!(ids(&c), order.ids);
    drop(value);
    assert_keys(&c, &keys, &[0, 2, 3, 4, 5]);
    assert_dropped_then_rest(&tracker, c, &[1]);
}

pub fn into_iter_partially_consumed_drops_the_rest<C: Table<Val>>(new: impl Fn() -> C) {
    let (tracker, mut c, keys, mut order) = filled_in_order(new, 10);
    drop(c.remove(keys[0]));
    order.remove(0);
    let mut iter = c.into_pairs();
    assert_eq!(iter.len(), 9);
    let (key, first) = iter.next().unwrap();
    assert_eq!((key, first.id), (keys[order.ids[0]], order.ids[0]));
    let (_, second) = iter.next().unwrap();
    assert_eq!(second.id, order.ids[1]);
    assert_eq!(iter.len(), 7);
    tracker.assert_dropped_exactly(&[0]);
    drop(iter);
    let mut dropped: Vec<usize> = order.ids[2..].to_vec();
    dropped.push(0);
    tracker.assert_dropped_exactly(&dropped);
    tracker.drop_all((first, second));
}

pub fn drain_partially_consumed_drops_the_rest_and_empties<C: Table<Val>>(new: impl Fn() -> C) {
    let tracker = Tracker::new();
    let (mut c, keys) = filled(new, &tracker, 10);
    let mut drain = c.drain();
    let taken: Vec<_> = drain.by_ref().take(3).collect();
    assert_eq!(drain.len(), 7);
    drop(drain);
    tracker.assert_dropped_exactly(&[3, 4, 5, 6, 7, 8, 9]);
    let taken_pairs: Vec<_> = taken.iter().map(|(k, v)| (*k, v.id)).collect();
    assert_eq!(taken_pairs, [(keys[0], 0), (keys[1], 1), (keys[2], 2)]);
    tracker.drop_all(taken);
    // Still usable, and its slots are reused with new keys.
    assert_emptied_and_usable(&mut c, &keys, &tracker);
    tracker.drop_all(c);
}

thread_local! {
    /// The drop count of each [`Counted`] value this thread made.
    static COUNTED_DROPS: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// A value that counts its drops in a thread-local array and owns no heap
/// memory, for the test that leaks values on purpose (Miri reports leaked
/// heap memory, such as a leaked [`Val`]'s tracker).
pub struct Counted(pub usize);

impl Counted {
    /// Starts a new count of `n` values; returns them, ids `0..n`.
    fn start(n: usize) -> Vec<Counted> {
        COUNTED_DROPS.with(|d| *d.borrow_mut() = vec![0; n]);
        (0..n).map(Counted).collect()
    }

    fn drops() -> Vec<usize> {
        COUNTED_DROPS.with(|d| d.borrow().clone())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        COUNTED_DROPS.with(|d| d.borrow_mut()[self.0] += 1);
    }
}

/// Leaking a drain is safe: the values it did not yield either stay in the
/// container (`FORGOTTEN_DRAIN_KEEPS_REST`) or are leaked, never dropped
/// twice, and the container stays sound and usable.
pub fn forgotten_drain_stays_sound<C: Table<Counted>>(new: impl Fn() -> C) {
    let mut c = new();
    let mut values = Counted::start(7);
    let last = values.pop().unwrap();
    let keys: Vec<C::Key> = values.into_iter().map(|v| c.insert(v)).collect();
    let mut drain = c.drain();
    let (key, first) = drain.next().unwrap();
    assert_eq!((key, first.0), (keys[0], 0));
    let (_, second) = drain.next().unwrap();
    std::mem::forget(drain);
    c.check_invariants();
    assert!(c.get(keys[0]).is_none() && c.get(keys[1]).is_none());
    if C::FORGOTTEN_DRAIN_KEEPS_REST {
        let left: Vec<usize> = c.values().map(|v| v.0).collect();
        assert_eq!(left, [2, 3, 4, 5]);
        assert_eq!(c.get(keys[4]).map(|v| v.0), Some(4));
    } else {
        // The keys were invalidated when the drain started.
        assert!(c.is_empty());
        assert!(keys.iter().all(|&k| c.get(k).is_none()));
    }
    drop((first, second));
    let key = c.insert(last);
    assert!(!keys.contains(&key));
    c.check_invariants();
    drop(c);
    let expected: &[usize] = if C::FORGOTTEN_DRAIN_KEEPS_REST {
        &[1; 7]
    } else {
        &[1, 1, 0, 0, 0, 0, 1]
    };
    assert_eq!(Counted::drops(), expected);
}

pub fn clear_and_retain_drop_each_removed_value_once<C: Table<Val>>(new: impl Fn() -> C) {
    let tracker = Tracker::new();
    let (mut c, _) = filled(new, &tracker, 10);
    c.retain(|_, v| v.id % 3 != 0);
    tracker.assert_dropped_exactly(&[0, 3, 6, 9]);
    assert_eq!(ids(&c), [1, 2, 4, 5, 7, 8]);
    c.clear();
    tracker.assert_all_dropped_once();
    c.insert(tracker.make());
    assert_dropped_then_rest(&tracker, c, &(0..10).collect::<Vec<_>>());
}

pub fn clone_and_clone_from_drop_counts<C: Table<Val> + Clone>(new: impl Fn() -> C) {
    let tracker = Tracker::new();
    let (source, _) = filled(&new, &tracker, 5);
    let copy = source.clone();
    assert_eq!(tracker.created(), 10);
    assert_eq!(ids(&copy), [5, 6, 7, 8, 9]);
    let (mut target, _) = filled(&new, &tracker, 3); // ids 10, 11, 12
    target.clone_from(&source); // drops 10..13, clones into 13..18
    tracker.assert_dropped_exactly(&[10, 11, 12]);
    assert_eq!(ids(&target), [13, 14, 15, 16, 17]);
    assert!(target.keys().eq(source.keys()));
    tracker.drop_all((source, copy, target));
}

// ---------------------------------------------------------------------------
// A panicking `Drop`.

pub fn panicking_drop_during_clear<C: Table<Val>>(new: impl Fn() -> C) {
    let tracker = Tracker::new();
    let (mut c, keys) = filled(new, &tracker, 10);
    drop(c.remove(keys[2]));
    // With 4-slot blocks: in the second block, the first done, the third not
    // started.
    tracker.drop_panics_in(5, || c.clear());
    // The others were still dropped, and the container is empty and sound.
    tracker.assert_all_dropped_once();
    assert_emptied_and_usable(&mut c, &keys, &tracker);
    tracker.drop_all(c);
}

/// A panicking `Drop` in `retain`: a container that drops as it goes
/// stops at the panic (4's value was detached before its `Drop` ran, the
/// values after it were never visited and stay); one that drops after the
/// pass (`RETAIN_DROPS_AFTER_PASS`) visited every value, and drops every
/// removed value once.
pub fn panicking_drop_during_retain<C: Table<Val>>(new: impl Fn() -> C) {
    let tracker = Tracker::new();
    let (mut c, keys) = filled(new, &tracker, 10);
    tracker.panic_on_drop.set(Some(4));
    let mut visited = Vec::new();
    assert_panics(|| {
        c.retain(|_, v| {
            visited.push(v.id);
            v.id % 2 == 1
        });
    });
    let (seen, kept, dropped): (Vec<usize>, Vec<usize>, Vec<usize>) = if C::RETAIN_DROPS_AFTER_PASS
    {
        ((0..10).collect(), vec![1, 3, 5, 7, 9], vec![0, 2, 4, 6, 8])
    } else {
        ((0..5).collect(), vec![1, 3, 5, 6, 7, 8, 9], vec![0, 2, 4])
    };
    assert_eq!(visited, seen);
    assert_eq!(ids(&c), kept);
    assert_keys(&c, &keys, &kept);
    // The freed slots are reusable.
    let key = c.insert(tracker.make());
    assert!(!keys.contains(&key));
    if !C::RETAIN_DROPS_AFTER_PASS {
        // The last slot freed is 4's.
        use handlekit::Key as _;
        assert_eq!(key.index(), 4);
    }
    assert_dropped_then_rest(&tracker, c, &dropped);
}

pub fn panicking_drop_while_dropping_a_drain<C: Table<Val>>(new: impl Fn() -> C) {
    let tracker = Tracker::new();
    let (mut c, keys) = filled(new, &tracker, 10);
    let mut taken = Vec::new();
    // The drain yields 0..3, then drops 3..10; 6 panics.
    tracker.drop_panics_in(6, || take_then_drop(c.drain(), 3, &mut taken));
    // Every value the drain did not yield was dropped once.
    tracker.assert_dropped_exactly(&[3, 4, 5, 6, 7, 8, 9]);
    let taken: Vec<_> = taken.into_iter().map(|(k, v)| (k, v.id)).collect();
    assert_eq!(taken, [(keys[0], 0), (keys[1], 1), (keys[2], 2)]);
    tracker.assert_all_dropped_once();
    assert_emptied_and_usable(&mut c, &keys, &tracker);
    tracker.drop_all(c);
}

pub fn panicking_drop_while_dropping_the_container<C: Table<Val>>(new: impl Fn() -> C) {
    // The panicking value first, in the middle and last (with 4-slot
    // blocks: in the first, a middle and the last block).
    for panicking in [0, 6, 9] {
        let tracker = Tracker::new();
        let (mut c, keys) = filled(&new, &tracker, 10);
        drop(c.remove(keys[7]));
        tracker.drop_panics_in(panicking, || drop(c));
        tracker.assert_all_dropped_once();
    }
}

pub fn panicking_drop_while_dropping_into_iter<C: Table<Val>>(new: impl Fn() -> C) {
    let tracker = Tracker::new();
    let (c, _) = filled(new, &tracker, 10);
    tracker.panic_on_drop.set(Some(5));
    let mut iter = c.into_pairs();
    let (_, first) = iter.next().unwrap();
    assert_eq!(first.id, 0);
    assert_panics(|| drop(iter));
    tracker.assert_dropped_exactly(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    tracker.drop_all(first);
}

/// A panicking `Drop` of one of the target's old values in `clone_from`:
/// the old values are all dropped once, and the target is sound and still
/// takes a `clone_from`. (Run for the containers with their own
/// `clone_from`; `Clone`'s default assigns a finished clone, so there the
/// old values are dropped by the assignment, after the clone.)
pub fn panicking_drop_of_the_target_during_clone_from<C: Table<Val> + Clone>(new: impl Fn() -> C) {
    let (tracker, (source, _), (mut target, old_keys)) = source_and_target(new, 3, 4);
    tracker.drop_panics_in(4, || {
        target.clone_from(&source);
    });
    // The target's old values were all dropped, and so was any clone made
    // before the panic (a `SlotTable` drops the old values before it
    // clones; a `PackedTable` clones value by value into the old ones).
    if C::CLONE_FROM_PANIC == CloneFromPanic::KeepsClonesMade {
        assert_eq!(tracker.created(), 7, "nothing was cloned yet");
    }
    for id in 0..tracker.created() {
        assert_eq!(tracker.drops(id), usize::from(id >= 3), "value {id}");
    }
    target.check_invariants();
    assert!(target.is_empty());
    assert!(old_keys.iter().all(|&k| target.get(k).is_none()));
    // The target still works.
    target.clone_from(&source);
    target.check_invariants();
    assert!(target.keys().eq(source.keys()));
    tracker.drop_all((source, target));
}

// ---------------------------------------------------------------------------
// A panicking closure or `Clone`.

pub fn panicking_retain_closure<C: Table<Val>>(new: impl Fn() -> C) {
    let (tracker, mut c, keys, mut order) = filled_in_order(new, 10);
    drop(c.remove(keys[3]));
    order.remove(3);
    assert_panics(|| {
        c.retain(|_, v| {
            if v.id == 5 {
                panic::panic_any(BOOM);
            }
            v.id % 2 == 1
        });
    });
    // The even values visited before the panic were removed; the odd ones
    // and the values not visited stay, in their order.
    let visited = order.before(5);
    let (removed, kept): (Vec<usize>, Vec<usize>) = order
        .ids
        .iter()
        .partition(|&&id| id % 2 == 0 && visited.contains(&id));
    assert_eq!(ids(&c), kept);
    let mut live = kept.clone();
    live.sort_unstable();
    assert_keys(&c, &keys, &live);
    let mut dropped = removed;
    dropped.push(3);
    dropped.sort_unstable();
    assert_dropped_then_rest(&tracker, c, &dropped);
}

/// A panicking `insert_with_key` closure leaves the container unchanged,
/// once with a free slot to reuse and once with none (an append, which for
/// 8 values in 4-slot blocks must carve a new block); the key the closure
/// was offered is not live, and the next insertion gets it after all.
pub fn panicking_insert_with_key_closure_leaves_the_container_unchanged<C: Table<Val>>(
    new: impl Fn() -> C,
) {
    use handlekit::Key as _;
    let policies: &[Reuse] = if C::HAS_REUSE {
        &[Reuse::Lifo, Reuse::Fifo { min_free: 0 }]
    } else {
        &[Reuse::Lifo]
    };
    for &reuse in policies {
        let tracker = Tracker::new();
        let (mut c, keys) = filled(&new, &tracker, 8);
        c.set_reuse(reuse);
        for remove_first in [true, false] {
            if remove_first {
                drop(c.remove(keys[1]));
            }
            let before = c.len();
            let snapshot: Vec<_> = c.iter().map(|(k, v)| (k, v.id)).collect();
            let mut seen = None;
            assert_panics(|| {
                c.insert_with_key(|key| {
                    seen = Some(key);
                    panic::panic_any(BOOM)
                })
            });
            c.check_invariants();
            assert_eq!(c.len(), before);
            let after: Vec<_> = c.iter().map(|(k, v)| (k, v.id)).collect();
            assert_eq!(after, snapshot);
            let offered = seen.unwrap();
            assert!(c.get(offered).is_none());
            assert!(!c.contains_key(offered));
            let key = c.insert(tracker.make());
            assert_eq!(key, offered);
            assert_eq!(key.index(), if remove_first { 1 } else { 8 });
            if C::DENSE {
                assert_eq!(c.keys().last(), Some(key), "an insertion appends");
            }
        }
        assert_dropped_then_rest(&tracker, c, &[1]);
    }
}

pub fn panicking_clone_during_clone<C: Table<Val> + Clone>(new: impl Fn() -> C) {
    let (tracker, mut source, keys, mut order) = filled_in_order(new, 8); // ids 0..8
    drop(source.remove(keys[2]));
    order.remove(2);
    // With 4-slot blocks: in the second block.
    tracker.clone_panics_in(5, || source.clone());
    // Clones of the values before 5 (ids 8..) were made and dropped; the
    // source is untouched.
    let cloned = order.before(5).len();
    assert_eq!(tracker.created(), 8 + cloned);
    let mut dropped: Vec<usize> = (8..8 + cloned).collect();
    dropped.push(2);
    tracker.assert_dropped_exactly(&dropped);
    assert_eq!(ids(&source), order.ids);
    assert_keys(&source, &keys, &[0, 1, 3, 4, 5, 6, 7]);
    tracker.drop_all(source);
}

/// A panicking `clone` inside `clone_from`, with the outcome each
/// container documents ([`CloneFromPanic`]); every value is dropped once in
/// the end, and the target still takes a `clone_from`.
pub fn panicking_clone_during_clone_from<C: Table<Val> + Clone>(new: impl Fn() -> C) {
    let (tracker, (source, source_keys), (mut target, target_keys)) = source_and_target(new, 6, 3);
    tracker.clone_panics_in(4, || {
        target.clone_from(&source);
    });
    target.check_invariants();
    // The clones of 0..4 got ids 9..13.
    assert_eq!(tracker.created(), 13);
    match C::CLONE_FROM_PANIC {
        CloneFromPanic::KeepsClonesMade => {
            tracker.assert_dropped_exactly(&[6, 7, 8]);
            assert_eq!(ids(&target), [9, 10, 11, 12]);
        }
        CloneFromPanic::Empty => {
            tracker.assert_dropped_exactly(&[6, 7, 8, 9, 10, 11, 12]);
            assert!(target.is_empty());
            for &key in target_keys.iter().chain(&source_keys) {
                assert!(target.get(key).is_none());
            }
        }
        CloneFromPanic::Unchanged => {
            tracker.assert_dropped_exactly(&[9, 10, 11, 12]);
            assert_eq!(ids(&target), [6, 7, 8]);
        }
    }
    let mut again = target.clone();
    again.clone_from(&source);
    again.check_invariants();
    assert!(again.keys().eq(source.keys()));
    tracker.drop_all((source, target, again));
}

/// A loop body that panics part way through a pass from both ends leaves
/// every value where it was, dropped nowhere; an owning loop that panics
/// drops the values it had not reached, each once.
pub fn panicking_loop_bodies<C: Table<Val>>(new: impl Fn() -> C) {
    let tracker = Tracker::new();
    let (mut c, keys) = filled(new, &tracker, 150);
    let mut removed = Vec::new();
    for (id, key) in keys
        .iter()
        .enumerate()
        .filter(|(id, _)| id % 3 == 1 || (64..80).contains(id))
    {
        drop(c.remove(*key));
        removed.push(id);
    }
    let before = ids(&c);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut iter = c.iter_mut();
        let mut taken = 0;
        while let Some((_, value)) = if taken % 3 == 2 {
            iter.next_back()
        } else {
            iter.next()
        } {
            let _: &mut Val = value;
            taken += 1;
            if taken == before.len() / 2 {
                std::panic::panic_any(BOOM);
            }
        }
    }));
    assert_panicked(result);
    c.check_invariants();
    assert_eq!(ids(&c), before);
    tracker.assert_dropped_exactly(&removed);
    let stop = before[before.len() / 3];
    let result = catch_unwind(AssertUnwindSafe(move || {
        for (_, value) in c.into_pairs() {
            if value.id == stop {
                std::panic::panic_any(BOOM);
            }
        }
    }));
    assert_panicked(result);
    tracker.assert_all_dropped_once();
}

/// Writes one `#[test]` per function of this suite, each calling it with
/// the constructor `$new` (an expression that makes an empty container;
/// its value type is inferred).
#[macro_export]
macro_rules! panic_suite_tests {
    ($new:expr) => {
        use $crate::common::panic_suite as suite;
        $crate::suite_tests! {
            suite(|| $new);
            dropping_the_container_drops_every_value_once,
            remove_hands_the_value_over,
            into_iter_partially_consumed_drops_the_rest,
            drain_partially_consumed_drops_the_rest_and_empties,
            forgotten_drain_stays_sound,
            clear_and_retain_drop_each_removed_value_once,
            clone_and_clone_from_drop_counts,
            panicking_drop_during_clear,
            panicking_drop_during_retain,
            panicking_drop_while_dropping_a_drain,
            panicking_drop_while_dropping_the_container,
            panicking_drop_while_dropping_into_iter,
            panicking_retain_closure,
            panicking_insert_with_key_closure_leaves_the_container_unchanged,
            panicking_clone_during_clone,
            panicking_clone_during_clone_from,
            panicking_loop_bodies,
        }
    };
}

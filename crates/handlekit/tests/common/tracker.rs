//! Drop counting for the panic-safety tests: every value is a [`Val`]
//! registered with a [`Tracker`], which counts the drops of each value
//! separately (so a double drop and a leak are both visible) and can arm one
//! value's `Drop` or `Clone` to panic.

use std::cell::{Cell, RefCell};
use std::panic;
use std::rc::Rc;
use std::sync::Once;

/// The payload of every panic the tests cause on purpose.
pub const BOOM: &str = "intentional test panic";

/// Keeps the intentional panics out of the test output; other panics are
/// reported as usual.
pub fn quiet_intentional_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&BOOM) {
                default(info);
            }
        }));
    });
}

/// Counts the drops of each value it made.
#[derive(Default)]
pub struct Tracker {
    pub drops: RefCell<Vec<usize>>,
    /// The id of the value whose next `Drop` panics.
    pub panic_on_drop: Cell<Option<usize>>,
    /// The id of the value whose next `clone` panics.
    pub panic_on_clone: Cell<Option<usize>>,
}

impl Tracker {
    pub fn new() -> Rc<Self> {
        quiet_intentional_panics();
        Rc::new(Tracker::default())
    }

    pub fn make(self: &Rc<Self>) -> Val {
        let mut drops = self.drops.borrow_mut();
        drops.push(0);
        Val {
            id: drops.len() - 1,
            tracker: Rc::clone(self),
        }
    }

    /// Arms the next `Drop` of value `id` to panic, and asserts that `f`
    /// panics so.
    pub fn drop_panics_in<R>(&self, id: usize, f: impl FnOnce() -> R) {
        self.panic_on_drop.set(Some(id));
        assert_panics(f);
    }

    /// Arms the next `clone` of value `id` to panic, and asserts that `f`
    /// panics so.
    pub fn clone_panics_in<R>(&self, id: usize, f: impl FnOnce() -> R) {
        self.panic_on_clone.set(Some(id));
        assert_panics(f);
    }

    /// Drops `rest` (a container, or whatever holds the last values), then
    /// asserts that every value was dropped exactly once.
    pub fn drop_all<T>(&self, rest: T) {
        drop(rest);
        self.assert_all_dropped_once();
    }

    pub fn drops(&self, id: usize) -> usize {
        self.drops.borrow()[id]
    }

    pub fn created(&self) -> usize {
        self.drops.borrow().len()
    }

    pub fn total_drops(&self) -> usize {
        self.drops.borrow().iter().sum()
    }

    /// Every value made so far was dropped exactly once.
    pub fn assert_all_dropped_once(&self) {
        let drops = self.drops.borrow();
        for (id, &count) in drops.iter().enumerate() {
            assert_eq!(count, 1, "value {id} dropped {count} times");
        }
    }

    /// Exactly the values in `ids` were dropped, each once; no other was.
    pub fn assert_dropped_exactly(&self, ids: &[usize]) {
        let drops = self.drops.borrow();
        for (id, &count) in drops.iter().enumerate() {
            let expected = usize::from(ids.contains(&id));
            assert_eq!(count, expected, "value {id} dropped {count} times");
        }
    }
}

pub struct Val {
    pub id: usize,
    tracker: Rc<Tracker>,
}

impl Clone for Val {
    fn clone(&self) -> Self {
        if self.tracker.panic_on_clone.get() == Some(self.id) {
            self.tracker.panic_on_clone.set(None);
            panic::panic_any(BOOM);
        }
        self.tracker.make()
    }
}

impl Drop for Val {
    fn drop(&mut self) {
        self.tracker.drops.borrow_mut()[self.id] += 1;
        if self.tracker.panic_on_drop.get() == Some(self.id) {
            // Disarm first: a second drop of this value must show up as a
            // count of 2, not as an abort.
            self.tracker.panic_on_drop.set(None);
            panic::panic_any(BOOM);
        }
    }
}

impl std::fmt::Debug for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Val({})", self.id)
    }
}

/// Takes out (through `remove`) and drops the value of every `step`th of
/// `keys`, from the first, where `keys[i]` holds the value with id `i`;
/// returns their ids.
pub fn remove_every<K: Copy>(
    keys: &[K],
    step: usize,
    mut remove: impl FnMut(K) -> Option<Val>,
) -> Vec<usize> {
    let mut ids = Vec::new();
    for (id, &key) in keys.iter().enumerate().step_by(step) {
        assert_eq!(remove(key).map(|v| v.id), Some(id));
        ids.push(id);
    }
    ids
}

/// Takes the first `n` items of `iter` into `taken`, then drops `iter` (a
/// partly consumed drain drops the rest there).
pub fn take_then_drop<I: Iterator>(mut iter: I, n: usize, taken: &mut Vec<I::Item>) {
    taken.extend(iter.by_ref().take(n));
    drop(iter);
}

/// Asserts that `f` panics with the intentional panic.
pub fn assert_panics<R>(f: impl FnOnce() -> R) {
    assert_panicked(panic::catch_unwind(panic::AssertUnwindSafe(f)));
}

/// Asserts that `result` is the intentional panic.
pub fn assert_panicked<R>(result: std::thread::Result<R>) {
    match result {
        Ok(_) => panic!("expected a panic"),
        Err(payload) => assert_eq!(payload.downcast_ref::<&str>(), Some(&BOOM)),
    }
}

/// Sorts `table` by `key` with the sort `method` picks (0: `sort_by`,
/// 1: `sort_unstable_by`, else `sort_by_key`), panicking with [`BOOM`] on
/// call number `panic_at` (from 0) of the comparator or key function.
pub fn sort_panicking_at<T, K: handlekit::Key, O: Ord>(
    table: &mut handlekit::PackedTable<T, K>,
    method: usize,
    panic_at: usize,
    key: impl Fn(&T) -> O,
) -> std::thread::Result<()> {
    let calls = Cell::new(0);
    let tick = || {
        if calls.get() == panic_at {
            panic::panic_any(BOOM);
        }
        calls.set(calls.get() + 1);
    };
    let compare = |a: &T, b: &T| {
        tick();
        key(a).cmp(&key(b))
    };
    panic::catch_unwind(panic::AssertUnwindSafe(|| match method {
        0 => table.sort_by(compare),
        1 => table.sort_unstable_by(compare),
        _ => table.sort_by_key(|v| {
            tick();
            key(v)
        }),
    }))
}

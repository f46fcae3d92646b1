//! "A table of keyed values": the one trait the shared suites
//! (`panic_suite`, `model_suite`, `stale_suite`) are written over, with its
//! implementation for every container that issues its own keys: `SlotTable`
//! in both layouts (`IdTable`, `LookupTable`), `PackedTable`, `Pool` and
//! `Hive`.
//!
//! The trait forwards to the containers' inherent methods. What the
//! containers legitimately do differently (iteration order, when `retain`
//! drops, what a panic in `clone_from` leaves) is stated by its constants,
//! so a suite predicts each container's documented behaviour instead of
//! skipping the check.

use std::fmt::Debug;
use std::iter::FusedIterator;

use handlekit::layout::Layout;
use handlekit::{
    CapacityError, Hive, IdTable, Key, LookupTable, PackedTable, Pool, Reuse, SlotTable,
};

/// What a panicking `clone` inside `clone_from` leaves in the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloneFromPanic {
    /// The target's old values are dropped; the clones made so far stay in
    /// it (`SlotTable`).
    KeepsClonesMade,
    /// The target is left empty; its old values and the clones made are
    /// dropped (`PackedTable`, as documented).
    Empty,
    /// The target is unchanged: `clone_from` is `Clone`'s default (clone,
    /// then assign), so the clones made are dropped (`Pool`, `Hive`).
    Unchanged,
}

/// A container of values of type `T` that issues a key for each insertion.
pub trait Table<T: 'static>: Sized {
    type Key: Key + Debug;

    /// The container's name, for failure messages.
    const NAME: &'static str;
    /// The container has a `Reuse` policy (`set_reuse` does something).
    const HAS_REUSE: bool;
    // The behaviours below default to what `Pool` and `Hive` do; a
    // container that differs overrides them.
    /// Iteration follows the dense order: an insertion appends, a removal
    /// moves the last value into the hole (else iteration is in slot order).
    const DENSE: bool = false;
    /// `retain` drops the values it removes only after the whole pass, so a
    /// panicking `Drop` comes after every value was visited.
    const RETAIN_DROPS_AFTER_PASS: bool = false;
    /// A forgotten (leaked) `drain` leaves the values it did not yield in
    /// the container (else it leaks them and the container is empty).
    const FORGOTTEN_DRAIN_KEEPS_REST: bool = true;
    /// What a panicking `clone` inside `clone_from` leaves.
    const CLONE_FROM_PANIC: CloneFromPanic = CloneFromPanic::Unchanged;

    fn insert(&mut self, value: T) -> Self::Key;
    fn try_insert(&mut self, value: T) -> Result<Self::Key, CapacityError>;
    fn insert_with_key(&mut self, make: impl FnOnce(Self::Key) -> T) -> Self::Key;
    fn try_insert_with_key<E>(
        &mut self,
        make: impl FnOnce(Self::Key) -> Result<T, E>,
    ) -> Result<Self::Key, E>;
    fn with_fixed_capacity(capacity: usize) -> Self;
    fn retired_count(&self) -> usize;
    fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError>;
    fn get_disjoint_mut<const N: usize>(&mut self, keys: [Self::Key; N]) -> Option<[&mut T; N]>;
    /// # Safety
    /// `key` is live.
    unsafe fn get_unchecked(&self, key: Self::Key) -> &T;
    /// # Safety
    /// `key` is live.
    unsafe fn get_unchecked_mut(&mut self, key: Self::Key) -> &mut T;
    fn remove(&mut self, key: Self::Key) -> Option<T>;
    fn get(&self, key: Self::Key) -> Option<&T>;
    fn get_mut(&mut self, key: Self::Key) -> Option<&mut T>;
    fn contains_key(&self, key: Self::Key) -> bool;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool;
    fn capacity(&self) -> usize;
    fn clear(&mut self);
    fn retain(&mut self, keep: impl FnMut(Self::Key, &mut T) -> bool);
    fn check_invariants(&self);
    /// Sets the reuse policy where the container has one (`HAS_REUSE`).
    fn set_reuse(&mut self, reuse: Reuse);

    fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = (Self::Key, &T)> + ExactSizeIterator + FusedIterator;
    fn iter_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = (Self::Key, &mut T)> + ExactSizeIterator + FusedIterator;
    fn keys(
        &self,
    ) -> impl DoubleEndedIterator<Item = Self::Key> + ExactSizeIterator + FusedIterator;
    fn values(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator + FusedIterator;
    fn values_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = &mut T> + ExactSizeIterator + FusedIterator;
    fn drain(&mut self) -> impl ExactSizeIterator<Item = (Self::Key, T)>;
    fn into_pairs(self) -> impl ExactSizeIterator<Item = (Self::Key, T)>;
}

/// The methods every container spells the same way, forwarded to its
/// inherent method of that name.
macro_rules! forward_table_methods {
    () => {
        fn insert(&mut self, value: T) -> K {
            Self::insert(self, value)
        }
        fn try_insert(&mut self, value: T) -> Result<K, CapacityError> {
            Self::try_insert(self, value)
        }
        fn insert_with_key(&mut self, make: impl FnOnce(K) -> T) -> K {
            Self::insert_with_key(self, make)
        }
        fn try_insert_with_key<E>(&mut self, make: impl FnOnce(K) -> Result<T, E>) -> Result<K, E> {
            Self::try_insert_with_key(self, make)
        }
        fn with_fixed_capacity(capacity: usize) -> Self {
            Self::with_fixed_capacity(capacity)
        }
        fn retired_count(&self) -> usize {
            Self::retired_count(self)
        }
        fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
            Self::try_reserve(self, additional)
        }
        fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut T; N]> {
            Self::get_disjoint_mut(self, keys)
        }
        unsafe fn get_unchecked(&self, key: K) -> &T {
            // SAFETY: the caller's guarantee.
            unsafe { Self::get_unchecked(self, key) }
        }
        unsafe fn get_unchecked_mut(&mut self, key: K) -> &mut T {
            // SAFETY: the caller's guarantee.
            unsafe { Self::get_unchecked_mut(self, key) }
        }
        fn remove(&mut self, key: K) -> Option<T> {
            Self::remove(self, key)
        }
        fn get(&self, key: K) -> Option<&T> {
            Self::get(self, key)
        }
        fn get_mut(&mut self, key: K) -> Option<&mut T> {
            Self::get_mut(self, key)
        }
        fn contains_key(&self, key: K) -> bool {
            Self::contains_key(self, key)
        }
        fn len(&self) -> usize {
            Self::len(self)
        }
        fn is_empty(&self) -> bool {
            Self::is_empty(self)
        }
        fn capacity(&self) -> usize {
            Self::capacity(self)
        }
        fn clear(&mut self) {
            Self::clear(self)
        }
        fn retain(&mut self, keep: impl FnMut(K, &mut T) -> bool) {
            Self::retain(self, keep)
        }
        fn check_invariants(&self) {
            Self::check_invariants(self)
        }
        fn iter(
            &self,
        ) -> impl DoubleEndedIterator<Item = (K, &T)> + ExactSizeIterator + FusedIterator {
            Self::iter(self)
        }
        fn iter_mut(
            &mut self,
        ) -> impl DoubleEndedIterator<Item = (K, &mut T)> + ExactSizeIterator + FusedIterator {
            Self::iter_mut(self)
        }
        fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator + FusedIterator {
            Self::keys(self)
        }
        fn values(
            &self,
        ) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator + FusedIterator {
            Self::values(self)
        }
        fn values_mut(
            &mut self,
        ) -> impl DoubleEndedIterator<Item = &mut T> + ExactSizeIterator + FusedIterator {
            Self::values_mut(self)
        }
        fn drain(&mut self) -> impl ExactSizeIterator<Item = (K, T)> {
            Self::drain(self)
        }
        fn into_pairs(self) -> impl ExactSizeIterator<Item = (K, T)> {
            self.into_iter()
        }
    };
}

/// Implements [`Table`] for a container: whether it has a reuse policy,
/// the documented behaviours in which it differs from the defaults (the
/// constants after the `;`), and the forwarded methods (`set_reuse` only
/// where it has a reuse policy).
macro_rules! impl_table {
    ([$($generics:tt)*] $ty:ty, $name:literal, reuse: $reuse:tt; $($differs:tt)*) => {
        impl<$($generics)*> Table<T> for $ty {
            type Key = K;
            const NAME: &'static str = $name;
            const HAS_REUSE: bool = $reuse;
            $($differs)*
            fn set_reuse(&mut self, _reuse: Reuse) {
                impl_table!(@set_reuse $reuse, self, _reuse);
            }
            forward_table_methods!();
        }
    };
    (@set_reuse true, $self:ident, $reuse:ident) => {
        Self::set_reuse($self, $reuse)
    };
    (@set_reuse false, $self:ident, $reuse:ident) => {};
}

// One impl per layout: a downstream impl over every `L: Layout` would
// overlap the `Pool` and `Hive` impls below (the same `SlotTable`, over
// another storage), as the compiler cannot see that no block storage is a
// layout.
impl_table!(
    [T: 'static, K: Key + Debug] IdTable<T, K>, "SlotTable", reuse: true;
    const CLONE_FROM_PANIC: CloneFromPanic = CloneFromPanic::KeepsClonesMade;
);
impl_table!(
    [T: 'static, K: Key + Debug] LookupTable<T, K>, "SlotTable", reuse: true;
    const CLONE_FROM_PANIC: CloneFromPanic = CloneFromPanic::KeepsClonesMade;
);
impl_table!(
    [T: 'static, K: Key + Debug] PackedTable<T, K>, "PackedTable", reuse: true;
    const DENSE: bool = true;
    const RETAIN_DROPS_AFTER_PASS: bool = true;
    const FORGOTTEN_DRAIN_KEEPS_REST: bool = false;
    const CLONE_FROM_PANIC: CloneFromPanic = CloneFromPanic::Empty;
);
impl_table!([T: 'static, K: Key + Debug] Pool<T, K>, "Pool", reuse: false;);
impl_table!([T: 'static, K: Key + Debug] Hive<T, K>, "Hive", reuse: false;);

/// What `IdTable`, `LookupTable` and `PackedTable` add to [`Table`]: a
/// reuse policy, `shrink_to_fit` and detached keys.
pub trait ReuseTable<T: 'static>: Table<T> {
    fn with_reuse(reuse: Reuse) -> Self;
    fn reuse(&self) -> Reuse;
    fn shrink_to_fit(&mut self);
    fn detach(&mut self, key: Self::Key) -> Option<T>;
    fn reattach(&mut self, key: Self::Key, value: T);
    fn is_detached(&self, key: Self::Key) -> bool;
}

/// The [`ReuseTable`] methods, forwarded to the inherent methods.
macro_rules! forward_reuse_table_methods {
    () => {
        fn with_reuse(reuse: Reuse) -> Self {
            Self::with_reuse(reuse)
        }
        fn reuse(&self) -> Reuse {
            Self::reuse(self)
        }
        fn shrink_to_fit(&mut self) {
            Self::shrink_to_fit(self)
        }
        fn detach(&mut self, key: K) -> Option<T> {
            Self::detach(self, key)
        }
        fn reattach(&mut self, key: K, value: T) {
            Self::reattach(self, key, value)
        }
        fn is_detached(&self, key: K) -> bool {
            Self::is_detached(self, key)
        }
    };
}

impl<T: 'static, K: Key + Debug, L: Layout> ReuseTable<T> for SlotTable<T, K, L>
where
    SlotTable<T, K, L>: Table<T, Key = K>,
{
    forward_reuse_table_methods!();
}

impl<T: 'static, K: Key + Debug> ReuseTable<T> for PackedTable<T, K> {
    forward_reuse_table_methods!();
}

/// Inserts `0..n` into two tables that must behave alike (say, one and its
/// deserialized copy): each insertion issues the same key in both, or fails
/// in both. Returns the keys issued.
pub fn insert_into_both<C: Table<u64>>(a: &mut C, b: &mut C, n: u64) -> Vec<C::Key> {
    let mut keys = Vec::new();
    for i in 0..n {
        let (ka, kb) = (a.try_insert(i), b.try_insert(i));
        assert_eq!(ka.is_ok(), kb.is_ok());
        if let (Ok(ka), Ok(kb)) = (ka, kb) {
            assert_eq!(ka, kb, "insertion {i} after the round trip");
            keys.push(ka);
        }
    }
    keys
}

/// Checks a container loaded from the slots
/// `[[1,10],[last,null],[0,null],[2,null]]`, `last` being its key type's
/// last generation: it holds 10 under the key (0, 1), and slot 1 is retired
/// (a vacant slot at the last generation), so (1, `last`) finds nothing.
pub fn assert_loaded_with_a_retired_slot<C: Table<u64>>(c: &C, last: u32) {
    c.check_invariants();
    assert_eq!(c.len(), 1);
    assert_eq!(
        c.retired_count(),
        1,
        "a vacant slot at the last generation is retired"
    );
    let key = |index, generation| C::Key::from_parts(index, generation).unwrap();
    assert_eq!(c.get(key(0, 1)), Some(&10));
    assert_eq!(c.get(key(1, last)), None);
}

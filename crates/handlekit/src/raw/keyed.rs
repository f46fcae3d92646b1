//! Where keys are made: the raw containers are typed by their key type
//! `K` and build their limits from it, so the parts of their own slots
//! always make a valid `K`. This file turns such parts into keys (the one
//! call of `Key::__from_table_parts_unchecked` in the crate) and wraps a
//! container's cursor so that it yields keys; the views above build no
//! key themselves.

use core::marker::PhantomData;

use super::cursor::{Cursor, RunPos, ValueRef, Walk};
use super::slot::SWEEP;
use crate::key::max_generation;
use crate::Key;

/// What a key type allows: how many slots it can index and how many
/// generations it can tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyLimits {
    /// Slots the key can index. Never above `u32::MAX`, so index
    /// `u32::MAX` stays free to mark the end of a free list.
    pub(crate) max_slots: usize,
    /// The last generation a slot may be given before it retires.
    pub(crate) max_generation: u32,
}

impl KeyLimits {
    /// The limits of key type `K`.
    #[inline]
    pub(crate) const fn of<K: Key>() -> Self {
        let by_bits: u64 = if K::INDEX_BITS >= 32 {
            u32::MAX as u64
        } else {
            1u64 << K::INDEX_BITS
        };
        let max_slots = if by_bits > usize::MAX as u64 {
            usize::MAX
        } else {
            by_bits as usize
        };
        KeyLimits {
            max_slots,
            max_generation: max_generation(K::GENERATION_BITS),
        }
    }

    /// These limits with at most `SWEEP` slots, so that no index is a list
    /// end (`SWEEP` or `NO_SLOT`).
    #[inline]
    pub(crate) const fn below_list_ends(self) -> KeyLimits {
        KeyLimits {
            max_slots: if self.max_slots > SWEEP as usize {
                SWEEP as usize
            } else {
                self.max_slots
            },
            max_generation: self.max_generation,
        }
    }

    /// The limits of `K`, narrowed to `narrowed` (which must allow no more
    /// than `K` does: a container may promise fewer slots or generations,
    /// never more).
    ///
    /// # Panics
    ///
    /// If `narrowed` allows more than `K`.
    #[inline]
    pub(crate) const fn within<K: Key>(narrowed: KeyLimits) -> Self {
        let of = Self::of::<K>();
        assert!(narrowed.max_slots <= of.max_slots && narrowed.max_generation <= of.max_generation);
        assert!(narrowed.max_generation >= 1);
        narrowed
    }
}

/// The generation of `key` for a lookup: the same number, but for a key
/// type that promises generations below `2^31` the compiler is told so,
/// and drops the mask the raw layer applies to every generation.
#[inline(always)]
pub(crate) fn lookup_generation<K: Key>(key: K) -> u32 {
    let generation = key.generation();
    if K::__GENERATION_TRUST.0 {
        // SAFETY: the key type made its `GenerationTrust` with `trusted`,
        // whose contract is exactly this.
        unsafe { core::hint::assert_unchecked(generation < 1 << 31) };
    }
    generation
}

/// The key for a slot index and generation of a raw container whose key
/// type is `K`.
///
/// # Safety
///
/// `index` and `generation` are those of a slot of a container made with
/// limits no wider than `KeyLimits::of::<K>()` (`KeyLimits::within`), that
/// holds or held a value under that generation: then the index is below
/// `2^INDEX_BITS` and the generation lies in `1..=max_generation`, as
/// [`Key::__from_table_parts_unchecked`] requires. Every occupied slot of
/// the raw layer holds such a generation (generations start at 1, never
/// pass the limit, and deserialization refuses 0 and larger ones), and
/// every index is below the container's `max_slots`.
#[inline(always)]
pub(super) unsafe fn table_key<K: Key>(index: usize, generation: u32) -> K {
    debug_assert!(K::from_parts(index, generation).is_some());
    // The generation is at least 1 (the caller's guarantee); the optimizer
    // is told so here, once, and a key type may then build its
    // `NonZero` generation with a checked call that folds away (as `Id`
    // does) rather than an unchecked one of its own.
    // SAFETY: the caller's guarantee is the method's.
    unsafe {
        core::hint::assert_unchecked(generation != 0);
        K::__from_table_parts_unchecked(index as u32, generation)
    }
}

/// A `(index, generation, value)` item of a container whose key type is
/// `K`, as `(key, value)`.
///
/// # Safety
///
/// As for [`table_key`]: the item comes from such a container's own slots.
#[inline(always)]
unsafe fn keyed<K: Key, V>((index, generation, value): (usize, u32, V)) -> (K, V) {
    // SAFETY: the caller's guarantee.
    (unsafe { table_key::<K>(index, generation) }, value)
}

/// A raw cursor (or a part of one) over the slots of a container whose key
/// type is `K`, yielding `(key, value)`. Made only by the raw containers
/// (`keyed_iter`, `keyed_iter_mut`), so safe code above gets keys from it
/// without vouching for them.
pub(crate) struct Keyed<C, K> {
    /// Invariant: every item the cursor yields, and every item of every
    /// part it is split into, is a slot of a container typed by `K`, so
    /// its parts make a valid `K` (`table_key`).
    cursor: C,
    _key: PhantomData<fn() -> K>,
}

impl<C, K> Keyed<C, K> {
    /// Wraps `cursor`.
    ///
    /// # Safety
    ///
    /// `cursor` walks the slots of a container whose key type is `K` (the
    /// invariant on `cursor`).
    #[inline(always)]
    pub(super) unsafe fn new(cursor: C) -> Self {
        Keyed {
            cursor,
            _key: PhantomData,
        }
    }
}

impl<C: Clone, K> Clone for Keyed<C, K> {
    #[inline]
    fn clone(&self) -> Self {
        Keyed {
            cursor: self.cursor.clone(),
            _key: PhantomData,
        }
    }
}

impl<'a, T, W: Walk<T>, R: ValueRef<T>, K: Key, Q: RunPos<T, W::Ptrs>>
    Keyed<Cursor<'a, T, W, R, Q>, K>
{
    /// The same cursor with the positions of its runs kept as `Q2` (see
    /// [`RunPos`]).
    #[inline]
    pub(crate) fn with_pos<Q2: RunPos<T, W::Ptrs>>(self) -> Keyed<Cursor<'a, T, W, R, Q2>, K> {
        Keyed {
            cursor: self.cursor.with_pos(),
            _key: PhantomData,
        }
    }

    /// Live values left.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.cursor.len()
    }
}

impl<'a, T, W: Walk<T>, R: ValueRef<T>, K: Key, Q: RunPos<T, W::Ptrs>> Iterator
    for Keyed<Cursor<'a, T, W, R, Q>, K>
{
    type Item = (K, R);

    #[inline(always)]
    fn next(&mut self) -> Option<(K, R)> {
        // SAFETY: the cursor walks a container typed by `K` (its invariant).
        self.cursor.next().map(|item| unsafe { keyed(item) })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.cursor.size_hint()
    }

    /// The cursor's own fold.
    #[inline]
    fn fold<B, F: FnMut(B, (K, R)) -> B>(self, init: B, mut f: F) -> B {
        // `move`, as in `ValueRefs::fold` (`iter.rs`).
        self.cursor.fold_items(init, move |acc, item| {
            // SAFETY: as in `next`.
            f(acc, unsafe { keyed(item) })
        })
    }
}

impl<'a, T, W: Walk<T>, R: ValueRef<T>, K: Key, Q: RunPos<T, W::Ptrs>> DoubleEndedIterator
    for Keyed<Cursor<'a, T, W, R, Q>, K>
{
    #[inline(always)]
    fn next_back(&mut self) -> Option<(K, R)> {
        // SAFETY: as in `next`.
        self.cursor.next_back().map(|item| unsafe { keyed(item) })
    }
}

#[cfg(any(test, feature = "rayon"))]
impl<C, K, V> super::SplitCursor for Keyed<C, K>
where
    C: super::SplitCursor<Item = (usize, u32, V)>,
    K: Key,
{
    type Item = (K, V);

    #[inline]
    fn split_part(self) -> (Self, Option<Self>) {
        let (left, right) = self.cursor.split_part();
        // SAFETY: the parts of a cursor walk the slots it walked (the
        // `SplitCursor` contract), so they keep its invariant.
        unsafe { (Keyed::new(left), right.map(|right| Keyed::new(right))) }
    }

    #[inline]
    fn fold_part<B>(self, init: B, mut f: impl FnMut(B, (K, V)) -> B) -> B {
        self.cursor.fold_part(init, |acc, item| {
            // SAFETY: as in `Keyed::next`.
            f(acc, unsafe { keyed(item) })
        })
    }
}

/// The `(index, generation)` of a key that a table of key type `K` could
/// issue (index below the key's slot limit, generation in
/// `1..=max_generation`): checked once here, so a [`KeyedStore`] can fill
/// a slot with them.
#[derive(Clone, Copy)]
pub(crate) struct Parts<K> {
    /// Invariant: with `generation`, makes a valid `K` (`table_key`).
    index: usize,
    generation: u32,
    _key: PhantomData<fn() -> K>,
}

impl<K: Key> Parts<K> {
    /// The parts of `key` (its lookup generation), if a table could issue
    /// them.
    #[inline(always)]
    pub(crate) fn of(key: K) -> Option<Self> {
        let (index, generation) = (key.index(), lookup_generation(key));
        let fits = index < KeyLimits::of::<K>().max_slots
            && generation >= 1
            && generation <= max_generation(K::GENERATION_BITS);
        fits.then_some(Parts {
            index,
            generation,
            _key: PhantomData,
        })
    }

    /// The slot index.
    #[inline(always)]
    pub(crate) fn index(self) -> usize {
        self.index
    }

    /// The generation.
    #[inline(always)]
    pub(crate) fn generation(self) -> u32 {
        self.generation
    }
}

/// The slots of a container that a removing iterator (`Drain`,
/// `IntoIter`) takes values out of, lowest index first: a `SlotArena`, a
/// secondary map's `KeyedStore`, a `RawPool` or a `RawHive`, each typed by
/// the key type it hands out.
///
/// # Safety
///
/// Every `(index, generation)` that `take_slot` returns names a slot of
/// the container under the generation its value held, within limits no
/// wider than those of `Self::Key`: what `table_key` asks, so that the
/// provided [`take_next`](Self::take_next) makes the key.
pub unsafe trait TakeSlots<T> {
    /// The container's key type.
    type Key: crate::Key;
    /// Takes out the value at the lowest occupied index at or after
    /// `from`, with its index and generation.
    fn take_slot(&mut self, from: usize) -> Option<(usize, u32, T)>;
    /// Live values left.
    fn len(&self) -> usize;
    /// Drops every value left (a `Drain` dropped early).
    fn clear(&mut self);
    /// [`take_slot`](Self::take_slot), with the value's key.
    #[inline]
    fn take_next(&mut self, from: usize) -> Option<(usize, Self::Key, T)> {
        let (index, generation, value) = self.take_slot(from)?;
        // SAFETY: a slot of this container under the generation its value
        // held, within the key type's limits (the trait's contract).
        Some((index, unsafe { table_key(index, generation) }, value))
    }
}

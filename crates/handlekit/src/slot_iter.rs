//! Iterators in slot order, shared by the tables built on the slot store
//! ([`IdTable`](crate::IdTable) and [`SecondaryMap`](crate::SecondaryMap)).

use crate::raw::{RawIter, RawIterMut};
use crate::{Id, Key};

/// The key for a slot index and generation that a container's own slots
/// hold.
///
/// # Safety
///
/// `index` and `generation` must name a value the container holds (or
/// held), with its limits taken from `K` (`KeyLimits::of::<K>()`): then
/// the index is below `2^INDEX_BITS` and the generation lies in
/// `1..=max_generation(GENERATION_BITS)`, as
/// [`Key::__from_table_parts_unchecked`] requires. Every occupied slot of
/// the raw layer holds such a generation (generations start at 1, never
/// pass the limit, and deserialization refuses 0 and larger ones), and
/// every index is below the container's `max_slots`.
#[inline]
pub(crate) unsafe fn table_key<K: Key>(index: usize, generation: u32) -> K {
    debug_assert!(K::from_parts(index, generation).is_some());
    // SAFETY: the caller's guarantee is the method's.
    unsafe { K::__from_table_parts_unchecked(index as u32, generation) }
}

/// Generates the `Iterator` plumbing shared by the table iterators: exact
/// size, fusing, and a `fold` that takes the word-at-a-time fast path.
macro_rules! raw_iterator {
    ($name:ident<$($lt:lifetime,)? $($param:ident $(: $bound:path)?),*>, $item:ty, |$index:ident, $generation:ident, $value:ident| $map:expr) => {
        impl<$($lt,)? $($param $(: $bound)?),*> Iterator for $name<$($lt,)? $($param),*> {
            type Item = $item;

            #[inline(always)]
            fn next(&mut self) -> Option<$item> {
                let ($index, $generation, $value) = self.raw.next()?;
                Some($map)
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.raw.len(), Some(self.raw.len()))
            }

            #[inline]
            fn count(self) -> usize {
                self.raw.len()
            }

            #[inline]
            fn fold<B, F: FnMut(B, $item) -> B>(self, init: B, mut f: F) -> B {
                self.raw
                    .fold_items(init, |acc, ($index, $generation, $value)| f(acc, $map))
            }
        }

        impl<$($lt,)? $($param $(: $bound)?),*> ExactSizeIterator for $name<$($lt,)? $($param),*> {
            #[inline]
            fn len(&self) -> usize {
                self.raw.len()
            }
        }

        impl<$($lt,)? $($param $(: $bound)?),*> DoubleEndedIterator for $name<$($lt,)? $($param),*> {
            #[inline(always)]
            fn next_back(&mut self) -> Option<$item> {
                let ($index, $generation, $value) = self.raw.next_back()?;
                Some($map)
            }
        }

        impl<$($lt,)? $($param $(: $bound)?),*> core::iter::FusedIterator for $name<$($lt,)? $($param),*> {}
    };
}

/// Writes the five borrowing iterator types of a table (`Iter`, `IterMut`,
/// `Keys`, `Values`, `ValuesMut`) over the raw cursors `$shared<'a, T>` and
/// `$exclusive<'a, T>` (names in scope where the macro is called), with a
/// doc example each. `$owner` is the container whose methods the docs link
/// to, `$noun` the module that exports the types, and `$make` an expression
/// for a container holding `1` and `2`.
macro_rules! borrowing_iterators {
    (
        owner: $owner:expr,
        noun: $noun:expr,
        make: $make:expr,
        key: $key:ty,
        shared: $shared:ident,
        exclusive: $exclusive:ident $(,)?
    ) => {
        #[doc = concat!("Iterator over `(key, &value)`; see [`", $owner, "::iter`](crate::", $owner, "::iter).\n\n```")]
        #[doc = concat!("let c = ", $make, ";")]
        #[doc = concat!("let iter: handlekit::", $noun, "::Iter<'_, i32> = c.iter();")]
        #[doc = "assert_eq!(iter.len(), 2);\n```"]
        pub struct Iter<'a, T, K: Key = $key> {
            raw: $shared<'a, T>,
            _key: core::marker::PhantomData<fn(K) -> K>,
        }

        $crate::slot_iter::raw_iterator!(
            Iter<'a, T, K: Key>,
            (K, &'a T),
            |index, generation, value| {
                // SAFETY: the raw cursor yields this container's own slots,
                // which is what `table_key` asks.
                (unsafe { $crate::slot_iter::table_key::<K>(index, generation) }, value)
            }
        );

        impl<T, K: Key> Clone for Iter<'_, T, K> {
            fn clone(&self) -> Self {
                Iter {
                    raw: self.raw.clone(),
                    _key: core::marker::PhantomData,
                }
            }
        }

        impl<T: core::fmt::Debug, K: Key> core::fmt::Debug for Iter<'_, T, K> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_list().entries(self.clone()).finish()
            }
        }

        #[doc = concat!("Iterator over `(key, &mut value)`; see [`", $owner, "::iter_mut`](crate::", $owner, "::iter_mut).\n\n```")]
        #[doc = concat!("let mut c = ", $make, ";")]
        #[doc = concat!("let iter: handlekit::", $noun, "::IterMut<'_, i32> = c.iter_mut();")]
        #[doc = "iter.for_each(|(_, v)| *v *= 2);\nassert_eq!(c.values().sum::<i32>(), 6);\n```"]
        pub struct IterMut<'a, T, K: Key = $key> {
            raw: $exclusive<'a, T>,
            _key: core::marker::PhantomData<fn(K) -> K>,
        }

        $crate::slot_iter::raw_iterator!(
            IterMut<'a, T, K: Key>,
            (K, &'a mut T),
            |index, generation, value| {
                // SAFETY: the raw cursor yields this container's own slots,
                // which is what `table_key` asks.
                (unsafe { $crate::slot_iter::table_key::<K>(index, generation) }, value)
            }
        );

        impl<T, K: Key> core::fmt::Debug for IterMut<'_, T, K> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct("IterMut")
                    .field("remaining", &self.raw.len())
                    .finish()
            }
        }

        #[doc = concat!("Iterator over the live values; see [`", $owner, "::values`](crate::", $owner, "::values).\n\n```")]
        #[doc = concat!("let c = ", $make, ";")]
        #[doc = concat!("let values: handlekit::", $noun, "::Values<'_, i32> = c.values();")]
        #[doc = "assert_eq!(values.max(), Some(&2));\n```"]
        pub struct Values<'a, T> {
            raw: $shared<'a, T>,
        }

        $crate::slot_iter::raw_iterator!(Values<'a, T>, &'a T, |_index, _generation, value| value);

        impl<T> Clone for Values<'_, T> {
            fn clone(&self) -> Self {
                Values {
                    raw: self.raw.clone(),
                }
            }
        }

        impl<T: core::fmt::Debug> core::fmt::Debug for Values<'_, T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_list().entries(self.clone()).finish()
            }
        }

        #[doc = concat!("Iterator over the live values, mutably; see [`", $owner, "::values_mut`](crate::", $owner, "::values_mut).\n\n```")]
        #[doc = concat!("let mut c = ", $make, ";")]
        #[doc = concat!("let values: handlekit::", $noun, "::ValuesMut<'_, i32> = c.values_mut();")]
        #[doc = "values.for_each(|v| *v += 1);\nassert_eq!(c.values().sum::<i32>(), 5);\n```"]
        pub struct ValuesMut<'a, T> {
            raw: $exclusive<'a, T>,
        }

        $crate::slot_iter::raw_iterator!(ValuesMut<'a, T>, &'a mut T, |_index, _generation, value| {
            value
        });

        impl<T> core::fmt::Debug for ValuesMut<'_, T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct("ValuesMut")
                    .field("remaining", &self.raw.len())
                    .finish()
            }
        }

        #[doc = concat!("Iterator over the keys of live values; see [`", $owner, "::keys`](crate::", $owner, "::keys).\n\n```")]
        #[doc = concat!("let c = ", $make, ";")]
        #[doc = concat!("let keys: handlekit::", $noun, "::Keys<'_, i32> = c.keys();")]
        #[doc = "assert_eq!(keys.count(), 2);\n```"]
        pub struct Keys<'a, T, K: Key = $key> {
            inner: Iter<'a, T, K>,
        }

        impl<T, K: Key> Iterator for Keys<'_, T, K> {
            type Item = K;

            #[inline(always)]
            fn next(&mut self) -> Option<K> {
                self.inner.next().map(|(key, _)| key)
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.inner.size_hint()
            }

            #[inline]
            fn fold<B, F: FnMut(B, K) -> B>(self, init: B, mut f: F) -> B {
                self.inner.fold(init, |acc, (key, _)| f(acc, key))
            }
        }

        impl<T, K: Key> ExactSizeIterator for Keys<'_, T, K> {}
        impl<T, K: Key> DoubleEndedIterator for Keys<'_, T, K> {
            #[inline]
            fn next_back(&mut self) -> Option<K> {
                self.inner.next_back().map(|(key, _)| key)
            }
        }
        impl<T, K: Key> core::iter::FusedIterator for Keys<'_, T, K> {}

        impl<T, K: Key> Clone for Keys<'_, T, K> {
            fn clone(&self) -> Self {
                Keys {
                    inner: self.inner.clone(),
                }
            }
        }

        impl<T, K: Key> core::fmt::Debug for Keys<'_, T, K> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_list().entries(self.clone()).finish()
            }
        }

        impl<'a, T, K: Key> Iter<'a, T, K> {
            #[inline]
            pub(crate) fn new(raw: $shared<'a, T>) -> Self {
                Iter {
                    raw,
                    _key: core::marker::PhantomData,
                }
            }
        }

        impl<'a, T, K: Key> IterMut<'a, T, K> {
            #[inline]
            pub(crate) fn new(raw: $exclusive<'a, T>) -> Self {
                IterMut {
                    raw,
                    _key: core::marker::PhantomData,
                }
            }
        }

        impl<'a, T> Values<'a, T> {
            #[inline]
            pub(crate) fn new(raw: $shared<'a, T>) -> Self {
                Values { raw }
            }
        }

        impl<'a, T> ValuesMut<'a, T> {
            #[inline]
            pub(crate) fn new(raw: $exclusive<'a, T>) -> Self {
                ValuesMut { raw }
            }
        }

        impl<'a, T, K: Key> Keys<'a, T, K> {
            #[inline]
            pub(crate) fn new(raw: $shared<'a, T>) -> Self {
                Keys {
                    inner: Iter::new(raw),
                }
            }
        }
    };
}

// The iterators of the tables on the slot store, shared by `IdTable` and
// `SecondaryMap` (both re-export them).
borrowing_iterators!(
    owner: "IdTable",
    noun: "id_table",
    make: "{ let mut t = handlekit::IdTable::new(); t.insert(1); t.insert(2); t }",
    key: Id,
    shared: RawIter,
    exclusive: RawIterMut,
);

/// Generates the `Iterator` impls of the iterators that remove values as
/// they go (`Drain`, `IntoIter`): both walk the arena with `take_next`.
macro_rules! taking_iterator {
    // `$name<$($lt,)? $($param),*>`: the type as declared, in its own
    // parameter order; `T` is the value type and `K` the key type.
    ($name:ident<$($lt:lifetime,)? $($param:ident),*>) => {
        impl<$($lt,)? T, K: Key> Iterator for $name<$($lt,)? $($param),*> {
            type Item = (K, T);

            #[inline]
            fn next(&mut self) -> Option<(K, T)> {
                let (index, generation, value) = self.arena.take_next(self.next)?;
                self.next = index + 1;
                // SAFETY: `take_next` took the value from the table's own
                // slot, which is what `table_key` asks.
                Some((unsafe { crate::slot_iter::table_key::<K>(index, generation) }, value))
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.arena.len(), Some(self.arena.len()))
            }
        }

        impl<$($lt,)? T, K: Key> ExactSizeIterator for $name<$($lt,)? $($param),*> {}
        impl<$($lt,)? T, K: Key> core::iter::FusedIterator for $name<$($lt,)? $($param),*> {}

        impl<$($lt,)? T, K: Key> core::fmt::Debug for $name<$($lt,)? $($param),*> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("remaining", &self.arena.len())
                    .finish()
            }
        }
    };
}

pub(crate) use {borrowing_iterators, raw_iterator, taking_iterator};

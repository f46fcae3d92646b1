//! Iterators in slot order, shared by the tables built on the slot store
//! ([`IdTable`](crate::IdTable) and [`SecondaryMap`](crate::SecondaryMap)).

use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;

use crate::raw::{RawIter, RawIterMut};
use crate::{Id, Key};

/// The key for a slot index and generation that a table's own slots hold.
/// Indices fit in `u32` and generations are in range (the raw layer's
/// invariants).
#[inline]
pub(crate) fn table_key<K: Key>(index: usize, generation: u32) -> K {
    debug_assert!(K::from_parts(index, generation).is_some());
    K::__from_table_parts(index as u32, generation)
}

/// Generates the `Iterator` plumbing shared by the table iterators: exact
/// size, fusing, and a `fold` that takes the word-at-a-time fast path.
macro_rules! raw_iterator {
    ($name:ident<$($lt:lifetime,)? $($param:ident $(: $bound:path)?),*>, $item:ty, |$index:ident, $generation:ident, $value:ident| $map:expr) => {
        impl<$($lt,)? $($param $(: $bound)?),*> Iterator for $name<$($lt,)? $($param),*> {
            type Item = $item;

            #[inline]
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

        impl<$($lt,)? $($param $(: $bound)?),*> core::iter::FusedIterator for $name<$($lt,)? $($param),*> {}
    };
}

/// Iterator over `(key, &value)`; see [`IdTable::iter`](crate::IdTable::iter).
pub struct Iter<'a, T, K: Key = Id> {
    raw: RawIter<'a, T>,
    _key: PhantomData<fn(K) -> K>,
}

raw_iterator!(
    Iter<'a, T, K: Key>,
    (K, &'a T),
    |index, generation, value| (table_key::<K>(index, generation), value)
);

impl<T, K: Key> Clone for Iter<'_, T, K> {
    fn clone(&self) -> Self {
        Iter {
            raw: self.raw.clone(),
            _key: PhantomData,
        }
    }
}

impl<T: fmt::Debug, K: Key> fmt::Debug for Iter<'_, T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Iterator over `(key, &mut value)`; see [`IdTable::iter_mut`](crate::IdTable::iter_mut).
pub struct IterMut<'a, T, K: Key = Id> {
    raw: RawIterMut<'a, T>,
    _key: PhantomData<fn(K) -> K>,
}

raw_iterator!(
    IterMut<'a, T, K: Key>,
    (K, &'a mut T),
    |index, generation, value| (table_key::<K>(index, generation), value)
);

impl<T, K: Key> fmt::Debug for IterMut<'_, T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IterMut")
            .field("remaining", &self.raw.len())
            .finish()
    }
}

/// Iterator over the live values; see [`IdTable::values`](crate::IdTable::values).
pub struct Values<'a, T> {
    raw: RawIter<'a, T>,
}

raw_iterator!(Values<'a, T>, &'a T, |_index, _generation, value| value);

impl<T> Clone for Values<'_, T> {
    fn clone(&self) -> Self {
        Values {
            raw: self.raw.clone(),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Values<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Iterator over the live values, mutably; see [`IdTable::values_mut`](crate::IdTable::values_mut).
pub struct ValuesMut<'a, T> {
    raw: RawIterMut<'a, T>,
}

raw_iterator!(ValuesMut<'a, T>, &'a mut T, |_index, _generation, value| {
    value
});

impl<T> fmt::Debug for ValuesMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValuesMut")
            .field("remaining", &self.raw.len())
            .finish()
    }
}

/// Iterator over the keys of live values; see [`IdTable::keys`](crate::IdTable::keys).
pub struct Keys<'a, T, K: Key = Id> {
    inner: Iter<'a, T, K>,
}

impl<T, K: Key> Iterator for Keys<'_, T, K> {
    type Item = K;

    #[inline]
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
impl<T, K: Key> FusedIterator for Keys<'_, T, K> {}

impl<T, K: Key> Clone for Keys<'_, T, K> {
    fn clone(&self) -> Self {
        Keys {
            inner: self.inner.clone(),
        }
    }
}

impl<T, K: Key> fmt::Debug for Keys<'_, T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

impl<'a, T, K: Key> Iter<'a, T, K> {
    #[inline]
    pub(crate) fn new(raw: RawIter<'a, T>) -> Self {
        Iter {
            raw,
            _key: PhantomData,
        }
    }
}

impl<'a, T, K: Key> IterMut<'a, T, K> {
    #[inline]
    pub(crate) fn new(raw: RawIterMut<'a, T>) -> Self {
        IterMut {
            raw,
            _key: PhantomData,
        }
    }
}

impl<'a, T> Values<'a, T> {
    #[inline]
    pub(crate) fn new(raw: RawIter<'a, T>) -> Self {
        Values { raw }
    }
}

impl<'a, T> ValuesMut<'a, T> {
    #[inline]
    pub(crate) fn new(raw: RawIterMut<'a, T>) -> Self {
        ValuesMut { raw }
    }
}

impl<'a, T, K: Key> Keys<'a, T, K> {
    #[inline]
    pub(crate) fn new(raw: RawIter<'a, T>) -> Self {
        Keys {
            inner: Iter::new(raw),
        }
    }
}

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
                Some((crate::slot_iter::table_key::<K>(index, generation), value))
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

pub(crate) use {raw_iterator, taking_iterator};

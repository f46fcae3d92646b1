//! Rayon support: one producer for every container's parallel iteration.
//! It cuts a raw cursor through [`SplitCursor`] (a slot store's at a
//! 64-slot chunk of its state words, for [`IdTable`](crate::IdTable)
//! and [`SecondaryMap`](crate::SecondaryMap); a `Pool`'s or `Hive`'s at a
//! block boundary) and folds each part with the cursor's own fast fold.

use rayon::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer, UnindexedProducer};

use crate::raw::store::{RawIter, RawIterMut};
use crate::raw::SplitCursor;
use crate::slot_iter::table_key;
use crate::Key;

/// Writes `ParIter` and `ParIterMut` over the raw cursors `$shared<'a, T>`
/// and `$exclusive<'a, T>` (names in scope where the macro is called): the
/// structs, `Debug`, `ParallelIterator` through [`drive_keyed`], and a
/// `new` over the cursor. `$owner` is the container the docs link to,
/// `$noun` the module that exports the types, and `$make` an expression for
/// a container holding `1` and `2`.
macro_rules! par_iterators {
    (
        owner: $owner:expr,
        noun: $noun:expr,
        make: $make:expr,
        key: $key:ty,
        shared: $shared:ident,
        exclusive: $exclusive:ident $(,)?
    ) => {
        #[doc = concat!("Parallel iterator over `(key, &value)`; see [`", $owner, "::par_iter`](crate::", $owner, "::par_iter).\n\n```")]
        #[doc = "use rayon::prelude::*;"]
        #[doc = concat!("let c = ", $make, ";")]
        #[doc = concat!("let iter: handlekit::", $noun, "::ParIter<'_, i32> = c.par_iter();")]
        #[doc = "assert_eq!(iter.count(), 2);\n```"]
        pub struct ParIter<'a, T, K: $crate::Key = $key> {
            raw: $shared<'a, T>,
            _key: core::marker::PhantomData<fn(K) -> K>,
        }

        #[doc = concat!("Parallel iterator over `(key, &mut value)`; see [`", $owner, "::par_iter_mut`](crate::", $owner, "::par_iter_mut).\n\n```")]
        #[doc = "use rayon::prelude::*;"]
        #[doc = concat!("let mut c = ", $make, ";")]
        #[doc = concat!("let iter: handlekit::", $noun, "::ParIterMut<'_, i32> = c.par_iter_mut();")]
        #[doc = "iter.for_each(|(_, v)| *v += 1);\nassert_eq!(c.values().sum::<i32>(), 5);\n```"]
        pub struct ParIterMut<'a, T, K: $crate::Key = $key> {
            raw: $exclusive<'a, T>,
            _key: core::marker::PhantomData<fn(K) -> K>,
        }

        impl<'a, T, K: $crate::Key> ParIter<'a, T, K> {
            pub(crate) fn new(raw: $shared<'a, T>) -> Self {
                ParIter {
                    raw,
                    _key: core::marker::PhantomData,
                }
            }
        }

        impl<'a, T, K: $crate::Key> ParIterMut<'a, T, K> {
            pub(crate) fn new(raw: $exclusive<'a, T>) -> Self {
                ParIterMut {
                    raw,
                    _key: core::marker::PhantomData,
                }
            }
        }

        impl<T, K: $crate::Key> core::fmt::Debug for ParIter<'_, T, K> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct("ParIter")
                    .field("remaining", &self.raw.len())
                    .finish()
            }
        }

        impl<T, K: $crate::Key> core::fmt::Debug for ParIterMut<'_, T, K> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct("ParIterMut")
                    .field("remaining", &self.raw.len())
                    .finish()
            }
        }

        impl<'a, T: Sync, K: $crate::Key> rayon::iter::ParallelIterator for ParIter<'a, T, K> {
            type Item = (K, &'a T);

            fn drive_unindexed<C>(self, consumer: C) -> C::Result
            where
                C: rayon::iter::plumbing::UnindexedConsumer<Self::Item>,
            {
                $crate::slot_par::drive_keyed(self.raw, consumer)
            }
        }

        impl<'a, T: Send, K: $crate::Key> rayon::iter::ParallelIterator for ParIterMut<'a, T, K> {
            type Item = (K, &'a mut T);

            fn drive_unindexed<C>(self, consumer: C) -> C::Result
            where
                C: rayon::iter::plumbing::UnindexedConsumer<Self::Item>,
            {
                $crate::slot_par::drive_keyed(self.raw, consumer)
            }
        }
    };
}

pub(crate) use par_iterators;

// The slot store's pair, shared by `IdTable` and `SecondaryMap`.
par_iterators!(
    owner: "IdTable",
    noun: "id_table",
    make: "handlekit::IdTable::<i32>::from_iter_values([1, 2])",
    key: crate::Id,
    shared: RawIter,
    exclusive: RawIterMut,
);

/// A part of a raw cursor, as rayon splits and folds it; `map` turns
/// a raw item into the public one.
struct Parts<C, F> {
    cursor: C,
    map: F,
}

impl<C, F, I> UnindexedProducer for Parts<C, F>
where
    C: SplitCursor + Send,
    F: Fn(C::Item) -> I + Copy + Send,
{
    type Item = I;

    fn split(self) -> (Self, Option<Self>) {
        let map = self.map;
        let (left, right) = self.cursor.split_part();
        (
            Parts { cursor: left, map },
            right.map(|cursor| Parts { cursor, map }),
        )
    }

    fn fold_with<G: Folder<I>>(self, folder: G) -> G {
        // The folder is asked whether it is full only between parts: the
        // raw fold cannot stop early, and it is what makes a pass fast.
        if folder.full() {
            return folder;
        }
        let map = self.map;
        self.cursor
            .fold_part(folder, |folder, item| folder.consume(map(item)))
    }
}

/// Drives `consumer` over the items of a keyed container's raw `cursor`,
/// each as `(key, value)`, in parts as the cursor splits.
pub(crate) fn drive_keyed<K, V, C, Co>(cursor: C, consumer: Co) -> Co::Result
where
    K: Key,
    V: Send,
    C: SplitCursor<Item = (usize, u32, V)> + Send,
    Co: UnindexedConsumer<(K, V)>,
{
    let map = |(index, generation, value)| {
        // SAFETY: the cursor yields its container's own slots, which is
        // what `table_key` asks.
        (unsafe { table_key::<K>(index, generation) }, value)
    };
    bridge_unindexed(Parts { cursor, map }, consumer)
}

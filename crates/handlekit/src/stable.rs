//! What the containers with stable addresses ([`Pool`](crate::Pool) and
//! [`Hive`](crate::Hive)) share above the raw layer: the methods that
//! only forward to the raw container, and the trait impls that only
//! forward to `get`, `get_mut`, `insert`, `iter` and `iter_mut`. Both containers have the same shape (a `raw` field and a
//! key marker), so one macro writes these for both.

/// Writes, for `$ty<T, K>` whose raw container is `$raw<T>`: the methods
/// that forward to the raw container (lookups, `insert`, `remove`,
/// `retain`, iteration, ...), the panics of `insert` and `Index`, `Debug`, `Index`, `IndexMut`, `PartialEq`, `Eq`,
/// `Extend`, `FromIterator` and the three `IntoIterator`s (the iterator
/// types are the generic ones of [`crate::iter`]). `$key` is the default key's name, `$noun` the noun the docs
/// and panic messages use ("pool", "hive"), `$walk` how iteration finds
/// the live slots of a block.
macro_rules! stable_container_impls {
    ($ty:ident, $raw:ident, $key:ident, $noun:literal, $walk:literal) => {
        impl<T, K: Key> $ty<T, K> {
            /// The number of live values.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "c.insert('a');\nassert_eq!(c.len(), 1);\n```"]
            #[inline]
            #[must_use]
            pub fn len(&self) -> usize {
                self.raw.len()
            }

            #[doc = concat!("Whether the ", $noun, " holds no values.\n\n```")]
            #[doc = concat!("assert!(handlekit::", stringify!($ty), "::<u8>::new().is_empty());\n```")]
            #[inline]
            #[must_use]
            pub fn is_empty(&self) -> bool {
                self.raw.len() == 0
            }

            /// Allocates blocks until `additional` more values fit without
            /// allocating.
            ///
            /// # Panics
            ///
            /// If the key type cannot index that many values, a fixed
            /// capacity is too small, or allocation fails. See
            /// [`try_reserve`](Self::try_reserve).
            ///
            #[doc = concat!("```\nlet mut c: handlekit::", stringify!($ty), "<u8> = handlekit::", stringify!($ty), "::new();")]
            #[doc = "c.reserve(1000);\nassert!(c.capacity() >= 1000);\n```"]
            pub fn reserve(&mut self, additional: usize) {
                if let Err(err) = self.try_reserve(additional) {
                    panic!("{}::reserve: {err}", stringify!($ty));
                }
            }

            /// Allocates blocks until `additional` more values fit without
            /// allocating, or says why it cannot (blocks allocated before
            /// the failure stay).
            ///
            /// ```
            /// handlekit::define_key! { struct Tiny(u32; index_bits = 4); }
            #[doc = concat!("let mut c: handlekit::", stringify!($ty), "<u8, Tiny> = Default::default();")]
            /// assert!(c.try_reserve(16).is_ok());
            /// assert!(c.try_reserve(17).unwrap_err().is_index_space());
            /// ```
            pub fn try_reserve(&mut self, additional: usize) -> Result<(), $crate::CapacityError> {
                self.raw.try_reserve(additional)
            }

            /// Inserts a value and returns its key.
            ///
            /// # Panics
            ///
            /// If no slot can be had: see [`try_insert`](Self::try_insert).
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(42);\nassert_eq!(c[key], 42);\n```"]
            // Forced, as for `IdTable`: the fast path is small, and a call
            // (which takes a large value through memory) costs more than it.
            #[inline(always)]
            pub fn insert(&mut self, value: T) -> K {
                match self.try_insert(value) {
                    Ok(key) => key,
                    Err(err) => insert_failed(err),
                }
            }

            /// Inserts the value `make(key)`, where `key` is the key it will
            /// have, and returns that key. If `make` panics, no value is added.
            ///
            /// # Panics
            ///
            /// If no slot can be had, as for [`insert`](Self::insert).
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert_with_key(|key| (key, \"self-aware\"));\nassert_eq!(c[key].0, key);\n```"]
            pub fn insert_with_key(&mut self, make: impl FnOnce(K) -> T) -> K {
                match self
                    .raw
                    // SAFETY: the parts come from this container's own slots (an insert's or
                    // a pass's), which is what `table_key` asks.
                    .try_insert_with(|index, generation| make(unsafe { Self::key(index, generation) }))
                {
                    // SAFETY: the parts come from this container's own slots (an insert's or
                    // a pass's), which is what `table_key` asks.
                    Ok((index, generation)) => unsafe { Self::key(index, generation) },
                    Err(err) => insert_failed(err),
                }
            }

            /// Inserts the value `make(key)` returns, where `key` is the key
            /// it will have, and returns that key; if `make` returns an
            /// error, adds no value and returns the error. If `make` panics,
            /// no value is added.
            ///
            /// # Panics
            ///
            /// If no slot can be had, as for [`insert`](Self::insert)
            /// (before `make` is called).
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.try_insert_with_key(|key| Ok::<_, ()>((key, 1))).unwrap();\nassert_eq!(c[key], (key, 1));\nassert_eq!(c.try_insert_with_key(|_| Err(\"no\")), Err(\"no\"));\nassert_eq!(c.len(), 1);\n```"]
            pub fn try_insert_with_key<E>(
                &mut self,
                make: impl FnOnce(K) -> Result<T, E>,
            ) -> Result<K, E> {
                let (index, generation) = match self.raw.next_spot() {
                    Ok(spot) => spot,
                    Err(err) => insert_failed(err),
                };
                // SAFETY: `next_spot` names the slot and generation the insertion
                // below fills: this container's own parts.
                let key = unsafe { Self::key(index, generation) };
                let value = make(key)?;
                match self.raw.try_insert_with(|filled_index, filled_generation| {
                    debug_assert_eq!((filled_index, filled_generation), (index, generation));
                    value
                }) {
                    Ok(_) => Ok(key),
                    Err(err) => insert_failed(err),
                }
            }

            /// Whether `key` names a live value.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(());\nassert!(c.contains_key(key));\nc.remove(key);\nassert!(!c.contains_key(key));\n```"]
            #[inline]
            #[must_use]
            pub fn contains_key(&self, key: K) -> bool {
                self.raw.contains(key.index(), crate::key::lookup_generation(key))
            }

            /// The value for `key`, or `None` if the key is stale or foreign.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(\"x\");\nassert_eq!(c.get(key), Some(&\"x\"));\n```"]
            #[inline]
            #[must_use]
            pub fn get(&self, key: K) -> Option<&T> {
                self.raw.get(key.index(), crate::key::lookup_generation(key))
            }

            /// The value for `key`, mutably, or `None` if the key is stale or
            /// foreign.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(1);\n*c.get_mut(key).unwrap() += 1;\nassert_eq!(c[key], 2);\n```"]
            #[inline]
            #[must_use]
            pub fn get_mut(&mut self, key: K) -> Option<&mut T> {
                self.raw.get_mut(key.index(), crate::key::lookup_generation(key))
            }

            /// Mutable references to the values of `N` keys at once, or
            /// `None` if any key is stale or foreign, or if two keys are the
            /// same.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let a = c.insert(1);\nlet b = c.insert(2);\nlet [x, y] = c.get_disjoint_mut([a, b]).unwrap();\ncore::mem::swap(x, y);\nassert_eq!((c[a], c[b]), (2, 1));\nassert!(c.get_disjoint_mut([a, a]).is_none());\n```"]
            #[must_use]
            pub fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut T; N]> {
                self.raw
                    .get_disjoint_mut(keys.map(|key| (key.index(), crate::key::lookup_generation(key))))
            }

            /// A pointer to the value for `key`, or `None` if the key is stale
            /// or foreign.
            ///
            /// **Guarantee:** the pointer stays valid, and keeps pointing at
            #[doc = concat!("this value, until the value is removed from the ", $noun, " (by")]
            /// `remove`, `retain`, `clear`, `drain` or `into_iter`) or the
            #[doc = concat!($noun, " is dropped, whatever else is inserted or removed in")]
            /// between: blocks are never moved or reallocated, and a block is
            /// freed only when it holds no value.
            ///
            /// Using the pointer is `unsafe` and follows the usual aliasing
            /// rules: read through it only while no `&mut` to the value is
            /// live (from `get_mut`, `iter_mut`, `IndexMut`, ...), and write
            /// through it only while no reference to the value obtained from
            #[doc = concat!("the ", $noun, " is live. The pointer may be used to write even though")]
            /// it was obtained through `&self`.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::<u32>::new();")]
            #[doc = "let key = c.insert(1);\nlet ptr = c.get_ptr(key).unwrap();\nc.extend(0..10_000); // more blocks"]
            #[doc = "// SAFETY: the value is still there, and no reference to it is live."]
            #[doc = "unsafe { *ptr.as_ptr() += 1 };\nassert_eq!(c[key], 2);\nassert_eq!(c.get_ptr(key), Some(ptr));\n```"]
            #[inline]
            #[must_use]
            pub fn get_ptr(&self, key: K) -> Option<core::ptr::NonNull<T>> {
                self.raw.get_ptr(key.index(), crate::key::lookup_generation(key))
            }

            /// The value for `key`, without checking the key.
            ///
            /// # Safety
            ///
            #[doc = concat!("`key` must name a live value of this ", $noun, ": one returned by an")]
            #[doc = concat!("insertion into this ", $noun, " and not removed since.")]
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            /// let key = c.insert(7);
            /// // SAFETY: `key` was just returned by `insert`.
            /// assert_eq!(unsafe { *c.get_unchecked(key) }, 7);
            /// ```
            #[inline]
            #[must_use]
            pub unsafe fn get_unchecked(&self, key: K) -> &T {
                debug_assert!(
                    self.contains_key(key),
                    "get_unchecked with dead key {key:?}"
                );
                // SAFETY: the caller guarantees `key` is live, so its slot
                // exists and is occupied.
                unsafe { self.raw.get_unchecked(key.index()) }
            }

            /// The value for `key`, mutably, without checking the key.
            ///
            /// # Safety
            ///
            #[doc = concat!("`key` must name a live value of this ", $noun, ".")]
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            /// let key = c.insert(7);
            /// // SAFETY: `key` was just returned by `insert`.
            /// unsafe { *c.get_unchecked_mut(key) = 8 };
            /// assert_eq!(c[key], 8);
            /// ```
            #[inline]
            #[must_use]
            pub unsafe fn get_unchecked_mut(&mut self, key: K) -> &mut T {
                debug_assert!(
                    self.contains_key(key),
                    "get_unchecked_mut with dead key {key:?}"
                );
                // SAFETY: the caller guarantees `key` is live.
                unsafe { self.raw.get_unchecked_mut(key.index()) }
            }

            /// Removes the value for `key` and returns it, or `None` if the
            /// key is stale or foreign. Its slot goes on a free list (or
            /// retires, if its generation ran out).
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(5);\nassert_eq!(c.remove(key), Some(5));\nassert_eq!(c.remove(key), None);\n```"]
            // Forced, as for `IdTable`: the fast path is small, and a call
            // (which takes a large value through memory) costs more than it.
            #[inline(always)]
            pub fn remove(&mut self, key: K) -> Option<T> {
                self.raw.remove(key.index(), crate::key::lookup_generation(key))
            }

            /// Keeps only the values for which `keep(key, &mut value)` returns
            /// `true`, visiting them in key-index order.
            ///
            /// If `keep` panics, or a removed value's `Drop` panics, the values
            #[doc = concat!("not yet visited stay in the ", $noun, ".")]
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "c.extend(0..10);\nc.retain(|_, n| *n % 2 == 0);\nassert_eq!(c.len(), 5);\n```"]
            pub fn retain(&mut self, mut keep: impl FnMut(K, &mut T) -> bool) {
                self.raw
                    // SAFETY: the parts come from this container's own slots (an insert's or
                    // a pass's), which is what `table_key` asks.
                    .retain(|index, generation, value| keep(unsafe { Self::key(index, generation) }, value));
            }

            /// Removes every value and yields it with its key, in key-index
            /// order.
            ///
            /// The values not yet yielded when the `Drain` is dropped are
            /// dropped then. If the `Drain` is leaked (`mem::forget`), they
            #[doc = concat!("stay in the ", $noun, ".")]
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(\"x\");\nassert_eq!(c.drain().collect::<Vec<_>>(), [(key, \"x\")]);\nassert!(c.is_empty());\n```"]
            pub fn drain(&mut self) -> Drain<'_, T, K> {
                // SAFETY: the raw container was made with the key limits of
                // `K`.
                unsafe { Drain::new(&mut self.raw) }
            }

            /// Iterates `(key, &value)` in key-index order: block by block,
            #[doc = concat!("and within a block by slot, ", $walk, ".")]
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(1);\nassert_eq!(c.iter().collect::<Vec<_>>(), [(key, &1)]);\n```"]
            #[inline]
            pub fn iter(&self) -> Iter<'_, T, K> {
                // SAFETY: the raw container was made with the key limits of
                // `K`.
                unsafe { Iter::new(self.raw.iter()) }
            }

            /// Iterates `(key, &mut value)` in key-index order.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(1);\nfor (_, value) in c.iter_mut() {\n    *value *= 10;\n}\nassert_eq!(c[key], 10);\n```"]
            #[inline]
            pub fn iter_mut(&mut self) -> IterMut<'_, T, K> {
                // SAFETY: as in `iter`.
                unsafe { IterMut::new(self.raw.iter_mut()) }
            }

            /// Iterates the keys of the live values, in key-index order.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(1);\nassert_eq!(c.keys().collect::<Vec<_>>(), [key]);\n```"]
            #[inline]
            pub fn keys(&self) -> Keys<'_, T, K> {
                // SAFETY: as in `iter`.
                unsafe { Keys::new(self.raw.iter()) }
            }

            /// Iterates the live values, in key-index order.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "c.extend([1, 2]);\nassert_eq!(c.values().sum::<i32>(), 3);\n```"]
            #[inline]
            pub fn values(&self) -> Values<'_, T> {
                Values::new(self.raw.iter())
            }

            /// Iterates the live values mutably, in key-index order.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(1);\nc.values_mut().for_each(|v| *v += 1);\nassert_eq!(c[key], 2);\n```"]
            #[inline]
            pub fn values_mut(&mut self) -> ValuesMut<'_, T> {
                ValuesMut::new(self.raw.iter_mut())
            }

            #[doc = concat!("Checks the ", $noun, "'s internal invariants and panics if one is")]
            /// broken. O(slots). For tests and fuzzing; not part of the stable
            /// API.
            #[doc(hidden)]
            pub fn check_invariants(&self) {
                self.raw.check_invariants();
            }
        }

        #[cold]
        #[track_caller]
        fn insert_failed(err: $crate::CapacityError) -> ! {
            panic!(concat!(stringify!($ty), "::insert: {}"), err)
        }

        #[cold]
        #[track_caller]
        fn invalid_key<K: Key>(key: K) -> ! {
            panic!(
                concat!(
                    stringify!($ty),
                    ": no live value for key {:?} (stale, or from another ",
                    $noun,
                    ")"
                ),
                key
            )
        }

        impl<T: core::fmt::Debug, K: Key> core::fmt::Debug for $ty<T, K> {
            /// Formats as a map from key to value.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "c.insert('a');"]
            #[doc = concat!("assert_eq!(format!(\"{c:?}\"), \"{", stringify!($key), "(0v1): 'a'}\");\n```")]
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_map().entries(self.iter()).finish()
            }
        }

        impl<T, K: Key> core::ops::Index<K> for $ty<T, K> {
            type Output = T;

            /// # Panics
            ///
            #[doc = concat!("If `key` is stale or foreign; the message names the key.\n\n```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(1);\nassert_eq!(c[key], 1);\n```"]
            #[inline]
            #[track_caller]
            fn index(&self, key: K) -> &T {
                match self.get(key) {
                    Some(value) => value,
                    None => invalid_key(key),
                }
            }
        }

        impl<T, K: Key> core::ops::IndexMut<K> for $ty<T, K> {
            /// # Panics
            ///
            #[doc = concat!("If `key` is stale or foreign; the message names the key.\n\n```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "let key = c.insert(1);\nc[key] = 2;\nassert_eq!(c[key], 2);\n```"]
            #[inline]
            #[track_caller]
            fn index_mut(&mut self, key: K) -> &mut T {
                match self.get_mut(key) {
                    Some(value) => value,
                    None => invalid_key(key),
                }
            }
        }

        impl<T: PartialEq, K: Key> PartialEq for $ty<T, K> {
            #[doc = concat!("Two ", $noun, "s are equal when they hold the same values under the same keys.\n\n```")]
            #[doc = concat!("let a: handlekit::", stringify!($ty), "<_> = [1, 2].into_iter().collect();")]
            #[doc = concat!("let b: handlekit::", stringify!($ty), "<_> = [1, 2].into_iter().collect();")]
            #[doc = "assert_eq!(a, b);\n```"]
            fn eq(&self, other: &Self) -> bool {
                self.len() == other.len()
                    && self
                        .iter()
                        .all(|(key, value)| other.get(key) == Some(value))
            }
        }

        impl<T: Eq, K: Key> Eq for $ty<T, K> {}

        impl<T, K: Key> Extend<T> for $ty<T, K> {
            /// Inserts every value; the keys are discarded. If the iterator
            /// panics, the values inserted so far stay.
            ///
            #[doc = concat!("```\nlet mut c = handlekit::", stringify!($ty), "::new();")]
            #[doc = "c.extend([1, 2, 3]);\nassert_eq!(c.len(), 3);\n```"]
            fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
                for value in values {
                    self.insert(value);
                }
            }
        }

        impl<T, K: Key> $ty<T, K> {
            #[doc = concat!("Builds a ", $noun, " from values, keyed in iteration order (the first")]
            /// value gets index 0), as `collect` does; the name is
            /// [`IdTable`](crate::IdTable)'s.
            ///
            #[doc = concat!("```\nlet c: handlekit::", stringify!($ty), "<_> = handlekit::", stringify!($ty), "::from_iter_values([\"a\", \"b\"]);")]
            /// assert_eq!(c.len(), 2);
            /// ```
            #[must_use]
            pub fn from_iter_values(values: impl IntoIterator<Item = T>) -> Self {
                values.into_iter().collect()
            }
        }

        impl<T, K: Key> FromIterator<T> for $ty<T, K> {
            #[doc = concat!("A ", $noun, " of the values, keyed in iteration order (the first value gets index 0).\n\n```")]
            #[doc = concat!("use handlekit::{", stringify!($ty), ", Key};")]
            #[doc = concat!("let c: ", stringify!($ty), "<&str> = [\"a\", \"b\"].into_iter().collect();")]
            #[doc = "assert_eq!(c.keys().map(|k| k.index()).collect::<Vec<_>>(), [0, 1]);\n```"]
            fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
                let mut container = Self::default();
                container.extend(values);
                container
            }
        }

        impl<'a, T, K: Key> IntoIterator for &'a $ty<T, K> {
            type Item = (K, &'a T);
            type IntoIter = Iter<'a, T, K>;

            #[doc = concat!("```\nlet c: handlekit::", stringify!($ty), "<_> = [1].into_iter().collect();")]
            #[doc = "for (key, value) in &c {\n    assert_eq!(c[key], *value);\n}\n```"]
            fn into_iter(self) -> Iter<'a, T, K> {
                self.iter()
            }
        }

        impl<'a, T, K: Key> IntoIterator for &'a mut $ty<T, K> {
            type Item = (K, &'a mut T);
            type IntoIter = IterMut<'a, T, K>;

            #[doc = concat!("```\nlet mut c: handlekit::", stringify!($ty), "<_> = [1].into_iter().collect();")]
            #[doc = "for (_, value) in &mut c {\n    *value += 1;\n}\nassert_eq!(c.values().next(), Some(&2));\n```"]
            fn into_iter(self) -> IterMut<'a, T, K> {
                self.iter_mut()
            }
        }

        impl<T, K: Key> IntoIterator for $ty<T, K> {
            type Item = (K, T);
            type IntoIter = IntoIter<T, K>;

            #[doc = concat!("```\nlet c: handlekit::", stringify!($ty), "<_> = [String::from(\"x\")].into_iter().collect();")]
            #[doc = "let all: Vec<_> = c.into_iter().map(|(_, v)| v).collect();\nassert_eq!(all, [\"x\"]);\n```"]
            fn into_iter(self) -> IntoIter<T, K> {
                // SAFETY: as in `drain`.
                unsafe { IntoIter::new(self.raw) }
            }
        }


        #[cfg(feature = "rayon")]
        impl<T: Sync, K: Key> $ty<T, K> {
            /// Iterates `(key, &value)` in parallel with rayon. The work is
            /// cut between threads at block boundaries, so a
            #[doc = concat!($noun, " of one block runs on one thread.")]
            ///
            /// ```
            /// use rayon::prelude::*;
            #[doc = concat!("let c: handlekit::", stringify!($ty), "<u64> = (0..10_000).collect();")]
            /// assert_eq!(c.par_iter().map(|(_, v)| v).sum::<u64>(), 49_995_000);
            /// assert!(c.par_iter().all(|(key, v)| c[key] == *v));
            /// ```
            pub fn par_iter(&self) -> ParIter<'_, T, K> {
                // SAFETY: the raw container was made with the key limits of
                // `K`.
                unsafe { ParIter::new(self.raw.iter()) }
            }
        }

        #[cfg(feature = "rayon")]
        impl<T: Send, K: Key> $ty<T, K> {
            /// Iterates `(key, &mut value)` in parallel with rayon, cut
            /// between threads at block boundaries.
            ///
            /// ```
            /// use rayon::prelude::*;
            #[doc = concat!("let mut c: handlekit::", stringify!($ty), "<u64> = (0..10_000).collect();")]
            /// c.par_iter_mut().for_each(|(_, v)| *v *= 2);
            /// assert_eq!(c.values().sum::<u64>(), 99_990_000);
            /// ```
            pub fn par_iter_mut(&mut self) -> ParIterMut<'_, T, K> {
                // SAFETY: as in `par_iter`.
                unsafe { ParIterMut::new(self.raw.iter_mut()) }
            }
        }


    };
}

pub(crate) use stable_container_impls;

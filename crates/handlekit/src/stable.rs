//! What the containers with stable addresses ([`Pool`](crate::Pool) and
//! [`Hive`](crate::Hive)) share above the raw layer: the trait impls that
//! only forward to `get`, `get_mut`, `insert`, `iter` and `iter_mut`, and
//! the removing iterators (`Drain`, `IntoIter`) over the raw container's
//! `take_next`. Both containers have the same shape (a `raw` field and a
//! key marker), so one macro writes these for both.

/// Writes, for `$ty<T, K>` whose raw container is `$raw<T>`: the panics of
/// `insert` and `Index`, `Debug`, `Index`, `IndexMut`, `PartialEq`, `Eq`,
/// `Extend`, `FromIterator`, the three `IntoIterator`s, and the `Drain` and
/// `IntoIter` types. `$key` is the default key's name, `$noun` the noun
/// the docs and panic messages use ("pool", "hive").
macro_rules! stable_container_impls {
    ($ty:ident, $raw:ident, $key:ident, $noun:literal) => {
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
                IntoIter {
                    arena: self.raw,
                    next: 0,
                    _key: core::marker::PhantomData,
                }
            }
        }

        #[doc = concat!("Removing iterator over `(key, value)`; see [`", stringify!($ty), "::drain`].")]
        pub struct Drain<'a, T, K: Key = $key> {
            arena: &'a mut $raw<T>,
            /// Flat indices below this have been drained.
            next: usize,
            _key: core::marker::PhantomData<fn(K) -> K>,
        }

        $crate::slot_iter::taking_iterator!(Drain<'a, T, K>);

        impl<T, K: Key> Drop for Drain<'_, T, K> {
            fn drop(&mut self) {
                self.arena.clear();
            }
        }

        #[doc = concat!("Owning iterator over `(key, value)`; see [`", stringify!($ty), "::into_iter`].")]
        pub struct IntoIter<T, K: Key = $key> {
            arena: $raw<T>,
            /// Flat indices below this have been yielded.
            next: usize,
            _key: core::marker::PhantomData<fn(K) -> K>,
        }

        $crate::slot_iter::taking_iterator!(IntoIter<T, K>);
    };
}

pub(crate) use stable_container_impls;

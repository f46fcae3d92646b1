//! What the tables' iterators share: the key of a table's own slot, and
//! the removing iterators (`Drain`, `IntoIter`).

use crate::Key;

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

/// Generates the `Iterator` impls of the iterators that remove values as
/// they go (`Drain`, `IntoIter`): both walk the arena with `take_next`.
macro_rules! taking_iterator {
    // `$name<$($lt,)? $($param),*>`: the type as declared, in its own
    // parameter order; `T` is the value type and `K` the key type; any
    // further parameters follow `;` with their bounds.
    ($name:ident<$($lt:lifetime,)? $($param:ident),*>) => {
        $crate::slot_iter::taking_iterator!($name<$($lt,)? $($param),*>;);
    };
    ($name:ident<$($lt:lifetime,)? $($param:ident),*>; $($extra:ident: $bound:path),*) => {
        impl<$($lt,)? T, K: Key $(, $extra: $bound)*> Iterator for $name<$($lt,)? $($param),*> {
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

        impl<$($lt,)? T, K: Key $(, $extra: $bound)*> ExactSizeIterator for $name<$($lt,)? $($param),*> {}
        impl<$($lt,)? T, K: Key $(, $extra: $bound)*> core::iter::FusedIterator for $name<$($lt,)? $($param),*> {}

        impl<$($lt,)? T, K: Key $(, $extra: $bound)*> core::fmt::Debug for $name<$($lt,)? $($param),*> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("remaining", &self.arena.len())
                    .finish()
            }
        }
    };
}

pub(crate) use taking_iterator;

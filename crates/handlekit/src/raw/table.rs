//! What the one table view ([`SlotTable`](crate::SlotTable), behind
//! `IdTable`, `LookupTable`, `Pool` and `Hive`) asks of its raw container:
//! one trait, implemented by `SlotArena`, `RawPool` and `RawHive` (at the
//! ends of their files), so that the view's methods are written once.
//!
//! Indices are flat (a slot array's position; in a pool or hive, block `b`
//! holds the indices from its first slot's up), generations are the raw layer's (at least 1, at most the key
//! limits' maximum), and every lookup checks both: a stale, forged or
//! foreign pair finds nothing.

use core::ptr::NonNull;

use super::keyed::TakeSlots;
use super::keyed::{table_key, Keyed};
use super::storage::{RawCursor, Storage};
use crate::CapacityError;

/// The raw side of a table. Sealed by being implemented only in the raw
/// layer (the view reaches it through
/// [`TableStorage`](crate::iter::TableStorage)). It hands out keys of its
/// key type (`TakeSlots::Key`): the provided `*_keyed` methods.
///
/// # Safety
///
/// Every `(index, generation)` an implementation hands out (to `make` and
/// from `try_insert_with`, from `next_spot`, to `retain`'s `keep`) names
/// one of its own slots under a generation it holds or is about to hold,
/// within limits no wider than those of `Self::Key`: what `table_key`
/// asks. And `iter` and `iter_mut` walk its own slots, which the provided
/// `keyed_iter*` methods rely on to hand out keys.
// The cursor types stay crate-private: the trait is reachable only as a
// hidden bound of the sealed `TableStorage`.
#[allow(private_interfaces)]
pub unsafe trait RawTable<T>: TakeSlots<T> + Sized {
    /// The storage it is walked as (a slot layout, `PoolBlocks`,
    /// `HiveBlocks`), which names the cursor type of its passes.
    type Blocks: Storage;

    /// An empty container with the limits of `Self::Key` and the default
    /// block sizes: a constant, so that the view's `new` is a `const fn`.
    const EMPTY: Self;

    /// A pass over the live values, in index order.
    fn iter(&self) -> RawCursor<'_, T, Self::Blocks, &T>;

    /// A pass over the live values, in index order, mutably.
    fn iter_mut(&mut self) -> RawCursor<'_, T, Self::Blocks, &mut T>;

    /// A pass over `(key, &value)`.
    #[inline]
    fn keyed_iter(&self) -> Keyed<RawCursor<'_, T, Self::Blocks, &T>, Self::Key> {
        // SAFETY: `iter` walks this container's slots (the trait's
        // contract), whose key type is `Self::Key`.
        unsafe { Keyed::new(self.iter()) }
    }

    /// A pass over `(key, &mut value)`.
    #[inline]
    fn keyed_iter_mut(&mut self) -> Keyed<RawCursor<'_, T, Self::Blocks, &mut T>, Self::Key> {
        // SAFETY: as for `keyed_iter`.
        unsafe { Keyed::new(self.iter_mut()) }
    }

    /// Allocates blocks until `additional` more values fit.
    fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError>;

    /// Inserts `make(index, generation)` and returns where it went.
    fn try_insert_with(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError>;

    /// The `(index, generation)` the next insertion gets; it may allocate
    /// the block that insertion needs.
    fn next_spot(&mut self) -> Result<(usize, u32), CapacityError>;

    /// Whether the pair names a live value.
    fn contains(&self, index: usize, generation: u32) -> bool;

    /// The live value the pair names.
    fn get(&self, index: usize, generation: u32) -> Option<&T>;

    /// The live value the pair names, mutably.
    fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T>;

    /// A pointer to the live value the pair names, valid until it is taken
    /// out or its block is dropped.
    fn get_ptr(&self, index: usize, generation: u32) -> Option<NonNull<T>>;

    /// The value at `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    unsafe fn get_unchecked(&self, index: usize) -> &T;

    /// The value at `index`, mutably.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T;

    /// Mutable references to `N` distinct live values, or `None` if a pair
    /// is dead or two are the same.
    fn get_disjoint_mut<const N: usize>(&mut self, keys: [(usize, u32); N]) -> Option<[&mut T; N]>;

    /// Takes the live value the pair names out.
    fn remove(&mut self, index: usize, generation: u32) -> Option<T>;

    /// Keeps the values for which `keep(index, generation, value)` holds.
    fn retain(&mut self, keep: impl FnMut(usize, u32, &mut T) -> bool);

    /// Values that fit without allocating.
    fn capacity(&self) -> usize;

    /// The fixed capacity, if the container was made with one.
    fn fixed_capacity(&self) -> Option<usize>;

    /// Slots retired at the generation limit.
    fn retired(&self) -> usize;

    /// Bytes of heap memory held.
    fn heap_bytes(&self) -> usize;

    /// Blocks allocated.
    fn block_count(&self) -> usize;

    /// Checks every invariant; panics on the first one broken.
    fn check_invariants(&self);

    /// Inserts `make(key)` and returns its index and `key`. The index is
    /// handed back apart from the key: with it, the optimizer keeps the
    /// key's halves apart where a caller stores them (building a two-part
    /// key into one register cost two instructions a reinsertion, and
    /// 0.1-0.2 ns, in `IdTable`'s runner cells).
    // Forced, as `try_insert_with` is.
    #[inline(always)]
    fn try_insert_keyed(
        &mut self,
        make: impl FnOnce(Self::Key) -> T,
    ) -> Result<(usize, Self::Key), CapacityError> {
        let (index, generation) = self.try_insert_with(|index, generation| {
            // SAFETY: the slot the insertion fills (the trait's contract).
            make(unsafe { table_key(index, generation) })
        })?;
        // SAFETY: as above.
        Ok((index, unsafe { table_key(index, generation) }))
    }

    /// The key the next insertion gets (see `next_spot`).
    #[inline]
    fn next_key(&mut self) -> Result<Self::Key, CapacityError> {
        let (index, generation) = self.next_spot()?;
        // SAFETY: the slot the next insertion fills (the trait's contract).
        Ok(unsafe { table_key(index, generation) })
    }

    /// Keeps the values for which `keep(key, value)` holds.
    #[inline]
    fn retain_keyed(&mut self, mut keep: impl FnMut(Self::Key, &mut T) -> bool) {
        self.retain(|index, generation, value| {
            // SAFETY: a live slot of this container (the trait's contract).
            keep(unsafe { table_key(index, generation) }, value)
        });
    }
}

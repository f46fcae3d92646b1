//! The storage layer: dense columns, sparse sets, borrow flags and the raw
//! views queries read through. Together with the fetch code of `query.rs`
//! (which only calls the `unsafe fn`s defined here), this module holds every
//! `unsafe` of the crate.
//!
//! A component type's storage is one [`TypedStorage<T>`], reached from the
//! world through the object-safe [`AnyStorage`] trait: the operations that do
//! not know `T` (drop a row's component, move a row, release the front,
//! clear) go through its vtable; the typed ones (insert, remove, get, views)
//! downcast first.

use crate::far_map::FarMap;
use std::any::TypeId;
use std::cell::UnsafeCell;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicIsize, Ordering};

use handlekit::VmVec;

use crate::Entity;

/// The low 64 bits of a `TypeId`, which is itself a hash of the type: the
/// one `u64` its `Hash` impl writes.
#[inline]
fn type_bits(ty: TypeId) -> u64 {
    #[derive(Default)]
    struct Bits(u64);
    impl Hasher for Bits {
        fn write(&mut self, bytes: &[u8]) {
            // `TypeId` writes one `u64`; fold anything else in, in case.
            for &byte in bytes {
                self.0 = self.0.rotate_left(8) ^ u64::from(byte);
            }
        }
        #[inline]
        fn write_u64(&mut self, word: u64) {
            self.0 ^= word;
        }
        #[inline]
        fn finish(&self) -> u64 {
            self.0
        }
    }
    let mut bits = Bits::default();
    ty.hash(&mut bits);
    bits.0
}

/// A type no world registers (it is private), standing in the empty slots
/// of a [`TypeIndex`].
struct NoType;

/// The slots where a type's first home may lie: the table's first slots,
/// as many as the table has when it starts (it doubles as types come). A
/// constant, so that a lookup of a type known at compile time finds its
/// first home at a constant offset (no mask loaded, no shift).
const FIRST_HOMES: usize = 256;

/// How many types a cuckoo insertion moves before the table grows instead.
const MAX_MOVES: usize = 32;

/// The world's component type → storage map: a cuckoo hash table indexed
/// by bits of the `TypeId` (already a hash of the type) with no further
/// hashing. A registered type sits in one of its two homes, so a lookup
/// compares two slots and needs no probe loop. The first home lies among
/// the first [`FIRST_HOMES`] slots, at an offset known at compile time, and
/// a type goes there when it is free; the second anywhere in the table.
///
/// The table ends with one more slot, always empty: the slot a lookup of a
/// type that is not registered lands on. So [`slot`](TypeIndex::slot)
/// reads a slot, and the [`LookupHead`] it names, whatever it finds: no
/// load waits on a branch, and in a loop of `World::get_mut` or
/// `World::has` calls, which writes nothing, the compiler takes the whole
/// type lookup out of the loop. A typed call that writes (`insert_one`)
/// uses [`get`](TypeIndex::get), which tests the first home before reading
/// the second.
///
/// History: a `HashMap` with a multiply-and-rotate hasher took about 40
/// instructions a lookup (callgrind, `World::has`); a growing linear-probe
/// table, 13; a fixed one at a constant offset, 11, but its probe loop and
/// overflow map kept the lookup inside a loop of calls (`get_mut` 45
/// instructions a call, `has` 41). Each slot also holds the address of the
/// column's storage, so that a typed call reaches the storage from the
/// slot, not through the column list and the column's box.
pub(crate) struct TypeIndex {
    /// The table, `mask + 2` slots: a registered type with its column, or
    /// an empty slot (`TypeId::of::<NoType>()`). Invariant: each registered
    /// type sits in one of its two [`homes`](TypeIndex::homes), which are
    /// at most `mask`; at most a quarter of the first `mask + 1` slots are
    /// full; the last slot, `slots[mask + 1]`, is always empty; `mask + 1`
    /// is at least [`FIRST_HOMES`].
    slots: Box<[TypeSlot]>,
    /// The number of slots less one, before the always-empty last slot: a
    /// power of two less one.
    mask: usize,
    /// The number of types registered.
    len: usize,
}

/// A slot of a [`TypeIndex`].
#[derive(Clone, Copy)]
pub(crate) struct TypeSlot {
    ty: TypeId,
    /// The column's number in the world's list.
    column: usize,
    /// The column's storage, [`ErasedStorage::data_ptr`] (dangling in an
    /// empty slot). The index only keeps it; the world, which owns the
    /// storage, says when it may be used (see `World::types`).
    storage: NonNull<()>,
    /// The storage's lookup head: a dense column's own, [`SPARSE_HEAD`] for
    /// a sparse set, [`EMPTY_HEAD`] in an empty slot. Invariant: it lives
    /// as long as the storage (a dense column frees its head when dropped).
    head: NonNull<LookupHead>,
}

/// What a [`TypeIndex`] holds for a registered type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TypeEntry {
    /// The column's number in the world's list.
    pub(crate) column: usize,
    /// The column's storage, as registered.
    pub(crate) storage: NonNull<()>,
}

impl TypeSlot {
    /// A slot with no type in it.
    fn empty() -> Self {
        TypeSlot {
            ty: TypeId::of::<NoType>(),
            column: 0,
            storage: NonNull::dangling(),
            head: NonNull::from(&EMPTY_HEAD),
        }
    }

    /// Whether no type is in the slot (a lookup of a type not registered
    /// finds such a slot).
    pub(crate) fn is_empty(&self) -> bool {
        self.ty == TypeId::of::<NoType>()
    }

    #[inline(always)]
    fn entry(&self) -> TypeEntry {
        TypeEntry {
            column: self.column,
            storage: self.storage,
        }
    }

    /// The storage, as registered (dangling in an empty slot).
    #[inline(always)]
    pub(crate) fn storage(&self) -> NonNull<()> {
        self.storage
    }

    /// A copy of the slot's lookup head, read now (all of it: so that a
    /// loop of calls reads it at the top, see [`TypeIndex`]), for as long
    /// as the slot is borrowed.
    #[inline(always)]
    pub(crate) fn head(&self) -> HeadCopy<'_> {
        // The head lives as long as the storage (the field's invariant),
        // which the world that owns this index owns; it is written only
        // under `&mut` to that world, which the borrow of the slot excludes.
        // SAFETY: so it is live and not written while it is read.
        let head = unsafe { *self.head.as_ptr() };
        HeadCopy {
            head,
            _slot: PhantomData,
        }
    }
}

// SAFETY: the index holds only numbers and addresses, which it never
// dereferences but for the heads, written only under `&mut` to the world
// that owns them; the world that uses the addresses is `Send` and `Sync` by
// its own storages' bounds.
unsafe impl Send for TypeIndex {}
// SAFETY: as for `Send`.
unsafe impl Sync for TypeIndex {}

impl Default for TypeIndex {
    fn default() -> Self {
        TypeIndex {
            slots: vec![TypeSlot::empty(); FIRST_HOMES + 1].into_boxed_slice(),
            mask: FIRST_HOMES - 1,
            len: 0,
        }
    }
}

impl TypeIndex {
    /// The two homes of `ty` in a table of `mask + 1` slots, from two
    /// disjoint runs of its bits (the table never has 2³² slots): the
    /// first among the first [`FIRST_HOMES`] slots, the second anywhere.
    #[inline(always)]
    fn homes(ty: TypeId, mask: usize) -> (usize, usize) {
        let bits = type_bits(ty);
        // Truncation intended: the low bits of each half pick a slot.
        (
            (bits as usize) % FIRST_HOMES,
            ((bits >> 32) as usize) & mask,
        )
    }

    /// The slot at `index`, which is at most `mask + 1`.
    #[inline(always)]
    fn at(&self, index: usize) -> &TypeSlot {
        debug_assert!(index <= self.mask + 1);
        // SAFETY: `slots` has `mask + 2` slots (the field's invariant).
        unsafe { self.slots.get_unchecked(index) }
    }

    /// The slot of `ty`, or the always-empty last slot if `ty` is not
    /// registered. Both homes are read and compared, and the choice is
    /// made with bit operations, not a branch: so the slot's fields load
    /// whatever the outcome, and no load waits on a branch (see the type's
    /// docs).
    #[inline(always)]
    pub(crate) fn slot(&self, ty: TypeId) -> &TypeSlot {
        let (first, second) = Self::homes(ty, self.mask);
        // All ones if `ty` sits in that home, else zero.
        let in_first = usize::from(self.at(first).ty == ty).wrapping_neg();
        let in_second = usize::from(self.at(second).ty == ty).wrapping_neg();
        let miss = self.mask + 1;
        let found = miss ^ ((miss ^ second) & in_second);
        self.at(found ^ ((found ^ first) & in_first))
    }

    /// The column of `ty`, if registered: the first home tested before the
    /// second is read.
    #[inline]
    pub(crate) fn get(&self, ty: TypeId) -> Option<TypeEntry> {
        let (first, second) = Self::homes(ty, self.mask);
        let slot = self.at(first);
        if slot.ty == ty {
            return Some(slot.entry());
        }
        let slot = self.at(second);
        (slot.ty == ty).then(|| slot.entry())
    }

    /// Registers `ty` (not registered yet) as column `column`, whose
    /// storage is at `storage` with its lookup head at `head`.
    pub(crate) fn insert(
        &mut self,
        ty: TypeId,
        column: usize,
        storage: NonNull<()>,
        head: NonNull<LookupHead>,
    ) {
        debug_assert!(self.get(ty).is_none(), "a type registered twice");
        let slot = TypeSlot {
            ty,
            column,
            storage,
            head,
        };
        self.len += 1;
        let homeless = if 4 * self.len > self.mask + 1 {
            Some(slot)
        } else {
            self.place(slot).err()
        };
        if let Some(homeless) = homeless {
            self.grow_with(homeless);
        }
    }

    /// Puts `slot` in one of its homes, moving the types in the way to
    /// their other homes (cuckoo hashing). Gives back the slot left without
    /// a home after [`MAX_MOVES`] moves; every other type is then in the
    /// table.
    fn place(&mut self, mut slot: TypeSlot) -> Result<(), TypeSlot> {
        let (first, second) = Self::homes(slot.ty, self.mask);
        for home in [first, second] {
            if self.slots[home].is_empty() {
                self.slots[home] = slot;
                return Ok(());
            }
        }
        let mut at = first;
        for _ in 0..MAX_MOVES {
            slot = std::mem::replace(&mut self.slots[at], slot);
            // The type moved out goes to its other home.
            let (first, second) = Self::homes(slot.ty, self.mask);
            at = if first == at { second } else { first };
            if self.slots[at].is_empty() {
                self.slots[at] = slot;
                return Ok(());
            }
        }
        Err(slot)
    }

    /// Doubles the table (more than once if a placement fails) and puts
    /// back every type in it, and `homeless`.
    #[cold]
    fn grow_with(&mut self, homeless: TypeSlot) {
        let types: Vec<TypeSlot> = self
            .slots
            .iter()
            .filter(|slot| !slot.is_empty())
            .copied()
            .chain([homeless])
            .collect();
        let mut size = 2 * (self.mask + 1);
        'grow: loop {
            self.slots = vec![TypeSlot::empty(); size + 1].into_boxed_slice();
            self.mask = size - 1;
            for &slot in &types {
                if self.place(slot).is_err() {
                    size *= 2;
                    continue 'grow;
                }
            }
            return;
        }
    }

    /// Every registered type with its column number, in no order.
    #[cfg(feature = "serde")]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (TypeId, usize)> + '_ {
        self.slots
            .iter()
            .filter(|slot| !slot.is_empty())
            .map(|slot| (slot.ty, slot.column))
    }
}

/// What `World::get_mut` and `World::has` read of a component type's
/// storage before they know whether the entity has the component, with the
/// type left out: a dense column's presence words and slots, as its
/// [`RawWindows`] has them (a copy the column keeps up to date in
/// [`sync`](DenseColumn::sync)), or empty windows, for a sparse set or a
/// type not registered. The [`TypeIndex`] names one per slot.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct LookupHead {
    /// As [`RawWindows::words`]: presence word `w` at `words + w` if `w`
    /// lies in `words_from..words_from + word_count`.
    words: *mut u64,
    words_from: usize,
    word_count: usize,
    /// [`RawWindows::slots`] without its type: the slot of row `r` is at
    /// `slots.cast::<Slot<T>>() + r` for the column's `T`.
    slots: *mut (),
    /// Whether the storage is a sparse set (its windows are then empty).
    sparse: bool,
}

// SAFETY: a head only describes memory, which is read through it under a
// borrow of the world that owns the column: the heads in statics hold null
// pointers and are never written, and a column's own head is written only
// under `&mut` to its world (`DenseColumn::sync`).
unsafe impl Sync for LookupHead {}

/// The lookup head of an empty [`TypeIndex`] slot: no row has a value.
static EMPTY_HEAD: LookupHead = LookupHead {
    words: std::ptr::null_mut(),
    words_from: 0,
    word_count: 0,
    slots: std::ptr::null_mut(),
    sparse: false,
};

/// The lookup head of every sparse set: no row has a value in the windows,
/// and the set itself has to be asked.
static SPARSE_HEAD: LookupHead = LookupHead {
    sparse: true,
    ..EMPTY_HEAD
};

impl LookupHead {
    /// A pointer to the presence word `word` if it lies in the window (the
    /// one bounds check of every lookup by row, the column's own and the
    /// world's).
    #[inline(always)]
    fn word_ptr(&self, word: usize) -> Option<*mut u64> {
        (word.wrapping_sub(self.words_from) < self.word_count)
            .then(|| self.words.wrapping_add(word))
    }

    /// A pointer to the value of `row`'s slot, for the column's type `T`;
    /// the slot must lie in the window for the pointer to be used.
    #[inline(always)]
    fn slot_value<T>(&self, row: usize) -> *mut T {
        UnsafeCell::raw_get(self.slots.cast::<Slot<T>>().wrapping_add(row)).cast::<T>()
    }
}

/// A [`LookupHead`] read from a [`TypeSlot`], which lives no longer than
/// the borrow of the slot (so of the world): its windows are those of the
/// column as it is while the copy lives.
#[derive(Clone, Copy)]
pub(crate) struct HeadCopy<'slot> {
    head: LookupHead,
    _slot: PhantomData<&'slot TypeSlot>,
}

impl HeadCopy<'_> {
    /// Whether the storage is a sparse set.
    #[inline(always)]
    pub(crate) fn is_sparse(&self) -> bool {
        self.head.sparse
    }

    /// Whether the dense column (if any) has a value at `row`.
    #[inline(always)]
    pub(crate) fn has(&self, row: usize) -> bool {
        let Some(word) = self.head.word_ptr(row / WORD) else {
            return false;
        };
        // The word lies in the window, which a head describes as its
        // column has it (`DenseColumn::sync` copies it), and the world that
        // owns the column stays borrowed while this copy lives.
        // SAFETY: so the column lives and the word is where the head says.
        let bits = unsafe { *word };
        bits & bit(row) != 0
    }

    /// A pointer to the value of `row` if the dense column has one, for
    /// the column's component type `T`.
    #[inline(always)]
    pub(crate) fn value_ptr<T>(&self, row: usize) -> Option<NonNull<T>> {
        if !self.has(row) {
            return None;
        }
        // SAFETY: the row's presence bit is set.
        Some(unsafe { self.present_value_ptr(row) })
    }

    /// A pointer to the value of `row`, which has one, for the column's
    /// component type `T`: [`value_ptr`](Self::value_ptr) without reading
    /// the presence word.
    ///
    /// # Safety
    ///
    /// The dense column has a value at `row` (its presence bit is set).
    #[inline(always)]
    pub(crate) unsafe fn present_value_ptr<T>(&self, row: usize) -> NonNull<T> {
        debug_assert!(self.has(row), "row {row} has no value");
        let value = self.head.slot_value::<T>(row);
        // A set presence bit lies in the slots' window (`DenseColumn`'s
        // invariant on `present`), so the slot is in the column's
        // reservation.
        // SAFETY: so the pointer is not null.
        unsafe { NonNull::new_unchecked(value) }
    }
}

/// Rows per presence word.
pub(crate) const WORD: usize = 64;

/// The bit of `row` in its word.
#[inline]
pub(crate) const fn bit(row: usize) -> u64 {
    1 << (row % WORD)
}

/// Room a column keeps beyond the world's maximum row count, in elements:
/// after [`VmVec::rebase`] the first element may sit up to a page (64 KiB on
/// some systems) past the start of the reservation, and the window must still
/// fit `max_rows` rows.
pub(crate) fn slack<T>() -> usize {
    (64 << 10) / size_of::<T>().max(1) + WORD
}

/// How many slots a new dense column leaves empty before its first row, so
/// that the columns of a world do not all start at the same offset within
/// a page: column `index` starts `4096 × (index × φ mod 1)` bytes, rounded
/// down to a cache line and up to whole slots, into its reservation (the
/// golden ratio spreads any number of columns evenly over the page). Every
/// reservation starts on a page, so without this the slots of one row in
/// two columns share their low 12 address bits, and a loop that reads one
/// column and writes another (as `position += velocity`) ran about 2%
/// slower (10,000 rows, 12-byte components: 0.583 ns per row against 0.573
/// with the columns 384 bytes or more apart).
pub(crate) fn stagger<T>(index: usize) -> usize {
    let size = size_of::<T>();
    if size == 0 {
        return 0;
    }
    // 2531 / 4096 ≈ φ - 1.
    ((index * 2531) % 4096 / 64 * 64).div_ceil(size)
}

/// Pushes `value`, moving the window back with [`VmVec::rebase`] once if it
/// reached the end of its reservation.
///
/// # Panics
///
/// If the vector is still full after the rebase: the world keeps every
/// window shorter than the reservation (see [`slack`]), so this is a bug or
/// a refused commit, reported with the system's error.
#[inline]
pub(crate) fn push_or_rebase<T>(vec: &mut VmVec<T>, value: T) {
    if let Err(error) = vec.try_push(value) {
        push_after_rebase(vec, error);
    }
}

/// The rare path of [`push_or_rebase`]: a full window moves back, then the
/// push is tried again (and panics with `VmVec`'s message if it fails).
#[cold]
#[inline(never)]
fn push_after_rebase<T>(vec: &mut VmVec<T>, error: handlekit::vm_vec::PushError<T>) {
    if error.is_full() {
        vec.rebase();
    }
    vec.push(error.into_inner());
}

/// Sets the bits of rows `start..end` in `words`, a vector of presence or
/// alive words whose position `p` holds word `p + word_base`, a word at a
/// time (pushing zero words up to the last one first).
pub(crate) fn set_bits(words: &mut VmVec<u64>, word_base: usize, start: usize, end: usize) {
    let mut row = start;
    while row < end {
        let word = row / WORD;
        let word_end = ((word + 1) * WORD).min(end);
        let mask = (u64::MAX << (row % WORD)) & (u64::MAX >> ((word + 1) * WORD - word_end));
        let position = word - word_base;
        while words.next_position() <= position {
            push_or_rebase(words, 0);
        }
        *words
            .get_by_position_mut(position)
            .expect("handlekit-ecs: bit word below the front") |= mask;
        row = word_end;
    }
}

/// A run-time borrow flag: `0` free, `n > 0` borrowed shared `n` times,
/// negative borrowed exclusively.
///
/// A shared borrow is one `fetch_add` (not a load and a compare-exchange
/// loop): it counts itself in first and looks at what was there, and a
/// borrow that finds the flag exclusive takes its count out again. The
/// exclusive state is [`EXCLUSIVE`] (`isize::MIN`), not `-1`, so that such
/// passing counts (at most one per thread) leave it negative; releasing it
/// adds `isize::MIN` back rather than storing 0, so that the passing counts
/// they take out afterwards bring the flag back to 0. Until they do, the
/// flag reads as shared: an exclusive borrow racing with a failing shared
/// one on another thread may then be refused too (both are conflicting
/// accesses, one of which panics anyway), never granted twice.
#[derive(Default)]
pub(crate) struct BorrowFlag(AtomicIsize);

/// The exclusive state of a [`BorrowFlag`].
const EXCLUSIVE: isize = isize::MIN;

/// The most shared borrows a [`BorrowFlag`] counts; past it a shared
/// borrow is refused (far from wrapping round to the exclusive state).
const MAX_SHARED: isize = isize::MAX / 2;

impl BorrowFlag {
    /// Takes a shared borrow, or returns `false` if the flag is borrowed
    /// exclusively (or has [`MAX_SHARED`] shared borrows).
    #[inline]
    pub(crate) fn try_shared(&self) -> bool {
        let before = self.0.fetch_add(1, Ordering::Acquire);
        // One compare for both: a negative count is a huge unsigned one.
        if before as usize >= MAX_SHARED as usize {
            self.0.fetch_sub(1, Ordering::Release);
            return false;
        }
        true
    }

    /// Gives back a shared borrow taken with [`try_shared`](Self::try_shared).
    #[inline]
    pub(crate) fn release_shared(&self) {
        let before = self.0.fetch_sub(1, Ordering::Release);
        debug_assert!(before > 0, "released a shared borrow that was not taken");
    }

    /// Takes the exclusive borrow, or returns `false` if any borrow is out.
    pub(crate) fn try_exclusive(&self) -> bool {
        self.0
            .compare_exchange(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Turns exactly `readers` shared borrows into the exclusive borrow,
    /// which then stands for them (hecs's rule: a writer joining the
    /// registered readers of a column, `groups.rs`), or returns `false` if
    /// the count is any other (a guard holds or is taking a borrow).
    pub(crate) fn try_shared_to_exclusive(&self, readers: usize) -> bool {
        self.0
            .compare_exchange(
                readers as isize,
                EXCLUSIVE,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Undoes [`try_shared_to_exclusive`](Self::try_shared_to_exclusive):
    /// the exclusive borrow becomes `readers` shared ones again.
    pub(crate) fn exclusive_to_shared(&self, readers: usize) {
        // `EXCLUSIVE` plus any passing counts, plus `EXCLUSIVE + readers`,
        // wraps round to those counts plus `readers`.
        let before = self
            .0
            .fetch_add(EXCLUSIVE.wrapping_add(readers as isize), Ordering::Release);
        debug_assert!(before < 0, "turned back a flag that was not exclusive");
    }

    /// Gives back the exclusive borrow.
    pub(crate) fn release_exclusive(&self) {
        // Adding `isize::MIN` wraps `EXCLUSIVE` plus any passing counts
        // round to those counts.
        let before = self.0.fetch_add(EXCLUSIVE, Ordering::Release);
        debug_assert!(
            before < 0,
            "released an exclusive borrow that was not taken"
        );
    }
}

/// How a component type is stored; chosen once per type with
/// [`World::register`](crate::World::register). Dense is the default.
///
/// ```
/// use handlekit_ecs::{Storage, World};
/// struct Burning;
/// let mut world = World::new();
/// assert!(world.register::<Burning>(Storage::Sparse));
/// assert_eq!(world.storage_of::<Burning>(), Some(Storage::Sparse));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Storage {
    /// A column with a slot per row (in virtual memory) and a presence bit
    /// per row: iteration streams the column, adding or removing the
    /// component writes one slot and one bit.
    #[default]
    Dense,
    /// A sparse set: the values packed in one array, found through an array
    /// indexed by entity index. For components few entities have.
    Sparse,
}

/// One component type's storage with its borrow flag.
pub(crate) struct Column {
    /// The run-time borrow of the storage by `&World` queries and guards.
    pub(crate) flag: BorrowFlag,
    /// The component type's name, for borrow-conflict panics.
    pub(crate) name: &'static str,
    /// Dense or sparse.
    pub(crate) kind: Storage,
    /// A `TypedStorage<T>` of the column's type.
    pub(crate) storage: ErasedStorage,
}

/// One component type's storage behind the object-safe [`AnyStorage`] (the
/// operations that do not need the type go through its vtable), with the
/// `TypeId` of the [`TypedStorage<T>`] it is, so that the typed storage is
/// reached with one compare, not `Any`'s two virtual calls.
pub(crate) struct ErasedStorage {
    /// `TypeId::of::<TypedStorage<T>>()`. Invariant: `inner` is a
    /// `TypedStorage<T>` of this `T`.
    ty: TypeId,
    /// The storage, owned: made by `Box::into_raw`, freed in `Drop`, never
    /// moved in between. A raw pointer rather than a `Box`, so that the
    /// copy of its address the world's [`TypeIndex`] keeps stays valid
    /// while this one is used (a `Box` asserts it is the only way to the
    /// storage whenever it is used, which would invalidate the copy).
    inner: NonNull<dyn AnyStorage>,
}

// SAFETY: the storage is owned, like a `Box<dyn AnyStorage>`, and
// `AnyStorage` requires `Send` and `Sync`.
unsafe impl Send for ErasedStorage {}
// SAFETY: as for `Send`.
unsafe impl Sync for ErasedStorage {}

impl Drop for ErasedStorage {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` and not freed before (the field's
        // invariant); nothing uses it after this.
        drop(unsafe { Box::from_raw(self.inner.as_ptr()) });
    }
}

impl ErasedStorage {
    /// `storage`, erased.
    pub(crate) fn new<T: Send + Sync + 'static>(storage: TypedStorage<T>) -> Self {
        let inner: Box<dyn AnyStorage> = Box::new(storage);
        ErasedStorage {
            ty: TypeId::of::<TypedStorage<T>>(),
            inner: NonNull::from(Box::leak(inner)),
        }
    }

    /// The address of the storage, with the provenance of the one pointer
    /// every access goes through: for the world's [`TypeIndex`].
    pub(crate) fn data_ptr(&self) -> NonNull<()> {
        self.inner.cast()
    }

    /// The storage as a `TypedStorage<T>`, mutably, if it is one.
    #[inline]
    pub(crate) fn typed_mut<T: 'static>(&mut self) -> Option<&mut TypedStorage<T>> {
        if self.ty != TypeId::of::<TypedStorage<T>>() {
            return None;
        }
        // SAFETY: the storage is a `TypedStorage<T>` (just checked), owned
        // and live (the invariant of `inner`), borrowed for `&mut self`.
        Some(unsafe { self.inner.cast::<TypedStorage<T>>().as_mut() })
    }
}

impl std::ops::Deref for ErasedStorage {
    type Target = dyn AnyStorage;
    fn deref(&self) -> &(dyn AnyStorage + 'static) {
        // SAFETY: owned and live (the invariant of `inner`), borrowed for
        // `&self`.
        unsafe { self.inner.as_ref() }
    }
}

impl std::ops::DerefMut for ErasedStorage {
    fn deref_mut(&mut self) -> &mut (dyn AnyStorage + 'static) {
        // SAFETY: as in `deref`, borrowed for `&mut self`.
        unsafe { self.inner.as_mut() }
    }
}

/// The operations on a component storage that do not need its type.
pub(crate) trait AnyStorage: Send + Sync {
    /// Whether `entity` (at `row`) has the component.
    fn contains(&self, entity: Entity, row: usize) -> bool;
    /// Drops the component of `entity` (at `row`) if it has one. The slot is
    /// marked absent before the value is dropped, so a panicking `Drop`
    /// leaves no double drop behind.
    fn drop_one(&mut self, entity: Entity, row: usize);
    /// Moves the component of `entity` (at `row`), if it has one, to `dst`
    /// (`World::take`), and says whether it did.
    ///
    /// # Safety
    ///
    /// `dst` is aligned for the storage's component type and valid for a
    /// write of one.
    unsafe fn take_raw(&mut self, entity: Entity, row: usize, dst: *mut u8) -> bool;
    /// Drops the dense components of rows in `[start, end)` that `alive`
    /// does not mark (left behind by a panicking `Drop` in a despawn).
    /// `alive(word)` gives the alive word of word `word`.
    fn drop_dead(&mut self, start: usize, end: usize, alive: &dyn Fn(usize) -> u64);
    /// Moves the dense component of row `from` (if any) to row `to`, which
    /// must have none. Sparse storage is keyed by entity and does nothing.
    fn move_row(&mut self, from: usize, to: usize);
    /// Gives back the memory of rows below `front`, which hold no component.
    fn release_front(&mut self, front: usize);
    /// Moves the windows back to the start of their reservations.
    fn rebase(&mut self);
    /// Drops every component (each once, even if a `Drop` panics; the first
    /// panic propagates afterwards) and releases the memory.
    fn clear(&mut self, front: usize);
    /// Bytes of memory committed (dense) or allocated (sparse).
    fn memory_bytes(&self) -> usize;
    /// The number of components stored.
    fn len(&self) -> usize;
}

/// The storage of one component type: a dense column or a sparse set.
// One per component type, boxed in the world: the size difference is moot.
#[allow(clippy::large_enum_variant)]
pub(crate) enum TypedStorage<T> {
    /// A column with a slot per row.
    Dense(DenseColumn<T>),
    /// A sparse set keyed by entity index.
    Sparse(SparseSet<T>),
}

// SAFETY: the values sit in `UnsafeCell`s only so that a query holding a
// borrow flag can write through a shared reference to the storage. Every
// access to a value goes through a `&mut` to the world, or holds the
// column's borrow flag (shared for reads, exclusive for writes), so values
// are shared between threads only as `&T` (needs `T: Sync`) and moved or
// mutated by one thread at a time (needs `T: Send`).
unsafe impl<T: Send + Sync> Sync for TypedStorage<T> {}
// SAFETY: as above; the storage owns its values. The raw pointers of a
// dense column's `RawWindows` point into the column's own vectors, which
// move with it.
unsafe impl<T: Send + Sync> Send for TypedStorage<T> {}

/// One dense column: a slot per row from the column's first row to the last
/// row that ever held the component (or to the end of that row's presence
/// word: see [`extend_window`](Self::extend_window)), and one presence bit
/// per row.
pub(crate) struct DenseColumn<T> {
    /// The slots. The slot of row `r` sits at position `r - row_base` of the
    /// vector. Invariant: a slot is initialized if and only if its row's
    /// presence bit is set.
    data: VmVec<Slot<T>>,
    /// The row of position 0 of `data`, modulo 2⁶⁴: the world's front row
    /// when the column was made, less the column's [`stagger`] (so it may
    /// wrap below zero; every use is wrapping arithmetic, and the rows a
    /// column holds are never below it).
    row_base: usize,
    /// The presence words: word `w` (rows `64w..64w + 64`) sits at position
    /// `w - word_base`. Invariant: a set bit lies within `data`'s window, and
    /// no bit is set below the world's front row.
    present: VmVec<u64>,
    /// The word of position 0 of `present`.
    word_base: usize,
    /// The number of set presence bits.
    len: usize,
    /// A lower bound on the word of every set presence bit, and at most
    /// the word of every slot pushed with a value: a column made for a type
    /// that later entities have starts at the world's front, and its views
    /// leave out the zero words below this bound, so that a query skips
    /// them without reading them. It starts at the word of the column's
    /// first row; a batch or an insert into an empty word updates it (to
    /// the new bit's word when the column has no bit, else to the lower of
    /// the two); a push into the next slot needs nothing, as that row lies
    /// past every slot.
    first_word: usize,
    /// The windows of `data` and `present` as raw parts, so that a lookup by
    /// row is a bounds check and a load from a pointer (see [`RawWindows`]).
    /// Invariant: `raw` is [`windows`](Self::windows) of the current
    /// vectors whenever a method of the column is entered: every method
    /// that pushes, drains or rebases either vector calls
    /// [`sync`](Self::sync) before it returns (a [`BatchWriter`], which
    /// holds the column throughout, when it is dropped).
    raw: RawWindows<T>,
    /// A copy of `raw` without the type, where the world's [`TypeIndex`]
    /// finds it (see [`LookupHead`]). Owned: made by `Box::leak`, freed
    /// in `Drop` (`Box::from_raw`), never moved in between. Invariant: it holds what
    /// `raw` holds (`sync` writes both).
    head: NonNull<LookupHead>,
}

/// A dense column's slot: a value or nothing, written through shared
/// references by the queries that hold the column's flag exclusively.
type Slot<T> = UnsafeCell<MaybeUninit<T>>;

/// The two windows of a [`DenseColumn`], as the raw parts a lookup by row
/// needs: the slot of row `r` is at `slots.wrapping_add(r)` if `r` lies in
/// `rows..rows + row_count`, the presence word `w` at `words.wrapping_add(w)`
/// if `w` lies in `words_from..words_from + word_count`. Both pointers come
/// from [`VmVec::as_mut_ptr`] (moved back by the window's first row or
/// word, with wrapping arithmetic), so they carry the reservations' own
/// provenance and stay valid across pushes, drains and other access to the
/// vectors; only a rebase moves the elements, and the column then syncs.
struct RawWindows<T> {
    slots: *mut Slot<T>,
    /// The row of `data`'s first slot.
    rows: usize,
    /// `data.len()`.
    row_count: usize,
    words: *mut u64,
    /// The word of `present`'s first word.
    words_from: usize,
    /// `present.len()`.
    word_count: usize,
}

impl<T> RawWindows<T> {
    /// The windows without the type, as the world's index reads them (and
    /// the column's own lookups, through the same two methods).
    #[inline(always)]
    fn head(&self) -> LookupHead {
        LookupHead {
            words: self.words,
            words_from: self.words_from,
            word_count: self.word_count,
            slots: self.slots.cast(),
            sparse: false,
        }
    }
}

impl<T> Clone for RawWindows<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RawWindows<T> {}

impl<T> PartialEq for RawWindows<T> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.slots, other.slots)
            && self.rows == other.rows
            && self.row_count == other.row_count
            && std::ptr::eq(self.words, other.words)
            && self.words_from == other.words_from
            && self.word_count == other.word_count
    }
}

impl<T> DenseColumn<T> {
    /// The position in `data` of row `row` (wrapping: a staggered column's
    /// `row_base` may lie below zero).
    #[inline(always)]
    fn position(&self, row: usize) -> usize {
        row.wrapping_sub(self.row_base)
    }

    /// The row at the front of `data`.
    #[inline(always)]
    fn data_front(&self) -> usize {
        self.row_base.wrapping_add(self.data.front_position())
    }

    /// The raw windows of the vectors as they are now.
    fn windows(&self) -> RawWindows<T> {
        let rows = self.data_front();
        let words_from = self.word_base.wrapping_add(self.present.front_position());
        RawWindows {
            slots: self.data.as_ptr().cast_mut().wrapping_sub(rows),
            rows,
            row_count: self.data.len(),
            words: self.present.as_ptr().cast_mut().wrapping_sub(words_from),
            words_from,
            word_count: self.present.len(),
        }
    }

    /// Brings [`raw`](Self::raw) up to date after the vectors' windows
    /// changed. The pointers come from `as_mut_ptr`, so they may be written
    /// through.
    fn sync(&mut self) {
        let rows = self.data_front();
        let words_from = self.word_base.wrapping_add(self.present.front_position());
        self.raw = RawWindows {
            slots: self.data.as_mut_ptr().wrapping_sub(rows),
            rows,
            row_count: self.data.len(),
            words: self.present.as_mut_ptr().wrapping_sub(words_from),
            words_from,
            word_count: self.present.len(),
        };
        // The head is owned and live (the field's invariant); the world's
        // index reads it only under a borrow of the world that owns this
        // column, which `&mut self` excludes.
        // SAFETY: so the write is to live memory, with no reader.
        unsafe { *self.head.as_ptr() = self.raw.head() };
    }

    /// Whether [`raw`](Self::raw) and the head are up to date (for debug
    /// assertions).
    fn synced(&self) -> bool {
        // SAFETY: the head is owned and live (the field's invariant).
        let head = unsafe { *self.head.as_ptr() };
        self.raw == self.windows() && head == self.raw.head()
    }

    /// The column's lookup head, for the world's [`TypeIndex`].
    pub(crate) fn head_ptr(&self) -> NonNull<LookupHead> {
        self.head
    }

    /// A pointer to the presence word `word` if it lies in the window,
    /// valid for reads (and, under `&mut self`, writes) while the column is
    /// borrowed.
    #[inline(always)]
    fn word_ptr(&self, word: usize) -> Option<*mut u64> {
        debug_assert!(self.synced(), "stale raw windows");
        self.raw.head().word_ptr(word)
    }

    /// A pointer to the value of `row`'s slot, which must lie in the window
    /// for the pointer to be used.
    #[inline(always)]
    fn value_ptr(&self, row: usize) -> *mut T {
        self.raw.head().slot_value(row)
    }

    /// [`value_ptr`](Self::value_ptr) of a row that has a value, said not
    /// null: made by wrapping arithmetic, the pointer could be null as far
    /// as the optimizer knows, and a call that returns the reference in an
    /// `Option` or a `Result` tested it on every lookup.
    ///
    /// # Safety
    ///
    /// `row` has a value (its presence bit is set).
    #[inline(always)]
    unsafe fn present_value_ptr(&self, row: usize) -> *mut T {
        debug_assert!(self.has(row));
        let value = self.value_ptr(row);
        // SAFETY: a set presence bit lies in the window (the invariant on
        // `present`), so the slot is in the column's reservation: not null.
        unsafe { core::hint::assert_unchecked(!value.is_null()) };
        value
    }

    /// An empty column whose first row is `front`, with room for `max_rows`
    /// rows. Panics if the address space cannot be reserved.
    fn new(front: usize, max_rows: usize, index: usize) -> Self {
        let pad = stagger::<T>(index);
        let mut data = VmVec::with_max_capacity_recycled(max_rows + slack::<T>() + pad)
            .unwrap_or_else(|error| panic!("handlekit-ecs: reserving a column: {error}"));
        // The column's first slot starts `pad` slots into its reservation:
        // pushed and drained at once, they leave the window there.
        for _ in 0..pad {
            push_or_rebase(&mut data, UnsafeCell::new(MaybeUninit::uninit()));
        }
        // `MaybeUninit` drops nothing.
        data.drain_front(pad);
        let present = VmVec::with_max_capacity_recycled(max_rows / WORD + 2 + slack::<u64>())
            .unwrap_or_else(|error| panic!("handlekit-ecs: reserving a column: {error}"));
        let mut column = DenseColumn {
            row_base: front.wrapping_sub(data.front_position()),
            data,
            present,
            word_base: front / WORD,
            len: 0,
            first_word: front / WORD,
            raw: RawWindows {
                slots: std::ptr::null_mut(),
                rows: 0,
                row_count: 0,
                words: std::ptr::null_mut(),
                words_from: 0,
                word_count: 0,
            },
            head: NonNull::from(Box::leak(Box::new(EMPTY_HEAD))),
        };
        column.sync();
        column
    }

    /// The presence word `word` (0 outside the column).
    #[inline]
    fn word(&self, word: usize) -> u64 {
        // SAFETY: a pointer `word_ptr` gives is to a live word of the
        // window; words are written only under `&mut self`.
        self.word_ptr(word).map_or(0, |word| unsafe { *word })
    }

    #[inline]
    fn has(&self, row: usize) -> bool {
        self.word(row / WORD) & bit(row) != 0
    }

    /// The value of `row`, if it has one.
    #[inline]
    fn get(&self, row: usize) -> Option<&T> {
        if !self.has(row) {
            return None;
        }
        // The presence bit is set: the slot lies in the window and is
        // initialized. No query writes the value while the column is
        // borrowed shared (see `TypedStorage::get`).
        // SAFETY: so the pointer is to an initialized `T`, read-only while
        // `&self` lives.
        Some(unsafe { &*self.present_value_ptr(row) })
    }

    /// The value of `row`, mutably, if it has one.
    #[inline]
    fn get_mut(&mut self, row: usize) -> Option<&mut T> {
        if !self.has(row) {
            return None;
        }
        // SAFETY: as in `get`; `&mut self` makes the access unique.
        Some(unsafe { &mut *self.present_value_ptr(row) })
    }

    /// The presence word of `row`, made if needed; the caller syncs.
    #[inline]
    fn word_mut(&mut self, row: usize) -> &mut u64 {
        let position = row / WORD - self.word_base;
        if position >= self.present.next_position() {
            self.grow_words(position);
        }
        self.present
            .get_by_position_mut(position)
            .expect("handlekit-ecs: presence word below the front")
    }

    /// Keeps [`first_word`](Self::first_word) a bound before the bit of
    /// `row` is set in a word that may have none (called before `len`
    /// counts it): a column with no bit starts its bound at the row's word,
    /// any other lowers it to there if needed.
    #[cold]
    #[inline(never)]
    fn bit_in_empty_word(&mut self, row: usize) {
        let word = row / WORD;
        self.first_word = if self.len == 0 {
            word
        } else {
            self.first_word.min(word)
        };
    }

    /// Pushes zero words up to `position`; the caller syncs.
    #[cold]
    #[inline(never)]
    fn grow_words(&mut self, position: usize) {
        while self.present.next_position() <= position {
            push_or_rebase(&mut self.present, 0);
        }
    }

    /// The slot of `row`, made if needed; the caller syncs.
    fn slot_mut(&mut self, row: usize) -> &mut MaybeUninit<T> {
        let position = self.position(row);
        while self.data.next_position() <= position {
            push_or_rebase(&mut self.data, UnsafeCell::new(MaybeUninit::uninit()));
        }
        self.data
            .get_by_position_mut(position)
            .expect("handlekit-ecs: slot below the front")
            .get_mut()
    }

    /// Puts `value` in `row`, returning the value it replaces. Inline: a
    /// slot in the window, or the column's next slot (a spawn, or adding
    /// to entities in row order; made out of line with the rest of its
    /// word's), in a presence word that exists; the rest out of line.
    /// Always inlined:
    /// with the push, LLVM left it out of line in `World::insert_one`,
    /// where each call then paid a call and six register saves and
    /// restores (callgrind, `ecs_instructions add_remove handlekit-one`).
    #[inline(always)]
    fn insert(&mut self, row: usize, value: T) -> Option<T> {
        let offset = row.wrapping_sub(self.raw.rows);
        if offset <= self.raw.row_count {
            if let Some(word) = self.word_ptr(row / WORD) {
                // SAFETY: the word lies in its window, and `&mut self`
                // makes the access unique.
                let bits = unsafe { *word };
                if offset == self.raw.row_count {
                    // The next slot: made, with the rest of its word's.
                    self.extend_window(row);
                }
                let slot = self.value_ptr(row);
                if bits & bit(row) != 0 {
                    // SAFETY: the slot lies in the window, and its presence
                    // bit is set: it is initialized.
                    return Some(unsafe { slot.replace(value) });
                }
                // SAFETY: the slot lies in the window and holds no value.
                unsafe { slot.write(value) };
                // SAFETY: as above (making slots moves no presence word).
                unsafe { *word = bits | bit(row) };
                // A word with a bit lies at or above `first_word`.
                if bits == 0 {
                    self.bit_in_empty_word(row);
                }
                self.len += 1;
                return None;
            }
        }
        self.insert_past(row, value)
    }

    /// Makes the column's next slot, that of `row`, and with it, where the
    /// committed memory has room, the slots of the rest of `row`'s presence
    /// word, all empty. Inserts in row order (adding a component to
    /// entities in turn) then find their slots made 63 times in 64, and
    /// write each in place, where a push per insert checked the capacity
    /// and counted the slot twice: `add_remove` with a `ColumnMut` went
    /// from 102 to 95 instructions an entity (callgrind, 10,000 entities;
    /// its time moved 0-8% on the noisy development machine). A batch cuts
    /// off the empty slots past the world's last row (see
    /// [`BatchWriter::new`]).
    #[cold]
    #[inline(never)]
    fn extend_window(&mut self, row: usize) {
        debug_assert_eq!(self.position(row), self.data.next_position());
        let wanted = WORD - row % WORD;
        let room = self.data.spare_capacity_mut().len().min(wanted);
        if room > 0 {
            // SAFETY: `room` slots fit in the spare capacity, and a slot is
            // a `MaybeUninit` (in an `UnsafeCell`): valid uninitialized.
            unsafe { self.data.set_len(self.data.len() + room) };
        } else {
            // Commits memory, or moves a full window back.
            push_or_rebase(&mut self.data, UnsafeCell::new(MaybeUninit::uninit()));
        }
        self.sync();
    }

    /// [`insert`](Self::insert) into a row whose presence word is not made
    /// yet, or past the column's next slot.
    #[inline(never)]
    fn insert_past(&mut self, row: usize, value: T) -> Option<T> {
        if self.position(row) == self.data.next_position() {
            push_or_rebase(&mut self.data, UnsafeCell::new(MaybeUninit::new(value)));
            // The pushed row lies past every slot, so at or above
            // `first_word` (see there): no update.
            *self.word_mut(row) |= bit(row);
            self.len += 1;
            self.sync();
            return None;
        }
        self.insert_slow(row, value)
    }

    /// [`insert`](Self::insert) into a row past the column's slots, or whose
    /// presence word is not made yet.
    #[cold]
    #[inline(never)]
    fn insert_slow(&mut self, row: usize, value: T) -> Option<T> {
        if self.has(row) {
            // SAFETY: the presence bit is set, so the slot is initialized.
            let slot = unsafe { self.slot_mut(row).assume_init_mut() };
            return Some(std::mem::replace(slot, value));
        }
        self.slot_mut(row).write(value);
        *self.word_mut(row) |= bit(row);
        self.bit_in_empty_word(row);
        self.len += 1;
        self.sync();
        None
    }

    /// Takes the value out of `row`.
    #[inline]
    fn remove(&mut self, row: usize) -> Option<T> {
        let word = self.word_ptr(row / WORD)?;
        // SAFETY: the word lies in the window; `&mut self` makes the access
        // unique.
        let bits = unsafe { *word };
        if bits & bit(row) == 0 {
            return None;
        }
        // SAFETY: as above.
        unsafe { *word = bits & !bit(row) };
        self.len -= 1;
        // SAFETY: the bit was set, so the slot is in the window and initialized;
        // clearing the bit first hands ownership of the value to this read.
        Some(unsafe { self.value_ptr(row).read() })
    }

    /// Drops the value of `row`, if it has one (the bit is cleared first).
    /// A type with no drop glue only has its bit cleared: the value is not
    /// read out.
    #[inline]
    fn drop_row(&mut self, row: usize) {
        if std::mem::needs_drop::<T>() {
            drop(self.remove(row));
            return;
        }
        if let Some(word) = self.word_ptr(row / WORD) {
            // SAFETY: the word lies in the window; `&mut self` makes the
            // access unique.
            unsafe {
                if *word & bit(row) != 0 {
                    *word &= !bit(row);
                    self.len -= 1;
                }
            }
        }
    }

    /// The raw view a query reads through.
    fn view(&self) -> DenseView<T> {
        let words = self.present.as_slice();
        let front_word = self.word_base + self.present.front_position();
        // The words below `first_word` are zero: left out of the view.
        let skip = self.first_word.saturating_sub(front_word).min(words.len());
        let words = &words[skip..];
        DenseView {
            data: self.data.as_ptr(),
            row_offset: self.data_front(),
            words: words.as_ptr(),
            words_len: words.len(),
            word_offset: front_word + skip,
            every_live_row: false,
        }
    }
}

impl<T> Drop for DenseColumn<T> {
    fn drop(&mut self) {
        let front = self.data_front();
        // The head is freed after the values, which may read it (debug
        // assertions), and also when a value's `Drop` panics.
        let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.clear_values(front);
        }));
        // Made by `Box::leak` and not freed before (the field's
        // invariant); the world that owns this column is being dropped, so
        // its index no longer reads the head.
        // SAFETY: so the box is ours to free, once.
        drop(unsafe { Box::from_raw(self.head.as_ptr()) });
        if let Err(payload) = dropped {
            std::panic::resume_unwind(payload);
        }
    }
}

impl<T> DenseColumn<T> {
    /// Drops every value; the first panic of a `Drop` propagates after all
    /// were dropped.
    fn clear_values(&mut self, _front: usize) {
        if !std::mem::needs_drop::<T>() {
            // Nothing to drop: clear the bits a word at a time.
            self.present.iter_mut().for_each(|word| *word = 0);
            self.len = 0;
            return;
        }
        let mut panic = None;
        let first_word = self.word_base + self.present.front_position();
        for i in 0..self.present.len() {
            let mut bits = std::mem::take(&mut self.present[i]);
            while bits != 0 {
                let row = (first_word + i) * WORD + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.len -= 1;
                let slot = self.slot_mut(row);
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    // SAFETY: the bit was set (and is now cleared), so the
                    // slot is initialized and this drop owns the value.
                    unsafe { slot.assume_init_drop() };
                }));
                if let Err(payload) = result {
                    panic.get_or_insert(payload);
                }
            }
        }
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }
}

impl<T: Send + Sync + 'static> AnyStorage for TypedStorage<T> {
    fn contains(&self, entity: Entity, row: usize) -> bool {
        self.has(entity, row)
    }

    fn drop_one(&mut self, entity: Entity, row: usize) {
        match self {
            TypedStorage::Dense(column) => column.drop_row(row),
            TypedStorage::Sparse(set) => drop(set.remove(entity)),
        }
    }

    unsafe fn take_raw(&mut self, entity: Entity, row: usize, dst: *mut u8) -> bool {
        let Some(value) = self.remove(entity, row) else {
            return false;
        };
        // SAFETY: the caller's contract: `dst` is aligned and valid for a
        // write of a `T`.
        unsafe { dst.cast::<T>().write(value) };
        true
    }

    fn drop_dead(&mut self, start: usize, end: usize, alive: &dyn Fn(usize) -> u64) {
        let TypedStorage::Dense(column) = self else {
            return;
        };
        if start >= end {
            return;
        }
        let mut panic = None;
        for word in start / WORD..=(end - 1) / WORD {
            let mut range = u64::MAX;
            if word == start / WORD {
                range &= u64::MAX << (start % WORD);
            }
            if word == (end - 1) / WORD && end % WORD != 0 {
                range &= u64::MAX >> (WORD - end % WORD);
            }
            let mut bits = column.word(word) & !alive(word) & range;
            while bits != 0 {
                let row = word * WORD + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let value = column.remove(row);
                if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    drop(value);
                })) {
                    panic.get_or_insert(payload);
                }
            }
        }
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }

    fn move_row(&mut self, from: usize, to: usize) {
        if let TypedStorage::Dense(column) = self {
            if let Some(value) = column.remove(from) {
                let old = column.insert(to, value);
                debug_assert!(old.is_none(), "moved a row onto a component");
                std::mem::forget(old);
            }
        }
    }

    fn release_front(&mut self, front: usize) {
        let TypedStorage::Dense(column) = self else {
            return;
        };
        let data_front = column.data_front();
        if front > data_front {
            let dead = (front - data_front).min(column.data.len());
            // `MaybeUninit` drops nothing: this only releases memory.
            column.data.drain_front(dead);
        }
        let word_front = column.word_base + column.present.front_position();
        let first_word = front / WORD;
        if first_word > word_front {
            let dead = (first_word - word_front).min(column.present.len());
            debug_assert!(
                column.present[..dead].iter().all(|&w| w == 0),
                "released a presence word with a bit set"
            );
            column.present.drain_front(dead);
        }
        // An emptied vector starts over at the front: its next push must not
        // fill the rows it skipped (the window would outgrow `max_rows`).
        if column.data.is_empty() {
            column.row_base = front.wrapping_sub(column.data.front_position());
        }
        if column.present.is_empty() {
            column.word_base = first_word - column.present.front_position();
        }
        column.sync();
    }

    fn rebase(&mut self) {
        if let TypedStorage::Dense(column) = self {
            column.data.rebase();
            column.present.rebase();
            column.sync();
        }
    }

    fn clear(&mut self, front: usize) {
        match self {
            TypedStorage::Dense(column) => {
                struct Release<'a, T>(&'a mut DenseColumn<T>, usize);
                impl<T> Drop for Release<'_, T> {
                    fn drop(&mut self) {
                        let column = &mut *self.0;
                        // Every bit is clear: give back every slot and word,
                        // and start the column over at the world's front.
                        column.data.clear();
                        column.present.clear();
                        column.data.rebase();
                        column.present.rebase();
                        column.row_base = self.1.wrapping_sub(column.data.front_position());
                        column.word_base = self.1 / WORD - column.present.front_position();
                        column.first_word = self.1 / WORD;
                        column.sync();
                    }
                }
                let guard = Release(column, front);
                guard.0.clear_values(front);
            }
            TypedStorage::Sparse(set) => set.clear(),
        }
    }

    fn memory_bytes(&self) -> usize {
        match self {
            TypedStorage::Dense(column) => {
                column.data.committed_bytes() + column.present.committed_bytes()
            }
            TypedStorage::Sparse(set) => set.memory_bytes(),
        }
    }

    fn len(&self) -> usize {
        match self {
            TypedStorage::Dense(column) => column.len,
            TypedStorage::Sparse(set) => set.values.len(),
        }
    }
}

impl<T> TypedStorage<T> {
    /// A dense column starting at row `front`, the world's column number
    /// `index` (which sets its [`stagger`]).
    pub(crate) fn dense(front: usize, max_rows: usize, index: usize) -> Self {
        TypedStorage::Dense(DenseColumn::new(front, max_rows, index))
    }

    /// An empty sparse set.
    pub(crate) fn sparse() -> Self {
        TypedStorage::Sparse(SparseSet::new())
    }

    /// The storage's lookup head, for the world's [`TypeIndex`]: the dense
    /// column's own, or [`SPARSE_HEAD`].
    pub(crate) fn head_ptr(&self) -> NonNull<LookupHead> {
        match self {
            TypedStorage::Dense(column) => column.head_ptr(),
            TypedStorage::Sparse(_) => NonNull::from(&SPARSE_HEAD),
        }
    }

    /// Whether `entity` (at `row`) has the component.
    #[inline]
    pub(crate) fn has(&self, entity: Entity, row: usize) -> bool {
        match self {
            TypedStorage::Dense(column) => column.has(row),
            TypedStorage::Sparse(set) => set.position(entity).is_some(),
        }
    }

    /// Puts `value` on `entity` (at `row`), returning the value it replaces.
    #[inline]
    pub(crate) fn insert(&mut self, entity: Entity, row: usize, value: T) -> Option<T> {
        match self {
            TypedStorage::Dense(column) => column.insert(row, value),
            TypedStorage::Sparse(set) => set.insert(entity, value),
        }
    }

    /// Takes the component of `entity` (at `row`) out.
    #[inline]
    pub(crate) fn remove(&mut self, entity: Entity, row: usize) -> Option<T> {
        match self {
            TypedStorage::Dense(column) => column.remove(row),
            TypedStorage::Sparse(set) => set.remove(entity),
        }
    }

    /// The component of `entity` (at `row`), mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, entity: Entity, row: usize) -> Option<&mut T> {
        match self {
            TypedStorage::Dense(column) => column.get_mut(row),
            TypedStorage::Sparse(set) => {
                let position = set.position(entity)?;
                // `get_mut`, not indexing: no panic path (see `position`).
                set.values.get_mut(position).map(UnsafeCell::get_mut)
            }
        }
    }

    /// The component of `entity` (at `row`). The caller keeps every writer
    /// of `T` out while the reference lives: it borrows the world
    /// exclusively (`ColumnMut`), or holds the column's borrow flag shared
    /// (`World::get`).
    #[inline]
    pub(crate) fn get(&self, entity: Entity, row: usize) -> Option<&T> {
        match self {
            TypedStorage::Dense(column) => column.get(row),
            TypedStorage::Sparse(set) => {
                let position = set.position(entity)?;
                // SAFETY: as above, for the sparse set's value.
                Some(unsafe { &*set.values[position].get() })
            }
        }
    }

    /// Whether this is a dense column with a value in every live row of a
    /// world whose row window holds `rows` rows, `live` of them alive: told
    /// in O(1), so that a lookup of a live row can skip its presence word.
    #[inline]
    pub(crate) fn dense_in_every_live_row(&self, rows: usize, live: usize) -> bool {
        // Every row of the window is alive (no dead row can hold a
        // component) and the column holds as many components as there are
        // live entities: then every live row has one.
        matches!(self, TypedStorage::Dense(column) if rows == live && column.len == live)
    }

    /// The raw view queries read through. `rows` is the world's row → entity
    /// window (a sparse view looks entities up in it), `live` the number of
    /// live entities.
    pub(crate) fn view(&self, rows: RowsView, live: usize) -> View<T> {
        match self {
            TypedStorage::Dense(column) => {
                let mut view = column.view();
                view.every_live_row = self.dense_in_every_live_row(rows.len, live);
                View::Dense(view)
            }
            TypedStorage::Sparse(set) => View::Sparse(SparseView {
                index: set.index.as_ptr(),
                index_len: set.index.len(),
                far: &set.far,
                owners: set.owners.as_ptr(),
                values: set.values.as_ptr(),
                rows,
            }),
        }
    }
}

/// Writes one component type of a [`World::spawn_batch`](crate::World::spawn_batch),
/// or one run of a loaded column, into its storage: the batch's rows are
/// consecutive from `start`, so a dense column takes each value with a plain
/// push into its next slot, and the presence bits of the pushed rows are set
/// a word at a time (and the column's count raised) when the writer is
/// dropped, also on a panic.
pub(crate) struct BatchWriter<'a, T> {
    target: BatchTarget<'a, T>,
    /// The batch's first row.
    start: usize,
    /// Values pushed into a dense column, at rows `start..start + pushed`.
    /// Invariant: their slots are initialized and their presence bits not
    /// yet set; the drop sets them, and syncs the column's raw windows
    /// (stale while the writer pushes, as nothing else reaches the column).
    pushed: usize,
}

enum BatchTarget<'a, T> {
    /// A dense column whose next slot is the batch's next row.
    Push(&'a mut DenseColumn<T>),
    /// Anything else (a sparse set): one insert per value.
    Insert(&'a mut TypedStorage<T>),
}

impl<'a, T> BatchWriter<'a, T> {
    /// A writer for rows from `start` on: the world's next row (a spawn
    /// batch), or a run of rows holding no `T` at or past the column's last
    /// slot (a load); for about `additional` entities (a batch iterator's
    /// lower bound, a saved run's length). A dense column gets empty slots
    /// up to `start` (the rows it skipped), and the memory of `additional`
    /// more slots and their presence words is prepared at once
    /// ([`VmVec::reserve`]), rather than a page fault at a time.
    pub(crate) fn new(storage: &'a mut TypedStorage<T>, start: usize, additional: usize) -> Self {
        // A dense column gets its skipped slots (or loses its empty ones
        // past `start`); then it takes pushes if its next slot is `start`
        // (always, but for a column whose window starts past `start`; the
        // general path stays correct anyway).
        let push = match storage {
            TypedStorage::Dense(column) => {
                let position = column.position(start);
                // Slots past the world's last row are empty (an insert may
                // have made the rest of a presence word's): cut them off,
                // so that the batch pushes.
                let front = column.data.front_position();
                if (front..column.data.next_position()).contains(&position) {
                    debug_assert!(
                        (start..column.data_front() + column.data.len())
                            .all(|row| !column.has(row)),
                        "a batch's rows hold values"
                    );
                    // A slot is a `MaybeUninit`: this drops nothing.
                    column.data.truncate(position - front);
                }
                while column.data.next_position() < position {
                    push_or_rebase(&mut column.data, UnsafeCell::new(MaybeUninit::uninit()));
                }
                column.data.reserve(additional);
                column.present.reserve(additional / WORD + 2);
                column.sync();
                column.data.next_position() == position
            }
            TypedStorage::Sparse(_) => false,
        };
        let target = if push {
            match storage {
                TypedStorage::Dense(column) => BatchTarget::Push(column),
                TypedStorage::Sparse(_) => unreachable!("a sparse set takes no pushes"),
            }
        } else {
            BatchTarget::Insert(storage)
        };
        BatchWriter {
            target,
            start,
            pushed: 0,
        }
    }

    /// Puts `value` on the new `entity` at `row`, the batch's next row.
    // Always inlined: called once per value from loops whose bodies (a
    // bundle's other columns, a deserializer) are too large for `#[inline]`
    // to take it in, a call cost about 25 instructions per value of a load
    // (callgrind), more than the push itself.
    #[inline(always)]
    pub(crate) fn put(&mut self, entity: Entity, row: usize, value: T) {
        match &mut self.target {
            BatchTarget::Push(column) => {
                debug_assert_eq!(row, self.start + self.pushed);
                push_or_rebase(&mut column.data, UnsafeCell::new(MaybeUninit::new(value)));
                self.pushed += 1;
            }
            BatchTarget::Insert(storage) => drop(storage.insert(entity, row, value)),
        }
    }

    /// Puts a value from `next` on each entity of `entities`, the batch's
    /// next rows in order; stops at the first error. The target is matched
    /// once, so a dense column's loop is `next` and a push. (Loading a
    /// world is its one user.)
    #[cfg(feature = "serde")]
    pub(crate) fn put_each<E>(
        &mut self,
        entities: &[Entity],
        mut next: impl FnMut() -> Result<T, E>,
    ) -> Result<(), E> {
        match &mut self.target {
            BatchTarget::Push(column) => {
                for _ in entities {
                    let value = next()?;
                    push_or_rebase(&mut column.data, UnsafeCell::new(MaybeUninit::new(value)));
                    self.pushed += 1;
                }
            }
            BatchTarget::Insert(storage) => {
                let start = self.start;
                for (row, &entity) in (start..).zip(entities) {
                    let value = next()?;
                    drop(storage.insert(entity, row, value));
                }
            }
        }
        Ok(())
    }
}

impl<T> Drop for BatchWriter<'_, T> {
    fn drop(&mut self) {
        if let BatchTarget::Push(column) = &mut self.target {
            let word_base = column.word_base;
            set_bits(
                &mut column.present,
                word_base,
                self.start,
                self.start + self.pushed,
            );
            if self.pushed > 0 {
                column.first_word = if column.len == 0 {
                    self.start / WORD
                } else {
                    column.first_word.min(self.start / WORD)
                };
            }
            column.len += self.pushed;
            column.sync();
        }
    }
}

/// A sparse set: values packed in one array, found from the entity's index
/// through a second array.
///
/// The index is sized to what the set holds, not to the largest entity
/// index it has seen: the flat array `index` covers the indices below
/// [`flat_limit`] of the set's count (so it holds at most 8 entries per
/// value, and 1024 for a small set), and an entity whose index lies past it
/// is found in the hash map `far`. A set built from a saved world whose one
/// entity has index 18 million so takes a few bytes, not 72 MiB. The hot
/// lookup is the same flat read as before; only an index past the flat
/// array (which used to return `None` at once) goes on to the map, out of
/// line.
pub(crate) struct SparseSet<T> {
    /// By entity index below `index.len()`: one past the position of its
    /// value in `values`, or 0. Invariant: a nonzero entry `p` has
    /// `p - 1 < values.len()`.
    index: Vec<u32>,
    /// The same for the entity indices at or past `index.len()` that have a
    /// value (no zero entry). Invariant: every key is `>= index.len()` and
    /// every value `p` has `p - 1 < values.len()`.
    far: FarMap,
    /// The entity owning each value. Invariant: `owners.len() ==
    /// values.len()` and the entry of `owners[i].index()` (in `index` or
    /// `far`) is `i + 1`.
    owners: Vec<Entity>,
    /// The values, packed.
    values: Vec<UnsafeCell<T>>,
}

/// The flat index of a sparse set holding `count` values covers at most
/// this many entity indices: 8 per value, at least 1024 (4 KiB).
#[inline]
fn flat_limit(count: usize) -> usize {
    count.saturating_mul(8).max(1024)
}

impl<T> SparseSet<T> {
    /// An empty set.
    fn new() -> Self {
        SparseSet {
            index: Vec::new(),
            far: FarMap::default(),
            owners: Vec::new(),
            values: Vec::new(),
        }
    }

    /// The entry of entity index `i` (one past its value's position, or 0).
    #[inline]
    fn slot(&self, i: usize) -> u32 {
        match self.index.get(i) {
            Some(&slot) => slot,
            None => far_slot(&self.far, i),
        }
    }

    /// Sets the entry of entity index `i`, which is below the flat index or
    /// has an entry in `far` already, or is set to a nonzero value.
    fn set_slot(&mut self, i: usize, slot: u32) {
        if let Some(entry) = self.index.get_mut(i) {
            *entry = slot;
        } else if slot == 0 {
            // Entity indices have 32 bits.
            self.far.remove(i as u32);
        } else {
            self.far.insert(i as u32, slot);
        }
    }

    /// Makes the flat index cover entity index `i` if the set's count
    /// allows it (see [`flat_limit`]), growing it geometrically and moving
    /// the entries of `far` it now covers into it.
    fn cover(&mut self, i: usize) {
        let limit = flat_limit(self.values.len() + 1);
        if i < self.index.len() || i >= limit {
            return;
        }
        let len = (i + 1).max(self.index.len() * 2).min(limit);
        self.index.resize(len, 0);
        if !self.far.is_empty() {
            let index = &mut self.index;
            self.far
                .retain(|key, slot| match index.get_mut(key as usize) {
                    Some(entry) => {
                        *entry = slot;
                        false
                    }
                    None => true,
                });
        }
    }

    /// The position of `entity`'s value, if it has one. A different
    /// generation with the same index does not match. Always inline, and
    /// with no panic path (`get`, not indexing): it calls nothing, and a
    /// call here, even one never made, would keep a loop of `get_mut` or
    /// `has` from reading the type's slot once (see `TypeIndex`).
    #[inline(always)]
    fn position(&self, entity: Entity) -> Option<usize> {
        let Some(&slot) = self.index.get(entity.index()) else {
            return self.far_position(entity);
        };
        let position = (slot as usize).checked_sub(1)?;
        (*self.owners.get(position)? == entity).then_some(position)
    }

    /// [`position`](Self::position) of an entity whose index lies past the
    /// flat index: inline, since it calls nothing (see [`FarMap`]). Not
    /// marked cold: the optimizer calls what a cold path calls out of
    /// line.
    #[inline(always)]
    fn far_position(&self, entity: Entity) -> Option<usize> {
        let position = (far_slot(&self.far, entity.index()) as usize).checked_sub(1)?;
        (*self.owners.get(position)? == entity).then_some(position)
    }

    fn insert(&mut self, entity: Entity, value: T) -> Option<T> {
        if let Some(position) = self.position(entity) {
            return Some(std::mem::replace(self.values[position].get_mut(), value));
        }
        let index = entity.index();
        // A value left by an older entity with the same index (its `Drop`
        // panicked in a despawn) is dropped now.
        let stale = (self.slot(index) as usize).checked_sub(1);
        let old = stale.map(|position| self.swap_remove(position));
        self.cover(index);
        self.values.push(UnsafeCell::new(value));
        self.owners.push(entity);
        let slot = u32::try_from(self.values.len()).expect("handlekit-ecs: sparse set full");
        self.set_slot(index, slot);
        drop(old);
        None
    }

    fn remove(&mut self, entity: Entity) -> Option<T> {
        let position = self.position(entity)?;
        Some(self.swap_remove(position))
    }

    fn swap_remove(&mut self, position: usize) -> T {
        let owner = self.owners.swap_remove(position);
        self.set_slot(owner.index(), 0);
        if let Some(&moved) = self.owners.get(position) {
            self.set_slot(moved.index(), position as u32 + 1);
        }
        self.values.swap_remove(position).into_inner()
    }

    fn clear(&mut self) {
        self.index.clear();
        self.far.clear();
        self.owners.clear();
        // `Vec::clear` drops every value even if one panics.
        self.values.clear();
    }

    /// The bytes the set holds.
    fn memory_bytes(&self) -> usize {
        self.index.capacity() * size_of::<u32>()
            + self.far.memory_bytes()
            + self.owners.capacity() * size_of::<Entity>()
            + self.values.capacity() * size_of::<T>()
    }
}

/// The entry of entity index `i` in a sparse set's `far` map, or 0. Inline:
/// it calls nothing (see [`FarMap`]).
#[inline(always)]
fn far_slot(far: &FarMap, i: usize) -> u32 {
    match u32::try_from(i) {
        Ok(key) => far.get(key),
        Err(_) => 0,
    }
}

/// The world's row → entity window, as raw parts.
#[derive(Clone, Copy)]
pub(crate) struct RowsView {
    /// The entity of row `first_row`.
    pub(crate) ptr: *const Entity,
    /// The row of `ptr`.
    pub(crate) first_row: usize,
    /// Rows in the window.
    pub(crate) len: usize,
}

impl RowsView {
    /// The entity of `row`.
    ///
    /// # Safety
    ///
    /// `row` lies in the window, and the world it was taken from is still
    /// borrowed (not changed since).
    #[inline]
    pub(crate) unsafe fn entity(&self, row: usize) -> Entity {
        debug_assert!(row.wrapping_sub(self.first_row) < self.len);
        // SAFETY: the row is in the window (the caller's contract) and the
        // window is unchanged.
        unsafe { *self.ptr.add(row - self.first_row) }
    }
    /// A pointer to the entity of `row`, from which the entities of the
    /// rows after it in the window follow.
    ///
    /// # Safety
    ///
    /// As [`entity`](Self::entity).
    #[inline]
    pub(crate) unsafe fn entity_ptr(&self, row: usize) -> *const Entity {
        debug_assert!(row.wrapping_sub(self.first_row) < self.len);
        // SAFETY: the row is in the window (the caller's contract).
        unsafe { self.ptr.add(row - self.first_row) }
    }
}

/// The raw view of a storage that a query reads through. Valid while the
/// world it came from stays borrowed, under the column's borrow flag.
pub(crate) enum View<T> {
    /// A dense column.
    Dense(DenseView<T>),
    /// A sparse set.
    Sparse(SparseView<T>),
}

impl<T> Clone for View<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for View<T> {}

/// See [`View`].
pub(crate) struct DenseView<T> {
    data: *const UnsafeCell<MaybeUninit<T>>,
    /// The row of `data[0]`.
    row_offset: usize,
    words: *const u64,
    words_len: usize,
    /// The word of `words[0]`.
    word_offset: usize,
    /// Whether every live row of the window has the component (set by
    /// [`TypedStorage::view`] when it can tell in O(1)): then
    /// [`View::mask`] of live rows needs no presence word.
    every_live_row: bool,
}

impl<T> Clone for DenseView<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DenseView<T> {}

/// See [`View`].
pub(crate) struct SparseView<T> {
    index: *const u32,
    index_len: usize,
    /// The set's map of the entity indices past `index_len`.
    far: *const FarMap,
    owners: *const Entity,
    values: *const UnsafeCell<T>,
    rows: RowsView,
}

impl<T> Clone for SparseView<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SparseView<T> {}

impl<T> View<T> {
    /// `candidates` (a word of live rows, all in the world's window)
    /// restricted to the rows that have the component.
    ///
    /// # Safety
    ///
    /// The world the view came from is still borrowed and unchanged, and
    /// every set bit of `candidates` names a live row in its window.
    #[inline]
    pub(crate) unsafe fn mask(&self, word: usize, candidates: u64) -> u64 {
        match self {
            View::Dense(view) => {
                if view.every_live_row {
                    // The rows are live (the caller's contract), and every
                    // live row has the component.
                    return candidates;
                }
                let i = word.wrapping_sub(view.word_offset);
                if i < view.words_len {
                    // SAFETY: in bounds; the words are unchanged while the
                    // world is borrowed.
                    candidates & unsafe { *view.words.add(i) }
                } else {
                    0
                }
            }
            View::Sparse(view) => {
                let mut out = 0;
                let mut bits = candidates;
                while bits != 0 {
                    let row = word * WORD + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    // SAFETY: the row is in the window (the caller's contract).
                    if unsafe { view.position(row) }.is_some() {
                        out |= bit(row);
                    }
                }
                out
            }
        }
    }

    /// A pointer to the component of the live `row` (as
    /// [`get_unchecked`](Self::get_unchecked) gives), or `None` if the row
    /// lacks it: [`has`](Self::has) and `get_unchecked` in one step, for
    /// lookups by entity. A dense view that every live row has reads no
    /// presence word; a sparse view's lookup is out of line, so that a loop
    /// of dense lookups keeps its registers.
    ///
    /// # Safety
    ///
    /// As [`mask`](Self::mask), for the one row.
    #[inline]
    pub(crate) unsafe fn lookup(&self, row: usize) -> Option<*mut T> {
        match self {
            View::Dense(view) => {
                if !view.every_live_row {
                    let i = (row / WORD).wrapping_sub(view.word_offset);
                    // SAFETY: in bounds; the words are unchanged while the
                    // world is borrowed.
                    if i >= view.words_len || unsafe { *view.words.add(i) } & bit(row) == 0 {
                        return None;
                    }
                }
                // The row is live (the caller's contract) and has the
                // component (every live row has it, or its bit is set), so
                // its slot is in the column's window.
                // SAFETY: as `get_unchecked`'s dense arm.
                Some(unsafe {
                    UnsafeCell::raw_get(view.data.add(row - view.row_offset)).cast::<T>()
                })
            }
            // SAFETY: forwarded.
            View::Sparse(view) => unsafe { view.lookup(row) },
        }
    }

    /// Whether `row` has the component.
    ///
    /// # Safety
    ///
    /// As [`mask`](Self::mask), for the one row.
    #[inline]
    pub(crate) unsafe fn has(&self, row: usize) -> bool {
        // SAFETY: forwarded.
        unsafe { self.mask(row / WORD, bit(row)) != 0 }
    }

    /// A pointer to the component of `row`, valid for reads (and, under an
    /// exclusive borrow, writes) while the world stays borrowed.
    ///
    /// # Safety
    ///
    /// `row` has the component ([`has`](Self::has)), and the world the view
    /// came from is still borrowed and unchanged.
    #[inline]
    pub(crate) unsafe fn get_unchecked(&self, row: usize) -> *mut T {
        // SAFETY: forwarded.
        debug_assert!(unsafe { self.has(row) });
        match self {
            // `UnsafeCell::raw_get` gives a pointer that may be written
            // through under the exclusive borrow; `MaybeUninit<T>` has the
            // layout of `T`.
            // SAFETY: the row has the component: its slot is in the window.
            View::Dense(view) => unsafe {
                UnsafeCell::raw_get(view.data.add(row - view.row_offset)).cast::<T>()
            },
            View::Sparse(view) => {
                // SAFETY: the row has the component, so `position` is Some
                // and in bounds.
                let position = unsafe { view.position(row).unwrap_unchecked() };
                // SAFETY: in bounds, as above.
                UnsafeCell::raw_get(unsafe { view.values.add(position) })
            }
        }
    }
}

impl<T> View<T> {
    /// `words` narrowed to the words of a dense column's presence bits
    /// (outside them no row has the component); a sparse set's are not
    /// narrowed. An empty range keeps its start within `words`.
    #[inline]
    pub(crate) fn words(&self, words: std::ops::Range<usize>) -> std::ops::Range<usize> {
        match self {
            View::Dense(view) => {
                // Both ends stay within `words`: `start <= end`.
                let end = words
                    .end
                    .min(view.word_offset.saturating_add(view.words_len))
                    .max(words.start);
                let start = words.start.max(view.word_offset).min(end);
                start..end
            }
            View::Sparse(_) => words,
        }
    }

    /// Whether this is a dense column's view.
    #[inline]
    pub(crate) fn is_dense(&self) -> bool {
        matches!(self, View::Dense(_))
    }

    /// Whether this is a dense column's view that every live row has (see
    /// [`DenseView::every_live_row`]).
    #[inline]
    pub(crate) fn every_live_row(&self) -> bool {
        matches!(self, View::Dense(view) if view.every_live_row)
    }

    /// [`mask`](Self::mask) for a view known to be dense and a word within
    /// the range [`words`](Self::words) narrows to: the presence word is
    /// read with no check of the storage kind, of `every_live_row` or of
    /// the bounds (the loops over a query's words call it once per word and
    /// column).
    ///
    /// # Safety
    ///
    /// As [`mask`](Self::mask); the view is dense and `word` lies within
    /// its presence words (in the range `words` returns).
    #[inline]
    pub(crate) unsafe fn dense_mask_unchecked(&self, word: usize, candidates: u64) -> u64 {
        match self {
            View::Dense(view) => {
                let i = word.wrapping_sub(view.word_offset);
                debug_assert!(i < view.words_len, "word {word} outside the column's words");
                // SAFETY: in bounds (the caller's contract); the words are
                // unchanged while the world is borrowed.
                candidates & unsafe { *view.words.add(i) }
            }
            View::Sparse(_) => {
                debug_assert!(false, "dense_mask_unchecked on a sparse view");
                // SAFETY: the caller's contract: the view is dense.
                unsafe { std::hint::unreachable_unchecked() }
            }
        }
    }
}

impl<T> SparseView<T> {
    /// [`position`](Self::position) of an entity whose index lies past the
    /// flat index: inline, since it calls nothing (see [`FarMap`]). Not
    /// marked cold: the optimizer calls what a cold path calls out of
    /// line.
    ///
    /// # Safety
    ///
    /// The world the view came from is borrowed and unchanged.
    #[inline(always)]
    unsafe fn far_position(&self, entity: Entity) -> Option<usize> {
        // SAFETY: the map lives in the set, which the borrowed world keeps
        // alive and unchanged (the caller's contract).
        let far = unsafe { &*self.far };
        let position = (far_slot(far, entity.index()) as usize).checked_sub(1)?;
        // SAFETY: a nonzero entry of `far` is in bounds of `owners` (the
        // invariant of `SparseSet::far`).
        (unsafe { *self.owners.add(position) } == entity).then_some(position)
    }

    /// [`View::lookup`] of a sparse set.
    ///
    /// # Safety
    ///
    /// As [`View::lookup`].
    #[inline]
    unsafe fn lookup(&self, row: usize) -> Option<*mut T> {
        // SAFETY: the row is in the window (the caller's contract).
        let position = unsafe { self.position(row) }?;
        // SAFETY: a position found is in bounds of `values`.
        Some(UnsafeCell::raw_get(unsafe { self.values.add(position) }))
    }

    /// The position of the value of `row`'s entity, if it has one.
    ///
    /// # Safety
    ///
    /// `row` lies in the world's window; the world is borrowed and unchanged.
    #[inline]
    unsafe fn position(&self, row: usize) -> Option<usize> {
        // SAFETY: the caller's contract.
        let entity = unsafe { self.rows.entity(row) };
        let i = entity.index();
        if i >= self.index_len {
            // SAFETY: the caller's contract.
            return unsafe { self.far_position(entity) };
        }
        // SAFETY: `i < index_len`.
        let position = (unsafe { *self.index.add(i) } as usize).checked_sub(1)?;
        // SAFETY: a nonzero entry (of `index` or `far`) is in bounds of `owners` (the
        // invariant of `SparseSet::index`).
        (unsafe { *self.owners.add(position) } == entity).then_some(position)
    }
}

/// The runs of one component type: each a maximal stretch of consecutive
/// live rows that have the component, as the entities of those rows and
/// their values, two slices of one length. From
/// [`Column::runs`](crate::Column::runs).
///
/// A dense column's values of consecutive rows lie next to each other, so
/// a run is as long as the rows allow (a world that only spawned entities
/// with the component has one run). A sparse set packs its values in the
/// order they were inserted, not in row order: it gives one run per
/// entity.
///
/// ```
/// use handlekit_ecs::World;
///
/// let mut world = World::new();
/// let es = world.spawn_batch((0..5u32).map(|i| (i,)));
/// world.despawn(es[2]).unwrap();
/// let column = world.column::<u32>();
/// let runs: Vec<(&[_], &[u32])> = column.runs().collect();
/// assert_eq!(runs, [(&es[..2], &[0, 1][..]), (&es[3..], &[3, 4][..])]);
/// ```
pub struct ColumnRuns<'a, T> {
    /// The column's view, or `None` if the world has no column of `T`.
    view: Option<View<T>>,
    /// The world's row window.
    rows: RowsView,
    /// The alive words, the first at word `first_word`.
    alive: &'a [u64],
    first_word: usize,
    /// The position in `alive` of the next word to read; `bits` came from
    /// the one before it.
    next: usize,
    /// The rows of that word not yet visited that are alive and have the
    /// component.
    bits: u64,
    _values: std::marker::PhantomData<&'a T>,
}

impl<'a, T> ColumnRuns<'a, T> {
    /// The runs of the storage `view` (`None`: no run) of a world whose row
    /// window is `rows` and alive words `alive` (from word `first_word`).
    ///
    /// # Safety
    ///
    /// The view and `rows` were taken from a world that stays borrowed
    /// (shared) and unchanged for `'a`, `alive` is that world's alive words,
    /// and the column's borrow flag is held shared for `'a`.
    pub(crate) unsafe fn new(
        view: Option<View<T>>,
        rows: RowsView,
        alive: &'a [u64],
        first_word: usize,
    ) -> Self {
        ColumnRuns {
            view,
            rows,
            alive,
            first_word,
            next: 0,
            bits: 0,
            _values: std::marker::PhantomData,
        }
    }

    /// The rows of `alive[i]` that have the component.
    fn mask(&self, view: &View<T>, i: usize) -> u64 {
        // SAFETY: alive bits name live rows of the window; the world is
        // borrowed and unchanged (the contract of `new`).
        unsafe { view.mask(self.first_word + i, self.alive[i]) }
    }
}

impl<'a, T> Iterator for ColumnRuns<'a, T> {
    type Item = (&'a [Entity], &'a [T]);

    fn next(&mut self) -> Option<Self::Item> {
        let view = self.view?;
        while self.bits == 0 {
            if self.next >= self.alive.len() {
                self.view = None;
                return None;
            }
            self.bits = self.mask(&view, self.next);
            self.next += 1;
        }
        let skip = self.bits.trailing_zeros() as usize;
        let start = (self.first_word + self.next - 1) * WORD + skip;
        let mut end = start + 1;
        if view.is_dense() {
            // The ones from `skip` up, and on into the next words while
            // the run reaches their ends.
            let ones = (!(self.bits >> skip)).trailing_zeros() as usize;
            end = start + ones;
            self.bits = if skip + ones == WORD {
                0
            } else {
                self.bits & !(((1u64 << ones) - 1) << skip)
            };
            while self.bits == 0 && end % WORD == 0 && self.next < self.alive.len() {
                let next = self.mask(&view, self.next);
                let ones = (!next).trailing_zeros() as usize;
                if ones == 0 {
                    break;
                }
                self.next += 1;
                end += ones;
                self.bits = if ones == WORD {
                    0
                } else {
                    next & !((1u64 << ones) - 1)
                };
            }
        } else {
            self.bits &= self.bits - 1;
        }
        let len = end - start;
        // The rows `start..end` are live rows of the window (alive bits).
        // SAFETY: the world is unchanged (the contract of `new`), so their
        // entities follow each other in the window.
        let entities = unsafe { std::slice::from_raw_parts(self.rows.entity_ptr(start), len) };
        // Every row of the run has the component (the view's mask) and the
        // column is borrowed shared: a dense column's slots of consecutive
        // rows are consecutive and initialized; a sparse set's run has one
        // row. `MaybeUninit<T>` and `UnsafeCell<T>` have the layout of `T`.
        // SAFETY: row `start` has the component (the view's mask).
        let first = unsafe { view.get_unchecked(start) }.cast_const();
        // SAFETY: so `len` initialized `T`s start at `first`, unwritten
        // while the column is borrowed.
        let values = unsafe { std::slice::from_raw_parts(first, len) };
        Some((entities, values))
    }
}

impl<T> std::iter::FusedIterator for ColumnRuns<'_, T> {}

impl<T> std::fmt::Debug for ColumnRuns<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColumnRuns")
            .field("type", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::{TypeEntry, TypeIndex};
    use std::any::TypeId;
    use std::ptr::NonNull;

    /// A distinct type per `(A, B)`.
    struct Ty<const A: usize, const B: usize>;

    /// The `TypeId`s of `Ty<A, 0>..Ty<A, 16>`.
    fn row<const A: usize>() -> Vec<TypeId> {
        macro_rules! ids {
            ($($b:literal)*) => { vec![$(TypeId::of::<Ty<A, $b>>()),*] };
        }
        ids!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    }

    /// 256 distinct `TypeId`s.
    fn ids() -> Vec<TypeId> {
        [
            row::<0>(),
            row::<1>(),
            row::<2>(),
            row::<3>(),
            row::<4>(),
            row::<5>(),
            row::<6>(),
            row::<7>(),
            row::<8>(),
            row::<9>(),
            row::<10>(),
            row::<11>(),
            row::<12>(),
            row::<13>(),
            row::<14>(),
            row::<15>(),
        ]
        .concat()
    }

    #[test]
    fn type_index_finds_every_registered_type_and_no_other() {
        // Enough types for the table to grow several times, and for
        // insertions to move types out of their first home.
        let ids = ids();
        let registered_count = if cfg!(miri) { 140 } else { 200 };
        let (registered, others) = ids.split_at(registered_count);
        // Each type's entry names a storage of its own (the addresses of
        // a buffer's elements stand in for the storages), and every other
        // registered type a lookup head of its own.
        let storages = [0u64; 200];
        let heads = [super::SPARSE_HEAD; 200];
        let entry = |column: usize| TypeEntry {
            column,
            storage: NonNull::from(&storages[column]).cast(),
        };
        let head = |column: usize| {
            if column % 2 == 0 {
                NonNull::from(&heads[column])
            } else {
                NonNull::from(&super::EMPTY_HEAD)
            }
        };
        let mut index = TypeIndex::default();
        // Under Miri, every type registered so far is looked up after every
        // eighth insertion (the 65th and the 129th, which grow the table,
        // among them) and the last, and the new one after each: these
        // lookups grow with the square of the count (18 s of Miri's clock
        // after every insertion).
        let every = if cfg!(miri) { 8 } else { 1 };
        for (column, &ty) in registered.iter().enumerate() {
            index.insert(ty, column, entry(column).storage, head(column));
            let all = column % every == 0 || column + 1 == registered.len();
            let from = if all { 0 } else { column };
            for (earlier, &seen) in registered[..=column].iter().enumerate().skip(from) {
                assert_eq!(index.get(seen), Some(entry(earlier)));
                let slot = index.slot(seen);
                assert_eq!(slot.entry(), entry(earlier));
                assert_eq!(slot.head, head(earlier));
            }
        }
        for &ty in others.iter().chain(&[TypeId::of::<u8>()]) {
            assert_eq!(index.get(ty), None);
            let slot = index.slot(ty);
            assert!(slot.is_empty());
            assert_eq!(slot.head, NonNull::from(&super::EMPTY_HEAD));
        }
        assert_eq!(index.len, registered_count);
        // At most a quarter full, the last slot empty.
        assert!(4 * index.len <= index.mask + 1);
        assert_eq!(index.slots.len(), index.mask + 2);
        assert!(index.slots[index.mask + 1].is_empty());
        // The second homes were used: some type sits outside its first
        // home (for 140 types over 256 first homes, the odds of none are
        // about e^-38).
        let second_home = index
            .slots
            .iter()
            .enumerate()
            .filter(|&(i, slot)| !slot.is_empty() && TypeIndex::homes(slot.ty, index.mask).0 != i)
            .count();
        assert!(second_home > 0);
    }
}

#[cfg(test)]
mod sparse_tests {
    use std::collections::HashMap;

    use handlekit::Key;
    use proptest::prelude::*;

    use super::{flat_limit, SparseSet};
    use crate::Entity;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(usize, u32, u32),
        Remove(usize, u32),
        Clear,
    }

    /// Entity indices near 0, and far ones (past any flat index).
    fn index() -> impl Strategy<Value = usize> {
        prop_oneof![0usize..3000, 1usize << 20..1usize << 24, Just(18_800_000)]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => (index(), 1u32..4, any::<u32>()).prop_map(|(i, g, v)| Op::Insert(i, g, v)),
            4 => (index(), 1u32..4).prop_map(|(i, g)| Op::Remove(i, g)),
            1 => Just(Op::Clear),
        ]
    }

    /// Operations a case: fewer under Miri, where every step's full check
    /// against the model costs seconds.
    const MAX_OPS: usize = if cfg!(miri) { 30 } else { 200 };

    proptest! {
        #![proptest_config(crate::test_config::proptest_config(4, 256))]

        /// A sparse set against a `HashMap` model, with indices both below
        /// and far past its flat index: the same values found, and the flat
        /// index never longer than its limit for the most values held.
        #[test]
        fn sparse_set_matches_a_map(ops in prop::collection::vec(op(), 0..MAX_OPS)) {
            let mut set = SparseSet::new();
            let mut model: HashMap<usize, (Entity, u32)> = HashMap::new();
            let mut most = 0;
            for op in ops {
                match op {
                    Op::Insert(i, g, v) => {
                        let e = Entity::from_parts(i, g).unwrap();
                        let expected = match model.insert(i, (e, v)) {
                            Some((old, value)) if old == e => Some(value),
                            _ => None,
                        };
                        prop_assert_eq!(set.insert(e, v), expected);
                    }
                    Op::Remove(i, g) => {
                        let e = Entity::from_parts(i, g).unwrap();
                        let expected = match model.get(&i) {
                            Some(&(owner, value)) if owner == e => {
                                model.remove(&i);
                                Some(value)
                            }
                            _ => None,
                        };
                        prop_assert_eq!(set.remove(e), expected);
                    }
                    Op::Clear => {
                        set.clear();
                        model.clear();
                    }
                }
                most = most.max(set.values.len());
                prop_assert_eq!(set.values.len(), model.len());
                prop_assert!(set.index.len() <= flat_limit(most));
                prop_assert!(set.far.keys().all(|k| k as usize >= set.index.len()));
                for (&i, &(e, v)) in &model {
                    let position = set.position(e);
                    prop_assert_eq!(position.map(|p| *set.values[p].get_mut()), Some(v));
                    prop_assert_eq!(set.slot(i) as usize, position.unwrap() + 1);
                }
            }
        }
    }

    #[test]
    fn one_far_entity_takes_no_flat_index() {
        let mut set = SparseSet::new();
        let e = Entity::from_parts(18_800_000, 1).unwrap();
        set.insert(e, 7u64);
        assert!(set.index.is_empty());
        assert!(set.memory_bytes() < 256, "{} bytes", set.memory_bytes());
        assert_eq!(set.remove(e), Some(7));
        assert!(set.far.is_empty());
    }
}

//! `RawHive`: seed 001's "nested free lists". Blocks that grow
//! geometrically, each with its own free list threaded through its vacant
//! slots, and a list of the blocks that have a free slot.
//!
//! # Index space
//!
//! The blocks' ranges of flat indices lie end to end: block `b` owns
//! `range_of(b)` indices from the end of block `b - 1`'s, as many as the
//! slots it is made with, `min(1 << (min_shift + b), 1 << shift)` (cut to
//! the key's index space), but at least a chunk, whatever it holds (a
//! block made by deserialization may use fewer; a freed range keeps its
//! indices). So the first blocks are small, the later ones all have the
//! cap, and every range starts at a multiple of `1 << chunk_shift` (see
//! `chunk_shift`: the first block's size, within 64..=2^16): the index
//! space is cut into *chunks* of that many indices, each in one block's
//! range, and a flat index finds its block's number and its payload in
//! two small directories indexed by `index >> chunk_shift`.
//!
//! # One state array
//!
//! The state words of every flat index lie in one array over the whole
//! index space (`StateWords`, as `Pool` keeps them), and each block's
//! payloads in an allocation of its own that never moves. A lookup by key
//! (`get`, `get_mut`, `contains`) checks the index against `words_end`,
//! reads its state word, and only if the generation matches reads the
//! chunk's first payload and then the value: two loads before the value
//! as in `Pool`'s lookup, one fewer than with a state array per block, and
//! two fewer than with a block table entry before them (see
//! `live_value`). That needs every word below `words_end` initialized,
//! freed ranges' included (their blocks' vacant words, which no
//! generation matches): so it is in every hive built by its own calls,
//! where `words_end` is the end of the index space. Only a hive loaded
//! from input may have ranges whose words it never wrote (the loader
//! writes them while its allowance lasts, so that input naming a vast
//! index space in a few bytes is not obeyed); from the first of them on,
//! a lookup reads the chunk's first payload first (null for a freed range,
//! whose words it then never reads), out of the way of the others. State
//! words never hand out pointers, so the array may move when it grows; the
//! blocks are told (`Block::set_states`).
//!
//! # The block table
//!
//! Everything the hive keeps per block but its state words is in the
//! block's own 64-byte entry of one table (`blocks`): its payload pointer,
//! the end of the used slots, the free list, the counts, the floor and the
//! links of the list of blocks with room. An insertion or a removal reads
//! one entry, found through the chunk's block number.
//!
//! # Emptied blocks
//!
//! A removal that empties a block keeps it, listed with its free list;
//! `shrink_to_fit` frees empty blocks (and a removal frees a block it
//! empties whose every slot retired). A freed block's range stays in the
//! table as a zero-length block with a *floor*, the highest generation it
//! ever issued. A block made over
//! that range later starts every slot at the floor, so no old key can match
//! it. A range whose floor reached the last generation is never reused.
//!
//! All of this is safe code over `Block`, but for the calls that pass a
//! flat index to its block (whose range starts at or before the index, as
//! the block is found by the index), the two `*_unchecked` lookups, which
//! pass their callers' guarantee on to the block, and the state array,
//! whose words the hive fills and hands to its blocks.

use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem;
use core::ptr::{self, NonNull};

use super::block::{block_shift_for, Block, BlocksIter, BlocksIterMut, NOT_LISTED, NO_BLOCK};
use super::keyed::TakeSlots;
use super::layout::StateWords;
use super::slot::{Payload, Slot, NO_SLOT, VACANT};
use super::storage::HiveBlocks;
use super::table::RawTable;
#[cfg(feature = "serde")]
use super::BuildError;
use super::KeyLimits;
use crate::CapacityError;
use crate::Key;

/// Blocks of growing size, a free list per block, and the list of blocks
/// with a free slot.
pub struct RawHive<T, K = crate::Id> {
    /// The block table. Invariant: block 0 has base 0 and block `b + 1`
    /// the end of block `b`'s range, `base + range_of(b)`; every base is
    /// below `limits.max_slots`; block `b` has either `range_of(b)` slots
    /// (allocated), or 0 (a freed range). Only a deserialized hive has
    /// shorter blocks: `1..range_of(b)` slots, as many as the input used.
    /// An allocated block's state words are those of `states` (its
    /// `flat_bases` lead to `states.as_ptr()`). Dropped before `states`:
    /// dropping a value vacates its slot's state word.
    blocks: Vec<Block<T>>,
    /// The state word of every flat index, at `states.as_ptr() + index`.
    /// Invariant: for every allocated block, the words from its base to
    /// its `fill_end` are in the array and initialized (its slots' as
    /// `Block` says, `VACANT` past them); so are all words below
    /// `words_end`; the others may not be (in a loaded hive, a freed
    /// range's or past a block's last chunk), and nothing reads them: past
    /// `words_end` a lookup reads a word only in a chunk whose entry is not
    /// null, which lies below its block's `fill_end`.
    states: StateWords,
    /// The end of the run of state words from index 0 that are all
    /// initialized, the bound a lookup checks first. Invariant: `words_end
    /// <= index_end`, the words below it are in the array and initialized:
    /// a used slot's as its block keeps it, `VACANT` past a block's used
    /// slots, and in a freed range the vacant words its block left (no
    /// word below it matches a generation unless its slot holds a value).
    /// It is `index_end` but in a hive loaded from input naming ranges
    /// whose words it did not write (see `finish_build`); indices from
    /// here to `index_end` take the lookup's slower way (`live_value_past`).
    words_end: usize,
    /// The end of the last block's range: the flat indices in blocks.
    index_end: usize,
    /// Per chunk (`1 << chunk_shift` flat indices) below `index_end`, the
    /// payload of its first index, in the storage of the block whose range
    /// holds it (so the payload of flat index `index` is `index % (1 <<
    /// chunk_shift)` further on), or null if the chunk starts past the
    /// block's slots (a freed range, or the end of a range that a block's
    /// slots do not fill). Invariant: `index_end.div_ceil(1 <<
    /// chunk_shift)` entries, each `chunk_entry`'s.
    chunk_payloads: ChunkPayloads<T>,
    /// Per chunk below `index_end`, the number of the block whose range
    /// holds it. Invariant: as many entries as `chunk_payloads`, each below
    /// `blocks.len()`, and chunk `c`'s block's range holds `c <<
    /// chunk_shift`.
    chunk_blocks: Vec<u32>,
    /// The first block of the list of blocks with a free slot (linked
    /// through `Block::next` and `Block::prev`), where inserts go; or
    /// `NO_BLOCK`. Invariant: the list holds exactly the allocated blocks
    /// with a free slot (`Block::has_room`), each once; a block's `prev`
    /// is the block before it (`NO_BLOCK` for this one), and `NOT_LISTED`
    /// for every block off the list.
    available: u32,
    /// The first of the *spent* blocks (allocated, every slot retired:
    /// they can never take a value again) that wait to be freed, linked
    /// through `Block::next`; or `NO_BLOCK`. A removal that spends a block
    /// puts it here rather than free it, so that `remove` calls nothing
    /// (a call in a caller's loop of removals makes it reload the hive's
    /// fields on every removal); the next `grow`, `shrink_to_fit` or
    /// `clear` frees them. Invariant: exactly the spent blocks, each once.
    spent: u32,
    /// Freed ranges whose floor is below `limits.max_generation`, each
    /// once; the last is reused first.
    vacated: Vec<u32>,
    /// `log2` of the first block's size. Invariant: `min_shift <= shift`.
    min_shift: u32,
    /// `log2` of a chunk's indices: `chunk_shift(min_shift, shift)`. Every
    /// range starts at a multiple of a chunk (see `range_of`).
    chunk_shift: u32,
    /// `log2` of the largest block size. Invariant: `shift <= 31`.
    shift: u32,
    /// Number of live values (sum of the blocks' `live()`).
    len: usize,
    /// Slots in allocated blocks.
    slot_total: usize,
    /// Retired slots in allocated blocks (sum of the blocks' `retired()`).
    retired: usize,
    /// Set by `with_fixed_capacity`: the size of the one block made then,
    /// and of its range. Invariant: if set, no block but block 0 is ever
    /// allocated, and block 0 has that many slots while allocated; `grow`
    /// fails and `shrink_to_fit` keeps the block.
    fixed: Option<usize>,
    /// Invariant: no wider than `KeyLimits::of::<K>()` (the constructors
    /// make it so), so every slot's parts make a valid `K`.
    limits: KeyLimits,
    _key: PhantomData<fn() -> K>,
}

/// The chunks' first payloads of [`RawHive::chunk_payloads`]: made from
/// the blocks' own pointers.
struct ChunkPayloads<T>(Vec<*mut Payload<T>>);

// SAFETY: the pointers are made from the blocks' own, which the hive owns
// with the values; they are read only by a lookup that borrows the hive,
// and give the access that borrow gives (`&T` through `&self`, `&mut T`
// through `&mut self`), as `Block` does.
unsafe impl<T: Send> Send for ChunkPayloads<T> {}
// SAFETY: as above: shared access gives only `&T`.
unsafe impl<T: Sync> Sync for ChunkPayloads<T> {}

/// `log2` of the chunks of a hive whose blocks grow from `1 << min_shift`
/// slots to `1 << shift`: the first block's size, but at least 64 (so that
/// the directories take at most 12 bytes per 64 indices) and at most
/// `2^16` (so that the state words written past a block's slots, up to the
/// end of its last chunk, are at most 256 KiB), and never above the
/// largest block's.
const fn chunk_shift(min_shift: u32, shift: u32) -> u32 {
    let chunk = if min_shift < 6 { 6 } else { min_shift };
    let chunk = if chunk > 16 { 16 } else { chunk };
    if chunk > shift {
        shift
    } else {
        chunk
    }
}

/// The entry of chunk `c` (of `1 << chunk_shift` flat indices) in
/// [`RawHive::chunk_payloads`], for the block whose range holds it: the
/// payload of its first index if that is one of the block's slots, else
/// null.
fn chunk_entry<T>(block: &Block<T>, c: usize, chunk_shift: u32) -> *mut Payload<T> {
    let first = c << chunk_shift;
    if first < block.limit() as usize {
        debug_assert!(first >= block.base());
        block.flat_bases().payload_ptr(first)
    } else {
        ptr::null_mut()
    }
}

/// `log2` of the default first block for `T`: as many slots as fit in
/// 64 KiB, rounded down to a power of two and kept within 64..=1024. Never
/// above `default_shift` (a smaller budget and cap, the same floor).
const fn default_min_shift<T>() -> u32 {
    block_shift_for::<T>(64 * 1024, 64, 1024)
}
/// `log2` of the default largest block for `T`: as many slots as fit in
/// 1 MiB, rounded down to a power of two and kept within 64..=8192.
const fn default_shift<T>() -> u32 {
    block_shift_for::<T>(1024 * 1024, 64, 8192)
}

/// An empty raw hive with the key limits of `K` and the default block
/// sizes (`Hive::with_key`, `Hive::default`).
pub(crate) const fn default_raw<T, K: Key>() -> RawHive<T, K> {
    RawHive::new(
        KeyLimits::of::<K>(),
        default_min_shift::<T>(),
        default_shift::<T>(),
    )
}

impl<T, K: Key> RawHive<T, K> {
    /// An empty hive whose blocks grow from `1 << min_shift` slots to
    /// `1 << shift`; allocates nothing.
    ///
    /// # Panics
    ///
    /// If `limits` allow more than `K` does.
    pub(crate) const fn new(limits: KeyLimits, min_shift: u32, shift: u32) -> Self {
        // No slot's index may be a list end of its block (`Block::limit`).
        let limits = KeyLimits::within::<K>(limits).below_list_ends();
        assert!(shift <= 31, "block size above 2^31 slots");
        assert!(min_shift <= shift, "smallest block above the largest");
        RawHive {
            blocks: Vec::new(),
            states: StateWords::new(),
            words_end: 0,
            index_end: 0,
            chunk_payloads: ChunkPayloads(Vec::new()),
            chunk_blocks: Vec::new(),
            available: NO_BLOCK,
            spent: NO_BLOCK,
            vacated: Vec::new(),
            min_shift,
            chunk_shift: chunk_shift(min_shift, shift),
            shift,
            len: 0,
            slot_total: 0,
            retired: 0,
            fixed: None,
            limits,
            _key: PhantomData,
        }
    }

    /// A hive with room for exactly `capacity` values, in one block
    /// allocated now, that never allocates another.
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key can index or above 2³¹, or the
    /// block cannot be allocated.
    pub(crate) fn with_fixed_capacity(limits: KeyLimits, capacity: usize) -> Self {
        assert!(
            capacity <= limits.max_slots && capacity <= 1 << 31,
            "fixed capacity {capacity} exceeds the {} slots the key type can index, or 2^31",
            limits.max_slots
        );
        let shift = capacity.next_power_of_two().trailing_zeros();
        let mut hive = Self::new(limits, shift, shift);
        hive.fixed = Some(capacity);
        if capacity > 0 {
            if let Err(err) = hive.make_block(0, 0, capacity) {
                panic!("{err}");
            }
        }
        hive
    }
}

impl<T, K> RawHive<T, K> {
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Smallest and largest block sizes.
    pub(crate) fn block_sizes(&self) -> (usize, usize) {
        (1 << self.min_shift, 1 << self.shift)
    }

    /// The slots of block `b`, whose range starts at `base`, when `grow`
    /// allocates it: the fixed capacity, or `1 << (min_shift + b)` up to
    /// `1 << shift`, cut to the index space.
    fn slots_of(&self, b: usize, base: usize) -> usize {
        if let Some(capacity) = self.fixed {
            return capacity;
        }
        let shift = (self.min_shift as usize + b).min(self.shift as usize);
        (1usize << shift).min(self.limits.max_slots.saturating_sub(base))
    }

    /// The flat indices of block `b`'s range, which starts at `base`: its
    /// slots, made at least a chunk (blocks under 64 slots own a chunk of
    /// 64 indices, or of the largest block size if that is less, so that
    /// the directories stay small), cut to the index space; the fixed
    /// capacity for a fixed hive's one block.
    fn range_of(&self, b: usize, base: usize) -> usize {
        let slots = self.slots_of(b, base);
        if self.fixed.is_some() {
            return slots;
        }
        slots
            .max(1 << self.chunk_shift)
            .min(self.limits.max_slots.saturating_sub(base))
    }

    /// The number of the block whose range holds flat index `index`, if
    /// any.
    #[inline(always)]
    fn block_of(&self, index: usize) -> Option<usize> {
        let b = *self.chunk_blocks.get(index >> self.chunk_shift)? as usize;
        // Every entry names a block of the table (invariant), which the
        // compiler is told, so that indexing `blocks` checks nothing.
        // SAFETY: so `b` is below the table's length.
        unsafe { core::hint::assert_unchecked(b < self.blocks.len()) };
        Some(b)
    }

    /// A pointer to the value named by `(index, generation)`, if it is
    /// live, with the provenance of its block's payloads. Below
    /// `words_end` (every index of a hive but one loaded with unwritten
    /// ranges) the index's state word is read first, with no directory
    /// load before it, and only a matching one leads to its chunk's first
    /// payload; past it, `live_value_past`.
    #[inline(always)]
    fn live_value(&self, index: usize, generation: u32) -> Option<*mut T> {
        if index >= self.words_end {
            super::cold_path();
            return self.live_value_past(index, generation);
        }
        // The word is below `words_end`, so in the array and initialized
        // (invariant), and written only under `&mut` to the hive, which the
        // caller's borrow keeps away.
        // SAFETY: so this reads an initialized word.
        let state = unsafe { *self.states.as_ptr().add(index) };
        if state != Slot::<T>::matched_generation(generation) {
            super::cold_path();
            return None;
        }
        // A word below `words_end` that matches is an occupied slot's
        // (invariant), so the slot lies in an allocated block, below
        // `index_end`, and its chunk's first index is a slot of that block
        // too (blocks start at chunk boundaries): the chunk's entry exists
        // and is not null.
        // SAFETY: so the entry exists.
        let first = unsafe {
            *self
                .chunk_payloads
                .0
                .get_unchecked(index >> self.chunk_shift)
        };
        // SAFETY: and is not null (as above), which the compiler is told
        // so that the caller's `Option` needs no test.
        unsafe { core::hint::assert_unchecked(!first.is_null()) };
        // SAFETY: the slot's payload, `index % chunk` past the chunk's
        // first, in the block's storage; the word says it holds a value.
        Some(unsafe { Self::chunk_value(first, index, self.chunk_shift) })
    }

    /// [`live_value`](Self::live_value) for an index at or past
    /// `words_end`, whose word may not be initialized: it is checked
    /// against the end of the index space (so its chunk has its entries),
    /// and the chunk's first payload is read first; a chunk of a freed
    /// range has a null entry, and its state words are not read.
    /// Otherwise the chunk's block is allocated, and the word is its: a
    /// used slot's as the block keeps it, `VACANT` past them (which no
    /// generation matches). Laid out of the way (its caller marks the
    /// branch cold): only a hive loaded from input with unwritten ranges
    /// has such indices, and for every other hive it only says `None`.
    #[inline(always)]
    fn live_value_past(&self, index: usize, generation: u32) -> Option<*mut T> {
        if index >= self.index_end {
            return None;
        }
        // `index < index_end`, so its chunk is below `index_end.div_ceil(1
        // << chunk_shift)`, the number of entries (invariant).
        // SAFETY: so the entry exists.
        let first = unsafe {
            *self
                .chunk_payloads
                .0
                .get_unchecked(index >> self.chunk_shift)
        };
        if first.is_null() {
            return None;
        }
        // The chunk's first index is a slot of its block (its entry is not
        // null), so the chunk lies below the block's `fill_end`, whose
        // words are in the array and initialized (invariant on `states`).
        // SAFETY: so this reads an initialized word.
        let state = unsafe { *self.states.as_ptr().add(index) };
        if state != Slot::<T>::matched_generation(generation) {
            return None;
        }
        // A matching word is a used, occupied slot's (`VACANT` past the
        // block's used slots matches nothing), in the chunk whose first
        // payload is `first`.
        // SAFETY: so the slot holds a value and `first` is its chunk's.
        Some(unsafe { Self::chunk_value(first, index, self.chunk_shift) })
    }

    /// The value of flat index `index`, whose chunk's first payload is
    /// `first`.
    ///
    /// # Safety
    ///
    /// `first` is the chunk's entry in `chunk_payloads`, not null, and the
    /// slot at `index` holds a value.
    #[inline(always)]
    unsafe fn chunk_value(first: *mut Payload<T>, index: usize, chunk_shift: u32) -> *mut T {
        debug_assert!(!first.is_null());
        // The slot's payload lies in the block's storage, `index % chunk`
        // past the chunk's first (an offset within the allocation).
        // SAFETY: so the offset stays in the allocation.
        let payload = unsafe { first.add(index & ((1 << chunk_shift) - 1)) };
        // SAFETY: the slot's payload; the caller says it holds a value.
        unsafe { Payload::value_ptr(payload) }
    }

    /// Allocates a block (over the last freed range, else a new one) and
    /// lists it; returns its number.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> Result<usize, CapacityError> {
        self.free_spent();
        if let Some(capacity) = self.fixed {
            return Err(CapacityError::fixed(capacity));
        }
        let (b, floor) = match self.vacated.last() {
            Some(&b) => (b as usize, self.blocks[b as usize].floor()),
            None => {
                if self.index_end >= self.limits.max_slots {
                    return Err(CapacityError::index_space(self.limits.max_slots));
                }
                (self.blocks.len(), 0)
            }
        };
        let base = self.blocks.get(b).map_or(self.index_end, Block::base);
        self.make_block(b, floor, self.slots_of(b, base))?;
        Ok(b)
    }

    /// Allocates block `b` with `len` slots (at most its range), whose
    /// first occupants get generation `floor + 1`, and lists it. `b` is the
    /// last freed range in `vacated` (taken off it) or the end of the
    /// table (a new range).
    fn make_block(&mut self, b: usize, floor: u32, len: usize) -> Result<(), CapacityError> {
        let base = self.blocks.get(b).map_or(self.index_end, Block::base);
        self.reserve_states(self.fill_end(b, base, len))?;
        if b == self.blocks.len() {
            self.append_range(floor)?;
        } else {
            debug_assert_eq!(self.vacated.last(), Some(&(b as u32)));
            self.vacated.pop();
        }
        self.allocate_range(b, len);
        self.slot_total += len;
        self.list(b);
        Ok(())
    }

    /// Block `b`, just made with `len` slots, has written its words up to
    /// its `fill_end`: moves `words_end` over them if it had reached the
    /// block's base (a block made past it, in a hive loaded with unwritten
    /// ranges, leaves it where it is).
    fn words_written(&mut self, b: usize, len: usize) {
        let base = self.blocks[b].base();
        if self.words_end == base {
            self.words_end = self.fill_end(b, base, len);
        }
    }

    /// Appends a freed range with `floor` at the end of the index space,
    /// with its directory entries, or fails having changed nothing.
    fn append_range(&mut self, floor: u32) -> Result<(), CapacityError> {
        let b = self.blocks.len();
        let base = self.index_end;
        let end = base + self.range_of(b, base);
        let chunks = end.div_ceil(1 << self.chunk_shift) - self.chunk_blocks.len();
        let alloc = |_| CapacityError::alloc();
        self.blocks.try_reserve(1).map_err(alloc)?;
        self.chunk_blocks.try_reserve(chunks).map_err(alloc)?;
        self.chunk_payloads.0.try_reserve(chunks).map_err(alloc)?;
        self.chunk_blocks
            .extend(core::iter::repeat_n(b as u32, chunks));
        self.chunk_payloads
            .0
            .extend(core::iter::repeat_n(ptr::null_mut(), chunks));
        self.blocks.push(Block::freed(base, floor));
        self.index_end = end;
        Ok(())
    }

    /// The end of the state words that a block of `len` slots over block
    /// `b`'s range (from `base`) has written: its slots', then the rest of
    /// its last slot's chunk (a lookup reads the words of a chunk whose
    /// first index is a slot), within the range.
    fn fill_end(&self, b: usize, base: usize, len: usize) -> usize {
        (base + len)
            .checked_next_multiple_of(1 << self.chunk_shift)
            .unwrap_or(usize::MAX)
            .min(base + self.range_of(b, base))
    }

    /// Makes the state array at least `end` words long, exactly, or fails
    /// having changed nothing. Not doubled: a block is thousands of slots,
    /// so growing by one block at a time reallocates rarely (and a large
    /// array is grown in place or remapped, not copied, where the allocator
    /// can), where doubling left up to half the array unused (16.1 bytes
    /// per `u64` value at 1M instead of 12.2).
    fn reserve_states(&mut self, end: usize) -> Result<(), CapacityError> {
        if self.states.try_reserve_exact(end)? {
            self.give_blocks_states();
        }
        Ok(())
    }

    /// Tells every allocated block where the state array is, after it
    /// moved.
    #[cold]
    fn give_blocks_states(&mut self) {
        let states = self.states.as_ptr();
        for block in &mut self.blocks {
            // The array moved with its words (`StateWords` keeps them), and
            // the hive's array is the blocks' (invariant on `blocks`).
            // SAFETY: so each word a block reaches holds what it held.
            unsafe { block.set_states(states) };
        }
    }

    /// The chunks of block `b`'s range, which starts at `base`.
    fn chunks_of(&self, b: usize, base: usize) -> core::ops::Range<usize> {
        let end = base + self.range_of(b, base);
        base >> self.chunk_shift..end.div_ceil(1 << self.chunk_shift)
    }

    /// Makes freed range `b` a block of `len` never-used slots over its
    /// range, with its old floor: its state words up to `fill_end` set to
    /// `VACANT` (the caller made room for them), its chunks given their
    /// first payloads.
    fn allocate_range(&mut self, b: usize, len: usize) {
        let (base, floor) = (self.blocks[b].base(), self.blocks[b].floor());
        let fill_end = self.fill_end(b, base, len);
        debug_assert!(self.blocks[b].len() == 0 && len > 0);
        debug_assert!(len <= self.range_of(b, base) && fill_end <= self.states.capacity());
        self.fill_vacant(base..fill_end);
        let states = self.states.as_ptr();
        // SAFETY: the words of `base..base + len` are `VACANT`, reached by
        // no other block, and read only by the hive's lookups.
        self.blocks[b] = unsafe { Block::new(base, len, floor, states) };
        for c in self.chunks_of(b, base) {
            self.chunk_payloads.0[c] = chunk_entry(&self.blocks[b], c, self.chunk_shift);
        }
        self.words_written(b, len);
    }

    /// Writes `VACANT` over the state words of `run`, which lies in the
    /// array, in a freed range, past the used slots of a block being made
    /// over one, or past a loaded block's last chunk: words no block reads
    /// or writes.
    fn fill_vacant(&mut self, run: core::ops::Range<usize>) {
        assert!(run.start <= run.end && run.end <= self.states.capacity());
        let words = ptr::slice_from_raw_parts_mut(
            self.states
                .as_ptr()
                .wrapping_add(run.start)
                .cast::<mem::MaybeUninit<u32>>(),
            run.len(),
        );
        // The one reference to a run of the state array, over words no
        // block reaches and no lookup matches, as `MaybeUninit`,
        // since they may never have been written: a fill the compiler
        // turns into wide stores.
        // SAFETY: the run lies within the array's capacity (checked above).
        unsafe { &mut *words }.fill(mem::MaybeUninit::new(VACANT));
    }

    /// Puts block `b` first on the list of blocks with room (it must not be
    /// on it). Calls nothing; `remove` calls it out of line (see
    /// `list_emptied`).
    #[inline(always)]
    fn list(&mut self, b: usize) {
        let first = self.available;
        if let Some(block) = self.blocks.get_mut(first as usize) {
            block.prev = b as u32;
        }
        if let Some(block) = self.blocks.get_mut(b) {
            debug_assert!(!block.is_listed());
            block.prev = NO_BLOCK;
            block.next = first;
            self.available = b as u32;
        }
    }

    /// `list`, out of line: for `remove`, which lists a block only when it
    /// gave its first slot back. Inlined there with the retiring path, the
    /// hive's fields they write were kept in registers across a caller's
    /// loop of removals, and with too few registers left that loop spilled
    /// and reloaded on every removal: 54 instructions a removal, 44 with
    /// both rare paths out of line (callgrind, 1,000 `u64`).
    #[cold]
    #[inline(never)]
    fn list_emptied(&mut self, b: usize) {
        self.list(b);
    }

    /// [`remove`](RawTable::remove) for a value too large to be returned in
    /// registers (more than two words): the slot is filed before the value
    /// is read, so that no branch lies between the read and the return,
    /// where a large value was copied through the stack twice (64-byte
    /// values, callgrind, 1,000 removals: 69 instructions a removal, 62
    /// so). A small value is read first, as `remove` does: filed first,
    /// with as many instructions, a loop of removals of `u64`s took
    /// 1.15-1.35x as long.
    #[inline(always)]
    fn remove_filed_first(&mut self, index: usize, generation: u32) -> Option<T> {
        let generation = Slot::<T>::matched_generation(generation);
        let b = self.block_of(index)?;
        let block = &mut self.blocks[b];
        // SAFETY: block `b`'s range holds `index`: it starts at or before it.
        let slot = unsafe { block.held(index, generation) }?;
        // As in `remove`: the slot is linked to this head.
        let head = block.free_head();
        let retires = generation >= self.limits.max_generation;
        // The common way keeps the block it found; the two rare ones, which
        // take the whole hive, find it again.
        let block = if retires {
            self.retire_taken(b);
            // SAFETY: retiring adds and drops no block.
            unsafe { self.blocks.get_unchecked_mut(b) }
        } else if head == NO_SLOT && !block.has_fresh() {
            self.list_emptied(b);
            // SAFETY: listing adds and drops no block.
            unsafe { self.blocks.get_unchecked_mut(b) }
        } else {
            block
        };
        // SAFETY: `held` found the slot in this block; filing took nothing
        // from it and adds and drops no slot.
        let value = unsafe { block.take_held(slot, head) };
        // SAFETY: the slot just taken is vacant and linked to `head`; if it
        // retired, the head stays.
        unsafe { block.set_free_head(if retires { head } else { index as u32 }) };
        self.len -= 1;
        Some(value)
    }

    /// Counts the slot just taken (or, for `remove_filed_first`, about to be
    /// taken) from block `b` at the last generation as retired, and sets a
    /// spent block aside. Out of line: rare.
    #[cold]
    #[inline(never)]
    fn retire_taken(&mut self, b: usize) {
        let block = &mut self.blocks[b];
        block.count_retired();
        self.retired += 1;
        if block.is_spent() {
            // Not listed (it has no room), so `next` is free to link it.
            block.next = self.spent;
            self.spent = b as u32;
        }
    }

    /// Takes block `b` off the list of blocks with room, if it is on it.
    #[inline]
    fn unlist(&mut self, b: usize) {
        let Some(block) = self.blocks.get_mut(b) else {
            return;
        };
        let (prev, next) = (block.prev, block.next);
        if prev == NOT_LISTED {
            return;
        }
        (block.prev, block.next) = (NOT_LISTED, NO_BLOCK);
        if let Some(block) = self.blocks.get_mut(next as usize) {
            block.prev = prev;
        }
        match self.blocks.get_mut(prev as usize) {
            Some(block) => block.next = next,
            None => self.available = next,
        }
    }

    /// Keeps the hive's counts and lists after block `b` gave up a value
    /// whose slot got `generation` and was filed (see `Block::take_next`):
    /// a retired slot is counted (and a block whose every slot retired is
    /// freed), a block that had no room before (`had_room`) is listed.
    fn filed(&mut self, b: usize, generation: u32, had_room: bool) {
        self.len -= 1;
        if generation >= self.limits.max_generation {
            self.retired += 1;
            self.settle(b);
        } else if !had_room {
            self.list(b);
        }
    }

    /// Frees the spent blocks that removals set aside (see `spent`).
    fn free_spent(&mut self) {
        while self.spent != NO_BLOCK {
            let b = self.spent as usize;
            self.spent = self.blocks[b].next;
            self.blocks[b].next = NO_BLOCK;
            self.free_block(b);
        }
    }

    /// Block `b` has no value left. It stays, with its free list, for later
    /// insertions (so a hive that empties and fills again, or hovers
    /// around a block boundary, does not free and allocate in turn, as
    /// `plf::hive` keeps its reserved blocks); only
    /// [`shrink_to_fit`](Self::shrink_to_fit) frees it. A block with no
    /// slot left to give (all retired) is freed at once: it can never be
    /// used again.
    fn settle(&mut self, b: usize) {
        if self.blocks[b].is_spent() {
            self.free_block(b);
        }
    }

    /// Frees the slots of empty block `b`, leaving its range with the
    /// floor that keeps its old keys stale.
    fn free_block(&mut self, b: usize) {
        debug_assert_eq!(self.blocks[b].live(), 0);
        debug_assert!(self.blocks[b].len() > 0);
        self.unlist(b);
        let block = &self.blocks[b];
        let floor = block.max_generation();
        self.slot_total -= block.len();
        self.retired -= block.retired();
        let base = block.base();
        self.blocks[b] = Block::freed(base, floor);
        for c in self.chunks_of(b, base) {
            self.chunk_payloads.0[c] = ptr::null_mut();
        }
        if floor < self.limits.max_generation {
            self.vacated.push(b as u32);
        }
    }

    /// Frees every empty block, but a fixed hive's one block unless it is
    /// spent (every slot retired).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.free_spent();
        if self.fixed.is_some() {
            return;
        }
        for b in 0..self.blocks.len() {
            if self.blocks[b].len() > 0 && self.blocks[b].live() == 0 {
                self.free_block(b);
            }
        }
    }

    /// Removes the value at the lowest occupied flat index at or after
    /// `from`.
    pub(crate) fn take_next(&mut self, from: usize) -> Option<(usize, u32, T)> {
        let max_generation = self.limits.max_generation;
        let first = self.block_of(from).unwrap_or(self.blocks.len());
        for b in first..self.blocks.len() {
            let block = &mut self.blocks[b];
            let had_room = block.has_room();
            if let Some((index, generation, value)) = block.take_next(from, max_generation) {
                self.filed(b, generation, had_room);
                return Some((index, generation, value));
            }
        }
        None
    }

    /// Drops every value; then keeps the blocks (empty) that can take a
    /// value and frees the others (every slot retired), whose ranges keep
    /// their floors so old keys stay stale. If a `Drop` panics, the rest
    /// are still dropped and the hive is left empty and consistent; then
    /// the panic propagates.
    pub(crate) fn clear(&mut self) {
        super::finish_on_panic(self, Self::drop_values_then_reset);
    }

    /// Drops the values block by block, then `reset`s. A panicking `Drop`
    /// stops it after its block is done (`Block::drop_values` finishes the
    /// block first); run again, it skips the emptied blocks.
    fn drop_values_then_reset(&mut self) {
        for block in &mut self.blocks {
            block.drop_values();
        }
        self.reset();
    }

    /// After every value was dropped: keeps every block that can take a
    /// value, with its free list rebuilt in slot order, and frees the
    /// others (all their slots retired).
    fn reset(&mut self) {
        self.free_spent();
        self.len = 0;
        for b in 0..self.blocks.len() {
            if self.blocks[b].len() == 0 {
                continue;
            }
            self.rebuild_free_list(b);
            if !self.blocks[b].has_room() {
                self.free_block(b);
            }
        }
    }

    /// Relinks block `b`'s vacant used slots in slot order, recounts its
    /// retired slots and fixes its listing.
    fn rebuild_free_list(&mut self, b: usize) {
        let block = &mut self.blocks[b];
        let before = block.retired();
        block.rebuild_free_list(self.limits.max_generation);
        self.retired = self.retired - before + block.retired();
        let (has_room, listed) = (block.has_room(), block.is_listed());
        if has_room && !listed {
            self.list(b);
        } else if !has_room {
            self.unlist(b);
        }
    }

    /// The blocks in order, each as its floor and its used slots (none for
    /// a freed range); for serialization.
    #[cfg(feature = "serde")]
    pub(crate) fn blocks_with_floors(&self) -> impl ExactSizeIterator<Item = (u32, &Block<T>)> {
        self.blocks.iter().map(|block| (block.floor(), block))
    }

    /// Appends the next block: a freed range with `floor` if `slots` is
    /// empty, else a block of exactly `slots.len()` used slots, each
    /// `(generation, value)` (vacant if `None`), all above `floor`; for
    /// deserialization. Call [`finish_build`](Self::finish_build) after
    /// the last one.
    ///
    /// `allowance` is what is left of the bookkeeping the input may ask
    /// for (see [`load_allowance`](Self::load_allowance)): the block's
    /// directory entries and the state words past its slots are taken from
    /// it, and a block that needs more is refused.
    #[cfg(feature = "serde")]
    pub(crate) fn push_block(
        &mut self,
        floor: u32,
        slots: Vec<(u32, Option<T>)>,
        allowance: &mut usize,
    ) -> Result<(), BuildError> {
        let b = self.blocks.len();
        let base = self.index_end;
        if base >= self.limits.max_slots {
            return Err(BuildError::TooManySlots(self.limits.max_slots));
        }
        let max_generation = self.limits.max_generation;
        if floor > max_generation || (!slots.is_empty() && floor == max_generation) {
            return Err(BuildError::Generation(floor));
        }
        if slots.len() > self.slots_of(b, base) {
            return Err(BuildError::Layout("more slots than the block holds"));
        }
        if let Some(&(generation, _)) = slots
            .iter()
            .find(|(generation, _)| *generation <= floor || *generation > max_generation)
        {
            return Err(BuildError::Generation(generation));
        }
        let end = base + self.range_of(b, base);
        let entries = end.div_ceil(1 << self.chunk_shift) - self.chunk_blocks.len();
        let fill_end = self.fill_end(b, base, slots.len());
        let written_past_slots = if slots.is_empty() {
            0
        } else {
            fill_end - base - slots.len()
        };
        let cost = entries * (mem::size_of::<*mut Payload<T>>() + mem::size_of::<u32>())
            + written_past_slots * mem::size_of::<u32>();
        *allowance = allowance.checked_sub(cost).ok_or(BuildError::Layout(
            "the index space the input names needs more bookkeeping than its blocks and slots allow",
        ))?;
        // A freed range's state words are not written here: input naming
        // freed ranges asks for directory entries only, and `finish_build`
        // writes their words with what is left of the allowance.
        if !slots.is_empty() {
            self.reserve_states(fill_end)
                .map_err(BuildError::Capacity)?;
        }
        self.append_range(floor).map_err(BuildError::Capacity)?;
        if slots.is_empty() {
            return Ok(());
        }
        self.allocate_range(b, slots.len());
        let block = &mut self.blocks[b];
        for (generation, value) in slots {
            match value {
                Some(value) => block.push_occupied(generation, value),
                None => block.push_vacant(generation),
            }
        }
        Ok(())
    }

    /// Writes `VACANT` over the words from `words_end` on that no block
    /// wrote, a range at a time while a range's unwritten words fit in
    /// `budget` (and the array can grow to hold them), and moves
    /// `words_end` over them and over the words blocks wrote after them.
    #[cfg(feature = "serde")]
    fn fill_unwritten(&mut self, mut budget: usize) {
        while self.words_end < self.index_end {
            let Some(b) = self.block_of(self.words_end) else {
                unreachable!("no block holds index {} of the index space", self.words_end)
            };
            let (base, block_len) = (self.blocks[b].base(), self.blocks[b].len());
            let end = base + self.range_of(b, base);
            if block_len > 0 && self.words_end == base {
                // An allocated block's words, written up to its `fill_end`.
                self.words_end = self.fill_end(b, base, block_len);
                continue;
            }
            let unwritten = end - self.words_end;
            if unwritten > budget || self.reserve_states(end).is_err() {
                return;
            }
            self.fill_vacant(self.words_end..end);
            budget -= unwritten;
            self.words_end = end;
        }
    }

    /// The bookkeeping (directory entries and state words past a block's
    /// slots, in bytes) that loading an input of `blocks` blocks holding
    /// `slots` slots in all may ask for: 1 MiB, and 128 bytes per block and
    /// per slot. A freed range of the default sizes takes at most 96 bytes
    /// of it, so every hive made with them loads; an input of a few bytes
    /// cannot ask for much more than 1 MiB, whatever index space it names.
    #[cfg(feature = "serde")]
    pub(crate) fn load_allowance(blocks: usize, slots: usize) -> usize {
        blocks
            .saturating_add(slots)
            .saturating_mul(128)
            .saturating_add(1 << 20)
    }

    /// Counts, links and lists everything after the last
    /// [`push_block`](Self::push_block): free lists in slot order, the
    /// list of blocks with room, the vacated ranges and the totals.
    ///
    /// `allowance` is what [`push_block`](Self::push_block) left of the
    /// bookkeeping allowance: the words no block wrote (a freed range's,
    /// or past a block's last chunk) are then written `VACANT` from
    /// `words_end` on, range by range, as far as it goes, so that lookups
    /// there take the shorter way. Input naming more unwritten words than
    /// that leaves the rest to `live_value_past`.
    #[cfg(feature = "serde")]
    pub(crate) fn finish_build(&mut self, allowance: usize) {
        self.fill_unwritten(allowance / mem::size_of::<u32>());
        let max_generation = self.limits.max_generation;
        for b in 0..self.blocks.len() {
            let len = self.blocks[b].len();
            if len == 0 {
                if self.blocks[b].floor() < max_generation {
                    self.vacated.push(b as u32);
                }
                continue;
            }
            self.slot_total += len;
            self.len += self.blocks[b].live();
            self.rebuild_free_list(b);
            if self.blocks[b].is_spent() {
                self.blocks[b].next = self.spent;
                self.spent = b as u32;
            }
        }
    }
}

impl<T: Clone, K> Clone for RawHive<T, K> {
    /// A copy with the same blocks, generations, free lists and lists, so
    /// it issues the same keys. If a `clone` panics, the values cloned so
    /// far are dropped.
    fn clone(&self) -> Self {
        let mut states = StateWords::new();
        let needed = (self.blocks.iter().enumerate())
            .filter(|(_, block)| block.len() > 0)
            .map(|(b, block)| self.fill_end(b, block.base(), block.len()))
            .max();
        states.reserve_exact(needed.unwrap_or(0).max(self.words_end));
        // The words below `words_end` are initialized (invariant), and
        // both arrays hold that many; those of the blocks' ranges are
        // copied again below.
        // SAFETY: so the reads are of initialized words, in bounds.
        unsafe {
            ptr::copy_nonoverlapping(self.states.as_ptr(), states.as_ptr(), self.words_end);
        }
        for (b, block) in self.blocks.iter().enumerate() {
            if block.len() == 0 {
                continue;
            }
            let range = block.base()..self.fill_end(b, block.base(), block.len());
            // The words of every allocated block up to its `fill_end` are
            // initialized (invariant on `states`), and both arrays hold
            // that many. The copy's blocks rewrite their used slots' words;
            // those past them stay `VACANT`, as `clone_onto` wants.
            // SAFETY: so the reads are of initialized words, in bounds.
            unsafe {
                ptr::copy_nonoverlapping(
                    self.states.as_ptr().add(range.start),
                    states.as_ptr().add(range.start),
                    range.len(),
                );
            }
        }
        let blocks: Vec<Block<T>> = self
            .blocks
            .iter()
            // SAFETY: the copy's words of each block's range hold what the
            // block's do (copied above), and no other block reaches them.
            .map(|block| unsafe { block.clone_onto(states.as_ptr()) })
            .collect();
        let chunk_payloads = self
            .chunk_blocks
            .iter()
            .enumerate()
            .map(|(c, &b)| chunk_entry(&blocks[b as usize], c, self.chunk_shift))
            .collect();
        RawHive {
            blocks,
            states,
            words_end: self.words_end,
            index_end: self.index_end,
            chunk_payloads: ChunkPayloads(chunk_payloads),
            chunk_blocks: self.chunk_blocks.clone(),
            available: self.available,
            spent: self.spent,
            vacated: self.vacated.clone(),
            min_shift: self.min_shift,
            chunk_shift: self.chunk_shift,
            shift: self.shift,
            len: self.len,
            slot_total: self.slot_total,
            retired: self.retired,
            fixed: self.fixed,
            limits: self.limits,
            _key: PhantomData,
        }
    }
}

// SAFETY: every index and generation the hive hands out is one of its
// own slots, made within its limits, which are no wider than those of `K`;
// its passes walk its own blocks.
#[allow(private_interfaces)]
unsafe impl<T, K: Key> RawTable<T> for RawHive<T, K> {
    type Blocks = HiveBlocks;

    const EMPTY: Self = default_raw::<T, K>();

    /// Iterates the live values in index order: block `b` holds flat
    /// indices from its floor, and its storage is addressed by flat index.
    #[inline]
    fn iter(&self) -> BlocksIter<'_, T> {
        super::block::iter(&self.blocks, self.len)
    }

    #[inline]
    fn iter_mut(&mut self) -> BlocksIterMut<'_, T> {
        super::block::iter_mut(&mut self.blocks, self.len)
    }

    /// Allocates blocks until `additional` more values fit.
    fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        while self.capacity() - self.len < additional {
            self.grow()?;
        }
        Ok(())
    }

    /// Inserts `make(index, generation)` into the first available block
    /// (allocating one if there is none) and returns `(index, generation)`.
    /// If `make` panics, no value is added (a block allocated for it stays,
    /// empty).
    // Forced, as `SlotArena::try_insert_with` is (see there): a value
    // passed to a call that is not inlined is built in memory and copied.
    #[inline(always)]
    fn try_insert_with(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError> {
        let b = match self.available {
            NO_BLOCK => self.grow()?,
            b => b as usize,
        };
        let Some(block) = self.blocks.get_mut(b) else {
            unreachable!("available block {b} past the table")
        };
        let (index, generation, has_room) = block.insert_with(make);
        debug_assert_eq!(has_room, block.has_room());
        self.len += 1;
        if !has_room {
            self.unlist(b);
        }
        Ok((index, generation))
    }

    /// The `(index, generation)` the next insertion gets, or the error it
    /// fails with. Adds no value; it may allocate the block the insertion
    /// needs, as an insertion would. [`try_insert_with`](Self::try_insert_with)
    /// right after it fills this very spot. For fallible constructors,
    /// which must know the key first.
    fn next_spot(&mut self) -> Result<(usize, u32), CapacityError> {
        let b = match self.available {
            NO_BLOCK => self.grow()?,
            b => b as usize,
        };
        Ok(self.blocks[b].next_spot())
    }

    #[inline]
    fn contains(&self, index: usize, generation: u32) -> bool {
        self.live_value(index, generation).is_some()
    }

    #[inline]
    fn get(&self, index: usize, generation: u32) -> Option<&T> {
        let value = self.live_value(index, generation)?;
        // The value is live, and `&self` keeps every `&mut` to it away for
        // the borrow.
        // SAFETY: so this is a shared reference to an initialized value.
        Some(unsafe { &*value })
    }

    #[inline]
    fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        let value = self.live_value(index, generation)?;
        // SAFETY: live, as in `get`; `&mut self` makes the access unique.
        Some(unsafe { &mut *value })
    }

    /// A pointer to the value, valid until it is taken out or its block is
    /// dropped, whatever is done to other slots in between: it has the
    /// provenance of the block's whole storage (see `block.rs`).
    #[inline]
    fn get_ptr(&self, index: usize, generation: u32) -> Option<NonNull<T>> {
        NonNull::new(self.live_value(index, generation)?)
    }

    /// The value at flat index `index`.
    ///
    /// # Safety
    ///
    /// The slot at `index` must exist and be occupied.
    #[inline]
    unsafe fn get_unchecked(&self, index: usize) -> &T {
        let b = self.block_of(index);
        debug_assert!(b.is_some());
        // SAFETY: the caller guarantees the slot exists, so its chunk does.
        let b = unsafe { b.unwrap_unchecked() };
        let block = &self.blocks[b];
        // SAFETY: the caller guarantees slot `index` of it is used and
        // occupied.
        unsafe { block.get_unchecked(index) }
    }

    /// The value at flat index `index`, mutably.
    ///
    /// # Safety
    ///
    /// The slot at `index` must exist and be occupied.
    #[inline]
    unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        let b = self.block_of(index);
        debug_assert!(b.is_some());
        // SAFETY: the caller guarantees the slot exists, so its chunk does.
        let b = unsafe { b.unwrap_unchecked() };
        let block = &mut self.blocks[b];
        // SAFETY: the caller guarantees slot `index` of it is used and
        // occupied.
        unsafe { block.get_unchecked_mut(index) }
    }

    /// Mutable references to `N` distinct live values.
    fn get_disjoint_mut<const N: usize>(&mut self, keys: [(usize, u32); N]) -> Option<[&mut T; N]> {
        let mut values = [ptr::null_mut(); N];
        for (n, &(index, generation)) in keys.iter().enumerate() {
            values[n] = self.live_value(index, generation)?;
            // Two live keys with one slot are the same key.
            if keys[..n].iter().any(|&(other, _)| other == index) {
                return None;
            }
        }
        // Each pointer comes from its block's own payload pointer, with no
        // reference to a whole array in between, and the `&mut` borrow of
        // the hive outlives them all. Every value above is live and named
        // once, and nothing else reaches them while the hive is borrowed
        // mutably.
        // SAFETY: so these are references to distinct initialized values.
        Some(values.map(|value| unsafe { &mut *value }))
    }

    /// Removes and returns the value named by `(index, generation)`.
    // Forced, as `SlotArena::remove` is: a call returns the value through
    // memory.
    #[inline(always)]
    fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        if mem::size_of::<T>() > 2 * mem::size_of::<usize>() {
            return self.remove_filed_first(index, generation);
        }
        let generation = Slot::<T>::matched_generation(generation);
        let max_generation = self.limits.max_generation;
        let b = self.block_of(index)?;
        let block = &mut self.blocks[b];
        // The slot is linked to this head (a load `take` makes anyway); if
        // there was none, the block had room only if it has a never-used
        // slot, which a removal does not change.
        let head = block.free_head();
        // SAFETY: block `b`'s range holds `index`: it starts at or before it.
        let value = unsafe { block.take(index, generation) }?;
        self.len -= 1;
        if generation < max_generation {
            block.push_free(index);
            if head == NO_SLOT && !block.has_fresh() {
                self.list_emptied(b);
            }
        } else {
            self.retire_taken(b);
        }
        Some(value)
    }

    /// Keeps the values for which `keep(index, generation, &mut value)` is
    /// true, in index order. If `keep` or a `Drop` panics, the values not
    /// yet visited stay, and the hive is consistent.
    fn retain(&mut self, mut keep: impl FnMut(usize, u32, &mut T) -> bool) {
        /// Lists block `b` if its pass gave it room, and applies the
        /// emptied-block policy, once the pass is over, even if it
        /// panicked.
        struct Settle<'a, T, K> {
            hive: &'a mut RawHive<T, K>,
            b: usize,
        }
        impl<T, K> Drop for Settle<'_, T, K> {
            fn drop(&mut self) {
                let block = &self.hive.blocks[self.b];
                if block.has_room() && !block.is_listed() {
                    self.hive.list(self.b);
                }
                self.hive.settle(self.b);
            }
        }
        let max_generation = self.limits.max_generation;
        for b in 0..self.blocks.len() {
            if self.blocks[b].live() == 0 {
                continue;
            }
            let settle = Settle { hive: self, b };
            let RawHive {
                blocks,
                len,
                retired,
                ..
            } = &mut *settle.hive;
            blocks[b].retain(
                max_generation,
                |index, generation, value| keep(index, generation, value),
                |generation, value| {
                    *len -= 1;
                    if generation >= max_generation {
                        *retired += 1;
                    }
                    // Dropped last: the hive is consistent if it panics.
                    drop(value);
                },
            );
            drop(settle);
        }
    }

    /// Values the hive can hold without allocating.
    #[inline]
    fn capacity(&self) -> usize {
        self.slot_total - self.retired
    }

    /// The fixed capacity, if the hive was made with one.
    #[inline]
    fn fixed_capacity(&self) -> Option<usize> {
        self.fixed
    }

    #[inline]
    fn retired(&self) -> usize {
        self.retired
    }

    /// Heap bytes held by the blocks and the tables.
    fn heap_bytes(&self) -> usize {
        use core::mem::size_of;
        self.blocks.iter().map(Block::heap_bytes).sum::<usize>()
            + self.blocks.capacity() * size_of::<Block<T>>()
            + self.states.heap_bytes()
            + self.chunk_payloads.0.capacity() * size_of::<*mut Payload<T>>()
            + self.chunk_blocks.capacity() * size_of::<u32>()
            + self.vacated.capacity() * size_of::<u32>()
    }

    /// Blocks with slots allocated.
    fn block_count(&self) -> usize {
        self.blocks.iter().filter(|block| block.len() > 0).count()
    }

    /// Checks every invariant; panics on the first one broken. O(slots).
    fn check_invariants(&self) {
        let max_generation = self.limits.max_generation;
        assert!(self.min_shift <= self.shift && self.shift <= 31);
        if let Some(capacity) = self.fixed {
            assert!(self.blocks.len() <= 1, "fixed hive grew a block");
            if let Some(block) = self.blocks.first() {
                assert!(
                    block.len() == capacity || block.len() == 0,
                    "fixed hive's block changed size"
                );
            }
        }
        let (mut total, mut live, mut retired) = (0, 0, 0);
        let mut with_room = 0;
        assert_eq!(
            self.chunk_shift,
            chunk_shift(self.min_shift, self.shift),
            "chunk size"
        );
        assert!(
            self.words_end <= self.index_end && self.words_end <= self.states.capacity(),
            "initialized words past the index space or the array"
        );
        let chunks = self.index_end.div_ceil(1 << self.chunk_shift);
        assert_eq!(self.chunk_blocks.len(), chunks, "block directory");
        assert_eq!(self.chunk_payloads.0.len(), chunks, "payload directory");
        let mut base = 0;
        for (b, block) in self.blocks.iter().enumerate() {
            block.check_invariants(max_generation);
            assert_eq!(block.base(), base, "base of block {b}");
            let range = self.range_of(b, base);
            base += range;
            assert!(
                base <= self.index_end,
                "block {b} past the index space's end"
            );
            if block.len() > 0 {
                let ptrs = block.flat_bases();
                assert_eq!(
                    ptrs.state_ptr(0),
                    self.states.as_ptr(),
                    "state array of block {b}"
                );
                let fill_end = self.fill_end(b, block.base(), block.len());
                assert!(
                    fill_end <= self.states.capacity(),
                    "state array of block {b}"
                );
                for index in block.limit() as usize..fill_end {
                    // The words of an allocated block's range are
                    // initialized (invariant on `states`).
                    // SAFETY: so this reads an initialized word, in the
                    // array (checked above).
                    let state = unsafe { *self.states.as_ptr().add(index) };
                    assert_eq!(state, VACANT, "state word {index} past block {b}");
                }
            }
            // Past the used slots (none in a freed range), every word below
            // `words_end` is a vacant one: no generation matches it.
            let past_slots = block.base() + block.len()..base.min(self.words_end);
            for index in past_slots {
                // Below `words_end` (invariant).
                // SAFETY: so this reads an initialized word, in the array
                // (checked above).
                let state = unsafe { *self.states.as_ptr().add(index) };
                assert!(
                    state & VACANT != 0,
                    "state word {index} past block {b} matches"
                );
            }
            for c in self.chunks_of(b, block.base()) {
                assert_eq!(self.chunk_blocks[c] as usize, b, "block of chunk {c}");
                assert_eq!(
                    self.chunk_payloads.0[c],
                    chunk_entry(block, c, self.chunk_shift),
                    "payloads of chunk {c}"
                );
            }
            assert!(
                block.base() < self.limits.max_slots,
                "block {b} past the index space"
            );
            if block.len() == 0 {
                assert!(!block.is_listed(), "freed range {b} listed");
                let vacated = self.vacated.iter().filter(|&&v| v as usize == b).count();
                let expected = usize::from(block.floor() < max_generation);
                assert_eq!(vacated, expected, "freed range {b} on the vacated list");
                continue;
            }
            assert!(
                block.len() <= self.slots_of(b, block.base()),
                "size of block {b}"
            );
            assert!(
                !self.vacated.contains(&(b as u32)),
                "live block {b} vacated"
            );
            assert!(
                block.floor() < max_generation,
                "block {b} over a retired range"
            );
            total += block.len();
            live += block.live();
            retired += block.retired();
            assert_eq!(block.has_room(), block.is_listed(), "listing of block {b}");
            with_room += usize::from(block.has_room());
        }
        // The list of blocks with room, from its first block: each listed
        // block once, linked both ways.
        assert_eq!(base, self.index_end, "end of the index space");
        let (mut at, mut prev, mut listed) = (self.available, NO_BLOCK, 0);
        while at != NO_BLOCK {
            let block = &self.blocks[at as usize];
            assert!(block.is_listed(), "block {at} on the list unlisted");
            assert_eq!(block.prev, prev, "back link of block {at}");
            listed += 1;
            assert!(listed <= self.blocks.len(), "cycle in the list of blocks");
            (prev, at) = (at, block.next);
        }
        assert_eq!(listed, with_room, "list of blocks with room");
        // The spent blocks waiting to be freed: exactly the allocated blocks
        // whose every slot retired, each once.
        let (mut at, mut on_spent) = (self.spent, 0);
        while at != NO_BLOCK {
            let block = &self.blocks[at as usize];
            assert!(block.is_spent(), "block {at} on the spent list");
            assert!(!block.is_listed(), "spent block {at} listed");
            on_spent += 1;
            assert!(on_spent <= self.blocks.len(), "cycle in the spent list");
            at = block.next;
        }
        let spent = self.blocks.iter().filter(|block| block.is_spent()).count();
        assert_eq!(on_spent, spent, "spent blocks");
        assert_eq!(total, self.slot_total, "slot total");
        assert_eq!(live, self.len, "len");
        assert_eq!(retired, self.retired, "retired count");
        for (n, &v) in self.vacated.iter().enumerate() {
            assert!(!self.vacated[..n].contains(&v), "range {v} vacated twice");
        }
    }
}
// SAFETY: the hive's slots, under the generations they held; its limits
// are those of `K` or narrower.
unsafe impl<T, K: Key> TakeSlots<T> for RawHive<T, K> {
    type Key = K;
    #[inline]
    fn take_slot(&mut self, from: usize) -> Option<(usize, u32, T)> {
        RawHive::take_next(self, from)
    }
    #[inline]
    fn len(&self) -> usize {
        RawHive::len(self)
    }
    fn clear(&mut self) {
        RawHive::clear(self);
    }
}

#[cfg(test)]
mod words_end_tests {
    use super::*;
    #[cfg(feature = "serde")]
    use alloc::vec;
    use alloc::vec::Vec;

    type Raw = RawHive<u64, crate::Id>;

    fn insert(hive: &mut Raw, value: u64) -> (usize, u32) {
        hive.try_insert_with(|_, _| value).unwrap()
    }

    /// Every lookup of a hive that was never loaded takes the shorter
    /// way: its words are initialized up to the end of the index space
    /// through growth, freed blocks, blocks made again over freed ranges,
    /// `clear` and `clone`.
    #[test]
    fn a_hive_built_by_its_own_calls_has_every_word_initialized() {
        let mut hive = Raw::new(KeyLimits::of::<crate::Id>(), 6, 8);
        let check = |hive: &Raw| {
            hive.check_invariants();
            assert_eq!(hive.words_end, hive.index_end);
        };
        check(&hive);
        // Under Miri, 500: the fourth block (from 448), in part, still has
        // the freed ranges in the middle (each check reads every word).
        let n = if cfg!(miri) { 500 } else { 1000 };
        let keys: Vec<_> = (0..n).map(|i| insert(&mut hive, i)).collect();
        check(&hive);
        // Empty the second and third blocks and free them: ranges in the
        // middle of the index space.
        for &(index, generation) in &keys[64..448] {
            assert!(hive.remove(index, generation).is_some());
        }
        hive.shrink_to_fit();
        check(&hive);
        for &(index, generation) in &keys[64..448] {
            assert_eq!(hive.get(index, generation), None);
        }
        for (i, &(index, generation)) in keys.iter().enumerate().skip(448) {
            assert_eq!(hive.get(index, generation), Some(&(i as u64)));
        }
        // Made again over the freed ranges.
        let again: Vec<_> = (0..400).map(|i| insert(&mut hive, i)).collect();
        check(&hive);
        assert!(again.iter().any(|&(index, _)| (64..448).contains(&index)));
        let copy = hive.clone();
        check(&copy);
        hive.clear();
        check(&hive);
        hive.shrink_to_fit();
        check(&hive);
        assert_eq!(copy.get(again[0].0, again[0].1), Some(&0));
    }

    /// A hive loaded with ranges it did not write (no allowance left to
    /// write them) finds its values past them the longer way, refuses
    /// stale keys in and past them, and fills them as it makes blocks
    /// over them.
    #[cfg(feature = "serde")]
    #[test]
    fn a_loaded_hive_finds_values_past_its_unwritten_ranges() {
        let mut hive = Raw::new(KeyLimits::of::<crate::Id>(), 6, 8);
        let mut allowance = usize::MAX;
        // Block 0 (64 slots) with two values, then two freed ranges (128
        // and 256 indices, floor 3), then block 3 (256 slots) with one.
        let mut slots: Vec<(u32, Option<u64>)> = vec![(2, Some(10)), (1, None), (1, Some(11))];
        hive.push_block(0, core::mem::take(&mut slots), &mut allowance)
            .unwrap();
        hive.push_block(3, Vec::new(), &mut allowance).unwrap();
        hive.push_block(3, Vec::new(), &mut allowance).unwrap();
        hive.push_block(0, vec![(5, Some(12))], &mut allowance)
            .unwrap();
        hive.finish_build(0);
        hive.check_invariants();
        assert_eq!((hive.words_end, hive.index_end), (64, 704));
        let check = |hive: &Raw| {
            assert_eq!(hive.get(0, 2), Some(&10));
            assert_eq!(hive.get(2, 1), Some(&11));
            assert_eq!(hive.get(448, 5), Some(&12));
            assert!(hive.contains(448, 5));
            assert_eq!(hive.get(448, 4), None);
            assert_eq!(hive.get(449, 1), None);
            assert_eq!(hive.get(1, 1), None);
            for index in [64, 100, 191, 192, 300, 447, 704, 10_000] {
                for generation in 1..=3 {
                    assert_eq!(hive.get(index, generation), None, "{index} {generation}");
                }
            }
        };
        check(&hive);
        let copy = hive.clone();
        copy.check_invariants();
        assert_eq!(copy.words_end, 64);
        check(&copy);
        // Block 0 has room (its slot 1 is vacant, the rest never used):
        // fill it, then the next blocks go over the freed ranges, the last
        // freed first, each slot above the floor.
        let mut keys = Vec::new();
        for i in 0..200 {
            keys.push(insert(&mut hive, i));
            if i % 25 == 0 {
                hive.check_invariants();
            }
        }
        hive.check_invariants();
        assert!(keys
            .iter()
            .all(|&(index, generation)| index < 448 && generation > 0));
        assert!(keys
            .iter()
            .filter(|&&(index, _)| index >= 64)
            .all(|&(_, generation)| generation == 4));
        for (i, &(index, generation)) in keys.iter().enumerate() {
            assert_eq!(hive.get(index, generation), Some(&(i as u64)));
        }
        assert_eq!(hive.get(448, 5), Some(&12));
    }

    /// With allowance left, loading writes the freed ranges' words: the
    /// loaded hive takes the shorter way everywhere.
    #[cfg(feature = "serde")]
    #[test]
    fn loading_writes_unwritten_words_as_far_as_the_allowance_goes() {
        let load = |allowance: usize| {
            let mut hive = Raw::new(KeyLimits::of::<crate::Id>(), 6, 8);
            let mut plenty = usize::MAX;
            hive.push_block(0, vec![(1, Some(1))], &mut plenty).unwrap();
            hive.push_block(3, Vec::new(), &mut plenty).unwrap();
            hive.push_block(3, Vec::new(), &mut plenty).unwrap();
            hive.push_block(0, vec![(1, Some(2))], &mut plenty).unwrap();
            hive.finish_build(allowance);
            hive.check_invariants();
            assert_eq!(hive.get(448, 1), Some(&2));
            assert_eq!(hive.get(64, 3), None);
            hive.words_end
        };
        // Block 3 keeps its one slot: its words reach the end of its first
        // chunk (64 indices), not the end of its range.
        assert_eq!(load(0), 64);
        assert_eq!(load(4 * 127), 64);
        assert_eq!(load(4 * 128), 192);
        assert_eq!(load(4 * 384), 512);
        assert_eq!(load(4 * (384 + 191)), 512);
        assert_eq!(load(4 * (384 + 192)), 704);
    }
}

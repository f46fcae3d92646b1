//! The entity table: entity index → generation and row, with a free set
//! that reuses the lowest free index first, and pages of free indices that
//! [`World::collect`](crate::World::collect) gives back to the system.
//!
//! A slot is one `u64`: the generation in the high 32 bits, the low 32
//! bits of the entity's row in the low 32 (see `World::entities`). A
//! lookup reads that one word and compares one number. A free index keeps
//! its last generation with the top bit ([`FREE`]) set, which no handle's
//! generation has (they stop at 2³¹ − 1), so no handle matches a free
//! slot, whatever its bits.
//!
//! # Giving pages back
//!
//! A world that despawns most of its entities keeps one slot per index it
//! ever used: the generations of free indices must outlive their entities,
//! or an old handle could name a new entity. The table keeps them without
//! keeping the memory: once every index of a page of [`PAGE_SLOTS`] slots
//! is free, [`EntityTable::sweep`] records the highest generation in the
//! page as the page's *floor* and zeroes the page
//! ([`VmVec::zero_range`]), which gives its memory back. A zero slot
//! matches no handle (none has generation 0) and stands for the floor:
//! its next entity gets `floor + 1`, newer than every handle the page ever
//! issued, so stale handles stay stale. The
//! free set is a bitmap (one bit per index, and a summary bit per word
//! above it), not a list threaded through the slots, so nothing in a
//! zeroed page needs reading.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use handlekit::{Key, VmVec};

use crate::Entity;

/// Slots per page the sweep gives back: 4 KiB of slots.
pub(crate) const PAGE_SLOTS: usize = 512;

/// The bytes of a page of slots.
const PAGE_BYTES: usize = PAGE_SLOTS * 8;

/// The most indices a table can have: an entity's index has 32 bits (on a
/// 32-bit target, as many as `usize` counts).
const MAX_INDICES: usize = (u32::MAX as usize).saturating_add(1);

/// The last generation an index is live at. An index freed at it is
/// retired: never reused, kept out of the free set.
const LAST_LIVE: u32 = Entity::MAX_GENERATION;

/// The flag of a free slot's generation, above every handle's.
const FREE: u32 = 1 << 31;

const _: () = assert!(LAST_LIVE < FREE, "no handle's generation has the free flag");

/// The generation of a slot.
#[inline]
fn generation(slot: u64) -> u32 {
    (slot >> 32) as u32
}

/// A slot of `generation` holding row bits `row`.
#[inline]
fn slot(generation: u32, row: u32) -> u64 {
    u64::from(generation) << 32 | u64::from(row)
}

/// The entity of a slot's parts; every generation the table issues is a
/// valid one (1 to [`LAST_LIVE`]).
#[inline]
fn entity(index: usize, generation: u32) -> Entity {
    Entity::from_bits(index as u64 | u64::from(generation) << 32)
        .expect("handlekit-ecs: the entity table issues valid generations")
}

/// A page's state once the sweep has zeroed it.
#[derive(Clone, Copy, Debug, Default)]
struct Page {
    /// The last generation every zero slot of the page stands for: the
    /// highest the page held when it was zeroed; 0 for a page never zeroed
    /// (none of its slots is 0 then).
    floor: u32,
    /// Whether the page is zeroed and none of its slots used since, so the
    /// sweep passes it by.
    zeroed: bool,
    /// Whether zeroing gave the page's memory back to the system (and none
    /// of its slots was used since): counted in `EntityTable::given_back`.
    given_back: bool,
}

/// The slots of an [`EntityTable`], borrowed: the lookup of
/// [`EntityTable::get`] over a slice held by value.
#[derive(Clone, Copy)]
pub(crate) struct SlotsView<'a>(&'a [u64]);

impl SlotsView<'_> {
    /// See [`EntityTable::get`].
    #[inline]
    pub(crate) fn get(self, entity: Entity) -> Option<u32> {
        row_bits(*self.0.get(entity.index())?, entity)
    }
}

/// The row bits of slot `found` if it holds `entity`'s generation (free
/// and zero slots match no handle's generation).
#[inline(always)]
fn row_bits(found: u64, entity: Entity) -> Option<u32> {
    (generation(found) == entity.generation()).then_some(found as u32)
}

/// See the [module docs](self).
pub(crate) struct EntityTable {
    /// One slot per index ever used. Invariant: a generation from 1 to
    /// [`LAST_LIVE`] marks a live index, whose low bits are its row's; one
    /// with the [`FREE`] flag a free index at its last generation (in
    /// `free` unless that is [`LAST_LIVE`]: retired); 0 a slot of a zeroed
    /// page, free, standing for its page's `floor`.
    slots: VmVec<u64>,
    /// The state of each page the sweep has zeroed (and of those before
    /// it); pages past the end were never zeroed.
    pages: Vec<Page>,
    /// The free indices: the flagged slots but the retired ones, and the
    /// zero ones.
    free: FreeSet,
    /// The number of live indices.
    len: usize,
    /// The page the next sweep starts from.
    sweep_from: usize,
    /// The bytes of the pages marked `given_back`.
    given_back: usize,
    /// The entities handed out by [`reserve_entities`](Self::reserve_entities) since the last
    /// [`take_reserved`](Self::take_reserved). Invariant: reservation `k`
    /// (counting from 0) is the entity the `k`-th [`insert`](Self::insert)
    /// from now on would return, with no remove between: the `k`-th lowest
    /// free index at its next generation while `k < free.len`, then the new
    /// index `slots.len() + k - free.len` at generation 1. That holds
    /// because the free set and the slots do not change while reservations
    /// are outstanding: every `&mut` operation on the table that changes
    /// them runs after the world turned the reservations into entities
    /// (with `insert`). Never more than the limit `reserve_entities` was given, so
    /// it never overflows.
    reserved: AtomicUsize,
    /// A hint for finding the `k`-th free index: `rank << 32 | word`, where
    /// `rank` is the number of free indices below word `word` of the free
    /// set's bitmap. Any value stored is a true pair for the free set of
    /// the moment (the set does not change while it is used), so a racing
    /// store only makes the hint less useful, never wrong. 0 (rank 0 at
    /// word 0) is always true.
    hint: AtomicU64,
}

impl EntityTable {
    /// An empty table with room for `max_slots` indices (address space on
    /// a virtual-memory build, an allocation up front on the heap
    /// fallback).
    pub(crate) fn with_max_slots(max_slots: usize) -> Self {
        let max_slots = max_slots.min(MAX_INDICES);
        EntityTable {
            slots: VmVec::with_max_capacity_recycled(max_slots).unwrap_or_else(|error| {
                panic!("handlekit-ecs: reserving the entity table: {error}")
            }),
            pages: Vec::new(),
            free: FreeSet::default(),
            len: 0,
            sweep_from: 0,
            given_back: 0,
            reserved: AtomicUsize::new(0),
            hint: AtomicU64::new(0),
        }
    }

    /// The number of live entities.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The row bits of a live `entity`, or `None` for a stale, forged or
    /// foreign handle that names no live entity.
    #[inline]
    pub(crate) fn get(&self, entity: Entity) -> Option<u32> {
        // Through the `VmVec` itself, not `slots_view`: taking the slice
        // first cost the world's `get_mut` 3 more instructions per call
        // (callgrind).
        row_bits(*self.slots.get(entity.index())?, entity)
    }

    /// The slots as a plain slice, for a caller that looks up many
    /// entities while the table cannot change (a query's `get`): the
    /// slice's address and length are then values it keeps, not fields of
    /// the table read again on every lookup.
    #[inline]
    pub(crate) fn slots_view(&self) -> SlotsView<'_> {
        SlotsView(self.slots.as_slice())
    }

    /// Sets the row bits of a live `entity`; `false` if it is not live.
    #[inline]
    pub(crate) fn set_row(&mut self, entity: Entity, row: u32) -> bool {
        let wanted = entity.generation();
        match self.slots.get_mut(entity.index()) {
            Some(found) if generation(*found) == wanted => {
                *found = slot(wanted, row);
                true
            }
            _ => false,
        }
    }

    /// A new entity at row bits `row`: the lowest free index, or a new one;
    /// `None` when no index is left.
    #[inline]
    pub(crate) fn insert(&mut self, row: u32) -> Option<Entity> {
        debug_assert!(
            !self.has_reserved(),
            "reservations not turned into entities"
        );
        if let Some(index) = self.free.first() {
            return Some(self.reuse(index, row));
        }
        let index = self.slots.len();
        self.slots.try_push(slot(1, row)).ok()?;
        self.len += 1;
        Some(entity(index, 1))
    }

    /// Whether reservations are outstanding (see `reserved`): the world
    /// must turn them into entities before changing the table.
    #[inline]
    pub(crate) fn has_reserved(&mut self) -> bool {
        *self.reserved.get_mut() != 0
    }

    /// The number of reservations outstanding, and none from now on: the
    /// caller turns them into entities with that many [`insert`](Self::insert)s,
    /// which return them in the order they were handed out.
    pub(crate) fn take_reserved(&mut self) -> usize {
        *self.hint.get_mut() = 0;
        std::mem::take(self.reserved.get_mut())
    }

    /// Hands out `n` reservations at once and returns the number of the
    /// first (see `reserved`), or `None`, handing out none, if that would
    /// make more than `rows_room` outstanding or more than the indices
    /// left (the free ones and those never used). Lock-free: one
    /// compare-and-swap loop on the counter.
    pub(crate) fn reserve_entities(&self, n: usize, rows_room: usize) -> Option<usize> {
        let unused = self.slots.max_capacity().min(MAX_INDICES) - self.slots.len();
        let limit = rows_room.min(self.free.len.saturating_add(unused));
        self.reserved
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
                k.checked_add(n).filter(|&end| end <= limit)
            })
            .ok()
    }

    /// The entity of reservation `k`, which [`reserve_entities`](Self::reserve_entities)
    /// handed out (see `reserved`). O(1) for reservations taken in order
    /// (the hint remembers where the last one was found).
    pub(crate) fn reserved_entity(&self, k: usize) -> Entity {
        let free = self.free.len;
        if k >= free {
            return entity(self.slots.len() + (k - free), 1);
        }
        let (word, rank) = self.free_word_of_rank(k);
        let index = word * 64 + select(self.free.levels[0][word], k - rank);
        entity(index, self.next_generation(index))
    }

    /// The entities of reservations `range` (handed out by one
    /// [`reserve_entities`](Self::reserve_entities)), in order, found in one walk of the free
    /// set.
    pub(crate) fn reserved_entities(&self, range: std::ops::Range<usize>) -> ReservedIter<'_> {
        let mut it = ReservedIter {
            table: self,
            next: range.start,
            end: range.end,
            word: 0,
            bits: 0,
        };
        if range.start < range.end && range.start < self.free.len {
            let (word, rank) = self.free_word_of_rank(range.start);
            let mut bits = self.free.levels[0][word];
            for _ in rank..range.start {
                bits &= bits - 1;
            }
            it.word = word;
            it.bits = bits;
        }
        it
    }

    /// The word of the free set's bitmap holding the `k`-th free index
    /// (`k < free.len`), and the number of free indices below that word.
    fn free_word_of_rank(&self, k: usize) -> (usize, usize) {
        debug_assert!(k < self.free.len);
        let words = &self.free.levels[0];
        let hint = self.hint.load(Ordering::Relaxed);
        let (mut rank, mut word) = ((hint >> 32) as usize, hint as u32 as usize);
        if rank > k {
            (rank, word) = (0, 0);
        }
        loop {
            let ones = words[word].count_ones() as usize;
            if rank + ones > k {
                break;
            }
            rank += ones;
            word += 1;
        }
        // Both grow together, so the largest pair is the furthest on; it
        // fits: `rank < free.len <= 2^32` and `word < 2^26`.
        self.hint
            .fetch_max((rank as u64) << 32 | word as u64, Ordering::Relaxed);
        (word, rank)
    }

    /// The generation the free `index` is next issued at: one above its
    /// last (a zero slot's page floor).
    fn next_generation(&self, index: usize) -> u32 {
        let found = self.slots[index];
        let last = if found == 0 {
            self.pages[index / PAGE_SLOTS].floor
        } else {
            generation(found) & !FREE
        };
        last + 1
    }

    /// Whether `entity` was handed out by [`reserve_entities`](Self::reserve_entities) and is
    /// still outstanding. O(index / 64) when reservations are outstanding,
    /// O(1) otherwise.
    pub(crate) fn is_reserved(&self, entity: Entity) -> bool {
        let outstanding = self.reserved.load(Ordering::Relaxed);
        if outstanding == 0 {
            return false;
        }
        let index = entity.index();
        let free = self.free.len;
        if let Some(past) = index.checked_sub(self.slots.len()) {
            // A new index: reservations `free..outstanding` took them in order.
            return entity.generation() == 1 && past < outstanding.saturating_sub(free);
        }
        self.free.contains(index)
            && self.next_generation(index) == entity.generation()
            && self.free.rank(index) < outstanding.min(free)
    }

    /// Makes the free `index` live again at row bits `row`.
    fn reuse(&mut self, index: usize, row: u32) -> Entity {
        self.free.remove(index);
        let found = &mut self.slots[index];
        let last = if *found == 0 {
            // A zeroed page: the slot stands for the page's floor.
            let page = &mut self.pages[index / PAGE_SLOTS];
            page.zeroed = false;
            if std::mem::take(&mut page.given_back) {
                // Writing the slot makes the page resident again.
                self.given_back -= PAGE_BYTES;
            }
            page.floor
        } else {
            generation(*found) & !FREE
        };
        debug_assert!(
            (*found == 0 || generation(*found) & FREE != 0) && last < LAST_LIVE,
            "free slot {index}"
        );
        *found = slot(last + 1, row);
        self.len += 1;
        entity(index, last + 1)
    }

    /// Frees a live `entity`'s index and returns its row bits, or `None` if
    /// it is not live.
    #[inline]
    pub(crate) fn remove(&mut self, entity: Entity) -> Option<u32> {
        debug_assert!(
            !self.has_reserved(),
            "reservations not turned into entities"
        );
        let index = entity.index();
        let last = entity.generation();
        let found = self.slots.get_mut(index)?;
        // Free and zero slots match no handle's generation.
        if generation(*found) != last {
            return None;
        }
        let row = *found as u32;
        *found = slot(last | FREE, 0);
        if last != LAST_LIVE {
            self.free.insert(index);
        }
        self.len -= 1;
        Some(row)
    }

    /// Frees every live index. O(indices).
    pub(crate) fn clear(&mut self) {
        debug_assert!(
            !self.has_reserved(),
            "reservations not turned into entities"
        );
        self.free = FreeSet::default();
        for (index, found) in self.slots.iter_mut().enumerate() {
            if *found != 0 && generation(*found) & FREE == 0 {
                *found = slot(generation(*found) | FREE, 0);
            }
            if generation(*found) != LAST_LIVE | FREE {
                self.free.insert(index);
            }
        }
        self.len = 0;
    }

    /// Commits room for `additional` new indices at once.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    /// Examines up to `pages` pages of slots, going round the table from
    /// where the last sweep stopped, and zeroes those whose indices are all
    /// free (see the [module docs](self)). Returns the bytes given back to
    /// the system. O(`pages` × [`PAGE_SLOTS`]).
    pub(crate) fn sweep(&mut self, pages: usize) -> usize {
        debug_assert!(
            !self.has_reserved(),
            "reservations not turned into entities"
        );
        let whole = self.slots.len() / PAGE_SLOTS;
        let mut released = 0;
        // Consecutive pages to zero, zeroed together.
        let mut run = 0..0;
        for _ in 0..pages.min(whole) {
            if self.sweep_from >= whole {
                self.sweep_from = 0;
                released += self.zero_pages(&mut run);
            }
            let page = self.sweep_from;
            self.sweep_from += 1;
            let start = page * PAGE_SLOTS;
            let zeroed = self.pages.get(page).is_some_and(|p| p.zeroed);
            if zeroed || !self.free.all_set(start / 64, PAGE_SLOTS / 64) {
                released += self.zero_pages(&mut run);
                continue;
            }
            let old_floor = self.pages.get(page).map_or(0, |p| p.floor);
            let floor = self.slots[start..start + PAGE_SLOTS]
                .iter()
                .map(|&found| generation(found) & !FREE)
                .max()
                .unwrap_or(0)
                .max(old_floor);
            if self.pages.len() <= page {
                self.pages.resize(page + 1, Page::default());
            }
            self.pages[page] = Page {
                floor,
                zeroed: true,
                given_back: false,
            };
            if run.end != page {
                released += self.zero_pages(&mut run);
                run = page..page;
            }
            run.end = page + 1;
        }
        released + self.zero_pages(&mut run)
    }

    /// Zeroes the slots of the pages `run` and empties it. Returns the
    /// bytes given back.
    fn zero_pages(&mut self, run: &mut std::ops::Range<usize>) -> usize {
        let pages = std::mem::replace(run, 0..0);
        if pages.is_empty() {
            return 0;
        }
        let released = self
            .slots
            .zero_range(pages.start * PAGE_SLOTS..pages.end * PAGE_SLOTS);
        // With pages of 4 KiB the system takes every page; with larger
        // ones only some (which this does not track): count none.
        if released == pages.len() * PAGE_BYTES {
            for page in &mut self.pages[pages] {
                page.given_back = true;
            }
            self.given_back += released;
            released
        } else {
            0
        }
    }

    /// The bytes the table holds: its committed slots less the pages given
    /// back, its free set and its page records.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.slots.committed_bytes() - self.given_back
            + self
                .free
                .levels
                .iter()
                .map(|l| l.capacity() * 8)
                .sum::<usize>()
            + self.pages.capacity() * size_of::<Page>()
    }

    /// The generation of every index in order (a free index's last one), as
    /// `(generation, count)` runs of equal generations, passed to `f` until
    /// it returns `false`. A zero slot reports its page's floor.
    #[cfg(feature = "serde")]
    pub(crate) fn for_each_generation_run(&self, f: impl FnMut(u32, u32) -> bool) {
        let generations =
            self.slots
                .iter()
                .enumerate()
                .map(|(index, &found)| match generation(found) {
                    0 => self.pages[index / PAGE_SLOTS].floor,
                    g => g & !FREE,
                });
        handlekit::lookup_table::for_each_run(generations, f);
    }

    /// The table whose generations are `runs` (`(generation, count)` in
    /// index order) and whose live indices are those of `live`, with their
    /// row bits, in ascending index order; the others are free (retired at
    /// [`LAST_LIVE`]). Refuses (with the reason) a generation of 0 or
    /// above [`LAST_LIVE`], live indices out of order or past the runs, and
    /// more indices than `max_slots`.
    #[cfg(feature = "serde")]
    pub(crate) fn from_generation_runs(
        max_slots: usize,
        runs: &[(u32, u32)],
        live: impl IntoIterator<Item = (usize, u32)>,
    ) -> Result<Self, String> {
        let slot_count: u64 = runs.iter().map(|&(_, count)| u64::from(count)).sum();
        if slot_count > max_slots.min(MAX_INDICES) as u64 {
            return Err(format!(
                "{slot_count} entity indices, for at most {max_slots}"
            ));
        }
        let mut table = EntityTable::with_max_slots(max_slots);
        table.slots.reserve(slot_count as usize);
        let mut live = live.into_iter().peekable();
        for &(generation, count) in runs {
            if generation == 0 || generation > LAST_LIVE {
                return Err(format!("entity generation {generation} is out of range"));
            }
            for _ in 0..count {
                let index = table.slots.len();
                let row = match live.peek() {
                    Some(&(at, row)) if at == index => {
                        live.next();
                        Some(row)
                    }
                    Some(&(at, _)) if at < index => {
                        return Err(format!(
                            "live entity index {at} is out of ascending order or given twice"
                        ))
                    }
                    _ => None,
                };
                if let Some(row) = row {
                    table.slots.push(slot(generation, row));
                    table.len += 1;
                } else {
                    table.slots.push(slot(generation | FREE, 0));
                    if generation != LAST_LIVE {
                        table.free.insert(index);
                    }
                }
            }
        }
        if let Some((at, _)) = live.next() {
            return Err(format!(
                "live entity index {at} is past the {slot_count} indices"
            ));
        }
        Ok(table)
    }

    /// Checks the invariants, panicking where one fails (for tests).
    pub(crate) fn check(&self) {
        let mut live = 0;
        for (index, &found) in self.slots.iter().enumerate() {
            let g = generation(found);
            let free = self.free.contains(index);
            if g == 0 {
                let page = self.pages[index / PAGE_SLOTS];
                assert!(page.floor > 0 && free, "{index}");
            } else if g & FREE == 0 {
                live += 1;
                assert!(!free && g <= LAST_LIVE, "{index}");
            } else {
                assert_eq!(free, g != LAST_LIVE | FREE, "{index}");
            }
        }
        assert_eq!(live, self.len);
        let free: usize = self
            .free
            .levels
            .first()
            .map_or(0, |bits| bits.iter().map(|w| w.count_ones() as usize).sum());
        assert_eq!(free, self.free.len, "free count");
    }
}

/// The entities of a run of reservations, from
/// [`EntityTable::reserved_entities`]: the free indices in ascending order,
/// then new indices.
pub(crate) struct ReservedIter<'a> {
    table: &'a EntityTable,
    /// The next reservation's number.
    next: usize,
    /// The number past the last reservation.
    end: usize,
    /// While `next` names a free index: the word of the free set's bitmap
    /// it lies in, and that word's free indices from it on (`bits != 0`,
    /// or the word after `word` with a set bit holds it).
    word: usize,
    bits: u64,
}

impl Iterator for ReservedIter<'_> {
    type Item = Entity;

    fn next(&mut self) -> Option<Entity> {
        if self.next >= self.end {
            return None;
        }
        let k = self.next;
        self.next += 1;
        let table = self.table;
        let free = table.free.len;
        if k >= free {
            return Some(entity(table.slots.len() + (k - free), 1));
        }
        let words = &table.free.levels[0];
        while self.bits == 0 {
            self.word += 1;
            self.bits = words[self.word];
        }
        let index = self.word * 64 + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(entity(index, table.next_generation(index)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for ReservedIter<'_> {}
impl std::iter::FusedIterator for ReservedIter<'_> {}

/// The position of the `n`-th set bit of `word` (`n < word.count_ones()`).
fn select(mut word: u64, n: usize) -> usize {
    debug_assert!(n < word.count_ones() as usize);
    for _ in 0..n {
        word &= word - 1;
    }
    word.trailing_zeros() as usize
}

/// A set of indices that finds its lowest member in a few loads: a bitmap
/// with a summary level per 64 words above it, up to one top word.
#[derive(Clone, Debug, Default)]
struct FreeSet {
    /// `levels[0]` has bit `i` set iff `i` is in the set; `levels[k + 1]`
    /// has bit `w` set iff word `w` of `levels[k]` is not zero. The last
    /// level is one word; every level covers the one below.
    levels: Vec<Vec<u64>>,
    /// The number of indices in the set (the set bits of `levels[0]`).
    len: usize,
}

impl FreeSet {
    /// Puts `index` in the set (it was not in it).
    fn insert(&mut self, index: usize) {
        if index / 64 >= self.levels.first().map_or(0, Vec::len) {
            self.cover(index + 1);
        }
        debug_assert!(!self.contains(index), "free index {index} freed twice");
        self.len += 1;
        let mut at = index;
        for level in &mut self.levels {
            let word = &mut level[at / 64];
            let was_empty = *word == 0;
            *word |= 1 << (at % 64);
            if !was_empty {
                return;
            }
            at /= 64;
        }
    }

    /// Takes `index` out of the set (it was in it).
    fn remove(&mut self, index: usize) {
        debug_assert!(self.contains(index), "index {index} is not free");
        self.len -= 1;
        let mut at = index;
        for level in &mut self.levels {
            let word = &mut level[at / 64];
            *word &= !(1 << (at % 64));
            if *word != 0 {
                return;
            }
            at /= 64;
        }
    }

    /// The lowest index in the set.
    #[inline]
    fn first(&self) -> Option<usize> {
        let top = *self.levels.last()?.first()?;
        if top == 0 {
            return None;
        }
        let mut at = top.trailing_zeros() as usize;
        for level in self.levels.iter().rev().skip(1) {
            at = at * 64 + level[at].trailing_zeros() as usize;
        }
        Some(at)
    }

    /// The number of indices in the set below `index`. O(index / 64).
    fn rank(&self, index: usize) -> usize {
        let Some(bits) = self.levels.first() else {
            return 0;
        };
        let whole = (index / 64).min(bits.len());
        let below: usize = bits[..whole].iter().map(|w| w.count_ones() as usize).sum();
        let part = bits
            .get(index / 64)
            .map_or(0, |w| (w & ((1 << (index % 64)) - 1)).count_ones() as usize);
        below + part
    }

    fn contains(&self, index: usize) -> bool {
        self.levels
            .first()
            .and_then(|bits| bits.get(index / 64))
            .is_some_and(|word| word & 1 << (index % 64) != 0)
    }

    /// Whether the `count` words of the bitmap from word `first` are all
    /// ones.
    fn all_set(&self, first: usize, count: usize) -> bool {
        self.levels
            .first()
            .and_then(|bits| bits.get(first..first + count))
            .is_some_and(|words| words.iter().all(|&word| word == !0))
    }

    /// Grows the levels to cover the indices below `n`.
    #[cold]
    fn cover(&mut self, n: usize) {
        let mut words = n.div_ceil(64).max(1);
        let mut depth = 0;
        loop {
            if depth == self.levels.len() {
                // A new level summarises the one below it, if any.
                let mut level = vec![0; words];
                if let Some(below) = depth.checked_sub(1).map(|d| &self.levels[d]) {
                    for (w, &word) in below.iter().enumerate() {
                        if word != 0 {
                            level[w / 64] |= 1 << (w % 64);
                        }
                    }
                }
                self.levels.push(level);
            } else if self.levels[depth].len() < words {
                self.levels[depth].resize(words, 0);
            }
            if words == 1 {
                return;
            }
            words = words.div_ceil(64);
            depth += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The free set against a `BTreeSet`, across level boundaries.
    #[test]
    fn free_set_finds_the_lowest() {
        let mut set = FreeSet::default();
        let mut model = std::collections::BTreeSet::new();
        let mut x = 12345u64;
        let span = if cfg!(miri) { 5000 } else { 300_000 };
        // Under Miri, 300 steps over three levels (16 ms of Miri's clock a
        // step).
        for step in 0..if cfg!(miri) { 300 } else { 100_000 } {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let index = (x >> 33) as usize % span;
            if model.contains(&index) {
                set.remove(index);
                model.remove(&index);
            } else {
                set.insert(index);
                model.insert(index);
            }
            if step % 7 == 0 {
                if let Some(first) = set.first() {
                    set.remove(first);
                    assert_eq!(model.pop_first(), Some(first));
                }
            }
            assert_eq!(set.first(), model.first().copied());
            assert_eq!(set.len, model.len());
        }
    }

    #[test]
    fn pages_of_free_indices_are_zeroed_and_keep_generations() {
        let mut table = EntityTable::with_max_slots(4 * PAGE_SLOTS);
        let first: Vec<Entity> = (0..3 * PAGE_SLOTS as u32)
            .map(|row| table.insert(row).unwrap())
            .collect();
        // Reuse index 5 a few times so the page holds a higher generation.
        for _ in 0..3 {
            let e = table.insert(0).unwrap();
            table.remove(e);
        }
        let reused = table.insert(7).unwrap();
        assert_eq!(reused.index(), 3 * PAGE_SLOTS);
        table.remove(reused);
        let mut current = first[5];
        let again: Vec<Entity> = (0..4)
            .map(|_| {
                assert!(table.remove(current).is_some());
                current = table.insert(5).unwrap();
                assert_eq!(current.index(), 5);
                current
            })
            .collect();
        let high = again[3].generation();
        for &e in first[..PAGE_SLOTS].iter().chain(&again[3..]) {
            table.remove(e);
        }
        table.check();
        table.sweep(usize::MAX);
        table.check();
        assert!(table.pages[0].zeroed && table.pages[0].floor == high);
        assert!(table.slots[..PAGE_SLOTS].iter().all(|&s| s == 0));
        // Every old handle of the page is stale; the next entity there is
        // newer than all of them.
        assert!(first[..PAGE_SLOTS].iter().all(|&e| table.get(e).is_none()));
        assert!(again.iter().all(|&e| table.get(e).is_none()));
        let next = table.insert(9).unwrap();
        assert_eq!((next.index(), next.generation()), (0, high + 1));
        assert_eq!(table.get(next), Some(9));
        table.check();
        // Runs report the floor for the zero slots.
        #[cfg(feature = "serde")]
        {
            let mut runs = Vec::new();
            table.for_each_generation_run(|g, n| {
                runs.push((g, n));
                true
            });
            assert_eq!(runs[0], (high + 1, 1));
            assert_eq!(runs[1], (high, PAGE_SLOTS as u32 - 1));
        }
    }
}

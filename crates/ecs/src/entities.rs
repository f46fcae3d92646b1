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
        let found = *self.slots.get(entity.index())?;
        // Free and zero slots match no handle's generation.
        (generation(found) == entity.generation()).then_some(found as u32)
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
        if let Some(index) = self.free.first() {
            return Some(self.reuse(index, row));
        }
        let index = self.slots.len();
        self.slots.try_push(slot(1, row)).ok()?;
        self.len += 1;
        Some(entity(index, 1))
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
    }
}

/// A set of indices that finds its lowest member in a few loads: a bitmap
/// with a summary level per 64 words above it, up to one top word.
#[derive(Clone, Debug, Default)]
struct FreeSet {
    /// `levels[0]` has bit `i` set iff `i` is in the set; `levels[k + 1]`
    /// has bit `w` set iff word `w` of `levels[k]` is not zero. The last
    /// level is one word; every level covers the one below.
    levels: Vec<Vec<u64>>,
}

impl FreeSet {
    fn insert(&mut self, index: usize) {
        if index / 64 >= self.levels.first().map_or(0, Vec::len) {
            self.cover(index + 1);
        }
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
        for step in 0..if cfg!(miri) { 600 } else { 100_000 } {
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

//! [`Hive`]: blocks that grow geometrically, a free list per block and the
//! list of blocks with room (seed 001's "nested free lists", the design of
//! C++'s `std::hive`), with generational keys and stable addresses; and its
//! iterators.

#[cfg(feature = "serde")]
mod serde_impl;

use crate::iter::HiveBlocks;
use crate::raw::hive::RawHive;
use crate::raw::KeyLimits;
use crate::{Id, Key};
use crate::{SlotTable, StableTable};

/// An unordered collection with stable addresses and generational keys:
/// values live in blocks that never move, each block threads a free list
/// through its own vacant slots, and the hive keeps a list of the blocks
/// that have room, so an insertion finds a slot in O(1) without scanning.
///
/// This is seed 001's "random-access sequence, nested free lists", the
/// design C++ standardised as `std::hive` (after `plf::hive`), with keys
/// instead of iterators: a key is checked on every use, so a stale or
/// forged key gives `None`, never another value.
///
/// | operation | cost |
/// | --- | --- |
/// | `insert` | O(1): the free list of a block with room, else a new block |
/// | `remove`, `get`, `get_mut`, `get_ptr`, `contains_key` | O(1) |
/// | iteration | O(len + slots / 64 + blocks) |
/// | `clear`, `retain` | O(slots) |
///
/// The free list per block is what a removal pays for: it finds the
/// slot's block, pushes the slot on that block's list, counts it, and
/// lists the block if it was full. In one full run of the comparison
/// runner (`cargo run --release`, 1k to 1M values) a removal took 1.3 to
/// 2.7 times an [`IdTable`](crate::IdTable)'s time (46 instructions
/// against 25 for `u64`), where prototypes with one free list for the
/// whole hive took 1.1 to 1.7 (the repository's
/// `crates/bench/FINDINGS.md`, "`Hive`'s removals"). For work that removes
/// about as often as it iterates, a [`Pool`](crate::Pool) keeps addresses
/// just as stable with one free list, and removes as fast as an `IdTable`.
///
/// # Blocks
///
/// Blocks double in size from the first to the largest. By default the
/// first block holds as many slots as fit in 64 KiB, and the largest as
/// many as fit in 1 MiB, each rounded down to a power of two; the first
/// is kept within 64..=1024 slots and the largest within 64..=8192. So a
/// hive of `u64`s grows 1024, 2048, 4096, 8192, 8192, ... slots, and one of
/// 64-byte values 512, 1024, ..., 8192. A first block that large costs a
/// hive of a handful of values up to 64 KiB, but iteration pays a few
/// nanoseconds per block it enters, a large share of a pass over a small,
/// sparse hive: with 64-slot first blocks, a hive of 1000 `u64`s had five
/// blocks, and its sparse pass (50 live values) took 1.10 times an
/// [`IdTable`](crate::IdTable)'s time in the comparison runner; with these
/// sizes it takes 0.92. [`with_block_sizes`](Hive::with_block_sizes) picks
/// other bounds.
///
/// A key holds a flat index: the blocks' index ranges lie end to end, and
/// the state words of all of them lie in one array, as in
/// [`Pool`](crate::Pool), so a lookup is one check of the index against
/// the end of the index space, one generation compare, and a load of the
/// value's address from a small directory beside it (an entry per chunk
/// of the first block's size, at least 64 indices). The state words are 4
/// bytes per slot of every block ever made:
/// [`shrink_to_fit`](Hive::shrink_to_fit) frees an empty block's values
/// but keeps its state words. Blocks under 64 slots own 64 indices each
/// (or as many as the largest block, if that is less); otherwise the
/// whole index space is used (an [`Id32`](crate::Id32) hive holds 2²⁰
/// values).
///
/// # Emptied blocks
///
/// When a removal empties a block, the block stays, with its slots, for
/// later insertions, as `plf::hive` keeps its reserved blocks: a hive that
/// empties and fills again, or hovers around a block boundary, neither
/// frees nor allocates, and its values land in the same slots.
/// [`clear`](Hive::clear) keeps the blocks too. An emptied block refills
/// from its first slot on, in slot order, each slot one generation on
/// from its own last, not in the order its values were removed: following
/// its free list would have been a chain of cache misses over a large
/// block (an emptied hive of 1M 64-byte values took about 100 ns an
/// insertion to refill that way, and about 5 ns now, 1.2 to 1.4 times an
/// [`IdTable`](crate::IdTable)'s time in the comparison runner).
/// [`shrink_to_fit`](Hive::shrink_to_fit) frees every empty block. (A
/// block whose every slot retired is freed as soon as it empties: it can
/// never take a value again.)
///
/// A freed block's index range stays in the block table with the highest
/// generation it issued, and the next block made over that range starts
/// every slot above it. So a key to a removed value stays stale even after
/// its block was freed and the memory reused. (A range whose generations
/// ran out is never reused.)
///
/// # Memory layout
///
/// Each block keeps its slots' generations apart from its values: one
/// array of 4-byte state words (generation and occupancy) and one array of
/// payloads, each the value or, in a vacant slot, the 4-byte link of the
/// block's free list. A slot costs `4 + max(size_of::<T>(), 4)` bytes
/// (payloads rounded up to `align_of::<T>()`): 12 for a `u64`, where an
/// [`IdTable`](crate::IdTable) or [`Pool`](crate::Pool) slot takes 16, and
/// 68 for a 64-byte value (72). Add one vacancy bit per slot, and per
/// block a 64-byte header (one cache line) and 20 to 40 bytes of the
/// arrays a lookup reads (the block's end and its two storage pointers,
/// padded to a power of two blocks). Making a
/// block writes its state words (4 bytes a slot, so that a lookup checks
/// the index against the block's fixed end) and nothing else.
///
/// The split is for iteration: walking the values reads the payload array
/// (and the vacancy words of a block with holes) and nothing else, so a full hive of `u64` is
/// walked like a `Vec<u64>`. A lookup by key pays for it with a second
/// cache line (the state word, then the value), where a `Pool` reads one.
/// In one run of the comparison runner (`cargo run --release`), summing 1M
/// `u64` took 0.16 ns per value in a `Hive`, 0.18 in a `Vec` and 0.33 in an
/// `IdTable`, and a lookup by key at 1M took 6.9 ns against the
/// `IdTable`'s 5.9.
///
/// An [`IdTable`](crate::IdTable) skips vacant slots with the same
/// occupancy words and the same loop, so against it a `Hive` gains only
/// what the split saves in memory read: much for small values, little for
/// large ones, and nothing when everything fits in cache. Over four runs
/// of the runner restricted to the two (`--filter
/// iter_half,iter_sparse,Hive,IdTable<Id>`; medians of `Hive` ÷
/// `IdTable`, at 1k / 100k / 1M values), a pass over half the values took
/// 0.89 / 0.91 / 0.84 of the time for `u64` and 1.02 / 0.89 / 0.88 for
/// 64-byte values; a pass over 5% took 0.92 / 0.93 / 0.92 and
/// 0.97 / 0.75 / 1.01. Single runs spread by up to ±15% around these (in
/// a full run, where the heap has served a dozen other containers first,
/// the 64-byte cells come out higher), so the cells near 1 are a tie. In
/// cache, both walk the same bit loop and the difference is the start-up
/// of each block: in an instruction count of the 5% pass over 1000 64-byte
/// values, the two default blocks (512 + 1024 slots) cost 629 instructions
/// per pass, one 1024-slot block 600, and the `IdTable` 595.
///
/// # Stable addresses
///
/// A value never moves while it is in the hive. The pointer from
/// [`get_ptr`](Hive::get_ptr) stays valid **until that value is removed
/// (by `remove`, `retain`, `clear`, `drain` or `into_iter`) or the hive is
/// dropped**, across any number of other insertions and removals.
///
/// # Iteration
///
/// Iteration is in increasing key index: block by block, and in a block by
/// slot. That is neither insertion order nor stable across removals and
/// insertions (a freed slot is refilled first). Each block keeps one
/// occupancy bit per slot; iteration reads a 64-bit word and visits its set
/// bits with `trailing_zeros`, so a full hive is walked like an array and a
/// sparse one skips 64 vacant slots per word read.
///
/// `plf::hive` skips vacant slots with a *jump-counting skipfield* instead:
/// one counter per slot, where the first and last slot of each run of
/// vacant slots hold the run's length. Skipping a run costs O(1) whatever
/// its length, but every visited element costs a read of its counter (2
/// bytes per slot, in a second array beside the values), and the position
/// of the next element depends on that read, so the loop waits on one load
/// per element. The bit masks spend one bit per slot, cost one word read
/// per 64 slots, skip a run in O(run / 64), and a full word is a plain
/// counted loop.
///
/// The `std::hive` proposal leaves this comparison open, so
/// `benches/skipfield.rs` measures it: the same values in blocks of 8192,
/// walked through a skipfield and through masks, and a real `Hive` with the
/// same holes. Summing, in ns per slot (one run on a 2-core AMD EPYC,
/// with the default block sizes of `Hive` described under *Blocks*):
///
/// | `u64`, 100k slots | skipfield | masks | `Hive` |
/// | --- | --- | --- | --- |
/// | full | 2.25 | 0.15 | 0.14 |
/// | half, uniform | 1.16 | 0.60 | 0.54 |
/// | every other slot | 1.13 | 0.43 | 0.38 |
/// | 10% live, uniform | 0.25 | 0.13 | 0.12 |
/// | 10% live, holes in runs of ~300 | 0.24 | 0.11 | 0.11 |
///
/// The skipfield costs about 2.3 ns per live element whatever the
/// pattern: it is bound by its chain of dependent loads. In the same run
/// `Hive` was faster than the skipfield in all 20 cells (100k and 1M
/// slots, `u64` and 64-byte values, the five patterns), at 0.06× to 0.92×
/// its time. It came closest with 64-byte values at 1M slots (0.78× to
/// 0.92×), where memory bandwidth bounds all three, and at 10% uniform
/// `u64`s at 1M (0.89×). With 64-byte values at 1M slots the bare masks
/// tied the skipfield at 10% uniform (1.00×) and lost to it when full
/// (1.08×). A skipfield can win only where runs are long compared with 64
/// slots *and* live elements are few, which blocks of 8192 slots rarely
/// give.
///
/// `for_each` and `fold` (and what is built on them, such as `sum`) take a
/// block-at-a-time path that keeps the current word in a register and
/// lets the compiler vectorize a full word's loop; a `for` loop steps one
/// value per `next()`. In one full run of the comparison runner (1M `u64`,
/// summing the values), a full hive took 0.13 ns a value through `fold`,
/// as a `Vec` did, and 0.27 through a `for` loop (an
/// [`IdTable`](crate::IdTable) 0.13 and 0.26, `slotmap` 0.32 and 0.33); at
/// half occupancy 0.76 against 0.87 ns a live value, and with 5% of the
/// slots live 0.96 against 2.51. So for a reduction, call `sum` or `fold`.
///
/// With the `rayon` feature, `par_iter` and `par_iter_mut` cut the blocks into runs holding
/// about as many values each, one run per task, and walk each run with the
/// same block-at-a-time path; a block is never shared between threads. On
/// the 2-core machine here, summing a hive of 1M slots at half occupancy
/// took 263 µs in parallel against 470 µs sequentially (1.79×); at 100k
/// slots 39 against 46 µs, where starting the tasks costs about as much as
/// the second core saves.
///
/// # Serde
///
/// With the `serde` feature, a hive serializes as its block sizes and its
/// blocks in order, each as its *floor* (the generation its never-used
/// slots start above) and its used slots as `(generation, Option<value>)`;
/// a freed range is a floor with no slots. Every key stays valid and every
/// stale key stale after a round trip. Deserialization checks the block
/// sizes, every generation against its block's floor and the key type, and
/// the index space, and rebuilds the free lists in slot order. Each block is
/// allocated with only as many slots as the input used; the loaded hive may
/// have less spare room than the original. What the hive keeps for the
/// index space the input names (12 bytes per chunk of indices, freed
/// ranges included, and the state words to the end of a block's last
/// chunk) may come to at most 1 MiB plus 128 bytes per block and per slot
/// of the input: an input that asks for more is refused (a hive made with
/// the default block sizes always loads), so a few bytes cannot make the
/// hive allocate much. What is left of that allowance goes to the state
/// words of the freed ranges (4 bytes per index), in order, so that
/// lookups there are as quick as anywhere; from the first freed range it
/// does not cover on, a lookup reads a directory entry before the state
/// word (one dependent load more). The block sizes, though, come from the
/// input: check [`block_sizes`](Hive::block_sizes) before inserting into a
/// hive loaded from an untrusted source, since the next block it allocates
/// has the size the input named. A [fixed
/// capacity](Hive::with_fixed_capacity) is not part of the serialized
/// form: the loaded hive grows like any other.
///
/// # Compared with `IdTable`'s API
///
/// `Hive` has [`IdTable`](crate::IdTable)'s methods under the same names,
/// plus [`get_ptr`](Hive::get_ptr) and the block controls, with one
/// exception: there is no reuse policy ([`Reuse`](crate::Reuse)). Each
/// block reuses its own vacant slots last-freed first (an emptied block
/// from its first slot on, see "Emptied blocks"), and an insertion goes
/// to the block that most recently got room (a block that was full gets
/// room back with its first removal), so the order in which a hive hands
/// slots back follows its blocks, not a policy; what keeps a stale key from
/// matching is the generation, which every reuse bumps.
///
/// # Examples
///
/// ```
/// use handlekit::Hive;
///
/// let mut hive = Hive::new();
/// let a = hive.insert(1.5_f32);
/// let b = hive.insert(2.5);
/// let ptr = hive.get_ptr(a).unwrap();
/// hive.extend((0..1000).map(|n| n as f32)); // more blocks; `a` does not move
/// hive.remove(b);
/// assert_eq!(hive.get(b), None); // stale
/// // SAFETY: `a` is still in the hive, and no reference to it is live.
/// assert_eq!(unsafe { *ptr.as_ptr() }, 1.5);
/// assert_eq!(hive.values().sum::<f32>(), 1.5 + 499_500.0);
/// ```
pub type Hive<T, K = Id> = StableTable<T, K, HiveBlocks>;

impl<T, K: Key> SlotTable<T, K, HiveBlocks> {
    /// Creates a hive with room for exactly `capacity` values, allocated now
    /// in one block. It never allocates again: when it is full,
    /// [`try_insert`](Self::try_insert) returns a [`CapacityError`](crate::CapacityError), and
    /// removals never free the block ([`shrink_to_fit`](Self::shrink_to_fit)
    /// keeps it too).
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key type can index, or above 2³¹.
    ///
    /// ```
    /// let mut hive: handlekit::Hive<u32> = handlekit::Hive::with_fixed_capacity(2);
    /// let a = hive.insert(1);
    /// hive.insert(2);
    /// assert!(hive.try_insert(3).unwrap_err().is_fixed_capacity());
    /// hive.remove(a);
    /// assert!(hive.try_insert(3).is_ok()); // the freed slot is reused
    /// assert_eq!(hive.block_count(), 1);
    /// ```
    #[must_use]
    pub fn with_fixed_capacity(capacity: usize) -> Self {
        SlotTable::from_raw(RawHive::with_fixed_capacity(KeyLimits::of::<K>(), capacity))
    }

    /// Creates an empty hive whose blocks grow from `min` slots to `max`
    /// (both rounded up to powers of two). It allocates nothing until the
    /// first insertion.
    ///
    /// # Panics
    ///
    /// If `min` is 0, `min > max`, or `max` is above 2³¹.
    ///
    /// ```
    /// let mut hive: handlekit::Hive<u8> = handlekit::Hive::with_block_sizes(2, 5);
    /// assert_eq!(hive.block_sizes(), (2, 8));
    /// hive.extend(0..2 + 4 + 8 + 8);
    /// assert_eq!(hive.block_count(), 4);
    /// ```
    #[must_use]
    pub fn with_block_sizes(min: usize, max: usize) -> Self {
        assert!(
            min > 0 && min <= max && max <= 1 << 31,
            "block sizes must be 1 <= min <= max <= 2^31, not {min} and {max}"
        );
        SlotTable::from_raw(RawHive::new(
            KeyLimits::of::<K>(),
            min.next_power_of_two().trailing_zeros(),
            max.next_power_of_two().trailing_zeros(),
        ))
    }

    /// The smallest and largest block sizes, in slots.
    ///
    /// ```
    /// let big: handlekit::Hive<[u8; 1000]> = handlekit::Hive::new();
    /// // 64 KiB first blocks, 1 MiB blocks at most
    /// assert_eq!(big.block_sizes(), (64, 1024));
    /// ```
    #[inline]
    #[must_use]
    pub fn block_sizes(&self) -> (usize, usize) {
        self.raw.block_sizes()
    }

    /// Frees the memory of every empty block (their index ranges keep
    /// their generations, so old keys stay stale; the 4-byte state words
    /// stay too, in the one array of all blocks). A hive with a
    /// [fixed capacity](Self::with_fixed_capacity) keeps its block, unless
    /// every slot of it retired (it could never take a value again).
    ///
    /// ```
    /// let mut hive: handlekit::Hive<u8> = handlekit::Hive::new();
    /// let key = hive.insert(1);
    /// hive.remove(key);
    /// assert_eq!(hive.block_count(), 1);
    /// hive.shrink_to_fit();
    /// assert_eq!(hive.block_count(), 0);
    /// assert_eq!(hive.get(key), None);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.raw.shrink_to_fit();
    }
}

/// Iterator over `(key, &value)`; see [`Hive::iter`]
/// ([`iter::Iter`](crate::iter::Iter) over the Hive's blocks). It walks
/// the blocks in order, skipping vacant slots 64 at a time.
///
/// ```
/// let mut hive = handlekit::Hive::with_block_sizes(64, 64);
/// let keys: Vec<_> = (0..200).map(|i| hive.insert(i)).collect();
/// hive.remove(keys[7]);
/// let walk: handlekit::hive::Iter<'_, i32> = hive.iter();
/// assert_eq!((walk.len(), hive.block_count()), (199, 4));
/// assert!(hive.iter().all(|(key, _)| key != keys[7]));
/// ```
pub type Iter<'a, T, K = Id> = crate::iter::Iter<'a, T, K, HiveBlocks>;

/// Iterator over `(key, &mut value)`; see [`Hive::iter_mut`]
/// ([`iter::IterMut`](crate::iter::IterMut) over the Hive's blocks).
/// Changing a value through it leaves the value where it was.
///
/// ```
/// let mut hive: handlekit::Hive<[u8; 4]> = handlekit::Hive::new();
/// let key = hive.insert([0; 4]);
/// let before = hive.get_ptr(key);
/// let walk: handlekit::hive::IterMut<'_, [u8; 4]> = hive.iter_mut();
/// for (_, bytes) in walk {
///     bytes[0] = 9;
/// }
/// assert_eq!((hive[key][0], hive.get_ptr(key)), (9, before));
/// ```
pub type IterMut<'a, T, K = Id> = crate::iter::IterMut<'a, T, K, HiveBlocks>;

/// Iterator over the keys of live values; see [`Hive::keys`]
/// ([`iter::Keys`](crate::iter::Keys) over the Hive's blocks).
///
/// ```
/// use handlekit::hive::Keys;
/// let mut hive = handlekit::Hive::new();
/// let (a, b, c) = (hive.insert('a'), hive.insert('b'), hive.insert('c'));
/// hive.remove(b);
/// let keys: Keys<'_, char> = hive.keys();
/// assert_eq!(keys.rev().collect::<Vec<_>>(), [c, a]);
/// ```
pub type Keys<'a, T, K = Id> = crate::iter::Keys<'a, T, K, HiveBlocks>;

/// Iterator over the live values; see [`Hive::values`]
/// ([`iter::Values`](crate::iter::Values) over the Hive's blocks).
///
/// ```
/// let hive: handlekit::Hive<u16> = (1..=10).collect();
/// let mut values: handlekit::hive::Values<'_, u16> = hive.values();
/// assert_eq!(values.size_hint(), (10, Some(10)));
/// assert_eq!(values.by_ref().step_by(3).sum::<u16>(), 1 + 4 + 7 + 10);
/// assert_eq!(values.next(), None);
/// ```
pub type Values<'a, T> = crate::iter::Values<'a, T, HiveBlocks>;

/// Iterator over the live values, mutably; see [`Hive::values_mut`]
/// ([`iter::ValuesMut`](crate::iter::ValuesMut) over the Hive's blocks).
///
/// ```
/// let mut particles: handlekit::Hive<(f32, f32)> = handlekit::Hive::new();
/// particles.insert((0.0, 1.0));
/// particles.insert((2.0, -1.0));
/// let moving: handlekit::hive::ValuesMut<'_, (f32, f32)> = particles.values_mut();
/// moving.for_each(|(position, velocity)| *position += *velocity);
/// assert!(particles.values().map(|p| p.0).eq([1.0, 1.0]));
/// ```
pub type ValuesMut<'a, T> = crate::iter::ValuesMut<'a, T, HiveBlocks>;

/// Removing iterator over `(key, value)`; see [`Hive::drain`]
/// ([`iter::Drain`](crate::iter::Drain) over the Hive's slots). The
/// blocks stay allocated for the values inserted next.
///
/// ```
/// let mut hive: handlekit::Hive<String> = ["a", "b"].map(String::from).into_iter().collect();
/// let blocks = hive.block_count();
/// let drain: handlekit::hive::Drain<'_, String> = hive.drain();
/// assert_eq!(drain.map(|(_, s)| s).collect::<String>(), "ab");
/// assert!(hive.is_empty());
/// assert_eq!(hive.block_count(), blocks);
/// ```
pub type Drain<'a, T, K = Id> = crate::iter::Drain<'a, T, K, RawHive<T>>;

/// Owning iterator over `(key, value)`; see [`Hive::into_iter`]
/// ([`iter::IntoIter`](crate::iter::IntoIter) over the Hive's slots).
///
/// ```
/// let mut hive = handlekit::Hive::new();
/// let kept = hive.insert(Box::new(1));
/// let gone = hive.insert(Box::new(2));
/// hive.remove(gone);
/// let owned: handlekit::hive::IntoIter<Box<i32>> = hive.into_iter();
/// assert_eq!(owned.collect::<Vec<_>>(), [(kept, Box::new(1))]);
/// ```
pub type IntoIter<T, K = Id> = crate::iter::IntoIter<T, K, RawHive<T>>;

/// Parallel iterator over `(key, &value)`; see [`Hive::par_iter`]
/// ([`iter::ParIter`](crate::iter::ParIter) over the Hive's blocks). It
/// splits at block and word boundaries.
///
/// ```
/// use rayon::prelude::*;
/// let hive: handlekit::Hive<u32> = (0..5000).collect();
/// let odd: handlekit::hive::ParIter<'_, u32> = hive.par_iter();
/// assert_eq!(odd.filter(|(_, v)| **v % 2 == 1).count(), 2500);
/// ```
#[cfg(feature = "rayon")]
pub type ParIter<'a, T, K = Id> = crate::iter::ParIter<'a, T, K, HiveBlocks>;

/// Parallel iterator over `(key, &mut value)`; see [`Hive::par_iter_mut`]
/// ([`iter::ParIterMut`](crate::iter::ParIterMut) over the Hive's blocks).
///
/// ```
/// use rayon::prelude::*;
/// let mut hive: handlekit::Hive<Vec<u8>> = (0..100).map(|n| vec![n]).collect();
/// let grow: handlekit::hive::ParIterMut<'_, Vec<u8>> = hive.par_iter_mut();
/// grow.for_each(|(_, bytes)| bytes.push(0));
/// assert!(hive.values().all(|bytes| bytes.len() == 2));
/// ```
#[cfg(feature = "rayon")]
pub type ParIterMut<'a, T, K = Id> = crate::iter::ParIterMut<'a, T, K, HiveBlocks>;

#[cfg(test)]
mod split_tests {
    use super::*;
    use crate::raw::table::RawTable;
    use alloc::vec::Vec;

    /// Parallel iteration's parts, split as far as they go, cover every
    /// value once and in order, for shared and exclusive access, over
    /// blocks of several sizes, emptied blocks and freed ranges.
    #[test]
    fn split_parts_cover_every_value_once() {
        let sizes: &[(usize, usize)] = if cfg!(miri) {
            &[(1, 1), (4, 64)]
        } else {
            &[(1, 1), (2, 8), (4, 64), (64, 64)]
        };
        // Under Miri, 150 values: making 300 blocks of one slot took 13 s
        // of its clock.
        let n = if cfg!(miri) { 150 } else { 300 };
        for &(min, max) in sizes {
            let mut hive: Hive<u64> = Hive::with_block_sizes(min, max);
            let keys: Vec<Id> = (0..n).map(|i| hive.insert(i)).collect();
            for (i, &key) in keys.iter().enumerate() {
                if i % 3 == 0 || (40..120).contains(&i) {
                    hive.remove(key);
                }
            }
            let (expected, parts) = crate::raw::check_split_round!(hive.raw);
            assert_eq!(expected.len(), hive.len());
            assert!(parts > 1, "{min}..{max}: {parts} part");
            let bumped: Vec<u64> = hive.values().copied().collect();
            assert_eq!(bumped, expected.iter().map(|e| e.2 + 1).collect::<Vec<_>>());
        }
        let empty: Hive<u64> = Hive::new();
        assert_eq!(crate::raw::check_split_shared(empty.raw.iter(), &[]), 1);
    }
}

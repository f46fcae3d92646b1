//! [`LookupTable`]: a [`SlotTable`] in the interleaved
//! layout, laid out for lookups by key, and its iterators.
//!
//! The same slot core as `IdTable` (the same free list, reuse policy,
//! retirement and stale-key checks) with the other slot layout: each
//! slot's state word sits beside its value, as `PackedTable`'s sparse side
//! keeps them, so a lookup reads one slot (one cache line) instead of a
//! state word and a value in two arrays. A pass reads every slot, state
//! word and value, one at a time. Choose it for a table that is looked up
//! far more often than iterated, with small values: an index from a key to
//! where something else lives (an entity's row, a position in another
//! array).

use crate::id_table::SlotTable;
use crate::layout::Interleaved;
use crate::Id;

/// An array with holes behind generational keys, like
/// [`IdTable`](crate::IdTable), with each slot's state word stored beside
/// its value: a lookup by key reads one slot, so one cache line, where
/// `IdTable` reads a state word and a value from two arrays (two cache
/// lines once the table outgrows the cache).
///
/// It is the same type as `IdTable` but for the layout parameter
/// (`SlotTable<T, K, Interleaved>`), so it has every method of `IdTable`,
/// written once: keys, generations, the free list, [`Reuse`](crate::Reuse),
/// retirement, detached slots and every guarantee about stale keys are
/// the same; only where a slot's two parts are stored differs. Iteration reads every slot (`IdTable`'s reads 4 bytes per
/// slot and only the live values), so prefer `IdTable` for tables that are
/// iterated often.
///
/// | operation | cost |
/// | --- | --- |
/// | `insert`, `remove`, `get`, `contains_key` | O(1), one slot read |
/// | iteration | O(slots), reading every slot |
/// | `clear` | O(slots) |
///
/// Memory: one slot per index ever used, of `4 + P` bytes rounded up to
/// the alignment of `max(align_of::<T>(), 4)`, where `P` is
/// `max(size_of::<T>(), 4)` (8 bytes for a `u32`). With the `serde`
/// feature it serializes exactly as an `IdTable` of the same values does,
/// so either reads what the other wrote.
///
/// ```
/// use handlekit::LookupTable;
/// let mut rows: LookupTable<u32> = LookupTable::new();
/// let a = rows.insert(10);
/// let b = rows.insert(20);
/// assert_eq!(rows.get(a), Some(&10));
/// rows.remove(a);
/// assert_eq!(rows.get(a), None); // stale
/// *rows.get_mut(b).unwrap() += 1;
/// assert_eq!(rows.iter().collect::<Vec<_>>(), [(b, &21)]);
/// ```
pub type LookupTable<T, K = Id> = SlotTable<T, K, Interleaved>;

/// Iterator over `(key, &value)`; see [`LookupTable::iter`]. The iterator
/// type of every slot container, [`iter::Iter`](crate::iter::Iter), over
/// the [`Interleaved`] layout.
///
/// ```
/// let table: handlekit::LookupTable<i32> = [1, 2].into_iter().collect();
/// let iter: handlekit::lookup_table::Iter<'_, i32> = table.iter();
/// assert_eq!(iter.len(), 2);
/// ```
pub type Iter<'a, T, K = Id> = crate::iter::Iter<'a, T, K, Interleaved>;

/// Iterator over `(key, &mut value)`; see [`LookupTable::iter_mut`]
/// ([`iter::IterMut`](crate::iter::IterMut) over the [`Interleaved`]
/// layout).
///
/// ```
/// let mut table: handlekit::LookupTable<i32> = [1, 2].into_iter().collect();
/// let iter: handlekit::lookup_table::IterMut<'_, i32> = table.iter_mut();
/// iter.for_each(|(_, v)| *v *= 2);
/// assert_eq!(table.values().sum::<i32>(), 6);
/// ```
pub type IterMut<'a, T, K = Id> = crate::iter::IterMut<'a, T, K, Interleaved>;

/// Iterator over the keys of live values; see [`LookupTable::keys`]
/// ([`iter::Keys`](crate::iter::Keys) over the [`Interleaved`] layout).
///
/// ```
/// let table: handlekit::LookupTable<i32> = [1, 2].into_iter().collect();
/// let keys: handlekit::lookup_table::Keys<'_, i32> = table.keys();
/// assert_eq!(keys.count(), 2);
/// ```
pub type Keys<'a, T, K = Id> = crate::iter::Keys<'a, T, K, Interleaved>;

/// Iterator over the live values; see [`LookupTable::values`]
/// ([`iter::Values`](crate::iter::Values) over the [`Interleaved`] layout).
///
/// ```
/// let table: handlekit::LookupTable<i32> = [1, 2].into_iter().collect();
/// let values: handlekit::lookup_table::Values<'_, i32> = table.values();
/// assert_eq!(values.max(), Some(&2));
/// ```
pub type Values<'a, T> = crate::iter::Values<'a, T, Interleaved>;

/// Iterator over the live values, mutably; see [`LookupTable::values_mut`]
/// ([`iter::ValuesMut`](crate::iter::ValuesMut) over the [`Interleaved`]
/// layout).
///
/// ```
/// let mut table: handlekit::LookupTable<i32> = [1, 2].into_iter().collect();
/// let values: handlekit::lookup_table::ValuesMut<'_, i32> = table.values_mut();
/// values.for_each(|v| *v += 1);
/// assert_eq!(table.values().sum::<i32>(), 5);
/// ```
pub type ValuesMut<'a, T> = crate::iter::ValuesMut<'a, T, Interleaved>;

/// Removing iterator over `(key, value)`; see [`SlotTable::drain`]
/// ([`iter::Drain`](crate::iter::Drain) over the table's slots).
///
/// ```
/// let mut table: handlekit::LookupTable<i32> = [1, 2].into_iter().collect();
/// let drain: handlekit::lookup_table::Drain<'_, i32> = table.drain();
/// assert_eq!(drain.map(|(_, v)| v).sum::<i32>(), 3);
/// ```
pub type Drain<'a, T, K = Id> = crate::id_table::Drain<'a, T, K, Interleaved>;

/// Owning iterator over `(key, value)`
/// ([`iter::IntoIter`](crate::iter::IntoIter) over the table's slots).
///
/// ```
/// let table: handlekit::LookupTable<i32> = [1, 2].into_iter().collect();
/// let all: handlekit::lookup_table::IntoIter<i32> = table.into_iter();
/// assert_eq!(all.len(), 2);
/// ```
pub type IntoIter<T, K = Id> = crate::id_table::IntoIter<T, K, Interleaved>;

#[cfg(feature = "serde")]
pub use serde_impl::{for_each_run, serialize_runs, Runs, SlotRuns, SlotRunsRef};

/// Serde support: a `LookupTable` serializes exactly as an
/// [`IdTable`](crate::IdTable) of the same slots does (see its module), and
/// deserializes with the same validation.
///
/// For containers that keep the values elsewhere (an entity table whose
/// values are rows), there is also a form without the values:
/// [`LookupTable::slot_runs`] and [`LookupTable::from_slot_runs`].
#[cfg(feature = "serde")]
mod serde_impl {
    use alloc::vec::Vec;
    use core::fmt;
    use core::marker::PhantomData;

    use serde::de::{self, SeqAccess, Visitor};
    use serde::ser::{SerializeSeq, SerializeStruct};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::id_table::SlotTable;
    use crate::layout::{Interleaved, Layout};
    use crate::raw::{KeyLimits, SlotArena};
    use crate::serde_util::{
        restore_detached, restore_free_order, DetachedRef, FreeOrder, FreeRef,
    };
    use crate::{Key, Reuse};

    /// A table's slots without their values, from
    /// [`SlotTable::slot_runs`]: it serializes as a struct `SlotRuns` with
    /// the reuse policy (`reuse`), the generation of every slot in index
    /// order as `(generation, count)` runs of equal generations
    /// (`generations`), and the detached slots and free-list order as an
    /// `IdTable` writes them (`detached`, `free`). Which slots are live is
    /// not in it: the container saves that with its values.
    pub struct SlotRunsRef<'a, T, K: Key, L: Layout = Interleaved> {
        arena: &'a SlotArena<T, K, L>,
        _key: PhantomData<fn(K) -> K>,
    }

    impl<T, K: Key, L: Layout> fmt::Debug for SlotRunsRef<'_, T, K, L> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("SlotRunsRef")
                .field("slots", &self.arena.slot_refs().len())
                .finish_non_exhaustive()
        }
    }

    impl<T, K: Key, L: Layout> Serialize for SlotRunsRef<'_, T, K, L> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut out = serializer.serialize_struct("SlotRuns", 4)?;
            out.serialize_field("reuse", &self.arena.reuse())?;
            out.serialize_field("generations", &GenerationRunsRef(self.arena))?;
            out.serialize_field("detached", &DetachedRef(self.arena))?;
            out.serialize_field("free", &FreeRef(self.arena))?;
            out.end()
        }
    }

    /// The generation of every slot, as `(generation, count)` runs.
    struct GenerationRunsRef<'a, T, K, L: Layout>(&'a SlotArena<T, K, L>);

    impl<T, K, L: Layout> Serialize for GenerationRunsRef<'_, T, K, L> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serialize_runs(serializer, |f| {
                for_each_run(self.0.slot_refs().map(|slot| slot.generation()), f);
            })
        }
    }

    /// Calls `f` with the `(value, count)` runs of equal neighbours in
    /// `values`, in order, until it returns `false`: the runs
    /// [`serialize_runs`] writes, for a table's generations say. A run
    /// holds at most `u32::MAX` values; a longer one goes on in the next.
    ///
    /// ```
    /// let mut runs = Vec::new();
    /// handlekit::lookup_table::for_each_run([4, 4, 4, 1, 4], |value, count| {
    ///     runs.push((value, count));
    ///     true
    /// });
    /// assert_eq!(runs, [(4, 3), (1, 1), (4, 1)]);
    /// ```
    pub fn for_each_run(
        values: impl IntoIterator<Item = u32>,
        mut f: impl FnMut(u32, u32) -> bool,
    ) {
        let mut run: Option<(u32, u32)> = None;
        for value in values {
            match &mut run {
                Some((v, count)) if *v == value && *count < u32::MAX => *count += 1,
                _ => {
                    if let Some((v, count)) = run.replace((value, 1)) {
                        if !f(v, count) {
                            return;
                        }
                    }
                }
            }
        }
        if let Some((v, count)) = run {
            f(v, count);
        }
    }

    /// Writes the `(u32, u32)` runs that `for_each` produces as a sequence
    /// of pairs with its length first, the form [`SlotRunsRef`] writes its
    /// generation runs in; for a container that saves runs of its own
    /// beside a table's [`SlotRunsRef`] (an entity table's rows, say).
    ///
    /// `for_each` calls the function it is given with each run, in order,
    /// until that returns `false`, and must produce the same runs each
    /// time it is called: some formats need the length first, so a first
    /// call counts the runs and keeps the first eight, and only a longer
    /// sequence is produced a second time.
    ///
    /// ```
    /// let runs = [(1u32, 3u32), (7, 1)];
    /// let json = handlekit::lookup_table::serialize_runs(
    ///     &mut serde_json::Serializer::new(Vec::new()),
    ///     |f| {
    ///         for &(first, count) in &runs {
    ///             if !f(first, count) {
    ///                 break;
    ///             }
    ///         }
    ///     },
    /// );
    /// assert!(json.is_ok());
    /// ```
    pub fn serialize_runs<S: Serializer>(
        serializer: S,
        mut for_each: impl FnMut(&mut dyn FnMut(u32, u32) -> bool),
    ) -> Result<S::Ok, S::Error> {
        let mut first = [(0u32, 0u32); 8];
        let mut runs = 0;
        for_each(&mut |a, b| {
            if let Some(slot) = first.get_mut(runs) {
                *slot = (a, b);
            }
            runs += 1;
            true
        });
        let mut seq = serializer.serialize_seq(Some(runs))?;
        if let Some(kept) = first.get(..runs) {
            for run in kept {
                seq.serialize_element(run)?;
            }
            return seq.end();
        }
        let mut result = Ok(());
        for_each(&mut |a, b| {
            result = seq.serialize_element(&(a, b));
            result.is_ok()
        });
        result?;
        seq.end()
    }

    /// What [`SlotRunsRef`] wrote, read back and checked in itself (every
    /// run names at least one slot); [`SlotTable::from_slot_runs`] builds
    /// a table from it and the live slots. Its memory is bounded by the
    /// size of the input: the runs are stored as they are, not expanded.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields, rename = "SlotRuns")]
    pub struct SlotRuns {
        reuse: Reuse,
        generations: Runs,
        #[serde(default)]
        detached: Vec<(u32, u32)>,
        #[serde(default)]
        free: Option<FreeOrder>,
    }

    impl fmt::Debug for SlotRuns {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("SlotRuns")
                .field("reuse", &self.reuse)
                .field("slots", &self.generations.total)
                .field("generations", &self.generations.runs)
                .field("detached", &self.detached)
                .finish_non_exhaustive()
        }
    }

    impl SlotRuns {
        /// The number of slots the runs name (the table's slot count).
        #[must_use]
        pub fn slot_count(&self) -> u64 {
            self.generations.total
        }

        /// The runs of generations, `(generation, count)` in index order;
        /// every count is at least 1.
        #[must_use]
        pub fn generations(&self) -> &[(u32, u32)] {
            &self.generations.runs
        }
    }

    /// `(value, count)` runs read back from what [`serialize_runs`] wrote,
    /// checked in themselves (every count at least 1) and stored as read,
    /// not expanded: their memory is bounded by the size of the input,
    /// whatever [`total`](Self::total) they claim.
    ///
    /// ```
    /// use handlekit::lookup_table::Runs;
    /// let runs: Runs = serde_json::from_str("[[7,2],[1,3]]").unwrap();
    /// assert_eq!((runs.as_slice(), runs.total()), (&[(7, 2), (1, 3)][..], 5));
    /// assert!(serde_json::from_str::<Runs>("[[7,0]]").is_err()); // an empty run
    /// ```
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Runs {
        runs: Vec<(u32, u32)>,
        total: u64,
    }

    impl Runs {
        /// The runs, `(value, count)` in order.
        #[must_use]
        pub fn as_slice(&self) -> &[(u32, u32)] {
            &self.runs
        }

        /// The sum of the counts: how many values the runs stand for.
        #[must_use]
        pub fn total(&self) -> u64 {
            self.total
        }
    }

    impl<'de> Deserialize<'de> for Runs {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_seq(RunsVisitor)
        }
    }

    struct RunsVisitor;

    impl<'de> Visitor<'de> for RunsVisitor {
        type Value = Runs;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a sequence of (value, count) runs")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Runs, A::Error> {
            // Grows as runs arrive: nothing is reserved from a length hint.
            let mut runs = Vec::new();
            let mut total = 0u64;
            while let Some((value, count)) = seq.next_element::<(u32, u32)>()? {
                if count == 0 {
                    return Err(de::Error::custom(format_args!(
                        "an empty run (of {value}s)"
                    )));
                }
                // At most 2^64 / 2^32 runs before this could overflow: no
                // input is that long, but stay exact.
                total = total
                    .checked_add(u64::from(count))
                    .ok_or_else(|| de::Error::custom("too many values in the runs"))?;
                runs.push((value, count));
            }
            Ok(Runs { runs, total })
        }
    }

    impl<T, K: Key, L: Layout> SlotTable<T, K, L> {
        /// The table without its values, for a container that saves the
        /// values, and which slots are live, in its own layout: see
        /// [`SlotRunsRef`]. Equal generations of neighbouring slots take one
        /// run, so a table whose slots were never reused writes a few
        /// numbers whatever its size.
        ///
        /// ```
        /// use handlekit::LookupTable;
        /// let mut table: LookupTable<u32> = LookupTable::new();
        /// let keys: Vec<_> = (0..4).map(|i| table.insert(i)).collect();
        /// table.remove(keys[1]);
        /// table.insert(4); // slot 1 again, at generation 2
        /// table.remove(keys[3]); // a vacant slot keeps its last generation
        /// let json = serde_json::to_string(&table.slot_runs()).unwrap();
        /// assert_eq!(
        ///     json,
        ///     r#"{"reuse":"Lifo","generations":[[1,1],[2,1],[1,2]],"detached":[],"free":{"list":[3],"refill":null}}"#
        /// );
        /// ```
        #[must_use]
        pub fn slot_runs(&self) -> SlotRunsRef<'_, T, K, L> {
            SlotRunsRef {
                arena: &self.raw,
                _key: PhantomData,
            }
        }

        /// Builds the table `runs` describes, with the live slots and their
        /// values from `live`: `(index, value)` pairs in ascending index
        /// order, each below [`SlotRuns::slot_count`]. Every other slot is
        /// vacant. Checks what [`Deserialize`] checks for a whole table:
        /// the slot count and generations against `K` (a live slot's
        /// generation is not 0), the detached slots and the free-list
        /// order; and that `live` is ascending and within the slots.
        ///
        /// It allocates room for every slot the runs name at once: bound
        /// [`SlotRuns::slot_count`] before calling it with untrusted data
        /// (the runs take a few bytes of input for any number of slots).
        ///
        /// # Errors
        ///
        /// The format's error (`E::custom`) naming what is wrong.
        ///
        /// ```
        /// use handlekit::lookup_table::SlotRuns;
        /// use handlekit::LookupTable;
        /// let runs: SlotRuns = serde_json::from_str(
        ///     r#"{"reuse":"Lifo","generations":[[1,3],[2,1]],"free":{"list":[3],"refill":null}}"#,
        /// )
        /// .unwrap();
        /// let table: LookupTable<u32> =
        ///     LookupTable::from_slot_runs::<serde_json::Error>(&runs, (0..3).map(|i| (i, 10 * i as u32)))
        ///         .unwrap();
        /// assert_eq!(table.values().copied().collect::<Vec<_>>(), [0, 10, 20]);
        /// // Live slots out of order are refused.
        /// assert!(LookupTable::<u32>::from_slot_runs::<serde_json::Error>(&runs, [(1, 0), (0, 0)]).is_err());
        /// ```
        pub fn from_slot_runs<E: de::Error>(
            runs: &SlotRuns,
            live: impl IntoIterator<Item = (usize, T)>,
        ) -> Result<Self, E> {
            let limits = KeyLimits::of::<K>();
            let slots = runs.slot_count();
            if slots > limits.max_slots as u64 {
                return Err(E::custom(format_args!(
                    "{slots} slots: more than the key type can index ({})",
                    limits.max_slots
                )));
            }
            // `slots` fits the key type's index, so a usize.
            let mut arena = SlotArena::with_capacity(limits, slots as usize);
            let mut live = live.into_iter();
            let mut next = live.next();
            let mut index = 0usize;
            for &(generation, count) in runs.generations() {
                let end = index + count as usize;
                while index < end {
                    let pushed = match next.take() {
                        Some((at, value)) if at == index => {
                            next = live.next();
                            arena.push_occupied(generation, value)
                        }
                        Some((at, _)) if at < index => {
                            return Err(E::custom(format_args!(
                                "live slot {at} is out of ascending order or given twice"
                            )))
                        }
                        later => {
                            next = later;
                            arena.push_vacant(generation)
                        }
                    };
                    pushed.map_err(E::custom)?;
                    index += 1;
                }
            }
            if let Some((at, _)) = next {
                return Err(E::custom(format_args!(
                    "live slot {at} is past the {slots} slots"
                )));
            }
            arena.finish_build();
            restore_detached::<T, _, _, E>(&mut arena, &runs.detached)?;
            arena.set_reuse(runs.reuse);
            restore_free_order::<T, _, _, E>(&mut arena, runs.free.as_ref())?;
            Ok(SlotTable::from_raw(arena))
        }
    }
}

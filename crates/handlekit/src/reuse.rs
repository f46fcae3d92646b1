//! The slot reuse policy of a table's free list.

/// Which vacant slot a table fills next.
///
/// Reuse never makes a stale key valid again: a slot's generation advances on
/// every reuse, and a slot whose generation cannot advance any more is
/// retired for good. The policy decides how *fast* slots age, and so how soon
/// narrow keys such as [`Id32`](crate::Id32) retire slots.
///
/// # Examples
///
/// ```
/// use handlekit::{IdTable, Reuse};
///
/// let mut table: IdTable<u32> = IdTable::with_reuse(Reuse::Fifo { min_free: 2 });
/// let a = table.insert(1);
/// table.remove(a);
/// // Only one slot is free, fewer than `min_free`, so a new slot is used.
/// let b = table.insert(2);
/// assert_ne!(handlekit::Key::index(a), handlekit::Key::index(b));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Reuse {
    /// Reuse the most recently freed slot first (a stack). Keeps the working
    /// set small and hot in cache; a slot that is freed and refilled in a
    /// loop ages one generation per round.
    ///
    /// One exception: an insertion into a table with no values takes the
    /// free slots in slot order (an O(1) reset, no pass over the slots), so
    /// refilling an emptied table walks memory forwards rather than in the
    /// random order of the removals.
    #[default]
    Lifo,
    /// Reuse the least recently freed slot first (a queue), and keep at least
    /// `min_free` vacant slots in reserve: while `min_free` or fewer slots
    /// are free, a new slot is appended instead.
    ///
    /// This is the scheme of the BitSquid ID table. With `F = min_free` free
    /// slots always waiting and `g` usable generation bits, a slot is reused
    /// only after `F` other slots were, so no slot ages faster than one
    /// generation per `F + 1` insertions: no slot retires before insertion
    /// number `1 + (2^g − 2)(F + 1)`, about `F · 2^g`. (Keys are never
    /// reissued either way; FIFO only delays retirement.)
    ///
    /// When the table cannot grow (fixed capacity, or the key's index space
    /// is full), it dips into the reserve rather than failing.
    Fifo {
        /// Vacant slots to keep in reserve before any is reused.
        min_free: u32,
    },
}

//! The walk of a slot store: the occupied slots found from the state words
//! themselves, 64 at a time ([`StoreWalk`]).
//!
//! The slot store keeps every slot's state word in an array of its own
//! (see [`SlotStore`](super::SlotStore)), and the top bit of a state word
//! says whether the slot is vacant. So the array *is* the occupancy: a
//! write changes one state word and no separate bitset, and a pass turns
//! 64 state words (256 bytes) into a 64-bit mask at a time (see
//! [`state_mask`](super::state_mask)) and then jumps from live slot to
//! live slot with `trailing_zeros`, as over a bitset. A pass reads 4 bytes
//! per slot instead of a bit, but never a vacant slot's payload.
//!
//! An interleaved store (each state word beside its payload, see
//! [`InterleavedLayout`](super::buf::InterleavedLayout)) has no array of
//! state words to turn into masks at once; its masks are made one state
//! word at a time, and the walk is the same ([`StoreWalk`]).

use super::bitset::{pop_lowest, WORD_BITS};
use super::buf::{BufLayout, BufPtrs, StateView};
use super::cursor::{fold_run, Bits, Piece, Run, RunPos, SlotFold, Walk};

/// Below this many slots, a part of a walk is too small to be worth a
/// rayon task, so a walk of fewer than twice as many is not cut. Under
/// Miri, where every slot a test makes costs, 128: the same code cuts
/// tables of a few hundred slots.
#[cfg(any(test, feature = "rayon"))]
pub(crate) const SPLIT_MIN_SLOTS: usize = if cfg!(miri) { 128 } else { 1024 };

/// A table size just past the one below which a walk is not cut: what the
/// split tests use where every slot costs (under Miri).
#[cfg(test)]
pub(crate) const JUST_PAST_SPLIT: usize = 2 * SPLIT_MIN_SLOTS + 152;

/// The walk of a slot store ([`SlotStore`](super::SlotStore)) for a
/// [`Cursor`](super::cursor::Cursor): the occupied slots of `next..end`, as
/// masks of 64 slots read from their state words (in the split layout, 64
/// words turned into a mask at once), or as one run when the count says
/// that every slot left is occupied. Its counts are exact (a split counts
/// the occupied slots of each part).
pub struct StoreWalk<'a, T, L: BufLayout> {
    /// The state words; indices are positions in the view.
    states: StateView<'a, T, L>,
    /// The first slot not handed out. Invariant: `next <= end <=
    /// states.len()`.
    next: usize,
    /// Past the last slot not handed out (a split walk, or one whose back
    /// has handed out pieces, ends before the view does).
    end: usize,
}

impl<T, L: BufLayout> Clone for StoreWalk<'_, T, L> {
    fn clone(&self) -> Self {
        StoreWalk { ..*self }
    }
}

impl<'a, T, L: BufLayout> StoreWalk<'a, T, L> {
    /// Walks all of `states`.
    #[inline]
    pub(crate) fn new(states: StateView<'a, T, L>) -> Self {
        StoreWalk {
            states,
            next: 0,
            end: states.len(),
        }
    }

    /// The occupied slots of `start..start + len` (`len <= 64`) as a mask
    /// from `start`.
    #[inline(always)]
    fn load(&self, start: usize, len: usize) -> Piece<BufPtrs<T, L>> {
        Piece::Bits(Bits {
            ptrs: self.states.ptrs(),
            base: start,
            bits: L::occupied_bits(self.states, start, len),
        })
    }

    /// The rest as one run, if `left`, the exact count of occupied slots
    /// left, says it is all occupied.
    #[inline(always)]
    fn take_full_rest(&mut self, left: usize) -> Option<Piece<BufPtrs<T, L>>> {
        if left != self.end - self.next {
            return None;
        }
        let run = Run {
            ptrs: self.states.ptrs(),
            next: self.next,
            end: self.end,
        };
        self.next = self.end;
        Some(Piece::Run(run))
    }
}

// SAFETY: the view covers initialized slots of a store borrowed for the
// walk's life; every index handed out lies in `next..end`, which shrinks
// past it at once, from the bottom in `front` and from the top in `back`,
// so each is handed out once and in order; a mask has a bit only for a
// state word with the vacant bit clear, and a run only covers slots the
// exact count says are occupied. The pointers are the view's (`BufPtrs`
// reaches every slot below the store's length).
unsafe impl<T, L: BufLayout> Walk<T> for StoreWalk<'_, T, L> {
    type Ptrs = BufPtrs<T, L>;

    #[inline(always)]
    fn no_ptrs(&self) -> BufPtrs<T, L> {
        self.states.ptrs()
    }

    #[inline(always)]
    fn front(&mut self, left: usize) -> Option<Piece<BufPtrs<T, L>>> {
        if left == 0 {
            self.next = self.end;
            return None;
        }
        if let Some(run) = self.take_full_rest(left) {
            return Some(run);
        }
        let start = self.next;
        let len = (self.end - start).min(WORD_BITS);
        self.next = start + len;
        Some(self.load(start, len))
    }

    #[inline(always)]
    fn back(&mut self, left: usize) -> Option<Piece<BufPtrs<T, L>>> {
        if left == 0 {
            self.end = self.next;
            return None;
        }
        if let Some(run) = self.take_full_rest(left) {
            return Some(run);
        }
        let start = self.end.saturating_sub(WORD_BITS).max(self.next);
        let len = self.end - start;
        self.end = start;
        Some(self.load(start, len))
    }

    /// Folds `f` over every slot left, in order. A rest that is all
    /// occupied (a table with no holes, or past the last hole) runs as a
    /// plain counted loop, and so does every chunk of 64 occupied slots:
    /// both are loops the compiler can unroll or vectorize.
    #[inline]
    fn fold<B, Q: RunPos<T, BufPtrs<T, L>>>(
        self,
        left: usize,
        init: B,
        f: &mut impl SlotFold<T, BufPtrs<T, L>, Q, B>,
    ) -> B {
        let ptrs = self.states.ptrs();
        let (mut next, end, mut remaining) = (self.next, self.end, left);
        let mut acc = init;
        while remaining != 0 {
            // `remaining <= end - next`, so `next < end` here.
            if remaining == end - next {
                // SAFETY: the count says `next..end` is all occupied, and
                // the walk hands it out here, once.
                return unsafe { fold_run::<T, _, Q, B>(ptrs, next, end, acc, f) };
            }
            let len = (end - next).min(WORD_BITS);
            let mut word = L::occupied_bits(self.states, next, len);
            if word == u64::MAX {
                // A constant trip count: the compiler unrolls it.
                for bit in 0..WORD_BITS {
                    acc = f.at_index(acc, ptrs, next + bit);
                }
                remaining -= WORD_BITS;
            } else {
                while word != 0 {
                    acc = f.at_index(acc, ptrs, next + pop_lowest(&mut word));
                    remaining -= 1;
                }
            }
            next += len;
        }
        acc
    }

    /// Cuts the walk in two for parallel iteration, at a chunk boundary
    /// near the middle of its slots, if there are at least
    /// `2 * SPLIT_MIN_SLOTS`; else not at all.
    #[cfg(any(test, feature = "rayon"))]
    fn split(self, left: usize) -> ((Self, usize), Option<(Self, usize)>) {
        let slots = self.end - self.next;
        if slots < 2 * SPLIT_MIN_SLOTS {
            return ((self, left), None);
        }
        let middle = self.next + (slots / 2) / WORD_BITS * WORD_BITS;
        let right_count = L::count_occupied(self.states, middle..self.end);
        let right = StoreWalk {
            next: middle,
            ..self
        };
        let left_part = StoreWalk {
            end: middle,
            ..self
        };
        ((left_part, left - right_count), Some((right, right_count)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::buf::{InterleavedLayout, SplitLayout};
    use crate::raw::cursor::{check_by_unit, check_cursor};
    use crate::raw::SlotStore;
    use alloc::vec::Vec;

    /// A store of `len` slots, occupied where `pattern` says, each
    /// occupied slot `i` holding `value(i)` at generation `i % 7 + 1`.
    fn store<L: BufLayout, V>(
        pattern: impl Fn(usize) -> bool,
        len: usize,
        value: fn(usize) -> V,
    ) -> SlotStore<V, L> {
        let mut store = SlotStore::new();
        for i in 0..len {
            if pattern(i) {
                store.push_occupied_with(i as u32 % 7 + 1, |_| value(i));
            } else {
                store.push_vacant(3, crate::raw::slot::NO_SLOT);
            }
        }
        store
    }

    /// Every pattern of holes over stores of values made by `value`; the
    /// exclusive cursor changes each value by `bump`. `half` (0 or 1) says
    /// which value type of the test this is (see below).
    fn check_patterns<L: BufLayout, V>(value: fn(usize) -> V, bump: fn(&mut V), half: usize)
    where
        V: Copy + PartialEq + core::fmt::Debug,
    {
        let patterns: [&dyn Fn(usize) -> bool; 8] = [
            &|_| true,
            &|_| false,
            &|i| i % 2 == 0,
            &|i| i % 17 == 3 || i > 150,
            &|i| i < 64 || (128..200).contains(&i),
            &|i| i % 64 == 63 || i % 64 == 0,
            &|i| (60..70).contains(&(i % 128)),
            &|i| i % 20 == 0,
        ];
        let lens: &[usize] = if cfg!(miri) {
            &[2, 130]
        } else {
            &[0, 1, 2, 63, 64, 65, 127, 128, 130, 257]
        };
        for &len in lens {
            // Under Miri, every other pattern, and over the long store half
            // of those: the first two for one value type, the last two for
            // the other, so that the pair walks each (a long store's
            // checks take about 3 s of Miri's clock a pattern).
            let runs = |i: usize| !cfg!(miri) || (i % 2 == 0 && (len < 64 || i / 4 == half));
            for (_, pattern) in patterns.iter().enumerate().filter(|&(i, _)| runs(i)) {
                let mut store = store::<L, V>(pattern, len, value);
                let expected: Vec<(usize, u32, V)> = (0..len)
                    .filter(|&i| pattern(i))
                    .map(|i| (i, i as u32 % 7 + 1, value(i)))
                    .collect();
                check_cursor(|| store.iter(), &expected);
                check_by_unit(|| store.iter(), &expected);
                // The exclusive cursor yields the same slots, each once.
                let mut count = 0;
                for (index, _, slot_value) in store.iter_mut().rev() {
                    assert_eq!(*slot_value, value(index));
                    bump(slot_value);
                    count += 1;
                }
                assert_eq!(count, expected.len());
                assert!(store.iter().all(|(index, _, &slot_value)| {
                    let mut bumped = value(index);
                    bump(&mut bumped);
                    slot_value == bumped
                }));
            }
        }
    }

    /// Every pattern over `u64` values (a unit of 8 bytes split, 16
    /// interleaved) and over 12-byte values, units the address modes do
    /// not scale by, so that the cursors with keys step a unit beside the
    /// index (`Indexed`).
    fn check_layout<L: BufLayout>() {
        check_patterns::<L, u64>(|i| i as u64 * 10, |value| *value += 1, 0);
        check_patterns::<L, [u32; 3]>(|i| [i as u32, !(i as u32), 7], |value| value[2] += 1, 1);
    }

    #[test]
    fn split_layout_walks_every_pattern() {
        check_layout::<SplitLayout>();
    }

    #[test]
    fn interleaved_layout_walks_every_pattern() {
        check_layout::<InterleavedLayout>();
    }

    #[test]
    fn split_parts_cover_the_walk() {
        // Under Miri, where each slot costs, just past the size below which
        // a walk is not cut.
        let (len, gap) = if cfg!(miri) {
            (JUST_PAST_SPLIT, 100..130)
        } else {
            (5000, 1000..2100)
        };
        let pattern = |i: usize| i % 3 != 1 && !gap.contains(&i);
        let mut store = store::<SplitLayout, u64>(pattern, len, |i| i as u64 * 10);
        let (expected, parts) = crate::raw::check_split_round!(store);
        assert!(parts > 1);
        assert_eq!(expected.len(), (0..len).filter(|&i| pattern(i)).count());
    }
}

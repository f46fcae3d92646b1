//! Occupancy read from the state words themselves.
//!
//! The slot store keeps every slot's state word in an array of its own
//! (see [`SlotStore`](super::SlotStore)), and the top bit of a state word
//! says whether the slot is vacant. So the array *is* the occupancy: a
//! write changes one state word and no separate bitset, and a pass turns
//! 64 state words (256 bytes) into a 64-bit mask at a time and then jumps
//! from live slot to live slot with `trailing_zeros`, as over a bitset.
//! A pass reads 4 bytes per slot instead of a bit, but never a vacant
//! slot's payload.
//!
//! An interleaved store (each state word beside its payload, see
//! [`InterleavedLayout`](super::buf::InterleavedLayout)) has no array of
//! state words to turn into masks; [`SlotWalk`] reads its state words one
//! slot at a time.

use core::ops::Range;

use super::bitset::{pop_lowest, WORD_BITS};
use super::buf::{BufLayout, StateView};
use super::slot::VACANT;
use super::store::IndexWalk;

/// The occupied slots among 64 state words, as a mask: bit `i` is set iff
/// `states[i]` has the vacant bit clear.
#[inline]
pub(crate) fn occupied_mask(states: &[u32; WORD_BITS]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        sse2_vacant_mask(states) ^ u64::MAX
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        partial_occupied_mask(states)
    }
}

/// The vacant slots among 64 state words, with SSE2 (part of every x86-64
/// target): the vacant bit is each word's sign bit, which signed
/// saturation keeps while packing 16 words to 16 bytes, and `pmovmskb`
/// gathers the 16 sign bits. About 40 instructions per 64 slots, against
/// about 300 for the loop the compiler makes of the portable code.
#[cfg(target_arch = "x86_64")]
#[inline]
fn sse2_vacant_mask(states: &[u32; WORD_BITS]) -> u64 {
    use core::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_movemask_epi8, _mm_packs_epi16, _mm_packs_epi32,
    };
    const _: () = assert!(VACANT == 1 << 31, "the mask reads the sign bit");
    let vectors = states.as_ptr().cast::<__m128i>();
    let mut mask = 0u64;
    for group in 0..4 {
        // SSE2 is enabled on every x86-64 target, so the intrinsics are
        // available; unaligned loads need no alignment.
        #[allow(unused_unsafe)]
        // SAFETY: `states` is 16 vectors of 16 bytes; `group * 4 + 3 < 16`.
        let bits = unsafe {
            let a = _mm_loadu_si128(vectors.add(group * 4));
            let b = _mm_loadu_si128(vectors.add(group * 4 + 1));
            let c = _mm_loadu_si128(vectors.add(group * 4 + 2));
            let d = _mm_loadu_si128(vectors.add(group * 4 + 3));
            let bytes = _mm_packs_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
            _mm_movemask_epi8(bytes) as u32 as u64
        };
        mask |= bits << (16 * group);
    }
    mask
}

/// The occupied slots among up to 64 state words, one word at a time (the
/// end of the array, and targets other than x86-64).
#[inline]
pub(crate) fn partial_occupied_mask(states: &[u32]) -> u64 {
    debug_assert!(states.len() <= WORD_BITS);
    let mut mask = 0u64;
    for (bit, &state) in states.iter().enumerate() {
        mask |= u64::from(state & VACANT == 0) << bit;
    }
    mask
}

/// How many of `states` are occupied.
pub(crate) fn count_occupied(states: &[u32]) -> usize {
    states.iter().filter(|&&state| state & VACANT == 0).count()
}

/// Walks the occupied indices of a run of state words, lowest first,
/// knowing how many remain.
#[derive(Clone)]
pub(crate) struct StateScan<'a> {
    /// The whole state array; indices are positions in it.
    states: &'a [u32],
    /// The first index not yet turned into a mask. Invariant: `next <=
    /// end <= states.len()`, and `next` is `end` or the start of the
    /// 64-slot chunk after `current`'s.
    next: usize,
    /// Where the walk ends (a split walk ends before the array does).
    end: usize,
    /// Occupied slots of the current chunk not yet yielded.
    current: u64,
    /// Index of bit 0 of `current`.
    base: usize,
    /// Occupied indices not yet yielded, `current`'s included. The walk
    /// stops when it reaches zero, so trailing vacant slots are never
    /// read; and when it equals the slots left (`current` empty,
    /// `end - next`), the rest is all occupied and is walked as a range.
    remaining: usize,
}

impl<'a> StateScan<'a> {
    /// Walks `states[range]`, which holds exactly `count` occupied slots.
    #[inline]
    pub(crate) fn new(states: &'a [u32], range: Range<usize>, count: usize) -> Self {
        debug_assert!(range.start <= range.end && range.end <= states.len());
        debug_assert_eq!(count, count_occupied(&states[range.clone()]));
        StateScan {
            states,
            next: range.start,
            end: range.end,
            current: 0,
            base: range.start,
            remaining: count,
        }
    }

    /// Turns the next chunk (64 slots, or what is left before `end`) into
    /// `current`. `next < end` must hold.
    #[inline]
    fn load(&mut self) -> u64 {
        let start = self.next;
        let rest = &self.states[start..self.end];
        let mask = match rest.first_chunk::<WORD_BITS>() {
            Some(chunk) => {
                self.next = start + WORD_BITS;
                occupied_mask(chunk)
            }
            None => {
                self.next = self.end;
                partial_occupied_mask(rest)
            }
        };
        self.base = start;
        mask
    }
}

impl IndexWalk for StateScan<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.remaining
    }

    #[inline]
    fn next_index(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        while self.current == 0 {
            if self.next >= self.end {
                return None;
            }
            self.current = self.load();
        }
        self.remaining -= 1;
        Some(self.base + pop_lowest(&mut self.current))
    }

    /// Folds `f` over every remaining index, in order. A rest that is all
    /// occupied (a table with no holes, or past the last hole) runs as a
    /// plain counted loop, and so does every chunk of 64 occupied slots:
    /// both are loops the compiler can unroll or vectorize.
    #[inline]
    fn fold_indices<B>(mut self, init: B, mut f: impl FnMut(B, usize) -> B) -> B {
        let mut acc = init;
        let mut word = self.current;
        let mut remaining = self.remaining;
        while word != 0 {
            acc = f(acc, self.base + word.trailing_zeros() as usize);
            word &= word - 1;
            remaining -= 1;
        }
        while remaining != 0 {
            let start = self.next;
            if remaining == self.end - start {
                for index in start..self.end {
                    acc = f(acc, index);
                }
                return acc;
            }
            if start >= self.end {
                return acc;
            }
            let mut word = self.load();
            let base = self.base;
            if word == u64::MAX {
                // A constant trip count (see `BitIter::fold_indices`).
                for bit in 0..WORD_BITS {
                    acc = f(acc, base + bit);
                }
                remaining -= WORD_BITS;
            } else {
                while word != 0 {
                    acc = f(acc, base + word.trailing_zeros() as usize);
                    word &= word - 1;
                    remaining -= 1;
                }
            }
        }
        acc
    }

    /// Cuts the walk in two for parallel iteration, at a chunk boundary
    /// near the middle of the slots not yet loaded, if there are at least
    /// `2 * SPLIT_MIN_SLOTS`; else not at all. The left part keeps the
    /// chunk already loaded; every index goes to exactly one part, and the
    /// parts together yield the same indices in the same order.
    #[cfg(any(test, feature = "rayon"))]
    fn split(self) -> (Self, Option<Self>) {
        /// Below this, a part is too small to be worth a task.
        const SPLIT_MIN_SLOTS: usize = 1024;
        let slots = self.end - self.next;
        if slots < 2 * SPLIT_MIN_SLOTS {
            return (self, None);
        }
        let middle = self.next + (slots / 2) / WORD_BITS * WORD_BITS;
        let right_count = count_occupied(&self.states[middle..self.end]);
        let right = StateScan {
            states: self.states,
            next: middle,
            end: self.end,
            current: 0,
            base: middle,
            remaining: right_count,
        };
        let left = StateScan {
            end: middle,
            remaining: self.remaining - right_count,
            ..self
        };
        (left, Some(right))
    }
}

/// Walks the occupied indices of a store's state words one slot at a
/// time, lowest first, knowing how many remain: the walk of a layout whose
/// state words are not one array (`InterleavedLayout`). It reads every
/// slot's state word, vacant or not, until the occupied ones run out.
pub(crate) struct SlotWalk<'a, T, L: BufLayout> {
    /// The state words; indices are positions in the view.
    states: StateView<'a, T, L>,
    /// The next index to read. Invariant: `next <= end <= states.len()`.
    next: usize,
    /// Where the walk ends (a split walk ends before the view does).
    end: usize,
    /// Occupied indices in `next..end`; the walk stops when it reaches
    /// zero.
    remaining: usize,
}

impl<T, L: BufLayout> Clone for SlotWalk<'_, T, L> {
    fn clone(&self) -> Self {
        SlotWalk { ..*self }
    }
}

impl<'a, T, L: BufLayout> SlotWalk<'a, T, L> {
    /// Walks `states[range]`, which holds exactly `count` occupied slots.
    #[inline]
    pub(crate) fn new(states: StateView<'a, T, L>, range: Range<usize>, count: usize) -> Self {
        debug_assert!(range.start <= range.end && range.end <= states.len());
        debug_assert_eq!(count, Self::count(states, range.clone()));
        SlotWalk {
            states,
            next: range.start,
            end: range.end,
            remaining: count,
        }
    }

    /// How many of `states[range]` are occupied.
    fn count(states: StateView<'a, T, L>, range: Range<usize>) -> usize {
        range
            .filter(|&i| states.get(i).is_some_and(|state| state & VACANT == 0))
            .count()
    }
}

impl<T, L: BufLayout> IndexWalk for SlotWalk<'_, T, L> {
    #[inline]
    fn len(&self) -> usize {
        self.remaining
    }

    #[inline]
    fn next_index(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        while self.next < self.end {
            let index = self.next;
            self.next += 1;
            // SAFETY: `index < end <= states.len()` (the invariant on
            // `next`).
            if unsafe { self.states.get_unchecked(index) } & VACANT == 0 {
                self.remaining -= 1;
                return Some(index);
            }
        }
        None
    }

    #[inline]
    fn fold_indices<B>(mut self, init: B, mut f: impl FnMut(B, usize) -> B) -> B {
        let mut acc = init;
        while let Some(index) = self.next_index() {
            acc = f(acc, index);
        }
        acc
    }

    /// Cuts the walk in two near the middle of the slots left, if there
    /// are at least `2 * SPLIT_MIN_SLOTS`; else not at all.
    #[cfg(any(test, feature = "rayon"))]
    fn split(self) -> (Self, Option<Self>) {
        /// Below this, a part is too small to be worth a task.
        const SPLIT_MIN_SLOTS: usize = 1024;
        let slots = self.end - self.next;
        if slots < 2 * SPLIT_MIN_SLOTS {
            return (self, None);
        }
        let middle = self.next + slots / 2;
        let right_count = Self::count(self.states, middle..self.end);
        let right = SlotWalk {
            next: middle,
            remaining: right_count,
            ..self
        };
        let left = SlotWalk {
            end: middle,
            remaining: self.remaining - right_count,
            ..self
        };
        (left, Some(right))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn states(pattern: impl Fn(usize) -> bool, len: usize) -> Vec<u32> {
        (0..len)
            .map(|i| if pattern(i) { 7 } else { VACANT | 3 })
            .collect()
    }

    #[test]
    fn masks_agree_with_the_portable_loop() {
        for seed in 0..50u64 {
            let chunk: Vec<u32> = (0..64u64)
                .map(|i| {
                    let x = (i + 1).wrapping_mul(seed.wrapping_mul(0x9E37_79B9) | 1) >> 7;
                    if x % 3 == 0 {
                        VACANT | (x as u32 & 0xff)
                    } else {
                        x as u32 & 0x7fff_ffff
                    }
                })
                .collect();
            let array: &[u32; 64] = chunk.as_slice().try_into().unwrap();
            assert_eq!(occupied_mask(array), partial_occupied_mask(&chunk));
        }
        assert_eq!(occupied_mask(&[VACANT; 64]), 0);
        assert_eq!(occupied_mask(&[1; 64]), u64::MAX);
    }

    #[test]
    fn every_walk_yields_the_occupied_indices_in_order() {
        let patterns: [&dyn Fn(usize) -> bool; 5] = [
            &|_| true,
            &|_| false,
            &|i| i % 2 == 0,
            &|i| i % 17 == 3 || i > 150,
            &|i| i < 64 || (128..200).contains(&i),
        ];
        for len in [0, 1, 63, 64, 65, 130, 257] {
            for pattern in patterns {
                let states = states(pattern, len);
                let expected: Vec<usize> = (0..len).filter(|&i| pattern(i)).collect();
                let scan = StateScan::new(&states, 0..len, expected.len());
                let mut by_next = Vec::new();
                let mut walk = scan.clone();
                while let Some(i) = walk.next_index() {
                    by_next.push(i);
                }
                assert_eq!(by_next, expected);
                let by_fold = scan.clone().fold_indices(Vec::new(), |mut v, i| {
                    v.push(i);
                    v
                });
                assert_eq!(by_fold, expected);
                // A fold after a few steps sees the rest.
                let mut walk = scan;
                let first: Vec<usize> = (0..3).map_while(|_| walk.next_index()).collect();
                let rest = walk.fold_indices(first, |mut v, i| {
                    v.push(i);
                    v
                });
                assert_eq!(rest, expected);
            }
        }
    }

    #[test]
    fn split_parts_cover_the_walk() {
        let len = 5000;
        let pattern = |i: usize| i % 3 != 1 && !(1000..2100).contains(&i);
        let states = states(pattern, len);
        let expected: Vec<usize> = (0..len).filter(|&i| pattern(i)).collect();
        let mut parts = Vec::new();
        let mut pending = alloc::vec![StateScan::new(&states, 0..len, expected.len())];
        while let Some(part) = pending.pop() {
            match part.split() {
                (left, Some(right)) => {
                    pending.push(right);
                    pending.push(left);
                }
                (whole, None) => parts.push(whole),
            }
        }
        assert!(parts.len() > 1);
        let mut all = Vec::new();
        for part in parts {
            let count = part.len();
            let found = part.fold_indices(Vec::new(), |mut v, i| {
                v.push(i);
                v
            });
            assert_eq!(found.len(), count);
            all.extend(found);
        }
        assert_eq!(all, expected);
    }
}

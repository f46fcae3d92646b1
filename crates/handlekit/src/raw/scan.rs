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
//! state words to turn into masks at once; its masks are made one state
//! word at a time, and the walk is the same ([`StoreWalk`]).

use super::bitset::{pop_lowest, WORD_BITS};
use super::buf::{BufLayout, BufPtrs, StateView};
use super::cursor::{Bits, Piece, Run, Walk};
use super::slot::VACANT;

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
#[cfg(any(test, feature = "rayon"))]
pub(crate) fn count_occupied(states: &[u32]) -> usize {
    states.iter().filter(|&&state| state & VACANT == 0).count()
}

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
    fn fold<B>(self, left: usize, init: B, mut f: impl FnMut(B, BufPtrs<T, L>, usize) -> B) -> B {
        let ptrs = self.states.ptrs();
        let (mut next, end, mut remaining) = (self.next, self.end, left);
        let mut acc = init;
        while remaining != 0 {
            // `remaining <= end - next`, so `next < end` here.
            if remaining == end - next {
                for index in next..end {
                    acc = f(acc, ptrs, index);
                }
                return acc;
            }
            let len = (end - next).min(WORD_BITS);
            let mut word = L::occupied_bits(self.states, next, len);
            if word == u64::MAX {
                // A constant trip count: the compiler unrolls it.
                for bit in 0..WORD_BITS {
                    acc = f(acc, ptrs, next + bit);
                }
                remaining -= WORD_BITS;
            } else {
                while word != 0 {
                    acc = f(acc, ptrs, next + pop_lowest(&mut word));
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
        /// Below this, a part is too small to be worth a task.
        const SPLIT_MIN_SLOTS: usize = 1024;
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
    use crate::raw::cursor::check_cursor;
    use crate::raw::SlotStore;
    use alloc::vec::Vec;

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

    /// A store of `len` slots, occupied where `pattern` says, each
    /// occupied slot `i` holding `i * 10` at generation `i % 7 + 1`.
    fn store<L: BufLayout>(pattern: impl Fn(usize) -> bool, len: usize) -> SlotStore<u64, L> {
        let mut store = SlotStore::new();
        for i in 0..len {
            if pattern(i) {
                store.push_occupied_with(i as u32 % 7 + 1, |_| i as u64 * 10);
            } else {
                store.push_vacant(3, crate::raw::slot::NO_SLOT);
            }
        }
        store
    }

    fn check_patterns<L: BufLayout>() {
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
            for pattern in patterns.iter().step_by(if cfg!(miri) { 2 } else { 1 }) {
                let mut store = store::<L>(pattern, len);
                let expected: Vec<(usize, u32, u64)> = (0..len)
                    .filter(|&i| pattern(i))
                    .map(|i| (i, i as u32 % 7 + 1, i as u64 * 10))
                    .collect();
                check_cursor(|| store.iter(), &expected);
                // The exclusive cursor yields the same slots, each once.
                let mut count = 0;
                for (index, _, value) in store.iter_mut().rev() {
                    assert_eq!(*value, index as u64 * 10);
                    *value += 1;
                    count += 1;
                }
                assert_eq!(count, expected.len());
                assert!(store
                    .iter()
                    .all(|(index, _, &value)| value == index as u64 * 10 + 1));
            }
        }
    }

    #[test]
    fn split_layout_walks_every_pattern() {
        check_patterns::<SplitLayout>();
    }

    #[test]
    fn interleaved_layout_walks_every_pattern() {
        check_patterns::<InterleavedLayout>();
    }

    #[test]
    fn split_parts_cover_the_walk() {
        let len = 5000;
        let pattern = |i: usize| i % 3 != 1 && !(1000..2100).contains(&i);
        let mut store = store::<SplitLayout>(pattern, len);
        let (expected, parts) = crate::raw::check_split_round!(store);
        assert!(parts > 1);
        assert_eq!(expected.len(), (0..len).filter(|&i| pattern(i)).count());
    }
}

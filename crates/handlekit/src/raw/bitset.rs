//! The occupancy bitset: one bit per slot, set while the slot is occupied.
//!
//! Iteration reads one `u64` per 64 slots and jumps from live slot to live
//! slot with `trailing_zeros`, so a sparse table is crossed at the cost of
//! its bitset, not of its slots.

use core::ops::Range;

/// Bits per word.
pub(crate) const WORD_BITS: usize = 64;

/// Sets bits `start..end` of `words`, which must cover them; a word at a
/// time.
pub(crate) fn set_bit_range(words: &mut [u64], start: usize, end: usize) {
    if start >= end {
        return;
    }
    let (first, last) = (start / WORD_BITS, (end - 1) / WORD_BITS);
    let low = !0u64 << (start % WORD_BITS);
    let high = !0u64 >> (WORD_BITS - 1 - (end - 1) % WORD_BITS);
    if first == last {
        words[first] |= low & high;
    } else {
        words[first] |= low;
        words[first + 1..last].fill(!0);
        words[last] |= high;
    }
}

/// Clears the lowest set bit of a nonzero `word` and returns its position.
#[inline(always)]
pub(crate) fn pop_lowest(word: &mut u64) -> usize {
    debug_assert!(*word != 0);
    let bit = word.trailing_zeros() as usize;
    *word &= *word - 1;
    bit
}

/// Walks the set bits of a bitset, lowest first, knowing how many remain,
/// and then a run of indices that count as set without bits (`tail`).
#[derive(Clone)]
pub(crate) struct BitIter<'a> {
    /// Words not yet loaded.
    rest: core::slice::Iter<'a, u64>,
    /// Bits of the current word not yet yielded.
    current: u64,
    /// Slot index of bit 0 of `current`.
    base: usize,
    /// Set bits not yet yielded; iteration stops when it reaches zero, so
    /// trailing empty words are never read.
    remaining: usize,
    /// Indices yielded after the bits. Invariant: above every bit in the
    /// words, so the whole walk stays in ascending order.
    tail: Range<usize>,
}

impl<'a> BitIter<'a> {
    /// Iterates `words`, which hold exactly `count` set bits.
    #[inline]
    pub(crate) fn new(words: &'a [u64], count: usize) -> Self {
        BitIter {
            rest: words.iter(),
            current: 0,
            // Wraps to 0 on the first load.
            base: 0usize.wrapping_sub(WORD_BITS),
            remaining: count,
            tail: 0..0,
        }
    }

    /// Iterates `words`, which hold exactly `count` set bits, all below
    /// `tail.start`, and then every index in `tail`.
    #[inline]
    pub(crate) fn with_tail(words: &'a [u64], count: usize, tail: Range<usize>) -> Self {
        BitIter {
            tail,
            ..Self::new(words, count)
        }
    }

    /// [`with_tail`](Self::with_tail), with the first word loaded at once,
    /// so that a walk starts on it rather than passing once through its
    /// loop for an empty `current`: for a walk that starts often (one per
    /// block of a `Hive`), that pass is a few instructions of the start-up
    /// cost. (`IdTable`'s single walk keeps `new`, whose loop the compiler
    /// lays out better there.)
    #[inline]
    pub(crate) fn with_tail_loaded(words: &'a [u64], count: usize, tail: Range<usize>) -> Self {
        let mut bits = Self::with_tail(words, count, tail);
        if let Some(&first) = bits.rest.next() {
            bits.current = first;
            bits.base = 0;
        }
        bits
    }

    /// Indices left.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.remaining + self.tail.len()
    }

    /// Cuts the walk in two for parallel iteration: at the middle of the
    /// words not yet loaded if there are at least `2 * SPLIT_MIN_WORDS`,
    /// else in the middle of the tail if it has at least
    /// `2 * SPLIT_MIN_TAIL` indices, else not at all. The left part keeps
    /// the word already loaded; every index goes to exactly one part, and
    /// the parts together yield the same indices in the same order.
    #[cfg(any(test, feature = "rayon"))]
    pub(crate) fn split(self) -> (Self, Option<Self>) {
        /// Below this, a part is too small to be worth a task (1024 slots).
        const SPLIT_MIN_WORDS: usize = 16;
        /// The same for the tail.
        const SPLIT_MIN_TAIL: usize = 1024;
        let words = self.rest.as_slice();
        if words.len() >= 2 * SPLIT_MIN_WORDS {
            let (left_words, right_words) = words.split_at(words.len() / 2);
            let left_count = self.current.count_ones() as usize
                + left_words
                    .iter()
                    .map(|w| w.count_ones() as usize)
                    .sum::<usize>();
            let right = BitIter {
                rest: right_words.iter(),
                current: 0,
                // Word `k` of `rest` has bit 0 at `base + 64 * (k + 1)`; the
                // first load adds one word.
                base: self.base.wrapping_add(left_words.len() * WORD_BITS),
                remaining: self.remaining - left_count,
                tail: self.tail,
            };
            let left = BitIter {
                rest: left_words.iter(),
                remaining: left_count,
                tail: right.tail.start..right.tail.start,
                ..self
            };
            return (left, Some(right));
        }
        if self.tail.len() >= 2 * SPLIT_MIN_TAIL {
            let middle = self.tail.start + self.tail.len() / 2;
            let right = BitIter {
                rest: [].iter(),
                current: 0,
                base: 0,
                remaining: 0,
                tail: middle..self.tail.end,
            };
            let left = BitIter {
                tail: self.tail.start..middle,
                ..self
            };
            return (left, Some(right));
        }
        (self, None)
    }

    /// The next set bit.
    #[inline]
    pub(crate) fn next_index(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return self.tail.next();
        }
        while self.current == 0 {
            self.current = *self.rest.next()?;
            self.base = self.base.wrapping_add(WORD_BITS);
        }
        self.remaining -= 1;
        Some(self.base + pop_lowest(&mut self.current))
    }

    /// Folds `f` over every remaining index, in order. Full words and the
    /// tail run as plain counted loops, which the compiler can unroll or
    /// vectorize.
    #[inline]
    pub(crate) fn fold_indices<B>(mut self, init: B, mut f: impl FnMut(B, usize) -> B) -> B {
        let mut acc = init;
        if self.remaining != 0 {
            acc = self.fold_words(acc, &mut f);
        }
        for index in self.tail {
            acc = f(acc, index);
        }
        acc
    }

    /// The bit part of [`fold_indices`](Self::fold_indices).
    #[inline]
    fn fold_words<B>(&mut self, init: B, f: &mut impl FnMut(B, usize) -> B) -> B {
        let mut acc = init;
        let mut word = self.current;
        let mut base = self.base;
        loop {
            if word == u64::MAX {
                // A constant trip count, not `base..base + WORD_BITS`: the
                // compiler must allow for that end wrapping, and the trip
                // count it then works out on every word took registers
                // that the sparse path below spilled to the stack (in
                // `Hive`'s block loop, six stack accesses per word).
                for bit in 0..WORD_BITS {
                    acc = f(acc, base + bit);
                }
            } else {
                while word != 0 {
                    acc = f(acc, base + word.trailing_zeros() as usize);
                    word &= word - 1;
                }
            }
            match self.rest.next() {
                Some(&next) => {
                    word = next;
                    base = base.wrapping_add(WORD_BITS);
                }
                None => return acc,
            }
        }
    }
}

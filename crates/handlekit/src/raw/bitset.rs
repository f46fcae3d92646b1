//! Occupancy bits: one bit per slot, set while the slot is occupied (a
//! `Block`'s occupancy words, and the masks a walk makes of 64 state
//! words). Iteration reads one `u64` per 64 slots and jumps from live slot
//! to live slot with `trailing_zeros`, so a sparse table is crossed at the
//! cost of its bits, not of its slots.

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

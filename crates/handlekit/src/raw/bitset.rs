//! Occupancy masks: one bit per slot (the masks a walk makes of 64 state
//! words, or of a `Block`'s vacancy words). Iteration reads one `u64` per
//! 64 slots and jumps from live slot to live slot with `trailing_zeros`,
//! so a sparse table is crossed at the cost of its bits, not of its slots.

/// Bits per word.
pub(crate) const WORD_BITS: usize = 64;

/// Clears the lowest set bit of a nonzero `word` and returns its position.
#[inline(always)]
pub(crate) fn pop_lowest(word: &mut u64) -> usize {
    debug_assert!(*word != 0);
    let bit = word.trailing_zeros() as usize;
    *word &= *word - 1;
    bit
}

//! A minimal model of two ways to skip the holes of a block of slots, over
//! the same data, for `benches/skipfield.rs`:
//!
//! - [`SkipfieldBlock`]: a *jump-counting skipfield*, the scheme of
//!   `plf::hive` and the `std::hive` proposal. One `u16` per slot plus a
//!   sentinel; the first and the last slot of every run of erased slots hold
//!   the run's length (the nodes inside a run are never read by forward or
//!   backward iteration, and are left at 0 here). Forward iteration is
//!   `i = skip[0]; while i < len { visit(i); i += 1; i += skip[i]; }`: a run
//!   of any length is skipped in O(1), and every visited slot reads its
//!   counter.
//! - [`MaskBlock`]: one occupancy bit per slot in `u64` words, walked with
//!   `trailing_zeros`, with a full-word fast path, as handlekit's
//!   `BitIter::fold_words` does.
//!
//! Both keep a value in every slot (erased or not) so that only the way the
//! holes are skipped differs. This is bench-only code; nothing here is in
//! the core library.

use crate::workloads::Rng;

/// Slots per block when a pattern is split into blocks: the largest block
/// a default `Hive` uses for small values.
pub const BLOCK_SLOTS: usize = 8192;

/// Bits per occupancy word of a [`MaskBlock`].
const WORD_BITS: usize = 64;

/// A block of slots whose holes are skipped with a jump-counting skipfield.
#[derive(Clone, Debug)]
pub struct SkipfieldBlock<T> {
    /// One value per slot, live or erased.
    values: Vec<T>,
    /// One counter per slot plus a sentinel (always 0) at `values.len()`.
    skip: Vec<u16>,
}

impl<T> SkipfieldBlock<T> {
    /// A block holding `values`, where slot `i` is live iff `live[i]`.
    ///
    /// # Panics
    ///
    /// If `values` and `live` differ in length, or the block has more than
    /// `u16::MAX` slots (a run must fit its counter).
    pub fn new(values: Vec<T>, live: &[bool]) -> Self {
        let len = values.len();
        assert_eq!(len, live.len(), "one occupancy flag per slot");
        assert!(
            len <= usize::from(u16::MAX),
            "a block holds at most 65535 slots"
        );
        let mut skip = vec![0u16; len + 1];
        let mut i = 0;
        while i < len {
            if live[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i < len && !live[i] {
                i += 1;
            }
            // Fits: the run is at most `len <= u16::MAX` long.
            let run = (i - start) as u16;
            skip[start] = run;
            skip[i - 1] = run;
        }
        SkipfieldBlock { values, skip }
    }

    /// The number of slots, live or erased.
    pub fn slots(&self) -> usize {
        self.values.len()
    }

    /// The skipfield: one counter per slot, then the sentinel.
    pub fn skipfield(&self) -> &[u16] {
        &self.skip
    }
}

/// A block of slots with holes, walked in slot order: what
/// [`SkipfieldBlock`] and [`MaskBlock`] provide (each its own
/// `fold_indexed`) and what is derived from it.
pub trait LiveSlots<T> {
    /// Folds the live values in slot order, with their slot indices.
    fn fold_indexed<B>(&self, init: B, f: impl FnMut(B, usize, &T) -> B) -> B;

    /// Folds the live values in slot order.
    #[inline]
    fn fold<B>(&self, init: B, mut f: impl FnMut(B, &T) -> B) -> B {
        self.fold_indexed(init, |acc, _, value| f(acc, value))
    }

    /// Calls `f` on every live value in slot order.
    #[inline]
    fn for_each(&self, mut f: impl FnMut(&T)) {
        self.fold((), |(), value| f(value));
    }

    /// The indices of the live slots, in order.
    fn live_indices(&self) -> Vec<usize> {
        self.fold_indexed(Vec::new(), |mut out, i, _| {
            out.push(i);
            out
        })
    }
}

impl<T> LiveSlots<T> for SkipfieldBlock<T> {
    #[inline]
    fn fold_indexed<B>(&self, init: B, mut f: impl FnMut(B, usize, &T) -> B) -> B {
        let values = &self.values[..];
        let len = values.len();
        // Exactly `len + 1` counters, so `skip[i + 1]` is in bounds for every
        // `i < len` (and the optimizer can see it).
        let skip = &self.skip[..=len];
        let mut acc = init;
        let mut i = usize::from(skip[0]);
        while i < len {
            acc = f(acc, i, &values[i]);
            i += 1;
            i += usize::from(skip[i]);
        }
        acc
    }
}

impl<T> LiveSlots<T> for MaskBlock<T> {
    #[inline]
    fn fold_indexed<B>(&self, init: B, mut f: impl FnMut(B, usize, &T) -> B) -> B {
        let mut acc = init;
        let mut base = 0;
        for (chunk, &word) in self.values.chunks(WORD_BITS).zip(&self.bits) {
            if word == u64::MAX {
                // A full word covers a whole chunk of 64 slots.
                for (offset, value) in chunk.iter().enumerate() {
                    acc = f(acc, base + offset, value);
                }
            } else {
                let mut word = word;
                while word != 0 {
                    let offset = word.trailing_zeros() as usize;
                    acc = f(acc, base + offset, &chunk[offset]);
                    word &= word - 1;
                }
            }
            base += WORD_BITS;
        }
        acc
    }
}

/// A block of slots whose holes are skipped with one occupancy bit per slot.
#[derive(Clone, Debug)]
pub struct MaskBlock<T> {
    /// One value per slot, live or erased.
    values: Vec<T>,
    /// Bit `i % 64` of word `i / 64` is set iff slot `i` is live; the bits
    /// past the last slot are clear.
    bits: Vec<u64>,
}

impl<T> MaskBlock<T> {
    /// A block holding `values`, where slot `i` is live iff `live[i]`.
    ///
    /// # Panics
    ///
    /// If `values` and `live` differ in length.
    pub fn new(values: Vec<T>, live: &[bool]) -> Self {
        assert_eq!(values.len(), live.len(), "one occupancy flag per slot");
        let mut bits = vec![0u64; values.len().div_ceil(WORD_BITS)];
        for (i, _) in live.iter().enumerate().filter(|&(_, &l)| l) {
            bits[i / WORD_BITS] |= 1 << (i % WORD_BITS);
        }
        MaskBlock { values, bits }
    }

    /// The number of slots, live or erased.
    pub fn slots(&self) -> usize {
        self.values.len()
    }

    /// The occupancy words.
    pub fn words(&self) -> &[u64] {
        &self.bits
    }
}

/// Splits the slots `0..live.len()` into blocks of at most `block_slots`
/// slots, slot `i` holding `make(i)`, and builds each block with `build`
/// (such as [`SkipfieldBlock::new`] or [`MaskBlock::new`]).
///
/// # Panics
///
/// If `block_slots` is 0.
pub fn split_blocks<T, B>(
    live: &[bool],
    block_slots: usize,
    mut make: impl FnMut(usize) -> T,
    build: impl Fn(Vec<T>, &[bool]) -> B,
) -> Vec<B> {
    assert!(block_slots > 0, "a block holds at least one slot");
    live.chunks(block_slots)
        .enumerate()
        .map(|(b, flags)| {
            let base = b * block_slots;
            let values = (base..base + flags.len()).map(&mut make).collect();
            build(values, flags)
        })
        .collect()
}

/// An occupancy pattern: which of `n` slots are live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Every slot live.
    Full,
    /// Each slot erased with probability 1/2, independently.
    Half,
    /// Each slot erased with probability 9/10, independently.
    Sparse,
    /// About 10% live, in runs: live runs of 16..=48 slots (mean 32)
    /// alternating with erased runs of 144..=432 slots (mean 288).
    Clustered,
    /// Even slots live, odd slots erased.
    EveryOther,
}

impl Pattern {
    /// Every pattern, in report order.
    pub const ALL: [Pattern; 5] = [
        Pattern::Full,
        Pattern::Half,
        Pattern::Sparse,
        Pattern::Clustered,
        Pattern::EveryOther,
    ];

    /// The pattern's name in benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Full => "full",
            Pattern::Half => "half",
            Pattern::Sparse => "sparse",
            Pattern::Clustered => "clustered",
            Pattern::EveryOther => "every_other",
        }
    }

    /// `n` occupancy flags (`true` = live), random ones drawn from `seed`.
    pub fn generate(self, n: usize, seed: u64) -> Vec<bool> {
        let mut rng = Rng::new(seed);
        match self {
            Pattern::Full => vec![true; n],
            Pattern::Half => (0..n).map(|_| rng.below(2) == 0).collect(),
            Pattern::Sparse => (0..n).map(|_| rng.below(10) == 0).collect(),
            Pattern::Clustered => {
                let mut live = Vec::with_capacity(n);
                while live.len() < n {
                    let alive = 16 + rng.below(33);
                    let dead = 144 + rng.below(289);
                    live.extend(std::iter::repeat_n(true, alive));
                    live.extend(std::iter::repeat_n(false, dead));
                }
                live.truncate(n);
                live
            }
            Pattern::EveryOther => (0..n).map(|i| i % 2 == 0).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expected(live: &[bool]) -> Vec<usize> {
        (0..live.len()).filter(|&i| live[i]).collect()
    }

    /// The indices of the live slots of `blocks` (of `slots` slots each),
    /// in order; each block's values (their own indices) are its live
    /// indices.
    fn visited<B: LiveSlots<u64>>(blocks: &[B], slots: impl Fn(&B) -> usize) -> Vec<usize> {
        let mut got = Vec::new();
        let mut base = 0;
        for block in blocks {
            let live: Vec<usize> = block.live_indices().into_iter().map(|i| base + i).collect();
            let mut values = Vec::new();
            block.for_each(|&v| values.push(v as usize));
            assert_eq!(values, live);
            got.extend(live);
            base += slots(block);
        }
        got
    }

    /// Both schemes, split at `block_slots`, visit exactly the live slots
    /// (and the right values) in order.
    fn check(live: &[bool], block_slots: usize) {
        let want = expected(live);
        let skip = split_blocks(live, block_slots, |i| i as u64, SkipfieldBlock::new);
        let masks = split_blocks(live, block_slots, |i| i as u64, MaskBlock::new);
        for block in &skip {
            assert_eq!(block.skipfield().len(), block.slots() + 1);
            assert_eq!(block.skipfield()[block.slots()], 0, "sentinel");
        }
        let got_skip = visited(&skip, SkipfieldBlock::slots);
        assert_eq!(got_skip, want, "skipfield, blocks of {block_slots}");
        for block in &masks {
            assert_eq!(block.words().len(), block.slots().div_ceil(64));
        }
        let got_masks = visited(&masks, MaskBlock::slots);
        assert_eq!(got_masks, want, "masks, blocks of {block_slots}");
        let sum: u64 = want.iter().map(|&i| i as u64).sum();
        let sum_skip: u64 = skip.iter().map(|b| b.fold(0, |a, &v| a + v)).sum();
        let sum_masks: u64 = masks.iter().map(|b| b.fold(0, |a, &v| a + v)).sum();
        assert_eq!((sum_skip, sum_masks), (sum, sum));
    }

    fn check_all_splits(live: &[bool]) {
        for block_slots in [1, 2, 3, 63, 64, 65, 100, 128, BLOCK_SLOTS] {
            check(live, block_slots);
        }
    }

    #[test]
    fn edge_cases() {
        for n in [0, 1, 2, 3, 63, 64, 65, 127, 128, 129, 1000] {
            check_all_splits(&vec![true; n]); // none erased
            check_all_splits(&vec![false; n]); // all erased
            for hole in [0, n / 2, n.saturating_sub(1)] {
                if hole < n {
                    // A single hole, and a single live slot.
                    let mut live = vec![true; n];
                    live[hole] = false;
                    check_all_splits(&live);
                    let mut live = vec![false; n];
                    live[hole] = true;
                    check_all_splits(&live);
                }
            }
            // A run of holes at the start, at the end, and both.
            let run = n / 3;
            let start: Vec<bool> = (0..n).map(|i| i >= run).collect();
            let end: Vec<bool> = (0..n).map(|i| i < n - run).collect();
            let both: Vec<bool> = (0..n).map(|i| i >= run && i < n - run).collect();
            check_all_splits(&start);
            check_all_splits(&end);
            check_all_splits(&both);
            // Single holes between live slots, and the reverse.
            let alternate: Vec<bool> = (0..n).map(|i| i % 2 == 0).collect();
            let inverse: Vec<bool> = (0..n).map(|i| i % 2 == 1).collect();
            check_all_splits(&alternate);
            check_all_splits(&inverse);
        }
    }

    #[test]
    fn run_lengths() {
        let live = [true, false, false, false, true, false, true, false, false];
        let block = SkipfieldBlock::new(vec![0u8; live.len()], &live);
        assert_eq!(block.skipfield(), &[0, 3, 0, 3, 0, 1, 0, 2, 2, 0]);
        let all_erased = SkipfieldBlock::new(vec![0u8; 5], &[false; 5]);
        assert_eq!(all_erased.skipfield(), &[5, 0, 0, 0, 5, 0]);
    }

    #[test]
    fn largest_block() {
        let n = usize::from(u16::MAX);
        let mut live = vec![false; n];
        check(&live, n);
        live[n - 1] = true;
        check(&live, n);
        live[n - 1] = false;
        live[0] = true;
        check(&live, n);
    }

    #[test]
    fn random_patterns() {
        let mut rng = Rng::new(0x5EED);
        for _ in 0..200 {
            let n = rng.below(700);
            let one_in = 1 + rng.below(8);
            let live: Vec<bool> = (0..n).map(|_| rng.below(one_in) == 0).collect();
            check_all_splits(&live);
        }
        for pattern in Pattern::ALL {
            for n in [0, 1, 1000, 20_000] {
                let live = pattern.generate(n, 42);
                assert_eq!(live.len(), n);
                check(&live, BLOCK_SLOTS);
                check(&live, 77);
            }
        }
    }

    #[test]
    fn pattern_densities() {
        let n = 100_000;
        let live_share = |p: Pattern| {
            let live = p.generate(n, 7);
            live.iter().filter(|&&l| l).count() as f64 / n as f64
        };
        assert_eq!(live_share(Pattern::Full), 1.0);
        assert_eq!(live_share(Pattern::EveryOther), 0.5);
        assert!((live_share(Pattern::Half) - 0.5).abs() < 0.01);
        assert!((live_share(Pattern::Sparse) - 0.1).abs() < 0.01);
        assert!((live_share(Pattern::Clustered) - 0.1).abs() < 0.01);
    }
}

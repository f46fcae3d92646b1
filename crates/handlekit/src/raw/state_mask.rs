//! Occupancy read from state words: 64 state words turned into a 64-bit
//! mask of the occupied slots (bit `i` set iff word `i`'s vacant bit is
//! clear), and counts. The slot store's layouts and the pool's blocks
//! build their walks on these.

use super::bitset::WORD_BITS;
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

#[cfg(test)]
mod tests {
    use super::*;
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
}

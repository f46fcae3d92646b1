//! The iterator contract every container's iterators keep, checked
//! against the items they should yield: exact `len` and `size_hint` after
//! every step, `next` and `next_back` alone and taken in turns until they
//! meet, fusing, and the adapters that have their own paths (`fold`,
//! `rfold`, `count`, `nth`, `last`) after steps from both ends.

use std::fmt::Debug;

use super::Lcg;

/// Checks the iterators `make` gives against `expected`; `seed` picks the
/// order in which the two ends are taken.
pub fn check_double_ended<I, T>(make: impl Fn() -> I, expected: &[T], seed: u64)
where
    I: DoubleEndedIterator<Item = T> + ExactSizeIterator,
    T: PartialEq + Debug,
{
    let n = expected.len();
    let check_len = |iter: &I, left: usize| {
        assert_eq!(iter.len(), left, "len");
        assert_eq!(iter.size_hint(), (left, Some(left)), "size_hint");
    };

    // Front to back, then fused from both ends.
    let mut iter = make();
    for (taken, want) in expected.iter().enumerate() {
        check_len(&iter, n - taken);
        assert_eq!(iter.next().as_ref(), Some(want));
    }
    check_len(&iter, 0);
    assert!(iter.next().is_none() && iter.next_back().is_none() && iter.next().is_none());

    // Back to front.
    let mut iter = make();
    for (taken, want) in expected.iter().rev().enumerate() {
        check_len(&iter, n - taken);
        assert_eq!(iter.next_back().as_ref(), Some(want));
    }
    assert!(iter.next_back().is_none() && iter.next().is_none());

    // The two ends in turns, meeting where the seed says.
    let mut rng = Lcg(seed);
    let mut iter = make();
    let (mut low, mut high) = (0, n);
    while low < high {
        if rng.next() % 3 == 0 {
            high -= 1;
            assert_eq!(iter.next_back().as_ref(), Some(&expected[high]));
        } else {
            assert_eq!(iter.next().as_ref(), Some(&expected[low]));
            low += 1;
        }
        check_len(&iter, high - low);
    }
    assert!(iter.next().is_none() && iter.next_back().is_none());

    // The adapters with paths of their own, after steps from both ends.
    let front = (seed as usize % 5).min(n);
    let back = (seed as usize / 5 % 5).min(n - front);
    let rest = &expected[front..n - back];
    let stepped = || {
        let mut iter = make();
        for _ in 0..front {
            iter.next();
        }
        for _ in 0..back {
            iter.next_back();
        }
        iter
    };
    let folded = stepped().fold(Vec::new(), |mut items, item| {
        items.push(item);
        items
    });
    assert_eq!(folded, rest, "fold");
    let mut rfolded = stepped().rfold(Vec::new(), |mut items, item| {
        items.push(item);
        items
    });
    rfolded.reverse();
    assert_eq!(rfolded, rest, "rfold");
    assert_eq!(stepped().count(), rest.len(), "count");
    assert_eq!(stepped().last().as_ref(), rest.last(), "last");
    let skip = seed as usize % 7;
    assert_eq!(stepped().nth(skip).as_ref(), rest.get(skip), "nth");
    assert_eq!(
        stepped().nth_back(skip).as_ref(),
        rest.iter().rev().nth(skip),
        "nth_back"
    );
}

//! Both ends of an iterator, taken in an order the fuzzer picks: shared by
//! the targets whose containers' iterators are double-ended.

/// The items of `iter` in iteration order, taken from the front or the
/// back as the bits of `ends` say (bit `i % 58` for step `i`), until the
/// two ends meet or, after `ends >> 58` steps, a `fold` takes the rest.
/// The length must match what is left after every step, and the iterator
/// must stay empty once it is.
pub fn walk_both_ends<I>(mut iter: I, ends: u64) -> Vec<I::Item>
where
    I: DoubleEndedIterator + ExactSizeIterator,
{
    let total = iter.len();
    let fold_after = (ends >> 58) as usize;
    let mut front = Vec::new();
    let mut back = Vec::new();
    for step in 0.. {
        assert_eq!(
            iter.len(),
            total - front.len() - back.len(),
            "len after {step} steps"
        );
        assert_eq!(iter.size_hint(), (iter.len(), Some(iter.len())));
        if step == fold_after {
            front = iter.fold(front, |mut items, item| {
                items.push(item);
                items
            });
            break;
        }
        let item = if ends >> (step % 58) & 1 == 1 {
            iter.next_back().map(|item| back.push(item))
        } else {
            iter.next().map(|item| front.push(item))
        };
        if item.is_none() {
            assert!(iter.next().is_none() && iter.next_back().is_none(), "fused");
            break;
        }
    }
    assert_eq!(front.len() + back.len(), total, "items taken");
    back.reverse();
    front.extend(back);
    front
}

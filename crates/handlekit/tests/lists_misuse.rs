//! Misuse of `IndexLists`: stale and foreign node keys, stale copies of
//! heads, heads of other pools, copies of one head passed as two lists,
//! incomplete or duplicated heads for `compact`, and hostile serialized
//! pools. Every case must give a clear error or panic (never UB, never a
//! broken pool): after each one the pool's invariant checker runs and the
//! lists are compared with what they held before.

use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use handlekit::{Head, Id, IndexLists, Key, LinkError};

/// Three lists: `[0, 1, 2]`, `[10, 11]`, `[20]` (front first), in slots
/// `[2, 1, 0]`, `[4, 3]`, `[5]`.
fn three_lists() -> (IndexLists<u32>, [Head; 3]) {
    let mut pool = IndexLists::new();
    let mut heads = [Head::EMPTY; 3];
    for (list, values) in [[2, 1, 0].as_slice(), &[11, 10], &[20]].iter().enumerate() {
        for &value in *values {
            pool.push_front(&mut heads[list], value);
        }
    }
    (pool, heads)
}

fn contents(pool: &IndexLists<u32>, heads: &[Head]) -> Vec<Vec<u32>> {
    heads
        .iter()
        .map(|&head| pool.iter(head).copied().collect())
        .collect()
}

/// Keeps the expected panics (the pool's own messages) out of the test
/// output; other panics are reported as usual.
fn quiet_pool_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !message.starts_with("IndexLists") {
                default(info);
            }
        }));
    });
}

/// Runs `f`, which must panic with a message containing `needle`.
fn assert_panics_with<R>(needle: &str, f: impl FnOnce() -> R) {
    quiet_pool_panics();
    let result = catch_unwind(AssertUnwindSafe(f));
    let Err(payload) = result else {
        panic!("expected a panic mentioning {needle:?}");
    };
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        message.contains(needle),
        "panic message {message:?} does not mention {needle:?}"
    );
}

/// Every operation that takes a head, given `head`, must panic and leave
/// the pool as it was.
fn every_head_operation_panics(pool: &mut IndexLists<u32>, heads: &[Head; 3], head: Head) {
    let before = contents(pool, heads);
    let len = pool.len();
    let needle = "is not the head of a list";
    assert!(!pool.is_head(head));
    assert_panics_with(needle, || pool.front(head));
    assert_panics_with(needle, || pool.iter(head).count());
    assert_panics_with(needle, || pool.keys(head).count());
    assert_panics_with(needle, || pool.iter_mut(head).count());
    assert_panics_with(needle, || pool.push_front(&mut head.clone(), 99));
    assert_panics_with(needle, || pool.try_push_front(&mut head.clone(), 99));
    assert_panics_with(needle, || pool.pop_front(&mut head.clone()));
    assert_panics_with(needle, || pool.clear_list(&mut head.clone()));
    let some_key = pool.front(heads[0]).unwrap();
    assert_panics_with(needle, || pool.remove(&mut head.clone(), some_key));
    let mut good = heads[2];
    assert_panics_with(needle, || pool.move_front(&mut head.clone(), &mut good));
    let mut good = heads[2];
    assert_panics_with(needle, || pool.move_front(&mut good, &mut head.clone()));
    let second = pool.next_node(some_key).unwrap();
    assert_panics_with(needle, || {
        pool.move_after(some_key, second, &mut head.clone())
    });
    assert_panics_with(needle, || {
        pool.move_node(&mut head.clone(), some_key, &mut good.clone())
    });
    assert_panics_with(needle, || {
        pool.move_node(&mut heads[0].clone(), some_key, &mut head.clone())
    });
    let mut with_bad = [heads[0], heads[1], heads[2], head];
    assert_panics_with(needle, || pool.redistribute(&mut with_bad, 3, |_| 0));
    let mut with_bad = [heads[0], heads[1], heads[2], head];
    assert_panics_with(needle, || pool.redistribute(&mut with_bad, 0, |_| 3));
    let mut with_bad = [heads[0], heads[1], heads[2], head];
    assert_panics_with("is not the head of a list", || pool.compact(&mut with_bad));
    pool.check_invariants();
    assert_eq!(pool.len(), len);
    assert_eq!(
        contents(pool, heads),
        before,
        "a refused operation changed a list"
    );
}

#[test]
fn stale_copy_of_a_head_panics() {
    let (mut pool, mut heads) = three_lists();
    // A copy taken before a push names the old front, now second.
    let copy = heads[0];
    pool.push_front(&mut heads[0], 100);
    every_head_operation_panics(&mut pool, &heads, copy);
}

#[test]
fn head_of_a_popped_node_panics() {
    let (mut pool, mut heads) = three_lists();
    let copy = heads[2];
    assert_eq!(pool.pop_front(&mut heads[2]), Some(20));
    assert!(heads[2].is_empty());
    every_head_operation_panics(&mut pool, &heads, copy);
}

#[test]
fn head_of_another_pool_panics_unless_it_names_a_front_here() {
    let (mut pool, heads) = three_lists();
    // A bigger pool: its heads name indices this pool does not have.
    let mut other = IndexLists::new();
    let mut far = Head::EMPTY;
    for value in 0..10 {
        other.push_front(&mut far, value);
    }
    every_head_operation_panics(&mut pool, &heads, far);

    // A head of another pool at an index that is a middle node here.
    let mut other = IndexLists::new();
    let mut near = Head::EMPTY;
    other.push_front(&mut near, 0u32);
    other.push_front(&mut near, 1);
    assert!(!pool.is_head(near), "slot 1 is the middle of list 0 here");
    every_head_operation_panics(&mut pool, &heads, near);

    // A foreign head that happens to name a front here is accepted and acts
    // on that list: a wrong answer, but the pool stays sound.
    let mut other = IndexLists::new();
    let mut alias = Head::EMPTY;
    for value in 0..5 {
        other.push_front(&mut alias, value);
    }
    // Slot 4 holds the front of list 1 (`10`) in `pool`.
    assert!(pool.is_head(alias));
    assert_eq!(pool.iter(alias).copied().collect::<Vec<_>>(), [10, 11]);
    pool.push_front(&mut alias, 9);
    pool.check_invariants();
    assert!(
        !pool.is_head(heads[1]),
        "the real head of list 1 went stale"
    );
}

#[test]
fn copies_of_one_head_are_not_two_lists() {
    let (mut pool, heads) = three_lists();
    let before = contents(&pool, &heads);
    let (mut a, mut b) = (heads[0], heads[0]);
    assert_panics_with("copies of one head", || pool.move_front(&mut a, &mut b));
    let (mut a, mut b) = (heads[0], heads[0]);
    let front = pool.front(heads[0]).unwrap();
    assert_panics_with("copies of one head", || {
        pool.move_node(&mut a, front, &mut b)
    });
    let mut twice = [heads[0], heads[0]];
    assert_panics_with("name the same list", || {
        pool.redistribute(&mut twice, 0, |_| 1)
    });
    let mut twice = [heads[0], heads[1], heads[2], heads[0]];
    assert_panics_with("same list as an earlier head", || pool.compact(&mut twice));
    pool.check_invariants();
    assert_eq!(contents(&pool, &heads), before);
    // Moving an empty list's front is a no-op even between copies.
    let (mut e, mut f) = (Head::EMPTY, Head::EMPTY);
    assert_eq!(pool.move_front(&mut e, &mut f), None);
}

#[test]
fn compact_needs_every_list_and_changes_nothing_otherwise() {
    let (mut pool, heads) = three_lists();
    let keys: Vec<Id> = heads.iter().flat_map(|&head| pool.keys(head)).collect();
    let before = contents(&pool, &heads);
    let mut missing_one = [heads[0], heads[2]];
    assert_panics_with("reach 4 of the pool's 6 nodes", || {
        pool.compact(&mut missing_one)
    });
    assert_eq!(missing_one, [heads[0], heads[2]]);
    pool.check_invariants();
    assert_eq!(contents(&pool, &heads), before);
    for key in keys {
        assert!(pool.contains(key), "a refused compact made {key:?} stale");
    }
}

#[test]
fn stale_and_foreign_node_keys_miss() {
    let (mut pool, mut heads) = three_lists();
    let front = pool.front(heads[0]).unwrap();
    let second = pool.next_node(front).unwrap();
    assert_eq!(pool.pop_front(&mut heads[0]), Some(0));
    // `front` is stale; its slot is reused by the next push.
    let reused = pool.push_front(&mut heads[1], 50);
    assert_eq!(reused.index(), front.index());
    assert_ne!(reused, front);
    assert!(!pool.contains(front));
    assert_eq!(pool.get(front), None);
    assert_eq!(pool.get_mut(front), None);
    assert_eq!(pool.next_node(front), None);
    assert_eq!(pool.remove(&mut heads[1], front), None);
    assert_panics_with("names no live node", || pool[front]);

    let before = contents(&pool, &heads);
    let mut to = heads[2];
    assert_eq!(
        pool.move_after(front, second, &mut to),
        Err(LinkError::StalePrev)
    );
    assert_eq!(
        pool.move_after(second, front, &mut to),
        Err(LinkError::StaleNode)
    );
    let third = pool.next_node(second).unwrap();
    assert_eq!(
        pool.move_after(third, second, &mut to),
        Err(LinkError::NotLinked)
    );
    assert_eq!(to, heads[2]);
    // A live node is not in a list it does not belong to.
    assert_eq!(pool.remove(&mut heads[2], second), None);
    assert_eq!(contents(&pool, &heads), before);

    // Forged keys: past the end, generation 0 (never issued), a wrong
    // generation.
    for bits in [
        Id::from_parts(1000, 1).unwrap().to_bits(),
        second.index() as u64,
        Id::from_parts(second.index(), second.generation() + 1)
            .unwrap()
            .to_bits(),
    ] {
        if let Some(forged) = Id::from_bits(bits) {
            assert_eq!(pool.get(forged), None);
            assert_eq!(
                pool.move_after(second, forged, &mut to),
                Err(LinkError::StaleNode)
            );
        }
    }
    pool.check_invariants();

    // After `compact`, every old key is stale, and every new one works.
    let old: Vec<Id> = heads.iter().flat_map(|&head| pool.keys(head)).collect();
    pool.compact(&mut heads);
    for key in old {
        assert_eq!(pool.get(key), None, "{key:?} survived compact");
    }
    assert_eq!(contents(&pool, &heads), before);
}

#[test]
fn redistribute_to_a_missing_list_panics_between_moves() {
    let (mut pool, mut heads) = three_lists();
    // List 0 is [1, 2] after the pop; 1 goes to list 2, then 2 asks for list 7.
    pool.pop_front(&mut heads[0]);
    assert_panics_with("returned list 7, but there are 3 heads", || {
        pool.redistribute(&mut heads, 0, |&v| if v == 1 { 2 } else { 7 })
    });
    pool.check_invariants();
    assert_eq!(
        contents(&pool, &heads),
        [vec![2], vec![10, 11], vec![1, 20]]
    );
}

#[test]
fn clear_makes_heads_and_keys_stale() {
    let (mut pool, heads) = three_lists();
    let keys: Vec<Id> = pool.keys(heads[0]).collect();
    pool.clear();
    assert!(pool.is_empty());
    for head in heads {
        assert!(!pool.is_head(head));
    }
    for key in keys {
        assert_eq!(pool.get(key), None);
    }
    // Refilled slots get new generations: the old heads name fronts again
    // only if a new list starts there, and the old keys stay stale.
    let mut fresh = Head::EMPTY;
    let key = pool.push_front(&mut fresh, 1);
    assert_eq!(key.index(), 0);
    assert!(pool.is_head(fresh));
    pool.check_invariants();
}

#[cfg(feature = "serde")]
mod hostile_serde {
    use super::*;

    fn load(json: &str) -> Result<IndexLists<u32>, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn round_trip_keeps_keys_and_heads() {
        let (pool, heads) = three_lists();
        let json = serde_json::to_string(&pool).unwrap();
        let back = load(&json).unwrap();
        back.check_invariants();
        let heads_back: [Head; 3] =
            serde_json::from_str(&serde_json::to_string(&heads).unwrap()).unwrap();
        assert_eq!(heads_back, heads);
        assert_eq!(contents(&back, &heads_back), contents(&pool, &heads));
        for (key, value) in pool.nodes() {
            assert_eq!(back.get(key), Some(value));
        }
    }

    #[test]
    fn broken_links_are_refused() {
        // Slots are `[generation, [next, value]]` or `[generation, null]`.
        let cases = [
            // A link to a slot past the end.
            (r#"{"slots":[[1,[5,0]]]}"#, "links to 5"),
            // A link to a vacant slot.
            (r#"{"slots":[[1,[1,0]],[1,null]]}"#, "links to 1"),
            // Two nodes linking to one.
            (
                r#"{"slots":[[1,[2,0]],[1,[2,1]],[1,[null,2]]]}"#,
                "two predecessors",
            ),
            // A cycle of two, and a self-loop.
            (r#"{"slots":[[1,[1,0]],[1,[0,1]]]}"#, "cycle"),
            (r#"{"slots":[[1,[0,0]]]}"#, "cycle"),
            // A link index that no pool can have.
            (r#"{"slots":[[1,[2147483647,0]]]}"#, "out of range"),
            // Generation 0 for a live node, unknown fields.
            (r#"{"slots":[[0,[null,0]]]}"#, "generation"),
            (r#"{"slots":[],"extra":1}"#, "unknown field"),
        ];
        for (json, needle) in cases {
            let error = load(json).expect_err(json).to_string();
            assert!(error.contains(needle), "{json}: {error}");
        }
        // A valid pool: two lists, 0 -> 2 and 1.
        let pool = load(r#"{"slots":[[3,[2,10]],[1,[null,11]],[2,[null,12]]]}"#).unwrap();
        pool.check_invariants();
        let head: Head = serde_json::from_str("0").unwrap();
        assert_eq!(pool.iter(head).copied().collect::<Vec<_>>(), [10, 12]);
        let middle: Head = serde_json::from_str("2").unwrap();
        assert!(!pool.is_head(middle));
        assert!(serde_json::from_str::<Head>("4294967295").is_err());
        assert_eq!(serde_json::from_str::<Head>("null").unwrap(), Head::EMPTY);
    }
}

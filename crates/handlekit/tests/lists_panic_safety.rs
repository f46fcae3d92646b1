//! Drop counting and panic safety for `IndexLists`.
//!
//! Every value is a [`Val`] registered with a per-test [`Tracker`], which
//! counts the drops of each value separately, so a double drop and a leak
//! are both visible. A tracker can arm one value's `Drop` or `Clone` to
//! panic. Each test asserts the exact drop count of every value, that the
//! pool's invariant checker passes afterwards, and that the lists hold
//! exactly the values that were not dropped.

use std::panic;
use std::rc::Rc;

use handlekit::{Head, IndexLists};

mod common;
use common::tracker::{assert_panics, Tracker, Val, BOOM};

/// `lists` lists of `per_list` values each; value ids are
/// `list * per_list + i`, and list `l` holds them front to back in
/// decreasing id order.
fn build(tracker: &Rc<Tracker>, lists: usize, per_list: usize) -> (IndexLists<Val>, Vec<Head>) {
    let mut pool = IndexLists::new();
    let mut heads = vec![Head::EMPTY; lists];
    for head in &mut heads {
        for _ in 0..per_list {
            pool.push_front(head, tracker.make());
        }
    }
    (pool, heads)
}

fn ids(pool: &IndexLists<Val>, head: Head) -> Vec<usize> {
    pool.iter(head).map(|val| val.id).collect()
}

#[test]
fn drop_drops_every_value_once() {
    let tracker = Tracker::new();
    let (pool, _heads) = build(&tracker, 3, 4);
    assert_eq!(tracker.created(), 12);
    tracker.drop_all(pool);
}

#[test]
fn drop_with_a_panicking_value_drops_the_rest() {
    let tracker = Tracker::new();
    let (pool, _heads) = build(&tracker, 3, 4);
    tracker.drop_panics_in(5, || drop(pool));
    tracker.assert_all_dropped_once();
}

#[test]
fn clear_with_a_panicking_value_drops_the_rest() {
    let tracker = Tracker::new();
    let (mut pool, _heads) = build(&tracker, 3, 4);
    tracker.drop_panics_in(0, || pool.clear());
    tracker.assert_all_dropped_once();
    assert!(pool.is_empty());
    pool.check_invariants();
    // The pool is usable afterwards.
    let mut head = Head::EMPTY;
    pool.push_front(&mut head, tracker.make());
    assert_eq!(pool.len(), 1);
    tracker.drop_all(pool);
}

#[test]
fn clear_list_with_a_panicking_value_keeps_the_rest_listed() {
    let tracker = Tracker::new();
    let (mut pool, mut heads) = build(&tracker, 2, 5);
    // List 0 is [4, 3, 2, 1, 0]; the drop of 2 panics.
    tracker.drop_panics_in(2, || {
        pool.clear_list(&mut heads[0]);
    });
    tracker.assert_dropped_exactly(&[4, 3, 2]);
    pool.check_invariants();
    assert_eq!(ids(&pool, heads[0]), [1, 0], "the head names what is left");
    assert_eq!(ids(&pool, heads[1]), [9, 8, 7, 6, 5]);
    pool.clear_list(&mut heads[0]);
    tracker.assert_dropped_exactly(&[4, 3, 2, 1, 0]);
    tracker.drop_all(pool);
}

#[test]
fn pop_and_remove_hand_values_out_without_dropping() {
    let tracker = Tracker::new();
    let (mut pool, mut heads) = build(&tracker, 1, 4);
    let popped = pool.pop_front(&mut heads[0]).unwrap();
    assert_eq!(popped.id, 3);
    let key = pool.keys(heads[0]).nth(1).unwrap();
    let removed = pool.remove(&mut heads[0], key).unwrap();
    assert_eq!(removed.id, 1);
    tracker.assert_dropped_exactly(&[]);
    tracker.drop_panics_in(3, || drop(popped));
    drop(removed);
    tracker.assert_dropped_exactly(&[3, 1]);
    pool.check_invariants();
    assert_eq!(ids(&pool, heads[0]), [2, 0]);
    tracker.drop_all(pool);
}

#[test]
fn redistribute_with_a_panicking_closure_keeps_every_list_whole() {
    let tracker = Tracker::new();
    let (mut pool, mut heads) = build(&tracker, 3, 6);
    let before: usize = heads.iter().map(|&h| pool.iter(h).count()).sum();
    // List 0 is [5, 4, 3, 2, 1, 0]; even ids go to list 1, odd ones to
    // list 2, and the closure panics on id 2.
    let mut calls = 0;
    assert_panics(|| {
        pool.redistribute(&mut heads, 0, |val| {
            calls += 1;
            if val.id == 2 {
                panic::panic_any(BOOM);
            }
            1 + val.id % 2
        });
    });
    assert_eq!(calls, 4);
    pool.check_invariants();
    tracker.assert_dropped_exactly(&[]);
    // 5, 4, 3 moved (to the fronts, in walk order); 2, 1, 0 stayed.
    assert_eq!(ids(&pool, heads[0]), [2, 1, 0]);
    assert_eq!(ids(&pool, heads[1]), [4, 11, 10, 9, 8, 7, 6]);
    assert_eq!(ids(&pool, heads[2]), [3, 5, 17, 16, 15, 14, 13, 12]);
    let after: usize = heads.iter().map(|&h| pool.iter(h).count()).sum();
    assert_eq!(after, before);
    tracker.drop_all(pool);
}

#[test]
fn a_panic_inside_iter_mut_changes_no_links() {
    let tracker = Tracker::new();
    let (mut pool, heads) = build(&tracker, 2, 4);
    assert_panics(|| {
        for val in pool.iter_mut(heads[1]) {
            if val.id == 5 {
                panic::panic_any(BOOM);
            }
        }
    });
    pool.check_invariants();
    assert_eq!(ids(&pool, heads[1]), [7, 6, 5, 4]);
    tracker.drop_all(pool);
}

#[test]
fn compact_moves_values_without_dropping_or_cloning() {
    let tracker = Tracker::new();
    let (mut pool, mut heads) = build(&tracker, 4, 5);
    // Scatter: move fronts around, remove some from the middle.
    for step in 0..10 {
        let (from, to) = (step % 4, (step + 1) % 4);
        let [f, t] = heads.get_disjoint_mut([from, to]).unwrap();
        pool.move_front(f, t);
    }
    let key = pool.keys(heads[2]).nth(2).unwrap();
    let removed = pool.remove(&mut heads[2], key).unwrap();
    let removed_id = removed.id;
    drop(removed);
    let before: Vec<Vec<usize>> = heads.iter().map(|&h| ids(&pool, h)).collect();
    pool.compact(&mut heads);
    pool.check_invariants();
    tracker.assert_dropped_exactly(&[removed_id]);
    assert_eq!(tracker.created(), 20, "compact cloned a value");
    let after: Vec<Vec<usize>> = heads.iter().map(|&h| ids(&pool, h)).collect();
    assert_eq!(after, before);
    tracker.drop_all(pool);
}

#[test]
fn clone_with_a_panicking_clone_drops_exactly_the_copies() {
    let tracker = Tracker::new();
    let (pool, heads) = build(&tracker, 2, 4);
    tracker.clone_panics_in(3, || pool.clone());
    // Values 0..3 were cloned (ids 8..11) before 3 panicked; the partial
    // copy dropped exactly those.
    let copies: Vec<usize> = (8..tracker.created()).collect();
    assert_eq!(copies.len(), 3);
    let mut expected = copies.clone();
    expected.sort_unstable();
    tracker.assert_dropped_exactly(&expected);
    pool.check_invariants();
    assert_eq!(ids(&pool, heads[0]), [3, 2, 1, 0]);

    // A clean clone is equal, list by list, with the same heads.
    let copy = pool.clone();
    copy.check_invariants();
    for &head in &heads {
        let original: Vec<usize> = ids(&pool, head);
        let cloned: Vec<usize> = ids(&copy, head);
        assert_eq!(original.len(), cloned.len());
        assert_ne!(original, cloned, "clones are new values");
    }
    drop(copy);
    tracker.drop_all(pool);
}

#[test]
fn clone_from_with_a_panicking_clone_leaves_a_sound_target() {
    let tracker = Tracker::new();
    let (source, _) = build(&tracker, 2, 3);
    let (mut target, _) = build(&tracker, 1, 2);
    // The target's values are ids 6, 7; the source's 0..6.
    tracker.clone_panics_in(4, || {
        target.clone_from(&source);
    });
    // The target is left empty (a partial copy would hold nodes whose
    // predecessors were never copied) and sound.
    target.check_invariants();
    assert!(target.is_empty());
    // Its old values and the partial copies (ids 8..12 of 0..4) are gone,
    // once each.
    assert_eq!(tracker.created(), 12);
    tracker.assert_dropped_exactly(&[6, 7, 8, 9, 10, 11]);
    let mut head = Head::EMPTY;
    target.push_front(&mut head, tracker.make());
    target.check_invariants();
    drop(target);
    tracker.drop_all(source);
}

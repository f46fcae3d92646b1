//! Model test: `IndexLists` against a `Vec<VecDeque<(key, value)>>`, one
//! deque per list.
//!
//! A random sequence of operations runs on a pool of `LISTS` lists and on
//! the model. The model predicts every list exactly: pushes and moves go to
//! the front, `move_after` and `remove` take a node out of the middle,
//! `redistribute` walks a list and sends nodes to the fronts of others,
//! `compact` keeps every list and makes all keys new. After every operation
//! each list's keys and values must equal the model's, every head must be
//! accepted, the storage-order iterators must agree with the model, every
//! key ever issued that the model says is dead must miss, and the pool's
//! invariant checker must pass. Clones and serde round trips (of the pool
//! and the heads) are operations too.
//!
//! The same body runs for `Id`, `Id32` and a key with 4 generation bits
//! (where slots retire constantly, and `compact` leaves holes).

use std::collections::{HashMap, VecDeque};

mod common;

use common::keys::Gen4;
use common::lists_state::ListsState;

use handlekit::{Head, Id, Id32, IndexLists, Key, LinkError};
use proptest::prelude::*;
use proptest::sample::Index as Pick;
use proptest::strategy::ValueTree;

const CASES: u32 = if cfg!(miri) { 2 } else { 256 };
const MAX_OPS: usize = if cfg!(miri) { 8 } else { 200 };
const LISTS: usize = 4;

#[derive(Clone, Debug)]
enum Op {
    PushFront(usize, u64),
    TryPushFront(usize, u64),
    PopFront(usize),
    /// Push this many values on a list and pop them again: ages slots.
    Churn(usize, u64),
    MoveFront(usize, usize),
    /// Move the node at a position ≥ 1 of a list, given its predecessor.
    MoveAfter(usize, Pick, usize),
    /// `move_after` with a wrong pair: (stale prev, stale node, unlinked).
    MoveAfterBad(Pick, Pick, u8),
    /// `move_node` of a node (from any list, or a dead one) out of a list,
    /// which may not hold it.
    MoveNode(usize, Pick, usize, bool),
    /// Remove a node (from any list) through the head of a list, which may
    /// not hold it.
    Remove(usize, Pick),
    RemoveStale(usize, Pick),
    Get(Pick, u64),
    GetStale(Pick),
    NextNode(Pick),
    IterMut(usize, u64),
    NodesMut(u64),
    /// `redistribute(list)` with targets `(value + salt) % LISTS`.
    Redistribute(usize, u64),
    /// Redistribute every list in turn.
    RedistributeAll(u64),
    /// Compact with the heads in a rotated order, with empty heads mixed in.
    Compact(usize),
    ClearList(usize),
    Clear,
    Clone,
    CloneFrom(u64),
    SerdeRoundTrip,
    TryReserve(usize),
    ShrinkToFit,
}

/// Operation weights, in the order `make_op` tries them.
const WEIGHTS: [u32; 25] = [
    24, // PushFront
    3,  // TryPushFront
    8,  // PopFront
    2,  // Churn
    6,  // MoveFront
    8,  // MoveAfter
    3,  // MoveAfterBad
    5,  // Remove
    2,  // RemoveStale
    3,  // Get
    3,  // GetStale
    2,  // NextNode
    2,  // IterMut
    1,  // NodesMut
    4,  // Redistribute
    1,  // RedistributeAll
    3,  // Compact
    1,  // ClearList
    1,  // Clear
    1,  // Clone
    1,  // CloneFrom
    2,  // SerdeRoundTrip
    1,  // TryReserve
    1,  // ShrinkToFit
    6,  // MoveNode
];

const TOTAL_WEIGHT: u32 = common::total_weight(&WEIGHTS);

/// Builds an operation from a selector in `0..TOTAL_WEIGHT` (one selector
/// rather than `prop_oneof!`, which is slow under Miri; it shrinks towards
/// `PushFront`).
fn make_op(selector: u32, value: u64, lists: [usize; 2], picks: [Pick; 2]) -> Op {
    let kind = common::kind_of(selector, &WEIGHTS);
    let [a, b] = lists;
    let [p, q] = picks;
    match kind {
        0 => Op::PushFront(a, value),
        1 => Op::TryPushFront(a, value),
        2 => Op::PopFront(a),
        3 => Op::Churn(a, 1 + value % 40),
        4 => Op::MoveFront(a, b),
        5 => Op::MoveAfter(a, p, b),
        6 => Op::MoveAfterBad(p, q, (value % 3) as u8),
        7 => Op::Remove(a, p),
        8 => Op::RemoveStale(a, p),
        9 => Op::Get(p, value),
        10 => Op::GetStale(p),
        11 => Op::NextNode(p),
        12 => Op::IterMut(a, value),
        13 => Op::NodesMut(value),
        14 => Op::Redistribute(a, value),
        15 => Op::RedistributeAll(value),
        16 => Op::Compact(a),
        17 => Op::ClearList(a),
        18 => Op::Clear,
        19 => Op::Clone,
        20 => Op::CloneFrom(value),
        21 => Op::SerdeRoundTrip,
        22 => Op::TryReserve(value as usize % 40),
        23 => Op::ShrinkToFit,
        _ => Op::MoveNode(a, p, b, value % 8 == 0),
    }
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = (
        0..TOTAL_WEIGHT,
        0u64..1000,
        [0..LISTS, 0..LISTS],
        any::<[Pick; 2]>(),
    )
        .prop_map(|(selector, value, lists, picks)| make_op(selector, value, lists, picks));
    prop::collection::vec(op, 0..MAX_OPS)
}

/// The pool under test and its model (`common/lists_state.rs`).
type Harness<K> = ListsState<K, u64, LISTS>;

/// The target of each value in a redistribution with `salt`.
fn salted(salt: u64) -> impl Fn(u64) -> usize {
    move |value| ((value + salt) % LISTS as u64) as usize
}

impl<K: Key> Harness<K> {
    fn live(&self) -> HashMap<K, u64> {
        self.model.iter().flatten().copied().collect()
    }

    /// A live node: (list, position).
    fn pick_live(&self, pick: Pick) -> Option<(usize, usize)> {
        let total: usize = self.model.iter().map(VecDeque::len).sum();
        if total == 0 {
            return None;
        }
        let mut n = pick.index(total);
        for (list, nodes) in self.model.iter().enumerate() {
            if n < nodes.len() {
                return Some((list, n));
            }
            n -= nodes.len();
        }
        unreachable!()
    }

    fn pick_dead(&self, pick: Pick) -> Option<K> {
        let live = self.live();
        let dead: Vec<K> = self
            .issued
            .iter()
            .copied()
            .filter(|key| !live.contains_key(key))
            .collect();
        (!dead.is_empty()).then(|| *pick.get(&dead))
    }

    fn push(&mut self, list: usize, value: u64, try_push: bool) {
        let key = if try_push {
            self.pool
                .try_push_front(&mut self.heads[list], value)
                .expect("room")
        } else {
            self.pool.push_front(&mut self.heads[list], value)
        };
        self.pushed(list, key, value);
    }

    fn pop(&mut self, list: usize) {
        let expected = self.model[list].pop_front().map(|(_, value)| value);
        assert_eq!(self.pool.pop_front(&mut self.heads[list]), expected);
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::PushFront(list, value) => self.push(list, value, false),
            Op::TryPushFront(list, value) => self.push(list, value, true),
            Op::PopFront(list) => self.pop(list),
            Op::Churn(list, count) => {
                for value in 0..count {
                    self.push(list, value, false);
                    self.pop(list);
                }
            }
            Op::MoveFront(from, to) => {
                if from == to {
                    // Not expressible with one `&mut` per head; copies of
                    // one head are tested in `lists_misuse.rs`.
                    return;
                }
                self.move_front(from, to);
            }
            Op::MoveAfter(list, pick, to) => {
                let len = self.model[list].len();
                if len < 2 {
                    return;
                }
                let position = 1 + pick.index(len - 1);
                let (prev, _) = self.model[list][position - 1];
                let node = self.model[list].remove(position).unwrap();
                self.pool
                    .move_after(prev, node.0, &mut self.heads[to])
                    .unwrap();
                self.model[to].push_front(node);
            }
            Op::MoveAfterBad(p, q, kind) => {
                let Some((list, position)) = self.pick_live(p) else {
                    return;
                };
                let key = self.model[list][position].0;
                let Some(dead) = self.pick_dead(q) else {
                    return;
                };
                let mut to = self.heads[(list + 1) % LISTS];
                let (prev, node, error) = match kind {
                    0 => (dead, key, LinkError::StalePrev),
                    1 => (key, dead, LinkError::StaleNode),
                    _ => {
                        // A live node that does not follow `key`.
                        let next = self.model[list].get(position + 1).map(|&(k, _)| k);
                        let other = self
                            .model
                            .iter()
                            .flatten()
                            .map(|&(k, _)| k)
                            .find(|&k| Some(k) != next);
                        let Some(other) = other else { return };
                        (key, other, LinkError::NotLinked)
                    }
                };
                let before = to;
                assert_eq!(self.pool.move_after(prev, node, &mut to), Err(error));
                assert_eq!(to, before, "a refused move changed the head");
            }
            Op::MoveNode(from, pick, to, dead) => {
                if from == to {
                    return;
                }
                let (key, holder) = if dead {
                    let Some(key) = self.pick_dead(pick) else {
                        return;
                    };
                    (key, None)
                } else {
                    let Some((holder, position)) = self.pick_live(pick) else {
                        return;
                    };
                    (self.model[holder][position].0, Some((holder, position)))
                };
                let [f, t] = self.heads.get_disjoint_mut([from, to]).unwrap();
                let (f_before, t_before) = (*f, *t);
                let moved = self.pool.move_node(f, key, t);
                match holder {
                    None => assert_eq!(moved, Err(LinkError::StaleNode)),
                    Some((holder, position)) if holder == from => {
                        assert_eq!(moved, Ok(()));
                        let node = self.model[from].remove(position).unwrap();
                        self.model[to].push_front(node);
                    }
                    Some(_) => assert_eq!(moved, Err(LinkError::NotInList)),
                }
                if moved.is_err() {
                    assert_eq!((self.heads[from], self.heads[to]), (f_before, t_before));
                }
            }
            Op::Remove(list, pick) => {
                let Some((holder, position)) = self.pick_live(pick) else {
                    return;
                };
                let (key, value) = self.model[holder][position];
                let removed = self.pool.remove(&mut self.heads[list], key);
                if holder == list {
                    assert_eq!(removed, Some(value));
                    self.model[list].remove(position);
                } else {
                    assert_eq!(removed, None, "removed a node of another list");
                }
            }
            Op::RemoveStale(list, pick) => {
                if let Some(dead) = self.pick_dead(pick) {
                    assert_eq!(self.pool.remove(&mut self.heads[list], dead), None);
                }
            }
            Op::Get(pick, value) => {
                let Some((list, position)) = self.pick_live(pick) else {
                    return;
                };
                let (key, old) = self.model[list][position];
                assert!(self.pool.contains(key));
                assert_eq!(self.pool.get(key), Some(&old));
                assert_eq!(self.pool[key], old);
                *self.pool.get_mut(key).unwrap() = value;
                self.pool[key] += 1;
                self.model[list][position].1 = value + 1;
            }
            Op::GetStale(pick) => {
                if let Some(dead) = self.pick_dead(pick) {
                    assert!(!self.pool.contains(dead));
                    assert_eq!(self.pool.get(dead), None);
                    assert_eq!(self.pool.get_mut(dead), None);
                    assert_eq!(self.pool.next_node(dead), None);
                }
            }
            Op::NextNode(pick) => {
                let Some((list, position)) = self.pick_live(pick) else {
                    return;
                };
                let key = self.model[list][position].0;
                let next = self.model[list].get(position + 1).map(|&(k, _)| k);
                assert_eq!(self.pool.next_node(key), next);
            }
            Op::IterMut(list, add) => {
                for value in self.pool.iter_mut(self.heads[list]) {
                    *value += add;
                }
                for node in &mut self.model[list] {
                    node.1 += add;
                }
            }
            Op::NodesMut(add) => {
                let mut seen = 0;
                for (key, value) in self.pool.nodes_mut() {
                    *value += add;
                    assert!(self.issued_set.contains(&key));
                    seen += 1;
                }
                assert_eq!(seen, self.pool.len());
                for node in self.model.iter_mut().flatten() {
                    node.1 += add;
                }
            }
            Op::Redistribute(list, salt) => self.redistribute(list, salted(salt)),
            Op::RedistributeAll(salt) => {
                for list in 0..LISTS {
                    self.redistribute(list, salted(salt));
                }
            }
            Op::Compact(rotation) => self.compact(rotation),
            Op::ClearList(list) => self.clear_list(list),
            Op::Clear => self.clear(),
            Op::Clone => {
                let copy = self.pool.clone();
                copy.check_invariants();
                self.pool = copy;
            }
            Op::CloneFrom(seed) => {
                // A target with its own nodes and lists, overwritten.
                let mut target: IndexLists<u64, K> = IndexLists::default();
                let mut junk = Head::EMPTY;
                for value in 0..seed % 7 {
                    target.push_front(&mut junk, value);
                }
                target.clone_from(&self.pool);
                target.check_invariants();
                self.pool = target;
            }
            Op::SerdeRoundTrip => {
                #[cfg(feature = "serde")]
                {
                    let json = serde_json::to_string(&self.pool).unwrap();
                    let back: IndexLists<u64, K> = serde_json::from_str(&json).unwrap();
                    assert_eq!(serde_json::to_string(&back).unwrap(), json);
                    self.pool = back;
                    let heads = serde_json::to_string(&self.heads).unwrap();
                    self.heads = serde_json::from_str(&heads).unwrap();
                }
            }
            Op::TryReserve(additional) => {
                if self.pool.try_reserve(additional).is_ok() {
                    assert!(self.pool.capacity() >= self.pool.len() + additional);
                }
            }
            Op::ShrinkToFit => {
                self.pool.shrink_to_fit();
                assert!(self.pool.capacity() >= self.pool.len());
            }
        }
    }

    fn compact(&mut self, rotation: usize) {
        // Heads in a rotated order, with an empty head between each pair.
        let order: Vec<usize> = (0..LISTS).map(|i| (i + rotation) % LISTS).collect();
        let mut heads: Vec<Head> = order
            .iter()
            .flat_map(|&list| [self.heads[list], Head::EMPTY])
            .collect();
        self.pool.compact(&mut heads);
        for (i, &list) in order.iter().enumerate() {
            self.heads[list] = heads[2 * i];
            assert!(heads[2 * i + 1].is_empty());
        }
        // Same values in the same order; every key is new.
        let mut slots = Vec::new();
        for &list in &order {
            let keys: Vec<K> = self.pool.keys(self.heads[list]).collect();
            assert_eq!(keys.len(), self.model[list].len(), "list {list} length");
            for (node, &key) in self.model[list].iter_mut().zip(&keys) {
                assert!(!self.pool.contains(node.0), "{:?} survived compact", node.0);
                node.0 = key;
                slots.push(key.index());
            }
            for &key in &keys {
                self.issue(key);
            }
        }
        // Contiguous: strictly increasing slots in head order, and the only
        // holes below the last are retired slots.
        assert!(
            slots.windows(2).all(|pair| pair[0] < pair[1]),
            "lists are not laid out in head order: {slots:?}"
        );
        if let Some(&last) = slots.last() {
            let holes = last + 1 - slots.len();
            assert!(
                holes <= self.pool.retired_count(),
                "{holes} holes but {} retired slots: {slots:?}",
                self.pool.retired_count()
            );
            if self.pool.retired_count() == 0 {
                assert_eq!(slots, (0..slots.len()).collect::<Vec<_>>());
            }
        }
    }

    /// The shared checks (every list, every key issued), and the fronts,
    /// `is_empty`, `size_hint` and `nodes()` against the model.
    fn check(&self) {
        self.check_lists();
        let pool = &self.pool;
        let total: usize = self.model.iter().map(VecDeque::len).sum();
        assert_eq!(pool.is_empty(), total == 0);
        for (list, nodes) in self.model.iter().enumerate() {
            let head = self.heads[list];
            assert_eq!(head.is_empty(), nodes.is_empty());
            assert_eq!(pool.front(head), nodes.front().map(|&(key, _)| key));
            let (low, high) = pool.iter(head).size_hint();
            assert!(low <= nodes.len() && high.is_some_and(|high| high >= nodes.len()));
        }
        let nodes: HashMap<K, u64> = pool.nodes().map(|(key, &value)| (key, value)).collect();
        assert_eq!(nodes, self.live(), "nodes() disagrees with the lists");
    }
}

fn run<K: Key>(ops: &[Op]) {
    let mut harness = Harness::<K>::new();
    for (step, op) in ops.iter().enumerate() {
        harness.apply(op);
        if !common::check_after(step, ops.len()) {
            continue;
        }
        // Catch the step that broke something, with its operation.
        let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| harness.check()));
        if let Err(panic) = checked {
            eprintln!("check failed after step {step}: {op:?}");
            std::panic::resume_unwind(panic);
        }
    }
    // Debug formatting walks every node.
    let _ = format!("{:?}", harness.pool);
}

proptest! {
    #![proptest_config(common::proptest_config(CASES))]

    #[test]
    fn model_id(ops in ops()) {
        run::<Id>(&ops);
    }

    #[test]
    fn model_id32(ops in ops()) {
        run::<Id32>(&ops);
    }

    #[test]
    fn model_gen4(ops in ops()) {
        run::<Gen4>(&ops);
    }
}

/// A fixed sequence that touches every operation at least once, so the
/// model is exercised even when proptest's cases are scaled down (Miri).
#[test]
fn every_operation_once() {
    // `Pick` has no public constructor; draw them from a seeded runner.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut pick = |_: usize| {
        any::<Pick>()
            .new_tree(&mut runner)
            .expect("a pick")
            .current()
    };
    let mut ops = Vec::new();
    for i in 0..12u64 {
        ops.push(Op::PushFront(i as usize % LISTS, i * 7));
    }
    ops.extend([
        Op::TryPushFront(1, 99),
        Op::MoveFront(0, 1),
        Op::MoveAfter(1, pick(1), 2),
        Op::MoveAfter(2, pick(2), 2),
        Op::MoveNode(1, pick(20), 3, false),
        Op::MoveNode(0, pick(21), 2, false),
        Op::MoveNode(0, pick(22), 1, true),
        Op::PopFront(3),
        Op::MoveAfterBad(pick(3), pick(4), 0),
        Op::MoveAfterBad(pick(5), pick(6), 1),
        Op::MoveAfterBad(pick(7), pick(8), 2),
        Op::Remove(0, pick(9)),
        Op::Remove(1, pick(10)),
        Op::RemoveStale(2, pick(11)),
        Op::Get(pick(12), 5),
        Op::GetStale(pick(13)),
        Op::NextNode(pick(14)),
        Op::IterMut(1, 3),
        Op::NodesMut(1),
        Op::Redistribute(1, 2),
        Op::RedistributeAll(3),
        Op::Churn(2, 20),
        Op::Compact(1),
        Op::PushFront(0, 1000),
        Op::Compact(3),
        Op::SerdeRoundTrip,
        Op::Clone,
        Op::CloneFrom(5),
        Op::TryReserve(10),
        Op::ShrinkToFit,
        Op::ClearList(2),
        Op::Clear,
        Op::PushFront(1, 1),
    ]);
    // Under Miri, only the key with 4 generation bits (whose slots retire):
    // `Id` and the 32-bit key are left to the (scaled-down) proptests, as
    // this sequence costs about 12 s of Miri time per key type.
    if !cfg!(miri) {
        run::<Id>(&ops);
    }
    run::<Gen4>(&ops);
    if !cfg!(miri) {
        run::<Id32>(&ops);
    }
}

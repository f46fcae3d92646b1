//! Differential fuzzing of `IndexLists` against a model: one `VecDeque` of
//! `(key, value)` per list, front first.
//!
//! The first input byte picks the key type (`Id`, `Id32`, or `Narrow` with 4
//! generation bits, whose slots retire after 15 occupants, so `compact`
//! leaves holes). Operations run on `LISTS` lists whose heads live in an
//! array: pushes, pops, the three kinds of move (front, after a predecessor,
//! by walking), removal, redistribution, compaction, clearing, clones, serde
//! round trips, deserialization of hostile pools (arbitrary slots, then
//! every list of the result is walked and mutated), and checks that stale
//! copies of heads are refused (`is_head`). After every operation every
//! list is compared with the model, every key ever issued is checked, and
//! `check_invariants` runs. Values are boxed so sanitizers see double drops
//! and leaks.

#![no_main]

mod common;
#[path = "../../crates/handlekit/tests/common/lists_state.rs"]
mod lists_state;

use arbitrary::Arbitrary;
use common::{Input, Narrow};
use handlekit::{Head, Id, Id32, IndexLists, Key, LinkError};
use libfuzzer_sys::fuzz_target;
use lists_state::ListsState;

type Value = Box<u32>;

const LISTS: usize = 6;

#[derive(Arbitrary, Clone, Debug)]
enum Op {
    Push(u8, u32),
    Pop(u8),
    MoveFront(u8, u8),
    /// The node at a position of a list, moved after its predecessor.
    MoveAfter(u8, u8, u8),
    /// Any issued key (live, dead, or in another list), moved out of a list.
    MoveNode(u8, u16, u8),
    /// `move_after` with an arbitrary pair of issued keys.
    MoveAfterAny(u16, u16, u8),
    Remove(u8, u16),
    IterMut(u8, u32),
    NodesMut(u32),
    Redistribute(u8, u32),
    Compact(u8),
    ClearList(u8),
    Clear,
    Clone,
    CloneFrom,
    Serde,
    /// A copy of a list's head taken now, checked after `n` more pushes.
    StaleHead(u8, u8),
    /// Deserialize arbitrary slots and exercise the result.
    Hostile(Vec<(u32, Option<(Option<u32>, u32)>)>),
}

/// The pool under test and its model (shared with the lists model test).
type State<K> = ListsState<K, Value, LISTS>;

fn list(i: u8) -> usize {
    usize::from(i) % LISTS
}

/// Two different lists.
fn pair(a: u8, b: u8) -> (usize, usize) {
    let a = list(a);
    let b = (a + 1 + usize::from(b) % (LISTS - 1)) % LISTS;
    (a, b)
}

impl<K: Key> State<K> {
    fn issued_key(&self, i: u16) -> Option<K> {
        (!self.issued.is_empty()).then(|| self.issued[usize::from(i) % self.issued.len()])
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Push(l, v) => {
                let l = list(l);
                if let Ok(key) = self.pool.try_push_front(&mut self.heads[l], Box::new(v)) {
                    self.pushed(l, key, v);
                }
            }
            Op::Pop(l) => {
                let l = list(l);
                let expected = self.model[l].pop_front().map(|(_, v)| v);
                assert_eq!(
                    self.pool.pop_front(&mut self.heads[l]).map(|v| *v),
                    expected
                );
            }
            Op::MoveFront(a, b) => {
                let (a, b) = pair(a, b);
                self.move_front(a, b);
            }
            Op::MoveAfter(l, at, to) => {
                let (l, to) = (list(l), list(to));
                let len = self.model[l].len();
                if len >= 2 {
                    let position = 1 + usize::from(at) % (len - 1);
                    let prev = self.model[l][position - 1].0;
                    let node = self.model[l].remove(position).expect("in range");
                    self.pool
                        .move_after(prev, node.0, &mut self.heads[to])
                        .expect("a linked pair");
                    self.model[to].push_front(node);
                }
            }
            Op::MoveNode(a, k, b) => {
                let (a, b) = pair(a, b);
                let Some(key) = self.issued_key(k) else {
                    return;
                };
                let [from, to] = self.heads.get_disjoint_mut([a, b]).expect("two lists");
                let result = self.pool.move_node(from, key, to);
                match self.find(key) {
                    None => assert_eq!(result, Err(LinkError::StaleNode)),
                    Some((l, position)) if l == a => {
                        assert_eq!(result, Ok(()));
                        let node = self.model[a].remove(position).expect("in range");
                        self.model[b].push_front(node);
                    }
                    Some(_) => assert_eq!(result, Err(LinkError::NotInList)),
                }
            }
            Op::MoveAfterAny(p, n, to) => {
                let to = list(to);
                let (Some(prev), Some(node)) = (self.issued_key(p), self.issued_key(n)) else {
                    return;
                };
                let result = self.pool.move_after(prev, node, &mut self.heads[to]);
                match (self.find(prev), self.find(node)) {
                    (None, _) => assert_eq!(result, Err(LinkError::StalePrev)),
                    (_, None) => assert_eq!(result, Err(LinkError::StaleNode)),
                    (Some((pl, pp)), Some((nl, np))) if pl == nl && np == pp + 1 => {
                        assert_eq!(result, Ok(()));
                        let moved = self.model[nl].remove(np).expect("in range");
                        self.model[to].push_front(moved);
                    }
                    _ => assert_eq!(result, Err(LinkError::NotLinked)),
                }
            }
            Op::Remove(l, k) => {
                let l = list(l);
                let Some(key) = self.issued_key(k) else {
                    return;
                };
                let removed = self.pool.remove(&mut self.heads[l], key).map(|v| *v);
                match self.find(key) {
                    Some((holder, position)) if holder == l => {
                        let (_, v) = self.model[l].remove(position).expect("in range");
                        assert_eq!(removed, Some(v));
                    }
                    _ => assert_eq!(removed, None),
                }
            }
            Op::IterMut(l, add) => {
                let l = list(l);
                for v in self.pool.iter_mut(self.heads[l]) {
                    **v = v.wrapping_add(add);
                }
                for node in &mut self.model[l] {
                    node.1 = node.1.wrapping_add(add);
                }
            }
            Op::NodesMut(add) => {
                for (_, v) in self.pool.nodes_mut() {
                    **v = v.wrapping_add(add);
                }
                for node in self.model.iter_mut().flatten() {
                    node.1 = node.1.wrapping_add(add);
                }
            }
            Op::Redistribute(l, salt) => {
                self.redistribute(list(l), |v| ((v ^ salt) % LISTS as u32) as usize);
            }
            Op::Compact(rotation) => {
                let order: Vec<usize> = (0..LISTS)
                    .map(|i| (i + usize::from(rotation)) % LISTS)
                    .collect();
                let mut heads: Vec<Head> = order.iter().map(|&l| self.heads[l]).collect();
                self.pool.compact(&mut heads);
                let mut slots = Vec::new();
                for (&l, &head) in order.iter().zip(&heads) {
                    self.heads[l] = head;
                    let keys: Vec<K> = self.pool.keys(head).collect();
                    assert_eq!(keys.len(), self.model[l].len());
                    for (node, &key) in self.model[l].iter_mut().zip(&keys) {
                        assert!(!self.pool.contains(node.0));
                        node.0 = key;
                        slots.push(key.index());
                    }
                    for key in keys {
                        self.issue(key);
                    }
                }
                assert!(slots.windows(2).all(|w| w[0] < w[1]), "not contiguous");
                if let Some(&last) = slots.last() {
                    assert!(last + 1 - slots.len() <= self.pool.retired_count());
                }
            }
            Op::ClearList(l) => self.clear_list(list(l)),
            Op::Clear => self.clear(),
            Op::Clone => self.pool = self.pool.clone(),
            Op::CloneFrom => {
                let mut target = IndexLists::default();
                let mut junk = Head::EMPTY;
                target.push_front(&mut junk, Box::new(7));
                target.clone_from(&self.pool);
                self.pool = target;
            }
            Op::Serde => {
                let json = serde_json::to_string(&self.pool).expect("serializes");
                self.pool = serde_json::from_str(&json).expect("round trip");
                let heads = serde_json::to_string(&self.heads).expect("serializes");
                self.heads = serde_json::from_str(&heads).expect("round trip");
            }
            Op::StaleHead(l, pushes) => {
                let l = list(l);
                let copy = self.heads[l];
                for i in 0..=pushes % 4 {
                    let Ok(key) = self
                        .pool
                        .try_push_front(&mut self.heads[l], Box::new(u32::from(i)))
                    else {
                        return;
                    };
                    self.pushed(l, key, u32::from(i));
                }
                // The copy names the old front, which has a predecessor now.
                if !copy.is_empty() {
                    assert!(!self.pool.is_head(copy), "a stale head was accepted");
                }
            }
            Op::Hostile(slots) => hostile::<K>(&slots),
        }
    }
}

/// Deserializes arbitrary slots; whatever loads must be a sound pool whose
/// every list can be walked, mutated and compacted.
fn hostile<K: Key>(slots: &[(u32, Option<(Option<u32>, u32)>)]) {
    let json = serde_json::to_string(slots).expect("serializes");
    let json = format!("{{\"slots\":{json}}}");
    let Ok(mut pool) = serde_json::from_str::<IndexLists<Value, K>>(&json) else {
        return;
    };
    pool.check_invariants();
    // Every front is a head; walk and mutate every list.
    let mut heads: Vec<Head> = Vec::new();
    for (index, slot) in slots.iter().enumerate() {
        if slot.1.is_some() {
            let head: Head = serde_json::from_str(&index.to_string()).expect("a head");
            if pool.is_head(head) {
                heads.push(head);
            }
        }
    }
    let mut total = 0;
    for &head in &heads {
        for v in pool.iter_mut(head) {
            **v = v.wrapping_add(1);
            total += 1;
        }
    }
    assert_eq!(total, pool.len(), "the fronts do not reach every node");
    pool.compact(&mut heads);
    pool.check_invariants();
}

fn run<K: Key>(ops: &[Op]) {
    let mut state = State::<K>::new();
    for op in ops {
        state.apply(op.clone());
        state.check_lists();
    }
}

fuzz_target!(|input: Input<u8, Op>| {
    common::run_with_type_picked!(input.head, [Id, Id32, Narrow], run(&input.ops));
});

//! `IndexLists` beside its model, one deque of `(key, value)` per list,
//! front first: shared by `tests/lists_model.rs` (proptest) and
//! `fuzz/fuzz_targets/index_lists.rs`, which both include this file (the
//! fuzz target by path), so it needs nothing but `handlekit` and `std`.
//! Each side decodes its own operations; the ones that read the same on
//! both sides, and the checks of every list and every key ever issued, are
//! here.

// Each includer uses its own part.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Debug;

use handlekit::{Head, IndexLists, Key};

/// A value the lists hold, and what the model keeps of it.
pub trait Node {
    type Model: Copy + PartialEq + Debug;
    fn model(&self) -> Self::Model;
}

impl Node for u64 {
    type Model = u64;
    fn model(&self) -> u64 {
        *self
    }
}

/// Boxed, so sanitizers see double drops and leaks.
impl Node for Box<u32> {
    type Model = u32;
    fn model(&self) -> u32 {
        **self
    }
}

/// `LISTS` lists in one pool, their model, and every key ever issued.
pub struct ListsState<K: Key, V: Node, const LISTS: usize> {
    pub pool: IndexLists<V, K>,
    pub heads: [Head; LISTS],
    pub model: Vec<VecDeque<(K, V::Model)>>,
    /// Every key ever issued (by a push or by a compaction), in order.
    pub issued: Vec<K>,
    pub issued_set: HashSet<K>,
}

impl<K: Key, V: Node, const LISTS: usize> ListsState<K, V, LISTS> {
    pub fn new() -> Self {
        ListsState {
            pool: IndexLists::default(),
            heads: [Head::EMPTY; LISTS],
            model: vec![VecDeque::new(); LISTS],
            issued: Vec::new(),
            issued_set: HashSet::new(),
        }
    }

    pub fn issue(&mut self, key: K) {
        assert!(self.issued_set.insert(key), "{key:?} was issued twice");
        self.issued.push(key);
    }

    /// Records that `key`, holding `value`, was pushed on `list`.
    pub fn pushed(&mut self, list: usize, key: K, value: V::Model) {
        self.issue(key);
        self.model[list].push_front((key, value));
    }

    /// `move_front` between two different lists.
    pub fn move_front(&mut self, from: usize, to: usize) {
        let expected = self.model[from].pop_front();
        let [f, t] = self.heads.get_disjoint_mut([from, to]).expect("two lists");
        assert_eq!(self.pool.move_front(f, t), expected.map(|(key, _)| key));
        if let Some(node) = expected {
            self.model[to].push_front(node);
        }
    }

    /// `redistribute(list)`, sending each value to the front of the list
    /// `target` names (its own list: kept, in order).
    pub fn redistribute(&mut self, list: usize, target: impl Fn(V::Model) -> usize) {
        self.pool
            .redistribute(&mut self.heads, list, |value| target(value.model()));
        for node in std::mem::take(&mut self.model[list]) {
            let to = target(node.1);
            if to == list {
                self.model[list].push_back(node);
            } else {
                self.model[to].push_front(node);
            }
        }
    }

    pub fn clear_list(&mut self, list: usize) {
        self.pool.clear_list(&mut self.heads[list]);
        assert!(self.heads[list].is_empty());
        self.model[list].clear();
    }

    pub fn clear(&mut self) {
        self.pool.clear();
        self.heads = [Head::EMPTY; LISTS];
        for nodes in &mut self.model {
            nodes.clear();
        }
    }

    /// Where `key` is in the model: (list, position).
    pub fn find(&self, key: K) -> Option<(usize, usize)> {
        self.model.iter().enumerate().find_map(|(list, nodes)| {
            let position = nodes.iter().position(|&(k, _)| k == key)?;
            Some((list, position))
        })
    }

    /// The pool against the model: its invariants, its length, every list
    /// (its head accepted, its keys and values in order), and every key
    /// ever issued (a live one reads its value, a dead one misses).
    pub fn check_lists(&self) {
        let pool = &self.pool;
        pool.check_invariants();
        let total: usize = self.model.iter().map(VecDeque::len).sum();
        assert_eq!(pool.len(), total);
        assert_eq!(pool.nodes().len(), total);
        for (list, nodes) in self.model.iter().enumerate() {
            let head = self.heads[list];
            assert!(pool.is_head(head), "head of list {list} rejected");
            let keys: Vec<K> = pool.keys(head).collect();
            let expected: Vec<K> = nodes.iter().map(|&(key, _)| key).collect();
            assert_eq!(keys, expected, "keys of list {list}");
            let values: Vec<V::Model> = pool.iter(head).map(Node::model).collect();
            let expected: Vec<V::Model> = nodes.iter().map(|&(_, value)| value).collect();
            assert_eq!(values, expected, "values of list {list}");
        }
        let live: HashMap<K, V::Model> = self.model.iter().flatten().copied().collect();
        for &key in &self.issued {
            let expected = live.get(&key).copied();
            assert_eq!(pool.get(key).map(Node::model), expected, "{key:?}");
            assert_eq!(pool.contains(key), expected.is_some(), "{key:?}");
        }
    }
}

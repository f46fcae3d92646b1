//! `IndexLists::compact`: after a long scramble (pushes, pops, moves of
//! fronts and of middle nodes, removals, redistribution), compacting must
//! keep every list's values in order, lay the lists out one after another
//! in head order with each list's nodes in consecutive slots, make every
//! old key stale, and leave new nodes to fill the lowest free slots.

mod common;

use common::keys::Gen4;
use handlekit::{Head, Id, IndexLists, Key};

/// xorshift64*: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Scrambles `lists` lists with `steps` random operations; values are
/// unique (`counter`), so order is checked exactly.
fn scramble<K: Key>(
    pool: &mut IndexLists<u64, K>,
    heads: &mut [Head],
    steps: usize,
    rng: &mut Rng,
) {
    let mut counter = 0u64;
    let lists = heads.len();
    for _ in 0..steps {
        let a = rng.below(lists);
        let b = (a + 1 + rng.below(lists - 1)) % lists;
        match rng.below(10) {
            0..=3 => {
                pool.push_front(&mut heads[a], counter);
                counter += 1;
            }
            4 => {
                pool.pop_front(&mut heads[a]);
            }
            5 => {
                let [from, to] = heads.get_disjoint_mut([a, b]).unwrap();
                pool.move_front(from, to);
            }
            6 | 7 => {
                // Move a middle node, given its predecessor.
                let keys: Vec<K> = pool.keys(heads[a]).collect();
                if keys.len() >= 2 {
                    let i = 1 + rng.below(keys.len() - 1);
                    pool.move_after(keys[i - 1], keys[i], &mut heads[b])
                        .unwrap();
                }
            }
            8 => {
                let keys: Vec<K> = pool.keys(heads[a]).collect();
                if !keys.is_empty() {
                    let key = keys[rng.below(keys.len())];
                    assert!(pool.remove(&mut heads[a], key).is_some());
                }
            }
            _ => {
                let salt = rng.next();
                pool.redistribute(heads, a, |v| ((v ^ salt) % 3) as usize % lists);
            }
        }
    }
}

fn snapshot<K: Key>(pool: &IndexLists<u64, K>, heads: &[Head]) -> Vec<Vec<u64>> {
    heads
        .iter()
        .map(|&h| pool.iter(h).copied().collect())
        .collect()
}

/// Compacts and checks everything the doc promises.
fn compact_and_check<K: Key>(pool: &mut IndexLists<u64, K>, heads: &mut [Head]) {
    let before = snapshot(pool, heads);
    let old_keys: Vec<K> = pool.nodes().map(|(key, _)| key).collect();
    pool.compact(heads);
    pool.check_invariants();
    assert_eq!(
        snapshot(pool, heads),
        before,
        "a list lost or reordered nodes"
    );
    for key in old_keys {
        assert!(!pool.contains(key), "{key:?} survived compact");
    }
    // Slots in head order: strictly increasing, consecutive within a list,
    // and the only holes are retired slots.
    let slots: Vec<Vec<usize>> = heads
        .iter()
        .map(|&h| pool.keys(h).map(Key::index).collect())
        .collect();
    let flat: Vec<usize> = slots.iter().flatten().copied().collect();
    assert!(
        flat.windows(2).all(|w| w[0] < w[1]),
        "lists out of head order"
    );
    if pool.retired_count() == 0 {
        assert_eq!(flat, (0..pool.len()).collect::<Vec<_>>());
        for list in &slots {
            assert!(list.windows(2).all(|w| w[1] == w[0] + 1));
        }
    } else if let Some(&last) = flat.last() {
        assert!(last + 1 - flat.len() <= pool.retired_count());
    }
    // Storage order is list order now.
    let stored: Vec<u64> = pool.nodes().map(|(_, &v)| v).collect();
    let listed: Vec<u64> = before.iter().flatten().copied().collect();
    assert_eq!(stored, listed, "storage order is not list order");
}

#[test]
fn compact_after_a_long_scramble() {
    let (lists, steps) = if cfg!(miri) { (8, 300) } else { (200, 40_000) };
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    let mut pool: IndexLists<u64, Id> = IndexLists::new();
    let mut heads = vec![Head::EMPTY; lists];
    scramble(&mut pool, &mut heads, steps, &mut rng);
    assert!(pool.len() > lists, "the scramble left too few nodes");
    compact_and_check(&mut pool, &mut heads);
    // New nodes take the lowest free slot: right after the lists.
    let len = pool.len();
    let key = pool.push_front(&mut heads[0], u64::MAX);
    assert_eq!(key.index(), len);
    // Compacting a compact pool keeps the layout.
    pool.pop_front(&mut heads[0]);
    let layout: Vec<Vec<usize>> = heads
        .iter()
        .map(|&h| pool.keys(h).map(Key::index).collect())
        .collect();
    compact_and_check(&mut pool, &mut heads);
    let again: Vec<Vec<usize>> = heads
        .iter()
        .map(|&h| pool.keys(h).map(Key::index).collect())
        .collect();
    assert_eq!(again, layout);
    // And scrambling and compacting again works the same.
    scramble(&mut pool, &mut heads, steps / 4, &mut rng);
    compact_and_check(&mut pool, &mut heads);
}

#[test]
fn compact_with_retired_slots_skips_them() {
    // Under Miri, two rounds: the first retires a slot before its
    // compaction, the second compacts a compacted pool.
    let (lists, steps, rounds) = common::scaled((4, 100, 2), (16, 4000, 20));
    let mut rng = Rng(0xDEAD_BEEF_0000_0001);
    let mut pool: IndexLists<u64, Gen4> = IndexLists::default();
    let mut heads = vec![Head::EMPTY; lists];
    for round in 0..rounds {
        // Reuse one slot until it retires (LIFO reuse takes it every time),
        // so holes appear even in short runs.
        for value in 0..16 {
            pool.push_front(&mut heads[round % lists], value);
            pool.pop_front(&mut heads[round % lists]);
        }
        scramble(&mut pool, &mut heads, steps, &mut rng);
        compact_and_check(&mut pool, &mut heads);
    }
    // With 4 generation bits and a compaction per round, slots retire.
    assert!(pool.retired_count() > 0, "the test never retired a slot");
}

#[test]
fn compact_edge_cases() {
    // An empty pool, with and without heads.
    let mut pool: IndexLists<u64> = IndexLists::new();
    pool.compact(&mut []);
    let mut heads = [Head::EMPTY; 3];
    pool.compact(&mut heads);
    assert_eq!(heads, [Head::EMPTY; 3]);
    // Only empty lists among the heads, then one list of one node.
    pool.push_front(&mut heads[1], 7);
    pool.compact(&mut heads);
    assert!(heads[0].is_empty() && heads[2].is_empty());
    assert_eq!(pool.keys(heads[1]).map(Key::index).collect::<Vec<_>>(), [0]);
    // A pool that once held many nodes shrinks its layout to the front.
    let mut many = Head::EMPTY;
    for v in 0..100 {
        pool.push_front(&mut many, v);
    }
    for _ in 0..95 {
        pool.pop_front(&mut many);
    }
    let mut all = [heads[1], many];
    pool.compact(&mut all);
    let slots: Vec<usize> = all
        .iter()
        .flat_map(|&h| pool.keys(h))
        .map(Key::index)
        .collect();
    assert_eq!(slots, [0, 1, 2, 3, 4, 5]);
    assert_eq!(
        pool.iter(all[1]).copied().collect::<Vec<_>>(),
        [4, 3, 2, 1, 0]
    );
}

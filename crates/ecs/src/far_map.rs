//! [`FarMap`]: a sparse set's entries for the entity indices past its flat
//! index.

/// Entity index → a sparse set's entry (one past a value's position, never
/// 0), for the entity indices past the set's flat index.
///
/// Open addressing with linear probing over a power-of-two table at most
/// half full, homed by the low bits of the index times an odd constant,
/// an empty slot holding the entry 0. Its lookup is a short inline loop
/// that calls nothing. That matters though the map is rarely reached: a
/// loop of component lookups holds this path, and with a call on it (to a
/// hash map's lookup), the optimizer kept the loop's running values in
/// memory rather than in registers the call would clobber, and a query's
/// `get` took 1.8x as long.
#[derive(Default)]
pub(crate) struct FarMap {
    /// `(entity index, entry)`, the entry 0 for an empty slot. Invariant:
    /// empty, or a power of two long and at least twice `len`, so a probe
    /// meets an empty slot; a key sits at its home slot or after it with
    /// no empty slot between (`remove` shifts entries back to keep this).
    slots: Box<[(u32, u32)]>,
    /// The number of entries.
    len: usize,
}

impl FarMap {
    /// The slot where `key`'s probe starts (`slots` not empty).
    #[inline]
    fn home(&self, key: u32) -> usize {
        // The product's low bits mix all of the key's low bits, and are a
        // bijection of them: neighbouring indices get distinct homes.
        (key.wrapping_mul(0x9E37_79B9) as usize) & (self.slots.len() - 1)
    }

    /// The slot holding `key`, or the empty slot where its probe ends
    /// (`slots` not empty).
    #[inline]
    fn find(&self, key: u32) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let (found, entry) = self.slots[i];
            if entry == 0 || found == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The entry of `key`, or 0. With no panic path (`get`, not
    /// indexing), so that a sparse set's lookup calls nothing (see
    /// `SparseSet::position`).
    #[inline]
    pub(crate) fn get(&self, key: u32) -> u32 {
        if self.len == 0 {
            return 0;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        while let Some(&(found, entry)) = self.slots.get(i) {
            if entry == 0 || found == key {
                return entry;
            }
            i = (i + 1) & mask;
        }
        0
    }

    /// Sets the entry of `key` to `entry` (not 0).
    pub(crate) fn insert(&mut self, key: u32, entry: u32) {
        debug_assert_ne!(entry, 0, "0 marks an empty slot");
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let i = self.find(key);
        if self.slots[i].1 == 0 {
            self.len += 1;
        }
        self.slots[i] = (key, entry);
    }

    /// Removes the entry of `key`, if any, shifting the entries after it
    /// back so that every probe still meets them.
    pub(crate) fn remove(&mut self, key: u32) {
        if self.len == 0 {
            return;
        }
        let mask = self.slots.len() - 1;
        let mut hole = self.find(key);
        if self.slots[hole].1 == 0 {
            return;
        }
        let mut next = (hole + 1) & mask;
        loop {
            let (moved, entry) = self.slots[next];
            if entry == 0 {
                break;
            }
            // The entry may fill the hole if the hole lies on its probe,
            // from its home up to where it sits.
            let home = self.home(moved);
            if next.wrapping_sub(home) & mask >= next.wrapping_sub(hole) & mask {
                self.slots[hole] = (moved, entry);
                hole = next;
            }
            next = (next + 1) & mask;
        }
        self.slots[hole] = (0, 0);
        self.len -= 1;
    }

    /// Twice the slots (at least 8), every entry placed anew.
    fn grow(&mut self) {
        let slots = (2 * self.slots.len()).max(8);
        let old = std::mem::replace(&mut self.slots, vec![(0, 0); slots].into_boxed_slice());
        self.len = 0;
        for (key, entry) in old.into_vec() {
            if entry != 0 {
                self.insert(key, entry);
            }
        }
    }

    /// Keeps the entries for which `keep(key, entry)` is true.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(u32, u32) -> bool) {
        let old = std::mem::take(&mut self.slots);
        let len = std::mem::take(&mut self.len);
        if len == 0 {
            return;
        }
        self.slots = vec![(0, 0); old.len()].into_boxed_slice();
        for (key, entry) in old.into_vec() {
            if entry != 0 && keep(key, entry) {
                self.insert(key, entry);
            }
        }
    }

    /// Whether the map holds no entry.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every entry, keeping the table.
    pub(crate) fn clear(&mut self) {
        self.slots.fill((0, 0));
        self.len = 0;
    }

    /// The bytes of the table.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.slots.len() * size_of::<(u32, u32)>()
    }

    /// The keys, in no order.
    #[cfg(test)]
    pub(crate) fn keys(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .filter(|&&(_, entry)| entry != 0)
            .map(|&(key, _)| key)
    }
}

#[cfg(test)]
mod tests {
    use super::FarMap;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u32, u32),
        Remove(u32),
        Retain(u32),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        // Keys from a small range, and some that share their home slot
        // (multiples of a power of two), so probes run long and removals
        // shift entries back across the table's end.
        let key = prop_oneof![0u32..64, (0u32..16).prop_map(|k| k << 10), any::<u32>()];
        prop_oneof![
            4 => (key.clone(), 1u32..).prop_map(|(k, e)| Op::Insert(k, e)),
            3 => key.prop_map(Op::Remove),
            1 => (2u32..5).prop_map(Op::Retain),
            1 => Just(Op::Clear),
        ]
    }

    /// Operations a case: fewer under Miri, where every step's full check
    /// against the model costs seconds.
    const MAX_OPS: usize = if cfg!(miri) { 30 } else { 200 };

    proptest! {
        #![proptest_config(crate::test_config::proptest_config(4, 256))]

        /// The map against a `HashMap` model.
        #[test]
        fn far_map_matches_a_hash_map(ops in proptest::collection::vec(op(), 0..MAX_OPS)) {
            let mut map = FarMap::default();
            let mut model: HashMap<u32, u32> = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(key, entry) => {
                        map.insert(key, entry);
                        model.insert(key, entry);
                    }
                    Op::Remove(key) => {
                        map.remove(key);
                        model.remove(&key);
                    }
                    Op::Retain(modulus) => {
                        map.retain(|key, _| key % modulus != 0);
                        model.retain(|key, _| key % modulus != 0);
                    }
                    Op::Clear => {
                        map.clear();
                        model.clear();
                    }
                }
                prop_assert_eq!(map.len, model.len());
                prop_assert_eq!(map.is_empty(), model.is_empty());
                prop_assert!(map.slots.is_empty() || map.slots.len() >= 2 * map.len);
                for (&key, &entry) in &model {
                    prop_assert_eq!(map.get(key), entry);
                }
                let mut keys: Vec<u32> = map.keys().collect();
                keys.sort_unstable();
                let mut expected: Vec<u32> = model.keys().copied().collect();
                expected.sort_unstable();
                prop_assert_eq!(keys, expected);
                // Keys it never held are not found.
                prop_assert_eq!(map.get(u32::MAX - 7), model.get(&(u32::MAX - 7)).copied().unwrap_or(0));
            }
        }
    }
}

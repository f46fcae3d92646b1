//! # Switching from slotmap
//!
//! This page maps every public item of the `slotmap` crate (1.x) to its
//! handlekit counterpart, says where the two differ, and says what has no
//! counterpart and why. Every example below is a doc test: it compiles and
//! runs against this version of handlekit.
//!
//! ## The containers
//!
//! | slotmap | handlekit | notes |
//! | --- | --- | --- |
//! | `SlotMap<K, V>` | [`IdTable<V, K>`](crate::IdTable) | an array with holes and a free list; values never move |
//! | `HopSlotMap<K, V>` | [`IdTable<V, K>`](crate::IdTable) | see [HopSlotMap](#hopslotmap) |
//! | `DenseSlotMap<K, V>` | [`PackedTable<V, K>`](crate::PackedTable) | values packed in one array; removal swaps the last value in |
//! | `SecondaryMap<K, V>` | [`SecondaryMap<K, V>`](crate::SecondaryMap) | values stored by slot index, with the generation |
//! | `SparseSecondaryMap<K, V, S>` | [`SparseSecondaryMap<K, V>`](crate::SparseSecondaryMap) | a paged sparse set instead of a `HashMap`: no hasher parameter |
//! | `DefaultKey` | [`Id`](crate::Id) | 32 index bits and 31 generation bits in a `u64` |
//! | `new_key_type!` | [`define_key!`](crate::define_key) | you choose the backing (`u32`/`u64`) and the bit split |
//! | `Key` (unsafe trait) | [`Key`](crate::Key) (safe trait) | see [Keys](#keys) |
//! | `KeyData` | the key's bits: [`Key::to_bits`](crate::Key::to_bits) / [`Key::from_bits`](crate::Key::from_bits) | |
//! | `secondary::Entry`, `OccupiedEntry`, `VacantEntry` (and the `sparse_secondary` ones) | [`secondary::Entry`](crate::secondary::Entry), [`OccupiedEntry`](crate::secondary::OccupiedEntry), [`VacantEntry`](crate::secondary::VacantEntry), shared by both maps | |
//! | the iterator types (`Iter`, `IterMut`, `Keys`, `Values`, `ValuesMut`, `Drain`, `IntoIter`) | the same names in [`id_table`](crate::id_table), [`packed_table`](crate::packed_table), [`secondary`](crate::secondary) | |
//!
//! handlekit has containers slotmap has not: [`Pool`](crate::Pool) and
//! [`Hive`](crate::Hive) (values at addresses that never change, with
//! [`get_ptr`](crate::Pool::get_ptr)), [`IndexLists`](crate::IndexLists)
//! and [`VmVec`](crate::VmVec).
//!
//! ## The type-parameter order
//!
//! slotmap puts the key first (`SlotMap<K, V>`); handlekit's tables put the
//! value first and give the key a default (`IdTable<T, K = Id>`), the order
//! of `Vec<T, A = Global>`, so the common case names one type. The
//! secondary maps keep slotmap's order, `SecondaryMap<K, V>`, since the key
//! is what they are about.
//!
//! A type alias ports code written against slotmap's order:
//!
//! ```
//! use handlekit::{IdTable, Key, PackedTable};
//!
//! type SlotMap<K, V> = IdTable<V, K>;
//! type DenseSlotMap<K, V> = PackedTable<V, K>;
//!
//! handlekit::define_key! { struct NodeKey(u64; index_bits = 32); }
//! let mut nodes: SlotMap<NodeKey, &str> = SlotMap::with_key();
//! let root = nodes.insert("root");
//! let mut packed: DenseSlotMap<NodeKey, u8> = DenseSlotMap::with_key();
//! let k = packed.insert(1);
//! assert_eq!((nodes[root], packed[k]), ("root", 1));
//! # let _ = k.index();
//! ```
//!
//! ## Keys
//!
//! | slotmap | handlekit |
//! | --- | --- |
//! | `new_key_type! { pub struct Name; }` | `define_key! { pub struct Name(u64; index_bits = 32); }` (the shape of [`Id`](crate::Id)), or a narrower split such as `(u32; index_bits = 20)` |
//! | `DefaultKey` | [`Id`](crate::Id); [`Id32`](crate::Id32) for 32-bit keys |
//! | `Key::data(&self) -> KeyData` | [`Key::index`](crate::Key::index) and [`Key::generation`](crate::Key::generation), or [`Key::to_bits`](crate::Key::to_bits) |
//! | `KeyData::as_ffi(self) -> u64` | [`Key::to_bits`](crate::Key::to_bits) |
//! | `KeyData::from_ffi(u64) -> KeyData` | [`Key::from_bits`](crate::Key::from_bits), which returns `None` for bits no table issues |
//! | `From<KeyData> for K`, `K::from(data)` | [`Key::from_parts`](crate::Key::from_parts) or [`Key::from_bits`](crate::Key::from_bits) |
//! | `Key::null()`, `Key::is_null()`, `Default` for keys | `Option<K>` and `None`: every key has a niche (generation 0), so `Option<K>` is as small as `K` |
//! | `Debug` as `2v1` | `Debug` as `Name(2v1)` |
//!
//! ```
//! use handlekit::{define_key, Id, IdTable, Key};
//!
//! define_key! {
//!     /// slotmap: `new_key_type! { pub struct PlayerKey; }`
//!     pub struct PlayerKey(u64; index_bits = 32);
//!     /// A 32-bit key: a million slots, 4095 generations per slot.
//!     pub struct SmallKey(u32; index_bits = 20);
//! }
//!
//! let mut players = IdTable::with_key();
//! let p: PlayerKey = players.insert("ann");
//! assert_eq!((p.index(), p.generation()), (0, 1)); // `p.data()`
//!
//! // `KeyData::as_ffi` / `from_ffi`: the bits, validated on the way in.
//! let bits = p.to_bits();
//! assert_eq!(PlayerKey::from_bits(bits), Some(p));
//! assert_eq!(PlayerKey::from_bits(0), None); // generation 0: no key
//! assert_eq!(PlayerKey::from_parts(0, 1), Some(p));
//!
//! // `Key::null()`: an `Option`, at no cost in size.
//! let mut target: Option<PlayerKey> = None;
//! assert!(target.is_none()); // `is_null()`
//! target = Some(p);
//! assert_eq!(core::mem::size_of_val(&target), 8);
//! assert_eq!(core::mem::size_of::<Option<SmallKey>>(), 4);
//! assert_eq!(format!("{p:?}"), "PlayerKey(0v1)");
//!
//! // `DefaultKey`
//! let mut table = IdTable::new();
//! let k: Id = table.insert(1);
//! # let _ = (k, target);
//! ```
//!
//! slotmap's `Key` trait is `unsafe` to implement (since 1.0.6): its maps
//! trust a key's index after checking the version. handlekit's
//! [`Key`](crate::Key) is a safe trait: no unsafe code trusts a key, so a
//! hand-written `Key` that lies gives wrong answers, never undefined
//! behaviour. (The `*_unchecked` accessors are the exception, under their
//! `# Safety` contracts, as in slotmap.)
//!
//! ## Constructors
//!
//! The same pattern as slotmap's and `HashMap`'s: `new` and `with_capacity`
//! give the default key; `with_key` and `with_capacity_and_key` any key.
//!
//! | slotmap | handlekit |
//! | --- | --- |
//! | `SlotMap::new()` / `DenseSlotMap::new()` | [`IdTable::new`](crate::IdTable::new) / [`PackedTable::new`](crate::PackedTable::new) |
//! | `with_capacity(n)` | [`IdTable::with_capacity`](crate::IdTable::with_capacity) / [`PackedTable::with_capacity`](crate::PackedTable::with_capacity) |
//! | `with_key()` | [`IdTable::with_key`](crate::IdTable::with_key) / [`PackedTable::with_key`](crate::PackedTable::with_key) (or `Default::default()`) |
//! | `with_capacity_and_key(n)` | [`IdTable::with_capacity_and_key`](crate::IdTable::with_capacity_and_key) / [`PackedTable::with_capacity_and_key`](crate::PackedTable::with_capacity_and_key) |
//! | `SecondaryMap::new()` / `with_capacity(n)` | [`SecondaryMap::new`](crate::SecondaryMap::new) / [`SecondaryMap::with_capacity`](crate::SecondaryMap::with_capacity) (the key type comes from use: the maps have no default key) |
//! | `SparseSecondaryMap::new()` / `with_capacity(n)` | [`SparseSecondaryMap::new`](crate::SparseSecondaryMap::new) / [`SparseSecondaryMap::with_capacity`](crate::SparseSecondaryMap::with_capacity) |
//! | `SparseSecondaryMap::with_hasher(s)` / `with_capacity_and_hasher(n, s)` | none: no hashing (see [No counterpart](#no-counterpart)) |
//!
//! ```
//! use handlekit::{Id32, IdTable, PackedTable, SecondaryMap, SparseSecondaryMap};
//!
//! let mut a = IdTable::new();
//! let mut b = IdTable::with_capacity(10);
//! let mut c: IdTable<u8, Id32> = IdTable::with_key();
//! let mut d: IdTable<u8, Id32> = IdTable::with_capacity_and_key(10);
//! let (ka, kb, kc, kd) = (a.insert(1u8), b.insert(2u8), c.insert(3), d.insert(4));
//! assert!(b.capacity() >= 10 && d.capacity() >= 10);
//!
//! let mut e = PackedTable::new();
//! let mut f = PackedTable::with_capacity(10);
//! let mut g: PackedTable<u8, Id32> = PackedTable::with_key();
//! let mut h: PackedTable<u8, Id32> = PackedTable::with_capacity_and_key(10);
//! let (ke, kf, kg, kh) = (e.insert(5u8), f.insert(6u8), g.insert(7), h.insert(8));
//!
//! let mut s = SecondaryMap::new();
//! let mut t = SecondaryMap::with_capacity(10);
//! let mut u = SparseSecondaryMap::new();
//! let mut v = SparseSecondaryMap::with_capacity(10);
//! s.insert(ka, 'a');
//! t.insert(kc, 'c');
//! u.insert(kb, 'b');
//! v.insert(kd, 'd');
//! assert_eq!((s[ka], t[kc], u[kb], v[kd]), ('a', 'c', 'b', 'd'));
//! assert_eq!((e[ke], f[kf], g[kg], h[kh]), (5, 6, 7, 8));
//! ```
//!
//! ## `SlotMap`, `HopSlotMap` and `DenseSlotMap` methods
//!
//! Every method of slotmap's three primary maps, with the same meaning on
//! both [`IdTable`](crate::IdTable) and [`PackedTable`](crate::PackedTable):
//!
//! | slotmap | handlekit |
//! | --- | --- |
//! | `len`, `is_empty` | [`len`](crate::IdTable::len), [`is_empty`](crate::IdTable::is_empty) |
//! | `capacity` | [`capacity`](crate::IdTable::capacity) (retired and detached slots are not counted) |
//! | `reserve(n)` | [`reserve`](crate::IdTable::reserve) (panics if the key type cannot index that many slots) |
//! | `try_reserve(n)` (nightly, `unstable` feature) | [`try_reserve`](crate::IdTable::try_reserve), on stable, returning [`CapacityError`](crate::CapacityError) |
//! | `contains_key(k)` | [`contains_key`](crate::IdTable::contains_key) |
//! | `insert(v)` | [`insert`](crate::IdTable::insert); [`try_insert`](crate::IdTable::try_insert) returns an error instead of panicking when full |
//! | `insert_with_key(f)` | [`insert_with_key`](crate::IdTable::insert_with_key) |
//! | `try_insert_with_key(f)` | [`try_insert_with_key`](crate::IdTable::try_insert_with_key) (`Err` inserts nothing; a full table panics) |
//! | `remove(k)` | [`remove`](crate::IdTable::remove) (`PackedTable`: swap-remove, as `DenseSlotMap`) |
//! | `detach(k)` / `reattach(k, v)` | [`detach`](crate::IdTable::detach) / [`reattach`](crate::IdTable::reattach), and [`is_detached`](crate::IdTable::is_detached) |
//! | `retain(f)` | [`retain`](crate::IdTable::retain) |
//! | `clear()` | [`clear`](crate::IdTable::clear) |
//! | `drain()` | [`drain`](crate::IdTable::drain) |
//! | `get(k)` / `get_mut(k)` | [`get`](crate::IdTable::get) / [`get_mut`](crate::IdTable::get_mut) |
//! | `get_unchecked(k)` / `get_unchecked_mut(k)` | [`get_unchecked`](crate::IdTable::get_unchecked) / [`get_unchecked_mut`](crate::IdTable::get_unchecked_mut) |
//! | `get_disjoint_mut(keys)` | [`get_disjoint_mut`](crate::IdTable::get_disjoint_mut) |
//! | `get_disjoint_unchecked_mut(keys)` | [`get_disjoint_unchecked_mut`](crate::IdTable::get_disjoint_unchecked_mut) |
//! | `iter`, `iter_mut`, `keys`, `values`, `values_mut` | [`iter`](crate::IdTable::iter), [`iter_mut`](crate::IdTable::iter_mut), [`keys`](crate::IdTable::keys), [`values`](crate::IdTable::values), [`values_mut`](crate::IdTable::values_mut) |
//! | `Index`, `IndexMut` | `Index`, `IndexMut` (the panic message names the key) |
//! | `Clone`, `clone_from`, `Default`, `Debug` | the same |
//! | `IntoIterator` for `Self`, `&Self`, `&mut Self` | the same |
//! | (none) | `PartialEq`, `Eq`, `FromIterator<V>`, `Extend<V>` |
//!
//! ```
//! use handlekit::IdTable;
//!
//! let mut sm = IdTable::with_capacity(4);
//! assert!(sm.is_empty() && sm.capacity() >= 4);
//! let a = sm.insert(10);
//! let b = sm.insert_with_key(|k| if k == a { 0 } else { 20 });
//! let c = sm.try_insert_with_key(|_| Ok::<_, &str>(30)).unwrap();
//! assert_eq!(sm.try_insert_with_key(|_| Err("refused")), Err("refused"));
//! sm.reserve(8);
//! sm.try_reserve(8).unwrap();
//! assert_eq!(sm.len(), 3);
//! assert!(sm.contains_key(b));
//!
//! *sm.get_mut(a).unwrap() += 1;
//! sm[b] += 1;
//! assert_eq!((sm.get(a), sm[b]), (Some(&11), 21));
//! // SAFETY: `a` and `c` are live and distinct.
//! unsafe {
//!     assert_eq!(*sm.get_unchecked(a), 11);
//!     *sm.get_unchecked_mut(c) += 1;
//!     let [x, y] = sm.get_disjoint_unchecked_mut([a, c]);
//!     core::mem::swap(x, y);
//! }
//! let [x, y] = sm.get_disjoint_mut([a, b]).unwrap();
//! core::mem::swap(x, y);
//! assert_eq!((sm[a], sm[b], sm[c]), (21, 31, 11));
//!
//! // Detach: the key stays reserved while the value is out.
//! let value = sm.detach(c).unwrap();
//! assert!(sm.is_detached(c) && sm.get(c).is_none());
//! sm.reattach(c, value + 1);
//! assert_eq!(sm[c], 12);
//!
//! for (_key, value) in sm.iter_mut() {
//!     *value *= 2;
//! }
//! sm.values_mut().for_each(|v| *v += 1);
//! assert_eq!(sm.keys().collect::<Vec<_>>(), [a, b, c]);
//! assert_eq!(sm.values().copied().collect::<Vec<_>>(), [43, 63, 25]);
//! assert_eq!(sm.iter().count(), 3);
//!
//! sm.retain(|_key, value| *value > 30);
//! assert_eq!(sm.remove(a), Some(43));
//! assert_eq!(sm.remove(a), None);
//! let mut copy = sm.clone();
//! copy.clone_from(&sm);
//! assert_eq!(copy.drain().collect::<Vec<_>>(), [(b, 63)]);
//! sm.clear();
//! assert!(sm.is_empty() && sm.get(b).is_none());
//! let owned: Vec<(handlekit::Id, i32)> = IdTable::<i32>::default().into_iter().collect();
//! assert!(owned.is_empty());
//! ```
//!
//! The same calls on a [`PackedTable`](crate::PackedTable), where `remove`
//! and `detach` move the last value into the hole, as `DenseSlotMap` does:
//!
//! ```
//! use handlekit::PackedTable;
//!
//! let mut dense = PackedTable::new();
//! let a = dense.insert("a");
//! let b = dense.insert_with_key(|_| "b");
//! let c = dense.try_insert_with_key(|_| Ok::<_, ()>("c")).unwrap();
//! assert_eq!(dense.remove(a), Some("a"));
//! assert_eq!(dense.as_slice(), ["c", "b"]);
//! let v = dense.detach(b).unwrap();
//! dense.reattach(b, v);
//! assert_eq!(dense.as_slice(), ["c", "b"]);
//! let [x, y] = dense.get_disjoint_mut([b, c]).unwrap();
//! core::mem::swap(x, y);
//! // SAFETY: `b` and `c` are live and distinct.
//! let [x, y] = unsafe { dense.get_disjoint_unchecked_mut([b, c]) };
//! core::mem::swap(x, y);
//! // SAFETY: `b` is live.
//! assert_eq!(unsafe { *dense.get_unchecked(b) }, "b");
//! assert_eq!(dense.iter().collect::<Vec<_>>(), [(c, &"c"), (b, &"b")]);
//! ```
//!
//! ### `DenseSlotMap`'s slices
//!
//! | slotmap | handlekit |
//! | --- | --- |
//! | `keys_as_slice()` | [`key_slice`](crate::PackedTable::key_slice) |
//! | `values_as_slice()` | [`as_slice`](crate::PackedTable::as_slice) |
//! | `values_as_mut_slice()` | [`as_mut_slice`](crate::PackedTable::as_mut_slice) |
//! | `as_slices()` | [`as_slices`](crate::PackedTable::as_slices) |
//! | `as_mut_slices()` | [`as_mut_slices`](crate::PackedTable::as_mut_slices) (keys shared, values mutable) |
//!
//! ```
//! let mut dense = handlekit::PackedTable::new();
//! let a = dense.insert(1);
//! let b = dense.insert(2);
//! assert_eq!(dense.key_slice(), [a, b]);
//! dense.as_mut_slice()[0] = 10;
//! assert_eq!(dense.as_slice(), [10, 2]);
//! let (keys, values) = dense.as_mut_slices();
//! values[1] += keys.len() as i32;
//! assert_eq!(dense.as_slices(), (&[a, b][..], &[10, 4][..]));
//! ```
//!
//! [`PackedTable`](crate::PackedTable) also sorts its values in place
//! while keeping every key valid ([`sort_by`](crate::PackedTable::sort_by)),
//! and swaps positions ([`swap_positions`](crate::PackedTable::swap_positions)),
//! which `DenseSlotMap` cannot.
//!
//! ## HopSlotMap
//!
//! `HopSlotMap` is a `SlotMap` that keeps runs of vacant slots linked, so
//! that iteration skips a run in one hop instead of visiting each vacant
//! slot; slotmap 1.1 deprecates it. [`IdTable`](crate::IdTable) serves the
//! same purpose with its state words, kept in an array of their own:
//! iteration turns 64 of them (256 bytes) into a mask at a time and reads
//! only the live values, so a run of holes costs 4 bytes per slot and no
//! value reads, while insertion and removal touch only their own slot. Replace `HopSlotMap` with [`IdTable`](crate::IdTable), or
//! with [`PackedTable`](crate::PackedTable) where iteration speed is what
//! matters most.
//!
//! ```
//! let mut hop = handlekit::IdTable::new();
//! let keys: Vec<_> = (0..1000).map(|n| hop.insert(n)).collect();
//! for &key in &keys[1..999] {
//!     hop.remove(key);
//! }
//! // Reads 1000 state words (4 KB) and 2 values, not 1000 slots.
//! assert_eq!(hop.values().copied().collect::<Vec<_>>(), [0, 999]);
//! ```
//!
//! ## Secondary maps
//!
//! | slotmap | handlekit (both maps unless said) |
//! | --- | --- |
//! | `len`, `is_empty`, `capacity` | [`len`](crate::SecondaryMap::len), [`is_empty`](crate::SecondaryMap::is_empty), [`capacity`](crate::SecondaryMap::capacity) |
//! | `SecondaryMap::set_capacity(n)` | [`SecondaryMap::set_capacity`](crate::SecondaryMap::set_capacity) |
//! | `SparseSecondaryMap::reserve(n)` / `try_reserve(n)` | [`SparseSecondaryMap::reserve`](crate::SparseSecondaryMap::reserve) / [`try_reserve`](crate::SparseSecondaryMap::try_reserve) |
//! | `contains_key`, `insert`, `remove` | [`contains_key`](crate::SecondaryMap::contains_key), [`insert`](crate::SecondaryMap::insert), [`remove`](crate::SecondaryMap::remove) |
//! | `retain`, `clear`, `drain` | [`retain`](crate::SecondaryMap::retain), [`clear`](crate::SecondaryMap::clear), [`drain`](crate::SecondaryMap::drain) |
//! | `get`, `get_mut` | [`get`](crate::SecondaryMap::get), [`get_mut`](crate::SecondaryMap::get_mut) |
//! | `get_unchecked`, `get_unchecked_mut` | [`get_unchecked`](crate::SecondaryMap::get_unchecked), [`get_unchecked_mut`](crate::SecondaryMap::get_unchecked_mut) |
//! | `get_disjoint_mut`, `get_disjoint_unchecked_mut` | [`get_disjoint_mut`](crate::SecondaryMap::get_disjoint_mut), [`get_disjoint_unchecked_mut`](crate::SecondaryMap::get_disjoint_unchecked_mut) |
//! | `iter`, `iter_mut`, `keys`, `values`, `values_mut` | the same names |
//! | `entry(k) -> Option<Entry>` | [`entry`](crate::SecondaryMap::entry), `None` for a stale key, as in slotmap |
//! | `Index`, `IndexMut`, `Clone`, `Default`, `Debug`, `PartialEq`, `Eq`, `FromIterator<(K, V)>`, `Extend<(K, V)>`, `IntoIterator` | the same |
//! | `Extend<(K, &V)>` | `extend(iter.map(\|(k, v)\| (k, v.clone())))` |
//!
//! Inserting with a key older than the one a slot holds does nothing and
//! returns `None`; a newer key replaces the older value. That is slotmap's
//! rule too.
//!
//! ```
//! use handlekit::{IdTable, SecondaryMap, SparseSecondaryMap};
//!
//! let mut table = IdTable::new();
//! let (a, b, c) = (table.insert(()), table.insert(()), table.insert(()));
//!
//! let mut dense = SecondaryMap::new();
//! dense.set_capacity(table.capacity());
//! let mut sparse = SparseSecondaryMap::new();
//! sparse.reserve(2);
//! sparse.try_reserve(2).unwrap();
//! for (map_a, map_b) in [(1, 2), (3, 4)] {
//!     dense.insert(a, map_a);
//!     dense.insert(b, map_b);
//!     sparse.insert(a, map_a);
//!     sparse.insert(b, map_b);
//! }
//! assert_eq!((dense.len(), sparse.len()), (2, 2));
//! assert!(dense.contains_key(a) && !sparse.contains_key(c));
//! *dense.get_mut(a).unwrap() += 10;
//! sparse[a] += 10;
//! assert_eq!((dense.get(a), sparse.get(a)), (Some(&13), Some(&13)));
//! // SAFETY: `a` and `b` have values in both maps, and are distinct.
//! unsafe {
//!     assert_eq!(*dense.get_unchecked(b) + *sparse.get_unchecked(b), 8);
//!     *dense.get_unchecked_mut(b) += 1;
//!     *sparse.get_unchecked_mut(b) += 1;
//!     let [x, y] = dense.get_disjoint_unchecked_mut([a, b]);
//!     core::mem::swap(x, y);
//!     let [x, y] = sparse.get_disjoint_unchecked_mut([a, b]);
//!     core::mem::swap(x, y);
//! }
//! let [x, y] = dense.get_disjoint_mut([a, b]).unwrap();
//! core::mem::swap(x, y);
//! assert_eq!((dense[a], sparse[a]), (13, 5));
//! assert_eq!(dense.keys().collect::<Vec<_>>(), [a, b]);
//! dense.values_mut().for_each(|v| *v += 1);
//! sparse.iter_mut().for_each(|(_, v)| *v += 1);
//! dense.retain(|key, _| key == a);
//! assert_eq!(sparse.remove(b), Some(14));
//! assert_eq!(dense.drain().collect::<Vec<_>>(), [(a, 14)]);
//! sparse.clear();
//! assert!(dense.is_empty() && sparse.is_empty());
//!
//! let copied: SecondaryMap<_, i32> = [(a, 1)].into_iter().collect();
//! let mut cloned = SparseSecondaryMap::new();
//! cloned.extend(copied.iter().map(|(k, v)| (k, *v))); // `Extend<(K, &V)>`
//! assert_eq!(cloned[a], 1);
//! ```
//!
//! ## The entry API
//!
//! | slotmap | handlekit |
//! | --- | --- |
//! | `Entry::key`, `or_insert`, `or_insert_with`, `or_insert_with_key`, `or_default`, `and_modify` | [`key`](crate::secondary::Entry::key), [`or_insert`](crate::secondary::Entry::or_insert), [`or_insert_with`](crate::secondary::Entry::or_insert_with), [`or_insert_with_key`](crate::secondary::Entry::or_insert_with_key), [`or_default`](crate::secondary::Entry::or_default), [`and_modify`](crate::secondary::Entry::and_modify) |
//! | `OccupiedEntry::key`, `get`, `get_mut`, `into_mut`, `insert`, `remove`, `remove_entry` | [`key`](crate::secondary::OccupiedEntry::key), [`get`](crate::secondary::OccupiedEntry::get), [`get_mut`](crate::secondary::OccupiedEntry::get_mut), [`into_mut`](crate::secondary::OccupiedEntry::into_mut), [`insert`](crate::secondary::OccupiedEntry::insert), [`remove`](crate::secondary::OccupiedEntry::remove), [`remove_entry`](crate::secondary::OccupiedEntry::remove_entry) |
//! | `VacantEntry::key`, `insert` | [`key`](crate::secondary::VacantEntry::key), [`insert`](crate::secondary::VacantEntry::insert) |
//!
//! ```
//! use handlekit::secondary::Entry;
//! use handlekit::{IdTable, Key, SecondaryMap};
//!
//! let mut table = IdTable::new();
//! let (a, b) = (table.insert(()), table.insert(()));
//! let mut map: SecondaryMap<_, u32> = SecondaryMap::new();
//! *map.entry(a).unwrap().or_insert(1) += 1;
//! map.entry(a).unwrap().and_modify(|v| *v *= 10).or_insert_with(|| 0);
//! map.entry(b).unwrap().or_insert_with_key(|key| key.index() as u32 + 100);
//! assert_eq!(map.entry(b).unwrap().key(), b);
//! *map.entry(b).unwrap().or_default() += 1;
//! assert_eq!((map[a], map[b]), (20, 102));
//!
//! if let Some(Entry::Occupied(mut entry)) = map.entry(a) {
//!     assert_eq!((entry.key(), *entry.get()), (a, 20));
//!     *entry.get_mut() += 1;
//!     assert_eq!(entry.insert(5), 21);
//!     assert_eq!(entry.remove_entry(), (a, 5));
//! }
//! if let Some(Entry::Occupied(entry)) = map.entry(b) {
//!     *entry.into_mut() = 7;
//! }
//! if let Some(Entry::Occupied(entry)) = map.entry(b) {
//!     assert_eq!(entry.remove(), 7);
//! }
//! if let Some(Entry::Vacant(entry)) = map.entry(a) {
//!     assert_eq!(entry.key(), a);
//!     *entry.insert(3) += 1;
//! }
//! assert_eq!(map[a], 4);
//! ```
//!
//! ## Generations: retirement instead of wrapping
//!
//! slotmap keeps a 32-bit version per slot (odd when occupied) and lets it
//! wrap around. After 2³¹ reuses of one slot a key that went stale long ago
//! has the current version again and names whatever value is there now.
//! handlekit never wraps: a slot whose generation reaches
//! [`Key::MAX_GENERATION`](crate::Key::MAX_GENERATION) is *retired*, keeps
//! its memory and is never reused
//! ([`retired_count`](crate::IdTable::retired_count)), so no key is issued
//! twice, whatever the key width. With [`Id`](crate::Id) a slot lasts 2³¹ − 1
//! occupants, as slotmap's does before wrapping; with narrow keys
//! [`Reuse::Fifo`](crate::Reuse::Fifo) spreads reuse over many slots.
//!
//! ```
//! handlekit::define_key! { struct Tiny(u32; index_bits = 30); } // 3 generations a slot
//! let mut table: handlekit::IdTable<u8, Tiny> = handlekit::IdTable::with_key();
//! let first = table.insert(0);
//! table.remove(first);
//! for _ in 0..5 {
//!     let key = table.insert(1);
//!     assert_ne!(key, first); // never issued again
//!     table.remove(key);
//! }
//! assert!(table.retired_count() >= 1);
//! assert_eq!(table.get(first), None);
//! ```
//!
//! ## The serde format
//!
//! Both crates serialize a table as its slots, so a round trip keeps every
//! key valid and every stale key stale, and both rebuild the free list on
//! the way in instead of trusting it. The formats differ, so data written
//! by one does not read into the other:
//!
//! | | slotmap | handlekit |
//! | --- | --- | --- |
//! | key | a struct `{ idx, version }` | the key's bits, one integer ([`Key::to_bits`](crate::Key::to_bits)) |
//! | `SlotMap` / `IdTable` | a sequence of `{ value, version }` slots | `{ reuse, slots: [(generation, value or null)], detached: [(index, generation)] }` |
//! | `DenseSlotMap` / `PackedTable` | the same as `SlotMap` | `{ reuse, slots: [(generation, position or null)], values, detached }`: the dense order survives |
//! | `SecondaryMap` | its own slot format | `[(generation, value or null)]`, like a table's slots |
//! | `SparseSecondaryMap` | its own format | `{ entries: [(key, value)], vacated: [key] }` in dense order |
//! | detached slots | written as vacant, so they come back free: the detached key can never be reattached | kept detached (`detached`); `reattach` works after the round trip |
//! | fixed capacity | (none) | not kept: the copy can grow |
//!
//! Every generation, position and detached entry is validated on the way
//! in: hostile input gives an error, never a table that breaks its
//! invariants.
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! let mut table = handlekit::IdTable::new();
//! let key = table.insert(String::from("kept"));
//! let parked = table.insert(String::from("out"));
//! let value = table.detach(parked).unwrap();
//! let json = serde_json::to_string(&table).unwrap();
//! let mut back: handlekit::IdTable<String> = serde_json::from_str(&json).unwrap();
//! assert_eq!(back[key], "kept");
//! assert!(back.is_detached(parked));
//! back.reattach(parked, value);
//! assert_eq!(back[parked], "out");
//! let key_json = serde_json::to_string(&key).unwrap();
//! assert_eq!(key_json, handlekit::Key::to_bits(key).to_string());
//! # }
//! ```
//!
//! ## No counterpart
//!
//! - **`SparseSecondaryMap`'s hasher** (`S`, `with_hasher`,
//!   `with_capacity_and_hasher`): handlekit's sparse map is a sparse set
//!   (a paged index array and packed values), not a `HashMap`, so there is
//!   nothing to hash. It needs no `std` either.
//! - **`Key::null()` and `Default` for keys**: a null key is a value of
//!   the key type that every map must remember to reject. handlekit uses
//!   `Option<K>`, which the niche keeps the same size, so "no key" is a
//!   type-level fact.
//! - **`KeyData` as a type**: a key's bits ([`Key::to_bits`](crate::Key::to_bits))
//!   play its role; there is no untyped key to convert between key types
//!   by accident.
//! - **`HopSlotMap` as a type**: see [HopSlotMap](#hopslotmap).
//! - **`Extend<(K, &V)>` for the secondary maps**: clone the values in the
//!   iterator (shown above).
//! - **The `unstable` feature**: everything it gates in slotmap
//!   (`try_reserve`) is on stable here.
//!
//! ## Where handlekit differs for the better
//!
//! - Generations retire instead of wrapping: a stale key never comes back
//!   to life ([above](#generations-retirement-instead-of-wrapping)).
//! - Detached slots survive serialization, clone and
//!   [`clear`](crate::IdTable::clear); in slotmap a round trip through serde
//!   frees them.
//! - [`Key`](crate::Key) is a safe trait: a wrong implementation cannot
//!   cause undefined behaviour.
//! - Keys come in any width: 32-bit keys ([`Id32`](crate::Id32)) halve the
//!   size of every stored key, and narrow keys are safe because slots
//!   retire.
//! - A full table is an error you can handle
//!   ([`try_insert`](crate::IdTable::try_insert)), and a table can have a
//!   fixed capacity that never reallocates
//!   ([`with_fixed_capacity`](crate::IdTable::with_fixed_capacity)).
//! - [`IdTable`](crate::IdTable)'s iteration skips holes 64 state words
//!   at a time, without `HopSlotMap`'s bookkeeping on insert and remove.
//! - [`PackedTable`](crate::PackedTable) sorts in place with every key kept
//!   valid.
//! - `try_reserve` works on stable Rust.

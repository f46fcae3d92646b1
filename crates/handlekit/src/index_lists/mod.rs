//! [`IndexLists`]: many singly linked lists whose nodes share one array,
//! their [`Head`]s, and their iterators.

use alloc::vec::Vec;
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

use crate::raw::table::RawTable;
use crate::raw::{Exclusive, KeyLimits, SlotArena};
use crate::{CapacityError, Id, Key};

#[cfg(feature = "serde")]
mod serde_impl;
/// Set in a node's link word when the node is the front of its list (no
/// node links to it).
const FRONT: u32 = 1 << 31;
/// The end of a list, in a link word.
const NIL: u32 = FRONT - 1;
/// The most nodes a pool can hold: node indices are below [`NIL`].
const MAX_NODES: usize = NIL as usize;

/// One node: the value and the link to the next node of its list.
///
/// The link word holds the index of the next node (or [`NIL`]) in its low
/// 31 bits and [`FRONT`] in its top bit. Free nodes do not need it: the
/// slot layer threads its free list through the memory of vacant slots, so
/// a node's value and link are reused as the free link.
pub(crate) struct Link<T> {
    /// Invariant: the low bits are [`NIL`] or the index of a live node, and
    /// `FRONT` is set iff no live node links here.
    next: u32,
    value: T,
}

impl<T> Link<T> {
    #[inline]
    fn next_index(&self) -> u32 {
        self.next & NIL
    }

    #[inline]
    fn is_front(&self) -> bool {
        self.next & FRONT != 0
    }

    /// Points the link at `next`, keeping the front flag.
    #[inline]
    fn set_next(&mut self, next: u32) {
        self.next = (self.next & FRONT) | next;
    }

    #[inline]
    fn set_front(&mut self, front: bool) {
        if front {
            self.next |= FRONT;
        } else {
            self.next &= NIL;
        }
    }
}

impl<T: Clone> Clone for Link<T> {
    fn clone(&self) -> Self {
        Link {
            next: self.next,
            value: self.value.clone(),
        }
    }
}

/// The head of one list in an [`IndexLists`] pool: the index of its front
/// node, in 4 bytes.
///
/// A head is a plain `Copy` value that lives wherever the user keeps it (one
/// per grid cell, in a struct, in another table). The pool does not know
/// its heads: an operation that changes the front of a list takes the head
/// by `&mut` and updates it. A *copy* of a head that is not updated goes
/// stale; the pool catches a stale head when it no longer names the front of
/// a list (see [`IndexLists`] for what is and is not caught).
///
/// ```
/// use handlekit::{Head, IndexLists};
///
/// let mut pool = IndexLists::new();
/// let mut head = Head::EMPTY;
/// assert!(head.is_empty());
/// pool.push_front(&mut head, 'a');
/// assert!(!head.is_empty());
/// assert_eq!(size_of::<Head>(), 4);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Head(u32);

impl Head {
    /// The head of an empty list.
    ///
    /// ```
    /// assert!(handlekit::Head::EMPTY.is_empty());
    /// ```
    pub const EMPTY: Head = Head(u32::MAX);

    /// The head of an empty list; the same as [`Head::EMPTY`].
    ///
    /// ```
    /// assert_eq!(handlekit::Head::new(), handlekit::Head::EMPTY);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Head::EMPTY
    }

    /// Whether the list is empty. (This needs no pool: an empty list has no
    /// front node.)
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut head = handlekit::Head::EMPTY;
    /// pool.push_front(&mut head, 1);
    /// assert!(!head.is_empty());
    /// pool.pop_front(&mut head);
    /// assert!(head.is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == u32::MAX
    }

    /// The head of a list whose front node is at `index`.
    #[inline]
    const fn at(index: u32) -> Self {
        Head(index)
    }

    /// The head of the list that starts at link target `next` (`NIL` is the
    /// empty list).
    #[inline]
    const fn from_link(next: u32) -> Self {
        if next == NIL {
            Head::EMPTY
        } else {
            Head(next)
        }
    }
}

impl Default for Head {
    /// [`Head::EMPTY`].
    fn default() -> Self {
        Head::EMPTY
    }
}

impl fmt::Debug for Head {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            f.write_str("Head(empty)")
        } else {
            write!(f, "Head({})", self.0)
        }
    }
}

/// Why [`IndexLists::move_after`] or [`IndexLists::move_node`] refused to
/// move a node.
///
/// ```
/// use handlekit::{Head, IndexLists, LinkError};
///
/// let mut pool = IndexLists::new();
/// let (mut list, mut other) = (Head::EMPTY, Head::EMPTY);
/// let b = pool.push_front(&mut list, 'b');
/// let a = pool.push_front(&mut list, 'a');
/// assert_eq!(pool.move_after(b, a, &mut other), Err(LinkError::NotLinked));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkError {
    /// The node to move names no live node: it was removed, it is from
    /// before a [`compact`](IndexLists::compact), or it is forged.
    StaleNode,
    /// The predecessor names no live node.
    StalePrev,
    /// Both name live nodes, but the node does not follow the predecessor.
    NotLinked,
    /// The node is live but not in the list it was said to be in.
    NotInList,
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LinkError::StaleNode => "the node key names no live node of this pool",
            LinkError::StalePrev => "the predecessor key names no live node of this pool",
            LinkError::NotLinked => "the node does not follow the given predecessor",
            LinkError::NotInList => "the node is not in the given list",
        })
    }
}

impl core::error::Error for LinkError {}

/// Many singly linked lists in one node pool: the *linked index list* of
/// seed 001.
///
/// All nodes of all lists live in one array. A node is a value and a 32-bit
/// link to the next node of its list; a removed node's memory is reused
/// through a free list threaded through the vacant nodes themselves. A list
/// is a [`Head`], 4 bytes that the user stores anywhere, so a million lists
/// cost 4 MB. Moving a node from one list to another rewrites a few
/// integers and never moves the value.
///
/// | operation | cost |
/// | --- | --- |
/// | [`push_front`](Self::push_front), [`pop_front`](Self::pop_front), [`front`](Self::front) | O(1) |
/// | [`move_front`](Self::move_front), [`move_after`](Self::move_after) | O(1) |
/// | [`move_node`](Self::move_node) | O(position): walks the list for the predecessor |
/// | [`get`](Self::get), [`next_node`](Self::next_node) | O(1) |
/// | [`remove`](Self::remove) | O(position): walks the list for the predecessor |
/// | [`iter`](Self::iter) over one list | O(its length) |
/// | [`nodes`](Self::nodes) over the whole pool | O(len + slots / 64) |
/// | [`redistribute`](Self::redistribute) one list | O(its length) |
/// | [`compact`](Self::compact) | O(len + heads) |
///
/// # Keys, heads and misuse
///
/// Each node has a generational key (`K`, [`Id`] by default), issued by
/// [`push_front`](Self::push_front). A node keeps its key when it moves
/// between lists. Removing it, [`clear`](Self::clear) and
/// [`compact`](Self::compact) make its key stale: a stale key (or one from
/// another pool, or forged) is never UB; lookups return `None` and
/// [`move_after`](Self::move_after) returns a [`LinkError`].
///
/// **Staleness costs one generation per node (4 bytes).** The nodes are the
/// slots of the crate's slot core, whose 32-bit state word holds occupancy
/// and generation; a slot whose generation runs out retires, as in
/// [`IdTable`](crate::IdTable). A pool id in every key would be cheaper in
/// memory but could not tell a removed node from the node that reuses its
/// slot.
///
/// A head is only an index, so it cannot carry a generation or a pool id:
/// 4 bytes is the point. Instead every node records whether it is the front
/// of its list (a bit of its link), and every operation that takes a head
/// checks that it is empty or names a live front node; if not, it
/// **panics**. That catches a head whose list was changed through another
/// copy, a head of a popped node, and almost every head of another pool. It
/// cannot catch a head that happens to name the front of some list of this
/// pool (a head of another pool at the same index, or a stale head whose
/// node was reused as a front): the operation then acts on that list. That
/// is a wrong answer, never a broken pool: whatever heads are passed, the
/// nodes always form separate, acyclic lists, and no operation is UB.
///
/// Iterating a list counts its steps; a list longer than the pool (a
/// cycle, which only a bug could make) panics instead of looping.
///
/// # Memory per node
///
/// A node is a slot of the slot core: a 4-byte state word (occupancy and
/// generation) beside the node (the value and a 4-byte link):
/// `4 + size_of::<T>() + 4` bytes, rounded up to `max(align_of::<T>(), 4)`
/// (12 for `u32`, 24 for `[f32; 4]` and for `u64`), plus one occupancy bit.
/// A head is 4 bytes. Nodes are never returned to the allocator (as in
/// `IdTable`, a dropped slot would forget its generation); capacity follows
/// the peak number of nodes.
///
/// # Locality and `compact`
///
/// A new node takes the most recently freed slot, so after much moving and
/// removing a list's nodes are scattered through the array.
/// [`compact`](Self::compact) is the seed's "post-processing copy": it
/// rewrites the array so that each list's nodes are contiguous and in
/// order, and updates the heads. Afterwards walking every list in head order
/// is one sequential sweep of memory.
///
/// # Examples
///
/// A grid whose cells are lists of particles:
///
/// ```
/// use handlekit::{Head, IndexLists};
///
/// struct Particle { x: f32 }
/// let cell_of = |p: &Particle| (p.x as usize).min(3);
///
/// let mut particles = IndexLists::new();
/// let mut cells = [Head::EMPTY; 4];
/// for x in [0.5, 1.5, 1.75, 3.25] {
///     let p = Particle { x };
///     let cell = cell_of(&p);
///     particles.push_front(&mut cells[cell], p);
/// }
/// assert_eq!(particles.iter(cells[1]).count(), 2);
///
/// // Particles move; the ones that left a cell change lists.
/// for (_, p) in particles.nodes_mut() {
///     p.x = (p.x + 1.0) % 4.0;
/// }
/// for cell in 0..cells.len() {
///     particles.redistribute(&mut cells, cell, cell_of);
/// }
/// let xs: Vec<f32> = particles.iter(cells[2]).map(|p| p.x).collect();
/// assert_eq!(xs, [2.5, 2.75]);
///
/// // Restore locality: each cell's particles become contiguous.
/// particles.compact(&mut cells);
/// assert_eq!(particles.iter(cells[0]).map(|p| p.x).collect::<Vec<_>>(), [0.25]);
/// ```
pub struct IndexLists<T, K: Key = Id> {
    /// The nodes. Invariant (the *list invariant*, which `IterMut` relies
    /// on for soundness): following the links from any live node visits
    /// live nodes only, each at most once, and ends at `NIL`; no live node
    /// is linked to by more than one node; and a live node has `FRONT` set
    /// iff no node links to it. So the live nodes form separate acyclic
    /// lists, each starting at a front node.
    arena: SlotArena<Link<T>, K>,
    _key: PhantomData<fn(K) -> K>,
}

impl<T> IndexLists<T, Id> {
    /// Creates an empty pool keyed by [`Id`]; it allocates nothing until the
    /// first node. For another key type use [`IndexLists::default`].
    ///
    /// ```
    /// let pool: handlekit::IndexLists<u8> = handlekit::IndexLists::new();
    /// assert!(pool.is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        IndexLists {
            arena: SlotArena::new(Self::limits()),
            _key: PhantomData,
        }
    }
}

/// Panics for a head that names no list of this pool.
#[cold]
#[inline(never)]
#[track_caller]
fn bad_head(head: Head) -> ! {
    panic!(
        "IndexLists: {head:?} is not the head of a list in this pool \
         (a stale copy of a head, or a head of another pool)"
    )
}

/// Panics for a broken link; the list invariant makes this unreachable.
#[cold]
#[inline(never)]
#[track_caller]
fn broken_link(index: u32) -> ! {
    panic!("IndexLists: corrupted link to node {index}")
}

/// Panics for a list that is longer than the pool.
#[cold]
#[inline(never)]
#[track_caller]
fn cycle() -> ! {
    panic!("IndexLists: a list has more nodes than the pool (corrupted links: a cycle)")
}

impl<T, K: Key> IndexLists<T, K> {
    /// The key's limits, with at most [`MAX_NODES`] slots.
    const fn limits() -> KeyLimits {
        let mut limits = KeyLimits::of::<K>();
        if limits.max_slots > MAX_NODES {
            limits.max_slots = MAX_NODES;
        }
        limits
    }

    /// Creates an empty pool with room for `capacity` nodes.
    ///
    /// ```
    /// let pool: handlekit::IndexLists<u8> = handlekit::IndexLists::with_capacity(10);
    /// assert!(pool.capacity() >= 10);
    /// ```
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        IndexLists {
            arena: SlotArena::with_capacity(Self::limits(), capacity),
            _key: PhantomData,
        }
    }

    /// The number of nodes, in all lists together.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let (mut a, mut b) = (handlekit::Head::EMPTY, handlekit::Head::EMPTY);
    /// pool.push_front(&mut a, 1);
    /// pool.push_front(&mut b, 2);
    /// assert_eq!(pool.len(), 2);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// Whether the pool holds no nodes.
    ///
    /// ```
    /// assert!(handlekit::IndexLists::<u8>::new().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.arena.len() == 0
    }

    /// The number of nodes the pool can hold without reallocating.
    ///
    /// ```
    /// let pool: handlekit::IndexLists<u8> = handlekit::IndexLists::with_capacity(8);
    /// assert!(pool.capacity() >= 8);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// The number of node slots retired because their generation ran out
    /// (see [`IdTable::retired_count`](crate::IdTable::retired_count)).
    /// [`compact`](Self::compact) ages every node by one generation.
    ///
    /// ```
    /// assert_eq!(handlekit::IndexLists::<u8>::new().retired_count(), 0);
    /// ```
    #[must_use]
    pub fn retired_count(&self) -> usize {
        self.arena.retired()
    }

    /// Reserves room for at least `additional` more nodes.
    ///
    /// # Panics
    ///
    /// If the key type cannot index that many nodes or the allocation fails.
    ///
    /// ```
    /// let mut pool: handlekit::IndexLists<u8> = handlekit::IndexLists::new();
    /// pool.reserve(100);
    /// assert!(pool.capacity() >= 100);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        if let Err(err) = self.try_reserve(additional) {
            panic!("IndexLists::reserve({additional}): {err}");
        }
    }

    /// Reserves room for at least `additional` more nodes, or reports why it
    /// cannot.
    ///
    /// ```
    /// let mut pool: handlekit::IndexLists<u8> = handlekit::IndexLists::new();
    /// assert!(pool.try_reserve(10).is_ok());
    /// assert!(pool.try_reserve(usize::MAX).is_err());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        self.arena.try_reserve(additional)
    }

    /// Frees spare capacity. Slots that ever held a node are kept (they
    /// remember their generation).
    ///
    /// ```
    /// let mut pool: handlekit::IndexLists<u8> = handlekit::IndexLists::with_capacity(100);
    /// let mut list = handlekit::Head::EMPTY;
    /// pool.push_front(&mut list, 1);
    /// pool.shrink_to_fit();
    /// assert!(pool.capacity() >= 1);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.arena.shrink_to_fit();
    }

    /// The node at `index`; the list invariant guarantees it is live.
    #[inline]
    #[track_caller]
    fn link(&self, index: u32) -> &Link<T> {
        match self.arena.value_at(index as usize) {
            Some(link) => link,
            None => broken_link(index),
        }
    }

    #[inline]
    #[track_caller]
    fn link_mut(&mut self, index: u32) -> &mut Link<T> {
        match self.arena.value_at_mut(index as usize) {
            Some(link) => link,
            None => broken_link(index),
        }
    }

    /// The index of the live node `node` names.
    #[inline]
    fn live_index(&self, node: K) -> Option<u32> {
        let index = node.index();
        self.arena
            .contains(index, node.generation())
            .then_some(index as u32)
    }

    /// The front node of the list `head` names (`None` if it is empty);
    /// panics if `head` names no list of this pool.
    #[inline]
    #[track_caller]
    fn front_index(&self, head: Head) -> Option<u32> {
        if head.is_empty() {
            return None;
        }
        match self.arena.value_at(head.0 as usize) {
            Some(link) if link.is_front() => Some(head.0),
            _ => bad_head(head),
        }
    }

    /// Links the detached node `index` in front of the list `to`, whose
    /// front is `to_front`.
    #[inline]
    fn link_front(&mut self, index: u32, to: &mut Head, to_front: Option<u32>) {
        debug_assert_ne!(Some(index), to_front);
        self.link_mut(index).next = FRONT | to_front.unwrap_or(NIL);
        if let Some(old) = to_front {
            self.link_mut(old).set_front(false);
        }
        *to = Head::at(index);
    }

    /// Whether `head` is empty or names the front of a list of this pool:
    /// exactly the heads that the other methods accept without panicking.
    ///
    /// ```
    /// use handlekit::{Head, IndexLists};
    ///
    /// let mut pool = IndexLists::new();
    /// let mut head = Head::EMPTY;
    /// pool.push_front(&mut head, 1);
    /// let copy = head;
    /// pool.push_front(&mut head, 2);
    /// assert!(pool.is_head(head));
    /// assert!(!pool.is_head(copy)); // the copy names the second node now
    /// assert!(pool.is_head(Head::EMPTY));
    /// ```
    #[must_use]
    pub fn is_head(&self, head: Head) -> bool {
        head.is_empty()
            || self
                .arena
                .value_at(head.0 as usize)
                .is_some_and(Link::is_front)
    }

    /// The key of the front node of a list.
    ///
    /// # Panics
    ///
    /// If `head` names no list of this pool (see [`is_head`](Self::is_head)).
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut head = handlekit::Head::EMPTY;
    /// assert_eq!(pool.front(head), None);
    /// let key = pool.push_front(&mut head, 'x');
    /// assert_eq!(pool.front(head), Some(key));
    /// ```
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn front(&self, head: Head) -> Option<K> {
        let index = self.front_index(head)?;
        self.arena.key_at(index as usize)
    }

    /// Adds a node to the front of a list and returns its key.
    ///
    /// # Panics
    ///
    /// If `head` names no list of this pool, or the pool is full (see
    /// [`try_push_front`](Self::try_push_front)).
    ///
    /// ```
    /// use handlekit::{Head, IndexLists};
    ///
    /// let mut pool = IndexLists::new();
    /// let mut list = Head::EMPTY;
    /// pool.push_front(&mut list, 2);
    /// let one = pool.push_front(&mut list, 1);
    /// assert_eq!(pool[one], 1);
    /// assert_eq!(pool.iter(list).collect::<Vec<_>>(), [&1, &2]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn push_front(&mut self, head: &mut Head, value: T) -> K {
        match self.try_push_front(head, value) {
            Ok(key) => key,
            Err(err) => panic!("IndexLists::push_front: {err}"),
        }
    }

    /// Adds a node to the front of a list and returns its key, or a
    /// [`CapacityError`] if the pool is full (then `value` is dropped and
    /// nothing changes).
    ///
    /// # Panics
    ///
    /// If `head` names no list of this pool.
    ///
    /// ```
    /// handlekit::define_key! { struct Tiny(u32; index_bits = 1); }
    /// let mut pool: handlekit::IndexLists<u8, Tiny> = handlekit::IndexLists::default();
    /// let mut list = handlekit::Head::EMPTY;
    /// pool.push_front(&mut list, 1);
    /// pool.push_front(&mut list, 2);
    /// assert!(pool.try_push_front(&mut list, 3).is_err());
    /// assert_eq!(pool.len(), 2);
    /// ```
    #[inline]
    #[track_caller]
    pub fn try_push_front(&mut self, head: &mut Head, value: T) -> Result<K, CapacityError> {
        let front = self.front_index(*head);
        let next = FRONT | front.unwrap_or(NIL);
        let (index, key) = self.arena.try_insert_at(|_| Link { next, value })?;
        let index = index as u32;
        if let Some(old) = front {
            self.link_mut(old).set_front(false);
        }
        *head = Head::at(index);
        Ok(key)
    }

    /// Removes the front node of a list and returns its value; `None` if the
    /// list is empty.
    ///
    /// # Panics
    ///
    /// If `head` names no list of this pool.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// let key = pool.push_front(&mut list, "x");
    /// assert_eq!(pool.pop_front(&mut list), Some("x"));
    /// assert_eq!(pool.pop_front(&mut list), None);
    /// assert_eq!(pool.get(key), None); // the key is stale
    /// ```
    #[inline]
    #[track_caller]
    pub fn pop_front(&mut self, head: &mut Head) -> Option<T> {
        let front = self.front_index(*head)?;
        let next = self.link(front).next_index();
        if next != NIL {
            self.link_mut(next).set_front(true);
        }
        *head = Head::from_link(next);
        let generation = self.arena.generation_at(front as usize)?;
        let link = self.arena.remove(front as usize, generation)?;
        Some(link.value)
    }

    /// Whether `node` names a live node.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// let key = pool.push_front(&mut list, 1);
    /// assert!(pool.contains(key));
    /// pool.pop_front(&mut list);
    /// assert!(!pool.contains(key));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains(&self, node: K) -> bool {
        self.arena.contains(node.index(), node.generation())
    }

    /// The value of a node; `None` if the key is stale.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// let key = pool.push_front(&mut list, 5);
    /// assert_eq!(pool.get(key), Some(&5));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, node: K) -> Option<&T> {
        self.arena
            .get(node.index(), node.generation())
            .map(|link| &link.value)
    }

    /// The value of a node, mutably; `None` if the key is stale.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// let key = pool.push_front(&mut list, 5);
    /// *pool.get_mut(key).unwrap() += 1;
    /// assert_eq!(pool[key], 6);
    /// ```
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, node: K) -> Option<&mut T> {
        self.arena
            .get_mut(node.index(), node.generation())
            .map(|link| &mut link.value)
    }

    /// The key of the node after `node` in its list; `None` if `node` is
    /// the last of its list or is stale.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// let b = pool.push_front(&mut list, 'b');
    /// let a = pool.push_front(&mut list, 'a');
    /// assert_eq!(pool.next_node(a), Some(b));
    /// assert_eq!(pool.next_node(b), None);
    /// ```
    #[must_use]
    pub fn next_node(&self, node: K) -> Option<K> {
        let link = self.arena.get(node.index(), node.generation())?;
        let next = link.next_index();
        if next == NIL {
            return None;
        }
        self.arena.key_at(next as usize)
    }

    /// Moves the front node of `from` to the front of `to` and returns its
    /// key (which stays valid); `None` if `from` is empty. O(1).
    ///
    /// # Panics
    ///
    /// If either head names no list of this pool, or both name the same
    /// non-empty list (two copies of one head).
    ///
    /// ```
    /// use handlekit::{Head, IndexLists};
    ///
    /// let mut pool = IndexLists::new();
    /// let (mut a, mut b) = (Head::EMPTY, Head::EMPTY);
    /// pool.push_front(&mut a, 2);
    /// let one = pool.push_front(&mut a, 1);
    /// assert_eq!(pool.move_front(&mut a, &mut b), Some(one));
    /// assert_eq!(pool.iter(a).collect::<Vec<_>>(), [&2]);
    /// assert_eq!(pool.iter(b).collect::<Vec<_>>(), [&1]);
    /// ```
    #[track_caller]
    pub fn move_front(&mut self, from: &mut Head, to: &mut Head) -> Option<K> {
        let from_front = self.front_index(*from);
        let to_front = self.front_index(*to);
        let index = from_front?;
        if to_front == Some(index) {
            panic!("IndexLists::move_front: `from` and `to` are copies of one head");
        }
        let next = self.link(index).next_index();
        if next != NIL {
            self.link_mut(next).set_front(true);
        }
        *from = Head::from_link(next);
        self.link_front(index, to, to_front);
        self.arena.key_at(index as usize)
    }

    /// Moves `node`, which follows `prev` in some list, to the front of
    /// `to`. O(1): the predecessor is what makes it so. The node keeps its
    /// key. `to` may be the node's own list.
    ///
    /// # Errors
    ///
    /// A [`LinkError`] if either key is stale or `node` does not follow
    /// `prev`; nothing changes then.
    ///
    /// # Panics
    ///
    /// If `to` names no list of this pool.
    ///
    /// ```
    /// use handlekit::{Head, IndexLists};
    ///
    /// let mut pool = IndexLists::new();
    /// let (mut a, mut b) = (Head::EMPTY, Head::EMPTY);
    /// let three = pool.push_front(&mut a, 3);
    /// let two = pool.push_front(&mut a, 2);
    /// pool.push_front(&mut a, 1);
    /// pool.move_after(two, three, &mut b).unwrap();
    /// assert_eq!(pool.iter(a).collect::<Vec<_>>(), [&1, &2]);
    /// assert_eq!(pool.iter(b).collect::<Vec<_>>(), [&3]);
    /// ```
    #[track_caller]
    pub fn move_after(&mut self, prev: K, node: K, to: &mut Head) -> Result<(), LinkError> {
        let to_front = self.front_index(*to);
        let prev_index = self.live_index(prev).ok_or(LinkError::StalePrev)?;
        let index = self.live_index(node).ok_or(LinkError::StaleNode)?;
        if self.link(prev_index).next_index() != index {
            return Err(LinkError::NotLinked);
        }
        // `node` has a predecessor, so it is no front: `to_front` differs.
        let after = self.link(index).next_index();
        self.link_mut(prev_index).set_next(after);
        self.link_front(index, to, to_front);
        Ok(())
    }

    /// Removes `node` from the list `head` and returns its value, walking
    /// the list to find its predecessor (O(position)). `None` if the node is
    /// stale or not in this list.
    ///
    /// # Panics
    ///
    /// If `head` names no list of this pool.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// pool.push_front(&mut list, 3);
    /// let two = pool.push_front(&mut list, 2);
    /// pool.push_front(&mut list, 1);
    /// assert_eq!(pool.remove(&mut list, two), Some(2));
    /// assert_eq!(pool.remove(&mut list, two), None);
    /// assert_eq!(pool.iter(list).collect::<Vec<_>>(), [&1, &3]);
    /// ```
    #[track_caller]
    pub fn remove(&mut self, head: &mut Head, node: K) -> Option<T> {
        let front = self.front_index(*head)?;
        let index = self.live_index(node)?;
        if index == front {
            return self.pop_front(head);
        }
        let prev = self.find_prev(front, index)?;
        let after = self.link(index).next_index();
        self.link_mut(prev).set_next(after);
        let link = self.arena.remove(index as usize, node.generation())?;
        Some(link.value)
    }

    /// The predecessor of node `index` in the list that starts at `front`
    /// (which is not `index`), found by walking; `None` if it is not there.
    fn find_prev(&self, front: u32, index: u32) -> Option<u32> {
        if self.link(index).is_front() {
            // The front of another list.
            return None;
        }
        let mut prev = front;
        let mut budget = self.len();
        loop {
            let next = self.link(prev).next_index();
            if next == index {
                return Some(prev);
            }
            if next == NIL {
                return None;
            }
            budget = budget.checked_sub(1).unwrap_or_else(|| cycle());
            prev = next;
        }
    }

    /// Moves `node` from the list `from` to the front of `to`, walking
    /// `from` to find its predecessor (O(position), like
    /// [`remove`](Self::remove)): the grid update when a particle's old cell
    /// is known but not its predecessor. The node keeps its key.
    ///
    /// # Errors
    ///
    /// [`LinkError::StaleNode`] if `node` is stale,
    /// [`LinkError::NotInList`] if it is not in `from`; nothing changes
    /// then.
    ///
    /// # Panics
    ///
    /// If either head names no list of this pool, or `node` is the front of
    /// `from` and `to` is a copy of `from`.
    ///
    /// ```
    /// use handlekit::{Head, IndexLists, LinkError};
    ///
    /// let mut pool = IndexLists::new();
    /// let mut cells = [Head::EMPTY; 2];
    /// pool.push_front(&mut cells[0], 'c');
    /// let b = pool.push_front(&mut cells[0], 'b');
    /// pool.push_front(&mut cells[0], 'a');
    /// let [from, to] = cells.get_disjoint_mut([0, 1]).unwrap();
    /// pool.move_node(from, b, to).unwrap();
    /// assert_eq!(pool.iter(cells[0]).collect::<Vec<_>>(), [&'a', &'c']);
    /// assert_eq!(pool.iter(cells[1]).collect::<Vec<_>>(), [&'b']);
    /// let [from, to] = cells.get_disjoint_mut([0, 1]).unwrap();
    /// assert_eq!(pool.move_node(from, b, to), Err(LinkError::NotInList));
    /// ```
    #[track_caller]
    pub fn move_node(&mut self, from: &mut Head, node: K, to: &mut Head) -> Result<(), LinkError> {
        let from_front = self.front_index(*from);
        let to_front = self.front_index(*to);
        let index = self.live_index(node).ok_or(LinkError::StaleNode)?;
        let front = from_front.ok_or(LinkError::NotInList)?;
        if index == front {
            if to_front == Some(index) {
                panic!("IndexLists::move_node: `from` and `to` are copies of one head");
            }
            let next = self.link(index).next_index();
            if next != NIL {
                self.link_mut(next).set_front(true);
            }
            *from = Head::from_link(next);
        } else {
            let prev = self.find_prev(front, index).ok_or(LinkError::NotInList)?;
            // `node` has a predecessor, so it is no front: `to_front` differs.
            let after = self.link(index).next_index();
            self.link_mut(prev).set_next(after);
        }
        self.link_front(index, to, to_front);
        Ok(())
    }

    /// Drops every node of one list and empties its head. If a value's
    /// `Drop` panics, the head names the nodes not yet dropped.
    ///
    /// # Panics
    ///
    /// If `head` names no list of this pool.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let (mut a, mut b) = (handlekit::Head::EMPTY, handlekit::Head::EMPTY);
    /// pool.push_front(&mut a, 1);
    /// pool.push_front(&mut a, 2);
    /// pool.push_front(&mut b, 3);
    /// pool.clear_list(&mut a);
    /// assert!(a.is_empty());
    /// assert_eq!(pool.len(), 1);
    /// ```
    #[track_caller]
    pub fn clear_list(&mut self, head: &mut Head) {
        while let Some(value) = self.pop_front(head) {
            drop(value);
        }
    }

    /// Drops every node of every list. Every head of this pool is stale
    /// afterwards (set them to [`Head::EMPTY`]), and so is every key. If a
    /// value's `Drop` panics, the other values are still dropped.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// let key = pool.push_front(&mut list, 1);
    /// pool.clear();
    /// list = handlekit::Head::EMPTY;
    /// assert!(pool.is_empty());
    /// assert_eq!(pool.get(key), None);
    /// # let _ = list;
    /// ```
    pub fn clear(&mut self) {
        self.arena.clear();
    }

    /// Iterates the values of one list, front to back.
    ///
    /// # Panics
    ///
    /// If `head` names no list of this pool; while iterating, if the list
    /// has more nodes than the pool (a cycle; the list invariant rules it
    /// out).
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// for x in [3, 2, 1] {
    ///     pool.push_front(&mut list, x);
    /// }
    /// assert_eq!(pool.iter(list).copied().collect::<Vec<_>>(), [1, 2, 3]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn iter(&self, head: Head) -> Iter<'_, T, K> {
        Iter {
            walk: self.walk(head),
        }
    }

    /// Iterates the values of one list mutably, front to back.
    ///
    /// # Panics
    ///
    /// As [`iter`](Self::iter).
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// pool.push_front(&mut list, 1);
    /// pool.push_front(&mut list, 2);
    /// for x in pool.iter_mut(list) {
    ///     *x *= 10;
    /// }
    /// assert_eq!(pool.iter(list).copied().collect::<Vec<_>>(), [20, 10]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn iter_mut(&mut self, head: Head) -> IterMut<'_, T> {
        let cursor = self.cursor(head);
        IterMut {
            cursor,
            access: self.arena.exclusive(),
        }
    }

    /// Iterates the keys of one list's nodes, front to back.
    ///
    /// # Panics
    ///
    /// As [`iter`](Self::iter).
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// let b = pool.push_front(&mut list, 'b');
    /// let a = pool.push_front(&mut list, 'a');
    /// assert_eq!(pool.keys(list).collect::<Vec<_>>(), [a, b]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn keys(&self, head: Head) -> Keys<'_, T, K> {
        Keys {
            walk: self.walk(head),
        }
    }

    #[inline]
    #[track_caller]
    fn cursor(&self, head: Head) -> Cursor {
        Cursor {
            next: self.front_index(head).unwrap_or(NIL),
            budget: self.len(),
        }
    }

    /// The walk along the list that starts at `head`.
    #[inline]
    #[track_caller]
    fn walk(&self, head: Head) -> SharedWalk<'_, T, K> {
        SharedWalk {
            cursor: self.cursor(head),
            lists: self,
        }
    }

    /// Iterates `(key, &value)` over every node of every list, in storage
    /// order (not list order).
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let (mut a, mut b) = (handlekit::Head::EMPTY, handlekit::Head::EMPTY);
    /// let x = pool.push_front(&mut a, 'x');
    /// let y = pool.push_front(&mut b, 'y');
    /// assert_eq!(pool.nodes().collect::<Vec<_>>(), [(x, &'x'), (y, &'y')]);
    /// ```
    #[inline]
    pub fn nodes(&self) -> Nodes<'_, T, K> {
        Nodes {
            inner: crate::iter::Iter::new(self.arena.keyed_iter()),
        }
    }

    /// Iterates `(key, &mut value)` over every node of every list, in
    /// storage order: after [`compact`](Self::compact), one sequential
    /// sweep.
    ///
    /// ```
    /// let mut pool = handlekit::IndexLists::new();
    /// let mut list = handlekit::Head::EMPTY;
    /// pool.push_front(&mut list, 1);
    /// pool.push_front(&mut list, 2);
    /// for (_, x) in pool.nodes_mut() {
    ///     *x += 1;
    /// }
    /// assert_eq!(pool.iter(list).copied().collect::<Vec<_>>(), [3, 2]);
    /// ```
    #[inline]
    pub fn nodes_mut(&mut self) -> NodesMut<'_, T, K> {
        NodesMut {
            inner: crate::iter::IterMut::new(self.arena.keyed_iter_mut()),
        }
    }

    /// Walks the list `heads[list]` and moves every node for which
    /// `to(&value)` names another list to the front of `heads[to(&value)]`:
    /// one pass of a grid update, where `to` gives a particle's cell. Nodes
    /// keep their keys. O(length of the list).
    ///
    /// Every move is complete before `to` is called again, so if `to`
    /// panics, every node is still in exactly one list and every head in
    /// `heads` is up to date.
    ///
    /// # Panics
    ///
    /// If `list` or a value of `to` is out of bounds of `heads`, if a head
    /// it touches names no list of this pool, or if `heads[list]` and the
    /// target of a move name the same list.
    ///
    /// ```
    /// use handlekit::{Head, IndexLists};
    ///
    /// let mut pool = IndexLists::new();
    /// let mut buckets = [Head::EMPTY; 3];
    /// for x in [5, 4, 3, 2, 1, 0] {
    ///     pool.push_front(&mut buckets[0], x);
    /// }
    /// pool.redistribute(&mut buckets, 0, |x| x % 3);
    /// assert_eq!(pool.iter(buckets[0]).collect::<Vec<_>>(), [&0, &3]);
    /// assert_eq!(pool.iter(buckets[1]).collect::<Vec<_>>(), [&4, &1]);
    /// assert_eq!(pool.iter(buckets[2]).collect::<Vec<_>>(), [&5, &2]);
    /// ```
    #[track_caller]
    pub fn redistribute(
        &mut self,
        heads: &mut [Head],
        list: usize,
        mut to: impl FnMut(&T) -> usize,
    ) {
        let mut current = self.front_index(heads[list]).unwrap_or(NIL);
        let mut prev = NIL;
        let mut budget = self.len();
        while current != NIL {
            budget = budget.checked_sub(1).unwrap_or_else(|| cycle());
            let link = self.link(current);
            let next = link.next_index();
            let target = to(&link.value);
            if target == list {
                prev = current;
                current = next;
                continue;
            }
            let Some(&target_head) = heads.get(target) else {
                panic!(
                    "IndexLists::redistribute: `to` returned list {target}, but there are {} heads",
                    heads.len()
                );
            };
            let target_front = self.front_index(target_head);
            if prev == NIL {
                // `current` is the front of `heads[list]`.
                if target_front == Some(current) {
                    panic!(
                        "IndexLists::redistribute: heads[{list}] and heads[{target}] name the same list"
                    );
                }
                if next != NIL {
                    self.link_mut(next).set_front(true);
                }
                heads[list] = Head::from_link(next);
            } else {
                self.link_mut(prev).set_next(next);
            }
            self.link_front(current, &mut heads[target], target_front);
            current = next;
        }
    }

    /// Rewrites the node array so that each list's nodes are contiguous and
    /// in order, the lists one after another in the order of `heads`, and
    /// updates the heads: the seed's "post-processing copy". Afterwards,
    /// walking every list in head order is one sequential sweep of memory,
    /// and new nodes take the lowest free slots.
    ///
    /// Every node moves (or stays) and gets a new key: all keys issued
    /// before are stale afterwards. Read the new ones with
    /// [`keys`](Self::keys). `heads` must hold the head of every list of
    /// the pool (empty heads may be mixed in); nothing is checked or moved
    /// before that is established.
    ///
    /// Compacting ages every node slot by one generation; a slot whose
    /// generation runs out retires and is skipped, so with narrow keys
    /// (such as [`Id32`](crate::Id32)) compacting very often leaves holes
    /// and grows the pool. With [`Id`] a slot lasts two billion compactions.
    ///
    /// O(len + heads), with a temporary buffer of `len` values.
    ///
    /// # Panics
    ///
    /// If a head names no list of this pool, two heads name the same list,
    /// or the heads miss a list (their lists hold fewer nodes than
    /// [`len`](Self::len)). Nothing has changed then.
    ///
    /// ```
    /// use handlekit::{Head, IndexLists};
    ///
    /// let mut pool = IndexLists::new();
    /// let mut lists = [Head::EMPTY; 2];
    /// for i in 0..6 {
    ///     pool.push_front(&mut lists[i % 2], i);
    /// }
    /// pool.compact(&mut lists);
    /// // List 0 (4, 2, 0) now occupies slots 0..3, list 1 (5, 3, 1) slots 3..6.
    /// let slots: Vec<usize> = lists
    ///     .iter()
    ///     .flat_map(|&head| pool.keys(head))
    ///     .map(|key| handlekit::Key::index(key))
    ///     .collect();
    /// assert_eq!(slots, [0, 1, 2, 3, 4, 5]);
    /// assert_eq!(pool.iter(lists[0]).collect::<Vec<_>>(), [&4, &2, &0]);
    /// ```
    #[track_caller]
    pub fn compact(&mut self, heads: &mut [Head]) {
        let len = self.len();
        // 1. Walk the lists in head order. A visited front loses its FRONT
        //    flag for the walk, so a second head of the same list fails the
        //    head check; the flags are restored before anything else.
        let mut order: Vec<u32> = Vec::with_capacity(len);
        let mut lengths: Vec<u32> = Vec::with_capacity(heads.len());
        let mut failed = None;
        for (i, &head) in heads.iter().enumerate() {
            if head.is_empty() {
                lengths.push(0);
                continue;
            }
            if !self.is_head(head) {
                failed = Some(i);
                break;
            }
            self.link_mut(head.0).set_front(false);
            let start = order.len();
            let mut cursor = head.0;
            while cursor != NIL {
                if order.len() == len {
                    cycle();
                }
                order.push(cursor);
                cursor = self.link(cursor).next_index();
            }
            lengths.push((order.len() - start) as u32);
        }
        for &head in &heads[..lengths.len()] {
            if !head.is_empty() {
                self.link_mut(head.0).set_front(true);
            }
        }
        if let Some(i) = failed {
            panic!(
                "IndexLists::compact: heads[{i}] = {:?} is not the head of a list in this pool \
                 (stale, from another pool, or the same list as an earlier head)",
                heads[i]
            );
        }
        if order.len() != len {
            panic!(
                "IndexLists::compact: the heads reach {} of the pool's {len} nodes; pass the head of every list",
                order.len()
            );
        }
        // 2. Take the values out, in list order. No user code runs from here
        //    on; the pool stays consistent at every step.
        let mut values: Vec<T> = Vec::with_capacity(len);
        for &index in &order {
            let Some(generation) = self.arena.generation_at(index as usize) else {
                broken_link(index)
            };
            match self.arena.remove(index as usize, generation) {
                Some(link) => values.push(link.value),
                None => broken_link(index),
            }
        }
        drop(order);
        // 3. Refill from the lowest free slot up: each list gets a run of
        //    consecutive slots (skipping retired ones) and new generations.
        self.arena.rebuild_free_list();
        let mut values = values.into_iter();
        for (head, &length) in heads.iter_mut().zip(&lengths) {
            let mut prev = NIL;
            for _ in 0..length {
                let Some(value) = values.next() else { break };
                let next = if prev == NIL { FRONT | NIL } else { NIL };
                let index = match self.arena.try_insert_with(|_, _| Link { next, value }) {
                    Ok((index, _)) => index as u32,
                    Err(err) => panic!("IndexLists::compact: {err}"),
                };
                if prev == NIL {
                    *head = Head::at(index);
                } else {
                    self.link_mut(prev).set_next(index);
                }
                prev = index;
            }
        }
    }

    /// Checks the pool's invariants (the slot core's, and the list
    /// invariant: links name live nodes, no node has two predecessors,
    /// `FRONT` is set exactly on nodes without one, no cycles) and panics if
    /// one is broken. O(slots). For tests and fuzzing; not part of the
    /// stable API.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        self.arena.check_invariants();
        if let Err(problem) = self.check_links() {
            panic!("IndexLists: {problem}");
        }
    }

    /// A pool over deserialized nodes whose front flags are not set yet:
    /// sets them, then checks the list invariant.
    #[cfg(feature = "serde")]
    fn from_arena(mut arena: SlotArena<Link<T>, K>) -> Result<Self, LinkProblem> {
        let slots = arena.iter().map(|(index, _, _)| index + 1).max();
        let mut has_predecessor = alloc::vec![false; slots.unwrap_or(0)];
        for (_, _, link) in arena.iter() {
            let next = link.next_index();
            if let Some(flag) = has_predecessor.get_mut(next as usize) {
                *flag = true;
            }
        }
        for (index, _, link) in arena.iter_mut() {
            link.set_front(!has_predecessor[index]);
        }
        let lists = IndexLists {
            arena,
            _key: PhantomData,
        };
        lists.check_links()?;
        Ok(lists)
    }

    /// Checks the list invariant; the message names the first problem.
    fn check_links(&self) -> Result<(), LinkProblem> {
        let slots = self.arena.iter().map(|(index, _, _)| index + 1).max();
        let mut predecessors = alloc::vec![0u8; slots.unwrap_or(0)];
        for (index, _, link) in self.arena.iter() {
            let next = link.next_index();
            if next == NIL {
                continue;
            }
            if self.arena.value_at(next as usize).is_none() {
                return Err(LinkProblem::Dangling {
                    from: index,
                    to: next,
                });
            }
            let count = &mut predecessors[next as usize];
            if *count > 0 {
                return Err(LinkProblem::TwoPredecessors(next));
            }
            *count = 1;
        }
        let mut reached = 0usize;
        for (index, _, link) in self.arena.iter() {
            let front = predecessors[index] == 0;
            if link.is_front() != front {
                return Err(LinkProblem::FrontFlag(index));
            }
            if front {
                // Each node has at most one predecessor, so a walk from a
                // front cannot meet a cycle; nodes on a cycle are never
                // reached from a front.
                let mut cursor = index as u32;
                while cursor != NIL {
                    reached += 1;
                    cursor = self.link(cursor).next_index();
                }
            }
        }
        if reached != self.len() {
            return Err(LinkProblem::Cycle);
        }
        Ok(())
    }
}

/// A break of the list invariant, found by `check_links`.
#[derive(Debug)]
enum LinkProblem {
    Dangling { from: usize, to: u32 },
    TwoPredecessors(u32),
    FrontFlag(usize),
    Cycle,
}

impl fmt::Display for LinkProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkProblem::Dangling { from, to } => {
                write!(f, "node {from} links to {to}, which is no live node")
            }
            LinkProblem::TwoPredecessors(index) => {
                write!(f, "node {index} has two predecessors")
            }
            LinkProblem::FrontFlag(index) => {
                write!(f, "node {index} has a wrong front flag")
            }
            LinkProblem::Cycle => f.write_str("the links form a cycle"),
        }
    }
}

impl<T, K: Key> Default for IndexLists<T, K> {
    /// An empty pool.
    fn default() -> Self {
        IndexLists {
            arena: SlotArena::new(Self::limits()),
            _key: PhantomData,
        }
    }
}

impl<T: Clone, K: Key> Clone for IndexLists<T, K> {
    /// A copy with every node at the same index and generation: every head
    /// and key of the original names the same list and node in the copy.
    fn clone(&self) -> Self {
        IndexLists {
            arena: self.arena.clone(),
            _key: PhantomData,
        }
    }

    /// Reuses this pool's allocation. If a value's `clone` (or an old
    /// value's `Drop`) panics, this pool is left empty: a partial copy
    /// would hold nodes whose predecessors were never copied.
    fn clone_from(&mut self, source: &Self) {
        /// Empties the arena if the copy does not finish.
        struct ClearOnUnwind<'a, T, K>(&'a mut SlotArena<Link<T>, K>);
        impl<T, K> Drop for ClearOnUnwind<'_, T, K> {
            fn drop(&mut self) {
                self.0.clear();
            }
        }
        let guard = ClearOnUnwind(&mut self.arena);
        guard.0.clone_from(&source.arena);
        core::mem::forget(guard);
    }
}

impl<T: fmt::Debug, K: Key> fmt::Debug for IndexLists<T, K> {
    /// The nodes in storage order, as `key: (value, next key)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.nodes()
                    .map(|(key, value)| (key, (value, self.next_node(key)))),
            )
            .finish()
    }
}

impl<T, K: Key> Index<K> for IndexLists<T, K> {
    type Output = T;

    /// The value of a node.
    ///
    /// # Panics
    ///
    /// If the key is stale.
    #[track_caller]
    fn index(&self, node: K) -> &T {
        match self.get(node) {
            Some(value) => value,
            None => panic!("IndexLists: {node:?} names no live node"),
        }
    }
}

impl<T, K: Key> IndexMut<K> for IndexLists<T, K> {
    /// The value of a node, mutably.
    ///
    /// # Panics
    ///
    /// If the key is stale.
    #[track_caller]
    fn index_mut(&mut self, node: K) -> &mut T {
        match self.get_mut(node) {
            Some(value) => value,
            None => panic!("IndexLists: {node:?} names no live node"),
        }
    }
}

/// The walk along one list: the next node, and how many more steps the
/// pool's size allows.
#[derive(Clone, Copy)]
struct Cursor {
    /// The node to visit next, or `NIL`.
    next: u32,
    /// Steps left before the walk has visited more nodes than the pool has.
    budget: usize,
}

impl Cursor {
    /// The node to visit now; counts the step.
    #[inline]
    fn step(&mut self) -> Option<u32> {
        if self.next == NIL {
            return None;
        }
        self.budget = self.budget.checked_sub(1).unwrap_or_else(|| cycle());
        Some(self.next)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.next == NIL {
            (0, Some(0))
        } else {
            (1, Some(self.budget))
        }
    }
}

/// The walk along one list of a shared pool: the cursor, and the pool
/// whose links it follows. What [`Iter`] and [`Keys`] step.
struct SharedWalk<'a, T, K: Key> {
    cursor: Cursor,
    lists: &'a IndexLists<T, K>,
}

impl<T, K: Key> Clone for SharedWalk<'_, T, K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, K: Key> Copy for SharedWalk<'_, T, K> {}

impl<'a, T, K: Key> SharedWalk<'a, T, K> {
    /// The node visited now and its link; moves the cursor past it.
    #[inline]
    fn step(&mut self) -> Option<(u32, &'a Link<T>)> {
        let index = self.cursor.step()?;
        let link = self.lists.link(index);
        self.cursor.next = link.next_index();
        Some((index, link))
    }
}

/// Iterator over the values of one list; see [`IndexLists::iter`].
pub struct Iter<'a, T, K: Key = Id> {
    walk: SharedWalk<'a, T, K>,
}

impl<'a, T, K: Key> Iterator for Iter<'a, T, K> {
    type Item = &'a T;

    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        self.walk.step().map(|(_, link)| &link.value)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.walk.cursor.size_hint()
    }
}

impl<T, K: Key> FusedIterator for Iter<'_, T, K> {}

impl<T, K: Key> Clone for Iter<'_, T, K> {
    fn clone(&self) -> Self {
        Iter { walk: self.walk }
    }
}

impl<T: fmt::Debug, K: Key> fmt::Debug for Iter<'_, T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Iterator over the keys of one list's nodes; see [`IndexLists::keys`].
pub struct Keys<'a, T, K: Key = Id> {
    walk: SharedWalk<'a, T, K>,
}

impl<T, K: Key> Iterator for Keys<'_, T, K> {
    type Item = K;

    #[inline]
    fn next(&mut self) -> Option<K> {
        let (index, _) = self.walk.step()?;
        self.walk.lists.arena.key_at(index as usize)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.walk.cursor.size_hint()
    }
}

impl<T, K: Key> FusedIterator for Keys<'_, T, K> {}

impl<T, K: Key> Clone for Keys<'_, T, K> {
    fn clone(&self) -> Self {
        Keys { walk: self.walk }
    }
}

impl<T, K: Key> fmt::Debug for Keys<'_, T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Iterator over the values of one list, mutably; see
/// [`IndexLists::iter_mut`].
pub struct IterMut<'a, T> {
    cursor: Cursor,
    /// The pool's slots, borrowed exclusively for `'a`.
    access: Exclusive<'a, Link<T>>,
}

impl<'a, T> Iterator for IterMut<'a, T> {
    type Item = &'a mut T;

    #[inline]
    fn next(&mut self) -> Option<&'a mut T> {
        let index = self.cursor.step()?;
        // By the list invariant (on `IndexLists::arena`) the walk from a
        // front node visits each node at most once, and the pool cannot
        // change while `access` borrows it. (The cursor's budget also stops
        // the walk after `len` steps.)
        // SAFETY: so no index is asked for twice.
        let Some(link) = (unsafe { self.access.value_at(index as usize) }) else {
            broken_link(index)
        };
        self.cursor.next = link.next_index();
        Some(&mut link.value)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.cursor.size_hint()
    }
}

impl<T> FusedIterator for IterMut<'_, T> {}

impl<T> fmt::Debug for IterMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IterMut").finish_non_exhaustive()
    }
}

/// Iterator over `(key, &value)` for every node, in storage order; see
/// [`IndexLists::nodes`]. Double-ended, with an exact length.
///
/// ```
/// let mut pool = handlekit::IndexLists::new();
/// let mut list = handlekit::Head::EMPTY;
/// pool.push_front(&mut list, 'a');
/// pool.push_front(&mut list, 'b');
/// let nodes: handlekit::index_lists::Nodes<'_, char> = pool.nodes();
/// assert_eq!(nodes.rev().map(|(_, c)| *c).collect::<String>(), "ba");
/// ```
pub struct Nodes<'a, T, K: Key = Id> {
    inner: crate::iter::Iter<'a, Link<T>, K>,
}

impl<'a, T, K: Key> Iterator for Nodes<'a, T, K> {
    type Item = (K, &'a T);

    #[inline(always)]
    fn next(&mut self) -> Option<(K, &'a T)> {
        self.inner.next().map(|(key, link)| (key, &link.value))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }

    #[inline]
    fn fold<B, F: FnMut(B, (K, &'a T)) -> B>(self, init: B, mut f: F) -> B {
        // `move`: the closure holds `f`, not a reference to it (see the
        // table iterators' `fold`).
        self.inner
            .fold(init, move |acc, (key, link)| f(acc, (key, &link.value)))
    }
}

impl<T, K: Key> DoubleEndedIterator for Nodes<'_, T, K> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(key, link)| (key, &link.value))
    }
}

impl<T, K: Key> ExactSizeIterator for Nodes<'_, T, K> {}
impl<T, K: Key> FusedIterator for Nodes<'_, T, K> {}

impl<T, K: Key> Clone for Nodes<'_, T, K> {
    fn clone(&self) -> Self {
        Nodes {
            inner: self.inner.clone(),
        }
    }
}

impl<T: fmt::Debug, K: Key> fmt::Debug for Nodes<'_, T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Iterator over `(key, &mut value)` for every node, in storage order; see
/// [`IndexLists::nodes_mut`]. Double-ended, with an exact length.
///
/// ```
/// let mut pool = handlekit::IndexLists::new();
/// let mut list = handlekit::Head::EMPTY;
/// pool.push_front(&mut list, 1);
/// let nodes: handlekit::index_lists::NodesMut<'_, i32> = pool.nodes_mut();
/// nodes.for_each(|(_, value)| *value += 1);
/// assert_eq!(pool.iter(list).copied().collect::<Vec<_>>(), [2]);
/// ```
pub struct NodesMut<'a, T, K: Key = Id> {
    inner: crate::iter::IterMut<'a, Link<T>, K>,
}

impl<'a, T, K: Key> Iterator for NodesMut<'a, T, K> {
    type Item = (K, &'a mut T);

    #[inline(always)]
    fn next(&mut self) -> Option<(K, &'a mut T)> {
        self.inner.next().map(|(key, link)| (key, &mut link.value))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }

    #[inline]
    fn fold<B, F: FnMut(B, (K, &'a mut T)) -> B>(self, init: B, mut f: F) -> B {
        // `move`, as above.
        self.inner
            .fold(init, move |acc, (key, link)| f(acc, (key, &mut link.value)))
    }
}

impl<T, K: Key> DoubleEndedIterator for NodesMut<'_, T, K> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner
            .next_back()
            .map(|(key, link)| (key, &mut link.value))
    }
}

impl<T, K: Key> ExactSizeIterator for NodesMut<'_, T, K> {}
impl<T, K: Key> FusedIterator for NodesMut<'_, T, K> {}

impl<T, K: Key> fmt::Debug for NodesMut<'_, T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodesMut")
            .field("remaining", &self.inner.len())
            .finish()
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    /// A corrupted link (which no public operation can make) is caught by
    /// iteration and by the invariant checker instead of looping forever.
    #[test]
    fn iteration_catches_a_cycle() {
        let mut pool = IndexLists::new();
        let mut list = Head::EMPTY;
        let last = pool.push_front(&mut list, 1);
        pool.push_front(&mut list, 2);
        pool.push_front(&mut list, 3);
        // Point the last node back at the front.
        let front = list.0;
        pool.link_mut(last.index() as u32).set_next(front);
        assert!(matches!(pool.check_links(), Err(LinkProblem::FrontFlag(_))));
        let walked = std::panic::catch_unwind(|| pool.iter(list).count());
        assert!(walked.is_err(), "a cyclic list must not iterate");
        let keys = std::panic::catch_unwind(|| pool.keys(list).count());
        assert!(keys.is_err());
    }

    #[test]
    fn check_links_finds_each_problem() {
        let mut pool = IndexLists::new();
        let mut list = Head::EMPTY;
        let b = pool.push_front(&mut list, 'b');
        let a = pool.push_front(&mut list, 'a');
        assert!(pool.check_links().is_ok());

        pool.link_mut(a.index() as u32).set_front(false);
        assert!(matches!(pool.check_links(), Err(LinkProblem::FrontFlag(_))));
        pool.link_mut(a.index() as u32).set_front(true);

        pool.link_mut(b.index() as u32).set_next(7);
        assert!(matches!(
            pool.check_links(),
            Err(LinkProblem::Dangling { .. })
        ));

        // A two-node cycle that no front reaches.
        pool.link_mut(b.index() as u32).set_next(a.index() as u32);
        pool.link_mut(a.index() as u32).set_front(false);
        assert!(matches!(pool.check_links(), Err(LinkProblem::Cycle)));
    }

    #[test]
    fn node_size() {
        use crate::raw::slot::Slot;
        assert_eq!(size_of::<Slot<Link<u32>>>(), 12);
        assert_eq!(size_of::<Slot<Link<[f32; 4]>>>(), 24);
        assert_eq!(size_of::<Slot<Link<u64>>>(), 24);
        assert_eq!(size_of::<Head>(), 4);
    }
}

//! The world: entities, rows and the component storages.

use std::alloc::Layout;
use std::any::{type_name, TypeId};
use std::ptr;

use handlekit::VmVec;

use crate::access::HeldBorrow;
use crate::entities::EntityTable;
use crate::storage::{
    push_or_rebase, slack, BorrowFlag, Column, ErasedStorage, RowsView, Storage, TypeEntry,
    TypeIndex, TypeSlot, TypedStorage, WORD,
};
use crate::{ComponentError, Entity, NoSuchEntity, SpawnError};

/// Anything that can be a component: `Send + Sync + 'static`.
///
/// ```
/// fn takes<T: handlekit_ecs::Component>() {}
/// takes::<[f32; 3]>();
/// takes::<String>();
/// ```
pub trait Component: Send + Sync + 'static {}
impl<T: Send + Sync + 'static> Component for T {}

/// What a world knows of a component type without its type: enough to
/// drop a value of it held type-erased, or move one onto an entity. An
/// entity builder's entries are made of it, and so is
/// [`World::take`](crate::World::take)'s builder, one per column.
#[derive(Clone, Copy)]
pub(crate) struct ComponentMeta {
    /// `TypeId::of::<T>()`.
    pub(crate) id: TypeId,
    /// `type_name::<T>()`.
    pub(crate) name: &'static str,
    /// `Layout::new::<T>()`.
    pub(crate) layout: Layout,
    /// Drops the pointed-to `T` in place (see [`drop_erased`]).
    pub(crate) drop: unsafe fn(*mut u8),
    /// Moves the pointed-to `T` out and onto an entity of a world (see
    /// [`put_erased`]).
    pub(crate) put: unsafe fn(*mut u8, &mut World, Entity, usize),
}

impl ComponentMeta {
    /// The description of `T`.
    pub(crate) fn of<T: Component>() -> Self {
        ComponentMeta {
            id: TypeId::of::<T>(),
            name: type_name::<T>(),
            layout: Layout::new::<T>(),
            drop: drop_erased::<T>,
            put: put_erased::<T>,
        }
    }
}

/// Drops the `T` at `ptr` in place.
///
/// # Safety
///
/// `ptr` points to an initialized, aligned `T` that nothing uses afterwards.
unsafe fn drop_erased<T>(ptr: *mut u8) {
    // SAFETY: the caller's contract.
    unsafe { ptr::drop_in_place(ptr.cast::<T>()) }
}

/// Moves the `T` at `src` onto `entity` (at `row`) of `world`, registering
/// `T`'s storage (dense) if the world has none, and dropping any `T` the
/// entity had. The world's one type-erased put: the world needs no vtable
/// entry or column constructor, the function made for `T` does it typed.
///
/// # Safety
///
/// `src` points to an initialized, aligned `T`, which the call takes over
/// (the caller must not use or drop it afterwards, even if this panics);
/// `entity` is alive at `row`.
pub(crate) unsafe fn put_erased<T: Component>(
    src: *mut u8,
    world: &mut World,
    entity: Entity,
    row: usize,
) {
    // SAFETY: the caller's contract: an initialized `T` handed over.
    let value = unsafe { src.cast::<T>().read() };
    drop(world.storage_mut::<T>().insert(entity, row, value));
}

/// How [`World::collect`] treats the live entities it finds in the rows it
/// examines.
///
/// ```
/// use handlekit_ecs::{Order, World};
/// let mut world = World::new();
/// let es: Vec<_> = (0..10u32).map(|i| world.spawn((i,))).collect();
/// for &e in &es[..5] { world.despawn(e).unwrap(); }
/// world.collect(8, Order::Preserve);
/// let order: Vec<u32> = world.query_mut::<&u32>().into_iter().copied().collect();
/// assert_eq!(order, [5, 6, 7, 8, 9]); // creation order kept
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Move them to the back of the world (behind the newest entity): the
    /// fewest moves, the examined rows all become free.
    Any,
    /// Compact them towards the end of the examined range, keeping their
    /// order: iteration keeps visiting entities in creation order.
    Preserve,
}

/// What one [`World::collect`] did.
///
/// ```
/// use handlekit_ecs::{Order, World};
/// let mut world = World::new();
/// let e = world.spawn((1u8,));
/// world.spawn((2u8,));
/// world.despawn(e).unwrap();
/// let done = world.collect(100, Order::Any);
/// assert_eq!((done.examined, done.moved), (2, 1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Collected {
    /// Rows examined from the front.
    pub examined: usize,
    /// Live entities moved to another row.
    pub moved: usize,
    /// Bytes of committed memory given back to the system (0 on the heap
    /// fallback, which frees nothing before the world is dropped).
    pub released: usize,
}

/// The maximum row count of [`World::new`]: 2²⁴ rows with virtual memory
/// (a column of 64-byte components reserves 1 GiB of address space and
/// commits only what its rows reach), 2¹² on the heap fallback (where every
/// column allocates its whole reservation up front).
///
/// ```
/// use handlekit_ecs::{World, DEFAULT_MAX_ROWS};
/// assert_eq!(World::new().max_rows(), DEFAULT_MAX_ROWS);
/// ```
pub const DEFAULT_MAX_ROWS: usize = if handlekit::vm_vec::VIRTUAL_MEMORY {
    1 << 24
} else {
    1 << 12
};

/// A set of entities and their components. See the [crate docs](crate) for
/// the design.
///
/// ```
/// use handlekit_ecs::World;
///
/// #[derive(Debug, PartialEq)]
/// struct Pos(f32);
/// struct Vel(f32);
///
/// let mut world = World::new();
/// let a = world.spawn((Pos(0.0), Vel(1.0)));
/// let b = world.spawn((Pos(5.0),));
/// for (p, v) in world.query_mut::<(&mut Pos, &Vel)>() {
///     p.0 += v.0;
/// }
/// assert_eq!(*world.get::<Pos>(a).unwrap(), Pos(1.0));
/// assert_eq!(*world.get::<Pos>(b).unwrap(), Pos(5.0));
/// ```
pub struct World {
    /// Entity → the low 32 bits of the row of every live entity (8 bytes an
    /// index); [`full_row`](Self::full_row) restores the row, which is the
    /// one of the window with those bits (the window holds fewer than 2³¹
    /// rows). Invariant: `full_row(entities.get(e)) == r` if and only if
    /// row `r` is alive and `rows[r] == e`.
    pub(crate) entities: EntityTable,
    /// Row → entity for the rows of the window: row `r` at position `r`.
    /// The window is `[front, next)` with `front = rows.front_position()`,
    /// `next = rows.next_position()`. A dead row keeps its last entity.
    pub(crate) rows: VmVec<Entity>,
    /// The alive bits: word `w` (rows `64w..64w + 64`) at position `w`.
    /// Invariant: a set bit names a row of the window whose entity is alive;
    /// words cover the window (the word of `front` up to that of `next - 1`).
    pub(crate) alive: VmVec<u64>,
    /// The storages, in registration order.
    pub(crate) columns: Vec<Column>,
    /// The description of each column's type: `metas[i]` is
    /// `ComponentMeta::of::<T>()` for the `T` of `columns[i]` (pushed
    /// together in `add_column`).
    pub(crate) metas: Vec<ComponentMeta>,
    /// Component type → index into `columns` and the address of its
    /// storage. Invariant: it names column `i` and storage `p` for
    /// `TypeId::of::<T>()` only if `i < columns.len()`, `columns[i].storage`
    /// is a `TypedStorage<T>`, `p` is its `data_ptr()` and the slot's
    /// lookup head is the storage's `head_ptr()` (`add_column`
    /// pushes the column and registers its type together; columns never
    /// move or go, and a storage stays at its address while its column
    /// lives): the typed accesses index, cast and dereference unchecked,
    /// shared under `&self` and exclusive under `&mut self`.
    types: TypeIndex,
    /// The most rows the window may hold.
    max_rows: usize,
    /// The queries that hold columns through groups (hecs's borrow rule,
    /// see `groups.rs`).
    pub(crate) groups: crate::groups::Groups,
}

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("len", &self.len())
            .field("rows", &self.rows.len())
            .field(
                "components",
                &self.columns.iter().map(|c| c.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl World {
    /// An empty world with room for [`DEFAULT_MAX_ROWS`] rows.
    ///
    /// ```
    /// let world = handlekit_ecs::World::new();
    /// assert!(world.is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        World::with_max_rows(DEFAULT_MAX_ROWS)
    }

    /// An empty world whose row window holds at most `max_rows` rows (live
    /// entities plus dead rows not yet collected). Every dense column
    /// reserves address space for that many components and commits memory
    /// only as rows reach it.
    ///
    /// # Panics
    ///
    /// If the address space cannot be reserved, or `max_rows` exceeds 2³¹.
    ///
    /// ```
    /// let world = handlekit_ecs::World::with_max_rows(1_000);
    /// assert_eq!(world.max_rows(), 1_000);
    /// ```
    #[must_use]
    pub fn with_max_rows(max_rows: usize) -> Self {
        World::with_entities(
            max_rows,
            EntityTable::with_max_slots(max_entity_slots(max_rows)),
        )
    }

    /// An empty world of `max_rows` rows around `entities`; panics as
    /// [`with_max_rows`](Self::with_max_rows) does.
    fn with_entities(max_rows: usize, entities: EntityTable) -> Self {
        assert!(
            max_rows <= 1 << 31,
            "handlekit-ecs: at most 2^31 rows (asked for {max_rows})"
        );
        World {
            entities,
            rows: reserve(max_rows + slack::<Entity>()),
            alive: reserve(max_rows / WORD + 2 + slack::<u64>()),
            columns: Vec::new(),
            metas: Vec::new(),
            types: TypeIndex::default(),
            max_rows,
            groups: crate::groups::Groups::default(),
        }
    }

    /// The most rows the window may hold (see [`with_max_rows`](Self::with_max_rows)).
    ///
    /// ```
    /// assert_eq!(handlekit_ecs::World::with_max_rows(8).max_rows(), 8);
    /// ```
    #[must_use]
    pub fn max_rows(&self) -> usize {
        self.max_rows
    }

    /// Chooses the storage of component type `T`. Returns `false` (and
    /// changes nothing) if `T` already has a storage: a type is registered
    /// on its first use, dense unless registered before.
    ///
    /// ```
    /// use handlekit_ecs::{Storage, World};
    /// let mut world = World::new();
    /// world.spawn((1u8,));
    /// assert!(!world.register::<u8>(Storage::Sparse)); // already dense
    /// assert!(world.register::<u16>(Storage::Sparse));
    /// ```
    pub fn register<T: Component>(&mut self, storage: Storage) -> bool {
        if self.types.get(TypeId::of::<T>()).is_some() {
            return false;
        }
        self.add_column::<T>(storage);
        true
    }

    /// The storage of `T`, if it is registered.
    ///
    /// ```
    /// use handlekit_ecs::{Storage, World};
    /// let mut world = World::new();
    /// assert_eq!(world.storage_of::<u8>(), None);
    /// world.spawn((1u8,));
    /// assert_eq!(world.storage_of::<u8>(), Some(Storage::Dense));
    /// ```
    #[must_use]
    pub fn storage_of<T: Component>(&self) -> Option<Storage> {
        self.column_index::<T>().map(|i| self.columns[i].kind)
    }

    fn add_column<T: Component>(&mut self, kind: Storage) -> usize {
        let storage = match kind {
            Storage::Dense => TypedStorage::<T>::dense(
                self.rows.front_position(),
                self.max_rows,
                self.columns.len(),
            ),
            Storage::Sparse => TypedStorage::<T>::sparse(),
        };
        let head = storage.head_ptr();
        self.columns.push(Column {
            flag: BorrowFlag::default(),
            name: type_name::<T>(),
            kind,
            storage: ErasedStorage::new(storage),
        });
        self.metas.push(ComponentMeta::of::<T>());
        let index = self.columns.len() - 1;
        let storage = self.columns[index].storage.data_ptr();
        self.types.insert(TypeId::of::<T>(), index, storage, head);
        index
    }

    #[inline]
    pub(crate) fn column_index<T: Component>(&self) -> Option<usize> {
        self.types.get(TypeId::of::<T>()).map(|entry| entry.column)
    }

    /// The storage of `T`, mutably, if it is registered.
    #[inline]
    pub(crate) fn typed_storage_mut<T: Component>(&mut self) -> Option<&mut TypedStorage<T>> {
        let entry = self.types.get(TypeId::of::<T>())?;
        // SAFETY: `types` names this storage for `T` (its invariant): a
        // live `TypedStorage<T>`; `&mut self` makes the access unique.
        Some(unsafe { entry.storage.cast::<TypedStorage<T>>().as_mut() })
    }

    /// The storage of `T`, registered (dense) if it has none. Always
    /// inlined, with the registration out of line: `insert_one` is then the
    /// type's slot and the insert, with no call.
    #[inline(always)]
    pub(crate) fn storage_mut<T: Component>(&mut self) -> &mut TypedStorage<T> {
        let entry = self.entry_or_register::<T>();
        // `types` names this storage for `T` (its invariant); `&mut self`
        // makes the access unique.
        // SAFETY: so it is a live `TypedStorage<T>`, borrowed exclusively.
        unsafe { entry.storage.cast::<TypedStorage<T>>().as_mut() }
    }

    /// `T`'s entry in `types`, registering it (dense) if it has none.
    #[inline(always)]
    fn entry_or_register<T: Component>(&mut self) -> TypeEntry {
        match self.types.get(TypeId::of::<T>()) {
            Some(entry) => entry,
            None => self.register_dense::<T>(),
        }
    }

    /// Registers `T` (not registered yet) with a dense column.
    #[cold]
    #[inline(never)]
    fn register_dense<T: Component>(&mut self) -> TypeEntry {
        let column = self.add_column::<T>(Storage::Dense);
        TypeEntry {
            column,
            storage: self.columns[column].storage.data_ptr(),
        }
    }

    /// The entity table and the storage of `T` (registered dense if it has
    /// none), borrowed together.
    #[inline]
    pub(crate) fn entities_and_storage_mut<T: Component>(
        &mut self,
    ) -> (&EntityTable, &mut TypedStorage<T>) {
        let entry = self.entry_or_register::<T>();
        // SAFETY: as in `storage_mut`; the entity table is another field.
        (&self.entities, unsafe {
            entry.storage.cast::<TypedStorage<T>>().as_mut()
        })
    }

    /// The column and storage of `T`, if registered.
    #[inline]
    pub(crate) fn typed<T: Component>(&self) -> Option<(&Column, &TypedStorage<T>)> {
        let entry = self.types.get(TypeId::of::<T>())?;
        // `types` names column `entry.column` and this storage for `T` (its
        // invariant): the column exists, the storage is a `TypedStorage<T>`.
        // SAFETY: so both reads are in bounds and live, shared under `&self`.
        unsafe {
            let column = self.columns.get_unchecked(entry.column);
            Some((column, entry.storage.cast::<TypedStorage<T>>().as_ref()))
        }
    }

    /// The storage of `T` with its column borrowed for a guard, shared or
    /// (`EXCLUSIVE`) exclusive; `None` if `T` is not registered. Panics,
    /// naming the type, if a conflicting borrow is out.
    #[inline]
    #[track_caller]
    pub(crate) fn held<T: Component, const EXCLUSIVE: bool>(
        &self,
    ) -> Option<(HeldBorrow<'_, EXCLUSIVE>, &TypedStorage<T>)> {
        let (column, storage) = self.typed::<T>()?;
        Some((HeldBorrow::take(column), storage))
    }

    /// Whether every live entity has its `T` in a dense column, told in
    /// O(1) as a query's view tells it (see
    /// [`TypedStorage::dense_in_every_live_row`]): then the slot of a live
    /// entity's row holds its value, and a lookup need not read the
    /// presence word. `slot` is what `types` finds for `T`. Read at the top
    /// of a loop of calls, as the slot and its head are.
    #[inline(always)]
    fn every_live_row_has<T: Component>(&self, slot: &TypeSlot) -> bool {
        self.storage_in::<T>(slot)
            .is_some_and(|storage| storage.dense_in_every_live_row(self.rows.len(), self.len()))
    }

    /// The storage of `T` named by `slot`, what `types` finds for `T`;
    /// `None` if `T` is not registered (the slot is the empty one).
    #[inline(always)]
    fn storage_in<T: Component>(&self, slot: &TypeSlot) -> Option<&TypedStorage<T>> {
        if slot.is_empty() {
            return None;
        }
        // A slot that `types` finds for `T` and that is not empty is `T`'s
        // (its invariant).
        // SAFETY: so its storage is a live `TypedStorage<T>`, read under
        // `&self`.
        Some(unsafe { slot.storage().cast::<TypedStorage<T>>().as_ref() })
    }

    /// The row window as raw parts, for views.
    pub(crate) fn rows_view(&self) -> RowsView {
        RowsView {
            ptr: self.rows.as_ptr(),
            first_row: self.rows.front_position(),
            len: self.rows.len(),
        }
    }

    /// The alive word `word` (0 outside the window).
    #[inline]
    pub(crate) fn alive_word(&self, word: usize) -> u64 {
        self.alive.get_by_position(word).copied().unwrap_or(0)
    }

    fn alive_word_mut(&mut self, word: usize) -> &mut u64 {
        while self.alive.next_position() <= word {
            push_or_rebase(&mut self.alive, 0);
        }
        self.alive
            .get_by_position_mut(word)
            .expect("handlekit-ecs: alive word below the front")
    }

    /// The row of a live entity.
    #[inline]
    pub(crate) fn row_of(&self, entity: Entity) -> Result<usize, NoSuchEntity> {
        // The table's own lookup rather than `row_finder`: taking the slice
        // first cost `has` an instruction per call (callgrind).
        let low = self.entities.get(entity).ok_or(NoSuchEntity)?;
        Ok(self.full_row(low))
    }

    /// The rows of entities, looked up through values taken now: for a
    /// borrow of the world that looks up many (a query's `get`), so that a
    /// loop keeps them in registers whatever the optimizer makes of the
    /// world's fields.
    #[inline]
    pub(crate) fn row_finder(&self) -> RowFinder<'_> {
        RowFinder {
            slots: self.entities.slots_view(),
            front: self.rows.front_position(),
        }
    }

    /// The row of the window whose low 32 bits are `low`.
    #[inline]
    fn full_row(&self, low: u32) -> usize {
        full_row(self.rows.front_position(), low)
    }

    /// The number of live entities.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn((1u8,));
    /// assert_eq!(world.len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether no entity is alive.
    ///
    /// ```
    /// assert!(handlekit_ecs::World::new().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entities.len() == 0
    }

    /// The rows of the window: live entities plus dead rows not yet
    /// collected.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn(());
    /// world.despawn(e).unwrap();
    /// assert_eq!((world.len(), world.row_count()), (0, 1));
    /// ```
    #[must_use]
    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// Whether `entity` is alive in this world.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// assert!(world.contains(e));
    /// world.despawn(e).unwrap();
    /// assert!(!world.contains(e));
    /// ```
    ///
    /// As in hecs, an entity from [`reserve_entity`](Self::reserve_entity)
    /// is contained from the moment it is reserved, before
    /// [`flush`](Self::flush) makes it a real entity:
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.reserve_entity();
    /// assert!(world.contains(e));
    /// assert!(world.get::<u8>(e).is_err()); // not an entity of the table yet
    /// world.flush();
    /// assert!(world.contains(e) && world.len() == 1);
    /// ```
    #[must_use]
    pub fn contains(&self, entity: Entity) -> bool {
        self.entities.get(entity).is_some() || self.entities.is_reserved(entity)
    }

    /// Reserves an entity from a shared world, lock-free: any number of
    /// threads may reserve at once, also while queries run. The entity has
    /// no component and no row until [`flush`](Self::flush) makes it a real
    /// entity; until then [`contains`](Self::contains) says `true` for it,
    /// but queries, [`iter`](Self::iter), [`len`](Self::len),
    /// [`get`](Self::get) and [`entity`](Self::entity) do not see it.
    ///
    /// **When flushing happens.** Every `&mut self` call that adds or
    /// removes entities or components, or moves rows, flushes first
    /// (`spawn`, `spawn_batch`, `despawn`, `clear`, `collect`, `compact`,
    /// [`column_mut`](Self::column_mut)); the calls that name an entity
    /// (`insert`, `insert_one`, `remove`, `remove_one`, `query_one_mut`)
    /// flush when the entity is not in the table, so inserting into a
    /// reserved entity spawns it. [`get_mut`](Self::get_mut), `query_mut`
    /// and the `&self` calls never flush. A [`CommandBuffer`](crate::CommandBuffer)
    /// can so name an entity reserved while the world was borrowed: its
    /// `insert` spawns it when the buffer runs.
    ///
    /// Reserved entities take the free indices lowest first, then new
    /// ones, exactly the entities the same number of
    /// [`spawn`](Self::spawn)s would have made; flushing spawns them in
    /// the order they were reserved, at the back of the row window.
    /// Finding the next free index is O(1) amortized for reservations made
    /// in sequence.
    ///
    /// # Panics
    ///
    /// If the reserved entities would not fit: more outstanding than the
    /// rows left below [`max_rows`](Self::max_rows), or than the entity
    /// indices left. Nothing is reserved then.
    ///
    /// ```
    /// use handlekit_ecs::{CommandBuffer, World};
    ///
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// let mut commands = CommandBuffer::new();
    /// for x in world.query::<&u32>().iter() {
    ///     let child = world.reserve_entity(); // from `&World`, during a query
    ///     commands.insert(child, (*x + 1,));
    /// }
    /// commands.run_on(&mut world);
    /// assert_eq!(world.len(), 2);
    /// assert_eq!(world.query_mut::<&u32>().into_iter().sum::<u32>(), 3);
    /// ```
    #[track_caller]
    pub fn reserve_entity(&self) -> Entity {
        let k = self.reserve_numbers(1);
        self.entities.reserved_entity(k)
    }

    /// Reserves `count` entities at once (see
    /// [`reserve_entity`](Self::reserve_entity)), lock-free, with one
    /// atomic operation; yields them in order (the iterator only computes
    /// them: dropping it early reserves them all the same).
    ///
    /// # Panics
    ///
    /// As [`reserve_entity`](Self::reserve_entity), when the `count` do not
    /// all fit (none is reserved then).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let es: Vec<_> = world.reserve_entities(3).collect();
    /// assert_eq!(world.len(), 0);
    /// world.flush();
    /// assert_eq!(world.len(), 3);
    /// assert!(es.iter().all(|&e| world.contains(e)));
    /// ```
    #[track_caller]
    pub fn reserve_entities(&self, count: u32) -> impl ExactSizeIterator<Item = Entity> + '_ {
        // A `u32`, as hecs's; it fits in `usize` on the targets std runs on.
        let count = count as usize;
        let k = self.reserve_numbers(count);
        self.entities.reserved_entities(k..k + count)
    }

    /// Hands out `n` reservations; the number of the first.
    #[track_caller]
    fn reserve_numbers(&self, n: usize) -> usize {
        let room = self.max_rows - self.rows.len();
        match self.entities.reserve_entities(n, room) {
            Some(k) => k,
            None => panic!(
                "handlekit-ecs: reserve_entity: no room for {n} more reserved entities (max_rows {}, {} rows in use)",
                self.max_rows,
                self.rows.len()
            ),
        }
    }

    /// Turns the reserved entities (see
    /// [`reserve_entity`](Self::reserve_entity)) into real entities with no
    /// component, at the back of the row window, in the order they were
    /// reserved. Every `&mut self` call that needs it flushes first, so
    /// calling it is needed only to make reserved entities visible to
    /// queries, [`len`](Self::len) and [`get`](Self::get). O(reserved
    /// entities); one branch when there are none.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.reserve_entity();
    /// assert_eq!(world.query_mut::<handlekit_ecs::Entity>().into_iter().count(), 0);
    /// world.flush();
    /// let all: Vec<_> = world.query_mut::<handlekit_ecs::Entity>().into_iter().collect();
    /// assert_eq!(all, [e]);
    /// ```
    #[inline]
    pub fn flush(&mut self) {
        if self.entities.has_reserved() {
            self.flush_reserved();
        }
    }

    /// The work of [`flush`](Self::flush), out of the callers' hot paths.
    #[cold]
    #[inline(never)]
    fn flush_reserved(&mut self) {
        let n = self.entities.take_reserved();
        for _ in 0..n {
            // `reserve` checked that they fit, and the table is unchanged
            // since: each `insert` returns the next reserved entity. (No
            // reservation is outstanding now: `alloc_row` does not come
            // back here.)
            if let Err(error) = self.alloc_row() {
                panic!("handlekit-ecs: flush: {error}");
            }
        }
    }

    /// The row of `entity`, flushing the reserved entities first if it is
    /// not in the table (a reserved entity is then); for the `&mut self`
    /// calls that name an entity. The hit path is [`row_of`](Self::row_of)'s.
    #[inline]
    pub(crate) fn row_of_flushed(&mut self, entity: Entity) -> Result<usize, NoSuchEntity> {
        match self.entities.get(entity) {
            Some(low) => Ok(self.full_row(low)),
            None => self.row_after_flush(entity),
        }
    }

    #[cold]
    #[inline(never)]
    fn row_after_flush(&mut self, entity: Entity) -> Result<usize, NoSuchEntity> {
        if !self.entities.has_reserved() {
            return Err(NoSuchEntity);
        }
        self.flush_reserved();
        self.row_of(entity)
    }

    /// Takes the next row at the back for a new entity, flushing the
    /// reserved entities first (a compare and a branch when there are none;
    /// the rest is the body it had before reservations, with one caller, so
    /// that it compiles as it did).
    pub(crate) fn alloc_row(&mut self) -> Result<(Entity, usize), SpawnError> {
        self.flush();
        if self.rows.len() >= self.max_rows {
            return Err(SpawnError::RowsFull {
                max_rows: self.max_rows,
            });
        }
        let row = self.rows.next_position();
        let entity = self
            .entities
            // Truncation intended: see `entities`.
            .insert(row as u32)
            .ok_or(SpawnError::EntitiesFull)?;
        push_or_rebase(&mut self.rows, entity);
        *self.alive_word_mut(row / WORD) |= crate::storage::bit(row);
        Ok((entity, row))
    }

    /// The index of `T`'s column, registered (dense) if it has none.
    pub(crate) fn column_or_register<T: Component>(&mut self) -> usize {
        match self.column_index::<T>() {
            Some(index) => index,
            None => self.add_column::<T>(Storage::Dense),
        }
    }

    /// The parts a batch spawn of (about) `additional` entities writes: the
    /// row allocator and the columns.
    pub(crate) fn batch_parts(&mut self, additional: usize) -> (RowBatch<'_>, &mut [Column]) {
        self.flush();
        let start = self.rows.next_position();
        let additional = additional.min(self.max_rows - self.rows.len());
        self.entities.reserve(additional);
        // The row window's and the alive words' memory at once, rather than
        // a page fault at a time.
        self.rows.reserve(additional);
        self.alive.reserve(additional / WORD + 2);
        (
            RowBatch {
                entities: &mut self.entities,
                rows: &mut self.rows,
                alive: &mut self.alive,
                max_rows: self.max_rows,
                start,
            },
            &mut self.columns,
        )
    }

    /// Despawns `entity`, dropping its components. Its row is marked dead;
    /// no other entity moves. O(component types of the world).
    ///
    /// If a component's `Drop` panics, the entity is still gone and the
    /// world consistent; its other components are dropped too, and the
    /// first panic propagates afterwards.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if the entity is not alive.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// assert_eq!(world.despawn(e), Ok(()));
    /// assert!(world.despawn(e).is_err());
    /// ```
    pub fn despawn(&mut self, entity: Entity) -> Result<(), NoSuchEntity> {
        // Freeing an index changes which entities the outstanding
        // reservations are: they become real first (one branch).
        self.flush();
        let low = self.entities.remove(entity).ok_or(NoSuchEntity)?;
        let row = self.full_row(low);
        // A live row's alive word exists.
        if let Some(word) = self.alive.get_by_position_mut(row / WORD) {
            *word &= !crate::storage::bit(row);
        }
        let mut panic = None;
        // One call per column: `drop_one` does nothing where the entity has
        // no component (a presence bit or sparse lookup).
        for column in &mut self.columns {
            let storage = &mut column.storage;
            if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                storage.drop_one(entity, row);
            })) {
                panic.get_or_insert(payload);
            }
        }
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
        Ok(())
    }

    /// Despawns every entity and gives back the memory of every row. Handles
    /// issued before stay stale. Every component is dropped once, even if a
    /// `Drop` panics (the first panic propagates afterwards).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// world.clear();
    /// assert!(world.is_empty() && !world.contains(e));
    /// ```
    pub fn clear(&mut self) {
        self.flush();
        self.entities.clear();
        let next = self.rows.next_position();
        self.rows.drain_front(self.rows.len());
        self.rows.rebase();
        // The word of `next` stays (it is the new front's word), cleared.
        let dead_words = (next / WORD)
            .saturating_sub(self.alive.front_position())
            .min(self.alive.len());
        self.alive.drain_front(dead_words);
        self.alive.iter_mut().for_each(|word| *word = 0);
        self.alive.rebase();
        let mut panic = None;
        for column in &mut self.columns {
            let storage = &mut column.storage;
            if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                storage.clear(next);
            })) {
                panic.get_or_insert(payload);
            }
        }
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }

    /// Adds one component to `entity`, replacing any it has.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if the entity is not alive.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn(());
    /// world.insert_one(e, 5i64).unwrap();
    /// assert_eq!(*world.get::<i64>(e).unwrap(), 5);
    /// ```
    #[inline]
    pub fn insert_one<T: Component>(
        &mut self,
        entity: Entity,
        component: T,
    ) -> Result<(), NoSuchEntity> {
        let row = self.row_of_flushed(entity)?;
        drop(self.storage_mut::<T>().insert(entity, row, component));
        Ok(())
    }

    /// Takes one component off `entity`.
    ///
    /// # Errors
    ///
    /// As [`remove`](Self::remove).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// assert_eq!(world.remove_one::<u8>(e), Ok(1));
    /// assert!(world.remove_one::<u8>(e).is_err());
    /// ```
    #[inline]
    pub fn remove_one<T: Component>(&mut self, entity: Entity) -> Result<T, ComponentError> {
        self.at_row_mut::<T, _>(entity, TypedStorage::remove)
    }

    /// The component `T` of `entity`, behind a guard that holds a shared
    /// borrow of `T`'s column until it is dropped (so it works on a `&World`
    /// shared between systems, and conflicts with a `&mut T` query).
    ///
    /// Each call also finds `T`'s column and takes and gives back its
    /// borrow (two atomic operations, each of which waits for every load
    /// and store before it): random lookups among 10,000 entities took
    /// about 11 ns a call on the development machine, 8 to 9 ns of them
    /// the borrow (measured with the two operations made plain). For many
    /// lookups, borrow once: a [`query`](Self::query)'s
    /// [`get`](crate::QueryBorrow::get) took 1.1 ns, as did
    /// [`get_mut`](Self::get_mut) with `&mut World` (no borrow to take).
    ///
    /// # Errors
    ///
    /// [`ComponentError`] if the entity is not alive or lacks `T`.
    ///
    /// # Panics
    ///
    /// If `T`'s column is borrowed mutably (by a [`query`](Self::query));
    /// the message names the type.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((7u8,));
    /// let r = world.get::<u8>(e).unwrap();
    /// assert_eq!(*r, 7);
    /// ```
    #[inline]
    pub fn get<T: Component>(&self, entity: Entity) -> Result<Ref<'_, T>, ComponentError> {
        let row = self.row_of(entity)?;
        let missing = ComponentError::MissingComponent(type_name::<T>());
        // The shared borrow is held until the guard is dropped (given back
        // here if the entity has no `T`): no query writes a `T` meanwhile.
        let (held, storage) = self.held::<T, false>().ok_or(missing)?;
        let value = storage.get(entity, row).ok_or(missing)?;
        Ok(Ref { value, held })
    }

    /// The component `T` of `entity`, mutably. No run-time check: `&mut
    /// self` excludes every other borrow.
    ///
    /// A loop of `get_mut` calls that writes nothing else to the world
    /// finds `T`'s column once, before the loop, not at every call (the
    /// compiler takes the type lookup out of the loop: 17 instructions a
    /// call in a loop of 10,000 reads, callgrind). For the same reason it
    /// does not flush reserved entities (see
    /// [`reserve_entity`](Self::reserve_entity)): like
    /// [`get`](Self::get), it reports one as not alive until
    /// [`flush`](Self::flush). When every live entity has a `T` in a dense
    /// column (the world's rows are all alive and the column holds as many
    /// values as there are entities), the lookup skips the presence word,
    /// as a query's does.
    ///
    /// # Errors
    ///
    /// [`ComponentError`] if the entity is not alive (or only reserved) or
    /// lacks `T`.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((7u8,));
    /// *world.get_mut::<u8>(e).unwrap() += 1;
    /// assert_eq!(*world.get::<u8>(e).unwrap(), 8);
    /// ```
    #[inline]
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, ComponentError> {
        // The type's slot and head first, read whatever the entity: a loop
        // of calls then reads them once (see `TypeIndex`). No flush: a
        // call that could write the world would keep them in the loop.
        let slot = self.types.slot(TypeId::of::<T>());
        let head = slot.head();
        let every_live_row = self.every_live_row_has::<T>(slot);
        let rows = self.row_finder();
        let row = rows.row_of(entity).ok_or(NoSuchEntity)?;
        let value = if every_live_row {
            // SAFETY: the row is alive, and every live row has a value in
            // `T`'s dense column.
            Some(unsafe { head.present_value_ptr::<T>(row) })
        } else {
            head.value_ptr::<T>(row)
        };
        if let Some(value) = value {
            // `types` names this slot for `T` (its invariant), so the head
            // is the column's of `T`, and the value lives in it; `&mut
            // self` makes the access unique.
            // SAFETY: so the pointer is to a live `T`, borrowed exclusively.
            return Ok(unsafe { &mut *value.as_ptr() });
        }
        let missing = ComponentError::MissingComponent(type_name::<T>());
        if !head.is_sparse() {
            return Err(missing);
        }
        // A sparse head is in a registered type's slot, and `types` names
        // this slot for `T` (its invariant).
        // SAFETY: so its storage is a live `TypedStorage<T>`, borrowed
        // exclusively under `&mut self`.
        let storage = unsafe { slot.storage().cast::<TypedStorage<T>>().as_mut() };
        storage.get_mut(entity, row).ok_or(missing)
    }

    /// `op` on `T`'s storage at `entity`'s row: the path `remove_one` and
    /// `get_mut` share. An entity that is not alive, or a `T` it lacks (or
    /// that is not registered), is an error.
    #[inline(always)]
    fn at_row_mut<'a, T: Component, R>(
        &'a mut self,
        entity: Entity,
        op: impl FnOnce(&'a mut TypedStorage<T>, Entity, usize) -> Option<R>,
    ) -> Result<R, ComponentError> {
        let row = self.row_of_flushed(entity)?;
        let missing = ComponentError::MissingComponent(type_name::<T>());
        self.typed_storage_mut::<T>()
            .and_then(|storage| op(storage, entity, row))
            .ok_or(missing)
    }

    /// Whether `entity` has a `T` (false if it is not alive).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((7u8,));
    /// assert!(world.has::<u8>(e) && !world.has::<u16>(e));
    /// ```
    #[inline]
    #[must_use]
    pub fn has<T: Component>(&self, entity: Entity) -> bool {
        // The type's slot and head first, whatever the entity: a loop of
        // calls then reads them once (see `TypeIndex`).
        let slot = self.types.slot(TypeId::of::<T>());
        let head = slot.head();
        let every_live_row = self.every_live_row_has::<T>(slot);
        let rows = self.row_finder();
        let Some(row) = rows.row_of(entity) else {
            return false;
        };
        if every_live_row {
            return true;
        }
        // The kind first: it is the same at every call of a loop, which
        // the compiler then splits in two, one loop per kind.
        if !head.is_sparse() {
            return head.has(row);
        }
        self.storage_in::<T>(slot)
            .is_some_and(|storage| storage.has(entity, row))
    }

    /// The number of live entities with a `T`.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn((1u8,));
    /// world.spawn((2u8, 'c'));
    /// assert_eq!((world.count::<u8>(), world.count::<char>(), world.count::<u16>()), (2, 1, 0));
    /// ```
    #[must_use]
    pub fn count<T: Component>(&self) -> usize {
        self.column_index::<T>()
            .map_or(0, |i| self.columns[i].storage.len())
    }

    /// Bytes of memory the world holds: the committed memory of the entity
    /// table (less the pages [`collect`](Self::collect) gave back), the row
    /// arrays and the dense columns, and the allocations of the sparse sets.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn((1u64,));
    /// assert!(world.memory_bytes() > 0);
    /// ```
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.entities.memory_bytes()
            + self.rows.committed_bytes()
            + self.alive.committed_bytes()
            + self
                .columns
                .iter()
                .map(|c| c.storage.memory_bytes())
                .sum::<usize>()
    }

    /// Incremental garbage collection: examines at most `budget` rows from
    /// the front of the window, moves the live entities among them out of
    /// the way (to the back with [`Order::Any`], to the end of the examined
    /// range with [`Order::Preserve`]), and gives back the memory of the rows
    /// that became free. Handles stay valid; rows move.
    ///
    /// The work is O(budget × dense component types), whatever the size of
    /// the world. Only dead rows free memory: with [`Order::Preserve`], a run
    /// of live entities at the front as long as the budget stops progress
    /// (each call examines it again and frees nothing); use a larger budget,
    /// [`Order::Any`] (which moves that run to the back), or
    /// [`compact`](Self::compact). With [`Order::Any`], if moving the live
    /// entities to the back would exceed [`max_rows`](Self::max_rows), the
    /// call works as [`Order::Preserve`].
    ///
    /// Each call also examines `budget / 64` pages (rounded up) of the entity
    /// table, going round it, and gives back those whose 512 indices are all
    /// free: the table then costs about a bit per free index instead of 8
    /// bytes, and handles to those indices stay stale (see the [crate
    /// docs](crate#memory)).
    ///
    /// ```
    /// use handlekit_ecs::{Order, World};
    /// let mut world = World::new();
    /// let es = world.spawn_batch((0..1000u64).map(|i| (i,)));
    /// for &e in &es[..900] { world.despawn(e).unwrap(); }
    /// let mut released = 0;
    /// while world.row_count() > world.len() {
    ///     released += world.collect(256, Order::Any).released;
    /// }
    /// if handlekit::vm_vec::VIRTUAL_MEMORY {
    ///     assert!(released == 0 || world.memory_bytes() > 0);
    /// }
    /// assert_eq!(world.row_count(), 100);
    /// assert_eq!(*world.get::<u64>(es[950]).unwrap(), 950);
    /// ```
    pub fn collect(&mut self, budget: usize, order: Order) -> Collected {
        // The sweep zeroes pages of free indices, which reservations name.
        self.flush();
        let before = self.memory_bytes();
        // The entity table's pages of free indices, a page costing about as
        // much as 64 rows.
        self.entities.sweep(budget.div_ceil(64));
        let start = self.rows.front_position();
        let end = start + budget.min(self.rows.len());
        if start == end {
            return Collected {
                released: before.saturating_sub(self.memory_bytes()),
                ..Collected::default()
            };
        }
        // Components left on dead rows by a panicking `Drop` go first, so
        // that every dead row is empty.
        self.drop_dead_leftovers(start, end);
        let live: usize = (start..end).filter(|&row| self.is_alive(row)).count();
        let order = if order == Order::Any && self.rows.len() + live > self.max_rows {
            Order::Preserve
        } else {
            order
        };
        let mut moved = 0;
        let new_front = match order {
            Order::Any => {
                for row in start..end {
                    if self.is_alive(row) {
                        let to = self.rows.next_position();
                        let entity = self.rows[row - start];
                        push_or_rebase(&mut self.rows, entity);
                        *self.alive_word_mut(to / WORD) |= crate::storage::bit(to);
                        self.move_row(entity, row, to);
                        moved += 1;
                    }
                }
                end
            }
            Order::Preserve => {
                let mut write = end;
                for row in (start..end).rev() {
                    if self.is_alive(row) {
                        write -= 1;
                        if write != row {
                            let entity = self.rows[row - start];
                            self.rows[write - start] = entity;
                            *self.alive_word_mut(write / WORD) |= crate::storage::bit(write);
                            self.move_row(entity, row, write);
                            moved += 1;
                        }
                    }
                }
                write
            }
        };
        self.release_front(new_front);
        let after = self.memory_bytes();
        Collected {
            examined: end - start,
            moved,
            released: before.saturating_sub(after),
        }
    }

    /// Collects the whole window, keeping creation order, and moves every
    /// array back to the start of its reservation. O(rows × dense component
    /// types).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let a = world.spawn((1u8,));
    /// world.spawn((2u8,));
    /// world.despawn(a).unwrap();
    /// world.compact();
    /// assert_eq!(world.row_count(), 1);
    /// ```
    pub fn compact(&mut self) -> Collected {
        let done = self.collect(usize::MAX, Order::Preserve);
        self.rows.rebase();
        self.alive.rebase();
        for column in &mut self.columns {
            column.storage.rebase();
        }
        done
    }

    /// Checks the world's internal invariants, panicking where one fails;
    /// for tests. O(indices + rows).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn((1u8,));
    /// world.check_invariants();
    /// ```
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        self.entities.check();
        let mut live = 0;
        let front = self.rows.front_position();
        for (i, &entity) in self.rows.iter().enumerate() {
            let row = front + i;
            if self.is_alive(row) {
                live += 1;
                assert_eq!(self.row_of(entity), Ok(row), "row {row}");
            }
        }
        assert_eq!(live, self.len(), "live rows");
        // `metas[i]` describes `columns[i]`'s type, and `types` names it
        // with its storage.
        assert_eq!(self.metas.len(), self.columns.len(), "one meta per column");
        for (i, (column, meta)) in self.columns.iter().zip(&self.metas).enumerate() {
            assert_eq!(column.name, meta.name, "column {i}");
            let entry = crate::storage::TypeEntry {
                column: i,
                storage: column.storage.data_ptr(),
            };
            assert_eq!(self.types.get(meta.id), Some(entry), "column {i}");
        }
    }

    #[inline]
    fn is_alive(&self, row: usize) -> bool {
        self.alive_word(row / WORD) & crate::storage::bit(row) != 0
    }

    /// Moves the live `entity` from row `from` to the dead row `to` (whose
    /// alive bit and row entry are already set), in every column.
    fn move_row(&mut self, entity: Entity, from: usize, to: usize) {
        for column in &mut self.columns {
            column.storage.move_row(from, to);
        }
        *self.alive_word_mut(from / WORD) &= !crate::storage::bit(from);
        // Truncation intended: see `entities`.
        let moved = self.entities.set_row(entity, to as u32);
        debug_assert!(moved, "handlekit-ecs: a live row's entity is alive");
    }

    fn drop_dead_leftovers(&mut self, start: usize, end: usize) {
        let alive = &self.alive;
        let alive_word = |word: usize| alive.get_by_position(word).copied().unwrap_or(0);
        let mut panic = None;
        for column in &mut self.columns {
            let storage = &mut column.storage;
            if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                storage.drop_dead(start, end, &alive_word);
            })) {
                panic.get_or_insert(payload);
            }
        }
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }

    /// Drops the (dead, empty) rows below `front` and gives back their memory.
    fn release_front(&mut self, front: usize) {
        let dead = front - self.rows.front_position();
        self.rows.drain_front(dead);
        let first_word = front / WORD;
        let dead_words = first_word
            .saturating_sub(self.alive.front_position())
            .min(self.alive.len());
        self.alive.drain_front(dead_words);
        for column in &mut self.columns {
            column.storage.release_front(front);
        }
    }
}

/// What whole-world serialization (`serialize.rs`) needs of the world's
/// internals.
#[cfg(feature = "serde")]
impl World {
    /// The component types in registration order: type, name, storage and
    /// the number of components stored.
    pub(crate) fn column_types(&self) -> Vec<(TypeId, &'static str, Storage, usize)> {
        let mut types: Vec<(usize, TypeId)> = self.types.iter().map(|(t, i)| (i, t)).collect();
        types.sort_unstable_by_key(|&(index, _)| index);
        types
            .into_iter()
            .map(|(index, ty)| {
                let column = &self.columns[index];
                (ty, column.name, column.kind, column.storage.len())
            })
            .collect()
    }

    /// A world of `max_rows` rows holding the entities of `entities`, whose
    /// value for each live entity is its row: `rows` yields the entity of
    /// each row from row 0, every row alive, no component yet. The caller
    /// checked that the values are exactly `0..len`, once each, that `rows`
    /// yields those entities in that order, and that `len <= max_rows`.
    pub(crate) fn from_rows(
        max_rows: usize,
        entities: EntityTable,
        rows: impl IntoIterator<Item = Entity>,
    ) -> World {
        let len = entities.len();
        debug_assert!(len <= max_rows);
        let mut world = World::with_entities(max_rows, entities);
        // A fresh window from row 0 has room for `max_rows` rows: no rebase.
        // Its memory is prepared at once, not a page at a time.
        world.rows.reserve(len);
        world.rows.extend(rows);
        crate::storage::set_bits(&mut world.alive, 0, 0, len);
        world
    }

    /// The row → entity window and the storage of `T` (registered if it is
    /// not), borrowed together.
    pub(crate) fn rows_and_storage_mut<T: Component>(
        &mut self,
    ) -> (&[Entity], &mut TypedStorage<T>) {
        let index = match self.column_index::<T>() {
            Some(index) => index,
            None => self.add_column::<T>(Storage::Dense),
        };
        (self.rows.as_slice(), typed_column(&mut self.columns[index]))
    }
}

/// [`World::row_of`] over a world borrowed shared: the entity table's
/// slots and the row window's front, as they stay while it is borrowed.
#[derive(Clone, Copy)]
pub(crate) struct RowFinder<'w> {
    slots: crate::entities::SlotsView<'w>,
    front: usize,
}

impl RowFinder<'_> {
    /// The row of a live `entity`, or `None`.
    #[inline]
    pub(crate) fn row_of(self, entity: Entity) -> Option<usize> {
        let low = self.slots.get(entity)?;
        Some(full_row(self.front, low))
    }
}

/// The row of the window starting at row `front` whose low 32 bits are
/// `low` (the window holds fewer than 2³¹ rows).
#[inline]
pub(crate) fn full_row(front: usize, low: u32) -> usize {
    // Truncation intended: rows are compared modulo 2^32.
    front.wrapping_add(low.wrapping_sub(front as u32) as usize)
}

/// Allocates the rows of a [`World::spawn_batch`]: the entity table and the
/// row → entity window per entity, the alive bits of the rows it allocated
/// a word at a time when dropped (also on a panic).
pub(crate) struct RowBatch<'a> {
    entities: &'a mut EntityTable,
    rows: &'a mut VmVec<Entity>,
    alive: &'a mut VmVec<u64>,
    max_rows: usize,
    /// The first row of the batch. Invariant: the rows from `start` to
    /// `rows.next_position()` are the batch's, alive, with their alive bits
    /// not yet set; the drop sets them.
    start: usize,
}

impl RowBatch<'_> {
    /// The first row of the batch.
    pub(crate) fn start(&self) -> usize {
        self.start
    }

    /// How many more rows the window takes.
    pub(crate) fn room(&self) -> usize {
        self.max_rows - self.rows.len()
    }

    /// Takes the next row at the back for a new entity, or panics as
    /// [`World::spawn`] does when the rows are full.
    #[inline]
    #[track_caller]
    pub(crate) fn alloc(&mut self) -> (Entity, usize) {
        if self.rows.len() >= self.max_rows {
            let error = SpawnError::RowsFull {
                max_rows: self.max_rows,
            };
            panic!("handlekit-ecs: spawn: {error}");
        }
        let row = self.rows.next_position();
        // Truncation intended: see `World::entities`.
        let Some(entity) = self.entities.insert(row as u32) else {
            panic!("handlekit-ecs: spawn: {}", SpawnError::EntitiesFull)
        };
        push_or_rebase(self.rows, entity);
        (entity, row)
    }
}

impl Drop for RowBatch<'_> {
    fn drop(&mut self) {
        crate::storage::set_bits(self.alive, 0, self.start, self.rows.next_position());
    }
}

/// The column at `index` of `columns`, which is `T`'s.
#[inline]
pub(crate) fn typed_column<T: Component>(column: &mut Column) -> &mut TypedStorage<T> {
    column.storage.typed_mut().unwrap_or_else(|| wrong_type())
}

/// The panic of a column found for a type that is not its own (a bug).
#[cold]
#[inline(never)]
fn wrong_type() -> ! {
    panic!("handlekit-ecs: column of the wrong type")
}

/// The `N` distinct columns at `indices`.
pub(crate) fn disjoint_columns<const N: usize>(
    columns: &mut [Column],
    indices: [usize; N],
) -> [&mut Column; N] {
    columns
        .get_disjoint_mut(indices)
        .expect("handlekit-ecs: a bundle's component types are distinct")
}

/// The indices the entity table of a world of `max_rows` rows reserves:
/// one per row (it never holds more entities at once), an eighth more and
/// 1024 for the indices retired after 2³¹ − 1 reuses each.
pub(crate) fn max_entity_slots(max_rows: usize) -> usize {
    max_rows.saturating_add(max_rows / 8).saturating_add(1024)
}

/// A `VmVec` with room for `n`, or the panic of `with_max_rows`.
fn reserve<T>(n: usize) -> VmVec<T> {
    VmVec::with_max_capacity_recycled(n)
        .unwrap_or_else(|error| panic!("handlekit-ecs: reserving the rows: {error}"))
}

/// A shared borrow of one component, from [`World::get`]. The column stays
/// borrowed (shared) until the guard is dropped.
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// let e = world.spawn((String::from("x"),));
/// let name = world.get::<String>(e).unwrap();
/// assert_eq!(name.len(), 1);
/// ```
pub struct Ref<'w, T: ?Sized> {
    /// The value, under `held`: a shared borrow of its column.
    pub(crate) value: &'w T,
    pub(crate) held: HeldBorrow<'w, false>,
}

impl<'w, T: ?Sized> Ref<'w, T> {
    /// A guard of a part of the value (a field, an element), holding the
    /// same borrow. An associated function, as `std::cell::Ref::map`, so
    /// that it does not hide a method of `T`.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn(((1u8, String::from("name")),));
    /// let whole = world.get::<(u8, String)>(e).unwrap();
    /// let name = handlekit_ecs::Ref::map(whole, |(_, s)| s.as_str());
    /// assert_eq!(&*name, "name");
    /// ```
    pub fn map<U: ?Sized>(orig: Ref<'w, T>, f: impl FnOnce(&T) -> &U) -> Ref<'w, U> {
        // The borrow passes to the new guard, or is given back if `f`
        // panics.
        let Ref { value, held } = orig;
        Ref {
            value: f(value),
            held,
        }
    }
}

impl<T: ?Sized> Clone for Ref<'_, T> {
    /// Another guard of the same value, taking another shared borrow.
    ///
    /// # Panics
    ///
    /// If the column already counts the most shared borrows it can (far
    /// more than a program holds).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((7u8,));
    /// let a = world.get::<u8>(e).unwrap();
    /// let b = a.clone();
    /// drop(a);
    /// assert_eq!(*b, 7);
    /// ```
    fn clone(&self) -> Self {
        let Some(held) = self.held.try_clone() else {
            panic!("handlekit-ecs: Ref::clone: too many shared borrows of one column");
        };
        Ref {
            value: self.value,
            held,
        }
    }
}

impl<T: ?Sized> std::ops::Deref for Ref<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

//! Entity builders: components gathered one at a time, of types known only
//! at run time, then spawned or inserted together ([`EntityBuilder`]), or
//! kept as a prefab that spawns clones ([`EntityBuilderClone`],
//! [`BuiltEntityClone`]).
//!
//! A builder holds its components type-erased in one byte buffer (no box
//! per component), each described by an entry: its `TypeId`, name, layout,
//! offset in the buffer, and functions monomorphized when the type was
//! added (drop it in place; move it into a world's storage of its type,
//! registering that storage on first use; for prefabs, clone it).

use std::alloc::{self, Layout};
use std::any::TypeId;
use std::fmt;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use crate::world::{Component, ComponentMeta, World};
use crate::Entity;

/// One stored component: what it is, where it is, and what can be done
/// with it without knowing its type. `X` carries a prefab's clone
/// functions (`()` for a plain builder).
#[derive(Clone, Copy)]
struct Entry<X> {
    /// `TypeId` of the component type `T` the functions were made for.
    id: TypeId,
    /// `type_name::<T>()`, for `Debug`.
    name: &'static str,
    /// `Layout::new::<T>()`.
    layout: Layout,
    /// Where the value sits in the buffer, in bytes from its start.
    offset: usize,
    /// `drop_in_place::<T>` on the pointed-to value.
    drop: unsafe fn(*mut u8),
    /// Moves the pointed-to `T` out and onto an entity of a world (see
    /// [`ComponentMeta::put`]).
    put: unsafe fn(*mut u8, &mut World, Entity, usize),
    extra: X,
}

/// The clone functions of a prefab's entry, for a `T: Clone`. Not part of
/// the public API.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct CloneFns {
    /// Clones the pointed-to `T` onto an entity of a world (see
    /// [`put_clone`]).
    put_clone: unsafe fn(*const u8, &mut World, Entity, usize),
    /// Clones the `T` at the first pointer into the second (see
    /// [`clone_to`]).
    clone_to: unsafe fn(*const u8, *mut u8, bool),
}

/// Puts a clone of the `T` at `src` onto `entity` (at `row`) of `world`, as
/// [`put_erased`] does.
///
/// # Safety
///
/// `src` points to an initialized, aligned `T`, valid for shared access
/// during the call; `entity` is alive at `row`.
unsafe fn put_clone<T: Component + Clone>(
    src: *const u8,
    world: &mut World,
    entity: Entity,
    row: usize,
) {
    // SAFETY: the caller's contract.
    let value = unsafe { &*src.cast::<T>() }.clone();
    drop(world.storage_mut::<T>().insert(entity, row, value));
}

/// Clones the `T` at `src` into `dst`: written into uninitialized memory if
/// `replace` is false, else replacing (and dropping) the `T` there. If the
/// clone panics, `dst` is left as it was.
///
/// # Safety
///
/// `src` points to an initialized, aligned `T` valid for shared access;
/// `dst` is aligned, valid for writes of a `T`, does not overlap `src`, and
/// holds an initialized `T` if and only if `replace`.
unsafe fn clone_to<T: Clone>(src: *const u8, dst: *mut u8, replace: bool) {
    // SAFETY: the caller's contract.
    let value = unsafe { &*src.cast::<T>() }.clone();
    if replace {
        // SAFETY: the caller's contract: `dst` holds a `T`.
        drop(unsafe { ptr::replace(dst.cast::<T>(), value) });
    } else {
        // SAFETY: the caller's contract: `dst` is valid for the write.
        unsafe { dst.cast::<T>().write(value) };
    }
}

impl<X> Entry<X> {
    /// The entry of a `T` at `offset`.
    fn new<T: Component>(offset: usize, extra: X) -> Self {
        Entry::from_meta(&ComponentMeta::of::<T>(), offset, extra)
    }

    /// The entry of a value of `meta`'s type at `offset`.
    fn from_meta(meta: &ComponentMeta, offset: usize, extra: X) -> Self {
        Entry {
            id: meta.id,
            name: meta.name,
            layout: meta.layout,
            offset,
            drop: meta.drop,
            put: meta.put,
            extra,
        }
    }

    /// The same entry at `offset` with `extra`.
    fn with<Y>(&self, offset: usize, extra: Y) -> Entry<Y> {
        Entry {
            id: self.id,
            name: self.name,
            layout: self.layout,
            offset,
            drop: self.drop,
            put: self.put,
            extra,
        }
    }
}

/// A type-erased set of components of distinct types, in one buffer.
struct Components<X> {
    /// The buffer: an allocation of `Layout::from_size_align(cap, align)`
    /// if `cap > 0`, else a dangling pointer whose address is `align`.
    /// Invariant: so `data + offset` is aligned for every entry's type.
    data: NonNull<u8>,
    /// The buffer's size in bytes (0: nothing allocated).
    cap: usize,
    /// The buffer's alignment: a power of two, at least the alignment of
    /// every entry's type.
    align: usize,
    /// Bytes in use. Invariant: `len <= cap`; every entry's value lies in
    /// `0..len` (`offset + layout.size() <= len`).
    len: usize,
    /// The components, in the order they were first added. Invariant: the
    /// `TypeId`s are distinct; each entry's `offset` is a multiple of its
    /// `layout.align()`, and the buffer holds an initialized value of the
    /// entry's type there, owned by `self` (dropped by [`clear`]
    /// (Self::clear) or moved out by [`drain`](Self::drain)); entries never
    /// overlap. For a prefab (`X = CloneFns`), every type is `Clone`, with
    /// `extra` made for it.
    entries: Vec<Entry<X>>,
}

// SAFETY: the buffer holds only values of `Component` types (`Send +
// Sync`), owned by `Components`; the entries are plain data and `fn`
// pointers.
unsafe impl<X: Send> Send for Components<X> {}
// SAFETY: as for `Send`; `&Components` only gives out `&T`s of `Sync` types.
unsafe impl<X: Sync> Sync for Components<X> {}

impl<X: Copy> Components<X> {
    const fn new() -> Self {
        Components {
            // Address 1, the alignment of an empty buffer.
            data: NonNull::dangling(),
            cap: 0,
            align: 1,
            len: 0,
            entries: Vec::new(),
        }
    }

    /// The address `offset` bytes into the buffer.
    #[inline]
    fn at(&self, offset: usize) -> *mut u8 {
        debug_assert!(offset <= self.cap || (self.cap == 0 && offset == 0));
        // Wrapping: no `unsafe` needed; `offset` is within the allocation or
        // one past it (or 0 in an unallocated buffer), so this is the
        // in-bounds address.
        self.data.as_ptr().wrapping_add(offset)
    }

    /// The position of the entry of `id`.
    #[inline]
    fn find(&self, id: TypeId) -> Option<usize> {
        self.entries.iter().position(|entry| entry.id == id)
    }

    /// Takes room for a value of `layout` at the end of the buffer and
    /// returns its offset (aligned; the room is uninitialized).
    fn reserve(&mut self, layout: Layout) -> usize {
        let offset = self
            .len
            .checked_next_multiple_of(layout.align())
            .and_then(|offset| Some((offset, offset.checked_add(layout.size())?)));
        let Some((offset, end)) = offset else {
            capacity_overflow()
        };
        if end > self.cap || layout.align() > self.align {
            self.grow(end, layout.align());
        }
        self.len = end;
        offset
    }

    /// Makes the buffer at least `end` bytes long and aligned to `align`,
    /// keeping its contents.
    #[cold]
    fn grow(&mut self, end: usize, align: usize) {
        let align = self.align.max(align);
        if end == 0 && self.cap == 0 {
            // Zero-sized values only: no allocation, an address aligned for
            // them.
            self.align = align;
            self.data =
                NonNull::new(ptr::without_provenance_mut(align)).expect("an alignment is nonzero");
            return;
        }
        let cap = end.max(self.cap.saturating_mul(2)).max(64);
        let Ok(layout) = Layout::from_size_align(cap, align) else {
            capacity_overflow()
        };
        // SAFETY: `layout` has a nonzero size (`cap >= 64`).
        let new = unsafe { alloc::alloc(layout) };
        let Some(new) = NonNull::new(new) else {
            alloc::handle_alloc_error(layout)
        };
        if self.cap > 0 {
            // The copy moves the values (bytes, some uninitialized padding,
            // which an untyped copy allows); the old buffer is freed with
            // the layout it was allocated with and not read again.
            // SAFETY: the old buffer holds `len <= cap` bytes and the new
            // one `cap >= end >= len`; they are distinct allocations.
            unsafe {
                ptr::copy_nonoverlapping(self.data.as_ptr(), new.as_ptr(), self.len);
                alloc::dealloc(
                    self.data.as_ptr(),
                    Layout::from_size_align_unchecked(self.cap, self.align),
                );
            }
        }
        // Every offset keeps its alignment: the new base is aligned to
        // `align`, at least every entry's alignment.
        self.data = new;
        self.cap = cap;
        self.align = align;
    }

    /// Adds `value`, or replaces (and drops) the `T` there.
    #[inline]
    fn add<T: Component>(&mut self, value: T, extra: X) {
        if let Some(i) = self.find(TypeId::of::<T>()) {
            let slot = self.at(self.entries[i].offset).cast::<T>();
            // The new value takes its place before the old one is dropped,
            // so a panicking `Drop` leaves the buffer whole.
            // SAFETY: the entry of `T`'s `TypeId` holds an initialized,
            // aligned `T` at its offset (invariant of `entries`).
            drop(unsafe { ptr::replace(slot, value) });
            return;
        }
        let offset = self.reserve(Layout::new::<T>());
        // SAFETY: `reserve` made room for a `T` at `offset`, aligned and
        // in bounds; no entry covers it yet.
        unsafe { self.at(offset).cast::<T>().write(value) };
        self.entries.push(Entry::new::<T>(offset, extra));
    }

    /// Adds a value of `meta`'s type, a type the buffer does not hold,
    /// written in place by `fill` (given the address of its room, it says
    /// whether it wrote one; if not, nothing is added).
    ///
    /// # Safety
    ///
    /// `meta` is [`ComponentMeta::of`] some type; `fill`, when it returns
    /// true, has written an initialized value of that type to the address
    /// it was given, which the buffer owns from then on.
    pub(crate) unsafe fn push_with(
        &mut self,
        meta: &ComponentMeta,
        extra: X,
        fill: impl FnOnce(*mut u8) -> bool,
    ) {
        debug_assert!(self.find(meta.id).is_none(), "a type the buffer holds");
        let len = self.len;
        let offset = self.reserve(meta.layout);
        // The room is aligned for the type and outside every entry; if
        // `fill` panics or writes nothing, no entry covers it.
        if fill(self.at(offset)) {
            self.entries.push(Entry::from_meta(meta, offset, extra));
        } else {
            self.len = len;
        }
    }

    /// Adds the value of `entry`'s type at `src` (moved in: its bytes are
    /// copied), or replaces the value of that type there.
    ///
    /// # Safety
    ///
    /// `src` points to an initialized, aligned value of `entry`'s type,
    /// outside this buffer, which the call takes over (the caller does not
    /// use or drop it afterwards, even if this panics); `extra` is made for
    /// that type.
    unsafe fn add_moved<Y>(&mut self, entry: &Entry<Y>, src: *const u8, extra: X) {
        if let Some(i) = self.find(entry.id) {
            let old = self.entries[i];
            let dst = self.at(old.offset);
            // `dst`'s value is dropped, then overwritten with the new value's
            // bytes, also if its `Drop` panicked (it is not dropped again).
            // SAFETY: `dst` holds an initialized value of the type (invariant
            // of `entries`); `src` one of the same type, outside the buffer.
            unsafe {
                let dropped = panic::catch_unwind(AssertUnwindSafe(|| (old.drop)(dst)));
                ptr::copy_nonoverlapping(src, dst, entry.layout.size());
                if let Err(payload) = dropped {
                    panic::resume_unwind(payload);
                }
            }
            return;
        }
        let offset = self.reserve(entry.layout);
        // SAFETY: `reserve` made room at `offset` for the type, aligned and
        // in bounds, outside any entry; `src` is outside the buffer.
        unsafe { ptr::copy_nonoverlapping(src, self.at(offset), entry.layout.size()) };
        self.entries.push(entry.with(offset, extra));
    }

    /// Whether a `T` is there.
    fn has<T: Component>(&self) -> bool {
        self.find(TypeId::of::<T>()).is_some()
    }

    /// The address of the `T`, if there is one.
    fn get_ptr<T: Component>(&self) -> Option<*mut u8> {
        let i = self.find(TypeId::of::<T>())?;
        Some(self.at(self.entries[i].offset))
    }

    /// The component `T::Component` as `T` (`&C`), if there is one: the
    /// builders' `get`.
    fn get_ref<'a, T: BuilderRefShared<'a>>(&'a self) -> Option<T> {
        let value = self.get_ptr::<T::Component>()?;
        // `&'a self` keeps the value alive and unchanged; `T` is shared.
        // SAFETY: the buffer holds an initialized, aligned `T::Component`.
        Some(unsafe { T::from_ptr(value) })
    }

    /// The component `T::Component` as `T` (`&mut C` or `&C`), if there is
    /// one: the builders' `get_mut`.
    fn get_mut_ref<'a, T: BuilderRef<'a>>(&'a mut self) -> Option<T> {
        let value = self.get_ptr::<T::Component>()?;
        // `&'a mut self` keeps the value alive and the result's alone.
        // SAFETY: the buffer holds an initialized, aligned `T::Component`.
        Some(unsafe { T::from_ptr(value) })
    }

    /// Hands every value, in order, to `take`, which takes it over (moves it
    /// out or drops it), and leaves the set empty (its buffer kept for
    /// reuse). If `take` panics, the values not handed over yet are dropped
    /// before the panic goes on.
    fn drain(&mut self, mut take: impl FnMut(*mut u8, &Entry<X>)) {
        /// Empties the set when dropped, dropping the values from `next` on.
        struct Rest<'a, X: Copy> {
            set: &'a mut Components<X>,
            /// The first entry whose value is still the set's.
            next: usize,
        }
        impl<X: Copy> Drop for Rest<'_, X> {
            fn drop(&mut self) {
                let mut first = None;
                for i in self.next..self.set.entries.len() {
                    let entry = self.set.entries[i];
                    let value = self.set.at(entry.offset);
                    let dropped = panic::catch_unwind(AssertUnwindSafe(|| {
                        // SAFETY: entries from `next` on still own their
                        // values (`entries`); the loop drops each once.
                        unsafe { (entry.drop)(value) }
                    }));
                    if let Err(payload) = dropped {
                        first.get_or_insert(payload);
                    }
                }
                self.set.entries.clear();
                self.set.len = 0;
                // A second panic while one unwinds would abort: then the
                // first one goes on alone.
                if let Some(payload) = first {
                    if !std::thread::panicking() {
                        panic::resume_unwind(payload);
                    }
                }
            }
        }
        let mut rest = Rest { set: self, next: 0 };
        while rest.next < rest.set.entries.len() {
            let entry = rest.set.entries[rest.next];
            // The value is `take`'s from here on, even if it panics.
            rest.next += 1;
            take(rest.set.at(entry.offset), &entry);
        }
    }

    /// Drops every value (each once, the first panic of a `Drop` propagating
    /// after the others are dropped); keeps the buffer.
    fn clear(&mut self) {
        // SAFETY: `drain` hands over each initialized value of the entry's
        // type once.
        self.drain(|value, entry| unsafe { (entry.drop)(value) });
    }

    /// Moves every value onto `entity` (at `row`) of `world`, and leaves the
    /// set empty.
    fn put_all(&mut self, world: &mut World, entity: Entity, row: usize) {
        // The caller found `entity` alive at `row`.
        self.drain(|value, entry| {
            // SAFETY: `drain` hands over each initialized value of the
            // entry's type once, and `put` is the entry type's.
            unsafe { (entry.put)(value, world, entity, row) }
        });
    }

    /// Moves every value into `builder`, replacing the values of the same
    /// types there, and leaves the set empty.
    fn move_to(&mut self, builder: &mut Components<()>) {
        // SAFETY: `drain` hands over each initialized value of the entry's
        // type once; `builder` is another set.
        self.drain(|value, entry| unsafe { builder.add_moved(entry, value, ()) });
    }

    /// The `TypeId`s of the values, in the order they were added.
    fn types(&self) -> impl Iterator<Item = TypeId> + '_ {
        self.entries.iter().map(|entry| entry.id)
    }

    /// Writes the set as the struct `name` of the values' type names: the
    /// `Debug` of the builders and the built entities.
    fn debug(&self, f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
        let names: Vec<&str> = self.entries.iter().map(|entry| entry.name).collect();
        f.debug_struct(name).field("components", &names).finish()
    }
}

impl Components<CloneFns> {
    /// Adds a clone of every value to `target` (whose `extra` is made by
    /// `extra` from this set's), replacing the values of the same types
    /// there.
    fn clone_into<Y: Copy>(&self, target: &mut Components<Y>, extra: impl Fn(CloneFns) -> Y) {
        for entry in &self.entries {
            let src = self.at(entry.offset);
            if let Some(i) = target.find(entry.id) {
                let dst = target.at(target.entries[i].offset);
                // `src` and `dst` (same `TypeId`) are in different buffers.
                // SAFETY: both hold an initialized value of the entry's type
                // (`entries`), and `clone_to` is made for that type.
                unsafe { (entry.extra.clone_to)(src, dst, true) };
            } else {
                let offset = target.reserve(entry.layout);
                // If the clone panics, no entry covers the room: nothing is
                // dropped twice.
                // SAFETY: as above, into the room `reserve` made (aligned,
                // uninitialized, outside every entry).
                unsafe { (entry.extra.clone_to)(src, target.at(offset), false) };
                target.entries.push(entry.with(offset, extra(entry.extra)));
            }
        }
    }

    /// Puts a clone of every value on `entity` (at `row`) of `world`.
    fn put_clones(&self, world: &mut World, entity: Entity, row: usize) {
        for entry in &self.entries {
            // The caller found `entity` alive at `row`.
            // SAFETY: the buffer holds an initialized value of the entry's
            // type at its offset, and `put_clone` is made for that type.
            unsafe { (entry.extra.put_clone)(self.at(entry.offset), world, entity, row) };
        }
    }
}

impl<X> Drop for Components<X> {
    fn drop(&mut self) {
        /// Frees the buffer when dropped: also when a value's `Drop` panics.
        struct Free(NonNull<u8>, usize, usize);
        impl Drop for Free {
            fn drop(&mut self) {
                if self.1 > 0 {
                    // SAFETY: a buffer of `cap > 0` bytes is an allocation of
                    // this layout (invariant of `data`), freed once here.
                    unsafe {
                        alloc::dealloc(
                            self.0.as_ptr(),
                            Layout::from_size_align_unchecked(self.1, self.2),
                        )
                    }
                }
            }
        }
        let _free = Free(self.data, self.cap, self.align);
        let mut first = None;
        for entry in std::mem::take(&mut self.entries) {
            let value = self.data.as_ptr().wrapping_add(entry.offset);
            let dropped = panic::catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: each entry owns an initialized value at its offset
                // (`entries`), dropped once: the entries were taken out.
                unsafe { (entry.drop)(value) }
            }));
            if let Err(payload) = dropped {
                first.get_or_insert(payload);
            }
        }
        if let Some(payload) = first {
            panic::resume_unwind(payload);
        }
    }
}

/// The panic of a buffer larger than the address space.
#[cold]
fn capacity_overflow() -> ! {
    panic!("handlekit-ecs: entity builder: capacity overflow")
}

/// What a builder keeps per component besides its type's functions:
/// nothing for an [`EntityBuilder`], the clone functions for an
/// [`EntityBuilderClone`]. Not part of the public API.
#[doc(hidden)]
pub trait Extra: Copy + Send + Sync + 'static {
    /// The builder's name, for `Debug`.
    const BUILDER: &'static str;
}

impl Extra for () {
    const BUILDER: &'static str = "EntityBuilder";
}

impl Extra for CloneFns {
    const BUILDER: &'static str = "EntityBuilderClone";
}

/// Gathers components one at a time, of types chosen at run time, for one
/// entity: [`add`](Builder::add) them, then [`build`](Builder::build) and
/// give the result to [`World::spawn`] or [`World::insert`]. The builder is
/// empty again afterwards and keeps its memory, so one builder serves many
/// entities without allocating. The components sit type-erased in one
/// buffer (no allocation per component).
///
/// Adding a component type the builder already holds replaces (and drops)
/// the old value.
///
/// ```
/// use handlekit_ecs::{EntityBuilder, World};
///
/// let mut world = World::new();
/// let mut builder = EntityBuilder::new();
/// for i in 0..3u32 {
///     builder.add(i).add("enemy");
///     if i % 2 == 0 {
///         builder.add(i as f32 * 2.0);
///     }
///     world.spawn(builder.build());
/// }
/// assert_eq!(world.count::<&str>(), 3);
/// assert_eq!(world.count::<f32>(), 2);
/// ```
pub type EntityBuilder = Builder<()>;

/// A builder of prefabs: as [`EntityBuilder`], for `Clone` components; its
/// [`build`](Builder::build) gives a [`BuiltEntityClone`], which spawns a
/// clone of its components each time ([`World::spawn`]`(&prefab)`).
///
/// ```
/// use handlekit_ecs::{EntityBuilderClone, World};
///
/// let mut builder = EntityBuilderClone::new();
/// builder.add(String::from("goblin")).add(10u32);
/// let goblin = builder.build();
/// let mut world = World::new();
/// let es: Vec<_> = (0..3).map(|_| world.spawn(&goblin)).collect();
/// *world.get_mut::<u32>(es[0]).unwrap() -= 4;
/// assert_eq!(*world.get::<u32>(es[0]).unwrap(), 6);
/// assert_eq!(*world.get::<u32>(es[2]).unwrap(), 10);
/// ```
pub type EntityBuilderClone = Builder<CloneFns>;

/// The type of both builders, [`EntityBuilder`] (`X = ()`) and
/// [`EntityBuilderClone`] (`X` the clone functions of a prefab's
/// components); name them through those. What they share is written once
/// here; [`add`](Self::add) and [`build`](Self::build) are each builder's.
pub struct Builder<X> {
    components: Components<X>,
}

impl<X: Extra> Default for Builder<X> {
    fn default() -> Self {
        Self::new()
    }
}

impl<X: Copy> Default for Components<X> {
    fn default() -> Self {
        Components::new()
    }
}

impl<X: Extra> Builder<X> {
    /// An empty builder; allocates nothing until a component is added.
    ///
    /// ```
    /// let builder = handlekit_ecs::EntityBuilder::new();
    /// assert!(!builder.has::<u8>());
    /// let prefab = handlekit_ecs::EntityBuilderClone::new();
    /// assert!(!prefab.has::<u8>());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Builder {
            components: Components::new(),
        }
    }

    /// Whether the builder holds a `T`.
    ///
    /// ```
    /// let mut builder = handlekit_ecs::EntityBuilder::new();
    /// builder.add(1u8);
    /// assert!(builder.has::<u8>() && !builder.has::<u16>());
    /// let mut prefab = handlekit_ecs::EntityBuilderClone::new();
    /// prefab.add(1u8);
    /// assert!(prefab.has::<u8>() && !prefab.has::<u16>());
    /// ```
    #[must_use]
    pub fn has<T: Component>(&self) -> bool {
        self.components.has::<T>()
    }

    /// The component of type `C` if the builder holds one, where `T` is
    /// `&C` (hecs's shape: the type parameter is the reference type).
    ///
    /// ```
    /// let mut builder = handlekit_ecs::EntityBuilder::new();
    /// builder.add(String::from("x"));
    /// assert_eq!(builder.get::<&String>().map(|s| s.as_str()), Some("x"));
    /// assert_eq!(builder.get::<&u8>(), None);
    /// let mut prefab = handlekit_ecs::EntityBuilderClone::new();
    /// prefab.add(5i64);
    /// assert_eq!(prefab.get::<&i64>(), Some(&5));
    /// ```
    #[must_use]
    pub fn get<'a, T: BuilderRefShared<'a>>(&'a self) -> Option<T> {
        self.components.get_ref()
    }

    /// The component of type `C` if the builder holds one, where `T` is
    /// `&mut C` (or `&C`).
    ///
    /// ```
    /// let mut builder = handlekit_ecs::EntityBuilder::new();
    /// builder.add(1u32);
    /// *builder.get_mut::<&mut u32>().unwrap() += 1;
    /// assert_eq!(builder.get::<&u32>(), Some(&2));
    /// let mut prefab = handlekit_ecs::EntityBuilderClone::new();
    /// prefab.add(vec![1u8]);
    /// prefab.get_mut::<&mut Vec<u8>>().unwrap().push(2);
    /// assert_eq!(prefab.get::<&Vec<u8>>().unwrap(), &[1, 2]);
    /// ```
    #[must_use]
    pub fn get_mut<'a, T: BuilderRef<'a>>(&'a mut self) -> Option<T> {
        self.components.get_mut_ref()
    }

    /// Drops every component held; keeps the memory.
    ///
    /// ```
    /// let mut builder = handlekit_ecs::EntityBuilder::new();
    /// builder.add(1u8).clear();
    /// assert!(!builder.has::<u8>());
    /// let mut prefab = handlekit_ecs::EntityBuilderClone::new();
    /// prefab.add(1u8).clear();
    /// assert!(!prefab.has::<u8>());
    /// ```
    pub fn clear(&mut self) {
        self.components.clear();
    }

    /// The `TypeId`s of the components held, in the order they were added.
    ///
    /// ```
    /// use std::any::TypeId;
    /// let mut builder = handlekit_ecs::EntityBuilder::new();
    /// builder.add(1u8).add('c');
    /// let ids: Vec<TypeId> = builder.component_types().collect();
    /// assert_eq!(ids, [TypeId::of::<u8>(), TypeId::of::<char>()]);
    /// let mut prefab = handlekit_ecs::EntityBuilderClone::new();
    /// prefab.add('c');
    /// assert_eq!(prefab.component_types().collect::<Vec<_>>(), [TypeId::of::<char>()]);
    /// ```
    pub fn component_types(&self) -> impl Iterator<Item = TypeId> + '_ {
        self.components.types()
    }
}

impl<X: Extra> fmt::Debug for Builder<X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.components.debug(f, X::BUILDER)
    }
}

impl Builder<()> {
    /// Adds `component`, replacing (and dropping) the value of its type if
    /// the builder holds one. Returns the builder, for chaining.
    ///
    /// ```
    /// let mut builder = handlekit_ecs::EntityBuilder::new();
    /// builder.add(1u8).add(2u16).add(3u8);
    /// assert_eq!(builder.get::<&u8>(), Some(&3));
    /// ```
    #[inline]
    pub fn add<T: Component>(&mut self, component: T) -> &mut Self {
        self.components.add(component, ());
        self
    }

    /// Adds a value of `meta`'s type, which the builder does not hold,
    /// written by `fill` (see `Components::push_with`): how
    /// [`World::take`] moves each component out of its column.
    ///
    /// # Safety
    ///
    /// As `Components::push_with`.
    pub(crate) unsafe fn push_taken(
        &mut self,
        meta: &ComponentMeta,
        fill: impl FnOnce(*mut u8) -> bool,
    ) {
        // SAFETY: the caller's contract.
        unsafe { self.components.push_with(meta, (), fill) }
    }

    /// The gathered components, ready for [`World::spawn`] or
    /// [`World::insert`]. They stay in the builder until then; dropping the
    /// result unspawned drops them. Either way the builder is empty
    /// afterwards.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let mut builder = handlekit_ecs::EntityBuilder::new();
    /// let e = world.spawn(builder.add(7u8).build());
    /// assert_eq!(*world.get::<u8>(e).unwrap(), 7);
    /// assert!(!builder.has::<u8>());
    /// ```
    pub fn build(&mut self) -> BuiltEntity<'_> {
        BuiltEntity { builder: self }
    }
}

/// The components of an [`EntityBuilder`], from [`EntityBuilder::build`],
/// for [`World::spawn`] or [`World::insert`] (which move them out), or
/// [`EntityBuilder::add_bundle`]. Dropped unused, it drops them. Either way
/// the builder is left empty.
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// let e = world.spawn(());
/// let mut builder = handlekit_ecs::EntityBuilder::new();
/// world.insert(e, builder.add(1u8).add(2u16).build()).unwrap();
/// assert!(world.has::<u16>(e));
/// ```
pub struct BuiltEntity<'a> {
    builder: &'a mut EntityBuilder,
}

impl BuiltEntity<'_> {
    /// The `TypeId`s of the components, in the order they were added.
    ///
    /// ```
    /// use std::any::TypeId;
    /// let mut builder = handlekit_ecs::EntityBuilder::new();
    /// let built = builder.add(1u8).build();
    /// assert_eq!(built.component_types().collect::<Vec<_>>(), [TypeId::of::<u8>()]);
    /// ```
    pub fn component_types(&self) -> impl Iterator<Item = TypeId> + '_ {
        self.builder.component_types()
    }
}

impl Drop for BuiltEntity<'_> {
    fn drop(&mut self) {
        // Empty if it was spawned, inserted or added to another builder.
        self.builder.components.clear();
    }
}

impl BuiltEntity<'_> {
    /// Moves every component onto the entity, and leaves the builder empty
    /// (`DynamicBundle::dynamic_put`).
    pub(crate) fn put_all(self, world: &mut World, entity: Entity, row: usize) {
        let mut this = ManuallyDrop::new(self);
        this.builder.components.put_all(world, entity, row);
    }

    /// Moves every component into `builder`, replacing the values of the
    /// same types there, and leaves this builder empty
    /// (`DynamicBundle::dynamic_add_to`).
    pub(crate) fn move_into(self, builder: &mut EntityBuilder) {
        let mut this = ManuallyDrop::new(self);
        this.builder.components.move_to(&mut builder.components);
    }
}

impl fmt::Debug for BuiltEntity<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.builder.components.debug(f, "BuiltEntity")
    }
}

impl Builder<CloneFns> {
    /// Adds `component`, replacing (and dropping) the value of its type if
    /// the builder holds one. Returns the builder, for chaining.
    ///
    /// ```
    /// let mut builder = handlekit_ecs::EntityBuilderClone::new();
    /// builder.add(1u8).add(2u8);
    /// assert_eq!(builder.get::<&u8>(), Some(&2));
    /// ```
    #[inline]
    pub fn add<T: Component + Clone>(&mut self, component: T) -> &mut Self {
        self.components.add(
            component,
            CloneFns {
                put_clone: put_clone::<T>,
                clone_to: clone_to::<T>,
            },
        );
        self
    }

    /// The prefab: the builder's components, which [`World::spawn`]`(&prefab)`
    /// clones onto each new entity.
    ///
    /// ```
    /// let mut builder = handlekit_ecs::EntityBuilderClone::new();
    /// builder.add(1u8);
    /// let prefab = builder.build();
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn(&prefab);
    /// world.spawn(&prefab.clone());
    /// assert_eq!(world.count::<u8>(), 2);
    /// ```
    #[must_use]
    pub fn build(self) -> BuiltEntityClone {
        BuiltEntityClone {
            components: self.components,
        }
    }
}

/// A prefab, from [`EntityBuilderClone::build`]: [`World::spawn`]`(&prefab)`
/// (or [`World::insert`]) puts a clone of each of its components on the
/// entity; [`EntityBuilderClone::add_bundle`]`(&prefab)` and
/// [`EntityBuilder::add_bundle`]`(&prefab)` start another entity from it.
/// Cloning the prefab clones its components.
///
/// ```
/// use handlekit_ecs::{EntityBuilderClone, World};
/// let mut builder = EntityBuilderClone::new();
/// builder.add([1.0f32; 3]).add("tree");
/// let tree = builder.build();
/// let mut world = World::new();
/// for _ in 0..100 {
///     world.spawn(&tree);
/// }
/// assert_eq!(world.count::<&str>(), 100);
/// ```
#[derive(Default)]
pub struct BuiltEntityClone {
    components: Components<CloneFns>,
}

impl BuiltEntityClone {
    /// The `TypeId`s of the components, in the order they were added.
    ///
    /// ```
    /// use std::any::TypeId;
    /// let mut builder = handlekit_ecs::EntityBuilderClone::new();
    /// builder.add(1u8);
    /// let prefab = builder.build();
    /// assert_eq!(prefab.component_types().collect::<Vec<_>>(), [TypeId::of::<u8>()]);
    /// ```
    pub fn component_types(&self) -> impl Iterator<Item = TypeId> + '_ {
        self.components.types()
    }
}

impl BuiltEntityClone {
    /// Puts a clone of every component onto the entity
    /// (`DynamicBundle::dynamic_put`).
    pub(crate) fn put_clones(&self, world: &mut World, entity: Entity, row: usize) {
        self.components.put_clones(world, entity, row);
    }

    /// Adds a clone of every component to `builder`, replacing the values
    /// of the same types there.
    pub(crate) fn clone_into_builder(&self, builder: &mut EntityBuilder) {
        self.components.clone_into(&mut builder.components, |_| ());
    }

    /// Adds a clone of every component to the prefab builder `builder`,
    /// replacing the values of the same types there.
    pub(crate) fn clone_into_prefab(&self, builder: &mut EntityBuilderClone) {
        self.components
            .clone_into(&mut builder.components, |fns| fns);
    }
}

impl Clone for BuiltEntityClone {
    fn clone(&self) -> Self {
        let mut components = Components::new();
        self.components.clone_into(&mut components, |fns| fns);
        BuiltEntityClone { components }
    }
}

impl fmt::Debug for BuiltEntityClone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.components.debug(f, "BuiltEntityClone")
    }
}

/// A reference type that [`EntityBuilder::get_mut`] (and
/// [`EntityBuilderClone::get_mut`]) returns: `&T` or `&mut T` for a
/// component type `T`. Not part of the public API beyond naming the
/// reference type.
///
/// ```
/// let mut builder = handlekit_ecs::EntityBuilder::new();
/// builder.add(1u8);
/// let r: &u8 = builder.get_mut::<&u8>().unwrap();
/// assert_eq!(*r, 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a reference to a component",
    label = "`get` and `get_mut` take `&T` or `&mut T`, where `T` is the component type",
    note = "write `get::<&T>()`, as hecs does (`World::get` takes `T` itself)"
)]
pub trait BuilderRef<'a>: Sized {
    /// The component type referred to.
    type Component: Component;
    /// The reference to the component at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` points to an initialized, aligned `Self::Component`, valid for
    /// the access `Self` makes for `'a`.
    #[doc(hidden)]
    unsafe fn from_ptr(ptr: *mut u8) -> Self;
}

/// A shared reference type, `&T`, that [`EntityBuilder::get`] (and
/// [`EntityBuilderClone::get`]) returns.
///
/// ```
/// let mut builder = handlekit_ecs::EntityBuilder::new();
/// builder.add(1u8);
/// assert_eq!(builder.get::<&u8>(), Some(&1));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a shared reference to a component",
    label = "`get` takes `&T`, where `T` is the component type",
    note = "write `get::<&T>()`, as hecs does (`World::get` takes `T` itself); for `&mut T`, call `get_mut::<&mut T>()`"
)]
pub trait BuilderRefShared<'a>: BuilderRef<'a> {}

impl<'a, T: Component> BuilderRef<'a> for &'a T {
    type Component = T;
    unsafe fn from_ptr(ptr: *mut u8) -> Self {
        // SAFETY: the caller's contract.
        unsafe { &*ptr.cast::<T>() }
    }
}

impl<'a, T: Component> BuilderRefShared<'a> for &'a T {}

impl<'a, T: Component> BuilderRef<'a> for &'a mut T {
    type Component = T;
    unsafe fn from_ptr(ptr: *mut u8) -> Self {
        // SAFETY: the caller's contract.
        unsafe { &mut *ptr.cast::<T>() }
    }
}

//! Queries: which rows have which components, and the iteration over them.
//!
//! A query ANDs, 64 rows at a time, the world's alive word with the presence
//! word of every column it requires (and the complement for `Without`), then
//! visits the set bits. A word whose result is all ones is a run of 64 rows
//! that [`QueryBorrow::for_each`] visits with no bit tests, as a loop over
//! 64 consecutive slots of each column.

use std::any::TypeId;
use std::marker::PhantomData;
use std::ops::Range;
use std::ptr::NonNull;

use crate::access::{acquire, borrow_conflict, release, Access, Accesses, NO_COLUMN};
use crate::groups::{Hold, Required};
use crate::storage::{bit, RowsView, View, WORD};
use crate::world::{Component, RowFinder, World};
use crate::{ComponentError, Entity, NoSuchEntity};

mod derive;
pub use derive::{assert_query, FirstOf, FromItem, QueryShape};

/// The raw view of one component type for a query. Not part of the public API.
#[doc(hidden)]
pub struct Fetch<T>(View<T>);

impl<T> Clone for Fetch<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Fetch<T> {}

/// The raw view of an optional component type. Not part of the public API.
#[doc(hidden)]
pub struct OptionFetch<T>(Option<View<T>>);

impl<T> Clone for OptionFetch<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for OptionFetch<T> {}

/// The raw view of the row → entity window. Not part of the public API.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct EntityFetch(RowsView);

/// What a query asks for: `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`,
/// [`Entity`], the filters [`With<T>`] and [`Without<T>`], [`Or<L, R>`](Or)
/// of two queries, and tuples of these (up to 12, nested as deep as
/// needed); and structs and enums with `#[derive(Query)]` (feature
/// `macros`, on by default), whose items are the struct or enum made of
/// their fields' items.
///
/// A `&T` or `&mut T` requires the component; `Option` does not; `Entity`
/// yields the entity of the row. Filters yield `()` (as fields of a
/// derived query, their marker value).
///
/// # Safety
///
/// Implemented by this crate only; the hidden methods are not part of the
/// public API. `#[derive(Query)]` implements a hidden safe trait, which
/// one impl of this crate turns into a `Query` by forwarding to queries of
/// its own, so derived queries add no unsafe code.
///
/// ```
/// use handlekit_ecs::{Entity, With, Without, World};
/// struct Player;
/// let mut world = World::new();
/// let p = world.spawn((Player, 10u32));
/// world.spawn((5u32, 1.0f32));
/// let players: Vec<Entity> = world
///     .query_mut::<(Entity, &u32, With<Player>, Without<f32>)>()
///     .into_iter()
///     .map(|(e, _, (), ())| e)
///     .collect();
/// assert_eq!(players, [p]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a query",
    label = "not a query",
    note = "a query is `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`, `Entity`, `With<T>`, \
            `Without<T>`, `Or<L, R>`, a tuple of queries, or a type with `#[derive(Query)]`"
)]
pub unsafe trait Query {
    /// What the query yields per entity.
    type Item<'a>;
    /// The raw views. Not part of the public API.
    #[doc(hidden)]
    type Fetch: Copy;
    /// The most column borrows [`access`](Self::access) lists: a query with
    /// at most one cannot conflict with itself, so `query_mut` skips the
    /// check. Not part of the public API.
    #[doc(hidden)]
    const BORROWS: usize;
    /// Lists the columns the query borrows. Not part of the public API.
    #[doc(hidden)]
    fn access(world: &World, out: &mut Accesses);
    /// Lists the component columns a matching row must hold (for hecs's
    /// borrow rule: two queries that no row can match both may write one
    /// column). Listing fewer than the query requires is always sound (it
    /// only refuses more). Not part of the public API.
    #[doc(hidden)]
    fn required(_world: &World, _out: &mut Required) {}
    /// The raw views, or `None` if no entity can match (a required type is
    /// not registered). Not part of the public API.
    #[doc(hidden)]
    fn fetch(world: &World) -> Option<Self::Fetch>;
    /// Restricts `candidates` (rows of word `word`, alive) to the matching
    /// rows. Not part of the public API.
    ///
    /// # Safety
    ///
    /// `fetch` came from `world`, which is still borrowed and unchanged; the
    /// set bits of `candidates` name alive rows.
    #[doc(hidden)]
    unsafe fn mask(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64;
    /// The item of a matching row. Not part of the public API.
    ///
    /// # Safety
    ///
    /// `row` matches ([`mask`](Self::mask) kept it); the borrows listed by
    /// [`access`](Self::access) are held for `'a`, and no other item of the
    /// same row is alive.
    #[doc(hidden)]
    unsafe fn get<'a>(fetch: &Self::Fetch, row: usize) -> Self::Item<'a>;
    /// [`mask`](Self::mask) in the loops of a query whose component views
    /// are all dense ([`all_dense`](Self::all_dense)), for a word within the
    /// range [`words`](Self::words) gave: a required column's presence word
    /// is read with no check of the storage kind or of the bounds, so that
    /// a word costs a load and an AND per column. Not part of the public
    /// API.
    ///
    /// # Safety
    ///
    /// As [`mask`](Self::mask); `all_dense` said `true`, and `word` lies in
    /// the range `words` returned for the world's alive words.
    #[doc(hidden)]
    #[inline]
    unsafe fn mask_dense(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
        // SAFETY: forwarded.
        unsafe { Self::mask(fetch, word, candidates) }
    }
    /// Whether [`word`](Self::word) may be called: every component view of
    /// the fetch is dense. Not part of the public API.
    #[doc(hidden)]
    fn all_dense(_fetch: &Self::Fetch) -> bool {
        true
    }
    /// Whether every live row matches, known in O(1): each required column
    /// is dense and every live row has it (and the window has no dead row),
    /// no `Without` type is registered. Then the loop over the rows is one
    /// loop over the window, as slices. Not part of the public API.
    #[doc(hidden)]
    fn every_live_row(_fetch: &Self::Fetch) -> bool {
        true
    }
    /// `words` narrowed to the words where a row can match: the words of
    /// every required dense column's presence bits. Not part of the public
    /// API.
    #[doc(hidden)]
    #[inline]
    fn words(_fetch: &Self::Fetch, words: Range<usize>) -> Range<usize> {
        words
    }
    /// The views of a run of consecutive matching rows (part of a word,
    /// words whose rows all match, or the whole window), resolved once for
    /// the run (a pointer to the first row's slot of each dense column, or
    /// to the one row's value of a sparse set), so that the loop over its
    /// rows is a loop over slices. Not part of the public API.
    #[doc(hidden)]
    type Word: Copy;
    /// The [`Word`](Self::Word) of a run of matching rows from `base`. Not
    /// part of the public API.
    ///
    /// # Safety
    ///
    /// Row `base` matches ([`mask`](Self::mask) kept it); so do the rows
    /// after it that the caller visits through the word, which it may only
    /// do when [`all_dense`](Self::all_dense) said `true` (otherwise the run
    /// is row `base` alone).
    #[doc(hidden)]
    unsafe fn word(fetch: &Self::Fetch, base: usize) -> Self::Word;
    /// The item of row `base + i` of a [`word`](Self::word). Not part of
    /// the public API.
    ///
    /// # Safety
    ///
    /// `word` came from [`word`](Self::word) under the contract of
    /// [`get`](Self::get) for row `base + i`, a row of its run (`i == 0`
    /// unless [`all_dense`](Self::all_dense) said `true`).
    #[doc(hidden)]
    unsafe fn get_in_word<'a>(word: &Self::Word, i: usize) -> Self::Item<'a>;
    /// The item of the live `row`, or `None` if it does not match:
    /// [`mask`](Self::mask) of the one row, then [`get`](Self::get). Not
    /// part of the public API.
    ///
    /// # Safety
    ///
    /// As [`get`](Self::get), for a row that is alive (whether it matches
    /// is checked).
    #[doc(hidden)]
    #[inline]
    unsafe fn get_one<'a>(fetch: &Self::Fetch, row: usize) -> Option<Self::Item<'a>> {
        // SAFETY: the row is alive (the caller's contract).
        let matches = unsafe { Self::mask(fetch, row / WORD, bit(row)) } != 0;
        // SAFETY: the row matches; the rest is the caller's contract.
        matches.then(|| unsafe { Self::get(fetch, row) })
    }
}

fn view_of<T: Component>(world: &World) -> Option<View<T>> {
    let (_, storage) = world.typed::<T>()?;
    Some(storage.view(world.rows_view(), world.len()))
}

fn required_of<T: Component>(world: &World, out: &mut Required) {
    match world.column_index::<T>() {
        Some(column) => out.columns.push(column),
        None => out.nothing = true,
    }
}

fn access_of<T: Component>(world: &World, exclusive: bool, out: &mut Accesses) {
    out.push(Access {
        column: world.column_index::<T>().unwrap_or(NO_COLUMN),
        ty: TypeId::of::<T>(),
        name: std::any::type_name::<T>(),
        exclusive,
    });
}

/// How a column query reaches its values: [`Shared`] (`&T`, under the
/// column's shared borrow) or [`Exclusive`] (`&mut T`, under its exclusive
/// borrow). Not part of the public API.
#[doc(hidden)]
pub trait RefKind: 'static {
    /// Whether the query writes the column.
    const EXCLUSIVE: bool;
    /// The reference the query yields: `&'a T` or `&'a mut T`.
    type Ref<'a, T: 'a>;
    /// The reference to the value at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` points to an initialized `T`, and the column borrow of this
    /// kind is held for `'a`; for [`Exclusive`], no other reference to the
    /// value exists (no other item of the row is alive).
    unsafe fn from_ptr<'a, T: 'a>(ptr: *mut T) -> Self::Ref<'a, T>;
}

/// Reads: the kind of `&T`. Not part of the public API.
#[doc(hidden)]
pub enum Shared {}

/// Writes: the kind of `&mut T`. Not part of the public API.
#[doc(hidden)]
pub enum Exclusive {}

impl RefKind for Shared {
    const EXCLUSIVE: bool = false;
    type Ref<'a, T: 'a> = &'a T;
    #[inline(always)]
    unsafe fn from_ptr<'a, T: 'a>(ptr: *mut T) -> &'a T {
        // SAFETY: the caller's contract.
        unsafe { &*ptr }
    }
}

impl RefKind for Exclusive {
    const EXCLUSIVE: bool = true;
    type Ref<'a, T: 'a> = &'a mut T;
    #[inline(always)]
    unsafe fn from_ptr<'a, T: 'a>(ptr: *mut T) -> &'a mut T {
        // SAFETY: the caller's contract.
        unsafe { &mut *ptr }
    }
}

/// `&T` or `&mut T`, a reference to a component: the element queries that
/// read or write one column, alone or in an `Option`. Not part of the
/// public API.
#[doc(hidden)]
pub trait ColumnRef {
    /// The component type.
    type Component: Component;
    /// How the column is reached.
    type Kind: RefKind;
}

impl<T: Component> ColumnRef for &T {
    type Component = T;
    type Kind = Shared;
}

impl<T: Component> ColumnRef for &mut T {
    type Component = T;
    type Kind = Exclusive;
}

/// The query behind `&T` and `&mut T`: reads or writes `T`'s column, as
/// `K` says. A reference is a [`Query`] as a [`QueryShape`] whose shape is
/// this (so that the blanket impl of `Query` for every `QueryShape`, which
/// derived queries go through, does not overlap an impl for references).
/// Not part of the public API.
#[doc(hidden)]
pub struct ColumnQuery<T, K>(PhantomData<fn() -> (T, K)>);

impl<R: ColumnRef> QueryShape for R {
    type Shape = ColumnQuery<R::Component, R::Kind>;
    type Item<'a> = <R::Kind as RefKind>::Ref<'a, R::Component>;
    #[inline(always)]
    fn from_shape<'a>(item: Self::Item<'a>) -> Self::Item<'a> {
        item
    }
}

// SAFETY: reads (`Shared`) or writes (`Exclusive`) through a view of `T`'s
// column under the borrow of that kind, which `access` lists; each row's
// item is made once.
unsafe impl<T: Component, K: RefKind> Query for ColumnQuery<T, K> {
    type Item<'a> = K::Ref<'a, T>;
    type Fetch = Fetch<T>;
    const BORROWS: usize = 1;
    fn access(world: &World, out: &mut Accesses) {
        access_of::<T>(world, K::EXCLUSIVE, out);
    }
    fn required(world: &World, out: &mut Required) {
        required_of::<T>(world, out);
    }
    fn fetch(world: &World) -> Option<Self::Fetch> {
        view_of::<T>(world).map(Fetch)
    }
    #[inline]
    unsafe fn mask(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
        // SAFETY: forwarded.
        unsafe { fetch.0.mask(word, candidates) }
    }
    #[inline]
    unsafe fn mask_dense(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
        // SAFETY: the view is dense and the word within its words (the
        // caller's contract).
        unsafe { fetch.0.dense_mask_unchecked(word, candidates) }
    }
    #[inline]
    fn words(fetch: &Self::Fetch, words: Range<usize>) -> Range<usize> {
        fetch.0.words(words)
    }
    #[inline]
    unsafe fn get<'a>(fetch: &Self::Fetch, row: usize) -> Self::Item<'a> {
        // SAFETY: the row has the component, the borrow is held, and no
        // other item of the row exists.
        unsafe { K::from_ptr(fetch.0.get_unchecked(row)) }
    }
    fn all_dense(fetch: &Self::Fetch) -> bool {
        fetch.0.is_dense()
    }
    fn every_live_row(fetch: &Self::Fetch) -> bool {
        fetch.0.every_live_row()
    }
    type Word = NonNull<T>;
    #[inline]
    unsafe fn word(fetch: &Self::Fetch, base: usize) -> NonNull<T> {
        // A dense view's slots of the run's rows follow this one.
        // SAFETY: the row has the component (the caller's contract), so this
        // points to its value and is not null.
        unsafe { NonNull::new_unchecked(fetch.0.get_unchecked(base)) }
    }
    #[inline]
    unsafe fn get_in_word<'a>(word: &NonNull<T>, i: usize) -> Self::Item<'a> {
        let slot = word.as_ptr().wrapping_add(i);
        // The slots of the run's rows are consecutive in the column (so
        // `slot` is not null: the check of the item's `Option` in a `for`
        // loop folds away) and initialized; the borrow is held.
        // SAFETY: and no other item of the row exists.
        unsafe {
            std::hint::assert_unchecked(!slot.is_null());
            K::from_ptr(slot)
        }
    }
    #[inline]
    unsafe fn get_one<'a>(fetch: &Self::Fetch, row: usize) -> Option<Self::Item<'a>> {
        // The row is alive; a pointer found is to the row's component.
        // SAFETY: the borrow is held, and no other item of the row exists
        // (the caller's contract).
        unsafe { fetch.0.lookup(row).map(|value| K::from_ptr(value)) }
    }
}

// SAFETY: as the reference's query, for the rows that have the component.
unsafe impl<R: ColumnRef> Query for Option<R> {
    type Item<'a> = Option<<R::Kind as RefKind>::Ref<'a, R::Component>>;
    type Fetch = OptionFetch<R::Component>;
    const BORROWS: usize = 1;
    fn access(world: &World, out: &mut Accesses) {
        access_of::<R::Component>(world, R::Kind::EXCLUSIVE, out);
    }
    fn fetch(world: &World) -> Option<Self::Fetch> {
        Some(OptionFetch(view_of::<R::Component>(world)))
    }
    #[inline]
    unsafe fn mask(_: &Self::Fetch, _: usize, candidates: u64) -> u64 {
        candidates
    }
    #[inline]
    unsafe fn get<'a>(fetch: &Self::Fetch, row: usize) -> Self::Item<'a> {
        let view = fetch.0.as_ref()?;
        // SAFETY: the row is alive (in the window); the borrow is held and
        // no other item of the row exists.
        unsafe {
            view.has(row)
                .then(|| R::Kind::from_ptr(view.get_unchecked(row)))
        }
    }
    type Word = (Self::Fetch, usize);
    #[inline]
    unsafe fn word(fetch: &Self::Fetch, base: usize) -> Self::Word {
        (*fetch, base)
    }
    #[inline]
    unsafe fn get_in_word<'a>(&(fetch, base): &Self::Word, i: usize) -> Self::Item<'a> {
        // SAFETY: forwarded (row `base + i` of the word).
        unsafe { Self::get(&fetch, base + i) }
    }
}

// SAFETY: reads the row → entity window, which no query writes.
unsafe impl Query for Entity {
    type Item<'a> = Entity;
    type Fetch = EntityFetch;
    const BORROWS: usize = 0;
    fn access(_: &World, _: &mut Accesses) {}
    fn fetch(world: &World) -> Option<Self::Fetch> {
        Some(EntityFetch(world.rows_view()))
    }
    #[inline]
    unsafe fn mask(_: &Self::Fetch, _: usize, candidates: u64) -> u64 {
        candidates
    }
    #[inline]
    unsafe fn get<'a>(fetch: &Self::Fetch, row: usize) -> Self::Item<'a> {
        // SAFETY: a matching row is alive, so in the window.
        unsafe { fetch.0.entity(row) }
    }
    type Word = NonNull<Entity>;
    #[inline]
    unsafe fn word(fetch: &Self::Fetch, base: usize) -> NonNull<Entity> {
        // SAFETY: the run's rows match, so they are alive, in the window:
        // the pointer is to row `base`'s entity, not null.
        unsafe { NonNull::new_unchecked(fetch.0.entity_ptr(base).cast_mut()) }
    }
    #[inline]
    unsafe fn get_in_word<'a>(word: &NonNull<Entity>, i: usize) -> Self::Item<'a> {
        // SAFETY: the run's rows are consecutive in the window.
        unsafe { word.add(i).read() }
    }
}

/// A filter term: only the entities that have a `T` ([`With`], `HAS` true)
/// or lack one ([`Without`], `HAS` false). It yields `()` and borrows
/// nothing, and holds no `T`, so it is `Copy`, `Default`, comparable and
/// hashable whatever `T` is: a `#[derive(Query)]` struct or enum holds the
/// filter's value in its field, and may derive those traits.
///
/// ```
/// use handlekit_ecs::{With, Without};
/// assert_eq!(With::<String>::default(), With::default());
/// assert_eq!(format!("{:?}", Without::<u8>::default()), "Without<u8>");
/// ```
pub struct Filter<T, const HAS: bool>(PhantomData<fn() -> T>);

/// A filter: only entities that have a `T` (yields `()`, borrows nothing).
///
/// ```
/// use handlekit_ecs::{With, World};
/// let mut world = World::new();
/// world.spawn((1u8, 'x'));
/// world.spawn((2u8,));
/// let n = world.query_mut::<(&u8, With<char>)>().into_iter().count();
/// assert_eq!(n, 1);
/// ```
pub type With<T> = Filter<T, true>;

/// A filter: only entities that lack a `T` (yields `()`, borrows nothing).
///
/// ```
/// use handlekit_ecs::{Without, World};
/// let mut world = World::new();
/// world.spawn((1u8, 'x'));
/// world.spawn((2u8,));
/// let v: Vec<u8> = world.query_mut::<(&u8, Without<char>)>().into_iter().map(|(x, ())| *x).collect();
/// assert_eq!(v, [2]);
/// ```
pub type Without<T> = Filter<T, false>;

impl<T, const HAS: bool> Clone for Filter<T, HAS> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const HAS: bool> Copy for Filter<T, HAS> {}

impl<T, const HAS: bool> Default for Filter<T, HAS> {
    fn default() -> Self {
        Filter(PhantomData)
    }
}

impl<T, const HAS: bool> PartialEq for Filter<T, HAS> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T, const HAS: bool> Eq for Filter<T, HAS> {}

impl<T, const HAS: bool> std::hash::Hash for Filter<T, HAS> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<T, const HAS: bool> std::fmt::Debug for Filter<T, HAS> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if HAS { "With" } else { "Without" };
        write!(f, "{name}<{}>", std::any::type_name::<T>())
    }
}

// SAFETY: reads presence only (never written under a `&World`), yields `()`.
unsafe impl<T: Component> Query for With<T> {
    type Item<'a> = ();
    type Fetch = Fetch<T>;
    const BORROWS: usize = 0;
    fn access(_: &World, _: &mut Accesses) {}
    fn required(world: &World, out: &mut Required) {
        required_of::<T>(world, out);
    }
    fn fetch(world: &World) -> Option<Self::Fetch> {
        view_of::<T>(world).map(Fetch)
    }
    #[inline]
    unsafe fn mask(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
        // SAFETY: forwarded.
        unsafe { fetch.0.mask(word, candidates) }
    }
    fn every_live_row(fetch: &Self::Fetch) -> bool {
        fetch.0.every_live_row()
    }
    #[inline]
    fn words(fetch: &Self::Fetch, words: Range<usize>) -> Range<usize> {
        fetch.0.words(words)
    }
    #[inline]
    unsafe fn get<'a>(_: &Self::Fetch, _: usize) -> Self::Item<'a> {}
    type Word = ();
    #[inline]
    unsafe fn word(_: &Self::Fetch, _: usize) {}
    #[inline]
    unsafe fn get_in_word<'a>(_: &(), _: usize) -> Self::Item<'a> {}
}

// SAFETY: as `With`.
unsafe impl<T: Component> Query for Without<T> {
    type Item<'a> = ();
    type Fetch = OptionFetch<T>;
    const BORROWS: usize = 0;
    fn access(_: &World, _: &mut Accesses) {}
    fn required(world: &World, out: &mut Required) {
        // A type with no column excludes no row.
        if let Some(column) = world.column_index::<T>() {
            out.excluded.push(column);
        }
    }
    fn fetch(world: &World) -> Option<Self::Fetch> {
        Some(OptionFetch(view_of::<T>(world)))
    }
    fn every_live_row(fetch: &Self::Fetch) -> bool {
        // No entity has an unregistered type.
        fetch.0.is_none()
    }
    #[inline]
    unsafe fn mask(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
        match &fetch.0 {
            // SAFETY: forwarded.
            Some(view) => candidates & !unsafe { view.mask(word, candidates) },
            None => candidates,
        }
    }
    #[inline]
    unsafe fn get<'a>(_: &Self::Fetch, _: usize) -> Self::Item<'a> {}
    type Word = ();
    #[inline]
    unsafe fn word(_: &Self::Fetch, _: usize) {}
    #[inline]
    unsafe fn get_in_word<'a>(_: &(), _: usize) -> Self::Item<'a> {}
}

/// A query term that matches the entities matching `L`, `R` or both, and
/// yields which: `Or::Left`, `Or::Right` or `Or::Both`. Its terms' borrows
/// are all taken (as a tuple's), whichever matches. Its rows are visited
/// one at a time (no runs over slices), so put it beside the terms that
/// narrow the rows, not alone, where speed matters.
///
/// ```
/// use handlekit_ecs::{Or, World};
/// let mut world = World::new();
/// let a = world.spawn((1u8,));
/// let b = world.spawn(('b',));
/// let c = world.spawn((3u8, 'c'));
/// world.spawn((4u64,)); // neither
/// let found: Vec<_> = world
///     .query_mut::<(handlekit_ecs::Entity, Or<&u8, &char>)>()
///     .into_iter()
///     .map(|(e, or)| (e, or.map_left(|x| *x).map_right(|y| *y)))
///     .collect();
/// assert_eq!(found, [(a, Or::Left(1)), (b, Or::Right('b')), (c, Or::Both(3, 'c'))]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Or<L, R> {
    /// Only the left term matched.
    Left(L),
    /// Only the right term matched.
    Right(R),
    /// Both matched.
    Both(L, R),
}

impl<L, R> Or<L, R> {
    /// `Left`, `Right` or `Both` from two options; `None` if both are
    /// `None`.
    ///
    /// ```
    /// use handlekit_ecs::Or;
    /// assert_eq!(Or::new(Some(1), None::<char>), Some(Or::Left(1)));
    /// assert_eq!(Or::<u8, char>::new(None, None), None);
    /// ```
    pub fn new(left: Option<L>, right: Option<R>) -> Option<Self> {
        match (left, right) {
            (Some(l), Some(r)) => Some(Or::Both(l, r)),
            (Some(l), None) => Some(Or::Left(l)),
            (None, Some(r)) => Some(Or::Right(r)),
            (None, None) => None,
        }
    }

    /// The two sides as options.
    ///
    /// ```
    /// use handlekit_ecs::Or;
    /// assert_eq!(Or::<u8, char>::Both(1, 'x').split(), (Some(1), Some('x')));
    /// ```
    pub fn split(self) -> (Option<L>, Option<R>) {
        match self {
            Or::Left(l) => (Some(l), None),
            Or::Right(r) => (None, Some(r)),
            Or::Both(l, r) => (Some(l), Some(r)),
        }
    }

    /// The left side, if it matched.
    ///
    /// ```
    /// use handlekit_ecs::Or;
    /// assert_eq!(Or::<u8, char>::Right('x').left(), None);
    /// ```
    pub fn left(self) -> Option<L> {
        self.split().0
    }

    /// The right side, if it matched.
    ///
    /// ```
    /// use handlekit_ecs::Or;
    /// assert_eq!(Or::<u8, char>::Both(1, 'x').right(), Some('x'));
    /// ```
    pub fn right(self) -> Option<R> {
        self.split().1
    }

    /// The same variant with the left side mapped.
    ///
    /// ```
    /// use handlekit_ecs::Or;
    /// assert_eq!(Or::<u8, char>::Left(1).map_left(|x| x + 1), Or::Left(2));
    /// ```
    pub fn map_left<T>(self, f: impl FnOnce(L) -> T) -> Or<T, R> {
        match self {
            Or::Left(l) => Or::Left(f(l)),
            Or::Right(r) => Or::Right(r),
            Or::Both(l, r) => Or::Both(f(l), r),
        }
    }

    /// The same variant with the right side mapped.
    ///
    /// ```
    /// use handlekit_ecs::Or;
    /// assert_eq!(Or::<u8, char>::Both(1, 'a').map_right(|c| c as u32), Or::Both(1, 97));
    /// ```
    pub fn map_right<T>(self, f: impl FnOnce(R) -> T) -> Or<L, T> {
        match self {
            Or::Left(l) => Or::Left(l),
            Or::Right(r) => Or::Right(f(r)),
            Or::Both(l, r) => Or::Both(l, f(r)),
        }
    }
}

// SAFETY: the union of the two terms' accesses (so a term's items are made
// only under the borrows it lists); each term makes at most one item per
// row, through `get_one`, which checks that the row matches the term.
unsafe impl<L: Query, R: Query> Query for Or<L, R> {
    type Item<'a> = Or<L::Item<'a>, R::Item<'a>>;
    type Fetch = (Option<L::Fetch>, Option<R::Fetch>);
    const BORROWS: usize = L::BORROWS + R::BORROWS;
    fn access(world: &World, out: &mut Accesses) {
        L::access(world, out);
        R::access(world, out);
    }
    fn fetch(world: &World) -> Option<Self::Fetch> {
        either_fetch::<L, R>(world)
    }
    #[inline]
    unsafe fn mask(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
        // SAFETY: forwarded.
        unsafe {
            side_mask::<L>(&fetch.0, word, candidates) | side_mask::<R>(&fetch.1, word, candidates)
        }
    }
    fn all_dense(_: &Self::Fetch) -> bool {
        // Runs of one row: `word` does not resolve columns for a run.
        false
    }
    fn every_live_row(_: &Self::Fetch) -> bool {
        false
    }
    #[inline]
    unsafe fn get<'a>(fetch: &Self::Fetch, row: usize) -> Self::Item<'a> {
        // SAFETY: forwarded; `get_one` checks that the row matches the
        // term before making its item.
        let left = fetch.0.as_ref().and_then(|f| unsafe { L::get_one(f, row) });
        // SAFETY: as above.
        let right = fetch.1.as_ref().and_then(|f| unsafe { R::get_one(f, row) });
        Or::new(left, right).expect("handlekit-ecs: a row that `Or` matched matches a term")
    }
    type Word = (Self::Fetch, usize);
    #[inline]
    unsafe fn word(fetch: &Self::Fetch, base: usize) -> Self::Word {
        (*fetch, base)
    }
    #[inline]
    unsafe fn get_in_word<'a>((fetch, base): &Self::Word, i: usize) -> Self::Item<'a> {
        // SAFETY: forwarded (`i == 0`: `all_dense` is false).
        unsafe { Self::get(fetch, base + i) }
    }
}

/// The fetch of two alternatives: each side's, if it can match a row.
pub(crate) type EitherFetch<L, R> = (Option<<L as Query>::Fetch>, Option<<R as Query>::Fetch>);

/// The fetches of two alternatives (`Or`, a derived enum's variants), or
/// `None` if neither side can match a row.
pub(crate) fn either_fetch<L: Query, R: Query>(world: &World) -> Option<EitherFetch<L, R>> {
    match (L::fetch(world), R::fetch(world)) {
        (None, None) => None,
        both => Some(both),
    }
}

/// [`Query::mask`] of one side of an alternative: no row for a side that
/// cannot match.
///
/// # Safety
///
/// As [`Query::mask`].
#[inline]
pub(crate) unsafe fn side_mask<Q: Query>(
    fetch: &Option<Q::Fetch>,
    word: usize,
    candidates: u64,
) -> u64 {
    fetch.as_ref().map_or(0, |f| {
        // SAFETY: the caller's contract.
        unsafe { Q::mask(f, word, candidates) }
    })
}

macro_rules! query_tuple {
    ($(($name:ident, $_binding:ident))*) => {
        // SAFETY: the union of the elements' accesses; each element makes
        // one item per row.
        unsafe impl<$($name: Query),*> Query for ($($name,)*) {
            type Item<'a> = ($($name::Item<'a>,)*);
            type Fetch = ($($name::Fetch,)*);
            const BORROWS: usize = 0 $(+ $name::BORROWS)*;
            #[allow(unused_variables)]
            fn access(world: &World, out: &mut Accesses) {
                $($name::access(world, out);)*
            }
            #[allow(unused_variables)]
            fn required(world: &World, out: &mut Required) {
                $($name::required(world, out);)*
            }
            #[allow(unused_variables, clippy::unused_unit)]
            fn fetch(world: &World) -> Option<Self::Fetch> {
                Some(($($name::fetch(world)?,)*))
            }
            #[inline]
            #[allow(unused_variables, unused_mut, non_snake_case)]
            unsafe fn mask(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
                let ($($name,)*) = fetch;
                let mut candidates = candidates;
                // SAFETY: forwarded.
                $(candidates = unsafe { $name::mask($name, word, candidates) };)*
                candidates
            }
            #[inline]
            #[allow(unused_variables, unused_mut, non_snake_case)]
            unsafe fn mask_dense(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
                let ($($name,)*) = fetch;
                let mut candidates = candidates;
                // SAFETY: forwarded; the range of the tuple's words lies
                // within each element's.
                $(candidates = unsafe { $name::mask_dense($name, word, candidates) };)*
                candidates
            }
            #[inline]
            #[allow(unused_variables, non_snake_case, clippy::unused_unit)]
            unsafe fn get<'a>(fetch: &Self::Fetch, row: usize) -> Self::Item<'a> {
                let ($($name,)*) = fetch;
                // SAFETY: forwarded.
                ($(unsafe { $name::get($name, row) },)*)
            }
            #[inline]
            #[allow(unused_variables, unused_mut, non_snake_case)]
            fn words(fetch: &Self::Fetch, words: Range<usize>) -> Range<usize> {
                let ($($name,)*) = fetch;
                let mut words = words;
                $(words = $name::words($name, words);)*
                words
            }
            #[allow(unused_variables, non_snake_case)]
            fn all_dense(fetch: &Self::Fetch) -> bool {
                let ($($name,)*) = fetch;
                true $(&& $name::all_dense($name))*
            }
            #[allow(unused_variables, non_snake_case)]
            fn every_live_row(fetch: &Self::Fetch) -> bool {
                let ($($name,)*) = fetch;
                true $(&& $name::every_live_row($name))*
            }
            type Word = ($($name::Word,)*);
            #[inline]
            #[allow(unused_variables, non_snake_case, clippy::unused_unit)]
            unsafe fn word(fetch: &Self::Fetch, base: usize) -> Self::Word {
                let ($($name,)*) = fetch;
                // SAFETY: forwarded; every element's views are dense.
                ($(unsafe { $name::word($name, base) },)*)
            }
            #[inline]
            #[allow(unused_variables, non_snake_case, clippy::unused_unit)]
            unsafe fn get_in_word<'a>(word: &Self::Word, i: usize) -> Self::Item<'a> {
                let ($($name,)*) = word;
                // SAFETY: forwarded.
                ($(unsafe { $name::get_in_word($name, i) },)*)
            }
        }
    };
}

for_each_tuple!(query_tuple);

/// The accesses of `Q`, checked for a column borrowed mutably twice or both
/// mutably and shared (which would alias within one item).
fn accesses<Q: Query>(world: &World) -> Accesses {
    let mut out = Accesses::default();
    Q::access(world, &mut out);
    check_conflicts(out.as_slice());
    out
}

/// Panics, naming the type, if `list` names a type twice with one of the
/// two exclusive (the items of one row would alias).
fn check_conflicts(list: &[Access]) {
    for (i, a) in list.iter().enumerate() {
        for b in &list[..i] {
            // By type, so that a type with no column yet is refused too.
            if a.ty == b.ty && (a.exclusive || b.exclusive) {
                borrow_conflict(a.name, a.exclusive);
            }
        }
    }
}

/// The borrows of a [`World::query`], taken and registered through the
/// world's registry (`groups.rs`, hecs's rule). Returns the query's
/// registration, or panics naming the type that conflicts.
#[track_caller]
fn acquire_query<Q: Query>(world: &World, accesses: &Accesses) -> Hold {
    let list = accesses.as_slice();
    if list.iter().all(|a| a.column == NO_COLUMN) {
        return None;
    }
    let required = || {
        let mut out = Required::default();
        Q::required(world, &mut out);
        out
    };
    let acquired = world
        .groups
        .acquire(&world.columns, list, required, |a, b| disjoint(world, a, b));
    match acquired {
        Ok(hold) => hold,
        Err(i) => borrow_conflict(list[i].name, list[i].exclusive),
    }
}

/// Whether no live row of `world` holds every component both `a` and `b`
/// require and none that either excludes. Stops at the first row that
/// does.
fn disjoint(world: &World, a: &Required, b: &Required) -> bool {
    if a.nothing || b.nothing {
        return true;
    }
    let sorted = |lists: [&[usize]; 2]| {
        let mut columns: Vec<usize> = lists.concat();
        columns.sort_unstable();
        columns.dedup();
        columns
    };
    let mut columns = sorted([a.columns.as_slice(), b.columns.as_slice()]);
    let excluded = sorted([a.excluded.as_slice(), b.excluded.as_slice()]);
    // A type one requires and the other excludes: no row matches both.
    if columns.iter().any(|c| excluded.binary_search(c).is_ok()) {
        return true;
    }
    // The rarest type first: the test per row fails soonest.
    columns.sort_by_key(|&c| world.columns[c].storage.len());
    if columns
        .first()
        .is_some_and(|&c| world.columns[c].storage.len() == 0)
    {
        return true;
    }
    let front = world.rows.front_position();
    let first_word = world.alive.front_position();
    for (w, &alive) in world.alive.as_slice().iter().enumerate() {
        let mut bits = alive;
        while bits != 0 {
            let row = (first_word + w) * WORD + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let entity = world.rows[row - front];
            let has = |&c: &usize| world.columns[c].storage.contains(entity, row);
            if columns.iter().all(has) && !excluded.iter().any(has) {
                return false;
            }
        }
    }
    true
}

/// A query on a shared world, holding its run-time borrows until dropped.
/// From [`World::query`].
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// world.spawn((1u32, 2u64));
/// let mut q = world.query::<(&u32, &mut u64)>();
/// for (a, b) in q.iter() {
///     *b += u64::from(*a);
/// }
/// drop(q);
/// assert_eq!(world.query::<&u64>().iter().copied().sum::<u64>(), 3);
/// ```
pub struct QueryBorrow<'w, Q: Query> {
    world: &'w World,
    /// The world's rows of entities, for `get`: the world cannot change
    /// while borrowed.
    rows: RowFinder<'w>,
    fetch: Option<Q::Fetch>,
    /// The query's registration (every column borrow it holds, plain or
    /// through a group), if it borrows a column.
    hold: Hold,
}

impl<Q: Query> Drop for QueryBorrow<'_, Q> {
    fn drop(&mut self) {
        // Every column borrow of a `World::query` is registered.
        if let Some(id) = self.hold {
            self.world.groups.release(&self.world.columns, id);
        }
    }
}

impl<'w, Q: Query> QueryBorrow<'w, Q> {
    /// The matching entities' items, in row order.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn((1u32,));
    /// assert_eq!(world.query::<&u32>().iter().count(), 1);
    /// ```
    pub fn iter(&mut self) -> QueryIter<'_, Q> {
        // SAFETY: the borrows are held while `self` is mutably borrowed.
        unsafe { QueryIter::new(self.world, self.fetch) }
    }

    /// Calls `f` on every matching entity's item, in row order. Runs of 64
    /// matching rows are visited without bit tests.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn_batch((0..100u32).map(|i| (i,)));
    /// let mut sum = 0;
    /// world.query::<&u32>().for_each(|x| sum += x);
    /// assert_eq!(sum, 4950);
    /// ```
    pub fn for_each(&mut self, mut f: impl FnMut(Q::Item<'_>)) {
        self.iter().fold((), |(), item| f(item));
    }

    /// The item of `entity`, or `None` if it is not alive or does not
    /// match: a lookup by handle through the borrows this query already
    /// holds, with no type lookup and no borrow flag per call (for many
    /// random lookups, as hecs's `View::get`).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let a = world.spawn((1u32, 'a'));
    /// let b = world.spawn((2u32,));
    /// let mut q = world.query::<(&u32, &char)>();
    /// assert_eq!(q.get(a), Some((&1, &'a')));
    /// assert_eq!(q.get(b), None); // no char
    /// ```
    #[inline]
    pub fn get(&mut self, entity: Entity) -> Option<Q::Item<'_>> {
        let fetch = self.fetch.as_ref()?;
        let row = self.rows.row_of(entity)?;
        // The borrows are held while `self` is mutably borrowed, so no
        // other item of the row exists.
        // SAFETY: `fetch` came from the borrowed world; the row is alive.
        unsafe { Q::get_one(fetch, row) }
    }
}

impl<Q: Query> QueryBorrow<'_, Q> {
    /// The items of several entities at once, through the borrows this
    /// query holds: `None` where an entity is not alive or does not match.
    /// As hecs's `View::get_disjoint_mut`.
    ///
    /// # Panics
    ///
    /// If an entity is named twice (the items would alias); the message
    /// names it.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let a = world.spawn((1u32,));
    /// let b = world.spawn((2u32,));
    /// let c = world.spawn(('c',));
    /// let mut q = world.query::<&mut u32>();
    /// let [x, y, z] = q.get_disjoint_mut([a, b, c]);
    /// std::mem::swap(x.unwrap(), y.unwrap());
    /// assert!(z.is_none());
    /// drop(q);
    /// assert_eq!(*world.get::<u32>(a).unwrap(), 2);
    /// ```
    #[track_caller]
    pub fn get_disjoint_mut<const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> [Option<Q::Item<'_>>; N] {
        assert_distinct(&entities, "QueryBorrow::get_disjoint_mut");
        let world = self.world;
        let fetch = self.fetch.as_ref();
        entities.map(|entity| {
            let fetch = fetch?;
            let row = world.row_of(entity).ok()?;
            // The query's borrows are held while `self` is mutably borrowed,
            // and distinct entities have distinct rows: no shared value.
            // SAFETY: `fetch` came from the borrowed world; the row is alive.
            unsafe { Q::get_one(fetch, row) }
        })
    }
}

/// Panics, naming the entity, if `entities` names one twice. O(N²) for a
/// few, O(N log N) for many.
#[track_caller]
fn assert_distinct(entities: &[Entity], call: &str) {
    let twice = if entities.len() <= 16 {
        entities
            .iter()
            .enumerate()
            .find(|&(i, e)| entities[..i].contains(e))
            .map(|(_, &e)| e)
    } else {
        let mut sorted = entities.to_vec();
        sorted.sort_unstable();
        sorted.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
    };
    if let Some(entity) = twice {
        panic!("handlekit-ecs: {call}: entity {entity:?} is named twice (its items would alias)");
    }
}

impl<Q: Query> QueryBorrow<'_, Q> {
    /// The matching entities' items in batches of `batch_size` (the last
    /// may be shorter; none is empty), in row order, for a thread pool of
    /// the user's own: see [`Batch`].
    ///
    /// # Panics
    ///
    /// If `batch_size` is 0.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn_batch((0..5u32).map(|i| (i,)));
    /// let batches: Vec<Vec<u32>> = world
    ///     .query::<&u32>()
    ///     .iter_batched(2)
    ///     .map(|b| b.copied().collect())
    ///     .collect();
    /// assert_eq!(batches, [vec![0, 1], vec![2, 3], vec![4]]);
    /// ```
    #[track_caller]
    pub fn iter_batched(&mut self, batch_size: u32) -> BatchedIter<'_, Q> {
        BatchedIter::new(self.iter(), batch_size)
    }
}

impl<'q, Q: Query> IntoIterator for &'q mut QueryBorrow<'_, Q> {
    type Item = Q::Item<'q>;
    type IntoIter = QueryIter<'q, Q>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// A query on an exclusively borrowed world, with no run-time checks. From
/// [`World::query_mut`]; iterate it with `for`.
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// world.spawn((1u32,));
/// for x in world.query_mut::<&mut u32>() {
///     *x += 1;
/// }
/// ```
pub struct QueryMut<'w, Q: Query> {
    world: &'w World,
    fetch: Option<Q::Fetch>,
}

impl<'w, Q: Query> QueryMut<'w, Q> {
    /// Calls `f` on every matching entity's item, in row order. Runs of 64
    /// matching rows are visited without bit tests.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn_batch((0..100u32).map(|i| (i, 1u32 as f32)));
    /// world.query_mut::<(&mut u32, &f32)>().for_each(|(x, y)| *x += *y as u32);
    /// ```
    pub fn for_each(self, mut f: impl FnMut(Q::Item<'w>)) {
        self.into_iter().fold((), |(), item| f(item));
    }
}

impl<'w, Q: Query> QueryMut<'w, Q> {
    /// The matching entities' items in batches of `batch_size`, as
    /// [`QueryBorrow::iter_batched`].
    ///
    /// # Panics
    ///
    /// If `batch_size` is 0.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn_batch((0..5u32).map(|i| (i,)));
    /// let sizes: Vec<usize> = world
    ///     .query_mut::<&mut u32>()
    ///     .into_iter_batched(3)
    ///     .map(|batch| batch.map(|x| *x += 1).count())
    ///     .collect();
    /// assert_eq!(sizes, [3, 2]);
    /// ```
    #[track_caller]
    pub fn into_iter_batched(self, batch_size: u32) -> BatchedIter<'w, Q> {
        BatchedIter::new(self.into_iter(), batch_size)
    }
}

impl<'w, Q: Query> IntoIterator for QueryMut<'w, Q> {
    type Item = Q::Item<'w>;
    type IntoIter = QueryIter<'w, Q>;
    fn into_iter(self) -> Self::IntoIter {
        // SAFETY: the world is borrowed exclusively for 'w.
        unsafe { QueryIter::new(self.world, self.fetch) }
    }
}

/// The iterator of a query: items in row order.
///
/// It keeps the current run of consecutive matching rows as a position and
/// an end, so that [`next`](Iterator::next) is a compare, an increment and
/// the fetches; finding the next run (the next set bits of a word, the
/// next word with a match) happens out of line, once per run. A word whose
/// 64 rows all match joins the run (a run crosses words), and when every
/// live row matches and the window has no dead row the whole window is
/// one run. [`fold`](Iterator::fold) (and so `for_each`, `sum`, `count`)
/// visits what is left with the word loops of
/// [`QueryMut::for_each`].
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// world.spawn((1u32,));
/// let it: handlekit_ecs::QueryIter<'_, &u32> = world.query_mut::<&u32>().into_iter();
/// assert_eq!(it.count(), 1);
/// ```
pub struct QueryIter<'a, Q: Query> {
    /// The next row of the current run, counted from `slots_row`.
    pos: usize,
    /// The end of the current run, counted from `slots_row`. Invariant: the
    /// rows `slots_row + pos..slots_row + end` match and were not yielded;
    /// the rows of `rest.bits` and of the runs `rest` finds lie after them.
    end: usize,
    /// The views of the row `slots_row` ([`Query::word`] of it), through
    /// which the current run's rows are reached, and with dense views the
    /// rows of `rest.bits` too. Invariant: `Some` whenever `pos < end`, or
    /// `rest.bits != 0` and [`Query::all_dense`]; the rows reached through
    /// it are not `slots_row` alone only when [`Query::all_dense`] (then a
    /// matching row's slot in each dense column lies `row - slots_row`
    /// slots on, and every such row lies at or after `slots_row`).
    slots: Option<Q::Word>,
    /// See `slots`.
    slots_row: usize,
    /// Whether the current run is the whole iteration (the whole window,
    /// or nothing): set once by `new` and never changed, so that LLVM
    /// unswitches a `for` loop on it, and the loop of that case is a
    /// counted loop with no refill in it, which it unrolls and vectorizes
    /// as a loop over slices.
    only_run: bool,
    /// Where the runs after the current one are found.
    rest: Rest<'a, Q>,
}

/// The part of a [`QueryIter`] that finds the next run. It is handed to
/// [`Rest::next_run`] and back by value, so that no pointer into the
/// iterator escapes and the `for` loop keeps the current run in registers
/// (with `&mut self`, the loop stored and reloaded its position around
/// every item: 1.37 ns per `simple_iter` item against 0.74 for `for_each`).
struct Rest<'a, Q: Query> {
    /// The raw views; `None` if no entity can match (then `alive` is empty).
    fetch: Option<Q::Fetch>,
    /// [`Query::all_dense`] of the fetch: runs may be longer than one row,
    /// and the masks of the words are read unchecked
    /// ([`Query::mask_dense`]).
    dense: bool,
    /// The matching rows of one word not yet in a run (bit `i` for row
    /// `bits_base + i`); all of them lie before the rows of `alive`'s
    /// words from `next_word` on.
    bits: u64,
    /// The row of bit 0 of `bits`.
    bits_base: usize,
    /// The alive words the query can match in (narrowed by
    /// [`Query::words`]); `alive[i]` is word `first_word + i`.
    alive: &'a [u64],
    first_word: usize,
    /// The next index into `alive`: the words before it are done.
    next_word: usize,
    _items: PhantomData<Q::Item<'a>>,
}

impl<Q: Query> Clone for Rest<'_, Q> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<Q: Query> Copy for Rest<'_, Q> {}

impl<'a, Q: Query> QueryIter<'a, Q> {
    /// The iterator over the matching rows of `world`.
    ///
    /// # Safety
    ///
    /// `fetch` came from `world`, and the query's borrows are held for `'a`
    /// (by a guard, or an exclusive borrow of the world).
    unsafe fn new(world: &'a World, fetch: Option<Q::Fetch>) -> Self {
        let mut it = QueryIter {
            pos: 0,
            end: 0,
            slots: None,
            slots_row: 0,
            only_run: true,
            rest: Rest {
                fetch,
                dense: false,
                bits: 0,
                bits_base: 0,
                alive: &[],
                first_word: 0,
                next_word: 0,
                _items: PhantomData,
            },
        };
        let Some(fetch) = fetch else {
            return it;
        };
        let dense = Q::all_dense(&fetch);
        it.rest.dense = dense;
        let rows = world.rows.len();
        if dense && rows == world.len() && Q::every_live_row(&fetch) {
            // Every row of the window is alive and matches: one run (an
            // archetype table's loop).
            if rows > 0 {
                // SAFETY: every row of the window matches and every view is
                // dense.
                it.slots = Some(unsafe { Q::word(&fetch, world.rows.front_position()) });
                it.slots_row = world.rows.front_position();
                it.end = rows;
            }
            return it;
        }
        let first_word = world.alive.front_position();
        let alive = world.alive.as_slice();
        // Only the words where the required dense columns have bits.
        let words = Q::words(&fetch, first_word..first_word + alive.len());
        it.rest.alive = &alive[words.start - first_word..words.end - first_word];
        it.rest.first_word = words.start;
        it.only_run = false;
        it
    }
}

impl<Q: Query> QueryIter<'_, Q> {
    /// A second iterator at the same place, over the same rows.
    ///
    /// # Safety
    ///
    /// The caller lets the two visit disjoint rows (each item is made once).
    unsafe fn duplicate(&self) -> Self {
        QueryIter {
            pos: self.pos,
            end: self.end,
            slots: self.slots,
            slots_row: self.slots_row,
            only_run: self.only_run,
            rest: self.rest,
        }
    }

    /// Passes over up to `n` matching rows without making their items (so
    /// that no reference to their components is made); returns how many.
    /// The same steps as [`next`](Iterator::next) takes.
    fn skip_rows(&mut self, n: usize) -> usize {
        let mut skipped = 0;
        while skipped < n {
            if self.pos < self.end {
                let k = (n - skipped).min(self.end - self.pos);
                self.pos += k;
                skipped += k;
                continue;
            }
            if self.only_run {
                break;
            }
            let bits = self.rest.bits;
            if bits != 0 && self.rest.dense {
                self.rest.bits = bits & (bits - 1);
                skipped += 1;
                continue;
            }
            let (rest, run) = self.rest.next_run();
            self.rest = rest;
            let Some((slots, first, len)) = run else {
                break;
            };
            self.slots = Some(slots);
            self.slots_row = first;
            self.pos = 0;
            self.end = len;
        }
        skipped
    }
}

/// The batches of a query, for a thread pool of the user's own: each batch
/// an iterator over the items of up to `n` matching rows, in row order; no
/// batch is empty, and each holds exactly `n` but the last. From
/// [`QueryBorrow::iter_batched`] and [`QueryMut::into_iter_batched`].
/// Making a batch passes over its rows (a bit test each, no item made),
/// so handing batches out costs O(matching rows / 64 + batches) words
/// read, plus a step per row in words with holes.
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// world.spawn_batch((0..10u32).map(|i| (i,)));
/// let sizes: Vec<usize> = world.query::<&u32>().iter_batched(4).map(|b| b.len()).collect();
/// assert_eq!(sizes, [4, 4, 2]);
/// ```
pub struct BatchedIter<'q, Q: Query> {
    /// At the first row not yet in a batch.
    iter: QueryIter<'q, Q>,
    size: usize,
}

impl<'q, Q: Query> BatchedIter<'q, Q> {
    #[track_caller]
    fn new(iter: QueryIter<'q, Q>, size: u32) -> Self {
        assert!(
            size > 0,
            "handlekit-ecs: iter_batched: the batch size must be at least 1"
        );
        BatchedIter {
            iter,
            // A `u32`, as hecs's; it fits in `usize` where std runs.
            size: size as usize,
        }
    }
}

impl<'q, Q: Query> Iterator for BatchedIter<'q, Q> {
    type Item = Batch<'q, Q>;

    fn next(&mut self) -> Option<Batch<'q, Q>> {
        // SAFETY: the batch visits the rows `skip_rows` passes over, which
        // this iterator never visits again.
        let start = unsafe { self.iter.duplicate() };
        let left = self.iter.skip_rows(self.size);
        (left > 0).then_some(Batch { iter: start, left })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (low, high) = self.iter.size_hint();
        (low.div_ceil(self.size), high.map(|h| h.div_ceil(self.size)))
    }
}

impl<Q: Query> std::iter::FusedIterator for BatchedIter<'_, Q> {}

impl<Q: Query> std::fmt::Debug for BatchedIter<'_, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchedIter")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

/// One batch of a [`BatchedIter`]: the items of its rows, in row order.
/// `Send` where the items are, so that it can go to another thread.
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// world.spawn_batch((0..100u32).map(|i| (i,)));
/// let mut q = world.query::<&mut u32>();
/// std::thread::scope(|s| {
///     for batch in q.iter_batched(30) {
///         s.spawn(move || batch.for_each(|x| *x *= 2));
///     }
/// });
/// drop(q);
/// assert_eq!(world.query::<&u32>().iter().sum::<u32>(), 9900);
/// ```
pub struct Batch<'q, Q: Query> {
    iter: QueryIter<'q, Q>,
    /// The batch's items not yet yielded. Invariant: the iterator has at
    /// least that many left, and the rows of the next `left` are this
    /// batch's alone.
    left: usize,
}

// SAFETY: a batch yields items of rows no other batch or iterator visits
// (the invariant of `left`), made from raw views of a world that stays
// borrowed, and unchanged, for 'q, which it reads only (presence and
// alive bits, never written under a shared borrow). Sending it is sending
// those items: sound when they are `Send`.
unsafe impl<'q, Q: Query> Send for Batch<'q, Q> where Q::Item<'q>: Send {}

impl<'q, Q: Query> Iterator for Batch<'q, Q> {
    type Item = Q::Item<'q>;

    #[inline]
    fn next(&mut self) -> Option<Q::Item<'q>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.iter.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<Q: Query> ExactSizeIterator for Batch<'_, Q> {}
impl<Q: Query> std::iter::FusedIterator for Batch<'_, Q> {}

impl<Q: Query> std::fmt::Debug for Batch<'_, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("left", &self.left)
            .finish_non_exhaustive()
    }
}

impl<'a, Q: Query> Rest<'a, Q> {
    /// The next run of matching rows, as its views, first row and length,
    /// and the state after it; `None` (with nothing left to find) when
    /// there is none. A run is the next row of `bits`, or the rows of whole
    /// matching words (with the low bits of the word after them): a word
    /// that is not all set yields its first row here and the others, with
    /// dense views, to `next` a bit at a time. Out of line (`next` stays a
    /// compare and an increment), and by value (see [`Rest`]).
    ///
    /// The rows of a run match, and every view of the fetch is valid under
    /// the borrows the iterator holds.
    #[cold]
    #[inline(never)]
    fn next_run(mut self) -> (Self, Option<(Q::Word, usize, usize)>) {
        let Some(fetch) = self.fetch.as_ref() else {
            return (self, None);
        };
        loop {
            if self.bits != 0 {
                // One row: the next of a word that is not all set (with
                // dense views, its views also reach the word's later rows,
                // which `next` takes a bit at a time).
                let first = self.bits_base + self.bits.trailing_zeros() as usize;
                self.bits &= self.bits - 1;
                // SAFETY: row `first` matches.
                let slots = unsafe { Q::word(fetch, first) };
                return (self, Some((slots, first, 1)));
            }
            let Some(&alive) = self.alive.get(self.next_word) else {
                return (self, None);
            };
            let word = self.first_word + self.next_word;
            self.next_word += 1;
            self.bits_base = word * WORD;
            if !self.dense {
                // SAFETY: `fetch` came from the borrowed world; alive bits
                // name alive rows.
                self.bits = unsafe { Q::mask(fetch, word, alive) };
                continue;
            }
            // SAFETY: `fetch` came from the borrowed world; alive bits name alive
            // rows; the views are dense and the word is in the narrowed range.
            self.bits = unsafe { Q::mask_dense(fetch, word, alive) };
            if self.bits != u64::MAX {
                continue;
            }
            // A word whose rows all match: a run, on through the next words
            // whose rows all match and into the low bits of the first that
            // does not.
            let first = self.bits_base;
            let mut len = WORD;
            self.bits = 0;
            while let Some(&alive) = self.alive.get(self.next_word) {
                let word = self.first_word + self.next_word;
                self.next_word += 1;
                // SAFETY: as above.
                let bits = unsafe { Q::mask_dense(fetch, word, alive) };
                if bits == u64::MAX {
                    len += WORD;
                    continue;
                }
                let ones = bits.trailing_ones();
                len += ones as usize;
                // `ones < 64`: the bits past the run stay.
                self.bits = bits & (u64::MAX << ones);
                self.bits_base = word * WORD;
                break;
            }
            // SAFETY: the `len` rows from `first` match and every view is
            // dense.
            let slots = unsafe { Q::word(fetch, first) };
            return (self, Some((slots, first, len)));
        }
    }
}

impl<'a, Q: Query> Iterator for QueryIter<'a, Q> {
    type Item = Q::Item<'a>;

    #[inline]
    fn next(&mut self) -> Option<Q::Item<'a>> {
        if self.pos >= self.end {
            if self.only_run {
                return None;
            }
            let bits = self.rest.bits;
            if bits != 0 && self.rest.dense {
                // The matching rows of a word that are not all set, one
                // bit at a time (inline: a predictable branch per row,
                // where runs of random length cost a misprediction each).
                let row = self.rest.bits_base + bits.trailing_zeros() as usize;
                self.rest.bits = bits & (bits - 1);
                // The row matches and lies after `slots_row`, every view
                // is dense (the invariant of `slots`).
                // SAFETY: it is visited once; the borrows are held for 'a.
                return Some(unsafe {
                    Q::get_in_word(self.slots.as_ref().unwrap_unchecked(), row - self.slots_row)
                });
            }
            let (rest, run) = self.rest.next_run();
            self.rest = rest;
            let (slots, first, len) = run?;
            self.slots = Some(slots);
            self.slots_row = first;
            self.pos = 0;
            self.end = len;
        }
        let i = self.pos;
        self.pos = i + 1;
        // `pos < end`, so the run's views are there.
        // SAFETY: row `i` of the run matches and is visited once; the
        // borrows are held for 'a (by the guard or the `&mut World`).
        Some(unsafe { Q::get_in_word(self.slots.as_ref().unwrap_unchecked(), i) })
    }

    /// At least the rest of the current run; at most that, the matching
    /// rows of the word in hand and 64 per alive word left. Exact when the
    /// whole window is one run (every live row matches, no dead row).
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let run = self.end.saturating_sub(self.pos);
        let rest = &self.rest;
        let words = rest.alive.len() - rest.next_word;
        let upper = rest.bits.count_ones() as usize + words * WORD;
        (run, Some(run + upper))
    }

    /// Visits what is left as [`QueryMut::for_each`] does: the rest of the
    /// current run as a loop over slices, then the words, with runs of
    /// whole matching words as loops over slices.
    #[inline]
    fn fold<B, F>(self, init: B, mut f: F) -> B
    where
        F: FnMut(B, Self::Item) -> B,
    {
        let mut acc = init;
        if self.pos < self.end {
            // SAFETY: as in `next`, for each row of the run's rest.
            acc = unsafe {
                fold_run::<Q, B, F>(
                    self.slots.as_ref().unwrap_unchecked(),
                    self.pos,
                    self.end,
                    acc,
                    &mut f,
                )
            };
        }
        let rest = self.rest;
        let Some(fetch) = rest.fetch else {
            return acc;
        };
        // SAFETY: `bits` are matching rows of their word not yet visited.
        acc = unsafe { fold_bits::<Q, B, F>(&fetch, rest.bits_base, rest.bits, acc, &mut f) };
        let alive = &rest.alive[rest.next_word..];
        let first_word = rest.first_word + rest.next_word;
        // SAFETY: the words left, none visited yet; the borrows are held.
        unsafe { fold_words::<Q, B, F>(&fetch, rest.dense, first_word, alive, acc, f) }
    }
}

impl<Q: Query> std::iter::FusedIterator for QueryIter<'_, Q> {}

impl<Q: Query> std::fmt::Debug for QueryIter<'_, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryIter")
            .field("size_hint", &self.size_hint())
            .finish_non_exhaustive()
    }
}

/// Folds `f` over the items of the rows `start..end` of a run of matching
/// rows, as a loop over slices. Kept out of line, so that the loop sits at
/// the same place relative to a function start (aligned by the workspace's
/// build flags) whatever code surrounds the call.
///
/// # Safety
///
/// `slots` came from [`Query::word`] for a run of at least `end` matching
/// rows (one unless [`Query::all_dense`]), under the contract of
/// [`Query::get`] for each of them; rows `start..end` are visited once.
#[inline(never)]
unsafe fn fold_run<'a, Q: Query, B, F: FnMut(B, Q::Item<'a>) -> B>(
    slots: &Q::Word,
    start: usize,
    end: usize,
    init: B,
    f: &mut F,
) -> B {
    let mut acc = init;
    for i in start..end {
        // SAFETY: each row of the run is visited once.
        acc = f(acc, unsafe { Q::get_in_word(slots, i) });
    }
    acc
}

/// Folds `f` over the items of the rows whose bits are set in `bits`
/// (matching rows of one word, bit `i` for row `base + i`), in row order.
///
/// # Safety
///
/// `fetch` came from the world, whose borrows are held for `'a`; the rows
/// of `bits` match, and each is visited once.
#[inline(always)]
unsafe fn fold_bits<'a, Q: Query, B, F: FnMut(B, Q::Item<'a>) -> B>(
    fetch: &Q::Fetch,
    base: usize,
    mut bits: u64,
    init: B,
    f: &mut F,
) -> B {
    let mut acc = init;
    while bits != 0 {
        let row = base + bits.trailing_zeros() as usize;
        bits &= bits - 1;
        // SAFETY: the row matches, and each row is visited once.
        acc = f(acc, unsafe { Q::get(fetch, row) });
    }
    acc
}

/// Folds `f` over the items of word `word` whose bit is set in `bits` (the
/// word's matching rows), in row order; with `DENSE`, a word whose 64 rows
/// all match is visited as a loop over slices.
///
/// # Safety
///
/// `fetch` came from the world, whose borrows are held for `'a`; `bits`
/// came from [`Query::mask`] (or [`Query::mask_dense`]) of the word, and
/// each word is visited once. With `DENSE`, [`Query::all_dense`] said
/// `true`.
#[inline(always)]
unsafe fn fold_word<'a, Q: Query, B, F: FnMut(B, Q::Item<'a>) -> B, const DENSE: bool>(
    fetch: &Q::Fetch,
    word: usize,
    bits: u64,
    init: B,
    f: &mut F,
) -> B {
    let base = word * WORD;
    if DENSE && bits == u64::MAX {
        // A counted loop of exactly 64 (not a range from `base`, whose end
        // LLVM must check for overflow): one induction variable, which LLVM
        // unrolls and vectorizes where it can.
        // SAFETY: every row of the word matches and every view is dense.
        let slots = unsafe { Q::word(fetch, base) };
        let mut acc = init;
        for i in 0..WORD {
            // SAFETY: each row of the word is visited once.
            acc = f(acc, unsafe { Q::get_in_word(&slots, i) });
        }
        return acc;
    }
    // SAFETY: forwarded.
    unsafe { fold_bits::<Q, B, F>(fetch, base, bits, init, f) }
}

/// The word loops behind `for_each` and `fold`: folds `f` over the matching
/// rows of `alive`'s words (word `first_word + i` at `alive[i]`, within
/// the range [`Query::words`] narrowed to).
///
/// # Safety
///
/// `fetch` came from the world, whose borrows are held for `'a`; `dense` is
/// [`Query::all_dense`] of it; no row of these words was visited.
unsafe fn fold_words<'a, Q: Query, B, F: FnMut(B, Q::Item<'a>) -> B>(
    fetch: &Q::Fetch,
    dense: bool,
    first_word: usize,
    alive: &[u64],
    init: B,
    mut f: F,
) -> B {
    let mut acc = init;
    if dense {
        let mut i = 0;
        while i < alive.len() {
            // SAFETY: the caller's contract; alive bits name alive rows, the
            // views are dense and the word is in the narrowed range.
            let bits = unsafe { Q::mask_dense(fetch, first_word + i, alive[i]) };
            if bits != u64::MAX {
                // SAFETY: as above.
                acc = unsafe {
                    fold_word::<Q, B, F, false>(fetch, first_word + i, bits, acc, &mut f)
                };
                i += 1;
                continue;
            }
            // A run of words whose rows all match: their masks first (a
            // tight loop), then their rows as slices, in counted loops of 64
            // (one induction variable, which LLVM unrolls and vectorizes:
            // schedule's swaps take 4 floats per instruction). One loop per
            // word, each with its mask, cost schedule 87.1k instructions
            // against 86.2k; one loop over the run's rows, 90.8k.
            let mut end = i + 1;
            while end < alive.len() {
                // SAFETY: as above.
                let bits = unsafe { Q::mask_dense(fetch, first_word + end, alive[end]) };
                if bits != u64::MAX {
                    break;
                }
                end += 1;
            }
            // SAFETY: every row of the run matches and every view is dense.
            let slots = unsafe { Q::word(fetch, (first_word + i) * WORD) };
            for word in 0..end - i {
                for row in 0..WORD {
                    // SAFETY: each row of the run is visited once.
                    acc = f(acc, unsafe { Q::get_in_word(&slots, word * WORD + row) });
                }
            }
            i = end;
        }
    } else {
        for (i, &alive) in alive.iter().enumerate() {
            let word = first_word + i;
            // SAFETY: the caller's contract; alive bits name alive rows.
            let bits = unsafe { Q::mask(fetch, word, alive) };
            // SAFETY: as above.
            acc = unsafe { fold_word::<Q, B, F, false>(fetch, word, bits, acc, &mut f) };
        }
    }
    acc
}

/// The iterator over every live row's entity, for [`World::iter`].
pub(crate) fn entities(world: &World) -> QueryIter<'_, Entity> {
    // `Entity` borrows no column: its items are copies of the row window's
    // entities, which no one writes while `world` is borrowed.
    // SAFETY: the fetch is `world`'s.
    unsafe { QueryIter::new(world, <Entity as Query>::fetch(world)) }
}

/// Calls `f(first row, bits)` for every word of the window with a matching
/// row: the rows that match `Q` among rows `first row..first row + 64` (bit
/// `i` for row `first row + i`), in row order. Whole-world serialization
/// reads which rows have a component this way, a word at a time. `Q` must
/// borrow no column (a filter such as [`With`]); its items are not made.
#[cfg(feature = "serde")]
pub(crate) fn for_each_word<Q: Query>(world: &World, mut f: impl FnMut(usize, u64)) {
    debug_assert_eq!(Q::BORROWS, 0, "for_each_word reads no component");
    let Some(fetch) = Q::fetch(world) else {
        return;
    };
    let first_word = world.alive.front_position();
    for (i, &alive) in world.alive.as_slice().iter().enumerate() {
        let word = first_word + i;
        // `fetch` came from `world`, which is borrowed shared and unchanged
        // for this call; the query borrows no column, and no item is made.
        // SAFETY: alive bits name alive rows.
        let bits = unsafe { Q::mask(&fetch, word, alive) };
        if bits != 0 {
            f(word * WORD, bits);
        }
    }
}

/// The raw views, sent to rayon's workers.
#[cfg(feature = "rayon")]
struct SendFetch<F>(F);

#[cfg(feature = "rayon")]
impl<F> SendFetch<F> {
    /// The views (a method, so that closures capture the whole wrapper, not
    /// its field).
    fn get(&self) -> &F {
        &self.0
    }
}

// SAFETY: a fetch is raw pointers into the world's storage. Items made from
// it on other threads are `&T` (needs `T: Sync`) or `&mut T` of distinct
// rows (needs `T: Send`); every component is `Send + Sync`, and the
// query's borrows are held until every worker has finished.
#[cfg(feature = "rayon")]
unsafe impl<F> Send for SendFetch<F> {}
// SAFETY: as above; workers only copy the pointers.
#[cfg(feature = "rayon")]
unsafe impl<F> Sync for SendFetch<F> {}

/// The loop behind `par_for_each`: a task per rayon thread, each claiming
/// runs of rows from a shared position until none is left (see
/// [`claim_rows`]: shrinking shares, so a cheap pass takes a few claims
/// per thread, and heavy rows leave the threads finishing within a few
/// rows of each other); each word of a run is visited as [`for_each`]
/// visits it, its bits cut to the run. Before, rayon split the words
/// itself, adaptively: a piece a thread had started was never cut again,
/// so the other thread could sit idle through it, and `heavy_compute` took
/// 7% longer.
///
/// # Safety
///
/// As [`for_each`].
#[cfg(feature = "rayon")]
unsafe fn par_for_each<Q: Query>(
    world: &World,
    fetch: Option<Q::Fetch>,
    f: impl Fn(Q::Item<'_>) + Send + Sync,
) {
    use rayon::prelude::*;
    let Some(fetch) = fetch else {
        return;
    };
    let dense = Q::all_dense(&fetch);
    let first_word = world.alive.front_position();
    let alive = world.alive.as_slice();
    // Only the words where the required dense columns have bits.
    let words = Q::words(&fetch, first_word..first_word + alive.len());
    let alive = &alive[words.start - first_word..words.end - first_word];
    let first_word = words.start;
    let fetch = SendFetch(fetch);
    let rows = alive.len() * WORD;
    let threads = rayon::current_num_threads().max(1);
    let next = core::sync::atomic::AtomicUsize::new(0);
    // One task per thread, each claiming runs of rows until none is left.
    (0..threads).into_par_iter().with_max_len(1).for_each(|_| {
        let fetch = fetch.get();
        let mut f = |(), item| f(item);
        while let Some((start, end)) = claim_rows(&next, rows, threads) {
            let first = start / WORD;
            for (i, &alive) in (first..).zip(&alive[first..end.div_ceil(WORD)]) {
                let lanes = lanes_within(i * WORD, start, end);
                let word = first_word + i;
                if dense {
                    // The caller's contract; alive bits name alive rows,
                    // the views are dense and the word is in the narrowed
                    // range; no other claim holds these rows.
                    // SAFETY: so the word's mask may be read.
                    let bits = unsafe { Q::mask_dense(fetch, word, alive & lanes) };
                    // SAFETY: as above.
                    unsafe { fold_word::<Q, (), _, true>(fetch, word, bits, (), &mut f) };
                } else {
                    // SAFETY: as above, but for density.
                    let bits = unsafe { Q::mask(fetch, word, alive & lanes) };
                    // SAFETY: as above.
                    unsafe { fold_word::<Q, (), _, false>(fetch, word, bits, (), &mut f) };
                }
            }
        }
    });
}

/// Claims the next run of rows of a `par_for_each` over `rows` rows on
/// `threads` threads, from the position `next`: a share of what is left
/// that shrinks as the pass goes on (a `1 / (2 * threads)` share, in whole
/// words while it is a word or more, and at least 8 rows), so that a cheap
/// pass takes few claims and heavy rows still leave the threads finishing
/// within a few rows of each other. `None` once every row is claimed.
#[cfg(feature = "rayon")]
fn claim_rows(
    next: &core::sync::atomic::AtomicUsize,
    rows: usize,
    threads: usize,
) -> Option<(usize, usize)> {
    let mut start = next.load(core::sync::atomic::Ordering::Relaxed);
    loop {
        if start >= rows {
            return None;
        }
        let share = (rows - start) / (2 * threads);
        let run = if share >= WORD {
            share / WORD * WORD
        } else {
            share.next_multiple_of(8).max(8)
        };
        let end = (start + run).min(rows);
        match next.compare_exchange_weak(
            start,
            end,
            core::sync::atomic::Ordering::Relaxed,
            core::sync::atomic::Ordering::Relaxed,
        ) {
            Ok(_) => return Some((start, end)),
            Err(now) => start = now,
        }
    }
}

/// The bits of the word whose first row is `base` that lie in `start..end`.
#[cfg(feature = "rayon")]
fn lanes_within(base: usize, start: usize, end: usize) -> u64 {
    let low = start.saturating_sub(base).min(WORD);
    let high = end.saturating_sub(base).min(WORD);
    let upto = |n: usize| if n >= WORD { u64::MAX } else { (1u64 << n) - 1 };
    upto(high) & !upto(low)
}

#[cfg(feature = "rayon")]
impl<Q: Query> QueryBorrow<'_, Q> {
    /// [`for_each`](Self::for_each) on rayon's threads (feature `rayon`):
    /// each thread claims runs of rows that shrink as the pass goes on, so
    /// the threads finish close together even when each row's work is
    /// heavy or uneven, and a cheap pass takes only a few claims.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn_batch((0..1000u32).map(|i| (i, 0u64)));
    /// world.query::<(&u32, &mut u64)>().par_for_each(|(a, b)| *b = u64::from(*a) * 2);
    /// assert_eq!(world.query::<&u64>().iter().sum::<u64>(), 999_000);
    /// ```
    pub fn par_for_each(&mut self, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        // SAFETY: the borrows are held while `self` is mutably borrowed.
        unsafe { par_for_each::<Q>(self.world, self.fetch, f) }
    }
}

#[cfg(feature = "rayon")]
impl<Q: Query> QueryMut<'_, Q> {
    /// [`for_each`](Self::for_each) on rayon's threads (feature `rayon`),
    /// cut into runs as [`QueryBorrow::par_for_each`] cuts them.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn_batch((0..1000u32).map(|i| (i,)));
    /// world.query_mut::<&mut u32>().par_for_each(|x| *x += 1);
    /// assert_eq!(world.query_mut::<&u32>().into_iter().sum::<u32>(), 500_500);
    /// ```
    pub fn par_for_each(self, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        // SAFETY: the world is borrowed exclusively while this runs.
        unsafe { par_for_each::<Q>(self.world, self.fetch, f) }
    }
}

/// One entity's query on a shared world, holding the run-time borrows until
/// dropped. From [`World::query_one`].
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// let e = world.spawn((1u32, 'a'));
/// let mut one = world.query_one::<(&u32, &char)>(e).unwrap();
/// assert_eq!(one.get(), Some((&1, &'a')));
/// ```
pub struct QueryOne<'w, Q: Query> {
    world: &'w World,
    accesses: Accesses,
    fetch: Option<Q::Fetch>,
    row: usize,
}

impl<Q: Query> QueryOne<'_, Q> {
    /// The entity's item, or `None` if it does not match.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u32,));
    /// assert!(world.query_one::<&char>(e).unwrap().get().is_none());
    /// ```
    pub fn get(&mut self) -> Option<Q::Item<'_>> {
        let fetch = self.fetch.as_ref()?;
        // The borrows are held while `self` is mutably borrowed, so no
        // other item of the row exists.
        // SAFETY: `fetch` came from the borrowed world; the row is alive.
        unsafe { Q::get_one(fetch, self.row) }
    }
}

impl<Q: Query> Drop for QueryOne<'_, Q> {
    fn drop(&mut self) {
        release(&self.world.columns, self.accesses.as_slice());
    }
}

impl World {
    /// Queries a shared world. The columns the query reads are borrowed
    /// shared and those it writes exclusively, checked at run time and held
    /// until the returned guard is dropped, so that systems on disjoint
    /// columns can run at once.
    ///
    /// **hecs's rule.** Two queries that would borrow one column
    /// incompatibly (both write it, or one writes it) coexist when no live
    /// entity holds every component both require (`&T`, `&mut T` and
    /// `With<T>` terms) and none that either excludes (`Without<T>`
    /// terms): the second joins the first's borrow of the column (a writer
    /// after readers turns their shared borrows into one exclusive borrow
    /// for all of them), which is given back when the last of them is
    /// dropped. So `query::<(&mut Pos, With<Player>)>()` inside a loop
    /// over `query::<(&mut Pos, With<Enemy>)>()` (or over
    /// `query::<(&Pos, With<Enemy>)>()`) works when no entity is both. A
    /// guard ([`World::get`], [`World::column`]) or a [`QueryOne`] is
    /// never joined. Checking costs O(live rows × required types), once,
    /// when a conflict is met; a query that borrows a column takes an
    /// uncontended lock of the world's registry of queries when made and
    /// dropped.
    ///
    /// # Panics
    ///
    /// If a column is already borrowed incompatibly (by another query that
    /// some entity could match too, a [`Ref`](crate::Ref) or other guard,
    /// or this query itself, as in `(&A, &mut A)`). The message names the
    /// component type. Never undefined behaviour.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn((1u32, 2u64));
    /// let a = world.query::<&u32>();
    /// let b = world.query::<&mut u64>(); // disjoint: fine
    /// drop((a, b));
    ///
    /// // Two writers of one column that no entity matches both.
    /// struct Player;
    /// struct Enemy;
    /// world.spawn((0u64, Player));
    /// world.spawn((0u64, Enemy));
    /// for (x, ()) in world.query::<(&mut u64, With<Player>)>().iter() {
    ///     for (y, ()) in world.query::<(&mut u64, With<Enemy>)>().iter() {
    ///         *y += 1;
    ///     }
    ///     *x += 1;
    /// }
    /// # use handlekit_ecs::With;
    /// ```
    #[track_caller]
    pub fn query<Q: Query>(&self) -> QueryBorrow<'_, Q> {
        let accesses = accesses::<Q>(self);
        let hold = acquire_query::<Q>(self, &accesses);
        QueryBorrow {
            world: self,
            rows: self.row_finder(),
            fetch: Q::fetch(self),
            hold,
        }
    }

    /// Queries an exclusively borrowed world: no run-time borrow checks.
    ///
    /// # Panics
    ///
    /// If the query itself borrows a column twice incompatibly (as
    /// `(&A, &mut A)`); the message names the type.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn((1u32,));
    /// let sum: u32 = world.query_mut::<&u32>().into_iter().sum();
    /// assert_eq!(sum, 1);
    /// ```
    #[track_caller]
    pub fn query_mut<Q: Query>(&mut self) -> QueryMut<'_, Q> {
        if Q::BORROWS > 1 {
            accesses::<Q>(self);
        }
        QueryMut {
            world: self,
            fetch: Q::fetch(self),
        }
    }

    /// Queries one entity of a shared world, with run-time borrows held
    /// until the guard is dropped.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if the entity is not alive.
    ///
    /// # Panics
    ///
    /// As [`query`](Self::query).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u32,));
    /// if let Some(x) = world.query_one::<&mut u32>(e).unwrap().get() {
    ///     *x = 5;
    /// }
    /// assert_eq!(*world.get::<u32>(e).unwrap(), 5);
    /// ```
    #[track_caller]
    pub fn query_one<Q: Query>(&self, entity: Entity) -> Result<QueryOne<'_, Q>, NoSuchEntity> {
        let row = self.row_of(entity)?;
        let accesses = accesses::<Q>(self);
        acquire(&self.columns, accesses.as_slice());
        Ok(QueryOne {
            world: self,
            accesses,
            fetch: Q::fetch(self),
            row,
        })
    }

    /// Queries several entities of an exclusively borrowed world at once:
    /// each result as [`query_one_mut`](Self::query_one_mut)'s. As hecs's
    /// `query_many_mut` (which hecs 0.11 renamed `query_disjoint_mut`; both
    /// names are here).
    ///
    /// # Errors
    ///
    /// Per entity: [`ComponentError::NoSuchEntity`], or
    /// [`ComponentError::MissingComponent`] (with the query's type name) if
    /// it does not match.
    ///
    /// # Panics
    ///
    /// If an entity is named twice (the items would alias; the message names
    /// it), or the query borrows a column twice incompatibly.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let a = world.spawn((1u32,));
    /// let b = world.spawn((2u32,));
    /// let [x, y] = world.query_many_mut::<&mut u32, 2>([a, b]);
    /// let (x, y) = (x.unwrap(), y.unwrap());
    /// *x += *y;
    /// assert_eq!(*world.get::<u32>(a).unwrap(), 3);
    /// ```
    #[track_caller]
    pub fn query_many_mut<Q: Query, const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> [Result<Q::Item<'_>, ComponentError>; N] {
        assert_distinct(&entities, "query_many_mut");
        if Q::BORROWS > 1 {
            accesses::<Q>(self);
        }
        // Entities reserved and not flushed are found, as by
        // `query_one_mut`.
        self.flush();
        let world: &World = self;
        let missing = ComponentError::MissingComponent(std::any::type_name::<Q>());
        let fetch = Q::fetch(world);
        entities.map(|entity| {
            let row = world.row_of(entity)?;
            let fetch = fetch.as_ref().ok_or(missing)?;
            // Distinct entities have distinct rows: no two items share a value.
            // SAFETY: `fetch` came from this world, borrowed exclusively for
            // the items' lifetime; the row is alive.
            unsafe { Q::get_one(fetch, row) }.ok_or(missing)
        })
    }

    /// [`query_many_mut`](Self::query_many_mut) under hecs 0.11's name.
    ///
    /// # Errors
    ///
    /// As [`query_many_mut`](Self::query_many_mut).
    ///
    /// # Panics
    ///
    /// As [`query_many_mut`](Self::query_many_mut).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let a = world.spawn((1u32,));
    /// let [x] = world.query_disjoint_mut::<&u32, 1>([a]);
    /// assert_eq!(x, Ok(&1));
    /// ```
    #[track_caller]
    pub fn query_disjoint_mut<Q: Query, const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> [Result<Q::Item<'_>, ComponentError>; N] {
        self.query_many_mut::<Q, N>(entities)
    }

    /// Queries one entity of an exclusively borrowed world.
    ///
    /// # Errors
    ///
    /// [`ComponentError::NoSuchEntity`], or
    /// [`ComponentError::MissingComponent`] (with the query's type name) if
    /// the entity does not match.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u32, 2u8));
    /// let (a, b) = world.query_one_mut::<(&mut u32, &u8)>(e).unwrap();
    /// *a += u32::from(*b);
    /// assert_eq!(*world.get::<u32>(e).unwrap(), 3);
    /// ```
    #[track_caller]
    pub fn query_one_mut<Q: Query>(
        &mut self,
        entity: Entity,
    ) -> Result<Q::Item<'_>, ComponentError> {
        let row = self.row_of_flushed(entity)?;
        if Q::BORROWS > 1 {
            accesses::<Q>(self);
        }
        let missing = ComponentError::MissingComponent(std::any::type_name::<Q>());
        let fetch = Q::fetch(self).ok_or(missing)?;
        // SAFETY: `fetch` came from this world (exclusively borrowed) and the
        // row is alive.
        if unsafe { Q::mask(&fetch, row / WORD, bit(row)) } == 0 {
            return Err(missing);
        }
        // SAFETY: the row matches; the world is borrowed exclusively for the
        // item's lifetime.
        Ok(unsafe { Q::get(&fetch, row) })
    }
}

#[cfg(all(test, feature = "rayon"))]
mod par_tests {
    use super::{claim_rows, lanes_within, WORD};
    use core::sync::atomic::AtomicUsize;

    #[test]
    fn claims_cover_every_row_once_in_shrinking_runs() {
        let most = if cfg!(miri) { 4096 } else { 1 << 20 };
        for rows in [0, 1, 8, 63, 64, 65, 640, 1000, 4096, most] {
            for threads in [1, 2, 3, 8] {
                let next = AtomicUsize::new(0);
                let mut claims = Vec::new();
                while let Some(run) = claim_rows(&next, rows, threads) {
                    claims.push(run);
                }
                let mut at = 0;
                for &(start, end) in &claims {
                    assert_eq!(start, at, "{rows} rows, {threads} threads");
                    assert!(end > start && end <= rows);
                    at = end;
                }
                assert_eq!(at, rows, "{rows} rows, {threads} threads");
                let runs: Vec<usize> = claims.iter().map(|(s, e)| e - s).collect();
                // Runs never grow but for the last, cut short by the end, and
                // whole words stay word-aligned while runs are words.
                for pair in runs.windows(2) {
                    assert!(pair[1] <= pair[0] || pair[1] <= 8, "{runs:?}");
                }
                for &(start, end) in &claims {
                    if end - start >= WORD {
                        assert_eq!(start % WORD, 0, "{claims:?}");
                    }
                }
                // A cheap pass takes few claims: about `2 * threads` per
                // halving of what is left.
                let bound = 2 * threads * (usize::BITS - rows.leading_zeros()) as usize + 8;
                assert!(
                    claims.len() <= bound,
                    "{} claims for {rows} rows",
                    claims.len()
                );
            }
        }
    }

    #[test]
    fn lanes_are_the_rows_of_the_word_in_the_range() {
        let step = if cfg!(miri) { 13 } else { 1 };
        for base in [0, 64, 128] {
            for start in (0..200).step_by(step) {
                for end in (start..200).step_by(step) {
                    let lanes = lanes_within(base, start, end);
                    for bit in 0..WORD {
                        let row = base + bit;
                        let inside = (start..end).contains(&row);
                        assert_eq!(
                            lanes >> bit & 1 == 1,
                            inside,
                            "{base} {start}..{end} bit {bit}"
                        );
                    }
                }
            }
        }
    }
}

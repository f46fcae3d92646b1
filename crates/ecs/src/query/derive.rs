//! What `#[derive(Query)]` builds on, so that its generated code holds no
//! `unsafe`: a derived query is a [`QueryShape`], a query made of queries
//! this crate implements (the tuple of a struct's field types; for an enum,
//! the [`FirstOf`] chain of its variants' tuples) and a safe conversion of
//! that query's item into the struct or enum. The one blanket
//! `unsafe impl<Q: QueryShape> Query for Q` below forwards every method of
//! [`Query`] to the shape's, so all the unsafe code a derived query runs is
//! this crate's, reviewed once. `&T` and `&mut T` are queries the same way
//! (their shape is a `ColumnQuery` of the column): an impl of `Query` for
//! `&T` beside the blanket one would overlap it, since another crate may
//! implement `QueryShape` for `&TheirType`.
//!
//! None of this is part of the public API.

use std::ops::Range;

use super::{check_conflicts, either_fetch, side_mask, Access, Accesses, Filter, Query};
use crate::access::InlineVec;
use crate::groups::Required;
use crate::storage::{bit, WORD};
use crate::world::World;

/// A query made of another query (its [`Shape`](Self::Shape)) whose items
/// are converted, by a safe function, into the query's own. Every
/// `QueryShape` is a [`Query`], through one blanket impl that forwards to
/// the shape's. What `#[derive(Query)]` implements; not part of the public
/// API.
///
/// The conversion cannot make an item unsound: it is safe code, handed the
/// shape's item by value for the same lifetime as the item it returns.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a query",
    label = "not a query",
    note = "a query is `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`, `Entity`, `With<T>`, \
            `Without<T>`, `Or<L, R>`, a tuple of queries, or a type with `#[derive(Query)]`"
)]
pub trait QueryShape {
    /// The query that finds the rows and makes their items.
    type Shape: Query;
    /// What the query yields per entity.
    type Item<'a>;
    /// The item of a row, from the shape's item of the row.
    fn from_shape<'a>(item: <Self::Shape as Query>::Item<'a>) -> Self::Item<'a>;
}

// SAFETY: every method forwards to the shape's `Query` impl, with the same
// fetch, rows and words, under the same contract the caller keeps; the
// shape's items are converted by `from_shape`, safe code that takes them by
// value and returns an item of the same lifetime. So the borrows listed are
// the shape's, which cover every column its items touch, and an item is made
// exactly when the shape's would be.
unsafe impl<Q: QueryShape> Query for Q {
    type Item<'a> = <Q as QueryShape>::Item<'a>;
    type Fetch = <Q::Shape as Query>::Fetch;
    const BORROWS: usize = <Q::Shape as Query>::BORROWS;
    #[inline]
    fn access(world: &World, out: &mut Accesses) {
        Q::Shape::access(world, out);
    }
    #[inline]
    fn required(world: &World, out: &mut Required) {
        Q::Shape::required(world, out);
    }
    #[inline]
    fn fetch(world: &World) -> Option<Self::Fetch> {
        Q::Shape::fetch(world)
    }
    #[inline(always)]
    unsafe fn mask(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
        // SAFETY: forwarded.
        unsafe { Q::Shape::mask(fetch, word, candidates) }
    }
    #[inline(always)]
    unsafe fn get<'a>(fetch: &Self::Fetch, row: usize) -> Self::Item<'a> {
        // SAFETY: forwarded.
        Q::from_shape(unsafe { Q::Shape::get(fetch, row) })
    }
    #[inline(always)]
    unsafe fn mask_dense(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
        // SAFETY: forwarded.
        unsafe { Q::Shape::mask_dense(fetch, word, candidates) }
    }
    #[inline(always)]
    fn all_dense(fetch: &Self::Fetch) -> bool {
        Q::Shape::all_dense(fetch)
    }
    #[inline(always)]
    fn every_live_row(fetch: &Self::Fetch) -> bool {
        Q::Shape::every_live_row(fetch)
    }
    #[inline(always)]
    fn words(fetch: &Self::Fetch, words: Range<usize>) -> Range<usize> {
        Q::Shape::words(fetch, words)
    }
    type Word = <Q::Shape as Query>::Word;
    #[inline(always)]
    unsafe fn word(fetch: &Self::Fetch, base: usize) -> Self::Word {
        // SAFETY: forwarded.
        unsafe { Q::Shape::word(fetch, base) }
    }
    #[inline(always)]
    unsafe fn get_in_word<'a>(word: &Self::Word, i: usize) -> Self::Item<'a> {
        // SAFETY: forwarded.
        Q::from_shape(unsafe { Q::Shape::get_in_word(word, i) })
    }
    #[inline(always)]
    unsafe fn get_one<'a>(fetch: &Self::Fetch, row: usize) -> Option<Self::Item<'a>> {
        // SAFETY: forwarded.
        unsafe { Q::Shape::get_one(fetch, row) }.map(Q::from_shape)
    }
}

/// Compiles if `Q` is a query: the derive calls it with each field's type,
/// spanned on the field, so that a field that is not a query is reported
/// there. Not part of the public API.
#[doc(hidden)]
#[inline(always)]
pub fn assert_query<Q: Query>() {}

/// The value of a derived query's field made from the field's query item:
/// the item itself (`&'a T` from `&'a T`, ...), or the filter's marker
/// ([`With<T>`](crate::With), [`Without<T>`](crate::Without)) from the
/// `()` it yields. Not part of the public API.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a field of type `{Self}` cannot hold the item `{I}` of its query",
    note = "a `#[derive(Query)]` field's type, with the struct's lifetime replaced by the \
            item's, must be the item type of the field's query: `&'a T`, `&'a mut T`, \
            `Option<&'a T>`, `Entity`, `With<T>`, `Without<T>`, `Or<..>`, a tuple of these, or \
            another derived query `Q<'a>`"
)]
pub trait FromItem<I> {
    /// The field's value.
    fn from_item(item: I) -> Self;
}

impl<T> FromItem<T> for T {
    #[inline(always)]
    fn from_item(item: T) -> T {
        item
    }
}

impl<T, const HAS: bool> FromItem<()> for Filter<T, HAS> {
    #[inline(always)]
    fn from_item((): ()) -> Self {
        Filter::default()
    }
}

/// The query of a derived enum's variants: a row matches if it matches `L`
/// or `R`, and yields `First` with `L`'s item if it matches `L`, else
/// `Rest` with `R`'s. An enum of variants `A, B, C` is
/// `FirstOf<A, FirstOf<B, C>>` (each variant the tuple of its fields' types).
/// Its borrows are the union of both sides' (a type both name is listed
/// once, exclusive if either writes it: a row's item is one side's, so the
/// two never alias); a side that names one type twice incompatibly panics
/// as a tuple does. Its rows are visited one at a time, as
/// [`Or`](crate::Or)'s. Not part of the public API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FirstOf<L, R> {
    /// The row matches `L`.
    First(L),
    /// The row matches `R` and not `L`.
    Rest(R),
}

/// Appends `list` to `out` from `start` on, merging an access to a type
/// already listed there into that one (exclusive if either is).
fn merge(out: &mut Accesses, start: usize, list: &[Access]) {
    for access in list {
        let listed = out.as_mut_slice()[start..]
            .iter_mut()
            .find(|a| a.ty == access.ty);
        match listed {
            Some(a) => a.exclusive |= access.exclusive,
            None => out.push(*access),
        }
    }
}

// SAFETY: the union of the two sides' accesses, a type both list merged
// into one access that is exclusive if either's is: a row's item is made by
// one side only (`get` makes `L`'s item if the row matches `L`, else `R`'s),
// so an item touches only columns its side lists, and items of distinct rows
// touch distinct values. A side whose own accesses conflict (one type named
// twice, one of them exclusive) panics here, before any merge, as a tuple's
// conflict does in `accesses`. `mask` is the union of the two sides'
// matches, and `get` makes the item of a side the row matches.
unsafe impl<L: Query, R: Query> Query for FirstOf<L, R> {
    type Item<'a> = FirstOf<L::Item<'a>, R::Item<'a>>;
    type Fetch = (Option<L::Fetch>, Option<R::Fetch>);
    const BORROWS: usize = L::BORROWS + R::BORROWS;
    fn access(world: &World, out: &mut Accesses) {
        let start = out.as_slice().len();
        let mut left = Accesses::default();
        L::access(world, &mut left);
        check_conflicts(left.as_slice());
        let mut right = Accesses::default();
        R::access(world, &mut right);
        check_conflicts(right.as_slice());
        merge(out, start, left.as_slice());
        merge(out, start, right.as_slice());
    }
    fn required(world: &World, out: &mut Required) {
        // The columns both sides require, and those both exclude (a side
        // that matches no row leaves the other's): a row either side
        // matches holds the first and none of the second.
        let mut left = Required::default();
        L::required(world, &mut left);
        let mut right = Required::default();
        R::required(world, &mut right);
        let both = |a: &InlineVec<usize, 8>, b: &InlineVec<usize, 8>| {
            let b = b.as_slice();
            a.as_slice()
                .iter()
                .copied()
                .filter(|c| b.contains(c))
                .collect::<Vec<_>>()
        };
        if left.nothing && right.nothing {
            out.nothing = true;
        } else if left.nothing || right.nothing {
            let side = if left.nothing { &right } else { &left };
            out.columns.extend(side.columns.as_slice().iter().copied());
            out.excluded
                .extend(side.excluded.as_slice().iter().copied());
        } else {
            out.columns.extend(both(&left.columns, &right.columns));
            out.excluded.extend(both(&left.excluded, &right.excluded));
        }
    }
    fn fetch(world: &World) -> Option<Self::Fetch> {
        either_fetch::<L, R>(world)
    }
    #[inline]
    unsafe fn mask(fetch: &Self::Fetch, word: usize, candidates: u64) -> u64 {
        // SAFETY: forwarded.
        let left = unsafe { side_mask::<L>(&fetch.0, word, candidates) };
        if left == candidates {
            return left;
        }
        // SAFETY: forwarded.
        left | unsafe { side_mask::<R>(&fetch.1, word, candidates & !left) }
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
        if let Some(f) = &fetch.0 {
            // SAFETY: the row matches, so it is alive.
            if unsafe { L::mask(f, row / WORD, bit(row)) } != 0 {
                // SAFETY: the row matches `L`; `R` makes no item of it.
                return FirstOf::First(unsafe { L::get(f, row) });
            }
        }
        // The row matches `L` or `R` (the caller's contract) and not `L`.
        let f = fetch
            .1
            .as_ref()
            .expect("handlekit-ecs: a row that `FirstOf` matched matches a side");
        // SAFETY: so it matches `R`; `L` makes no item of it.
        FirstOf::Rest(unsafe { R::get(f, row) })
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

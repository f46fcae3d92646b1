//! hecs's borrow rule for [`World::query`]: two queries that would borrow
//! one column incompatibly may coexist when no live row holds every
//! component both require (no entity can match both, so no value is
//! reached by both).
//!
//! # How
//!
//! A column's [`BorrowFlag`](crate::storage::BorrowFlag) stays the one
//! authority for every other borrower ([`Ref`](crate::Ref),
//! [`RefMut`](crate::RefMut), [`QueryOne`](crate::QueryOne), queries that
//! take shared borrows only and meet no conflict). On top of it, the world
//! keeps a registry of *groups*: a column's group is the set of live
//! queries that hold it through one exclusive borrow of its flag, taken by
//! the first of them. A query that writes a column registers as its group
//! (taking the flag exclusively, under the registry's lock). A query that
//! meets a column borrowed exclusively by a group joins the group instead
//! of panicking if, for every member that writes the column or that it
//! would write, no live row holds every component the two require and
//! none that either excludes (`Without`); the
//! flag stays exclusive until the last member is dropped, so no guard and
//! no non-member query reaches the column meanwhile. Every other conflict
//! panics as before.
//!
//! Soundness: the rows cannot change while the queries live (that needs
//! `&mut World`, which a live query's borrow of the world excludes), so
//! two members that share no matching row never make items of one row;
//! two members that may match a common row only both reach the column if
//! both read it.
//!
//! Cost: a query that writes a column takes the registry's lock (an
//! uncontended mutex) when made and dropped, and lists the columns it
//! requires (a type lookup each, no allocation for up to 8). The
//! disjointness check, only when a conflict is met, is O(live rows ×
//! required types) with a type-erased presence test per row and type
//! (stopping at the first row that holds them all); the caller supplies it
//! (`query.rs`), as this file knows columns and flags, not rows.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::access::{Access, InlineVec, NO_COLUMN};
use crate::storage::Column;

/// The component columns a query requires (`&T`, `&mut T`, `With<T>`) and
/// those it excludes (`Without<T>`), for the disjointness check. Not part
/// of the public API.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Required {
    /// The columns of the required types that have one.
    pub(crate) columns: InlineVec<usize, 8>,
    /// The columns of the excluded types that have one (a type with none
    /// excludes no row).
    pub(crate) excluded: InlineVec<usize, 8>,
    /// A required type has no column: the query matches no row.
    pub(crate) nothing: bool,
}

/// One live query registered in the groups.
#[derive(Debug)]
struct Member {
    id: u64,
    /// The columns the member's query requires (its `Query::required`),
    /// listed when it registered: the rows and columns cannot change while
    /// it lives.
    required: Required,
    /// The columns it holds through a group, each with whether it writes
    /// them. Invariant: for each column listed by any member, the column's
    /// flag is held exclusively, once, for the group (the registry's lock
    /// is held whenever a member comes or goes).
    columns: InlineVec<(usize, bool), 8>,
}

/// The registry of groups of a world.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    inner: Mutex<GroupsInner>,
}

#[derive(Debug, Default)]
struct GroupsInner {
    next_id: u64,
    members: Vec<Member>,
}

/// The outcome of [`Groups::acquire`]: the member's id if it holds columns
/// through groups.
pub(crate) type Hold = Option<u64>;

impl Groups {
    fn lock(&self) -> MutexGuard<'_, GroupsInner> {
        // A panic never happens with the lock held (the conflict panics
        // come after it is released), but stay usable if one did.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the borrows of `accesses` on `columns` under hecs's rule (see
    /// the [module docs](self)), marking those held through a group
    /// (`grouped`: the query's drop leaves their flags to the group), or
    /// returns the access that conflicts after giving back every borrow
    /// taken. `required` lists the columns the query requires (its
    /// `Query::required`); `disjoint` tells whether no live row holds
    /// every column two such lists name. Accesses of types with no column
    /// borrow nothing.
    pub(crate) fn acquire(
        &self,
        columns: &[Column],
        accesses: &mut [Access],
        required: impl Fn() -> Required,
        disjoint: impl Fn(&Required, &Required) -> bool,
    ) -> Result<Hold, usize> {
        let mut groups = self.lock();
        let mut mine = InlineVec::<(usize, bool), 8>::default();
        let mut failed = None;
        // Computed at the first conflict, or when the query registers.
        let mut own: Option<Required> = None;
        for (i, access) in accesses.iter_mut().enumerate() {
            let (column, exclusive) = (access.column, access.exclusive);
            if column == NO_COLUMN {
                continue;
            }
            // A column this query already holds through a group (named
            // twice, shared both times): held again the same way.
            if let Some(held) = mine.as_mut_slice().iter_mut().find(|(c, _)| *c == column) {
                held.1 |= exclusive;
                access.grouped = true;
                continue;
            }
            let flag = &columns[column].flag;
            let taken = if exclusive {
                flag.try_exclusive()
            } else {
                flag.try_shared()
            };
            if taken {
                if exclusive {
                    // This query starts the column's group.
                    mine.push((column, true));
                    access.grouped = true;
                }
                continue;
            }
            // The flag is held incompatibly: join its group if it has one
            // and every member that conflicts is disjoint from this query.
            let mut group = groups
                .members
                .iter()
                .filter_map(|m| {
                    m.columns
                        .as_slice()
                        .iter()
                        .find(|&&(c, _)| c == column)
                        .map(|&(_, writes)| (m, writes))
                })
                .peekable();
            if group.peek().is_none() {
                // Held by a guard, `query_one`, or shared queries: no group.
                failed = Some(i);
                break;
            }
            let own = own.get_or_insert_with(&required);
            let joins = group
                .all(|(member, writes)| !(writes || exclusive) || disjoint(&member.required, own));
            if !joins {
                failed = Some(i);
                break;
            }
            mine.push((column, exclusive));
            access.grouped = true;
        }
        if let Some(i) = failed {
            // Give back what was taken: plain borrows, and groups this
            // query started (no one joined them: the lock is held).
            for access in &mut accesses[..i] {
                if access.column == NO_COLUMN {
                    continue;
                }
                let flag = &columns[access.column].flag;
                if !std::mem::take(&mut access.grouped) {
                    if access.exclusive {
                        flag.release_exclusive();
                    } else {
                        flag.release_shared();
                    }
                }
            }
            for &(column, _) in mine.as_slice() {
                if !in_some_group(&groups.members, column) {
                    columns[column].flag.release_exclusive();
                }
            }
            return Err(i);
        }
        if mine.as_slice().is_empty() {
            return Ok(None);
        }
        let id = groups.next_id;
        groups.next_id += 1;
        groups.members.push(Member {
            id,
            required: own.unwrap_or_else(required),
            columns: mine,
        });
        Ok(Some(id))
    }

    /// Takes member `id` out of its groups, giving back the flag of each
    /// of `columns` whose group it leaves empty.
    pub(crate) fn release(&self, columns: &[Column], id: u64) {
        let mut groups = self.lock();
        let Some(at) = groups.members.iter().position(|m| m.id == id) else {
            debug_assert!(false, "handlekit-ecs: released an unknown group member");
            return;
        };
        let member = groups.members.swap_remove(at);
        for &(column, _) in member.columns.as_slice() {
            if !in_some_group(&groups.members, column) {
                columns[column].flag.release_exclusive();
            }
        }
    }
}

/// Whether a member of `members` holds `column` through a group.
fn in_some_group(members: &[Member], column: usize) -> bool {
    members
        .iter()
        .any(|m| m.columns.as_slice().iter().any(|&(c, _)| c == column))
}

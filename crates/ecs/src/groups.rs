//! hecs's borrow rule for [`World::query`]: two queries that would borrow
//! one column incompatibly may coexist when no live row holds every
//! component both require and none that either excludes (no entity can
//! match both, so no value is reached by both).
//!
//! # How
//!
//! A column's [`BorrowFlag`](crate::storage::BorrowFlag) stays the one
//! authority for every other borrower ([`Ref`](crate::Ref),
//! [`RefMut`](crate::RefMut), [`QueryOne`](crate::QueryOne), `Column`).
//! On top of it, the world keeps a registry of the live `World::query`s
//! that borrow a column, each with the columns it requires and excludes
//! and, per column, whether it writes it and how it holds it:
//!
//! - *plain*: a shared borrow of the flag of its own (a query that reads
//!   the column and met no conflict);
//! - *grouped*: through the column's *group*, which holds the flag
//!   exclusively, once, for every member listing the column so.
//!
//! A query that writes a free column starts its group (taking the flag
//! exclusively). A query that meets a conflict joins instead of panicking
//! when, for every member that writes the column or that it would write,
//! no live row matches both:
//!
//! - the flag held by a group: it joins the group;
//! - the flag shared, and this query writes: if every shared borrow is a
//!   registered reader's (the count is theirs; a guard's is not) and each
//!   is disjoint from it, the flag turns from their shared count to
//!   exclusive in one compare-and-swap (which a guard taking a shared
//!   borrow meanwhile makes fail), the readers' entries become grouped,
//!   and this query joins them. A failure later in the same query turns
//!   the flag back.
//!
//! The flag stays exclusive until the last member is dropped, so no guard
//! and no other query reaches the column meanwhile. Every other conflict
//! panics as before.
//!
//! Soundness: the rows cannot change while the queries live (that needs
//! `&mut World`, which a live query's borrow of the world excludes), so
//! two members that share no matching row never make items of one row;
//! two members that may match a common row only both reach the column if
//! both read it. Every change to the registry, and every flag change for
//! a registered query, happens under the registry's lock.
//!
//! Cost: a `World::query` that borrows a column takes the registry's lock
//! (an uncontended mutex) when made and dropped, and lists the columns it
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

/// One column a registered query borrows.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    column: usize,
    /// The query writes the column.
    writes: bool,
    /// Held through the column's group (its flag exclusive for the group);
    /// else a plain shared borrow of the query's own.
    grouped: bool,
}

/// One live query registered in the groups.
#[derive(Debug)]
struct Member {
    id: u64,
    /// The columns the member's query requires and excludes (its
    /// `Query::required`), listed when it registered: the rows and columns
    /// cannot change while it lives.
    required: Required,
    /// The columns it borrows, each once. Invariant: for each column a
    /// member lists as grouped, the column's flag is held exclusively,
    /// once, for the group, and no member lists it as plain; each plain
    /// entry is one shared borrow of the flag (the registry's lock is held
    /// whenever a member comes or goes or an entry changes).
    columns: InlineVec<Held, 8>,
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

/// The outcome of [`Groups::acquire`]: the member's id if it borrows a
/// column.
pub(crate) type Hold = Option<u64>;

impl Groups {
    fn lock(&self) -> MutexGuard<'_, GroupsInner> {
        // A panic never happens with the lock held (the conflict panics
        // come after it is released), but stay usable if one did.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the borrows of `accesses` on `columns` under hecs's rule (see
    /// the [module docs](self)) and registers the query, or returns the
    /// access that conflicts after giving back every borrow taken.
    /// `required` lists the columns the query requires and excludes (its
    /// `Query::required`); `disjoint` tells whether no live row matches
    /// two such lists. Accesses of types with no column borrow nothing.
    pub(crate) fn acquire(
        &self,
        columns: &[Column],
        accesses: &[Access],
        required: impl Fn() -> Required,
        disjoint: impl Fn(&Required, &Required) -> bool,
    ) -> Result<Hold, usize> {
        let mut groups = self.lock();
        let mut mine = InlineVec::<Held, 8>::default();
        // Flags this call turned from readers' shared borrows to a group's
        // exclusive one: the column and the readers' count.
        let mut converted = InlineVec::<(usize, usize), 8>::default();
        let mut failed = None;
        // Computed at the first conflict, or when the query registers.
        let mut own: Option<Required> = None;
        for (i, access) in accesses.iter().enumerate() {
            let (column, exclusive) = (access.column, access.exclusive);
            if column == NO_COLUMN {
                continue;
            }
            // A column named twice (shared both times: a query's own
            // conflicts panicked before) is borrowed once.
            if let Some(held) = mine.as_mut_slice().iter_mut().find(|h| h.column == column) {
                held.writes |= exclusive;
                continue;
            }
            let flag = &columns[column].flag;
            if exclusive && flag.try_exclusive() {
                // This query starts the column's group.
                mine.push(Held {
                    column,
                    writes: true,
                    grouped: true,
                });
                continue;
            }
            if !exclusive && flag.try_shared() {
                mine.push(Held {
                    column,
                    writes: false,
                    grouped: false,
                });
                continue;
            }
            let own = own.get_or_insert_with(&required);
            let holders = || {
                groups.members.iter().filter_map(move |m| {
                    let held = m.columns.as_slice().iter().find(|h| h.column == column)?;
                    Some((m, *held))
                })
            };
            let by_group = holders().any(|(_, h)| h.grouped);
            let readers = holders().count();
            let joins = if by_group {
                // The flag is held exclusively for a group: join it if
                // disjoint from every member that writes the column (from
                // every member, if this query writes it).
                holders().all(|(m, h)| !(h.writes || exclusive) || disjoint(&m.required, own))
            } else {
                // The flag is shared. A writer joins the readers that hold
                // it if every shared borrow is theirs and each is disjoint.
                exclusive
                    && readers > 0
                    && holders().all(|(m, _)| disjoint(&m.required, own))
                    && flag.try_shared_to_exclusive(readers)
            };
            if !joins {
                failed = Some(i);
                break;
            }
            if !by_group {
                for member in &mut groups.members {
                    for held in member.columns.as_mut_slice() {
                        if held.column == column {
                            held.grouped = true;
                        }
                    }
                }
                converted.push((column, readers));
            }
            mine.push(Held {
                column,
                writes: exclusive,
                grouped: true,
            });
        }
        if let Some(i) = failed {
            // Give back what was taken. The readers whose flag this call
            // made a group's get their shared borrows back; a group this
            // query started has no other member (the lock is held); a
            // group it joined keeps its flag.
            for &(column, readers) in converted.as_slice() {
                for member in &mut groups.members {
                    for held in member.columns.as_mut_slice() {
                        if held.column == column {
                            held.grouped = false;
                        }
                    }
                }
                columns[column].flag.exclusive_to_shared(readers);
            }
            for held in mine.as_slice() {
                let flag = &columns[held.column].flag;
                if !held.grouped {
                    flag.release_shared();
                } else if !converted.as_slice().iter().any(|&(c, _)| c == held.column)
                    && !in_some_group(&groups.members, held.column)
                {
                    flag.release_exclusive();
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

    /// Takes member `id` out of the registry, giving back its plain shared
    /// borrows and the flag of each group it leaves empty.
    pub(crate) fn release(&self, columns: &[Column], id: u64) {
        let mut groups = self.lock();
        let Some(at) = groups.members.iter().position(|m| m.id == id) else {
            debug_assert!(false, "handlekit-ecs: released an unknown group member");
            return;
        };
        let member = groups.members.swap_remove(at);
        for held in member.columns.as_slice() {
            let flag = &columns[held.column].flag;
            if !held.grouped {
                flag.release_shared();
            } else if !in_some_group(&groups.members, held.column) {
                flag.release_exclusive();
            }
        }
    }
}

/// Whether a member of `members` holds `column` through a group.
fn in_some_group(members: &[Member], column: usize) -> bool {
    members.iter().any(|m| {
        m.columns
            .as_slice()
            .iter()
            .any(|h| h.column == column && h.grouped)
    })
}

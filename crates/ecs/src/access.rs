//! The run-time borrows of columns by queries and guards on a `&World`:
//! which columns a query touches ([`Accesses`]), taking and giving back
//! their flags, and the panic of a conflict. The group rule that lets two
//! disjoint writers share a column builds on these (`groups.rs`).

use std::any::TypeId;

use crate::storage::{BorrowFlag, Column};

/// The panic of a conflicting borrow, naming the component type.
#[cold]
#[track_caller]
pub(crate) fn borrow_conflict(name: &str, exclusive: bool) -> ! {
    if exclusive {
        panic!("handlekit-ecs: cannot borrow {name} mutably: it is already borrowed");
    } else {
        panic!("handlekit-ecs: cannot borrow {name}: it is already borrowed mutably");
    }
}

/// One borrow of a column, shared or (`EXCLUSIVE`) exclusive, held by a
/// guard ([`Ref`](crate::Ref), [`RefMut`](crate::RefMut)) and given back
/// when it is dropped: also when the guard is never made (the entity has
/// no such component) or a `map` closure panics.
pub(crate) struct HeldBorrow<'w, const EXCLUSIVE: bool>(&'w BorrowFlag);

impl<'w, const EXCLUSIVE: bool> HeldBorrow<'w, EXCLUSIVE> {
    /// Takes the borrow of `column`, or panics naming its type if a
    /// conflicting one is out.
    #[inline]
    #[track_caller]
    pub(crate) fn take(column: &'w Column) -> Self {
        let flag = &column.flag;
        let taken = if EXCLUSIVE {
            flag.try_exclusive()
        } else {
            flag.try_shared()
        };
        if !taken {
            borrow_conflict(column.name, EXCLUSIVE);
        }
        HeldBorrow(flag)
    }
}

impl HeldBorrow<'_, false> {
    /// Another shared borrow of the same column, or `None` if it counts
    /// the most shared borrows it can.
    pub(crate) fn try_clone(&self) -> Option<Self> {
        self.0.try_shared().then_some(HeldBorrow(self.0))
    }
}

impl<const EXCLUSIVE: bool> Drop for HeldBorrow<'_, EXCLUSIVE> {
    #[inline]
    fn drop(&mut self) {
        if EXCLUSIVE {
            self.0.release_exclusive();
        } else {
            self.0.release_shared();
        }
    }
}

/// Up to `N` values inline, then on the heap: the short lists a query
/// makes each time it is created (its accesses, its group columns, its
/// required columns), so that making a query allocates nothing (an
/// allocation per query also lands between the growths of a serializer's
/// output, which then copies).
#[derive(Debug)]
pub(crate) struct InlineVec<T, const N: usize> {
    /// The first values, `len` of them, while `spilled` is empty.
    inline: [T; N],
    len: usize,
    /// Every value, once there are more than fit inline.
    spilled: Vec<T>,
}

impl<T: Copy + Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        InlineVec {
            inline: [T::default(); N],
            len: 0,
            spilled: Vec::new(),
        }
    }
}

impl<T: Copy, const N: usize> InlineVec<T, N> {
    pub(crate) fn push(&mut self, value: T) {
        if self.spilled.is_empty() && self.len < N {
            self.inline[self.len] = value;
            self.len += 1;
        } else {
            if self.spilled.is_empty() {
                self.spilled.extend_from_slice(&self.inline[..self.len]);
            }
            self.spilled.push(value);
        }
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        if self.spilled.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spilled
        }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        if self.spilled.is_empty() {
            &mut self.inline[..self.len]
        } else {
            &mut self.spilled
        }
    }
}

impl<T: Copy, const N: usize> Extend<T> for InlineVec<T, N> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        for value in values {
            self.push(value);
        }
    }
}

/// One column a query touches. Not part of the public API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// The type's column, or [`NO_COLUMN`] if it has none yet (nothing to
    /// borrow then, but a query naming it twice is refused all the same).
    pub(crate) column: usize,
    pub(crate) ty: TypeId,
    pub(crate) name: &'static str,
    pub(crate) exclusive: bool,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            column: NO_COLUMN,
            ty: TypeId::of::<()>(),
            name: "",
            exclusive: false,
        }
    }
}

/// The `column` of an [`Access`] to a type with no column.
pub(crate) const NO_COLUMN: usize = usize::MAX;

/// The columns a query touches, up to 8 without an allocation. Not part of
/// the public API.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Accesses(pub(crate) InlineVec<Access, 8>);

impl Accesses {
    pub(crate) fn push(&mut self, access: Access) {
        self.0.push(access);
    }

    pub(crate) fn as_slice(&self) -> &[Access] {
        self.0.as_slice()
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [Access] {
        self.0.as_mut_slice()
    }
}

/// Takes the run-time borrows of `accesses` on `columns`, or panics naming
/// the first component type that is already borrowed incompatibly.
#[track_caller]
pub(crate) fn acquire(columns: &[Column], accesses: &[Access]) {
    if let Err(i) = try_acquire(columns, accesses) {
        let access = accesses[i];
        borrow_conflict(columns[access.column].name, access.exclusive);
    }
}

/// Takes the run-time borrows of `accesses` on `columns`, or gives back
/// those taken and returns the index of the first that conflicts.
pub(crate) fn try_acquire(columns: &[Column], accesses: &[Access]) -> Result<(), usize> {
    for (i, access) in accesses.iter().enumerate() {
        if access.column == NO_COLUMN {
            continue;
        }
        let flag = &columns[access.column].flag;
        let ok = if access.exclusive {
            flag.try_exclusive()
        } else {
            flag.try_shared()
        };
        if !ok {
            release(columns, &accesses[..i]);
            return Err(i);
        }
    }
    Ok(())
}

/// Gives back the borrows of `accesses` (taken by `acquire`).
pub(crate) fn release(columns: &[Column], accesses: &[Access]) {
    for access in accesses {
        if access.column == NO_COLUMN {
            continue;
        }
        let flag = &columns[access.column].flag;
        if access.exclusive {
            flag.release_exclusive();
        } else {
            flag.release_shared();
        }
    }
}

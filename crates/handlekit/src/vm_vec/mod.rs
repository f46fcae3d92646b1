//! [`VmVec`]: an array held directly in virtual memory, and its iterators
//! and errors.
//!
//! The idea is seed 004's DBECS ("walking through memory"): reserve a large
//! range of addresses, let the system commit pages only as elements reach
//! them, remove elements at the front by handing their pages back, and move
//! the array with the MMU instead of copying it.

use alloc::vec::Vec;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::iter::FusedIterator;
use core::mem::MaybeUninit;
use core::ops::{Deref, DerefMut, Index, IndexMut};
use core::slice::{self, SliceIndex};

mod error;
mod raw;
mod region;

pub use error::{PushError, ReserveError, ReserveErrorKind};
pub use raw::DrainFront;
use raw::RawVmVec;

/// Whether [`VmVec`] holds its elements in virtual memory on this build
/// (reserve, commit on touch, release the front, remap). `false` means the
/// heap fallback: the `vm` feature is off, the target has no supported
/// virtual-memory API, or the program runs under Miri.
///
/// ```
/// if handlekit::vm_vec::VIRTUAL_MEMORY {
///     println!("VmVec releases its front to the system");
/// }
/// ```
pub const VIRTUAL_MEMORY: bool = region::VIRTUAL;

/// Gives every reservation that dropped
/// [`with_max_capacity_recycled`](VmVec::with_max_capacity_recycled)
/// vectors left on the spare list back to the system, and returns the
/// committed bytes they held (an upper bound on the resident memory freed).
/// For measuring resident memory, as `malloc_trim` is for the heap; the
/// list is bounded anyway (64 reservations, 64 MiB committed). 0 where
/// there is no spare list (no virtual memory, no `std`).
///
/// ```
/// use handlekit::VmVec;
/// let mut v = VmVec::<u64>::with_max_capacity_recycled(1 << 20)?;
/// v.push(1);
/// drop(v); // its reservation goes to the spare list
/// handlekit::vm_vec::release_spare_reservations();
/// assert_eq!(handlekit::vm_vec::release_spare_reservations(), 0); // none left
/// # Ok::<(), handlekit::vm_vec::ReserveError>(())
/// ```
pub fn release_spare_reservations() -> usize {
    region::release_spares()
}

/// Element types for which all-zero bytes are a valid value, for
/// [`VmVec::zero_range`]: the integers, the floats, and arrays of them.
///
/// # Safety
///
/// A value whose bytes are all zero must be a valid `Self`. (`Copy` rules
/// out a `Drop` that overwriting would skip.)
///
/// ```
/// use handlekit::vm_vec::ZeroBits;
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Pair(u32, u32);
/// // SAFETY: two integers; zero bytes make `Pair(0, 0)`.
/// unsafe impl ZeroBits for Pair {}
///
/// let mut pairs = handlekit::VmVec::with_max_capacity(8)?;
/// pairs.push(Pair(1, 2));
/// pairs.zero_range(0..1);
/// assert_eq!((pairs[0].0, pairs[0].1), (0, 0));
/// # Ok::<(), handlekit::vm_vec::ReserveError>(())
/// ```
pub unsafe trait ZeroBits: Copy {}

macro_rules! zero_bits {
    ($($t:ty)*) => {
        // SAFETY: zero bytes are the number zero of every integer and float.
        $(unsafe impl ZeroBits for $t {})*
    };
}
zero_bits!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64);

// SAFETY: an array of zeroed elements, each a valid `T`.
unsafe impl<T: ZeroBits, const N: usize> ZeroBits for [T; N] {}

/// A growable array in a fixed reservation of virtual memory: elements never
/// move while they live, removing the front gives memory back to the system,
/// and the whole window can be moved back without copying.
///
/// [`with_max_capacity`](Self::with_max_capacity) reserves address space for
/// the most elements the vector will ever hold and commits nothing. Pushing
/// commits memory as the elements reach it, in chunks of
/// [`chunk_size`](Self::chunk_size) bytes (2 MiB, or more with larger pages).
/// Removing elements from the front ([`pop_front`](Self::pop_front),
/// [`drain_front`](Self::drain_front)) drops them in O(1) each; every chunk
/// that becomes wholly dead goes back to the system, and its addresses stay
/// reserved but inaccessible, so a stale pointer faults instead of reading
/// someone else's data.
///
/// The live elements form a *window* that walks through the reservation:
/// pushes extend it at the back, front removals shrink it at the front. When
/// its end reaches the end of the reservation, pushes fail
/// ([`try_push`](Self::try_push) returns an error, [`push`](Self::push)
/// panics) until [`rebase`](Self::rebase) moves the window back to the start.
///
/// # Positions
///
/// Indexing (`v[i]`, [`as_slice`](Self::as_slice)) counts from the front of
/// the window, like `VecDeque`: removing the front shifts every index. A
/// *position* does not shift: each element gets the position
/// [`next_position`](Self::next_position) when it is pushed and keeps it until
/// it is removed or moved by compaction, whatever happens at the front and
/// through [`rebase`](Self::rebase). Keep positions in an index table
/// (an [`IdTable`](crate::IdTable) of positions, say), resolve them with
/// [`get_by_position`](Self::get_by_position), and update them from the
/// moves that [`compact_front`](Self::compact_front) reports. Positions wrap
/// around at `usize::MAX`, after that many pushes.
///
/// # Addresses
///
/// An element's address stays the same from its push until its removal:
/// pushing never moves elements, and nothing else does except
/// [`rebase`](Self::rebase) (all of them) and the compaction methods (the ones
/// they report). Both take `&mut self`, so no reference can observe it; raw
/// pointers kept across them are invalid afterwards.
///
/// # Costs
///
/// | operation | cost |
/// | --- | --- |
/// | `push`, `try_push` | O(1); one system call per chunk reached |
/// | `pop_front`, `pop`, indexing | O(1) |
/// | `drain_front(n)`, `truncate` | O(n) drops; one release call per batch of dead chunks |
/// | `compact_front(budget, ..)` | O(budget), whatever the length |
/// | `rebase` | Linux: one `mremap` per dead-prefix-sized piece of the live part (no copying); elsewhere: copies the live elements |
///
/// Memory: resident memory follows the committed chunks between the first
/// and the last live element, at most one chunk more at each end.
/// [`committed_bytes`](Self::committed_bytes) reports it.
///
/// # Platforms
///
/// With the `vm` feature (on by default), on Linux, Android, macOS, iOS,
/// FreeBSD, NetBSD, DragonFly BSD and Windows, the vector lives in virtual
/// memory (through rustix or windows-sys). Everywhere else, without the
/// feature, and under Miri, it is a heap allocation of the whole capacity
/// made up front, with the same API and the same address stability; front
/// removals then give nothing back and [`rebase`](Self::rebase) copies.
/// [`VIRTUAL_MEMORY`] tells which one a build has.
///
/// # Examples
///
/// ```
/// use handlekit::VmVec;
///
/// // Room for a billion u64 (8 GB of address space); nothing committed yet.
/// let mut log: VmVec<u64> = VmVec::with_max_capacity(1 << 30)?;
/// log.extend(0..1_000_000);
/// let first = &log[0] as *const u64;
/// log.push(1_000_000);
/// assert_eq!(&log[0] as *const u64, first); // pushing never moves elements
///
/// // Drop the oldest half: their memory goes back to the system.
/// log.drain_front(500_000);
/// assert_eq!(log[0], 500_000);
/// assert_eq!(log.front_position(), 500_000);
/// # Ok::<(), handlekit::vm_vec::ReserveError>(())
/// ```
pub struct VmVec<T> {
    raw: RawVmVec<T>,
    /// The compaction methods' keep/remove decisions, one bit per examined
    /// element; kept between calls to avoid an allocation per call.
    decisions: Vec<u64>,
}

/// What [`VmVec::rebase`] did.
///
/// On Linux a rebase that remaps moves the window by whole pages: `shift`
/// is the dead prefix rounded down to the page size, and the first element
/// ends up at its old offset modulo the page size. A rebase that copies
/// moves the window to offset 0: `shift` is the whole old offset.
///
/// ```
/// let mut v = handlekit::VmVec::<u64>::with_max_capacity(1 << 20)?;
/// v.extend(0..1 << 20);
/// v.drain_front((3 << 18) + 5); // three quarters and five more
/// let before = v.as_ptr() as usize;
/// let r = v.rebase();
/// assert_eq!(v.as_ptr() as usize, before - r.shift);
/// // Every live byte was either remapped or copied, never both.
/// if r.copied == 0 {
///     assert!(r.remapped >= v.len() * 8);
/// }
/// # Ok::<(), handlekit::vm_vec::ReserveError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Rebased {
    /// How many bytes every element moved towards the start of the
    /// reservation: an element at address `a` is now at `a - shift`. Zero
    /// when nothing moved. A multiple of the page size when anything was
    /// remapped.
    pub shift: usize,
    /// Bytes moved by remapping pages (no copying): whole pages, from the
    /// page holding the first element up to the page holding the last (or
    /// as far as the system allowed). Zero when the elements were copied.
    pub remapped: usize,
    /// Bytes copied: the live bytes that were not remapped (all of them
    /// when nothing was remapped).
    pub copied: usize,
}

impl Rebased {
    pub(crate) const NONE: Rebased = Rebased {
        shift: 0,
        remapped: 0,
        copied: 0,
    };
}

/// What a compaction call ([`VmVec::compact_front`],
/// [`VmVec::compact_front_unordered`]) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Compacted {
    /// Elements examined (the budget, or the length if it was smaller).
    pub examined: usize,
    /// Elements dropped because `keep` returned `false`.
    pub removed: usize,
    /// Elements moved to a new position (each reported to `on_move`).
    pub moved: usize,
}

impl<T> VmVec<T> {
    /// Reserves address space for `max_capacity` elements and commits none.
    ///
    /// The reservation is `max_capacity * size_of::<T>()` bytes rounded up to
    /// whole chunks (2 MiB), so huge pages and `mremap`'s fast path apply;
    /// the vector still holds at most `max_capacity` elements. The heap
    /// fallback allocates exactly that much, up front.
    ///
    /// # Errors
    ///
    /// - [`ReserveErrorKind::CapacityOverflow`] if the byte size exceeds
    ///   `isize::MAX`;
    /// - [`ReserveErrorKind::AddressSpace`] if it exceeds the address-space
    ///   limit (`RLIMIT_AS` on unix) or no free range that large exists;
    /// - [`ReserveErrorKind::Os`] if the system refuses for another reason;
    /// - [`ReserveErrorKind::Alloc`] if the heap fallback cannot allocate.
    ///
    /// # Examples
    ///
    /// ```
    /// use handlekit::VmVec;
    ///
    /// let v: VmVec<[u8; 64]> = VmVec::with_max_capacity(1_000_000)?;
    /// assert!(v.is_empty());
    /// assert_eq!(v.max_capacity(), 1_000_000);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn with_max_capacity(max_capacity: usize) -> Result<Self, ReserveError> {
        Ok(VmVec {
            raw: RawVmVec::with_max_capacity(max_capacity)?,
            decisions: Vec::new(),
        })
    }

    /// [`with_max_capacity`](Self::with_max_capacity) for vectors made and
    /// dropped again and again with the same max capacity (the columns of
    /// an ECS world that is rebuilt per level, say): when this vector is
    /// dropped with no chunk released at its front, its reservation goes
    /// to a process-wide spare list instead of back to the system, with
    /// its committed memory; the next call with the same element size,
    /// alignment and capacity takes it from there, and pushes into memory
    /// that the last owner touched cost neither a system call nor a page
    /// fault. This is what a heap allocator's free lists do for `Vec`.
    ///
    /// Such a vector may start with memory committed
    /// ([`committed_bytes`](Self::committed_bytes) reports it), holding
    /// whatever the last owner left (never read: slots are written before
    /// they count as elements). The list keeps at most 64 reservations and
    /// 64 MiB of committed memory, the oldest going back to the system
    /// first. Without virtual memory, or without the `std` feature, this is
    /// [`with_max_capacity`](Self::with_max_capacity).
    ///
    /// # Errors
    ///
    /// As [`with_max_capacity`](Self::with_max_capacity).
    ///
    /// ```
    /// use handlekit::VmVec;
    ///
    /// for _round in 0..3 {
    ///     // From the second round on, the first round's reservation.
    ///     let mut v: VmVec<u64> = VmVec::with_max_capacity_recycled(1 << 20)?;
    ///     v.extend(0..1000);
    ///     assert_eq!(v[999], 999);
    /// }
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn with_max_capacity_recycled(max_capacity: usize) -> Result<Self, ReserveError> {
        Ok(VmVec {
            raw: RawVmVec::with_max_capacity_recycled(max_capacity)?,
            decisions: Vec::new(),
        })
    }

    /// The number of elements the reservation was made for: the window
    /// never holds more, and never extends past that many element slots
    /// from the start of the reservation.
    ///
    /// ```
    /// let v = handlekit::VmVec::<u32>::with_max_capacity(10)?;
    /// assert_eq!(v.max_capacity(), 10);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn max_capacity(&self) -> usize {
        self.raw.max_capacity()
    }

    /// How many more elements can be pushed before the window reaches the
    /// end of the reservation. Front removals do not raise it;
    /// [`rebase`](Self::rebase) does.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.extend([1, 2, 3]);
    /// v.pop_front();
    /// assert_eq!(v.remaining_capacity(), 1);
    /// v.rebase();
    /// assert_eq!(v.remaining_capacity(), 2);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn remaining_capacity(&self) -> usize {
        self.raw.remaining_capacity()
    }

    /// The number of bytes committed and released at a time: 2 MiB, or more
    /// when the page size, the allocation granularity (Windows) or the
    /// alignment of `T` is larger. 1 for the heap fallback, which commits
    /// everything up front.
    ///
    /// ```
    /// let v = handlekit::VmVec::<u8>::with_max_capacity(1)?;
    /// if handlekit::vm_vec::VIRTUAL_MEMORY {
    ///     assert!(v.chunk_size() >= 2 << 20);
    /// }
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[must_use]
    pub fn chunk_size(&self) -> usize {
        self.raw.granule()
    }

    /// The bytes of address space reserved (0 for a zero-sized `T` or a
    /// zero capacity).
    ///
    /// ```
    /// let v = handlekit::VmVec::<u64>::with_max_capacity(1 << 20)?;
    /// assert!(v.reserved_bytes() >= 8 << 20);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[must_use]
    pub fn reserved_bytes(&self) -> usize {
        self.raw.reserved_bytes()
    }

    /// The bytes currently committed: an upper bound on the resident memory
    /// the vector uses (pages are only resident once written). The whole
    /// allocation for the heap fallback.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::<u64>::with_max_capacity(1 << 20)?;
    /// if handlekit::vm_vec::VIRTUAL_MEMORY {
    ///     assert_eq!(v.committed_bytes(), 0);
    ///     v.push(1);
    ///     assert_eq!(v.committed_bytes(), v.chunk_size());
    /// }
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[must_use]
    pub fn committed_bytes(&self) -> usize {
        self.raw.committed_bytes()
    }

    /// The number of live elements.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.push('a');
    /// assert_eq!(v.len(), 1);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether the vector holds no element.
    ///
    /// ```
    /// assert!(handlekit::VmVec::<u8>::with_max_capacity(4)?.is_empty());
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.raw.len() == 0
    }

    /// The live elements, front first.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.extend([1, 2, 3]);
    /// v.pop_front();
    /// assert_eq!(v.as_slice(), &[2, 3]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        self.raw.as_slice()
    }

    /// The live elements, front first, mutably.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.extend([1, 2, 3]);
    /// v.as_mut_slice().reverse();
    /// assert_eq!(v.as_slice(), &[3, 2, 1]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.raw.as_mut_slice()
    }

    /// A raw pointer to the first live element (where the first element
    /// would be, for an empty vector; dangling and aligned for a zero-sized
    /// `T`).
    ///
    /// As with [`Vec::as_ptr`], no reference to the elements is made on the
    /// way: the pointer carries the reservation's own provenance, so it and
    /// the pointers derived from it stay valid for the aliasing model when
    /// mixed with other calls to `as_ptr` and [`as_mut_ptr`](Self::as_mut_ptr)
    /// and with pushes. Making a reference to an element and writing
    /// through it, or moving the window ([`rebase`](Self::rebase)), still
    /// invalidates it for that element. It must not be written through
    /// (except inside an `UnsafeCell`); see `as_mut_ptr` for that.
    ///
    /// Elements never move while the window does not: the element at
    /// position `p` sits at `as_ptr().wrapping_add(p - front_position())`
    /// until the next `rebase`, whatever is pushed or drained meanwhile.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend([1u32, 2, 3]);
    /// let p = v.as_ptr();
    /// v.push(4);
    /// // SAFETY: position 3 is live, and the window has not moved.
    /// assert_eq!(unsafe { *p.add(3) }, 4);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn as_ptr(&self) -> *const T {
        self.raw.as_ptr()
    }

    /// A raw pointer to the first live element that may be written through:
    /// [`as_ptr`](Self::as_ptr) for writes, with the same guarantees (no
    /// reference to the elements is made on the way; valid, for the
    /// aliasing model, alongside other calls to `as_ptr` and `as_mut_ptr`
    /// and pushes).
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend([1u32, 2, 3]);
    /// let p = v.as_mut_ptr();
    /// let q = v.as_mut_ptr();
    /// // SAFETY: positions 0 and 2 are live, and the window has not moved;
    /// // two pointers from `as_mut_ptr` may be used in turn.
    /// unsafe {
    ///     *p.add(2) = 30;
    ///     *q = 10;
    /// }
    /// assert_eq!(v.as_slice(), &[10, 2, 30]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.raw.as_ptr()
    }

    /// An iterator over the live elements, front first.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.extend([1, 2, 3]);
    /// assert_eq!(v.iter().sum::<i32>(), 6);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    pub fn iter(&self) -> slice::Iter<'_, T> {
        self.as_slice().iter()
    }

    /// An iterator over the live elements, front first, that allows
    /// modifying them.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.extend([1, 2, 3]);
    /// v.iter_mut().for_each(|x| *x *= 10);
    /// assert_eq!(v.as_slice(), &[10, 20, 30]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> slice::IterMut<'_, T> {
        self.as_mut_slice().iter_mut()
    }

    /// Appends `value` at the back. No element moves.
    ///
    /// # Panics
    ///
    /// If the window has reached the end of the reservation (see
    /// [`try_push`](Self::try_push)), or the system refuses to commit memory.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.push(7);
    /// assert_eq!(v[0], 7);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[track_caller]
    pub fn push(&mut self, value: T) {
        if let Err((_, failure)) = self.raw.push(value) {
            push_failed(failure);
        }
    }

    /// Appends `value` at the back, or hands it back if there is no room.
    /// No element moves.
    ///
    /// # Errors
    ///
    /// A [`PushError`] holding `value` when the window has reached the end
    /// of the reservation ([`PushError::is_full`]; [`rebase`](Self::rebase)
    /// makes room if the front was removed), or when the system refuses to
    /// commit memory ([`PushError::raw_os_error`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(2)?;
    /// v.push(1);
    /// v.push(2);
    /// v.pop_front();
    /// // One element is live, but the window has reached the end.
    /// assert_eq!(v.try_push(3).unwrap_err().into_inner(), 3);
    /// v.rebase();
    /// assert!(v.try_push(3).is_ok());
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    pub fn try_push(&mut self, value: T) -> Result<(), PushError<T>> {
        self.raw
            .push(value)
            .map_err(|(value, failure)| PushError::new(value, failure))
    }

    /// The committed room past the last element, as uninitialized slots
    /// (empty when the next push would commit memory; see
    /// [`reserve`](Self::reserve)). As with [`Vec::spare_capacity_mut`],
    /// writing elements there and then calling [`set_len`](Self::set_len)
    /// appends them in one step, with no capacity check per element.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::<u32>::with_max_capacity(1 << 16)?;
    /// v.reserve(4);
    /// let spare = v.spare_capacity_mut();
    /// assert!(spare.len() >= 4);
    /// for (i, slot) in spare[..4].iter_mut().enumerate() {
    ///     slot.write(i as u32 * 10);
    /// }
    /// // SAFETY: the first four spare slots were just written.
    /// unsafe { v.set_len(4) };
    /// assert_eq!(v.as_slice(), &[0, 10, 20, 30]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    pub fn spare_capacity_mut(&mut self) -> &mut [MaybeUninit<T>] {
        self.raw.spare_capacity_mut()
    }

    /// Sets the number of live elements, as [`Vec::set_len`] does: the
    /// elements past a shorter length are forgotten, not dropped.
    ///
    /// # Safety
    ///
    /// `new_len` is at most `len() + spare_capacity_mut().len()`, and the
    /// elements between `len()` and `new_len` are initialized (written
    /// through [`spare_capacity_mut`](Self::spare_capacity_mut), or of a
    /// type every bit pattern of which is valid, such as `MaybeUninit`).
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// let mut v = handlekit::VmVec::<MaybeUninit<u64>>::with_max_capacity(1 << 16)?;
    /// v.reserve(64);
    /// let room = v.spare_capacity_mut().len().min(64);
    /// // SAFETY: within the spare room, and a `MaybeUninit` needs no
    /// // initialization.
    /// unsafe { v.set_len(room) };
    /// assert_eq!(v.len(), room);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    pub unsafe fn set_len(&mut self, new_len: usize) {
        // SAFETY: the caller's guarantee.
        unsafe { self.raw.set_len(new_len) }
    }

    /// Prepares room for `additional` more elements (as many as fit before
    /// the end of the reservation): commits the memory they need, and asks
    /// the system to back it with pages now, in one call (on Linux 5.14 and
    /// later, `MADV_POPULATE_WRITE`), rather than one page fault per page
    /// as the pushes first write it. Use it before pushing a batch of known
    /// length into fresh memory. Never moves an element; a refusal (memory
    /// the system will not commit or populate) is ignored here, and the
    /// pushes report it as they would have.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::<u64>::with_max_capacity(1 << 20)?;
    /// v.reserve(10_000);
    /// assert!(v.is_empty());
    /// if handlekit::vm_vec::VIRTUAL_MEMORY {
    ///     assert!(v.committed_bytes() >= 10_000 * 8);
    /// }
    /// v.extend(0..10_000);
    /// assert_eq!(v.len(), 10_000);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.raw.reserve_populated(additional);
    }

    /// Removes the last element and returns it.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.extend([1, 2]);
    /// assert_eq!(v.pop(), Some(2));
    /// assert_eq!(v.as_slice(), &[1]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn pop(&mut self) -> Option<T> {
        self.raw.pop_back()
    }

    /// Removes the first element and returns it, in O(1). When its chunk
    /// becomes wholly dead, it goes back to the system.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.extend([1, 2]);
    /// assert_eq!(v.pop_front(), Some(1));
    /// assert_eq!(v.as_slice(), &[2]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn pop_front(&mut self) -> Option<T> {
        self.raw.pop_front()
    }

    /// Removes the first `n` elements and returns them as an iterator. The
    /// elements the iterator does not yield are dropped with it (O(1) each);
    /// then every chunk that became wholly dead goes back to the system.
    /// Nothing moves.
    ///
    /// # Panics
    ///
    /// If `n > self.len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend(1..=5);
    /// let first_two: Vec<i32> = v.drain_front(2).collect();
    /// assert_eq!(first_two, [1, 2]);
    /// v.drain_front(2); // drops 3 and 4
    /// assert_eq!(v.as_slice(), &[5]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[track_caller]
    pub fn drain_front(&mut self, n: usize) -> DrainFront<'_, T> {
        self.raw.drain_front(n)
    }

    /// Keeps the first `len` elements and drops the rest. Committed memory
    /// stays committed (see [`shrink_to_fit`](Self::shrink_to_fit)).
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend(1..=5);
    /// v.truncate(2);
    /// assert_eq!(v.as_slice(), &[1, 2]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn truncate(&mut self, len: usize) {
        self.raw.truncate(len);
    }

    /// Drops every element (like [`truncate(0)`](Self::truncate)): the
    /// window stays where it was. A following [`rebase`](Self::rebase)
    /// returns all committed memory and starts over at the beginning of the
    /// reservation.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend(1..=5);
    /// v.clear();
    /// assert!(v.is_empty());
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn clear(&mut self) {
        self.raw.truncate(0);
    }

    /// Gives back the committed chunks past the one holding the last
    /// element (after [`truncate`](Self::truncate) or [`pop`](Self::pop)).
    /// Does nothing on the heap fallback.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::<u64>::with_max_capacity(1 << 20)?;
    /// v.extend(0..1 << 20);
    /// v.truncate(1);
    /// v.shrink_to_fit();
    /// if handlekit::vm_vec::VIRTUAL_MEMORY {
    ///     assert_eq!(v.committed_bytes(), v.chunk_size());
    /// }
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.raw.shrink_to_fit();
    }

    /// Sets the elements of `range` to zero and gives the whole pages
    /// inside it back to the system, which makes them resident again only
    /// when next written: a hole of zeros in the middle of the vector that
    /// costs no memory. Returns the bytes given back: 0 on the heap
    /// fallback and on systems where a discarded page is not sure to read
    /// as zeros (all but Linux and Android), where the elements are simply
    /// overwritten with zeros.
    ///
    /// For a vector of plain numbers whose zero means "nothing here", such
    /// as a table indexed by id whose unused stretches should cost nothing.
    ///
    /// # Panics
    ///
    /// If the range is out of bounds, as slice indexing does.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::<u64>::with_max_capacity(1 << 20)?;
    /// v.extend(1..=1 << 20);
    /// let released = v.zero_range(1000..(1 << 19));
    /// assert!(v[1000..1 << 19].iter().all(|&x| x == 0));
    /// assert_eq!((v[999], v[1 << 19]), (1000, (1 << 19) + 1));
    /// if cfg!(target_os = "linux") && handlekit::vm_vec::VIRTUAL_MEMORY {
    ///     assert!(released >= (4 << 20) - 8192); // all but the partial pages
    /// }
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn zero_range(&mut self, range: core::ops::Range<usize>) -> usize
    where
        T: ZeroBits,
    {
        self.raw.zero_range(range)
    }

    /// A copy in a new reservation of the same
    /// [`max_capacity`](Self::max_capacity), or the error of reserving it.
    /// [`Clone`] panics instead.
    ///
    /// The copy holds clones of the live elements at the start of its
    /// reservation (so it has at least as much
    /// [`remaining_capacity`](Self::remaining_capacity) as the original),
    /// and each element keeps its position: the same positions resolve to
    /// the same elements in both (see [Positions](Self#positions)). If a
    /// `clone` panics, the elements cloned so far are dropped.
    ///
    /// # Errors
    ///
    /// As [`with_max_capacity`](Self::with_max_capacity).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(4)?;
    /// v.extend(["a", "b", "c", "d"]);
    /// v.pop_front();
    /// let copy = v.try_clone()?;
    /// assert_eq!(copy, ["b", "c", "d"]);
    /// assert_eq!(copy.get_by_position(3), Some(&"d"));
    /// assert_eq!(copy.remaining_capacity(), 1); // the original has 0
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn try_clone(&self) -> Result<Self, ReserveError>
    where
        T: Clone,
    {
        let mut copy = VmVec::with_max_capacity(self.max_capacity())?;
        copy.raw.set_front_position(self.front_position());
        // `len <= max_capacity` and the copy's window starts at 0: every
        // push fits (a refused commit panics, as in `push`).
        copy.extend(self.iter().cloned());
        Ok(copy)
    }

    /// A vector with exactly the room for `items`, holding them.
    fn from_vec_exact(items: Vec<T>) -> Self {
        let mut v = VmVec::with_max_capacity(items.len())
            .unwrap_or_else(|error| panic!("VmVec::from_iter: {error}"));
        v.extend(items);
        v
    }

    /// Moves the live window back towards the start of the reservation,
    /// making room for pushes, and returns how far it moved.
    ///
    /// - On Linux, the whole dead pages at the front (the run-time page
    ///   size, see [`Rebased`]) are skipped by remapping the live pages
    ///   onto them with `mremap`: page-table entries move, no byte is
    ///   copied. The first element then sits inside the first page of the
    ///   reservation, at its old offset modulo the page size (`mremap` moves
    ///   whole pages; going further would need a copy). This takes one
    ///   `mremap` call when the dead prefix is at least as large as the live
    ///   part (both counted in whole pages), and one per dead-prefix-sized
    ///   piece otherwise. If the system refuses part way (kernels before
    ///   5.7 refuse at once), the rest is copied behind the part that moved.
    /// - The live elements are copied to the start of the reservation (O(len))
    ///   instead when the dead prefix is smaller than both a chunk and the
    ///   live part (so that remapping would take many small pieces; this
    ///   includes less than a page dead), on other systems, and on the heap
    ///   fallback.
    /// - With virtual memory, committed memory after a move is the chunks
    ///   from the start of the reservation to the chunk holding the last
    ///   element; the rest is released.
    /// - An empty vector returns all its committed memory and starts over.
    ///
    /// Positions do not change (see [Positions](Self#positions)); indices
    /// do not change either.
    ///
    /// **Every element's address changes** by [`Rebased::shift`] bytes: raw
    /// pointers into the vector are invalid afterwards. Returns
    /// [`Rebased`] with `shift == 0` when nothing moved: the window already
    /// starts at the beginning, or the system refused to commit the memory
    /// to move or copy into.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut v = handlekit::VmVec::<u64>::with_max_capacity(1 << 20)?;
    /// v.extend(0..1 << 20);
    /// assert_eq!(v.remaining_capacity(), 0);
    /// v.drain_front(3 << 18); // the first three quarters
    /// let moved = v.rebase();
    /// assert!(moved.shift > 0);
    /// assert_eq!(v[0], 3 << 18);
    /// assert!(v.remaining_capacity() >= 1 << 19);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn rebase(&mut self) -> Rebased {
        self.raw.rebase()
    }

    /// The position of the first element (see [Positions](Self#positions)).
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend(['a', 'b', 'c']);
    /// v.pop_front();
    /// assert_eq!(v.front_position(), 1);
    /// assert_eq!(v.get_by_position(2), Some(&'c'));
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn front_position(&self) -> usize {
        self.raw.front_position()
    }

    /// The position the next pushed element will get: one past the last
    /// element's position.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// let at = v.next_position();
    /// v.push("x");
    /// assert_eq!(v.get_by_position(at), Some(&"x"));
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn next_position(&self) -> usize {
        self.raw.front_position().wrapping_add(self.raw.len())
    }

    /// The index (into [`as_slice`](Self::as_slice)) of the element at
    /// `position`, or `None` if no live element has it.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend([10, 20, 30]);
    /// v.pop_front();
    /// assert_eq!(v.index_of_position(2), Some(1));
    /// assert_eq!(v.index_of_position(0), None);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn index_of_position(&self, position: usize) -> Option<usize> {
        let index = position.wrapping_sub(self.raw.front_position());
        (index < self.raw.len()).then_some(index)
    }

    /// The element at `position`, if one is live there.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend([10, 20, 30]);
    /// v.drain_front(2);
    /// assert_eq!(v.get_by_position(2), Some(&30));
    /// assert_eq!(v.get_by_position(1), None);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn get_by_position(&self, position: usize) -> Option<&T> {
        let index = self.index_of_position(position)?;
        self.as_slice().get(index)
    }

    /// The element at `position`, mutably, if one is live there.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend([10, 20, 30]);
    /// *v.get_by_position_mut(1).unwrap() += 1;
    /// assert_eq!(v[1], 21);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn get_by_position_mut(&mut self, position: usize) -> Option<&mut T> {
        let index = self.index_of_position(position)?;
        self.as_mut_slice().get_mut(index)
    }

    /// Incremental garbage collection at the front, preserving order.
    ///
    /// Examines the first `min(budget, len)` elements; those for which `keep`
    /// returns `false` are dropped, and the survivors move back, in order,
    /// to the end of the examined range, so the removed elements leave a dead
    /// prefix whose whole chunks go back to the system. Elements past the
    /// examined range do not move. Every move is reported to `on_move` as
    /// `(old position, new position, &element)` so that an index of
    /// positions can follow it (see [Positions](Self#positions)).
    ///
    /// The work per call is O(budget) (calls to `keep`, moves, drops),
    /// whatever the length of the vector. Each survivor that has a removed
    /// element after it in the range moves once;
    /// [`compact_front_unordered`](Self::compact_front_unordered) moves fewer.
    /// The decisions take one bit per examined element, in a buffer the
    /// vector keeps for the next call (so the largest budget used stays
    /// allocated, `budget / 8` bytes).
    ///
    /// If `keep` panics, nothing has changed. If `on_move` panics, no element
    /// was dropped, but some may have moved without being reported. If a
    /// removed element's `Drop` panics, the other removed elements are still
    /// dropped and the panic propagates after the compaction completes.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(16)?;
    /// v.extend([1, 2, 3, 4, 5, 6]);
    /// let mut moves = Vec::new();
    /// let done = v.compact_front(4, |x| x % 2 == 0, |from, to, x| moves.push((from, to, *x)));
    /// assert_eq!(v.as_slice(), &[2, 4, 5, 6]);
    /// assert_eq!(done.removed, 2);
    /// assert_eq!(moves, [(1, 2, 2)]); // 2 moved from position 1 to 2
    /// assert_eq!(v.front_position(), 2);
    /// assert_eq!(v.get_by_position(2), Some(&2));
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn compact_front<K, M>(&mut self, budget: usize, keep: K, on_move: M) -> Compacted
    where
        K: FnMut(&T) -> bool,
        M: FnMut(usize, usize, &T),
    {
        self.compact(budget, keep, on_move, true)
    }

    /// Incremental garbage collection at the front, not preserving order:
    /// like [`compact_front`](Self::compact_front), but each survivor that
    /// sits where the dead prefix will be is swapped with a removed element
    /// from the rest of the examined range, so at most
    /// `min(removed, survivors)` elements move. The examined survivors keep
    /// their positions relative to the unexamined elements (they stay in
    /// front of them), but not among themselves.
    ///
    /// The work per call is O(budget); the panic behaviour is that of
    /// [`compact_front`](Self::compact_front).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(16)?;
    /// v.extend([2, 1, 4, 3, 5, 6]);
    /// let mut moves = Vec::new();
    /// let done = v.compact_front_unordered(4, |x| x % 2 == 0, |from, to, _| moves.push((from, to)));
    /// assert_eq!(v.as_slice(), &[4, 2, 5, 6]);
    /// assert_eq!((done.removed, done.moved), (2, 1)); // compact_front moves 2
    /// assert_eq!(moves, [(0, 3)]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    pub fn compact_front_unordered<K, M>(&mut self, budget: usize, keep: K, on_move: M) -> Compacted
    where
        K: FnMut(&T) -> bool,
        M: FnMut(usize, usize, &T),
    {
        self.compact(budget, keep, on_move, false)
    }

    fn compact<K, M>(
        &mut self,
        budget: usize,
        mut keep: K,
        mut on_move: M,
        ordered: bool,
    ) -> Compacted
    where
        K: FnMut(&T) -> bool,
        M: FnMut(usize, usize, &T),
    {
        let examined = budget.min(self.len());
        // Decide first, change nothing until every `keep` has returned: a
        // panicking `keep` leaves the vector as it was.
        let words = examined.div_ceil(64);
        self.decisions.clear();
        self.decisions.resize(words, 0);
        let mut removed = 0;
        for (i, value) in self.raw.as_slice()[..examined].iter().enumerate() {
            if keep(value) {
                self.decisions[i / 64] |= 1 << (i % 64);
            } else {
                removed += 1;
            }
        }
        let kept = |decisions: &[u64], i: usize| decisions[i / 64] & (1 << (i % 64)) != 0;
        let front = self.raw.front_position();
        let mut moved = 0;
        if removed > 0 {
            let window = &mut self.raw.as_mut_slice()[..examined];
            let decisions = &self.decisions;
            // Swaps keep every slot initialized, so any panic in `on_move`
            // leaves a valid vector. Afterwards `[0, removed)` holds exactly
            // the removed elements and `[removed, examined)` the survivors.
            let mut move_survivor = |from: usize, to: usize| {
                window.swap(from, to);
                moved += 1;
                on_move(
                    front.wrapping_add(from),
                    front.wrapping_add(to),
                    &window[to],
                );
            };
            if ordered {
                let mut write = examined;
                for i in (0..examined).rev() {
                    if kept(decisions, i) {
                        write -= 1;
                        if i != write {
                            move_survivor(i, write);
                        }
                    }
                }
            } else {
                // Survivors in the future dead prefix swap with removed
                // elements past it, pairing them up front to back.
                let mut dead = removed;
                for i in 0..removed {
                    if kept(decisions, i) {
                        while kept(decisions, dead) {
                            dead += 1;
                        }
                        move_survivor(i, dead);
                        dead += 1;
                    }
                }
            }
            // Drops the removed prefix and releases its chunks.
            self.raw.drain_front(removed);
        }
        Compacted {
            examined,
            removed,
            moved,
        }
    }

    /// Checks the internal invariants; panics if one is broken. For tests
    /// and fuzzing.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        self.raw.check_invariants();
    }

    /// The offset of the first element from the start of the reservation,
    /// in bytes. For tests.
    #[doc(hidden)]
    #[must_use]
    pub fn head_offset(&self) -> usize {
        self.raw.head_offset()
    }
}

/// The panic of `push` and `extend`, out of line.
#[cold]
#[inline(never)]
#[track_caller]
fn push_failed(failure: error::PushFailure) -> ! {
    panic!("{failure}")
}

impl<T> Deref for VmVec<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> DerefMut for VmVec<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T> AsRef<[T]> for VmVec<T> {
    fn as_ref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> AsMut<[T]> for VmVec<T> {
    fn as_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T, I: SliceIndex<[T]>> Index<I> for VmVec<T> {
    type Output = I::Output;

    #[inline]
    #[track_caller]
    fn index(&self, index: I) -> &I::Output {
        Index::index(self.as_slice(), index)
    }
}

impl<T, I: SliceIndex<[T]>> IndexMut<I> for VmVec<T> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, index: I) -> &mut I::Output {
        IndexMut::index_mut(self.as_mut_slice(), index)
    }
}

impl<T: fmt::Debug> fmt::Debug for VmVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A copy in a new reservation of the same max capacity, with the same
/// positions: see [`VmVec::try_clone`].
///
/// # Panics
///
/// If the new reservation fails (use [`VmVec::try_clone`] to get the error
/// instead).
///
/// ```
/// let mut v = handlekit::VmVec::with_max_capacity(8)?;
/// v.extend([String::from("x"), String::from("y")]);
/// let copy = v.clone();
/// v.clear();
/// assert_eq!(copy, ["x", "y"]);
/// assert_eq!(copy.max_capacity(), 8);
/// # Ok::<(), handlekit::vm_vec::ReserveError>(())
/// ```
impl<T: Clone> Clone for VmVec<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.try_clone()
            .unwrap_or_else(|error| panic!("VmVec::clone: {error}"))
    }
}

/// Collects the items into a vector whose max capacity is the iterator's
/// upper size bound.
///
/// A `VmVec` needs its [`max_capacity`](VmVec::max_capacity) up front, and
/// an iterator only hints at its length, so the rule is:
///
/// - When [`Iterator::size_hint`] gives an upper bound and that many
///   elements can be reserved, that is the max capacity. For an exact-size
///   iterator (a range, a slice's iterator, a `map` over one) the vector
///   is then exactly full; a `filter` leaves room for what it removed.
/// - Otherwise (no upper bound, a bound too large to reserve, or an
///   iterator that yields more than its bound), the items are first
///   collected into a `Vec` and the max capacity is their exact count.
///
/// To leave room for later pushes, reserve with
/// [`VmVec::with_max_capacity`] and [`Extend`] instead.
///
/// # Panics
///
/// If the reservation for the exact count fails (as `Vec` fails when out
/// of memory), or the system refuses to commit memory.
///
/// ```
/// use handlekit::VmVec;
///
/// let squares: VmVec<u64> = (1..=4).map(|x| x * x).collect();
/// assert_eq!(squares, [1, 4, 9, 16]);
/// assert_eq!(squares.max_capacity(), 4); // exact size: full
///
/// let even: VmVec<u64> = (0..10).filter(|x| x % 2 == 0).collect();
/// assert_eq!(even.len(), 5);
/// assert_eq!(even.max_capacity(), 10); // the filter's upper bound
/// ```
impl<T> FromIterator<T> for VmVec<T> {
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let Some(upper) = iter.size_hint().1 else {
            return Self::from_vec_exact(iter.collect());
        };
        let Ok(mut v) = VmVec::with_max_capacity(upper) else {
            return Self::from_vec_exact(iter.collect());
        };
        v.raw.reserve(iter.size_hint().0);
        while let Some(value) = iter.next() {
            match v.raw.push(value) {
                Ok(()) => {}
                Err((value, error::PushFailure::Full { .. })) => {
                    // The iterator yielded more than its upper bound: start
                    // over from a `Vec` of everything.
                    let mut items: Vec<T> = Vec::with_capacity(v.len() + 1);
                    items.extend(v.drain_front(v.len()));
                    items.push(value);
                    items.extend(iter);
                    return Self::from_vec_exact(items);
                }
                Err((_, failure)) => push_failed(failure),
            }
        }
        v
    }
}

impl<T: PartialEq<U>, U> PartialEq<VmVec<U>> for VmVec<T> {
    fn eq(&self, other: &VmVec<U>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq> Eq for VmVec<T> {}

impl<T: PartialEq<U>, U> PartialEq<[U]> for VmVec<T> {
    fn eq(&self, other: &[U]) -> bool {
        self.as_slice() == other
    }
}

impl<T: PartialEq<U>, U> PartialEq<&[U]> for VmVec<T> {
    fn eq(&self, other: &&[U]) -> bool {
        self.as_slice() == *other
    }
}

impl<T: PartialEq<U>, U> PartialEq<Vec<U>> for VmVec<T> {
    fn eq(&self, other: &Vec<U>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

/// Compares the live elements lexicographically, like slices (the window's
/// place in the reservation and the positions do not count).
///
/// ```
/// let mut a = handlekit::VmVec::with_max_capacity(4)?;
/// a.extend([1, 2, 3]);
/// let mut b = handlekit::VmVec::with_max_capacity(4)?;
/// b.extend([0, 1, 3]);
/// b.pop_front();
/// assert!(b > a);
/// # Ok::<(), handlekit::vm_vec::ReserveError>(())
/// ```
impl<T: PartialOrd> PartialOrd for VmVec<T> {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        self.as_slice().partial_cmp(other.as_slice())
    }
}

impl<T: Ord> Ord for VmVec<T> {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

/// Hashes the live elements as a slice does, so that a `VmVec` and a
/// `Vec` or slice with equal elements hash equally.
impl<T: Hash> Hash for VmVec<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl<T: PartialEq<U>, U, const N: usize> PartialEq<[U; N]> for VmVec<T> {
    fn eq(&self, other: &[U; N]) -> bool {
        self.as_slice() == other
    }
}

/// Pushes every item.
///
/// # Panics
///
/// As [`VmVec::push`]: when an item does not fit in the reservation (the
/// items before it are pushed).
impl<T> Extend<T> for VmVec<T> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.raw.reserve(iter.size_hint().0);
        for value in iter {
            self.push(value);
        }
    }
}

/// Pushes a copy of every item.
///
/// # Panics
///
/// As [`VmVec::push`].
impl<'a, T: Copy + 'a> Extend<&'a T> for VmVec<T> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = &'a T>>(&mut self, iter: I) {
        self.extend(iter.into_iter().copied());
    }
}

impl<'a, T> IntoIterator for &'a VmVec<T> {
    type Item = &'a T;
    type IntoIter = slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut VmVec<T> {
    type Item = &'a mut T;
    type IntoIter = slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<T> IntoIterator for VmVec<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    /// Consumes the vector front first; memory goes back to the system as
    /// the iterator walks (a chunk at a time).
    fn into_iter(self) -> IntoIter<T> {
        IntoIter { vec: self }
    }
}

/// An owning iterator over a [`VmVec`], front first (from
/// `VmVec::into_iter`). Each chunk goes back to the system once the iterator
/// has passed it.
///
/// ```
/// let mut v = handlekit::VmVec::with_max_capacity(4)?;
/// v.extend([String::from("a"), String::from("b")]);
/// let all: Vec<String> = v.into_iter().collect();
/// assert_eq!(all, ["a", "b"]);
/// # Ok::<(), handlekit::vm_vec::ReserveError>(())
/// ```
pub struct IntoIter<T> {
    vec: VmVec<T>,
}

impl<T> IntoIter<T> {
    /// The elements not yet yielded.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        self.vec.as_slice()
    }
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.vec.pop_front()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.vec.len(), Some(self.vec.len()))
    }
}

impl<T> DoubleEndedIterator for IntoIter<T> {
    fn next_back(&mut self) -> Option<T> {
        self.vec.pop()
    }
}

impl<T> ExactSizeIterator for IntoIter<T> {}
impl<T> FusedIterator for IntoIter<T> {}

impl<T: fmt::Debug> fmt::Debug for IntoIter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("IntoIter").field(&self.as_slice()).finish()
    }
}

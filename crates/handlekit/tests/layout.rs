//! Memory layout: key sizes and niches, and the bytes an `IdTable` spends
//! per slot, measured with a counting global allocator.
//!
//! Run with `--nocapture` to see the bytes-per-slot table.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::mem::{align_of, size_of};

use handlekit::{define_key, Id, Id32, IdTable};

/// `System`, counting the bytes each thread has allocated and not freed.
/// Counting per thread keeps the test harness and other tests running in
/// parallel out of the measurement.
struct Counting;

thread_local! {
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: allocations can happen while a thread is being torn down.
    let _ = LIVE_BYTES.try_with(|live| live.set(live.get() + delta));
}

fn live_bytes() -> isize {
    LIVE_BYTES.with(Cell::get)
}

// SAFETY: every call is forwarded to `System` unchanged; the counter only
// observes sizes. (`realloc` and `alloc_zeroed` use the default methods,
// which go through `alloc` and `dealloc`.)
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract, and
        // `ptr` came from `System` through `alloc` above.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

define_key! {
    /// A 32-bit typed key.
    pub struct Narrow(u32; index_bits = 28);
    /// A 64-bit typed key.
    pub struct Wide(u64; index_bits = 40);
}

#[test]
fn keys_have_a_niche() {
    assert_eq!(size_of::<Id>(), 8);
    assert_eq!(size_of::<Option<Id>>(), 8);
    assert_eq!(size_of::<Id32>(), 4);
    assert_eq!(size_of::<Option<Id32>>(), 4);
    assert_eq!(size_of::<Narrow>(), 4);
    assert_eq!(size_of::<Option<Narrow>>(), 4);
    assert_eq!(size_of::<Wide>(), 8);
    assert_eq!(size_of::<Option<Wide>>(), 8);
}

const SLOTS: usize = 1024;

/// Bytes per slot of an `IdTable<T>`: the allocation of a fixed-capacity
/// table of `SLOTS` slots divided by `SLOTS`. Panics unless the division
/// is exact.
fn measured_bytes_per_slot<T>() -> usize {
    let before = live_bytes();
    let table = IdTable::<T>::with_fixed_capacity(SLOTS);
    let allocated = live_bytes() - before;
    assert_eq!(table.capacity(), SLOTS);
    drop(table);
    assert_eq!(live_bytes(), before, "the table freed all it allocated");
    let slots_bytes = allocated as usize;
    assert_eq!(
        slots_bytes % SLOTS,
        0,
        "{allocated} bytes is not whole slots"
    );
    slots_bytes / SLOTS
}

/// The documented slot size: a 32-bit state word in one array, and in
/// another a union of the value and a 32-bit free-list link (its size
/// rounded up to its alignment, the larger of `T`'s and the `u32`'s).
fn formula<T>() -> usize {
    let payload = size_of::<T>()
        .max(4)
        .next_multiple_of(align_of::<T>().max(4));
    4 + payload
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Aligned8x64([u64; 8]);

#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Aligned16([u8; 16]);

/// One row of the bytes-per-slot table: name, size, alignment, measured
/// bytes per slot, formula.
macro_rules! row {
    ($t:ty) => {
        (
            stringify!($t),
            size_of::<$t>(),
            align_of::<$t>(),
            measured_bytes_per_slot::<$t>(),
            formula::<$t>(),
        )
    };
}

#[test]
fn bytes_per_slot_match_the_formula() {
    let rows = [
        row!(()),
        row!(u8),
        row!(u32),
        row!(u64),
        row!([u8; 5]),
        row!([u8; 64]),
        row!(Aligned8x64),
        row!(Aligned16),
    ];
    println!("IdTable<T> bytes per slot:");
    println!(
        "{:<12} {:>5} {:>6} {:>9} {:>8}",
        "T", "size", "align", "measured", "formula"
    );
    for (name, size, align, measured, expected) in rows {
        println!("{name:<12} {size:>5} {align:>6} {measured:>9} {expected:>8}");
    }
    for (name, _, _, measured, expected) in rows {
        assert_eq!(measured, expected, "bytes per slot of IdTable<{name}>");
    }
    // The figures quoted in the docs: u8 and u32 take 8 bytes, u64 12,
    // [u8; 64] and a 64-byte struct aligned to 8 both 68 (the state word
    // is in its own array, so no padding goes between it and the value).
    // [u8; 5] shows that the payload is rounded to the alignment of the
    // union (at least 4): 5 rounds up to 8, plus 4.
    let measured: Vec<usize> = rows.iter().map(|row| row.3).collect();
    assert_eq!(measured, [8, 8, 8, 12, 12, 68, 68, 20]);
}

/// `IdTable::new` and `default` allocate nothing until the first
/// insertion, and dropping a table frees everything.
#[test]
fn empty_tables_allocate_nothing() {
    let before = live_bytes();
    let mut table: IdTable<u64> = IdTable::new();
    let other: IdTable<u64, Id32> = IdTable::default();
    assert_eq!(live_bytes(), before);
    table.insert(1);
    assert!(live_bytes() > before);
    drop((table, other));
    assert_eq!(live_bytes(), before);
    println!("size_of::<IdTable<u64>>() = {}", size_of::<IdTable<u64>>());
}

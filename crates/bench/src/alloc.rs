//! A counting global allocator, so the runner can report bytes per value.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes currently allocated.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to `System` with the same arguments; the
// counter is only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        new
    }
}

/// Bytes allocated right now.
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// What [`keep_freed_memory`] did, for the report.
static REGIME: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Asks the C allocator to keep the memory it is given back instead of
/// returning it to the system, so that no cell's time depends on what ran
/// before it.
///
/// glibc's malloc gives memory back in two ways that depend on history: it
/// trims the top of the heap past a threshold, and it serves big blocks
/// with `mmap` below a threshold that rises each time such a block is
/// freed. A workload that builds a container from empty, fills it and drops
/// it, again and again, then pays a page fault per fresh 4 KiB page in some
/// rounds and not in others, depending on which containers ran before and
/// how they allocate (one growing buffer, or many blocks). In one test, a
/// `Pool` of 64-byte values took 44 ns per insert run alone and 9.4 ns
/// inside the full run; with the memory kept it took 3.3 ns, and an
/// `IdTable` went from 3.0 to 35.8 ns when only the trimming was switched
/// off. With both thresholds fixed, every container reuses warm memory
/// after its first round and the comparison is between the containers.
///
/// On other platforms this does nothing. Returns what it did.
pub fn keep_freed_memory() -> &'static str {
    REGIME.get_or_init(set_thresholds)
}

/// What [`keep_freed_memory`] did, if it was called.
pub fn regime() -> &'static str {
    REGIME
        .get()
        .copied()
        .unwrap_or("system allocator, default settings")
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_thresholds() -> &'static str {
    // Large enough that no run of this benchmark reaches them.
    const NEVER: libc::c_int = libc::c_int::MAX;
    // SAFETY: `mallopt` only changes allocator parameters; it is called
    // with documented parameter numbers and in-range values.
    let done = unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, NEVER) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, NEVER) == 1
    };
    if done {
        "glibc malloc, freed memory kept (M_MMAP_THRESHOLD and M_TRIM_THRESHOLD at their maximum)"
    } else {
        "glibc malloc, default settings (mallopt refused)"
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() -> &'static str {
    "system allocator, default settings"
}

/// Asks the C allocator to give the free memory it holds back to the
/// system (`malloc_trim(0)`), whatever [`keep_freed_memory`] set, and
/// unmaps the reservations on `VmVec`'s spare list, so that
/// the process's resident memory shows what is in use. For the ECS
/// section's `despawn_front`; elsewhere the runner keeps freed memory.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim() {
    // SAFETY: `malloc_trim` only returns free memory of the allocator to
    // the system; any pad value is valid.
    unsafe {
        libc::malloc_trim(0);
    }
    // handlekit-ecs's worlds keep their dropped arrays' reservations (with
    // their memory) for the next world, as the allocator keeps freed heap.
    handlekit::vm_vec::release_spare_reservations();
}

/// See the Linux version: only the spare reservations of `VmVec` go back.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim() {
    handlekit::vm_vec::release_spare_reservations();
}

/// The size of a memory page, for `/proc/self/statm` (4 KiB where it
/// cannot be asked).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn page_size() -> usize {
    // SAFETY: `sysconf` reads a system constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
}

/// The size of a memory page (4 KiB assumed off glibc Linux).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn page_size() -> usize {
    4096
}

//! Resident memory of a `VmVec`, measured through `/proc/self/statm`.
//!
//! One test in its own binary, so no other test allocates while it
//! measures; every figure is a difference between two readings.

#![cfg(all(target_os = "linux", feature = "vm", not(miri)))]

use handlekit::VmVec;

const MIB: usize = 1 << 20;

/// The resident set size of this process, in bytes.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .expect("resident field")
        .parse()
        .expect("a number");
    pages * rustix::param::page_size()
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / MIB as f64
}

#[test]
fn resident_memory_follows_the_window() {
    let start = rss();

    // Reserve 64 GiB: address space only.
    let mut v: VmVec<u64> = VmVec::with_max_capacity((64 << 30) / 8).expect("reserve 64 GiB");
    assert!(v.reserved_bytes() >= 64 << 30);
    assert_eq!(v.committed_bytes(), 0);
    let reserved = rss();
    assert!(
        reserved.saturating_sub(start) < 4 * MIB,
        "reserving made {:.1} MiB resident",
        mib(reserved.saturating_sub(start))
    );

    // Touch 256 MiB.
    v.extend(0..(256 * MIB / 8) as u64);
    assert_eq!(v.committed_bytes(), 256 * MIB);
    let touched = rss();
    let grown = touched.saturating_sub(reserved);
    assert!(
        (248 * MIB..=272 * MIB).contains(&grown),
        "touching 256 MiB made {:.1} MiB resident",
        mib(grown)
    );

    // Drain the front 128 MiB: its chunks go back.
    v.drain_front(128 * MIB / 8);
    assert_eq!(v.committed_bytes(), 128 * MIB);
    let drained = rss();
    let fell = touched.saturating_sub(drained);
    assert!(
        fell >= 100 * MIB,
        "draining 128 MiB freed only {:.1} MiB",
        mib(fell)
    );

    // Rebase: the live half is remapped, not copied, so nothing new
    // becomes resident.
    let moved = v.rebase();
    assert_eq!(moved.shift, 128 * MIB);
    assert_eq!(moved.copied, 0);
    assert_eq!(moved.remapped, 128 * MIB);
    assert_eq!(v[0], (128 * MIB / 8) as u64);
    assert_eq!(v[v.len() - 1], (256 * MIB / 8 - 1) as u64);
    assert_eq!(v.head_offset(), 0);
    let rebased = rss();
    assert!(
        rebased <= drained + 4 * MIB,
        "rebase made {:.1} MiB more resident",
        mib(rebased.saturating_sub(drained))
    );

    // Dead pages short of a whole chunk go back too (the chunk stays
    // committed): drain all but the last MiB of the first chunk.
    let chunk = v.chunk_size();
    let before_partial = rss();
    let in_first_chunk = (chunk - v.head_offset() % chunk) / 8;
    v.drain_front(in_first_chunk - MIB / 8);
    let partial = rss();
    let dead = (in_first_chunk * 8 - MIB) as isize;
    let fell_partial = before_partial as isize - partial as isize;
    assert!(
        dead < (MIB as isize) || fell_partial >= dead - (MIB as isize) / 2,
        "draining {:.1} MiB inside a chunk freed {:.1} MiB",
        dead as f64 / MIB as f64,
        fell_partial as f64 / MIB as f64
    );
    assert_eq!(v.committed_bytes() % chunk, 0);
    let first = v[0];
    v.push(7);
    assert_eq!((v[0], v[v.len() - 1]), (first, 7));

    // Dropping returns the rest.
    drop(v);
    let dropped = rss();
    assert!(
        dropped <= start + 4 * MIB,
        "{:.1} MiB still resident after drop",
        mib(dropped.saturating_sub(start))
    );
    println!(
        "rss MiB: start {:.1}, reserved {:.1}, touched {:.1}, drained {:.1}, rebased {:.1}, dropped {:.1}",
        mib(start),
        mib(reserved),
        mib(touched),
        mib(drained),
        mib(rebased),
        mib(dropped)
    );
    zeroed_ranges_are_given_back();
}

/// Run from `resident_memory_follows_the_window`, so that the two never
/// measure at once.
fn zeroed_ranges_are_given_back() {
    let mut v: VmVec<u64> = VmVec::with_max_capacity(64 * MIB / 8).expect("reserve");
    v.extend(1..=(64 * MIB / 8) as u64);
    let touched = rss();
    // The middle half: 32 MiB of whole pages.
    let released = v.zero_range(16 * MIB / 8..48 * MIB / 8);
    assert_eq!(released, 32 * MIB);
    let zeroed = rss();
    assert!(
        touched.saturating_sub(zeroed) >= 28 * MIB,
        "zeroing 32 MiB freed only {:.1} MiB",
        mib(touched.saturating_sub(zeroed))
    );
    // Reading the hole keeps it free: the zero page backs it.
    assert!(v[16 * MIB / 8..48 * MIB / 8].iter().all(|&x| x == 0));
    assert!(rss() <= zeroed + 2 * MIB);
    assert_eq!(v[16 * MIB / 8 - 1], (16 * MIB / 8) as u64);
    assert_eq!(v[48 * MIB / 8], (48 * MIB / 8 + 1) as u64);
}

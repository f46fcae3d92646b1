//! `VmVec` behaviour that needs a process of its own: reading a released
//! page must fault, and a lowered `RLIMIT_AS` must give an `Err`.
//!
//! Each test re-runs this test binary on itself with `VMVEC_CHILD` set; the
//! child does the dangerous part and the parent judges how it ended, so the
//! test runner is never faulted or limited. The child prints a marker line
//! when it reached its checks, so a child that ran no test cannot pass.

#![cfg(all(target_os = "linux", feature = "vm", not(miri)))]

use std::env;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};

use handlekit::vm_vec::ReserveErrorKind;
use handlekit::VmVec;

const CHILD: &str = "VMVEC_CHILD";
const MIB: usize = 1 << 20;

/// Whether this process is the child running `test`.
fn is_child(test: &str) -> bool {
    env::var(CHILD).as_deref() == Ok(test)
}

/// Runs `test` alone in a child process.
fn run_child(test: &str) -> Output {
    Command::new(env::current_exe().expect("test binary"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, test)
        .output()
        .expect("spawn the test binary")
}

#[test]
fn reading_a_released_chunk_faults() {
    const TEST: &str = "reading_a_released_chunk_faults";
    if is_child(TEST) {
        let mut v: VmVec<u64> = VmVec::with_max_capacity(64 * MIB).expect("reserve");
        v.extend(0..(6 * MIB / 8) as u64);
        let stale: *const u64 = &v[0];
        // SAFETY: the element is live; reading it is fine.
        assert_eq!(unsafe { stale.read_volatile() }, 0);
        v.drain_front(4 * MIB / 8);
        println!("CHILD-REACHED");
        // The first two chunks are released: this read must fault.
        // SAFETY: none; this is the access the test expects to be killed for.
        let value = unsafe { stale.read_volatile() };
        println!("CHILD-READ {value}");
        std::process::exit(3);
    }
    let out = run_child(TEST);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("CHILD-REACHED"),
        "the child did not run: {stdout}"
    );
    assert!(
        !stdout.contains("CHILD-READ"),
        "the stale read succeeded: {stdout}"
    );
    assert_eq!(
        out.status.signal(),
        Some(11),
        "expected SIGSEGV, got {:?}",
        out.status
    );
}

/// The virtual size of this process, in bytes.
fn virtual_size() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .next()
        .expect("size")
        .parse()
        .expect("a number");
    pages * rustix::param::page_size() as u64
}

#[test]
fn reservation_past_rlimit_as_is_an_error() {
    const TEST: &str = "reservation_past_rlimit_as_is_an_error";
    if is_child(TEST) {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        // Room for what the process uses now plus 512 MiB.
        let used = virtual_size();
        let limit = used + 512 * MIB as u64;
        let hard = getrlimit(Resource::As).maximum;
        setrlimit(
            Resource::As,
            Rlimit {
                current: Some(limit),
                maximum: hard,
            },
        )
        .expect("lower RLIMIT_AS");
        let err =
            VmVec::<u64>::with_max_capacity((64 << 30) / 8).expect_err("64 GiB past the limit");
        assert_eq!(err.kind(), ReserveErrorKind::AddressSpace);
        assert_eq!(err.address_space_limit(), Some(limit));
        assert!(err.to_string().contains("RLIMIT_AS"), "{err}");
        // Under the limit, but past what is left of it: the kernel refuses.
        let request = 512 * MIB + (used / 2) as usize;
        assert!(((request + 2 * MIB) as u64) < limit);
        let err = VmVec::<u8>::with_max_capacity(request).expect_err("past what is left");
        assert_eq!(err.kind(), ReserveErrorKind::AddressSpace);
        // A small one still works.
        let mut small: VmVec<u64> = VmVec::with_max_capacity(MIB).expect("1 M elements fit");
        small.extend(0..1000);
        assert_eq!(small.len(), 1000);
        println!("CHILD-PASSED");
        return;
    }
    let out = run_child(TEST);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {stdout}\n{stderr}");
    assert!(
        stdout.contains("CHILD-PASSED"),
        "the child did not run its checks: {stdout}"
    );
}

#[test]
fn reservation_past_the_address_space_is_an_error() {
    // 2^60 bytes fit in isize but in no address space there is.
    let err = VmVec::<u64>::with_max_capacity(1 << 57).expect_err("2^60 bytes");
    assert_eq!(err.kind(), ReserveErrorKind::AddressSpace);
    assert_eq!(err.requested_bytes(), Some(1 << 60));
}

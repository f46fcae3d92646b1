//! Helpers shared by the test files.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The message of the panic `f` raises, or `None` if it returns (a payload
/// that is not a string gives an empty message).
#[allow(dead_code)]
pub fn panic_of<R>(f: impl FnOnce() -> R) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(f)).err()?;
    Some(
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    )
}

/// The message of the panic `f` must raise.
#[allow(dead_code)]
#[track_caller]
pub fn panic_message<R>(f: impl FnOnce() -> R) -> String {
    panic_of(f).expect("it panics")
}

mod config;
#[allow(unused_imports)]
pub use config::{check_after, proptest_config};

/// A component that counts its drops in a shared counter (clones count
/// too, when dropped); the number tells values apart.
#[allow(dead_code)]
#[derive(Debug, Clone)]
pub struct Counted(pub Arc<AtomicUsize>, pub u32);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

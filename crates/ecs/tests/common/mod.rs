//! Helpers shared by the test files.

use std::panic::{catch_unwind, AssertUnwindSafe};

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
pub use config::proptest_config;

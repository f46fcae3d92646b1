//! Helpers shared by the integration tests. Each test binary that uses
//! them declares `mod common;`.

#![allow(dead_code)]

pub mod churn;
pub mod reference;
pub mod stable_panic;
pub mod tracker;

/// Deserializes `json` through `from_reader`, as untrusted input would
/// arrive. (On a `&str`, serde_json finds an error's line with memchr's
/// SSE2 code, whose aligned loads Miri's symbolic alignment check, used by
/// `scripts/miri.sh`, reports as a false positive.)
#[cfg(feature = "serde")]
pub fn from_json<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, String> {
    serde_json::from_reader(json.as_bytes()).map_err(|e| e.to_string())
}

//! The proptest settings, shared by the integration tests (through
//! `common`) and the unit tests of the crate (`#[path]` from `lib.rs`).

use proptest::prelude::ProptestConfig;

/// `cases` cases (`miri` under Miri, which is slow), and no file of
/// failures (Miri runs isolated from the file system).
#[allow(dead_code)]
pub fn proptest_config(miri: u32, cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { miri } else { cases },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

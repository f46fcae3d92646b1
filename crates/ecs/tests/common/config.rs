//! The proptest settings, shared by the integration tests (through
//! `common`) and the unit tests of the crate (`#[path]` from `lib.rs`).

use proptest::prelude::ProptestConfig;
use proptest::test_runner::RngAlgorithm;

/// `cases` cases (`miri` under Miri, which is slow), and no file of
/// failures (Miri runs isolated from the file system).
///
/// Under Miri the random source is XorShift, not ChaCha: a union of
/// strategies (`prop_oneof!`) seeds a generator for every option before
/// the one it picks, and with ChaCha, whose blocks Miri interprets,
/// generating the operations of a model test took most of its time (0.6 s
/// of Miri's clock an operation in `model.rs`, 0.18 s with XorShift). The
/// strategies, and so what the cases hold, are the same.
#[allow(dead_code)]
pub fn proptest_config(miri: u32, cases: u32) -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        cases: if cfg!(miri) { miri } else { cases },
        failure_persistence: None,
        rng_algorithm: if cfg!(miri) {
            RngAlgorithm::XorShift
        } else {
            default.rng_algorithm
        },
        ..default
    }
}

/// Under Miri, how many operations a model test runs between two
/// comparisons of the world with its model; natively it compares after
/// every one. A comparison reads every entity the test ever made, and in
/// Miri's interpreter such reads take most of a model test's time, while
/// the unsafe code Miri is there to check runs in the operations, all of
/// which still run.
pub const MIRI_CHECK_EVERY: usize = 5;

/// Whether a model test compares the world with its model after operation
/// `step` (from 0) of `len`: always natively; under Miri after every
/// [`MIRI_CHECK_EVERY`]th and after the last.
#[allow(dead_code)]
pub fn check_after(step: usize, len: usize) -> bool {
    !cfg!(miri) || (step + 1) % MIRI_CHECK_EVERY == 0 || step + 1 == len
}

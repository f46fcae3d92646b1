//! Helpers shared by the integration tests. Each test binary that uses
//! them declares `mod common;`.

#![allow(dead_code)]

pub mod churn;
pub mod iter_check;
pub mod model_suite;
pub mod panic_suite;
pub mod reference;
pub mod stable_model;
pub mod stale_suite;
pub mod table;
pub mod tracker;

/// Writes one `#[test]` per listed function of a suite module (imported as
/// `$suite` where the tests are written), each with the attributes before
/// its name: `suite::<Type>; names…` calls `suite::name::<Type>()`,
/// `suite(arg); names…` calls `suite::name(arg)`.
#[macro_export]
macro_rules! suite_tests {
    ($suite:ident::<$ty:ty>; $($(#[$attr:meta])* $name:ident,)*) => {
        $(
            #[test]
            $(#[$attr])*
            fn $name() {
                $suite::$name::<$ty>();
            }
        )*
    };
    ($suite:ident($arg:expr); $($(#[$attr:meta])* $name:ident,)*) => {
        $(
            #[test]
            $(#[$attr])*
            fn $name() {
                $suite::$name($arg);
            }
        )*
    };
}

/// The sum of a model test's operation weights: its selectors run over
/// `0..total_weight(weights)`.
pub const fn total_weight(weights: &[u32]) -> u32 {
    let mut total = 0;
    let mut i = 0;
    while i < weights.len() {
        total += weights[i];
        i += 1;
    }
    total
}

/// The operation a selector picks: the index of the weight band it falls
/// in. (One selector instead of a `prop_oneof!` of many arms: proptest
/// seeds an RNG for each arm below the one it picks, which is slow under
/// Miri; the selector shrinks towards 0, the first operation.)
pub fn kind_of(selector: u32, weights: &[u32]) -> usize {
    let mut kind = 0;
    let mut rest = selector;
    while rest >= weights[kind] {
        rest -= weights[kind];
        kind += 1;
    }
    kind
}

/// A fixed-seed linear congruential generator (Knuth's MMIX constants),
/// for tests that need repeatable pseudo-random steps.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next value, 31 bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// Deserializes `json` through `from_reader`, as untrusted input would
/// arrive. (On a `&str`, serde_json finds an error's line with memchr's
/// SSE2 code, whose aligned loads Miri's symbolic alignment check, used by
/// `scripts/miri.sh`, reports as a false positive.)
#[cfg(feature = "serde")]
pub fn from_json<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, String> {
    serde_json::from_reader(json.as_bytes()).map_err(|e| e.to_string())
}

/// The address of each key's value (for the stable-address checks of the
/// Pool and Hive models); every key must be live.
pub fn addresses<K: Copy + Eq + std::hash::Hash, T>(
    keys: impl IntoIterator<Item = K>,
    get_ptr: impl Fn(K) -> Option<std::ptr::NonNull<T>>,
) -> std::collections::HashMap<K, std::ptr::NonNull<T>> {
    keys.into_iter()
        .map(|k| (k, get_ptr(k).expect("a live key has an address")))
        .collect()
}

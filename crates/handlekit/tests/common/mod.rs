//! Helpers shared by the integration tests. Each test binary that uses
//! them declares `mod common;`.

#![allow(dead_code)]

pub mod churn;
pub mod iter_check;
pub mod keys;
pub mod lists_state;
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

/// A test's size: `small` under Miri (which runs slowly), else `full`.
pub fn scaled<T>(small: T, full: T) -> T {
    if cfg!(miri) {
        small
    } else {
        full
    }
}

/// Under Miri, how many operations a model test runs between two
/// comparisons of its container with the model; natively it compares after
/// every one. A comparison reads every key the test ever issued, and in
/// Miri's interpreter that took most of a model test's time (about 95% of
/// `lists_model`'s fixed sequence), while the unsafe code Miri is there to
/// check runs in the operations, all of which still run.
pub const MIRI_CHECK_EVERY: usize = 3;

/// Whether a model test compares its container with the model after
/// operation `step` (from 0) of `len`: always natively; under Miri after
/// every [`MIRI_CHECK_EVERY`]th and after the last.
pub fn check_after(step: usize, len: usize) -> bool {
    !cfg!(miri) || (step + 1) % MIRI_CHECK_EVERY == 0 || step + 1 == len
}

/// A proptest configuration of `cases` cases that writes no failure file
/// (Miri runs isolated).
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..Default::default()
    }
}

/// Checks at compile time that a container of `u64` values in the module
/// `handlekit::$module` is `Send + Sync`, with its iterators and drain (and,
/// with `rayon`, its parallel iterators).
#[macro_export]
macro_rules! assert_send_sync_with_iterators {
    ($module:ident::$container:ident) => {{
        fn send_sync<T: Send + Sync>() {}
        send_sync::<handlekit::$module::$container<u64>>();
        send_sync::<handlekit::$module::Iter<'static, u64>>();
        send_sync::<handlekit::$module::IterMut<'static, u64>>();
        send_sync::<handlekit::$module::IntoIter<u64>>();
        send_sync::<handlekit::$module::Drain<'static, u64>>();
        #[cfg(feature = "rayon")]
        {
            send_sync::<handlekit::$module::ParIter<'static, u64>>();
            send_sync::<handlekit::$module::ParIterMut<'static, u64>>();
        }
    }};
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

/// The `retain` closure of the model tests: keeps the values `modulus` does
/// not divide, adding 1 to each kept one (so `retain_mut` is exercised).
pub fn retain_step(value: &mut u64, modulus: u64) -> bool {
    let keep = *value % modulus != 0;
    if keep {
        *value += 1;
    }
    keep
}

/// An `IdTable` that held `0..n` and had them removed, last first: empty,
/// so its next insertions refill the slots. Also returns the old keys.
pub fn emptied_id_table(n: u32) -> (handlekit::IdTable<u32>, Vec<handlekit::Id>) {
    let mut table = handlekit::IdTable::new();
    let keys: Vec<handlekit::Id> = (0..n).map(|i| table.insert(i)).collect();
    for &key in keys.iter().rev() {
        table.remove(key);
    }
    (table, keys)
}

/// The `Debug` text of a map holding `pairs`, in that order: `{k: v, …}`.
pub fn map_debug<K: std::fmt::Debug, V: std::fmt::Debug>(pairs: &[(K, V)]) -> String {
    let entries: Vec<String> = pairs.iter().map(|(k, v)| format!("{k:?}: {v:?}")).collect();
    format!("{{{}}}", entries.join(", "))
}

/// A primary table whose first slot held the key `a`, then (after `a` was
/// removed) the newer key `b`: for the secondary maps, `a` is stale.
pub fn reused_slot() -> (handlekit::IdTable<()>, handlekit::Id, handlekit::Id) {
    let mut primary = handlekit::IdTable::new();
    let a = primary.insert(());
    primary.remove(a);
    let b = primary.insert(());
    (primary, a, b)
}

/// Every key of type `K` with an index in `indices` and a generation in
/// `generations` (the ones `from_parts` accepts), index by index: valid
/// keys no table need ever have issued, to probe lookups with.
pub fn forged_keys<K: handlekit::Key>(
    indices: std::ops::Range<usize>,
    generations: std::ops::RangeInclusive<u32>,
) -> impl Iterator<Item = K> {
    indices.flat_map(move |index| {
        generations
            .clone()
            .filter_map(move |generation| K::from_parts(index, generation))
    })
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

/// `value` through a JSON round trip (read back with [`from_json`]).
#[cfg(feature = "serde")]
pub fn json_round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T) -> T {
    from_json(&serde_json::to_string(value).unwrap()).unwrap()
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

//! The loop-body panic test every container runs: a macro over the
//! calling file's `filled`, `ids`, `Val` and tracker helpers, so that
//! `panic_safety` (IdTable) and `stable_panic_tests!` (Pool, Hive) share
//! one body.

/// Defines `panicking_loop_bodies` in the calling test file, which must
/// have `filled(&tracker, n) -> (container, keys)` (ids `0..n` in key
/// order), `ids(&container)`, and `Tracker`, `Val`, `BOOM`,
/// `assert_panicked`, `catch_unwind` and `AssertUnwindSafe` in scope.
#[macro_export]
macro_rules! panicking_loop_bodies_test {
    () => {
        /// A loop body that panics part way through a pass from both ends leaves
        /// every value where it was, dropped nowhere; an owning loop that panics
        /// drops the values it had not reached, each once.
        #[test]
        fn panicking_loop_bodies() {
            let tracker = Tracker::new();
            let (mut c, keys) = filled(&tracker, 150);
            let mut removed = Vec::new();
            for (id, key) in keys
                .iter()
                .enumerate()
                .filter(|(id, _)| id % 3 == 1 || (64..80).contains(id))
            {
                drop(c.remove(*key));
                removed.push(id);
            }
            let before = ids(&c);
            let result = catch_unwind(AssertUnwindSafe(|| {
                let mut iter = c.iter_mut();
                let mut taken = 0;
                while let Some((_, value)) = if taken % 3 == 2 {
                    iter.next_back()
                } else {
                    iter.next()
                } {
                    let _: &mut Val = value;
                    taken += 1;
                    if taken == before.len() / 2 {
                        std::panic::panic_any(BOOM);
                    }
                }
            }));
            assert_panicked(result);
            c.check_invariants();
            assert_eq!(ids(&c), before);
            tracker.assert_dropped_exactly(&removed);
            let stop = before[before.len() / 3];
            let result = catch_unwind(AssertUnwindSafe(move || {
                for (_, value) in c {
                    if value.id == stop {
                        std::panic::panic_any(BOOM);
                    }
                }
            }));
            assert_panicked(result);
            tracker.assert_all_dropped_once();
        }
    };
}

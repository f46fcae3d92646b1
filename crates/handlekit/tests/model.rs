//! Model test: `IdTable` and `LookupTable` (a `SlotTable` in each layout)
//! against a `HashMap<K, u64>`: the shared model suite
//! (`common/model_suite.rs`), whose doc says what is checked.
//!
//! The same body runs for `Id`, `Id32` and keys with 4 and 2 generation
//! bits (where slots retire constantly), under `Reuse::Lifo` and
//! `Reuse::Fifo { min_free: 3 }`, on growable and (sometimes) fixed-capacity
//! tables.

mod common;

use common::keys::Gen4;
use common::model_suite::{Harness, ModelTable, Op};
use common::stale_suite::G2;
use handlekit::layout::{Interleaved, Split};
use handlekit::{Id, Id32, IdTable, Key, Reuse, SlotTable};
use proptest::strategy::Just;

/// The model's hooks for a `SlotTable` in each layout: one impl per
/// layout, as one over every `L: Layout` would overlap the `Pool` and
/// `Hive` impl of `common::stable_model` (the same type over another
/// storage).
macro_rules! slot_model_table {
    ($($layout:ty),*) => {$(
        impl<K> ModelTable for SlotTable<u64, K, $layout>
        where
            K: Key + std::fmt::Debug + common::model_suite::MaybeSerde,
            SlotTable<u64, K, $layout>: common::model_suite::MaybeSerde,
        {
            forward_model_table_methods!();

            fn check_own_iterators(&self, _expected: &[(K, u64)]) {
                #[cfg(all(feature = "rayon", not(miri)))]
                {
                    let remaining = format!("ParEntries {{ remaining: {} }}", _expected.len());
                    assert_eq!(format!("{:?}", self.par_iter()), remaining);
                }
            }
        }
    )*};
}
slot_model_table!(Split, Interleaved);

model_suite_tests!(reuse_matrix IdTable);

model_suite_tests! {
    lookup_id_lifo: SlotTable<u64, Id, Interleaved>, Just(Reuse::Lifo);
    lookup_id32_fifo: SlotTable<u64, Id32, Interleaved>, Just(Reuse::Fifo { min_free: 3 });
    lookup_gen4_lifo: SlotTable<u64, Gen4, Interleaved>, Just(Reuse::Lifo);
    lookup_gen2_lifo: SlotTable<u64, G2, Interleaved>, Just(Reuse::Lifo);
}

/// With 4 generation bits, a LIFO table that churns one value retires a slot
/// every 15 insertions, and no stale key ever resolves.
#[test]
fn gen4_churn_retires_every_15_insertions() {
    let rounds: u64 = if cfg!(miri) { 40 } else { 400 };
    let mut harness = Harness::<IdTable<u64, Gen4>>::new(Reuse::Lifo, None);
    harness.apply(Op::Insert(u64::MAX));
    for round in 0..rounds {
        harness.apply(Op::Insert(round));
        let key = *harness.issued.last().unwrap();
        // Slot 0 holds the permanent value; the churning slots come after.
        assert_eq!(key.index() as u64, 1 + round / 15);
        assert_eq!(u64::from(key.generation()), 1 + round % 15);
        harness.remove(key);
        harness.check();
        assert_eq!(harness.table.retired_count() as u64, (round + 1) / 15);
    }
}

//! Exhaustive stale-key tests at tiny widths for `IdTable` and
//! `LookupTable` (a `SlotTable` in each layout): the shared suite
//! (`common/stale_suite.rs`) for each, then what only a `SlotTable` has:
//! its serialized form, loaded as untrusted input.

use std::fmt::Debug;

use handlekit::layout::Layout;
use handlekit::{IdTable, Key, LookupTable, SlotTable};

mod common;
use common::stale_suite::{Family, StaleTable};

impl<K: Key + Debug, L: Layout> StaleTable for SlotTable<u64, K, L> where
    SlotTable<u64, K, L>: common::table::ReuseTable<u64>
{
}

/// `IdTable<u64, K>` for every key type `K`.
struct IdTables;
impl Family for IdTables {
    type With<K: Key + Debug> = IdTable<u64, K>;
}

/// `LookupTable<u64, K>` for every key type `K`.
struct LookupTables;
impl Family for LookupTables {
    type With<K: Key + Debug> = LookupTable<u64, K>;
}

mod id_table {
    crate::stale_suite_tests!(super::IdTables);
}

mod lookup_table {
    crate::stale_suite_tests!(super::LookupTables);
}

/// Serialized tables are untrusted: generations are range-checked, the slot
/// count is bounded by the key, and the free list and retired count are
/// rebuilt from the slots, so stale keys stay stale across a round trip.
#[cfg(feature = "serde")]
mod serde_hostile {
    use super::*;
    use common::from_json;
    use common::stale_suite::{FourSlots, G2, POLICIES};
    use common::Lcg;
    use handlekit::Reuse;

    type Table = IdTable<u64, G2>;

    fn parse(json: &str) -> Result<Table, String> {
        from_json(json)
    }

    #[test]
    fn round_trip_keeps_stale_keys_stale_and_retired_slots_retired() {
        for &reuse in POLICIES {
            let mut table = Table::with_reuse(reuse);
            let mut issued = Vec::new();
            let mut rng = Lcg(7);
            for serial in 0..if cfg!(miri) { 12 } else { 60u64 } {
                let key = table.insert(serial);
                issued.push(key);
                if rng.next() % 3 != 0 {
                    table.remove(key);
                }
                let json = serde_json::to_string(&table).unwrap();
                let back = parse(&json).unwrap();
                back.check_invariants();
                assert_eq!(back.reuse(), reuse);
                assert_eq!(back.retired_count(), table.retired_count());
                for &key in &issued {
                    assert_eq!(back.get(key), table.get(key), "{key:?}");
                }
                table = back;
            }
            assert!(table.retired_count() > 0);
        }
    }

    #[test]
    fn slots_are_validated() {
        // G2: generations 1..=3.
        let ok = parse(r#"{"reuse":"Lifo","slots":[[1,10],[3,null],[0,null],[2,null]]}"#).unwrap();
        common::table::assert_loaded_with_a_retired_slot(&ok, 3);
        assert_eq!(ok.get(G2::from_parts(3, 2).unwrap()), None);

        for (json, why) in [
            (
                r#"{"reuse":"Lifo","slots":[[4,10]]}"#,
                "occupied generation past the maximum",
            ),
            (
                r#"{"reuse":"Lifo","slots":[[4,null]]}"#,
                "vacant generation past the maximum",
            ),
            (
                r#"{"reuse":"Lifo","slots":[[0,10]]}"#,
                "occupied generation 0",
            ),
            (
                r#"{"reuse":"Lifo","slots":[[4294967295,10]]}"#,
                "u32::MAX generation",
            ),
            (
                r#"{"reuse":"Lifo","slots":[[2147483649,null]]}"#,
                "generation with the vacant bit",
            ),
            (r#"{"reuse":"Lifo"}"#, "missing slots"),
            (r#"{"slots":[]}"#, "missing reuse"),
            (
                r#"{"reuse":"Lifo","slots":[],"slots":[]}"#,
                "duplicate slots",
            ),
            (
                r#"{"reuse":"Lifo","reuse":"Lifo","slots":[]}"#,
                "duplicate reuse",
            ),
            (r#"{"reuse":"Lifo","slots":[[1]]}"#, "slot without a value"),
            (r#"{"reuse":"Sideways","slots":[]}"#, "unknown policy"),
        ] {
            assert!(parse(json).is_err(), "accepted {why}: {json}");
        }
    }

    #[test]
    fn slot_count_is_bounded_by_the_key() {
        let slots = |n: usize| {
            let body = vec!["[1,0]"; n].join(",");
            format!(r#"{{"reuse":{{"Fifo":{{"min_free":1}}}},"slots":[{body}]}}"#)
        };
        let four: IdTable<u64, FourSlots> = from_json(&slots(4)).unwrap();
        assert_eq!(four.len(), 4);
        assert_eq!(four.reuse(), Reuse::Fifo { min_free: 1 });
        let err = from_json::<IdTable<u64, FourSlots>>(&slots(5)).unwrap_err();
        assert!(
            err.contains("more slots than the key type can index"),
            "{err}"
        );
    }

    #[test]
    fn the_sequence_form_is_accepted_too() {
        let table = parse(r#"["Lifo",[[2,5],[1,null]]]"#).unwrap();
        table.check_invariants();
        assert_eq!(table.get(G2::from_parts(0, 2).unwrap()), Some(&5));
        assert_eq!(table.get(G2::from_parts(0, 1).unwrap()), None);
        assert!(parse(r#"["Lifo"]"#).is_err());
    }

    /// After loading, the table issues keys that were never valid before:
    /// a vacant slot resumes after its last generation.
    #[test]
    fn loaded_vacant_slots_resume_after_their_generation() {
        let mut table = parse(r#"{"reuse":"Lifo","slots":[[2,null],[3,null]]}"#).unwrap();
        let key = table.insert(1);
        assert_eq!((key.index(), key.generation()), (0, 3));
        let key = table.insert(2);
        assert_eq!((key.index(), key.generation()), (2, 1), "slot 1 is retired");
        table.check_invariants();
    }
}

//! Exhaustive stale-key tests at tiny widths for `PackedTable`: the
//! shared suite (`common/stale_suite.rs`), with the moves only a packed
//! table makes (sorts, `swap_positions`) among the operations and its
//! order checked through `key_slice`, `as_slice` and `position`: a model
//! of the dense order predicts them.

use std::fmt::Debug;

use handlekit::{Key, PackedTable};

mod common;
use common::stale_suite::{Family, StaleTable};

impl<K: Key + Debug> StaleTable for PackedTable<u64, K> {
    /// A sort (three kinds) or a swap of two positions, on the table and on
    /// the model of its dense order.
    fn stir(&mut self, r: u64, order: &mut Vec<K>, serial: &dyn Fn(K) -> u64) -> bool {
        let len = order.len();
        match r % 6 {
            0 => {
                self.sort_by(|a, b| b.cmp(a));
                order.sort_by_key(|k| std::cmp::Reverse(serial(*k)));
            }
            1 => {
                self.sort_by_key(|serial| serial % 5);
                order.sort_by_key(|k| serial(*k) % 5);
            }
            2 => {
                self.sort_unstable_by(|a, b| a.cmp(b));
                // Serials are distinct: the unstable order is determined.
                order.sort_by_key(|k| serial(*k));
            }
            _ if len > 0 => {
                let (a, b) = ((r / 6) as usize % len, (r / 600) as usize % len);
                self.swap_positions(a, b);
                order.swap(a, b);
            }
            _ => return false,
        }
        true
    }

    fn check_order(&self, order: &[K], issued: &[K]) {
        assert_eq!(self.key_slice(), order, "dense order");
        for (position, key) in order.iter().enumerate() {
            assert_eq!(self.as_slice()[position], self[*key]);
        }
        for &key in issued {
            assert_eq!(
                self.position(key),
                order.iter().position(|&k| k == key),
                "position({key:?})"
            );
        }
    }
}

/// `PackedTable<u64, K>` for every key type `K`.
struct PackedTables;
impl Family for PackedTables {
    type With<K: Key + Debug> = PackedTable<u64, K>;
}

stale_suite_tests!(PackedTables);

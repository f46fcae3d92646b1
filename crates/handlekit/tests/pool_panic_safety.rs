//! Drop counting and panic safety for `Pool`: the tests shared with `Hive`
//! (`common/stable_panic.rs`), with blocks of 4 slots.

use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use handlekit::{Key, Pool, PoolKey};

mod common;
use common::tracker::{assert_panicked, Tracker, Val, BOOM};

stable_panic_tests!(Pool, PoolKey, Pool::with_block_size(4));

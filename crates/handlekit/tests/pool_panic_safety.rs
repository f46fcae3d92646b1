//! Drop counting and panic safety for `Pool`: the shared suite
//! (`common/panic_suite.rs`), with blocks of 4 slots, so the values of one
//! test span several blocks.

use handlekit::{Pool, PoolKey};

mod common;

panic_suite_tests!(Pool::<_, PoolKey>::with_block_size(4));

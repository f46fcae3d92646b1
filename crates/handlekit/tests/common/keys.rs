//! `define_key!` keys that several test binaries share. (The stale-key
//! suite's keys are in `stale_suite.rs`, among them `G2`, which other
//! tests use too.)

use handlekit::define_key;

define_key! {
    /// 28 index bits, 4 generation bits: a slot retires after 15 occupants, within a test's run.
    pub struct Gen4(u32; index_bits = 28);
    /// 4 index bits (16 slots in all): a key whose index space a test can fill.
    pub struct SixteenSlots(u32; index_bits = 4);
}

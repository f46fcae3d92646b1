//! Guides: documentation only, no items.
//!
//! - [`slotmap`]: moving code from the `slotmap` crate (1.x) to handlekit,
//!   item by item.

pub mod slotmap;

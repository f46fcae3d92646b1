//! Guides for users who come from another entity-component store.
//!
//! - [`hecs`]: every public item of hecs 0.11 and its counterpart here,
//!   where the two differ, and a short section for bevy_ecs users.

pub mod hecs;

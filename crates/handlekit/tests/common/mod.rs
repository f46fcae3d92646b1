//! Helpers shared by the integration tests. Each test binary that uses
//! them declares `mod common;`.

#![allow(dead_code)]

pub mod churn;
pub mod reference;
pub mod stable_panic;
pub mod tracker;

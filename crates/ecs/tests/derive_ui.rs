//! The derives' compile errors (trybuild): a derive on an enum or a union, a
//! field that is not a component, a `DynamicBundleClone` field that is not
//! `Clone`; and an entity builder's `get` given `T` or `&mut T` rather than `&T`. The
//! expected messages are the `.stderr` files next to the cases, made with
//! `TRYBUILD=overwrite cargo test -p handlekit-ecs --test derive_ui` and
//! read before being checked in (they follow the compiler's wording, so a
//! new Rust release may need them made again).
#![cfg(all(feature = "macros", not(miri)))]

#[test]
fn derive_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

//! The derives' compile errors (trybuild): a `Bundle` derive on an enum or a
//! union, a field that is not a component, a `DynamicBundleClone` field that
//! is not `Clone`; a `Query` derive on a union, with no lifetime for a
//! borrowed field, with two lifetimes, with a field borrowed for another
//! lifetime (`'static`), with a field that is not a query, or with a type
//! parameter not bounded to be a component;
//! and an entity builder's `get` given `T` or `&mut T` rather than `&T`. The
//! expected messages are the `.stderr` files next to the cases, made with
//! `TRYBUILD=overwrite cargo test -p handlekit-ecs --test derive_ui` and
//! read before being checked in (they follow the compiler's wording, so a
//! new Rust release may need them made again).
#![cfg(all(feature = "macros", not(miri)))]

#[test]
fn derive_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    // `#[derive(Query)]` of every shape, in a crate that forbids `unsafe`.
    cases.pass("tests/ui/pass/*.rs");
}

//! A query that names one component type twice, once mutably, panics with
//! the same message whether or not the world has a column for the type yet
//! (issue 33): `World::new().query_mut::<(&mut u16, &u16)>()` used to give
//! an empty query.

use handlekit_ecs::{Query, World};

mod common;
use common::panic_of;

/// The panics of `query` and `query_mut` of `Q` on a world without a
/// column of `u16` and on one with it.
fn both<Q: Query>() -> [Option<String>; 4] {
    let with_column = || {
        let mut world = World::new();
        world.spawn((1u16,));
        world
    };
    [
        panic_of(|| drop(World::new().query::<Q>())),
        panic_of(|| drop(with_column().query::<Q>())),
        panic_of(|| {
            World::new().query_mut::<Q>();
        }),
        panic_of(|| {
            with_column().query_mut::<Q>();
        }),
    ]
}

#[test]
fn a_type_named_twice_mutably_panics_without_its_column() {
    let [a, b, c, d] = both::<(&mut u16, &u16)>();
    let message = a.expect("query without the column panics");
    assert!(message.contains("u16"), "{message}");
    assert_eq!(b.as_deref(), Some(message.as_str()));
    assert_eq!(c.as_deref(), Some(message.as_str()));
    assert_eq!(d.as_deref(), Some(message.as_str()));
}

#[test]
fn every_incompatible_pair_panics_alike() {
    fn check<Q: Query>() {
        let results = both::<Q>();
        assert!(results[0].is_some(), "{}", std::any::type_name::<Q>());
        assert!(results.iter().all(|r| *r == results[0]), "{results:?}");
    }
    check::<(&u16, &mut u16)>();
    check::<(&mut u16, &mut u16)>();
    check::<(Option<&mut u16>, &u16)>();
    check::<(&u32, Option<&u16>, &mut u16)>();
}

#[test]
fn shared_twice_is_fine_without_its_column() {
    let results = both::<(&u16, &u16)>();
    assert_eq!(results, [None, None, None, None]);
    let mut world = World::new();
    assert_eq!(
        world
            .query_mut::<(&u16, Option<&u16>)>()
            .into_iter()
            .count(),
        0
    );
    world.spawn((3u16,));
    assert_eq!(world.query_mut::<(&u16, &u16)>().into_iter().count(), 1);
}

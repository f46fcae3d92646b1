//! A world with many component types: enough for the type index to grow
//! past its first table and to put types in their second homes. Every
//! per-entity call that finds a type (`get`, `get_mut`, `has`,
//! `insert_one`, `remove_one`) must find each one, dense or sparse, and
//! none that is not registered.

use handlekit_ecs::{ComponentError, Entity, Storage, World};

/// One component type per `N`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Kind<const N: usize>(u32);

/// Runs `$body` once per listed number, with `$n` a const of that number
/// (each number below `$below`, if given).
macro_rules! for_kinds {
    ($n:ident => $body:block; $($k:literal)*) => {
        $({
            const $n: usize = $k;
            $body
        })*
    };
    ($n:ident < $below:expr => $body:block; $($k:literal)*) => {
        $({
            const $n: usize = $k;
            if $n < $below $body
        })*
    };
}

/// What entity `i` holds of kind `n` (kind `n` goes on every `n % 5 + 1`-th entity).
fn value_of(n: usize, i: usize) -> Option<u32> {
    (i % (n % 5 + 1) == 0).then(|| (n * 1000 + i) as u32)
}

#[test]
fn every_type_is_found_among_a_hundred() {
    let mut world = World::new();
    // Fewer under Miri (this test took 50 s there with 24); 6 still cover
    // every kind's pattern of holders (every first to fifth entity).
    let count = if cfg!(miri) { 6 } else { 24 };
    // Under Miri, the first 66 types: the index grows past its first table
    // at the 65th. A type's column and values take 0.14 s of Miri's clock
    // on average, its lookups among 6 entities 0.08 s.
    let kinds = if cfg!(miri) { 66 } else { 100 };
    let entities: Vec<Entity> = (0..count).map(|_| world.spawn(())).collect();
    for_kinds!(N < kinds => {
        // Every third type sparse, registered before its first use.
        if N % 3 == 0 {
            assert!(world.register::<Kind<N>>(Storage::Sparse));
        }
        for (i, &e) in entities.iter().enumerate() {
            if let Some(v) = value_of(N, i) {
                world.insert_one(e, Kind::<N>(v)).unwrap();
            }
        }
    }; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28
       29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54
       55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80
       81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99);
    world.check_invariants();
    for_kinds!(N < kinds => {
        let storage = if N % 3 == 0 { Storage::Sparse } else { Storage::Dense };
        assert_eq!(world.storage_of::<Kind<N>>(), Some(storage));
        for (i, &e) in entities.iter().enumerate() {
            let want = value_of(N, i).map(Kind::<N>);
            assert_eq!(world.get::<Kind<N>>(e).ok().map(|r| *r), want, "kind {N}, entity {i}");
            assert_eq!(world.get_mut::<Kind<N>>(e).ok().copied(), want, "kind {N}, entity {i}");
            assert_eq!(world.has::<Kind<N>>(e), want.is_some(), "kind {N}, entity {i}");
        }
        // Take every value off, then look again: nothing is found.
        for (i, &e) in entities.iter().enumerate() {
            let want = value_of(N, i).map(Kind::<N>);
            assert_eq!(world.remove_one::<Kind<N>>(e).ok(), want, "kind {N}, entity {i}");
            assert!(!world.has::<Kind<N>>(e));
            assert_eq!(
                world.get_mut::<Kind<N>>(e),
                Err(ComponentError::MissingComponent(std::any::type_name::<Kind<N>>()))
            );
        }
    }; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28
       29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54
       55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80
       81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99);
    // Types never registered are found nowhere.
    for_kinds!(N => {
        for &e in &entities {
            assert!(!world.has::<Kind<N>>(e));
            assert!(world.get_mut::<Kind<N>>(e).is_err());
            assert!(world.get::<Kind<N>>(e).is_err());
        }
        assert_eq!(world.storage_of::<Kind<N>>(), None);
    }; 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115);
    world.check_invariants();
}

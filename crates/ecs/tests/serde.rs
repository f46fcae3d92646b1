//! `Entity` serializes as its bits (feature `serde`).
#![cfg(feature = "serde")]

use handlekit_ecs::{Entity, World};

#[test]
fn entity_round_trips_as_bits() {
    let mut world = World::new();
    let e = world.spawn((1u8,));
    let json = serde_json::to_string(&e).unwrap();
    assert_eq!(json, e.to_bits().to_string());
    assert_eq!(serde_json::from_str::<Entity>(&json).unwrap(), e);
    assert_eq!(serde_json::to_string(&Some(e)).unwrap(), json);
}

#[test]
fn invalid_bits_are_refused() {
    // Generation 0, and a generation above the maximum.
    assert!(serde_json::from_str::<Entity>("5").is_err());
    assert!(serde_json::from_str::<Entity>(&u64::MAX.to_string()).is_err());
    assert!(serde_json::from_str::<Entity>("-1").is_err());
}

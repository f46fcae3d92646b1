//! `#[derive(Query)]` in a crate that forbids `unsafe`: the generated code
//! holds none.
#![forbid(unsafe_code)]

use handlekit_ecs::{Component, Entity, Query, With, World};

struct Pos(f32);
struct Vel(f32);
struct Player;

#[derive(Query)]
struct Moving<'a> {
    pos: &'a mut Pos,
    vel: &'a Vel,
}

#[derive(Query)]
struct Ids(Entity, With<Player>);

#[derive(Query)]
struct Any;

#[derive(Query)]
struct Generic<'a, T: Component> {
    value: &'a T,
}

#[derive(Query)]
enum Kind<'a> {
    Moving(&'a Pos, &'a Vel),
    Player { e: Entity, player: With<Player> },
    Other,
}

fn main() {
    let mut world = World::new();
    world.spawn((Pos(0.0), Vel(1.0), Player));
    for m in world.query_mut::<Moving>() {
        m.pos.0 += m.vel.0;
    }
    assert_eq!(world.query_mut::<Ids>().into_iter().count(), 1);
    assert_eq!(world.query_mut::<Any>().into_iter().count(), 1);
    assert_eq!(world.query_mut::<Generic<Pos>>().into_iter().next().unwrap().value.0, 1.0);
    assert!(matches!(world.query_mut::<Kind>().into_iter().next(), Some(Kind::Moving(..))));
}

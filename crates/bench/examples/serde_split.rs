// Throwaway: where serialize's time goes (save, load, drop), per entity.
use handlekit_bench::ecs::data::{self, Position, Rotation, Transform, Velocity};
use handlekit_ecs::serialize::Registry;
use handlekit_ecs::World;
use serde::de::DeserializeSeed;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    let n = 1000;
    let text = std::env::args().nth(1).as_deref() == Some("text");
    let mut world = World::new();
    world.spawn_batch((0..n).map(|_| data::simple()));
    let registry = Registry::new()
        .component::<Transform>("transform")
        .component::<Position>("position")
        .component::<Rotation>("rotation")
        .component::<Velocity>("velocity");
    let (mut ts, mut tl, mut td, mut tn, mut tf) = (
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
    );
    let rounds = 3000;
    for _ in 0..rounds {
        let t0 = Instant::now();
        let bytes = if text {
            serde_json::to_vec(&registry.save(&world)).unwrap()
        } else {
            postcard::to_allocvec(&registry.save(&world)).unwrap()
        };
        let t1 = Instant::now();
        let loaded: World = if text {
            registry
                .load()
                .deserialize(&mut serde_json::Deserializer::from_slice(&bytes))
                .unwrap()
        } else {
            registry
                .load()
                .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
                .unwrap()
        };
        let t2 = Instant::now();
        drop(black_box(loaded));
        let t3 = Instant::now();
        let mut fresh = World::new();
        fresh.spawn_batch((0..n).map(|_| data::simple()));
        let t4 = Instant::now();
        drop(black_box(fresh));
        let t5 = Instant::now();
        ts += t1 - t0;
        tl += t2 - t1;
        td += t3 - t2;
        tn += t4 - t3;
        tf += t5 - t4;
    }
    let per = |d: Duration| d.as_nanos() as f64 / (rounds * n) as f64;
    println!(
        "save {:.1} load {:.1} drop {:.1} | fresh spawn_batch {:.1} drop {:.1} ns/entity",
        per(ts),
        per(tl),
        per(td),
        per(tn),
        per(tf)
    );
}
